#pragma once
// Internal to cdpkit::report's analysis (src/analysis/, not installed): the helpers that more than
// one of its files uses. The public side is cdpkit/report/analysis.hpp.

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/schema/text.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit::report::detail {

using schema::fixed;
using schema::percent;
inline std::string number(std::uint64_t v) { return schema::grouped(v); }

// --- time windows (windows.cpp) ---------------------------------------------------------------

using window = std::pair<std::uint64_t, std::uint64_t>;  // [start, end) in ns

/// The union of [start, end) windows as disjoint windows by start (`w` is sorted in place).
std::vector<window> merged(std::vector<window>& w);

/// The length of the union of [start, end) windows (sorted in place).
std::uint64_t union_ns(std::vector<window>& w);

/// Adds `weight` times the share of each bin (of `width`, from 0) that [a, b) covers.
void add_window(std::vector<double>& bins, double a, double b, double width, double weight);

// --- runs against runs (baselines.cpp) --------------------------------------------------------

/// baseline_of() of every run, in one pass: O(n log n) in the runs.
std::vector<std::optional<std::size_t>> baselines(const profile& p);

/// Per (algorithm, input): the index of its fastest verified run (inputs without one are absent).
std::map<std::pair<std::string, std::string>, std::size_t> fastest_verified(const profile& p);

// --- findings (findings.cpp) ------------------------------------------------------------------

/// The findings of one profile, from its analysed runs (steps 1-6, most important first).
std::vector<finding> make_findings(const profile& p, const std::vector<run_analysis>& runs);

}  // namespace cdpkit::report::detail
