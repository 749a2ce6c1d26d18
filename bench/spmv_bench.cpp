// spmv_bench — every SpMV variant in one process: a power-law matrix of 2^22 rows (RMAT rows; every
// CDP policy beside cusparseSpMV, the yardstick), a banded one of 2^22 rows, one of 2^22
// rows of 4 entries but 16 of 2^20 (half the nonzeros in 16 rows: where child grids should pay), the shared
// real graphs as pattern matrices (skipped with a message where ../shared/data is absent), and a
// threshold sweep on the power-law matrix. JSON in the docs/bench-format.md shape.
//
//   spmv_bench --json spmv.json
//   spmv_bench --matrices rmat:20,banded:1048576:16 --reps 9

#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/spmv_runs.hpp>

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/sparse_matrix.hpp>
#include <cdpkit/spmv.hpp>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"spmv_bench: every SpMV variant on power-law, banded and real matrices"};
  std::vector<std::string> specs = {"rmat:22", "banded:4194304:8", "giant:4194304:16:1048576"};
  std::vector<std::uint32_t> thresholds = {32, 256, 4096};
  std::string json_path, graphs_dir = cdpkit::harness::default_data_dir("graphs");
  int reps = 5;
  app.add_option("--matrices", specs, "matrix specs (as spmv --matrix takes them)")->delimiter(',')->capture_default_str();
  cdpkit::harness::add_thresholds_option(app, thresholds,
                                         "the sweep on power-law (rmat) matrices: thresholded, warp_aggregated and block_aggregated at these T");
  app.add_option("--data", graphs_dir,
                 "folder of the shared real graphs, read as pattern matrices (default: $CDPKIT_DATA_DIR/graphs; "
                 "empty: none)")
      ->capture_default_str();
  cdpkit::harness::add_timing_options(app, reps, 100);
  app.add_option("--json", json_path, "write the rows (cdpkit-bench/1) here")
      ->check(cdpkit::harness::output_file("a JSON document", '{'));
  return cdpkit::harness::run_program("spmv_bench", app, argc, argv, [&] {
    cdpkit::require_cuda_device();  // first: one clear line and exit 3 without a GPU
    cdpkit::launch_runtime runtime;
    auto doc = cdpkit::harness::bench_document(cdpkit::profiling::device_json());
    std::vector<std::string> inputs = specs;
    if (graphs_dir.empty()) {
      std::cout << "(no --data and no CDPKIT_DATA_DIR: the shared real graphs are skipped)\n";
    } else {
      for (const char* file : {"facebook_combined.txt", "p2p-Gnutella08.txt", "ca-GrQc.txt"}) {
        const std::string path = graphs_dir + "/" + file;
        if (std::filesystem::exists(path)) inputs.push_back("graph:" + path);
        else std::cout << "(" << path << " not found: skipped)\n";
      }
    }
    bool ok = true;
    for (const auto& spec : inputs) {
      const cdpkit::csr_matrix a = cdpkit::load_matrix(spec);
      const auto c = cdpkit::harness::make_spmv_case(spec, a, 1);
      const cdpkit::device_csr_matrix da(a);
      std::vector<cdpkit::spmv_options> runs;
      for (const auto v : cdpkit::all_spmv_variants()) {
        cdpkit::spmv_options o;
        o.variant = v;
        runs.push_back(o);
      }
      if (spec.rfind("rmat:", 0) == 0)
        for (const auto v : {cdpkit::spmv_variant::thresholded, cdpkit::spmv_variant::warp_aggregated,
                             cdpkit::spmv_variant::block_aggregated})
          for (const std::uint32_t t : thresholds) {
            cdpkit::spmv_options o;
            o.variant = v;
            o.threshold = t;
            runs.push_back(o);
          }
      const auto results = cdpkit::harness::run_spmv_variants(c, da, runtime, runs, reps);
      cdpkit::harness::print_spmv_results(std::cout, c, results);
      ok = cdpkit::harness::add_bench_rows(doc, results, [&](const auto& r) { return cdpkit::harness::to_bench_row(c, r); }) && ok;
    }
    cdpkit::harness::write_bench_document(doc, json_path, std::cout);
    return ok;
  });
}
