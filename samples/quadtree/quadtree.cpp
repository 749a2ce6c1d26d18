// quadtree — adaptive refinement with child grids, measured: a quadtree over 2-D points, split
// where the points are dense. A one-block child grid per splitting quadrant (the textbook
// recursion), one grid per node for its quadrants, and a threshold below which a block refines
// quadrants itself, against the non-CDP build from sorted Morton codes.
//
// 1. Generate or read the points (uniform:N, clustered:N[:BLOBS], line:N, equal:N, a point file
//    or an OBJ mesh).
// 2. Build the CPU reference.
// 3. Build with each variant: timed with tracing off, one traced run, every build checked (same
//    leaves, same points per leaf).
// 4. Print the table; write the profile with --profile. Exit 1 if any check failed.
//
//   quadtree --points clustered:4194304 --profile quadtree.json
//   quadtree --points file:mesh.obj --max-depth 16 --min-points 8
//   quadtree --points equal:100000 --max-depth 24

#include <cdpkit/harness/collect.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/quadtree_runs.hpp>

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/quadtree.hpp>
#include <cdpkit/quadtree_build.hpp>

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <limits>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"quadtree: every quadtree build variant on one point set, timed, traced and checked"};
  std::string points_spec = "clustered:1048576";
  std::vector<std::string> variant_names{"all"};
  std::optional<std::uint32_t> threshold;
  cdpkit::quadtree_params params;
  std::uint64_t seed = 1;
  int reps = 5;
  app.add_option("--points", points_spec,
                 "uniform:N | clustered:N[:BLOBS] | line:N | equal:N | file:PATH or PATH (x y [z] per line, or an OFF or "
                 "OBJ mesh)")
      ->capture_default_str();
  app.add_option("--max-depth", params.max_depth, "deepest level (the root is 0)")
      ->capture_default_str()
      ->check(CLI::Range(0u, cdpkit::max_quadtree_depth));
  app.add_option("--min-points", params.min_points, "a node with more points splits")->capture_default_str();
  app.add_option("--variant", variant_names, "comma-separated: all, child_per_node, aggregated, thresholded, device_driver, radix, morton")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--threshold", threshold, "thresholded: launch quadrants of more points (default 4096)");
  app.add_option("--seed", seed, "generator seed")->capture_default_str()
      ->check(cdpkit::harness::whole_number(std::numeric_limits<std::uint64_t>::max()));
  app.add_option("--reps", reps, "timed repetitions")->capture_default_str()->check(CLI::Range(1, 1000));
  cdpkit::harness::sample_options opts;
  cdpkit::harness::add_sample_options(app, opts);
  return cdpkit::harness::run_program("quadtree", app, argc, argv, [&] {
    CDPKIT_NVTX_SCOPE("quadtree sample");
    const auto variants = cdpkit::harness::parse_name_list(variant_names, cdpkit::all_quadtree_variants(),
                                                           cdpkit::parse_quadtree_variant);
    const auto collect_options = opts.collect.options();

    // the input first: a bad spec or file is one line and exit 2, with or without a GPU
    const std::vector<cdpkit::point2> points = cdpkit::load_points(points_spec, seed);
    cdpkit::require_cuda_device();  // one clear line, exit 3 without a GPU
    const auto c = cdpkit::harness::make_quadtree_case(points_spec, points, params);

    cdpkit::launch_runtime runtime(opts.launch);
    const cdpkit::device_points dp(points);
    std::vector<cdpkit::quadtree_options> runs;
    for (const auto v : variants) {
      cdpkit::quadtree_options o;
      o.variant = v;
      o.threshold = threshold;
      runs.push_back(o);
    }
    cdpkit::profiling::collector collector(collect_options);
    const auto results = cdpkit::harness::run_quadtree_variants(c, dp, runtime, runs, reps, &collector);
    cdpkit::harness::print_quadtree_results(std::cout, c, results);
    cdpkit::harness::finish_sample(
        std::cout, "quadtree", opts, runtime, collector, results,
        [](const auto& r) { return std::string(cdpkit::to_string(r.options.variant)); },
        [&](const auto& r) { return cdpkit::harness::to_bench_row(c, r); });
    return cdpkit::harness::all_verified(results);
  });
}
