#pragma once
// cdpkit/launch/site_ids.hpp — every site id of the library, with its name and role, in one table.
// A site is a place in the code that launches children or probes divergence; the trace aggregates
// per site, and a profile names each site by its id and its name.
//
// The rules of the table:
//  - An id never changes and is never reused: it is part of every profile written. A site the code
//    no longer uses keeps its id and name (quicksort.fast_small), so that older profiles still read.
//  - Ids below first_user_site are the library's; users number their own sites from
//    first_user_site and name them with set_site_name (cdpkit/launch/sites.hpp).
//  - Names are "<area>.<what>", unique; site_name answers them (there is nothing to register).
//  - A new library site takes next_library_site: it goes at the end of the enum and of
//    library_sites, below first_user_site. Once that range is full, the boundary moves up
//    (trace_limits::max_sites is the limit of both ranges: 64, one bit each in a launch
//    config's refusal mask), and user sites, numbered from first_user_site, get new numbers
//    in the profiles.
// The static_asserts below keep the table in id order, inside the library's range and named.

#include <cdpkit/launch/types.hpp>

#include <cstddef>
#include <cstdint>

namespace cdpkit::sites {

/// Every library site id, in id order. The comment gives each one's name and where it is used;
/// the areas that build on loop-to-child (bfs, tree level_sync, spmv, bezier) use its probes
/// and name their own launch sites through loop_policy::launch_site.
enum : std::uint16_t {
  root = 0,  ///< "root": the host-launched grid
  // loop-to-child launches (the policy's default site; an algorithm built on it names its own)
  l2c_child_per_thread = 1,  ///< "loop_to_child.child_per_thread"
  l2c_thresholded = 2,       ///< "loop_to_child.thresholded"
  l2c_warp_aggregated = 3,   ///< "loop_to_child.warp_aggregated"
  l2c_block_aggregated = 4,  ///< "loop_to_child.block_aggregated"
  // quadtree build launches
  quadtree_nodes = 5,         ///< "quadtree.nodes": a child grid refining quadrants, one block each
  quadtree_wide = 6,          ///< "quadtree.wide": the count grid of a node too wide for one block
  quadtree_wide_scatter = 7,  ///< "quadtree.wide_scatter": its scatter step, after the counts
  // loop-to-child probes of the item loops
  l2c_serial_items = 8,        ///< "loop_to_child.serial_items": serial_loop's per-thread loops
  l2c_inline_items = 9,        ///< "loop_to_child.inline_items": loops of segments not launched
  l2c_child_items = 10,        ///< "loop_to_child.child_items": inside the child grids
  l2c_cooperative_items = 11,  ///< "loop_to_child.cooperative_items": warp / block loops
  l2c_flat_items = 12,         ///< "loop_to_child.flat_items": flat_balanced's item grid
  // tree traversal launches
  tree_children = 13,  ///< "tree.children": a child grid over one node's or one group's children
  tree_level = 14,     ///< "tree.level": the device driver's grid over one level
  tree_driver = 15,    ///< "tree.driver": the device driver's tail-launched continuation
  // BFS launches (the neighbour expansion's probes are loop-to-child's)
  bfs_neighbors = 16,  ///< "bfs.neighbors": a child grid over frontier vertices' neighbours
  bfs_level = 17,      ///< "bfs.level": the device driver's grid over one level's frontier
  bfs_driver = 18,     ///< "bfs.driver": the device driver's tail-launched continuation
  // tree traversal probe
  tree_walk = 19,  ///< "tree.walk": the iterative walks of subtrees not launched
  // quicksort launches
  qs_simple_side = 20,      ///< "quicksort.simple_side": simple's one-thread child per side
  qs_two_stream_side = 21,  ///< "quicksort.two_stream_side": two_stream's partition grid per side
  qs_two_stream_leaf = 22,  ///< "quicksort.two_stream_leaf": two_stream's one-block sort of a small side
  qs_fast_range = 23,       ///< "quicksort.fast_range": fast's partition grid for a large bucket
  qs_fast_scatter = 24,     ///< "quicksort.fast_scatter": the scatter step after a range's counts
  /// "quicksort.fast_small": fast's small ranges. No longer a launch site: the drain grid is
  /// launched by the host after the recursion (the id stays: older profiles name it)
  qs_fast_small = 25,
  qs_fast_copy = 26,  ///< "quicksort.fast_copy": a grid copying a large run of equal keys
  // tree traversal probe inside its child grids
  tree_child_nodes = 27,  ///< "tree.child_nodes": one step per node
  // quicksort probes inside its child grids
  qs_partition_probe = 28,  ///< "quicksort.partition": the classification loop of a partition
  qs_serial_probe = 29,     ///< "quicksort.serial_partition": simple's one-thread partition loop
  // later launches of the quadtree build and the tree traversals
  quadtree_level = 30,  ///< "quadtree.level": device_driver's count and scatter grids of one level
  tree_combine = 31,    ///< "tree.combine": the device driver's bottom_up, a grid per level adding it into its parents
  // quicksort's radix recursion
  qs_radix_range = 32,    ///< "quicksort.radix_range": radix's digit pass (counts) for a large bucket
  qs_radix_scatter = 33,  ///< "quicksort.radix_scatter": its scatter step, or the count again one digit down
  qs_radix_copy = 34,     ///< "quicksort.radix_copy": a grid copying a large run of equal keys home
  // the quadtree's radix recursion
  quadtree_radix = 35,          ///< "quadtree.radix": the count grid of a node's digit pass (k levels)
  quadtree_radix_scatter = 36,  ///< "quadtree.radix_scatter": its scatter step, after the counts

  first_user_site = 40,  ///< user sites are in [first_user_site, trace_limits::max_sites)
};

/// One row of the library's table: a site id, its name "<area>.<what>", and whether it is a
/// probe inside the child grids its area launches (the reports read such a probe as the
/// children's, not the launcher's; is_child_probe_site answers it).
struct library_site {
  std::uint16_t id;
  const char* name;
  bool child_probe;
};

/// The library's sites, in id order: what site_name and is_child_probe_site answer below
/// first_user_site.
inline constexpr library_site library_sites[] = {
    {root, "root", false},
    {l2c_child_per_thread, "loop_to_child.child_per_thread", false},
    {l2c_thresholded, "loop_to_child.thresholded", false},
    {l2c_warp_aggregated, "loop_to_child.warp_aggregated", false},
    {l2c_block_aggregated, "loop_to_child.block_aggregated", false},
    {quadtree_nodes, "quadtree.nodes", false},
    {quadtree_wide, "quadtree.wide", false},
    {quadtree_wide_scatter, "quadtree.wide_scatter", false},
    {l2c_serial_items, "loop_to_child.serial_items", false},
    {l2c_inline_items, "loop_to_child.inline_items", false},
    {l2c_child_items, "loop_to_child.child_items", true},
    {l2c_cooperative_items, "loop_to_child.cooperative_items", false},
    {l2c_flat_items, "loop_to_child.flat_items", false},
    {tree_children, "tree.children", false},
    {tree_level, "tree.level", false},
    {tree_driver, "tree.driver", false},
    {bfs_neighbors, "bfs.neighbors", false},
    {bfs_level, "bfs.level", false},
    {bfs_driver, "bfs.driver", false},
    {tree_walk, "tree.walk", false},
    {qs_simple_side, "quicksort.simple_side", false},
    {qs_two_stream_side, "quicksort.two_stream_side", false},
    {qs_two_stream_leaf, "quicksort.two_stream_leaf", false},
    {qs_fast_range, "quicksort.fast_range", false},
    {qs_fast_scatter, "quicksort.fast_scatter", false},
    {qs_fast_small, "quicksort.fast_small", false},
    {qs_fast_copy, "quicksort.fast_copy", false},
    {tree_child_nodes, "tree.child_nodes", true},
    {qs_partition_probe, "quicksort.partition", true},
    {qs_serial_probe, "quicksort.serial_partition", true},
    {quadtree_level, "quadtree.level", false},
    {tree_combine, "tree.combine", false},
    {qs_radix_range, "quicksort.radix_range", false},
    {qs_radix_scatter, "quicksort.radix_scatter", false},
    {qs_radix_copy, "quicksort.radix_copy", false},
    {quadtree_radix, "quadtree.radix", false},
    {quadtree_radix_scatter, "quadtree.radix_scatter", false},
};

inline constexpr std::size_t library_site_count = sizeof(library_sites) / sizeof(library_sites[0]);

/// The id a new library site takes: one past the table's last. Equal to first_user_site while
/// the library's range is full (see the rules at the top of this file).
inline constexpr std::uint16_t next_library_site =
    static_cast<std::uint16_t>(library_sites[library_site_count - 1].id + 1);

// The table's invariants: it starts at root, its ids strictly increase (so none is listed twice),
// and every row has a name of its own.
static_assert(
    [] {
      const auto same = [](const char* a, const char* b) {
        while (*a != '\0' && *a == *b) ++a, ++b;
        return *a == *b;
      };
      if (library_sites[0].id != root) return false;
      for (std::size_t k = 0; k < library_site_count; ++k) {
        if (library_sites[k].name == nullptr || library_sites[k].name[0] == '\0') return false;
        if (k > 0 && library_sites[k].id <= library_sites[k - 1].id) return false;
        for (std::size_t j = 0; j < k; ++j)
          if (same(library_sites[j].name, library_sites[k].name)) return false;
      }
      return true;
    }(),
    "library_sites: start at root, list ids in increasing order, give every row its own name");
static_assert(next_library_site <= first_user_site,
              "a library site id reaches into the user range: move first_user_site first");
static_assert(first_user_site < trace_limits::max_sites, "no room left for user sites");

}  // namespace cdpkit::sites
