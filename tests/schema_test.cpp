// The schema layer on the host (no CUDA): the record-column table, the document written and read
// back field by field, the previous version (cdpkit-profile/1) read with its meaning, the
// summary, and the text helpers every writer shares (numbers, UTF-8, atomic files).

#include <doctest/doctest.h>

#include "profile_versions.hpp"

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/schema/profile.hpp>
#include <cdpkit/schema/text.hpp>

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
namespace schema = cdpkit::schema;

/// A document with one traced run (a launch site with errors, streams and records, a probe site
/// inside child grids) and its untraced baseline: every field set to a value of its own.
schema::profile constructed_profile() {
  schema::profile p;
  p.program = "schema_test";
  p.created = "2026-11-29T00:00:00Z";
  p.device = {"NVIDIA H200", "9.0", 132, 150109880320ull, 2048, 13000, 13010};
  p.build = {{"version", "0.1.0"}, {"commit", "abc"}};
  schema::run_profile base;
  base.id = 0;
  base.algorithm = "loop_to_child";
  base.variant = "serial_loop";
  base.input = "power_law:1000";
  base.baseline = "serial_loop";
  base.params = {{"threshold", nullptr}};
  base.ms = 10.5;
  base.work = 7000;
  base.work_unit = "items";
  base.checked = base.verified = true;
  schema::run_profile run = base;
  run.id = 1;
  run.variant = "thresholded";
  run.params = {{"threshold", 127}, {"stream", "fire_and_forget"}};
  run.ms = 2.25;
  run.mismatches = 0;
  schema::trace_profile t;
  t.pending_limit = 4096;
  t.pending_budget = 2048;
  t.pending_high_water = 17;
  t.max_depth_limit = 24;
  t.records_requested = 5;
  t.records_stored = 4;
  t.records_dropped = 1;
  schema::site_profile s;
  s.id = 2;
  s.name = "loop_to_child.thresholded";
  s.role = schema::site_role::launch;
  s.requests = 13;
  s.launched = 9;
  s.fallback_budget = 2;
  s.fallback_depth = 1;
  s.fallback_error = 1;
  s.failed_by_error = {{69, "cudaErrorLaunchPendingCountExceeded", 1}};
  s.failed_other_codes = 3;
  s.inline_items = 44;
  s.child_threads = 9 * 256;
  s.child_blocks = 9;
  s.work_items = 1234;
  s.tiny_launches = 3;
  s.stream_launches = {6, 1, 1, 1};
  s.threads_log2[8] = 9;
  s.blocks_log2[0] = 9;
  s.work_log2[3] = 3;
  s.work_log2[9] = 6;
  s.depth_hist.assign(cdpkit::trace_limits::depth_buckets, 0);
  s.depth_hist[1] = 9;
  s.max_depth = 1;
  schema::site_profile c;
  c.id = 10;
  c.name = "loop_to_child.child_items";
  c.role = schema::site_role::child_probe;
  c.depth_hist.assign(cdpkit::trace_limits::depth_buckets, 0);
  c.probe.steps = 100;
  c.probe.active_lanes = 800;
  c.probe.warps = 4;
  c.probe.lanes_hist[7] = 100;
  c.probe.efficiency_hist[8] = 4;
  c.probe.efficiency_sum = 1.0;
  c.probe.step_efficiency = 0.25;
  c.probe.mean_warp_efficiency = 0.25;
  t.sites = {s, c};
  // launched children hold their execution window; refused ones none
  t.records.push_back({1000, 0, cdpkit::no_record, 1, 256, 600, 2, 1, 0, 0, 0, 1010, 1900});
  t.records.push_back({1100, 1, 0, 1, 256, 5, 2, 2, 1, 0, 0, 1120, 1150});
  t.records.push_back({1200, 2, 0, 1, 1024, 7, 2, 2, 3, 1, 0, cdpkit::no_time_start, cdpkit::no_time_end});
  t.records.push_back({1300, 3, 1, 0, 0, 0, 2, 2, 0, 3, -69, cdpkit::no_time_start, cdpkit::no_time_end});
  t.summary = schema::summarize(t);
  run.trace = t;
  p.runs = {base, run};
  return p;
}

void check_same_sites(const schema::site_profile& a, const schema::site_profile& b) {
  CAPTURE(a.name);
  CHECK(a.id == b.id);
  CHECK(a.name == b.name);
  CHECK(a.role == b.role);
  CHECK(a.requests == b.requests);
  CHECK(a.launched == b.launched);
  CHECK(a.fallback_budget == b.fallback_budget);
  CHECK(a.fallback_depth == b.fallback_depth);
  CHECK(a.fallback_error == b.fallback_error);
  REQUIRE(a.failed_by_error.size() == b.failed_by_error.size());
  for (std::size_t k = 0; k < a.failed_by_error.size(); ++k) {
    CHECK(a.failed_by_error[k].code == b.failed_by_error[k].code);
    CHECK(a.failed_by_error[k].name == b.failed_by_error[k].name);
    CHECK(a.failed_by_error[k].count == b.failed_by_error[k].count);
  }
  CHECK(a.failed_other_codes == b.failed_other_codes);
  CHECK(a.inline_items == b.inline_items);
  CHECK(a.child_threads == b.child_threads);
  CHECK(a.child_blocks == b.child_blocks);
  CHECK(a.work_items == b.work_items);
  CHECK(a.tiny_launches == b.tiny_launches);
  CHECK(a.stream_launches == b.stream_launches);
  CHECK(a.threads_log2 == b.threads_log2);
  CHECK(a.blocks_log2 == b.blocks_log2);
  CHECK(a.work_log2 == b.work_log2);
  CHECK(a.depth_hist == b.depth_hist);
  CHECK(a.max_depth == b.max_depth);
  CHECK(a.probe.steps == b.probe.steps);
  CHECK(a.probe.active_lanes == b.probe.active_lanes);
  CHECK(a.probe.warps == b.probe.warps);
  CHECK(a.probe.lanes_hist == b.probe.lanes_hist);
  CHECK(a.probe.efficiency_hist == b.probe.efficiency_hist);
  CHECK(a.probe.efficiency_sum == doctest::Approx(b.probe.efficiency_sum));
  CHECK(a.probe.step_efficiency == b.probe.step_efficiency);
  CHECK(a.probe.mean_warp_efficiency == b.probe.mean_warp_efficiency);
}

void check_same_records(const std::vector<cdpkit::launch_record>& a, const std::vector<cdpkit::launch_record>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    CAPTURE(k);
    for (const schema::record_field& f : schema::record_fields) {
      CAPTURE(f.name);
      CHECK(f.get(a[k]) == f.get(b[k]));
    }
  }
}

void check_same_summary(const schema::trace_summary& a, const schema::trace_summary& b) {
  CHECK(a.launch_requests == b.launch_requests);
  CHECK(a.child_launches == b.child_launches);
  CHECK(a.fallbacks == b.fallbacks);
  CHECK(a.fallback_budget == b.fallback_budget);
  CHECK(a.fallback_depth == b.fallback_depth);
  CHECK(a.failed_launches == b.failed_launches);
  CHECK(a.tiny_launches == b.tiny_launches);
  CHECK(a.tiny_grid_share == doctest::Approx(b.tiny_grid_share));
  CHECK(a.max_depth == b.max_depth);
  CHECK(a.pending_high_water == b.pending_high_water);
  CHECK(a.probe_steps == b.probe_steps);
  CHECK(a.probe_active_lanes == b.probe_active_lanes);
  CHECK(a.warp_efficiency == doctest::Approx(b.warp_efficiency));
  CHECK(a.mean_warp_efficiency == doctest::Approx(b.mean_warp_efficiency));
}

/// The same document as cdpkit-profile/1 wrote it: the old column name, none of the new fields.
/// A trace's records as cdpkit-profile/2 and /1 write them: without start_ns and end_ns.
void drop_execution_windows(json& records) {
  records["fields"].erase(12);
  records["fields"].erase(11);
  for (auto& row : records["rows"]) {
    row.erase(12);
    row.erase(11);
  }
}

json as_version_1(json doc) {
  doc["schema"] = "cdpkit-profile/1";
  for (auto& run : doc["runs"]) {
    run.erase("baseline");
    if (run["trace"].is_null()) continue;
    drop_execution_windows(run["trace"]["records"]);
    auto& fields = run["trace"]["records"]["fields"];
    for (auto& f : fields)
      if (f == "child_block_threads") f = "block_threads";
    for (auto& site : run["trace"]["sites"]) {
      site.erase("role");
      site["probe"].erase("efficiency_sum");
    }
  }
  return doc;
}

std::string parse_error(const json& doc) {
  try {
    (void)schema::parse_profile(doc.dump(), "p.json");
  } catch (const schema::format_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the record columns are one table, in the order the rows are written") {
  std::vector<std::string> names, v1_names;
  for (const auto& f : schema::record_fields) {
    names.push_back(f.name);
    v1_names.push_back(f.v1_name);
  }
  CHECK(names == std::vector<std::string>{"id", "parent", "t_ns", "site", "depth", "blocks", "child_block_threads",
                                          "work", "stream", "outcome", "error", "start_ns", "end_ns"});
  CHECK(schema::v2_record_field_count == 11u);
  CHECK(v1_names[6] == "block_threads");
  const json trace = schema::trace_json(*constructed_profile().runs[1].trace);
  CHECK(trace["records"]["fields"] == json(names));
  const json& row = trace["records"]["rows"][3];
  REQUIRE(row.size() == schema::record_fields.size());
  CHECK(row[1] == 1);
  CHECK(row[6] == 0);
  CHECK(row[8] == "fire_and_forget");
  CHECK(row[9] == "fallback_error");
  CHECK(row[10] == -69);
  CHECK(row[11].is_null());  // not launched: no execution window
  CHECK(row[12].is_null());
  CHECK(trace["records"]["rows"][0][1].is_null());  // no_record is written as null
  CHECK(trace["records"]["rows"][0][11] == 1010);
  CHECK(trace["records"]["rows"][0][12] == 1900);
}

TEST_CASE("a document written by the schema is read back with every field") {
  const schema::profile p = constructed_profile();
  const json doc = schema::profile_json(p);
  CHECK(doc["schema"] == schema::profile_schema);
  const schema::profile q = schema::parse_profile(doc.dump(), "p.json");
  CHECK(q.version == schema::profile_version);
  CHECK(q.path == "p.json");
  CHECK(q.program == p.program);
  CHECK(q.created == p.created);
  CHECK(q.device.name == p.device.name);
  CHECK(q.device.cc == p.device.cc);
  CHECK(q.device.sms == p.device.sms);
  CHECK(q.device.memory_bytes == p.device.memory_bytes);
  CHECK(q.device.max_threads_per_sm == p.device.max_threads_per_sm);
  CHECK(q.device.driver == p.device.driver);
  CHECK(q.device.runtime == p.device.runtime);
  CHECK(q.build == p.build);
  REQUIRE(q.runs.size() == p.runs.size());
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    const auto &a = q.runs[k], &b = p.runs[k];
    CAPTURE(b.variant);
    CHECK(a.id == b.id);
    CHECK(a.algorithm == b.algorithm);
    CHECK(a.variant == b.variant);
    CHECK(a.input == b.input);
    CHECK(a.baseline == b.baseline);
    CHECK(a.params == b.params);
    CHECK(a.ms == b.ms);
    CHECK(a.work == b.work);
    CHECK(a.work_unit == b.work_unit);
    CHECK(a.checked == b.checked);
    CHECK(a.verified == b.verified);
    CHECK(a.mismatches == b.mismatches);
    REQUIRE(a.trace.has_value() == b.trace.has_value());
    if (!b.trace) continue;
    const auto &ta = *a.trace, &tb = *b.trace;
    CHECK(ta.pending_limit == tb.pending_limit);
    CHECK(ta.pending_budget == tb.pending_budget);
    CHECK(ta.pending_high_water == tb.pending_high_water);
    CHECK(ta.max_depth_limit == tb.max_depth_limit);
    CHECK(ta.tiny_grid_work == tb.tiny_grid_work);
    CHECK(ta.records_requested == tb.records_requested);
    CHECK(ta.records_stored == tb.records_stored);
    CHECK(ta.records_dropped == tb.records_dropped);
    CHECK(ta.refusals_recorded == tb.refusals_recorded);
    REQUIRE(ta.sites.size() == tb.sites.size());
    for (std::size_t s = 0; s < tb.sites.size(); ++s) check_same_sites(ta.sites[s], tb.sites[s]);
    check_same_records(ta.records, tb.records);
    check_same_summary(ta.summary, tb.summary);
  }
}

TEST_CASE("the summary is computed once, from the sites, and written with the trace") {
  const schema::profile p = constructed_profile();
  const auto& t = *p.runs[1].trace;
  const schema::trace_summary s = schema::summarize(t);
  CHECK(s.launch_requests == 13u);
  CHECK(s.child_launches == 9u);
  CHECK(s.fallbacks == 4u);
  CHECK(s.fallback_budget == 2u);
  CHECK(s.fallback_depth == 1u);
  CHECK(s.failed_launches == 1u);
  CHECK(s.tiny_launches == 3u);
  CHECK(s.tiny_grid_share == doctest::Approx(3.0 / 9.0));
  CHECK(s.max_depth == 1u);
  CHECK(s.pending_high_water == 17u);
  CHECK(s.probe_steps == 100u);
  CHECK(s.warp_efficiency == doctest::Approx(0.25));
  CHECK(s.mean_warp_efficiency == doctest::Approx(0.25));
  const json written = schema::trace_json(t)["summary"];
  CHECK(written["fallbacks"] == 4);
  CHECK(written["tiny_grid_share"] == doctest::Approx(3.0 / 9.0));
  const schema::trace_summary empty = schema::summarize(schema::trace_profile{});
  CHECK(empty.warp_efficiency < 0);
  CHECK(empty.mean_warp_efficiency < 0);
  CHECK(empty.tiny_grid_share == 0.0);
  CHECK(schema::summary_json(empty)["warp_efficiency"].is_null());
}

TEST_CASE("a cdpkit-profile/1 document is read with the meaning it had") {
  const json v1 = as_version_1(schema::profile_json(constructed_profile()));
  const schema::profile p = schema::parse_profile(v1.dump(), "old.json");
  CHECK(p.version == 1);
  REQUIRE(p.runs.size() == 2u);
  CHECK(p.runs[1].baseline == "serial_loop");  // loop_to_child's baseline in /1
  const auto& t = *p.runs[1].trace;
  CHECK(t.records[2].child_block_threads == 1024u);  // the column was called block_threads
  CHECK(t.sites[0].role == schema::site_role::launch);
  CHECK(t.sites[1].role == schema::site_role::child_probe);  // its name ends in child_items
  CHECK(t.sites[1].probe.efficiency_sum == doctest::Approx(1.0));  // mean * warps
  CHECK(t.summary.mean_warp_efficiency == doctest::Approx(0.25));
  // bfs runs compare to vertex_loop, other families to their input's first run
  json bfs = v1;
  for (auto& run : bfs["runs"]) run["algorithm"] = "bfs";
  CHECK(schema::parse_profile(bfs.dump(), "b.json").runs[0].baseline == "vertex_loop");
  json other = v1;
  for (auto& run : other["runs"]) run["algorithm"] = "sort";
  CHECK(schema::parse_profile(other.dump(), "o.json").runs[0].baseline.empty());
}

TEST_CASE("the committed H200 fixture is cdpkit-profile/1 and still reads") {
  const schema::profile p = schema::load_profile(CDPKIT_TEST_FIXTURES "/loop_to_child_h200.json");
  CHECK(p.version == 1);
  REQUIRE_FALSE(p.runs.empty());
  CHECK(p.runs[0].variant == "serial_loop");
  for (const auto& run : p.runs) CHECK(run.baseline == "serial_loop");
  const auto index = cdpkit::report::baseline_of(p, 1);
  REQUIRE(index.has_value());
  CHECK(*index == 0u);
  bool child_probe = false;
  for (const auto& run : p.runs)
    if (run.trace)
      for (const auto& s : run.trace->sites) child_probe = child_probe || s.role == schema::site_role::child_probe;
  CHECK(child_probe);
  // written again, it is the current version and reads the same
  const schema::profile q = schema::parse_profile(schema::profile_json(p).dump(), "again.json");
  CHECK(q.version == schema::profile_version);
  REQUIRE(q.runs.size() == p.runs.size());
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    CHECK(q.runs[k].baseline == p.runs[k].baseline);
    if (!p.runs[k].trace) continue;
    check_same_records(q.runs[k].trace->records, p.runs[k].trace->records);
    for (std::size_t s = 0; s < p.runs[k].trace->sites.size(); ++s)
      check_same_sites(q.runs[k].trace->sites[s], p.runs[k].trace->sites[s]);
  }
}

TEST_CASE("a cdpkit-profile/2 document still reads, its records without execution windows") {
  json doc = schema::profile_json(constructed_profile());
  doc["schema"] = "cdpkit-profile/2";
  drop_execution_windows(doc["runs"][1]["trace"]["records"]);
  const schema::profile p = schema::parse_profile(doc.dump(), "v2.json");
  CHECK(p.version == 2);
  REQUIRE(p.runs[1].trace.has_value());
  REQUIRE(p.runs[1].trace->records.size() == 4u);
  for (const auto& r : p.runs[1].trace->records) CHECK_FALSE(cdpkit::has_execution_time(r));
  CHECK(p.runs[1].trace->records[1].work == 5u);
  // a /2 document with /3's columns is refused, naming the columns it must have
  json wide = schema::profile_json(constructed_profile());
  wide["schema"] = "cdpkit-profile/2";
  CHECK(parse_error(wide) == "p.json: /runs/1/trace/records/fields: expected the record fields id, parent, t_ns, "
                             "site, depth, blocks, child_block_threads, work, stream, outcome, error");
}

TEST_CASE("a record's execution window is both times or neither, and never ends before it starts") {
  const json doc = schema::profile_json(constructed_profile());
  json d = doc;
  d["runs"][1]["trace"]["records"]["rows"][0][12] = nullptr;
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/rows/0/11: expected null: start_ns and end_ns are null "
                          "together (a child not measured)");
  d = doc;
  d["runs"][1]["trace"]["records"]["rows"][2][11] = 5;
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/rows/2/11: expected null: start_ns and end_ns are null "
                          "together (a child not measured)");
  d = doc;
  d["runs"][1]["trace"]["records"]["rows"][1][12] = 1119;
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/rows/1/12: expected end_ns >= start_ns (1120)");
  d = doc;
  d["runs"][1]["trace"]["records"]["rows"][1][11] = -1;
  CHECK(parse_error(d).find("p.json: /runs/1/trace/records/rows/1/11: expected a non-negative integer") == 0);
  d = doc;
  d["runs"][1]["trace"]["records"]["rows"][1].erase(12);
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/rows/1: expected a record row of 13 fields");
  d = doc;  // record 2 was refused (fallback_budget): it cannot have run
  d["runs"][1]["trace"]["records"]["rows"][2][11] = 1210;
  d["runs"][1]["trace"]["records"]["rows"][2][12] = 1290;
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/rows/2/11: expected null: a request that was not "
                          "launched has no execution window");
  d = doc;
  d["runs"][1]["trace"]["records"]["rows"][1][11] = 0;
  d["runs"][1]["trace"]["records"]["rows"][1][12] = 0;
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/rows/1/12: expected end_ns > 0 (0 is not a "
                          "%globaltimer time)");
}

TEST_CASE("records.refusals says whether refused requests have records, and is read as true where absent") {
  const json doc = schema::profile_json(constructed_profile());  // its record 2 was refused
  CHECK(doc["runs"][1]["trace"]["records"]["refusals"] == true);
  json d = doc;
  d["runs"][1]["trace"]["records"].erase("refusals");  // a profile written before the field
  CHECK(schema::parse_profile(d.dump(), "p.json").runs[1].trace->refusals_recorded);
  d = doc;
  d["runs"][1]["trace"]["records"]["refusals"] = false;
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/rows/2/9: expected a launched or failed request: "
                          "records.refusals is false, so a refused request has no record");
  d["runs"][1]["trace"]["records"]["rows"].erase(2);
  d["runs"][1]["trace"]["records"]["in_profile"] = 2;
  const schema::profile p = schema::parse_profile(d.dump(), "p.json");
  CHECK_FALSE(p.runs[1].trace->refusals_recorded);
  CHECK(schema::profile_json(p)["runs"][1]["trace"]["records"]["refusals"] == false);
  d["runs"][1]["trace"]["records"]["refusals"] = 1;
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/refusals: expected true or false");
}

TEST_CASE("the current profile requires the fields of /2 and /3 and names the one that is wrong") {
  const json doc = schema::profile_json(constructed_profile());
  json d = doc;
  d["runs"][1]["trace"]["records"]["fields"][6] = "block_threads";
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/fields: expected the record fields id, parent, t_ns, site, "
                          "depth, blocks, child_block_threads, work, stream, outcome, error, start_ns, end_ns");
  d = doc;
  d["runs"][1]["trace"]["sites"][0]["role"] = "driver";
  CHECK(parse_error(d) == "p.json: /runs/1/trace/sites/0/role: unknown site role 'driver' (launch, probe or child_probe)");
  d = doc;
  d["runs"][0].erase("baseline");
  CHECK(parse_error(d) == "p.json: /runs/0/baseline: missing");
  d = doc;
  d["runs"][1]["trace"]["sites"][0]["streams"].erase("tail");
  CHECK(parse_error(d) == "p.json: /runs/1/trace/sites/0/streams/tail: missing");
  d = doc;
  d["runs"][1]["trace"]["records"]["rows"][0][8] = "sideways";
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/rows/0/8: unknown stream name 'sideways'");
  d = doc;
  d["runs"][1]["trace"]["records"]["rows"][0][3] = 65536;
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/rows/0/3: expected a non-negative integer up to 65535");
  d = doc;
  d["runs"][1]["trace"]["sites"][1]["probe"].erase("efficiency_sum");
  CHECK(parse_error(d) == "p.json: /runs/1/trace/sites/1/probe/efficiency_sum: missing");
}

namespace {
/// constructed_profile() with what the CUPTI collector adds in /4: hardware metrics with the
/// accounting, a PM timeline, collection times, the collector's notes and the host activity.
schema::profile collected_profile() {
  schema::profile p = constructed_profile();
  schema::run_profile& run = p.runs[1];
  schema::hardware_profile h;
  h.range = "loop_to_child::thresholded#1";
  h.ms = 1.25;
  h.metrics = {{"smsp__inst_executed.sum", 1000.0}, {"smsp__thread_inst_executed.sum", 16000.0},
               {"sm__ctas_launched.sum", 73.0}};
  // 64 host blocks of 256 threads + 9 child blocks of 256 threads
  h.accounting = schema::cta_accounting{73, 73 * 256, 1, 64, 64 * 256, 9, 9, 9 * 256, 0};
  run.hardware = h;
  schema::timeline_profile t;
  t.interval_ns = 20000;
  t.ms = 1.5;
  t.metrics = {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "sm__inst_executed_realtime.sum"};
  t.samples = {{1000, 21000, {50.0, 1e6}}, {21000, 41000, {25.5, 2e5}}};
  t.clock_offset_ns = -412345;
  run.timeline = t;
  run.collect.traced_ms = 1.1;
  run.collect.metrics_ms = 1.25;
  run.collect.timeline_ms = 1.5;
  run.collect.baseline_ms = 1.05;
  run.collect.baseline_runs_ms = {1.05, 1.5, 1.07};
  run.collect.traced_runs_ms = {1.2, 1.1, 1.3};
  p.collector = schema::collector_profile{{"trace", "metrics", "timeline"}, {"a note"}};
  schema::host_activity_profile a;
  a.kernels = {{std::uint64_t{1}, "root_kernel", 900, 2000, 64, 256}, {std::nullopt, "other", 3000, 3100, 1, 32},
               {std::uint64_t{1}, "root_kernel", 4000, 4100, 64, 256}};
  a.transfers = {{std::uint64_t{0}, "HtoD", 10, 20, 4096}, {std::nullopt, "memset", 30, 31, 64}};
  a.dropped = 2;
  p.host_activity = a;
  return p;
}
}  // namespace

TEST_CASE("a cdpkit-profile/4 document keeps the hardware metrics, the timeline and the host activity") {
  const schema::profile p = collected_profile();
  const json doc = schema::profile_json(p);
  CHECK(doc["schema"] == "cdpkit-profile/4");
  CHECK(doc["runs"][1]["hardware"]["accounting"]["status"] == "exact");
  CHECK(doc["host_activity"]["kernel_names"].size() == 2);  // each name once
  const schema::profile q = schema::parse_profile(doc.dump(), "v4.json");
  CHECK(q.version == 4);
  CHECK_FALSE(q.runs[0].hardware.has_value());
  CHECK_FALSE(q.runs[0].timeline.has_value());
  CHECK_FALSE(q.runs[0].collect.traced_ms.has_value());
  REQUIRE(q.runs[1].hardware.has_value());
  const auto& h = *q.runs[1].hardware;
  CHECK(h.range == "loop_to_child::thresholded#1");
  CHECK(h.ms == 1.25);
  CHECK(h.value("sm__ctas_launched.sum") == 73.0);
  CHECK_FALSE(h.value("gpu__time_duration.sum").has_value());
  REQUIRE(h.warp_efficiency().has_value());
  CHECK(*h.warp_efficiency() == doctest::Approx(0.5));
  REQUIRE(h.accounting.has_value());
  CHECK(h.accounting->child_blocks == 9u);
  CHECK(h.accounting->unaccounted() == 0);
  CHECK(h.accounting->unaccounted_threads() == 0);
  CHECK(h.accounting->host_threads == 64u * 256u);
  REQUIRE(q.runs[1].timeline.has_value());
  const auto& t = *q.runs[1].timeline;
  CHECK(t.interval_ns == 20000u);
  REQUIRE(t.samples.size() == 2u);
  CHECK(t.samples[1].start_ns == 21000u);
  CHECK(t.samples[1].values[0] == 25.5);
  CHECK(t.index_of("sm__inst_executed_realtime.sum") == std::optional<std::size_t>(1));
  CHECK(t.clock_offset_ns == std::optional<std::int64_t>(-412345));
  CHECK(q.runs[1].collect.metrics_ms == 1.25);
  CHECK(q.runs[1].collect.baseline_ms == std::optional<double>(1.05));
  CHECK_FALSE(q.runs[0].collect.baseline_ms.has_value());
  CHECK(q.runs[1].collect.baseline_runs_ms == std::vector<double>{1.05, 1.5, 1.07});
  CHECK(q.runs[1].collect.traced_runs_ms == std::vector<double>{1.2, 1.1, 1.3});
  CHECK(q.runs[0].collect.traced_runs_ms.empty());
  REQUIRE(q.collector.has_value());
  CHECK(q.collector->notes == std::vector<std::string>{"a note"});
  REQUIRE(q.host_activity.has_value());
  REQUIRE(q.host_activity->kernels.size() == 3u);
  CHECK(q.host_activity->kernels[2].name == "root_kernel");
  CHECK(q.host_activity->kernels[2].run == std::optional<std::uint64_t>(1));
  CHECK_FALSE(q.host_activity->kernels[1].run.has_value());
  CHECK(q.host_activity->transfers[0].kind == "HtoD");
  CHECK(q.host_activity->transfers[0].bytes == 4096u);
  CHECK(q.host_activity->dropped == 2u);
}

TEST_CASE("the CTA accounting is exact, the device runtime's own one-warp CTAs, copies, or names the difference") {
  using schema::accounting_status;
  // host launches only: 1024 blocks of 128 threads, nothing else may run
  schema::cta_accounting a{1024, 1024 * 128, 1, 1024, 1024 * 128, 0, 0, 0, 0};
  CHECK(schema::classify(a) == accounting_status::exact);
  a.hardware_ctas = 1025;  // a CTA nobody launched, of 0 threads: not the runtime's kind
  CHECK(a.unaccounted() == 1);
  CHECK(schema::classify(a) == accounting_status::extra_ctas);
  // a parent block of 128 threads launching 64 one-block grids of 32 threads: measured on the
  // H200, 71 CTAs and 2337 threads (6 of the runtime's own: 1 of one thread, 5 of a warp)
  a = {71, 2337, 1, 1, 128, 64, 64, 64 * 32, 0};
  CHECK(a.unaccounted() == 6);
  CHECK(a.unaccounted_threads() == 161);
  CHECK(schema::classify(a) == accounting_status::device_runtime);
  a.hardware_threads += 6 * 256;  // the same CTAs holding 256 more threads each: not the runtime's
  CHECK(schema::classify(a) == accounting_status::extra_ctas);
  a.transfers = 1;  // with a memset in the run: the driver's kernel may be any size
  CHECK(schema::classify(a) == accounting_status::driver_transfers);
  a = {60, 2000, 1, 1, 128, 64, 64, 64 * 32, 0};  // the trace says 64 child blocks ran; fewer did
  CHECK(a.unaccounted() == -5);
  CHECK(schema::classify(a) == accounting_status::missing_ctas);
  CHECK(std::string(schema::name(accounting_status::missing_ctas)) == "missing_ctas");
  CHECK(std::string(schema::name(accounting_status::driver_transfers)) == "driver_transfers");
}

TEST_CASE("a /4 document's collector parts are checked and a /3 document has none") {
  const json doc = schema::profile_json(collected_profile());
  json d = doc;
  d["runs"][1]["timeline"]["samples"][1] = json::array({5, 4, 1.0, 2.0});
  CHECK(parse_error(d) == "p.json: /runs/1/timeline/samples/1: the sample ends before it starts");
  d = doc;
  d["runs"][1]["timeline"]["samples"][1] = json::array({500, 600, 1.0, 2.0});
  CHECK(parse_error(d) == "p.json: /runs/1/timeline/samples/1: samples must be in time order");
  d = doc;
  d["runs"][1]["timeline"]["samples"][0] = json::array({1000, 21000, 1.0});
  CHECK(parse_error(d) == "p.json: /runs/1/timeline/samples/0: expected [start_ns, end_ns] and 2 values");
  d = doc;
  d["runs"][1]["timeline"]["clock_offset_ns"] = "late";
  CHECK(parse_error(d) == "p.json: /runs/1/timeline/clock_offset_ns: expected an integer");
  d = doc;  // a /4 profile written before the clocks were aligned: no offset
  d["runs"][1]["timeline"].erase("clock_offset_ns");
  CHECK_FALSE(schema::parse_profile(d.dump(), "p.json").runs[1].timeline->clock_offset_ns.has_value());
  d = doc;
  d["runs"][1]["timeline"]["interval_ns"] = 0;
  CHECK(parse_error(d) == "p.json: /runs/1/timeline/interval_ns: expected a positive interval");
  d = doc;
  d["runs"][1]["hardware"]["metrics"]["sm__ctas_launched.sum"] = "many";
  CHECK(parse_error(d) == "p.json: /runs/1/hardware/metrics/sm__ctas_launched.sum: expected a number");
  d = doc;
  d["runs"][1]["hardware"]["accounting"].erase("child_blocks");
  CHECK(parse_error(d) == "p.json: /runs/1/hardware/accounting/child_blocks: missing");
  d = doc;
  d["runs"][1]["collect"]["traced_ms"] = -1.0;
  CHECK(parse_error(d) == "p.json: /runs/1/collect/traced_ms: expected a non-negative number or null");
  d = doc;
  d["runs"][1]["collect"]["baseline_ms"] = "fast";
  CHECK(parse_error(d) == "p.json: /runs/1/collect/baseline_ms: expected a number or null");
  d = doc;  // written before the baseline existed: read, the baseline unset
  d["runs"][1]["collect"].erase("baseline_ms");
  CHECK_FALSE(schema::parse_profile(d.dump(), "p.json").runs[1].collect.baseline_ms.has_value());
  d = doc;
  d["runs"][1]["collect"]["traced_runs_ms"][2] = -0.5;
  CHECK(parse_error(d) == "p.json: /runs/1/collect/traced_runs_ms/2: expected a non-negative number");
  d = doc;
  d["runs"][1]["collect"]["baseline_runs_ms"] = 1.05;
  CHECK(parse_error(d) == "p.json: /runs/1/collect/baseline_runs_ms: expected an array");
  d = doc;  // written before the runs' times were kept: read, without them
  d["runs"][1]["collect"].erase("baseline_runs_ms");
  d["runs"][1]["collect"].erase("traced_runs_ms");
  {
    const schema::profile q = schema::parse_profile(d.dump(), "p.json");
    CHECK(q.runs[1].collect.baseline_runs_ms.empty());
    CHECK(q.runs[1].collect.traced_runs_ms.empty());
    CHECK(q.runs[1].collect.traced_ms == std::optional<double>(1.1));
  }
  d = doc;
  d["runs"][1].erase("collect");
  CHECK(parse_error(d) == "p.json: /runs/1/collect: missing");
  d = doc;
  d["host_activity"]["kernels"][0][0] = 7;
  CHECK(parse_error(d) == "p.json: /host_activity/kernels/0/0: no run has id 7");
  d = doc;
  d["host_activity"]["kernels"][0][1] = 2;
  CHECK(parse_error(d) == "p.json: /host_activity/kernels/0/1: expected a non-negative integer up to 1");
  d = doc;
  d["host_activity"]["kernels"][0][3] = 1;
  CHECK(parse_error(d) == "p.json: /host_activity/kernels/0: the kernel ends before it starts");
  d = doc;
  d["host_activity"]["transfers"][1].erase(4);
  CHECK(parse_error(d) == "p.json: /host_activity/transfers/1: expected [run, kind, start_ns, end_ns, bytes]");
  d = doc;
  d.erase("collector");
  CHECK(parse_error(d) == "p.json: /collector: missing");
  // a /3 document: the /4 members are neither required nor read
  const json v3 = cdpkit_test::as_profile_v3(schema::profile_json(constructed_profile()));
  const schema::profile p = schema::parse_profile(v3.dump(), "v3.json");
  CHECK(p.version == 3);
  CHECK_FALSE(p.runs[1].hardware.has_value());
  CHECK_FALSE(p.host_activity.has_value());
}

TEST_CASE("numbers are formatted one way for tables and reports") {
  CHECK(schema::grouped(0) == "0");
  CHECK(schema::grouped(999) == "999");
  CHECK(schema::grouped(1000) == "1,000");
  CHECK(schema::grouped(1234567) == "1,234,567");
  CHECK(schema::grouped(18446744073709551615ull) == "18,446,744,073,709,551,615");
  CHECK(schema::fixed(1.25, 1) == "1.2");
  CHECK(schema::fixed(3.0, 3) == "3.000");
  CHECK(schema::percent(0.91) == "91%");
  CHECK(schema::percent(0.034) == "3.4%");
  CHECK(schema::percent(0.0) == "0%");
  CHECK(schema::percent(1.0) == "100%");
  CHECK(schema::format("%.2fx", 23.04) == "23.04x");
  CHECK(schema::utf8_replaced("ok \xc3\xa9") == "ok \xc3\xa9");
  CHECK(schema::utf8_replaced("bad \xff") == "bad \xef\xbf\xbd");
}

TEST_CASE("files are written whole through a temporary file that never stays behind") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_schema_test_files";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "taken" / "inside");
  const auto count_tmp = [&] {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) n += e.path().extension() == ".tmp";
    return n;
  };
  const std::string ok = (dir / "ok.txt").string();
  schema::write_file_atomically(ok, "first");
  schema::write_file_atomically(ok, "second");
  std::ifstream in(ok);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "second");
  CHECK_THROWS_WITH_AS(schema::write_file_atomically("", "x"), "empty output path", schema::write_error);
  const std::string taken = (dir / "taken").string();
  CHECK_THROWS_WITH_AS(schema::write_file_atomically(taken, "x"),
                       (taken + ": exists and is a directory, not a regular file; nothing written").c_str(),
                       schema::write_error);
  CHECK(std::filesystem::is_directory(taken));
  const std::string missing = (dir / "missing" / "f.json").string();
  CHECK_THROWS_WITH_AS(schema::write_json_file(json::object(), missing), doctest::Contains(missing.c_str()),
                       schema::write_error);
  const std::string doc = (dir / "doc.json").string();
  schema::write_json_file(json{{"name", "GPU \xff"}}, doc);
  CHECK(json::parse(std::ifstream(doc))["name"] == "GPU \xef\xbf\xbd");
  CHECK(count_tmp() == 0u);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a file is written through a new temporary of its own, over a regular file or a link to one only") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_schema_test_kinds";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "keep");
  const auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const auto files_in_dir = [&] {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
    return n;
  };
  // a file named as the old fixed temporary, PATH.tmp, is neither truncated nor removed
  std::ofstream(dir / "a.json.tmp") << "input";
  schema::write_file_atomically((dir / "a.json").string(), "output");
  CHECK(read(dir / "a.json.tmp") == "input");
  CHECK(read(dir / "a.json") == "output");
  // the new file has the usual permissions: 0666 less the umask, as a plain open would give it
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((std::filesystem::status(dir / "a.json").permissions() & std::filesystem::perms::all) ==
        static_cast<std::filesystem::perms>(0666 & ~mask));
  // a directory, a FIFO and a link to nothing are refused before anything is created
  std::ofstream(dir / "keep.tmp") << "mine";
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  std::filesystem::create_symlink(dir / "nowhere", dir / "dangling");
  std::filesystem::create_symlink("loop_b", dir / "loop_a");  // a loop of links is not a new file
  std::filesystem::create_symlink("loop_a", dir / "loop_b");
  const std::size_t before = files_in_dir();
  for (const auto& [name, what] : {std::pair<std::string, std::string>{"keep", "exists and is a directory"},
                                   {"fifo", "exists and is a FIFO"},
                                   {"dangling", "a symbolic link to a file that does not exist"},
                                   {"loop_a", "Too many levels of symbolic links"}}) {
    const std::string path = (dir / name).string();
    CAPTURE(path);
    CHECK_THROWS_WITH_AS(schema::write_file_atomically(path, "x"), doctest::Contains((path + ": " + what).c_str()),
                         schema::write_error);
    CHECK(files_in_dir() == before);
  }
  CHECK(read(dir / "keep.tmp") == "mine");
  CHECK(std::filesystem::is_fifo(dir / "fifo"));
  CHECK_FALSE(std::filesystem::exists(dir / "nowhere"));
  // a link to a regular file stays a link; the file it points to gets the text
  std::ofstream(dir / "target.txt") << "old";
  std::filesystem::create_symlink("target.txt", dir / "link.txt");  // relative, as links often are
  schema::write_file_atomically((dir / "link.txt").string(), "new");
  CHECK(std::filesystem::is_symlink(dir / "link.txt"));
  CHECK(read(dir / "target.txt") == "new");
  // another user's link is not followed (in a shared folder it could steer the write onto any
  // file of ours): made here as root, by handing the link to nobody
  if (::geteuid() == 0) {
    std::filesystem::create_symlink("target.txt", dir / "foreign.txt");
    REQUIRE(::lchown((dir / "foreign.txt").c_str(), 65534, 65534) == 0);
    CHECK_THROWS_WITH_AS(schema::write_file_atomically((dir / "foreign.txt").string(), "steered"),
                         doctest::Contains("a symbolic link owned by another user; nothing written"), schema::write_error);
    CHECK(read(dir / "target.txt") == "new");
  }
  // a name near the file system's limit (255 bytes) still gets a temporary: a short one of its own
  const std::string long_name = std::string(250, 'x') + ".html";
  schema::write_file_atomically((dir / long_name).string(), "long");
  CHECK(read(dir / long_name) == "long");
  // no temporary stays behind; the user's files named *.tmp do
  CHECK_THROWS_AS(schema::write_file_atomically((dir / "missing" / "f.txt").string(), "x"), schema::write_error);
  std::size_t temporaries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) temporaries += e.path().extension() == ".tmp";
  CHECK(temporaries == 2u);  // a.json.tmp and keep.tmp
  std::filesystem::remove_all(dir);
}
