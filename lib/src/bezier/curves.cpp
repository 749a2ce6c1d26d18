// Bézier curve sets: the generators (random with a power-law tail, straight, extreme), the check
// of a set, and curve specs. Pure C++; the font reader is font.cpp (built with FreeType only).

#include <cdpkit/sizes.hpp>
#include <cdpkit/bezier.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>

#include "../common/optional_parts.hpp"
#include "../common/random.hpp"
#include "../common/text_input.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace cdpkit {

namespace {

constexpr double canvas_px = 1024.0;
constexpr double two_pi = 6.283185307179586;

struct dvec {
  double x, y;
};
dvec operator+(dvec a, dvec b) { return {a.x + b.x, a.y + b.y}; }
dvec operator*(double s, dvec a) { return {s * a.x, s * a.y}; }
vec2 to_vec2(dvec a) { return {static_cast<float>(a.x), static_cast<float>(a.y)}; }
dvec direction(double angle) { return {std::cos(angle), std::sin(angle)}; }

/// Checks n and the host memory; the set with n curves reserved.
curve_set start_set(std::uint64_t n, const char* generator, const char* kind, std::uint64_t seed) {
  const std::string what = std::string(generator) + "(" + std::to_string(n) + ")";
  if (n == 0) throw input_error(what + ": no curves");
  if (n > max_bezier_curves)
    throw input_error(what + ": " + std::to_string(n) + " curves, more than the " + std::to_string(max_bezier_curves) +
                      " a set may have (32-bit curve ids)");
  require_host_memory(saturating_mul(n, sizeof(bezier_curve)), what);
  curve_set set;
  set.curves.reserve(static_cast<std::size_t>(n));
  set.name = std::string(kind) + ":" + std::to_string(n) + " (seed " + std::to_string(seed) + ")";
  return set;
}

}  // namespace

curve_set make_random_curves(std::uint64_t n, std::uint64_t seed) {
  CDPKIT_NVTX_SCOPE("bezier::make_random_curves");
  curve_set set = start_set(n, "make_random_curves", "random", seed);
  detail::splitmix64 rng{detail::mix64(seed) ^ 0x3c6ef372fe94f82bull};
  for (std::uint64_t i = 0; i < n; ++i) {
    // 1. the chord: a uniform start, a uniform direction u (normal v), a length in [16, 128] px
    const dvec a{canvas_px * rng.uniform(), canvas_px * rng.uniform()};
    const double angle = two_pi * rng.uniform();
    const dvec u = direction(angle), v{-u.y, u.x};
    const double len = 16.0 + 112.0 * rng.uniform();
    const dvec b = a + len * u;
    // 2. the bend M: Pareto, index 1/2, from 0.05 px, clamped to 2^20 px
    const double pareto = rng.uniform_open0();
    const double m = std::min(0.05 / (pareto * pareto), 1048576.0);
    bezier_curve c{};
    c.p[0] = to_vec2(a);
    if (rng.below(2) == 0) {
      // 3a. a quadratic: p1 at M / 2 from the chord's midpoint (D_0 = a - 2 p1 + b has norm M),
      //     off the normal by up to half a radian
      c.degree = 2;
      const dvec w = direction(angle + two_pi / 4 + (rng.uniform() - 0.5));
      c.p[1] = to_vec2(a + (0.5 * len) * u + (0.5 * m) * w);
      c.p[2] = to_vec2(b);
      c.p[3] = c.p[2];
    } else {
      // 3b. a cubic: p1, p2 on the chord's thirds, moved along the normal by r1 h and r2 h;
      //     D_0 = (-2 r1 + r2) h v and D_1 = (r1 - 2 r2) h v, so h = M / max(|2 r1 - r2|,
      //     |r1 - 2 r2|) makes the norm M (same signs: a C, opposite: an S)
      c.degree = 3;
      const double r1 = 2.0 * rng.uniform() - 1.0, r2 = 2.0 * rng.uniform() - 1.0;
      const double scale = std::max(std::fabs(2.0 * r1 - r2), std::fabs(r1 - 2.0 * r2));
      const double h = scale > 1e-3 ? m / scale : 0.0;
      const double h1 = scale > 1e-3 ? r1 * h : m / 3.0, h2 = scale > 1e-3 ? r2 * h : -m / 3.0;
      c.p[1] = to_vec2(a + (len / 3.0) * u + h1 * v);
      c.p[2] = to_vec2(a + (2.0 * len / 3.0) * u + h2 * v);
      c.p[3] = to_vec2(b);
    }
    set.curves.push_back(c);
  }
  return set;
}

curve_set make_straight_curves(std::uint64_t n, std::uint64_t seed) {
  CDPKIT_NVTX_SCOPE("bezier::make_straight_curves");
  curve_set set = start_set(n, "make_straight_curves", "straight", seed);
  detail::splitmix64 rng{detail::mix64(seed) ^ 0x9b05688c2b3e6c1full};
  for (std::uint64_t i = 0; i < n; ++i) {
    const dvec a{canvas_px * rng.uniform(), canvas_px * rng.uniform()};
    const dvec u = direction(two_pi * rng.uniform());
    const double len = std::exp2(12.0 * rng.uniform());  // log-uniform in [1, 4096] px
    bezier_curve c{};
    c.degree = rng.below(2) == 0 ? 2 : 3;
    for (int k = 0; k <= c.degree; ++k) c.p[k] = to_vec2(a + (len * k / c.degree) * u);
    if (c.degree == 2) c.p[3] = c.p[2];
    set.curves.push_back(c);
  }
  return set;
}

curve_set make_extreme_curves(std::uint64_t n, std::uint64_t seed) {
  CDPKIT_NVTX_SCOPE("bezier::make_extreme_curves");
  curve_set set = start_set(n, "make_extreme_curves", "extreme", seed);
  detail::splitmix64 rng{detail::mix64(seed) ^ 0x510e527fade682d1ull};
  for (std::uint64_t i = 0; i < n; ++i) {
    const dvec a{canvas_px * rng.uniform(), canvas_px * rng.uniform()};
    const double angle = two_pi * rng.uniform();
    const dvec b = a + (16.0 + 112.0 * rng.uniform()) * direction(angle);
    // p1 = a + R w1, p2 = b + R w2 with |w2 - 2 w1| >= 1 and |w1 - 2 w2| >= 1 (unit vectors):
    // M >= R - |b - a|. w2 is w1 turned by a quarter to three quarters of a turn, so the control
    // polygon crosses itself (loops, cusps).
    const double r = std::exp2(22.0 + rng.uniform());
    const double turn = two_pi * (0.25 + 0.5 * rng.uniform());
    const double w = two_pi * rng.uniform();
    bezier_curve c{};
    c.degree = 3;
    c.p[0] = to_vec2(a);
    c.p[1] = to_vec2(a + r * direction(w));
    c.p[2] = to_vec2(b + r * direction(w + turn));
    c.p[3] = to_vec2(b);
    set.curves.push_back(c);
  }
  return set;
}

void check_curves(const curve_set& set) {
  const std::string name = set.name.empty() ? std::string("a curve set") : "curve set " + quoted_spec(set.name);
  if (set.curves.size() > max_bezier_curves)
    throw input_error(name + ": " + std::to_string(set.curves.size()) + " curves, more than the " +
                      std::to_string(max_bezier_curves) + " a set may have (32-bit curve ids)");
  for (std::size_t i = 0; i < set.curves.size(); ++i) {
    const bezier_curve& c = set.curves[i];
    if (c.degree != 2 && c.degree != 3)
      throw input_error(name + ": curve " + std::to_string(i) + " has degree " + std::to_string(c.degree) +
                        " (expected 2 or 3)");
    for (int k = 0; k <= c.degree; ++k)
      if (!std::isfinite(c.p[k].x) || !std::isfinite(c.p[k].y))
        throw input_error(name + ": curve " + std::to_string(i) + " has a control point that is not finite (p" +
                          std::to_string(k) + ")");
  }
  const auto& co = set.contour_offsets;
  if (co.empty()) return;
  if (co.front() != 0 || co.back() != set.curves.size())
    throw input_error(name + ": contour_offsets run from " + std::to_string(co.front()) + " to " +
                      std::to_string(co.back()) + ", not from 0 to the " + std::to_string(set.curves.size()) +
                      " curves");
  for (std::size_t c = 0; c + 1 < co.size(); ++c)
    if (co[c] >= co[c + 1])
      throw input_error(name + ": contour " + std::to_string(c) + " is empty or reversed (contour_offsets " +
                        std::to_string(co[c]) + ", " + std::to_string(co[c + 1]) + ")");
}

bool font_reader_available() noexcept { return detail::linked_font_reader() != nullptr; }

curve_set read_font_curves(const std::string& path, std::uint32_t pixels) {
  const detail::font_reader read = detail::linked_font_reader();
  if (read == nullptr)
    throw input_error(path + ": cannot read fonts: they are read by the cdpkit::fonts part (FreeType), which this "
                             "program does not link (cdpkit built with libfreetype-dev installed; "
                             "target_link_libraries(<target> PRIVATE cdpkit::fonts))");
  return read(path, pixels);
}

curve_set load_curves(const std::string& spec, std::uint64_t seed) {
  CDPKIT_NVTX_SCOPE("bezier::load_curves");
  const std::string context = "curve spec " + quoted_spec(spec) + ": ";
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string rest = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
  try {
    if (kind == "font") {
      if (rest.empty()) throw input_error(context + "expected font:PATH or font:PATH:PIXELS");
      std::string path = rest;
      std::uint32_t pixels = 256;
      const std::size_t last = rest.rfind(':');
      if (last != std::string::npos && last > 0 && detail::all_digits(std::string_view(rest).substr(last + 1))) {
        path = rest.substr(0, last);
        const std::string token = rest.substr(last + 1);
        if (token.size() > 5 || std::stoul(token) < 1 || std::stoul(token) > 16384)
          throw input_error(context + "the pixel size " + quoted_input(token) + " is not in [1, 16384]");
        pixels = static_cast<std::uint32_t>(std::stoul(token));
      }
      return read_font_curves(path, pixels);
    }
    if (kind != "random" && kind != "straight" && kind != "extreme")
      throw input_error(context + "unknown kind " + quoted_input(kind) +
                        " (expected random:N, straight:N, extreme:N or font:PATH[:PIXELS])");
    if (rest.empty() || rest.find(':') != std::string::npos) throw input_error(context + "expected " + kind + ":N");
    const std::uint64_t n = parse_size(rest, context, "curve count");
    if (kind == "random") return make_random_curves(n, seed);
    if (kind == "straight") return make_straight_curves(n, seed);
    return make_extreme_curves(n, seed);
  } catch (const input_error& e) {
    const std::string what = e.what();
    if (what.rfind(context, 0) == 0) throw;
    throw input_error(context + what);
  }
}

}  // namespace cdpkit
