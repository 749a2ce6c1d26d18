#pragma once
// cdpkit/profiling/collector.hpp — what a program collects beside its own timing, in one place:
// the device trace, CUPTI's range-profiler metrics (with the CTA accounting and the host
// kernels of the measured run), and the PM-sampling timeline of SM activity.
//
//   auto options = cdpkit::profiling::parse_collect("all");   // --collect none|trace|metrics|timeline|all
//   cdpkit::profiling::collector c(options);                  // says once on stderr what stands aside
//   auto m = c.measure("bfs::thresholded", [&] { run(); cudaDeviceSynchronize(); });
//   auto t = c.sample([&] { run(); cudaDeviceSynchronize(); });
//
// Facts measured on an H200 (docs/design.md, "The CUPTI collector"): the range profiler and PM
// sampling cannot be enabled at once (CUPTI_ERROR_HARDWARE_BUSY), so each measure() sets its
// range profiler up and takes it down again; ranges of one name are merged by CUPTI, so every
// measured range gets its own name; the range profiler runs one kernel of its own, "WaitNs", per
// range, which the host activity sees and the accounting leaves out.
//
// Coexistence: under Nsight Systems, Nsight Compute or another CUPTI client (detected from the
// environment) the collector stands aside for metrics and timeline, says so once, and the
// program runs normally; the device trace is cdpkit's own and stays.

#include <cdpkit/profiling/host_activity.hpp>
#include <cdpkit/profiling/pm_sampler.hpp>
#include <cdpkit/schema/profile.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit::profiling {

/// What to collect. The defaults: the trace alone.
struct collect_options {
  bool trace = true;
  bool metrics = false;   ///< one more run per variant under the range profiler
  bool timeline = false;  ///< PM sampling during the traced run
  std::uint64_t interval_ns = 20000;
  std::vector<std::string> range_metrics;  ///< empty: default_range_metrics()
  [[nodiscard]] bool any_cupti() const noexcept { return metrics || timeline; }
};

/// Parse --collect: "none", "trace", "metrics", "timeline", "all" (= trace,metrics,timeline), or
/// a comma-separated list of them ("trace,timeline"). "metrics" and "timeline" imply "trace" (the
/// accounting and the alignment need it). Throws cdpkit::input_error naming the bad word and the
/// choices.
collect_options parse_collect(const std::string& spec);
/// The parts as a list: e.g. {"trace", "metrics"}; {"none"} when nothing.
std::vector<std::string> collect_parts(const collect_options& o);

/// The profiler that holds CUPTI in this process, when the environment says one does (Nsight
/// Systems, Nsight Compute, or a CUPTI injection through CUDA_INJECTION64_PATH), else unset.
std::optional<std::string> foreign_profiler();

/// One measure(): the range profiler's metrics of the run, the host kernels it saw, and the time.
struct measured_range {
  schema::hardware_profile hardware;  ///< metrics and ms; accounting: see account()
  host_activity_log host;             ///< host kernels and transfers of the run (WaitNs left out)
};

/// The kernel CUPTI's range profiler runs in every range (measured on the H200: one block on a
/// stream of CUPTI's, outside the range's counters; the activity API sees it).
inline constexpr const char* range_profiler_kernel = "WaitNs";
/// Leave range_profiler_kernel's launches out of `log`.
void drop_range_profiler_kernels(host_activity_log& log);

/// The child grids of a run as its trace counted them (every site's launched grids).
struct child_counts {
  std::uint64_t grids = 0, blocks = 0, threads = 0;
};

/// The accounting of a measured run: CTAs and threads from the hardware's metrics, host blocks
/// and threads from `host` (its kernels; its transfers counted), the child grids from the trace.
/// Unset when the metrics lack sm__ctas_launched.sum or sm__threads_launched.sum.
std::optional<schema::cta_accounting> account(const schema::hardware_profile& hardware,
                                              const host_activity_log& host, const child_counts& children);

/// A PM timeline in the profile's form: the first sample, which CUPTI opens at enable time and
/// which spans the set-up, left out when it is longer than 4 intervals; a window that starts
/// before the previous one ended starts at that end (CUPTI's windows may touch); `ms` unset (0).
schema::timeline_profile timeline_profile_of(pm_timeline t);

/// The collector of one program. Not thread-safe.
class collector {
 public:
  /// Never throws for CUPTI or device trouble: a part that cannot run is noted (notes()) and
  /// said once on stderr, and its calls then just run the work.
  explicit collector(collect_options options, bool quiet = false);

  [[nodiscard]] const collect_options& options() const noexcept { return options_; }
  /// True while the part can still measure.
  [[nodiscard]] bool metrics_enabled() const noexcept { return metrics_; }
  [[nodiscard]] bool timeline_enabled() const noexcept { return timeline_; }
  /// One line per part that stood aside, e.g. "metrics: CUPTI: cuptiProfilerInitialize: ...".
  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return notes_; }
  /// The document's collector part: what was asked for and the notes.
  [[nodiscard]] schema::collector_profile profile() const;

  /// Keeps CUPTI's activity API on while it lives (move-only): measure() and sample() take their
  /// host activity from it instead of enabling it themselves.
  /// The collector must outlive its hold.
  class activity_hold {
   public:
    activity_hold() = default;
    activity_hold(activity_hold&& o) noexcept : c_(o.c_) { o.c_ = nullptr; }
    activity_hold& operator=(activity_hold&& o) noexcept {
      if (this != &o) {
        release();
        c_ = o.c_;
        o.c_ = nullptr;
      }
      return *this;
    }
    activity_hold(const activity_hold&) = delete;
    activity_hold& operator=(const activity_hold&) = delete;
    ~activity_hold() { release(); }

   private:
    friend class collector;
    explicit activity_hold(collector* c) noexcept : c_(c) {}
    void release() noexcept;
    collector* c_ = nullptr;
  };

  /// Turn the activity API on until the returned hold goes. On the H200 the first operations
  /// after enabling it run up to 0.9 ms late (docs/design.md, "The CUPTI collector"): hold it
  /// across measure() and sample(), and give those a warm-up (their `warm_up` argument), which
  /// takes that delay inside their own session. An empty hold (nothing on)
  /// when neither metrics nor timeline can run, when a hold of this collector is alive already
  /// (also from inside measured or sampled work), or when the activity API is unavailable
  /// (measure() and sample() then enable it themselves, as without a hold, and note a failure).
  [[nodiscard]] activity_hold hold_host_activity();

  /// Run `work` once inside a range named `name` (made unique with "#k" when measured before),
  /// recording the host activity around it. `work` must synchronize the device before it
  /// returns. Unset when metrics are off or unavailable, or when the metrics need more than one
  /// pass (the work is not repeatable inside one range: its preparation is outside); the work
  /// then runs once all the same. Metric values CUPTI gives as NaN or infinite are left out.
  /// The range (and a sampled run) starts with a 4-byte memset and a device synchronization of
  /// the collector's own, left out of the host log: with the activity API on, the first
  /// operation of a range ran up to 1 ms late on the H200, and that is not the work's.
  /// Exceptions from `work` propagate.
  /// With `warm_up` (which must finish its work, synchronizing what the work uses, and leave the
  /// work ready to run again), it runs first in a range of its own in the same range-profiling session (its counters and
  /// host activity left out): the session's first operations run late on the H200, and the warm-up
  /// takes that out of the measured run (range_profiler::measure).
  std::optional<measured_range> measure(const std::string& name, const std::function<void()>& work,
                                        const std::function<void()>& warm_up = {});

  /// Run `work` with PM sampling on. Unset when the timeline is off or unavailable (the work then
  /// runs once all the same). The first sample, which CUPTI opens at enable time and which spans
  /// the set-up, is left out when it is longer than 4 intervals.
  /// With `host`, the host activity of the sampled run is recorded into it (timed kernels, on
  /// the samples' clock). Values CUPTI gives as NaN or infinite are written as 0.
  /// With `warm_up` (which must finish its work, synchronizing what the work uses, and leave the
  /// work ready to run again), it runs first with sampling on, as measure()'s does; its samples
  /// (those over before the work began, on CUPTI's clock; the one spanning that moment stays) and
  /// its host activity are left out. Its samples count toward the sampler's cap (200,000) until
  /// they are dropped. Unset, with a note, when CUPTI cannot say when the warm-up ended.
  std::optional<schema::timeline_profile> sample(const std::function<void()>& work,
                                                 host_activity_log* host = nullptr,
                                                 const std::function<void()>& warm_up = {});

 private:
  void note(const std::string& part, const std::string& why);

  /// measure()'s and sample()'s activity log: the held one when alive and available, else `own`
  /// (started here). Null when neither is available (noted: for "metrics", which then stands
  /// aside; for "timeline" once, as "host activity", the timeline going on without it).
  host_activity* open_activity(host_activity& own, const char* part);
  /// The log of `a` since open_activity() (stop() for an own one, take() for the held one).
  host_activity_log close_activity(host_activity& a, host_activity& own);

  collect_options options_;
  std::optional<host_activity> held_;  ///< while an activity_hold lives
  bool host_activity_noted_ = false;   ///< the timeline's host activity failed (said once)
  bool quiet_ = false;
  bool metrics_ = false, timeline_ = false;
  std::vector<std::string> notes_;
  std::vector<std::string> range_names_;
};

}  // namespace cdpkit::profiling
