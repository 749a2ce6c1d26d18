#pragma once
// cdpkit/graph.hpp — graphs for the BFS family: edge lists, CSR (host and device), generators
// (Graph500 RMAT, 2-D grid, uniform random) and file readers (Matrix Market, SNAP edge lists).
//
// Vertex ids are 32-bit; a CSR holds at most 2^32 - 1 directed edges. Anything past that, and
// every malformed input, is a cdpkit::input_error naming the file, the line and the reason.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit {

/// Directed edges over vertices [0, num_vertices).
struct edge_list {
  std::uint64_t num_vertices = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  /// True when the source lists each undirected edge once and means both directions
  /// (Matrix Market "symmetric"); build_csr then adds the reverse edges.
  bool symmetric = false;
};

struct csr_options {
  /// Add the reverse of every edge (BFS over the undirected graph). Default: on.
  bool symmetrize = true;
};

/// Compressed sparse rows: the neighbours of v are neighbors[offsets[v], offsets[v + 1]),
/// sorted, without duplicates or self loops.
struct csr_graph {
  std::uint32_t num_vertices = 0;
  std::vector<std::uint32_t> offsets{0};
  std::vector<std::uint32_t> neighbors;

  [[nodiscard]] std::uint64_t num_edges() const noexcept { return neighbors.size(); }
  [[nodiscard]] std::uint32_t degree(std::uint32_t v) const { return offsets[v + 1] - offsets[v]; }
  [[nodiscard]] std::uint32_t max_degree() const;
  /// The vertex of highest degree (the lowest id among ties; 0 for an empty graph): a BFS
  /// source inside the big component.
  [[nodiscard]] std::uint32_t highest_degree_vertex() const;
};

/// Build the CSR: drop self loops and duplicate edges, symmetrize (options or list.symmetric),
/// sort every neighbour list. Throws cdpkit::input_error for an id >= num_vertices, more than
/// 2^32 - 1 vertices, or more than 2^32 - 1 directed edges after symmetrization.
csr_graph build_csr(const edge_list& list, const csr_options& options = {});

// --- generators (deterministic for a given seed) ---------------------------------------------

/// Graph500 Kronecker / RMAT: 2^scale vertices, edge_factor * 2^scale edges drawn with
/// quadrant probabilities a, b, c (d = 1 - a - b - c), vertex labels randomly permuted.
/// Throws cdpkit::input_error for scale outside [1, 31] or bad probabilities.
edge_list make_rmat(int scale, int edge_factor = 16, std::uint64_t seed = 1, double a = 0.57,
                    double b = 0.19, double c = 0.19);
/// A side x side 4-neighbour grid (high diameter, like a road network).
edge_list make_grid(std::uint32_t side);
/// num_edges edges with endpoints uniform in [0, num_vertices).
edge_list make_uniform_random(std::uint32_t num_vertices, std::uint64_t num_edges,
                              std::uint64_t seed = 1);

// --- readers -------------------------------------------------------------------------------

/// Matrix Market coordinate format: field pattern | real | integer, symmetry general | symmetric,
/// 1-based indices; the graph has max(rows, cols) vertices. Values are ignored.
edge_list read_matrix_market(const std::string& path);
/// SNAP-style edge list: "u v" per line (spaces or tabs, LF or CRLF), '#' comments, 0-based
/// ids (further columns ignored); the graph has max id + 1 vertices.
edge_list read_edge_list(const std::string& path);
/// The same parsers over text already in memory (`name` is used in error messages).
edge_list parse_matrix_market(const std::string& text, const std::string& name);
edge_list parse_edge_list(const std::string& text, const std::string& name);

/// A graph by specification: "rmat:S[:EF]" | "grid:SIDE" | "uniform:N:M" | a path ending in
/// .mtx (Matrix Market) | any other path (edge list). Throws cdpkit::input_error.
csr_graph load_graph(const std::string& spec, const csr_options& options = {},
                     std::uint64_t seed = 1);

// --- device copy ---------------------------------------------------------------------------

/// The CSR in device memory. Move-only RAII.
class device_graph {
 public:
  explicit device_graph(const csr_graph& graph);
  ~device_graph();
  device_graph(device_graph&&) noexcept;
  device_graph& operator=(device_graph&&) noexcept;
  device_graph(const device_graph&) = delete;
  device_graph& operator=(const device_graph&) = delete;

  [[nodiscard]] std::uint32_t num_vertices() const noexcept { return num_vertices_; }
  [[nodiscard]] std::uint64_t num_edges() const noexcept { return num_edges_; }
  [[nodiscard]] const std::uint32_t* d_offsets() const noexcept { return d_offsets_; }
  [[nodiscard]] const std::uint32_t* d_neighbors() const noexcept { return d_neighbors_; }

 private:
  void release() noexcept;
  std::uint32_t num_vertices_ = 0;
  std::uint64_t num_edges_ = 0;
  std::uint32_t* d_offsets_ = nullptr;
  std::uint32_t* d_neighbors_ = nullptr;
};

}  // namespace cdpkit
