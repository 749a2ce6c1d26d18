// The report's arithmetic, once per profile: bands (and whether they are a problem), launch tree,
// child timeline, the hardware's view (efficiency ranks, CTA accounting, SM activity, collection
// overhead), baselines, comparison and findings. The renderers only render what analyze() and
// compare() return. Each part has a file of its own under src/analysis/; this one puts a
// profile's analysis together.

#include "detail.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace cdpkit::report {

using detail::fastest_verified;
using detail::make_findings;

namespace {

/// The trace's part of a run's analysis: its launch tree and child timeline, then its launch
/// sites' bands judged on that timing (and the PM timeline, already in `ra`). `fastest`: the run
/// is the fastest verified one of its input.
void analyze_trace(const profile& p, const trace_profile& t, bool fastest, run_analysis& ra) {
  const std::uint64_t sms = std::max<std::uint64_t>(1, p.device.sms);
  if (t.summary.child_launches > 0) {
    ra.tree = build_launch_tree(t);
    ra.timeline = build_child_timeline(t);
    ra.launches_by_depth.assign(64, 0);
    int deepest = 1;
    for (const auto& s : t.sites)
      for (std::size_t d = 0; d < s.depth_hist.size() && d < 64; ++d) {
        ra.launches_by_depth[d] += s.depth_hist[d];
        if (s.depth_hist[d] > 0) deepest = std::max(deepest, static_cast<int>(d));
      }
    ra.launches_by_depth.resize(static_cast<std::size_t>(deepest) + 1);
  }
  fill_evidence evidence;
  evidence.sms = sms;
  if (ra.timeline) evidence.mean_blocks = ra.timeline->mean_blocks;
  if (ra.activity) evidence.mean_sm_active = ra.activity->mean_sm_active;
  evidence.fastest = fastest;
  for (const auto& s : t.sites) {
    if (s.requests == 0 && s.launched == 0) continue;
    site_analysis sa;
    sa.site = &s;
    if (s.launched > 0) {
      sa.bands = underutilized_bands(s, t, sms, p.device.max_threads_per_sm);
      judge_bands(sa.bands, evidence);
    }
    ra.sites.push_back(std::move(sa));
  }
  ra.pending_ceiling = std::min(t.pending_limit, t.pending_budget);
}

}  // namespace

profile_analysis analyze(const profile& p) {
  profile_analysis a;
  a.source = &p;
  a.runs.resize(p.runs.size());
  const auto fastest = fastest_verified(p);
  const auto baseline = detail::baselines(p);
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    run_analysis& ra = a.runs[k];
    ra.baseline = baseline[k];
    if (ra.baseline && r.ms > 0) ra.speedup = p.runs[*ra.baseline].ms / r.ms;
    ra.throughput = r.ms > 0 ? static_cast<double>(r.work) / r.ms / 1e6 : 0;
    ra.overhead = collection_overhead(r);
    if (r.hardware && r.hardware->accounting) ra.accounting = analyze_accounting(*r.hardware->accounting);
    ra.activity = build_sm_activity(r, p.host_activity ? &*p.host_activity : nullptr);
    if (!r.trace) continue;
    const auto best = fastest.find({r.algorithm, r.input});
    analyze_trace(p, *r.trace, best != fastest.end() && best->second == k, ra);
  }
  a.efficiency = rank_efficiencies(p);
  a.overhead = sample_collection_overhead(p);
  a.findings = make_findings(p, a.runs);
  return a;
}

std::vector<finding> findings(const profile& p) { return analyze(p).findings; }

}  // namespace cdpkit::report
