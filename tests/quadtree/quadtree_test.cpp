// The quadtree on the host: point generators, the point and OBJ reader (with malformed input),
// point specs, the cell of a point, and the CPU reference build checked against the definition
// (every leaf small or at max_depth, every split node big, the leaves covering every point once),
// including the degenerate inputs (all points equal, a line).

#include <doctest/doctest.h>

#include "support/gpu.hpp"
#include "support/temp_dir.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/harness/quadtree_runs.hpp>
#include <cdpkit/quadtree.hpp>

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace {

using cdpkit::point2;
using cdpkit::quadtree;
using cdpkit_test::input_error_of;
using cdpkit_test::temp_dir;

/// The definition, checked on a build: the leaves cover every point exactly once; each leaf's
/// points lie in its cell; a leaf holds at most min_points points unless it is at max_depth; and
/// the parent cell of every leaf (but a root leaf) holds more than min_points points.
void check_definition(const std::vector<point2>& points, const quadtree& q) {
  const std::uint32_t d = q.params.max_depth;
  std::vector<int> seen(points.size(), 0);
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> cell_count;  // (depth, cell) -> points
  std::vector<std::uint64_t> cell(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    cell[i] = cdpkit::quadtree_cell(points[i], q.bounds, d);
    for (std::uint32_t k = 0; k <= d; ++k) ++cell_count[{k, cell[i] >> (2 * (d - k))}];
  }
  REQUIRE(q.order.size() == points.size());
  std::uint32_t height = 0;
  for (const auto& l : q.leaves) {
    CHECK(l.begin < l.end);  // no empty leaves
    for (std::uint32_t k = l.begin; k < l.end; ++k) {
      ++seen[q.order[k]];
      CHECK((cell[q.order[k]] >> (2 * (d - l.depth))) == l.code);
    }
    CHECK((l.end - l.begin <= q.params.min_points || l.depth == d));
    if (l.depth > 0) CHECK(cell_count[{l.depth - 1, l.code >> 2}] > q.params.min_points);
    height = std::max(height, l.depth);
  }
  for (int s : seen) CHECK(s == 1);
  CHECK(q.height == height);
}

}  // namespace

TEST_CASE("the point generators make the points they promise, the same per seed") {
  for (const auto d : {cdpkit::point_distribution::uniform, cdpkit::point_distribution::clustered,
                       cdpkit::point_distribution::line, cdpkit::point_distribution::equal}) {
    CAPTURE(std::string(cdpkit::to_string(d)));
    const auto p = cdpkit::make_points(10000, d, 3);
    CHECK(p.size() == 10000);
    for (const auto& x : p) CHECK((x.x >= 0.0f && x.x <= 1.0f && x.y >= 0.0f && x.y <= 1.0f));
    CHECK(cdpkit::make_points(10000, d, 3) == p);
    if (d != cdpkit::point_distribution::equal) CHECK(cdpkit::make_points(10000, d, 4) != p);
  }
  const auto eq = cdpkit::make_points(100, cdpkit::point_distribution::equal);
  CHECK(std::all_of(eq.begin(), eq.end(), [&](const point2& p) { return p == eq[0]; }));
  CHECK(input_error_of([] { return cdpkit::make_points(0, cdpkit::point_distribution::uniform); }) ==
        "make_points(0, uniform): no points");
  CHECK_CONTAINS(input_error_of([] { return cdpkit::make_points(1ull << 33, cdpkit::point_distribution::uniform); }),
                 "more than the 4294967295 a quadtree may have");
}

TEST_CASE("point files and OBJ meshes parse, and malformed ones name the line") {
  CHECK(cdpkit::parse_points("# pts\n0 1\n2.5 -3 7\n\n1e3\t4\r\n", "p") ==
        std::vector<point2>{{0, 1}, {2.5f, -3}, {1000, 4}});
  const std::string obj = "# mesh\nmtllib m.mtl\no cube\nv 1 2 3\nvn 0 0 1\nv -1 0.5 2 1\nf 1 2 3\n";
  CHECK(cdpkit::parse_points(obj, "m.obj") == std::vector<point2>{{1, 2}, {-1, 0.5f}});
  const auto error = [](const std::string& text) { return input_error_of([&] { return cdpkit::parse_points(text, "p"); }); };
  CHECK(error("") == "p: no points (the file is empty, or only blank lines and comments)");
  CHECK(error("o empty\nvn 0 0 1\n") == "p: a mesh without vertices");
  CHECK(error("0 1\n7\n") == "p:2: one number where a point needs 2 (x y) or 3 (x y z)");
  CHECK(error("0 1 2 3\n") == "p:1: more than 3 numbers (expected x y or x y z)");
  CHECK(error("0 1\n0 y\n") == "p:2: y 'y' is not a number");
  CHECK(error("0 1\n1e39 0\n") == "p:2: x '1e39' is not a finite number in [-3e38, 3e38]");
  CHECK(error("0 nan\n") == "p:1: y 'nan' is not a finite number in [-3e38, 3e38]");
  CHECK(error("v 1\n") == "p:1: one number where a point needs 2 (x y) or 3 (x y z)");
  CHECK(error("v\n") == "p:1: a vertex line without coordinates");
}

TEST_CASE("a coordinate is accepted up to |v| = 3e38 and refused beyond, with the message stating that bound") {
  const auto error = [](const std::string& text) { return input_error_of([&] { return cdpkit::parse_points(text, "p"); }); };
  CHECK(cdpkit::parse_points("3e38 -3e38\n-3e38 3e38\n", "p") == std::vector<point2>{{3e38f, -3e38f}, {-3e38f, 3e38f}});
  // within float (FLT_MAX is 3.40282347e38) but past the reader's bound: the message says which bound
  CHECK(error("0 1\n-3.4e38 0\n") == "p:2: x '-3.4e38' is not a finite number in [-3e38, 3e38]");
  CHECK(error("0 3.1e38\n") == "p:1: y '3.1e38' is not a finite number in [-3e38, 3e38]");
  CHECK(error("0 1 -inf\n") == "p:1: z '-inf' is not a finite number in [-3e38, 3e38]");
}

TEST_CASE("OFF meshes give their vertices as points, and malformed ones name the line") {
  const std::string tri = "OFF\n# a triangle\n3 1 0\n0 0 0\n1 0 0\n0 1 0 255 0 0\n3 0 1 2\n";
  CHECK(cdpkit::parse_points(tri, "t.off") == std::vector<point2>{{0, 0}, {1, 0}, {0, 1}});
  CHECK(cdpkit::parse_points("OFF 2 0 0\n5 6 7\n8 9 10\n", "t.off") == std::vector<point2>{{5, 6}, {8, 9}});
  CHECK(cdpkit::parse_points("COFF\n1 0 0\n1 2 3 0 0 0 1\n", "t.off") == std::vector<point2>{{1, 2}});
  const auto error = [](const std::string& text) { return input_error_of([&] { return cdpkit::parse_points(text, "t.off"); }); };
  CHECK(error("OFF\n") == "t.off:1: an OFF file without its counts line");
  CHECK(error("OFF\n3 1 0\n0.000000 0.000000 0.000000\n") ==
        "t.off:3: truncated: the counts line declares 3 vertices, the file has 1");
  CHECK(error("OFF\n4000000000 0 0\n0 0 0\n") ==
        "t.off:2: the counts line declares 4000000000 vertices; the rest of the file holds at most 2");
  CHECK(error("OFF\nx 0 0\n") == "t.off:2: OFF vertex count 'x' is not a non-negative integer");
  CHECK(error("OFF\n0 0 0\n") == "t.off: a mesh without vertices");
}

TEST_CASE("the real meshes' vertices build quadtrees that follow the definition" *
          doctest::skip(!cdpkit_test::real_meshes_present({std::begin(cdpkit::harness::real_point_meshes),
                                                           std::end(cdpkit::harness::real_point_meshes)}))) {
  const std::string dir = CDPKIT_REAL_POINTS_DIR;
  for (const char* mesh : cdpkit::harness::real_point_meshes) {
    const std::string path = dir + "/" + mesh;
    CAPTURE(path);
    const auto points = cdpkit::read_points(path);
    CHECK(points.size() > 10000);
    cdpkit::quadtree_params params;
    params.max_depth = 16;
    params.min_points = 8;
    const quadtree q = cdpkit::quadtree_reference(points, params);
    check_definition(points, q);
    CHECK(q.height > 5u);
  }
}

TEST_CASE("point specs name each generator and files, and bad specs say why") {
  CHECK(cdpkit::load_points("uniform:1000").size() == 1000);
  CHECK(cdpkit::load_points("clustered:2^10:3").size() == 1024);
  CHECK(cdpkit::load_points("line:10").size() == 10);
  CHECK(cdpkit::load_points("equal:5").size() == 5);
  const temp_dir dir;
  const std::string path = dir.file("m.obj", "v 0 0 0\nv 1 1 0\n");
  CHECK(cdpkit::load_points("file:" + path).size() == 2);
  CHECK(cdpkit::load_points(path).size() == 2);
  CHECK(input_error_of([] { return cdpkit::load_points("gauss:10"); }) ==
        "point spec 'gauss:10': unknown kind 'gauss' (expected uniform:N, clustered:N[:BLOBS], line:N, equal:N or "
        "file:PATH)");
  CHECK(input_error_of([] { return cdpkit::load_points("uniform:ten"); }) ==
        "point spec 'uniform:ten': point count 'ten' is not a non-negative integer (or 2^K)");
  CHECK(input_error_of([] { return cdpkit::load_points("uniform:0"); }) ==
        "point spec 'uniform:0': make_points(0, uniform): no points");
  CHECK(input_error_of([] { return cdpkit::load_points("clustered:10:0"); }) ==
        "point spec 'clustered:10:0': the blob count must be in [1, 2^20], got 0");
  CHECK(input_error_of([] { return cdpkit::load_points("line:1:2"); }) == "point spec 'line:1:2': expected line:N");
  CHECK_CONTAINS(input_error_of([&] { return cdpkit::load_points("file:" + dir.path().string()); }),
                 "not a regular file; points are read from regular files only");
  CHECK_CONTAINS(input_error_of([] { return cdpkit::load_points("/nonexistent/points.txt"); }), "cannot open");
}

TEST_CASE("a point's cell is its quadrant at every depth, in Morton order, clamped to the square") {
  const cdpkit::quadtree_bounds b{0.0, 0.0, 1.0};
  CHECK(cdpkit::quadtree_cell({0.1f, 0.1f}, b, 1) == 0u);
  CHECK(cdpkit::quadtree_cell({0.9f, 0.1f}, b, 1) == 1u);  // x bit first
  CHECK(cdpkit::quadtree_cell({0.1f, 0.9f}, b, 1) == 2u);
  CHECK(cdpkit::quadtree_cell({0.9f, 0.9f}, b, 1) == 3u);
  CHECK(cdpkit::quadtree_cell({1.0f, 1.0f}, b, 3) == 63u);  // the far corner stays inside
  CHECK(cdpkit::quadtree_cell({-5.0f, 0.0f}, b, 3) == 0u);
  // (0.3, 0.6) at depth 2: qx = 1 (01), qy = 2 (10) -> bits y1 x1 y0 x0 = 1 0 0 1
  CHECK(cdpkit::quadtree_cell({0.3f, 0.6f}, b, 2) == 9u);
  CHECK((cdpkit::quadtree_cell({0.3f, 0.6f}, b, 2) >> 2) == cdpkit::quadtree_cell({0.3f, 0.6f}, b, 1));
  const auto box = cdpkit::bounds_of({{1, 5}, {3, 6}});
  CHECK(box.min_x == 1.0);
  CHECK(box.min_y == 5.0);
  CHECK(box.side == 2.0);
  CHECK(cdpkit::bounds_of({{2, 2}, {2, 2}}).side == 1.0);
}

TEST_CASE("the reference quadtree follows the definition on every distribution") {
  for (const auto d : {cdpkit::point_distribution::uniform, cdpkit::point_distribution::clustered,
                       cdpkit::point_distribution::line}) {
    CAPTURE(std::string(cdpkit::to_string(d)));
    const auto points = cdpkit::make_points(20000, d, 7);
    cdpkit::quadtree_params params;
    params.max_depth = 10;
    params.min_points = 8;
    const quadtree q = cdpkit::quadtree_reference(points, params);
    check_definition(points, q);
    CHECK(q.leaves.size() > 100);
    CHECK(cdpkit::compare_quadtrees(q, q) == 0u);
  }
  SUBCASE("all points equal: one chain to max_depth, one leaf holding them all") {
    const auto points = cdpkit::make_points(1000, cdpkit::point_distribution::equal);
    cdpkit::quadtree_params params;
    params.max_depth = 12;
    const quadtree q = cdpkit::quadtree_reference(points, params);
    check_definition(points, q);
    REQUIRE(q.leaves.size() == 1);
    CHECK(q.leaves[0].depth == 12u);
    CHECK(q.leaves[0].end - q.leaves[0].begin == 1000u);
    CHECK(q.nodes == 13u);
  }
  SUBCASE("few points: the root is the only leaf") {
    const quadtree q = cdpkit::quadtree_reference({{0, 0}, {1, 1}}, {});
    REQUIRE(q.leaves.size() == 1);
    CHECK(q.leaves[0].depth == 0u);
    CHECK(q.nodes == 1u);
  }
  CHECK(input_error_of([] {
          cdpkit::quadtree_params p;
          p.max_depth = 25;
          return cdpkit::quadtree_reference({{0, 0}}, p);
        }) == "quadtree: max_depth 25 is above the 24 the library builds");
  CHECK(input_error_of([] { return cdpkit::quadtree_reference({}, {}); }) == "quadtree: no points");
}

TEST_CASE("comparing two builds finds a moved point and a missing leaf") {
  const auto points = cdpkit::make_points(5000, cdpkit::point_distribution::clustered, 2);
  const quadtree q = cdpkit::quadtree_reference(points, {});
  quadtree moved = q;
  std::swap(moved.order[moved.leaves[0].begin], moved.order[moved.leaves[1].begin]);
  std::string first;
  CHECK(cdpkit::compare_quadtrees(q, moved, &first) == 2u);
  CHECK_CONTAINS(first, "holds other points");
  quadtree fewer = q;
  fewer.leaves.erase(fewer.leaves.begin() + 3);
  first.clear();
  CHECK(cdpkit::compare_quadtrees(q, fewer, &first) == 1u);
  CHECK_CONTAINS(first, "is missing");
  // a build's leaves in another order compare equal once sorted
  quadtree shuffled = q;
  std::reverse(shuffled.leaves.begin(), shuffled.leaves.end());
  cdpkit::sort_leaves(shuffled);
  CHECK(cdpkit::compare_quadtrees(q, shuffled) == 0u);
}
