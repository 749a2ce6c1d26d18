#pragma once
// cdpkit/profiling/pm_sampler.hpp — an SM-activity timeline: CUPTI's PM sampling of the whole
// device at a fixed interval while a piece of work runs.
//
// Measured on an H200 (docs/design.md, tests/profiling/collector_test.cu): the samples' timestamps are on CUPTI's clock,
// that of the activity records; %globaltimer, which the device trace records child windows in,
// differs from it by about 0.4 ms (the harness measures the offset in the sampled run and moves
// that run's trace onto CUPTI's clock); the samples count the work of grids launched from the device, which
// CUPTI's activity API cannot see. The counters are the device's: other processes' work shows too.
//
//   cdpkit::profiling::pm_sampler pm;                    // default_pm_metrics(), 20 us
//   const auto timeline = pm.sample([&] { run(); cudaDeviceSynchronize(); });
//   for (const auto& s : timeline.samples) ... s.start_ns, s.values[0] ...
//
// A CUPTI failure never breaks the caller's program: the sampler is then unavailable, says why,
// and sample() still runs the work once, returning an empty timeline.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit::profiling {

/// One sample: its window on CUPTI's clock (that of the activity records; %globaltimer differs
/// from it by about 0.4 ms on the H200) and one value per metric.
struct pm_sample {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::vector<double> values;
};

/// The samples taken while one piece of work ran.
struct pm_timeline {
  std::vector<std::string> metrics;   ///< the order of every sample's values
  std::uint64_t interval_ns = 0;      ///< the interval asked for
  std::vector<pm_sample> samples;     ///< in time order
  bool overflow = false;              ///< the hardware buffer filled up: later samples are lost
  std::size_t dropped = 0;            ///< samples beyond max_samples, not kept
  /// The index of `metric` in `metrics`, unset when it was not sampled.
  [[nodiscard]] std::optional<std::size_t> index_of(const std::string& metric) const;
};

/// The metrics sampled when none are given: SM active cycles as a share of the elapsed ones,
/// warps resident as a share of the peak, and instructions issued.
const std::vector<std::string>& default_pm_metrics();

/// CUPTI's PM sampling on the current device. Move-only RAII; not thread-safe. Sampling is
/// enabled only inside sample(), so it may live beside a range_profiler (they never measure at
/// the same time).
class pm_sampler {
 public:
  /// Sample `metrics` every `interval_ns` nanoseconds (GPU time), keeping at most `max_samples`
  /// per sample() call. Never throws for CUPTI or device trouble: the sampler is then
  /// unavailable. Throws cdpkit::input_error for an empty metric list, an interval outside
  /// [1 us, 1 s] or max_samples == 0.
  explicit pm_sampler(std::vector<std::string> metrics = default_pm_metrics(),
                      std::uint64_t interval_ns = 20000, std::size_t max_samples = 200000);
  ~pm_sampler();
  pm_sampler(pm_sampler&&) noexcept;
  pm_sampler& operator=(pm_sampler&&) noexcept;
  pm_sampler(const pm_sampler&) = delete;
  pm_sampler& operator=(const pm_sampler&) = delete;

  [[nodiscard]] bool available() const noexcept;
  /// Why not, in one line naming the CUPTI call and its error (empty when available).
  [[nodiscard]] const std::string& unavailable_reason() const noexcept;
  [[nodiscard]] std::uint64_t interval_ns() const noexcept;

  /// Run `work` (which must synchronize the device before it returns) with sampling on, and
  /// return the samples taken. Unavailable, or after a CUPTI failure (which makes the sampler
  /// unavailable): `work` runs once and the timeline is empty. Exceptions from `work` propagate
  /// (sampling is stopped first).
  pm_timeline sample(const std::function<void()>& work);

  /// The same in steps, for sampling that outlives one call (e.g. a whole program): start()
  /// enables and starts sampling (no-op when unavailable or started); poll() decodes what the
  /// hardware buffer holds so far (call it now and then during long sampling, so the buffer
  /// never fills); stop() stops, drains, disables and returns every sample since start() (empty
  /// when not started). A CUPTI failure in any of them makes the sampler unavailable.
  void start();
  void poll();
  pm_timeline stop();
  [[nodiscard]] bool started() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cdpkit::profiling
