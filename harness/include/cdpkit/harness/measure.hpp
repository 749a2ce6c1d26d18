#pragma once
// cdpkit/harness/measure.hpp — how samples and benchmarks time and trace a variant:
// warm-up, `reps` timed runs with tracing off (CUDA events around the whole call, host round
// trips inside it included), then one traced run, and a result check.

#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/collector.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/profiling/trace_session.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit::harness {

struct timing {
  double median_ms = 0.0;
  double min_ms = 0.0;
  /// The spread of the timed runs: the median absolute deviation from median_ms (0 for one run).
  double mad_ms = 0.0;
  int reps = 0;
  std::vector<double> samples_ms;
  /// Why the timed runs stopped: "reps" (the count asked for), "noise" (the spread fell to the
  /// stopping rule's max_noise), "budget" (its time budget was spent) or "max_reps".
  std::string stop = "reps";
};

/// When time_runs stops (NVBench's noise rule, in the harness): after the `reps` runs asked for,
/// more are made while the relative spread (mad_ms / median_ms) is above max_noise, until the
/// timed runs have taken budget_s seconds (wall time, preparations included) or max_reps runs
/// were made. The default (max_noise 0) makes exactly `reps` runs.
struct stopping_rule {
  double max_noise = 0.0;  ///< e.g. 0.01 for 1%; 0: off
  double budget_s = 0.0;   ///< > 0 where max_noise > 0
  int max_reps = 1000;
};

/// The rule of every later time_runs in this process (benchmarks set it from their options:
/// add_timing_options). Throws cdpkit::input_error for a negative max_noise, a max_noise without
/// a positive budget_s, or max_reps < 1.
void set_stopping_rule(const stopping_rule& rule);
[[nodiscard]] stopping_rule current_stopping_rule();

/// True when runs should go on after `samples_ms` under `rule` with `elapsed_s` spent; `stop`
/// gets the reason when not. Needs at least one sample.
bool keep_timing(const std::vector<double>& samples_ms, int reps, const stopping_rule& rule, double elapsed_s,
                 std::string& stop);

/// Time `enqueue` (which puts one run's work on `stream`) `reps` times after `warmup` untimed
/// runs, and more under the stopping rule (set_stopping_rule); `prepare` (may be empty) runs
/// untimed before each run, e.g. to clear outputs.
/// Every wait is under the watchdog (cdpkit/wait.hpp); `runtime` (may be null) is diagnosed when
/// a run does not finish in time. Throws cdpkit::input_error for reps < 1, cdpkit::cuda_error.
timing time_runs(const std::function<void(cudaStream_t)>& enqueue,
                 const std::function<void(cudaStream_t)>& prepare, int reps, int warmup,
                 cudaStream_t stream, const launch_runtime* runtime = nullptr);

/// What one timed run costs besides its work, measured: the smallest operation the host can put
/// on a stream (a 4-byte cudaMemsetAsync) timed `reps` times as time_runs times a run (an event
/// before, the operation, an event after, a wait; no preparation). Each timed run pays this launch
/// and its wait, whose cost changes from process to process: two documents' rows cannot be told
/// apart by less than it (scripts/bench-compare). The benchmarks record it in their documents
/// (write_bench_document, "timing_floor"). Throws cdpkit::input_error for reps < 1,
/// cdpkit::cuda_error.
timing timing_floor(int reps = 200, cudaStream_t stream = nullptr);

/// Median of a non-empty sample (the mean of the two middle values for an even count).
double median(std::vector<double> values);

/// A timing from the times of `reps` = samples_ms.size() timed runs: their median, least and
/// median absolute deviation. Throws cdpkit::input_error when there is none.
timing timing_of(std::vector<double> samples_ms);

/// Median absolute deviation of a non-empty sample: median(|v - median(values)|), a spread that
/// one outlying run does not move (for 1, 2, 3, 10, 100: deviations 2, 1, 0, 7, 97, so 2).
/// Throws cdpkit::input_error when empty.
double median_absolute_deviation(const std::vector<double>& values);

struct measurement {
  timing time;
  std::optional<trace_snapshot> trace;  ///< the traced run's trace (when traced)
  profiling::trace_summary summary;                ///< of the traced run
  bool checked = false;
  /// Mismatches of the last timed (untraced) run plus those of the traced run; 0 = verified.
  std::uint64_t mismatches = 0;
  std::uint64_t timed_mismatches = 0;   ///< of the last timed run alone
  /// What the collector measured (when one was given): the range metrics with the accounting,
  /// the timeline of the traced run, the times of the collection runs, their host activity.
  profiling::run_collected collected;
};

/// True when the run's output was checked and matched (timed and traced runs alike).
inline bool verified(const measurement& m) noexcept { return m.checked && m.mismatches == 0; }

/// True when every result (any type with a `measurement m` member) was checked and matched.
template <class Results>
bool all_verified(const Results& results) {
  for (const auto& r : results)
    if (!verified(r.m)) return false;
  return true;
}

/// The check column of the tables: "ok", "FAIL <mismatches>" or "unchecked".
std::string check_text(const measurement& m);

/// Sampled and measured runs (CUPTI's) made for a traced measurement whose timed median is under
/// collection_short_ms (one of each for longer runs): the fastest is the collection's time.
inline constexpr int collection_reps = 3;
/// Untraced runs (the baseline) and traced runs made, alternating, for such a measurement: their
/// fastest are the collection times' yardstick and the traced time. More than collection_reps:
/// the runs are cheap (no profiling session) and the launch-heavy variants with refused launches
/// are bimodal on the H200 (the tree's recursive_naive took 7 or 17 ms, run to run; quadtree's
/// child_per_node 12.6 or 14.2). A median took either mode (the tree's whole-sample trace read
/// 0.68x, 1.47x and 1.05x in three collections); the fastest run compares the fast modes, and a
/// collection's cost, paid by every run, still shows in it. 15 pairs, not 7: with 7 the fastest
/// still moved by 5% from one collection to the next on sub-millisecond and launch-heavy runs
/// (the quadtree's morton build, which the trace does not touch, read 0.95x traced once).
inline constexpr int trace_pairs = 15;
/// Runs shorter than this (timed median) are collected several times (trace_pairs,
/// collection_reps); longer ones once. (At 10 ms a launch-heavy run, quicksort's two_stream at
/// 12 ms with hundreds of fallbacks, moved 1.00 to 1.12x traced from one collection to the next.)
inline constexpr double collection_short_ms = 50.0;

/// The protocol: timed runs (tracing off), `check` (may be empty) of the last timed run's
/// output, then if `traced`, trace_pairs (or 1, see above) untraced runs made as the
/// collection runs are (the trace reset before and read after, tracing off; the preparation
/// waited for, the run between two events; collect_times::baseline_ms: the fastest) and as
/// many runs inside a trace_session, the two alternating with the order swapped every pair (a
/// checked run's pause weighs on both kinds alike), each output checked (traced_ms: the
/// fastest; the trace: the last one's). With a `collector` (may
/// be null; its options decide, `traced` is then ignored): the traced run when its options say
/// trace; with metrics or the timeline, CUPTI's activity API held on
/// (collector::hold_host_activity) across them; with the timeline, one more
/// traced run under PM sampling (collection_reps of them for a short run: the time is the
/// fastest, the rest is the last one's), whose trace is the measurement's (the samples and the
/// child windows are of one run), moved onto CUPTI's clock by the offset measured in that run
/// (launch_runtime::read_device_clock; timeline_profile::clock_offset_ns); with metrics, one
/// more traced run (as many as the sampled) inside a range named `name`, whose trace gives the
/// CTA accounting. Each sampled or measured run is preceded, inside the same PM-sampling or
/// range-profiling session, by a warm-up: the same run, then the trace reset and the preparation
/// again (its samples, counters and host activity left out; the first operations of such a
/// session run late on the H200). The output of every traced, sampled and measured run is
/// checked (not the baselines' nor the warm-ups'); each collection's fastest time is kept.
measurement measure(launch_runtime& runtime, const std::function<void(cudaStream_t)>& enqueue,
                    const std::function<void(cudaStream_t)>& prepare,
                    const std::function<std::uint64_t()>& check, int reps, bool traced,
                    cudaStream_t stream = nullptr, profiling::collector* collector = nullptr,
                    const std::string& name = {});

}  // namespace cdpkit::harness
