#pragma once
// cdpkit/bezier/agents/curve_points.cuh — step 2 of a tessellation on the GPU: every curve's
// points, a curve a loop-to-child segment over its points' places in the output. The segments
// are read from the scan of step 1 (agents/point_counts.cuh) and clamped to the points' buffer;
// point j of curve i is evaluate(curve, tessellation_parameter(...)), the same inline code as the
// CPU reference (cdpkit/bezier.hpp).
//
// Usage (lib/src/bezier/engine.cu): after the counts' exclusive scan into `scan`,
//
//   for_each_segment(bezier::clamped_curves{scan, n, capacity}, loop_to_child::no_pre_op{},
//                    bezier::point_op{curves, scan, points}, policy);

#include <cdpkit/bezier.hpp>

#include <cstdint>

namespace cdpkit::bezier {
namespace {

/// The curves as segments, read from the counts' 64-bit exclusive scan clamped to the points'
/// buffer: curve i's points are items [scan[i], scan[i + 1]) where they fit `capacity` (< 2^32),
/// cut short or empty where they do not (no point is written past the buffer; the run that finds
/// its total past the buffer makes them again after growing it). No kernel narrows the offsets.
///
/// Preconditions: scan has num_segments + 1 entries, non-decreasing (an exclusive scan of the
/// counts), in device memory that no one writes while the points are made.
struct clamped_curves {
  const unsigned long long* scan;
  std::uint32_t num_segments;
  std::uint32_t capacity;
  __device__ std::uint32_t begin(std::uint32_t i) const {
    return static_cast<std::uint32_t>(min(scan[i], static_cast<unsigned long long>(capacity)));
  }
  __device__ std::uint32_t end(std::uint32_t i) const { return begin(i + 1); }
};

/// Item (i, j): point j - scan[i] of curve i's scan[i + 1] - scan[i] (j lies inside the buffer,
/// hence inside the curve's points, which begin at or before it).
///
/// The item operation over clamped_curves with the same scan: any thread may call it, for any
/// item of those segments; points holds at least the segments' capacity.
struct point_op {
  const bezier_curve* curves;
  const unsigned long long* scan;
  vec2* points;
  __device__ void operator()(std::uint32_t i, std::uint32_t j) const {
    const unsigned long long begin = scan[i];
    points[j] = evaluate(curves[i], tessellation_parameter(static_cast<std::uint32_t>(j - begin),
                                                           static_cast<std::uint32_t>(scan[i + 1] - begin)));
  }
};

}  // namespace
}  // namespace cdpkit::bezier
