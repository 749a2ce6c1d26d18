#pragma once
// cdpkit/tree/kernels.cuh — the thin __global__ wrappers of the tree traversals (agents in
// cdpkit/tree/agents/): the start of a run, the recursions' root grid, the level loops' root and
// additions, and the device driver's first step. The level_sync expansions are loop-to-child's
// wrappers (cdpkit/loop_to_child/kernels.cuh, through for_each_segment); every other grid is
// launched from the device, through the launch layer, with a body of the agents. Internal
// linkage, as the agents (cdpkit/tree/agents.cuh says why).

#include <cdpkit/launch.cuh>
#include <cdpkit/tree/agents.cuh>

#include <cstdint>

namespace cdpkit::tree_device {
namespace {

/// init_agent over the nodes; tree_engine::run launches ceil(n / 256) blocks of 256 threads.
__global__ void init_kernel(tree_view t, tree_out o) { init_agent(t, o); }

/// The root's children, from the host: a one-owner group over them.
template <group_kind Kind>
__global__ void recursion_root_kernel(launch_context ctx, generation_body<Kind> body) {
  body(ctx);
}

/// add_level over level `nodes[0 .. count)`: ceil(count / add_level_threads) blocks of
/// add_level_threads threads, from the host, deepest level first (stream order).
__global__ void add_level_kernel(tree_view t, tree_out o, const std::uint32_t* nodes, std::uint32_t count) {
  add_level(t, o, nodes, count, blockIdx.x * blockDim.x + threadIdx.x);
}

/// The level loops' level 0: the root alone in the order (one thread).
__global__ void level_root_kernel(std::uint32_t* order, std::uint32_t root) { order[0] = root; }

/// The device driver's first step: one block of 32 threads, launched from the host with the
/// runtime's root context (level 0: the root alone in the order).
__global__ void driver_root_kernel(launch_context ctx, driver_body body) { body(ctx); }

}  // namespace
}  // namespace cdpkit::tree_device
