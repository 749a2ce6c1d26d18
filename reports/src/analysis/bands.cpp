// The bands of a launch site's child-size histograms in which the GPU is underused, and whether
// each is a problem (judge_bands()).

#include "detail.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit::report {

using detail::fixed;
using detail::number;

namespace {

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

}  // namespace cdpkit::report
