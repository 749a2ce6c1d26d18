#pragma once
// cdpkit/tree/agents/common.cuh — what every tree traversal reads and writes on the device: the
// tree (tree_view), the outputs (tree_out), the visit of a node reached from its parent, the
// bottom-up combination of a finished subtree into its ancestors (combine_up), the start of a run
// (init_agent), and the layout of the engine's counters.
//
// Namespace cdpkit::tree_device: cdpkit::tree is the tree itself (cdpkit/tree.hpp).

#include <cdpkit/tree.hpp>

#include <cstddef>
#include <cstdint>

namespace cdpkit::tree_device {
namespace {

/// The device tree, by value in every kernel and body.
struct tree_view {
  const std::uint32_t* off;
  const std::uint32_t* children;
  const std::uint32_t* parent;
  const std::uint32_t* slot;
  const std::uint64_t* value;
  std::uint32_t n;
  std::uint32_t root;
  __device__ std::uint32_t count(std::uint32_t v) const { return off[v + 1] - off[v]; }
};

/// The outputs: top_down: a = depth, b = path sum; bottom_up: a = subtree size, b = subtree sum,
/// pending = children not yet combined.
struct tree_out {
  std::uint32_t* a;
  unsigned long long* b;
  std::uint32_t* pending;
  bool bottom_up;
};

/// The node's subtree is done (bottom_up): add it into its parent, and when it was the parent's
/// last child, go on with the parent. The sums were added with atomics in L2, so they are read
/// back from there (ld.cg) after the fence.
__device__ void combine_up(const tree_view& t, const tree_out& o, std::uint32_t v) {
  while (true) {
    const std::uint32_t p = t.parent[v];
    if (p == tree_no_parent) return;
    atomicAdd(&o.a[p], __ldcg(&o.a[v]));
    atomicAdd(&o.b[p], __ldcg(&o.b[v]));
    __threadfence();
    if (atomicSub(&o.pending[p], 1u) != 1u) return;  // another child of p is not done yet
    __threadfence();
    v = p;
  }
}

/// Node v is reached (its parent was, before). top_down: its values from its parent's;
/// bottom_up: a leaf is done at once.
__device__ __forceinline__ void visit(const tree_view& t, const tree_out& o, std::uint32_t v) {
  if (o.bottom_up) {
    if (t.count(v) == 0) combine_up(t, o, v);
  } else {
    const std::uint32_t p = t.parent[v];
    o.a[v] = o.a[p] + 1;
    o.b[v] = o.b[p] + t.value[v];
  }
}

/// The start of a run: node v = blockIdx.x * blockDim.x + threadIdx.x gets its own values
/// (bottom_up: size 1, its value, its children pending; top_down: the root alone, depth 0 and its
/// value). Preconditions: a 1-D grid of at least t.n threads, any block size (threads past t.n do
/// nothing); o's arrays have t.n entries.
__device__ __forceinline__ void init_agent(const tree_view& t, const tree_out& o) {
  const std::uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= t.n) return;
  if (o.bottom_up) {
    o.a[v] = 1;
    o.b[v] = t.value[v];
    o.pending[v] = t.count(v);
  } else if (v == t.root) {
    o.a[v] = 0;
    o.b[v] = t.value[v];
  }
}

// counters: [0] the next level's size; [1] pool refusals; [2] driver: levels on the device;
// [3] driver: handed back; [4] driver: level to resume; [5] driver: its first position in the
// order; [6] driver: its size; [7] driver, bottom_up: the level whose addition was refused (the
// host adds it and those above; 0: none); [8..9] the pool cursor (64 bits)
constexpr std::size_t counter_words = 12;

}  // namespace
}  // namespace cdpkit::tree_device
