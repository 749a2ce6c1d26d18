// Matrix generators (RMAT rows as a power-law matrix, banded, a graph's pattern), the input
// vector, and matrix specifications (load_matrix: a generator, a graph spec or a Matrix Market
// file). Deterministic per seed. Pure C++.
//
// Every size is checked before anything is allocated: the entry count against the CSR's 32-bit
// offsets, and the bytes of everything a generator makes against the available host memory.

#include <cdpkit/sizes.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/sparse_matrix.hpp>

#include "../common/random.hpp"
#include "../common/text_input.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>

namespace cdpkit {

namespace {

/// Host bytes of a square pattern matrix: its offsets, columns and values.
std::uint64_t matrix_bytes(std::uint64_t rows, std::uint64_t nnz) {
  return saturating_add(saturating_mul(saturating_add(rows, 1), 4), saturating_mul(nnz, 8));
}

/// The graph's arrays become the matrix's (moved, not copied); only the values are allocated.
csr_matrix matrix_of(csr_graph&& graph, std::uint64_t seed, std::string name) {
  csr_matrix m;
  m.rows = m.cols = graph.num_vertices;
  m.row_offsets = std::move(graph.offsets);
  m.col_indices = std::move(graph.neighbors);
  m.name = std::move(name);
  m.values.resize(m.col_indices.size());
  for (std::uint32_t r = 0; r < m.rows; ++r)
    for (std::uint32_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
      m.values[k] = matrix_pattern_value(r, m.col_indices[k], seed);
  return m;
}

}  // namespace

csr_matrix make_power_law_matrix(int log2_rows, int avg_nnz_per_row, std::uint64_t seed) {
  CDPKIT_NVTX_SCOPE("spmv::make_power_law_matrix");
  const std::string what = "make_power_law_matrix(log2_rows " + std::to_string(log2_rows) + ", " +
                           std::to_string(avg_nnz_per_row) + " per row)";
  if (log2_rows < 1 || log2_rows > 31)
    throw input_error(what + ": log2_rows must be in [1, 31]");
  if (avg_nnz_per_row < 1 || avg_nnz_per_row > 1024)
    throw input_error(what + ": the entries per row must be in [1, 1024]");
  const std::uint64_t n = 1ull << log2_rows, m = n * static_cast<std::uint64_t>(avg_nnz_per_row);
  if (m > max_matrix_nnz) throw input_error(what + ": " + std::to_string(m) + " entries drawn; at most 4294967295");
  // the edge list (8 bytes per edge + 4 per vertex), build_csr over it, then the values
  require_host_memory(saturating_add(saturating_add(saturating_mul(m, 8), saturating_mul(n, 4)),
                                     saturating_add(build_csr_host_bytes(n, m, false), saturating_mul(m, 4))),
                      what);
  csr_options directed;
  directed.symmetrize = false;
  csr_graph g = build_csr(make_rmat(log2_rows, avg_nnz_per_row, seed), directed);
  return matrix_of(std::move(g), seed,
                   "rmat:" + std::to_string(log2_rows) + ":" + std::to_string(avg_nnz_per_row));
}

csr_matrix make_banded_matrix(std::uint32_t rows, std::uint32_t half_bandwidth, std::uint64_t seed) {
  CDPKIT_NVTX_SCOPE("spmv::make_banded_matrix");
  const std::uint64_t n = rows, h = half_bandwidth;
  // the diagonal, and n - d entries on each of the diagonals at distance d = 1 .. h:
  // n + 2 (h n - h (h + 1) / 2) = n + h (2n - h - 1); saturating, refused below when too large
  const std::uint64_t nnz = h + 1 >= n ? n * n : saturating_add(n, saturating_mul(h, 2 * n - h - 1));
  const std::string what = "make_banded_matrix(" + std::to_string(rows) + " rows, half bandwidth " +
                           std::to_string(half_bandwidth) + ")";
  if (nnz > max_matrix_nnz)
    throw input_error(what + ": " + std::to_string(nnz) + " entries; a CSR holds at most 4294967295 (32-bit offsets)");
  require_host_memory(matrix_bytes(n, nnz), what);
  csr_matrix m;
  m.rows = m.cols = rows;
  m.name = "banded:" + std::to_string(rows) + ":" + std::to_string(half_bandwidth);
  m.row_offsets.resize(n + 1);
  m.col_indices.resize(nnz);
  m.values.resize(nnz);
  std::uint64_t k = 0;
  for (std::uint64_t r = 0; r < n; ++r) {
    m.row_offsets[r] = static_cast<std::uint32_t>(k);
    const std::uint64_t first = r > h ? r - h : 0, last = std::min(n - 1, r + h);
    for (std::uint64_t c = first; c <= last; ++c, ++k) {
      m.col_indices[k] = static_cast<std::uint32_t>(c);
      m.values[k] = matrix_pattern_value(static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(c), seed);
    }
  }
  m.row_offsets[n] = static_cast<std::uint32_t>(k);
  return m;
}

csr_matrix make_giant_rows_matrix(std::uint32_t rows, std::uint32_t giants, std::uint32_t giant_len,
                                  std::uint32_t base_len, std::uint64_t seed) {
  CDPKIT_NVTX_SCOPE("spmv::make_giant_rows_matrix");
  const std::string what = "make_giant_rows_matrix(" + std::to_string(rows) + " rows, " + std::to_string(giants) +
                           " giant rows of " + std::to_string(giant_len) + ", the others " +
                           std::to_string(base_len) + ")";
  if (giants > rows) throw input_error(what + ": more giant rows than rows");
  if (giant_len > rows || base_len > rows)
    throw input_error(what + ": a row holds at most " + std::to_string(rows) + " entries (one per column)");
  const std::uint64_t n = rows;
  const std::uint64_t nnz = saturating_add(saturating_mul(n - giants, base_len), saturating_mul(giants, giant_len));
  if (nnz > max_matrix_nnz)
    throw input_error(what + ": " + std::to_string(nnz) + " entries; a CSR holds at most 4294967295 (32-bit offsets)");
  require_host_memory(matrix_bytes(n, nnz), what);
  csr_matrix m;
  m.rows = m.cols = rows;
  m.name = "giant:" + std::to_string(rows) + ":" + std::to_string(giants) + ":" + std::to_string(giant_len) + ":" +
           std::to_string(base_len);
  m.row_offsets.resize(n + 1);
  m.col_indices.resize(nnz);
  m.values.resize(nnz);
  const std::uint64_t giant_every = giants == 0 ? 0 : n / giants;  // >= 1
  const std::uint64_t giant_stride = giant_len == 0 ? 0 : n / giant_len, base_stride = base_len == 0 ? 0 : n / base_len;
  std::uint64_t k = 0;
  for (std::uint64_t r = 0; r < n; ++r) {
    m.row_offsets[r] = static_cast<std::uint32_t>(k);
    const bool giant = giants > 0 && r % giant_every == 0 && r / giant_every < giants;
    const std::uint64_t first = k;
    if (giant) {  // evenly spaced, shifted by the giant's number within one stride: sorted, distinct
      const std::uint64_t shift = giant_stride == 0 ? 0 : (r / giant_every) % giant_stride;
      for (std::uint64_t j = 0; j < giant_len; ++j) m.col_indices[k++] = static_cast<std::uint32_t>(j * giant_stride + shift);
    } else {  // spaced from the row's own index, wrapped: distinct, sorted below
      for (std::uint64_t j = 0; j < base_len; ++j) m.col_indices[k++] = static_cast<std::uint32_t>((r + j * base_stride) % n);
      std::sort(m.col_indices.begin() + static_cast<std::ptrdiff_t>(first), m.col_indices.begin() + static_cast<std::ptrdiff_t>(k));
    }
    for (std::uint64_t e = first; e < k; ++e)
      m.values[e] = matrix_pattern_value(static_cast<std::uint32_t>(r), m.col_indices[e], seed);
  }
  m.row_offsets[n] = static_cast<std::uint32_t>(k);
  return m;
}

csr_matrix matrix_from_graph(const csr_graph& graph, std::uint64_t seed) {
  CDPKIT_NVTX_SCOPE("spmv::matrix_from_graph");
  require_host_memory(matrix_bytes(graph.num_vertices, graph.num_edges()),
                      "matrix_from_graph(" + std::to_string(graph.num_vertices) + " vertices, " +
                          std::to_string(graph.num_edges()) + " edges)");
  return matrix_of(csr_graph(graph), seed, "graph");
}

std::vector<float> make_spmv_vector(std::uint32_t cols, std::uint64_t seed) {
  require_host_memory(saturating_mul(cols, sizeof(float)), "make_spmv_vector(" + std::to_string(cols) + ")");
  std::vector<float> x(cols);
  const std::uint64_t key = detail::mix64(seed ^ 0x9fb21c651e98df25ull);
  for (std::uint32_t j = 0; j < cols; ++j) {
    const std::uint64_t k = detail::mix64(key ^ j) >> 40;  // 24 bits
    x[j] = -1.0f + static_cast<float>(k) * 0x1.0p-23f;     // exact: a multiple of 2^-23 in [-1, 1)
  }
  return x;
}

// --- matrix specifications -------------------------------------------------------------------

namespace {

[[noreturn]] void spec_fail(const std::string& spec, const std::string& reason) {
  throw input_error("matrix spec " + quoted_spec(spec) + ": " + reason);
}

/// A number in a spec (decimal or 2^K) no larger than `max`.
std::uint64_t spec_number(std::string_view token, const std::string& spec, const char* what, std::uint64_t max) {
  const std::uint64_t v = parse_size(token, "matrix spec " + quoted_spec(spec) + ": ", what);
  if (v > max) spec_fail(spec, std::string(what) + " " + std::to_string(v) + " is larger than " + std::to_string(max));
  return v;
}


/// The generator's (or load_graph's) errors, prefixed with the spec.
template <class Fn>
csr_matrix with_spec(const std::string& spec, Fn fn) {
  try {
    return fn();
  } catch (const input_error& e) {
    spec_fail(spec, e.what());
  }
}

}  // namespace

csr_matrix load_matrix(const std::string& spec, std::uint64_t seed, const matrix_read_options& options) {
  CDPKIT_NVTX_SCOPE("spmv::load");
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string rest = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
  const auto named = [&](csr_matrix m) {
    m.name = spec;
    return m;
  };
  if (kind == "mtx") {
    if (rest.empty()) spec_fail(spec, "expected mtx:PATH");
    return named(read_matrix_market_matrix(rest, options));
  }
  if (kind == "graph") {
    if (rest.empty()) spec_fail(spec, "expected graph:GRAPH_SPEC (a graph spec or file, see load_graph)");
    graph_read_options read;
    read.max_file_bytes = options.max_file_bytes;
    read.allow_sparse_ids = options.allow_sparse_dimensions;
    return named(with_spec(spec, [&] {
      csr_graph g = load_graph(rest, {}, seed, read);
      require_host_memory(saturating_mul(g.num_edges(), 4),
                          "the values of " + std::to_string(g.num_edges()) + " entries");
      return matrix_of(std::move(g), seed, spec);
    }));
  }
  const std::vector<std::string_view> args =
      colon == std::string::npos ? std::vector<std::string_view>{} : detail::split_colons(rest);
  if (kind == "rmat") {
    if (args.empty() || args.size() > 2) spec_fail(spec, "expected rmat:LOG2_ROWS or rmat:LOG2_ROWS:AVG");
    const std::uint64_t scale = spec_number(args[0], spec, "log2 of the rows", 31);
    const std::uint64_t avg = args.size() == 2 ? spec_number(args[1], spec, "entries per row", 1024) : 16;
    return named(with_spec(spec, [&] {
      return make_power_law_matrix(static_cast<int>(scale), static_cast<int>(avg), seed);
    }));
  }
  if (kind == "banded") {
    if (args.size() != 2) spec_fail(spec, "expected banded:ROWS:HALF_BANDWIDTH");
    const std::uint64_t rows = spec_number(args[0], spec, "row count", max_matrix_dimension);
    const std::uint64_t h = spec_number(args[1], spec, "half bandwidth", max_matrix_dimension);
    return named(with_spec(spec, [&] {
      return make_banded_matrix(static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(h), seed);
    }));
  }
  if (kind == "giant") {
    if (args.size() != 3 && args.size() != 4)
      spec_fail(spec, "expected giant:ROWS:GIANTS:LEN or giant:ROWS:GIANTS:LEN:BASE");
    const std::uint64_t rows = spec_number(args[0], spec, "row count", max_matrix_dimension);
    const std::uint64_t giants = spec_number(args[1], spec, "giant row count", max_matrix_dimension);
    const std::uint64_t len = spec_number(args[2], spec, "giant row length", max_matrix_dimension);
    const std::uint64_t base = args.size() == 4 ? spec_number(args[3], spec, "other rows' length", max_matrix_dimension) : 4;
    return named(with_spec(spec, [&] {
      return make_giant_rows_matrix(static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(giants),
                                    static_cast<std::uint32_t>(len), static_cast<std::uint32_t>(base), seed);
    }));
  }
  if (detail::is_matrix_market_path(spec)) return read_matrix_market_matrix(spec, options);
  spec_fail(spec, "unknown kind " + quoted_input(kind) +
                      " (expected rmat:LOG2_ROWS[:AVG], banded:ROWS:HALF_BANDWIDTH, giant:ROWS:GIANTS:LEN[:BASE], "
                      "graph:GRAPH_SPEC, mtx:PATH or a path ending in .mtx)");
}

}  // namespace cdpkit
