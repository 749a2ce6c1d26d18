// spmv — sparse matrix-vector products y = A x, each CSR row a segment of loop-to-child: a thread
// per row leaves its warp idle on a power-law matrix's long rows; a child grid per row drowns in
// tiny grids; thresholds and one grid per warp or block pay; the flat item grid and cuSPARSE are
// the yardsticks without child grids.
//
// 1. Generate or read the matrix (rmat:SCALE[:AVG], banded:ROWS:HALF_BW,
//    giant:ROWS:GIANTS:LEN[:BASE], graph:SPEC, a Matrix Market file).
// 2. Make x and the double-precision reference y.
// 3. Run each variant: timed with tracing off, one traced run, every row checked.
// 4. Print the table; write the profile with --profile. Exit 1 if any check failed.
//
//   spmv --matrix rmat:22 --profile spmv.json
//   spmv --matrix banded:4194304:8 --variant block_aggregated,flat_balanced,cusparse
//   spmv --matrix mtx:web-Google.mtx

#include <cdpkit/harness/collect.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/spmv_runs.hpp>

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/sparse_matrix.hpp>
#include <cdpkit/spmv.hpp>

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <limits>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"spmv: every SpMV variant on one sparse matrix, timed, traced and checked"};
  std::string matrix_spec = "rmat:20";
  std::vector<std::string> variant_names{"all"};
  std::optional<std::uint32_t> threshold;
  std::uint32_t child_block_threads = 256;
  std::uint64_t seed = 1;
  int reps = 5;
  app.add_option("--matrix", matrix_spec,
                 "rmat:LOG2_ROWS[:AVG] | banded:ROWS:HALF_BW | giant:ROWS:GIANTS:LEN[:BASE] | graph:GRAPH_SPEC | "
                 "mtx:PATH (Matrix Market; or a path ending in .mtx)")
      ->capture_default_str();
  app.add_option("--variant", variant_names,
                 "comma-separated: all, serial_loop, child_per_thread, thresholded, warp_aggregated, "
                 "block_aggregated, flat_balanced, cusparse")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--threshold", threshold, "launch threshold T (default: picked on the device from the row lengths)");
  app.add_option("--child-block-threads", child_block_threads, "threads per block of the child grids")
      ->capture_default_str()
      ->check(CLI::Range(32, 1024));
  app.add_option("--seed", seed, "seed of the generators and of x")->capture_default_str()
      ->check(cdpkit::harness::whole_number(std::numeric_limits<std::uint64_t>::max()));
  app.add_option("--reps", reps, "timed repetitions")->capture_default_str()->check(CLI::Range(1, 1000));
  cdpkit::harness::sample_options opts;
  cdpkit::harness::add_sample_options(app, opts);
  return cdpkit::harness::run_program("spmv", app, argc, argv, [&] {
    CDPKIT_NVTX_SCOPE("spmv sample");
    const auto variants = cdpkit::harness::parse_name_list(variant_names, cdpkit::all_spmv_variants(),
                                                           cdpkit::parse_spmv_variant);
    if (child_block_threads % 32 != 0)
      throw cdpkit::input_error("--child-block-threads must be a multiple of 32, got " +
                                std::to_string(child_block_threads));
    const auto collect_options = opts.collect.options();

    // the input first: a bad spec or file is one line and exit 2, with or without a GPU
    const cdpkit::csr_matrix a = cdpkit::load_matrix(matrix_spec, seed);
    cdpkit::require_cuda_device();  // one clear line, exit 3 without a GPU
    const auto c = cdpkit::harness::make_spmv_case(matrix_spec, a, seed);

    cdpkit::launch_runtime runtime(opts.launch);
    const cdpkit::device_csr_matrix da(a);
    std::vector<cdpkit::spmv_options> runs;
    for (const auto v : variants) {
      cdpkit::spmv_options o;
      o.variant = v;
      o.threshold = threshold;
      o.child_block_threads = child_block_threads;
      runs.push_back(o);
    }
    cdpkit::profiling::collector collector(collect_options);
    const auto results = cdpkit::harness::run_spmv_variants(c, da, runtime, runs, reps, &collector);
    cdpkit::harness::print_spmv_results(std::cout, c, results);
    cdpkit::harness::finish_sample(
        std::cout, "spmv", opts, runtime, collector, results,
        [](const auto& r) { return std::string(cdpkit::to_string(r.options.variant)); },
        [&](const auto& r) { return cdpkit::harness::to_bench_row(c, r); });
    return cdpkit::harness::all_verified(results);
  });
}
