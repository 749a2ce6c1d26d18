// Sparse matrices on the host: the CSR's checks, generated values, the CSR built from entries
// (matrix_build.hpp), the double-precision reference y = A x and its checker. Pure C++ (also
// compiled into the sanitizer-built fuzz targets).

#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/sparse_matrix.hpp>

#include "../common/random.hpp"
#include "matrix_build.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <sstream>
#include <string>

namespace cdpkit {

std::uint32_t csr_matrix::max_row_length() const {
  std::uint32_t longest = 0;
  for (std::uint32_t r = 0; r < rows; ++r) longest = std::max(longest, row_length(r));
  return longest;
}

void check_csr_matrix(const csr_matrix& m) {
  const auto fail = [&](const std::string& why) {
    throw input_error((m.name.empty() ? std::string("csr_matrix") : m.name) + ": " + why);
  };
  if (m.row_offsets.size() != static_cast<std::size_t>(m.rows) + 1)
    fail(std::to_string(m.row_offsets.size()) + " row offsets for " + std::to_string(m.rows) + " rows (rows + 1 expected)");
  if (m.values.size() != m.col_indices.size())
    fail(std::to_string(m.values.size()) + " values for " + std::to_string(m.col_indices.size()) + " column indices");
  if (m.row_offsets.front() != 0) fail("the first row offset is not 0");
  if (m.row_offsets.back() != m.nnz())
    fail("the last row offset " + std::to_string(m.row_offsets.back()) + " is not the " + std::to_string(m.nnz()) +
         " stored entries");
  // every offset first: non-decreasing up to nnz(), so that the entries below are in bounds
  for (std::uint32_t r = 0; r < m.rows; ++r)
    if (m.row_offsets[r] > m.row_offsets[r + 1])
      fail("row " + std::to_string(r) + ": its offsets decrease (" + std::to_string(m.row_offsets[r]) + " then " +
           std::to_string(m.row_offsets[r + 1]) + ")");
  for (std::uint32_t r = 0; r < m.rows; ++r) {
    const std::string row = "row " + std::to_string(r);
    for (std::uint32_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      if (m.col_indices[k] >= m.cols)
        fail(row + ": column " + std::to_string(m.col_indices[k]) + " >= the column count " + std::to_string(m.cols));
      if (k > m.row_offsets[r] && m.col_indices[k - 1] >= m.col_indices[k])
        fail(row + ": columns not strictly increasing (" + std::to_string(m.col_indices[k - 1]) + " then " +
             std::to_string(m.col_indices[k]) + ")");
      if (!std::isfinite(m.values[k])) fail(row + ": a value that is not finite at column " + std::to_string(m.col_indices[k]));
    }
  }
}

float matrix_pattern_value(std::uint32_t row, std::uint32_t col, std::uint64_t seed) noexcept {
  const std::uint64_t lo = std::min(row, col), hi = std::max(row, col);
  const std::uint64_t k = detail::mix64(detail::mix64(seed ^ 0x2545f4914f6cdd1dull) ^ (lo << 32 | hi)) >> 41;
  return 0.5f + static_cast<float>(k) * 0x1.0p-23f;  // k < 2^23: exact
}

std::uint64_t matrix_market_host_bytes(std::uint64_t rows, std::uint64_t entries) noexcept {
  // Alive together at the peak (csr_from_entries, step 2): the entries (16 bytes each), the row
  // starts (8 per row + 1) and the scattered (column, value) pairs (16 each); the final offsets
  // (4 per row + 1), columns and values (8 per entry) come after the entries are freed.
  return saturating_add(saturating_mul(entries, 32), saturating_mul(saturating_add(rows, 1), 12));
}

namespace detail {

csr_matrix csr_from_entries(std::vector<matrix_entry>&& entries, std::uint32_t rows, std::uint32_t cols,
                            bool pattern, std::uint64_t seed, const std::string& name) {
  // 1. count the entries of each row
  std::vector<std::uint64_t> start(static_cast<std::size_t>(rows) + 1, 0);
  for (const auto& e : entries) ++start[e.row + 1];
  for (std::uint32_t r = 0; r < rows; ++r) start[r + 1] += start[r];

  // 2. scatter them into their rows (in input order)
  struct col_value {
    std::uint32_t col;
    double value;
  };
  std::vector<col_value> scattered(entries.size());
  {
    std::vector<std::uint64_t> cursor(start.begin(), start.end() - 1);
    for (const auto& e : entries) scattered[cursor[e.row]++] = {e.col, e.value};
  }
  std::vector<matrix_entry>().swap(entries);  // free before the CSR is allocated

  // 3. sort each row by column (ties by value, so that the sum of duplicates does not depend on
  //    the sort's order) and merge duplicates in place; unique[r] is what is left of row r
  std::vector<std::uint32_t> unique(rows, 0);
  for (std::uint32_t r = 0; r < rows; ++r) {
    const auto first = scattered.begin() + static_cast<std::ptrdiff_t>(start[r]);
    const auto last = scattered.begin() + static_cast<std::ptrdiff_t>(start[r + 1]);
    std::sort(first, last, [](const col_value& a, const col_value& b) {
      return a.col != b.col ? a.col < b.col : a.value < b.value;
    });
    auto out = first;
    for (auto it = first; it != last; ++it) {
      if (out != first && (out - 1)->col == it->col) (out - 1)->value += it->value;
      else *out++ = *it;
    }
    unique[r] = static_cast<std::uint32_t>(out - first);
  }

  // 4. compact into 32-bit offsets and float values
  csr_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.name = name;
  m.row_offsets.assign(static_cast<std::size_t>(rows) + 1, 0);
  std::uint64_t total = 0;
  for (std::uint32_t r = 0; r < rows; ++r) {
    total += unique[r];
    if (total > max_matrix_nnz)
      throw input_error(name + ": more than 4294967295 stored entries after symmetric expansion (32-bit offsets)");
    m.row_offsets[r + 1] = static_cast<std::uint32_t>(total);
  }
  m.col_indices.resize(total);
  m.values.resize(total);
  for (std::uint32_t r = 0; r < rows; ++r) {
    for (std::uint32_t k = 0; k < unique[r]; ++k) {
      const col_value& e = scattered[start[r] + k];
      const std::uint32_t at = m.row_offsets[r] + k;
      m.col_indices[at] = e.col;
      if (pattern) {
        m.values[at] = matrix_pattern_value(r, e.col, seed);
      } else {
        if (!(std::fabs(e.value) <= FLT_MAX)) {
          std::ostringstream v;
          v << e.value;
          throw input_error(name + ": the duplicate entries at (" + std::to_string(r + 1) + ", " +
                            std::to_string(e.col + 1) + ") sum to " + v.str() + ", outside the float range");
        }
        m.values[at] = static_cast<float>(e.value);
      }
    }
  }
  return m;
}

}  // namespace detail

// --- the CPU reference and its checker -------------------------------------------------------

namespace {

void check_vector_size(const char* what, std::size_t size, std::uint32_t expected, const char* of) {
  if (size != expected)
    throw input_error(std::string(what) + " has " + std::to_string(size) + " entries, the matrix " +
                      std::to_string(expected) + " " + of);
}

}  // namespace

std::vector<double> spmv_reference(const csr_matrix& a, const std::vector<float>& x) {
  CDPKIT_NVTX_SCOPE("spmv::reference");
  check_vector_size("spmv_reference: x", x.size(), a.cols, "columns");
  std::vector<double> y(a.rows, 0.0);
  for (std::uint32_t r = 0; r < a.rows; ++r) {
    double sum = 0;
    for (std::uint32_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k)
      sum += static_cast<double>(a.values[k]) * static_cast<double>(x[a.col_indices[k]]);
    y[r] = sum;
  }
  return y;
}

std::uint64_t spmv_mismatches(const csr_matrix& a, const std::vector<float>& x, const std::vector<float>& got,
                              const std::vector<double>& expected, double rel_tol, std::string* first) {
  CDPKIT_NVTX_SCOPE("spmv::mismatches");
  check_vector_size("spmv_mismatches: x", x.size(), a.cols, "columns");
  check_vector_size("spmv_mismatches: got", got.size(), a.rows, "rows");
  check_vector_size("spmv_mismatches: expected", expected.size(), a.rows, "rows");
  std::uint64_t mismatches = 0;
  for (std::uint32_t r = 0; r < a.rows; ++r) {
    double magnitude = 0;
    for (std::uint32_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k)
      magnitude += std::fabs(static_cast<double>(a.values[k]) * static_cast<double>(x[a.col_indices[k]]));
    const double tolerance = rel_tol * std::max(1.0, magnitude);
    const double diff = std::fabs(static_cast<double>(got[r]) - expected[r]);
    if (diff <= tolerance) continue;  // false for a NaN
    if (mismatches++ == 0 && first != nullptr) {
      std::ostringstream s;
      s.precision(9);
      s << "row " << r << " (" << a.row_length(r) << " entries): got " << got[r] << ", expected " << expected[r]
        << ", off by " << diff << " > tolerance " << tolerance << " (" << rel_tol << " x max(1, sum |a x| = "
        << magnitude << "))";
      *first = s.str();
    }
  }
  return mismatches;
}

}  // namespace cdpkit
