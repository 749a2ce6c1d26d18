// The Matrix Market matrix reader: the matrix with its values (the graph reader,
// lib/src/graph/readers.cpp, reads the same files as edges; both scan the banner, the size line
// and the indices through lib/src/common/matrix_market.hpp). The whole file is read at once and
// scanned in place. Pure C++ (also compiled into the sanitizer-built fuzz targets).
//
// Files are untrusted input, so nothing they declare is allocated before it is checked:
//   1. only a regular file is read (never /dev/zero, a FIFO or a directory), at most
//      max_file_bytes of it;
//   2. the entry count must fit the file (an entry line takes at least 4 bytes), and only what
//      the rest of the file can hold is reserved (twice that for a symmetric file, expanded);
//   3. max(rows, cols) must fit dense_vertex_bound(entries) unless sparse dimensions are allowed,
//      and max_dimension always; the host memory for the entries and the CSR is checked before
//      the entries are reserved;
//   4. what is accepted can be multiplied in single precision: each row's sum of |values| is at
//      most max_matrix_row_magnitude (2^127), so that no variant's y = A x overflows.

#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/sparse_matrix.hpp>

#include "../common/matrix_market.hpp"
#include "../common/text_input.hpp"
#include "matrix_build.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

namespace cdpkit {

namespace {

using detail::fail_at;
using detail::next_token;

/// A value token: a decimal number (an integer for the integer field), finite and within the
/// float range. strtod reads it; what strtod alone would also accept (hexadecimal, "inf", "nan")
/// is refused by the character check.
double parse_value(std::string_view token, bool integer, const std::string& field, const std::string& name,
                   std::uint64_t line) {
  if (token.empty()) fail_at(name, line, "missing value (field is " + field + ")");
  const std::string s(token);
  const std::string value_text = "value " + quoted_input(token);
  if (integer) {
    const std::string_view digits = token.front() == '+' || token.front() == '-' ? token.substr(1) : token;
    if (!detail::all_digits(digits)) fail_at(name, line, value_text + " is not an integer (field is integer)");
  }
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  const bool parsed = end == s.c_str() + s.size();
  const bool decimal = s.find_first_not_of("0123456789+-.eE") == std::string::npos;
  if (parsed && !decimal && !std::isfinite(v))
    fail_at(name, line, value_text + " is not finite (NaN and infinity are refused)");
  if (!parsed || !decimal) fail_at(name, line, value_text + " is not a number");
  if (!(std::fabs(v) <= FLT_MAX))
    fail_at(name, line, value_text + " is outside the float range (|v| <= 3.40282347e38)");
  return v;
}

/// Throws "<name>: row R: ..." (R 1-based, as in the file) for the first row whose sum of |values|
/// times max |x_j| is above max_matrix_row_magnitude: y = A x in float could overflow there
/// (sparse_matrix.hpp says why the bound is half the float range).
void check_row_magnitudes(const csr_matrix& m, const std::string& name) {
  constexpr double max_x = 1.0;  // make_spmv_vector: x in [-1, 1)
  for (std::uint32_t r = 0; r < m.rows; ++r) {
    double sum = 0;  // at most 2^32 values below 2^128: exact enough, and finite, in double
    for (std::uint32_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
      sum += std::fabs(static_cast<double>(m.values[k]));
    if (!(sum * max_x <= max_matrix_row_magnitude)) {
      std::ostringstream s;
      s.precision(9);
      s << name << ": row " << r + 1 << ": the sum of |values| (" << sum
        << ") would overflow single precision (at most " << max_matrix_row_magnitude
        << ", half the float range: y = A x sums it in float, with |x_j| <= 1)";
      throw input_error(s.str());
    }
  }
}

std::string read_file(const std::string& path, const matrix_read_options& options) {
  const bool default_cap = options.max_file_bytes == 0;
  return detail::read_text_file(path, default_cap ? detail::default_max_file_bytes() : options.max_file_bytes,
                                default_cap, {"matrix", "matrix_read_options::max_file_bytes", "matrices"});
}

}  // namespace

csr_matrix parse_matrix_market_matrix(const std::string& text, const std::string& name,
                                      const matrix_read_options& options) {
  CDPKIT_NVTX_SCOPE("spmv::parse_matrix_market");
  detail::line_scanner lines(text);

  // 1. the banner: which fields and symmetries a float matrix can take
  const detail::matrix_market_banner banner = detail::read_matrix_market_banner(lines, name);
  const std::string& field = banner.field;
  const std::string& symmetry = banner.symmetry;
  if (field == "complex")
    fail_at(name, 1, "field 'complex' is not supported (real, integer or pattern: the values are single-precision reals)");
  if (field != "real" && field != "double" && field != "integer" && field != "pattern")
    fail_at(name, 1, "field " + quoted_input(field) + " is not supported (real, integer or pattern)");
  if (symmetry == "hermitian")
    fail_at(name, 1, "symmetry 'hermitian' is not supported (general, symmetric or skew-symmetric; hermitian "
                     "matrices are complex)");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric")
    fail_at(name, 1,
            "symmetry " + quoted_input(symmetry) + " is not supported (general, symmetric or skew-symmetric)");
  const bool pattern = field == "pattern", integer = field == "integer";
  const bool skew = symmetry == "skew-symmetric", mirrored = symmetry != "general";
  if (pattern && skew)
    fail_at(name, 1, "a pattern matrix cannot be skew-symmetric (the format has no values to negate)");

  // 2. the size line, against the text, the 32-bit CSR, the options and the host memory
  const detail::matrix_market_size size = detail::read_matrix_market_size(lines, text.size(), name);
  const std::string shape = std::to_string(size.rows) + " x " + std::to_string(size.cols);
  if (mirrored && size.rows != size.cols)
    fail_at(name, size.line, "a " + symmetry + " matrix must be square; the size line declares " + shape);
  const std::uint64_t largest = std::max(size.rows, size.cols);
  const std::uint64_t cap = std::min(options.max_dimension, max_matrix_dimension);
  if (largest > cap)
    fail_at(name, size.line, "the size line declares " + shape + ", more than the " + std::to_string(cap) +
                                 " rows or columns allowed (matrix_read_options::max_dimension)");
  const std::uint64_t bound = dense_vertex_bound(size.entries);
  if (!options.allow_sparse_dimensions && largest > bound)
    fail_at(name, size.line, "the size line declares " + shape + " for " + std::to_string(size.entries) +
                                 (size.entries == 1 ? " entry" : " entries") + ", more rows or columns than the " +
                                 std::to_string(bound) +
                                 " a matrix file may have (max(2^20, 16 x entries)); dimensions this sparse are "
                                 "accepted only with matrix_read_options::allow_sparse_dimensions");
  const std::uint64_t reserved = detail::matrix_market_reservable(lines, size) * (mirrored ? 2 : 1);
  require_host_memory(matrix_market_host_bytes(size.rows, reserved),
                      name + " (" + shape + ", " + std::to_string(size.entries) + " entries)");

  // 3. the entries, mirrored for a symmetric or skew-symmetric file
  std::vector<detail::matrix_entry> entries;
  entries.reserve(static_cast<std::size_t>(reserved));
  std::uint64_t read = 0;
  std::uint64_t triangle_line = 0;  // the first off-diagonal entry's line, and its triangle
  bool triangle_lower = false;
  std::string_view line;
  while (detail::next_matrix_market_entry(lines, line, read, size, name)) {
    const std::uint64_t at = lines.number();
    std::string_view s = line;
    const auto [i, j] = detail::read_matrix_market_indices(s, size, name, at);
    double value = 1.0;
    if (!pattern) value = parse_value(next_token(s), integer, field, name, at);
    const std::string_view extra = next_token(s);
    if (!extra.empty())
      fail_at(name, at, "extra field " + quoted_input(extra) + " after the " + (pattern ? "column index" : "value") +
                            " (field is " + field + ")");
    const std::string where = "(" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + ")";
    if (skew && i == j)
      fail_at(name, at, "diagonal entry " + where + " in a skew-symmetric file (its diagonal is zero)");
    if (mirrored && i != j) {
      const bool lower = i > j;
      if (triangle_line == 0) {
        triangle_line = at;
        triangle_lower = lower;
      } else if (lower != triangle_lower) {
        fail_at(name, at, "entry " + where + " is " + (lower ? "below" : "above") + " the diagonal, line " +
                              std::to_string(triangle_line) + "'s is " + (lower ? "above" : "below") + " it: a " +
                              symmetry + " file stores one triangle only");
      }
    }
    entries.push_back({i, j, value});
    if (mirrored && i != j) entries.push_back({j, i, skew ? -value : value});
    ++read;
  }
  detail::check_matrix_market_count(lines, read, size, name);

  // 4. the CSR: rows sorted, duplicates summed (pattern: merged)
  csr_matrix m = detail::csr_from_entries(std::move(entries), static_cast<std::uint32_t>(size.rows),
                                          static_cast<std::uint32_t>(size.cols), pattern, options.pattern_seed, name);

  // 5. every row's product within single precision
  check_row_magnitudes(m, name);
  return m;
}

csr_matrix read_matrix_market_matrix(const std::string& path, const matrix_read_options& options) {
  CDPKIT_NVTX_SCOPE("spmv::read_matrix_market");
  return parse_matrix_market_matrix(read_file(path, options), path, options);
}

}  // namespace cdpkit
