#pragma once
// cdpkit/profiling/range_profiler.hpp — hardware counters per measured range, through CUPTI's
// range profiler (user ranges, user replay) on the current device.
//
// Measured on an H200 (docs/design.md, tests/profiling/range_profiler_test.cu): the range profiler's counters of a range
// include the work of every grid launched from the device inside it, which CUPTI's activity API
// cannot see; seven metrics fit in one pass.
//
//   cdpkit::profiling::range_profiler rp;          // default_range_metrics()
//   if (!rp.available()) std::cerr << rp.unavailable_reason() << "\n";   // the program goes on
//   rp.measure("bfs::thresholded", [&] { run(); cudaDeviceSynchronize(); });
//   for (const auto& r : rp.results()) ...         // one entry per range name (CUPTI merges
//                                                  // ranges of one name: give each its own)
//
// A CUPTI failure never breaks the caller's program: the profiler is then unavailable, says why
// (no device, another profiler such as Nsight Systems holds CUPTI, no permission to profile),
// and measure() still runs the work once, measuring nothing.
//
// Run on the H200 (tests/profiling/range_profiler_test.cu, tests/profiling/collector_test.cu): warp efficiency 1 and
// about 1/2 on constructed kernels, CTAs exact for host launches.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit::profiling {

/// One metric's value in one range.
struct metric_value {
  std::string metric;
  double value = 0.0;
};

/// The metrics of one measured range, in the order they were asked for.
struct range_metrics {
  std::string name;
  std::vector<metric_value> values;
  /// The value of `metric`, unset when it was not measured.
  [[nodiscard]] std::optional<double> value(const std::string& metric) const;
};

/// The metrics measured when none are given: instructions per warp and per thread (hardware
/// warp efficiency = thread / warp instructions / 32), CTAs and threads launched, active warps,
/// active cycles and the range's duration: one pass on the H200 (branch uniformity would make it
/// two).
const std::vector<std::string>& default_range_metrics();

/// Warp efficiency from a range's counters: smsp__thread_inst_executed.sum /
/// (32 * smsp__inst_executed.sum); unset without both (or with no instructions).
std::optional<double> hardware_warp_efficiency(const range_metrics& r);

/// CUPTI's range profiler on the current device, in user-range mode. Move-only RAII: the
/// destructor ends the session and gives CUPTI back. Not thread-safe; one enabled at a time per
/// device (a second one, or PM sampling, finds the profiling hardware busy).
class range_profiler {
 public:
  /// Set up a session measuring `metrics` in up to `max_ranges` ranges. Never throws for CUPTI
  /// or device trouble: the profiler is then unavailable (see unavailable_reason()).
  /// Throws cdpkit::input_error for an empty metric list or max_ranges == 0.
  explicit range_profiler(std::vector<std::string> metrics = default_range_metrics(),
                          std::size_t max_ranges = 64);
  ~range_profiler();
  range_profiler(range_profiler&&) noexcept;
  range_profiler& operator=(range_profiler&&) noexcept;
  range_profiler(const range_profiler&) = delete;
  range_profiler& operator=(const range_profiler&) = delete;

  /// True when ranges are measured.
  [[nodiscard]] bool available() const noexcept;
  /// Why not, in one line naming the CUPTI call and its error (empty when available).
  [[nodiscard]] const std::string& unavailable_reason() const noexcept;
  /// Replay passes the metrics need (1 for the default set on an H200; 0 when unavailable).
  [[nodiscard]] std::size_t passes() const noexcept;

  /// Run `work` inside a range named `name`, once per pass (so `work` must be repeatable and
  /// must synchronize the device before it returns). Unavailable, or after max_ranges ranges,
  /// or after a CUPTI failure mid-way (which makes the profiler unavailable): `work` runs once,
  /// unmeasured. Exceptions from `work` propagate (the range is closed first).
  void measure(const std::string& name, const std::function<void()>& work);

  /// As measure(name, work), with `warm_up` run first in each pass, in a range of its own named
  /// warm_up_name(name), in the same session: the first operations of a range profiling session
  /// run late on the H200 (docs/design.md, "The CUPTI collector"), and a warm-up run of the same
  /// work takes that cost out of the measured range. Takes two ranges (without two left, both run
  /// unmeasured). `warm_up` must finish its work (synchronizing what it uses) before it returns.
  void measure(const std::string& name, const std::function<void()>& work, const std::function<void()>& warm_up);

  /// The name of measure()'s warm-up range before range `name`.
  [[nodiscard]] static std::string warm_up_name(const std::string& name) { return name + " (warm-up)"; }

  /// The measured ranges so far, decoded (an empty list when unavailable).
  [[nodiscard]] std::vector<range_metrics> results();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cdpkit::profiling
