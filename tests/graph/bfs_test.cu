// BFS: every variant equals the CPU reference on generated, special and real graphs; launch
// failures under the pending limit keep levels exact; Graph500-style validation.

#include <doctest/doctest.h>

#include "support/gpu.hpp"

#include <cdpkit/bfs.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/loop_to_child/threshold_rule.hpp>
#include <cdpkit/profiling/trace_session.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace {

cdpkit::csr_graph from_edges(std::uint64_t n, std::vector<std::pair<std::uint32_t, std::uint32_t>> edges) {
  cdpkit::edge_list list;
  list.num_vertices = n;
  list.edges = std::move(edges);
  return cdpkit::build_csr(list);
}

cdpkit::csr_graph star(std::uint32_t leaves) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> e;
  for (std::uint32_t v = 1; v <= leaves; ++v) e.emplace_back(0, v);
  return from_edges(leaves + 1, std::move(e));
}

cdpkit::csr_graph path(std::uint32_t n) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> e;
  for (std::uint32_t v = 0; v + 1 < n; ++v) e.emplace_back(v, v + 1);
  return from_edges(n, std::move(e));
}

/// Every variant from `source` equals the CPU reference.
void check_all_variants(const cdpkit::csr_graph& g, std::uint32_t source, const std::string& name) {
  const auto expected = cdpkit::bfs_reference(g, source);
  cdpkit::device_graph dg(g);
  cdpkit::bfs_engine engine(dg);
  auto& rt = cdpkit::default_runtime();
  for (const auto& v : cdpkit::all_bfs_variants()) {
    CAPTURE(name);
    CAPTURE(std::string(cdpkit::to_string(v)));
    cdpkit::bfs_options o = cdpkit::bfs_options::of(v);
    if (v.variant == cdpkit::bfs_variant::device_driver)
      o.threshold = cdpkit::default_bfs_threshold(g, o, rt.pending_budget());
    const auto stats = engine.run(source, o, rt);
    const auto got = engine.levels();
    std::uint64_t mismatches = 0;
    for (std::size_t k = 0; k < got.size(); ++k) mismatches += got[k] != expected[k];
    CHECK(mismatches == 0u);
    std::uint32_t levels = 0;
    for (auto l : expected) if (l != cdpkit::bfs_unreached) levels = std::max(levels, l + 1);
    CHECK(stats.num_levels == levels);
    // one threshold per expanded level for the variants with child grids, none for the others
    const bool cdp = v.variant != cdpkit::bfs_variant::serial_loop &&
                     v.variant != cdpkit::bfs_variant::flat_balanced;
    CHECK(stats.level_thresholds.size() == (cdp ? stats.num_levels : 0u));
    CHECK(stats.threshold_auto == (cdp && !o.threshold && v.variant != cdpkit::bfs_variant::child_per_thread));
    for (const auto t : stats.level_thresholds) {
      if (v.variant == cdpkit::bfs_variant::child_per_thread) CHECK(t == 0u);
      if (o.threshold) CHECK(t == *o.threshold);
    }
  }
}

const std::filesystem::path shared_graphs = CDPKIT_SHARED_DATA_DIR "/graphs";

}  // namespace

TEST_CASE("every BFS variant equals the CPU reference on generated graphs" * CDPKIT_GPU_CASE) {
  check_all_variants(cdpkit::load_graph("rmat:10"), 0, "rmat:10");
  const auto r14 = cdpkit::load_graph("rmat:14", {}, 3);
  check_all_variants(r14, r14.highest_degree_vertex(), "rmat:14 from the hub");
  check_all_variants(cdpkit::load_graph("grid:64"), 0, "grid:64");
  check_all_variants(cdpkit::load_graph("uniform:5000:20000"), 17, "uniform:5000:20000");
}

TEST_CASE("every BFS variant equals the CPU reference on special graphs" * CDPKIT_GPU_CASE) {
  check_all_variants(from_edges(1, {}), 0, "a single vertex");
  check_all_variants(from_edges(6, {{0, 1}, {1, 2}, {3, 4}}), 4, "two components");
  check_all_variants(from_edges(6, {{0, 1}, {1, 2}, {3, 4}}), 5, "an isolated source");
  check_all_variants(star(100000), 0, "a star from its hub");
  check_all_variants(star(100000), 7, "a star from a leaf");
  check_all_variants(path(3000), 0, "a path of 3000 vertices");
}

// Skipped without a GPU or without the shared data (one decorator: a second skip would override).
TEST_CASE("every BFS variant equals the CPU reference on the shared real graphs" *
          doctest::skip(!cdpkit_test::gpu_available() ||
                        !cdpkit_test::input_present(shared_graphs / "facebook_combined.txt"))) {
  for (const char* file : {"facebook_combined.txt", "ca-GrQc.txt", "USpowerGrid.txt", "p2p-Gnutella08.txt"}) {
    const auto g = cdpkit::load_graph((shared_graphs / file).string());
    std::uint32_t source = 0;
    while (source + 1 < g.num_vertices && g.degree(source) == 0) ++source;
    check_all_variants(g, source, file);
  }
}

TEST_CASE("BFS rejects a source outside the graph" * CDPKIT_GPU_CASE) {
  const auto g = from_edges(0, {});
  cdpkit::device_graph dg(g);
  CHECK_THROWS_WITH_AS(cdpkit::bfs(dg, 0), doctest::Contains("source 0 is not a vertex"),
                       cdpkit::input_error);
  const auto p = path(10);
  cdpkit::device_graph dp(p);
  CHECK_THROWS_AS(cdpkit::bfs(dp, 10), cdpkit::input_error);
}

TEST_CASE("child_per_thread keeps exact levels when the frontier exceeds the pending limit" * CDPKIT_GPU_CASE) {
  const auto g = cdpkit::load_graph("rmat:16", {}, 9);
  const std::uint32_t hub = g.highest_degree_vertex();
  const auto expected = cdpkit::bfs_reference(g, hub);
  cdpkit::device_graph dg(g);
  cdpkit::bfs_engine engine(dg);
  auto& rt = cdpkit::default_runtime();
  cdpkit::profiling::trace_session session(rt);
  cdpkit::bfs_options o;
  o.variant = cdpkit::bfs_variant::child_per_thread;  // the lecture's code
  engine.run(hub, o, rt);
  CHECK(engine.levels() == expected);
  const auto trace = session.collect();
  const auto& site = trace.sites[cdpkit::sites::bfs_neighbors];
  CHECK(site.requests > 2048u);  // one request per frontier vertex with neighbours
  CHECK(cdpkit::profiling::summarize(trace).fallbacks > 0u);
  CHECK(site.stream_launches[static_cast<int>(cdpkit::stream_kind::null_stream)] ==
        site.outcomes[0]);
}

TEST_CASE("the device driver runs the level loop on the device" * CDPKIT_GPU_CASE) {
  const auto g = cdpkit::load_graph("grid:32");
  cdpkit::device_graph dg(g);
  cdpkit::bfs_engine engine(dg);
  auto& rt = cdpkit::default_runtime();
  cdpkit::profiling::trace_session session(rt);
  cdpkit::bfs_options o;
  o.variant = cdpkit::bfs_variant::device_driver;
  o.threshold = 64;
  const auto stats = engine.run(0, o, rt);
  CHECK(engine.levels() == cdpkit::bfs_reference(g, 0));
  CHECK(stats.num_levels == 63u);
  CHECK(stats.device_levels == 63u);
  CHECK_FALSE(stats.driver_handed_back);
  CHECK(stats.level_thresholds == std::vector<std::uint32_t>(63, 64u));  // what the driver used
  const auto trace = session.collect();
  CHECK(trace.sites[cdpkit::sites::bfs_level].outcomes[0] == 63u);
  CHECK(trace.sites[cdpkit::sites::bfs_driver].outcomes[0] == 63u);  // the last one finds nothing
  CHECK(trace.sites[cdpkit::sites::bfs_driver].max_depth == 0u);     // continuations stay at depth 0
}

TEST_CASE("BFS returns the automatic threshold of every level, traced or not" * CDPKIT_GPU_CASE) {
  // The device picks T per level from the frontier's degrees (balanced rule, thresholded: the
  // segment histogram); the host computes the same from the reference levels.
  const auto g = cdpkit::load_graph("rmat:14", {}, 3);
  const std::uint32_t hub = g.highest_degree_vertex();
  const auto reference = cdpkit::bfs_reference(g, hub);
  cdpkit::device_graph dg(g);
  cdpkit::bfs_engine engine(dg);
  auto& rt = cdpkit::default_runtime();
  cdpkit::bfs_options o;
  o.variant = cdpkit::bfs_variant::thresholded;
  std::vector<std::uint32_t> expected;
  for (std::uint32_t level = 0;; ++level) {
    std::uint64_t hist[cdpkit::trace_limits::log2_buckets] = {};
    bool any = false;
    for (std::uint32_t v = 0; v < g.num_vertices; ++v) {
      if (reference[v] != level) continue;
      any = true;
      const std::uint32_t d = g.degree(v);
      if (d > 0) ++hist[31 - static_cast<unsigned>(__builtin_clz(d))];
    }
    if (!any) break;
    const auto max_launches = static_cast<std::uint32_t>(o.cost_model.budget_share *
                                                          static_cast<double>(rt.pending_budget()));
    expected.push_back(cdpkit::balanced_threshold(
        hist, cdpkit::trace_limits::log2_buckets, o.cost_model.serial_item_ns,
        o.cost_model.launch_ns[static_cast<int>(cdpkit::stream_kind::fire_and_forget)],
        max_launches));
  }
  cdpkit::bfs_stats traced_stats;
  cdpkit::trace_snapshot trace;
  {
    cdpkit::profiling::trace_session session(rt);
    traced_stats = engine.run(hub, o, rt);
    trace = session.collect();
  }
  CHECK(engine.levels() == reference);
  CHECK(traced_stats.threshold_auto);
  CHECK(traced_stats.level_thresholds == expected);
  REQUIRE_FALSE(traced_stats.level_thresholds.empty());
  CHECK(traced_stats.level_thresholds.back() == trace.totals.last_auto_threshold);
  REQUIRE_FALSE(rt.tracing());
  const auto untraced_stats = engine.run(hub, o, rt);
  CHECK(untraced_stats.level_thresholds == expected);
  // a given T is reported for every level
  o.threshold = 100;
  const auto given = engine.run(hub, o, rt);
  CHECK_FALSE(given.threshold_auto);
  CHECK(given.level_thresholds == std::vector<std::uint32_t>(given.num_levels, 100u));
}

TEST_CASE("BFS levels on RMAT scale 18 pass Graph500-style validation" * CDPKIT_GPU_CASE) {
  const auto g = cdpkit::load_graph("rmat:18", {}, 2);
  const std::uint32_t hub = g.highest_degree_vertex();
  cdpkit::device_graph dg(g);
  cdpkit::bfs_engine engine(dg);
  for (const auto& v : cdpkit::all_bfs_variants()) {
    CAPTURE(std::string(cdpkit::to_string(v)));
    cdpkit::bfs_options o = cdpkit::bfs_options::of(v);
    if (v.variant == cdpkit::bfs_variant::device_driver)
      o.threshold = cdpkit::default_bfs_threshold(g, o, cdpkit::default_runtime().pending_budget());
    engine.run(hub, o, cdpkit::default_runtime());
    const auto validation = cdpkit::validate_bfs_levels(g, hub, engine.levels());
    CAPTURE(validation.first_error);
    CHECK(validation.errors == 0u);
  }
}

TEST_CASE("the device driver hands the level loop back to the host when a launch is refused" *
          CDPKIT_GPU_CASE) {
  // A budget of one child: the first level's grid takes it, so the driver's continuation is
  // refused and the host must finish the remaining levels.
  cdpkit::launch_config config;
  config.pending_budget = 1;
  cdpkit::launch_runtime rt(config);
  const auto g = cdpkit::load_graph("grid:16");
  cdpkit::device_graph dg(g);
  cdpkit::bfs_engine engine(dg);
  cdpkit::bfs_options o;
  o.variant = cdpkit::bfs_variant::device_driver;
  o.threshold = 1000;
  cdpkit::profiling::trace_session session(rt);
  const auto stats = engine.run(0, o, rt);
  CHECK(engine.levels() == cdpkit::bfs_reference(g, 0));
  CHECK(stats.driver_handed_back);
  CHECK(stats.device_levels == 1u);
  CHECK(stats.num_levels == 31u);
  CHECK(stats.level_thresholds == std::vector<std::uint32_t>(31, 1000u));  // device and host levels
  const auto trace = session.collect();
  CHECK(trace.sites[cdpkit::sites::bfs_driver].outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_budget)] == 1u);
}
