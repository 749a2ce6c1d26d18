// The picture of a tessellation: a window of the curves as a self-contained SVG, the points as
// dots coloured by their curve's point count, so the irregularity of the work is visible.
//
// 1. The window is mapped to a plot of options.width_px (y down, as the curves are).
// 2. Every curve whose control points' bounding box meets the window (a Bézier curve lies in the
//    convex hull of its control points, so the others cannot show) gets its control polygon,
//    faint, up to max_curves of them.
// 3. Its points inside the window become dots in one group per count bucket (log2 of the count),
//    up to max_points of them; the caption says when a cap clipped the picture.

#include <cdpkit/bezier.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/nvtx.hpp>

#include "../common/text_input.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>

namespace cdpkit {

namespace {

/// Colours of the count buckets: floor(log2(count)) = 1 (2-3 points) ... 12 (4096 and more).
constexpr std::array<const char*, 12> bucket_colour = {"#2c7bb6", "#00a6ca", "#00c2a0", "#7bd66a",
                                                      "#c6dc3c", "#f4d03f", "#f5a623", "#ef7a1a",
                                                      "#e04e1b", "#c81d25", "#8f0f2b", "#4a0a3a"};

std::size_t bucket_of(std::uint32_t count) {
  std::size_t b = 0;
  while (count > 3 && b + 1 < bucket_colour.size()) {
    count >>= 1;
    ++b;
  }
  return b;
}

std::string escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // control characters are not XML 1.0
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') out += '?';
        else out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.2f", v);
  return text;
}

std::string short_num(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

}  // namespace

curve_window end_point_bounds(const curve_set& set) {
  check_curves(set);
  if (set.curves.empty())
    throw input_error("end_point_bounds: the curve set " + quoted_spec(set.name) + " is empty");
  curve_window w{set.curves[0].p[0].x, set.curves[0].p[0].y, set.curves[0].p[0].x, set.curves[0].p[0].y};
  for (const bezier_curve& c : set.curves)
    for (const vec2 p : {c.p[0], c.p[c.degree]}) {
      w.min_x = std::min(w.min_x, p.x);
      w.min_y = std::min(w.min_y, p.y);
      w.max_x = std::max(w.max_x, p.x);
      w.max_y = std::max(w.max_y, p.y);
    }
  const float pad = std::max(0.5f, 0.02f * std::max(w.max_x - w.min_x, w.max_y - w.min_y));
  return {w.min_x - pad, w.min_y - pad, w.max_x + pad, w.max_y + pad};
}

void write_svg(std::ostream& out, const curve_set& set, const std::vector<vec2>& points,
               const std::vector<std::uint32_t>& offsets, const curve_window& window, const svg_options& options) {
  CDPKIT_NVTX_SCOPE("bezier::write_svg");
  check_curves(set);
  if (offsets.size() != set.curves.size() + 1 || offsets.front() != 0 || offsets.back() != points.size())
    throw input_error("write_svg: the offsets (" + std::to_string(offsets.size()) + " entries, last " +
                      (offsets.empty() ? std::string("none") : std::to_string(offsets.back())) +
                      ") are not a layout of " + std::to_string(points.size()) + " points over " +
                      std::to_string(set.curves.size()) + " curves");
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i)
    if (offsets[i] > offsets[i + 1])
      throw input_error("write_svg: the offsets decrease at curve " + std::to_string(i));
  const double ww = static_cast<double>(window.max_x) - window.min_x, wh = static_cast<double>(window.max_y) - window.min_y;
  if (!std::isfinite(ww) || !std::isfinite(wh) || !(ww > 0.0) || !(wh > 0.0))
    throw input_error("write_svg: the window [" + short_num(window.min_x) + ", " + short_num(window.max_x) + "] x [" +
                      short_num(window.min_y) + ", " + short_num(window.max_y) + "] is empty or not finite");
  if (options.width_px < 64 || options.width_px > 16384)
    throw input_error("write_svg: the width " + std::to_string(options.width_px) + " px is not in [64, 16384]");
  if (!(options.dot_radius_px > 0.0f) || options.dot_radius_px > 64.0f)
    throw input_error("write_svg: the dot radius " + short_num(options.dot_radius_px) + " px is not in (0, 64]");

  // 1. the plot: the window scaled to the width, at most 4 widths high
  double scale = options.width_px / ww;
  if (wh * scale > 4.0 * options.width_px) scale = 4.0 * options.width_px / wh;
  const double plot_w = ww * scale, plot_h = wh * scale;
  const double left = 8.0, top = 64.0;
  const auto sx = [&](float x) { return num(left + (x - static_cast<double>(window.min_x)) * scale); };
  const auto sy = [&](float y) { return num(top + (y - static_cast<double>(window.min_y)) * scale); };
  const auto inside = [&](vec2 p) {
    return p.x >= window.min_x && p.x <= window.max_x && p.y >= window.min_y && p.y <= window.max_y;
  };

  // 2. and 3. the control polygons and the dots, collected first (the caption comes before them)
  std::string polygons;
  std::array<std::string, bucket_colour.size()> dots;
  std::array<std::uint64_t, bucket_colour.size()> curves_per_bucket{};
  std::uint64_t meeting = 0, polygons_drawn = 0, far_reaching = 0, in_window = 0, dots_drawn = 0;
  const double reach = svg_far_reach * std::max(ww, wh);
  const std::string r = short_num(options.dot_radius_px);
  for (std::size_t i = 0; i < set.curves.size(); ++i) {
    const bezier_curve& c = set.curves[i];
    vec2 lo = c.p[0], hi = c.p[0];
    for (int k = 1; k <= c.degree; ++k) {
      lo = {std::min(lo.x, c.p[k].x), std::min(lo.y, c.p[k].y)};
      hi = {std::max(hi.x, c.p[k].x), std::max(hi.y, c.p[k].y)};
    }
    if (hi.x < window.min_x || lo.x > window.max_x || hi.y < window.min_y || lo.y > window.max_y) continue;
    ++meeting;
    if (std::max(static_cast<double>(hi.x) - lo.x, static_cast<double>(hi.y) - lo.y) > reach) {
      ++far_reaching;  // a very curved curve's far control points: lines across the whole window
    } else if (polygons_drawn < options.max_curves) {
      ++polygons_drawn;
      polygons += "<polyline points=\"";
      for (int k = 0; k <= c.degree; ++k) polygons += (k ? " " : "") + sx(c.p[k].x) + "," + sy(c.p[k].y);
      polygons += "\"/>\n";
    }
    const std::uint32_t count = offsets[i + 1] - offsets[i];
    const std::size_t b = bucket_of(count);
    bool shown = false;
    for (std::uint32_t j = offsets[i]; j < offsets[i + 1]; ++j) {
      if (!inside(points[j])) continue;
      ++in_window;
      if (dots_drawn == options.max_points) continue;
      ++dots_drawn;
      shown = true;
      dots[b] += "<circle cx=\"" + sx(points[j].x) + "\" cy=\"" + sy(points[j].y) + "\" r=\"" + r + "\"/>\n";
    }
    if (shown) ++curves_per_bucket[b];
  }

  // the page, the caption and the legend
  const double width = plot_w + 2 * left, height = top + plot_h + left;
  const std::string title = options.title.empty() ? set.name : options.title;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
      << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<title>" << escape(title) << "</title>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      << "<text x=\"8\" y=\"16\" font-weight=\"bold\">" << escape(title) << "</text>\n";
  std::string caption = "window [" + short_num(window.min_x) + ", " + short_num(window.max_x) + "] x [" +
                        short_num(window.min_y) + ", " + short_num(window.max_y) + "] px: " + std::to_string(meeting) +
                        " curves meet it, " + std::to_string(in_window) + " points in it";
  if (dots_drawn < in_window || polygons_drawn + far_reaching < meeting) {
    caption += "; clipped: " + std::to_string(dots_drawn) + " of " + std::to_string(in_window) + " points and " +
               std::to_string(polygons_drawn) + " of " + std::to_string(meeting - far_reaching) +
               " control polygons drawn";
  } else {
    caption += ", all drawn";
  }
  if (far_reaching > 0)
    caption += "; " + std::to_string(far_reaching) + " control polygons spanning over " + short_num(svg_far_reach) +
               " window sides left out";
  out << "<text x=\"8\" y=\"34\" class=\"caption\">" << escape(caption) << "</text>\n";
  out << "<g class=\"legend\"><text x=\"8\" y=\"54\">points per curve:</text>\n";
  for (std::size_t b = 0; b < bucket_colour.size(); ++b) {
    const double x = 122.0 + 62.0 * static_cast<double>(b);
    const std::string label = b + 1 == bucket_colour.size() ? "\xe2\x89\xa5" + std::to_string(2u << b)  // ≥
                                                            : std::to_string(2u << b) + "+";
    out << "<circle cx=\"" << num(x) << "\" cy=\"50\" r=\"4\" fill=\"" << bucket_colour[b] << "\"/><text x=\""
        << num(x + 7) << "\" y=\"54\">" << label << "</text>\n";
  }
  out << "</g>\n";
  out << "<defs><clipPath id=\"plot\"><rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\""
      << num(plot_w) << "\" height=\"" << num(plot_h) << "\"/></clipPath></defs>\n"
      << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\"" << num(plot_w) << "\" height=\""
      << num(plot_h) << "\" fill=\"none\" stroke=\"#cccccc\"/>\n"
      << "<g clip-path=\"url(#plot)\">\n"
      << "<g class=\"control\" fill=\"none\" stroke=\"#999999\" stroke-opacity=\"0.45\" stroke-width=\"0.7\">\n"
      << polygons << "</g>\n";
  for (std::size_t b = 0; b < bucket_colour.size(); ++b) {
    if (dots[b].empty()) continue;
    out << "<g class=\"points\" data-bucket=\"" << (2u << b) << "\" data-curves=\"" << curves_per_bucket[b]
        << "\" fill=\"" << bucket_colour[b] << "\">\n"
        << dots[b] << "</g>\n";
  }
  out << "</g>\n</svg>\n";
}

}  // namespace cdpkit
