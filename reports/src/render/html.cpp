// The HTML report: inline CSS, inline SVG charts (svg.hpp), a few lines of optional JavaScript
// (sortable tables); everything readable without scripts and offline. Each profile is analysed
// once (analyze()); the sections below only render the analysis and the profile's fields. The
// sections are numbered as they appear: those on the hardware (hardware vs
// probes, CTA accounting, SM activity over time, collection overhead) only where a profile has
// what they show; the collector's notes come first.

#include "svg.hpp"

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/html.hpp>
#include <cdpkit/schema/text.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string_view>

namespace cdpkit::report {

namespace {

using render::esc;
std::string fmt(double v, int digits) { return schema::fixed(v, digits); }
std::string num(std::uint64_t v) { return schema::grouped(v); }
std::string pct(double share) { return schema::percent(share); }

std::string badge(bool ok, const std::string& text) {
  return std::string("<span class=\"badge ") + (ok ? "ok" : "bad") + "\">" + esc(text) + "</span>";
}

const char* css = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;margin:0 auto;max-width:1100px;padding:0 16px 40px}
h1{font-size:24px;margin:18px 0 4px}h2{font-size:19px;border-bottom:2px solid #0072B2;padding-bottom:2px;margin-top:30px}
h3{font-size:15px;margin:18px 0 6px}.wrap{overflow-x:auto;max-width:100%}
caption{text-align:left;font-size:12px;color:#555;padding:2px 0}table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f0f4f8;cursor:pointer}td.l,th.l{text-align:left}tr.sum td{font-weight:bold;border-top:2px solid #999}
.badge{padding:1px 6px;border-radius:3px;font-weight:600}.ok{background:#d7f0e6;color:#00573f}.bad{background:#f9d9c8;color:#8a2f00}
.chart{width:100%;max-width:460px;height:auto;margin:4px 8px 8px 0;vertical-align:top}.wide{max-width:900px}
.ct{font-size:13px;font-weight:600;text-anchor:middle}.xl,.xl2{font-size:10px}.xl{text-anchor:middle}.yl{font-size:10px;text-anchor:end}
.yl2{font-size:11px}.al{font-size:11px;text-anchor:middle;fill:#444}.band{font-size:10px;fill:#8a5a00}.in{font-size:11px;fill:#fff}
.grid{stroke:#ddd}.note{color:#555;font-style:italic}.finding{margin:4px 0;padding:6px 10px;border-left:5px solid #999;background:#fafafa}
.problem{border-color:#D55E00;background:#fdf0e8}.warning{border-color:#E69F00;background:#fff8e6}.info{border-color:#0072B2}
.charts{display:flex;flex-wrap:wrap}.up{color:#00573f}.down{color:#8a2f00}
figure.picture{margin:8px 0 16px}figure.picture img{max-width:100%;height:auto;border:1px solid #ddd}figcaption{font-size:12px;color:#555}
@media print{body{max-width:none}h2{break-after:avoid}.chart{break-inside:avoid}th{cursor:auto}}
)";

// Sorting on header click: optional, the tables read fine without it.
const char* script = R"(
document.querySelectorAll('table.sortable th').forEach(function(th){var i=th.cellIndex;th.addEventListener('click',function(){
var tb=th.closest('table').tBodies[0];var rows=Array.prototype.slice.call(tb.rows);var asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
rows.sort(function(a,b){var x=a.cells[i].dataset.v||a.cells[i].textContent,y=b.cells[i].dataset.v||b.cells[i].textContent;
var nx=parseFloat(x),ny=parseFloat(y);var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return asc?c:-c;});
rows.forEach(function(r){tb.appendChild(r);});});});
)";

std::string run_title(const run_profile& r) { return r.algorithm + " · " + r.variant + " · " + r.input; }

/// A column of a table's header row: its title, and whether its cells are left-aligned.
struct column {
  std::string title;
  bool left = false;
};

/// Opens a table in a box that scrolls sideways when the window is narrower than the table,
/// with its caption and a header row of column headers (scope="col"); the rows of a sortable
/// table go in a <tbody>. close_table() closes what it opened.
void open_table(std::ostringstream& o, const std::string& caption, const std::vector<column>& columns,
                bool sortable = false) {
  o << "<div class=\"wrap\"><table" << (sortable ? " class=\"sortable\"" : "") << "><caption>" << esc(caption)
    << "</caption>" << (sortable ? "<thead>" : "") << "<tr>";
  for (const column& c : columns) o << "<th scope=\"col\"" << (c.left ? " class=\"l\"" : "") << ">" << esc(c.title) << "</th>";
  o << "</tr>" << (sortable ? "</thead><tbody>" : "");
}

void close_table(std::ostringstream& o, bool sortable = false) { o << (sortable ? "</tbody>" : "") << "</table></div>"; }

void summary_section(std::ostringstream& o, const profile_analysis& a) {
  const profile& p = *a.source;
  const char* row_header = "</td></tr><tr><th scope=\"row\" class=\"l\">";
  o << "<h3>" << esc(p.path) << "</h3><div class=\"wrap\"><table><caption>the profile</caption>"
    << "<tr><th scope=\"row\" class=\"l\">device</th><td class=\"l\">" << esc(p.device.name) << " (cc "
    << esc(p.device.cc) << ", " << p.device.sms << " SMs)" << row_header << "driver / runtime</th><td class=\"l\">"
    << p.device.driver << " / " << p.device.runtime << row_header << "build</th><td class=\"l\">";
  for (const char* key : {"version", "commit", "build_type", "cuda_architectures", "cuda_compiler"})
    if (p.build.contains(key) && p.build[key].is_string()) o << esc(key) << " " << esc(p.build[key].get<std::string>()) << "; ";
  o << row_header << "program / when</th><td class=\"l\">" << esc(p.program) << ", " << esc(p.created) << "</td></tr>";
  close_table(o);
  open_table(o, "every run: its time, throughput, ratio to its baseline, child grids and check",
             {{"algorithm", true}, {"variant", true}, {"input", true}, {"ms"}, {"throughput"}, {"vs baseline"},
              {"child launches"}, {"tiny grids"}, {"warp eff."}, {"check", true}},
             true);
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    const run_analysis& ra = a.runs[k];
    // A rate over a time of 0 is not measured, and over a subnormal time (5e-324 ms) it is inf:
    // both are shown as '-', not as "0.00" or "inf".
    const std::string ratio =
        ra.speedup && std::isfinite(*ra.speedup) ? fmt(*ra.speedup, 2) + "x " + p.runs[*ra.baseline].variant : "-";
    const std::string throughput = r.ms > 0 && std::isfinite(ra.throughput)
                                       ? fmt(ra.throughput, 2) + " G" + r.work_unit + "/s"
                                       : std::string("-");
    std::string launches = "-", tiny = "-", eff = "-";
    if (r.trace) {
      const trace_summary& s = r.trace->summary;
      launches = num(s.child_launches);
      if (s.child_launches > 0) tiny = pct(s.tiny_grid_share);
      if (s.probe_steps > 0) eff = fmt(s.warp_efficiency, 3);
    }
    o << "<tr><td class=\"l\">" << esc(r.algorithm) << "</td><td class=\"l\">" << esc(r.variant) << "</td><td class=\"l\">"
      << esc(r.input) << "</td><td data-v=\"" << r.ms << "\">" << fmt(r.ms, 3) << "</td><td>" << esc(throughput)
      << "</td><td>" << esc(ratio) << "</td><td>" << launches << "</td><td>" << tiny
      << "</td><td>" << eff << "</td><td class=\"l\">"
      << (r.checked ? badge(r.verified, r.verified ? "pass" : "FAIL (" + num(r.mismatches) + ")") : badge(false, "unchecked"))
      << "</td></tr>";
  }
  close_table(o, true);
}

void child_grid_section(std::ostringstream& o, const profile_analysis& a) {
  const profile& p = *a.source;
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    if (!r.trace || a.runs[k].sites.empty()) continue;
    o << "<h3>" << esc(run_title(r)) << "</h3>";
    for (const site_analysis& sa : a.runs[k].sites) {
      const site_profile& s = *sa.site;
      if (s.requests == 0) continue;
      o << "<p><b>" << esc(s.name) << "</b>: " << num(s.requests) << " requests, " << num(s.launched) << " launched, "
        << num(s.fallbacks()) << " done inline.</p>";
      if (sa.bands.empty()) continue;
      const auto& bands = sa.bands;
      const auto label = [](const band& b, const std::string& what) { return (b.flagged ? "underused: " : "") + what; };
      o << "<div class=\"charts\">";
      o << render::log2_chart("work items per child grid", s.work_log2,
                              bands[0].histogram == "work" ? bands[0].last_bucket : -1, "work items",
                              label(bands[0], "< " + std::to_string(r.trace->tiny_grid_work) + " items"),
                              bands[0].flagged);
      o << render::log2_chart("blocks per child grid", s.blocks_log2, bands[1].last_bucket, "blocks",
                              label(bands[1], "< " + std::to_string(p.device.sms) + " blocks"), bands[1].flagged);
      o << render::log2_chart("threads per child grid", s.threads_log2, bands[2].last_bucket, "threads",
                              label(bands[2], "below full occupancy"), bands[2].flagged);
      o << "</div>";
      open_table(o, "the underutilized bands of " + s.name + "'s child grids",
                 {{"underutilized band", true}, {"launches in band"}, {"share of launches"}, {"share of launched threads"},
                  {"verdict", true}});
      for (const auto& b : bands) {
        o << "<tr><td class=\"l\">" << esc(b.name) << "</td><td>" << num(b.launches_in) << " of " << num(b.launches_total)
          << "</td><td>" << pct(b.launch_share) << "</td><td>"
          << (b.thread_share ? pct(*b.thread_share) + (b.thread_share_sampled ? " (sampled)" : "") : "-")
          << "</td><td class=\"l\">" << (b.flagged ? "underused: " : "informational: ") << esc(b.reason) << "</td></tr>";
      }
      close_table(o);
    }
  }
}

void tree_section(std::ostringstream& o, const profile_analysis& a) {
  const profile& p = *a.source;
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    const run_analysis& ra = a.runs[k];
    if (!r.trace || !ra.tree) continue;
    const launch_tree& tree = *ra.tree;
    o << "<h3>" << esc(run_title(r)) << "</h3>" << render::icicle(tree);
    if (tree.from_sample) o << "<p class=\"note\">From the first " << num(r.trace->records.size())
                            << " launch records of " << num(r.trace->records_requested) << ".</p>";
    open_table(o, "child grids by launching site and depth",
               {{"parent", true}, {"child site", true}, {"depth"}, {"launches"}});
    for (const auto& e : tree.edges) {
      const std::string parent = e.parent_site == -1   ? "host-launched grid"
                                 : e.parent_site == -2 ? "(record not kept)"
                                                       : r.trace->site_name(e.parent_site);
      o << "<tr><td class=\"l\">" << esc(parent) << "</td><td class=\"l\">" << esc(r.trace->site_name(e.child_site))
        << "</td><td>" << e.depth << "</td><td>" << num(e.launches) << "</td></tr>";
    }
    close_table(o);
    if (ra.timeline) {  // the child grids' execution windows
      const child_timeline& tl = *ra.timeline;
      const double span_us = static_cast<double>(tl.span_ns) / 1000.0;
      const double peak = *std::max_element(tl.blocks.begin(), tl.blocks.end());
      o << "<p>" << num(tl.timed_grids) << " child grids measured over " << fmt(span_us, 1)
        << " µs from the first request; at least one of them ran " << pct(tl.busy_share)
        << " of that time. The most child blocks in flight, averaged over one of " << tl.blocks.size()
        << " time bins, was " << fmt(peak, 1) << " (the GPU has " << num(p.device.sms) << " SMs)";
      if (peak < static_cast<double>(p.device.sms))
        o << ": the child grids alone never held one block per SM (besides what the host-launched grid "
             "ran), so unless that grid kept it busy, most of the GPU waited while the launches trickled in";
      o << ".</p>";
      o << render::timeline_chart("child blocks in flight (all blocks of every running child grid)", tl.blocks,
                                  span_us, static_cast<double>(p.device.sms),
                                  num(p.device.sms) + " SMs: one block each", "blocks");
      o << render::timeline_chart("child grids in flight", tl.grids, span_us, 0, "", "grids");
      open_table(o, "measured child-grid durations by site and depth",
                 {{"site", true}, {"depth"}, {"launches"}, {"measured"}, {"mean µs"}, {"longest µs"}, {"busy µs"}});
      // the rows that ran longest, at most 50
      std::vector<const tree_node*> timed;
      for (const auto& n : tree.nodes)
        if (n.timed > 0) timed.push_back(&n);
      std::stable_sort(timed.begin(), timed.end(),
                       [](const tree_node* x, const tree_node* y) { return x->busy_ns > y->busy_ns; });
      const std::size_t shown = std::min<std::size_t>(timed.size(), 50);
      for (std::size_t i = 0; i < shown; ++i) {
        const tree_node& n = *timed[i];
        o << "<tr><td class=\"l\">" << esc(n.site_name) << "</td><td>" << n.depth << "</td><td>" << num(n.launches)
          << "</td><td>" << num(n.timed) << "</td><td>"
          << fmt(static_cast<double>(n.exec_ns_sum) / static_cast<double>(n.timed) / 1000.0, 1) << "</td><td>"
          << fmt(static_cast<double>(n.exec_ns_max) / 1000.0, 1) << "</td><td>"
          << fmt(static_cast<double>(n.busy_ns) / 1000.0, 1) << "</td></tr>";
      }
      close_table(o);
      if (shown < timed.size())
        o << "<p class=\"note\">The " << shown << " of " << num(timed.size())
          << " rows that ran longest (busy time).</p>";
      o << "<p class=\"note\">mean and longest: a child grid from its first block's start to its last "
           "block's end; busy: how long at least one grid of the row ran (the union of their windows).</p>";
    } else if (!r.trace->records.empty()) {
      o << "<p class=\"finding warning\">No child grid of this run has a measured execution window (its launch records "
           "carry no first-block start and last-block end), so there is no timeline of child grids in flight: "
           "the records say when each grid was asked for, not how long it ran.</p>";
    }
    std::vector<std::string> labels;
    for (std::size_t d = 0; d < ra.launches_by_depth.size(); ++d) labels.push_back(std::to_string(d));
    o << render::bar_chart("child grids by depth (all sites, exact)", ra.launches_by_depth, labels, -1,
                           "depth of the child grid", "child grids", "");
  }
}

void pending_section(std::ostringstream& o, const profile_analysis& a) {
  const profile& p = *a.source;
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    if (!r.trace || r.trace->summary.launch_requests == 0) continue;
    const trace_profile& t = *r.trace;
    const std::uint64_t ceiling = a.runs[k].pending_ceiling;
    o << "<h3>" << esc(run_title(r)) << "</h3>"
      << render::gauge(t.pending_high_water, ceiling,
                       "pending high water " + num(t.pending_high_water) + " of " + num(ceiling) + " (device limit " +
                           num(t.pending_limit) + ", budget " + num(t.pending_budget) + ")");
    open_table(o, "launch requests and what became of them, by site",
               {{"site", true}, {"requests"}, {"launched"}, {"over budget"}, {"depth cap"}, {"launch failed"},
                {"errors", true}, {"items done inline"}});
    for (const auto& s : t.sites) {
      if (s.requests == 0) continue;
      std::string errors;
      for (const auto& e : s.failed_by_error) errors += e.name + " (" + std::to_string(e.code) + "): " + num(e.count) + " ";
      o << "<tr><td class=\"l\">" << esc(s.name) << "</td><td>" << num(s.requests) << "</td><td>" << num(s.launched)
        << "</td><td>" << num(s.fallback_budget) << "</td><td>" << num(s.fallback_depth) << "</td><td>"
        << num(s.fallback_error) << "</td><td class=\"l\">" << esc(errors.empty() ? "-" : errors) << "</td><td>"
        << num(s.inline_items) << "</td></tr>";
    }
    close_table(o);
  }
}

void divergence_section(std::ostringstream& o, const profile& p, bool hardware_section) {
  for (const auto& r : p.runs) {
    if (!r.trace) continue;
    bool header = false;
    for (const auto& s : r.trace->sites) {
      if (s.probe.steps == 0) continue;
      if (!header) {
        o << "<h3>" << esc(run_title(r)) << "</h3>";
        header = true;
      }
      o << "<p><b>" << esc(s.name) << "</b>: " << num(s.probe.steps) << " probed warp steps, active lanes per step "
        << (s.probe.step_efficiency ? fmt(32 * *s.probe.step_efficiency, 1) + " of 32 (" + pct(*s.probe.step_efficiency) + ")" : "-")
        << "; mean per-warp efficiency "
        << (s.probe.mean_warp_efficiency ? fmt(*s.probe.mean_warp_efficiency, 3) : "-") << " over " << num(s.probe.warps)
        << " warps.</p><div class=\"charts\">";
      std::vector<std::uint64_t> lanes(s.probe.lanes_hist.begin(), s.probe.lanes_hist.end());
      std::vector<std::string> lane_labels;
      for (int k = 1; k <= 32; ++k) lane_labels.push_back(std::to_string(k));
      o << render::bar_chart("warp steps by active lanes", lanes, lane_labels, 14, "active lanes in the warp step",
                             "warp steps", "under half the lanes");
      std::vector<std::uint64_t> eff(s.probe.efficiency_hist.begin(), s.probe.efficiency_hist.end());
      std::vector<std::string> eff_labels;
      for (int k = 0; k < 32; ++k) eff_labels.push_back(fmt(k / 32.0, 2));
      o << render::bar_chart("warps by efficiency", eff, eff_labels, 15, "active lanes / 32, averaged over the warp's steps",
                             "warps", "under 0.5") << "</div>";
    }
  }
  if (hardware_section)
    o << "<p class=\"note\">The hardware's warp efficiency (CUPTI's range profiler: thread instructions over 32 "
         "times warp instructions, child grids included) is ranked against the probes' in the section Hardware vs "
         "probes.</p>";
  else
    o << "<p class=\"note\">Hardware divergence counters (smsp__thread_inst_executed_per_inst_executed.ratio) are not in "
         "these profiles: they come from the CUPTI collector, which was not active. The probes above work inside child "
         "grids, where CUPTI cannot see.</p>";
}

/// The profile's name as a heading, when the report holds several.
void profile_heading(std::ostringstream& o, const profile_analysis& a, bool many) {
  if (many) o << "<h3>" << esc(a.source->path) << "</h3>";
}

/// A value and its rank, or "-" for both.
std::string value_and_rank(const std::optional<double>& v, const std::optional<int>& rank) {
  return "<td>" + (v ? fmt(*v, 3) : std::string("-")) + "</td><td>" + (rank ? std::to_string(*rank) : std::string("-")) +
         "</td>";
}

void efficiency_section(std::ostringstream& o, const profile_analysis& a) {
  const profile& p = *a.source;
  for (const efficiency_ranking& g : a.efficiency) {
    o << "<h3>" << esc(g.algorithm + " · " + g.input) << "</h3>";
    open_table(o, "warp efficiency by the probes and by the hardware, ranked",
               {{"variant", true}, {"ms"}, {"probes' warp eff."}, {"rank"}, {"hardware warp eff."}, {"rank"}}, true);
    for (const efficiency_row& row : g.rows) {
      const run_profile& r = p.runs[row.run];
      o << "<tr><td class=\"l\">" << esc(r.variant) << "</td><td data-v=\"" << r.ms << "\">" << fmt(r.ms, 3) << "</td>"
        << value_and_rank(row.probes, row.probe_rank) << value_and_rank(row.hardware, row.hardware_rank) << "</tr>";
    }
    close_table(o, true);
    o << "<p>" << esc(g.verdict) << "</p>";
  }
  o << "<p class=\"note\">Rank 1: the most efficient. The probes count active lanes per warp step at the probed "
       "sites; the hardware counts every instruction of the run (thread instructions / (32 x warp instructions)), over "
       "one more run of the variant.</p>";
}

void accounting_section(std::ostringstream& o, const profile_analysis& a) {
  const profile& p = *a.source;
  const auto signed_num = [](std::int64_t d) { return (d > 0 ? "+" : "") + std::to_string(d); };
  open_table(o, "the CTA accounting of every measured run",
             {{"run", true}, {"hardware CTAs"}, {"host blocks (grids)"}, {"traced child blocks (grids)"},
              {"difference: CTAs / threads"}, {"verdict", true}});
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    if (!a.runs[k].accounting) continue;
    const accounting_analysis& acc = *a.runs[k].accounting;
    const auto& c = acc.counts;
    o << "<tr><td class=\"l\">" << esc(run_title(p.runs[k])) << "</td><td>" << num(c.hardware_ctas) << "</td><td>"
      << num(c.host_blocks) << " (" << num(c.host_grids) << ")</td><td>" << num(c.child_blocks) << " ("
      << num(c.child_grids) << ")</td><td>" << signed_num(acc.difference) << " / " << signed_num(acc.thread_difference)
      << "</td><td class=\"l\">" << badge(!acc.problem(), acc.verdict) << "</td></tr>";
  }
  close_table(o);
  o << "<p class=\"note\">difference: what the hardware launched (sm__ctas_launched.sum, "
       "sm__threads_launched.sum) minus the host-launched blocks (CUPTI's activity records) minus the child blocks the "
       "trace says were launched. The CUDA device runtime runs a few CTAs of its own, of one thread to one warp, "
       "beside a program that launches from the device; copies and memsets may run the driver's kernels.</p>";
}

void activity_section(std::ostringstream& o, const profile_analysis& a) {
  const profile& p = *a.source;
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    if (!a.runs[k].activity) continue;
    const sm_activity& act = *a.runs[k].activity;
    const run_profile& r = p.runs[k];
    o << "<h3>" << esc(run_title(r)) << "</h3><p>" << num(act.samples) << " PM samples over "
      << fmt(static_cast<double>(act.span_ns) / 1e6, 3) << " ms: SM active " << fmt(act.mean_sm_active, 1)
      << "% on average";
    if (act.mean_warps_active) o << " (warps active " << fmt(*act.mean_warps_active, 1) << "%)";
    o << "; SM active below " << fmt(idle_sm_active_pct, 0) << "% for " << pct(act.idle_share) << " of the sampled time";
    if (act.in_flight_sm_active) o << "; " << fmt(*act.in_flight_sm_active, 1) << "% while child grids ran";
    o << ".";
    if (r.timeline->overflow || r.timeline->dropped > 0)
      o << " The sampler dropped " << num(r.timeline->dropped) << " samples" << (r.timeline->overflow ? " (overflow)" : "")
        << ".";
    if (r.timeline->clock_offset_ns)
      o << " The child grids are on CUPTI's clock: the device trace's clock read "
        << fmt(static_cast<double>(*r.timeline->clock_offset_ns) / 1e3, 1) << " &micro;s off it in this run.";
    else
      o << " The trace's clock was not compared with CUPTI's in this run: the child grids may be shifted.";
    o << "</p>" << render::activity_chart(act);
  }
}

/// A collection run's time and its ratio to the timed run, or "-".
std::string overhead_cell(const std::optional<double>& ms, const std::optional<double>& ratio) {
  return "<td>" + (ms && ratio ? fmt(*ms, 3) + " ms (" + fmt(*ratio, 2) + "x)" : std::string("-")) + "</td>";
}

/// The middle of `v` (the mean of the two middle values for an even count); `v` is not empty.
double middle(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The traced and untraced pairs behind a run's trace overhead: their count and medians.
std::string pairs_cell(const schema::collect_times& c) {
  if (c.traced_runs_ms.empty() || c.baseline_runs_ms.empty()) return "<td>-</td>";
  return "<td>" + std::to_string(c.traced_runs_ms.size()) + ": " + fmt(middle(c.traced_runs_ms), 3) + " / " +
         fmt(middle(c.baseline_runs_ms), 3) + " ms</td>";
}

void overhead_section(std::ostringstream& o, const profile_analysis& a) {
  const profile& p = *a.source;
  open_table(o, "what each collection cost, run by run",
             {{"run", true}, {"timed ms"}, {"baseline ms"}, {"traced"}, {"metrics"}, {"timeline"},
              {"pairs: median traced / untraced"}});
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const collect_overhead& c = a.runs[k].overhead;
    if (!c.any()) continue;
    const run_profile& r = p.runs[k];
    o << "<tr><td class=\"l\">" << esc(run_title(r)) << "</td><td>" << fmt(r.ms, 3) << "</td><td>"
      << (r.collect.baseline_ms ? fmt(*r.collect.baseline_ms, 3) : std::string("-")) << "</td>"
      << overhead_cell(r.collect.traced_ms, c.traced) << overhead_cell(r.collect.metrics_ms, c.metrics)
      << overhead_cell(r.collect.timeline_ms, c.timeline) << pairs_cell(r.collect) << "</tr>";
  }
  const sample_overhead& w = a.overhead;
  const auto sum_cell = [](const sample_overhead::part& part) { return overhead_cell(part.ms, part.ratio()); };
  if (w.any())
    o << "<tr class=\"sum\"><td class=\"l\">the whole sample (sums over its runs)</td><td>-</td><td>-</td>"
      << sum_cell(w.traced) << sum_cell(w.metrics) << sum_cell(w.timeline) << "<td>-</td></tr>";
  close_table(o);
  o << "<p class=\"note\">The whole sample: per part, its collection runs' times summed over the same "
       "runs' baselines summed: what collecting costs the sample's user, each run weighed by its time. A part's "
       "cost per run is mostly fixed (its setup, its copies), so runs of a fraction of a millisecond show large "
       "ratios of their own. Each collection's time (the fastest of its runs) over the baseline (1.02x: 2% "
       "slower): the fastest of untraced runs made as the collection runs are, the preparation waited for and "
       "then the run between two events (the timed runs overlap a run's submission with the GPU's work, which matters for runs of a "
       "fraction of a millisecond). Without a baseline in the profile, over the timed median. The "
       "trace, the hardware metrics and the PM timeline are each taken in a run of their own. Pairs: how many "
       "traced and untraced runs alternated, and their medians: a traced median near the untraced one beside a "
       "large ratio of the fastest says the untraced runs are spread (a fast mode the traced runs miss, or "
       "noise); '-': not kept (profiles written before them).</p>";
}

/// The collector's notes (why a part stood aside), at the top of the report.
void collector_notes(std::ostringstream& o, const std::vector<profile>& profiles) {
  for (const auto& p : profiles)
    if (p.collector && p.collector->incomplete)
      o << "<div class=\"finding problem\"><b>Incomplete profile</b> (" << esc(p.path) << "): "
        << esc(*p.collector->incomplete)
        << ". It holds what was collected until then; work after that point is missing.</div>";
  for (const auto& p : profiles) {
    if (!p.collector || p.collector->notes.empty()) continue;
    o << "<div class=\"finding warning\"><b>Collector</b> (" << esc(p.path) << ", asked for";
    for (const auto& part : p.collector->requested) o << " " << esc(part);
    o << "):<ul>";
    for (const auto& n : p.collector->notes) o << "<li>" << esc(n) << "</li>";
    o << "</ul></div>";
  }
}

void comparison_section(std::ostringstream& o, const std::vector<profile>& profiles) {
  if (profiles.size() < 2) {
    o << "<p class=\"note\">Give several profiles (before / after, or variants) to compare them here.</p>";
    return;
  }
  std::vector<column> columns = {{"algorithm", true}, {"input", true}, {"variant", true}};
  for (std::size_t k = 0; k < profiles.size(); ++k) {
    columns.push_back({"ms [" + std::to_string(k + 1) + "]"});
    if (k > 0) columns.push_back({"delta [" + std::to_string(k + 1) + "]"});
  }
  open_table(o, "every (algorithm, input, variant) in each profile", columns, true);
  for (const comparison_row& row : compare(profiles)) {
    o << "<tr><td class=\"l\">" << esc(row.algorithm) << "</td><td class=\"l\">" << esc(row.input)
      << "</td><td class=\"l\">" << esc(row.variant) << "</td>";
    for (std::size_t k = 0; k < profiles.size(); ++k) {
      o << "<td>" << (row.ms[k] ? fmt(*row.ms[k], 3) : "-") << "</td>";
      if (k > 0) {
        if (const auto& d = row.delta[k]) {
          o << "<td class=\"" << (*d <= 0 ? "up" : "down") << "\">" << (*d > 0 ? "+" : "") << fmt(100 * *d, 1) << "%</td>";
        } else {
          o << "<td>-</td>";
        }
      }
    }
    o << "</tr>";
  }
  close_table(o, true);
  o << "<p class=\"note\">Files: ";
  for (std::size_t k = 0; k < profiles.size(); ++k) o << "[" << k + 1 << "] " << esc(profiles[k].path) << " ";
  o << ". delta: time relative to [1] (negative = faster).</p>";
}

/// RFC 4648 base64 (with padding): the pictures go into the page as data: URLs.
std::string base64(std::string_view bytes) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t k = 0;
  for (; k + 2 < bytes.size(); k += 3) {
    const auto v = (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k])) << 16) |
                   (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k + 1])) << 8) |
                   static_cast<unsigned char>(bytes[k + 2]);
    for (int s = 18; s >= 0; s -= 6) out += alphabet[(v >> s) & 63u];
  }
  if (k < bytes.size()) {
    const bool two = k + 1 < bytes.size();
    const auto v = (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k])) << 16) |
                   (two ? static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k + 1])) << 8 : 0u);
    out += alphabet[(v >> 18) & 63u];
    out += alphabet[(v >> 12) & 63u];
    out += two ? alphabet[(v >> 6) & 63u] : '=';
    out += '=';
  }
  return out;
}

/// The profile's pictures as images. An <img> with a data: URL, never inline SVG markup: an SVG
/// shown as an image runs no script and loads nothing, whoever wrote the profile.
void pictures_section(std::ostringstream& o, const profile& p, bool many) {
  if (p.pictures.empty()) return;
  if (many) o << "<h3>" << esc(p.path) << "</h3>";
  for (const auto& pic : p.pictures)
    o << "<figure class=\"picture\"><img alt=\"" << esc(pic.title) << "\" src=\"data:image/svg+xml;base64,"
      << base64(pic.svg) << "\"><figcaption>" << esc(pic.title) << "</figcaption></figure>";
}

void finding_paragraph(std::ostringstream& o, const finding& f) {
  const char* cls = f.level == severity::problem ? "problem" : f.level == severity::warning ? "warning" : "info";
  o << "<p class=\"finding " << cls << "\">" << esc(f.text) << "</p>";
}

/// One h2 section of the report: its anchor, its title, and what draws its body.
struct section {
  std::string id, title;
  std::function<void(std::ostringstream&)> body;
};

/// Whether a profile has what a hardware section shows.
bool has_efficiency(const profile_analysis& a) { return !a.efficiency.empty(); }
bool has_accounting(const profile_analysis& a) {
  return std::any_of(a.runs.begin(), a.runs.end(), [](const run_analysis& r) { return r.accounting.has_value(); });
}
bool has_activity(const profile_analysis& a) {
  return std::any_of(a.runs.begin(), a.runs.end(), [](const run_analysis& r) { return r.activity.has_value(); });
}
bool has_overhead(const profile_analysis& a) {
  return std::any_of(a.runs.begin(), a.runs.end(), [](const run_analysis& r) { return r.overhead.any(); });
}

/// The sections of the report, in order; those on the hardware only where some profile has
/// what they show (each drawn for those profiles, under the profile's name when there are several).
std::vector<section> sections(const std::vector<profile>& profiles, const std::vector<profile_analysis>& analyses) {
  const bool many = profiles.size() > 1;
  const bool hardware = std::any_of(analyses.begin(), analyses.end(), has_efficiency);
  std::vector<section> out;
  out.push_back({"summary", "Summary", [&](std::ostringstream& o) {
                   for (const auto& a : analyses) summary_section(o, a);
                 }});
  out.push_back({"child-grids", "Child grids", [&](std::ostringstream& o) {
                   o << "<p class=\"note\">Histograms of child-grid sizes per launch site. The shaded band holds the "
                        "grids too small to fill the GPU alone: fewer work items than a warp has lanes, fewer blocks "
                        "than the GPU has SMs, fewer threads than it holds at full occupancy. Orange: underused, the "
                        "launched work did not fill the GPU; grey: informational (together the grids filled it, or "
                        "no faster variant ran).</p>";
                   for (const auto& a : analyses) child_grid_section(o, a);
                 }});
  out.push_back({"launch-tree", "Launch tree", [&](std::ostringstream& o) {
                   o << "<p class=\"note\">Child grids aggregated by depth and launching site (width: launches; "
                        "colour: mean work per grid).</p>";
                   for (const auto& a : analyses) tree_section(o, a);
                 }});
  out.push_back({"pending", "Pending launches", [&](std::ostringstream& o) {
                   for (const auto& a : analyses) pending_section(o, a);
                 }});
  out.push_back({"divergence", "Divergence", [&, hardware](std::ostringstream& o) {
                   for (const auto& p : profiles) divergence_section(o, p, hardware);
                 }});
  struct hardware_part {
    const char* id;
    const char* title;
    void (*draw)(std::ostringstream&, const profile_analysis&);
    bool (*has)(const profile_analysis&);
  };
  for (const hardware_part& part : {hardware_part{"hardware", "Hardware vs probes", efficiency_section, has_efficiency},
                                    hardware_part{"accounting", "CTA accounting", accounting_section, has_accounting},
                                    hardware_part{"sm-activity", "SM activity over time", activity_section, has_activity},
                                    hardware_part{"overhead", "Collection overhead", overhead_section, has_overhead}}) {
    if (std::none_of(analyses.begin(), analyses.end(), part.has)) continue;
    out.push_back({part.id, part.title, [&analyses, many, part](std::ostringstream& o) {
                     for (const auto& a : analyses)
                       if (part.has(a)) {
                         profile_heading(o, a, many);
                         part.draw(o, a);
                       }
                   }});
  }
  if (std::any_of(profiles.begin(), profiles.end(), [](const profile& p) { return !p.pictures.empty(); }))
    out.push_back({"pictures", "Pictures", [&, many](std::ostringstream& o) {
                     o << "<p class=\"note\">What the programs drew of their work (e.g. the Bezier sample: a window of "
                          "the tessellated curves, each point coloured by its curve's point count: the irregular work "
                          "the child grids were launched for).</p>";
                     for (const auto& p : profiles) pictures_section(o, p, many);
                   }});
  out.push_back({"findings", "Findings", [&, many](std::ostringstream& o) {
                   for (const auto& a : analyses) {
                     profile_heading(o, a, many);
                     if (a.findings.empty()) o << "<p class=\"note\">Nothing to report.</p>";
                     for (const auto& f : a.findings) finding_paragraph(o, f);
                   }
                 }});
  out.push_back({"comparison", "Comparison", [&](std::ostringstream& o) { comparison_section(o, profiles); }});
  return out;
}

}  // namespace

std::string render_html(const std::vector<profile>& profiles) {
  std::vector<profile_analysis> analyses;
  analyses.reserve(profiles.size());
  for (const auto& p : profiles) analyses.push_back(analyze(p));
  const std::vector<section> parts = sections(profiles, analyses);
  std::ostringstream o;
  o << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
       "content=\"width=device-width,initial-scale=1\"><title>cdpkit report</title><style>"
    << css << "</style></head><body><h1>cdpkit divergence report</h1><p class=\"note\">Child grids, launch tree, pending"
               " launches and per-warp divergence from the device-side trace of cdpkit's launch layer";
  // a profile of an unmodified program holds the children collector's grids instead (profiling/children)
  const bool children = std::any_of(profiles.begin(), profiles.end(), [](const profile& p) {
    return p.collector && std::find(p.collector->requested.begin(), p.collector->requested.end(), "children") !=
                              p.collector->requested.end();
  });
  o << (children ? ", or from the grids the children collector saw in an unmodified program" : "") << ".</p>";
  collector_notes(o, profiles);
  o << "<nav>";
  for (std::size_t k = 0; k < parts.size(); ++k)
    o << (k ? " · " : "") << "<a href=\"#" << parts[k].id << "\">" << k + 1 << ". " << esc(parts[k].title) << "</a>";
  // At a glance: the most important findings, all of them in the findings section.
  o << "</nav><h2 id=\"glance\">At a glance</h2>";
  for (const auto& a : analyses)
    for (std::size_t k = 0; k < a.findings.size() && k < 3; ++k) finding_paragraph(o, a.findings[k]);
  for (std::size_t k = 0; k < parts.size(); ++k) {
    o << "<h2 id=\"" << parts[k].id << "\">" << k + 1 << ". " << esc(parts[k].title) << "</h2>";
    parts[k].body(o);
  }
  o << "<script>" << script << "</script></body></html>\n";
  return o.str();
}

}  // namespace cdpkit::report
