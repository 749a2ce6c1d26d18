// The findings of a profile: plain sentences with numbers and advice, most important first (failed
// checks, tiny grids, pending launches and fallbacks, divergence, sampled records, the hardware's
// view, the fastest variant of each input).

#include "detail.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace cdpkit::report {

using detail::fixed;
using detail::number;
using detail::percent;

namespace {

/// The findings of the hardware's view of one run: the CTA accounting, and a CDP run whose GPU
/// was mostly idle while its child grids ran.
void hardware_findings(const run_profile& r, const run_analysis& ra, std::vector<finding>& out) {
  const std::string run_name = r.variant + " (" + r.input + ")";
  if (ra.accounting) {
    const accounting_analysis& a = *ra.accounting;
    out.push_back({a.problem() ? severity::problem : severity::info,
                   run_name + ": the hardware ran " + number(a.counts.hardware_ctas) + " CTAs for " +
                       number(a.counts.host_blocks) + " host blocks and " + number(a.counts.child_blocks) +
                       " traced child blocks: " + a.verdict + "."});
  }
  if (ra.activity && r.trace && r.trace->summary.child_launches > 0) {
    const sm_activity& a = *ra.activity;
    const double active = a.in_flight_sm_active.value_or(a.mean_sm_active);
    if (active < mostly_idle_sm_active_pct)
      out.push_back({severity::warning,
                     run_name + ": tiny child grids: the GPU was mostly idle while launches trickled in (SMs active " +
                         fixed(active, 1) + "% of the time on average" +
                         (a.in_flight_sm_active ? " while child grids ran" : "") + "; below " +
                         fixed(idle_sm_active_pct, 0) + "% for " + percent(a.idle_share) +
                         " of the sampled time). Launch fewer, larger grids (a threshold, or one grid per warp or "
                         "block)."});
  }
}

}  // namespace

namespace detail {

std::vector<finding> make_findings(const profile& p, const std::vector<run_analysis>& runs) {
  std::vector<finding> out;
  // 1. failed checks first
  for (const auto& r : p.runs) {
    if (r.checked && !r.verified)
      out.push_back({severity::problem, r.algorithm + " " + r.variant + " on " + r.input +
                                            " FAILED its result check: " + number(r.mismatches) +
                                            " mismatches against the reference."});
    else if (!r.checked)
      out.push_back({severity::warning, r.algorithm + " " + r.variant + " on " + r.input +
                                            " was not checked against a reference."});
  }
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    if (!r.trace) continue;
    const trace_profile& t = *r.trace;
    const trace_summary& sum = t.summary;
    const std::string run_name = r.variant + " (" + r.input + ")";
    // 2. tiny grids per launch site
    for (const site_analysis& sa : runs[k].sites) {
      const site_profile& s = *sa.site;
      if (s.launched == 0) continue;
      const band& tiny = sa.bands.front();
      if (tiny.flagged && tiny.launch_share >= 0.25 && tiny.launches_in >= 32) {
        std::string text = run_name + ": " + percent(tiny.launch_share) + " of the " + number(s.launched) +
                           " child grids launched at " + s.name + " have " + tiny.name +
                           ", yet each launch costs about 1 us on the device's launch path. Launching only "
                           "above T = " + number(t.tiny_grid_work - 1) + " would remove those " +
                           number(tiny.launches_in) +
                           " launches and leave their items to the parents' loops; without a given T, the "
                           "library's thresholded and aggregated policies pick one from the length "
                           "distribution.";
        out.push_back({tiny.launch_share >= 0.5 ? severity::problem : severity::warning, text});
      }
    }
    // 3. pending launches and fallbacks
    const std::uint64_t ceiling = runs[k].pending_ceiling;
    if (sum.fallbacks > 0 || (ceiling > 0 && t.pending_high_water >= ceiling)) {
      std::string text = run_name + ": pending launches reached " + number(t.pending_high_water) + " of " +
                         number(ceiling) + " (device limit " + number(t.pending_limit) + ", budget " +
                         number(t.pending_budget) + "): " + number(sum.fallbacks) +
                         " launches fell back to inline work";
      std::vector<std::string> parts;
      if (sum.fallback_budget > 0) parts.push_back(number(sum.fallback_budget) + " over the budget");
      if (sum.failed_launches > 0) {
        std::string e = number(sum.failed_launches) + " refused by the device";
        std::set<std::string> names;
        for (const auto& s : t.sites)
          for (const auto& f : s.failed_by_error) names.insert(f.name + " (" + std::to_string(f.code) + ")");
        if (!names.empty()) {
          e += ": ";
          bool first = true;
          for (const auto& n : names) {
            e += (first ? "" : ", ") + n;
            first = false;
          }
        }
        parts.push_back(e);
      }
      if (sum.fallback_depth > 0)
        parts.push_back(number(sum.fallback_depth) + " at the depth cap of " + number(t.max_depth_limit));
      if (!parts.empty()) {
        text += " (";
        for (std::size_t j = 0; j < parts.size(); ++j) text += (j ? "; " : "") + parts[j];
        text += ")";
      }
      text += ". No work was lost; a threshold or aggregation would launch fewer, larger grids.";
      out.push_back({sum.fallbacks > 0 ? severity::warning : severity::info, text});
    }
    // 4. divergence: inside child grids, the grids are too small; elsewhere, the loop diverges
    for (const auto& s : t.sites) {
      if (!s.probe.step_efficiency || s.probe.steps == 0) continue;
      const double e = *s.probe.step_efficiency;
      if (e < 0.5 && s.role == site_role::child_probe) {
        out.push_back({severity::warning,
                       run_name + ": inside the child grids (" + s.name + "), warps had " + percent(e) +
                           " of their lanes busy (" + fixed(32 * e, 1) +
                           " of 32): the grids are smaller than their blocks. Launch fewer, larger grids"
                           " (a threshold, or one grid per warp or block)."});
      } else if (e < 0.5) {
        out.push_back({severity::warning,
                       run_name + ": at " + s.name + ", warps ran with " + percent(e) + " of their lanes active (" +
                           fixed(32 * e, 1) + " of 32 on average, over " + number(s.probe.steps) +
                           " warp steps): the loop diverges. Aggregate the segments per warp or block, or balance"
                           " the items across threads."});
      }
    }
    if (t.records.size() < t.records_requested)
      out.push_back({severity::info, run_name + ": the profile holds " + number(t.records.size()) + " of the " +
                                         number(t.records_requested) + " launch records (the device buffer kept " +
                                         number(t.records_stored) +
                                         "): the launch tree and the Chrome trace are sampled, the counters and "
                                         "histograms are exact."});
  }
  // 5. the hardware: CTA accounting and SM activity
  for (std::size_t k = 0; k < p.runs.size(); ++k) hardware_findings(p.runs[k], runs[k], out);
  // 6. fastest per input
  for (const auto& [key, k] : fastest_verified(p)) {
    const auto& base = runs[k].baseline;
    std::string text = "Fastest verified variant for " + key.first + " on " + key.second + ": " +
                       p.runs[k].variant + " (" + fixed(p.runs[k].ms, 3) + " ms";
    const double ratio = base && *base != k && p.runs[k].ms > 0 ? p.runs[*base].ms / p.runs[k].ms : 0.0;
    if (std::isfinite(ratio) && ratio > 0)  // (a time of 5e-324 ms: no "infx")
      text += ", " + fixed(ratio, 1) + "x " + p.runs[*base].variant;
    out.push_back({severity::info, text + ")."});
  }
  std::stable_sort(out.begin(), out.end(), [](const finding& a, const finding& b) {
    return static_cast<int>(a.level) > static_cast<int>(b.level);
  });
  return out;
}

}  // namespace detail

}  // namespace cdpkit::report
