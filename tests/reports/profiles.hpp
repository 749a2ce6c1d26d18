#pragma once
// The profiles the report's cases read: valid_profile, a small valid profile as JSON (an untraced
// baseline and a traced run with a launch site and a probe site); and, made through the schema,
// profiles with the hardware's view (ranked_profile, collected_profile).

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/profile.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace cdpkit_test {

using nlohmann::json;
namespace rep = cdpkit::report;
namespace schema = cdpkit::schema;

inline json zeros(std::size_t n) { return json(std::vector<std::uint64_t>(n, 0)); }

/// A valid site with the given work histogram (launched = its sum).
inline json site_json(int id, const std::string& name, const std::vector<std::pair<int, std::uint64_t>>& work) {
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
  return {{"id", id}, {"name", name}, {"role", "launch"}, {"requests", launched + 40},
          {"outcomes", {{"launched", launched}, {"fallback_budget", 30}, {"fallback_depth", 0}, {"fallback_error", 10}}},
          {"failed_by_error", json::array({{{"code", 69}, {"name", "cudaErrorLaunchPendingCountExceeded"}, {"count", 10}}})},
          {"failed_other_codes", 0}, {"inline_items", 400}, {"child_threads", launched * 256},
          {"child_blocks", launched}, {"work_items", 1000}, {"tiny_launches", 0},
          {"streams", {{"fire_and_forget", launched}, {"named_per_thread", 0}, {"null_stream", 0}, {"tail", 0}}},
          {"threads_log2", threads}, {"blocks_log2", blocks},
          {"work_log2", w}, {"depth_hist", depth}, {"max_depth", 1},
          {"probe", {{"steps", 0}, {"active_lanes", 0}, {"lanes_hist", zeros(32)}, {"warps", 0},
                     {"efficiency_hist", zeros(32)}, {"efficiency_sum", 0.0}, {"step_efficiency", nullptr},
                     {"mean_warp_efficiency", nullptr}}}};
}

inline json probe_site(int id, const std::string& name, std::uint64_t steps, std::uint64_t active) {
  json s = site_json(id, name, {});
  s["requests"] = 0;
  s["outcomes"] = {{"launched", 0}, {"fallback_budget", 0}, {"fallback_depth", 0}, {"fallback_error", 0}};
  s["failed_by_error"] = json::array();
  s["role"] = "probe";
  json lanes = zeros(32);
  lanes[3] = steps;  // 4 active lanes
  s["probe"] = {{"steps", steps}, {"active_lanes", active}, {"lanes_hist", lanes}, {"warps", 10},
                {"efficiency_hist", zeros(32)}, {"efficiency_sum", 1.25},
                {"step_efficiency", static_cast<double>(active) / (32.0 * steps)}, {"mean_warp_efficiency", 0.125}};
  return s;
}

/// A profile: a baseline run (no trace) and a traced run whose site bfs.neighbors has 100 launches,
/// 91 of them with fewer than 32 work items (buckets 0..4), and whose pending reached the limit.
inline json valid_profile(std::size_t records = 3) {
  json rows = json::array();
  for (std::size_t k = 0; k < records; ++k)
    rows.push_back({k, k == 0 ? json(nullptr) : json(k - 1), 1000 + 10 * k, 16, k == 0 ? 1 : 2, 1, 256,
                    k % 2 ? 4 : 600, "fire_and_forget", "launched", 0, nullptr, nullptr});
  json fields = json::array();
  for (const auto& f : cdpkit::schema::record_fields) fields.push_back(f.name);
  json trace = {{"pending", {{"limit", 2048}, {"budget", 2048}, {"high_water", 2048}}}, {"max_depth_limit", 24},
                {"tiny_grid_work", 32}, {"summary", json::object()},
                {"sites", json::array({site_json(16, "bfs.neighbors", {{0, 50}, {3, 30}, {4, 11}, {9, 9}}),
                                       probe_site(8, "loop_to_child.serial_items", 1000, 4000)})},
                {"records", {{"requested", records}, {"stored", records}, {"dropped", 0}, {"in_profile", records},
                             {"refusals", true}, {"fields", fields}, {"rows", rows}}}};
  json run = {{"id", 0}, {"algorithm", "bfs"}, {"variant", "serial_loop"}, {"input", "rmat:10"},
              {"baseline", "serial_loop"}, {"params", json::object()}, {"ms", 10.0}, {"work", 1000000},
              {"work_unit", "edges"}, {"checked", true}, {"verified", true}, {"mismatches", 0}, {"trace", nullptr},
              {"hardware", nullptr}, {"timeline", nullptr},
              {"collect", {{"traced_ms", nullptr}, {"metrics_ms", nullptr}, {"timeline_ms", nullptr},
                           {"baseline_ms", nullptr}, {"baseline_runs_ms", json::array()},
                           {"traced_runs_ms", json::array()}}}};
  json traced = run;
  traced["id"] = 1;
  traced["variant"] = "child_per_thread";
  traced["ms"] = 40.0;
  traced["params"] = {{"serial_item_ns", 110.0}};
  traced["trace"] = trace;
  return {{"schema", cdpkit::schema::profile_schema}, {"program", "test"}, {"created", "2026-11-29T00:00:00Z"},
          {"device", {{"name", "NVIDIA H200"}, {"cc", "9.0"}, {"sms", 132}, {"driver", 13000}, {"runtime", 13000}}},
          {"build", {{"version", "0.1.0"}}}, {"runs", json::array({run, traced})}, {"collector", nullptr},
          {"host_activity", nullptr}};
}

// --- the hardware's view ---------------------------------------------------------------------

/// A probe site whose warps had `efficiency` of their lanes active over 1,000 steps.
inline schema::site_profile probe_site_of(double efficiency) {
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
inline schema::site_profile launch_site_of(std::uint64_t launched) {
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
inline schema::hardware_profile hardware_of(double efficiency) {
  schema::hardware_profile h;
  h.range = "range";
  h.ms = 1.0;
  h.metrics = {{"smsp__inst_executed.sum", 1000.0}, {"smsp__thread_inst_executed.sum", 32000.0 * efficiency}};
  return h;
}

/// A profile of loop_to_child on power_law:1000: an untraced serial_loop baseline with hardware
/// metrics, and a traced run per (variant, probe efficiency, hardware efficiency), each with a
/// probe site and a launch site of 2 child grids, written and read back through the schema.
inline schema::profile ranked_profile(const std::vector<std::tuple<std::string, double, double>>& variants) {
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
inline schema::timeline_profile timeline_of(const std::vector<std::pair<double, double>>& sm_and_warps) {
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
inline schema::profile collected_profile() {
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
  p.collector = schema::collector_profile{{"trace", "metrics", "timeline"}, {"metrics: CUPTI: another profiler holds CUPTI"}, std::nullopt};
  return schema::parse_profile(schema::profile_json(p).dump(), "v4.json");
}

}  // namespace cdpkit_test
