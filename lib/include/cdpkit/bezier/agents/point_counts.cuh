#pragma once
// cdpkit/bezier/agents/point_counts.cuh — step 1 of a tessellation on the GPU: every curve's
// point count (points_for_curve, cdpkit/bezier.hpp: the same inline code as the CPU reference),
// written as 64-bit counts with a zero after the last, so that their exclusive scan (CUB, in
// place: the engine's step) ends with the total.

#include <cdpkit/bezier.hpp>

#include <cstdint>

namespace cdpkit::bezier {
namespace {

/// counts[i] = curve i's points; counts[n] = 0 (so that the exclusive scan's last entry is the total).
///
/// Thread i = blockIdx.x * blockDim.x + threadIdx.x writes counts[i]. Preconditions: a 1-D grid
/// of at least n + 1 threads, any block size; curves has n entries and counts n + 1;
/// tolerance and cap as points_for_curve takes them (finite tolerance > 0, cap in
/// [2, max_point_cap]: the engine checks them).
__device__ __forceinline__ void count_points_agent(const bezier_curve* curves, std::uint32_t n, float tolerance,
                                                   std::uint32_t cap, unsigned long long* counts) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) counts[i] = points_for_curve(curves[i], tolerance, cap);
  else if (i == n) counts[n] = 0;
}

}  // namespace
}  // namespace cdpkit::bezier
