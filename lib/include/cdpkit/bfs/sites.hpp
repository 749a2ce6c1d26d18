#pragma once
// cdpkit/bfs/sites.hpp — the launch sites of BFS. The ids are part of the profiles: never
// renumber them. Names: "bfs.<what>", registered by lib/src/bfs/sites.cpp (see
// cdpkit/launch/sites.hpp). The neighbour expansion's probes are loop-to-child's.

#include <cdpkit/launch/sites.hpp>

#include <cstdint>

namespace cdpkit::sites {

enum : std::uint16_t {
  bfs_neighbors = 16,  ///< "bfs.neighbors": a child grid over frontier vertices' neighbours
  bfs_level = 17,      ///< "bfs.level": the device driver's grid over one level's frontier
  bfs_driver = 18,     ///< "bfs.driver": the device driver's tail-launched continuation
};

}  // namespace cdpkit::sites

namespace cdpkit::bfs_sites {

/// Register the names of the sites above (idempotent). Done at start-up, and again by
/// bfs_engine, so that the names are known wherever BFS runs.
void register_site_names();

}  // namespace cdpkit::bfs_sites
