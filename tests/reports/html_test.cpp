// The HTML report: self-contained, with every section and each section's own numbers (on a
// constructed profile and on the committed H200 fixture), small for a million records, the
// hardware's sections where a profile was collected (SM activity, collection overhead) and not
// where it was not, and pictures shown as images, never as markup of the page.

#include <doctest/doctest.h>

#include "profiles.hpp"
#include "report_checks.hpp"

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/html.hpp>
#include <cdpkit/report/profile.hpp>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace cdpkit_test;

TEST_CASE("the HTML report is self-contained and has every section") {
  const auto p = rep::parse_profile(valid_profile().dump(), "p.json");
  const std::string html = rep::render_html({p, p});
  for (const char* section : {"1. Summary", "2. Child grids", "3. Launch tree", "4. Pending launches",
                              "5. Divergence", "6. Findings", "7. Comparison"})
    CHECK(html.find(section) != std::string::npos);
  CHECK(html.find("0.25x serial_loop") != std::string::npos);  // ratio to the baseline
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("src=\"http") == std::string::npos);
  CHECK(html.find("href=\"http") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("cudaErrorLaunchPendingCountExceeded (69): 10") != std::string::npos);
}

TEST_CASE("the real H200 fixture renders with its figures") {
  const auto p = rep::load_profile(CDPKIT_TEST_FIXTURES "/profile_h200.json");
  const std::string html = rep::render_html({p});
  CHECK(html.find("NVIDIA H200") != std::string::npos);
  CHECK(html.find("loop_to_child.child_per_thread") != std::string::npos);
  std::string all;
  for (const auto& f : rep::findings(p)) all += f.text + "\n";
  CHECK(all.find("98% of the 2,143 child grids launched at loop_to_child.child_per_thread") != std::string::npos);
}

TEST_CASE("each section of the HTML report holds its own numbers") {
  const auto p = rep::parse_profile(valid_profile().dump(), "p.json");
  auto faster = valid_profile();
  faster["runs"][1]["ms"] = 20.0;
  const auto q = rep::parse_profile(faster.dump(), "q.json");
  const std::string html = rep::render_html({p, q});
  const std::string glance = section_of(html, "glance"), summary = section_of(html, "summary"),
                    grids = section_of(html, "child-grids"), tree = section_of(html, "launch-tree"),
                    pending = section_of(html, "pending"), divergence = section_of(html, "divergence"),
                    findings = section_of(html, "findings"), comparison = section_of(html, "comparison");
  for (const auto* s : {&glance, &summary, &grids, &tree, &pending, &divergence, &findings, &comparison})
    REQUIRE_FALSE(s->empty());

  // At a glance: the top findings, with their numbers
  CHECK(contains(glance, "91% of the 100 child grids launched at bfs.neighbors"));
  CHECK(contains(glance, "pending launches reached 2,048 of 2,048"));

  // 1. Summary: device, both runs with ms, throughput (work / ms / 1e6), ratio, launches, checks
  CHECK(contains(summary, "<h3>p.json</h3>"));
  CHECK(contains(summary, "<h3>q.json</h3>"));
  CHECK(contains(summary, "NVIDIA H200 (cc 9.0, 132 SMs)"));
  CHECK(contains(summary, "13000 / 13000"));
  CHECK(contains(summary, "version 0.1.0"));
  CHECK(contains(summary, "test, 2026-11-29T00:00:00Z"));
  CHECK(contains(summary, "<td class=\"l\">serial_loop</td><td class=\"l\">rmat:10</td><td data-v=\"10\">10.000</td>"
                          "<td>0.10 Gedges/s</td><td>1.00x serial_loop</td>"));
  CHECK(contains(summary, "<td class=\"l\">child_per_thread</td><td class=\"l\">rmat:10</td><td data-v=\"40\">40.000</td>"
                          "<td>0.03 Gedges/s</td><td>0.25x serial_loop</td><td>100</td>"));
  CHECK(contains(summary, "<td data-v=\"20\">20.000</td><td>0.05 Gedges/s</td><td>0.50x serial_loop</td>"));
  CHECK(contains(summary, "<td>0.125</td>"));  // 4,000 active lanes over 1,000 steps of 32
  CHECK(contains(summary, ">pass</span>"));
  CHECK_FALSE(contains(summary, "pending high water"));

  // 2. Child grids: the launching site, its outcomes, three charts and the band table
  CHECK(contains(grids, "<h3>bfs · child_per_thread · rmat:10</h3>"));
  CHECK(contains(grids, "<b>bfs.neighbors</b>: 140 requests, 100 launched, 40 done inline."));
  for (const char* chart : {"work items per child grid", "blocks per child grid", "threads per child grid"})
    CHECK(contains(grids, std::string("<title>") + chart + "</title>"));
  CHECK(contains(grids, "fewer work items than a warp has lanes (32)</td><td>91 of 100</td><td>91%</td><td>33%</td>"));
  CHECK(contains(grids, "fewer blocks than SMs (132)</td><td>100 of 100</td><td>100%</td>"));
  CHECK(contains(grids, "fewer threads than a full GPU holds (" + grouped(132 * 2048) + ")</td><td>100 of 100</td>"));
  CHECK_FALSE(contains(grids, "loop_to_child.serial_items"));  // a probe-only site launches nothing
  CHECK_FALSE(contains(grids, "serial_loop"));                   // the untraced run has no section here

  // 3. Launch tree: record 0 from the host at depth 1, records 1 and 2 from bfs.neighbors at depth 2
  CHECK(contains(tree, "<svg"));
  CHECK(contains(tree, "<td class=\"l\">host-launched grid</td><td class=\"l\">bfs.neighbors</td><td>1</td><td>1</td>"));
  CHECK(contains(tree, "<td class=\"l\">bfs.neighbors</td><td class=\"l\">bfs.neighbors</td><td>2</td><td>2</td>"));
  CHECK(contains(tree, "child grids by depth (all sites, exact)"));
  CHECK_FALSE(contains(tree, "From the first"));  // every record is in the profile

  // 4. Pending launches: the gauge and the per-site outcome table
  CHECK(contains(pending, "pending high water 2,048 of 2,048 (device limit 2,048, budget 2,048)"));
  CHECK(contains(pending, "<td class=\"l\">bfs.neighbors</td><td>140</td><td>100</td><td>30</td><td>0</td><td>10</td>"
                          "<td class=\"l\">cudaErrorLaunchPendingCountExceeded (69): 10 </td><td>400</td>"));

  // 5. Divergence: the probed site with its step and warp efficiencies, and its two charts
  CHECK(contains(divergence, "<b>loop_to_child.serial_items</b>: 1,000 probed warp steps, active lanes per step "
                             "4.0 of 32 (12%); mean per-warp efficiency 0.125 over 10 warps."));
  CHECK(contains(divergence, "<title>warp steps by active lanes</title>"));
  CHECK(contains(divergence, "<title>warps by efficiency</title>"));
  CHECK_FALSE(contains(divergence, "<b>bfs.neighbors</b>"));  // no probe steps there

  // 6. Findings: one heading per profile, every finding of each
  CHECK(contains(findings, "<h3>p.json</h3>"));
  CHECK(contains(findings, "<h3>q.json</h3>"));
  for (const auto& f : rep::findings(p)) CHECK(contains(findings, f.text));
  CHECK(contains(findings, "Fastest verified variant for bfs on rmat:10: serial_loop (10.000 ms)"));
  CHECK(contains(findings, "cudaErrorLaunchPendingCountExceeded (69)"));

  // 7. Comparison: ms per profile and the delta against the first
  CHECK(contains(comparison, "<th scope=\"col\">ms [1]</th><th scope=\"col\">ms [2]</th><th scope=\"col\">delta [2]</th>"));
  CHECK(contains(comparison, "<td class=\"l\">child_per_thread</td><td>40.000</td><td>20.000</td><td class=\"up\">-50.0%</td>"));
  CHECK(contains(comparison, "<td class=\"l\">serial_loop</td><td>10.000</td><td>10.000</td><td class=\"up\">0.0%</td>"));
  CHECK(contains(comparison, "[1] p.json [2] q.json"));
}

TEST_CASE("each section of the real H200 fixture's report lists the fixture's sites and counts") {
  const std::string path = CDPKIT_TEST_FIXTURES "/profile_h200.json";
  const auto raw = json::parse(std::ifstream(path));
  const std::string html = rep::render_html({rep::load_profile(path)});
  const std::string summary = section_of(html, "summary"), grids = section_of(html, "child-grids"),
                    pending = section_of(html, "pending"), divergence = section_of(html, "divergence"),
                    tree = section_of(html, "launch-tree");
  CHECK(contains(summary, raw["device"]["name"].get<std::string>() + " (cc " + raw["device"]["cc"].get<std::string>() +
                              ", " + std::to_string(raw["device"]["sms"].get<int>()) + " SMs)"));
  std::size_t launching_sites = 0;
  for (const auto& run : raw["runs"]) {
    CAPTURE(run["variant"]);
    CHECK(contains(summary, "<td class=\"l\">" + run["variant"].get<std::string>() + "</td>"));
    if (run["trace"].is_null()) continue;
    for (const auto& site : run["trace"]["sites"]) {
      const std::string name = site["name"].get<std::string>();
      const auto requests = site["requests"].get<std::uint64_t>();
      const auto launched = site["outcomes"]["launched"].get<std::uint64_t>();
      CAPTURE(name);
      if (requests > 0) {
        CHECK(contains(grids, "<b>" + name + "</b>: " + grouped(requests) + " requests, " + grouped(launched) +
                                  " launched, "));
        CHECK(contains(pending, "<td class=\"l\">" + name + "</td><td>" + grouped(requests) + "</td><td>" +
                                    grouped(launched) + "</td>"));
      }
      if (launched > 0) {
        ++launching_sites;
        CHECK(contains(tree, name));
      }
      if (site["probe"]["steps"].get<std::uint64_t>() > 0)
        CHECK(contains(divergence, "<b>" + name + "</b>: " + grouped(site["probe"]["steps"].get<std::uint64_t>()) +
                                       " probed warp steps"));
    }
  }
  CHECK(launching_sites > 0u);
}

TEST_CASE("a million launch records keep the report small") {
  const auto doc = valid_profile(1000000);
  const auto start = std::chrono::steady_clock::now();
  const auto p = rep::parse_profile(doc.dump(), "big.json");
  const std::string html = rep::render_html({p});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("1e6 records: parsed and rendered in " << seconds << " s, " << html.size() / 1024 << " KiB of HTML");
  CHECK(html.size() < 512u * 1024u);
}

TEST_CASE("the SM activity section shows the mean and the idle share of the samples") {
  const auto p = collected_profile();
  const auto a = rep::build_sm_activity(p.runs[1], &*p.host_activity);
  REQUIRE(a.has_value());
  CHECK(a->t0_ns == 1000u);
  CHECK(a->span_ns == 40000u);
  CHECK(a->samples == 2u);
  CHECK(a->mean_sm_active == doctest::Approx(25.0));  // 20 us at 50%, 20 us at 0%
  REQUIRE(a->mean_warps_active.has_value());
  CHECK(*a->mean_warps_active == doctest::Approx(20.0));
  CHECK(a->idle_share == doctest::Approx(0.5));
  REQUIRE(a->in_flight_sm_active.has_value());
  CHECK(*a->in_flight_sm_active == doctest::Approx(0.0));  // both child grids ran in the idle sample
  REQUIRE(a->series.size() == 2u);
  CHECK(a->series[1].start_ms == doctest::Approx(0.02));
  CHECK(a->children.windows == 2u);
  CHECK(a->children.rows == 1);  // [24, 29) and [29, 39) us: one after the other
  REQUIRE(a->children.bars.size() == 2u);
  CHECK(a->children.bars[0].start_ms == doctest::Approx(0.024));
  CHECK(a->children.bars[1].end_ms == doctest::Approx(0.039));
  CHECK(a->host_kernels.windows == 1u);  // serial_kernel belongs to run 0
  const std::string html = rep::render_html({p});
  const std::string section = section_of(html, "sm-activity");
  REQUIRE_FALSE(section.empty());
  CHECK(contains(section, "2 PM samples over 0.040 ms: SM active 25.0% on average (warps active 20.0%); SM active "
                          "below 25% for 50% of the sampled time; 0.0% while child grids ran."));
  CHECK(contains(section, "The trace's clock was not compared with CUPTI's in this run"));
  CHECK(contains(section, "<title>SM activity over time</title>"));
  {
    auto aligned = p;
    aligned.runs[1].timeline->clock_offset_ns = 412345;
    CHECK(contains(section_of(rep::render_html({aligned}), "sm-activity"),
                   "the device trace's clock read 412.3 &micro;s off it in this run."));
  }
  CHECK(contains(section, "child grids: 2 in the window"));
  CHECK(contains(section, "host kernels: 1 in the window"));
  // the CDP run's GPU was mostly idle while its child grids ran
  std::string all;
  for (const auto& f : rep::findings(p)) all += f.text + "\n";
  CHECK(contains(all, "child_per_thread (power_law:1000): tiny child grids: the GPU was mostly idle while launches "
                      "trickled in (SMs active 0.0% of the time on average while child grids ran; below 25% for 50% of "
                      "the sampled time)"));
  // the collector's notes at the top, before the first section
  const auto note = html.find("metrics: CUPTI: another profiler holds CUPTI");
  REQUIRE(note != std::string::npos);
  CHECK(note < html.find("<h2 id=\"glance\">"));
  // the collection overhead: without a baseline in the profile, each collection run over the timed 2 ms
  const std::string overhead = section_of(html, "overhead");
  CHECK(contains(overhead,
                 "<td>2.000</td><td>-</td><td>2.200 ms (1.10x)</td><td>4.000 ms (2.00x)</td><td>3.000 ms (1.50x)</td>"));
  // with one, over the untraced runs made as the collection runs were
  auto based = collected_profile();
  based.runs[1].collect.baseline_ms = 2.5;
  const auto o = rep::collection_overhead(based.runs[1]);
  CHECK(o.traced == std::optional<double>(2.2 / 2.5));
  CHECK(o.metrics == std::optional<double>(4.0 / 2.5));
  CHECK(contains(section_of(rep::render_html({based}), "overhead"),
                 "<td>2.000</td><td>2.500</td><td>2.200 ms (0.88x)</td><td>4.000 ms (1.60x)</td><td>3.000 ms (1.20x)</td>"));
  // the pairs behind the trace's overhead: their count and medians (none kept: '-')
  CHECK(contains(section_of(rep::render_html({based}), "overhead"), "<td>3.000 ms (1.20x)</td><td>-</td></tr>"));
  {
    auto paired = based;
    paired.runs[1].collect.baseline_runs_ms = {2.5, 3.5, 2.7, 2.6};
    paired.runs[1].collect.traced_runs_ms = {2.2, 2.4, 2.3, 2.9};
    CHECK(contains(section_of(rep::render_html({paired}), "overhead"),
                   "<td>3.000 ms (1.20x)</td><td>4: 2.350 / 2.650 ms</td></tr>"));
  }
  // the whole sample: each part's runs summed over the same runs' baselines summed
  {
    auto two = based;
    two.runs[0].collect.traced_ms = 12.0;  // a 10 ms run (no baseline: its timed median) traced only
    two.runs[0].ms = 10.0;
    const auto w = rep::sample_collection_overhead(two);
    CHECK(w.traced.runs == 2u);
    CHECK(w.traced.ratio() == doctest::Approx((12.0 + 2.2) / (10.0 + 2.5)));
    CHECK(w.metrics.runs == 1u);
    CHECK(w.metrics.ratio() == doctest::Approx(4.0 / 2.5));
    CHECK(contains(section_of(rep::render_html({two}), "overhead"),
                   "<tr class=\"sum\"><td class=\"l\">the whole sample (sums over its runs)</td><td>-</td><td>-</td>"
                   "<td>14.200 ms (1.14x)</td><td>4.000 ms (1.60x)</td><td>3.000 ms (1.20x)</td><td>-</td></tr>"));
    // a run without a positive time or baseline is in neither sum; a profile without collection has none
    two.runs[0].ms = 0.0;
    CHECK(rep::sample_collection_overhead(two).traced.runs == 1u);
    CHECK_FALSE(rep::sample_collection_overhead(schema::profile{}).any());
    CHECK_FALSE(rep::sample_collection_overhead(schema::profile{}).traced.ratio().has_value());
  }
  // a busy GPU: no finding
  auto busy = collected_profile();
  busy.runs[1].timeline = timeline_of({{90.0, 80.0}, {70.0, 60.0}});
  all.clear();
  for (const auto& f : rep::findings(busy)) all += f.text + "\n";
  CHECK_FALSE(contains(all, "mostly idle"));
}

TEST_CASE("the SM activity series and the strips are binned past their caps") {
  schema::run_profile r;
  r.id = 0;
  r.timeline = timeline_of(std::vector<std::pair<double, double>>(1200, {40.0, 30.0}));
  r.timeline->samples[0].values[0] = 100.0;  // the first of 1,200 samples
  const auto a = rep::build_sm_activity(r, nullptr);
  REQUIRE(a.has_value());
  CHECK(a->series.size() == rep::max_activity_points);
  CHECK(a->series[0].sm_active == doctest::Approx(70.0));  // the first bin holds two samples
  CHECK(a->mean_sm_active == doctest::Approx(40.05));
  CHECK(a->host_kernels.windows == 0u);
  // a few windows are packed into rows; thousands, or more than the rows at once, are binned
  std::vector<std::pair<std::uint64_t, std::uint64_t>> few = {{0, 10}, {5, 15}, {10, 20}};
  const auto packed = rep::pack_windows(few, 0, 100);
  CHECK(packed.rows == 2);
  CHECK(packed.bars.size() == 3u);
  CHECK(packed.density.empty());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> many;
  for (std::uint64_t k = 0; k < 3000; ++k) many.push_back({k * 10, k * 10 + 10});
  const auto binned = rep::pack_windows(many, 0, 30000, 100);
  CHECK(binned.windows == 3000u);
  CHECK(binned.bars.empty());
  REQUIRE(binned.density.size() == 100u);
  CHECK(binned.density[50] == doctest::Approx(1.0));  // one window in flight at every moment
  const auto stacked = rep::pack_windows(std::vector<std::pair<std::uint64_t, std::uint64_t>>(9, {0, 100}), 0, 100, 10);
  CHECK(stacked.bars.empty());
  CHECK(stacked.density[0] == doctest::Approx(9.0));
  CHECK(rep::pack_windows(few, 50, 100).windows == 0u);  // outside the span
}

TEST_CASE("a profile without hardware renders without the hardware sections") {
  auto uncollected = collected_profile();  // the same runs, no collector part
  for (auto& run : uncollected.runs) {
    run.hardware.reset();
    run.timeline.reset();
    run.collect = {};
  }
  uncollected.collector.reset();
  uncollected.host_activity.reset();
  const json plain = schema::profile_json(uncollected);
  for (const auto& p : {rep::parse_profile(plain.dump(), "plain.json"), rep::parse_profile(valid_profile().dump(), "p.json")}) {
    CAPTURE(p.path);
    const std::string html = rep::render_html({p});
    for (const char* id : {"hardware", "accounting", "sm-activity", "overhead"}) CHECK(section_of(html, id).empty());
    CHECK(contains(html, "6. Findings"));
    CHECK(contains(html, "7. Comparison"));
    CHECK(contains(section_of(html, "divergence"), "which was not active"));
    CHECK_FALSE(contains(html, "Collector"));
  }
}

TEST_CASE("the report of a collected profile stays self-contained") {
  const auto p = collected_profile();
  const std::string html = rep::render_html({p, p});
  for (const char* id : {"hardware", "accounting", "sm-activity", "overhead"}) CHECK_FALSE(section_of(html, id).empty());
  CHECK(contains(html, "10. Findings"));
  CHECK_FALSE(contains(html, "http://"));
  CHECK_FALSE(contains(html, "https://"));
  CHECK_FALSE(contains(html, "src=\""));
  CHECK_FALSE(contains(html, "@import"));
  CHECK_FALSE(contains(section_of(html, "divergence"), "which was not active"));
}

TEST_CASE("pictures are shown as data-URL images, never as markup of the page") {
  auto p = collected_profile();
  CHECK(section_of(rep::render_html({p}), "pictures").empty());  // none: no section
  p.pictures.push_back({"curves <1>", "<svg/>"});
  p.pictures.push_back({"with a script", "<svg><script>alert(1)</script></svg>"});
  const std::string html = rep::render_html({p});
  const std::string section = section_of(html, "pictures");
  REQUIRE_FALSE(section.empty());
  CHECK(contains(section, "src=\"data:image/svg+xml;base64,PHN2Zy8+\""));  // base64 of "<svg/>"
  CHECK(contains(section, "<figcaption>curves &lt;1&gt;</figcaption>"));
  CHECK_FALSE(contains(html, "<script>alert"));
  CHECK_FALSE(contains(html, "<svg><script>"));
  CHECK_FALSE(contains(html, "http://"));
}

TEST_CASE("every table of the report has a caption, column or row headers with a scope, and scrolls when narrow") {
  const auto full = rep::load_profile(CDPKIT_TEST_FIXTURES "/profile_h100.json");
  const auto other = rep::load_profile(CDPKIT_TEST_FIXTURES "/profile_h200.json");
  const std::string html = rep::render_html({full, other});  // two profiles: the comparison too
  const auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto at = html.find(needle); at != std::string::npos; at = html.find(needle, at + 1)) ++n;
    return n;
  };
  const std::size_t tables = count("<table");
  CHECK(tables >= 10u);  // profile and runs (twice), bands, tree, durations, pending, ranks, CTAs, cost, comparison
  CHECK(count("<div class=\"wrap\"><table") == tables);
  CHECK(count("<caption>") == tables);
  CHECK(count("<th scope=\"col\"") + count("<th scope=\"row\"") == count("<th "));
  CHECK(count("<th>") == 0u);
}

TEST_CASE("a histogram spanning more than two decades is drawn on a log scale, and says so") {
  json doc = valid_profile();
  json& probe = doc["runs"][1]["trace"]["sites"][1]["probe"];
  json lanes = zeros(32);
  lanes[0] = 4208250;  // one-lane warp steps
  lanes[31] = 32768;   // full warps: a speck on a linear axis
  probe["lanes_hist"] = lanes;
  probe["steps"] = 4208250 + 32768;
  probe["active_lanes"] = 4208250 + 32 * 32768;
  probe["step_efficiency"] = (4208250.0 + 32 * 32768.0) / (32.0 * (4208250 + 32768));
  const auto skewed = rep::parse_profile(doc.dump(), "skewed.json");
  const std::string divergence = section_of(rep::render_html({skewed}), "divergence");
  CHECK(contains(divergence, "warp steps (log scale)"));
  CHECK(contains(divergence, ">1,000,000</text>"));  // a decade tick
  // the same chart over a narrow range stays linear
  const auto plain = rep::parse_profile(valid_profile().dump(), "plain.json");
  CHECK_FALSE(contains(rep::render_html({plain}), "(log scale)"));
}

TEST_CASE("an incomplete profile's report opens with why it is incomplete") {
  auto p = collected_profile();
  CHECK(rep::render_html({p}).find("Incomplete profile") == std::string::npos);
  p.collector->incomplete = "the program was stopped by signal 2 (SIGINT)";
  const std::string html = rep::render_html({p});
  const auto banner = html.find("<b>Incomplete profile</b>");
  REQUIRE(banner != std::string::npos);
  CHECK(html.find("the program was stopped by signal 2 (SIGINT)", banner) != std::string::npos);
  CHECK(banner < html.find("<h2 id=\"glance\">"));
}

TEST_CASE("a profile of an unmodified program's grids says where its child grids come from") {
  auto p = collected_profile();
  CHECK(rep::render_html({p}).find("the children collector saw") == std::string::npos);
  p.collector->requested = {"children"};
  CHECK(rep::render_html({p}).find("or from the grids the children collector saw in an unmodified program") !=
        std::string::npos);
}
