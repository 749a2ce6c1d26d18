// Graph file readers: Matrix Market coordinate and SNAP edge lists (pure C++: also compiled into
// the sanitizer-built fuzz targets). The whole file is read at once and scanned in place: no
// iostream per token. The Matrix Market banner, size line and indices are scanned by the code the
// matrix reader (lib/src/spmv/readers.cpp) shares: ../common/matrix_market.hpp.
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

#include "../common/matrix_market.hpp"
#include "../common/text_input.hpp"

#include <algorithm>
#include <string>
#include <string_view>

namespace cdpkit {

namespace {

using detail::fail_at;
using detail::line_scanner;
using detail::next_token;
using detail::parse_unsigned;
using detail::skip_blanks;

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
  const detail::matrix_market_banner banner = detail::read_matrix_market_banner(lines, name);
  const std::string& field = banner.field;
  if (field != "pattern" && field != "real" && field != "integer" && field != "double")
    fail_at(name, 1, "field " + quoted_input(field) + " is not supported (pattern, real or integer)");
  if (banner.symmetry != "general" && banner.symmetry != "symmetric")
    fail_at(name, 1, "symmetry " + quoted_input(banner.symmetry) + " is not supported (general or symmetric)");
  const bool has_value = field != "pattern";

  const detail::matrix_market_size size = detail::read_matrix_market_size(lines, text.size(), name);
  check_vertex_count(std::max(size.rows, size.cols), size.entries, options,
                     "the size line declares " + std::to_string(std::max(size.rows, size.cols)) +
                         " vertices (max of rows and columns)",
                     "entry", "entries", name, size.line);

  edge_list list;
  list.num_vertices = std::max(size.rows, size.cols);
  list.symmetric = banner.symmetry == "symmetric";
  list.edges.reserve(static_cast<std::size_t>(detail::matrix_market_reservable(lines, size)));
  std::string_view line;
  while (detail::next_matrix_market_entry(lines, line, list.edges.size(), size, name)) {
    std::string_view s = line;
    const auto [i, j] = detail::read_matrix_market_indices(s, size, name, lines.number());
    if (has_value && next_token(s).empty())
      fail_at(name, lines.number(), "missing value (field is " + field + ")");
    list.edges.emplace_back(i, j);
  }
  detail::check_matrix_market_count(lines, list.edges.size(), size, name);
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
