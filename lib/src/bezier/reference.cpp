// The tessellation on the host: the offsets (an exclusive scan of the point counts), the CPU
// reference, its checking tolerance and the comparison of two tessellations. Pure C++; the math
// is cdpkit/bezier.hpp's, shared with the device.

#include <cdpkit/bezier.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>

#include "../common/text_input.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace cdpkit {

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

void check_arguments(const curve_set& set, float tolerance, std::uint32_t cap, const char* what) {
  if (!std::isfinite(tolerance) || !(tolerance > 0.0f))
    throw input_error(std::string(what) + ": the tolerance " + number(tolerance) +
                      " is not a finite positive number");
  if (cap < 2 || cap > max_point_cap)
    throw input_error(std::string(what) + ": the cap " + std::to_string(cap) + " is not in [2, " +
                      std::to_string(max_point_cap) + "]");
  check_curves(set);
}

}  // namespace

std::vector<std::uint32_t> tessellation_offsets(const curve_set& set, float tolerance, std::uint32_t cap) {
  CDPKIT_NVTX_SCOPE("bezier::tessellation_offsets");
  check_arguments(set, tolerance, cap, "tessellation_offsets");
  // 1. the counts, scanned as they come (64-bit, so that an overflow is seen, not wrapped)
  std::vector<std::uint32_t> offsets(set.curves.size() + 1);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < set.curves.size(); ++i) {
    offsets[i] = static_cast<std::uint32_t>(total);
    total += points_for_curve(set.curves[i], tolerance, cap);
    // 2. refused beyond 32-bit offsets
    if (total > max_tessellation_points)
      throw input_error("tessellation_offsets: the curves of " + quoted_spec(set.name) + " need more than " +
                        std::to_string(max_tessellation_points) +
                        " points (32-bit offsets) at tolerance " + number(tolerance) + " and cap " +
                        std::to_string(cap) + ": raise the tolerance or lower the cap");
  }
  offsets.back() = static_cast<std::uint32_t>(total);
  return offsets;
}

std::vector<vec2> tessellate_reference(const curve_set& set, float tolerance, std::uint32_t cap) {
  CDPKIT_NVTX_SCOPE("bezier::tessellate_reference");
  const std::vector<std::uint32_t> offsets = tessellation_offsets(set, tolerance, cap);
  require_host_memory(saturating_mul(offsets.back(), sizeof(vec2)),
                      "the tessellation of " + quoted_spec(set.name));
  std::vector<vec2> points(offsets.back());
  for (std::size_t i = 0; i < set.curves.size(); ++i) {
    const std::uint32_t count = offsets[i + 1] - offsets[i];
    for (std::uint32_t j = 0; j < count; ++j)
      points[offsets[i] + j] = evaluate(set.curves[i], tessellation_parameter(j, count));
  }
  return points;
}

float reference_tolerance(const curve_set& set) {
  check_curves(set);
  float largest = 1.0f;
  for (const bezier_curve& c : set.curves)
    for (int k = 0; k <= c.degree; ++k) largest = std::max({largest, std::fabs(c.p[k].x), std::fabs(c.p[k].y)});
  return std::ldexp(largest, -19);
}

std::uint64_t tessellation_mismatches(const std::vector<vec2>& got, const std::vector<vec2>& expected, float abs_tol,
                                      std::string* first) {
  const std::size_t common = std::min(got.size(), expected.size());
  std::uint64_t mismatches = 0;
  for (std::size_t i = 0; i < common; ++i) {
    const vec2 g = got[i], e = expected[i];
    if (std::fabs(g.x - e.x) <= abs_tol && std::fabs(g.y - e.y) <= abs_tol) continue;  // a NaN is not
    if (mismatches++ == 0 && first) {
      char text[160];
      std::snprintf(text, sizeof text, "point %zu: got (%.9g, %.9g), expected (%.9g, %.9g)", i,
                    static_cast<double>(g.x), static_cast<double>(g.y), static_cast<double>(e.x),
                    static_cast<double>(e.y));
      *first = text;
    }
  }
  if (got.size() != expected.size()) {
    if (mismatches == 0 && first)
      *first = "got " + std::to_string(got.size()) + " points, expected " + std::to_string(expected.size());
    mismatches += std::max(got.size(), expected.size()) - common;
  }
  return mismatches;
}

}  // namespace cdpkit
