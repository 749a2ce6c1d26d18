#pragma once
// The SpMV runs shared by the sample and the benchmark: run variants on one matrix with the
// measurement protocol, check every run against the double-precision CPU reference, print the
// table.

#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/sparse_matrix.hpp>
#include <cdpkit/spmv.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace cdpkit::harness {

/// One matrix, its x and the reference y = A x.
struct spmv_case {
  std::string input;  ///< e.g. "rmat:22"
  const csr_matrix* a;
  std::vector<float> x;
  std::vector<double> expected;
};

/// x = make_spmv_vector(a.cols, seed) and the reference product.
spmv_case make_spmv_case(std::string input, const csr_matrix& a, std::uint64_t seed);

/// One variant's result: its options, times (and what was collected), and its last run's stats.
struct spmv_run {
  spmv_options options;
  measurement m;
  spmv_stats stats;
};

/// Run each options entry; `collector` (may be null): what to collect beside the timing
/// (harness::measure), ranges named "spmv::<variant>". Every run's y checked (spmv_mismatches).
std::vector<spmv_run> run_spmv_variants(const spmv_case& c, const device_csr_matrix& da, launch_runtime& runtime,
                                        const std::vector<spmv_options>& runs, int reps,
                                        profiling::collector* collector = nullptr);

/// The table: ms, Gnnz/s, the ratio to cusparse (when it ran), launches, tiny grids, fallbacks,
/// warp efficiency, check.
void print_spmv_results(std::ostream& out, const spmv_case& c, const std::vector<spmv_run>& runs);

/// family "spmv", baseline "cusparse", work = nonzeros.
bench_row to_bench_row(const spmv_case& c, const spmv_run& r);

}  // namespace cdpkit::harness
