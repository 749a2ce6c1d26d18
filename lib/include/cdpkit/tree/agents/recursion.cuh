#pragma once
// cdpkit/tree/agents/recursion.cuh — the recursions: child grids over the children of the nodes
// (site tree.children), one generation of the tree per grid, and iterative walks of the subtrees
// that are not launched. A child grid's thread visits its node (generation_body), then the node's
// children are expanded as the variant says (expand_and_walk, one group_kind each):
//
//   per_node  recursive_naive (threshold 0) and recursive_threshold: a grid of its own for a node
//             with more children than the threshold
//   warp      recursive_warp: one grid per warp over the concatenated children of its nodes, when
//             they are more than the threshold (their scan and first positions in the pool)
//   block     recursive_block: likewise, one grid per block
//
// What is not launched (below the threshold, refused by the layer, or the pool full) is walked by
// the lanes together (walk, probe site tree.walk), which still launch grids for the large nodes
// they meet while the layer allows. A child grid's threads probe one step per node
// (tree.child_nodes).

#include <cdpkit/launch.cuh>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/loop_to_child/agents/common.cuh>
#include <cdpkit/probe.cuh>
#include <cdpkit/tree/agents/common.cuh>

#include <cstdint>

namespace cdpkit::tree_device {
namespace {

/// Where aggregated launches keep their groups' scans and first positions (a bump allocator in
/// device memory, reset per run) and the launch parameters every body carries.
struct recursion_args {
  tree_view t;
  tree_out o;
  std::uint32_t threshold;
  unsigned int child_block_threads;
  std::uint32_t* pool;
  unsigned long long pool_entries;
  unsigned long long* pool_cursor;
  unsigned int* pool_refusals;
};

/// The nodes a child grid covers: the concatenated children lists of `owners` nodes, child k
/// at children[begin[s] + k - scan[s]] for the owner s whose scan entry is the last <= k; a
/// one-owner group carries its first position itself (scan == nullptr).
struct node_group {
  const std::uint32_t* scan;
  const std::uint32_t* begin;
  std::uint32_t owners;
  std::uint32_t single_begin;
  std::uint32_t total;
  __device__ std::uint32_t node(const tree_view& t, std::uint32_t k) const {
    if (scan == nullptr) return t.children[single_begin + k];
    const std::uint32_t s = loop_to_child::find_segment(scan, owners, k);
    return t.children[begin[s] + (k - scan[s])];
  }
};

enum class group_kind : std::uint8_t { per_node, warp, block };

template <group_kind Kind>
struct generation_body;

template <group_kind Kind>
__device__ void expand_and_walk(const launch_context& ctx, const recursion_args& a, bool mine,
                                std::uint32_t v, std::uint32_t len);

/// Launch a grid over the children of node v (one owner) for each lane that `want`s one: every
/// lane of the warp calls it at one point (launch_child_warp: the lanes enter the device runtime
/// one at a time, the rest of the warp at a barrier of the whole warp). The result means
/// something only where `want`; refusals are the caller's to walk.
template <group_kind Kind>
__device__ launch_result launch_node(const launch_context& ctx, const recursion_args& a, bool want, std::uint32_t v) {
  const std::uint32_t len = want ? a.t.count(v) : 0u;
  const node_group g{nullptr, nullptr, 1, want ? a.t.off[v] : 0u, len};
  const auto blocks = static_cast<unsigned int>((std::uint64_t{len} + a.child_block_threads - 1) / a.child_block_threads);
  return launch_child_warp(ctx, want, sites::tree_children, dim3(blocks), dim3(a.child_block_threads),
                           stream_kind::fire_and_forget, generation_body<Kind>{a, g}, 0u, len);
}

/// Whether a thread may still ask for launches after `r`: yes when launched or refused for the
/// budget (children complete and give it back); no after a refusal for depth (deeper launches
/// would be refused too) or a launch error (it repeats).
__device__ __forceinline__ bool may_ask_again(const launch_result& r) {
  return r || r.outcome == launch_outcome::fallback_budget;
}

/// The subtrees below each lane's node s (s itself already visited), walked in preorder without a
/// stack (first child down, next sibling across, parent up), one node per lane per step, the whole
/// warp stepping together: every lane of the warp calls it, `active` on the lanes that have a
/// subtree to walk. A node with more than the threshold's children met on the way is given a
/// child grid when the layer allows (and asked for while may_ask_again). The launches of a step
/// are requested by the whole warp at one point (launch_node: one lane at a time in the device
/// runtime): lanes that entered the runtime's launch together, or from different iterations of
/// their own walks, stalled the device for good on an H200 (docs/design.md, "Launches from
/// divergent lanes"). Returns the nodes this lane visited.
template <group_kind Kind>
__device__ std::uint32_t walk(const launch_context& ctx, const recursion_args& a, bool active, std::uint32_t s,
                              bool try_start, bool may_launch) {
  constexpr unsigned int full = 0xffffffffu;
  const tree_view& t = a.t;
  std::uint32_t visited = 0;
  std::uint32_t u = s;
  bool at_start = true;
  while (__any_sync(full, active)) {
    bool descend = false, ask = false;
    if (active) {
      descend = t.count(u) > 0;
      ask = descend && may_launch && (!at_start || try_start) && t.count(u) > a.threshold;
    }
    __syncwarp();  // the step's launch requests, from the whole warp
    const launch_result r = launch_node<Kind>(ctx, a, ask, u);
    if (ask) {
      if (r) descend = false;
      may_launch = may_ask_again(r);
      if (!r) record_inline_items(ctx, sites::tree_children, t.count(u));
    }
    __syncwarp();
    if (!active) continue;
    at_start = false;
    if (descend) {
      u = t.children[t.off[u]];
      visit(t, a.o, u);
      ++visited;
      continue;
    }
    bool moved = false;
    while (u != s) {  // up to the first ancestor with a next sibling
      const std::uint32_t e = t.slot[u];
      const std::uint32_t p = t.parent[u];
      if (e + 1 < t.off[p + 1]) {
        u = t.children[e + 1];
        visit(t, a.o, u);
        ++visited;
        moved = true;
        break;
      }
      u = p;
    }
    active = moved;
  }
  return visited;
}

/// A child grid's body: thread k visits node k of the group, then its children are expanded as
/// the variant says — a grid of their own (per node), one grid per warp or block over the
/// concatenated children of its nodes, or walked by the thread.
template <group_kind Kind>
struct generation_body {
  recursion_args a;
  node_group g;

  __device__ void operator()(const launch_context& self) const {
    const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    const bool mine = k < g.total;
    std::uint32_t v = 0, len = 0;
    if (mine) {
      probe_single_step(self, sites::tree_child_nodes);
      v = g.node(a.t, k);
      visit(a.t, a.o, v);
      len = a.t.count(v);
    }
    expand_and_walk<Kind>(self, a, mine, v, len);
  }
};

/// Reserve `entries` pool words (one atomic); nullptr when the pool is full (counted).
__device__ std::uint32_t* reserve_pool(const recursion_args& a, std::uint32_t entries) {
  const unsigned long long base = atomicAdd(a.pool_cursor, static_cast<unsigned long long>(entries));
  if (base + entries > a.pool_entries) {
    atomicAdd(a.pool_refusals, 1u);
    return nullptr;
  }
  return a.pool + base;
}

/// The expansion of node v's children (len of them) by the calling thread (mine) and its warp
/// (and, for group_kind::block, its block): every thread of the block calls this.
template <group_kind Kind>
__device__ void expand_and_walk(const launch_context& ctx, const recursion_args& a, bool mine, std::uint32_t v,
                                std::uint32_t len) {
  constexpr unsigned int whole_warp = 0xffffffffu;
  // Every lane of the warp gets here (a leaf's combine_up diverged them on the way): together
  // again before the probe and the launch requests, whose warp barriers name all 32 lanes.
  __syncwarp();
  warp_probe probe(ctx, sites::tree_walk, whole_warp);
  bool walked = mine && len > 0;
  bool try_start = true;   // the walk may still launch for v itself
  bool may_launch = true;  // until a refusal that would repeat (may_ask_again)
  if constexpr (Kind == group_kind::per_node) {
    try_start = false;  // decided here
    const bool want = walked && len > a.threshold;
    const launch_result r = launch_node<Kind>(ctx, a, want, v);  // every lane of the warp
    if (want) {
      if (r) walked = false;
      else record_inline_items(ctx, sites::tree_children, len);
      may_launch = may_ask_again(r);
    }
  } else if constexpr (Kind == group_kind::warp) {
    constexpr unsigned int full = 0xffffffffu;
    const unsigned int lane = threadIdx.x & 31u;
    unsigned long long incl = len;
    for (unsigned int d = 1; d < 32; d *= 2) {
      const unsigned long long x = __shfl_up_sync(full, incl, d);
      if (lane >= d) incl += x;
    }
    const unsigned long long total = __shfl_sync(full, incl, 31);
    int launched = 0;
    if (total > a.threshold && total <= 0xffffffffull) {
      // the group's owners: the lanes whose node has children, compacted (2 pool words each)
      const unsigned int has = __ballot_sync(full, len > 0);
      const unsigned int owners = __popc(has);
      const unsigned int rank = __popc(has & ((1u << lane) - 1u));
      std::uint32_t* entries = nullptr;
      if (lane == 0) entries = reserve_pool(a, 2 * owners);
      entries = reinterpret_cast<std::uint32_t*>(
          __shfl_sync(full, reinterpret_cast<unsigned long long>(entries), 0));
      if (entries != nullptr) {
        if (len > 0) {
          entries[rank] = static_cast<std::uint32_t>(incl - len);
          entries[owners + rank] = a.t.off[v];
        }
        __threadfence();  // this lane's visit and entries, before the child can read them
        __syncwarp();
        {  // lane 0 requests the group's grid, the warp with it (launch_child_warp)
          const node_group g{entries, entries + owners, owners, 0, static_cast<std::uint32_t>(total)};
          const auto blocks = static_cast<unsigned int>((total + a.child_block_threads - 1) / a.child_block_threads);
          launched = static_cast<bool>(launch_child_warp(ctx, lane == 0, sites::tree_children, dim3(blocks),
                                                         dim3(a.child_block_threads), stream_kind::fire_and_forget,
                                                         generation_body<Kind>{a, g}, 0u,
                                                         static_cast<std::uint32_t>(total)));
        }
        launched = __shfl_sync(full, launched, 0);
      }
      // not launched (refused, or the pool full): the lanes walk their nodes, as inline items,
      // without asking again for their own nodes
      if (!launched && lane == 0) record_inline_items(ctx, sites::tree_children, total);
      try_start = false;
    }
    if (launched) walked = false;
  } else {  // block
    __shared__ unsigned long long warp_totals[32];
    __shared__ unsigned int warp_owners[32];
    __shared__ std::uint32_t* block_entries;
    __shared__ int block_launched;
    constexpr unsigned int full = 0xffffffffu;
    const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x / 32u;
    const unsigned int warps = (blockDim.x + 31u) / 32u;
    unsigned long long incl = len;
    for (unsigned int d = 1; d < 32; d *= 2) {
      const unsigned long long x = __shfl_up_sync(full, incl, d);
      if (lane >= d) incl += x;
    }
    const unsigned int has = __ballot_sync(full, len > 0);
    if (lane == 31) warp_totals[warp] = incl;
    if (lane == 0) warp_owners[warp] = __popc(has);
    if (threadIdx.x == 0) {
      block_entries = nullptr;
      block_launched = 0;
    }
    __syncthreads();
    unsigned long long before = 0, total = 0;
    unsigned int owners_before = 0, owners = 0;
    for (unsigned int w = 0; w < warps; ++w) {
      if (w < warp) {
        before += warp_totals[w];
        owners_before += warp_owners[w];
      }
      total += warp_totals[w];
      owners += warp_owners[w];
    }
    const unsigned long long excl = before + incl - len;
    const unsigned int rank = owners_before + __popc(has & ((1u << lane) - 1u));
    if (total > a.threshold && total <= 0xffffffffull) {
      // the group's owners: the threads whose node has children, compacted (2 pool words each)
      if (threadIdx.x == 0) block_entries = reserve_pool(a, 2 * owners);
      __syncthreads();
      std::uint32_t* entries = block_entries;
      if (entries != nullptr) {
        if (len > 0) {
          entries[rank] = static_cast<std::uint32_t>(excl);
          entries[owners + rank] = a.t.off[v];
        }
        __threadfence();
        __syncthreads();
        if (warp == 0) {  // thread 0 requests the group's grid, its warp with it (launch_child_warp)
          const node_group g{entries, entries + owners, owners, 0, static_cast<std::uint32_t>(total)};
          const auto blocks = static_cast<unsigned int>((total + a.child_block_threads - 1) / a.child_block_threads);
          const launch_result r = launch_child_warp(ctx, lane == 0, sites::tree_children, dim3(blocks),
                                                    dim3(a.child_block_threads), stream_kind::fire_and_forget,
                                                    generation_body<Kind>{a, g}, 0u, static_cast<std::uint32_t>(total));
          if (lane == 0) block_launched = static_cast<bool>(r);
        }
      }
      __syncthreads();
      if (block_launched) walked = false;
      else if (threadIdx.x == 0) record_inline_items(ctx, sites::tree_children, total);
      try_start = false;  // (as for warps)
    }
  }
  // every lane of the warp gets here (no thread leaves a body early) and walks together
  const std::uint32_t steps = walk<Kind>(ctx, a, walked, v, try_start, may_launch);
  probe.steps(steps);
  probe.commit();
}

}  // namespace
}  // namespace cdpkit::tree_device
