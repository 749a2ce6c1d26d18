// bfs_bench — every BFS variant on RMAT scale 20 and 22, a grid and the shared real graphs, in
// one process: ratios to serial_loop and flat_balanced, a threshold sweep on RMAT, and the
// calibration of the BFS cost model (a lone thread walking a hub). JSON in the docs/bench-format.md shape.

#include <cdpkit/harness/bfs_runs.hpp>

#include <cdpkit/bfs.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/harness/table.hpp>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

namespace {

cdpkit::csr_graph star(std::uint32_t leaves) {
  cdpkit::edge_list list;
  list.num_vertices = leaves + 1;
  for (std::uint32_t v = 1; v <= leaves; ++v) list.edges.emplace_back(0, v);
  return cdpkit::build_csr(list);
}

/// ns per neighbour of one thread looping over a hub's list: serial_loop from the hub of two
/// stars, the slope between them.
double calibrate_neighbor_ns(cdpkit::launch_runtime& runtime, int reps) {
  const auto time_star = [&](std::uint32_t leaves) {
    const auto g = star(leaves);
    cdpkit::device_graph dg(g);
    cdpkit::bfs_engine engine(dg);
    cdpkit::bfs_options o;
    o.variant = cdpkit::bfs_variant::serial_loop;
    return cdpkit::harness::time_runs([&](cudaStream_t s) { engine.run(0, o, runtime, s); }, {},
                                        reps, 1, nullptr)
        .median_ms;
  };
  const std::uint32_t small = 1u << 16, large = 1u << 20;
  const double ns = (time_star(large) - time_star(small)) * 1e6 / (large - small);
  return ns > 0 ? ns : cdpkit::bfs_options::default_bfs_cost_model().serial_item_ns;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bfs_bench: every BFS variant on RMAT 20/22, a grid and the shared graphs"};
  std::vector<std::string> graphs = {"rmat:20", "rmat:22", "grid:1024"};
  std::string data_dir = cdpkit::harness::default_data_dir("graphs"), json_path;
  int reps = 5;
  app.add_option("--graphs", graphs, "graph specs")->delimiter(',')->capture_default_str();
  app.add_option("--data", data_dir,
                 "folder of the shared real graphs (default: $CDPKIT_DATA_DIR/graphs; skipped when absent)")
      ->capture_default_str();
  cdpkit::harness::add_timing_options(app, reps, 100);
  app.add_option("--json", json_path, "write the rows (cdpkit-bench/1) here")
      ->check(cdpkit::harness::output_file("a JSON document", '{'));
  return cdpkit::harness::run_program("bfs_bench", app, argc, argv, [&] {
    cdpkit::require_cuda_device();  // first: one clear line and exit 3 without a GPU
    cdpkit::launch_runtime runtime;
    auto doc = cdpkit::harness::bench_document(cdpkit::profiling::device_json());
    const double neighbor_ns = calibrate_neighbor_ns(runtime, reps);
    std::cout << "cost model: a lone thread visits a neighbour in "
              << cdpkit::harness::format("%.2f", neighbor_ns) << " ns (calibrated on a star)\n";
    doc["cost_model"] = {{"serial_item_ns", neighbor_ns}};

    std::vector<std::string> inputs = graphs;
    if (data_dir.empty()) {
      std::cout << "(no --data and no CDPKIT_DATA_DIR: the shared real graphs are skipped)\n";
    } else if (std::filesystem::exists(data_dir)) {
      for (const char* f : {"facebook_combined.txt", "ca-GrQc.txt", "USpowerGrid.txt", "p2p-Gnutella08.txt"})
        inputs.push_back((std::filesystem::path(data_dir) / f).string());
    } else {
      std::cout << "(shared graphs not found at " << data_dir << ": skipped)\n";
    }
    bool ok = true;
    for (const auto& spec : inputs) {
      const auto graph = cdpkit::load_graph(spec);
      const auto c = cdpkit::harness::make_bfs_case(
          std::filesystem::path(spec).filename().string(), graph,
          graph.highest_degree_vertex());
      cdpkit::device_graph dgraph(graph);
      std::vector<cdpkit::bfs_options> runs;
      for (const auto& v : cdpkit::all_bfs_variants()) runs.push_back(cdpkit::bfs_options::of(v));
      if (spec.rfind("rmat:", 0) == 0) {
        for (std::uint32_t t : {64u, 256u, 1200u, 4096u}) {
          cdpkit::bfs_options o;
          o.variant = cdpkit::bfs_variant::thresholded;
          o.threshold = t;
          runs.push_back(o);
          o.variant = cdpkit::bfs_variant::warp_aggregated;
          runs.push_back(o);
        }
      }
      auto results = cdpkit::harness::run_bfs_variants(c, dgraph, runtime, runs, reps);
      if (spec.rfind("rmat:", 0) == 0) {
        // The lecture's setup (PMPP ch. 21): room for a pending child per vertex, so that every frontier
        // vertex's child is launched rather than falling back (the budget is the vertex count,
        // at most 2^23; the device limit is raised to twice that, the layer's headroom).
        cdpkit::launch_config lecture;
        lecture.pending_budget =
            static_cast<int>(std::min<std::uint32_t>(graph.num_vertices, 1u << 23));
        cdpkit::launch_runtime raised(lecture);
        std::vector<cdpkit::bfs_options> seed_runs(2);
        seed_runs[0].variant = cdpkit::bfs_variant::child_per_thread;
        seed_runs[1].variant = cdpkit::bfs_variant::child_per_thread;
        seed_runs[1].stream = cdpkit::stream_kind::named_per_thread;
        for (auto& r : cdpkit::harness::run_bfs_variants(c, dgraph, raised, seed_runs, reps))
          results.push_back(std::move(r));
      }
      cdpkit::harness::print_bfs_results(std::cout, c, results);
      ok = cdpkit::harness::add_bench_rows(doc, results, [&](const auto& r) { return cdpkit::harness::to_bench_row(c, r); }) && ok;
    }
    cdpkit::harness::write_bench_document(doc, json_path, std::cout);
    return ok;
  });
}
