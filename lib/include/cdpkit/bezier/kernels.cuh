#pragma once
// cdpkit/bezier/kernels.cuh — the thin __global__ wrapper of the Bézier tessellation: the point
// counts (agents/point_counts.cuh). The points launch no kernel of Bézier's own: they are
// for_each_segment over clamped_curves with point_op (agents/curve_points.cuh), i.e.
// loop-to-child's wrappers (cdpkit/loop_to_child/kernels.cuh). Internal linkage, as the agents
// (cdpkit/bezier/agents.cuh says why).

#include <cdpkit/bezier/agents.cuh>
#include <cdpkit/loop_to_child/kernels.cuh>

#include <cstdint>

namespace cdpkit::bezier {
namespace {

/// count_points_agent over n + 1 threads; tessellation_engine::run launches blocks of 256 threads.
__global__ void count_points_kernel(const bezier_curve* curves, std::uint32_t n, float tolerance, std::uint32_t cap,
                                    unsigned long long* counts) {
  count_points_agent(curves, n, tolerance, cap, counts);
}

}  // namespace
}  // namespace cdpkit::bezier
