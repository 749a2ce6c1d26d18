// Tree traversals on the GPU: every variant, top-down and bottom-up, equals the CPU reference on
// generated trees of every shape (power-law, uniform, k-ary, a path of 10^5 nodes, a
// caterpillar), on a parent array numbered out of breadth-first order and on a real path list;
// the recursion is capped and goes on iteratively past the cap; the device driver keeps the
// level loop on the device and hands it back when refused.

#include <doctest/doctest.h>

#include "support/gpu.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/tree.hpp>
#include <cdpkit/tree_traversal.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace {

using cdpkit::tree;
using cdpkit::tree_variant;

/// Nodes whose values differ from the reference.
template <class A, class B>
std::uint64_t mismatches(const A& got, const B& expected) {
  if (got.size() != expected.size()) return ~0ull;
  std::uint64_t bad = 0;
  for (std::size_t k = 0; k < got.size(); ++k) bad += got[k] != expected[k];
  return bad;
}

/// Every variant, both operations, equals the references on `t`.
void check_all_variants(const tree& t, const std::string& name, cdpkit::launch_runtime& rt = cdpkit::default_runtime()) {
  const auto td = cdpkit::tree_top_down_reference(t);
  const auto bu = cdpkit::tree_bottom_up_reference(t);
  const std::uint32_t levels = static_cast<std::uint32_t>(cdpkit::tree_level_sizes(t).size());
  const cdpkit::device_tree dt(t);
  cdpkit::tree_engine engine(dt);
  for (const tree_variant v : cdpkit::all_tree_variants()) {
    for (const cdpkit::tree_op op : {cdpkit::tree_op::top_down, cdpkit::tree_op::bottom_up}) {
      CAPTURE(name);
      CAPTURE(std::string(cdpkit::to_string(v)));
      CAPTURE(std::string(cdpkit::to_string(op)));
      cdpkit::tree_options o;
      o.variant = v;
      o.op = op;
      const cdpkit::tree_stats stats = engine.run(o, rt);
      if (op == cdpkit::tree_op::top_down) {
        const auto got = engine.top_down();
        CHECK(mismatches(got.depth, td.depth) == 0u);
        CHECK(mismatches(got.path_sum, td.path_sum) == 0u);
        CHECK(engine.bottom_up().size.empty());  // the other pair is not from this run
      } else {
        const auto got = engine.bottom_up();
        CHECK(mismatches(got.size, bu.size) == 0u);
        CHECK(mismatches(got.sum, bu.sum) == 0u);
      }
      if (v == tree_variant::level_sync || v == tree_variant::device_driver) CHECK(stats.levels == levels);
      CHECK(stats.pool_refusals == 0u);
    }
  }
}

}  // namespace

TEST_CASE("every tree variant equals the CPU reference on generated trees, top-down and bottom-up" * CDPKIT_GPU_CASE) {
  check_all_variants(cdpkit::make_random_tree(1u << 16, cdpkit::fanout_kind::power_law, 4.0, 5), "random:2^16:powerlaw");
  check_all_variants(cdpkit::make_random_tree(50000, cdpkit::fanout_kind::uniform, 3.0, 2), "random:50000:uniform:3");
  check_all_variants(cdpkit::make_random_tree(50000, cdpkit::fanout_kind::geometric, 8.0, 3), "random:50000:geometric:8");
  check_all_variants(cdpkit::make_kary_tree(4, 7), "kary:4:7");
  check_all_variants(cdpkit::make_kary_tree(2000, 1), "kary:2000:1 (a star)");
  check_all_variants(cdpkit::make_caterpillar_tree(20001), "caterpillar:20001");
  check_all_variants(cdpkit::make_path_tree(1), "path:1 (the root alone)");
}

TEST_CASE("the traversals are exact on a path of 10^5 nodes: the recursion stops at the cap and walks on" * CDPKIT_GPU_CASE) {
  const tree t = cdpkit::make_path_tree(100000);
  check_all_variants(t, "path:100000");
  // recursive_naive asks for a child per node: the launch layer refuses past its depth cap, and
  // the thread that was refused walks the rest of the path itself
  const cdpkit::device_tree dt(t);
  cdpkit::tree_engine engine(dt);
  auto& rt = cdpkit::default_runtime();
  cdpkit::profiling::trace_session session(rt);
  cdpkit::tree_options o;
  o.variant = tree_variant::recursive_naive;
  (void)engine.run(o, rt);
  const auto trace = session.collect();
  const auto& site = trace.sites[cdpkit::sites::tree_children];
  const int cap = rt.config().max_depth;
  CHECK(site.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)] == static_cast<std::uint64_t>(cap));
  CHECK(site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_depth)] == 1u);
  CHECK(site.max_depth == static_cast<std::uint32_t>(cap));
  CHECK(engine.top_down().depth.back() == 99999u);
}

TEST_CASE("the traversals follow a parent array numbered out of breadth-first order" * CDPKIT_GPU_CASE) {
  // a random tree relabelled by a fixed permutation: children lists of consecutive nodes lie
  // anywhere in the children array, and the root is not node 0
  const tree base = cdpkit::make_random_tree(30000, cdpkit::fanout_kind::power_law, 4.0, 11);
  const std::uint32_t n = base.num_nodes();
  std::vector<std::uint32_t> label(n);
  for (std::uint32_t v = 0; v < n; ++v) label[v] = static_cast<std::uint32_t>((std::uint64_t{v} * 7919u + 13u) % n);
  std::vector<std::uint32_t> parent(n);
  std::vector<std::uint64_t> value(n);
  for (std::uint32_t v = 0; v < n; ++v) {
    parent[label[v]] = base.parent[v] == cdpkit::tree_no_parent ? cdpkit::tree_no_parent : label[base.parent[v]];
    value[label[v]] = base.value[v];
  }
  const tree t = cdpkit::tree_from_parents(parent, value, "relabelled");
  CHECK(t.root == label[0]);
  check_all_variants(t, "relabelled power-law tree");
}

TEST_CASE("the traversals equal the CPU reference on a real path list" * CDPKIT_GPU_CASE) {
  // the sources of this project, listed with sizes (find -printf '%s\t%p\n')
  const std::filesystem::path root = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  std::string listing;
  for (auto it = std::filesystem::recursive_directory_iterator(root); it != std::filesystem::recursive_directory_iterator();
       ++it) {
    const std::string leaf = it->path().filename().string();
    if (it->is_directory() && (leaf == "build" || leaf == ".git" || leaf == ".deps")) {
      it.disable_recursion_pending();  // build outputs and tools: not the sources
      continue;
    }
    if (!it->is_regular_file() && !it->is_directory()) continue;
    listing += std::to_string(it->is_regular_file() ? it->file_size() : 0) + "\t" + it->path().string() + "\n";
  }
  const tree t = cdpkit::parse_path_list(listing, "listing");
  REQUIRE(t.num_nodes() > 100);
  check_all_variants(t, "the project's files");
}

TEST_CASE("the tree device driver keeps the level loop on the device, and hands it back when refused" * CDPKIT_GPU_CASE) {
  const tree t = cdpkit::make_kary_tree(3, 9);
  const auto td = cdpkit::tree_top_down_reference(t);
  const auto bu = cdpkit::tree_bottom_up_reference(t);
  for (const cdpkit::tree_op op : {cdpkit::tree_op::top_down, cdpkit::tree_op::bottom_up}) {
    CAPTURE(std::string(cdpkit::to_string(op)));
    const cdpkit::device_tree dt(t);
    cdpkit::tree_engine engine(dt);
    auto& rt = cdpkit::default_runtime();
    cdpkit::profiling::trace_session session(rt);
    cdpkit::tree_options o;
    o.variant = tree_variant::device_driver;
    o.op = op;
    const auto stats = engine.run(o, rt);
    if (op == cdpkit::tree_op::top_down) CHECK(engine.top_down().depth == td.depth);
    else CHECK(engine.bottom_up().size == bu.size);
    CHECK(stats.levels == 10u);
    CHECK(stats.device_levels == 10u);
    CHECK_FALSE(stats.driver_handed_back);
    const auto trace = session.collect();
    CHECK(trace.sites[cdpkit::sites::tree_level].outcomes[0] == 10u);
    CHECK(trace.sites[cdpkit::sites::tree_driver].outcomes[0] == 10u);  // the last finds nothing
    CHECK(trace.sites[cdpkit::sites::tree_driver].max_depth == 0u);
    // bottom_up: levels 9 .. 1 added on the device, a grid each, the first the last step's child
    // and each next one its predecessor's tail launch
    CHECK(trace.sites[cdpkit::sites::tree_combine].outcomes[0] == (op == cdpkit::tree_op::bottom_up ? 9u : 0u));
  }
  for (const cdpkit::tree_op op : {cdpkit::tree_op::top_down, cdpkit::tree_op::bottom_up}) {
    CAPTURE(std::string(cdpkit::to_string(op)));
    // a budget of one child: the first level's grid takes it, so the continuation is refused and
    // the host finishes the levels (and adds them all, bottom_up)
    cdpkit::launch_config config;
    config.pending_budget = 1;
    cdpkit::launch_runtime rt(config);
    const cdpkit::device_tree dt(t);
    cdpkit::tree_engine engine(dt);
    cdpkit::tree_options o;
    o.variant = tree_variant::device_driver;
    o.op = op;
    o.threshold = 1000;
    const auto stats = engine.run(o, rt);
    if (op == cdpkit::tree_op::top_down) CHECK(engine.top_down().depth == td.depth);
    else {
      CHECK(engine.bottom_up().size == bu.size);
      CHECK(engine.bottom_up().sum == bu.sum);
    }
    CHECK(stats.driver_handed_back);
    CHECK(stats.device_levels == 1u);
    CHECK(stats.levels == 10u);
  }
}

TEST_CASE("the tree device driver hands each refused launch to the host and stays exact: a level's grid, "
          "the next step, an addition" * CDPKIT_GPU_CASE) {
  const tree t = cdpkit::make_kary_tree(3, 9);  // 10 levels
  const auto td = cdpkit::tree_top_down_reference(t);
  const auto bu = cdpkit::tree_bottom_up_reference(t);
  const cdpkit::device_tree dt(t);
  struct refusal {
    const char* what;
    std::uint64_t refused_sites;
    int max_depth;
    bool handed_back;
    std::uint32_t device_levels;
  };
  const refusal refusals[] = {
      {"the first level's grid (tree.level refused)", 1ull << cdpkit::sites::tree_level, 24, true, 0},
      {"the first level's grid (depth cap 0)", 0, 0, true, 0},
      {"the next step (tree.driver refused)", 1ull << cdpkit::sites::tree_driver, 24, true, 1},
      {"the deepest level's addition (tree.combine refused)", 1ull << cdpkit::sites::tree_combine, 24, false, 10},
  };
  for (const refusal& r : refusals) {
    for (const cdpkit::tree_op op : {cdpkit::tree_op::top_down, cdpkit::tree_op::bottom_up}) {
      CAPTURE(r.what);
      CAPTURE(std::string(cdpkit::to_string(op)));
      cdpkit::launch_config config;
      config.refused_sites = r.refused_sites;
      config.max_depth = r.max_depth;
      cdpkit::launch_runtime rt(config);
      cdpkit::tree_engine engine(dt);
      cdpkit::tree_options o;
      o.op = op;
      // a recursion first, on the same engine: the driver's level begins share its pool's words
      o.variant = tree_variant::recursive_warp;
      o.threshold = 0;
      (void)engine.run(o, rt);
      o.variant = tree_variant::device_driver;
      o.threshold.reset();
      cdpkit::profiling::trace_session session(rt);
      const auto stats = engine.run(o, rt);
      if (op == cdpkit::tree_op::top_down) {
        CHECK(engine.top_down().depth == td.depth);
        CHECK(engine.top_down().path_sum == td.path_sum);
      } else {
        CHECK(engine.bottom_up().size == bu.size);
        CHECK(engine.bottom_up().sum == bu.sum);
      }
      CHECK(stats.levels == 10u);
      CHECK(stats.driver_handed_back == r.handed_back);
      CHECK(stats.device_levels == r.device_levels);
      // bottom_up: the host adds every level below the root after a hand-back, and after a refused
      // addition that level (the deepest below the root, 9) and those above it
      CHECK(stats.host_added_levels == (op == cdpkit::tree_op::bottom_up ? 9u : 0u));
      const auto trace = session.collect();
      const auto refused = [&](std::uint16_t site) {
        return trace.sites[site].outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_budget)] +
               trace.sites[site].outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_depth)];
      };
      const std::uint64_t refused_here = refused(cdpkit::sites::tree_level) + refused(cdpkit::sites::tree_driver) +
                                         refused(cdpkit::sites::tree_combine);
      // one refusal, the one asked for (top_down never asks for an addition)
      const bool combine = r.refused_sites == (1ull << cdpkit::sites::tree_combine);
      CHECK(refused_here == (combine && op == cdpkit::tree_op::top_down ? 0u : 1u));
    }
  }
}

TEST_CASE("the tree device driver launches a child grid for a block whose nodes have more children than T, and stays exact" * CDPKIT_GPU_CASE) {
  const tree t = cdpkit::make_random_tree(1u << 16, cdpkit::fanout_kind::power_law, 4.0, 9);
  const auto td = cdpkit::tree_top_down_reference(t);
  const auto bu = cdpkit::tree_bottom_up_reference(t);
  const cdpkit::device_tree dt(t);
  cdpkit::tree_engine engine(dt);
  auto& rt = cdpkit::default_runtime();
  for (const std::uint32_t threshold : {0u, 16u, 4096u, 1u << 20}) {
    for (const cdpkit::tree_op op : {cdpkit::tree_op::top_down, cdpkit::tree_op::bottom_up}) {
      CAPTURE(threshold);
      CAPTURE(std::string(cdpkit::to_string(op)));
      cdpkit::profiling::trace_session session(rt);
      cdpkit::tree_options o;
      o.variant = tree_variant::device_driver;
      o.op = op;
      o.threshold = threshold;
      const auto stats = engine.run(o, rt);
      CHECK_FALSE(stats.driver_handed_back);
      if (op == cdpkit::tree_op::top_down) {
        CHECK(mismatches(engine.top_down().depth, td.depth) == 0u);
        CHECK(mismatches(engine.top_down().path_sum, td.path_sum) == 0u);
      } else {
        CHECK(mismatches(engine.bottom_up().size, bu.size) == 0u);
        CHECK(mismatches(engine.bottom_up().sum, bu.sum) == 0u);
      }
      const auto trace = session.collect();
      const std::uint64_t children = trace.sites[cdpkit::sites::tree_children].outcomes[0];
      // a block's nodes have at most 2^16 children each: above T = 2^20 nothing is launched,
      // at T = 0 every block with children launches
      if (threshold == (1u << 20)) CHECK(children == 0u);
      if (threshold <= 16u) CHECK(children > 0u);
    }
  }
}

TEST_CASE("every recursive variant stays exact when the pending budget refuses most launches" * CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.pending_budget = 4;
  cdpkit::launch_runtime rt(config);
  check_all_variants(cdpkit::make_random_tree(40000, cdpkit::fanout_kind::power_law, 4.0, 21), "power-law, budget 4", rt);
}

TEST_CASE("tree options are checked and variants and operations are named") {
  CHECK(cdpkit::parse_tree_variant("recursive_warp") == tree_variant::recursive_warp);
  CHECK_THROWS_WITH_AS(cdpkit::parse_tree_variant("dfs"),
                       "unknown tree variant 'dfs' (expected one of level_sync, recursive_naive, recursive_threshold, "
                       "recursive_warp, recursive_block, device_driver)",
                       cdpkit::input_error);
  for (const tree_variant v : cdpkit::all_tree_variants()) CHECK(cdpkit::parse_tree_variant(cdpkit::to_string(v)) == v);
  CHECK(cdpkit::parse_tree_op("depth") == cdpkit::tree_op::top_down);
  CHECK(cdpkit::parse_tree_op("bottom_up") == cdpkit::tree_op::bottom_up);
  CHECK_THROWS_WITH_AS(cdpkit::parse_tree_op("sideways"), "unknown tree operation 'sideways' (expected depth or subtree)",
                       cdpkit::input_error);
  cdpkit::tree_options o;
  o.variant = tree_variant::recursive_naive;
  o.threshold = 99;
  CHECK(o.effective_threshold() == 0u);
  o.variant = tree_variant::recursive_block;
  CHECK(o.effective_threshold() == 99u);
  o.threshold.reset();
  CHECK(o.effective_threshold() == cdpkit::default_tree_threshold(tree_variant::recursive_block));
}

TEST_CASE("a tree engine refuses a child block size that is not a multiple of 32" * CDPKIT_GPU_CASE) {
  const cdpkit::device_tree dt(cdpkit::make_kary_tree(2, 3));
  cdpkit::tree_engine engine(dt);
  cdpkit::tree_options o;
  o.child_block_threads = 100;
  CHECK_THROWS_WITH_AS(engine.run(o), "tree_options::child_block_threads must be a multiple of 32 in [32, 1024], got 100",
                       cdpkit::input_error);
}
