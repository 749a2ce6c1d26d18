#pragma once
// cdpkit/launch/sites.hpp — ids of the library's launch and probe sites. A site is a place in
// the code that launches children or probes divergence; the trace aggregates per site.
// Ids below first_user_site belong to the library; users number their own sites from there.

#include <cdpkit/launch/types.hpp>

#include <cstdint>
#include <string>

namespace cdpkit::sites {

enum : std::uint16_t {
  root = 0,
  // loop_to_child: launches
  l2c_child_per_thread = 1,
  l2c_thresholded = 2,
  l2c_warp_aggregated = 3,
  l2c_block_aggregated = 4,
  // loop_to_child: probes of the item loops
  l2c_serial_items = 8,
  l2c_inline_items = 9,
  l2c_child_items = 10,
  l2c_cooperative_items = 11,
  l2c_flat_items = 12,
  // bfs
  bfs_neighbors = 16,      ///< a child grid over a frontier vertex's neighbours
  bfs_level = 17,          ///< the device driver's grid over one level's frontier
  bfs_driver = 18,         ///< the device driver's tail-launched continuation (next level)
  first_user_site = 32,
};

/// Name of a site for reports, e.g. "loop_to_child.thresholded"; user sites without a name
/// registered through set_site_name are called "site.<id>".
std::string site_name(std::uint16_t id);

/// Give a user site (first_user_site <= id < trace_limits::max_sites) a name for the profile.
/// Throws cdpkit::input_error when the id is out of that range or the name is empty.
void set_site_name(std::uint16_t id, std::string name);

}  // namespace cdpkit::sites
