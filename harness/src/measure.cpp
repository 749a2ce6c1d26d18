// Timing and tracing protocol shared by the samples and the benchmarks.

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/wait.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>

namespace cdpkit::harness {

namespace {
/// Move a trace's times onto CUPTI's clock: `offset_ns` = trace clock - CUPTI's.
void shift_trace(trace_snapshot& trace, std::int64_t offset_ns) {
  const auto shift = [&](std::uint64_t& t) { t = static_cast<std::uint64_t>(static_cast<std::int64_t>(t) - offset_ns); };
  for (auto& r : trace.records) {
    if (r.t_ns != 0) shift(r.t_ns);
    if (has_execution_time(r)) {
      shift(r.start_ns);
      shift(r.end_ns);
    }
  }
}

/// The trace clock minus CUPTI's, from the clock kernel's reading (`device_ns`) and CUPTI's
/// record of that kernel in `host` (which is then left out of it); unset without the record.
std::optional<std::int64_t> clock_offset(std::uint64_t device_ns, profiling::host_activity_log& host) {
  auto& k = host.kernels;
  const auto it = std::find_if(k.begin(), k.end(), [](const auto& x) { return x.name == device_clock_kernel; });
  if (it == k.end()) return std::nullopt;
  std::optional<std::int64_t> out;
  if (it->start_ns != 0 && it->end_ns >= it->start_ns)  // the kernel read the clock inside its window
    out = static_cast<std::int64_t>(device_ns) - static_cast<std::int64_t>(it->start_ns + (it->end_ns - it->start_ns) / 2);
  k.erase(it);
  return out;
}

/// A pair of CUDA events, destroyed with the scope.
class event_pair {
 public:
  event_pair() {
    CDPKIT_CUDA_TRY(cudaEventCreate(&start_));
    try {
      CDPKIT_CUDA_TRY(cudaEventCreate(&stop_));
    } catch (...) {
      (void)cudaEventDestroy(start_);
      throw;
    }
  }
  ~event_pair() {
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

/// The least of `values` (not empty: the collections make one run at least).
double fastest(const std::vector<double>& values) {
  return *std::min_element(values.begin(), values.end());
}
}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) throw input_error("median of an empty sample");
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double median_absolute_deviation(const std::vector<double>& values) {
  const double m = median(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (const double v : values) deviations.push_back(std::abs(v - m));
  return median(std::move(deviations));
}

timing timing_of(std::vector<double> samples_ms) {
  if (samples_ms.empty()) throw input_error("timing_of: no timed run");
  timing t;
  t.reps = static_cast<int>(samples_ms.size());
  t.median_ms = median(samples_ms);
  t.min_ms = *std::min_element(samples_ms.begin(), samples_ms.end());
  t.mad_ms = median_absolute_deviation(samples_ms);
  t.samples_ms = std::move(samples_ms);
  return t;
}

namespace {
stopping_rule& rule_slot() {
  static stopping_rule rule;
  return rule;
}
}  // namespace

void set_stopping_rule(const stopping_rule& rule) {
  if (!(rule.max_noise >= 0.0))
    throw input_error("set_stopping_rule: max_noise must be >= 0, got " + std::to_string(rule.max_noise));
  if (rule.max_noise > 0.0 && !(rule.budget_s > 0.0))
    throw input_error("set_stopping_rule: a max_noise needs a time budget > 0 s, got " + std::to_string(rule.budget_s));
  if (rule.max_reps < 1) throw input_error("set_stopping_rule: max_reps must be >= 1, got " + std::to_string(rule.max_reps));
  rule_slot() = rule;
}

stopping_rule current_stopping_rule() { return rule_slot(); }

bool keep_timing(const std::vector<double>& samples_ms, int reps, const stopping_rule& rule, double elapsed_s,
                 std::string& stop) {
  const int n = static_cast<int>(samples_ms.size());
  if (n < reps) return true;
  if (rule.max_noise <= 0.0) {
    stop = "reps";
    return false;
  }
  const double mid = median(samples_ms);
  const double noise = mid > 0.0 ? median_absolute_deviation(samples_ms) / mid : 0.0;
  if (noise <= rule.max_noise) {
    stop = "noise";
    return false;
  }
  if (elapsed_s >= rule.budget_s) {
    stop = "budget";
    return false;
  }
  if (n >= rule.max_reps) {
    stop = "max_reps";
    return false;
  }
  return true;
}

namespace {
/// time_runs under `rule`; `who` names the caller in the watchdog's messages.
timing time_runs_under(const stopping_rule& rule, const char* who, const std::function<void(cudaStream_t)>& enqueue,
                       const std::function<void(cudaStream_t)>& prepare, int reps, int warmup, cudaStream_t stream,
                       const launch_runtime* runtime) {
  if (reps < 1) throw input_error(std::string(who) + ": reps must be >= 1, got " + std::to_string(reps));
  event_pair ev;
  for (int w = 0; w < warmup; ++w) {
    if (prepare) prepare(stream);
    enqueue(stream);
  }
  wait_for_stream(stream, (std::string(who) + ": warm-up").c_str(), runtime, __FILE__, __LINE__);
  const std::string timed_run = std::string(who) + ": timed run";
  const auto start = std::chrono::steady_clock::now();
  std::vector<double> samples_ms;
  std::string stop;
  while (samples_ms.empty() ||
         keep_timing(samples_ms, reps, rule,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), stop)) {
    if (prepare) prepare(stream);
    CDPKIT_CUDA_TRY(cudaEventRecord(ev.start_, stream));
    enqueue(stream);
    CDPKIT_CUDA_TRY(cudaEventRecord(ev.stop_, stream));
    wait_for_event(ev.stop_, timed_run.c_str(), runtime, __FILE__, __LINE__);
    float ms = 0.0f;
    CDPKIT_CUDA_TRY(cudaEventElapsedTime(&ms, ev.start_, ev.stop_));
    samples_ms.push_back(ms);
  }
  timing t = timing_of(std::move(samples_ms));
  t.stop = stop;
  return t;
}
}  // namespace

timing time_runs(const std::function<void(cudaStream_t)>& enqueue,
                 const std::function<void(cudaStream_t)>& prepare, int reps, int warmup,
                 cudaStream_t stream, const launch_runtime* runtime) {
  return time_runs_under(current_stopping_rule(), "time_runs", enqueue, prepare, reps, warmup, stream, runtime);
}

timing timing_floor(int reps, cudaStream_t stream) {
  if (reps < 1) throw input_error("timing_floor: reps must be >= 1, got " + std::to_string(reps));
  detail::unique_device_ptr<std::uint32_t[]> word;
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(word), sizeof(std::uint32_t)));
  // exactly `reps` runs (the stopping rule off), after one warm-up, timed as time_runs times a run
  return time_runs_under(
      stopping_rule{}, "timing_floor",
      [&](cudaStream_t s) { CDPKIT_CUDA_TRY(cudaMemsetAsync(word.get(), 0, sizeof(std::uint32_t), s)); }, {}, reps, 1,
      stream, nullptr);
}

measurement measure(launch_runtime& runtime, const std::function<void(cudaStream_t)>& enqueue,
                    const std::function<void(cudaStream_t)>& prepare,
                    const std::function<std::uint64_t()>& check, int reps, bool traced,
                    cudaStream_t stream, profiling::collector* collector, const std::string& name) {
  measurement m;
  runtime.set_tracing(false);
  m.time = time_runs(enqueue, prepare, reps, 1, stream, &runtime);
  CDPKIT_CHECK_DEVICE_ERRORS(runtime);
  if (check) {
    // The output of the last timed run (tracing off) is checked too, not only the traced run's.
    m.checked = true;
    m.timed_mismatches = check();
    m.mismatches = m.timed_mismatches;
  }
  if (collector != nullptr) traced = collector->options().trace;
  event_pair ev;
  // One run as every collection run is made: the preparation waited for (a range profiler's range
  // then holds the run's own grids only), the run between two events, waited for. `measured`
  // wraps the events, the enqueue and the wait.
  const auto collection_protocol_run = [&](const char* what,
                                           const std::function<void(const std::function<void()>&)>& measured) {
    if (prepare) prepare(stream);
    wait_for_stream(stream, what, &runtime, __FILE__, __LINE__);
    const auto run = [&] {
      CDPKIT_CUDA_TRY(cudaEventRecord(ev.start_, stream));
      enqueue(stream);
      CDPKIT_CUDA_TRY(cudaEventRecord(ev.stop_, stream));
      wait_for_event(ev.stop_, what, &runtime, __FILE__, __LINE__);
    };
    if (measured) measured(run);
    else run();
    CDPKIT_CHECK_DEVICE_ERRORS(runtime);
    float elapsed = 0.0f;
    CDPKIT_CUDA_TRY(cudaEventElapsedTime(&elapsed, ev.start_, ev.stop_));
    return static_cast<double>(elapsed);
  };
  const auto traced_run = [&](const char* what, double& ms,
                              const std::function<void(const std::function<void()>&)>& measured) {
    profiling::trace_session session(runtime);
    ms = collection_protocol_run(what, measured);
    auto snapshot = session.collect();
    if (check) m.mismatches += check();
    return snapshot;
  };
  // Runs of each collection (baseline, traced, sampled, measured): several for a short run, whose
  // single time moves up to 4x on the H200, and the fastest of them is the collection's time (a
  // collection's cost is paid by every run, so it shows in the fastest; a median of a bimodal
  // variant, the tree's recursive_naive at 7 or 17 ms, took either mode: the tree's whole-sample
  // trace read 0.68x, 1.47x and 1.05x in three collections);
  // one for runs of collection_short_ms and more (the submission and the spread are lost in them).
  const bool short_run = m.time.median_ms < collection_short_ms;
  const int collection_runs = short_run ? collection_reps : 1;
  if (traced) {
    // The collections' yardstick: untraced runs made as the collection runs are. Against the timed
    // median (whose runs overlap the next run's submission with the GPU's work) a run of a fraction
    // of a millisecond would count its own submission as collection overhead.
    // A baseline run is a traced run with the trace off: the same reset before it and the same
    // snapshot after it (both outside its events), so that the two differ only in what the trace
    // does on the device. (Without them, cuSPARSE's SpMV, which the trace does not touch, read
    // 1.27x "traced" on the H200.)
    // The two alternate, in the order baseline, traced | traced, baseline | baseline, traced ...,
    // so that a drift of the GPU's clocks over the runs weighs on both alike, and so that each
    // kind also runs right after the other: a traced run's output is checked, which may keep the
    // GPU idle for milliseconds (a CPU reference), and the run after such a pause is slower (on
    // the H200, runs of 0.2 to 0.3 ms by 10 to 20%: with the baseline always after the check,
    // cuSPARSE's SpMV, untouched by the trace, read 0.86x traced).
    std::vector<double> baseline, traced_ms;
    const auto baseline_run = [&] {
      runtime.reset_trace();
      baseline.push_back(collection_protocol_run("measure: baseline run", {}));
      (void)runtime.snapshot();
    };
    const auto traced_pair_run = [&] {  // the trace kept is the last traced run's
      double ms = 0;
      m.trace = traced_run("measure: traced run", ms, {});
      traced_ms.push_back(ms);
    };
    for (int r = 0; r < (short_run ? trace_pairs : 1); ++r) {
      if (r % 2 == 0) {
        baseline_run();
        traced_pair_run();
      } else {
        traced_pair_run();
        baseline_run();
      }
    }
    m.collected.times.baseline_ms = fastest(baseline);
    m.collected.times.traced_ms = fastest(traced_ms);
    m.collected.times.baseline_runs_ms = std::move(baseline);
    m.collected.times.traced_runs_ms = std::move(traced_ms);
  }
  // CUPTI's runs (sampled, measured) share one enabling of the activity API.
  profiling::collector* const cupti = traced ? collector : nullptr;  // CUPTI's runs need the trace
  profiling::collector::activity_hold hold;
  if (cupti != nullptr && (cupti->timeline_enabled() || cupti->metrics_enabled())) {
    hold = cupti->hold_host_activity();
  }
  // A CUPTI run's warm-up: the same run first, inside the same profiling session, then the
  // preparation again; the trace is reset after it, so that it holds the collected run's launches
  // only. The first operations of a range-profiling or PM-sampling session, and the first after
  // the activity API is enabled, run late (up to 0.9 ms on the H200: docs/design.md, "The CUPTI
  // collector"); the warm-up takes that delay, so no separate untimed run goes first.
  const auto warm_up = [&](const std::function<void()>& run) {
    return [&, run] {
      run();
      CDPKIT_CHECK_DEVICE_ERRORS(runtime);
      runtime.reset_trace();
      if (prepare) prepare(stream);
      wait_for_stream(stream, "measure: the collected run's preparation", &runtime, __FILE__, __LINE__);
    };
  };
  // The runs of one CUPTI collection (sampled or measured), each inside `measured`: the fastest of
  // their times, and in `snapshot` the last one's trace; unset when `collected()` says CUPTI did
  // not collect (after one run: once is enough).
  const auto cupti_runs = [&](const char* what, const std::function<void(const std::function<void()>&)>& measured,
                              const std::function<bool()>& collected,
                              trace_snapshot& snapshot) -> std::optional<double> {
    std::vector<double> times;
    for (int r = 0; r < collection_runs; ++r) {
      double ms = 0;
      snapshot = traced_run(what, ms, measured);
      if (!collected()) return std::nullopt;
      times.push_back(ms);
    }
    return fastest(times);
  };
  if (cupti != nullptr && cupti->timeline_enabled()) {
    trace_snapshot snapshot;
    std::optional<schema::timeline_profile> timeline;
    profiling::host_activity_log host;
    std::uint64_t device_ns = 0;
    const auto ms = cupti_runs(
        "measure: sampled run",
        [&](const std::function<void()>& run) {
          host = {};
          timeline = cupti->sample(
              [&] {
                device_ns = runtime.read_device_clock(stream);  // the two clocks, side by side
                run();
              },
              &host, warm_up(run));
        },
        [&] { return timeline.has_value(); }, snapshot);
    if (ms) {
      timeline->ms = *ms;
      timeline->clock_offset_ns = clock_offset(device_ns, host);
      if (timeline->clock_offset_ns) shift_trace(snapshot, *timeline->clock_offset_ns);
      m.collected.timeline = std::move(timeline);
      m.collected.times.timeline_ms = *ms;
      m.trace = std::move(snapshot);  // the trace whose child windows the samples cover
      m.collected.host = std::move(host);  // timed kernels, on the samples' clock
    }
  }
  if (cupti != nullptr && cupti->metrics_enabled()) {
    trace_snapshot snapshot;
    std::optional<profiling::measured_range> range;
    const auto ms = cupti_runs(
        "measure: measured run",
        [&](const std::function<void()>& run) { range = cupti->measure(name.empty() ? "run" : name, run, warm_up(run)); },
        [&] { return range.has_value(); }, snapshot);
    if (ms) {
      profiling::child_counts children;
      for (const auto& s : snapshot.sites) {
        children.grids += s.outcomes[static_cast<int>(launch_outcome::launched)];
        children.blocks += s.child_blocks;
        children.threads += s.child_threads;
      }
      range->hardware.ms = *ms;
      range->hardware.accounting = profiling::account(range->hardware, range->host, children);
      m.collected.hardware = std::move(range->hardware);
      // the document's host activity: the sampled run's (timed) when there is one; CUPTI does not
      // time the kernels its range profiler measures
      if (!m.collected.host) m.collected.host = std::move(range->host);
      m.collected.times.metrics_ms = *ms;
    }
  }
  if (m.trace) m.summary = profiling::summarize(*m.trace);
  return m;
}

std::string check_text(const measurement& m) {
  if (!m.checked) return "unchecked";
  return m.mismatches == 0 ? "ok" : "FAIL " + std::to_string(m.mismatches);
}

}  // namespace cdpkit::harness
