// The launch sites' table: the library's ids, names and roles as profiles hold them, and the
// names of registered user sites.

#include <doctest/doctest.h>

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/launch/sites.hpp>

#include <cstdint>
#include <iterator>
#include <string>

TEST_CASE("site names cover library sites and registered user sites") {
  CHECK(cdpkit::sites::site_name(cdpkit::sites::l2c_thresholded) == "loop_to_child.thresholded");
  CHECK(cdpkit::sites::site_name(40) == "site.40");
  cdpkit::sites::set_site_name(40, "my.kernel");
  CHECK(cdpkit::sites::site_name(40) == "my.kernel");
  CHECK_THROWS_AS(cdpkit::sites::set_site_name(3, "taken"), cdpkit::input_error);
  CHECK_THROWS_AS(cdpkit::sites::set_site_name(64, "too far"), cdpkit::input_error);
}

TEST_CASE("the library's site table keeps the ids, names and roles of the profiles") {
  namespace sites = cdpkit::sites;
  // the numeric ids are in profiles: they never change, and every library id is listed here
  struct expected {
    std::uint16_t id;
    int value;
    const char* name;
    bool child_probe;
  };
  const expected library[] = {
      {sites::root, 0, "root", false},
      {sites::l2c_child_per_thread, 1, "loop_to_child.child_per_thread", false},
      {sites::l2c_thresholded, 2, "loop_to_child.thresholded", false},
      {sites::l2c_warp_aggregated, 3, "loop_to_child.warp_aggregated", false},
      {sites::l2c_block_aggregated, 4, "loop_to_child.block_aggregated", false},
      {sites::quadtree_nodes, 5, "quadtree.nodes", false},
      {sites::quadtree_wide, 6, "quadtree.wide", false},
      {sites::quadtree_wide_scatter, 7, "quadtree.wide_scatter", false},
      {sites::l2c_serial_items, 8, "loop_to_child.serial_items", false},
      {sites::l2c_inline_items, 9, "loop_to_child.inline_items", false},
      {sites::l2c_child_items, 10, "loop_to_child.child_items", true},
      {sites::l2c_cooperative_items, 11, "loop_to_child.cooperative_items", false},
      {sites::l2c_flat_items, 12, "loop_to_child.flat_items", false},
      {sites::tree_children, 13, "tree.children", false},
      {sites::tree_level, 14, "tree.level", false},
      {sites::tree_driver, 15, "tree.driver", false},
      {sites::bfs_neighbors, 16, "bfs.neighbors", false},
      {sites::bfs_level, 17, "bfs.level", false},
      {sites::bfs_driver, 18, "bfs.driver", false},
      {sites::tree_walk, 19, "tree.walk", false},
      {sites::qs_simple_side, 20, "quicksort.simple_side", false},
      {sites::qs_two_stream_side, 21, "quicksort.two_stream_side", false},
      {sites::qs_two_stream_leaf, 22, "quicksort.two_stream_leaf", false},
      {sites::qs_fast_range, 23, "quicksort.fast_range", false},
      {sites::qs_fast_scatter, 24, "quicksort.fast_scatter", false},
      {sites::qs_fast_small, 25, "quicksort.fast_small", false},
      {sites::qs_fast_copy, 26, "quicksort.fast_copy", false},
      {sites::tree_child_nodes, 27, "tree.child_nodes", true},
      {sites::qs_partition_probe, 28, "quicksort.partition", true},
      {sites::qs_serial_probe, 29, "quicksort.serial_partition", true},
      {sites::quadtree_level, 30, "quadtree.level", false},
      {sites::tree_combine, 31, "tree.combine", false},
      {sites::qs_radix_range, 32, "quicksort.radix_range", false},
      {sites::qs_radix_scatter, 33, "quicksort.radix_scatter", false},
      {sites::qs_radix_copy, 34, "quicksort.radix_copy", false},
      {sites::quadtree_radix, 35, "quadtree.radix", false},
      {sites::quadtree_radix_scatter, 36, "quadtree.radix_scatter", false},
  };
  CHECK(sites::library_site_count == std::size(library));
  for (const expected& e : library) {
    CAPTURE(e.name);
    CHECK(e.id == e.value);
    CHECK(sites::site_name(e.id) == e.name);
    CHECK(sites::is_child_probe_site(e.id) == e.child_probe);
  }
  CHECK(sites::first_user_site == 40);
  CHECK(sites::next_library_site <= sites::first_user_site);
  CHECK(sites::site_name(63) == "site.63");  // a user id no one named
  const auto beyond = static_cast<std::uint16_t>(cdpkit::trace_limits::max_sites);  // no site has it
  CHECK(sites::site_name(beyond) == "site." + std::to_string(beyond));
  CHECK_FALSE(sites::is_child_probe_site(sites::first_user_site));
  CHECK_FALSE(sites::is_child_probe_site(beyond));
}
