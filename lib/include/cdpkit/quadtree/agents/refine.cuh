#pragma once
// cdpkit/quadtree/agents/refine.cuh — the recursion's block: a block refines a node and then
// every node it keeps, from its own stack in shared memory, until none is left (refine_block).
// Refining a node: count its points per quadrant, scatter them into the other buffer by quadrant,
// then place the quadrants (place_quadrants, agents/wide_partition.cuh): a leaf, a wide node
// (its own count grid), or a node to split, launched as a child grid (refine_body, site
// quadtree.nodes) as the variant says and the layer allows, or pushed on the stack.
//
// The variants differ only in what they launch (quad_args::variant and threshold):
// child_per_node launches a grid of one block for every quadrant that splits; aggregated (threshold
// 0) and thresholded (quadrants of more points than the threshold) launch one grid for a node's
// quadrants, a block each.

#include <cdpkit/launch.cuh>
#include <cdpkit/quadtree/agents/common.cuh>
#include <cdpkit/quadtree/agents/wide_partition.cuh>

#include <cstdint>

namespace cdpkit::quadtree_device {
namespace {

/// Push a node on the block's stack (thread 0); a full stack (impossible within 3 entries per
/// level) raises device_error_queue_overflow and drops nothing silently.
__device__ __forceinline__ void push_node(const launch_context& ctx, quad_node* stack, int& top, const quad_node& v) {
  if (top < stack_capacity) stack[top++] = v;
  else raise_device_error(ctx, device_error_queue_overflow);
}

/// The block's loop: refine the nodes on its stack until none is left. Refining a node: count its
/// points per quadrant, scatter them into the other buffer by quadrant, then each non-empty
/// quadrant is a leaf (few points or max_depth), or a node to split: launched (as the variant
/// says and the layer allows) or pushed on the stack.
///
/// Every thread of a block of node_threads threads calls it (it synchronizes); nodes
/// first[0 .. first_count) (at most stack_capacity) are on no other block's stack, and their
/// points are in the buffer of their depth's parity.
__device__ void refine_block(const launch_context& ctx, const quad_args& a, const quad_node* first,
                             std::uint32_t first_count) {
  __shared__ quad_node stack[stack_capacity];
  __shared__ int top;
  __shared__ unsigned int count[4], fill[4];
  if (threadIdx.x == 0) {
    top = 0;
    for (std::uint32_t k = 0; k < first_count; ++k) stack[top++] = first[k];
  }
  for (;;) {
    __syncthreads();
    if (top == 0) break;
    const quad_node v = stack[top - 1];
    __syncthreads();
    if (threadIdx.x == 0) --top;
    if (threadIdx.x < 4) count[threadIdx.x] = 0;
    if (threadIdx.x == 0) atomicAdd(&a.counters[1], 1u);  // this node (split)
    __syncthreads();
    const std::uint32_t shift = 2 * (a.max_depth - v.depth - 1);
    const unsigned int src = v.depth & 1u, dst = src ^ 1u;
    // counts in registers, then one warp sum and shared atomic per quadrant and warp
    unsigned int local[4] = {0, 0, 0, 0};
    for (std::uint32_t k = v.begin + threadIdx.x; k < v.end; k += blockDim.x)
      count_quadrant(local, static_cast<unsigned int>((a.codes[src][k] >> shift) & 3u));
    add_block_counts(count, local);
    __syncthreads();
    if (threadIdx.x == 0) {
      fill[0] = 0;
      for (int q = 1; q < 4; ++q) fill[q] = fill[q - 1] + count[q - 1];
    }
    __syncthreads();
    unsigned int start[4];
    for (int q = 0; q < 4; ++q) start[q] = fill[q];  // (read before the scatter moves fill)
    __syncthreads();
    for (std::uint32_t base = v.begin; base < v.end; base += blockDim.x) {
      const std::uint32_t k = base + threadIdx.x;
      const bool valid = k < v.end;
      const std::uint64_t code = valid ? a.codes[src][k] : 0;
      const unsigned int q = valid ? static_cast<unsigned int>((code >> shift) & 3u) : 4u;
      const unsigned int pos = quadrant_position(q, fill);
      if (valid) {
        a.codes[dst][v.begin + pos] = code;
        a.ids[dst][v.begin + pos] = a.ids[src][k];
      }
    }
    __threadfence();  // the scatter, before a child grid (launched by thread 0) reads it
    __syncthreads();
    if (threadIdx.x != 0) continue;
    unsigned int first[4];
    for (int q = 0; q < 4; ++q) first[q] = v.begin + start[q];
    place_quadrants(ctx, a, v, first, count, [&](const quad_node& c) { push_node(ctx, stack, top, c); });
  }
}

__device__ void refine_body::operator()(const launch_context& self) const {
  if (blockIdx.x < count) refine_block(self, a, &nodes[blockIdx.x], 1);
}

}  // namespace
}  // namespace cdpkit::quadtree_device
