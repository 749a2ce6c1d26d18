// The quadtree on the GPU: every variant builds the reference tree (same leaves, same points per
// leaf, same node count) on uniform, clustered, line and all-equal points; all-equal points stop
// at max_depth; refused launches (depth cap, pending budget) are refined by the block itself, or
// (device_driver) handed back to the host.

#include <doctest/doctest.h>

#include "support/gpu.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/quadtree.hpp>
#include <cdpkit/quadtree_build.hpp>

#include <iterator>
#include <string>
#include <vector>

namespace {

using cdpkit::quadtree_variant;

void check_all_variants(const std::vector<cdpkit::point2>& points, const cdpkit::quadtree_params& params,
                        const std::string& name, cdpkit::launch_runtime& rt = cdpkit::default_runtime()) {
  const cdpkit::quadtree expected = cdpkit::quadtree_reference(points, params);
  const cdpkit::device_points dp(points);
  cdpkit::quadtree_engine engine(dp);
  for (const quadtree_variant v : cdpkit::all_quadtree_variants()) {
    CAPTURE(name);
    CAPTURE(std::string(cdpkit::to_string(v)));
    cdpkit::quadtree_options o;
    o.variant = v;
    o.params = params;
    o.threshold = 1000;  // small enough that thresholded both launches and refines in blocks here
    const cdpkit::quadtree_stats stats = engine.run(o, rt);
    const cdpkit::quadtree got = engine.result();
    std::string first;
    CHECK_MESSAGE(cdpkit::compare_quadtrees(expected, got, &first) == 0u, first);
    CHECK(stats.nodes == expected.nodes);
    CHECK(stats.leaves == expected.leaves.size());
    CHECK(got.height == expected.height);
    if (v == quadtree_variant::device_driver) CHECK(stats.levels == expected.height);  // levels 0 .. height - 1 split
  }
}

}  // namespace

TEST_CASE("every quadtree variant builds the reference tree on every distribution" * CDPKIT_GPU_CASE) {
  cdpkit::quadtree_params params;
  params.max_depth = 12;
  params.min_points = 16;
  check_all_variants(cdpkit::make_points(1u << 18, cdpkit::point_distribution::uniform, 1), params, "uniform 2^18");
  check_all_variants(cdpkit::make_points(1u << 18, cdpkit::point_distribution::clustered, 2), params, "clustered 2^18");
  check_all_variants(cdpkit::make_points(100000, cdpkit::point_distribution::line, 3), params, "line 10^5");
  params.max_depth = 20;
  params.min_points = 4;
  check_all_variants(cdpkit::make_points(50000, cdpkit::point_distribution::clustered, 4), params, "clustered, depth 20");
}

namespace {
/// The real meshes every GPU build runs over (the two smaller of harness::real_point_meshes).
constexpr const char* gpu_meshes[] = {"armadillo.off", "bunny00.off"};
}  // namespace

// Skipped without a GPU or without the meshes (one decorator: a second skip would override).
TEST_CASE("every quadtree variant builds the reference tree over real meshes' vertices" *
          doctest::skip(!cdpkit_test::gpu_available() ||
                        !cdpkit_test::real_meshes_present({std::begin(gpu_meshes), std::end(gpu_meshes)}))) {
  const std::string dir = CDPKIT_REAL_POINTS_DIR;
  cdpkit::quadtree_params params;
  params.max_depth = 16;
  params.min_points = 8;
  for (const char* mesh : gpu_meshes) {
    const std::string path = dir + "/" + mesh;
    check_all_variants(cdpkit::read_points(path), params, mesh);
  }
}

TEST_CASE("all points equal: every quadtree variant stops at max_depth with one leaf" * CDPKIT_GPU_CASE) {
  cdpkit::quadtree_params params;
  params.max_depth = 24;
  check_all_variants(cdpkit::make_points(100000, cdpkit::point_distribution::equal), params, "equal 10^5, depth 24");
  const cdpkit::device_points dp(cdpkit::make_points(1000, cdpkit::point_distribution::equal));
  cdpkit::quadtree_options o;
  o.params = params;
  const auto q = cdpkit::quadtree_gpu(dp, o);
  REQUIRE(q.leaves.size() == 1);
  CHECK(q.leaves[0].depth == 24u);
}

TEST_CASE("small and shallow quadtrees: the root alone is the leaf" * CDPKIT_GPU_CASE) {
  cdpkit::quadtree_params params;
  params.min_points = 16;
  check_all_variants(cdpkit::make_points(16, cdpkit::point_distribution::uniform), params, "16 points");
  params.max_depth = 0;
  check_all_variants(cdpkit::make_points(1000, cdpkit::point_distribution::uniform), params, "depth 0");
}

TEST_CASE("refused quadtree launches are refined by the block itself" * CDPKIT_GPU_CASE) {
  cdpkit::quadtree_params params;
  params.max_depth = 14;
  params.min_points = 8;
  const auto points = cdpkit::make_points(1u << 17, cdpkit::point_distribution::clustered, 9);
  SUBCASE("a depth cap of 3") {
    cdpkit::launch_config config;
    config.max_depth = 3;
    cdpkit::launch_runtime rt(config);
    check_all_variants(points, params, "depth cap 3", rt);
    const cdpkit::device_points dp(points);
    cdpkit::quadtree_engine engine(dp);
    cdpkit::profiling::trace_session session(rt);
    cdpkit::quadtree_options o;
    o.variant = quadtree_variant::aggregated;
    o.params = params;
    (void)engine.run(o, rt);
    const auto trace = session.collect();
    const auto& site = trace.sites[cdpkit::sites::quadtree_nodes];
    CHECK(site.max_depth == 3u);
    CHECK(site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_depth)] > 0u);
  }
  SUBCASE("a pending budget of 2") {
    cdpkit::launch_config config;
    config.pending_budget = 2;
    cdpkit::launch_runtime rt(config);
    check_all_variants(points, params, "budget 2", rt);
    // the device driver's chain of passes holds a slot per pass until the next completes: its
    // third launch is refused and the host takes the loop on, as often as it must
    const cdpkit::device_points dp(points);
    cdpkit::quadtree_engine engine(dp);
    cdpkit::quadtree_options o;
    o.variant = quadtree_variant::device_driver;
    o.params = params;
    const auto stats = engine.run(o, rt);
    CHECK(stats.driver_handed_back);
    std::string first;
    CHECK_MESSAGE(cdpkit::compare_quadtrees(cdpkit::quadtree_reference(points, params), engine.result(), &first) == 0u,
                  first);
  }
}

TEST_CASE("the radix build: a wide node is a count grid and a scatter step, the others the drain's jobs" *
          CDPKIT_GPU_CASE) {
  cdpkit::quadtree_params params;
  params.max_depth = 12;
  params.min_points = 16;
  const auto run = [&](const std::vector<cdpkit::point2>& points, cdpkit::launch_runtime& rt) {
    const cdpkit::device_points dp(points);
    cdpkit::quadtree_engine engine(dp);
    cdpkit::profiling::trace_session session(rt);
    cdpkit::quadtree_options o;
    o.variant = quadtree_variant::radix;
    o.params = params;
    const auto stats = engine.run(o, rt);
    const auto trace = session.collect();
    const cdpkit::quadtree expected = cdpkit::quadtree_reference(points, params);
    std::string first;
    CHECK_MESSAGE(cdpkit::compare_quadtrees(expected, engine.result(), &first) == 0u, first);
    CHECK(stats.nodes == expected.nodes);
    return trace;
  };
  constexpr int launched = static_cast<int>(cdpkit::launch_outcome::launched);
  SUBCASE("2^24 uniform points: the root's pass, then a count grid and a scatter step per level-4 cell") {
    // 256 cells of about 2^16 points four levels down: each wider than a block takes (2^15)
    const auto t = run(cdpkit::make_points(1u << 24, cdpkit::point_distribution::uniform, 5), cdpkit::default_runtime());
    CHECK(t.sites[cdpkit::sites::quadtree_radix].outcomes[launched] == 256u);
    CHECK(t.sites[cdpkit::sites::quadtree_radix_scatter].outcomes[launched] == 257u);
  }
  SUBCASE("2^22 uniform points: the root's pass alone, its 256 cells queued for the drain") {
    const auto t = run(cdpkit::make_points(1u << 22, cdpkit::point_distribution::uniform, 6), cdpkit::default_runtime());
    CHECK(t.sites[cdpkit::sites::quadtree_radix].outcomes[launched] == 0u);
    CHECK(t.sites[cdpkit::sites::quadtree_radix_scatter].outcomes[launched] == 1u);
  }
  SUBCASE("a depth cap of 0: every count grid refused, the drain's blocks build the rest") {
    cdpkit::launch_config config;
    config.max_depth = 0;
    cdpkit::launch_runtime rt(config);
    const auto t = run(cdpkit::make_points(1u << 24, cdpkit::point_distribution::clustered, 7), rt);
    CHECK(t.sites[cdpkit::sites::quadtree_radix].outcomes[launched] == 0u);
    CHECK(t.sites[cdpkit::sites::quadtree_radix].outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_depth)] > 0u);
  }
}

TEST_CASE("quadtree variants are named and options checked") {
  for (const auto v : cdpkit::all_quadtree_variants()) CHECK(cdpkit::parse_quadtree_variant(cdpkit::to_string(v)) == v);
  CHECK_THROWS_WITH_AS(cdpkit::parse_quadtree_variant("octree"),
                       "unknown quadtree variant 'octree' (expected one of child_per_node, aggregated, thresholded, "
                       "device_driver, radix, morton)",
                       cdpkit::input_error);
}

TEST_CASE("a quadtree build refuses a max_depth above 24" * CDPKIT_GPU_CASE) {
  const cdpkit::device_points dp(cdpkit::make_points(100, cdpkit::point_distribution::uniform));
  cdpkit::quadtree_engine engine(dp);
  cdpkit::quadtree_options o;
  o.params.max_depth = 30;
  CHECK_THROWS_WITH_AS(engine.run(o), "quadtree: max_depth 30 is above the 24 the library builds", cdpkit::input_error);
}
