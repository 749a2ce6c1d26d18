// quadtree_bench — every quadtree build variant in one process: 2^22 points uniform and
// clustered (every CDP variant beside the Morton build, the non-CDP yardstick), a line and all
// points equal (degenerate: refined to max_depth), the vertices of real meshes (CGAL's demo data,
// scripts/real-points; skipped with a message when absent), with a threshold sweep on the
// clustered set. JSON in the docs/bench-format.md shape.
//
//   quadtree_bench --json quadtree.json

#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/quadtree_runs.hpp>

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/quadtree.hpp>
#include <cdpkit/quadtree_build.hpp>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"quadtree_bench: every quadtree build variant on uniform, clustered and degenerate points"};
  std::vector<std::string> specs = {"uniform:4194304", "clustered:4194304", "line:1048576", "equal:1048576"};
  cdpkit::quadtree_params params;
  std::string json_path, meshes_dir = "out/data/meshes";
  int reps = 5;
  app.add_option("--points", specs, "point specs (as quadtree --points takes them)")->delimiter(',')->capture_default_str();
  app.add_option("--max-depth", params.max_depth, "deepest level")->capture_default_str()->check(CLI::Range(0u, cdpkit::max_quadtree_depth));
  app.add_option("--min-points", params.min_points, "a node with more points splits")->capture_default_str();
  cdpkit::harness::add_timing_options(app, reps, 100);
  app.add_option("--meshes", meshes_dir, "folder of the real meshes (scripts/real-points; skipped when absent)")
      ->capture_default_str();
  app.add_option("--json", json_path, "write the rows (cdpkit-bench/1) here")
      ->check(cdpkit::harness::output_file("a JSON document", '{'));
  return cdpkit::harness::run_program("quadtree_bench", app, argc, argv, [&] {
    cdpkit::require_cuda_device();  // first: one clear line and exit 3 without a GPU
    cdpkit::launch_runtime runtime;
    auto doc = cdpkit::harness::bench_document(cdpkit::profiling::device_json());
    bool ok = true;
    std::vector<std::string> inputs = specs;
    for (const char* mesh : cdpkit::harness::real_point_meshes) {
      const std::string path = meshes_dir + "/" + mesh;
      if (std::filesystem::exists(path)) inputs.push_back("file:" + path);
      else std::cout << "(" << path << " not found: skipped; scripts/real-points fetches it)\n";
    }
    for (const auto& spec : inputs) {
      const auto points = cdpkit::load_points(spec);
      const auto c = cdpkit::harness::make_quadtree_case(spec, points, params);
      const cdpkit::device_points dp(points);
      std::vector<cdpkit::quadtree_options> runs;
      for (const auto v : cdpkit::all_quadtree_variants()) {
        cdpkit::quadtree_options o;
        o.variant = v;
        runs.push_back(o);
      }
      if (spec.rfind("clustered:", 0) == 0)
        for (const std::uint32_t t : {256u, 1024u, 16384u, 65536u}) {
          cdpkit::quadtree_options o;
          o.variant = cdpkit::quadtree_variant::thresholded;
          o.threshold = t;
          runs.push_back(o);
        }
      const auto results = cdpkit::harness::run_quadtree_variants(c, dp, runtime, runs, reps);
      cdpkit::harness::print_quadtree_results(std::cout, c, results);
      ok = cdpkit::harness::add_bench_rows(doc, results, [&](const auto& r) { return cdpkit::harness::to_bench_row(c, r); }) && ok;
    }
    cdpkit::harness::write_bench_document(doc, json_path, std::cout);
    return ok;
  });
}
