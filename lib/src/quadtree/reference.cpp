// The quadtree on the host: the root square, the input checks, the CPU reference build (the
// definition, top-down with an explicit stack), leaf ordering and the comparison of two builds.
// Pure C++.

#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/quadtree.hpp>

#include <algorithm>
#include <array>
#include <string>

namespace cdpkit {

quadtree_bounds bounds_of(const std::vector<point2>& points) {
  if (points.empty()) throw input_error("bounds_of: no points");
  double lo_x = points[0].x, hi_x = lo_x, lo_y = points[0].y, hi_y = lo_y;
  for (const point2& p : points) {
    lo_x = std::min(lo_x, static_cast<double>(p.x));
    hi_x = std::max(hi_x, static_cast<double>(p.x));
    lo_y = std::min(lo_y, static_cast<double>(p.y));
    hi_y = std::max(hi_y, static_cast<double>(p.y));
  }
  quadtree_bounds b;
  b.min_x = lo_x;
  b.min_y = lo_y;
  b.side = std::max(hi_x - lo_x, hi_y - lo_y);
  if (!(b.side > 0.0)) b.side = 1.0;  // every point the same
  return b;
}

void check_quadtree_input(const std::vector<point2>& points, const quadtree_params& params) {
  if (params.max_depth > max_quadtree_depth)
    throw input_error("quadtree: max_depth " + std::to_string(params.max_depth) + " is above the " +
                      std::to_string(max_quadtree_depth) + " the library builds");
  if (points.empty()) throw input_error("quadtree: no points");
  if (points.size() > max_quadtree_points)
    throw input_error("quadtree: " + std::to_string(points.size()) + " points, more than the " +
                      std::to_string(max_quadtree_points) + " a quadtree may have (32-bit point ids)");
}

quadtree quadtree_reference(const std::vector<point2>& points, const quadtree_params& params) {
  CDPKIT_NVTX_SCOPE("quadtree::reference");
  check_quadtree_input(points, params);
  const std::size_t n = points.size();
  require_host_memory(saturating_mul(n, 24), "quadtree_reference (" + std::to_string(n) + " points)");
  quadtree q;
  q.params = params;
  q.bounds = bounds_of(points);
  const std::uint32_t depth_max = params.max_depth;
  std::vector<std::uint64_t> cell(n);
  for (std::size_t i = 0; i < n; ++i) cell[i] = quadtree_cell(points[i], q.bounds, depth_max);
  q.order.resize(n);
  for (std::size_t i = 0; i < n; ++i) q.order[i] = static_cast<std::uint32_t>(i);
  std::vector<std::uint32_t> scratch(n);
  struct node {
    std::uint32_t depth;
    std::uint64_t code;
    std::uint32_t begin, end;
  };
  std::vector<node> stack{{0, 0, 0, static_cast<std::uint32_t>(n)}};
  while (!stack.empty()) {
    const node v = stack.back();
    stack.pop_back();
    ++q.nodes;
    if (v.end - v.begin <= params.min_points || v.depth >= depth_max) {
      q.leaves.push_back({v.depth, v.code, v.begin, v.end});
      q.height = std::max(q.height, v.depth);
      continue;
    }
    // a stable partition of the node's points by their quadrant one level down
    const std::uint32_t shift = 2 * (depth_max - v.depth - 1);
    std::array<std::uint32_t, 5> start{};
    for (std::uint32_t k = v.begin; k < v.end; ++k) ++start[((cell[q.order[k]] >> shift) & 3) + 1];
    for (int c = 0; c < 4; ++c) start[c + 1] += start[c];
    std::array<std::uint32_t, 4> fill{start[0], start[1], start[2], start[3]};
    for (std::uint32_t k = v.begin; k < v.end; ++k) scratch[v.begin + fill[(cell[q.order[k]] >> shift) & 3]++] = q.order[k];
    std::copy(scratch.begin() + v.begin, scratch.begin() + v.end, q.order.begin() + v.begin);
    for (int c = 3; c >= 0; --c)  // empty quadrants are not nodes
      if (start[c + 1] > start[c])
        stack.push_back({v.depth + 1, v.code * 4 + static_cast<std::uint64_t>(c), v.begin + start[c], v.begin + start[c + 1]});
  }
  sort_leaves(q);
  return q;
}

namespace {
/// A leaf's position in Morton order: its cell's first cell at max_depth.
std::uint64_t morton_key(const quadtree_leaf& l, std::uint32_t max_depth) { return l.code << (2 * (max_depth - l.depth)); }
}  // namespace

void sort_leaves(quadtree& q) {
  const std::uint32_t d = q.params.max_depth;
  std::sort(q.leaves.begin(), q.leaves.end(), [d](const quadtree_leaf& a, const quadtree_leaf& b) {
    const std::uint64_t ka = morton_key(a, d), kb = morton_key(b, d);
    return ka != kb ? ka < kb : a.depth < b.depth;
  });
  std::vector<std::uint32_t> order;
  order.reserve(q.order.size());
  for (auto& l : q.leaves) {
    const std::uint32_t begin = static_cast<std::uint32_t>(order.size());
    order.insert(order.end(), q.order.begin() + l.begin, q.order.begin() + l.end);
    l.begin = begin;
    l.end = static_cast<std::uint32_t>(order.size());
  }
  q.order = std::move(order);
}

std::uint64_t compare_quadtrees(const quadtree& expected, const quadtree& got, std::string* first) {
  std::uint64_t differences = 0;
  const auto note = [&](const std::string& what) {
    if (differences++ == 0 && first != nullptr) *first = what;
  };
  const auto describe = [](const quadtree_leaf& l) {
    return "the leaf at depth " + std::to_string(l.depth) + ", cell " + std::to_string(l.code) + " (" +
           std::to_string(l.end - l.begin) + " points)";
  };
  if (expected.params.max_depth != got.params.max_depth) {
    note("max_depth differs: " + std::to_string(expected.params.max_depth) + " vs " +
         std::to_string(got.params.max_depth));
    return differences;
  }
  const std::uint32_t d = expected.params.max_depth;
  std::size_t i = 0, j = 0;
  std::vector<std::uint32_t> a, b;
  while (i < expected.leaves.size() || j < got.leaves.size()) {
    if (j == got.leaves.size()) {
      note(describe(expected.leaves[i++]) + " is missing");
      continue;
    }
    if (i == expected.leaves.size()) {
      note(describe(got.leaves[j++]) + " is not in the reference");
      continue;
    }
    const quadtree_leaf& x = expected.leaves[i];
    const quadtree_leaf& y = got.leaves[j];
    if (x.depth != y.depth || x.code != y.code) {
      const std::uint64_t kx = morton_key(x, d), ky = morton_key(y, d);
      if (kx < ky || (kx == ky && x.depth < y.depth)) {
        note(describe(x) + " is missing");
        ++i;
      } else {
        note(describe(y) + " is not in the reference");
        ++j;
      }
      continue;
    }
    a.assign(expected.order.begin() + x.begin, expected.order.begin() + x.end);
    b.assign(got.order.begin() + y.begin, got.order.begin() + y.end);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) note(describe(x) + " holds other points");
    ++i;
    ++j;
  }
  return differences;
}

}  // namespace cdpkit
