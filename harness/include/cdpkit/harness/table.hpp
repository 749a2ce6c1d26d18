#pragma once
// cdpkit/harness/table.hpp — plain-text tables for sample and benchmark output.

#include <cdpkit/schema/text.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace cdpkit::harness {

/// Columns are right-aligned except the first; cells are preformatted strings.
class text_table {
 public:
  /// A table with these column titles (the cell count of every row).
  explicit text_table(std::vector<std::string> header);
  /// Append a row; throws cdpkit::input_error when its cell count differs from the header's.
  void add_row(std::vector<std::string> cells);
  /// The header, a rule and the rows, each column as wide as its widest cell.
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

/// printf-style formatting of one value: the schema layer's, shared with the reports.
using schema::format;

/// A speedup cell: base_ms / ms as "1.23x" (>1 = faster than the base), "-" when either is
/// missing (base_ms or ms <= 0).
std::string ratio_text(double base_ms, double ms);

}  // namespace cdpkit::harness
