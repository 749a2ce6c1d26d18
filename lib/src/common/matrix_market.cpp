// The Matrix Market readers' shared parts (matrix_market.hpp).

#include "matrix_market.hpp"

#include <algorithm>
#include <cctype>

namespace cdpkit::detail {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

matrix_market_banner read_matrix_market_banner(line_scanner& lines, const std::string& name) {
  std::string_view line;
  if (!lines.next(line)) fail_at(name, 1, "empty file (expected a %%MatrixMarket header)");
  if (lower(next_token(line)) != "%%matrixmarket") fail_at(name, 1, "missing '%%MatrixMarket' header");
  const std::string object = lower(next_token(line)), format = lower(next_token(line));
  if (object != "matrix") fail_at(name, 1, "object " + quoted_input(object) + " is not supported (matrix only)");
  if (format != "coordinate")
    fail_at(name, 1, "format " + quoted_input(format) + " is not supported (coordinate only)");
  matrix_market_banner banner;
  banner.field = lower(next_token(line));
  banner.symmetry = lower(next_token(line));
  return banner;
}

matrix_market_size read_matrix_market_size(line_scanner& lines, std::size_t text_size, const std::string& name) {
  std::string_view line;
  matrix_market_size size;
  while (lines.next(line)) {
    if (blank_line(line) || line.front() == '%') continue;
    size.line = lines.number();
    size.rows = parse_unsigned(next_token(line), 0xffffffffull, "row count", name, size.line);
    size.cols = parse_unsigned(next_token(line), 0xffffffffull, "column count", name, size.line);
    size.entries = parse_unsigned(next_token(line), 0xffffffffffffull, "entry count", name, size.line);
    if (!next_token(line).empty()) fail_at(name, size.line, "size line has more than 3 numbers");
    break;
  }
  if (size.line == 0) fail_at(name, lines.number() + 1, "missing size line 'rows cols entries'");
  // The header is untrusted: an entry line takes at least 4 bytes ("1 1\n", the last one 3), so
  // a text of S bytes holds at most (S + 1) / 4 entries. A count beyond that is an error here;
  // one that only the rest of the text cannot hold is a truncated file, reported at its end.
  const std::uint64_t capacity = (static_cast<std::uint64_t>(text_size) + 1) / 4;
  if (size.entries > capacity)
    fail_at(name, size.line, "the size line declares " + std::to_string(size.entries) + " entries; a file of " +
                                 std::to_string(text_size) + " bytes holds at most " + std::to_string(capacity) +
                                 " (an entry line takes at least 4 bytes, \"1 1\\n\")");
  return size;
}

bool next_matrix_market_entry(line_scanner& lines, std::string_view& line, std::uint64_t entries_read,
                              const matrix_market_size& size, const std::string& name) {
  while (lines.next(line)) {
    if (blank_line(line) || line.front() == '%') continue;
    if (entries_read == size.entries)
      fail_at(name, lines.number(),
              "more entries than the " + std::to_string(size.entries) + " the size line declares");
    return true;
  }
  return false;
}

std::uint64_t matrix_market_reservable(const line_scanner& lines, const matrix_market_size& size) noexcept {
  return std::min(size.entries, (static_cast<std::uint64_t>(lines.remaining()) + 1) / 4);
}

std::pair<std::uint32_t, std::uint32_t> read_matrix_market_indices(std::string_view& s, const matrix_market_size& size,
                                                                    const std::string& name, std::uint64_t line) {
  const std::uint64_t i = parse_unsigned(next_token(s), 0xffffffffull, "row index", name, line);
  const std::uint64_t j = parse_unsigned(next_token(s), 0xffffffffull, "column index", name, line);
  if (i == 0 || j == 0) fail_at(name, line, "index 0 in a 1-based Matrix Market file");
  if (i > size.rows) fail_at(name, line, "row index " + std::to_string(i) + " > row count " + std::to_string(size.rows));
  if (j > size.cols)
    fail_at(name, line, "column index " + std::to_string(j) + " > column count " + std::to_string(size.cols));
  return {static_cast<std::uint32_t>(i - 1), static_cast<std::uint32_t>(j - 1)};
}

void check_matrix_market_count(const line_scanner& lines, std::uint64_t entries_read, const matrix_market_size& size,
                               const std::string& name) {
  if (entries_read != size.entries)
    fail_at(name, lines.number(), "truncated: the size line declares " + std::to_string(size.entries) +
                                      " entries, the file has " + std::to_string(entries_read));
}

}  // namespace cdpkit::detail
