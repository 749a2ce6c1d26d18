#pragma once
// cdpkit/bfs/kernels.cuh — the thin __global__ wrappers of BFS (agents in cdpkit/bfs/agents/):
// the start of a run and the device driver's first step. The host-driven variants launch no
// kernel of their own: each level is for_each_segment over the frontier (frontier_segments,
// visit_op), i.e. loop-to-child's wrappers (cdpkit/loop_to_child/kernels.cuh). Internal linkage,
// as the agents (cdpkit/bfs/agents.cuh says why).

#include <cdpkit/bfs/agents.cuh>
#include <cdpkit/launch.cuh>
#include <cdpkit/loop_to_child/kernels.cuh>

#include <cstdint>

namespace cdpkit::bfs_device {
namespace {

/// init_agent over the vertices; bfs_engine::run launches ceil(n / 256) blocks of 256 threads.
__global__ void init_kernel(std::uint32_t* d_levels, std::uint32_t n, std::uint32_t source,
                            std::uint32_t* d_frontier, std::uint32_t* d_counters) {
  init_agent(d_levels, n, source, d_frontier, d_counters);
}

/// The device driver's first step: one block of 32 threads, launched from the host with the
/// runtime's root context (level 0: frontier 0, the source alone).
__global__ void driver_root_kernel(launch_context ctx, driver_body body) { body(ctx); }

}  // namespace
}  // namespace cdpkit::bfs_device
