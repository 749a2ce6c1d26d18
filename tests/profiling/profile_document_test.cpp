// The trace's summary and JSON, and the profile document that holds them: a constructed
// snapshot's sums, its sites, histograms, errors and records in JSON; the document written whole
// or not at all (a bad path named, no temporary left behind), with input names that are not valid
// UTF-8, and with every run's host activity.

#include <doctest/doctest.h>

#include <cdpkit/error.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/report/profile.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

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
  CHECK(back["schema"] == cdpkit::schema::profile_schema);
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
  run.variant = "serial_loop";
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
