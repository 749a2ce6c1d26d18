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
  s << "<svg class=\"chart wide\" viewBox=\"0 0 " << w << " " << h << "\" role=\"img\" aria-label=\"" << esc(title)
    << "\"><title>" << esc(title) << "</title>";
  s << "<text x=\"" << w / 2 << "\" y=\"16\" class=\"ct\">" << esc(title) << "</text>";
  for (int k = 0; k <= 2; ++k) {
    const double v = top_v * k / 2.0, y = y_of(v);
    s << "<line x1=\"" << left << "\" x2=\"" << w - right << "\" y1=\"" << fmt(y, 1) << "\" y2=\"" << fmt(y, 1)
      << "\" class=\"grid\"/><text x=\"" << left - 4 << "\" y=\"" << fmt(y + 4, 1) << "\" class=\"yl\">"
      << fmt(v, v < 10 ? 1 : 0) << "</text>";
  }
  // the step area
  s << "<path fill=\"" << blue << "\" fill-opacity=\"0.5\" stroke=\"" << blue << "\" d=\"M" << left << " "
    << fmt(y_of(0), 1);
  for (std::size_t k = 0; k < n; ++k)
    s << " L" << fmt(x_of(k), 1) << " " << fmt(y_of(values[k]), 1) << " L" << fmt(x_of(k + 1), 1) << " "
      << fmt(y_of(values[k]), 1);
  s << " L" << fmt(x_of(n), 1) << " " << fmt(y_of(0), 1) << " Z\"/>";
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
  for (int k = 0; k <= 4; ++k)
    s << "<text x=\"" << fmt(left + pw * k / 4.0, 1) << "\" y=\"" << h - bottom + 14 << "\" class=\"xl\">"
      << fmt(span_us * k / 4.0, span_us < 100 ? 1 : 0) << "</text>";
  s << "<text x=\"" << (left + w - right) / 2 << "\" y=\"" << h - 8
    << "\" class=\"al\">time since the run's first launch request (us)</text>";
  s << "<text x=\"12\" y=\"" << (top + h - bottom) / 2 << "\" class=\"al\" transform=\"rotate(-90 12 "
    << (top + h - bottom) / 2 << ")\">" << esc(y_label) << "</text></svg>";
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
