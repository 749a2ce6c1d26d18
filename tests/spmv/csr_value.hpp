#pragma once
// The value a CSR matrix stores at a position, for the matrix cases' checks.

#include <cdpkit/sparse_matrix.hpp>

#include <cmath>
#include <cstdint>

namespace cdpkit_test {

/// The value at (r, c), or NaN when (r, c) is not stored.
inline float at(const cdpkit::csr_matrix& m, std::uint32_t r, std::uint32_t c) {
  for (auto k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
    if (m.col_indices[k] == c) return m.values[k];
  return std::nanf("");
}

}  // namespace cdpkit_test
