// The hardware's view, warp efficiency: the variants of each algorithm and input ranked by the
// probes' and by the hardware's warp efficiency, and whether the two orders agree.

#include "detail.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit::report {

using detail::fixed;
using detail::number;

namespace {

/// The competition rank of `x` among `v`, most efficient first: 1 + how many are larger (ties
/// share a rank).
int rank_in(const std::vector<double>& v, double x) {
  return 1 + static_cast<int>(std::count_if(v.begin(), v.end(), [&](double y) { return y > x; }));
}

/// rank_in() of every value of `v`.
std::vector<int> ranks_of(const std::vector<double>& v) {
  std::vector<int> r;
  for (double x : v) r.push_back(rank_in(v, x));
  return r;
}

/// Spearman's rank correlation of two equally long series (average ranks for ties); unset with
/// fewer than two values or when either series is all tied.
std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const auto average_ranks = [](const std::vector<double>& v) {
    std::vector<double> r;
    for (double a : v) {
      const auto above = std::count_if(v.begin(), v.end(), [&](double b) { return b > a; });
      const auto equal = std::count(v.begin(), v.end(), a);
      r.push_back(1.0 + static_cast<double>(above) + static_cast<double>(equal - 1) / 2.0);
    }
    return r;
  };
  const std::size_t n = x.size();
  if (n < 2) return std::nullopt;
  const auto rx = average_ranks(x), ry = average_ranks(y);
  const double mean = (static_cast<double>(n) + 1.0) / 2.0;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t k = 0; k < n; ++k) {
    sxy += (rx[k] - mean) * (ry[k] - mean);
    sxx += (rx[k] - mean) * (rx[k] - mean);
    syy += (ry[k] - mean) * (ry[k] - mean);
  }
  if (sxx <= 0 || syy <= 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

/// The ranks of the rows' values by `value` (unset where a row has none).
void rank_rows(std::vector<efficiency_row>& rows, std::optional<double> efficiency_row::*value,
               std::optional<int> efficiency_row::*rank) {
  std::vector<double> v;
  for (const auto& r : rows)
    if (r.*value) v.push_back(*(r.*value));
  for (auto& r : rows)
    if (r.*value) r.*rank = rank_in(v, *(r.*value));
}

/// Whether the variants with both efficiencies rank alike, and the sentence saying so.
void compare_ranks(const profile& p, efficiency_ranking& g) {
  std::vector<double> probes, hardware;
  std::vector<std::size_t> runs;
  std::size_t with_any = 0;
  for (const auto& r : g.rows) {
    with_any += r.probes || r.hardware;
    if (!r.probes || !r.hardware) continue;
    probes.push_back(*r.probes);
    hardware.push_back(*r.hardware);
    runs.push_back(r.run);
  }
  g.compared = runs.size();
  if (g.compared < 2) {
    g.agree = false;
    g.verdict = "Fewer than two variants have both warp efficiencies: nothing to rank.";
    return;
  }
  const auto rp = ranks_of(probes), rh = ranks_of(hardware);
  g.agree = rp == rh;
  g.spearman = spearman(probes, hardware);
  const std::string rho = g.spearman ? "Spearman " + fixed(*g.spearman, 2) : "";
  const std::string among = g.compared < with_any ? " (ranks among the " + number(g.compared) + " with both)" : "";
  if (g.agree) {
    g.verdict = "Same order: the probes and the hardware rank the " + number(g.compared) +
                " variants with both warp efficiencies alike" + (rho.empty() ? "" : " (" + rho + ")") + ".";
    return;
  }
  std::string at;
  for (std::size_t k = 0; k < runs.size(); ++k)
    if (rp[k] != rh[k])
      at += (at.empty() ? "" : ", ") + p.runs[runs[k]].variant + " (probes " + std::to_string(rp[k]) + ", hardware " +
            std::to_string(rh[k]) + ")";
  // pair by pair: opposite orders where both measures separate the two by the tolerance or more
  std::string pairs;
  for (std::size_t a = 0; a < runs.size(); ++a)
    for (std::size_t b = a + 1; b < runs.size(); ++b) {
      const double dp = probes[a] - probes[b], dh = hardware[a] - hardware[b];
      if (std::abs(dp) < rank_tie_tolerance || std::abs(dh) < rank_tie_tolerance || (dp > 0) == (dh > 0)) continue;
      ++g.discordant;
      pairs += (pairs.empty() ? "" : ", ") + p.runs[runs[a]].variant + " / " + p.runs[runs[b]].variant;
    }
  const std::string tolerance = fixed(rank_tie_tolerance, 2);
  if (g.discordant == 0) {
    g.verdict = "Same order but for near-ties: the ranks differ at " + at + among + ", but no two variants that both "
                "efficiencies separate by " + tolerance + " or more are ordered differently" +
                (rho.empty() ? "" : "; " + rho) + ".";
    return;
  }
  g.verdict = "The rankings differ at " + at + among + "; ordered differently beyond " + tolerance + ": " + pairs +
              (rho.empty() ? "" : "; " + rho) + ".";
}

}  // namespace

std::vector<efficiency_ranking> rank_efficiencies(const profile& p) {
  std::vector<efficiency_ranking> groups;
  std::vector<bool> measured;  // per group: some run has hardware metrics
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    const auto it = std::find_if(groups.begin(), groups.end(), [&](const efficiency_ranking& g) {
      return g.algorithm == r.algorithm && g.input == r.input;
    });
    const auto g = static_cast<std::size_t>(it - groups.begin());
    if (it == groups.end()) {
      groups.push_back({r.algorithm, r.input, {}, 0, true, 0, std::nullopt, ""});
      measured.push_back(false);
    }
    efficiency_row row;
    row.run = k;
    if (r.trace && r.trace->summary.warp_efficiency >= 0) row.probes = r.trace->summary.warp_efficiency;
    if (r.hardware) {
      row.hardware = r.hardware->warp_efficiency();
      measured[g] = true;
    }
    groups[g].rows.push_back(row);
  }
  std::vector<efficiency_ranking> out;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!measured[g]) continue;
    rank_rows(groups[g].rows, &efficiency_row::probes, &efficiency_row::probe_rank);
    rank_rows(groups[g].rows, &efficiency_row::hardware, &efficiency_row::hardware_rank);
    compare_ranks(p, groups[g]);
    out.push_back(std::move(groups[g]));
  }
  return out;
}

}  // namespace cdpkit::report
