// The report tool on the host: profile validation with located errors, the underutilized-band
// arithmetic on constructed data, findings, the HTML's sections and numbers, the Chrome trace,
// large traces, and the command line (exit codes, no partial output).

#include <doctest/doctest.h>

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/html.hpp>
#include <cdpkit/report/profile.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

using nlohmann::json;
namespace rep = cdpkit::report;

json zeros(std::size_t n) { return json(std::vector<std::uint64_t>(n, 0)); }

/// A valid site with the given work histogram (launched = its sum).
json site_json(int id, const std::string& name, const std::vector<std::pair<int, std::uint64_t>>& work) {
  json w = zeros(33), threads = zeros(33), blocks = zeros(33);
  std::uint64_t launched = 0;
  for (auto [b, n] : work) {
    w[b] = n;
    launched += n;
  }
  threads[8] = launched;  // 256-thread grids
  blocks[0] = launched;   // of one block
  json depth = zeros(64);
  depth[1] = launched;
  return {{"id", id}, {"name", name}, {"requests", launched + 40},
          {"outcomes", {{"launched", launched}, {"fallback_budget", 30}, {"fallback_depth", 0}, {"fallback_error", 10}}},
          {"failed_by_error", json::array({{{"code", 69}, {"name", "cudaErrorLaunchPendingCountExceeded"}, {"count", 10}}})},
          {"failed_other_codes", 0}, {"inline_items", 400}, {"child_threads", launched * 256},
          {"child_blocks", launched}, {"work_items", 1000}, {"tiny_launches", 0},
          {"streams", {{"fire_and_forget", launched}}}, {"threads_log2", threads}, {"blocks_log2", blocks},
          {"work_log2", w}, {"depth_hist", depth}, {"max_depth", 1},
          {"probe", {{"steps", 0}, {"active_lanes", 0}, {"lanes_hist", zeros(32)}, {"warps", 0},
                     {"efficiency_hist", zeros(32)}, {"step_efficiency", nullptr}, {"mean_warp_efficiency", nullptr}}}};
}

json probe_site(int id, const std::string& name, std::uint64_t steps, std::uint64_t active) {
  json s = site_json(id, name, {});
  s["requests"] = 0;
  s["outcomes"] = {{"launched", 0}, {"fallback_budget", 0}, {"fallback_depth", 0}, {"fallback_error", 0}};
  s["failed_by_error"] = json::array();
  json lanes = zeros(32);
  lanes[3] = steps;  // 4 active lanes
  s["probe"] = {{"steps", steps}, {"active_lanes", active}, {"lanes_hist", lanes}, {"warps", 10},
                {"efficiency_hist", zeros(32)}, {"step_efficiency", static_cast<double>(active) / (32.0 * steps)},
                {"mean_warp_efficiency", 0.125}};
  return s;
}

/// A profile: a baseline run (no trace) and a traced run whose site bfs.neighbors has 100 launches,
/// 91 of them with fewer than 32 work items (buckets 0..4), and whose pending reached the limit.
json valid_profile(std::size_t records = 3) {
  json rows = json::array();
  for (std::size_t k = 0; k < records; ++k)
    rows.push_back({k, k == 0 ? json(nullptr) : json(k - 1), 1000 + 10 * k, 16, k == 0 ? 1 : 2, 1, 256,
                    k % 2 ? 4 : 600, "fire_and_forget", "launched", 0});
  json trace = {{"pending", {{"limit", 2048}, {"budget", 2048}, {"high_water", 2048}}}, {"max_depth_limit", 24},
                {"tiny_grid_work", 32}, {"summary", json::object()},
                {"sites", json::array({site_json(16, "bfs.neighbors", {{0, 50}, {3, 30}, {4, 11}, {9, 9}}),
                                       probe_site(8, "loop_to_child.serial_items", 1000, 4000)})},
                {"records", {{"requested", records}, {"stored", records}, {"dropped", 0}, {"in_profile", records},
                             {"fields", json::array()}, {"rows", rows}}}};
  json run = {{"id", 0}, {"algorithm", "bfs"}, {"variant", "vertex_loop"}, {"input", "rmat:10"},
              {"params", json::object()}, {"ms", 10.0}, {"work", 1000000}, {"work_unit", "edges"},
              {"checked", true}, {"verified", true}, {"mismatches", 0}, {"trace", nullptr}};
  json traced = run;
  traced["id"] = 1;
  traced["variant"] = "cdp_naive";
  traced["ms"] = 40.0;
  traced["params"] = {{"serial_item_ns", 110.0}};
  traced["trace"] = trace;
  return {{"schema", "cdpkit-profile/1"}, {"program", "test"}, {"created", "2026-11-29T00:00:00Z"},
          {"device", {{"name", "NVIDIA H200"}, {"cc", "9.0"}, {"sms", 132}, {"driver", 13000}, {"runtime", 13000}}},
          {"build", {{"version", "0.1.0"}}}, {"runs", json::array({run, traced})}};
}

std::string parse_error(const json& doc) {
  try {
    (void)rep::parse_profile(doc.dump(), "p.json");
  } catch (const rep::format_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a valid profile is read into its runs sites and records") {
  const auto p = rep::parse_profile(valid_profile().dump(), "p.json");
  REQUIRE(p.runs.size() == 2);
  CHECK(p.device.sms == 132u);
  CHECK_FALSE(p.runs[0].trace.has_value());
  REQUIRE(p.runs[1].trace.has_value());
  const auto& t = *p.runs[1].trace;
  CHECK(t.sites.size() == 2);
  CHECK(t.site(16)->launched == 100u);
  CHECK(t.site(16)->failed_by_error[0].code == 69);
  CHECK(t.records.size() == 3);
  CHECK_FALSE(t.records[0].parent.has_value());
  CHECK(t.records[2].parent == 1u);
}

TEST_CASE("malformed truncated and wrong-version profiles name the file and the field") {
  CHECK(parse_error(json::array()) == "p.json: /: expected a JSON object");
  auto doc = valid_profile();
  doc["schema"] = "cdpkit-profile/2";
  CHECK(parse_error(doc) == "p.json: /schema: unsupported schema 'cdpkit-profile/2' (this tool reads cdpkit-profile/1)");
  doc = valid_profile();
  doc["runs"][1].erase("ms");
  CHECK(parse_error(doc) == "p.json: /runs/1/ms: missing");
  doc = valid_profile();
  doc["runs"][1]["trace"]["sites"][0]["threads_log2"] = json::array({1, 2});
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/sites/0/threads_log2: expected an array of 33 numbers");
  doc = valid_profile();
  doc["runs"][1]["trace"]["records"]["rows"][2][3] = "x";
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/records/rows/2/3: expected a non-negative integer");
  doc = valid_profile();
  doc["device"]["sms"] = -1;
  CHECK(parse_error(doc) == "p.json: /device/sms: expected a non-negative integer");
  const std::string text = valid_profile().dump();
  try {
    (void)rep::parse_profile(text.substr(0, text.size() / 2), "cut.json");
    FAIL("a truncated profile was accepted");
  } catch (const rep::format_error& e) {
    CHECK(std::string(e.what()).rfind("cut.json: not valid JSON", 0) == 0);
  }
  CHECK_THROWS_WITH_AS(rep::load_profile("/no/such/profile.json"), "/no/such/profile.json: cannot open",
                       rep::format_error);
}

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
  CHECK(all.find("Fastest verified variant for bfs on rmat:10: vertex_loop") != std::string::npos);
}

TEST_CASE("the HTML report is self-contained and has every section") {
  const auto p = rep::parse_profile(valid_profile().dump(), "p.json");
  const std::string html = rep::render_html({p, p});
  for (const char* section : {"1. Summary", "2. Child grids", "3. Launch tree", "4. Pending launches",
                              "5. Divergence", "6. Findings", "7. Comparison"})
    CHECK(html.find(section) != std::string::npos);
  CHECK(html.find("0.25x vertex_loop") != std::string::npos);  // ratio to the baseline
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("src=\"http") == std::string::npos);
  CHECK(html.find("href=\"http") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("cudaErrorLaunchPendingCountExceeded (69): 10") != std::string::npos);
}

TEST_CASE("the real H200 fixture renders with its figures") {
  const auto p = rep::load_profile(CDPKIT_TEST_FIXTURES "/loop_to_child_h200.json");
  const std::string html = rep::render_html({p});
  CHECK(html.find("NVIDIA H200") != std::string::npos);
  CHECK(html.find("loop_to_child.child_per_thread") != std::string::npos);
  std::string all;
  for (const auto& f : rep::findings(p)) all += f.text + "\n";
  CHECK(all.find("98% of the 2,143 child grids launched at loop_to_child.child_per_thread") != std::string::npos);
}

TEST_CASE("the Chrome trace has a slice per record and a flow per parent link") {
  const auto p = rep::parse_profile(valid_profile(5).dump(), "p.json");
  const auto trace = json::parse(rep::render_chrome_trace({p}));
  std::size_t slices = 0, flows = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++slices;
    if (e["ph"] == "s") ++flows;
  }
  CHECK(slices == 5u);
  CHECK(flows == 4u);
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

TEST_CASE("the command line rejects a bad profile with exit code 2 and leaves no output") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_cli";
  std::filesystem::create_directories(dir);
  const auto bad = dir / "bad.json", out = dir / "out.html", good = dir / "good.json";
  {
    std::ofstream(bad) << "{\"schema\": \"cdpkit-profile/1\", \"runs\": [";
    std::ofstream(good) << valid_profile().dump();
  }
  const std::string tool = CDPKIT_REPORT_EXE;
  const int rc = std::system((tool + " " + bad.string() + " -o " + out.string() + " 2>/dev/null").c_str());
  CHECK(WEXITSTATUS(rc) == 2);
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK_FALSE(std::filesystem::exists(out.string() + ".tmp"));
  CHECK(std::system((tool + " " + good.string() + " -o " + out.string() + " >/dev/null").c_str()) == 0);
  CHECK(std::filesystem::file_size(out) > 1000u);
  const auto trace = dir / "trace.json";
  CHECK(std::system((tool + " " + good.string() + " --format chrome-trace -o " + trace.string() + " >/dev/null").c_str()) == 0);
  CHECK(json::parse(std::ifstream(trace)).contains("traceEvents"));
  std::filesystem::remove_all(dir);
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
