#pragma once
// cdpkit/graph.hpp — graphs for the BFS family: edge lists, CSR (host and device), generators
// (Graph500 RMAT, 2-D grid, uniform random) and file readers (Matrix Market, SNAP edge lists).
//
// Vertex ids are 32-bit; a CSR holds at most 2^32 - 1 directed edges. Anything past that, and
// every malformed input, is a cdpkit::input_error naming the file (and line) or the spec, and the
// reason. Graph inputs are untrusted: no size read from a file, a header or a spec is allocated
// before it has been checked against
//   - what the input can hold: a file's vertex count against its edge count (dense_vertex_bound),
//     a Matrix Market entry count against the file's size (an entry line takes >= 4 bytes);
//   - the 32-bit limits of the CSR (vertex ids, directed edges after symmetrization);
//   - the host memory that is really available (cdpkit/memory.hpp), before allocating;
//   - for files: regular files only (never /dev/zero, a FIFO or a directory), at most
//     graph_read_options::max_file_bytes.
// So a bad input is an input_error, never std::bad_alloc, an out-of-memory kill or a hang.

#include <cdpkit/detail/unique_device_ptr.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit {

/// The most directed edges (and vertices) a CSR holds: its offsets and ids are 32-bit.
inline constexpr std::uint64_t max_csr_edges = 0xffffffffull;
inline constexpr std::uint64_t max_csr_vertices = 0xffffffffull;

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

/// Limits of the file readers (read_*, parse_*, load_graph on a path).
struct graph_read_options {
  /// Without it, a file may not have more vertices than dense_vertex_bound(its edge count): a
  /// file of a few bytes naming vertex 4000000000 is refused instead of becoming a graph of
  /// 4 billion isolated vertices (about 64 GiB of CSR). Set it to accept sparse ids; the vertex
  /// count then only has to fit max_vertices and build_csr's host memory check.
  bool allow_sparse_ids = false;
  /// The most vertices a file may have, whatever allow_sparse_ids says (at most 2^32 - 1).
  std::uint64_t max_vertices = max_csr_vertices;
  /// The largest file read, in bytes; 0: default_max_graph_file_bytes().
  std::uint64_t max_file_bytes = 0;
};

/// The most vertices a graph file with `num_edges` edges (Matrix Market: declared entries) may
/// have without graph_read_options::allow_sparse_ids: max(2^20, 16 * num_edges). Real graphs
/// stay far below it (isolated vertices are rare); 2^20 keeps small files with large ids usable.
[[nodiscard]] constexpr std::uint64_t dense_vertex_bound(std::uint64_t num_edges) noexcept {
  constexpr std::uint64_t floor = 1ull << 20;
  return num_edges > (UINT64_MAX >> 4) ? UINT64_MAX
                                       : (16 * num_edges > floor ? 16 * num_edges : floor);
}

/// The file size limit for `available` bytes of host memory: a quarter of it (reading a file
/// takes the text plus up to twice its size in edges), at least 16 MiB, at most 64 GiB; 64 GiB
/// when the available memory is unknown (0).
[[nodiscard]] constexpr std::uint64_t max_graph_file_bytes_for(std::uint64_t available) noexcept {
  constexpr std::uint64_t ceiling = 64ull << 30, floor = 16ull << 20;
  if (available == 0) return ceiling;
  const std::uint64_t quarter = available / 4;
  return quarter < floor ? floor : (quarter > ceiling ? ceiling : quarter);
}

/// The default file size limit: max_graph_file_bytes_for(available_host_memory()), the memory
/// read at the call.
[[nodiscard]] std::uint64_t default_max_graph_file_bytes() noexcept;

/// Compressed sparse rows: the neighbours of v are neighbors[offsets[v], offsets[v + 1]),
/// sorted, without duplicates or self loops.
struct csr_graph {
  std::uint32_t num_vertices = 0;
  std::vector<std::uint32_t> offsets{0};
  std::vector<std::uint32_t> neighbors;

  [[nodiscard]] std::uint64_t num_edges() const noexcept { return neighbors.size(); }
  /// Precondition: v < num_vertices.
  [[nodiscard]] std::uint32_t degree(std::uint32_t v) const { return offsets[v + 1] - offsets[v]; }
  [[nodiscard]] std::uint32_t max_degree() const;
  /// The vertex of highest degree (the lowest id among ties; 0 for an empty graph): a BFS
  /// source inside the big component.
  [[nodiscard]] std::uint32_t highest_degree_vertex() const;
};

/// Peak host bytes build_csr allocates for `num_vertices` vertices and `num_edges` input edges
/// (twice as many directed edges when `symmetrize`), not counting the edge list itself:
/// 16 bytes per vertex and 8 per directed edge. Saturates at UINT64_MAX.
[[nodiscard]] std::uint64_t build_csr_host_bytes(std::uint64_t num_vertices, std::uint64_t num_edges,
                                                 bool symmetrize) noexcept;

/// Build the CSR: drop self loops and duplicate edges, symmetrize (options or list.symmetric),
/// sort every neighbour list. Checks before allocating anything.
/// Throws cdpkit::input_error for more than 2^32 - 1 vertices, for more host memory than is
/// available (build_csr_host_bytes), for an id >= num_vertices (naming the edge), or for more
/// than 2^32 - 1 directed edges after symmetrization and deduplication.
csr_graph build_csr(const edge_list& list, const csr_options& options = {});

// --- generators (deterministic for a given seed) ---------------------------------------------
// Each checks its arguments and the host memory for its edge list before allocating, and throws
// cdpkit::input_error (naming the generator and its arguments) otherwise.

/// Graph500 Kronecker / RMAT: 2^scale vertices, edge_factor * 2^scale edges drawn with
/// quadrant probabilities a, b, c (d = 1 - a - b - c), vertex labels randomly permuted.
/// Throws cdpkit::input_error for scale outside [1, 31], edge_factor outside [1, 1024], more than
/// 2^32 - 1 edges, probabilities that are negative or sum past 1, or too little host memory
/// (8 bytes per edge + 4 per vertex).
edge_list make_rmat(int scale, int edge_factor = 16, std::uint64_t seed = 1, double a = 0.57,
                    double b = 0.19, double c = 0.19);
/// A side x side 4-neighbour grid (high diameter, like a road network): 2 * side * (side - 1)
/// edges. Throws cdpkit::input_error for side 0, more than 2^32 - 1 edges (side > 46341) or too
/// little host memory (8 bytes per edge).
edge_list make_grid(std::uint32_t side);
/// num_edges edges with endpoints uniform in [0, num_vertices). Throws cdpkit::input_error for
/// edges without vertices, more than 2^32 - 1 edges or too little host memory (8 bytes per edge).
edge_list make_uniform_random(std::uint32_t num_vertices, std::uint64_t num_edges,
                              std::uint64_t seed = 1);

// --- readers -------------------------------------------------------------------------------
// Errors are cdpkit::input_error "NAME:LINE: reason" (file-level problems: "PATH: reason").

/// Matrix Market coordinate format: field pattern | real | integer, symmetry general | symmetric,
/// 1-based indices; the graph has max(rows, cols) vertices. Values are ignored.
/// Throws cdpkit::input_error for a malformed header, size line or entry, an index out of range,
/// more or fewer entries than declared, an entry count larger than the text can hold (each
/// entry line takes at least 4 bytes, "1 1\n"), or max(rows, cols) above
/// dense_vertex_bound(entries) (unless options.allow_sparse_ids) or above options.max_vertices.
/// Reserves memory for at most as many entries as the rest of the text can hold.
edge_list parse_matrix_market(const std::string& text, const std::string& name,
                              const graph_read_options& options = {});
/// SNAP-style edge list: "u v" per line (spaces or tabs, LF or CRLF), '#' or '%' comments,
/// 0-based ids up to 2^32 - 2 (further columns ignored); the graph has max id + 1 vertices.
/// Throws cdpkit::input_error for a malformed line, or a vertex count (max id + 1) above
/// dense_vertex_bound(edges) (unless options.allow_sparse_ids) or above options.max_vertices,
/// naming the line of the largest id.
edge_list parse_edge_list(const std::string& text, const std::string& name,
                          const graph_read_options& options = {});
/// parse_matrix_market / parse_edge_list over the file at `path`. Throws cdpkit::input_error
/// (naming the path) when it cannot be opened or read, is not a regular file (/dev/zero, a FIFO,
/// a directory, ...) or is larger than options.max_file_bytes (0: default_max_graph_file_bytes()),
/// and for everything the parser throws.
edge_list read_matrix_market(const std::string& path, const graph_read_options& options = {});
edge_list read_edge_list(const std::string& path, const graph_read_options& options = {});

/// A graph by specification: "rmat:S[:EF]" | "grid:SIDE" | "uniform:N:M" | a path ending in
/// .mtx or .mtx.gz (Matrix Market) | any other path (edge list); `read` applies to paths. A
/// gzip-compressed file is read as the text it holds, whatever its name (with zlib; without it
/// it is refused with a message that says so).
/// Before generating anything it checks that the graph fits a CSR (at most 2^32 - 1 vertices and
/// directed edges counted before deduplication, i.e. twice the generated edges when
/// options.symmetrize) and that the host memory for the edge list plus build_csr is available.
/// Throws cdpkit::input_error naming the spec (or the file and line) and the reason.
csr_graph load_graph(const std::string& spec, const csr_options& options = {},
                     std::uint64_t seed = 1, const graph_read_options& read = {});

// --- device copy ---------------------------------------------------------------------------

/// The CSR in device memory. Move-only RAII (defaulted moves; a moved-from graph holds no memory).
class device_graph {
 public:
  /// Copies `graph` to the current device. Throws cdpkit::input_error when the device has not
  /// enough free memory for it, cdpkit::cuda_error when a CUDA call fails.
  explicit device_graph(const csr_graph& graph);

  [[nodiscard]] std::uint32_t num_vertices() const noexcept { return num_vertices_; }
  [[nodiscard]] std::uint64_t num_edges() const noexcept { return num_edges_; }
  [[nodiscard]] const std::uint32_t* d_offsets() const noexcept { return d_offsets_.get(); }
  [[nodiscard]] const std::uint32_t* d_neighbors() const noexcept { return d_neighbors_.get(); }

 private:
  std::uint32_t num_vertices_ = 0;
  std::uint64_t num_edges_ = 0;
  detail::unique_device_ptr<std::uint32_t[]> d_offsets_;
  detail::unique_device_ptr<std::uint32_t[]> d_neighbors_;
};

}  // namespace cdpkit
