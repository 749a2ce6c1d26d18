// The hardware's view, warp efficiency: the variants of each algorithm and input ranked by the
// probes' and by the hardware's warp efficiency, and whether the two orders agree.

#include "detail.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit::report {

using detail::fixed;
using detail::number;

namespace {

/// The values of `v`, largest first.
std::vector<double> descending(const std::vector<double>& v) {
  std::vector<double> d = v;
  std::sort(d.begin(), d.end(), std::greater<>());
  return d;
}

/// The competition rank of `x` among the values `sorted` (largest first): 1 + how many are larger
/// (ties share a rank). O(log n).
int rank_in(const std::vector<double>& sorted, double x) {
  const auto larger = std::lower_bound(sorted.begin(), sorted.end(), x, std::greater<>()) - sorted.begin();
  return 1 + static_cast<int>(larger);
}

/// rank_in() of every value of `v`. O(n log n).
std::vector<int> ranks_of(const std::vector<double>& v) {
  const auto sorted = descending(v);
  std::vector<int> r;
  r.reserve(v.size());
  for (double x : v) r.push_back(rank_in(sorted, x));
  return r;
}

/// Spearman's rank correlation of two equally long series (average ranks for ties); unset with
/// fewer than two values or when either series is all tied. O(n log n).
std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const auto average_ranks = [](const std::vector<double>& v) {
    const auto sorted = descending(v);
    std::vector<double> r;
    r.reserve(v.size());
    for (double a : v) {
      const auto [first, last] = std::equal_range(sorted.begin(), sorted.end(), a, std::greater<>());
      const auto above = first - sorted.begin(), equal = last - first;
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

/// Whether two variants are ordered differently beyond the tolerance: both measures separate
/// them by rank_tie_tolerance or more, in opposite directions.
bool discordant_pair(double probes_a, double hardware_a, double probes_b, double hardware_b) {
  const double dp = probes_a - probes_b, dh = hardware_a - hardware_b;
  return !(std::abs(dp) < rank_tie_tolerance || std::abs(dh) < rank_tie_tolerance || (dp > 0) == (dh > 0));
}

/// How many pairs discordant_pair() holds for, in O(n log n): each pair counted once from its
/// member with the higher probe efficiency, i, as the members j with probes[i] - probes[j] >=
/// tolerance (a prefix of the runs in probe order, since a rounded difference is monotone in each
/// operand) and hardware[j] - hardware[i] >= tolerance (a suffix of the hardware values in order),
/// counted with a Fenwick tree over the hardware order.
std::size_t count_discordant(const std::vector<double>& probes, const std::vector<double>& hardware) {
  const std::size_t n = probes.size();
  std::vector<std::size_t> by_probes(n), by_hardware(n), hardware_pos(n);
  for (std::size_t k = 0; k < n; ++k) by_probes[k] = by_hardware[k] = k;
  std::sort(by_probes.begin(), by_probes.end(), [&](std::size_t a, std::size_t b) { return probes[a] < probes[b]; });
  std::sort(by_hardware.begin(), by_hardware.end(),
            [&](std::size_t a, std::size_t b) { return hardware[a] < hardware[b]; });
  std::vector<double> hardware_sorted(n);
  for (std::size_t k = 0; k < n; ++k) {
    hardware_pos[by_hardware[k]] = k;
    hardware_sorted[k] = hardware[by_hardware[k]];
  }
  std::vector<std::size_t> tree(n + 1, 0);  // Fenwick: inserted runs per hardware position
  const auto insert = [&](std::size_t pos) {
    for (std::size_t k = pos + 1; k <= n; k += k & (~k + 1)) ++tree[k];
  };
  const auto below = [&](std::size_t pos) {  // inserted runs at hardware positions < pos
    std::size_t sum = 0;
    for (std::size_t k = pos; k > 0; k -= k & (~k + 1)) sum += tree[k];
    return sum;
  };
  std::size_t count = 0, inserted = 0, next = 0;
  for (const std::size_t i : by_probes) {
    while (next < n && probes[i] - probes[by_probes[next]] >= rank_tie_tolerance) {
      insert(hardware_pos[by_probes[next]]);
      ++inserted;
      ++next;
    }
    const double hi = hardware[i];
    const auto first = static_cast<std::size_t>(
        std::partition_point(hardware_sorted.begin(), hardware_sorted.end(),
                             [&](double h) { return !(h - hi >= rank_tie_tolerance); }) -
        hardware_sorted.begin());
    count += inserted - below(first);
  }
  return count;
}

/// At most this many items are named in one verdict's list; the rest are counted.
constexpr std::size_t max_named = 10;

/// The ranks of the rows' values by `value` (unset where a row has none).
void rank_rows(std::vector<efficiency_row>& rows, std::optional<double> efficiency_row::*value,
               std::optional<int> efficiency_row::*rank) {
  std::vector<double> v;
  for (const auto& r : rows)
    if (r.*value) v.push_back(*(r.*value));
  const auto sorted = descending(v);
  for (auto& r : rows)
    if (r.*value) r.*rank = rank_in(sorted, *(r.*value));
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
  std::size_t differing = 0;
  for (std::size_t k = 0; k < runs.size(); ++k)
    if (rp[k] != rh[k] && ++differing <= max_named)
      at += (at.empty() ? "" : ", ") + p.runs[runs[k]].variant + " (probes " + std::to_string(rp[k]) + ", hardware " +
            std::to_string(rh[k]) + ")";
  if (differing > max_named) at += " and " + number(differing - max_named) + " more";
  // pair by pair: opposite orders where both measures separate the two by the tolerance or more;
  // counted in O(n log n), and the first of them named, looked for within a linear number of pairs
  g.discordant = count_discordant(probes, hardware);
  std::string pairs;
  std::size_t named = 0, looked = 0;
  const std::size_t look_limit = 64 * runs.size();
  for (std::size_t a = 0; a < runs.size() && named < std::min(max_named, g.discordant) && looked < look_limit; ++a)
    for (std::size_t b = a + 1; b < runs.size() && named < max_named && looked < look_limit; ++b, ++looked) {
      if (!discordant_pair(probes[a], hardware[a], probes[b], hardware[b])) continue;
      ++named;
      pairs += (pairs.empty() ? "" : ", ") + p.runs[runs[a]].variant + " / " + p.runs[runs[b]].variant;
    }
  if (g.discordant > named)
    pairs += (named > 0 ? " and " : "") + number(g.discordant - named) +
             (named > 0 ? " more" : g.discordant - named == 1 ? " pair" : " pairs");
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
  std::map<std::pair<std::string, std::string>, std::size_t> group_of;  // (algorithm, input) -> group
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    const auto [it, added] = group_of.try_emplace({r.algorithm, r.input}, groups.size());
    const std::size_t g = it->second;
    if (added) {
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
