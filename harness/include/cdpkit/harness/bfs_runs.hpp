#pragma once
// The BFS runs shared by the sample and the benchmark: run variants on one graph with the
// measurement protocol, check every run against the CPU reference, print the table.

#include <cdpkit/bfs.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/profiling/profile.hpp>

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit::harness {

/// One graph, the source and the CPU reference from it. `graph` points at the caller's graph,
/// which must outlive the case (make_bfs_case).
struct bfs_case {
  std::string input;             ///< e.g. "rmat:22"
  const csr_graph* graph;
  std::uint32_t source;
  std::vector<std::uint32_t> reference;  ///< CPU levels from source
  std::uint64_t traversed_edges;         ///< Graph500 count for TEPS
  std::uint32_t num_levels;
};

/// Reference levels, TEPS edge count and level count for `source`. Preconditions: `graph`
/// outlives the case; source < graph.num_vertices (else cdpkit::input_error, from bfs_reference).
bfs_case make_bfs_case(std::string input, const csr_graph& graph, std::uint32_t source);

/// One variant's result: its options, times (and what was collected), and its last run's stats.
struct bfs_run {
  bfs_options options;
  harness::measurement m;
  bfs_stats stats;
  int pending_launch_limit = 0;  ///< the device limit the run had (the lecture's setup raises it to n)
};

/// Run each options entry (device_driver without a threshold gets default_bfs_threshold).
/// `collector` (may be null): what to collect beside the timing (harness::measure); the ranges
/// are named "bfs::<variant>".
std::vector<bfs_run> run_bfs_variants(const bfs_case& c, const device_graph& graph,
                                      launch_runtime& runtime, std::vector<bfs_options> variants,
                                      int reps, profiling::collector* collector = nullptr);

/// The table: threshold, limit, ms, GTEPS, levels, ratios to serial_loop and flat_balanced (when
/// they ran), launches, tiny grids, fallbacks, pending high water, warp efficiency, check.
void print_bfs_results(std::ostream& out, const bfs_case& c, const std::vector<bfs_run>& runs);

/// family "bfs", work = traversed edges (cdpkit-bench/1 row).
bench_row to_bench_row(const bfs_case& c, const bfs_run& r);

}  // namespace cdpkit::harness
