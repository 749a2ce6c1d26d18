// The report's inline SVG charts (svg.hpp).

#include "svg.hpp"

#include <cdpkit/schema/text.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace cdpkit::report::render {

namespace {

std::string fmt(double v, int digits) { return schema::fixed(v, digits); }
std::string num(std::uint64_t v) { return schema::grouped(v); }

std::string bucket_label(int b) {
  if (b < 10) return std::to_string(1u << b);
  if (b < 20) return std::to_string(1u << (b - 10)) + "K";
  if (b < 30) return std::to_string(1u << (b - 20)) + "M";
  return std::to_string(1u << (b - 30)) + "G";
}

/// Colour for a mean child size: vermillion (tiny) through orange to blue (large), on log2.
std::string size_colour(double mean) {
  const double l = std::log2(std::max(1.0, mean));
  if (l < 5) return vermillion;
  if (l < 8) return orange;
  if (l < 12) return green;
  return blue;
}

/// One step of a step series in SVG coordinates: y over [x0, x1).
struct step {
  double x0, x1, y;
};

/// An SVG path's d for a step series: a line through every step, or, when `area`, a closed area
/// down to `base` (the steps are in x order).
std::string step_path(const std::vector<step>& steps, double base, bool area) {
  std::ostringstream d;
  if (steps.empty()) return "";
  if (area) d << "M" << fmt(steps.front().x0, 1) << " " << fmt(base, 1) << " L";
  else d << "M";
  for (std::size_t k = 0; k < steps.size(); ++k)
    d << (k ? " L" : "") << fmt(steps[k].x0, 1) << " " << fmt(steps[k].y, 1) << " L" << fmt(steps[k].x1, 1) << " "
      << fmt(steps[k].y, 1);
  if (area) d << " L" << fmt(steps.back().x1, 1) << " " << fmt(base, 1) << " Z";
  return d.str();
}

/// A horizontal grid line at y across [left, right] with `label` left of the axis.
void grid_line(std::ostringstream& s, double y, int left, int right, const std::string& label) {
  s << "<line x1=\"" << left << "\" x2=\"" << right << "\" y1=\"" << fmt(y, 1) << "\" y2=\"" << fmt(y, 1)
    << "\" class=\"grid\"/><text x=\"" << left - 4 << "\" y=\"" << fmt(y + 4, 1) << "\" class=\"yl\">" << esc(label)
    << "</text>";
}

/// Five time labels from 0 to `span` at y under a plot of width `pw` from `left`, and the axis
/// title centred between `left` and `w`.
void time_axis(std::ostringstream& s, int left, double pw, int y, double span, const std::string& title, int w) {
  for (int k = 0; k <= 4; ++k)  // the last label ends at the plot's edge
    s << "<text x=\"" << fmt(left + pw * k / 4.0, 1) << "\" y=\"" << y << "\" class=\"xl\""
      << (k == 4 ? " style=\"text-anchor:end\"" : "") << ">" << fmt(span * k / 4.0, span < 1 ? 3 : span < 100 ? 1 : 0)
      << "</text>";
  s << "<text x=\"" << (left + w) / 2 << "\" y=\"" << y + 18 << "\" class=\"al\">" << esc(title) << "</text>";
}

/// The opening of a chart: the svg element, its accessible title and the visible one.
void chart_head(std::ostringstream& s, const char* cls, int w, int h, const std::string& title) {
  s << "<svg class=\"" << cls << "\" viewBox=\"0 0 " << w << " " << h << "\" role=\"img\" aria-label=\"" << esc(title)
    << "\"><title>" << esc(title) << "</title><text x=\"" << w / 2 << "\" y=\"16\" class=\"ct\">" << esc(title)
    << "</text>";
}

}  // namespace

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

/// A bar chart in SVG. Bars whose index is <= highlight_last are drawn in the "underused" colour
/// over a shaded band. Labels on both axes; every bar has a <title> with its exact value. When the
/// non-zero values span more than log_scale_decades decades the y axis is logarithmic (bar height
/// ~ log10(1 + value)) and its title says so, so that a bucket of 32,768 beside one of 4 million
/// (0.8% of it: one pixel on a linear axis) is still seen. The left margin is as wide as the longest y label needs, so that the rotated
/// axis title never overlaps the tick labels.
std::string bar_chart(const std::string& title, const std::vector<std::uint64_t>& values,
                      const std::vector<std::string>& labels, int highlight_last,
                      const std::string& x_label, const std::string& y_label,
                      const std::string& band_label, bool band_flagged) {
  const int w = 460, h = 220, right = 10, top = 36, bottom = 46;
  const int n = static_cast<int>(values.size());
  const std::uint64_t max_v = std::max<std::uint64_t>(1, *std::max_element(values.begin(), values.end()));
  std::uint64_t min_v = max_v;
  for (const std::uint64_t v : values)
    if (v > 0) min_v = std::min(min_v, v);
  const bool log_scale = static_cast<double>(max_v) > static_cast<double>(min_v) * std::pow(10.0, log_scale_decades);
  // y ticks: 0, max/2, max on a linear axis; the powers of ten up to max (at most five) on a log one
  std::vector<std::pair<double, std::uint64_t>> ticks;  // (share of the plot's height, value)
  const double log_top = std::log10(1.0 + static_cast<double>(max_v));
  const auto height_of = [&](std::uint64_t v) {
    return log_scale ? std::log10(1.0 + static_cast<double>(v)) / log_top
                     : static_cast<double>(v) / static_cast<double>(max_v);
  };
  if (log_scale) {
    const int decades = static_cast<int>(std::floor(std::log10(static_cast<double>(max_v))));
    const int stride = std::max(1, (decades + 4) / 5);
    ticks.push_back({0.0, 0});
    for (int d = 0; d <= decades; d += stride) {
      std::uint64_t v = 1;
      for (int k = 0; k < d; ++k) v *= 10;
      ticks.push_back({height_of(v), v});
    }
  } else {
    for (int k = 0; k <= 2; ++k) ticks.push_back({k / 2.0, max_v * k / 2});
  }
  std::size_t widest = 1;
  for (const auto& t : ticks) widest = std::max(widest, num(t.second).size());
  // tick labels end 4 px left of the plot, ~6 px a character at 10 px; the rotated title needs
  // ~12 px beside them and 8 px from the edge
  const int label_px = static_cast<int>(widest) * 6;
  const int left = std::max(56, label_px + 24);
  const int title_x = left - 4 - label_px - 8;
  const double bw = static_cast<double>(w - left - right) / std::max(1, n);
  const char* shade = band_flagged ? orange : grey;
  std::ostringstream s;
  chart_head(s, "chart", w, h, title);
  if (highlight_last >= 0) {
    const double bx = left + bw * (std::min(highlight_last, n - 1) + 1);
    s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << fmt(bx - left, 1) << "\" height=\""
      << h - top - bottom << "\" fill=\"" << shade << "\" fill-opacity=\"0.15\"/>";
    s << "<rect x=\"" << left << "\" y=\"" << top - 12 << "\" width=\"10\" height=\"9\" fill=\"" << shade
      << "\" fill-opacity=\"0.4\"/><text x=\"" << left + 14 << "\" y=\"" << top - 4 << "\" class=\"band\">"
      << (band_flagged ? "shaded: " : "shaded, informational: ") << esc(band_label) << "</text>";
  }
  for (const auto& [share, v] : ticks) grid_line(s, h - bottom - (h - top - bottom) * share, left, w - right, num(v));
  for (int i = 0; i < n; ++i) {
    const double bh = (h - top - bottom) * height_of(values[i]);
    const double x = left + bw * i;
    s << "<rect x=\"" << fmt(x + 1, 1) << "\" y=\"" << fmt(h - bottom - bh, 1) << "\" width=\""
      << fmt(std::max(1.0, bw - 2), 1) << "\" height=\"" << fmt(bh, 1) << "\" fill=\""
      << (i <= highlight_last && band_flagged ? vermillion : blue) << "\"><title>" << esc(labels[i]) << ": " << num(values[i])
      << "</title></rect>";
    const int every = n > 24 ? 4 : n > 12 ? 2 : 1;
    if (i % every == 0)
      s << "<text x=\"" << fmt(x + bw / 2, 1) << "\" y=\"" << h - bottom + 14 << "\" class=\"xl\">" << esc(labels[i])
        << "</text>";
  }
  s << "<text x=\"" << (left + w - right) / 2 << "\" y=\"" << h - 8 << "\" class=\"al\">" << esc(x_label) << "</text>";
  s << "<text x=\"" << title_x << "\" y=\"" << (top + h - bottom) / 2 << "\" class=\"al\" transform=\"rotate(-90 "
    << title_x << " " << (top + h - bottom) / 2 << ")\">" << esc(y_label + (log_scale ? " (log scale)" : ""))
    << "</text></svg>";
  return s.str();
}

/// A log2 histogram trimmed to its populated range (always including the band).
std::string log2_chart(const std::string& title, const std::array<std::uint64_t, log2_buckets>& h,
                       int band_last, const std::string& what, const std::string& band_label,
                       bool band_flagged) {
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
                   "child grids", band_label, band_flagged);
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

std::string timeline_chart(const std::string& title, const std::vector<double>& values, double span_us,
                           double reference, const std::string& reference_label,
                           const std::string& y_label) {
  const int w = 900, h = 200, left = 64, right = 10, top = 30, bottom = 40;
  const double peak = *std::max_element(values.begin(), values.end());
  const double top_v = std::max({1.0, peak, reference}) * 1.05;
  const double pw = w - left - right, ph = h - top - bottom;
  const auto n = values.size();
  const auto x_of = [&](std::size_t k) { return left + pw * static_cast<double>(k) / static_cast<double>(n); };
  const auto y_of = [&](double v) { return h - bottom - ph * v / top_v; };
  std::ostringstream s;
  chart_head(s, "chart wide", w, h, title);
  for (int k = 0; k <= 2; ++k) {
    const double v = top_v * k / 2.0;
    grid_line(s, y_of(v), left, w - right, fmt(v, v < 10 ? 1 : 0));
  }
  std::vector<step> steps;
  for (std::size_t k = 0; k < n; ++k) steps.push_back({x_of(k), x_of(k + 1), y_of(values[k])});
  s << "<path fill=\"" << blue << "\" fill-opacity=\"0.5\" stroke=\"" << blue << "\" d=\""
    << step_path(steps, y_of(0), true) << "\"/>";
  // one transparent hover target per bin
  for (std::size_t k = 0; k < n; ++k)
    s << "<rect x=\"" << fmt(x_of(k), 1) << "\" y=\"" << top << "\" width=\"" << fmt(x_of(k + 1) - x_of(k), 2)
      << "\" height=\"" << fmt(ph, 1) << "\" fill-opacity=\"0\"><title>"
      << fmt(span_us * static_cast<double>(k) / static_cast<double>(n), 1) << "-"
      << fmt(span_us * static_cast<double>(k + 1) / static_cast<double>(n), 1) << " us: " << fmt(values[k], 1)
      << "</title></rect>";
  if (reference > 0) {
    const double y = y_of(reference);
    s << "<line x1=\"" << left << "\" x2=\"" << w - right << "\" y1=\"" << fmt(y, 1) << "\" y2=\"" << fmt(y, 1)
      << "\" stroke=\"" << vermillion << "\" stroke-dasharray=\"6 4\"/><text x=\"" << w - right - 4 << "\" y=\""
      << fmt(y - 4, 1) << "\" class=\"yl\" fill=\"" << vermillion << "\">" << esc(reference_label) << "</text>";
  }
  time_axis(s, left, pw, h - bottom + 14, span_us, "time since the run's first launch request (us)", w - right);
  s << "<text x=\"12\" y=\"" << (top + h - bottom) / 2 << "\" class=\"al\" transform=\"rotate(-90 12 "
    << (top + h - bottom) / 2 << ")\">" << esc(y_label) << "</text></svg>";
  return s.str();
}

namespace {

/// One strip of windows under the activity chart, at y, `pw` wide from `left` over `span_ms`:
/// its bars by row, or its density (windows at once, scaled to its peak) as a small area; returns
/// its height.
int window_strip_svg(std::ostringstream& s, const window_strip& strip, const std::string& name, const char* colour,
                     int left, double pw, int y, double span_ms) {
  const int row_h = 8, density_h = 24;
  const auto x_of = [&](double ms) { return left + pw * ms / span_ms; };
  const int h = strip.density.empty() ? std::max(1, strip.rows) * row_h : density_h;
  s << "<text x=\"" << left - 4 << "\" y=\"" << y + std::min(h, 12) - 2 << "\" class=\"yl\">" << esc(name)
    << "</text><g fill=\"" << colour << "\"><title>" << esc(name) << ": " << num(strip.windows) << " in the window"
    << (strip.density.empty() ? "" : " (binned: how many ran at once, to the peak)") << "</title>";
  for (const auto& b : strip.bars)
    s << "<rect x=\"" << fmt(x_of(b.start_ms), 1) << "\" y=\"" << y + b.row * row_h << "\" width=\""
      << fmt(std::max(0.5, x_of(b.end_ms) - x_of(b.start_ms)), 1) << "\" height=\"" << row_h - 2 << "\"/>";
  if (!strip.density.empty()) {
    const double peak = std::max(1e-9, *std::max_element(strip.density.begin(), strip.density.end()));
    const std::size_t n = strip.density.size();
    std::vector<step> steps;
    for (std::size_t k = 0; k < n; ++k)
      steps.push_back({left + pw * static_cast<double>(k) / static_cast<double>(n),
                       left + pw * static_cast<double>(k + 1) / static_cast<double>(n),
                       y + density_h - density_h * strip.density[k] / peak});
    s << "<path fill-opacity=\"0.6\" d=\"" << step_path(steps, y + density_h, true) << "\"/>";
    s << "<text x=\"" << left - 4 << "\" y=\"" << y + 21 << "\" class=\"yl\">peak " << fmt(peak, 1)
      << "</text>";
  }
  s << "</g>";
  return h;
}

}  // namespace

std::string activity_chart(const sm_activity& a) {
  const int w = 900, left = 86, right = 10, top = 40, ph = 140, gap = 10;
  const double pw = w - left - right;
  const double span_ms = std::max(1e-6, static_cast<double>(a.span_ns) / 1e6);
  const auto x_of = [&](double ms) { return left + pw * ms / span_ms; };
  const auto y_of = [&](double pct) { return top + ph - ph * std::clamp(pct, 0.0, 100.0) / 100.0; };
  // the strips' heights first: the chart's height depends on them
  std::ostringstream strips;
  int y = top + ph + gap;
  if (a.children.windows > 0)
    y += window_strip_svg(strips, a.children, "child grids", green, left, pw, y, span_ms) + gap;
  if (a.host_kernels.windows > 0)
    y += window_strip_svg(strips, a.host_kernels, "host kernels", grey, left, pw, y, span_ms) + gap;
  const int h = y + 34;
  std::ostringstream s;
  chart_head(s, "chart wide", w, h, "SM activity over time");
  for (int pct = 0; pct <= 100; pct += 50) grid_line(s, y_of(pct), left, w - right, std::to_string(pct) + "%");
  std::vector<step> sm, warps;
  for (const auto& p : a.series) {
    sm.push_back({x_of(p.start_ms), x_of(p.end_ms), y_of(p.sm_active)});
    if (p.warps_active) warps.push_back({x_of(p.start_ms), x_of(p.end_ms), y_of(*p.warps_active)});
  }
  s << "<path fill=\"" << blue << "\" fill-opacity=\"0.45\" stroke=\"" << blue << "\" d=\""
    << step_path(sm, y_of(0), true) << "\"><title>SM active %: mean " << fmt(a.mean_sm_active, 1) << "%</title></path>";
  if (!warps.empty())
    s << "<path fill=\"none\" stroke=\"" << orange << "\" stroke-width=\"1.5\" d=\"" << step_path(warps, 0, false)
      << "\"><title>warps active %: mean " << fmt(a.mean_warps_active.value_or(0), 1) << "%</title></path>";
  // legend
  s << "<rect x=\"" << left << "\" y=\"" << top - 14 << "\" width=\"10\" height=\"9\" fill=\"" << blue
    << "\" fill-opacity=\"0.6\"/><text x=\"" << left + 14 << "\" y=\"" << top - 6
    << "\" class=\"xl2\">SM active % (cycles with the SM active)</text>";
  if (!warps.empty())
    s << "<line x1=\"" << left + 260 << "\" x2=\"" << left + 272 << "\" y1=\"" << top - 10 << "\" y2=\"" << top - 10
      << "\" stroke=\"" << orange << "\" stroke-width=\"2\"/><text x=\"" << left + 276 << "\" y=\"" << top - 6
      << "\" class=\"xl2\">warps active % (warp slots occupied)</text>";
  s << strips.str();
  time_axis(s, left, pw, h - 20, span_ms, "time since the run's first PM sample (ms)", w - right);
  s << "</svg>";
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

}  // namespace cdpkit::report::render
