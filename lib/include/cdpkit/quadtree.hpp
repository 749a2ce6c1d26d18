#pragma once
// cdpkit/quadtree.hpp — adaptive refinement: a quadtree over 2-D points, built where the data is
// busy. A node splits in four while it holds more than min_points points and its depth is below
// max_depth; the points are reordered so that every leaf's points are contiguous.
//
// Host side (this header): points (generators, a reader of point files and meshes), the root
// square, the cell of a point at every depth, the CPU reference build and the comparison of two
// builds (same leaves, same point sets per leaf). Every point is placed by integer arithmetic on
// its cell at max_depth (quadtree_cell), computed the same way on the host and the device, so two
// builds agree exactly, whatever the order of their work.

#include <cstdint>
#include <string>
#include <vector>

namespace cdpkit {

struct point2 {
  float x = 0.0f;
  float y = 0.0f;
  friend bool operator==(const point2& a, const point2& b) noexcept { return a.x == b.x && a.y == b.y; }
};

/// The deepest quadtree the library builds (2 bits per level of a 64-bit cell code, and the
/// depth of the recursion).
inline constexpr std::uint32_t max_quadtree_depth = 24;
/// The most points (32-bit ids).
inline constexpr std::uint64_t max_quadtree_points = 0xffffffffull;

// --- points ----------------------------------------------------------------------------------

enum class point_distribution : std::uint8_t {
  uniform,    ///< uniform in the unit square
  clustered,  ///< Gaussian blobs (16 by default) of different widths in the unit square
  line,       ///< on a segment (a degenerate input: the tree refines along it)
  equal,      ///< every point the same (the tree must stop at max_depth, not recurse forever)
};
/// "uniform", "clustered", "line", "equal".
const char* to_string(point_distribution d) noexcept;

/// n points of the distribution, deterministic per seed. Throws cdpkit::input_error for 0 or more
/// than max_quadtree_points points, or too little host memory (8 bytes per point).
std::vector<point2> make_points(std::uint64_t n, point_distribution d, std::uint64_t seed = 1);

struct point_read_options {
  /// The largest file read, in bytes; 0: a quarter of the available host memory, at least
  /// 16 MiB, at most 64 GiB.
  std::uint64_t max_file_bytes = 0;
};

/// Points from text: one point per line, "x y" or "x y z" (z ignored), blank lines and '#'
/// comments skipped; or a mesh whose vertices are the points (x and y of each): Geomview OFF
/// (first line "OFF", or COFF, NOFF...; then "VERTICES FACES EDGES", the vertices, the faces,
/// which are ignored), or Wavefront OBJ (the first non-comment line starts with a keyword such as
/// "v", "vn", "o", "g", "mtllib"; vertices "v x y z", every other line ignored). Throws
/// cdpkit::input_error "NAME:LINE: reason" for a coordinate that is not a finite number in
/// [-3e38, 3e38], a line with fewer than 2 or (plain points) more than 3 numbers, an OFF vertex
/// count the file cannot hold or does not hold, no points at all, or more than
/// max_quadtree_points points.
std::vector<point2> parse_points(const std::string& text, const std::string& name);

/// parse_points over the file at `path`. Throws cdpkit::input_error naming the path when it
/// cannot be opened or read, is not a regular file or is larger than options.max_file_bytes.
std::vector<point2> read_points(const std::string& path, const point_read_options& options = {});

/// Points by specification: "uniform:N", "clustered:N[:BLOBS]", "line:N", "equal:N" (N decimal or
/// 2^K), or "file:PATH" / a path (parse_points: points, OFF or OBJ). Throws cdpkit::input_error naming the spec and
/// the reason (or the file and line).
std::vector<point2> load_points(const std::string& spec, std::uint64_t seed = 1, const point_read_options& options = {});

// --- the build -------------------------------------------------------------------------------

struct quadtree_params {
  std::uint32_t max_depth = 12;   ///< the root is depth 0; at most max_quadtree_depth
  std::uint32_t min_points = 16;  ///< a node with more points than this splits (below max_depth)
};

/// The root square: the points' bounding box, widened to a square (side 1 when every point is
/// the same).
struct quadtree_bounds {
  double min_x = 0.0;
  double min_y = 0.0;
  double side = 1.0;
};
/// The bounds of `points` (non-empty).
quadtree_bounds bounds_of(const std::vector<point2>& points);

/// A point's cell at depth D: qx, qy in [0, 2^D) along x and y, interleaved into the cell code
/// (Morton order: bit 2k holds bit k of qx, bit 2k + 1 bit k of qy). Its cell at depth d < D is
/// code >> 2 * (D - d); its quadrant at depth d + 1 is (code >> 2 * (D - d - 1)) & 3. Computed in
/// double precision, identically on the host and the device. Precondition: D <= max_quadtree_depth.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline std::uint64_t quadtree_cell(point2 p, const quadtree_bounds& b, std::uint32_t depth) {
  const double cells = static_cast<double>(1ull << depth);
  const double fx = (static_cast<double>(p.x) - b.min_x) / b.side * cells;
  const double fy = (static_cast<double>(p.y) - b.min_y) / b.side * cells;
  const std::uint64_t last = (1ull << depth) - 1;
  const std::uint64_t qx = fx <= 0.0 ? 0 : (fx >= static_cast<double>(last) ? last : static_cast<std::uint64_t>(fx));
  const std::uint64_t qy = fy <= 0.0 ? 0 : (fy >= static_cast<double>(last) ? last : static_cast<std::uint64_t>(fy));
  std::uint64_t code = 0;
  for (std::uint32_t k = 0; k < depth; ++k) code |= ((qx >> k) & 1ull) << (2 * k) | ((qy >> k) & 1ull) << (2 * k + 1);
  return code;
}

/// One leaf: its depth, its cell code at that depth, and its points order[begin, end).
struct quadtree_leaf {
  std::uint32_t depth = 0;
  std::uint64_t code = 0;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

/// A built quadtree, as every variant returns it: the leaves in Morton order (of their cells at
/// max_depth), and the point ids in leaf order (each leaf's contiguous, in any order inside it).
struct quadtree {
  quadtree_params params;
  quadtree_bounds bounds;
  std::vector<quadtree_leaf> leaves;
  std::vector<std::uint32_t> order;
  std::uint64_t nodes = 0;        ///< nodes in all (leaves and split nodes)
  std::uint32_t height = 0;       ///< the deepest leaf's depth
};

/// Throws cdpkit::input_error for a max_depth above max_quadtree_depth, or no points / more than
/// max_quadtree_points.
void check_quadtree_input(const std::vector<point2>& points, const quadtree_params& params);

/// The CPU reference: the definition, top-down (each node's points partitioned by quadrant,
/// stably), with an explicit stack.
quadtree quadtree_reference(const std::vector<point2>& points, const quadtree_params& params);

/// Put a build's leaves in Morton order (their order[] ranges move with them; order itself is
/// rewritten to follow). What every GPU variant does before returning.
void sort_leaves(quadtree& q);

/// The differences between two builds of the same points: leaves (depth and cell) missing on
/// either side, and leaves whose point sets differ. 0 = the same tree. `first` (may be null) gets
/// the first difference, described.
std::uint64_t compare_quadtrees(const quadtree& expected, const quadtree& got, std::string* first = nullptr);

}  // namespace cdpkit
