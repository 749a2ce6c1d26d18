#pragma once
// cdpkit/profiling/table.hpp — plain-text tables for sample and benchmark output.

#include <iosfwd>
#include <string>
#include <vector>

namespace cdpkit::profiling {

/// Columns are right-aligned except the first; cells are preformatted strings.
class text_table {
 public:
  explicit text_table(std::vector<std::string> header);
  /// Append a row; throws cdpkit::input_error when its cell count differs from the header's.
  void add_row(std::vector<std::string> cells);
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

/// printf-style formatting of one value into a std::string.
std::string format(const char* fmt, double value);

}  // namespace cdpkit::profiling
