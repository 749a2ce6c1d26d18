// The report's arithmetic, once per profile: bands (and whether they are a problem), launch tree,
// child timeline, the hardware's view (efficiency ranks, CTA accounting, SM activity, collection
// overhead), baselines, comparison and findings. The renderers only render what analyze() and
// compare() return.

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/schema/text.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace cdpkit::report {

namespace {

using schema::fixed;
using schema::percent;
std::string number(std::uint64_t v) { return schema::grouped(v); }

std::uint64_t sum_buckets(const std::array<std::uint64_t, log2_buckets>& h, int last) {
  std::uint64_t s = 0;
  for (int b = 0; b <= last && b < log2_buckets; ++b) s += h[static_cast<std::size_t>(b)];
  return s;
}

}  // namespace

int last_bucket_below(std::uint64_t limit) {
  int last = -1;
  for (int b = 0; b < log2_buckets; ++b) {
    const std::uint64_t upper = (b >= 63) ? ~0ull : ((1ull << (b + 1)) - 1);  // largest value in bucket b
    if (upper < limit) last = b;
  }
  return last;
}

std::vector<band> underutilized_bands(const site_profile& site, const trace_profile& trace,
                                      std::uint64_t sms, std::uint64_t max_threads_per_sm) {
  const bool has_work = site.work_items > 0;
  const std::uint64_t total = site.launched;
  struct spec {
    std::string name, histogram;
    const std::array<std::uint64_t, log2_buckets>* h;
    std::uint64_t limit;
  };
  const std::vector<spec> specs = {
      {has_work ? "fewer work items than a warp has lanes (" + std::to_string(trace.tiny_grid_work) + ")"
                : "fewer threads than a warp (32)",
       has_work ? "work" : "threads", has_work ? &site.work_log2 : &site.threads_log2,
       has_work ? trace.tiny_grid_work : 32},
      {"fewer blocks than SMs (" + std::to_string(sms) + ")", "blocks", &site.blocks_log2, sms},
      {"fewer threads than a full GPU holds (" + number(sms * max_threads_per_sm) + ")", "threads",
       &site.threads_log2, sms * max_threads_per_sm},
  };
  std::vector<band> out;
  for (const auto& s : specs) {
    band b;
    b.name = s.name;
    b.histogram = s.histogram;
    b.limit = s.limit;
    b.last_bucket = last_bucket_below(s.limit);
    b.launches_total = total;
    b.launches_in = sum_buckets(*s.h, b.last_bucket);
    b.launch_share = total > 0 ? static_cast<double>(b.launches_in) / static_cast<double>(total) : 0.0;
    // thread share from the records of this site
    double in = 0, all = 0;
    for (const auto& r : trace.records) {
      if (r.site != site.id || r.outcome != static_cast<std::uint8_t>(launch_outcome::launched)) continue;
      const double threads = 1.0 * r.blocks * r.child_block_threads;
      const std::uint64_t value = s.histogram == "work" ? r.work : s.histogram == "blocks" ? r.blocks
                                                                                         : static_cast<std::uint64_t>(threads);
      all += threads;
      if (value < s.limit) in += threads;
    }
    if (all > 0) {
      b.thread_share = in / all;
      b.thread_share_sampled = trace.records.size() < trace.records_requested;
    }
    out.push_back(std::move(b));
  }
  return out;
}

void judge_bands(std::vector<band>& bands, const fill_evidence& e) {
  const bool timed = e.mean_blocks || e.mean_sm_active;
  const bool filled = (e.mean_blocks && *e.mean_blocks >= static_cast<double>(e.sms)) ||
                      (e.mean_sm_active && *e.mean_sm_active >= filled_sm_active_pct);
  std::string shown;  // the evidence in words
  if (e.mean_blocks)
    shown = fixed(*e.mean_blocks, 1) + " child blocks in flight on average for " + number(e.sms) + " SMs";
  if (e.mean_sm_active)
    shown += (shown.empty() ? "" : ", ") + std::string("SMs active ") + fixed(*e.mean_sm_active, 1) + "% of the time";
  for (band& b : bands) {
    b.flagged = b.launches_in > 0 && (timed ? !filled : !e.fastest);
    if (b.launches_in == 0) b.reason = "no launches in the band";
    else if (timed) b.reason = (filled ? "small grids, but together they filled the GPU (" :
                                         "the launched work did not fill the GPU (") + shown + ")";
    else if (e.fastest) b.reason = "small grids, yet the fastest verified variant of its input";
    else b.reason = "no timing in the profile shows the grids filled the GPU";
  }
}

namespace {

using window = std::pair<std::uint64_t, std::uint64_t>;  // [start, end) in ns

/// The union of [start, end) windows as disjoint windows by start (`w` is sorted in place).
std::vector<window> merged(std::vector<window>& w) {
  std::sort(w.begin(), w.end());
  std::vector<window> out;
  for (const auto& [a, b] : w) {
    if (!out.empty() && a <= out.back().second) out.back().second = std::max(out.back().second, b);
    else out.push_back({a, b});
  }
  return out;
}

/// The length of the union of [start, end) windows (sorted in place).
std::uint64_t union_ns(std::vector<window>& w) {
  std::uint64_t total = 0;
  for (const auto& [a, b] : merged(w)) total += b - a;
  return total;
}

/// Adds `weight` times the share of each bin (of `width`, from 0) that [a, b) covers.
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

}  // namespace

launch_tree build_launch_tree(const trace_profile& trace) {
  launch_tree t;
  t.from_sample = trace.records.size() < trace.records_requested;
  std::map<std::uint32_t, const launch_record*> by_id;
  for (const auto& r : trace.records) by_id[r.id] = &r;
  std::map<std::pair<int, int>, std::pair<std::uint64_t, double>> nodes;  // (depth, site) -> (n, work)
  std::map<std::pair<int, int>, std::vector<window>> windows;
  std::map<std::tuple<int, int, int>, std::uint64_t> edges;              // (depth, parent, child)
  for (const auto& r : trace.records) {
    if (r.outcome != static_cast<std::uint8_t>(launch_outcome::launched)) continue;
    auto& n = nodes[{r.depth, r.site}];
    ++n.first;
    n.second += r.work > 0 ? r.work : 1.0 * r.blocks * r.child_block_threads;
    if (has_execution_time(r)) windows[{r.depth, r.site}].push_back({r.start_ns, r.end_ns});
    int parent_site = -1;
    if (r.parent != no_record) {
      const auto it = by_id.find(r.parent);
      parent_site = it != by_id.end() ? it->second->site : -2;  // -2: parent record not kept
    }
    ++edges[{r.depth, parent_site, r.site}];
  }
  for (const auto& [key, value] : nodes) {
    tree_node n;
    n.depth = key.first;
    n.site = key.second;
    n.site_name = trace.site_name(key.second);
    n.launches = value.first;
    n.mean_work = value.second / static_cast<double>(value.first);
    const auto w = windows.find(key);
    if (w != windows.end()) {
      n.timed = w->second.size();
      for (const auto& [a, b] : w->second) {
        n.exec_ns_sum = b - a > ~0ull - n.exec_ns_sum ? ~0ull : n.exec_ns_sum + (b - a);  // saturating
        n.exec_ns_max = std::max(n.exec_ns_max, b - a);
      }
      n.busy_ns = union_ns(w->second);
    }
    t.nodes.push_back(std::move(n));
  }
  for (const auto& [key, count] : edges)
    t.edges.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), count});
  return t;
}

std::optional<child_timeline> build_child_timeline(const trace_profile& trace, int bins) {
  child_timeline tl;
  std::uint64_t t0 = ~0ull, t1 = 0;
  std::vector<window> windows;
  for (const auto& r : trace.records) {
    t0 = std::min(t0, r.t_ns);
    if (!has_execution_time(r)) continue;
    t0 = std::min(t0, r.start_ns);
    t1 = std::max(t1, r.end_ns);
    windows.push_back({r.start_ns, r.end_ns});
  }
  if (windows.empty() || t1 <= t0) return std::nullopt;
  tl.t0_ns = t0;
  tl.span_ns = t1 - t0;
  tl.timed_grids = windows.size();
  const auto n = static_cast<std::size_t>(std::max(1, bins));
  tl.grids.assign(n, 0.0);
  tl.blocks.assign(n, 0.0);
  const double width = static_cast<double>(tl.span_ns) / static_cast<double>(n);
  // each window adds its overlap with every bin it touches, weighted by the bin's width
  for (const auto& r : trace.records) {
    if (!has_execution_time(r)) continue;
    const double a = static_cast<double>(r.start_ns - t0), b = static_cast<double>(r.end_ns - t0);
    add_window(tl.grids, a, b, width, 1.0);
    add_window(tl.blocks, a, b, width, static_cast<double>(r.blocks));
  }
  for (double v : tl.blocks) tl.mean_blocks += v / static_cast<double>(n);
  tl.busy_share = static_cast<double>(union_ns(windows)) / static_cast<double>(tl.span_ns);
  return tl;
}

// --- the hardware's view --------------------------------------------------------------------------

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

bool accounting_analysis::problem() const noexcept {
  return status == schema::accounting_status::missing_ctas || status == schema::accounting_status::extra_ctas;
}

accounting_analysis analyze_accounting(const schema::cta_accounting& counts) {
  accounting_analysis a;
  a.counts = counts;
  a.status = schema::classify(counts);
  a.difference = counts.unaccounted();
  a.thread_difference = counts.unaccounted_threads();
  // "N things", singular for one, from a difference's magnitude
  const auto count = [](std::int64_t d, const char* one, const char* more) {
    const std::uint64_t n = d < 0 ? 0 - static_cast<std::uint64_t>(d) : static_cast<std::uint64_t>(d);
    return number(n) + " " + (n == 1 ? one : more);
  };
  // the unaccounted CTAs, or the threads where the CTAs balance
  const bool ctas = a.difference != 0;
  const std::int64_t d = ctas ? a.difference : a.thread_difference;
  const std::string accounted = "every child grid accounted for; ";
  switch (a.status) {
    case schema::accounting_status::exact: a.verdict = "every child grid accounted for"; break;
    case schema::accounting_status::device_runtime:
      a.verdict = accounted + count(d, "more CTA is", "more CTAs are") + " the CUDA device runtime's own (" +
                  count(a.thread_difference, "thread", "threads") + ", 1 to 32 per CTA)";
      break;
    case schema::accounting_status::driver_transfers:
      a.verdict = accounted + (ctas ? count(d, "more CTA", "more CTAs") : count(d, "more thread", "more threads")) +
                  " beside the run's " + number(counts.transfers) + " copies and memsets (the driver's kernels for some)";
      break;
    case schema::accounting_status::missing_ctas:
      a.verdict = (a.difference < 0 ? count(a.difference, "child block", "child blocks")
                                    : count(a.thread_difference, "child thread", "child threads")) +
                  " the trace counts never ran on the GPU";
      break;
    case schema::accounting_status::extra_ctas:
      a.verdict = (ctas ? count(d, "CTA", "CTAs") : count(d, "thread", "threads")) + " that no launch accounts for";
      break;
  }
  return a;
}

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

namespace {

/// The samples as the chart's series: each one, or past max_activity_points their time-weighted
/// means over that many equal bins (each sample when they span no time).
std::vector<activity_point> activity_series(const schema::timeline_profile& tl, std::size_t sm,
                                            std::optional<std::size_t> warps, std::uint64_t t0, std::uint64_t span) {
  const auto ms = [&](std::uint64_t t) { return static_cast<double>(t - t0) / 1e6; };
  std::vector<activity_point> out;
  if (tl.samples.size() <= max_activity_points || span == 0) {
    for (const auto& s : tl.samples)
      out.push_back({ms(s.start_ns), ms(s.end_ns), s.values[sm],
                     warps ? std::optional<double>(s.values[*warps]) : std::nullopt});
    return out;
  }
  const std::size_t n = max_activity_points;
  const double width = static_cast<double>(span) / static_cast<double>(n);
  std::vector<double> cover(n, 0.0), sm_sum(n, 0.0), warps_sum(n, 0.0);
  for (const auto& s : tl.samples) {
    const double a = static_cast<double>(s.start_ns - t0), b = static_cast<double>(s.end_ns - t0);
    add_window(cover, a, b, width, 1.0);
    add_window(sm_sum, a, b, width, s.values[sm]);
    if (warps) add_window(warps_sum, a, b, width, s.values[*warps]);
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (cover[k] <= 0) continue;
    out.push_back({width * static_cast<double>(k) / 1e6, width * static_cast<double>(k + 1) / 1e6, sm_sum[k] / cover[k],
                   warps ? std::optional<double>(warps_sum[k] / cover[k]) : std::nullopt});
  }
  return out;
}

/// The time-weighted mean SM active % over the parts of the samples inside `busy` (disjoint
/// windows by start); unset when they do not overlap.
std::optional<double> mean_inside(const schema::timeline_profile& tl, std::size_t sm, const std::vector<window>& busy) {
  double weight = 0, sum = 0;
  std::size_t j = 0;
  for (const auto& s : tl.samples) {
    while (j < busy.size() && busy[j].second <= s.start_ns) ++j;
    for (std::size_t k = j; k < busy.size() && busy[k].first < s.end_ns; ++k) {
      const double overlap = static_cast<double>(std::min(s.end_ns, busy[k].second) - std::max(s.start_ns, busy[k].first));
      weight += overlap;
      sum += overlap * s.values[sm];
    }
  }
  return weight > 0 ? std::optional<double>(sum / weight) : std::nullopt;
}

}  // namespace

std::optional<sm_activity> build_sm_activity(const run_profile& run, const schema::host_activity_profile* host) {
  if (!run.timeline || run.timeline->samples.empty()) return std::nullopt;
  const schema::timeline_profile& tl = *run.timeline;
  const auto sm = tl.index_of(sm_active_metric);
  if (!sm) return std::nullopt;
  const auto warps = tl.index_of(warps_active_metric);
  sm_activity a;
  a.t0_ns = tl.samples.front().start_ns;
  std::uint64_t t1 = a.t0_ns;
  for (const auto& s : tl.samples) t1 = std::max(t1, s.end_ns);
  a.span_ns = t1 - a.t0_ns;
  a.samples = tl.samples.size();
  // time-weighted (equal weights when every sample is empty)
  a.mean_sm_active = tl.mean(sm_active_metric).value_or(0.0);
  if (warps) a.mean_warps_active = tl.mean(warps_active_metric);
  bool timed = false;
  for (const auto& s : tl.samples) timed = timed || s.end_ns > s.start_ns;
  double weight = 0, idle = 0;
  for (const auto& s : tl.samples) {
    const double w = timed ? static_cast<double>(s.end_ns - s.start_ns) : 1.0;
    weight += w;
    if (s.values[*sm] < idle_sm_active_pct) idle += w;
  }
  if (weight > 0) a.idle_share = idle / weight;
  a.series = activity_series(tl, *sm, warps, a.t0_ns, a.span_ns);
  std::vector<window> children;
  if (run.trace)
    for (const auto& r : run.trace->records)
      if (has_execution_time(r)) children.push_back({r.start_ns, r.end_ns});
  if (!children.empty()) {
    auto busy = children;
    a.in_flight_sm_active = mean_inside(tl, *sm, merged(busy));
  }
  a.children = pack_windows(std::move(children), a.t0_ns, a.span_ns);
  std::vector<window> kernels;
  if (host)
    for (const auto& k : host->kernels)
      if (k.run && *k.run == run.id && k.end_ns != 0)  // untimed (range-profiled) kernels left out
        kernels.push_back({k.start_ns, k.end_ns});
  a.host_kernels = pack_windows(std::move(kernels), a.t0_ns, a.span_ns);
  return a;
}

namespace {
/// The yardstick of a run's collection times: the untraced runs made as the collection runs were,
/// when the profile has them, else the timed median.
double collection_baseline(const run_profile& run) {
  return run.collect.baseline_ms && *run.collect.baseline_ms > 0 ? *run.collect.baseline_ms : run.ms;
}
}  // namespace

collect_overhead collection_overhead(const run_profile& run) {
  collect_overhead o;
  const double base = collection_baseline(run);
  if (base <= 0) return o;
  const auto over = [&](const std::optional<double>& ms) { return ms ? std::optional<double>(*ms / base) : std::nullopt; };
  o.traced = over(run.collect.traced_ms);
  o.metrics = over(run.collect.metrics_ms);
  o.timeline = over(run.collect.timeline_ms);
  return o;
}

sample_overhead sample_collection_overhead(const profile& p) {
  sample_overhead o;
  for (const auto& run : p.runs) {
    const double base = collection_baseline(run);
    if (base <= 0) continue;
    const auto add = [&](sample_overhead::part& part, const std::optional<double>& ms) {
      if (!ms) return;
      part.ms += *ms;
      part.baseline_ms += base;
      ++part.runs;
    };
    add(o.traced, run.collect.traced_ms);
    add(o.metrics, run.collect.metrics_ms);
    add(o.timeline, run.collect.timeline_ms);
  }
  return o;
}

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

namespace {

/// Per (algorithm, input): the index of its fastest verified run (inputs without one are absent).
std::map<std::pair<std::string, std::string>, std::size_t> fastest_verified(const profile& p) {
  std::map<std::pair<std::string, std::string>, std::size_t> best;
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const auto key = std::make_pair(p.runs[k].algorithm, p.runs[k].input);
    const auto it = best.find(key);
    if (p.runs[k].verified && (it == best.end() || p.runs[k].ms < p.runs[it->second].ms)) best[key] = k;
  }
  return best;
}

/// The findings of the hardware's view of one run: the CTA accounting, and a CDP run whose GPU
/// was mostly idle while its child grids ran.
void hardware_findings(const run_profile& r, const run_analysis& ra, std::vector<finding>& out) {
  const std::string run_name = r.variant + " (" + r.input + ")";
  if (ra.accounting) {
    const accounting_analysis& a = *ra.accounting;
    out.push_back({a.problem() ? severity::problem : severity::info,
                   run_name + ": the hardware ran " + number(a.counts.hardware_ctas) + " CTAs for " +
                       number(a.counts.host_blocks) + " host blocks and " + number(a.counts.child_blocks) +
                       " traced child blocks: " + a.verdict + "."});
  }
  if (ra.activity && r.trace && r.trace->summary.child_launches > 0) {
    const sm_activity& a = *ra.activity;
    const double active = a.in_flight_sm_active.value_or(a.mean_sm_active);
    if (active < mostly_idle_sm_active_pct)
      out.push_back({severity::warning,
                     run_name + ": tiny child grids: the GPU was mostly idle while launches trickled in (SMs active " +
                         fixed(active, 1) + "% of the time on average" +
                         (a.in_flight_sm_active ? " while child grids ran" : "") + "; below " +
                         fixed(idle_sm_active_pct, 0) + "% for " + percent(a.idle_share) +
                         " of the sampled time). Launch fewer, larger grids (a threshold, or one grid per warp or "
                         "block)."});
  }
}

/// The findings of one profile, from its analysed runs (steps 1-6, most important first).
std::vector<finding> make_findings(const profile& p, const std::vector<run_analysis>& runs) {
  std::vector<finding> out;
  // 1. failed checks first
  for (const auto& r : p.runs) {
    if (r.checked && !r.verified)
      out.push_back({severity::problem, r.algorithm + " " + r.variant + " on " + r.input +
                                            " FAILED its result check: " + number(r.mismatches) +
                                            " mismatches against the reference."});
    else if (!r.checked)
      out.push_back({severity::warning, r.algorithm + " " + r.variant + " on " + r.input +
                                            " was not checked against a reference."});
  }
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    if (!r.trace) continue;
    const trace_profile& t = *r.trace;
    const trace_summary& sum = t.summary;
    const std::string run_name = r.variant + " (" + r.input + ")";
    // 2. tiny grids per launch site
    for (const site_analysis& sa : runs[k].sites) {
      const site_profile& s = *sa.site;
      if (s.launched == 0) continue;
      const band& tiny = sa.bands.front();
      if (tiny.flagged && tiny.launch_share >= 0.25 && tiny.launches_in >= 32) {
        std::string text = run_name + ": " + percent(tiny.launch_share) + " of the " + number(s.launched) +
                           " child grids launched at " + s.name + " have " + tiny.name +
                           ", yet each launch costs about 1 us on the device's launch path. Launching only "
                           "above T = " + number(t.tiny_grid_work - 1) + " would remove those " +
                           number(tiny.launches_in) +
                           " launches and leave their items to the parents' loops; without a given T, the "
                           "library's thresholded and aggregated policies pick one from the length "
                           "distribution.";
        out.push_back({tiny.launch_share >= 0.5 ? severity::problem : severity::warning, text});
      }
    }
    // 3. pending launches and fallbacks
    const std::uint64_t ceiling = runs[k].pending_ceiling;
    if (sum.fallbacks > 0 || (ceiling > 0 && t.pending_high_water >= ceiling)) {
      std::string text = run_name + ": pending launches reached " + number(t.pending_high_water) + " of " +
                         number(ceiling) + " (device limit " + number(t.pending_limit) + ", budget " +
                         number(t.pending_budget) + "): " + number(sum.fallbacks) +
                         " launches fell back to inline work";
      std::vector<std::string> parts;
      if (sum.fallback_budget > 0) parts.push_back(number(sum.fallback_budget) + " over the budget");
      if (sum.failed_launches > 0) {
        std::string e = number(sum.failed_launches) + " refused by the device";
        std::set<std::string> names;
        for (const auto& s : t.sites)
          for (const auto& f : s.failed_by_error) names.insert(f.name + " (" + std::to_string(f.code) + ")");
        if (!names.empty()) {
          e += ": ";
          bool first = true;
          for (const auto& n : names) {
            e += (first ? "" : ", ") + n;
            first = false;
          }
        }
        parts.push_back(e);
      }
      if (sum.fallback_depth > 0)
        parts.push_back(number(sum.fallback_depth) + " at the depth cap of " + number(t.max_depth_limit));
      if (!parts.empty()) {
        text += " (";
        for (std::size_t j = 0; j < parts.size(); ++j) text += (j ? "; " : "") + parts[j];
        text += ")";
      }
      text += ". No work was lost; a threshold or aggregation would launch fewer, larger grids.";
      out.push_back({sum.fallbacks > 0 ? severity::warning : severity::info, text});
    }
    // 4. divergence: inside child grids, the grids are too small; elsewhere, the loop diverges
    for (const auto& s : t.sites) {
      if (!s.probe.step_efficiency || s.probe.steps == 0) continue;
      const double e = *s.probe.step_efficiency;
      if (e < 0.5 && s.role == site_role::child_probe) {
        out.push_back({severity::warning,
                       run_name + ": inside the child grids (" + s.name + "), warps had " + percent(e) +
                           " of their lanes busy (" + fixed(32 * e, 1) +
                           " of 32): the grids are smaller than their blocks. Launch fewer, larger grids"
                           " (a threshold, or one grid per warp or block)."});
      } else if (e < 0.5) {
        out.push_back({severity::warning,
                       run_name + ": at " + s.name + ", warps ran with " + percent(e) + " of their lanes active (" +
                           fixed(32 * e, 1) + " of 32 on average, over " + number(s.probe.steps) +
                           " warp steps): the loop diverges. Aggregate the segments per warp or block, or balance"
                           " the items across threads."});
      }
    }
    if (t.records.size() < t.records_requested)
      out.push_back({severity::info, run_name + ": the profile holds " + number(t.records.size()) + " of the " +
                                         number(t.records_requested) + " launch records (the device buffer kept " +
                                         number(t.records_stored) +
                                         "): the launch tree and the Chrome trace are sampled, the counters and "
                                         "histograms are exact."});
  }
  // 5. the hardware: CTA accounting and SM activity
  for (std::size_t k = 0; k < p.runs.size(); ++k) hardware_findings(p.runs[k], runs[k], out);
  // 6. fastest per input
  for (const auto& [key, k] : fastest_verified(p)) {
    const auto& base = runs[k].baseline;
    std::string text = "Fastest verified variant for " + key.first + " on " + key.second + ": " +
                       p.runs[k].variant + " (" + fixed(p.runs[k].ms, 3) + " ms";
    const double ratio = base && *base != k && p.runs[k].ms > 0 ? p.runs[*base].ms / p.runs[k].ms : 0.0;
    if (std::isfinite(ratio) && ratio > 0)  // (a time of 5e-324 ms: no "infx")
      text += ", " + fixed(ratio, 1) + "x " + p.runs[*base].variant;
    out.push_back({severity::info, text + ")."});
  }
  std::stable_sort(out.begin(), out.end(), [](const finding& a, const finding& b) {
    return static_cast<int>(a.level) > static_cast<int>(b.level);
  });
  return out;
}

/// The trace's part of a run's analysis: its launch tree and child timeline, then its launch
/// sites' bands judged on that timing (and the PM timeline, already in `ra`). `fastest`: the run
/// is the fastest verified one of its input.
void analyze_trace(const profile& p, const trace_profile& t, bool fastest, run_analysis& ra) {
  const std::uint64_t sms = std::max<std::uint64_t>(1, p.device.sms);
  if (t.summary.child_launches > 0) {
    ra.tree = build_launch_tree(t);
    ra.timeline = build_child_timeline(t);
    ra.launches_by_depth.assign(64, 0);
    int deepest = 1;
    for (const auto& s : t.sites)
      for (std::size_t d = 0; d < s.depth_hist.size() && d < 64; ++d) {
        ra.launches_by_depth[d] += s.depth_hist[d];
        if (s.depth_hist[d] > 0) deepest = std::max(deepest, static_cast<int>(d));
      }
    ra.launches_by_depth.resize(static_cast<std::size_t>(deepest) + 1);
  }
  fill_evidence evidence;
  evidence.sms = sms;
  if (ra.timeline) evidence.mean_blocks = ra.timeline->mean_blocks;
  if (ra.activity) evidence.mean_sm_active = ra.activity->mean_sm_active;
  evidence.fastest = fastest;
  for (const auto& s : t.sites) {
    if (s.requests == 0 && s.launched == 0) continue;
    site_analysis sa;
    sa.site = &s;
    if (s.launched > 0) {
      sa.bands = underutilized_bands(s, t, sms, p.device.max_threads_per_sm);
      judge_bands(sa.bands, evidence);
    }
    ra.sites.push_back(std::move(sa));
  }
  ra.pending_ceiling = std::min(t.pending_limit, t.pending_budget);
}

}  // namespace

profile_analysis analyze(const profile& p) {
  profile_analysis a;
  a.source = &p;
  a.runs.resize(p.runs.size());
  const auto fastest = fastest_verified(p);
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    run_analysis& ra = a.runs[k];
    ra.baseline = baseline_of(p, k);
    if (ra.baseline && r.ms > 0) ra.speedup = p.runs[*ra.baseline].ms / r.ms;
    ra.throughput = r.ms > 0 ? static_cast<double>(r.work) / r.ms / 1e6 : 0;
    ra.overhead = collection_overhead(r);
    if (r.hardware && r.hardware->accounting) ra.accounting = analyze_accounting(*r.hardware->accounting);
    ra.activity = build_sm_activity(r, p.host_activity ? &*p.host_activity : nullptr);
    if (!r.trace) continue;
    const auto best = fastest.find({r.algorithm, r.input});
    analyze_trace(p, *r.trace, best != fastest.end() && best->second == k, ra);
  }
  a.efficiency = rank_efficiencies(p);
  a.overhead = sample_collection_overhead(p);
  a.findings = make_findings(p, a.runs);
  return a;
}

std::vector<finding> findings(const profile& p) { return analyze(p).findings; }

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
