#pragma once
// cdpkit/tree/agents/level_sync.cuh — the steps of the level loops: the nodes in the order of
// their levels, each level's children lists expanded as loop-to-child segments (level_segments),
// each child visited and appended to the next level (level_visit_op), and, bottom_up, the levels
// added into their parents afterwards, deepest first (add_level). level_sync (the yardstick
// without CDP) runs them from the host, its expansions by flat_balanced; device_driver
// (agents/device_driver.cuh) runs the same steps from the device.

#include <cdpkit/loop_to_child/agents/common.cuh>
#include <cdpkit/loop_to_child/frontier.cuh>
#include <cdpkit/tree/agents/common.cuh>

#include <cstdint>

namespace cdpkit::tree_device {
namespace {

/// Segment i of a level: the children list of the level's node i.
using level_segments = loop_to_child::id_list_segments;
using loop_to_child::no_pre_op;

/// Child j of a level: visited (top_down: its values from its parent's) and appended to the next
/// level (one atomicAdd per warp). bottom_up adds the levels into their parents afterwards,
/// deepest first (add_level).
struct level_visit_op {
  tree_view t;
  tree_out o;
  std::uint32_t* next;
  std::uint32_t* next_count;
  __device__ void operator()(std::uint32_t, std::uint32_t j) const {
    const std::uint32_t c = t.children[j];
    if (!o.bottom_up) visit(t, o, c);
    loop_to_child::append_to_frontier(next, next_count, c);
  }
};

/// bottom_up, the level loops: node i of a level adds its subtree (complete: the deeper levels
/// were added before) into its parent.
__device__ __forceinline__ void add_level(const tree_view& t, const tree_out& o, const std::uint32_t* nodes,
                                          std::uint32_t count, std::uint32_t i) {
  if (i >= count) return;
  const std::uint32_t v = nodes[i];
  atomicAdd(&o.a[t.parent[v]], o.a[v]);
  atomicAdd(&o.b[t.parent[v]], o.b[v]);
}

/// Threads per block of the add_level grids (from the host and from the device driver).
constexpr unsigned int add_level_threads = 256;

}  // namespace
}  // namespace cdpkit::tree_device
