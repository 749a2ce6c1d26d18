#pragma once
// cdpkit/quadtree/agents/wide_partition.cuh — a node too wide for one block (more than
// wide_points points), partitioned by grids, and the placement of a partitioned node's quadrants
// (place_quadrants, which every CDP variant of the recursion shares):
//
//   1. launch_wide takes a task record (wide_task) for the node and launches its count grid
//      (site quadtree.wide), a block per wide_chunk points;
//   2. count grid: each block adds its chunk's quadrant counts into the task's (one atomic per
//      quadrant and block); the last block to arrive sets the quadrants' first positions and
//      launches the scatter step at the same depth (launch_step, site quadtree.wide_scatter);
//   3. scatter step: each block moves its chunk's points (held in registers) to their quadrants
//      in the other buffer; the last block places the quadrants (place_quadrants): leaves, wide
//      nodes (their own count grids) and nodes to split (child grids of agents/refine.cuh).
//
// Whatever is refused (the task pool full, a launch refused) is refined by the block that asked
// (refine_block, agents/refine.cuh): nothing is lost. refine_block is defined in
// agents/refine.cuh, which includes this file: include that one (or agents.cuh).

#include <cdpkit/launch.cuh>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/quadtree/agents/common.cuh>

#include <cstdint>

namespace cdpkit::quadtree_device {
namespace {

/// The quadrants of node v, split into [first[q], first[q] + count[q]) of the other buffer
/// (thread 0): each non-empty one is a leaf (few points or max_depth), a wide node (its own count
/// grid), or a node to split, launched as the variant says and the layer allows. What is not
/// launched is given to keep(node) (the caller's block refines it itself).
template <class Keep>
__device__ void place_quadrants(const launch_context& ctx, const quad_args& a, const quad_node& v,
                                const unsigned int* first, const unsigned int* count, Keep keep) {
  quad_node split[4];
  std::uint32_t splits = 0;
  for (std::uint32_t q = 0; q < 4; ++q) {
    if (count[q] == 0) continue;  // an empty quadrant is not a node
    const quad_node c{v.code * 4 + q, first[q], first[q] + count[q], v.depth + 1};
    if (count[q] <= a.min_points || c.depth >= a.max_depth) append_leaf(a, c);
    else if (count[q] > wide_points) {
      if (!launch_wide(ctx, a, c)) keep(c);
    } else {
      split[splits++] = c;
    }
  }
  if (a.variant == quadtree_variant::child_per_node) {
    for (std::uint32_t k = 0; k < splits; ++k) {
      refine_body body{a, {split[k]}, 1};
      if (!launch_child(ctx, sites::quadtree_nodes, dim3(1), dim3(node_threads), stream_kind::fire_and_forget, body,
                        0u, split[k].end - split[k].begin))
        keep(split[k]);
    }
    return;
  }
  refine_body body{a, {}, 0};
  std::uint32_t work = 0;
  for (std::uint32_t k = 0; k < splits; ++k) {
    if (split[k].end - split[k].begin > a.threshold) {
      body.nodes[body.count++] = split[k];
      work += split[k].end - split[k].begin;
    } else {
      keep(split[k]);
    }
  }
  if (body.count > 0 && !launch_child(ctx, sites::quadtree_nodes, dim3(body.count), dim3(node_threads),
                                      stream_kind::fire_and_forget, body, 0u, work))
    for (std::uint32_t k = 0; k < body.count; ++k) keep(body.nodes[k]);
}

/// The points of block `blk`'s chunk of wide node v: [lo, hi).
__device__ __forceinline__ void wide_chunk_of(const quad_node& v, std::uint32_t blk, std::uint32_t& lo,
                                              std::uint32_t& hi) {
  lo = v.begin + blk * wide_chunk;
  hi = v.end - lo < wide_chunk ? v.end : lo + wide_chunk;
}

/// A scatter grid's body: block b scatters chunk b of wide node t->v (wide_scatter_block).
struct wide_scatter_body {
  quad_args a;
  wide_task* t;
  __device__ void operator()(const launch_context& self) const;
};

/// A count block of wide node t->v: its chunk's quadrant counts into the task's; the last block
/// sets the quadrants' first positions and launches the scatter step, or, refused, refines the
/// node itself (and its subtree, as refine_block does).
__device__ void wide_count_block(const launch_context& ctx, const quad_args& a, wide_task* t) {
  __shared__ unsigned int counts[4];
  __shared__ bool last, scattering;
  const quad_node v = t->v;
  if (threadIdx.x < 4) counts[threadIdx.x] = 0;
  __syncthreads();
  const std::uint32_t shift = 2 * (a.max_depth - v.depth - 1);
  const std::uint64_t* codes = a.codes[v.depth & 1u];
  std::uint32_t lo = 0, hi = 0;
  wide_chunk_of(v, blockIdx.x, lo, hi);
  unsigned int local[4] = {0, 0, 0, 0};
  for (std::uint32_t k = lo + threadIdx.x; k < hi; k += wide_threads)
    count_quadrant(local, static_cast<unsigned int>((codes[k] >> shift) & 3u));
  add_block_counts(counts, local);
  __syncthreads();
  if (threadIdx.x < 4 && counts[threadIdx.x] != 0) atomicAdd(&t->count[threadIdx.x], counts[threadIdx.x]);
  if (!last_block_to_arrive(&t->count_done, t->grid, last)) return;
  if (threadIdx.x == 0) {
    unsigned int at = v.begin;
    for (int q = 0; q < 4; ++q) {
      t->first[q] = at;
      t->fill[q] = at;
      at += __ldcg(&t->count[q]);
    }
    scattering = static_cast<bool>(launch_step(ctx, sites::quadtree_wide_scatter, dim3(t->grid),
                                               dim3(wide_threads), wide_scatter_body{a, t}, v.end - v.begin));
  }
  __syncthreads();
  if (!scattering) refine_block(ctx, a, &v, 1);
}

/// A scatter block of wide node t->v: its chunk's points (held in registers) to their
/// quadrants in the other buffer, at positions from the task's cursors (one atomic per quadrant
/// and block, then one shared atomic per quadrant and warp); the last block places the
/// quadrants, and refines what it could not launch.
__device__ void wide_scatter_block(const launch_context& ctx, const quad_args& a, wide_task* t) {
  __shared__ unsigned int counts[4], cursor[4];
  __shared__ bool flag;
  __shared__ quad_node kept[4];
  __shared__ unsigned int kept_count;
  const quad_node v = t->v;
  if (threadIdx.x < 4) counts[threadIdx.x] = 0;
  __syncthreads();
  const std::uint32_t shift = 2 * (a.max_depth - v.depth - 1);
  const unsigned int src = v.depth & 1u, dst = src ^ 1u;
  std::uint32_t lo = 0, hi = 0;
  wide_chunk_of(v, blockIdx.x, lo, hi);
  std::uint64_t code[wide_items];
  std::uint32_t id[wide_items];
  load_chunk(a, src, lo, hi, shift, true, code, id, counts);
  __syncthreads();
  if (threadIdx.x < 4) cursor[threadIdx.x] = counts[threadIdx.x] != 0 ? atomicAdd(&t->fill[threadIdx.x], counts[threadIdx.x]) : 0u;
  __syncthreads();
  scatter_chunk(a, dst, lo, hi, shift, code, id, cursor);
  if (!last_block_to_arrive(&t->scatter_done, t->grid, flag)) return;
  if (threadIdx.x == 0) {
    atomicAdd(&a.counters[1], 1u);  // v (split)
    kept_count = 0;
    unsigned int first[4], count[4];
    for (int q = 0; q < 4; ++q) {
      first[q] = t->first[q];
      count[q] = __ldcg(&t->count[q]);
    }
    place_quadrants(ctx, a, v, first, count, [&](const quad_node& c) { kept[kept_count++] = c; });
  }
  __syncthreads();
  if (kept_count > 0) refine_block(ctx, a, kept, kept_count);
}

__device__ void wide_scatter_body::operator()(const launch_context& self) const { wide_scatter_block(self, a, t); }

/// A count grid's body: block b counts chunk b of wide node t->v (wide_count_block); the host
/// launches the root's (wide_root_kernel), launch_wide every other one.
struct wide_count_body {
  quad_args a;
  wide_task* t;
  __device__ void operator()(const launch_context& self) const { wide_count_block(self, a, t); }
};

/// Take a task for wide node c and launch its count grid; false when the pool is full or the
/// launch is refused (the caller refines c itself).
__device__ bool launch_wide(const launch_context& ctx, const quad_args& a, const quad_node& c) {
  const unsigned int k = atomicAdd(&a.counters[2], 1u);
  if (k >= a.task_capacity) return false;
  wide_task* t = a.tasks + k;
  *t = wide_task_for(c);
  return static_cast<bool>(launch_child(ctx, sites::quadtree_wide, dim3(t->grid), dim3(wide_threads),
                                        stream_kind::fire_and_forget, wide_count_body{a, t}, 0u, c.end - c.begin));
}

}  // namespace
}  // namespace cdpkit::quadtree_device
