// Runs against runs: a run's baseline, the fastest verified run of each input, and the comparison
// of several profiles' times.

#include "detail.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace cdpkit::report {

std::optional<std::size_t> baseline_of(const profile& p, std::size_t run) {
  const run_profile& r = p.runs[run];
  std::optional<std::size_t> first;
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& o = p.runs[k];
    if (o.algorithm != r.algorithm || o.input != r.input) continue;
    if (!first) first = k;
    if (!r.baseline.empty() && o.variant == r.baseline) return k;
  }
  return r.baseline.empty() ? first : std::nullopt;
}

namespace detail {

std::map<std::pair<std::string, std::string>, std::size_t> fastest_verified(const profile& p) {
  std::map<std::pair<std::string, std::string>, std::size_t> best;
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const auto key = std::make_pair(p.runs[k].algorithm, p.runs[k].input);
    const auto it = best.find(key);
    if (p.runs[k].verified && (it == best.end() || p.runs[k].ms < p.runs[it->second].ms)) best[key] = k;
  }
  return best;
}

}  // namespace detail

std::vector<comparison_row> compare(const std::vector<profile>& profiles) {
  std::set<std::tuple<std::string, std::string, std::string>> keys;
  for (const auto& p : profiles)
    for (const auto& r : p.runs) keys.insert({r.algorithm, r.input, r.variant});
  std::vector<comparison_row> rows;
  for (const auto& [alg, input, variant] : keys) {
    comparison_row row{alg, input, variant, {}, {}};
    for (std::size_t k = 0; k < profiles.size(); ++k) {
      std::optional<double> ms;
      for (const auto& r : profiles[k].runs)
        if (r.algorithm == alg && r.input == input && r.variant == variant) ms = r.ms;
      row.ms.push_back(ms);
      const auto& first = row.ms.front();
      std::optional<double> delta;  // none over a first time of 0, or a subnormal one (inf)
      if (k > 0 && ms && first && *first > 0) {
        const double change = (*ms - *first) / *first;
        if (std::isfinite(change)) delta = change;
      }
      row.delta.push_back(delta);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace cdpkit::report
