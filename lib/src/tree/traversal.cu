// Tree traversals on the GPU (cdpkit/tree_traversal.hpp): the level loop on the host
// (level_sync) or on the device (device_driver) around loop-to-child expansions of each level's
// children lists, and the recursions (naive, thresholded, warp- and block-aggregated) over child
// grids of the launch layer, with iterative walks where a launch is not made.

#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/loop_to_child.cuh>
#include <cdpkit/loop_to_child/frontier.cuh>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/probe.cuh>
#include <cdpkit/tree/sites.hpp>
#include <cdpkit/tree_traversal.hpp>
#include <cdpkit/wait.hpp>

#include <algorithm>
#include <string>

namespace cdpkit {

namespace {

// ---- what every kernel reads and writes ------------------------------------------------------

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

__global__ void init_kernel(tree_view t, tree_out o) {
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

// ---- the recursions ---------------------------------------------------------------------------

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

/// The root's children, from the host: a one-owner group over them.
template <group_kind Kind>
__global__ void recursion_root_kernel(launch_context ctx, generation_body<Kind> body) {
  body(ctx);
}

// ---- the level loops ---------------------------------------------------------------------------

/// Segment i of a level: the children list of the level's node i.
using level_segments = loop_to_child::id_list_segments;
using loop_to_child::no_pre_op;

/// Child j of a level: visited (top_down: its values from its parent's) and appended to the next
/// level (one atomicAdd per warp). bottom_up adds the levels into their parents afterwards,
/// deepest first (add_level).
struct level_visit_op {
  tree_view t;
  tree_out o;
  std::uint32_t* next;
  std::uint32_t* next_count;
  __device__ void operator()(std::uint32_t, std::uint32_t j) const {
    const std::uint32_t c = t.children[j];
    if (!o.bottom_up) visit(t, o, c);
    loop_to_child::append_to_frontier(next, next_count, c);
  }
};

/// bottom_up, the level loops: node i of a level adds its subtree (complete: the deeper levels
/// were added before) into its parent.
__device__ __forceinline__ void add_level(const tree_view& t, const tree_out& o, const std::uint32_t* nodes,
                                          std::uint32_t count, std::uint32_t i) {
  if (i >= count) return;
  const std::uint32_t v = nodes[i];
  atomicAdd(&o.a[t.parent[v]], o.a[v]);
  atomicAdd(&o.b[t.parent[v]], o.b[v]);
}

__global__ void add_level_kernel(tree_view t, tree_out o, const std::uint32_t* nodes, std::uint32_t count) {
  add_level(t, o, nodes, count, blockIdx.x * blockDim.x + threadIdx.x);
}

__global__ void level_root_kernel(std::uint32_t* order, std::uint32_t root) { order[0] = root; }

// counters: [0] the next level's size; [1] pool refusals; [2] driver: levels on the device;
// [3] driver: handed back; [4] driver: level to resume; [5] driver: its first position in the
// order; [6] driver: its size; [7] driver, bottom_up: the level whose addition was refused (the
// host adds it and those above; 0: none); [8..9] the pool cursor (64 bits)
constexpr std::size_t counter_words = 12;

struct driver_args {
  tree_view t;
  tree_out o;
  std::uint32_t* order;
  std::uint32_t* counters;
  std::uint32_t* scan;         ///< the level's block scans (block_aggregated_agent's d_scan), n entries
  std::uint32_t* level_begin;  ///< level k's first position in the order (k = 0 .. levels), n + 1 entries
  std::uint32_t threshold;
  unsigned int child_block_threads;
};

constexpr unsigned int add_level_threads = 256;

/// bottom_up on the device: level `level` (>= 1) adds its nodes into their parents, then its
/// first thread tail-launches the level above, which runs once this grid is done. A refused
/// launch leaves the rest to the host (counters[7]).
struct driver_add_body {
  driver_args a;
  std::uint32_t level;
  __device__ void operator()(const launch_context& self) const {
    const std::uint32_t b = a.level_begin[level];
    add_level(a.t, a.o, a.order + b, a.level_begin[level + 1] - b, blockIdx.x * blockDim.x + threadIdx.x);
    if (threadIdx.x == 0 && blockIdx.x == 0 && level > 1) launch_above(self, a, level - 1, true);
  }
  /// Launch the addition of level `above` (>= 1): as this grid's continuation, or (from the
  /// driver's last step) as its child.
  static __device__ void launch_above(const launch_context& self, const driver_args& a, std::uint32_t above,
                                      bool continuation) {
    const std::uint32_t count = a.level_begin[above + 1] - a.level_begin[above];
    const dim3 grid(static_cast<unsigned int>((std::uint64_t{count} + add_level_threads - 1) / add_level_threads));
    const driver_add_body body{a, above};
    const launch_result r =
        continuation ? launch_continuation(self, sites::tree_combine, grid, dim3(add_level_threads), body)
                     : launch_child(self, sites::tree_combine, grid, dim3(add_level_threads),
                                    stream_kind::fire_and_forget, body, 0u, count);
    if (!r) a.counters[7] = above;
  }
};

/// One level's expansion, launched by the driver: the block-aggregated agent over the level's
/// nodes (blocks of loop_to_child::block_threads). Its scans live until the next step, which the
/// level's grid and its children finish before (a tail launch), so every level uses a.scan.
struct driver_level_body {
  driver_args a;
  std::uint32_t begin;  ///< the level's first position in the order
  std::uint32_t count;
  __device__ void operator()(const launch_context& self) const {
    __shared__ loop_to_child::block_aggregated_storage storage;
    loop_to_child::block_aggregated_agent(
        storage, self, level_segments{a.t.off, a.order + begin, count}, no_pre_op{},
        level_visit_op{a.t, a.o, a.order + begin + count, &a.counters[0]}, a.threshold,
        stream_kind::fire_and_forget, a.scan, a.child_block_threads, sites::tree_children);
  }
};

/// The level loop on the device: launch the level's grid and tail-launch the next step, which
/// runs once this grid and the level's grids are done. A refused launch hands the loop back to
/// the host, with the level to resume at. bottom_up: after the last level, the additions run
/// from the deepest level up (driver_add_body), a grid per level.
struct driver_body {
  driver_args a;
  std::uint32_t level;
  std::uint32_t begin;
  std::uint32_t count;
  __device__ void operator()(const launch_context& self) const {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    std::uint32_t b = begin, c = count;
    a.level_begin[level] = b;  // for the empty level past the last: the end
    if (level > 0) {  // the level the previous step expanded into
      c = a.counters[0];
      if (c == 0) {  // done: levels 0 .. level - 1
        if (a.o.bottom_up && level > 1) driver_add_body::launch_above(self, a, level - 1, false);
        return;
      }
    }
    a.counters[0] = 0;
    const auto grid = static_cast<unsigned int>((std::uint64_t{c} + loop_to_child::block_threads - 1) /
                                                loop_to_child::block_threads);
    if (!launch_child(self, sites::tree_level, dim3(grid), dim3(loop_to_child::block_threads),
                      stream_kind::fire_and_forget, driver_level_body{a, b, c}, 0u, c)) {
      hand_back(level, b, c);
      return;
    }
    a.counters[2] = level + 1;
    if (!launch_continuation(self, sites::tree_driver, dim3(1), dim3(32), driver_body{a, level + 1, b + c, 0})) {
      // the level's grid runs; the host resumes after it, from the level it fills
      a.counters[3] = 2;
      a.counters[4] = level + 1;
      a.counters[5] = b + c;
    }
  }
  __device__ void hand_back(std::uint32_t resume_level, std::uint32_t b, std::uint32_t c) const {
    a.counters[3] = 1;
    a.counters[4] = resume_level;
    a.counters[5] = b;
    a.counters[6] = c;
  }
};

__global__ void driver_root_kernel(launch_context ctx, driver_body body) { body(ctx); }

unsigned int blocks_for(std::uint64_t n, unsigned int threads) {
  return static_cast<unsigned int>((n + threads - 1) / threads);
}

/// bottom_up from the host: levels `from` down to 1 (level k holds order[begins[k] .. begins[k+1]))
/// add their nodes into their parents, deepest first (stream order).
void add_levels_from_host(const tree_view& view, const tree_out& out, const std::uint32_t* order,
                          const std::vector<std::uint32_t>& begins, std::uint32_t from, cudaStream_t stream) {
  for (std::uint32_t level = from; level >= 1; --level) {
    const std::uint32_t b = begins[level], c = begins[level + 1] - b;
    add_level_kernel<<<blocks_for(c, add_level_threads), add_level_threads, 0, stream>>>(view, out, order + b, c);
    CDPKIT_CUDA_TRY(cudaGetLastError());
  }
}

/// level_sync: the host's level loop over `order` (the nodes by level), each level's children
/// expanded by flat_balanced; bottom_up then adds the levels into their parents, deepest first.
/// counters[0] / h_counter: the next level's size on the device and its pinned mirror.
tree_stats run_level_sync(const tree_view& view, const tree_out& out, std::uint32_t* order, std::uint32_t* counters,
                          std::uint32_t* h_counter, launch_runtime& runtime, cudaStream_t stream) {
  CDPKIT_NVTX_SCOPE("tree::level_sync");
  level_root_kernel<<<1, 1, 0, stream>>>(order, view.root);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  loop_policy policy;
  policy.kind = loop_policy_kind::flat_balanced;
  std::vector<std::uint32_t> level_begin{0};
  std::uint32_t begin = 0, count = 1;
  while (count > 0) {
    CDPKIT_NVTX_SCOPE_PAYLOAD("tree::level", static_cast<std::uint32_t>(level_begin.size() - 1));
    CDPKIT_CUDA_TRY(cudaMemsetAsync(counters, 0, sizeof(std::uint32_t), stream));
    (void)loop_to_child::detail::enqueue_for_each_segment(
        level_segments{view.off, order + begin, count}, no_pre_op{},
        level_visit_op{view, out, order + begin + count, counters}, policy, runtime, stream,
        nullptr);
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_counter, counters, sizeof(std::uint32_t), cudaMemcpyDeviceToHost,
                                    stream));
    CDPKIT_WAIT_STREAM(stream, runtime, "tree::level_sync level");
    begin += count;
    count = h_counter[0];
    level_begin.push_back(begin);
  }
  tree_stats stats;
  stats.levels = static_cast<std::uint32_t>(level_begin.size() - 1);
  if (out.bottom_up && stats.levels > 1) {
    CDPKIT_NVTX_SCOPE("tree::level_sync combine");
    add_levels_from_host(view, out, order, level_begin, stats.levels - 1, stream);
  }
  CDPKIT_WAIT_STREAM(stream, runtime, "tree::level_sync");
  CDPKIT_CHECK_DEVICE_ERRORS(runtime);
  return stats;
}

}  // namespace

// ---- names -------------------------------------------------------------------------------------

const char* to_string(tree_variant v) noexcept {
  switch (v) {
    case tree_variant::level_sync: return "level_sync";
    case tree_variant::recursive_naive: return "recursive_naive";
    case tree_variant::recursive_threshold: return "recursive_threshold";
    case tree_variant::recursive_warp: return "recursive_warp";
    case tree_variant::recursive_block: return "recursive_block";
    case tree_variant::device_driver: return "device_driver";
  }
  return "?";
}

const std::vector<tree_variant>& all_tree_variants() {
  static const std::vector<tree_variant> all = {tree_variant::level_sync,      tree_variant::recursive_naive,
                                                tree_variant::recursive_threshold, tree_variant::recursive_warp,
                                                tree_variant::recursive_block, tree_variant::device_driver};
  return all;
}

tree_variant parse_tree_variant(const std::string& name) {
  std::string choices;
  for (const tree_variant v : all_tree_variants()) {
    if (name == to_string(v)) return v;
    choices += (choices.empty() ? "" : ", ") + std::string(to_string(v));
  }
  throw input_error("unknown tree variant '" + name + "' (expected one of " + choices + ")");
}

const char* to_string(tree_op op) noexcept { return op == tree_op::top_down ? "depth" : "subtree"; }

tree_op parse_tree_op(const std::string& name) {
  if (name == "depth" || name == "top_down") return tree_op::top_down;
  if (name == "subtree" || name == "bottom_up") return tree_op::bottom_up;
  throw input_error("unknown tree operation '" + name + "' (expected depth or subtree)");
}

std::uint32_t default_tree_threshold(tree_variant v) noexcept {
  switch (v) {
    case tree_variant::recursive_naive: return 0;
    case tree_variant::recursive_threshold: return 16;
    case tree_variant::recursive_warp: return 64;
    case tree_variant::recursive_block: return 4;
    case tree_variant::device_driver: return 4096;
    default: return 0;
  }
}

std::uint32_t tree_options::effective_threshold() const noexcept {
  if (variant == tree_variant::recursive_naive || variant == tree_variant::level_sync) return 0;
  return threshold.value_or(default_tree_threshold(variant));
}

// ---- device_tree ----------------------------------------------------------------------------

device_tree::device_tree(const tree& t)
    : num_nodes_(t.num_nodes()),
      root_(t.root),
      root_first_child_(t.child_offsets.at(t.root)),
      root_children_(t.num_children(t.root)) {
  CDPKIT_NVTX_SCOPE("tree::upload");
  const std::uint64_t n = num_nodes_;
  require_device_memory(n * 24 + 64, "device_tree (" + std::to_string(n) + " nodes)");
  std::vector<std::uint32_t> slot(n, 0);
  for (std::uint32_t e = 0; e < t.children.size(); ++e) slot[t.children[e]] = e;
  const auto upload = [](auto& owner, const auto& host, std::size_t count) {
    using T = std::remove_reference_t<decltype(host[0])>;
    CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(owner), sizeof(T) * std::max<std::size_t>(count, 1)));
    if (count > 0) CDPKIT_CUDA_TRY(cudaMemcpy(owner.get(), host.data(), sizeof(T) * count, cudaMemcpyHostToDevice));
  };
  upload(d_offsets_, t.child_offsets, t.child_offsets.size());
  upload(d_children_, t.children, t.children.size());
  upload(d_parent_, t.parent, t.parent.size());
  upload(d_slot_, slot, slot.size());
  upload(d_value_, t.value, t.value.size());
}

// ---- tree_engine ----------------------------------------------------------------------------

tree_engine::tree_engine(const device_tree& t) : tree_(&t) {
  tree_sites::register_site_names();
  const std::uint64_t n = std::max<std::uint64_t>(1, t.num_nodes());
  // groups: a group takes 2 entries per owner, and its owners are the nodes with children of
  // the warp or block that asks (compacted); every node asks at most once: 2n + 2^16 is ample,
  // and a full pool would only turn launches into walks (counted)
  pool_entries_ = 2 * n + (1u << 16);
  require_device_memory(n * 28 + pool_entries_ * 4, "tree_engine (" + std::to_string(n) + " nodes)");
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_u32_a_), sizeof(std::uint32_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_u64_), sizeof(std::uint64_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_pending_), sizeof(std::uint32_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_order_), sizeof(std::uint32_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_pool_), sizeof(std::uint32_t) * pool_entries_));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_scan_), sizeof(std::uint32_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_counters_), sizeof(std::uint32_t) * counter_words));
  CDPKIT_CUDA_TRY(cudaMallocHost(detail::out_ptr(h_counters_), sizeof(std::uint32_t) * counter_words));
}

tree_stats tree_engine::run(const tree_options& options, launch_runtime& runtime, cudaStream_t stream) {
  CDPKIT_NVTX_SCOPE_PAYLOAD("tree::run", static_cast<std::uint32_t>(options.variant));
  detail::check_child_block_threads(options.child_block_threads, "tree_options::child_block_threads");
  const device_tree& t = *tree_;
  const tree_view view{t.d_child_offsets(), t.d_children(), t.d_parent(), t.d_slot(), t.d_value(),
                       t.num_nodes(), t.root()};
  const bool bottom_up = options.op == tree_op::bottom_up;
  const tree_out out{d_u32_a_.get(), reinterpret_cast<unsigned long long*>(d_u64_.get()), d_pending_.get(), bottom_up};
  last_op_ = options.op;
  ran_ = true;
  CDPKIT_CUDA_TRY(cudaMemsetAsync(d_counters_.get(), 0, sizeof(std::uint32_t) * counter_words, stream));
  init_kernel<<<blocks_for(t.num_nodes(), 256), 256, 0, stream>>>(view, out);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  if (options.variant == tree_variant::level_sync)
    return run_level_sync(view, out, d_order_.get(), d_counters_.get(), h_counters_.get(), runtime, stream);

  tree_stats stats;
  if (options.variant == tree_variant::device_driver) {
    CDPKIT_NVTX_SCOPE("tree::device_driver");
    level_root_kernel<<<1, 1, 0, stream>>>(d_order_.get(), t.root());
    // the level begins take the pool's words (only the recursions use it as a pool): n + 1 at most
    const driver_args args{view,
                           out,
                           d_order_.get(),
                           d_counters_.get(),
                           d_scan_.get(),
                           d_pool_.get(),
                           options.effective_threshold(),
                           options.child_block_threads};
    driver_root_kernel<<<1, 32, 0, stream>>>(runtime.root_context(), driver_body{args, 0, 0, 1});
    CDPKIT_CUDA_TRY(cudaGetLastError());
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_counters_.get(), d_counters_.get(), sizeof(std::uint32_t) * counter_words,
                                    cudaMemcpyDeviceToHost, stream));
    CDPKIT_WAIT_STREAM(stream, runtime, "tree::device_driver");
    CDPKIT_CHECK_DEVICE_ERRORS(runtime);
    stats.device_levels = h_counters_[2];
    stats.levels = stats.device_levels;
    const bool handed_back = h_counters_[3] != 0;
    const std::uint32_t add_from = h_counters_[7];  // bottom_up: the addition the device could not launch
    if (!handed_back && add_from == 0) return stats;
    // the level begins the device recorded: through the level to resume at, or all of them
    const std::uint32_t known = handed_back ? h_counters_[4] : stats.levels + 1;
    std::vector<std::uint32_t> begins(known);
    if (known > 0) {
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(begins.data(), d_pool_.get(), sizeof(std::uint32_t) * known,
                                      cudaMemcpyDeviceToHost, stream));
      CDPKIT_WAIT_STREAM(stream, runtime, "tree::device_driver (level begins)");
    }
    if (handed_back) {
      // the device could not launch: the host finishes the levels, as level_sync would, with the
      // driver's own expansion (block_aggregated), then adds them all (bottom_up)
      stats.driver_handed_back = true;
      std::uint32_t level = h_counters_[4], begin = h_counters_[5];
      std::uint32_t count = h_counters_[3] == 1 ? h_counters_[6] : h_counters_[0];
      begins.push_back(begin);
      loop_policy policy;
      policy.kind = loop_policy_kind::block_aggregated;
      policy.threshold = options.effective_threshold();
      policy.launch_site = static_cast<std::uint16_t>(sites::tree_children);
      policy.child_block_threads = options.child_block_threads;
      while (count > 0) {
        CDPKIT_NVTX_SCOPE_PAYLOAD("tree::level", level);
        CDPKIT_CUDA_TRY(cudaMemsetAsync(d_counters_.get(), 0, sizeof(std::uint32_t), stream));
        (void)loop_to_child::detail::enqueue_for_each_segment(
            level_segments{view.off, d_order_.get() + begin, count}, no_pre_op{},
            level_visit_op{view, out, d_order_.get() + begin + count, d_counters_.get()}, policy, runtime, stream,
            nullptr);
        CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_counters_.get(), d_counters_.get(), sizeof(std::uint32_t),
                                        cudaMemcpyDeviceToHost, stream));
        CDPKIT_WAIT_STREAM(stream, runtime, "tree::device_driver (handed back)");
        begin += count;
        count = h_counters_[0];
        begins.push_back(begin);
        ++level;
      }
      stats.levels = level;
    }
    if (bottom_up && stats.levels > 1) {
      // the levels not yet added: all of them after a hand-back, else those from the refused one up
      stats.host_added_levels = handed_back ? stats.levels - 1 : add_from;
      CDPKIT_NVTX_SCOPE("tree::device_driver combine (on the host)");
      add_levels_from_host(view, out, d_order_.get(), begins, stats.host_added_levels, stream);
      CDPKIT_WAIT_STREAM(stream, runtime, "tree::device_driver combine (on the host)");
    }
    CDPKIT_CHECK_DEVICE_ERRORS(runtime);
    return stats;
  }

  // the recursions: the root's children as a one-owner group, launched from the host
  CDPKIT_NVTX_SCOPE("tree::recursion");
  const std::uint32_t len = t.root_children();
  if (len > 0) {
    const recursion_args args{view,
                              out,
                              options.effective_threshold(),
                              options.child_block_threads,
                              d_pool_.get(),
                              pool_entries_,
                              reinterpret_cast<unsigned long long*>(d_counters_.get() + 8),
                              reinterpret_cast<unsigned int*>(d_counters_.get() + 1)};
    const node_group root_group{nullptr, nullptr, 1, t.root_first_child(), len};
    const unsigned int grid = blocks_for(len, options.child_block_threads);
    const launch_context ctx = runtime.root_context();
    switch (options.variant) {
      case tree_variant::recursive_warp:
        recursion_root_kernel<group_kind::warp><<<grid, options.child_block_threads, 0, stream>>>(
            ctx, generation_body<group_kind::warp>{args, root_group});
        break;
      case tree_variant::recursive_block:
        recursion_root_kernel<group_kind::block><<<grid, options.child_block_threads, 0, stream>>>(
            ctx, generation_body<group_kind::block>{args, root_group});
        break;
      default:
        recursion_root_kernel<group_kind::per_node><<<grid, options.child_block_threads, 0, stream>>>(
            ctx, generation_body<group_kind::per_node>{args, root_group});
        break;
    }
    CDPKIT_CUDA_TRY(cudaGetLastError());
  }
  CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_counters_.get(), d_counters_.get(), sizeof(std::uint32_t) * counter_words,
                                  cudaMemcpyDeviceToHost, stream));
  CDPKIT_WAIT_STREAM(stream, runtime, "tree::recursion");
  CDPKIT_CHECK_DEVICE_ERRORS(runtime);
  stats.pool_refusals = h_counters_[1];
  return stats;
}

tree_top_down tree_engine::top_down() const {
  tree_top_down r;
  if (!ran_ || last_op_ != tree_op::top_down) return r;
  const std::size_t n = tree_->num_nodes();
  wait_for_device("tree_engine::top_down", nullptr, __FILE__, __LINE__);
  r.depth.resize(n);
  r.path_sum.resize(n);
  CDPKIT_CUDA_TRY(cudaMemcpy(r.depth.data(), d_u32_a_.get(), sizeof(std::uint32_t) * n, cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaMemcpy(r.path_sum.data(), d_u64_.get(), sizeof(std::uint64_t) * n, cudaMemcpyDeviceToHost));
  return r;
}

tree_bottom_up tree_engine::bottom_up() const {
  tree_bottom_up r;
  if (!ran_ || last_op_ != tree_op::bottom_up) return r;
  const std::size_t n = tree_->num_nodes();
  wait_for_device("tree_engine::bottom_up", nullptr, __FILE__, __LINE__);
  r.size.resize(n);
  r.sum.resize(n);
  CDPKIT_CUDA_TRY(cudaMemcpy(r.size.data(), d_u32_a_.get(), sizeof(std::uint32_t) * n, cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaMemcpy(r.sum.data(), d_u64_.get(), sizeof(std::uint64_t) * n, cudaMemcpyDeviceToHost));
  return r;
}

tree_top_down tree_top_down_gpu(const device_tree& t, const tree_options& options, launch_runtime& runtime) {
  tree_engine engine(t);
  tree_options o = options;
  o.op = tree_op::top_down;
  (void)engine.run(o, runtime);
  return engine.top_down();
}

tree_bottom_up tree_bottom_up_gpu(const device_tree& t, const tree_options& options, launch_runtime& runtime) {
  tree_engine engine(t);
  tree_options o = options;
  o.op = tree_op::bottom_up;
  (void)engine.run(o, runtime);
  return engine.bottom_up();
}

}  // namespace cdpkit
