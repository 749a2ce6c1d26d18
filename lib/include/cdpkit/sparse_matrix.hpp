#pragma once
// cdpkit/sparse_matrix.hpp — sparse matrices for the SpMV family (y = A x, each CSR row a
// segment): the matrix in CSR form with single-precision values, generators (RMAT rows as a
// power-law matrix, banded matrices, a few giant rows among short ones, any graph as a pattern
// matrix), the Matrix Market reader (real, integer and pattern; general, symmetric and
// skew-symmetric, expanded), matrix specs,
// and the double-precision CPU reference with its checker.
//
// Indices and offsets are 32-bit: a matrix has at most 2^32 - 1 rows, columns and stored entries.
// Matrices are untrusted input like graphs (cdpkit/graph.hpp): every malformed file or spec is a
// cdpkit::input_error naming the file and line (or the spec) and the reason, and no size a file
// or spec states is allocated before it has been checked against
//   - what the input can hold: an entry count against the file's size (an entry line takes at
//     least 4 bytes), the rows and columns against the entry count (dense_vertex_bound, unless
//     matrix_read_options::allow_sparse_dimensions);
//   - the 32-bit limits of the CSR (dimensions, stored entries after symmetric expansion);
//   - the host memory that is really available (cdpkit/memory.hpp), before allocating;
//   - for files: regular files only, at most matrix_read_options::max_file_bytes.
//
// Values that a matrix's source does not give (a pattern file, a generator, a graph) are
// generated: matrix_pattern_value(row, col, seed), in [0.5, 1.5), the same for (i, j) and (j, i)
// so that a symmetric pattern makes a symmetric matrix.

#include <cdpkit/graph.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace cdpkit {

/// The most rows, columns and stored entries of a csr_matrix (32-bit indices and offsets).
inline constexpr std::uint64_t max_matrix_dimension = 0xffffffffull;
inline constexpr std::uint64_t max_matrix_nnz = 0xffffffffull;

/// Compressed sparse rows: the entries of row r are (col_indices[k], values[k]) for k in
/// [row_offsets[r], row_offsets[r + 1]), columns strictly increasing (no duplicates). Explicit
/// zeros are stored entries like any other.
struct csr_matrix {
  std::uint32_t rows = 0;
  std::uint32_t cols = 0;
  std::vector<std::uint32_t> row_offsets{0};  ///< rows + 1
  std::vector<std::uint32_t> col_indices;     ///< nnz()
  std::vector<float> values;                  ///< nnz()
  std::string name;                           ///< where it came from: a spec, a path

  [[nodiscard]] std::uint64_t nnz() const noexcept { return col_indices.size(); }
  /// Precondition: r < rows.
  [[nodiscard]] std::uint32_t row_length(std::uint32_t r) const { return row_offsets[r + 1] - row_offsets[r]; }
  /// The longest row (0 for a matrix without rows).
  [[nodiscard]] std::uint32_t max_row_length() const;
};

/// Throws cdpkit::input_error ("<name>: reason", naming the row) unless `m` keeps csr_matrix's
/// invariants: rows + 1 offsets starting at 0, non-decreasing, ending at nnz(); as many values as
/// column indices; every column < cols and strictly increasing within its row; every value finite.
/// For matrices built by hand before they are handed to a kernel; what this header makes passes.
void check_csr_matrix(const csr_matrix& m);

/// The generated value of entry (row, col): 0.5 + k * 2^-23 with k < 2^23 hashed from
/// (min(row, col), max(row, col), seed), i.e. in [0.5, 1.5) and exactly representable, never 0,
/// and symmetric in (row, col).
[[nodiscard]] float matrix_pattern_value(std::uint32_t row, std::uint32_t col, std::uint64_t seed) noexcept;

// --- generators (deterministic for a given seed) ---------------------------------------------
// Each checks its arguments, the 32-bit limits and the host memory before allocating, and throws
// cdpkit::input_error (naming the generator and its arguments) otherwise. Values are
// matrix_pattern_value(row, col, seed).

/// RMAT rows as a matrix: the directed Graph500 RMAT graph make_rmat(log2_rows, avg_nnz_per_row,
/// seed) as a 2^log2_rows square pattern, row u holding the columns v of its edges (u, v), self
/// loops and repeated edges dropped (build_csr, not symmetrized) — so fewer than avg_nnz_per_row
/// entries per row on average, and row lengths with the graph's power-law tail. Named
/// "rmat:LOG2_ROWS:AVG". Throws cdpkit::input_error for what make_rmat refuses (log2_rows outside
/// [1, 31], avg_nnz_per_row outside [1, 1024], more than 2^32 - 1 edges) and for too little host
/// memory (the edge list, build_csr and the matrix, checked together first).
csr_matrix make_power_law_matrix(int log2_rows, int avg_nnz_per_row = 16, std::uint64_t seed = 1);

/// The square banded matrix of `rows` rows with entries (r, c) for |r - c| <= half_bandwidth:
/// 2 * half_bandwidth + 1 entries per row away from the corners (rows * rows when
/// half_bandwidth >= rows - 1; no rows for rows == 0). Named "banded:ROWS:HALF_BW". Throws
/// cdpkit::input_error for more than 2^32 - 1 entries or too little host memory (8 bytes per entry
/// + 4 per row).
csr_matrix make_banded_matrix(std::uint32_t rows, std::uint32_t half_bandwidth, std::uint64_t seed = 1);

/// A square matrix of `rows` rows of `base_len` entries each, but for `giants` rows spread evenly
/// (rows g * floor(rows / giants)) of `giant_len` entries each: the shape where a few rows hold
/// much of the work (the loop-to-child policies' child grids against cuSPARSE's load balancing).
/// A giant row's columns are evenly spaced over the row (stride floor(rows / giant_len)), a base
/// row's spaced by floor(rows / base_len) from its own index, wrapped and sorted. Named
/// "giant:ROWS:GIANTS:LEN:BASE". Throws cdpkit::input_error for giants > rows, giant_len or
/// base_len > rows (a row holds one entry per column at most), more than 2^32 - 1 entries, or too
/// little host memory (8 bytes per entry + 4 per row).
csr_matrix make_giant_rows_matrix(std::uint32_t rows, std::uint32_t giants, std::uint32_t giant_len,
                                  std::uint32_t base_len = 4, std::uint64_t seed = 1);

/// A graph's adjacency pattern as a square matrix: row v holds v's neighbours, values generated
/// (a symmetrized graph makes a symmetric matrix). Named "graph". Throws cdpkit::input_error for
/// too little host memory (4 bytes per row + 8 per entry).
csr_matrix matrix_from_graph(const csr_graph& graph, std::uint64_t seed = 1);

// --- the Matrix Market reader -----------------------------------------------------------------
// Errors are cdpkit::input_error "NAME:LINE: reason" (file-level problems: "PATH: reason").

/// Limits and choices of the Matrix Market reader (and of load_matrix on a file).
struct matrix_read_options {
  /// Without it, max(rows, cols) may not exceed dense_vertex_bound(declared entries): a file of a
  /// few bytes declaring 4 billion rows is refused instead of becoming 16 GiB of row offsets.
  bool allow_sparse_dimensions = false;
  /// The most rows and columns a file may declare, whatever allow_sparse_dimensions says (at most
  /// 2^32 - 1).
  std::uint64_t max_dimension = max_matrix_dimension;
  /// The largest file read, in bytes; 0: default_max_graph_file_bytes() (a quarter of the
  /// available host memory, at least 16 MiB, at most 64 GiB).
  std::uint64_t max_file_bytes = 0;
  /// The seed of the values of a pattern file (matrix_pattern_value).
  std::uint64_t pattern_seed = 1;
};

/// Peak host bytes parse_matrix_market_matrix allocates for `rows` rows and `entries` stored
/// entries after symmetric expansion (the text not counted): 32 bytes per entry and 12 per row.
/// Saturates at UINT64_MAX.
[[nodiscard]] std::uint64_t matrix_market_host_bytes(std::uint64_t rows, std::uint64_t entries) noexcept;

/// The largest sum of |values| a row of a matrix read from a file may have: 2^127, half the float
/// range. y = A x runs in single precision with x from make_spmv_vector (|x_j| <= 1), so every
/// product, partial sum and result of the row stays within sum |a_rj| * max |x_j| plus its
/// rounding, which the other half covers: its worst case, about n * 2^-24 times the sum for n
/// entries, stays below it up to 2^24 entries, and typically (sqrt(n) * 2^-24) for any row. A
/// row beyond it could overflow to infinity in any variant, whose check would then fail on a
/// matrix the reader accepted. (Generated values are below 1.5: no generated row comes near it.)
inline constexpr double max_matrix_row_magnitude = 0x1p127;

/// A Matrix Market coordinate matrix: "%%MatrixMarket matrix coordinate FIELD SYMMETRY" with FIELD
/// real (or double), integer or pattern and SYMMETRY general, symmetric or skew-symmetric, then
/// '%' comments and blank lines, "ROWS COLS ENTRIES", and one "ROW COL [VALUE]" line per entry
/// (1-based; blanks or tabs; LF or CRLF). Entries come in any order:
///   - symmetric and skew-symmetric files store one triangle (either one, not both) and are
///     expanded: an entry off the diagonal is mirrored, negated for skew-symmetric;
///   - duplicate entries of real and integer files are summed (in double precision, then rounded
///     to float), those of pattern files are one entry; explicit zeros are kept as entries;
///   - values are read as doubles and rounded to float (integers beyond 2^24 lose precision);
///     pattern entries get matrix_pattern_value(row, col, options.pattern_seed).
/// Throws cdpkit::input_error naming the line for: an empty text; a missing or malformed banner;
/// the array format, the complex field, the hermitian symmetry, a pattern skew-symmetric file or
/// any other unknown word (each with what is supported); a missing or malformed size line or one
/// with more than three numbers; a symmetric or skew-symmetric matrix that is not square; an entry
/// count larger than the text can hold; max(rows, cols) above dense_vertex_bound(entries) (unless
/// options.allow_sparse_dimensions) or above options.max_dimension; an index that is missing, not
/// a number, 0 or past its dimension; a missing value, or one that is not a number (decimal only;
/// an integer field takes integers only), not finite (NaN, infinity) or outside the float range;
/// an extra field on an entry line; a diagonal entry in a skew-symmetric file; an entry in the
/// other triangle than the file's first off-diagonal entry (symmetric, skew-symmetric); more or
/// fewer entries than declared. Without a line: duplicates summing past the float range, a row
/// whose sum of |values| is more than max_matrix_row_magnitude (naming the row, 1-based), more
/// than 2^32 - 1 entries after expansion, too little host memory (matrix_market_host_bytes).
csr_matrix parse_matrix_market_matrix(const std::string& text, const std::string& name,
                                      const matrix_read_options& options = {});

/// parse_matrix_market_matrix over the file at `path` (the matrix is named `path`). Throws
/// cdpkit::input_error (naming the path) when it cannot be opened or read, is not a regular file
/// (/dev/zero, a FIFO, a directory, ...) or is larger than options.max_file_bytes, and for
/// everything the parser throws.
csr_matrix read_matrix_market_matrix(const std::string& path, const matrix_read_options& options = {});

/// A matrix by specification:
///   "rmat:LOG2_ROWS[:AVG]"     make_power_law_matrix (AVG default 16)
///   "banded:ROWS:HALF_BW"      make_banded_matrix
///   "giant:ROWS:GIANTS:LEN[:BASE]"  make_giant_rows_matrix (BASE default 4)
///   "graph:GRAPH_SPEC"         matrix_from_graph(load_graph(GRAPH_SPEC)) — any graph spec or
///                              graph file (cdpkit/graph.hpp), symmetrized
///   "mtx:PATH", or a PATH ending in .mtx   read_matrix_market_matrix (or .mtx.gz: gzip is read
///                                          as its text)
/// Numbers are decimal or 2^K. `seed` seeds the generators and the graph's values; `options`
/// applies to Matrix Market files (and its max_file_bytes and allow_sparse_dimensions to graph
/// files). The matrix is named `spec`. Throws cdpkit::input_error "matrix spec 'SPEC': reason"
/// for an unknown kind, a malformed or out-of-range number and everything the generators and
/// load_graph refuse; a Matrix Market file's errors name the file and line.
csr_matrix load_matrix(const std::string& spec, std::uint64_t seed = 1, const matrix_read_options& options = {});

// --- the CPU reference and its checker ---------------------------------------------------------

/// A deterministic input vector of `cols` entries: x[j] = -1 + k * 2^-23 with k < 2^24 hashed
/// from (j, seed), i.e. in [-1, 1) and exactly representable. Throws cdpkit::input_error for too
/// little host memory.
std::vector<float> make_spmv_vector(std::uint32_t cols, std::uint64_t seed = 1);

/// y = A x with every product and sum in double precision, in row order. Precondition: `a`
/// keeps csr_matrix's invariants (check_csr_matrix). Throws cdpkit::input_error when x.size() !=
/// a.cols.
std::vector<double> spmv_reference(const csr_matrix& a, const std::vector<float>& x);

/// The default tolerance of spmv_mismatches. A float sum of n products, in any order, is within
/// about n * 2^-24 * sum |a_ij x_j| of the exact value (worst case; typically sqrt(n) * 2^-24):
/// 1e-4 admits every order for rows up to ~1600 entries in the worst case and far longer ones in
/// practice, while a missing or repeated product in a row of fewer than ~10^4 entries of similar
/// size still exceeds it.
inline constexpr double spmv_default_rel_tol = 1e-4;

/// The rows r where a computed `got` differs from the reference `expected` (spmv_reference(a, x))
/// by more than rel_tol * max(1, sum over the row of |a_rj * x_j|) — a bound fair to float
/// accumulation in any order, relative to the row's magnitude rather than to its (possibly
/// cancelling) result. A NaN counts as a mismatch. Returns the number of such rows; `first` (may
/// be null) gets the first one, described. Preconditions: `a` keeps csr_matrix's invariants,
/// rel_tol >= 0. Throws cdpkit::input_error when x.size() != a.cols or got or expected has not
/// a.rows entries.
std::uint64_t spmv_mismatches(const csr_matrix& a, const std::vector<float>& x, const std::vector<float>& got,
                              const std::vector<double>& expected, double rel_tol = spmv_default_rel_tol,
                              std::string* first = nullptr);

}  // namespace cdpkit
