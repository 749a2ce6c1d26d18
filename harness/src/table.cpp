#include <cdpkit/error.hpp>
#include <cdpkit/harness/table.hpp>

#include <algorithm>
#include <ostream>

namespace cdpkit::harness {

text_table::text_table(std::vector<std::string> header) : header_(std::move(header)) {}

void text_table::add_row(std::vector<std::string> cells) {
  if (cells.size() != header_.size())
    throw input_error("text_table: row has " + std::to_string(cells.size()) + " cells, header has " +
                      std::to_string(header_.size()));
  rows_.push_back(std::move(cells));
}

void text_table::print(std::ostream& out) const {
  std::vector<std::size_t> width(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) {
    width[c] = header_[c].size();
    for (const auto& r : rows_) width[c] = std::max(width[c], r[c].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      out << (c == 0 ? cells[c] + pad : pad + cells[c]) << (c + 1 < cells.size() ? "  " : "\n");
    }
  };
  line(header_);
  std::size_t total = 0;
  for (auto w : width) total += w + 2;
  out << std::string(total - 2, '-') << '\n';
  for (const auto& r : rows_) line(r);
}

std::string ratio_text(double base_ms, double ms) {
  if (!(base_ms > 0) || !(ms > 0)) return "-";
  return format("%.2fx", base_ms / ms);
}

}  // namespace cdpkit::harness
