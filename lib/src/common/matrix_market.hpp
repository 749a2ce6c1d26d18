#pragma once
// Internal (lib/src): what the two Matrix Market readers share — the graph reader
// (lib/src/graph/readers.cpp: the pattern of a matrix as edges) and the matrix reader
// (lib/src/spmv/readers.cpp: the matrix with its values). The banner, the size line with its
// entry count checked against the text, the entry lines and their 1-based indices; each failure a
// cdpkit::input_error "NAME:LINE: reason". Each reader decides which fields and symmetries it
// supports, and what an entry's value is. Pure C++ (the fuzz targets compile it with the
// sanitizers).

#include "text_input.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace cdpkit::detail {

/// The banner's field and symmetry, in lower case, not yet checked ("real", "skew-symmetric", ...).
struct matrix_market_banner {
  std::string field;
  std::string symmetry;
};

/// Line 1: "%%MatrixMarket matrix coordinate FIELD SYMMETRY" (words case-insensitive). Throws at
/// `name`:1 for an empty text, a missing "%%MatrixMarket", an object other than "matrix" or a
/// format other than "coordinate".
matrix_market_banner read_matrix_market_banner(line_scanner& lines, const std::string& name);

/// The size line of a coordinate file, and where it was.
struct matrix_market_size {
  std::uint64_t rows = 0, cols = 0, entries = 0;
  std::uint64_t line = 0;
};

/// The size line "ROWS COLS ENTRIES" after the comments ('%') and blank lines that follow the
/// banner. Throws at its line for a missing or malformed number, ROWS or COLS above 2^32 - 1,
/// more than three numbers, or an entry count larger than `text_size` bytes can hold (an entry
/// line takes at least 4 bytes, "1 1\n", the last one 3); at the line after the end when the
/// text has no size line.
matrix_market_size read_matrix_market_size(line_scanner& lines, std::size_t text_size, const std::string& name);

/// The next entry line (comments and blank lines skipped), after the size line; false at the end.
/// Throws at that line when it is one more than `size.entries` declared.
bool next_matrix_market_entry(line_scanner& lines, std::string_view& line, std::uint64_t entries_read,
                              const matrix_market_size& size, const std::string& name);

/// Entries the rest of the text can hold (what a reader may reserve), at most the declared count.
[[nodiscard]] std::uint64_t matrix_market_reservable(const line_scanner& lines, const matrix_market_size& size) noexcept;

/// An entry's row and column, consumed from `s` (1-based in the text), returned 0-based. Throws at
/// `name`:`line` for a missing or malformed index, index 0, or an index past the size line's.
std::pair<std::uint32_t, std::uint32_t> read_matrix_market_indices(std::string_view& s, const matrix_market_size& size,
                                                                    const std::string& name, std::uint64_t line);

/// After the last entry line: throws at the last line when fewer entries than declared were read.
void check_matrix_market_count(const line_scanner& lines, std::uint64_t entries_read, const matrix_market_size& size,
                               const std::string& name);

}  // namespace cdpkit::detail
