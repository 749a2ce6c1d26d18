#pragma once
// cdpkit/loop_to_child/sites.hpp — the launch and probe sites of loop-to-child. The ids are part
// of the profiles: never renumber them. Names: "loop_to_child.<what>", registered by
// lib/src/loop_to_child/sites.cpp (see cdpkit/launch/sites.hpp).

#include <cdpkit/launch/sites.hpp>

#include <cstdint>

namespace cdpkit::sites {

enum : std::uint16_t {
  // launches (the policy's default site; an algorithm built on loop-to-child names its own)
  l2c_child_per_thread = 1,   ///< "loop_to_child.child_per_thread"
  l2c_thresholded = 2,        ///< "loop_to_child.thresholded"
  l2c_warp_aggregated = 3,    ///< "loop_to_child.warp_aggregated"
  l2c_block_aggregated = 4,   ///< "loop_to_child.block_aggregated"
  // probes of the item loops
  l2c_serial_items = 8,       ///< "loop_to_child.serial_items": serial_loop's per-thread loops
  l2c_inline_items = 9,       ///< "loop_to_child.inline_items": loops of segments not launched
  l2c_child_items = 10,       ///< "loop_to_child.child_items": inside the child grids
  l2c_cooperative_items = 11, ///< "loop_to_child.cooperative_items": warp / block loops
  l2c_flat_items = 12,        ///< "loop_to_child.flat_items": flat_balanced's item grid
};

}  // namespace cdpkit::sites

namespace cdpkit::loop_to_child {

/// Register the names of the sites above (idempotent). Done at start-up, and again by
/// for_each_segment_async, so that the names are known wherever loop-to-child runs.
void register_site_names();

}  // namespace cdpkit::loop_to_child
