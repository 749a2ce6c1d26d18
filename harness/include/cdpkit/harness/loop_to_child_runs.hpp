#pragma once
// The loop-to-child runs shared by the sample and the benchmark: run a list of policies on one
// workload with the measurement protocol, print the table with ratios, turn results into profile
// runs and benchmark rows.

#include <cdpkit/launch.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/segment_workload.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/profiling/profile.hpp>

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit::harness {

/// One policy's result: the policy, its times (and what was collected), and what it used.
struct policy_result {
  loop_policy policy;
  measurement m;
  segment_result used;  ///< what the last (traced) run used: its threshold, given or picked
};

/// The policy of `kind` with the user's threshold (if any) and stream.
loop_policy make_policy(loop_policy_kind kind, std::optional<std::uint32_t> threshold,
                        stream_kind stream, const launch_cost_model& model);

/// "power_law:1048576".
std::string input_label(const segment_params& params);

/// Run every policy on `workload` (timed `reps` times with tracing off, one traced run, checked
/// against the Thrust reference).
/// `collector` (may be null): what to collect beside the timing (harness::measure); the ranges
/// are named "loop_to_child::<policy>".
std::vector<policy_result> run_policies(segment_workload& workload, launch_runtime& runtime,
                                        const std::vector<loop_policy>& policies, int reps,
                                        profiling::collector* collector = nullptr);

/// The table: time, items/s, ratios to serial_loop and flat_balanced (when they ran), child
/// launches, fallbacks, tiny-grid share, warp efficiency, check.
void print_results(std::ostream& out, const std::string& input, const segment_workload& workload,
                   const std::vector<policy_result>& results);

/// The params object of a run for JSON (threshold used and its source, stream, cost model).
nlohmann::json policy_params(const policy_result& result);

/// family "loop_to_child", work = items (cdpkit-bench/1 row).
bench_row to_bench_row(const std::string& input, const segment_workload& workload,
                       const policy_result& result);

}  // namespace cdpkit::harness
