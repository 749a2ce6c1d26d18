// Runs against runs: a run's baseline, the fastest verified run of each input, and the comparison
// of several profiles' times.

#include "detail.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace cdpkit::report {

namespace detail {

std::vector<std::optional<std::size_t>> baselines(const profile& p) {
  // per (algorithm, input): its first run, and the first run of each variant
  struct input_runs {
    std::size_t first;
    std::map<std::string, std::size_t> variant;
  };
  std::map<std::pair<std::string, std::string>, input_runs> index;
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    auto& in = index.try_emplace({r.algorithm, r.input}, input_runs{k, {}}).first->second;
    in.variant.try_emplace(r.variant, k);
  }
  std::vector<std::optional<std::size_t>> out(p.runs.size());
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    const input_runs& in = index.at({r.algorithm, r.input});
    if (r.baseline.empty()) {
      out[k] = in.first;
    } else if (const auto it = in.variant.find(r.baseline); it != in.variant.end()) {
      out[k] = it->second;
    }
  }
  return out;
}

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

// The rule lives in detail::baselines alone (the analysis indexes every run at once).
std::optional<std::size_t> baseline_of(const profile& p, std::size_t run) { return detail::baselines(p).at(run); }

std::vector<comparison_row> compare(const std::vector<profile>& profiles) {
  // (algorithm, input, variant) -> its time in each profile (the last run of it there)
  using key = std::tuple<std::string, std::string, std::string>;
  std::map<key, std::vector<std::optional<double>>> times;
  for (std::size_t k = 0; k < profiles.size(); ++k)
    for (const auto& r : profiles[k].runs) {
      auto& ms = times.try_emplace(key{r.algorithm, r.input, r.variant}, profiles.size()).first->second;
      ms[k] = r.ms;
    }
  std::vector<comparison_row> rows;
  for (const auto& [k3, ms_of] : times) {
    const auto& [alg, input, variant] = k3;
    comparison_row row{alg, input, variant, {}, {}};
    for (std::size_t k = 0; k < profiles.size(); ++k) {
      const std::optional<double> ms = ms_of[k];
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
