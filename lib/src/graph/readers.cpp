// Graph file readers: Matrix Market coordinate and SNAP edge lists (pure C++: also compiled into
// the sanitizer-built fuzz targets). The whole file is read at once and scanned in place: no
// iostream per token.
//
// Files are untrusted input, so nothing they declare is allocated before it is checked:
//   1. only a regular file is read (never /dev/zero, a FIFO or a directory), at most
//      max_file_bytes of it;
//   2. a Matrix Market entry count must fit the file (an entry line takes at least 4 bytes), and
//      only what the rest of the file can hold is reserved;
//   3. the vertex count (max id + 1, or max(rows, cols)) must fit dense_vertex_bound(edges)
//      unless sparse ids are allowed, and max_vertices always; build_csr then checks the memory.

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>

#include "../common/text_input.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace cdpkit {

namespace {

using detail::blank_line;
using detail::fail_at;
using detail::line_scanner;
using detail::next_token;
using detail::parse_unsigned;
using detail::skip_blanks;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

/// Throws (at `name`:`line`) when `num_vertices` is more than the options allow for a file of
/// `num_edges` edges. `subject` says where the count comes from ("vertex id 7 makes 8 vertices"),
/// `unit` what the edges are called in this format ("edge", "entry").
void check_vertex_count(std::uint64_t num_vertices, std::uint64_t num_edges,
                        const graph_read_options& options, const std::string& subject,
                        const std::string& unit, const std::string& units, const std::string& name,
                        std::uint64_t line) {
  const std::uint64_t cap = std::min(options.max_vertices, max_csr_vertices);
  if (num_vertices > cap)
    fail_at(name, line, subject + ", more than the " + std::to_string(cap) +
                         " allowed (graph_read_options::max_vertices)");
  const std::uint64_t bound = dense_vertex_bound(num_edges);
  if (!options.allow_sparse_ids && num_vertices > bound)
    fail_at(name, line, subject + " for " + std::to_string(num_edges) + " " +
                         (num_edges == 1 ? unit : units) + ", more than the " +
                         std::to_string(bound) + " a graph file may have (max(2^20, 16 x " + units +
                         ")); ids this sparse are accepted only with "
                         "graph_read_options::allow_sparse_ids");
}

std::string read_file(const std::string& path, const graph_read_options& options) {
  const bool default_cap = options.max_file_bytes == 0;
  return detail::read_text_file(path, default_cap ? detail::default_max_file_bytes() : options.max_file_bytes,
                                default_cap, {"graph", "graph_read_options::max_file_bytes"});
}

}  // namespace

std::uint64_t default_max_graph_file_bytes() noexcept { return detail::default_max_file_bytes(); }

edge_list parse_matrix_market(const std::string& text, const std::string& name,
                              const graph_read_options& options) {
  line_scanner lines(text);
  std::string_view line;
  if (!lines.next(line)) fail_at(name, 1, "empty file (expected a %%MatrixMarket header)");
  std::string_view header = line;
  if (lower(next_token(header)) != "%%matrixmarket")
    fail_at(name, 1, "missing '%%MatrixMarket' header");
  const std::string object = lower(next_token(header)), format = lower(next_token(header)),
                    field = lower(next_token(header)), symmetry = lower(next_token(header));
  if (object != "matrix") fail_at(name, 1, "object '" + object + "' is not supported (matrix only)");
  if (format != "coordinate")
    fail_at(name, 1, "format '" + format + "' is not supported (coordinate only)");
  if (field != "pattern" && field != "real" && field != "integer" && field != "double")
    fail_at(name, 1, "field '" + field + "' is not supported (pattern, real or integer)");
  if (symmetry != "general" && symmetry != "symmetric")
    fail_at(name, 1, "symmetry '" + symmetry + "' is not supported (general or symmetric)");
  const bool has_value = field != "pattern";

  // size line, after comments
  bool have_size = false;
  std::uint64_t rows = 0, cols = 0, nnz = 0;
  while (lines.next(line)) {
    if (blank_line(line) || line.front() == '%') continue;
    std::string_view s = line;
    rows = parse_unsigned(next_token(s), 0xffffffffull, "row count", name, lines.number());
    cols = parse_unsigned(next_token(s), 0xffffffffull, "column count", name, lines.number());
    nnz = parse_unsigned(next_token(s), 0xffffffffffffull, "entry count", name, lines.number());
    if (!next_token(s).empty()) fail_at(name, lines.number(), "size line has more than 3 numbers");
    have_size = true;
    break;
  }
  if (!have_size) fail_at(name, lines.number() + 1, "missing size line 'rows cols entries'");

  // The header is untrusted: an entry line takes at least 4 bytes ("1 1\n", the last one 3), so
  // a text of S bytes holds at most (S + 1) / 4 entries. A count beyond that is an error here;
  // one that only the rest of the file cannot hold is a truncated file, reported at its end.
  const std::uint64_t size_line = lines.number();
  const std::uint64_t file_capacity = (static_cast<std::uint64_t>(text.size()) + 1) / 4;
  if (nnz > file_capacity)
    fail_at(name, size_line, "the size line declares " + std::to_string(nnz) + " entries; a file of " +
                              std::to_string(text.size()) + " bytes holds at most " +
                              std::to_string(file_capacity) +
                              " (an entry line takes at least 4 bytes, \"1 1\\n\")");
  check_vertex_count(std::max(rows, cols), nnz, options,
                     "the size line declares " + std::to_string(std::max(rows, cols)) +
                         " vertices (max of rows and columns)",
                     "entry", "entries", name, size_line);

  edge_list list;
  list.num_vertices = std::max(rows, cols);
  list.symmetric = symmetry == "symmetric";
  const std::uint64_t rest_capacity = (static_cast<std::uint64_t>(lines.remaining()) + 1) / 4;
  list.edges.reserve(static_cast<std::size_t>(std::min(nnz, rest_capacity)));
  while (lines.next(line)) {
    if (blank_line(line) || line.front() == '%') continue;
    if (list.edges.size() == nnz)
      fail_at(name, lines.number(), "more entries than the " + std::to_string(nnz) + " the size line declares");
    std::string_view s = line;
    const std::uint64_t i = parse_unsigned(next_token(s), 0xffffffffull, "row index", name, lines.number());
    const std::uint64_t j = parse_unsigned(next_token(s), 0xffffffffull, "column index", name, lines.number());
    if (i == 0 || j == 0) fail_at(name, lines.number(), "index 0 in a 1-based Matrix Market file");
    if (i > rows) fail_at(name, lines.number(), "row index " + std::to_string(i) + " > row count " + std::to_string(rows));
    if (j > cols)
      fail_at(name, lines.number(), "column index " + std::to_string(j) + " > column count " + std::to_string(cols));
    if (has_value && next_token(s).empty())
      fail_at(name, lines.number(), "missing value (field is " + field + ")");
    list.edges.emplace_back(static_cast<std::uint32_t>(i - 1), static_cast<std::uint32_t>(j - 1));
  }
  if (list.edges.size() != nnz)
    fail_at(name, lines.number(), "truncated: the size line declares " + std::to_string(nnz) +
                                   " entries, the file has " + std::to_string(list.edges.size()));
  return list;
}

edge_list parse_edge_list(const std::string& text, const std::string& name,
                          const graph_read_options& options) {
  line_scanner lines(text);
  std::string_view line;
  edge_list list;
  std::uint64_t max_id = 0, max_id_line = 0;
  while (lines.next(line)) {
    std::string_view s = line;
    skip_blanks(s);
    if (s.empty() || s.front() == '#' || s.front() == '%') continue;
    const std::uint64_t u = parse_unsigned(next_token(s), 0xfffffffeull, "source vertex id", name, lines.number());
    const std::uint64_t v = parse_unsigned(next_token(s), 0xfffffffeull, "target vertex id", name, lines.number());
    if (std::max(u, v) > max_id || max_id_line == 0) {
      max_id = std::max({max_id, u, v});
      max_id_line = lines.number();
    }
    list.edges.emplace_back(static_cast<std::uint32_t>(u), static_cast<std::uint32_t>(v));
  }
  list.num_vertices = list.edges.empty() ? 0 : max_id + 1;
  // The vertex count is known only at the end; the error names the line of the largest id.
  if (!list.edges.empty())
    check_vertex_count(list.num_vertices, list.edges.size(), options,
                       "vertex id " + std::to_string(max_id) + " makes " +
                           std::to_string(list.num_vertices) + " vertices",
                       "edge", "edges", name, max_id_line);
  return list;
}

edge_list read_matrix_market(const std::string& path, const graph_read_options& options) {
  CDPKIT_NVTX_SCOPE("graph::read_matrix_market");
  return parse_matrix_market(read_file(path, options), path, options);
}

edge_list read_edge_list(const std::string& path, const graph_read_options& options) {
  CDPKIT_NVTX_SCOPE("graph::read_edge_list");
  return parse_edge_list(read_file(path, options), path, options);
}

}  // namespace cdpkit
