// The schema layer on the host (no CUDA): the record-column table, the document written and read
// back field by field, older and unknown versions refused with what to do instead, the committed
// H200 profile, the summary, the records' execution windows, and every required field named where
// it is wrong.

#include <doctest/doctest.h>

#include "constructed_profile.hpp"

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/schema/profile.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

using namespace cdpkit_test;

namespace {

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

/// The schema of version `number` of the profile format ("cdpkit-profile/" and the number), and
/// the current version's number: both made from schema::profile_schema.
std::string schema_of_version(unsigned long number) {
  const std::string current = schema::profile_schema;
  return current.substr(0, current.rfind('/') + 1) + std::to_string(number);
}
unsigned long current_version() {
  const std::string current = schema::profile_schema;
  return std::stoul(current.substr(current.rfind('/') + 1));
}

}  // namespace

TEST_CASE("the record columns are one table, in the order the rows are written") {
  std::vector<std::string> names;
  for (const auto& f : schema::record_fields) names.push_back(f.name);
  CHECK(names == std::vector<std::string>{"id", "parent", "t_ns", "site", "depth", "blocks", "child_block_threads",
                                          "work", "stream", "outcome", "error", "start_ns", "end_ns"});
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

TEST_CASE("a document of an older version is refused, naming it and the version to write instead") {
  const json doc = schema::profile_json(constructed_profile());
  REQUIRE(current_version() > 1);
  for (unsigned long number = 1; number < current_version(); ++number) {
    json old = doc;
    old["schema"] = schema_of_version(number);
    CAPTURE(old["schema"]);
    CHECK(parse_error(old) == "p.json: /schema: " + schema_of_version(number) +
                                  " is no longer read; re-run the program to write " + schema::profile_schema);
  }
  // refused before any other field is read: an older document's own fields are not the point
  CHECK(parse_error(json{{"schema", schema_of_version(1)}}) ==
        "p.json: /schema: " + schema_of_version(1) + " is no longer read; re-run the program to write " +
            schema::profile_schema);
}

TEST_CASE("a document of an unknown schema is refused, naming the one version read") {
  const json doc = schema::profile_json(constructed_profile());
  const std::string current = schema::profile_schema;
  const std::string family = current.substr(0, current.rfind('/') + 1);
  for (const std::string& other : {schema_of_version(current_version() + 1), family + "0", family + "01", family,
                                   family + "1x", family + "-1", std::string("other-profile/1"), std::string()}) {
    CAPTURE(other);
    json d = doc;
    d["schema"] = other;
    CHECK(parse_error(d) == "p.json: /schema: unsupported schema '" + other + "' (this tool reads " + current + ")");
  }
  json d = doc;
  d["schema"] = 4;
  CHECK(parse_error(d) == "p.json: /schema: expected a string");
  d.erase("schema");
  CHECK(parse_error(d) == "p.json: /schema: missing");
}

TEST_CASE("the committed H200 profile reads, and written again it is the same document") {
  const std::string path = CDPKIT_TEST_FIXTURES "/profile_h200.json";
  const schema::profile p = schema::load_profile(path);
  CHECK(p.device.name == "NVIDIA H200");
  REQUIRE(p.runs.size() > 1u);
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
  // the writer gives back the committed text's document, and it reads the same
  const json written = schema::profile_json(p);
  CHECK(written == json::parse(std::ifstream(path)));
  const schema::profile q = schema::parse_profile(written.dump(), "again.json");
  REQUIRE(q.runs.size() == p.runs.size());
  for (std::size_t k = 0; k < p.runs.size(); ++k) {
    CHECK(q.runs[k].baseline == p.runs[k].baseline);
    REQUIRE(q.runs[k].trace.has_value() == p.runs[k].trace.has_value());
    if (!p.runs[k].trace) continue;
    check_same_records(q.runs[k].trace->records, p.runs[k].trace->records);
    REQUIRE(q.runs[k].trace->sites.size() == p.runs[k].trace->sites.size());
    for (std::size_t s = 0; s < p.runs[k].trace->sites.size(); ++s)
      check_same_sites(q.runs[k].trace->sites[s], p.runs[k].trace->sites[s]);
    check_same_summary(q.runs[k].trace->summary, p.runs[k].trace->summary);
  }
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

TEST_CASE("records.refusals says whether refused requests have records, and is required") {
  const json doc = schema::profile_json(constructed_profile());  // its record 2 was refused
  CHECK(doc["runs"][1]["trace"]["records"]["refusals"] == true);
  CHECK(schema::parse_profile(doc.dump(), "p.json").runs[1].trace->refusals_recorded);
  json d = doc;
  d["runs"][1]["trace"]["records"].erase("refusals");
  CHECK(parse_error(d) == "p.json: /runs/1/trace/records/refusals: missing");
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

TEST_CASE("a profile requires every field and names the one that is wrong") {
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
