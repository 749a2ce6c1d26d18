// Host-only behaviour: workload generators, policy names, the cost model, trace summaries and the
// profile JSON. These run everywhere, CI included.

#include <doctest/doctest.h>

#include <cdpkit/error.hpp>
#include <cdpkit/bfs/sites.hpp>
#include <cdpkit/quadtree/sites.hpp>
#include <cdpkit/tree/sites.hpp>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/harness/segment_workload.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/loop_to_child/threshold_rule.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/collect.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/report/profile.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {

std::vector<std::uint32_t> lengths_of(const std::vector<std::uint32_t>& offsets) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) out.push_back(offsets[i + 1] - offsets[i]);
  return out;
}

}  // namespace

TEST_CASE("segment generators are deterministic and have the requested shape") {
  cdpkit::harness::segment_params p;
  p.num_segments = 100000;
  SUBCASE("power law") {
    p.dist = cdpkit::harness::segment_dist::power_law;
    const auto a = cdpkit::harness::make_segment_offsets(p);
    CHECK(a == cdpkit::harness::make_segment_offsets(p));
    const auto len = lengths_of(a);
    REQUIRE(len.size() == p.num_segments);
    std::size_t ones = 0, big = 0;
    for (auto l : len) {
      CHECK(l >= 1);
      CHECK(l <= p.max_len);
      ones += l == 1;
      big += l > 1000;
    }
    // P(1) = 1 / zeta(2) ~ 0.61 for alpha = 2; P(> 1000) ~ 0.0006
    CHECK(ones == doctest::Approx(0.61 * p.num_segments).epsilon(0.02));
    CHECK(big > 10);
    CHECK(big < 200);
    p.seed = 43;
    CHECK(a != cdpkit::harness::make_segment_offsets(p));
  }
  SUBCASE("giant") {
    p.dist = cdpkit::harness::segment_dist::giant;
    p.giant_len = 12345;
    const auto len = lengths_of(cdpkit::harness::make_segment_offsets(p));
    CHECK(len[p.num_segments / 2] == 12345u);
    CHECK(*std::max_element(len.begin(), len.begin() + p.num_segments / 2) <= 3u);
  }
  SUBCASE("empty and equal") {
    p.dist = cdpkit::harness::segment_dist::empty;
    CHECK(cdpkit::harness::make_segment_offsets(p).back() == 0u);
    p.dist = cdpkit::harness::segment_dist::equal;
    p.equal_len = 7;
    CHECK(cdpkit::harness::make_segment_offsets(p).back() == 700000u);
  }
  SUBCASE("uniform") {
    p.dist = cdpkit::harness::segment_dist::uniform;
    p.mean_len = 10;
    const auto offsets = cdpkit::harness::make_segment_offsets(p);
    CHECK(offsets.back() == doctest::Approx(10.0 * p.num_segments).epsilon(0.02));
  }
  SUBCASE("zero segments") {
    p.num_segments = 0;
    CHECK(cdpkit::harness::make_segment_offsets(p) == std::vector<std::uint32_t>{0});
  }
}

TEST_CASE("segment generators reject bad parameters and oversized totals") {
  cdpkit::harness::segment_params p;
  p.alpha = 1.0;
  CHECK_THROWS_WITH_AS(cdpkit::harness::make_segment_offsets(p), doctest::Contains("alpha"),
                       cdpkit::input_error);
  p = {};
  p.dist = cdpkit::harness::segment_dist::equal;
  p.num_segments = 1u << 20;
  p.equal_len = 1u << 13;  // 2^33 items
  CHECK_THROWS_WITH_AS(cdpkit::harness::make_segment_offsets(p), doctest::Contains("2^32-1 items"),
                       cdpkit::input_error);
}

TEST_CASE("policy and stream names round-trip and unknown names list the choices") {
  for (auto k : cdpkit::all_loop_policy_kinds())
    CHECK(cdpkit::parse_loop_policy_kind(cdpkit::to_string(k)) == k);
  for (auto d : cdpkit::harness::all_segment_dists())
    CHECK(cdpkit::harness::parse_segment_dist(cdpkit::harness::to_string(d)) == d);
  CHECK(cdpkit::parse_stream_kind("tail") == cdpkit::stream_kind::tail);
  CHECK_THROWS_WITH_AS(cdpkit::parse_loop_policy_kind("fastest"),
                       doctest::Contains("unknown loop policy 'fastest' (choose one of: serial_loop"),
                       cdpkit::input_error);
  CHECK_THROWS_AS(cdpkit::parse_stream_kind(""), cdpkit::input_error);
}

TEST_CASE("the cost model threshold is the launch cost over the serial item cost") {
  cdpkit::launch_cost_model m;
  m.serial_item_ns = 2.0;
  CHECK(m.threshold(cdpkit::stream_kind::fire_and_forget) == 550u);
  CHECK(m.threshold(cdpkit::stream_kind::tail) == 4950u);
  m.serial_item_ns = 0.0;
  CHECK_THROWS_AS((void)m.threshold(cdpkit::stream_kind::tail), cdpkit::input_error);
  m.serial_item_ns = 2.0;
  CHECK(m.threshold(cdpkit::stream_kind::fire_and_forget, 32) == 32u * 550u);
  CHECK_THROWS_AS((void)m.threshold(cdpkit::stream_kind::tail, 0), cdpkit::input_error);
  CHECK(cdpkit::loop_policy::child_per_thread().cost_model_threshold() == 0u);
  // of(kind, T, stream) is the kind's factory: T = 0 for child_per_thread, none without launches
  using cdpkit::loop_policy_kind;
  CHECK(cdpkit::loop_policy::of(loop_policy_kind::child_per_thread, 99u).threshold == 0u);
  CHECK(cdpkit::loop_policy::of(loop_policy_kind::thresholded, 99u).threshold == 99u);
  CHECK(cdpkit::loop_policy::of(loop_policy_kind::block_aggregated).auto_threshold());
  CHECK_FALSE(cdpkit::loop_policy::of(loop_policy_kind::serial_loop, 99u).threshold.has_value());
  CHECK_FALSE(cdpkit::loop_policy::of(loop_policy_kind::flat_balanced, 99u).threshold.has_value());
  CHECK(cdpkit::loop_policy::of(loop_policy_kind::warp_aggregated, 5u, cdpkit::stream_kind::named_per_thread).stream ==
        cdpkit::stream_kind::named_per_thread);
  CHECK_FALSE(cdpkit::loop_policy::child_per_thread().auto_threshold());
  CHECK_FALSE(cdpkit::loop_policy::thresholded(77).auto_threshold());
  auto p = cdpkit::loop_policy::thresholded();
  CHECK(p.auto_threshold());
  CHECK(p.cost_model_threshold() == p.cost_model.threshold(p.stream));
  p.kind = cdpkit::loop_policy_kind::block_aggregated;
  CHECK(p.loop_lanes() == 256u);
  CHECK(p.cost_model_threshold() == p.cost_model.threshold(p.stream, 256));
  CHECK_FALSE(cdpkit::loop_policy::flat_balanced().uses_cdp());
  CHECK(cdpkit::loop_policy::warp_aggregated().uses_cdp());
}

TEST_CASE("site names cover library sites and registered user sites") {
  CHECK(cdpkit::sites::site_name(cdpkit::sites::l2c_thresholded) == "loop_to_child.thresholded");
  CHECK(cdpkit::sites::site_name(40) == "site.40");
  cdpkit::sites::set_site_name(40, "my.kernel");
  CHECK(cdpkit::sites::site_name(40) == "my.kernel");
  CHECK_THROWS_AS(cdpkit::sites::set_site_name(3, "taken"), cdpkit::input_error);
  CHECK_THROWS_AS(cdpkit::sites::set_site_name(64, "too far"), cdpkit::input_error);
}

TEST_CASE("each area registers its own site names, with the ids and names of the profiles") {
  namespace sites = cdpkit::sites;
  // the numeric ids are in profiles: they never change
  struct expected {
    std::uint16_t id;
    int value;
    const char* name;
  };
  for (const auto& e : {expected{sites::root, 0, "root"},
                        expected{sites::l2c_child_per_thread, 1, "loop_to_child.child_per_thread"},
                        expected{sites::l2c_thresholded, 2, "loop_to_child.thresholded"},
                        expected{sites::l2c_warp_aggregated, 3, "loop_to_child.warp_aggregated"},
                        expected{sites::l2c_block_aggregated, 4, "loop_to_child.block_aggregated"},
                        expected{sites::l2c_serial_items, 8, "loop_to_child.serial_items"},
                        expected{sites::l2c_inline_items, 9, "loop_to_child.inline_items"},
                        expected{sites::l2c_child_items, 10, "loop_to_child.child_items"},
                        expected{sites::l2c_cooperative_items, 11, "loop_to_child.cooperative_items"},
                        expected{sites::l2c_flat_items, 12, "loop_to_child.flat_items"},
                        expected{sites::bfs_neighbors, 16, "bfs.neighbors"},
                        expected{sites::bfs_level, 17, "bfs.level"},
                        expected{sites::bfs_driver, 18, "bfs.driver"},
                        expected{sites::quadtree_nodes, 5, "quadtree.nodes"},
                        expected{sites::quadtree_wide, 6, "quadtree.wide"},
                        expected{sites::quadtree_wide_scatter, 7, "quadtree.wide_scatter"},
                        expected{sites::quadtree_level, 30, "quadtree.level"},
                        expected{sites::tree_children, 13, "tree.children"},
                        expected{sites::tree_level, 14, "tree.level"},
                        expected{sites::tree_driver, 15, "tree.driver"},
                        expected{sites::tree_walk, 19, "tree.walk"},
                        expected{sites::tree_child_nodes, 27, "tree.child_nodes"},
                        expected{sites::tree_combine, 31, "tree.combine"}}) {
    CAPTURE(e.name);
    CHECK(e.id == e.value);
    CHECK(sites::site_name(e.id) == e.name);
  }
  CHECK(sites::first_user_site == 32);
  CHECK(sites::site_name(63) == "site.63");  // a user id no one named
  // registration is idempotent; an id claimed under another name, or a user id, is refused
  cdpkit::loop_to_child::register_site_names();
  cdpkit::bfs_sites::register_site_names();
  CHECK(sites::site_name(sites::bfs_level) == "bfs.level");
  const sites::site_name_entry clash[] = {{sites::l2c_thresholded, "other.thresholded"}};
  CHECK_THROWS_AS(sites::register_library_sites(clash), cdpkit::input_error);
  const sites::site_name_entry user[] = {{sites::first_user_site, "library.too_far"}};
  CHECK_THROWS_AS(sites::register_library_sites(user), cdpkit::input_error);
  CHECK(sites::site_name(sites::l2c_thresholded) == "loop_to_child.thresholded");
}

namespace {

/// A snapshot as the device would leave it after 10 launches at thresholded (3 of them tiny),
/// 2 budget fallbacks and 1 failed launch, plus a probed site.
cdpkit::trace_snapshot constructed_snapshot() {
  cdpkit::trace_snapshot s;
  s.sites.resize(cdpkit::trace_limits::max_sites);
  auto& c = s.sites[cdpkit::sites::l2c_thresholded];
  c.requests = 13;
  c.outcomes[0] = 10;
  c.outcomes[1] = 2;
  c.outcomes[3] = 1;
  c.tiny_launches = 3;
  c.error_code[0] = 69;
  c.error_count[0] = 1;
  c.child_threads = 10 * 256;
  c.threads_log2[8] = 10;
  c.depth_hist[1] = 10;
  c.max_depth = 1;
  auto& p = s.sites[cdpkit::sites::l2c_serial_items];
  p.probe_steps = 100;
  p.probe_active_lanes = 1600;  // half the lanes on average
  p.probe_warps = 4;
  p.efficiency_sum = 4 * 0.5;
  p.lanes_hist[16] = 100;
  s.totals.records_requested = 13;
  s.totals.pending_high_water = 9;
  s.pending_launch_limit = 2048;
  s.pending_budget = 2048;
  s.max_depth = 24;
  s.records.push_back({1000, 0, cdpkit::no_record, 1, 256, 300, 2, 1, 0, 0, 0, cdpkit::no_time_start, cdpkit::no_time_end});
  s.records.push_back({1500, 1, 0, 1, 256, 5, 2, 2, 0, 3, 69, cdpkit::no_time_start, cdpkit::no_time_end});
  return s;
}

}  // namespace

TEST_CASE("summaries add up the sites of a constructed trace") {
  const auto s = cdpkit::profiling::summarize(constructed_snapshot());
  CHECK(s.launch_requests == 13u);
  CHECK(s.child_launches == 10u);
  CHECK(s.fallbacks == 3u);
  CHECK(s.failed_launches == 1u);
  CHECK(s.tiny_grid_share == doctest::Approx(0.3));
  CHECK(s.max_depth == 1u);
  CHECK(s.pending_high_water == 9u);
  CHECK(s.warp_efficiency == doctest::Approx(0.5));
  CHECK(s.mean_warp_efficiency == doctest::Approx(0.5));
  const auto empty = cdpkit::profiling::summarize(cdpkit::trace_snapshot{});
  CHECK(empty.warp_efficiency < 0);
  CHECK(empty.tiny_grid_share == 0.0);
}

TEST_CASE("trace JSON lists active sites with names histograms errors and records") {
  const auto j = cdpkit::profiling::trace_json(constructed_snapshot());
  REQUIRE(j["sites"].size() == 2);
  const auto& site = j["sites"][0];
  CHECK(site["name"] == "loop_to_child.thresholded");
  CHECK(site["outcomes"]["launched"] == 10);
  CHECK(site["outcomes"]["fallback_budget"] == 2);
  CHECK(site["failed_by_error"][0]["code"] == 69);
  CHECK(site["failed_by_error"][0]["name"] == "cudaErrorLaunchPendingCountExceeded");
  CHECK(site["threads_log2"].size() == cdpkit::trace_limits::log2_buckets);
  CHECK(site["threads_log2"][8] == 10);
  CHECK(j["sites"][1]["probe"]["lanes_hist"].size() == 32);
  CHECK(j["sites"][1]["probe"]["lanes_hist"][15] == 100);  // 16 active lanes
  CHECK(j["sites"][1]["probe"]["step_efficiency"] == doctest::Approx(0.5));
  CHECK(j["pending"]["high_water"] == 9);
  CHECK(j["pending"]["limit"] == 2048);
  CHECK(j["records"]["stored"] == 2);
  CHECK(j["records"]["rows"][0][1].is_null());  // no parent: launched from the root grid
  CHECK(j["records"]["rows"][1][9] == "fallback_error");
  CHECK(j["summary"]["tiny_grid_share"] == doctest::Approx(0.3));
  CHECK(cdpkit::profiling::trace_json(constructed_snapshot(), 1)["records"]["in_profile"] == 1);
}

TEST_CASE("a profile document is written whole and names a bad path") {
  cdpkit::profiling::profile_document doc("host_test", {{"name", "none"}});
  cdpkit::profiling::run_info run;
  run.algorithm = "loop_to_child";
  run.variant = "thresholded";
  run.input = "power_law:1000";
  run.ms = 1.5;
  run.checked = run.verified = true;
  doc.add_run(run, constructed_snapshot());
  doc.add_run(run);
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_host_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "profile.json").string();
  doc.write(path);
  std::ifstream in(path);
  const auto back = nlohmann::json::parse(in);
  CHECK(back["schema"] == "cdpkit-profile/4");
  CHECK(back["program"] == "host_test");
  CHECK(back["runs"].size() == 2);
  CHECK(back["runs"][0]["trace"]["sites"].size() == 2);
  CHECK(back["runs"][1]["trace"].is_null());
  CHECK(back["build"]["cuda_architectures"].is_string());
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  const auto bad = (dir / "no_such_dir" / "p.json").string();
  CHECK_THROWS_WITH_AS(doc.write(bad), doctest::Contains("no_such_dir"), cdpkit::input_error);
  CHECK_FALSE(std::filesystem::exists(bad));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a profile for an input path that is not valid UTF-8 is written with U+FFFD and read back") {
  const nlohmann::json device = {{"name", "GPU \xff"}, {"cc", "9.0"}, {"sms", 132}, {"driver", 13000},
                                 {"runtime", 13000}};
  cdpkit::profiling::profile_document doc("host_test", device);
  cdpkit::profiling::run_info run;
  run.algorithm = "bfs";
  run.variant = "vertex_loop";
  run.input = "graphs/\xff\xfe" "bad.mtx";  // a Latin-1 file name, as a user's shell passes it
  run.params = {{"file", "\xc3\x28"}};      // a truncated two-byte sequence
  run.checked = run.verified = true;
  doc.add_run(run, constructed_snapshot());
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_host_test_utf8";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto path = (dir / "profile.json").string();
  doc.write(path);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  const std::string replacement = "\xef\xbf\xbd";  // U+FFFD
  std::ifstream in(path);
  const auto back = nlohmann::json::parse(in);
  CHECK(back["runs"][0]["input"] == "graphs/" + replacement + replacement + "bad.mtx");
  CHECK(back["runs"][0]["params"]["file"] == replacement + "(");
  CHECK(back["device"]["name"] == "GPU " + replacement);
  // and the report tool reads it like any other profile
  const auto p = cdpkit::report::load_profile(path);
  REQUIRE(p.runs.size() == 1u);
  CHECK(p.runs[0].input == "graphs/" + replacement + replacement + "bad.mtx");
  CHECK(p.runs[0].trace.has_value());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a profile's host activity holds every run's kernels and transfers, tagged with the run") {
  cdpkit::profiling::profile_document doc("host_test", {{"name", "none"}});
  cdpkit::profiling::run_info run;
  run.algorithm = "loop_to_child";
  const auto collected = [](const std::string& kernel, std::uint64_t t) {
    cdpkit::profiling::run_collected c;
    cdpkit::profiling::host_activity_log log;
    log.kernels.push_back({kernel, t, t + 10, 4, 128, 7, 1});
    log.transfers.push_back({"HtoD", t + 20, t + 30, 4096, 7});
    log.dropped = 1;
    c.host = log;
    return c;
  };
  run.variant = "serial_loop";
  doc.add_run(run, std::nullopt, collected("serial", 100));
  run.variant = "no_collection";
  doc.add_run(run);
  run.variant = "flat_balanced";
  doc.add_run(run, std::nullopt, collected("flat", 200));
  const auto& a = doc.json()["host_activity"];
  REQUIRE(a["kernels"].size() == 2u);
  CHECK(a["kernels"][0][0] == 0);  // run ids
  CHECK(a["kernels"][1][0] == 2);
  CHECK(a["transfers"].size() == 2u);
  CHECK(a["dropped"] == 2);
  run.variant = "later";  // a run added after the document was read shows in the next read
  doc.add_run(run, std::nullopt, collected("later", 300));
  CHECK(doc.json()["host_activity"]["kernels"].size() == 3u);
  CHECK(doc.json()["host_activity"]["kernel_names"].size() == 3u);
}

TEST_CASE("a profile write that fails names the path and leaves no temporary file") {
  cdpkit::profiling::profile_document doc("host_test", {{"name", "none"}});
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_host_test_fail";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "taken" / "inside");
  const auto taken = (dir / "taken").string();  // a directory: the rename into place fails
  CHECK_THROWS_WITH_AS(doc.write(taken), doctest::Contains(taken.c_str()), cdpkit::input_error);
  CHECK_FALSE(std::filesystem::exists(taken + ".tmp"));
  CHECK(std::filesystem::is_directory(taken));  // what was there is untouched
  CHECK_THROWS_WITH_AS(cdpkit::harness::write_json_file(doc.json(), ""), "empty output path", cdpkit::input_error);
  const auto missing = (dir / "missing" / "p.json").string();
  CHECK_THROWS_WITH_AS(cdpkit::harness::write_json_file(doc.json(), missing), doctest::Contains(missing.c_str()),
                       cdpkit::input_error);
  std::size_t left = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) left += entry.path().extension() == ".tmp";
  CHECK(left == 0u);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the balanced threshold rule weighs the launch path against the longest inline loop") {
  std::uint64_t hist[33] = {};
  SUBCASE("many short lists launch nothing") {
    hist[2] = 500;  // 500 lists of 4..7 items: 500 launches cost far more than a 7-item loop
    CHECK(cdpkit::balanced_threshold(hist, 33, 808.0, 1100.0, 1024) >= 7u);
  }
  SUBCASE("one giant among tiny lists launches only the giant") {
    hist[0] = 100000;
    hist[1] = 100000;
    hist[20] = 1;
    const auto t = cdpkit::balanced_threshold(hist, 33, 345.0, 1100.0, 1024);
    CHECK(t >= 3u);
    CHECK(t < (1u << 20));
  }
  SUBCASE("a power law settles where launches and loops balance") {
    for (int b = 0; b < 16; ++b) hist[b] = 1ull << (20 - b);  // halving per bucket
    // makespan at T = 2^b - 1: launches of buckets >= b vs the loop over the top of bucket b - 1
    const auto makespan = [&](int b) {
      std::uint64_t launches = 0;
      for (int k = b; k < 33; ++k) launches += hist[k];
      return std::max(launches * 1100.0, b == 0 ? 0.0 : ((2.0 * (1u << (b - 1))) - 1) * 345.0);
    };
    const auto t = cdpkit::balanced_threshold(hist, 33, 345.0, 1100.0, 1u << 20);
    int b = 0;
    while (b < 32 && (1u << b) - 1u != t) ++b;
    CAPTURE(t);
    REQUIRE(b < 32);
    CHECK(makespan(b) <= makespan(b - 1));
    CHECK(makespan(b) <= makespan(b + 1));
    CHECK(t > 64u);
  }
  SUBCASE("the budget caps the launches") {
    hist[12] = 5000;
    CHECK(cdpkit::balanced_threshold(hist, 33, 345.0, 1.0, 1000) >= 8191u);
  }
}

TEST_CASE("the collector table shows probe and hardware efficiency, the accounting in words and the overheads") {
  namespace schema = cdpkit::schema;
  using cdpkit::harness::accounting_text;
  CHECK(accounting_text({100, 3200, 1, 100, 3200, 0, 0, 0, 0}) == "exact");
  CHECK(accounting_text({71, 2337, 1, 1, 128, 64, 64, 2048, 0}) == "+6 runtime");
  CHECK(accounting_text({71, 2337, 1, 1, 128, 64, 64, 2048, 2}) == "+6 copies");
  CHECK(accounting_text({60, 2000, 1, 1, 128, 64, 64, 2048, 0}) == "-5 missing!");
  CHECK(accounting_text({65, 2000, 1, 1, 128, 64, 64, 2048, 0}) == "-176 threads missing!");
  CHECK(accounting_text({80, 80 * 512, 1, 1, 128, 64, 64, 2048, 0}) == "+15 unaccounted!");

  cdpkit::harness::measurement m;
  m.time.median_ms = 2.0;
  m.summary.warp_efficiency = 0.5;
  schema::hardware_profile h;
  h.metrics = {{"smsp__inst_executed.sum", 100.0}, {"smsp__thread_inst_executed.sum", 1600.0}};
  h.accounting = schema::cta_accounting{71, 2337, 1, 1, 128, 64, 64, 2048, 0};
  m.collected.hardware = h;
  schema::timeline_profile t;
  t.interval_ns = 20000;
  t.metrics = cdpkit::profiling::default_pm_metrics();
  t.samples = {{0, 20000, {50.0, 10.0, 1.0}}, {20000, 40000, {0.0, 0.0, 0.0}}};
  m.collected.timeline = t;
  m.collected.times.traced_ms = 2.1;  // no baseline: over the timed median
  m.collected.times.metrics_ms = 3.0;
  setenv("CUDA_INJECTION64_PATH", "/x/libToolsInjection64.so", 1);  // metrics and timeline stand aside
  cdpkit::profiling::collector c(cdpkit::profiling::parse_collect("all"), /*quiet=*/true);
  unsetenv("CUDA_INJECTION64_PATH");
  std::ostringstream out;
  cdpkit::harness::print_collected(out, {{"thresholded", &m}}, c);
  const std::string text = out.str();
  CAPTURE(text);
  CHECK(text.find("Collected (CUPTI):") != std::string::npos);
  CHECK(text.find("thresholded") != std::string::npos);
  CHECK(text.find("0.500") != std::string::npos);       // probes
  CHECK(text.find("+6 runtime") != std::string::npos);  // accounting
  CHECK(text.find("25.0") != std::string::npos);        // SM active: (50 + 0) / 2
  CHECK(text.find("1.05x") != std::string::npos);       // traced run 2.1 ms over 2.0
  CHECK(text.find("1.50x") != std::string::npos);       // measured run 3.0 ms over 2.0
  CHECK(text.find("collector: metrics and timeline: Nsight Systems or Nsight Compute") != std::string::npos);
  // with a baseline (untraced runs made as the collection runs are), over it
  m.collected.times.baseline_ms = 2.5;
  std::ostringstream based;
  cdpkit::harness::print_collected(based, {{"thresholded", &m}}, c);
  CAPTURE(based.str());
  CHECK(based.str().find("0.84x") != std::string::npos);  // 2.1 over 2.5
  CHECK(based.str().find("1.20x") != std::string::npos);  // 3.0 over 2.5
  CHECK(based.str().find("\nwhole sample") == std::string::npos);  // one variant: no sum row
  // two variants: the whole sample's row sums each part's runs over the same runs' baselines
  cdpkit::harness::measurement slow = m;
  slow.collected.times = {};  // traced only, 10.5 ms over 10
  slow.collected.times.traced_ms = 10.5;
  slow.collected.times.baseline_ms = 10.0;
  std::ostringstream both;
  cdpkit::harness::print_collected(both, {{"thresholded", &m}, {"serial_loop", &slow}}, c);
  CAPTURE(both.str());
  const auto sum_row = both.str().find("\nwhole sample");
  REQUIRE(sum_row != std::string::npos);
  const std::string row = both.str().substr(sum_row + 1, both.str().find('\n', sum_row + 1) - sum_row - 1);
  CHECK(row.find("1.01x") != std::string::npos);  // traced: (2.1 + 10.5) / (2.5 + 10)
  CHECK(row.find("1.20x") != std::string::npos);  // measured: 3.0 over 2.5, the one run with it
}
