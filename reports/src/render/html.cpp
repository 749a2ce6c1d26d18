// The HTML report: inline CSS, inline SVG charts (svg.hpp), a few lines of optional JavaScript
// (sortable tables); everything readable without scripts and offline. Each profile is analysed
// once (analyze()); the sections below only render the analysis and the profile's fields.

#include "svg.hpp"

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/html.hpp>
#include <cdpkit/schema/text.hpp>

#include <algorithm>
#include <sstream>

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
h3{font-size:15px;margin:18px 0 6px}table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f0f4f8;cursor:pointer}td.l,th.l{text-align:left}
.badge{padding:1px 6px;border-radius:3px;font-weight:600}.ok{background:#d7f0e6;color:#00573f}.bad{background:#f9d9c8;color:#8a2f00}
.chart{width:100%;max-width:460px;height:auto;margin:4px 8px 8px 0;vertical-align:top}.wide{max-width:900px}
.ct{font-size:13px;font-weight:600;text-anchor:middle}.xl,.xl2{font-size:10px}.xl{text-anchor:middle}.yl{font-size:10px;text-anchor:end}
.yl2{font-size:11px}.al{font-size:11px;text-anchor:middle;fill:#444}.band{font-size:10px;fill:#8a5a00}.in{font-size:11px;fill:#fff}
.grid{stroke:#ddd}.note{color:#555;font-style:italic}.finding{margin:4px 0;padding:6px 10px;border-left:5px solid #999;background:#fafafa}
.problem{border-color:#D55E00;background:#fdf0e8}.warning{border-color:#E69F00;background:#fff8e6}.info{border-color:#0072B2}
.charts{display:flex;flex-wrap:wrap}.up{color:#00573f}.down{color:#8a2f00}
@media print{body{max-width:none}h2{break-after:avoid}.chart{break-inside:avoid}th{cursor:auto}}
)";

// Sorting on header click: optional, the tables read fine without it.
const char* script = R"(
document.querySelectorAll('table.sortable th').forEach(function(th,i){th.addEventListener('click',function(){
var tb=th.closest('table').tBodies[0];var rows=Array.prototype.slice.call(tb.rows);var asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
rows.sort(function(a,b){var x=a.cells[i].dataset.v||a.cells[i].textContent,y=b.cells[i].dataset.v||b.cells[i].textContent;
var nx=parseFloat(x),ny=parseFloat(y);var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return asc?c:-c;});
rows.forEach(function(r){tb.appendChild(r);});});});
)";

std::string run_title(const run_profile& r) { return r.algorithm + " · " + r.variant + " · " + r.input; }

void summary_section(std::ostringstream& o, const profile_analysis& a) {
  const profile& p = *a.source;
  o << "<h3>" << esc(p.path) << "</h3><table><tr><th class=\"l\">device</th><td class=\"l\">" << esc(p.device.name)
    << " (cc " << esc(p.device.cc) << ", " << p.device.sms << " SMs)</td></tr><tr><th class=\"l\">driver / runtime</th><td class=\"l\">"
    << p.device.driver << " / " << p.device.runtime << "</td></tr><tr><th class=\"l\">build</th><td class=\"l\">";
  for (const char* key : {"version", "commit", "build_type", "cuda_architectures", "cuda_compiler"})
    if (p.build.contains(key) && p.build[key].is_string()) o << esc(key) << " " << esc(p.build[key].get<std::string>()) << "; ";
  o << "</td></tr><tr><th class=\"l\">program / when</th><td class=\"l\">" << esc(p.program) << ", " << esc(p.created)
    << "</td></tr></table>";
  o << "<table class=\"sortable\"><thead><tr><th class=\"l\">algorithm</th><th class=\"l\">variant</th><th class=\"l\">input</th>"
       "<th>ms</th><th>throughput</th><th>vs baseline</th><th>child launches</th><th>tiny grids</th><th>warp eff.</th>"
       "<th class=\"l\">check</th></tr></thead><tbody>";
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    const run_analysis& ra = a.runs[k];
    const std::string ratio = ra.speedup ? fmt(*ra.speedup, 2) + "x " + p.runs[*ra.baseline].variant : "-";
    std::string launches = "-", tiny = "-", eff = "-";
    if (r.trace) {
      const trace_summary& s = r.trace->summary;
      launches = num(s.child_launches);
      if (s.child_launches > 0) tiny = pct(s.tiny_grid_share);
      if (s.probe_steps > 0) eff = fmt(s.warp_efficiency, 3);
    }
    o << "<tr><td class=\"l\">" << esc(r.algorithm) << "</td><td class=\"l\">" << esc(r.variant) << "</td><td class=\"l\">"
      << esc(r.input) << "</td><td data-v=\"" << r.ms << "\">" << fmt(r.ms, 3) << "</td><td>" << fmt(ra.throughput, 2)
      << " G" << esc(r.work_unit) << "/s</td><td>" << esc(ratio) << "</td><td>" << launches << "</td><td>" << tiny
      << "</td><td>" << eff << "</td><td class=\"l\">"
      << (r.checked ? badge(r.verified, r.verified ? "pass" : "FAIL (" + num(r.mismatches) + ")") : badge(false, "unchecked"))
      << "</td></tr>";
  }
  o << "</tbody></table>";
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
      o << "<div class=\"charts\">";
      o << render::log2_chart("work items per child grid", s.work_log2,
                              bands[0].histogram == "work" ? bands[0].last_bucket : -1, "work items",
                              "underused: < " + std::to_string(r.trace->tiny_grid_work) + " items");
      o << render::log2_chart("blocks per child grid", s.blocks_log2, bands[1].last_bucket, "blocks",
                              "underused: < " + std::to_string(p.device.sms) + " blocks");
      o << render::log2_chart("threads per child grid", s.threads_log2, bands[2].last_bucket, "threads",
                              "below full occupancy");
      o << "</div><table><tr><th class=\"l\">underutilized band</th><th>launches in band</th><th>share of launches</th>"
           "<th>share of launched threads</th></tr>";
      for (const auto& b : bands) {
        o << "<tr><td class=\"l\">" << esc(b.name) << "</td><td>" << num(b.launches_in) << " of " << num(b.launches_total)
          << "</td><td>" << pct(b.launch_share) << "</td><td>"
          << (b.thread_share ? pct(*b.thread_share) + (b.thread_share_sampled ? " (sampled)" : "") : "-") << "</td></tr>";
      }
      o << "</table>";
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
    o << "<table><tr><th class=\"l\">parent</th><th class=\"l\">child site</th><th>depth</th><th>launches</th></tr>";
    for (const auto& e : tree.edges) {
      const std::string parent = e.parent_site == -1   ? "host-launched grid"
                                 : e.parent_site == -2 ? "(record not kept)"
                                                       : r.trace->site_name(e.parent_site);
      o << "<tr><td class=\"l\">" << esc(parent) << "</td><td class=\"l\">" << esc(r.trace->site_name(e.child_site))
        << "</td><td>" << e.depth << "</td><td>" << num(e.launches) << "</td></tr>";
    }
    o << "</table>";
    if (ra.timeline) {  // cdpkit-profile/3: the child grids' execution windows
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
      o << "<table><tr><th class=\"l\">site</th><th>depth</th><th>launches</th><th>measured</th>"
           "<th>mean µs</th><th>longest µs</th><th>busy µs</th></tr>";
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
      o << "</table>";
      if (shown < timed.size())
        o << "<p class=\"note\">The " << shown << " of " << num(timed.size())
          << " rows that ran longest (busy time).</p>";
      o << "<p class=\"note\">mean and longest: a child grid from its first block's start to its last "
           "block's end; busy: how long at least one grid of the row ran (the union of their windows).</p>";
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
    o << "<table><tr><th class=\"l\">site</th><th>requests</th><th>launched</th><th>over budget</th><th>depth cap</th>"
         "<th>launch failed</th><th class=\"l\">errors</th><th>items done inline</th></tr>";
    for (const auto& s : t.sites) {
      if (s.requests == 0) continue;
      std::string errors;
      for (const auto& e : s.failed_by_error) errors += e.name + " (" + std::to_string(e.code) + "): " + num(e.count) + " ";
      o << "<tr><td class=\"l\">" << esc(s.name) << "</td><td>" << num(s.requests) << "</td><td>" << num(s.launched)
        << "</td><td>" << num(s.fallback_budget) << "</td><td>" << num(s.fallback_depth) << "</td><td>"
        << num(s.fallback_error) << "</td><td class=\"l\">" << esc(errors.empty() ? "-" : errors) << "</td><td>"
        << num(s.inline_items) << "</td></tr>";
    }
    o << "</table>";
  }
}

void divergence_section(std::ostringstream& o, const profile& p) {
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
  o << "<p class=\"note\">Hardware divergence counters (smsp__thread_inst_executed_per_inst_executed.ratio) are not in "
       "these profiles: they come from the CUPTI collector, which was not active. The probes above work inside child "
       "grids, where CUPTI cannot see.</p>";
}

void comparison_section(std::ostringstream& o, const std::vector<profile>& profiles) {
  if (profiles.size() < 2) {
    o << "<p class=\"note\">Give several profiles (before / after, or variants) to compare them here.</p>";
    return;
  }
  o << "<table class=\"sortable\"><thead><tr><th class=\"l\">algorithm</th><th class=\"l\">input</th><th class=\"l\">variant</th>";
  for (std::size_t k = 0; k < profiles.size(); ++k)
    o << "<th>ms [" << k + 1 << "]</th>" << (k > 0 ? "<th>delta [" + std::to_string(k + 1) + "]</th>" : "");
  o << "</tr></thead><tbody>";
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
  o << "</tbody></table><p class=\"note\">Files: ";
  for (std::size_t k = 0; k < profiles.size(); ++k) o << "[" << k + 1 << "] " << esc(profiles[k].path) << " ";
  o << ". delta: time relative to [1] (negative = faster).</p>";
}

void finding_paragraph(std::ostringstream& o, const finding& f) {
  const char* cls = f.level == severity::problem ? "problem" : f.level == severity::warning ? "warning" : "info";
  o << "<p class=\"finding " << cls << "\">" << esc(f.text) << "</p>";
}

}  // namespace

std::string render_html(const std::vector<profile>& profiles) {
  std::vector<profile_analysis> analyses;
  analyses.reserve(profiles.size());
  for (const auto& p : profiles) analyses.push_back(analyze(p));
  std::ostringstream o;
  o << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
       "content=\"width=device-width,initial-scale=1\"><title>cdpkit report</title><style>"
    << css << "</style></head><body><h1>cdpkit divergence report</h1><p class=\"note\">Child grids, launch tree, pending"
               " launches and per-warp divergence from the device-side trace of cdpkit's launch layer.</p>";
  // At a glance: the most important findings, all of them in section 6.
  o << "<nav><a href=\"#summary\">1. Summary</a> · <a href=\"#child-grids\">2. Child grids</a> · "
       "<a href=\"#launch-tree\">3. Launch tree</a> · <a href=\"#pending\">4. Pending launches</a> · "
       "<a href=\"#divergence\">5. Divergence</a> · <a href=\"#findings\">6. Findings</a> · "
       "<a href=\"#comparison\">7. Comparison</a></nav><h2 id=\"glance\">At a glance</h2>";
  for (const auto& a : analyses)
    for (std::size_t k = 0; k < a.findings.size() && k < 3; ++k) finding_paragraph(o, a.findings[k]);
  o << "<h2 id=\"summary\">1. Summary</h2>";
  for (const auto& a : analyses) summary_section(o, a);
  o << "<h2 id=\"child-grids\">2. Child grids</h2><p class=\"note\">Histograms of child-grid sizes per launch site. "
       "The shaded band is where the GPU is underused: fewer work items than a warp has lanes, fewer blocks than the "
       "GPU has SMs, fewer threads than it holds at full occupancy.</p>";
  for (const auto& a : analyses) child_grid_section(o, a);
  o << "<h2 id=\"launch-tree\">3. Launch tree</h2><p class=\"note\">Child grids aggregated by depth and launching site "
       "(width: launches; colour: mean work per grid).</p>";
  for (const auto& a : analyses) tree_section(o, a);
  o << "<h2 id=\"pending\">4. Pending launches</h2>";
  for (const auto& a : analyses) pending_section(o, a);
  o << "<h2 id=\"divergence\">5. Divergence</h2>";
  for (const auto& p : profiles) divergence_section(o, p);
  o << "<h2 id=\"findings\">6. Findings</h2>";
  for (const auto& a : analyses) {
    if (profiles.size() > 1) o << "<h3>" << esc(a.source->path) << "</h3>";
    if (a.findings.empty()) o << "<p class=\"note\">Nothing to report.</p>";
    for (const auto& f : a.findings) finding_paragraph(o, f);
  }
  o << "<h2 id=\"comparison\">7. Comparison</h2>";
  comparison_section(o, profiles);
  o << "<script>" << script << "</script></body></html>\n";
  return o.str();
}

}  // namespace cdpkit::report
