// The report's arithmetic, once per profile: bands, launch tree, baselines, comparison and
// findings. The renderers only render what analyze() and compare() return.

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

namespace {

/// The length of the union of [start, end) windows (sorted in place).
std::uint64_t union_ns(std::vector<std::pair<std::uint64_t, std::uint64_t>>& w) {
  std::sort(w.begin(), w.end());
  std::uint64_t total = 0, lo = 0, hi = 0;
  bool open = false;
  for (const auto& [a, b] : w) {
    if (open && a <= hi) {
      hi = std::max(hi, b);
      continue;
    }
    if (open) total += hi - lo;
    lo = a;
    hi = b;
    open = true;
  }
  if (open) total += hi - lo;
  return total;
}

}  // namespace

launch_tree build_launch_tree(const trace_profile& trace) {
  launch_tree t;
  t.from_sample = trace.records.size() < trace.records_requested;
  std::map<std::uint32_t, const launch_record*> by_id;
  for (const auto& r : trace.records) by_id[r.id] = &r;
  std::map<std::pair<int, int>, std::pair<std::uint64_t, double>> nodes;  // (depth, site) -> (n, work)
  std::map<std::pair<int, int>, std::vector<std::pair<std::uint64_t, std::uint64_t>>> windows;
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
  std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;
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
    auto first = static_cast<std::size_t>(a / width), last = static_cast<std::size_t>(b / width);
    first = std::min(first, n - 1);
    last = std::min(last, n - 1);
    for (std::size_t k = first; k <= last; ++k) {
      const double lo = std::max(a, width * static_cast<double>(k));
      const double hi = std::min(b, width * static_cast<double>(k + 1));
      if (hi <= lo) continue;
      tl.grids[k] += (hi - lo) / width;
      tl.blocks[k] += (hi - lo) / width * static_cast<double>(r.blocks);
    }
  }
  tl.busy_share = static_cast<double>(union_ns(windows)) / static_cast<double>(tl.span_ns);
  return tl;
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

/// The findings of one profile, from its analysed runs (steps 1-5, most important first).
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
      if (tiny.launch_share >= 0.25 && tiny.launches_in >= 32) {
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
  // 5. fastest per input
  std::map<std::pair<std::string, std::string>, std::size_t> best;
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const auto key = std::make_pair(p.runs[k].algorithm, p.runs[k].input);
    const auto it = best.find(key);
    if (p.runs[k].verified && (it == best.end() || p.runs[k].ms < p.runs[it->second].ms)) best[key] = k;
  }
  for (const auto& [key, k] : best) {
    const auto& base = runs[k].baseline;
    std::string text = "Fastest verified variant for " + key.first + " on " + key.second + ": " +
                       p.runs[k].variant + " (" + fixed(p.runs[k].ms, 3) + " ms";
    if (base && *base != k && p.runs[k].ms > 0)
      text += ", " + fixed(p.runs[*base].ms / p.runs[k].ms, 1) + "x " + p.runs[*base].variant;
    out.push_back({severity::info, text + ")."});
  }
  std::stable_sort(out.begin(), out.end(), [](const finding& a, const finding& b) {
    return static_cast<int>(a.level) > static_cast<int>(b.level);
  });
  return out;
}

}  // namespace

profile_analysis analyze(const profile& p) {
  profile_analysis a;
  a.source = &p;
  a.runs.resize(p.runs.size());
  const std::uint64_t sms = std::max<std::uint64_t>(1, p.device.sms);
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const run_profile& r = p.runs[k];
    run_analysis& ra = a.runs[k];
    ra.baseline = baseline_of(p, k);
    if (ra.baseline && r.ms > 0) ra.speedup = p.runs[*ra.baseline].ms / r.ms;
    ra.throughput = r.ms > 0 ? static_cast<double>(r.work) / r.ms / 1e6 : 0;
    if (!r.trace) continue;
    const trace_profile& t = *r.trace;
    for (const auto& s : t.sites) {
      if (s.requests == 0 && s.launched == 0) continue;
      site_analysis sa;
      sa.site = &s;
      if (s.launched > 0) sa.bands = underutilized_bands(s, t, sms, p.device.max_threads_per_sm);
      ra.sites.push_back(std::move(sa));
    }
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
    ra.pending_ceiling = std::min(t.pending_limit, t.pending_budget);
  }
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
      row.delta.push_back(k > 0 && ms && first && *first > 0 ? std::optional<double>((*ms - *first) / *first)
                                                             : std::nullopt);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace cdpkit::report
