#pragma once
// cdpkit/bezier.hpp — Bézier tessellation (area `bezier`): how many points a curve needs depends
// on how much it bends, so a set of curves is a set of variable-sized work items.
//
// 1. Curves are quadratic or cubic Bézier curves with single-precision control points, in
//    pixels (y grows downwards, as on a screen and in SVG).
// 2. Each curve gets points_for_curve() points, evenly spaced in t, from Wang's flatness bound
//    (below), at least 2 and at most a cap (default_point_cap, 4096).
// 3. The output is one array of points: curve i owns [offsets[i], offsets[i + 1]), the offsets
//    being the exclusive scan of the counts (tessellation_offsets), so nothing is allocated per
//    curve (NVIDIA's cdpBezierTessellation calls device-side malloc once per line).
// 4. Point j of a curve with n points is evaluate(curve, tessellation_parameter(j, n)).
//
// The math of steps 2 and 4 is in this header, CDPKIT_HOST_DEVICE and inline, so that the GPU
// kernels and the CPU reference (tessellate_reference) run the same code.
//
// The flatness bound (Wang's formula). A Bézier curve B of degree d has
//   B''(t) = d (d - 1) sum_{i=0}^{d-2} b_{i,d-2}(t) D_i,   D_i = P_i - 2 P_{i+1} + P_{i+2},
// a convex combination of the second differences D_i times d (d - 1), so |B''| <= d (d - 1) M
// with M = max_i |D_i| (Euclidean norm). The chord of B over a parameter interval of length h
// stays within h^2 / 8 * max |B''| of the curve (linear interpolation with the integral
// remainder). With n equal intervals (h = 1 / n) the polyline through the n + 1 points is within
// the tolerance eps of the curve when
//   n >= sqrt( d (d - 1) / 8 * M / eps )          (3/4 * M / eps for a cubic, 1/4 for a quadratic)
// so a curve gets n = ceil(sqrt(d (d - 1) / 8 * M / eps)) segments, n + 1 points, clamped to
// [2, cap]. A straight curve with evenly spaced control points (M = 0) gets 2 points whatever its
// length; the count grows as the square root of M / eps. (The bound is on the exact curve; the
// single-precision evaluation adds its own rounding, a few ulps of the coordinates.)
//
// Reproducibility between host and device. The count is computed in double precision from the
// float control points: the second differences are exact up to one rounding each whatever the
// compiler contracts (2 * p is exact), the sum of squares is an explicit fma, and sqrt, division
// and ceil are correctly rounded on both sides, so the host and the device get the same count
// (nvcc's --use_fast_math does not touch double precision). evaluate() is de Casteljau with
// every linear interpolation one explicit fmaf, (1 - t) a + t b = fmaf(t, b, (1 - t) * a), so no
// contraction choice of either compiler changes it: with IEEE single-precision division (nvcc's
// default) the device computes the same bits as the host. The checking tolerance
// (reference_tolerance) only absorbs float reassociation in a kernel that evaluates otherwise
// (another order of the interpolations, an approximate division of t under --use_fast_math).

#include <math.h>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <cdpkit/host_device.hpp>

namespace cdpkit {

/// A point or a vector in the plane (POD: usable in __shared__ memory and device buffers).
struct vec2 {
  float x;
  float y;
};

CDPKIT_HOST_DEVICE constexpr bool operator==(vec2 a, vec2 b) noexcept { return a.x == b.x && a.y == b.y; }
CDPKIT_HOST_DEVICE constexpr bool operator!=(vec2 a, vec2 b) noexcept { return !(a == b); }

/// A quadratic (degree 2: p[0], p[1], p[2]; p[3] is ignored) or cubic (degree 3) Bézier curve.
/// POD, 36 bytes.
struct bezier_curve {
  vec2 p[4];
  std::uint8_t degree;
};

/// A set of curves, the unit of work of the family. contour_offsets is empty for the generated
/// sets (every curve on its own), or num_contours + 1 entries for outlines (fonts): contour c is
/// curves[contour_offsets[c], contour_offsets[c + 1]), each curve starting where the previous one
/// ends and the last ending where the first starts.
struct curve_set {
  std::vector<bezier_curve> curves;
  std::string name;
  std::vector<std::uint32_t> contour_offsets;
};

/// The default cap on the points of one curve (cdpBezierTessellation's is 32).
inline constexpr std::uint32_t default_point_cap = 4096;
/// The largest cap accepted (t = j / (n - 1) stays exact in single precision far beyond it).
inline constexpr std::uint32_t max_point_cap = 1u << 20;
/// The default flatness tolerance: a tenth of a pixel.
inline constexpr float default_tolerance = 0.1f;
/// The most curves in a set (32-bit curve ids).
inline constexpr std::uint64_t max_bezier_curves = 0xffffffffull;
/// The most points of one tessellation (32-bit offsets; 32 GiB of points).
inline constexpr std::uint64_t max_tessellation_points = 0xffffffffull;

// --- the math, on the host and the device ----------------------------------------------------

/// d (d - 1) / 8 of Wang's bound: 3/4 for a cubic, 1/4 for a quadratic.
CDPKIT_HOST_DEVICE constexpr double flatness_factor(std::uint32_t degree) noexcept {
  return degree == 3 ? 0.75 : 0.25;
}

/// M: the largest Euclidean norm of the second differences p_i - 2 p_{i+1} + p_{i+2} of the
/// control points (i = 0 .. degree - 2), in double precision, the same on the host and the
/// device. NaN when a coordinate is NaN. Precondition: c.degree is 2 or 3 (anything but 3 is
/// taken as 2).
CDPKIT_HOST_DEVICE inline double second_difference_norm(const bezier_curve& c) noexcept {
  const int last = c.degree == 3 ? 1 : 0;
  double m2 = 0.0;
  for (int i = 0; i <= last; ++i) {
    // 2 * p is exact, so a compiler's fma(-2, p1, p0) rounds as p0 - 2 p1 does
    const double dx = static_cast<double>(c.p[i].x) - 2.0 * static_cast<double>(c.p[i + 1].x) +
                      static_cast<double>(c.p[i + 2].x);
    const double dy = static_cast<double>(c.p[i].y) - 2.0 * static_cast<double>(c.p[i + 1].y) +
                      static_cast<double>(c.p[i + 2].y);
    const double s = ::fma(dx, dx, dy * dy);  // explicit: no contraction choice can change it
    if (s != s || s > m2) m2 = s;             // a NaN sticks (s > NaN is false)
  }
  return ::sqrt(m2);
}

/// The number of points of a curve for a flatness tolerance (Wang's bound, in the header
/// comment): ceil(sqrt(d (d - 1) / 8 * M / tolerance)) + 1, clamped to [2, cap]. Preconditions
/// (checked by the host entry points, which throw cdpkit::input_error): tolerance > 0 and finite,
/// 2 <= cap <= max_point_cap, degree 2 or 3. A cap below 2 is taken as 2; a NaN control point
/// gives the cap.
CDPKIT_HOST_DEVICE inline std::uint32_t points_for_curve(const bezier_curve& c, float tolerance,
                                                         std::uint32_t cap) noexcept {
  if (cap < 2) cap = 2;
  const double q = flatness_factor(c.degree) * second_difference_norm(c) / static_cast<double>(tolerance);
  const double segments = ::ceil(::sqrt(q));
  if (!(segments <= static_cast<double>(cap - 1))) return cap;  // also NaN
  const std::uint32_t n = static_cast<std::uint32_t>(segments) + 1;
  return n < 2 ? 2 : n;
}

/// The parameter of point j of a curve tessellated into `count` points: j / (count - 1) in
/// single precision (exactly 0 for the first point and 1 for the last). Preconditions:
/// j < count, 2 <= count <= max_point_cap.
CDPKIT_HOST_DEVICE inline float tessellation_parameter(std::uint32_t j, std::uint32_t count) noexcept {
  return count < 2 ? 0.0f : static_cast<float>(j) / static_cast<float>(count - 1);
}

/// (1 - t) a + t b, as one explicit fmaf per coordinate: exact at t = 0 (a) and t = 1 (b).
CDPKIT_HOST_DEVICE inline vec2 bezier_lerp(vec2 a, vec2 b, float t) noexcept {
  const float s = 1.0f - t;
  return vec2{::fmaf(t, b.x, s * a.x), ::fmaf(t, b.y, s * a.y)};
}

/// The point of the curve at parameter t (de Casteljau): evaluate(c, 0) is p[0] and
/// evaluate(c, 1) is p[degree], exactly. Preconditions: t in [0, 1], degree 2 or 3 (anything
/// but 3 is taken as 2), finite control points.
CDPKIT_HOST_DEVICE inline vec2 evaluate(const bezier_curve& c, float t) noexcept {
  if (c.degree == 3) {
    const vec2 a = bezier_lerp(c.p[0], c.p[1], t);
    const vec2 b = bezier_lerp(c.p[1], c.p[2], t);
    const vec2 d = bezier_lerp(c.p[2], c.p[3], t);
    return bezier_lerp(bezier_lerp(a, b, t), bezier_lerp(b, d, t), t);
  }
  return bezier_lerp(bezier_lerp(c.p[0], c.p[1], t), bezier_lerp(c.p[1], c.p[2], t), t);
}

// --- curve sets (host) ------------------------------------------------------------------------
// Every generator is deterministic for a seed, checks n (1 .. max_bezier_curves) and the host
// memory (36 bytes per curve) before allocating, and throws cdpkit::input_error naming itself and
// its arguments otherwise. The generated curves start in a 1024 x 1024 pixel canvas.

/// n random curves, half quadratic, half cubic, mostly flat with a power-law tail of very curved
/// ones. Each curve has a chord of uniform length in [16, 128] px in a uniform direction from a
/// uniform start in the canvas; its control points are bent off the chord (C and S shapes for
/// cubics, random mixes) so that its second-difference norm M (what its point count depends
/// on) is exactly the drawn bend, Pareto distributed with index 1/2: M = 0.05 px * U^-2
/// (U uniform in (0, 1]), clamped to 2^20 px, i.e. P(M > m) = sqrt(0.05 px / m). The point count
/// grows as sqrt(M), so P(count > k) ~ 1 / k: at the default tolerance about half the curves get
/// 2 points and three quarters at most 3, one in a thousand gets more than about 500, and the
/// largest about 2,800 (the cap of 4,096 bites only in make_extreme_curves).
curve_set make_random_curves(std::uint64_t n, std::uint64_t seed = 1);

/// n straight curves, half quadratic, half cubic, with evenly spaced control points on a chord
/// of log-uniform length in [1, 4096] px: M is zero up to float rounding, so every one gets 2
/// points at the default tolerance.
curve_set make_straight_curves(std::uint64_t n, std::uint64_t seed = 1);

/// n extreme curves: cubics whose inner control points lie 2^22 to 2^23 px away from their end
/// points, in directions that cross (loops and cusps), so M >= 2^22 - 128 px and every curve
/// needs the cap at the default tolerance and cap (the all-at-the-cap worst case; the coordinates
/// are then large enough that floats resolve them only to about a pixel).
curve_set make_extreme_curves(std::uint64_t n, std::uint64_t seed = 1);

/// Every glyph of a font (face 0 of the file: TrueType, OpenType/CFF, Type 1, ... whatever
/// FreeType reads), scaled to `pixels` pixels per em and laid out on a square grid in glyph
/// index order (cells about 1.25 em wide and the face's line height high, y down), one contour
/// per outline contour (FT_Outline_Decompose): a conic segment is a quadratic, a cubic segment a
/// cubic, a line a quadratic with its control point at the midpoint (M at float rounding: 2
/// points for any tolerance above a few ulps of the coordinates); zero-length lines are dropped.
/// Glyphs without an outline (spaces, bitmap-only glyphs) or that FreeType cannot load keep
/// their cell, empty. The set's name says how many glyphs had outlines. Throws
/// cdpkit::input_error naming the path when the file does not exist, is not a regular file, is
/// larger than a quarter of the available host memory, or is not a font FreeType can read; when
/// no glyph has an outline; when pixels is outside [1, 16384]; and when the program does not
/// link the cdpkit::fonts part (FreeType; font_reader_available()).
curve_set read_font_curves(const std::string& path, std::uint32_t pixels = 256);

/// True when the program links the cdpkit::fonts part, built where FreeType was found
/// (read_font_curves and font: specs work).
[[nodiscard]] bool font_reader_available() noexcept;

/// A set by specification: "random:N", "straight:N", "extreme:N" (N decimal or 2^K), or
/// "font:PATH[:PIXELS]" (read_font_curves; PIXELS default 256; a PATH whose last ':'-separated
/// part is all digits needs the PIXELS given explicitly). Throws cdpkit::input_error "curve spec
/// 'SPEC': reason" (for a font, the reason names the file).
curve_set load_curves(const std::string& spec, std::uint64_t seed = 1);

/// Throws cdpkit::input_error naming the set and the first bad curve (its index) for a degree
/// other than 2 or 3 or a coordinate that is not finite, more than max_bezier_curves curves, or
/// contour_offsets that are neither empty nor an increasing partition of the curves.
void check_curves(const curve_set& set);

// --- the tessellation (host) -----------------------------------------------------------------
// These check their arguments: a tolerance that is not finite and positive, a cap outside
// [2, max_point_cap], and the curves (check_curves) are cdpkit::input_error.

/// The exclusive scan of the point counts: curves.size() + 1 entries, curve i's points are
/// [offsets[i], offsets[i + 1]), offsets.back() is the total. Throws cdpkit::input_error (besides
/// the argument checks) when the total exceeds max_tessellation_points (raise the tolerance or
/// lower the cap).
std::vector<std::uint32_t> tessellation_offsets(const curve_set& set, float tolerance = default_tolerance,
                                                std::uint32_t cap = default_point_cap);

/// The CPU reference: every curve's points, in curve order (laid out by tessellation_offsets
/// with the same arguments), point j of curve i being evaluate(curve, tessellation_parameter(j,
/// count)). Throws cdpkit::input_error as tessellation_offsets, and when the points (8 bytes
/// each) do not fit the available host memory.
std::vector<vec2> tessellate_reference(const curve_set& set, float tolerance = default_tolerance,
                                       std::uint32_t cap = default_point_cap);

/// The absolute tolerance of a check of a tessellation against tessellate_reference:
/// 2^-19 * max(1, the largest |coordinate| of the control points). What it covers: a kernel that
/// interpolates in another order or divides j / (n - 1) approximately differs by a few ulps of
/// the coordinates per de Casteljau level (3 levels) and by |B'(t)| dt <= 6 max|coordinate| *
/// 2^-23 for one ulp of t: together at most 1.5 * 2^-20 of the largest coordinate. The same code
/// under IEEE flags differs by 0. Throws what check_curves throws.
[[nodiscard]] float reference_tolerance(const curve_set& set);

/// The number of points of `got` that differ from `expected` by more than abs_tol in x or y (a
/// NaN differs), plus the difference of the sizes (points missing or extra). 0: they agree.
/// `first` (may be null) gets the first difference, described with its index.
std::uint64_t tessellation_mismatches(const std::vector<vec2>& got, const std::vector<vec2>& expected,
                                      float abs_tol, std::string* first = nullptr);

// --- the picture (host) ----------------------------------------------------------------------

/// A rectangle of the plane (pixels, y down): the part of the curves a picture shows.
struct curve_window {
  float min_x = 0.0f;
  float min_y = 0.0f;
  float max_x = 1024.0f;
  float max_y = 1024.0f;
};

/// The bounding box of every curve's end points, widened on every side by 2% of its larger side
/// and at least 0.5 px (the whole picture of a set, without the far control points of its very
/// curved ones). Throws cdpkit::input_error for an empty set, and what check_curves throws.
[[nodiscard]] curve_window end_point_bounds(const curve_set& set);

struct svg_options {
  std::uint32_t width_px = 1200;     ///< the plot's width in [64, 16384]; its height follows the window (at most 4x)
  std::uint64_t max_points = 20000;  ///< the most points drawn (the first ones in curve order)
  std::uint64_t max_curves = 20000;  ///< the most control polygons drawn
  float dot_radius_px = 1.6f;        ///< in (0, 64]
  std::string title;                 ///< empty: the set's name
};

/// Control polygons spanning more than this many window sides are left out of the picture (a very
/// curved curve's far control points would draw lines across the whole window).
inline constexpr float svg_far_reach = 8.0f;

/// Write a self-contained SVG picture of the window: the control polygons of the curves whose
/// control points' bounding box meets the window (faint grey; those spanning over svg_far_reach
/// window sides are left out and counted in the caption), the tessellated points inside
/// the window as dots coloured by their curve's point count (log2 buckets, a legend on top), and
/// a caption with the set, the window and the counts; when max_points or max_curves clipped the
/// picture, the caption says how many were drawn of how many. Text is XML-escaped. `points` and
/// `offsets` are a tessellation of `set` (tessellate_reference / tessellation_offsets, or a GPU's).
/// Throws cdpkit::input_error when offsets is not curves.size() + 1 non-decreasing entries from 0
/// ending at points.size(), for a window that is empty or not finite, options out of range, and
/// what check_curves throws. Does not flush or check the stream.
void write_svg(std::ostream& out, const curve_set& set, const std::vector<vec2>& points,
               const std::vector<std::uint32_t>& offsets, const curve_window& window,
               const svg_options& options = {});

}  // namespace cdpkit
