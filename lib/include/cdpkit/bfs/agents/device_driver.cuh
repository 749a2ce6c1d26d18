#pragma once
// cdpkit/bfs/agents/device_driver.cuh — device_driver: the level loop on the device. A one-thread
// driver step reads the frontier's size, launches the level's expansion (a grid running
// loop-to-child's thresholded agent over the frontier) and tail-launches the next step, which
// runs once this grid and the level's grids have finished: no host round trip per level. A
// refused launch hands the loop back to the host with the level to resume at (counters [3..5]).
//
// Launch sites: bfs.level (the level's grid), bfs.driver (the continuation), bfs.neighbors (the
// expansion's children).

#include <cdpkit/bfs/agents/common.cuh>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/loop_to_child/agents/thresholded.cuh>

#include <cstdint>

namespace cdpkit::bfs_device {
namespace {

/// What every driver step and level grid reads: the graph, the levels, both frontier buffers and
/// the counters (agents/common.cuh), and the expansion's launch parameters.
struct driver_args {
  const std::uint32_t* d_offsets;
  const std::uint32_t* d_neighbors;
  std::uint32_t* d_levels;
  std::uint32_t* d_frontier0;
  std::uint32_t* d_frontier1;
  std::uint32_t* d_counters;
  std::uint32_t threshold;
  stream_kind stream;                 ///< of the expansion's children
  unsigned int child_block_threads;   ///< of the expansion's children
};

/// One level's expansion, launched by the driver: the thresholded agent over the frontier.
///
/// Run by every thread of a grid of ceil(count / loop_to_child::block_threads) blocks of
/// loop_to_child::block_threads threads (thresholded_agent's preconditions); frontier `cur` holds
/// `count` vertices of level `level`, and the other frontier's size (d_counters[1 - cur]) is
/// zero.
struct level_body {
  driver_args a;
  std::uint32_t level;
  std::uint32_t cur;
  std::uint32_t count;
  __device__ void operator()(const launch_context& self) const {
    std::uint32_t* cur_frontier = cur == 0 ? a.d_frontier0 : a.d_frontier1;
    std::uint32_t* next_frontier = cur == 0 ? a.d_frontier1 : a.d_frontier0;
    loop_to_child::thresholded_agent(
        self, frontier_segments{a.d_offsets, cur_frontier, count}, loop_to_child::no_pre_op{},
        visit_op{a.d_neighbors, a.d_levels, level + 1, next_frontier, &a.d_counters[1 - cur]},
        a.threshold, a.stream, sites::bfs_neighbors, a.child_block_threads);
  }
};

/// The level loop on the device: read the frontier size, launch the level, and tail-launch the
/// next step, which runs once this grid and the level's grids have finished. When a launch is
/// refused, the loop is handed back to the host with the level to resume at.
///
/// Only thread 0 of block 0 works (the others return): the first step is a one-block grid
/// launched from the host with a launch_context (driver_root_kernel), each later step the
/// continuation of the one before. Precondition: d_counters[cur] is the size of frontier `cur`,
/// whose vertices are at level `level` (init_agent makes it so for level 0). When the last step
/// has finished, [2] holds the levels expanded on the device and, where [3] is 1, [4] and [5] the
/// level and the frontier buffer to resume from on the host.
struct driver_body {
  driver_args a;
  std::uint32_t level;
  std::uint32_t cur;
  __device__ void operator()(const launch_context& self) const {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    const std::uint32_t count = a.d_counters[cur];
    if (count == 0) return;  // done: the last level found nothing
    a.d_counters[1 - cur] = 0;
    const auto grid = static_cast<unsigned int>(
        (std::uint64_t{count} + loop_to_child::block_threads - 1) / loop_to_child::block_threads);
    const launch_result r = launch_child(self, sites::bfs_level, dim3(grid),
                                         dim3(loop_to_child::block_threads),
                                         stream_kind::fire_and_forget,
                                         level_body{a, level, cur, count}, 0u, count);
    if (!r) {
      hand_back(level, cur);
      return;
    }
    a.d_counters[2] = level + 1;  // levels expanded on the device so far
    if (!launch_continuation(self, sites::bfs_driver, dim3(1), dim3(32),
                             driver_body{a, level + 1, 1 - cur})) {
      hand_back(level + 1, 1 - cur);
    }
  }
  __device__ void hand_back(std::uint32_t resume_level, std::uint32_t resume_cur) const {
    a.d_counters[3] = 1;
    a.d_counters[4] = resume_level;
    a.d_counters[5] = resume_cur;
  }
};

}  // namespace
}  // namespace cdpkit::bfs_device
