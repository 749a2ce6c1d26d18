// Time windows ([start, end) in ns): their union, their share of equal bins, and their packing
// into the strip drawn under a time chart (pack_windows()).

#include "detail.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace cdpkit::report {

using detail::add_window;
using detail::window;

namespace detail {

std::vector<window> merged(std::vector<window>& w) {
  std::sort(w.begin(), w.end());
  std::vector<window> out;
  for (const auto& [a, b] : w) {
    if (!out.empty() && a <= out.back().second) out.back().second = std::max(out.back().second, b);
    else out.push_back({a, b});
  }
  return out;
}

std::uint64_t union_ns(std::vector<window>& w) {
  std::uint64_t total = 0;
  for (const auto& [a, b] : merged(w)) total += b - a;
  return total;
}

void add_window(std::vector<double>& bins, double a, double b, double width, double weight) {
  const std::size_t n = bins.size();
  const auto first = std::min(static_cast<std::size_t>(a / width), n - 1);
  const auto last = std::min(static_cast<std::size_t>(b / width), n - 1);
  for (std::size_t k = first; k <= last; ++k) {
    const double lo = std::max(a, width * static_cast<double>(k));
    const double hi = std::min(b, width * static_cast<double>(k + 1));
    if (hi > lo) bins[k] += (hi - lo) / width * weight;
  }
}

}  // namespace detail

window_strip pack_windows(std::vector<std::pair<std::uint64_t, std::uint64_t>> windows, std::uint64_t t0,
                          std::uint64_t span, int bins) {
  window_strip s;
  const std::uint64_t t1 = t0 + span;
  std::vector<window> in;
  for (const auto& [a, b] : windows)
    if (b >= t0 && a < t1) in.push_back({std::max(a, t0), std::min(b, t1)});
  s.windows = in.size();
  std::sort(in.begin(), in.end());
  const auto ms = [&](std::uint64_t t) { return static_cast<double>(t - t0) / 1e6; };
  std::vector<std::uint64_t> row_end;  // per row: the end of its last window
  bool fits = in.size() <= max_strip_bars;
  for (std::size_t k = 0; fits && k < in.size(); ++k) {
    const auto free_row = std::find_if(row_end.begin(), row_end.end(), [&](std::uint64_t e) { return e <= in[k].first; });
    int row = static_cast<int>(free_row - row_end.begin());
    if (free_row == row_end.end()) {
      fits = row_end.size() < static_cast<std::size_t>(max_strip_rows);
      row_end.push_back(0);
    }
    row_end[static_cast<std::size_t>(row)] = in[k].second;
    s.bars.push_back({ms(in[k].first), ms(in[k].second), row});
  }
  if (fits) {
    s.rows = static_cast<int>(row_end.size());
    return s;
  }
  s.bars.clear();
  s.density.assign(static_cast<std::size_t>(std::max(1, bins)), 0.0);
  const double width = static_cast<double>(std::max<std::uint64_t>(1, span)) / static_cast<double>(s.density.size());
  for (const auto& [a, b] : in)
    add_window(s.density, static_cast<double>(a - t0), static_cast<double>(b - t0), width, 1.0);
  return s;
}

}  // namespace cdpkit::report
