#pragma once
// Internal (lib/src/spmv): the CSR from a list of entries, shared by the Matrix Market reader and
// its tests through the reader. Pure C++.

#include <cdpkit/sparse_matrix.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace cdpkit::detail {

/// One stored entry before the CSR is built (a Matrix Market line, or its mirror).
struct matrix_entry {
  std::uint32_t row;
  std::uint32_t col;
  double value;
};

/// The CSR of `entries` (consumed; every row < rows and col < cols): 1. count the entries of each
/// row, 2. scatter them into their rows, 3. sort each row by column and merge duplicates (values
/// summed; for a `pattern` matrix one entry valued matrix_pattern_value(row, col, seed)), 4.
/// compact into 32-bit offsets and float values. The caller has checked the host memory
/// (matrix_market_host_bytes). Throws cdpkit::input_error "<name>: reason" for more than
/// 2^32 - 1 entries after merging, or a sum of duplicates outside the float range.
csr_matrix csr_from_entries(std::vector<matrix_entry>&& entries, std::uint32_t rows, std::uint32_t cols,
                            bool pattern, std::uint64_t seed, const std::string& name);

}  // namespace cdpkit::detail
