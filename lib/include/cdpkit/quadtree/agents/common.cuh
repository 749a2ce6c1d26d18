#pragma once
// cdpkit/quadtree/agents/common.cuh — what the quadtree's device builds share: the launch
// parameters, the nodes, leaves and wide tasks, the arguments every body carries (quad_args), the
// leaf append, and the block-level steps of a partition (counting a node's points per quadrant,
// a warp's positions in its quadrants, a chunk of points loaded into registers and scattered).
//
// Namespace cdpkit::quadtree_device: cdpkit::quadtree is the built tree (cdpkit/quadtree.hpp).
//
// The points are two buffers of cell codes (at max_depth) and point ids: a node of depth d holds
// its points [begin, end) in buffer d & 1, and partitioning it writes its quadrants into the same
// range of the other buffer, so that nodes being refined at once never overlap. The counters
// (quad_args::counters, zeroed by the host before a build): [0] leaves appended, [1] nodes,
// [2] wide tasks taken.
//
// The recursions' two halves call each other: the refine loop (agents/refine.cuh) gives a quadrant
// too wide for one block a count grid (launch_wide), and a wide node whose launch is refused is
// refined by the block (refine_block). Both are declared here; include agents.cuh (or
// agents/refine.cuh, which includes agents/wide_partition.cuh) for their definitions.

#include <cdpkit/launch.cuh>
#include <cdpkit/quadtree_build.hpp>

#include <cstdint>

namespace cdpkit::quadtree_device {
namespace {

constexpr unsigned int node_threads = 256;  ///< threads of a block refining a node
constexpr int stack_capacity = 128;         ///< a block's own nodes: 3 per level + 4 is enough
/// A node of more points is partitioned by a grid (a count grid, then a scatter step, a block per
/// wide_chunk points), in every CDP variant: one block per node at the top of the tree left the
/// GPU idle (measured on the H200 before: 2^22 uniform points, 47 ms thresholded against 1.0 ms
/// for the Morton build, the root's 2^22 points partitioned by one block).
constexpr std::uint32_t wide_points = 1u << 15;
constexpr unsigned int wide_threads = 256;
constexpr unsigned int wide_items = 16;  ///< points per thread of a wide pass (held in registers)
constexpr std::uint32_t wide_chunk = wide_threads * wide_items;

/// A node: its points [begin, end) of the buffer of its depth's parity, its depth and cell.
struct quad_node {
  std::uint64_t code;
  std::uint32_t begin, end, depth;
};

/// A leaf as the device appends it: the node and the buffer (depth parity) holding its points.
struct device_leaf {
  std::uint64_t code;
  std::uint32_t begin, end, depth, parity;
};

/// A node partitioned by a grid: its count grid adds the quadrants' counts, its last block
/// sets the quadrants' first positions and launches the scatter step, whose last block places
/// the quadrants (place_quadrants).
struct wide_task {
  quad_node v;
  unsigned int count[4];  ///< points per quadrant (the count grid's atomics)
  unsigned int first[4];  ///< each quadrant's first position (the count grid's last block)
  unsigned int fill[4];   ///< the scatter blocks' cursors, from first
  unsigned int count_done, scatter_done;
  std::uint32_t grid;     ///< blocks of both passes
};

/// The task of wide node v: nothing counted or arrived yet, a block per wide_chunk points.
__host__ __device__ inline wide_task wide_task_for(const quad_node& v) {
  wide_task t{};
  t.v = v;
  t.grid = (v.end - v.begin + wide_chunk - 1) / wide_chunk;
  return t;
}

/// What every body of the recursions and of device_driver carries: the point buffers, the leaves and
/// counters (zeroed by the host), the wide tasks, the build's parameters and the variant.
struct quad_args {
  std::uint64_t* codes[2];    ///< cell codes at max_depth, by depth parity
  std::uint32_t* ids[2];      ///< point ids, alongside
  device_leaf* leaves;
  unsigned int* counters;     ///< [0] leaves, [1] nodes, [2] wide tasks taken
  wide_task* tasks;           ///< the wide nodes' records (enough for every wide node)
  std::uint32_t task_capacity;
  std::uint32_t max_depth;
  std::uint32_t min_points;
  std::uint32_t threshold;    ///< launch quadrants of more points (0: every splitting quadrant)
  quadtree_variant variant;
};

/// Append node v as a leaf (its points in the buffer of its depth's parity) and count it as a node.
/// Any thread, any number at once: one atomic on counters[0] gives the leaf its slot (a.leaves has
/// room for one leaf per point), one on counters[1] counts it.
__device__ void append_leaf(const quad_args& a, const quad_node& v) {
  const unsigned int k = atomicAdd(&a.counters[0], 1u);
  a.leaves[k] = {v.code, v.begin, v.end, v.depth, v.depth & 1u};
  atomicAdd(&a.counters[1], 1u);
}

/// A child grid: block b refines nodes[b] (and whatever it pushes on its stack). Its
/// operator() is agents/refine.cuh's; blocks of node_threads threads, one per node.
struct refine_body {
  quad_args a;
  quad_node nodes[4];
  std::uint32_t count;
  __device__ void operator()(const launch_context& self) const;
};

/// The position of the calling lane's point of quadrant q (4: none) from the block's shared
/// cursors: the warp's points of each quadrant take one range (one shared atomic per quadrant
/// and warp). Every lane of the warp calls it.
__device__ __forceinline__ unsigned int quadrant_position(unsigned int q, unsigned int* cursor) {
  const unsigned int lane = threadIdx.x & 31u;
  unsigned int pos = 0;
  for (unsigned int c = 0; c < 4; ++c) {
    const unsigned int same = __ballot_sync(0xffffffffu, q == c);
    if (same == 0) continue;
    const unsigned int leader = static_cast<unsigned int>(__ffs(same) - 1);
    unsigned int at = 0;
    if (lane == leader) at = atomicAdd(&cursor[c], __popc(same));
    at = __shfl_sync(0xffffffffu, at, leader);
    if (q == c) pos = at + __popc(same & ((1u << lane) - 1u));
  }
  return pos;
}

/// The refine loop (agents/refine.cuh) and the launch of a wide node's count grid
/// (agents/wide_partition.cuh): each half of the recursion calls the other.
__device__ void refine_block(const launch_context& ctx, const quad_args& a, const quad_node* first,
                             std::uint32_t first_count);
__device__ bool launch_wide(const launch_context& ctx, const quad_args& a, const quad_node& c);

/// Add the calling thread's quadrant counts into the block's (shared): a warp sum, then one
/// shared atomic per quadrant and warp. Every thread of the block calls it.
__device__ __forceinline__ void add_block_counts(unsigned int* block_counts, const unsigned int (&local)[4]) {
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const unsigned int sum = __reduce_add_sync(0xffffffffu, local[q]);
    if ((threadIdx.x & 31u) == 0 && sum != 0) atomicAdd(&block_counts[q], sum);
  }
}

/// Count quadrant q of a point (compile-time indices: the counts stay in registers).
__device__ __forceinline__ void count_quadrant(unsigned int (&local)[4], unsigned int q) {
  local[0] += q == 0;
  local[1] += q == 1;
  local[2] += q == 2;
  local[3] += q == 3;
}

/// A block's chunk of contiguous points [lo, hi) of buffer src, Items a thread (point
/// lo + i * blockDim.x + threadIdx.x) held in registers (ids only `with_ids`), their quadrants at
/// `shift` added into the block's `counts` (shared, zeroed before a barrier). Every thread of the
/// block calls it.
template <unsigned int Items>
__device__ __forceinline__ void load_chunk(const quad_args& a, unsigned int src, std::uint32_t lo, std::uint32_t hi,
                                           std::uint32_t shift, bool with_ids, std::uint64_t (&code)[Items],
                                           std::uint32_t (&id)[Items], unsigned int* counts) {
  unsigned int local[4] = {0, 0, 0, 0};
#pragma unroll
  for (unsigned int i = 0; i < Items; ++i) {
    const std::uint32_t k = lo + i * blockDim.x + threadIdx.x;
    code[i] = 0;
    id[i] = 0;
    if (k < hi) {
      code[i] = a.codes[src][k];
      if (with_ids) id[i] = a.ids[src][k];
      count_quadrant(local, static_cast<unsigned int>((code[i] >> shift) & 3u));
    }
  }
  add_block_counts(counts, local);
}

/// The chunk load_chunk held, each point to its quadrant's next place in buffer dst from the
/// block's `cursor` (shared, absolute positions). Every thread of the block calls it (the ballots).
template <unsigned int Items>
__device__ __forceinline__ void scatter_chunk(const quad_args& a, unsigned int dst, std::uint32_t lo, std::uint32_t hi,
                                              std::uint32_t shift, const std::uint64_t (&code)[Items],
                                              const std::uint32_t (&id)[Items], unsigned int* cursor) {
#pragma unroll
  for (unsigned int i = 0; i < Items; ++i) {
    const bool valid = lo + i * blockDim.x + threadIdx.x < hi;
    const unsigned int q = valid ? static_cast<unsigned int>((code[i] >> shift) & 3u) : 4u;
    const unsigned int pos = quadrant_position(q, cursor);
    if (valid) {
      a.codes[dst][pos] = code[i];
      a.ids[dst][pos] = id[i];
    }
  }
}

}  // namespace
}  // namespace cdpkit::quadtree_device
