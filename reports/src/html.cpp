// The HTML report: inline CSS, inline SVG charts, a few lines of optional JavaScript (sortable
// tables); everything readable without scripts and offline.

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/html.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace cdpkit::report {

namespace {

// Okabe-Ito colours: distinguishable with colour-vision deficiencies.
constexpr const char* blue = "#0072B2";
constexpr const char* vermillion = "#D55E00";
constexpr const char* orange = "#E69F00";
constexpr const char* green = "#009E73";
constexpr const char* grey = "#999999";

std::string esc(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string num(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string pct(double share) { return fmt(100.0 * share, share < 0.1 && share > 0 ? 1 : 0) + "%"; }

std::string bucket_label(int b) {
  if (b < 10) return std::to_string(1u << b);
  if (b < 20) return std::to_string(1u << (b - 10)) + "K";
  if (b < 30) return std::to_string(1u << (b - 20)) + "M";
  return std::to_string(1u << (b - 30)) + "G";
}

/// A bar chart in SVG. Bars whose index is <= highlight_last are drawn in the "underused" colour
/// over a shaded band. Labels on both axes; every bar has a <title> with its exact value.
std::string bar_chart(const std::string& title, const std::vector<std::uint64_t>& values,
                      const std::vector<std::string>& labels, int highlight_last,
                      const std::string& x_label, const std::string& y_label,
                      const std::string& band_label) {
  const int w = 460, h = 220, left = 56, right = 10, top = 36, bottom = 46;
  const int n = static_cast<int>(values.size());
  const std::uint64_t max_v = std::max<std::uint64_t>(1, *std::max_element(values.begin(), values.end()));
  const double bw = static_cast<double>(w - left - right) / std::max(1, n);
  std::ostringstream s;
  s << "<svg class=\"chart\" viewBox=\"0 0 " << w << " " << h << "\" role=\"img\" aria-label=\"" << esc(title)
    << "\"><title>" << esc(title) << "</title>";
  s << "<text x=\"" << w / 2 << "\" y=\"16\" class=\"ct\">" << esc(title) << "</text>";
  if (highlight_last >= 0) {
    const double bx = left + bw * (std::min(highlight_last, n - 1) + 1);
    s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << fmt(bx - left, 1) << "\" height=\""
      << h - top - bottom << "\" fill=\"" << orange << "\" fill-opacity=\"0.15\"/>";
    s << "<rect x=\"" << left << "\" y=\"" << top - 12 << "\" width=\"10\" height=\"9\" fill=\"" << orange
      << "\" fill-opacity=\"0.4\"/><text x=\"" << left + 14 << "\" y=\"" << top - 4 << "\" class=\"band\">shaded: "
      << esc(band_label) << "</text>";
  }
  // y axis: 0, max/2, max
  for (int k = 0; k <= 2; ++k) {
    const double y = h - bottom - (h - top - bottom) * k / 2.0;
    s << "<line x1=\"" << left << "\" x2=\"" << w - right << "\" y1=\"" << fmt(y, 1) << "\" y2=\"" << fmt(y, 1)
      << "\" class=\"grid\"/><text x=\"" << left - 4 << "\" y=\"" << fmt(y + 4, 1) << "\" class=\"yl\">"
      << num(max_v * k / 2) << "</text>";
  }
  for (int i = 0; i < n; ++i) {
    const double bh = (h - top - bottom) * static_cast<double>(values[i]) / static_cast<double>(max_v);
    const double x = left + bw * i;
    s << "<rect x=\"" << fmt(x + 1, 1) << "\" y=\"" << fmt(h - bottom - bh, 1) << "\" width=\""
      << fmt(std::max(1.0, bw - 2), 1) << "\" height=\"" << fmt(bh, 1) << "\" fill=\""
      << (i <= highlight_last ? vermillion : blue) << "\"><title>" << esc(labels[i]) << ": " << num(values[i])
      << "</title></rect>";
    const int every = n > 24 ? 4 : n > 12 ? 2 : 1;
    if (i % every == 0)
      s << "<text x=\"" << fmt(x + bw / 2, 1) << "\" y=\"" << h - bottom + 14 << "\" class=\"xl\">" << esc(labels[i])
        << "</text>";
  }
  s << "<text x=\"" << (left + w - right) / 2 << "\" y=\"" << h - 8 << "\" class=\"al\">" << esc(x_label) << "</text>";
  s << "<text x=\"12\" y=\"" << (top + h - bottom) / 2 << "\" class=\"al\" transform=\"rotate(-90 12 "
    << (top + h - bottom) / 2 << ")\">" << esc(y_label) << "</text></svg>";
  return s.str();
}

/// A log2 histogram trimmed to its populated range (always including the band).
std::string log2_chart(const std::string& title, const std::array<std::uint64_t, log2_buckets>& h,
                       int band_last, const std::string& what, const std::string& band_label) {
  int lo = log2_buckets, hi = -1;
  for (int b = 0; b < log2_buckets; ++b)
    if (h[static_cast<std::size_t>(b)] > 0) {
      lo = std::min(lo, b);
      hi = std::max(hi, b);
    }
  if (hi < 0) return "<p class=\"note\">" + esc(title) + ": no launches.</p>";
  lo = std::min(lo, std::max(0, band_last));
  hi = std::max(hi, std::min(band_last + 1, log2_buckets - 1));
  std::vector<std::uint64_t> values;
  std::vector<std::string> labels;
  for (int b = lo; b <= hi; ++b) {
    values.push_back(h[static_cast<std::size_t>(b)]);
    labels.push_back(bucket_label(b));
  }
  return bar_chart(title, values, labels, band_last - lo, what + " (log2 buckets, lower bound)",
                   "child grids", band_label);
}

/// Colour for a mean child size: vermillion (tiny) through orange to blue (large), on log2.
std::string size_colour(double mean) {
  const double l = std::log2(std::max(1.0, mean));
  if (l < 5) return vermillion;
  if (l < 8) return orange;
  if (l < 12) return green;
  return blue;
}

std::string icicle(const launch_tree& tree) {
  if (tree.nodes.empty()) return "<p class=\"note\">No launched child grids in the records.</p>";
  std::map<int, std::vector<const tree_node*>> rows;
  for (const auto& n : tree.nodes) rows[n.depth].push_back(&n);
  std::uint64_t widest = 1;
  for (const auto& [d, nodes] : rows) {
    std::uint64_t sum = 0;
    for (auto* n : nodes) sum += n->launches;
    widest = std::max(widest, sum);
  }
  const int w = 900, row_h = 34, left = 70;
  const int h = static_cast<int>(rows.size()) * row_h + 30;
  std::ostringstream s;
  s << "<svg class=\"chart wide\" viewBox=\"0 0 " << w << " " << h
    << "\" role=\"img\" aria-label=\"launch tree by depth and site\"><title>Launch tree: child grids by depth and "
       "launching site, width = launches, colour = mean work per grid</title>";
  int r = 0;
  for (const auto& [d, nodes] : rows) {
    const int y = 4 + r * row_h;
    s << "<text x=\"4\" y=\"" << y + 20 << "\" class=\"yl2\">depth " << d << "</text>";
    double x = left;
    for (auto* n : nodes) {
      const double nw = (w - left - 4) * static_cast<double>(n->launches) / static_cast<double>(widest);
      s << "<rect x=\"" << fmt(x, 1) << "\" y=\"" << y << "\" width=\"" << fmt(std::max(1.0, nw - 1), 1)
        << "\" height=\"" << row_h - 4 << "\" fill=\"" << size_colour(n->mean_work) << "\"><title>" << esc(n->site_name)
        << " at depth " << d << ": " << num(n->launches) << " grids, mean " << fmt(n->mean_work, 1)
        << " work items</title></rect>";
      if (nw > 90)
        s << "<text x=\"" << fmt(x + 4, 1) << "\" y=\"" << y + 19 << "\" class=\"in\">" << esc(n->site_name) << " ("
          << num(n->launches) << ")</text>";
      x += nw;
    }
    ++r;
  }
  s << "<text x=\"" << left << "\" y=\"" << h - 6 << "\" class=\"xl2\">colour: mean work per grid — ";
  s << "<tspan fill=\"" << vermillion << "\">&#9632; &lt; 32</tspan> <tspan fill=\"" << orange
    << "\">&#9632; &lt; 256</tspan> <tspan fill=\"" << green << "\">&#9632; &lt; 4096</tspan> <tspan fill=\"" << blue
    << "\">&#9632; larger</tspan></text></svg>";
  return s.str();
}

std::string gauge(std::uint64_t value, std::uint64_t limit, const std::string& label) {
  const int w = 460, h = 46;
  const double share = limit > 0 ? std::min(1.0, static_cast<double>(value) / static_cast<double>(limit)) : 0.0;
  std::ostringstream s;
  s << "<svg class=\"chart\" viewBox=\"0 0 " << w << " " << h << "\" role=\"img\" aria-label=\"" << esc(label)
    << "\"><title>" << esc(label) << "</title><rect x=\"4\" y=\"6\" width=\"" << w - 8
    << "\" height=\"18\" fill=\"#eee\" stroke=\"" << grey << "\"/><rect x=\"4\" y=\"6\" width=\""
    << fmt((w - 8) * share, 1) << "\" height=\"18\" fill=\"" << (share >= 1.0 ? vermillion : blue)
    << "\"/><text x=\"4\" y=\"40\" class=\"xl2\">" << esc(label) << "</text></svg>";
  return s.str();
}

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

void summary_section(std::ostringstream& o, const profile& p) {
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
    const auto base = baseline_of(p, k);
    std::string ratio = "-";
    if (base && r.ms > 0) ratio = fmt(p.runs[*base].ms / r.ms, 2) + "x " + p.runs[*base].variant;
    std::string launches = "-", tiny = "-", eff = "-";
    if (r.trace) {
      std::uint64_t launched = 0, tiny_n = 0, steps = 0, active = 0;
      for (const auto& s : r.trace->sites) {
        launched += s.launched;
        tiny_n += s.tiny_launches;
        steps += s.probe.steps;
        active += s.probe.active_lanes;
      }
      launches = num(launched);
      if (launched > 0) tiny = pct(static_cast<double>(tiny_n) / static_cast<double>(launched));
      if (steps > 0) eff = fmt(static_cast<double>(active) / (32.0 * static_cast<double>(steps)), 3);
    }
    const double throughput = r.ms > 0 ? static_cast<double>(r.work) / r.ms / 1e6 : 0;
    o << "<tr><td class=\"l\">" << esc(r.algorithm) << "</td><td class=\"l\">" << esc(r.variant) << "</td><td class=\"l\">"
      << esc(r.input) << "</td><td data-v=\"" << r.ms << "\">" << fmt(r.ms, 3) << "</td><td>" << fmt(throughput, 2)
      << " G" << esc(r.work_unit) << "/s</td><td>" << esc(ratio) << "</td><td>" << launches << "</td><td>" << tiny
      << "</td><td>" << eff << "</td><td class=\"l\">"
      << (r.checked ? badge(r.verified, r.verified ? "pass" : "FAIL (" + num(r.mismatches) + ")") : badge(false, "unchecked"))
      << "</td></tr>";
  }
  o << "</tbody></table>";
}

std::string run_title(const run_profile& r) { return r.algorithm + " · " + r.variant + " · " + r.input; }

void child_grid_section(std::ostringstream& o, const profile& p) {
  for (const auto& r : p.runs) {
    if (!r.trace) continue;
    bool any = false;
    for (const auto& s : r.trace->sites) any = any || s.launched > 0 || s.requests > 0;
    if (!any) continue;
    o << "<h3>" << esc(run_title(r)) << "</h3>";
    for (const auto& s : r.trace->sites) {
      if (s.requests == 0) continue;
      const auto bands = underutilized_bands(s, *r.trace, std::max<std::uint64_t>(1, p.device.sms),
                                             p.device.max_threads_per_sm);
      o << "<p><b>" << esc(s.name) << "</b>: " << num(s.requests) << " requests, " << num(s.launched) << " launched, "
        << num(s.fallbacks()) << " done inline.</p>";
      if (s.launched == 0) continue;
      o << "<div class=\"charts\">";
      o << log2_chart("work items per child grid", s.work_log2, bands[0].histogram == "work" ? bands[0].last_bucket : -1,
                      "work items", "underused: < " + std::to_string(r.trace->tiny_grid_work) + " items");
      o << log2_chart("blocks per child grid", s.blocks_log2, bands[1].last_bucket, "blocks",
                      "underused: < " + std::to_string(p.device.sms) + " blocks");
      o << log2_chart("threads per child grid", s.threads_log2, bands[2].last_bucket, "threads", "below full occupancy");
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

void tree_section(std::ostringstream& o, const profile& p) {
  for (const auto& r : p.runs) {
    if (!r.trace) continue;
    std::uint64_t launched = 0;
    for (const auto& s : r.trace->sites) launched += s.launched;
    if (launched == 0) continue;
    const launch_tree tree = build_launch_tree(*r.trace);
    o << "<h3>" << esc(run_title(r)) << "</h3>" << icicle(tree);
    if (tree.from_sample) o << "<p class=\"note\">From the first " << num(r.trace->records.size())
                            << " launch records of " << num(r.trace->records_requested) << ".</p>";
    o << "<table><tr><th class=\"l\">parent</th><th class=\"l\">child site</th><th>depth</th><th>launches</th></tr>";
    for (const auto& e : tree.edges) {
      const site_profile* ps = e.parent_site >= 0 ? r.trace->site(e.parent_site) : nullptr;
      const site_profile* cs = r.trace->site(e.child_site);
      const std::string parent = e.parent_site == -1 ? "host-launched grid"
                                 : e.parent_site == -2 ? "(record not kept)"
                                 : ps != nullptr       ? ps->name
                                                       : "site." + std::to_string(e.parent_site);
      o << "<tr><td class=\"l\">" << esc(parent) << "</td><td class=\"l\">"
        << esc(cs != nullptr ? cs->name : "site." + std::to_string(e.child_site)) << "</td><td>" << e.depth << "</td><td>"
        << num(e.launches) << "</td></tr>";
    }
    o << "</table>";
    std::vector<std::uint64_t> depth(64, 0);
    int deepest = 1;
    for (const auto& s : r.trace->sites)
      for (std::size_t d = 0; d < s.depth_hist.size() && d < 64; ++d) {
        depth[d] += s.depth_hist[d];
        if (s.depth_hist[d] > 0) deepest = std::max(deepest, static_cast<int>(d));
      }
    depth.resize(static_cast<std::size_t>(deepest) + 1);
    std::vector<std::string> labels;
    for (int d = 0; d <= deepest; ++d) labels.push_back(std::to_string(d));
    o << bar_chart("child grids by depth (all sites, exact)", depth, labels, -1, "depth of the child grid",
                   "child grids", "");
  }
}

void pending_section(std::ostringstream& o, const profile& p) {
  for (const auto& r : p.runs) {
    if (!r.trace) continue;
    const trace_profile& t = *r.trace;
    std::uint64_t requests = 0;
    for (const auto& s : t.sites) requests += s.requests;
    if (requests == 0) continue;
    const std::uint64_t ceiling = std::min(t.pending_limit, t.pending_budget);
    o << "<h3>" << esc(run_title(r)) << "</h3>"
      << gauge(t.pending_high_water, ceiling,
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
      o << bar_chart("warp steps by active lanes", lanes, lane_labels, 14, "active lanes in the warp step", "warp steps",
                     "under half the lanes");
      std::vector<std::uint64_t> eff(s.probe.efficiency_hist.begin(), s.probe.efficiency_hist.end());
      std::vector<std::string> eff_labels;
      for (int k = 0; k < 32; ++k) eff_labels.push_back(fmt(k / 32.0, 2));
      o << bar_chart("warps by efficiency", eff, eff_labels, 15, "active lanes / 32, averaged over the warp's steps",
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
  std::set<std::tuple<std::string, std::string, std::string>> keys;
  for (const auto& p : profiles)
    for (const auto& r : p.runs) keys.insert({r.algorithm, r.input, r.variant});
  o << "<table class=\"sortable\"><thead><tr><th class=\"l\">algorithm</th><th class=\"l\">input</th><th class=\"l\">variant</th>";
  for (std::size_t k = 0; k < profiles.size(); ++k)
    o << "<th>ms [" << k + 1 << "]</th>" << (k > 0 ? "<th>delta [" + std::to_string(k + 1) + "]</th>" : "");
  o << "</tr></thead><tbody>";
  for (const auto& [alg, input, variant] : keys) {
    o << "<tr><td class=\"l\">" << esc(alg) << "</td><td class=\"l\">" << esc(input) << "</td><td class=\"l\">" << esc(variant) << "</td>";
    std::optional<double> first;
    for (std::size_t k = 0; k < profiles.size(); ++k) {
      std::optional<double> ms;
      for (const auto& r : profiles[k].runs)
        if (r.algorithm == alg && r.input == input && r.variant == variant) ms = r.ms;
      if (k == 0) first = ms;
      o << "<td>" << (ms ? fmt(*ms, 3) : "-") << "</td>";
      if (k > 0) {
        if (ms && first && *first > 0) {
          const double d = (*ms - *first) / *first;
          o << "<td class=\"" << (d <= 0 ? "up" : "down") << "\">" << (d > 0 ? "+" : "") << fmt(100 * d, 1) << "%</td>";
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

}  // namespace

std::string render_html(const std::vector<profile>& profiles) {
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
  for (const auto& p : profiles) {
    const auto list = findings(p);
    for (std::size_t k = 0; k < list.size() && k < 3; ++k) {
      const auto& f = list[k];
      const char* cls = f.level == severity::problem ? "problem" : f.level == severity::warning ? "warning" : "info";
      o << "<p class=\"finding " << cls << "\">" << esc(f.text) << "</p>";
    }
  }
  o << "<h2 id=\"summary\">1. Summary</h2>";
  for (const auto& p : profiles) summary_section(o, p);
  o << "<h2 id=\"child-grids\">2. Child grids</h2><p class=\"note\">Histograms of child-grid sizes per launch site. "
       "The shaded band is where the GPU is underused: fewer work items than a warp has lanes, fewer blocks than the "
       "GPU has SMs, fewer threads than it holds at full occupancy.</p>";
  for (const auto& p : profiles) child_grid_section(o, p);
  o << "<h2 id=\"launch-tree\">3. Launch tree</h2><p class=\"note\">Child grids aggregated by depth and launching site "
       "(width: launches; colour: mean work per grid).</p>";
  for (const auto& p : profiles) tree_section(o, p);
  o << "<h2 id=\"pending\">4. Pending launches</h2>";
  for (const auto& p : profiles) pending_section(o, p);
  o << "<h2 id=\"divergence\">5. Divergence</h2>";
  for (const auto& p : profiles) divergence_section(o, p);
  o << "<h2 id=\"findings\">6. Findings</h2>";
  for (const auto& p : profiles) {
    if (profiles.size() > 1) o << "<h3>" << esc(p.path) << "</h3>";
    const auto list = findings(p);
    if (list.empty()) o << "<p class=\"note\">Nothing to report.</p>";
    for (const auto& f : list) {
      const char* cls = f.level == severity::problem ? "problem" : f.level == severity::warning ? "warning" : "info";
      o << "<p class=\"finding " << cls << "\">" << esc(f.text) << "</p>";
    }
  }
  o << "<h2 id=\"comparison\">7. Comparison</h2>";
  comparison_section(o, profiles);
  o << "<script>" << script << "</script></body></html>\n";
  return o.str();
}

std::string render_chrome_trace(const std::vector<profile>& profiles) {
  nlohmann::json events = nlohmann::json::array();
  int pid = 0;
  for (const auto& p : profiles) {
    for (const auto& r : p.runs) {
      ++pid;
      if (!r.trace || r.trace->records.empty()) continue;
      events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid},
                        {"args", {{"name", r.variant + " on " + r.input + " (" + p.path + ")"}}}});
      std::uint64_t t0 = r.trace->records.front().t_ns;
      for (const auto& rec : r.trace->records) t0 = std::min(t0, rec.t_ns);
      std::map<std::uint32_t, const launch_rec*> by_id;
      for (const auto& rec : r.trace->records) by_id[rec.id] = &rec;
      for (const auto& rec : r.trace->records) {
        const site_profile* s = r.trace->site(rec.site);
        const double ts = static_cast<double>(rec.t_ns - t0) / 1000.0;
        events.push_back({{"name", s != nullptr ? s->name : "site." + std::to_string(rec.site)},
                          {"cat", rec.outcome}, {"ph", "X"}, {"ts", ts}, {"dur", 1}, {"pid", pid},
                          {"tid", rec.depth},
                          {"args", {{"id", rec.id}, {"blocks", rec.blocks}, {"block_threads", rec.block_threads},
                                    {"work", rec.work}, {"stream", rec.stream}, {"outcome", rec.outcome},
                                    {"error", rec.error}}}});
        if (rec.parent) {
          const auto it = by_id.find(*rec.parent);
          if (it != by_id.end()) {
            const double pts = static_cast<double>(it->second->t_ns - t0) / 1000.0;
            events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "s"}, {"id", rec.id}, {"ts", pts},
                              {"pid", pid}, {"tid", it->second->depth}});
            events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "f"}, {"bp", "e"}, {"id", rec.id},
                              {"ts", ts}, {"pid", pid}, {"tid", rec.depth}});
          }
        }
      }
      std::set<int> depths;
      for (const auto& rec : r.trace->records) depths.insert(rec.depth);
      for (int d : depths)
        events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", d},
                          {"args", {{"name", "depth " + std::to_string(d)}}}});
    }
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

void write_file_atomically(const std::string& path, const std::string& text) {
  if (path.empty()) throw format_error("empty output path");
  const std::string tmp = path + ".tmp";
  // Once created, the temporary file goes whatever happens before the rename: a failed write,
  // flush or rename, or an exception. Only the rename disarms the guard.
  struct remove_on_failure {
    const std::string& file;
    bool armed = false;
    ~remove_on_failure() {
      if (armed) std::remove(file.c_str());
    }
  } guard{tmp};
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw format_error(path + ": cannot open '" + tmp + "' for writing");
    guard.armed = true;
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw format_error(path + ": write failed (disk full?)");
  } catch (const format_error&) {
    throw;
  } catch (const std::exception& e) {
    throw format_error(path + ": write failed: " + e.what());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw format_error(path + ": cannot move the finished file into place");
  guard.armed = false;
}

}  // namespace cdpkit::report
