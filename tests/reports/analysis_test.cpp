// What the report concludes from a profile: the underutilized bands of the log2 histograms and
// when a band is a problem, the findings with their numbers, the launch tree (whole or sampled)
// and the child timeline, the hardware's ranking of the variants against the probes', and the
// CTA accounting's verdicts.

#include <doctest/doctest.h>

#include "profiles.hpp"
#include "report_checks.hpp"

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/html.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace cdpkit_test;

TEST_CASE("underutilized bands cut the log2 histograms at the right buckets") {
  CHECK(rep::last_bucket_below(32) == 4);   // [16, 32) is the last bucket wholly below 32
  CHECK(rep::last_bucket_below(132) == 6);  // [64, 128)
  CHECK(rep::last_bucket_below(1) == -1);
  CHECK(rep::last_bucket_below(2) == 0);
  const auto p = rep::parse_profile(valid_profile().dump(), "p.json");
  const auto& t = *p.runs[1].trace;
  const auto bands = rep::underutilized_bands(*t.site(16), t, 132);
  REQUIRE(bands.size() == 3);
  CHECK(bands[0].histogram == "work");
  CHECK(bands[0].last_bucket == 4);
  CHECK(bands[0].launches_in == 91u);
  CHECK(bands[0].launch_share == doctest::Approx(0.91));
  // records: works 600, 4, 600 with 256 threads each -> one third of the threads in the band
  REQUIRE(bands[0].thread_share.has_value());
  CHECK(*bands[0].thread_share == doctest::Approx(1.0 / 3.0));
  CHECK(bands[1].launches_in == 100u);  // single-block grids, fewer blocks than 132 SMs
  CHECK(bands[2].launches_in == 100u);
}

TEST_CASE("findings state tiny grids pending launches and divergence with numbers") {
  const auto p = rep::parse_profile(valid_profile().dump(), "p.json");
  std::string all;
  for (const auto& f : rep::findings(p)) all += f.text + "\n";
  CHECK(all.find("91% of the 100 child grids launched at bfs.neighbors have fewer work items than a warp has lanes (32)") !=
        std::string::npos);
  CHECK(all.find("Launching only above T = 31 would remove those 91 launches") != std::string::npos);
  CHECK(all.find("pending launches reached 2,048 of 2,048") != std::string::npos);
  CHECK(all.find("40 launches fell back to inline work (30 over the budget; 10 refused by the device: "
                 "cudaErrorLaunchPendingCountExceeded (69))") != std::string::npos);
  CHECK(all.find("warps ran with 12% of their lanes active (4.0 of 32") != std::string::npos);
  CHECK(all.find("Fastest verified variant for bfs on rmat:10: serial_loop") != std::string::npos);
}

TEST_CASE("a profile holding only part of the records says the tree is sampled") {
  auto doc = valid_profile(4);
  doc["runs"][1]["trace"]["records"]["requested"] = 100;
  const auto p = rep::parse_profile(doc.dump(), "p.json");
  CHECK(rep::build_launch_tree(*p.runs[1].trace).from_sample);
  std::string all;
  for (const auto& f : rep::findings(p)) all += f.text + "\n";
  CHECK(all.find("the profile holds 4 of the 100 launch records") != std::string::npos);
  const auto full = rep::parse_profile(valid_profile(4).dump(), "p.json");
  const auto tree = rep::build_launch_tree(*full.runs[1].trace);
  CHECK_FALSE(tree.from_sample);
  REQUIRE(tree.nodes.size() == 2);  // depth 1 (the root's child) and depth 2
  CHECK(tree.nodes[0].depth == 1);
  CHECK(tree.nodes[0].launches == 1u);
  CHECK(tree.nodes[1].launches == 3u);
  CHECK(tree.nodes[1].mean_work == doctest::Approx((4 + 600 + 4) / 3.0));
}

TEST_CASE("the child timeline averages grids and blocks in flight over equal time bins") {
  auto p = rep::parse_profile(valid_profile(3).dump(), "p.json");
  auto& t = *p.runs[1].trace;
  // [1000, 2000) with 4 blocks, [2500, 3000) with 2 blocks, and a refused request
  const std::uint64_t window[3][2] = {{1000, 2000}, {2500, 3000}, {cdpkit::no_time_start, cdpkit::no_time_end}};
  for (std::size_t k = 0; k < 3; ++k) {
    t.records[k].t_ns = 1000;
    t.records[k].depth = 1;
    t.records[k].parent = cdpkit::no_record;
    t.records[k].blocks = k == 0 ? 4 : 2;
    t.records[k].start_ns = window[k][0];
    t.records[k].end_ns = window[k][1];
  }
  t.records[2].outcome = static_cast<std::uint8_t>(cdpkit::launch_outcome::fallback_depth);
  const auto tl = rep::build_child_timeline(t, 4);
  REQUIRE(tl.has_value());
  CHECK(tl->t0_ns == 1000u);
  CHECK(tl->span_ns == 2000u);
  CHECK(tl->timed_grids == 2u);
  CHECK(tl->grids == std::vector<double>{1, 1, 0, 1});
  CHECK(tl->blocks == std::vector<double>{4, 4, 0, 2});
  CHECK(tl->busy_share == doctest::Approx(0.75));
  const auto tree = rep::build_launch_tree(t);
  REQUIRE(tree.nodes.size() == 1u);
  CHECK(tree.nodes[0].launches == 2u);
  CHECK(tree.nodes[0].timed == 2u);
  CHECK(tree.nodes[0].exec_ns_sum == 1500u);
  CHECK(tree.nodes[0].exec_ns_max == 1000u);
  CHECK(tree.nodes[0].busy_ns == 1500u);
  const std::string tree_html = section_of(rep::render_html({p}), "launch-tree");
  CHECK(contains(tree_html, "2 child grids measured over 2.0 µs from the first request"));
  CHECK(contains(tree_html, "child blocks in flight"));
  CHECK(contains(tree_html, "the child grids alone never held one block per SM"));
  // without windows (a /1 profile) there is no timeline
  CHECK_FALSE(rep::build_child_timeline(*rep::parse_profile(valid_profile(3).dump(), "q.json").runs[1].trace).has_value());
}

TEST_CASE("a band is informational where the child grids together filled the GPU and flagged where they did not") {
  // records.size() one-block grids in flight together over [2000, 3000): that many blocks on average
  const auto timed = [](std::size_t records, double ms) {
    auto doc = valid_profile(records);
    doc["runs"][1]["ms"] = ms;
    auto p = rep::parse_profile(doc.dump(), "p.json");
    for (auto& r : p.runs[1].trace->records) {
      r.t_ns = 2000;
      r.start_ns = 2000;
      r.end_ns = 3000;
    }
    return p;
  };
  const auto tiny_finding = [](const rep::profile_analysis& a) {
    return std::any_of(a.findings.begin(), a.findings.end(),
                       [](const rep::finding& f) { return contains(f.text, "91% of the 100 child grids"); });
  };
  const auto filled = timed(200, 40.0);
  const auto a = rep::analyze(filled);
  REQUIRE(a.runs[1].timeline.has_value());
  CHECK(a.runs[1].timeline->mean_blocks == doctest::Approx(200.0));
  const auto& bands = a.runs[1].sites.front().bands;
  for (const auto& b : bands) {
    CAPTURE(b.name);
    CHECK_FALSE(b.flagged);
    CHECK(b.reason == "small grids, but together they filled the GPU (200.0 child blocks in flight on average for 132 SMs)");
  }
  CHECK_FALSE(tiny_finding(a));
  const std::string grids = section_of(rep::render_html({filled}), "child-grids");
  CHECK(contains(grids, "<td class=\"l\">informational: small grids, but together they filled the GPU"));
  CHECK(contains(grids, "shaded, informational: &lt; 132 blocks"));

  const auto starved = timed(10, 40.0);
  const auto b = rep::analyze(starved);
  CHECK(b.runs[1].sites.front().bands[1].flagged);
  CHECK(b.runs[1].sites.front().bands[1].reason ==
        "the launched work did not fill the GPU (10.0 child blocks in flight on average for 132 SMs)");
  CHECK(tiny_finding(b));
  CHECK(contains(section_of(rep::render_html({starved}), "child-grids"), "shaded: underused: &lt; 132 blocks"));

  // the same starved run, its SMs busy by the PM timeline: informational
  auto busy = starved;
  busy.runs[1].timeline = timeline_of({{70.0, 50.0}, {65.0, 50.0}});
  const auto c = rep::analyze(busy);
  CHECK_FALSE(c.runs[1].sites.front().bands[1].flagged);
  CHECK(contains(c.runs[1].sites.front().bands[1].reason, "SMs active 67.5% of the time"));
  CHECK_FALSE(tiny_finding(c));

  // without timing: flagged, except in the fastest verified run of its input
  const auto untimed = rep::analyze(rep::parse_profile(valid_profile().dump(), "p.json"));
  CHECK(untimed.runs[1].sites.front().bands[0].flagged);
  CHECK(untimed.runs[1].sites.front().bands[0].reason == "no timing in the profile shows the grids filled the GPU");
  auto fast = valid_profile();
  fast["runs"][1]["ms"] = 5.0;  // child_per_thread now beats serial_loop's 10 ms
  const auto winner = rep::analyze(rep::parse_profile(fast.dump(), "p.json"));
  CHECK_FALSE(winner.runs[1].sites.front().bands[0].flagged);
  CHECK(winner.runs[1].sites.front().bands[0].reason == "small grids, yet the fastest verified variant of its input");
  CHECK_FALSE(tiny_finding(winner));
}

TEST_CASE("the hardware table ranks the probes and the hardware and says whether they agree") {
  const auto same = ranked_profile({{"thresholded", 0.9, 0.8}, {"warp_aggregated", 0.5, 0.6}, {"child_per_thread", 0.3, 0.2}});
  const auto ranking = rep::rank_efficiencies(same);
  REQUIRE(ranking.size() == 1u);
  const auto& g = ranking[0];
  CHECK(g.algorithm == "loop_to_child");
  REQUIRE(g.rows.size() == 4u);
  CHECK_FALSE(g.rows[0].probes.has_value());  // the untraced baseline: hardware only
  CHECK(g.rows[0].hardware_rank == std::optional<int>(3));  // 0.25 ranks above child_per_thread's 0.2
  CHECK(g.rows[1].probe_rank == std::optional<int>(1));
  CHECK(g.rows[3].probe_rank == std::optional<int>(3));
  CHECK(g.rows[3].hardware_rank == std::optional<int>(4));
  CHECK(g.compared == 3u);
  CHECK(g.agree);
  REQUIRE(g.spearman.has_value());
  CHECK(*g.spearman == doctest::Approx(1.0));
  CHECK(g.verdict == "Same order: the probes and the hardware rank the 3 variants with both warp efficiencies alike "
                     "(Spearman 1.00).");
  const std::string html = section_of(rep::render_html({same}), "hardware");
  REQUIRE_FALSE(html.empty());
  CHECK(contains(html, "6. Hardware vs probes"));
  CHECK(contains(html, "<td class=\"l\">serial_loop</td><td data-v=\"10\">10.000</td><td>-</td><td>-</td>"
                       "<td>0.250</td><td>3</td>"));
  CHECK(contains(html, "<td class=\"l\">thresholded</td><td data-v=\"2\">2.000</td><td>0.900</td><td>1</td>"
                       "<td>0.800</td><td>1</td>"));
  CHECK(contains(html, g.verdict));

  // warp_aggregated first by the hardware, second by the probes
  const auto differ = ranked_profile({{"thresholded", 0.9, 0.8}, {"warp_aggregated", 0.5, 0.9}, {"child_per_thread", 0.3, 0.2}});
  const auto d = rep::analyze(differ).efficiency;
  REQUIRE(d.size() == 1u);
  CHECK_FALSE(d[0].agree);
  REQUIRE(d[0].spearman.has_value());
  CHECK(*d[0].spearman == doctest::Approx(0.5));  // 1 - 6 * (1 + 1) / (3 * 8)
  CHECK(d[0].discordant == 1u);
  CHECK(d[0].verdict == "The rankings differ at thresholded (probes 1, hardware 2), warp_aggregated (probes 2, hardware 1)"
                        " (ranks among the 3 with both); ordered differently beyond 0.05: thresholded / warp_aggregated;"
                        " Spearman 0.50.");
  CHECK(contains(section_of(rep::render_html({differ}), "hardware"), "The rankings differ at thresholded"));
}

TEST_CASE("the hardware table calls rankings that differ only among near-ties the same order but for them") {
  // the hardware puts child_per_thread and thresholded within 0.02 (a near-tie), the probes 0.17
  // apart; every other pair is ordered alike (as BFS's profile on an H200 ranked them)
  const auto near = ranked_profile({{"child_per_thread", 0.13, 0.53}, {"thresholded", 0.30, 0.51}, {"warp_aggregated", 0.99, 0.84}});
  const auto g = rep::analyze(near).efficiency;
  REQUIRE(g.size() == 1u);
  CHECK_FALSE(g[0].agree);
  CHECK(g[0].discordant == 0u);
  CHECK(g[0].verdict == "Same order but for near-ties: the ranks differ at child_per_thread (probes 3, hardware 2), "
                        "thresholded (probes 2, hardware 3) (ranks among the 3 with both), but no two variants that both "
                        "efficiencies separate by 0.05 or more are ordered differently; Spearman 0.50.");
  // the same pair 0.06 apart by the hardware is ordered differently beyond the tolerance
  const auto far = ranked_profile({{"child_per_thread", 0.13, 0.57}, {"thresholded", 0.30, 0.51}, {"warp_aggregated", 0.99, 0.84}});
  const auto f = rep::analyze(far).efficiency;
  REQUIRE(f.size() == 1u);
  CHECK(f[0].discordant == 1u);
  CHECK(contains(f[0].verdict, "ordered differently beyond 0.05: child_per_thread / thresholded"));
}

TEST_CASE("each CTA accounting verdict is worded and the missing and extra ones are problem findings") {
  struct verdict_case {
    schema::cta_accounting counts;
    schema::accounting_status status;
    std::string verdict;
    bool problem;
  };
  // hardware CTAs and threads; host grids, blocks and threads; child grids, blocks and threads; transfers
  const std::vector<verdict_case> cases = {
      {{73, 73 * 256, 1, 64, 64 * 256, 9, 9, 9 * 256, 0}, schema::accounting_status::exact,
       "every child grid accounted for", false},
      {{71, 2337, 1, 1, 128, 64, 64, 64 * 32, 0}, schema::accounting_status::device_runtime,
       "every child grid accounted for; 6 more CTAs are the CUDA device runtime's own (161 threads, 1 to 32 per CTA)",
       false},
      {{70, 2676, 1, 1, 128, 64, 64, 64 * 32, 3}, schema::accounting_status::driver_transfers,
       "every child grid accounted for; 5 more CTAs beside the run's 3 copies and memsets (the driver's kernels for "
       "some)",
       false},
      {{60, 2000, 1, 1, 128, 64, 64, 64 * 32, 0}, schema::accounting_status::missing_ctas,
       "5 child blocks the trace counts never ran on the GPU", true},
      {{65, 2000, 1, 1, 128, 64, 64, 64 * 32, 0}, schema::accounting_status::missing_ctas,
       "176 child threads the trace counts never ran on the GPU", true},  // the CTAs balance, the threads do not
      {{1100, 1100 * 128, 1, 1024, 1024 * 128, 0, 0, 0, 0}, schema::accounting_status::extra_ctas,
       "76 CTAs that no launch accounts for", true},
      {{1025, 1025 * 128, 1, 1024, 1024 * 128, 0, 0, 0, 0}, schema::accounting_status::extra_ctas,
       "1 CTA that no launch accounts for", true},
  };
  for (const auto& c : cases) {
    CAPTURE(c.verdict);
    const auto a = rep::analyze_accounting(c.counts);
    CHECK(a.status == c.status);
    CHECK(a.verdict == c.verdict);
    CHECK(a.problem() == c.problem);
    // the same accounting on the collected run: its finding and its row
    auto p = collected_profile();
    p.runs[1].hardware->accounting = c.counts;
    const auto analysis = rep::analyze(p);
    REQUIRE(analysis.runs[1].accounting.has_value());
    const auto found = std::find_if(analysis.findings.begin(), analysis.findings.end(), [&](const rep::finding& f) {
      return contains(f.text, c.verdict);
    });
    REQUIRE(found != analysis.findings.end());
    CHECK(found->level == (c.problem ? rep::severity::problem : rep::severity::info));
    CHECK(contains(found->text, "child_per_thread (power_law:1000): the hardware ran " + grouped(c.counts.hardware_ctas) +
                                    " CTAs for " + grouped(c.counts.host_blocks) + " host blocks and " +
                                    grouped(c.counts.child_blocks) + " traced child blocks: " + c.verdict + "."));
    const std::string html = section_of(rep::render_html({p}), "accounting");
    CHECK(contains(html, "<td>" + grouped(c.counts.hardware_ctas) + "</td><td>" + grouped(c.counts.host_blocks) + " (" +
                             grouped(c.counts.host_grids) + ")</td><td>" + grouped(c.counts.child_blocks) + " (" +
                             grouped(c.counts.child_grids) + ")</td>"));
    CHECK(contains(html, std::string("<span class=\"badge ") + (c.problem ? "bad" : "ok") + "\">"));
  }
}
