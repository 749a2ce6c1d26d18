#pragma once
// The profile the schema's cases write and read back (constructed_profile: every field set to a
// value of its own), and the format_error a profile document gets (parse_error).

#include <cdpkit/schema/profile.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace cdpkit_test {

using nlohmann::json;
namespace schema = cdpkit::schema;

/// A document with one traced run (a launch site with errors, streams and records, a probe site
/// inside child grids) and its untraced baseline: every field set to a value of its own.
inline schema::profile constructed_profile() {
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

inline std::string parse_error(const json& doc) {
  try {
    (void)schema::parse_profile(doc.dump(), "p.json");
  } catch (const schema::format_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace cdpkit_test
