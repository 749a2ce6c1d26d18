#pragma once
// cdpkit/quadtree/sites.hpp — the launch sites of the quadtree build. The ids are part of the
// profiles: never renumber them. Names: "quadtree.<what>", registered by
// lib/src/quadtree/sites.cpp (see cdpkit/launch/sites.hpp).

#include <cdpkit/launch/sites.hpp>

#include <cstdint>

namespace cdpkit::sites {

enum : std::uint16_t {
  quadtree_nodes = 5,  ///< "quadtree.nodes": a child grid refining quadrants, one block each
  quadtree_wide = 6,   ///< "quadtree.wide": the count grid of a node too wide for one block
  quadtree_wide_scatter = 7,  ///< "quadtree.wide_scatter": its scatter step, after the counts
  quadtree_level = 30,  ///< "quadtree.level": device_driver's count and scatter grids of one level
};

}  // namespace cdpkit::sites

namespace cdpkit::quadtree_sites {

/// Register the names of the sites above (idempotent).
void register_site_names();

}  // namespace cdpkit::quadtree_sites
