#pragma once
// cdpkit/tree/sites.hpp — the launch and probe sites of the tree traversals. The ids are part of
// the profiles: never renumber them. Names: "tree.<what>", registered by lib/src/tree/sites.cpp
// (see cdpkit/launch/sites.hpp). level_sync's expansions are loop-to-child's (flat_balanced) and
// carry its sites and probes; device_driver's use loop-to-child's block-aggregated agent with the
// launch site tree_children.

#include <cdpkit/launch/sites.hpp>

#include <cstdint>

namespace cdpkit::sites {

enum : std::uint16_t {
  tree_children = 13,     ///< "tree.children": a child grid over one node's or one group's children
  tree_level = 14,        ///< "tree.level": the device driver's grid over one level
  tree_driver = 15,       ///< "tree.driver": the device driver's tail-launched continuation
  tree_walk = 19,         ///< "tree.walk": probe of the iterative walks of subtrees not launched
  tree_child_nodes = 27,  ///< "tree.child_nodes": probe inside the child grids, one step per node
  tree_combine = 31,      ///< "tree.combine": the device driver's bottom_up, a grid per level adding it into its parents
};

}  // namespace cdpkit::sites

namespace cdpkit::tree_sites {

/// Register the names of the sites above (idempotent). Done at start-up, and again by
/// tree_engine, so that the names are known wherever the traversals run.
void register_site_names();

}  // namespace cdpkit::tree_sites
