#pragma once
// cdpkit/quadtree/agents/morton.cuh — the Morton build (no CDP: the yardstick). Every point gets
// its cell at max_depth as a Morton code (cells_agent; also the first step of every other
// variant); the host sorts the codes (CUB radix sort, with the point ids); then one grid per depth
// d = 0 .. max_depth finds the nodes among the runs of equal codes (morton_level_agent): a run
// that holds at most min_points points, or lies at max_depth, is a leaf, and its points are
// marked done so that the deeper levels skip them.

#include <cdpkit/quadtree.hpp>
#include <cdpkit/quadtree/agents/common.cuh>

#include <cstdint>

namespace cdpkit::quadtree_device {
namespace {

/// Point i = blockIdx.x * blockDim.x + threadIdx.x gets its cell at `depth` (quadtree_cell)
/// in codes[i], and its id i in ids[i]. Preconditions: a 1-D grid of at least n threads, any
/// block size (threads past n do nothing); codes and ids have n entries.
__device__ __forceinline__ void cells_agent(const point2* points, std::uint32_t n, quadtree_bounds b,
                                            std::uint32_t depth, std::uint64_t* codes, std::uint32_t* ids) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  codes[i] = quadtree_cell(points[i], b, depth);
  ids[i] = i;
}

/// The first position in sorted[lo, hi) whose value is >= key.
__device__ std::uint32_t lower_bound(const std::uint64_t* sorted, std::uint32_t lo, std::uint32_t hi, std::uint64_t key) {
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (sorted[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/// Depth d of the Morton build: every run of equal cells at depth d not inside an earlier leaf
/// is a node; it is a leaf when it holds at most min_points points or d is max_depth (its points
/// are then marked done, unless d is the last depth: nothing reads them afterwards).
///
/// Thread i = blockIdx.x * blockDim.x + threadIdx.x looks at sorted point i. Preconditions: a
/// 1-D grid of at least n threads, any block size; `sorted` holds the n codes at max_depth in
/// ascending order; the grids run in stream order for d = 0 .. max_depth, the first over `done`
/// zeroed (n bytes) and counters[0] (leaves) and [1] (nodes) zeroed; leaves has room for n
/// leaves; parity is the buffer holding the sorted points.
__device__ __forceinline__ void morton_level_agent(const std::uint64_t* sorted, std::uint32_t n, std::uint32_t d,
                                                   std::uint32_t max_depth, std::uint32_t min_points,
                                                   std::uint32_t parity, std::uint8_t* done,
                                                   device_leaf* leaves, unsigned int* counters) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || done[i]) return;
  const std::uint32_t shift = 2 * (max_depth - d);
  const std::uint64_t prefix = sorted[i] >> shift;
  if (i > 0 && (sorted[i - 1] >> shift) == prefix) return;  // not the run's first point
  const std::uint32_t end = d == 0 ? n : lower_bound(sorted, i + 1, n, (prefix + 1) << shift);
  atomicAdd(&counters[1], 1u);
  if (end - i <= min_points || d == max_depth) {
    const unsigned int k = atomicAdd(&counters[0], 1u);
    leaves[k] = {prefix, i, end, d, parity};
    if (d < max_depth)
      for (std::uint32_t j = i; j < end; ++j) done[j] = 1;
  }
}

}  // namespace
}  // namespace cdpkit::quadtree_device
