#pragma once
// cdpkit/bezier/agents.cuh — the Bézier tessellation's device building blocks, one file per job,
// in namespace cdpkit::bezier (the thin __global__ wrapper over them: cdpkit/bezier/kernels.cuh;
// the host engine: lib/src/bezier/engine.cu).
//
// The tessellation on the GPU (cdpkit/tessellation.hpp): every curve's point count, their
// exclusive scan (CUB, on the host's side), then every curve's points as a loop-to-child segment
// under every policy:
//
//   agents/point_counts.cuh  step 1: count_points_agent
//   agents/curve_points.cuh  step 2: clamped_curves (the curves as segments), point_op
//
// Launch sites and probes: loop-to-child's own (cdpkit/launch/site_ids.hpp).
//
// The agents and kernels have internal linkage (an unnamed namespace inside cdpkit::bezier), as
// BFS's, the trees' and the quadtree's (cdpkit/bfs/agents.cuh says why): each translation unit
// that includes them has its own copy, and their PTX is the one lib/src/bezier/tessellation.cu
// gave at commit b7c74cd (nvcc 13.0, sm_90).

#include <cdpkit/bezier/agents/curve_points.cuh>
#include <cdpkit/bezier/agents/point_counts.cuh>
