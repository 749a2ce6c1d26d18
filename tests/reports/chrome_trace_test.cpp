// The Chrome (Perfetto) trace export: a slice per launch record and a flow per parent link,
// measured child grids at their real durations on lanes that never overlap (duplicate ids and
// thousands of concurrent grids included), and the SM active counter track beside the host
// kernels on the child grids' time base.

#include <doctest/doctest.h>

#include "profiles.hpp"
#include "report_checks.hpp"

#include <cdpkit/report/html.hpp>
#include <cdpkit/report/profile.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace cdpkit_test;

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

TEST_CASE("a run without measured child windows is marked so, and refused requests are instants, not slices") {
  json doc = valid_profile(5);
  auto& rows = doc["runs"][1]["trace"]["records"]["rows"];
  rows[2][9] = "fallback_budget";  // the outcome column: refused, never ran
  const auto p = rep::parse_profile(doc.dump(), "p.json");
  const auto trace = json::parse(rep::render_chrome_trace({p}));
  std::size_t slices = 0, refused_instants = 0, warnings = 0;
  std::string process;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++slices;
    if (e["ph"] == "i" && e["cat"] == "fallback_budget") ++refused_instants;
    if (e["ph"] == "i" && e["cat"] == "warning") ++warnings;
    if (e["ph"] == "M" && e["name"] == "process_name") process = e["args"]["name"].get<std::string>();
  }
  CHECK(slices == 4u);  // the launched grids' 1 us markers
  CHECK(refused_instants == 1u);
  CHECK(warnings == 1u);
  CHECK(process.find("[no measured child windows]") != std::string::npos);
  const std::string html = rep::render_html({p});
  CHECK(html.find("No child grid of this run has a measured execution window") != std::string::npos);
}
