#pragma once
// The tree runs shared by the sample and the benchmark: run variants on one tree with the
// measurement protocol, check every run against the CPU reference, print the table.

#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/tree.hpp>
#include <cdpkit/tree_traversal.hpp>

#include <algorithm>
#include <iosfwd>
#include <string>
#include <vector>

namespace cdpkit::harness {

/// The launch configuration the tree programs start from (their --pending-limit and
/// --pending-budget defaults): the layer's defaults (budget 2048, the device's pending-launch limit
/// raised to 4,096). The tree programs once asked for a limit of 2^20 (commit 05d2c10), against a
/// stall of the recursions at the automatic limit whose cause was lanes of one warp entering the
/// device runtime together (docs/launch-layer.md, "Launches from divergent lanes"; fixed by
/// launch_child_warp, commit 756f236). A large limit reserves gigabytes of device memory and makes
/// every tail launch slow (scripts/verify-gpu step tree22 measures the device driver at both).
inline launch_config tree_launch_config() {
  launch_config config;
  config.pending_budget = default_pending_budget;
  return config;
}

/// One tree and its CPU references (both operations).
struct tree_case {
  std::string input;  ///< e.g. "random:4194304:powerlaw"
  const tree* t;
  tree_top_down top_down;
  tree_bottom_up bottom_up;
  std::uint32_t height = 0;
};

/// The references and the height of `t`, which must outlive the case (and be built:
/// tree_top_down_reference's precondition).
tree_case make_tree_case(std::string input, const tree& t);

/// One variant's result: its options, times (and what was collected), and its last run's stats.
struct tree_run {
  tree_options options;
  measurement m;
  tree_stats stats;
};

/// Run each options entry; `collector` (may be null): what to collect beside the timing
/// (harness::measure), ranges named "tree::<variant>".
std::vector<tree_run> run_tree_variants(const tree_case& c, const device_tree& dt, launch_runtime& runtime,
                                        const std::vector<tree_options>& runs, int reps,
                                        profiling::collector* collector = nullptr);

/// The table: operation, threshold, ms, Mnodes/s, the ratio to level_sync (when it ran),
/// launches, tiny grids, max depth, fallbacks, warp efficiency, check.
void print_tree_results(std::ostream& out, const tree_case& c, const std::vector<tree_run>& runs);

/// family "tree", work = nodes (cdpkit-bench/1 row).
bench_row to_bench_row(const tree_case& c, const tree_run& r);

}  // namespace cdpkit::harness
