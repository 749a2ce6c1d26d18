// The Bézier family on the host: the point count from Wang's flatness bound (straight curves,
// the square-root growth, the cap), evaluate's end points, the generators (the power-law tail,
// the all-straight and all-extreme sets), curve specs, the font reader on DejaVu Sans, the
// offsets and the CPU reference (checked against the flatness bound and against an independent
// double-precision Bernstein evaluation within the stated tolerance), and the SVG picture.

#include <doctest/doctest.h>

#include "support/gpu.hpp"
#include "support/temp_dir.hpp"

#include <cdpkit/bezier.hpp>
#include <cdpkit/harness/bezier_runs.hpp>
#include <cdpkit/error.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using cdpkit::bezier_curve;
using cdpkit::curve_set;
using cdpkit::vec2;
using cdpkit_test::input_error_of;
using cdpkit_test::temp_dir;

const char* const dejavu_sans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

bezier_curve quadratic(vec2 a, vec2 b, vec2 c) { return bezier_curve{{a, b, c, c}, 2}; }
bezier_curve cubic(vec2 a, vec2 b, vec2 c, vec2 d) { return bezier_curve{{a, b, c, d}, 3}; }

std::vector<std::uint32_t> counts_of(const curve_set& set, float tolerance = cdpkit::default_tolerance,
                                     std::uint32_t cap = cdpkit::default_point_cap) {
  std::vector<std::uint32_t> counts;
  for (const auto& c : set.curves) counts.push_back(cdpkit::points_for_curve(c, tolerance, cap));
  return counts;
}

/// The curve at t, in double precision, from the Bernstein form: independent of evaluate().
std::pair<double, double> bernstein(const bezier_curve& c, double t) {
  const double s = 1.0 - t;
  if (c.degree == 2) {
    const double w[3] = {s * s, 2 * s * t, t * t};
    return {w[0] * c.p[0].x + w[1] * c.p[1].x + w[2] * c.p[2].x, w[0] * c.p[0].y + w[1] * c.p[1].y + w[2] * c.p[2].y};
  }
  const double w[4] = {s * s * s, 3 * s * s * t, 3 * s * t * t, t * t * t};
  double x = 0, y = 0;
  for (int k = 0; k < 4; ++k) x += w[k] * c.p[k].x, y += w[k] * c.p[k].y;
  return {x, y};
}

/// A small XML check: every tag closed in order, one root <svg>, '&' only in the five entities.
std::string xml_problem(const std::string& text) {
  std::vector<std::string> open;
  bool root_seen = false;
  for (std::size_t at = 0; at < text.size();) {
    if (text[at] == '&') {
      bool ok = false;
      for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
        ok = ok || text.compare(at, std::char_traits<char>::length(e), e) == 0;
      if (!ok) return "a bare '&' at " + std::to_string(at);
      ++at;
      continue;
    }
    if (text[at] != '<') {
      if (text[at] == '>') return "a bare '>' at " + std::to_string(at);
      ++at;
      continue;
    }
    const std::size_t end = text.find('>', at);
    if (end == std::string::npos) return "an unterminated tag at " + std::to_string(at);
    const std::string tag = text.substr(at + 1, end - at - 1);
    at = end + 1;
    if (!tag.empty() && tag.front() == '?') continue;  // the declaration
    if (tag.find('<') != std::string::npos) return "a '<' inside tag " + tag;
    if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) return "an unbalanced quote in tag " + tag;
    if (!tag.empty() && tag.front() == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "</" + tag.substr(1) + "> closes nothing open";
      open.pop_back();
      continue;
    }
    const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
    if (open.empty()) {
      if (root_seen || name != "svg") return "a second root or a root that is not <svg>: <" + name + ">";
      root_seen = true;
    }
    if (tag.back() != '/') open.push_back(name);
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  return root_seen ? "" : "no <svg> root";
}

/// The dots of the picture: <circle> elements inside <g class="points"> groups.
std::uint64_t dots_in(const std::string& svg) {
  std::uint64_t dots = 0;
  for (std::size_t at = svg.find("<g class=\"points\""); at != std::string::npos;
       at = svg.find("<g class=\"points\"", at + 1)) {
    const std::size_t end = svg.find("</g>", at);
    for (std::size_t c = svg.find("<circle", at); c != std::string::npos && c < end; c = svg.find("<circle", c + 1))
      ++dots;
  }
  return dots;
}

}  // namespace

TEST_CASE("a straight cubic needs two points whatever its length") {
  for (int e = -10; e <= 20; e += 5) {
    const float len = std::ldexp(3.0f, e);  // thirds exact
    CAPTURE(len);
    const bezier_curve c = cubic({0, 0}, {len / 3, len / 3}, {2 * len / 3, 2 * len / 3}, {len, len});
    const bezier_curve q = quadratic({-len, 0}, {0, 0}, {len, 0});
    CHECK(cdpkit::second_difference_norm(c) == 0.0);
    for (const float tol : {1e-4f, 0.1f, 10.0f}) {
      CHECK(cdpkit::points_for_curve(c, tol, 4096) == 2);
      CHECK(cdpkit::points_for_curve(q, tol, 4096) == 2);
    }
  }
  // the generator's straight curves, at float rounding, too
  const auto set = cdpkit::make_straight_curves(10000, 5);
  const auto counts = counts_of(set);
  CHECK(std::all_of(counts.begin(), counts.end(), [](std::uint32_t n) { return n == 2; }));
}

TEST_CASE("the point count grows with the square root of the curvature and stops at the cap") {
  // a quadratic over (0,0) (2,0) with p1 = (1, h): M = 2h; at tolerance 1/4, 1/4 * M / tol = 2h:
  // h = k^2 / 2 needs exactly k segments, k + 1 points
  for (std::uint32_t k = 1; k <= 200; ++k) {
    CAPTURE(k);
    const float h = 0.5f * static_cast<float>(k * k);
    CHECK(cdpkit::points_for_curve(quadratic({0, 0}, {1, h}, {2, 0}), 0.25f, 4096) == k + 1);
    // a hair more bend needs one more segment
    CHECK(cdpkit::points_for_curve(quadratic({0, 0}, {1, h * 1.001f}, {2, 0}), 0.25f, 4096) == k + 2);
  }
  // a cubic: factor 3/4; p1 = (1, g), p2 = (2, g) (a C): D_0 = D_1 = (0, -g), M = g
  for (std::uint32_t k = 1; k <= 100; ++k) {
    const float g = static_cast<float>(k * k) / 3.0f * 4.0f;  // 3/4 * g / 1 = k^2 (up to rounding)
    const std::uint32_t n = cdpkit::points_for_curve(cubic({0, 0}, {1, g}, {2, g}, {3, 0}), 1.0f, 4096);
    CHECK((n == k + 1 || n == k + 2));
  }
  // four times the bend, twice the segments; the count never decreases with the bend
  std::uint32_t previous = 2;
  for (float h = 0.01f; h < 1e9f; h *= 1.37f) {
    const std::uint32_t n = cdpkit::points_for_curve(quadratic({0, 0}, {1, h}, {2, 0}), 0.1f, 4096);
    CHECK(n >= previous);
    previous = n;
    const std::uint32_t n4 = cdpkit::points_for_curve(quadratic({0, 0}, {1, 4 * h}, {2, 0}), 0.1f, 1u << 20);
    if (n > 3 && n < 4096) CHECK(std::abs(static_cast<int>(n4 - 1) - 2 * static_cast<int>(n - 1)) <= 2);
  }
  CHECK(previous == 4096);  // stopped at the cap
  const bezier_curve bent = quadratic({0, 0}, {1, 1e7f}, {2, 0});
  CHECK(cdpkit::points_for_curve(bent, 0.1f, 4096) == 4096);
  CHECK(cdpkit::points_for_curve(bent, 0.1f, 2) == 2);
  CHECK(cdpkit::points_for_curve(bent, 0.1f, 0) == 2);  // a cap below 2 is 2
  CHECK(cdpkit::points_for_curve(bent, 1e12f, 4096) == 2);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(cdpkit::points_for_curve(quadratic({0, 0}, {nan, 0}, {2, 0}), 0.1f, 77) == 77);
}

TEST_CASE("evaluate hits the end points exactly") {
  for (const auto& set : {cdpkit::make_random_curves(5000, 2), cdpkit::make_extreme_curves(500, 2)}) {
    for (const auto& c : set.curves) {
      CHECK(cdpkit::evaluate(c, 0.0f) == c.p[0]);
      CHECK(cdpkit::evaluate(c, 1.0f) == c.p[c.degree]);
    }
  }
  CHECK(cdpkit::tessellation_parameter(0, 7) == 0.0f);
  CHECK(cdpkit::tessellation_parameter(6, 7) == 1.0f);
  CHECK(cdpkit::tessellation_parameter(3, 7) == 0.5f);
  // the midpoint of a quadratic: (p0 + 2 p1 + p2) / 4
  CHECK(cdpkit::evaluate(quadratic({0, 0}, {2, 4}, {4, 0}), 0.5f) == vec2{2, 2});
}

TEST_CASE("the random curves have a power-law tail of point counts") {
  const std::uint64_t n = 200000;
  const auto set = cdpkit::make_random_curves(n, 1);
  REQUIRE(set.curves.size() == n);
  CHECK(set.name == "random:200000 (seed 1)");
  const auto counts = counts_of(set);
  const auto share = [&](auto pred) {
    return static_cast<double>(std::count_if(counts.begin(), counts.end(), pred)) / static_cast<double>(n);
  };
  // mostly flat
  CHECK(share([](std::uint32_t c) { return c == 2; }) > 0.4);
  CHECK(share([](std::uint32_t c) { return c <= 3; }) > 0.65);
  // P(count > k) ~ 1 / k: each factor 8 in k divides the tail by about 8
  const auto tail = [&](std::uint32_t k) { return share([k](std::uint32_t c) { return c > k; }); };
  for (const std::uint32_t k : {8u, 64u}) {
    CAPTURE(k);
    const double ratio = tail(8 * k) / tail(k);
    CAPTURE(ratio);
    CHECK(ratio > 1.0 / 16);
    CHECK(ratio < 1.0 / 4);
  }
  const std::uint32_t largest = *std::max_element(counts.begin(), counts.end());
  CHECK(largest > 1000);
  CHECK(largest < cdpkit::default_point_cap);
  // deterministic per seed
  const auto again = cdpkit::make_random_curves(1000, 1), other = cdpkit::make_random_curves(1000, 2);
  CHECK(std::equal(again.curves.begin(), again.curves.end(), set.curves.begin(),
                   [](const bezier_curve& a, const bezier_curve& b) { return a.p[1] == b.p[1] && a.degree == b.degree; }));
  CHECK(counts_of(again) != counts_of(other));
}

TEST_CASE("every extreme curve needs the cap, every straight one two points") {
  for (const std::uint64_t n : {1ull, 1000ull}) {
    const auto extreme = cdpkit::make_extreme_curves(n, 9);
    for (const std::uint32_t c : counts_of(extreme)) CHECK(c == cdpkit::default_point_cap);
    const auto offsets = cdpkit::tessellation_offsets(cdpkit::make_straight_curves(n, 9));
    CHECK(offsets.back() == 2 * n);
  }
  CHECK(input_error_of([] { return cdpkit::make_extreme_curves(0); }) == "make_extreme_curves(0): no curves");
  CHECK_CONTAINS(input_error_of([] { return cdpkit::make_random_curves(1ull << 33); }), "32-bit curve ids");
}

TEST_CASE("the curve specs make the sets they name, and bad specs are input_errors naming them") {
  CHECK(cdpkit::load_curves("random:100").curves.size() == 100);
  CHECK(cdpkit::load_curves("straight:2^4").curves.size() == 16);
  CHECK(cdpkit::load_curves("extreme:3", 4).name == "extreme:3 (seed 4)");
  for (const char* bad : {"random:", "random", "random:x", "random:0", "random:5:6", "bogus:3", "font:", "font:/x:0",
                          "font:/x:99999"}) {
    CAPTURE(bad);
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::load_curves(bad); }), std::string("curve spec '") + bad + "'");
  }
  CHECK_CONTAINS(input_error_of([] { return cdpkit::load_curves("bogus:3"); }), "unknown kind 'bogus'");
  CHECK_CONTAINS(input_error_of([] { return cdpkit::load_curves("random:0"); }), "no curves");
}

// Skipped without the cdpkit::fonts part (FreeType) or without the font (one decorator: a second skip would override).
TEST_CASE("every glyph of DejaVu Sans decomposes into curves that close" *
          doctest::skip(!cdpkit_test::requirement_met(cdpkit::font_reader_available(),
                                                      "the program does not link cdpkit::fonts (FreeType): the font cases are skipped") ||
                        !cdpkit_test::input_present(dejavu_sans, "fonts-dejavu-core"))) {
  const curve_set font = cdpkit::load_curves(std::string("font:") + dejavu_sans + ":64");
  CHECK_CONTAINS(font.name, "DejaVu Sans");
  CHECK_CONTAINS(font.name, "64 px per em");
  REQUIRE_NOTHROW(cdpkit::check_curves(font));  // the contours partition the curves
  const std::size_t contours = font.contour_offsets.size() - 1;
  CHECK(contours > 5000);
  CHECK(font.curves.size() > 50000);
  std::uint64_t open = 0, broken = 0, quadratics = 0;
  for (std::size_t k = 0; k < contours; ++k) {
    const std::uint32_t first = font.contour_offsets[k], last = font.contour_offsets[k + 1] - 1;
    for (std::uint32_t i = first; i < last; ++i)
      if (font.curves[i].p[font.curves[i].degree] != font.curves[i + 1].p[0]) ++broken;
    if (font.curves[last].p[font.curves[last].degree] != font.curves[first].p[0]) ++open;
  }
  for (const auto& c : font.curves) quadratics += c.degree == 2;
  CHECK(broken == 0);
  CHECK(open == 0);
  CHECK(quadratics == font.curves.size());  // a TrueType font: lines and conics only
  // at 64 px per em the glyphs are a few tens of points per curve at most
  const auto offsets = cdpkit::tessellation_offsets(font);
  std::uint32_t largest = 0;
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) largest = std::max(largest, offsets[i + 1] - offsets[i]);
  CHECK(largest > 4);
  CHECK(largest < 200);
}

TEST_CASE("a file that is not a font is an input_error naming it") {
  const temp_dir dir;
  const std::string text = dir.file("notes.ttf", "this is not a font\n");
  const std::string empty = dir.file("empty.ttf", "");
  const std::string missing = (dir.path() / "missing.ttf").string();
  for (const std::string& path : {text, empty, missing, dir.path().string()}) {
    CAPTURE(path);
    const std::string what = input_error_of([&] { return cdpkit::read_font_curves(path); });
    CHECK_CONTAINS(what, path);
    const std::string via_spec = input_error_of([&] { return cdpkit::load_curves("font:" + path); });
    CHECK_CONTAINS(via_spec, "curve spec 'font:" + path + "'");
    if (!cdpkit::font_reader_available()) CHECK_CONTAINS(what, "cdpkit::fonts");
  }
  if (cdpkit::font_reader_available()) {
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::read_font_curves(text); }), "not a font");
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::read_font_curves(dir.path().string()); }), "not a regular file");
  }
}

TEST_CASE("the reference tessellation's offsets are the scan of the counts") {
  SUBCASE("empty") {
    const curve_set none;
    CHECK(cdpkit::tessellation_offsets(none) == std::vector<std::uint32_t>{0});
    CHECK(cdpkit::tessellate_reference(none).empty());
  }
  for (const char* spec : {"random:1", "random:1000", "random:20000", "straight:333", "extreme:7"}) {
    CAPTURE(spec);
    const curve_set set = cdpkit::load_curves(spec, 3);
    for (const float tol : {0.1f, 0.01f}) {
      CAPTURE(tol);
      const auto offsets = cdpkit::tessellation_offsets(set, tol);
      const auto counts = counts_of(set, tol);
      REQUIRE(offsets.size() == set.curves.size() + 1);
      CHECK(offsets[0] == 0);
      bool scanned = true;
      for (std::size_t i = 0; i < counts.size(); ++i) scanned = scanned && offsets[i + 1] - offsets[i] == counts[i];
      CHECK(scanned);
      const auto points = cdpkit::tessellate_reference(set, tol);
      REQUIRE(points.size() == offsets.back());
      // every curve's points run from its first control point to its last, and (below the cap)
      // every chord's midpoint is within the tolerance of the curve (Wang's bound), give or take
      // the float rounding of the coordinates
      std::uint64_t bad_ends = 0, too_far = 0;
      for (std::size_t i = 0; i < counts.size(); ++i) {
        const bezier_curve& c = set.curves[i];
        if (points[offsets[i]] != c.p[0] || points[offsets[i + 1] - 1] != c.p[c.degree]) ++bad_ends;
        if (counts[i] == cdpkit::default_point_cap) continue;
        float size = 1.0f;
        for (int k = 0; k <= c.degree; ++k) size = std::max({size, std::fabs(c.p[k].x), std::fabs(c.p[k].y)});
        const double slack = tol + 8.0 * std::ldexp(size, -23);
        for (std::uint32_t j = 0; j + 1 < counts[i]; ++j) {
          const vec2 a = points[offsets[i] + j], b = points[offsets[i] + j + 1];
          const double t = (j + 0.5) / (counts[i] - 1);
          const auto [x, y] = bernstein(c, t);
          if (std::hypot(0.5 * (a.x + b.x) - x, 0.5 * (a.y + b.y) - y) > slack) ++too_far;
        }
      }
      CHECK(bad_ends == 0);
      CHECK(too_far == 0);
    }
  }
  SUBCASE("bad arguments and too many points are input_errors") {
    const curve_set set = cdpkit::make_random_curves(10);
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::tessellation_offsets(set, 0.0f); }), "tolerance 0");
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::tessellation_offsets(set, -1.0f); }), "tolerance -1");
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::tessellation_offsets(set, std::nanf("")); }), "tolerance");
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::tessellation_offsets(set, 0.1f, 1); }), "cap 1");
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::tessellate_reference(set, 0.1f, cdpkit::max_point_cap + 1); }),
                   "the cap");
    curve_set broken = set;
    broken.curves[4].degree = 4;
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::tessellation_offsets(broken); }), "curve 4 has degree 4");
    broken = set;
    broken.curves[7].p[1].y = std::numeric_limits<float>::infinity();
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::tessellation_offsets(broken); }), "curve 7");
    broken = set;
    broken.contour_offsets = {0, 5, 5, 10};
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::tessellation_offsets(broken); }), "contour 1 is empty");
    // 4097 curves at a cap of 2^20 need more than 2^32 - 1 points
    const curve_set huge = cdpkit::make_extreme_curves(4097);
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::tessellation_offsets(huge, 1e-6f, cdpkit::max_point_cap); }),
                   "32-bit offsets");
  }
}

TEST_CASE("the reference agrees with an independent Bernstein evaluation within the stated tolerance") {
  std::vector<curve_set> sets{cdpkit::make_random_curves(20000, 4), cdpkit::make_extreme_curves(50, 4),
                              cdpkit::make_straight_curves(1000, 4)};
  if (cdpkit::font_reader_available() && std::filesystem::exists(dejavu_sans))
    sets.push_back(cdpkit::read_font_curves(dejavu_sans, 256));
  for (const curve_set& set : sets) {
    CAPTURE(set.name);
    const auto offsets = cdpkit::tessellation_offsets(set);
    const auto points = cdpkit::tessellate_reference(set);
    std::vector<vec2> exact(points.size());
    for (std::size_t i = 0; i < set.curves.size(); ++i) {
      const std::uint32_t n = offsets[i + 1] - offsets[i];
      for (std::uint32_t j = 0; j < n; ++j) {
        const auto [x, y] = bernstein(set.curves[i], static_cast<double>(j) / (n - 1));
        exact[offsets[i] + j] = {static_cast<float>(x), static_cast<float>(y)};
      }
    }
    std::string first;
    const float tol = cdpkit::reference_tolerance(set);
    CAPTURE(tol);
    CHECK(cdpkit::tessellation_mismatches(points, exact, tol, &first) == 0);
    CAPTURE(first);
    // the stated tolerance: 2^-19 of the largest coordinate (at least 1)
    float largest = 1.0f;
    for (const auto& c : set.curves)
      for (int k = 0; k <= c.degree; ++k) largest = std::max({largest, std::fabs(c.p[k].x), std::fabs(c.p[k].y)});
    CHECK(tol == std::ldexp(largest, -19));
    std::vector<vec2> moved = points;
    moved[moved.size() / 2].y += 2 * tol;
    CHECK(cdpkit::tessellation_mismatches(moved, points, tol) == 1);
  }
}

TEST_CASE("tessellation_mismatches counts differing, missing and extra points") {
  const std::vector<vec2> a{{0, 0}, {1, 1}, {2, 2}};
  std::string first;
  CHECK(cdpkit::tessellation_mismatches(a, a, 0.0f, &first) == 0);
  CHECK(first.empty());
  std::vector<vec2> b = a;
  b[1].y = 1.5f;
  CHECK(cdpkit::tessellation_mismatches(b, a, 0.4f, &first) == 1);
  CHECK_CONTAINS(first, "point 1");
  CHECK(cdpkit::tessellation_mismatches(b, a, 0.6f) == 0);
  b[2].x = std::nanf("");
  CHECK(cdpkit::tessellation_mismatches(b, a, 1e9f) == 1);
  CHECK(cdpkit::tessellation_mismatches({a[0]}, a, 0.0f, &first) == 2);
  CHECK_CONTAINS(first, "got 1 points, expected 3");
}

TEST_CASE("the SVG is well-formed and draws the window's points") {
  curve_set set = cdpkit::make_random_curves(300, 6);
  set.name = "a <test> & \"quotes\"";
  const auto offsets = cdpkit::tessellation_offsets(set);
  const auto points = cdpkit::tessellate_reference(set);
  const cdpkit::curve_window all = cdpkit::end_point_bounds(set);
  CHECK(all.min_x < all.max_x);
  const cdpkit::curve_window left{all.min_x, all.min_y, 0.5f * (all.min_x + all.max_x), all.max_y};
  std::uint64_t in_left = 0;
  for (const vec2 p : points) in_left += p.x >= left.min_x && p.x <= left.max_x && p.y >= left.min_y && p.y <= left.max_y;
  REQUIRE(in_left > 100);
  SUBCASE("every point of the window") {
    std::ostringstream out;
    cdpkit::svg_options options;
    options.max_points = 1000000;
    cdpkit::write_svg(out, set, points, offsets, left, options);
    const std::string svg = out.str();
    CHECK(xml_problem(svg) == "");
    CHECK(svg.rfind("<?xml", 0) == 0);
    CHECK_CONTAINS(svg, "a &lt;test&gt; &amp; &quot;quotes&quot;");
    CHECK(dots_in(svg) == in_left);
    CHECK_CONTAINS(svg, std::to_string(in_left) + " points in it, all drawn");
    CHECK_CONTAINS(svg, "<polyline");
  }
  SUBCASE("clipped to max_points, and says so") {
    std::ostringstream out;
    cdpkit::svg_options options;
    options.max_points = 10;
    options.max_curves = 3;
    options.title = "clipped";
    cdpkit::write_svg(out, set, points, offsets, left, options);
    const std::string svg = out.str();
    CHECK(xml_problem(svg) == "");
    CHECK(dots_in(svg) == 10);
    CHECK_CONTAINS(svg, "clipped: 10 of " + std::to_string(in_left) + " points and 3 of");
  }
  SUBCASE("bad offsets, windows and options are input_errors") {
    std::ostringstream out;
    auto short_offsets = offsets;
    short_offsets.pop_back();
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::write_svg(out, set, points, short_offsets, left), 0; }),
                   "not a layout");
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::write_svg(out, set, points, offsets, {1, 1, 1, 2}), 0; }),
                   "empty");
    cdpkit::svg_options narrow;
    narrow.width_px = 10;
    CHECK_CONTAINS(input_error_of([&] { return cdpkit::write_svg(out, set, points, offsets, left, narrow), 0; }),
                   "width");
    CHECK_CONTAINS(input_error_of([] { return cdpkit::end_point_bounds(curve_set{}); }), "empty");
  }
}

TEST_CASE("the SVG leaves out control polygons reaching far beyond the window, and says how many") {
  curve_set set;
  set.name = "far";
  bezier_curve near{}, far{};
  near.degree = far.degree = 3;
  near.p[0] = {10, 10}, near.p[1] = {12, 14}, near.p[2] = {16, 14}, near.p[3] = {18, 10};
  far.p[0] = {12, 12}, far.p[1] = {5000, -4000}, far.p[2] = {-4000, 5000}, far.p[3] = {14, 12};
  set.curves = {near, far};
  const auto offsets = cdpkit::tessellation_offsets(set);
  const auto points = cdpkit::tessellate_reference(set);
  std::ostringstream out;
  cdpkit::write_svg(out, set, points, offsets, {0, 0, 32, 32});
  const std::string svg = out.str();
  CHECK(xml_problem(svg) == "");
  CHECK_CONTAINS(svg, "2 curves meet it");
  CHECK_CONTAINS(svg, "1 control polygons spanning over 8 window sides left out");
  std::size_t polylines = 0;
  for (auto at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++polylines;
  CHECK(polylines == 1u);
  CHECK(svg.find("clipped") == std::string::npos);
}

TEST_CASE("the sample's picture window is a centred square where about 600 curves start, and draws cleanly") {
  const curve_set set = cdpkit::make_random_curves(1u << 16, 3);
  const auto c = cdpkit::harness::make_bezier_case("random:65536", set, cdpkit::default_tolerance,
                                                   cdpkit::default_point_cap);
  const cdpkit::curve_window box = cdpkit::end_point_bounds(set);
  const cdpkit::curve_window w = cdpkit::harness::picture_window(c);
  CHECK(w.max_x - w.min_x == doctest::Approx(w.max_y - w.min_y));
  CHECK(0.5f * (w.min_x + w.max_x) == doctest::Approx(0.5f * (box.min_x + box.max_x)));
  CHECK(0.5f * (w.min_y + w.max_y) == doctest::Approx(0.5f * (box.min_y + box.max_y)));
  std::size_t starting = 0;
  for (const bezier_curve& k : set.curves)
    starting += k.p[0].x >= w.min_x && k.p[0].x <= w.max_x && k.p[0].y >= w.min_y && k.p[0].y <= w.max_y;
  CHECK(starting > 300u);
  CHECK(starting < 1200u);
  std::ostringstream out;
  cdpkit::write_svg(out, set, c.expected, c.offsets, w);
  const std::string svg = out.str();
  CHECK(xml_problem(svg) == "");
  CHECK(svg.find("clipped") == std::string::npos);  // under the default caps: every point and polygon
  // a set no larger than the target: its whole end-point box
  const curve_set few = cdpkit::make_random_curves(100, 3);
  const auto small = cdpkit::harness::make_bezier_case("random:100", few, cdpkit::default_tolerance,
                                                       cdpkit::default_point_cap);
  const cdpkit::curve_window whole = cdpkit::harness::picture_window(small);
  const cdpkit::curve_window few_box = cdpkit::end_point_bounds(few);
  CHECK(whole.min_x == few_box.min_x);
  CHECK(whole.max_y == few_box.max_y);
  const curve_set none;
  const auto empty = cdpkit::harness::make_bezier_case("none", none, cdpkit::default_tolerance, cdpkit::default_point_cap);
  CHECK_CONTAINS(input_error_of([&] { return cdpkit::harness::picture_window(empty), 0; }), "empty");
}
