// The hardware's view, SM activity: a run's PM timeline read as its means, its idle share, its
// chart series and what ran when.

#include "detail.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace cdpkit::report {

using detail::add_window;
using detail::merged;
using detail::window;

namespace {

/// The samples as the chart's series: each one, or past max_activity_points their time-weighted
/// means over that many equal bins (each sample when they span no time).
std::vector<activity_point> activity_series(const schema::timeline_profile& tl, std::size_t sm,
                                            std::optional<std::size_t> warps, std::uint64_t t0, std::uint64_t span) {
  const auto ms = [&](std::uint64_t t) { return static_cast<double>(t - t0) / 1e6; };
  std::vector<activity_point> out;
  if (tl.samples.size() <= max_activity_points || span == 0) {
    for (const auto& s : tl.samples)
      out.push_back({ms(s.start_ns), ms(s.end_ns), s.values[sm],
                     warps ? std::optional<double>(s.values[*warps]) : std::nullopt});
    return out;
  }
  const std::size_t n = max_activity_points;
  const double width = static_cast<double>(span) / static_cast<double>(n);
  std::vector<double> cover(n, 0.0), sm_sum(n, 0.0), warps_sum(n, 0.0);
  for (const auto& s : tl.samples) {
    const double a = static_cast<double>(s.start_ns - t0), b = static_cast<double>(s.end_ns - t0);
    add_window(cover, a, b, width, 1.0);
    add_window(sm_sum, a, b, width, s.values[sm]);
    if (warps) add_window(warps_sum, a, b, width, s.values[*warps]);
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (cover[k] <= 0) continue;
    out.push_back({width * static_cast<double>(k) / 1e6, width * static_cast<double>(k + 1) / 1e6, sm_sum[k] / cover[k],
                   warps ? std::optional<double>(warps_sum[k] / cover[k]) : std::nullopt});
  }
  return out;
}

/// The time-weighted mean SM active % over the parts of the samples inside `busy` (disjoint
/// windows by start); unset when they do not overlap.
std::optional<double> mean_inside(const schema::timeline_profile& tl, std::size_t sm, const std::vector<window>& busy) {
  double weight = 0, sum = 0;
  std::size_t j = 0;
  for (const auto& s : tl.samples) {
    while (j < busy.size() && busy[j].second <= s.start_ns) ++j;
    for (std::size_t k = j; k < busy.size() && busy[k].first < s.end_ns; ++k) {
      const double overlap = static_cast<double>(std::min(s.end_ns, busy[k].second) - std::max(s.start_ns, busy[k].first));
      weight += overlap;
      sum += overlap * s.values[sm];
    }
  }
  return weight > 0 ? std::optional<double>(sum / weight) : std::nullopt;
}

}  // namespace

std::optional<sm_activity> build_sm_activity(const run_profile& run, const schema::host_activity_profile* host) {
  if (!run.timeline || run.timeline->samples.empty()) return std::nullopt;
  const schema::timeline_profile& tl = *run.timeline;
  const auto sm = tl.index_of(sm_active_metric);
  if (!sm) return std::nullopt;
  const auto warps = tl.index_of(warps_active_metric);
  sm_activity a;
  a.t0_ns = tl.samples.front().start_ns;
  std::uint64_t t1 = a.t0_ns;
  for (const auto& s : tl.samples) t1 = std::max(t1, s.end_ns);
  a.span_ns = t1 - a.t0_ns;
  a.samples = tl.samples.size();
  // time-weighted (equal weights when every sample is empty)
  a.mean_sm_active = tl.mean(sm_active_metric).value_or(0.0);
  if (warps) a.mean_warps_active = tl.mean(warps_active_metric);
  bool timed = false;
  for (const auto& s : tl.samples) timed = timed || s.end_ns > s.start_ns;
  double weight = 0, idle = 0;
  for (const auto& s : tl.samples) {
    const double w = timed ? static_cast<double>(s.end_ns - s.start_ns) : 1.0;
    weight += w;
    if (s.values[*sm] < idle_sm_active_pct) idle += w;
  }
  if (weight > 0) a.idle_share = idle / weight;
  a.series = activity_series(tl, *sm, warps, a.t0_ns, a.span_ns);
  std::vector<window> children;
  if (run.trace)
    for (const auto& r : run.trace->records)
      if (has_execution_time(r)) children.push_back({r.start_ns, r.end_ns});
  if (!children.empty()) {
    auto busy = children;
    a.in_flight_sm_active = mean_inside(tl, *sm, merged(busy));
  }
  a.children = pack_windows(std::move(children), a.t0_ns, a.span_ns);
  std::vector<window> kernels;
  if (host)
    for (const auto& k : host->kernels)
      if (k.run && *k.run == run.id && k.end_ns != 0)  // untimed (range-profiled) kernels left out
        kernels.push_back({k.start_ns, k.end_ns});
  a.host_kernels = pack_windows(std::move(kernels), a.t0_ns, a.span_ns);
  return a;
}

}  // namespace cdpkit::report
