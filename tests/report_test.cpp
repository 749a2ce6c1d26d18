// The report tool on the host: profile validation with located errors, the underutilized-band
// arithmetic on constructed data (and when a band is a problem), findings, the HTML's sections
// and numbers, the Chrome trace, large traces, the command line (exit codes, no partial output),
// and the hardware's view of a cdpkit-profile/4 document (efficiency ranks, CTA accounting, SM
// activity, collection overhead). Regression cases for inputs that used to crash the reader:
// 1e999, 200,000-deep nesting, truncated and garbage text.

#include <doctest/doctest.h>

#include "profile_versions.hpp"

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/html.hpp>
#include <cdpkit/report/profile.hpp>

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

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

/// The format_error message for a profile text; "no error" when it is accepted. Any other
/// exception escapes and fails the case.
std::string text_error(const std::string& text, const std::string& name = "p.json") {
  try {
    (void)rep::parse_profile(text, name);
  } catch (const rep::format_error& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

/// One section of the report: from its heading <h2 id="id"> up to the next <h2> (the last one
/// up to the script). Empty when the heading is missing.
std::string section_of(const std::string& html, const std::string& id) {
  const auto start = html.find("<h2 id=\"" + id + "\">");
  if (start == std::string::npos) return {};
  auto end = html.find("<h2 ", start + 1);
  if (end == std::string::npos) end = html.find("<script>", start);
  return html.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

/// 1234567 -> "1,234,567" (the report's thousands separators), written here independently.
std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return out;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Run cdpkit-report with `args`; returns the exit code, stdout and stderr in `out` and `err`.
int run_report(const std::string& args, const std::filesystem::path& dir, std::string& out, std::string& err) {
  const auto out_file = dir / "stdout.txt", err_file = dir / "stderr.txt";
  const int rc = std::system((std::string(CDPKIT_REPORT_EXE) + " " + args + " >" + out_file.string() + " 2>" +
                              err_file.string()).c_str());
  out = read_text(out_file);
  err = read_text(err_file);
  std::filesystem::remove(out_file);
  std::filesystem::remove(err_file);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

/// Files in `dir` whose names end in ".tmp".
std::vector<std::string> tmp_files(const std::filesystem::path& dir) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.path().extension() == ".tmp") found.push_back(entry.path().string());
  return found;
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
  CHECK(t.records[0].parent == cdpkit::no_record);  // no parent: launched from the host grid
  CHECK(t.records[2].parent == 1u);
}

TEST_CASE("malformed truncated and wrong-version profiles name the file and the field") {
  CHECK(parse_error(json::array()) == "p.json: /: expected a JSON object");
  auto doc = valid_profile();
  doc["schema"] = "cdpkit-profile/5";
  CHECK(parse_error(doc) == "p.json: /schema: unsupported schema 'cdpkit-profile/5' (this tool reads "
                            "cdpkit-profile/4, cdpkit-profile/3, cdpkit-profile/2 and cdpkit-profile/1)");
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

TEST_CASE("the Chrome trace draws measured child grids at their real durations on lanes that never overlap") {
  auto p = rep::parse_profile(valid_profile(6).dump(), "p.json");
  auto& records = p.runs[1].trace->records;
  // depth 1: record 0 [2000, 9000); depth 2: 1, 2, 3 overlap in pairs, 4 after them; 5 refused
  const std::uint64_t window[6][2] = {{2000, 9000}, {3000, 5000}, {4000, 6000}, {5000, 7000},
                                      {8000, 8500}, {cdpkit::no_time_start, cdpkit::no_time_end}};
  for (std::size_t k = 0; k < records.size(); ++k) {
    records[k].parent = k == 0 ? cdpkit::no_record : 0;
    records[k].depth = k == 0 ? 1 : 2;
    records[k].t_ns = k == 0 ? 1000 : 2000 + 100 * k;  // the children ask while their parent runs
    records[k].start_ns = window[k][0];
    records[k].end_ns = window[k][1];
  }
  records[5].outcome = static_cast<std::uint8_t>(cdpkit::launch_outcome::fallback_budget);
  const auto trace = json::parse(rep::render_chrome_trace({p}));
  std::map<int, std::vector<std::pair<double, double>>> by_track;  // tid -> [ts, ts + dur)
  std::map<int, std::string> track_name;
  std::size_t instants = 0, flow_starts = 0, flow_ends = 0;
  std::vector<double> durations;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      by_track[e["tid"].get<int>()].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
      durations.push_back(e["dur"].get<double>());
    }
    if (e["ph"] == "i") ++instants;
    if (e["ph"] == "s") ++flow_starts;
    if (e["ph"] == "f") ++flow_ends;
    if (e["ph"] == "M" && e["name"] == "thread_name") track_name[e["tid"].get<int>()] = e["args"]["name"];
  }
  CHECK(instants == 6u);     // every request, the refused one included
  CHECK(durations.size() == 5u);  // every measured child grid, at its real duration (µs)
  std::sort(durations.begin(), durations.end());
  CHECK(durations == std::vector<double>{0.5, 2.0, 2.0, 2.0, 7.0});
  CHECK(flow_starts == 4u);  // parent 0 -> children 1..4 (record 0's parent is the host grid)
  CHECK(flow_ends == 4u);
  std::size_t lanes_at_depth_2 = 0;
  for (auto& [tid, slices] : by_track) {
    CAPTURE(track_name[tid]);
    std::sort(slices.begin(), slices.end());
    for (std::size_t k = 1; k < slices.size(); ++k) CHECK(slices[k - 1].second <= slices[k].first);
    if (track_name[tid].rfind("depth 2, lane", 0) == 0) ++lanes_at_depth_2;
  }
  CHECK(lanes_at_depth_2 == 2u);  // three windows overlap in pairs: two lanes suffice
  CHECK(track_name.size() == 5u);  // depth 1: requests + 1 lane; depth 2: requests + 2 lanes
  // every flow starts on the parent's slice (depth 1, lane 0), inside it
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "s") continue;
    CHECK(track_name[e["tid"].get<int>()] == "depth 1, lane 0");
    CHECK(e["ts"].get<double>() >= 1.0);  // the parent's slice: [1, 8) us after the first event
    CHECK(e["ts"].get<double>() <= 8.0);
  }
}

TEST_CASE("duplicate record ids and thousands of concurrent grids keep the Chrome trace's lanes apart") {
  auto p = rep::parse_profile(valid_profile(2000).dump(), "p.json");
  auto& records = p.runs[1].trace->records;
  for (std::size_t k = 0; k < records.size(); ++k) {
    records[k].id = static_cast<std::uint32_t>(k % 7);  // ids repeat
    records[k].parent = cdpkit::no_record;
    records[k].depth = static_cast<std::uint16_t>(1 + k % 2);
    records[k].t_ns = 1000;
    records[k].start_ns = 2000 + k;  // all 2,000 overlap
    records[k].end_ns = 1000000;
  }
  const auto trace = json::parse(rep::render_chrome_trace({p}));
  std::map<int, std::vector<std::pair<double, double>>> by_track;
  std::map<int, std::string> track_name;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X")
      by_track[e["tid"].get<int>()].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
    if (e["ph"] == "M" && e["name"] == "thread_name") track_name[e["tid"].get<int>()] = e["args"]["name"];
  }
  std::size_t slices = 0, overflow_slices = 0;
  for (auto& [tid, slices_of] : by_track) {
    slices += slices_of.size();
    if (track_name[tid].find("overflow") != std::string::npos) {
      overflow_slices += slices_of.size();
      continue;  // the one track where they may overlap
    }
    CHECK(slices_of.size() == 1u);  // every window overlaps every other: one per lane
  }
  CHECK(slices == 2000u);
  CHECK(overflow_slices == 0u);  // 1,000 per depth: within the 1,024 lanes
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

TEST_CASE("a number out of double range is a located format error, not an abort") {
  std::string text = valid_profile().dump();
  const std::string ms = "\"ms\":40.0";
  const auto at = text.find(ms);
  REQUIRE(at != std::string::npos);
  text.replace(at, ms.size(), "\"ms\":1e999");
  const std::string offset = std::to_string(at + 5);  // the number itself, after "ms":
  CAPTURE(text.substr(at, 20));
  const std::string error = text_error(text);
  CHECK(error.rfind("p.json: not valid JSON at byte " + offset + " (line 1, column ", 0) == 0);
  CHECK(contains(error, "number overflow parsing '1e999'"));
  for (const char* huge : {"-1e999", "1e400", "123456789e999999999999", "1E+999"}) {
    CAPTURE(huge);
    std::string t = valid_profile().dump();
    t.replace(t.find(ms), ms.size(), std::string("\"ms\":") + huge);
    CHECK(contains(text_error(t), "p.json: not valid JSON at byte " + offset));
  }
  // the largest finite double is still a number
  auto doc = valid_profile();
  doc["runs"][1]["ms"] = 1.7976931348623157e308;
  CHECK(rep::parse_profile(doc.dump(), "p.json").runs[1].ms == doctest::Approx(1.7976931348623157e308));
  // in free-form params too, on another line: the line and column are counted
  std::string lines = valid_profile().dump(1);
  const auto params = lines.find("\"params\": {");
  REQUIRE(params != std::string::npos);
  lines.insert(params + 11, "\"x\": 1e999,");
  const auto line = 1 + static_cast<std::size_t>(std::count(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(params), '\n'));
  CHECK(contains(text_error(lines), "(line " + std::to_string(line) + ", column "));
}

TEST_CASE("a profile nested 200,000 levels deep is refused before any value is built") {
  const std::size_t levels = 200000;
  auto deep = [&](const std::string& open, const std::string& close) {
    std::string nested;
    nested.reserve(levels * (open.size() + close.size()));
    for (std::size_t k = 0; k < levels; ++k) nested += open;
    for (std::size_t k = 0; k < levels; ++k) nested += close;
    return nested;
  };
  const std::string text = valid_profile().dump();
  const std::string marker = "\"params\":{}";
  const auto at = text.find(marker);
  REQUIRE(at != std::string::npos);
  const auto start = std::chrono::steady_clock::now();
  for (const auto& [open, close] : {std::pair<std::string, std::string>{"[", "]"}, {"{\"a\":", "}"}}) {
    std::string doc = text;
    doc.replace(at, marker.size(), "\"params\":" + deep(open, close));
    CHECK(doc.size() > 400000u);
    const std::string error = text_error(doc);
    CAPTURE(error);
    // params opens level 4 (document, runs, run, params): its 62nd bracket opens level 65
    CHECK(error.rfind("p.json: byte ", 0) == 0);
    CHECK(contains(error, ": arrays and objects nested deeper than 64 levels"));
    const auto byte = std::stoull(error.substr(13));
    CHECK(byte == at + 9 + 61 * open.size());
  }
  // a whole document of brackets, and unbalanced ones
  CHECK(contains(text_error(deep("[", "]")), "nested deeper than 64 levels"));
  CHECK(contains(text_error(std::string(levels, '[')), "nested deeper than 64 levels"));
  CHECK(contains(text_error(std::string(levels, ']')), "p.json: not valid JSON at byte 0"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 5.0);
}

TEST_CASE("nesting up to the cap is read and brackets inside strings do not count") {
  std::string ok, too_deep;
  for (int k = 0; k < rep::max_nesting_depth; ++k) ok += "[";
  for (int k = 0; k < rep::max_nesting_depth; ++k) ok += "]";
  CHECK(text_error(ok) == "p.json: /: expected a JSON object");  // parsed; only the schema fails
  too_deep = "[" + ok + "]";
  CHECK(text_error(too_deep) == "p.json: byte 64 (line 1, column 65): arrays and objects nested deeper than 64 levels");
  auto doc = valid_profile();
  json params = json::object();
  json* inner = &params;
  for (int k = 4; k < rep::max_nesting_depth; ++k) inner = &((*inner)["x"] = json::object());  // depth 64 exactly
  (*inner)["brackets"] = std::string(100000, '[') + "\\\"{{{" + std::string(100000, '{');
  doc["runs"][1]["params"] = params;
  const auto p = rep::parse_profile(doc.dump(), "p.json");
  CHECK(p.runs[1].params.is_object());
  CHECK(p.runs[1].params.contains("x"));
  doc["runs"][1]["params"] = json::object({{"x", params}});  // one level more
  CHECK(contains(parse_error(doc), "nested deeper than 64 levels"));
}

TEST_CASE("every truncation of a profile and garbage text are located format errors") {
  const std::string text = valid_profile().dump();
  std::size_t accepted = 0;
  for (std::size_t n = 0; n < text.size(); ++n) {
    const std::string error = text_error(text.substr(0, n), "cut.json");
    CAPTURE(n);
    CHECK(error.rfind("cut.json: not valid JSON at byte ", 0) == 0);
    accepted += error == "no error";
  }
  CHECK(accepted == 0u);
  CHECK(text_error(text) == "no error");
  for (const std::string& garbage :
       {std::string(), std::string("\0\0\0", 3), std::string("\xff\xfe{}"), std::string("{\"schema\": \"\xc3\x28\"}"),
        std::string("nul"), std::string("{\"a\":}"), std::string("{\"a\" 1}"), std::string("[1,]"),
        std::string("\"\\uD800\""), std::string("{}{}"), std::string("--1"), std::string("1.e5"),
        std::string("{\"a\":\"\x01\"}"), std::string("\xef\xbb\xbf")}) {
    CAPTURE(garbage);
    const std::string error = text_error(garbage, "g.json");
    CHECK(error.rfind("g.json: ", 0) == 0);
    CHECK(error != "no error");
  }
  // a deterministic shower of random bytes and random JSON punctuation
  std::mt19937_64 rng(12345);
  const std::string alphabet = "{}[]\":,0123456789.eE+-tfnul \\\n\x80\xff";
  for (int k = 0; k < 2000; ++k) {
    std::string junk(rng() % 64, ' ');
    for (auto& ch : junk) ch = k % 2 ? static_cast<char>(rng()) : alphabet[rng() % alphabet.size()];
    CAPTURE(junk);
    CHECK(text_error(junk, "r.json").rfind("r.json: ", 0) == 0);
  }
}

TEST_CASE("integers that do not fit their field are refused with the field's pointer") {
  auto doc = valid_profile();
  doc["runs"][1]["trace"]["records"]["rows"][0][0] = 4294967296ull;
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/records/rows/0/0: expected a non-negative integer up to 4294967295");
  doc = valid_profile();
  doc["runs"][1]["trace"]["records"]["rows"][0][10] = 1ll << 40;
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/records/rows/0/10: integer out of range");
  doc = valid_profile();
  doc["runs"][1]["trace"]["sites"][0]["id"] = 1ull << 31;
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/sites/0/id: expected a non-negative integer up to 2147483647");
  doc = valid_profile();
  doc["device"]["driver"] = 18446744073709551615ull;
  CHECK(parse_error(doc) == "p.json: /device/driver: integer out of range");
  doc = valid_profile();
  doc["runs"][1]["trace"]["sites"][0]["failed_by_error"][0]["code"] = -(1ll << 40);
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/sites/0/failed_by_error/0/code: integer out of range");
  doc = valid_profile();
  doc["runs"][1]["trace"]["sites"][0]["work_log2"][3] = 1.5;
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/sites/0/work_log2/3: expected a non-negative integer");
}

TEST_CASE("a profile path that is not valid UTF-8 still renders both outputs") {
  const std::string name = "run\xff\xfe.json";
  const auto p = rep::parse_profile(valid_profile(3).dump(), name);
  CHECK(p.path == "run\xef\xbf\xbd\xef\xbf\xbd.json");  // U+FFFD for each bad byte
  CHECK(contains(rep::render_html({p}), "run\xef\xbf\xbd\xef\xbf\xbd.json"));
  const auto trace = json::parse(rep::render_chrome_trace({p}));
  CHECK(trace["traceEvents"].size() > 3u);
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
  CHECK(contains(summary, "<td class=\"l\">vertex_loop</td><td class=\"l\">rmat:10</td><td data-v=\"10\">10.000</td>"
                          "<td>0.10 Gedges/s</td><td>1.00x vertex_loop</td>"));
  CHECK(contains(summary, "<td class=\"l\">cdp_naive</td><td class=\"l\">rmat:10</td><td data-v=\"40\">40.000</td>"
                          "<td>0.03 Gedges/s</td><td>0.25x vertex_loop</td><td>100</td>"));
  CHECK(contains(summary, "<td data-v=\"20\">20.000</td><td>0.05 Gedges/s</td><td>0.50x vertex_loop</td>"));
  CHECK(contains(summary, "<td>0.125</td>"));  // 4,000 active lanes over 1,000 steps of 32
  CHECK(contains(summary, ">pass</span>"));
  CHECK_FALSE(contains(summary, "pending high water"));

  // 2. Child grids: the launching site, its outcomes, three charts and the band table
  CHECK(contains(grids, "<h3>bfs · cdp_naive · rmat:10</h3>"));
  CHECK(contains(grids, "<b>bfs.neighbors</b>: 140 requests, 100 launched, 40 done inline."));
  for (const char* chart : {"work items per child grid", "blocks per child grid", "threads per child grid"})
    CHECK(contains(grids, std::string("<title>") + chart + "</title>"));
  CHECK(contains(grids, "fewer work items than a warp has lanes (32)</td><td>91 of 100</td><td>91%</td><td>33%</td>"));
  CHECK(contains(grids, "fewer blocks than SMs (132)</td><td>100 of 100</td><td>100%</td>"));
  CHECK(contains(grids, "fewer threads than a full GPU holds (" + grouped(132 * 2048) + ")</td><td>100 of 100</td>"));
  CHECK_FALSE(contains(grids, "loop_to_child.serial_items"));  // a probe-only site launches nothing
  CHECK_FALSE(contains(grids, "vertex_loop"));                   // the untraced run has no section here

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
  CHECK(contains(findings, "Fastest verified variant for bfs on rmat:10: vertex_loop (10.000 ms)"));
  CHECK(contains(findings, "cudaErrorLaunchPendingCountExceeded (69)"));

  // 7. Comparison: ms per profile and the delta against the first
  CHECK(contains(comparison, "<th>ms [1]</th><th>ms [2]</th><th>delta [2]</th>"));
  CHECK(contains(comparison, "<td class=\"l\">cdp_naive</td><td>40.000</td><td>20.000</td><td class=\"up\">-50.0%</td>"));
  CHECK(contains(comparison, "<td class=\"l\">vertex_loop</td><td>10.000</td><td>10.000</td><td class=\"up\">0.0%</td>"));
  CHECK(contains(comparison, "[1] p.json [2] q.json"));
}

TEST_CASE("each section of the real H200 fixture's report lists the fixture's sites and counts") {
  const std::string path = CDPKIT_TEST_FIXTURES "/loop_to_child_h200.json";
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

TEST_CASE("an output that cannot be moved into place leaves no temporary file") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_atomic";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "taken" / "inside");
  CHECK_THROWS_AS(rep::write_file_atomically((dir / "taken").string(), "text"), rep::format_error);
  CHECK_THROWS_AS(rep::write_file_atomically((dir / "missing" / "out.html").string(), "text"), rep::format_error);
  CHECK_THROWS_AS(rep::write_file_atomically("", "text"), rep::format_error);
  CHECK(tmp_files(dir).empty());
  rep::write_file_atomically((dir / "ok.html").string(), "text");
  CHECK(read_text(dir / "ok.html") == "text");
  CHECK(tmp_files(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("the command line prints one line and exits with 2 on every error and with 0 for help") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_cli_errors";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "a_directory");
  const auto good = dir / "good.json", out = dir / "out.html";
  std::ofstream(good) << valid_profile().dump();
  {
    std::string huge = valid_profile().dump();
    huge.replace(huge.find("\"ms\":40.0"), 9, "\"ms\":1e999");
    std::ofstream(dir / "huge.json") << huge;
    std::string deep = valid_profile().dump();
    deep.replace(deep.find("\"params\":{}"), 11, "\"params\":" + std::string(200000, '[') + std::string(200000, ']'));
    std::ofstream(dir / "deep.json") << deep;
    std::ofstream(dir / "cut.json") << huge.substr(0, 100);
    std::ofstream(dir / "empty.json") << "";
    std::ofstream(dir / "binary.json") << std::string("\x7f" "ELF\0\0\xff\xfe", 8);
  }
  struct cli_case {
    std::string args, message;
  };
  const std::string g = good.string(), o = out.string(), d = dir.string();
  const std::vector<cli_case> cases = {
      {"", "profiles is required"},
      {"-o " + o, "profiles is required"},
      {g, "--output is required"},
      {g + " -o " + o + " --no-such-option", "--no-such-option"},
      {g + " -o " + o + " --format pdf", "--format"},
      {d + "/missing.json -o " + o, "missing.json"},
      {d + "/huge.json -o " + o, "huge.json: not valid JSON at byte "},
      {d + "/deep.json -o " + o, "deep.json: byte "},
      {d + "/cut.json -o " + o, "cut.json: not valid JSON at byte "},
      {d + "/empty.json -o " + o, "empty.json: not valid JSON at byte 0"},
      {d + "/binary.json -o " + o, "binary.json: not valid JSON at byte 0"},
      {g + " " + d + "/deep.json -o " + o, "deep.json"},  // the second profile fails: nothing written
      {g + " -o " + d + "/no_such_dir/out.html", "no_such_dir/out.html"},
      {g + " -o " + d + "/a_directory", "a_directory: exists and is a directory, not a regular file; nothing written"},
      {g + " --format chrome-trace -o " + d + "/a_directory", "a_directory"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    std::string out_text, err_text;
    CHECK(run_report(c.args, dir, out_text, err_text) == 2);
    CAPTURE(err_text);
    CHECK(err_text.rfind("cdpkit-report: ", 0) == 0);
    CHECK(contains(err_text, c.message));
    CHECK(std::count(err_text.begin(), err_text.end(), '\n') == 1);  // one line
    CHECK(out_text.empty());
    CHECK_FALSE(std::filesystem::exists(out));
    CHECK(tmp_files(dir).empty());
  }
  std::string out_text, err_text;
  CHECK(run_report("--help", dir, out_text, err_text) == 0);
  CHECK(contains(out_text, "profiles"));
  CHECK(contains(out_text, "--format"));
  CHECK(run_report(g + " -o " + o, dir, out_text, err_text) == 0);
  CHECK(err_text.empty());
  CHECK(contains(out_text, "cdpkit-report: wrote " + o));
  CHECK(std::filesystem::file_size(out) > 1000u);
  CHECK(tmp_files(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("the command line refuses to write its output over one of its input profiles") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_output_is_input";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "sub");
  const std::string profile_text = valid_profile().dump();
  std::ofstream(dir / "a.json") << profile_text;
  std::ofstream(dir / "b.json") << profile_text;
  std::filesystem::create_hard_link(dir / "a.json", dir / "hard.json");
  std::filesystem::create_symlink(dir / "a.json", dir / "soft.json");
  const std::string a = (dir / "a.json").string(), b = (dir / "b.json").string(), d = dir.string();
  struct cli_case {
    std::string args, output;
  };
  const std::vector<cli_case> cases = {
      {a + " -o " + a, a},
      {a + " --format chrome-trace -o " + a, a},
      {a + " " + b + " -o " + b, b},
      {a + " -o " + d + "/sub/../a.json", d + "/sub/../a.json"},  // the same file spelled differently
      {a + " -o " + d + "/./a.json", d + "/./a.json"},
      {a + " -o " + d + "/hard.json", d + "/hard.json"},  // another name of the same inode
      {a + " -o " + d + "/soft.json", d + "/soft.json"},  // a link to the input
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    std::string out_text, err_text;
    CHECK(run_report(c.args, dir, out_text, err_text) == 2);
    CAPTURE(err_text);
    CHECK(err_text.rfind("cdpkit-report: " + c.output + ": the output is the input profile ", 0) == 0);
    CHECK(std::count(err_text.begin(), err_text.end(), '\n') == 1);
    CHECK(out_text.empty());
    CHECK(read_text(dir / "a.json") == profile_text);  // nothing written
    CHECK(read_text(dir / "b.json") == profile_text);
    CHECK(std::filesystem::is_symlink(dir / "soft.json"));
    CHECK(tmp_files(dir).empty());
  }
  std::string out_text, err_text;  // another output next to the inputs is fine
  CHECK(run_report(a + " " + b + " -o " + d + "/report.html", dir, out_text, err_text) == 0);
  CHECK(read_text(dir / "report.html").rfind("<!DOCTYPE html>", 0) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the command line writes through a temporary file of its own and replaces only a regular file") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_output_kinds";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "keep");
  const std::string profile_text = valid_profile().dump(), d = dir.string();
  std::string out_text, err_text;
  // an input named as the old fixed temporary (OUTPUT.tmp) is read, never truncated
  std::ofstream(dir / "a.json.tmp") << profile_text;
  CHECK(run_report(d + "/a.json.tmp -o " + d + "/a.json", dir, out_text, err_text) == 0);
  CHECK(read_text(dir / "a.json.tmp") == profile_text);
  CHECK(read_text(dir / "a.json").rfind("<!DOCTYPE html>", 0) == 0);
  std::filesystem::remove(dir / "a.json.tmp");
  // an output that is a directory is refused, and a user's file named like its temporary stays
  std::ofstream(dir / "keep.tmp") << "mine";
  std::ofstream(dir / "p.json") << profile_text;
  CHECK(run_report(d + "/p.json -o " + d + "/keep", dir, out_text, err_text) == 2);
  CHECK(err_text == "cdpkit-report: " + d + "/keep: exists and is a directory, not a regular file; nothing written\n");
  CHECK(read_text(dir / "keep.tmp") == "mine");
  CHECK(std::filesystem::is_directory(dir / "keep"));
  std::filesystem::remove(dir / "keep.tmp");
  // a FIFO (and, where this user may make one, a device like /dev/full) is not replaced by a file
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK(run_report(d + "/p.json -o " + d + "/fifo", dir, out_text, err_text) == 2);
  CHECK(contains(err_text, d + "/fifo: exists and is a FIFO, not a regular file"));
  CHECK(std::filesystem::is_fifo(dir / "fifo"));
  if (::mknod((dir / "full").c_str(), S_IFCHR | 0600, makedev(1, 7)) == 0) {  // root only
    CHECK(run_report(d + "/p.json -o " + d + "/full", dir, out_text, err_text) == 2);
    CHECK(contains(err_text, d + "/full: exists and is a character device"));
    CHECK(std::filesystem::is_character_file(dir / "full"));
  }
  CHECK(tmp_files(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a JSON syntax error is located once, at the byte where the parser stopped") {
  // a second value after the document: the offending '{' is byte 8, column 9
  CHECK(text_error(R"({"a":1} {"b":2})", "t7.json") ==
        "t7.json: not valid JSON at byte 8 (line 1, column 9): syntax error while parsing value - unexpected '{'; "
        "expected end of input");
  // a broken literal on line 3: the '}' that ends it is byte 20, column 10
  const std::string literal = text_error("{\n \"y\": 1,\n \"x\": tru}", "t8.json");
  CHECK(literal.rfind("t8.json: not valid JSON at byte 20 (line 3, column 10): syntax error while parsing value - "
                      "invalid literal",
                      0) == 0);
  CHECK(text_error("[1,\n  ]") ==
        "p.json: not valid JSON at byte 6 (line 2, column 3): syntax error while parsing value - unexpected ']'; "
        "expected '[', '{', or a literal");
  CHECK(text_error("{\"a\" 1}") ==
        "p.json: not valid JSON at byte 5 (line 1, column 6): syntax error while parsing object separator - "
        "unexpected number literal; expected ':'");
  CHECK(text_error("{\"a\":") ==
        "p.json: not valid JSON at byte 5 (line 1, column 6): syntax error while parsing value - unexpected "
        "end of input; expected '[', '{', or a literal");
  // one position in every message: never nlohmann's own line and column beside ours
  const std::string text = valid_profile().dump(1);
  for (std::size_t n = 0; n < text.size(); n += 7) {
    const std::string error = text_error(text.substr(0, n) + "]", "cut.json");  // never valid: the document is an object
    CAPTURE(error);
    CHECK(error.rfind("cut.json: not valid JSON at byte ", 0) == 0);
    CHECK_FALSE(contains(error, "parse error at"));
  }
}

TEST_CASE("a run's time is a non-negative number and a rate over no time is shown as a dash") {
  auto doc = valid_profile();
  doc["runs"][1]["ms"] = -5;
  CHECK(parse_error(doc) == "p.json: /runs/1/ms: expected a non-negative number");
  doc["runs"][1]["ms"] = -0.001;
  CHECK(parse_error(doc) == "p.json: /runs/1/ms: expected a non-negative number");
  doc["runs"][1]["ms"] = "5";
  CHECK(parse_error(doc) == "p.json: /runs/1/ms: expected a number");
  // 0 (no time) and the smallest subnormal are times; the throughput over them is '-', not 0 or inf
  for (const double ms : {0.0, 5e-324}) {
    CAPTURE(ms);
    doc = valid_profile();
    doc["runs"][0]["ms"] = ms;
    const auto p = rep::parse_profile(doc.dump(), "p.json");
    CHECK(p.runs[0].ms == ms);
    const std::string html = rep::render_html({p});
    const std::string summary = section_of(html, "summary");
    CHECK(contains(summary, ">0.000</td><td>-</td>"));  // run 0's time, then its throughput
    CHECK_FALSE(contains(summary, "inf"));
    CHECK_FALSE(contains(html, "infx"));  // the fastest-variant finding names no ratio over it either
    // compared with a profile whose first time is that one: no "+inf%" change
    auto later = valid_profile();
    const std::string compared = rep::render_html({p, rep::parse_profile(later.dump(), "q.json")});
    CHECK_FALSE(contains(compared, "inf%"));
    CHECK_FALSE(contains(summary, "0.00 Gedges/s"));
    CHECK(contains(summary, "0.03 Gedges/s"));  // the other run: 1e6 edges in 40 ms
  }
}

// --- cdpkit-profile/4: the hardware's view ----------------------------------------------------

namespace {

namespace schema = cdpkit::schema;

/// A probe site whose warps had `efficiency` of their lanes active over 1,000 steps.
schema::site_profile probe_site_of(double efficiency) {
  schema::site_profile s;
  s.id = 8;
  s.name = "loop_to_child.serial_items";
  s.role = schema::site_role::probe;
  s.depth_hist.assign(cdpkit::trace_limits::depth_buckets, 0);
  s.probe.steps = 1000;
  s.probe.active_lanes = static_cast<std::uint64_t>(32000 * efficiency);
  s.probe.warps = 10;
  s.probe.efficiency_sum = 10 * efficiency;
  s.probe.step_efficiency = s.probe.mean_warp_efficiency = efficiency;
  return s;
}

/// A launch site with `launched` one-block, 256-thread child grids of 600 work items each, at depth 1.
schema::site_profile launch_site_of(std::uint64_t launched) {
  schema::site_profile s;
  s.id = 2;
  s.name = "loop_to_child.child_per_thread";
  s.role = schema::site_role::launch;
  s.requests = s.launched = launched;
  s.child_threads = 256 * launched;
  s.child_blocks = launched;
  s.work_items = 600 * launched;
  s.stream_launches = {launched, 0, 0, 0};
  s.threads_log2[8] = s.blocks_log2[0] = s.work_log2[9] = launched;
  s.depth_hist.assign(cdpkit::trace_limits::depth_buckets, 0);
  s.depth_hist[1] = launched;
  s.max_depth = 1;
  return s;
}

/// Hardware metrics whose warp efficiency (thread / (32 * warp instructions)) is `efficiency`.
schema::hardware_profile hardware_of(double efficiency) {
  schema::hardware_profile h;
  h.range = "range";
  h.ms = 1.0;
  h.metrics = {{"smsp__inst_executed.sum", 1000.0}, {"smsp__thread_inst_executed.sum", 32000.0 * efficiency}};
  return h;
}

/// A v4 profile of loop_to_child on power_law:1000: an untraced serial_loop baseline with hardware
/// metrics, and a traced run per (variant, probe efficiency, hardware efficiency), each with a
/// probe site and a launch site of 2 child grids, written and read back through the schema.
schema::profile ranked_profile(const std::vector<std::tuple<std::string, double, double>>& variants) {
  schema::profile p;
  p.program = "report_test";
  p.created = "2026-11-29T00:00:00Z";
  p.device = {"NVIDIA H200", "9.0", 132, 150109880320ull, 2048, 13000, 13010};
  schema::run_profile base;
  base.algorithm = "loop_to_child";
  base.variant = "serial_loop";
  base.input = "power_law:1000";
  base.ms = 10.0;
  base.work = 1000;
  base.work_unit = "items";
  base.checked = base.verified = true;
  base.hardware = hardware_of(0.25);
  p.runs.push_back(base);
  for (const auto& [variant, probes, hw] : variants) {
    schema::run_profile r = base;
    r.id = p.runs.size();
    r.variant = variant;
    r.ms = 1.0 + static_cast<double>(r.id);
    r.hardware = hardware_of(hw);
    schema::trace_profile t;
    t.pending_limit = t.pending_budget = 2048;
    t.max_depth_limit = 24;
    t.sites = {launch_site_of(2), probe_site_of(probes)};
    t.summary = schema::summarize(t);
    r.trace = t;
    p.runs.push_back(r);
  }
  return schema::parse_profile(schema::profile_json(p).dump(), "v4.json");
}

/// The sample windows of the SM-activity cases: two of 20 us, from 1,000 ns.
schema::timeline_profile timeline_of(const std::vector<std::pair<double, double>>& sm_and_warps) {
  schema::timeline_profile t;
  t.interval_ns = 20000;
  t.ms = 1.0;
  t.metrics = {rep::sm_active_metric, rep::warps_active_metric, "sm__inst_executed_realtime.sum"};
  std::uint64_t at = 1000;
  for (const auto& [sm, warps] : sm_and_warps) {
    t.samples.push_back({at, at + 20000, {sm, warps, 1e5}});
    at += 20000;
  }
  return t;
}

/// ranked_profile with one traced variant whose 2 child grids ran in [25 us, 30 us) and
/// [30 us, 40 us), 2 PM samples (50% then 0% SM active), its collection times, the CTA
/// accounting, host kernels (one of it, one of another run), and the collector's notes.
schema::profile collected_profile() {
  schema::profile p = ranked_profile({{"child_per_thread", 0.5, 0.5}});
  schema::run_profile& r = p.runs[1];
  r.trace->records.push_back({1000, 0, cdpkit::no_record, 1, 256, 600, 2, 1, 0, 0, 0, 25000, 30000});
  r.trace->records.push_back({2000, 1, cdpkit::no_record, 1, 256, 600, 2, 1, 0, 0, 0, 30000, 40000});
  r.trace->records_requested = r.trace->records_stored = 2;
  r.timeline = timeline_of({{50.0, 40.0}, {0.0, 0.0}});
  r.collect.traced_ms = 2.2;
  r.collect.metrics_ms = 4.0;
  r.collect.timeline_ms = 3.0;
  r.hardware->accounting = schema::cta_accounting{3, 768, 1, 1, 256, 2, 2, 512, 0};  // 1 host block + 2 child blocks
  schema::host_activity_profile a;
  a.kernels = {{std::uint64_t{1}, "root_kernel", 2000, 24000, 1, 256}, {std::uint64_t{0}, "serial_kernel", 5000, 6000, 1, 32}};
  p.host_activity = a;
  p.collector = schema::collector_profile{{"trace", "metrics", "timeline"}, {"metrics: CUPTI: another profiler holds CUPTI"}};
  return schema::parse_profile(schema::profile_json(p).dump(), "v4.json");
}

}  // namespace

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
  const json v3 = cdpkit_test::as_profile_v3(schema::profile_json(collected_profile()));
  for (const auto& p : {rep::parse_profile(v3.dump(), "v3.json"), rep::parse_profile(valid_profile().dump(), "v1.json")}) {
    CAPTURE(p.path);
    const std::string html = rep::render_html({p});
    for (const char* id : {"hardware", "accounting", "sm-activity", "overhead"}) CHECK(section_of(html, id).empty());
    CHECK(contains(html, "6. Findings"));
    CHECK(contains(html, "7. Comparison"));
    CHECK(contains(section_of(html, "divergence"), "which was not active"));
    CHECK_FALSE(contains(html, "Collector"));
  }
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
  fast["runs"][1]["ms"] = 5.0;  // cdp_naive now beats vertex_loop's 10 ms
  const auto winner = rep::analyze(rep::parse_profile(fast.dump(), "p.json"));
  CHECK_FALSE(winner.runs[1].sites.front().bands[0].flagged);
  CHECK(winner.runs[1].sites.front().bands[0].reason == "small grids, yet the fastest verified variant of its input");
  CHECK_FALSE(tiny_finding(winner));
}

TEST_CASE("the Chrome trace has an SM active counter track and the host kernels on the child grids' time base") {
  const auto p = collected_profile();
  const auto trace = json::parse(rep::render_chrome_trace({p}));
  std::vector<std::pair<double, double>> sm;  // (ts, value)
  std::size_t warps = 0;
  std::map<int, std::string> track_name;
  std::vector<json> kernels, children;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "C" && e["name"] == "SM active %") sm.push_back({e["ts"].get<double>(), e["args"]["SM active %"].get<double>()});
    if (e["ph"] == "C" && e["name"] == "warps active %") ++warps;
    if (e["ph"] == "M" && e["name"] == "thread_name") track_name[e["tid"].get<int>()] = e["args"]["name"];
    if (e["ph"] == "X" && e["cat"] == "host_kernel" && e["pid"] == 2) kernels.push_back(e);  // run 1's process
    else if (e["ph"] == "X" && e["cat"] == "host_kernel") CHECK(e["name"] == "serial_kernel");
    else if (e["ph"] == "X") children.push_back(e);
  }
  // the run's origin is its first request and first sample (1,000 ns); children start at 25 and 30 us
  REQUIRE(sm.size() == 3u);  // each sample, then 0 after the last
  CHECK(sm[0] == std::pair<double, double>{0.0, 50.0});
  CHECK(sm[1] == std::pair<double, double>{20.0, 0.0});
  CHECK(sm[2] == std::pair<double, double>{40.0, 0.0});
  CHECK(warps == 3u);
  REQUIRE(children.size() == 2u);
  CHECK(children[0]["ts"].get<double>() == doctest::Approx(24.0));
  REQUIRE(kernels.size() == 1u);  // root_kernel of run 1; serial_kernel is run 0's, in its own process
  CHECK(kernels[0]["name"] == "root_kernel");
  CHECK(kernels[0]["ts"].get<double>() == doctest::Approx(1.0));
  CHECK(kernels[0]["dur"].get<double>() == doctest::Approx(22.0));
  CHECK(track_name[kernels[0]["tid"].get<int>()] == "host-launched kernels");
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

TEST_CASE("a profile's pictures round-trip, and a picture that is not an SVG document is refused where it is") {
  auto p = collected_profile();
  p.pictures.push_back({"bezier random:64", "<svg xmlns=\"http://www.w3.org/2000/svg\"><circle r=\"1\"/></svg>"});
  const json doc = schema::profile_json(p);
  const schema::profile back = schema::parse_profile(doc.dump(), "p.json");
  REQUIRE(back.pictures.size() == 1u);
  CHECK(back.pictures[0].title == "bezier random:64");
  CHECK(back.pictures[0].svg == p.pictures[0].svg);
  json d = doc;  // written before pictures existed: none
  d.erase("pictures");
  CHECK(schema::parse_profile(d.dump(), "p.json").pictures.empty());
  d = doc;
  d["pictures"][0]["svg"] = "<html><script>alert(1)</script></html>";
  CHECK(parse_error(d) == "p.json: /pictures/0/svg: not an SVG document (expected '<svg' or '<?xml' first)");
  d = doc;
  d["pictures"][0]["svg"] = std::string(schema::max_picture_bytes + 1, ' ');
  CHECK(contains(parse_error(d), "p.json: /pictures/0/svg: an SVG of 8388609 bytes, more than a picture may have"));
  d = doc;
  d["pictures"][0].erase("title");
  CHECK(parse_error(d) == "p.json: /pictures/0/title: missing");
  d = doc;
  d["pictures"] = "picture";
  CHECK(contains(parse_error(d), "p.json: /pictures: "));
  d = doc;
  d["pictures"][0] = 3;
  CHECK(parse_error(d) == "p.json: /pictures/0: expected an object with a title and an svg");
  CHECK_THROWS_AS((void)schema::picture_json({"t", "not svg"}), schema::format_error);
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
