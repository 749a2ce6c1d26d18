// The collector (cdpkit/profiling/collector.hpp): options, stand-aside, range metrics with the
// host activity and the accounting, and PM timelines.

#include <cdpkit/profiling/collector.hpp>

#include <cdpkit/error.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/profiling/pm_sampler.hpp>
#include <cdpkit/profiling/range_profiler.hpp>

#include <cuda_runtime_api.h>

#include "cupti_support.hpp"
#include <cupti_activity.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <utility>

extern char** environ;

namespace cdpkit::profiling {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

/// The absorber's memset out of a range's host log: the earliest transfer, of its size, over
/// before any kernel of the log started (the absorber synchronizes the device before the work).
/// Nothing is dropped when the log lost records (the earliest may then be the work's own).
void drop_absorber_memset(host_activity_log& log) {
  auto& t = log.transfers;
  if (log.dropped != 0 || t.empty()) return;
  const host_transfer& first = t.front();
  if (first.kind != "memset" || first.bytes != detail::first_operation_absorber::bytes) return;
  if (!log.kernels.empty() && log.kernels.front().start_ns < first.end_ns) return;
  t.erase(t.begin());
}
}  // namespace

collect_options parse_collect(const std::string& spec) {
  collect_options o;
  o.trace = false;
  std::stringstream in(spec);
  std::string word;
  bool any = false;
  while (std::getline(in, word, ',')) {
    word = trim(word);
    any = true;
    if (word == "none") continue;
    if (word == "trace") o.trace = true;
    else if (word == "metrics") o.metrics = true;
    else if (word == "timeline") o.timeline = true;
    else if (word == "all") o.trace = o.metrics = o.timeline = true;
    else
      throw input_error("--collect: unknown part '" + word +
                        "' (choose none, trace, metrics, timeline or all, or a comma-separated list)");
  }
  if (!any) throw input_error("--collect: empty (choose none, trace, metrics, timeline or all)");
  if (o.metrics || o.timeline) o.trace = true;  // the accounting and the alignment need the trace
  return o;
}

std::vector<std::string> collect_parts(const collect_options& o) {
  std::vector<std::string> parts;
  if (o.trace) parts.emplace_back("trace");
  if (o.metrics) parts.emplace_back("metrics");
  if (o.timeline) parts.emplace_back("timeline");
  if (parts.empty()) parts.emplace_back("none");
  return parts;
}

std::optional<std::string> foreign_profiler() {
  if (const char* path = std::getenv("CUDA_INJECTION64_PATH"); path != nullptr && *path != '\0') {
    const std::string p(path);
    const char* who = p.find("ToolsInjection") != std::string::npos ? "Nsight Systems or Nsight Compute"
                      : p.find("cdpkit_inject") != std::string::npos ? "cdpkit's injection library"
                                                                      : "a CUPTI tool";
    return std::string(who) + " (CUDA_INJECTION64_PATH=" + p + ")";
  }
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, "NSYS_", 5) == 0) return std::string("Nsight Systems (") + *e + ")";
  return std::nullopt;
}

void drop_range_profiler_kernels(host_activity_log& log) {
  auto& k = log.kernels;
  k.erase(std::remove_if(k.begin(), k.end(), [](const host_kernel& x) { return x.name == range_profiler_kernel; }),
          k.end());
}

std::optional<schema::cta_accounting> account(const schema::hardware_profile& hardware,
                                              const host_activity_log& host, const child_counts& children) {
  const auto ctas = hardware.value("sm__ctas_launched.sum");
  const auto threads = hardware.value("sm__threads_launched.sum");
  if (!ctas || !threads) return std::nullopt;
  // counts as the profile holds them: at most 2^62 (so that differences fit 64-bit integers)
  constexpr double cap = 4611686018427387904.0;
  const auto count = [&](double v) {
    return v > 0 && std::isfinite(v) ? static_cast<std::uint64_t>(std::min(v + 0.5, cap)) : std::uint64_t{0};
  };
  schema::cta_accounting a;
  a.hardware_ctas = count(*ctas);
  a.hardware_threads = count(*threads);
  for (const auto& k : host.kernels) {
    ++a.host_grids;
    a.host_blocks += k.blocks;
    a.host_threads += k.blocks * k.block_threads;
  }
  a.transfers = host.transfers.size();
  a.child_grids = children.grids;
  a.child_blocks = children.blocks;
  a.child_threads = children.threads;
  return a;
}

collector::collector(collect_options options, bool quiet) : options_(std::move(options)), quiet_(quiet) {
  if (options_.range_metrics.empty()) options_.range_metrics = default_range_metrics();
  metrics_ = options_.metrics;
  timeline_ = options_.timeline;
  if (!options_.any_cupti()) return;
  if (const auto other = foreign_profiler()) {
    // one note for both parts: the tool holds CUPTI for the whole run
    const std::string parts = metrics_ && timeline_ ? "metrics and timeline" : metrics_ ? "metrics" : "timeline";
    metrics_ = timeline_ = false;
    note(parts, other.value() + " holds CUPTI: cdpkit stands aside, the program runs as usual");
  }
}

void collector::note(const std::string& part, const std::string& why) {
  if (part == "metrics") metrics_ = false;
  if (part == "timeline") timeline_ = false;
  notes_.push_back(part + ": " + why);
  if (!quiet_) std::cerr << "cdpkit collector: " << notes_.back() << "\n";
}

schema::collector_profile collector::profile() const { return {collect_parts(options_), notes_, std::nullopt}; }

std::optional<measured_range> collector::measure(const std::string& name, const std::function<void()>& work,
                                                 const std::function<void()>& warm_up) {
  const auto unmeasured = [&] {
    if (warm_up) warm_up();
    work();
  };
  if (!metrics_) {
    unmeasured();
    return std::nullopt;
  }
  // a fresh name per range: CUPTI merges the ranges of one name
  std::size_t seen = 0;
  for (const auto& n : range_names_) seen += n == name;
  range_names_.push_back(name);
  const std::string range = seen == 0 ? name : name + "#" + std::to_string(seen + 1);

  CDPKIT_NVTX_SCOPE("collector::measure");
  // set up and taken down per range: the PM sampler cannot start while a range profiler is
  // enabled (CUPTI_ERROR_HARDWARE_BUSY on the H200)
  range_profiler rp(options_.range_metrics, warm_up ? 2 : 1);
  if (!rp.available()) {
    note("metrics", rp.unavailable_reason());
    unmeasured();
    return std::nullopt;
  }
  if (rp.passes() != 1) {
    note("metrics", "the metrics need " + std::to_string(rp.passes()) +
                        " passes; the collector measures one-pass metric sets (a measured run is not "
                        "repeated inside its range)");
    unmeasured();
    return std::nullopt;
  }
  host_activity own;
  host_activity* activity = open_activity(own, "metrics");
  if (activity == nullptr) {
    unmeasured();
    return std::nullopt;
  }
  detail::first_operation_absorber absorber;
  bool absorbed = false;
  try {
    rp.measure(
        range,
        [&] {
          if (warm_up) (void)activity->take();  // the warm-up's records are not this run's
          absorbed = absorber.absorb();
          work();
        },
        warm_up);
  } catch (...) {
    (void)close_activity(*activity, own);
    throw;
  }
  measured_range out;
  out.host = close_activity(*activity, own);
  drop_range_profiler_kernels(out.host);
  if (absorbed) drop_absorber_memset(out.host);
  if (!activity->available()) {
    note("metrics", "the host activity (for the CTA accounting): " + activity->unavailable_reason());
    return std::nullopt;
  }
  const auto results = rp.results();
  if (!rp.available() || results.empty()) {
    note("metrics", rp.available() ? "CUPTI returned no range" : rp.unavailable_reason());
    return std::nullopt;
  }
  out.hardware.range = range;
  out.hardware.passes = rp.passes();
  // the measured range (after a warm-up range, when there is one)
  const auto measured = std::find_if(results.begin(), results.end(), [&](const range_metrics& r) { return r.name == range; });
  if (measured == results.end()) {
    note("metrics", "CUPTI returned no range named '" + range + "'");
    return std::nullopt;
  }
  for (const auto& v : measured->values)
    if (std::isfinite(v.value)) out.hardware.metrics.emplace_back(v.metric, v.value);
  return out;
}

std::optional<schema::timeline_profile> collector::sample(const std::function<void()>& work,
                                                          host_activity_log* host,
                                                          const std::function<void()>& warm_up) {
  const auto unsampled = [&] {
    if (warm_up) warm_up();
    work();
  };
  if (!timeline_) {
    unsampled();
    return std::nullopt;
  }
  CDPKIT_NVTX_SCOPE("collector::sample");
  pm_sampler pm(default_pm_metrics(), options_.interval_ns);
  if (!pm.available()) {
    note("timeline", pm.unavailable_reason());
    unsampled();
    return std::nullopt;
  }
  host_activity own;
  detail::first_operation_absorber absorber;
  std::uint64_t sampled_from = 0;  // CUPTI's clock after the warm-up (0: no warm-up)
  bool no_clock = false;           // CUPTI did not say when the warm-up ended
  pm_timeline t = pm.sample([&] {
    if (warm_up) {
      warm_up();
      if (cuptiGetTimestamp(&sampled_from) != CUPTI_SUCCESS || sampled_from == 0) no_clock = true;
    }
    (void)absorber.absorb();  // before the log opens: not in it
    host_activity* activity = host != nullptr ? open_activity(own, "timeline") : nullptr;
    if (activity == nullptr) {
      work();
      return;
    }
    try {
      work();
    } catch (...) {
      (void)close_activity(*activity, own);
      throw;
    }
    *host = close_activity(*activity, own);
    if (!activity->available() && !host_activity_noted_) {  // the log is empty: say why, once
      host_activity_noted_ = true;
      note("host activity", activity->unavailable_reason());
    }
    drop_range_profiler_kernels(*host);
  });
  if (!pm.available()) {
    note("timeline", pm.unavailable_reason());
    return std::nullopt;
  }
  if (no_clock) {  // the warm-up's samples cannot be told from the work's: no timeline rather than a wrong one
    note("timeline", "cuptiGetTimestamp failed after the warm-up: the warm-up's samples cannot be left out");
    return std::nullopt;
  }
  if (warm_up) {  // the warm-up's samples (those over before the work began) go
    const auto first = std::find_if(t.samples.begin(), t.samples.end(),
                                    [&](const pm_sample& s) { return s.end_ns > sampled_from; });
    t.samples.erase(t.samples.begin(), first);
  }
  return timeline_profile_of(std::move(t));
}

void collector::activity_hold::release() noexcept {
  if (c_ != nullptr) c_->held_.reset();  // stops the collection
  c_ = nullptr;
}

collector::activity_hold collector::hold_host_activity() {
  if ((!metrics_ && !timeline_) || held_) return activity_hold();
  held_.emplace();
  held_->start();
  if (!held_->available()) {  // measure() and sample() enable it themselves (and note a failure)
    held_.reset();
    return activity_hold();
  }
  return activity_hold(this);
}

host_activity* collector::open_activity(host_activity& own, const char* part) {
  if (held_ && held_->available()) {
    (void)held_->take();  // what ran before is not this run's
    if (held_->available()) return &*held_;
  }
  if (own.available()) own.start();
  if (own.available()) return &own;
  if (std::string(part) == "metrics") {
    note("metrics", "the host activity (for the CTA accounting): " + own.unavailable_reason());
  } else if (!host_activity_noted_) {  // the timeline goes on without the host kernels
    host_activity_noted_ = true;
    note("host activity", own.unavailable_reason());
  }
  return nullptr;
}

host_activity_log collector::close_activity(host_activity& a, host_activity& own) {
  return &a == &own ? own.stop() : a.take();
}

schema::timeline_profile timeline_profile_of(pm_timeline t) {
  schema::timeline_profile out;
  out.interval_ns = t.interval_ns;
  out.metrics = t.metrics;
  out.overflow = t.overflow;
  out.dropped = t.dropped;
  std::size_t first = 0;
  if (!t.samples.empty() && t.samples.front().end_ns - t.samples.front().start_ns > 4 * t.interval_ns)
    first = 1;  // opened at enable time: spans the set-up, not the work
  for (std::size_t k = first; k < t.samples.size(); ++k) {
    auto& s = t.samples[k];
    if (!out.samples.empty() && s.start_ns < out.samples.back().end_ns) s.start_ns = out.samples.back().end_ns;
    if (s.end_ns < s.start_ns) continue;
    for (double& v : s.values)
      if (!std::isfinite(v)) v = 0;
    out.samples.push_back({s.start_ns, s.end_ns, std::move(s.values)});
  }
  return out;
}

}  // namespace cdpkit::profiling
