#pragma once
// cdpkit/quadtree/kernels.cuh — the thin __global__ wrappers of the quadtree build (agents in
// cdpkit/quadtree/agents/): the cells of the points, the Morton build's level grids, and the
// host-launched root grids of the recursions and of device_driver. Every other grid of the build
// is launched from the device, through the launch layer, with a body of the agents. Internal
// linkage, as the agents (cdpkit/quadtree/agents.cuh says why).

#include <cdpkit/launch.cuh>
#include <cdpkit/quadtree/agents.cuh>

#include <cstdint>

namespace cdpkit::quadtree_device {
namespace {

/// The root's count grid, when the root is a wide node: t.grid blocks of wide_threads threads,
/// launched from the host with the runtime's root context, over task 0 (taken: counters[2] = 1,
/// and set to wide_task_for(root)).
__global__ void wide_root_kernel(launch_context ctx, wide_count_body body) { body(ctx); }

/// The root refined by one block of node_threads threads, launched from the host with the
/// runtime's root context (body: the root alone).
__global__ void refine_root_kernel(launch_context ctx, refine_body body) { body(ctx); }

/// cells_agent over the points; quadtree_engine::run launches ceil(n / 256) blocks of 256 threads.
__global__ void cells_kernel(const point2* points, std::uint32_t n, quadtree_bounds b, std::uint32_t depth,
                             std::uint64_t* codes, std::uint32_t* ids) {
  cells_agent(points, n, b, depth, codes, ids);
}

/// morton_level_agent for depth d; quadtree_engine::run launches ceil(n / 256) blocks of 256
/// threads per depth, in stream order.
__global__ void morton_level_kernel(const std::uint64_t* sorted, std::uint32_t n, std::uint32_t d,
                                    std::uint32_t max_depth, std::uint32_t min_points, std::uint32_t parity,
                                    std::uint8_t* done, device_leaf* leaves, unsigned int* counters) {
  morton_level_agent(sorted, n, d, max_depth, min_points, parity, done, leaves, counters);
}

/// radix: the root's count grid (t.grid blocks of radix_threads threads, task 0 set by the host to
/// the root's, tasks_taken = 1), launched from the host with the runtime's root context.
__global__ void __launch_bounds__(radix_threads) radix_root_kernel(launch_context ctx, radix_count_body body) {
  body(ctx);
}

/// radix: the drain grid, launched from the host right after the root's grid (or alone, with the
/// root queued as job 0), resident_blocks(radix_drain_kernel) blocks of radix_threads threads.
__global__ void __launch_bounds__(radix_threads) radix_drain_kernel(launch_context ctx, radix_args r) {
  radix_drain(ctx, r);
}

/// A pass of device_driver's level loop launched from the host (level 0's count pass, or the pass
/// the device handed back): level_grid(active) blocks of level_threads threads with the runtime's
/// root context.
__global__ void level_root_kernel(launch_context ctx, level_pass_body body) { body(ctx); }

}  // namespace
}  // namespace cdpkit::quadtree_device
