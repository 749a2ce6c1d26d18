#pragma once
// cdpkit/tree/agents/device_driver.cuh — device_driver: the level loop on the device. A one-thread
// driver step reads the size of the level the previous step expanded into, launches the level's
// grid (loop-to-child's block-aggregated agent over its nodes, site tree.level; the expansion's
// children: tree.children) and tail-launches the next step (tree.driver), which runs once this
// grid and the level's grids are done: no host round trip per level. bottom_up: after the last
// level, one grid per level adds it into its parents, deepest first, each tail-launching the level
// above (tree.combine). A refused launch hands the rest back to the host (counters [3..7],
// agents/common.cuh).

#include <cdpkit/launch.cuh>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/loop_to_child/agents/block_aggregated.cuh>
#include <cdpkit/tree/agents/common.cuh>
#include <cdpkit/tree/agents/level_sync.cuh>

#include <cstdint>

namespace cdpkit::tree_device {
namespace {

/// What every driver step and level grid reads: the tree, the outputs, the order of the nodes by
/// level, the counters, the scratch of the block-aggregated agent and the level begins, and the
/// expansion's launch parameters.
struct driver_args {
  tree_view t;
  tree_out o;
  std::uint32_t* order;
  std::uint32_t* counters;
  std::uint32_t* scan;         ///< the level's block scans (block_aggregated_agent's d_scan), n entries
  std::uint32_t* level_begin;  ///< level k's first position in the order (k = 0 .. levels), n + 1 entries
  std::uint32_t threshold;
  unsigned int child_block_threads;
};

/// bottom_up on the device: level `level` (>= 1) adds its nodes into their parents, then its
/// first thread tail-launches the level above, which runs once this grid is done. A refused
/// launch leaves the rest to the host (counters[7]).
struct driver_add_body {
  driver_args a;
  std::uint32_t level;
  __device__ void operator()(const launch_context& self) const {
    const std::uint32_t b = a.level_begin[level];
    add_level(a.t, a.o, a.order + b, a.level_begin[level + 1] - b, blockIdx.x * blockDim.x + threadIdx.x);
    if (threadIdx.x == 0 && blockIdx.x == 0 && level > 1) launch_above(self, a, level - 1, true);
  }
  /// Launch the addition of level `above` (>= 1): as this grid's continuation, or (from the
  /// driver's last step) as its child.
  static __device__ void launch_above(const launch_context& self, const driver_args& a, std::uint32_t above,
                                      bool continuation) {
    const std::uint32_t count = a.level_begin[above + 1] - a.level_begin[above];
    const dim3 grid(static_cast<unsigned int>((std::uint64_t{count} + add_level_threads - 1) / add_level_threads));
    const driver_add_body body{a, above};
    const launch_result r =
        continuation ? launch_continuation(self, sites::tree_combine, grid, dim3(add_level_threads), body)
                     : launch_child(self, sites::tree_combine, grid, dim3(add_level_threads),
                                    stream_kind::fire_and_forget, body, 0u, count);
    if (!r) a.counters[7] = above;
  }
};

/// One level's expansion, launched by the driver: the block-aggregated agent over the level's
/// nodes (blocks of loop_to_child::block_threads). Its scans live until the next step, which the
/// level's grid and its children finish before (a tail launch), so every level uses a.scan.
struct driver_level_body {
  driver_args a;
  std::uint32_t begin;  ///< the level's first position in the order
  std::uint32_t count;
  __device__ void operator()(const launch_context& self) const {
    __shared__ loop_to_child::block_aggregated_storage storage;
    loop_to_child::block_aggregated_agent(
        storage, self, level_segments{a.t.off, a.order + begin, count}, no_pre_op{},
        level_visit_op{a.t, a.o, a.order + begin + count, &a.counters[0]}, a.threshold,
        stream_kind::fire_and_forget, a.scan, a.child_block_threads, sites::tree_children);
  }
};

/// The level loop on the device: launch the level's grid and tail-launch the next step, which
/// runs once this grid and the level's grids are done. A refused launch hands the loop back to
/// the host, with the level to resume at. bottom_up: after the last level, the additions run
/// from the deepest level up (driver_add_body), a grid per level.
struct driver_body {
  driver_args a;
  std::uint32_t level;
  std::uint32_t begin;
  std::uint32_t count;
  __device__ void operator()(const launch_context& self) const {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    std::uint32_t b = begin, c = count;
    a.level_begin[level] = b;  // for the empty level past the last: the end
    if (level > 0) {  // the level the previous step expanded into
      c = a.counters[0];
      if (c == 0) {  // done: levels 0 .. level - 1
        if (a.o.bottom_up && level > 1) driver_add_body::launch_above(self, a, level - 1, false);
        return;
      }
    }
    a.counters[0] = 0;
    const auto grid = static_cast<unsigned int>((std::uint64_t{c} + loop_to_child::block_threads - 1) /
                                                loop_to_child::block_threads);
    if (!launch_child(self, sites::tree_level, dim3(grid), dim3(loop_to_child::block_threads),
                      stream_kind::fire_and_forget, driver_level_body{a, b, c}, 0u, c)) {
      hand_back(level, b, c);
      return;
    }
    a.counters[2] = level + 1;
    if (!launch_continuation(self, sites::tree_driver, dim3(1), dim3(32), driver_body{a, level + 1, b + c, 0})) {
      // the level's grid runs; the host resumes after it, from the level it fills
      a.counters[3] = 2;
      a.counters[4] = level + 1;
      a.counters[5] = b + c;
    }
  }
  __device__ void hand_back(std::uint32_t resume_level, std::uint32_t b, std::uint32_t c) const {
    a.counters[3] = 1;
    a.counters[4] = resume_level;
    a.counters[5] = b;
    a.counters[6] = c;
  }
};

}  // namespace
}  // namespace cdpkit::tree_device
