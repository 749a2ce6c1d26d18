// bfs — the lecture's BFS story (PMPP ch. 21), measured: a child grid per frontier vertex is ~10x slower than
// the plain vertex loop (the grids are tiny); a degree threshold makes CDP pay; aggregation and
// the device-side level loop go further; the edge-balanced kernel without CDP is the yardstick.
//
// 1. Load or generate the graph (rmat:S, grid:SIDE, uniform:N:M, a .mtx file, an edge list).
// 2. Compute the CPU reference levels from the source (default: the highest-degree vertex).
// 3. Run each variant: timed with tracing off, one traced run, every level checked.
// 4. Print the table (GTEPS, levels, launches, tiny grids, fallbacks, pending high water, warp
//    efficiency); write the profile with --profile. Exit 1 if any check failed.
//
//   bfs --graph rmat:22 --profile bfs.json
//   bfs --graph ../shared/data/graphs/facebook_combined.txt --variant thresholded --threshold 64
//   bfs --graph rmat:20 --variant thresholded --sweep 64,256,1200,4096

#include <cdpkit/harness/bfs_runs.hpp>
#include <cdpkit/harness/collect.hpp>
#include <cdpkit/harness/program.hpp>

#include <cdpkit/bfs.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/profiling/profile.hpp>

#include <CLI/CLI.hpp>

#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"bfs: every BFS variant on one graph, timed, traced and checked"};
  std::string graph_spec = "rmat:20";
  std::vector<std::string> variant_names{"all"};
  std::optional<std::uint32_t> source, threshold;
  std::vector<std::uint32_t> sweep;
  std::uint64_t seed = 1;
  int reps = 5;
  bool directed = false, allow_sparse_ids = false;
  app.add_option("--graph", graph_spec,
                 "rmat:SCALE[:EDGE_FACTOR] | grid:SIDE | uniform:N:M | file.mtx | edge list file")
      ->capture_default_str();
  app.add_option("--source", source, "source vertex (default: the highest-degree vertex)");
  app.add_option("--variant", variant_names,
                 "comma-separated: all, serial_loop, child_per_thread, thresholded, "
                 "warp_aggregated, block_aggregated, device_driver, flat_balanced, each optionally "
                 "+STREAM (e.g. child_per_thread+named_per_thread)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--threshold", threshold, "launch threshold T (default: chosen per level)");
  cdpkit::harness::add_whole_number_list_option(app, "--sweep", sweep,
                                                "also run thresholded with each of these T (comma-separated)");
  app.add_option("--seed", seed, "generator seed")->capture_default_str()
      ->check(cdpkit::harness::whole_number(std::numeric_limits<std::uint64_t>::max()));
  app.add_option("--reps", reps, "timed repetitions")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_flag("--directed", directed, "keep edge directions (default: symmetrize)");
  app.add_flag("--allow-sparse-ids", allow_sparse_ids,
               "accept graph files whose vertex ids far exceed their edge count (isolated "
               "vertices)");
  cdpkit::harness::sample_options opts;
  cdpkit::harness::add_sample_options(app, opts);
  return cdpkit::harness::run_program("bfs", app, argc, argv, [&] {
    CDPKIT_NVTX_SCOPE("bfs sample");
    const auto variants = cdpkit::harness::parse_name_list(variant_names, cdpkit::all_bfs_variants(),
                                                           cdpkit::parse_bfs_variant);
    const auto collect_options = opts.collect.options();

    cdpkit::csr_options csr;
    csr.symmetrize = !directed;
    cdpkit::graph_read_options read;
    read.allow_sparse_ids = allow_sparse_ids;
    const cdpkit::csr_graph graph = cdpkit::load_graph(graph_spec, csr, seed, read);
    if (graph.num_vertices == 0) throw cdpkit::input_error(graph_spec + ": the graph has no vertices");
    const std::uint32_t src = source.value_or(graph.highest_degree_vertex());
    if (src >= graph.num_vertices)
      throw cdpkit::input_error("--source " + std::to_string(src) + " is not a vertex (the graph has " +
                                std::to_string(graph.num_vertices) + ")");

    cdpkit::require_cuda_device();  // after the arguments and the input: one clear line, exit 3 without a GPU
    const auto c = cdpkit::harness::make_bfs_case(graph_spec, graph, src);  // (the CPU reference)

    cdpkit::launch_runtime runtime(opts.launch);
    cdpkit::device_graph dgraph(graph);
    std::vector<cdpkit::bfs_options> runs;
    for (const auto& v : variants) {
      cdpkit::bfs_options o = cdpkit::bfs_options::of(v);
      o.threshold = threshold;
      runs.push_back(o);
    }
    for (auto t : sweep) {
      cdpkit::bfs_options o;
      o.variant = cdpkit::bfs_variant::thresholded;
      o.threshold = t;
      runs.push_back(o);
    }
    cdpkit::profiling::collector collector(collect_options);
    const auto results = cdpkit::harness::run_bfs_variants(c, dgraph, runtime, runs, reps, &collector);
    cdpkit::harness::print_bfs_results(std::cout, c, results);
    cdpkit::harness::print_collected(
        std::cout, cdpkit::harness::collected_rows(results, [](const auto& r) { return to_string(r.options.choice()); }),
        collector);
    if (!opts.profile_path.empty())
      cdpkit::harness::write_sample_profile(std::cout, opts.profile_path, "bfs", collector, results,
                                            [&](const auto& r) { return cdpkit::harness::to_bench_row(c, r); });
    return cdpkit::harness::all_verified(results);
  });
}
