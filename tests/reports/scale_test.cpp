// How the report's work grows with a profile's size: the analysis (baselines, fastest runs,
// the hardware's rankings, the comparison of profiles) and the renderers index what they look up,
// so ten times the runs take about ten times as long, never a hundred.

#include <doctest/doctest.h>

#include "profiles.hpp"

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/html.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace cdpkit_test;

namespace {

/// `n` runs with hardware metrics, and with `probes` a probe site each: half of them variants of
/// one input (one ranking of n / 2 variants, many pairs of them ordered differently by the two
/// measures), the rest in inputs of ten variants; every run names the first variant of its input
/// as its baseline.
rep::profile many_runs(std::size_t n, bool probes) {
  schema::profile p;
  p.program = "scale_test";
  p.created = "2026-11-29T00:00:00Z";
  p.device = {"NVIDIA H200", "9.0", 132, 150109880320ull, 2048, 13000, 13010};
  p.runs.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    const bool big = k < n / 2;
    schema::run_profile r;
    r.id = k;
    r.algorithm = "loop_to_child";
    r.input = big ? "power_law:big" : "power_law:" + std::to_string(k / 10);
    r.variant = "v" + std::to_string(big ? k : k % 10);
    r.baseline = "v0";
    r.ms = 1.0 + static_cast<double>(k % 7);
    r.work = 1000;
    r.work_unit = "items";
    r.checked = r.verified = true;
    r.hardware = hardware_of(static_cast<double>((k * 31) % 89) / 89.0);
    if (probes) {
      schema::trace_profile t;
      t.pending_limit = t.pending_budget = 2048;
      t.max_depth_limit = 24;
      t.sites = {probe_site_of(static_cast<double>(k % 97) / 97.0)};
      t.summary = schema::summarize(t);
      r.trace = t;
    }
    p.runs.push_back(std::move(r));
  }
  return p;
}

/// The fastest of three runs of `f`, in seconds: a busy machine slows a run, never speeds it.
template <class F>
double seconds(F&& f) {
  double best = 0;
  for (int k = 0; k < 3; ++k) {
    const auto start = std::chrono::steady_clock::now();
    f();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = k == 0 ? s : std::min(best, s);
  }
  return best;
}

/// Freed memory stays with the allocator for reuse (glibc: no fresh mapping per large block, no
/// trimming), so that timings compare work and not page faults.
void keep_freed_memory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace

// Ten times the runs is 10x the time for linear growth and about 12x for n log n; quadratic
// growth (a lookup that scans every run per run, pairs of variants compared one by one) would be
// 100x. Both sizes are measured in the same run.

TEST_CASE("the analysis of 10^5 runs takes about ten times as long as that of 10^4 and not a hundred") {
  const auto small = many_runs(10000, true), large = many_runs(100000, true);
  const auto work = [](const rep::profile& p) {
    const auto a = rep::analyze(p);
    const auto rows = rep::compare({p, p});
    CHECK(a.runs.size() == p.runs.size());
    CHECK(rows.size() == p.runs.size());  // every (input, variant) is in one run
  };
  keep_freed_memory();  // both sizes warm (see the HTML case below)
  seconds([&] { work(small); });  // warm-up: the allocator and caches
  seconds([&] { work(large); });
  const double t_small = seconds([&] { work(small); }), t_large = seconds([&] { work(large); });
  MESSAGE("analysis and comparison: 10^4 runs " << t_small << " s, 10^5 runs " << t_large << " s ("
                                                << t_large / t_small << "x)");
  CHECK(t_large < 30 * t_small);
  const auto ranking = rep::analyze(large).efficiency;
  REQUIRE(!ranking.empty());
  CHECK(ranking[0].compared == 50000u);
  CHECK(ranking[0].discordant > 0u);
  CHECK(ranking[0].verdict.size() < 2000);  // the lists of differing variants and pairs are capped
}

TEST_CASE("the HTML report of 10^5 runs takes about ten times as long as that of 10^4 and not a hundred") {
  // What grows with the runs is measured, not the machine's memory: the profiles are put in their
  // vectors once (copying 10^5 runs is not the report's work), and both sizes run warm, their
  // memory kept by the allocator (keep_freed_memory). On a virtual machine with slow page faults,
  // the 36 MB page of 10^5 runs otherwise got fresh memory every time (glibc maps allocations
  // above 32 MB anew) while 10^4 reused its own, which read as 50x.
  keep_freed_memory();
  const std::vector<rep::profile> small{many_runs(10000, false)}, large{many_runs(100000, false)};
  std::size_t small_bytes = 0, large_bytes = 0;
  seconds([&] { small_bytes = rep::render_html(small).size(); });  // warm-up
  seconds([&] { large_bytes = rep::render_html(large).size(); });
  const double t_small = seconds([&] { small_bytes = rep::render_html(small).size(); });
  const double t_large = seconds([&] { large_bytes = rep::render_html(large).size(); });
  MESSAGE("HTML: 10^4 runs " << t_small << " s, " << small_bytes / 1024 << " KiB; 10^5 runs " << t_large << " s, "
                             << large_bytes / 1024 << " KiB (" << t_large / t_small << "x)");
  CHECK(t_large < 30 * t_small);
}
