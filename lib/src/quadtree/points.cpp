// Points for the quadtree: generators, the point-file / OBJ reader, point specs. Pure C++.

#include <cdpkit/sizes.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/quadtree.hpp>

#include "../common/random.hpp"
#include "../common/text_input.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

namespace cdpkit {

const char* to_string(point_distribution d) noexcept {
  switch (d) {
    case point_distribution::uniform: return "uniform";
    case point_distribution::clustered: return "clustered";
    case point_distribution::line: return "line";
    case point_distribution::equal: return "equal";
  }
  return "?";
}

namespace {

void check_count(std::uint64_t n, const std::string& what) {
  if (n == 0) throw input_error(what + ": no points");
  if (n > max_quadtree_points)
    throw input_error(what + ": " + std::to_string(n) + " points, more than the " + std::to_string(max_quadtree_points) +
                      " a quadtree may have (32-bit point ids)");
  require_host_memory(saturating_mul(n, sizeof(point2)), what);
}

std::vector<point2> make_clustered(std::uint64_t n, std::uint32_t blobs, std::uint64_t seed) {
  detail::splitmix64 rng{detail::mix64(seed) ^ 0x4cf5ad432745937full};
  struct blob {
    double x, y, sigma;
  };
  std::vector<blob> centers(blobs);
  for (auto& b : centers) {
    b.x = 0.1 + 0.8 * rng.uniform();
    b.y = 0.1 + 0.8 * rng.uniform();
    b.sigma = 0.002 + 0.05 * rng.uniform() * rng.uniform();  // mostly tight, a few wide
  }
  std::vector<point2> out(n);
  for (auto& p : out) {
    const blob& b = centers[rng.below(blobs)];
    // Box-Muller
    const double r = std::sqrt(-2.0 * std::log(rng.uniform_open0()));
    const double a = 6.283185307179586 * rng.uniform();
    p.x = static_cast<float>(std::clamp(b.x + b.sigma * r * std::cos(a), 0.0, 1.0));
    p.y = static_cast<float>(std::clamp(b.y + b.sigma * r * std::sin(a), 0.0, 1.0));
  }
  return out;
}

}  // namespace

std::vector<point2> make_points(std::uint64_t n, point_distribution d, std::uint64_t seed) {
  CDPKIT_NVTX_SCOPE("quadtree::make_points");
  const std::string what = std::string("make_points(") + std::to_string(n) + ", " + to_string(d) + ")";
  check_count(n, what);
  if (d == point_distribution::clustered) return make_clustered(n, 16, seed);
  std::vector<point2> out(n);
  detail::splitmix64 rng{detail::mix64(seed) ^ 0x7a3c1f95e2d4b681ull};
  for (auto& p : out) {
    switch (d) {
      case point_distribution::uniform:
        p.x = static_cast<float>(rng.uniform());
        p.y = static_cast<float>(rng.uniform());
        break;
      case point_distribution::line: {
        const double t = rng.uniform();
        p.x = static_cast<float>(t);
        p.y = static_cast<float>(0.3 + 0.4 * t);
        break;
      }
      default:
        p.x = 0.5f;
        p.y = 0.5f;
        break;
    }
  }
  return out;
}

std::vector<point2> parse_points(const std::string& text, const std::string& name) {
  CDPKIT_NVTX_SCOPE("quadtree::parse_points");
  detail::line_scanner lines(text);
  std::string_view line;
  std::vector<point2> out;
  int obj = -1;  // -1: not known yet
  const auto number = [&](std::string_view token, const char* what, std::uint64_t at) {
    const std::string s(token);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size())
      detail::fail_at(name, at, std::string(what) + " " + quoted_input(token) + " is not a number");
    if (!std::isfinite(v) || std::fabs(v) > 3.0e38)
      detail::fail_at(name, at, std::string(what) + " " + quoted_input(token) +
                                    " is not a finite number in [-3e38, 3e38]");
    return static_cast<float>(v);
  };
  std::uint64_t off_vertices = 0;  // an OFF mesh: the vertices still to read (then the faces, ignored)
  bool off = false;
  while (lines.next(line)) {
    const std::uint64_t at = lines.number();
    std::string_view s = line;
    detail::skip_blanks(s);
    if (s.empty() || s.front() == '#') continue;
    std::string_view first = detail::next_token(s);
    if (obj < 0 && !off && first.size() >= 3 && first.substr(first.size() - 3) == "OFF") {
      // OFF (Geomview; also COFF, NOFF, ...): "OFF", then "VERTICES FACES EDGES", the vertices,
      // the faces
      off = true;
      obj = 0;
      if (detail::next_token(s).empty()) {  // the counts on the next line
        while (lines.next(line)) {
          s = line;
          detail::skip_blanks(s);
          if (!s.empty() && s.front() != '#') break;
        }
        if (s.empty() || s.front() == '#') detail::fail_at(name, lines.number(), "an OFF file without its counts line");
      } else {
        s = line;
        detail::skip_blanks(s);
        (void)detail::next_token(s);
      }
      const std::uint64_t counts_line = lines.number();
      off_vertices = detail::parse_unsigned(detail::next_token(s), max_quadtree_points, "OFF vertex count", name, counts_line);
      // a vertex line takes at least 6 bytes ("0 0 0\n"): a count beyond that is not this file's
      if (off_vertices > lines.remaining() / 6 + 1)
        detail::fail_at(name, counts_line, "the counts line declares " + std::to_string(off_vertices) +
                                               " vertices; the rest of the file holds at most " +
                                               std::to_string(lines.remaining() / 6 + 1));
      out.reserve(static_cast<std::size_t>(off_vertices));
      if (off_vertices == 0) break;
      continue;
    }
    if (off && out.size() == off_vertices) break;  // the faces
    if (obj < 0) {
      const bool keyword = !first.empty() && std::isalpha(static_cast<unsigned char>(first.front())) &&
                           first != "nan" && first != "inf";
      obj = keyword ? 1 : 0;
    }
    if (obj == 1) {
      if (first != "v") continue;  // normals, faces, groups, materials: not points
      first = detail::next_token(s);
      if (first.empty()) detail::fail_at(name, at, "a vertex line without coordinates");
    }
    const std::string_view second = detail::next_token(s);
    const std::string_view third = detail::next_token(s);
    const std::string_view fourth = detail::next_token(s);
    if (second.empty()) detail::fail_at(name, at, "one number where a point needs 2 (x y) or 3 (x y z)");
    // OBJ vertices may carry a w or colours after x y z; plain point lines have at most 3 numbers
    if (obj == 0 && !off && !fourth.empty()) detail::fail_at(name, at, "more than 3 numbers (expected x y or x y z)");
    point2 p;
    p.x = number(first, "x", at);
    p.y = number(second, "y", at);
    if (!third.empty()) (void)number(third, "z", at);
    if (out.size() >= max_quadtree_points)
      detail::fail_at(name, at, "more than the " + std::to_string(max_quadtree_points) + " points a quadtree may have");
    out.push_back(p);
  }
  if (off && out.size() != off_vertices)
    detail::fail_at(name, lines.number(), "truncated: the counts line declares " + std::to_string(off_vertices) +
                                              " vertices, the file has " + std::to_string(out.size()));
  if (out.empty())
    throw input_error(name + (obj == 1 || off ? ": a mesh without vertices"
                                              : ": no points (the file is empty, or only blank lines and comments)"));
  return out;
}

std::vector<point2> read_points(const std::string& path, const point_read_options& options) {
  CDPKIT_NVTX_SCOPE("quadtree::read_points");
  const bool default_cap = options.max_file_bytes == 0;
  return parse_points(detail::read_text_file(path, default_cap ? detail::default_max_file_bytes() : options.max_file_bytes,
                                             default_cap, {"point", "point_read_options::max_file_bytes"}),
                      path);
}

std::vector<point2> load_points(const std::string& spec, std::uint64_t seed, const point_read_options& options) {
  CDPKIT_NVTX_SCOPE("quadtree::load_points");
  const auto fail = [&](const std::string& why) -> std::vector<point2> {
    throw input_error("point spec " + quoted_spec(spec) + ": " + why);
  };
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  if (kind == "file") {
    if (colon == std::string::npos || colon + 1 == spec.size()) return fail("expected file:PATH");
    return read_points(spec.substr(colon + 1), options);
  }
  const bool generator = kind == "uniform" || kind == "clustered" || kind == "line" || kind == "equal";
  if (!generator) {
    if (colon == std::string::npos) return read_points(spec, options);  // a path
    return fail("unknown kind " + quoted_input(kind) +
                " (expected uniform:N, clustered:N[:BLOBS], line:N, equal:N or file:PATH)");
  }
  std::vector<std::string> args;
  for (std::size_t at = colon; at != std::string::npos;) {
    const std::size_t next = spec.find(':', at + 1);
    args.push_back(spec.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1));
    at = next;
  }
  const auto count = [&](const std::string& token, const char* what) {
    return parse_size(token, "point spec " + quoted_spec(spec) + ": ", what);
  };
  if (args.empty() || args.size() > (kind == "clustered" ? 2u : 1u))
    return fail(kind == "clustered" ? "expected clustered:N or clustered:N:BLOBS" : "expected " + kind + ":N");
  const std::uint64_t n = count(args[0], "point count");
  try {
    if (kind == "clustered" && args.size() == 2) {
      const std::uint64_t blobs = count(args[1], "blob count");
      if (blobs == 0 || blobs > (1u << 20)) fail("the blob count must be in [1, 2^20], got " + args[1]);
      check_count(n, "clustered");
      return make_clustered(n, static_cast<std::uint32_t>(blobs), seed);
    }
    const point_distribution d = kind == "uniform"     ? point_distribution::uniform
                                 : kind == "clustered" ? point_distribution::clustered
                                 : kind == "line"      ? point_distribution::line
                                                       : point_distribution::equal;
    return make_points(n, d, seed);
  } catch (const input_error& e) {
    const std::string what = e.what();
    if (what.rfind("point spec '", 0) == 0) throw;
    return fail(what);
  }
}

}  // namespace cdpkit
