// The collector's parts of a profile (no CUDA): the hardware metrics, the PM timeline and the
// host activity kept field by field, the CTA accounting's classification, and each part required,
// checked, and null where it was not collected.

#include <doctest/doctest.h>

#include "constructed_profile.hpp"

#include <cdpkit/schema/profile.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using namespace cdpkit_test;

namespace {

/// constructed_profile() with what the CUPTI collector adds: hardware metrics with the accounting,
/// a PM timeline, collection times, the collector's notes and the host activity.
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
  p.collector = schema::collector_profile{{"trace", "metrics", "timeline"}, {"a note"}, std::nullopt};
  schema::host_activity_profile a;
  a.kernels = {{std::uint64_t{1}, "root_kernel", 900, 2000, 64, 256}, {std::nullopt, "other", 3000, 3100, 1, 32},
               {std::uint64_t{1}, "root_kernel", 4000, 4100, 64, 256}};
  a.transfers = {{std::uint64_t{0}, "HtoD", 10, 20, 4096}, {std::nullopt, "memset", 30, 31, 64}};
  a.dropped = 2;
  p.host_activity = a;
  return p;
}

}  // namespace

TEST_CASE("a profile keeps the hardware metrics, the timeline and the host activity") {
  const schema::profile p = collected_profile();
  const json doc = schema::profile_json(p);
  CHECK(doc["schema"] == schema::profile_schema);
  CHECK(doc["runs"][1]["hardware"]["accounting"]["status"] == "exact");
  CHECK(doc["host_activity"]["kernel_names"].size() == 2);  // each name once
  const schema::profile q = schema::parse_profile(doc.dump(), "collected.json");
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

TEST_CASE("the collector's parts are checked, each required and null where not collected") {
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
  d = doc;  // null: the clocks were not compared
  d["runs"][1]["timeline"]["clock_offset_ns"] = nullptr;
  CHECK_FALSE(schema::parse_profile(d.dump(), "p.json").runs[1].timeline->clock_offset_ns.has_value());
  d["runs"][1]["timeline"].erase("clock_offset_ns");
  CHECK(parse_error(d) == "p.json: /runs/1/timeline/clock_offset_ns: missing");
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
  d = doc;  // null: no baseline runs were made
  d["runs"][1]["collect"]["baseline_ms"] = nullptr;
  CHECK_FALSE(schema::parse_profile(d.dump(), "p.json").runs[1].collect.baseline_ms.has_value());
  d["runs"][1]["collect"].erase("baseline_ms");
  CHECK(parse_error(d) == "p.json: /runs/1/collect/baseline_ms: missing");
  d = doc;
  d["runs"][1]["collect"]["traced_runs_ms"][2] = -0.5;
  CHECK(parse_error(d) == "p.json: /runs/1/collect/traced_runs_ms/2: expected a non-negative number");
  d = doc;
  d["runs"][1]["collect"]["baseline_runs_ms"] = 1.05;
  CHECK(parse_error(d) == "p.json: /runs/1/collect/baseline_runs_ms: expected an array");
  d = doc;  // empty: no such runs were made
  d["runs"][1]["collect"]["baseline_runs_ms"] = json::array();
  d["runs"][1]["collect"]["traced_runs_ms"] = json::array();
  {
    const schema::profile q = schema::parse_profile(d.dump(), "p.json");
    CHECK(q.runs[1].collect.baseline_runs_ms.empty());
    CHECK(q.runs[1].collect.traced_runs_ms.empty());
    CHECK(q.runs[1].collect.traced_ms == std::optional<double>(1.1));
  }
  d["runs"][1]["collect"].erase("traced_runs_ms");
  CHECK(parse_error(d) == "p.json: /runs/1/collect/traced_runs_ms: missing");
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
  d = doc;
  d.erase("host_activity");
  CHECK(parse_error(d) == "p.json: /host_activity: missing");
  d = doc;
  d["runs"][1].erase("hardware");
  CHECK(parse_error(d) == "p.json: /runs/1/hardware: missing");
  d = doc;
  d["runs"][1].erase("timeline");
  CHECK(parse_error(d) == "p.json: /runs/1/timeline: missing");
  // a profile of a program run without the collector: every part null
  const schema::profile p = schema::parse_profile(schema::profile_json(constructed_profile()).dump(), "plain.json");
  CHECK_FALSE(p.runs[1].hardware.has_value());
  CHECK_FALSE(p.runs[1].timeline.has_value());
  CHECK_FALSE(p.collector.has_value());
  CHECK_FALSE(p.host_activity.has_value());
}

TEST_CASE("a profile cut short says why in the collector's incomplete, and one that ran to exit has none") {
  schema::profile p = collected_profile();
  const json complete = schema::profile_json(p);
  CHECK_FALSE(complete["collector"].contains("incomplete"));
  CHECK_FALSE(schema::parse_profile(complete.dump(), "p.json").collector->incomplete.has_value());
  p.collector->incomplete = "the program was stopped by signal 11 (SIGSEGV)";
  const json cut = schema::profile_json(p);
  CHECK(cut["collector"]["incomplete"] == "the program was stopped by signal 11 (SIGSEGV)");
  const schema::profile q = schema::parse_profile(cut.dump(), "p.json");
  REQUIRE(q.collector.has_value());
  CHECK(q.collector->incomplete == p.collector->incomplete);
  json d = cut;
  d["collector"]["incomplete"] = 11;
  CHECK(parse_error(d) == "p.json: /collector/incomplete: expected a string");
}
