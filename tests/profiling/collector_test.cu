// The CUPTI collector (cdpkit/profiling/collector.hpp, pm_sampler.hpp): its options and
// stand-aside on every machine; on a GPU the PM timeline against the trace's child windows, the
// CTA accounting of constructed launches, and the range profiler and PM sampling taking turns.

#include <doctest/doctest.h>

#include "support/gpu.hpp"
#include "support/temp_dir.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/harness/collect.hpp>
#include <cdpkit/harness/loop_to_child_runs.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/harness/segment_workload.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/collector.hpp>
#include <cdpkit/profiling/pm_sampler.hpp>

#include <cuda_runtime.h>
#include <cupti_activity.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace prof = cdpkit::profiling;

namespace {

__global__ void spin_kernel(int* out, int iters) {
  int v = static_cast<int>(threadIdx.x);
  for (int i = 0; i < iters; ++i) v = v * 3 + 1;
  if (v == 42) out[0] = v;
}

/// Each of the first `children` threads launches a `child_blocks`-block grid.
__global__ void parent_kernel(int* out, int children, int child_blocks, int iters) {
  if (static_cast<int>(threadIdx.x) < children) spin_kernel<<<child_blocks, 64>>>(out, iters);
}

using scoped_env = cdpkit_test::environment_variable;

}  // namespace

TEST_CASE("--collect takes none, trace, metrics, timeline, all and lists, and names a bad part") {
  auto o = prof::parse_collect("none");
  CHECK_FALSE(o.trace);
  CHECK_FALSE(o.any_cupti());
  CHECK(prof::collect_parts(o) == std::vector<std::string>{"none"});
  o = prof::parse_collect("trace");
  CHECK(o.trace);
  CHECK_FALSE(o.any_cupti());
  o = prof::parse_collect("timeline");  // the timeline is aligned with the trace: trace comes along
  CHECK(o.trace);
  CHECK(o.timeline);
  CHECK_FALSE(o.metrics);
  o = prof::parse_collect("all");
  CHECK(prof::collect_parts(o) == std::vector<std::string>{"trace", "metrics", "timeline"});
  o = prof::parse_collect(" metrics , trace ");
  CHECK(prof::collect_parts(o) == std::vector<std::string>{"trace", "metrics"});
  try {
    (void)prof::parse_collect("trace,counters");
    FAIL("no error");
  } catch (const cdpkit::input_error& e) {
    CHECK(std::string(e.what()) ==
          "--collect: unknown part 'counters' (choose none, trace, metrics, timeline or all, or a "
          "comma-separated list)");
  }
  CHECK_THROWS_AS((void)prof::parse_collect(""), cdpkit::input_error);
  cdpkit::harness::collect_spec spec;
  spec.parts = "timeline";
  spec.interval_us = 2.5;
  CHECK(spec.options().interval_ns == 2500u);
}

TEST_CASE("under another CUPTI tool the collector stands aside once, says why, and the work runs") {
  scoped_env env("CUDA_INJECTION64_PATH", "/opt/nsight/libToolsInjection64.so");
  const auto other = prof::foreign_profiler();
  REQUIRE(other.has_value());
  CHECK(other->find("Nsight Systems or Nsight Compute") == 0);
  prof::collector c(prof::parse_collect("all"), /*quiet=*/true);
  CHECK_FALSE(c.metrics_enabled());
  CHECK_FALSE(c.timeline_enabled());
  REQUIRE(c.notes().size() == 1u);
  CHECK(c.notes()[0].find("metrics and timeline: Nsight Systems or Nsight Compute (CUDA_INJECTION64_PATH=") == 0);
  CHECK(c.notes()[0].find("cdpkit stands aside, the program runs as usual") != std::string::npos);
  int runs = 0;
  CHECK_FALSE(c.measure("work", [&] { ++runs; }).has_value());
  CHECK_FALSE(c.sample([&] { ++runs; }).has_value());
  CHECK(runs == 2);
  const auto p = c.profile();
  CHECK(p.requested == std::vector<std::string>{"trace", "metrics", "timeline"});
  CHECK(p.notes.size() == 1u);
  // asked for one part, the note names that part
  prof::collector m(prof::parse_collect("metrics"), /*quiet=*/true);
  REQUIRE(m.notes().size() == 1u);
  CHECK(m.notes()[0].find("metrics: Nsight Systems") == 0);
  CHECK_FALSE(m.metrics_enabled());
}

TEST_CASE("without a GPU the PM sampler stands aside, says why, and the work still runs" *
          doctest::skip(cdpkit_test::gpu_available())) {
  prof::pm_sampler pm;
  CHECK_FALSE(pm.available());
  CHECK(pm.unavailable_reason().find("no CUDA device to profile") == 0);
  int runs = 0;
  const auto t = pm.sample([&] { ++runs; });
  CHECK(runs == 1);
  CHECK(t.samples.empty());
}

TEST_CASE("a PM sampler refuses no metrics, an interval outside 1 us to 1 s and zero samples") {
  CHECK_THROWS_AS(prof::pm_sampler({}, 20000), cdpkit::input_error);
  CHECK_THROWS_AS(prof::pm_sampler(prof::default_pm_metrics(), 999), cdpkit::input_error);
  CHECK_THROWS_AS(prof::pm_sampler(prof::default_pm_metrics(), 2000000000ull), cdpkit::input_error);
  CHECK_THROWS_AS(prof::pm_sampler(prof::default_pm_metrics(), 20000, 0), cdpkit::input_error);
}

TEST_CASE("the CTA accounting of host launches is exact and device launches add only the device "
          "runtime's own CTAs" * CDPKIT_GPU_CASE) {
  const cdpkit_test::cupti_lock lock;
  int* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, sizeof(int)));
  spin_kernel<<<1, 32>>>(d, 1);  // the process's first launches take 4 CTAs of the runtime's
  parent_kernel<<<1, 32>>>(d, 1, 1, 1);
  CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  prof::collector c(prof::parse_collect("metrics"), /*quiet=*/true);
  const auto host = c.measure("host", [&] {
    spin_kernel<<<1024, 128>>>(d, 1000);
    spin_kernel<<<37, 32>>>(d, 1000);
    CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  });
  const std::string first_note = c.notes().empty() ? std::string() : c.notes().front();
  INFO(first_note);
  REQUIRE(host.has_value());
  CHECK(host->host.kernels.size() == 2u);  // CUPTI's own WaitNs is left out
  auto a = prof::account(host->hardware, host->host, {});
  REQUIRE(a.has_value());
  CHECK(a->host_grids == 2u);
  CHECK(a->host_blocks == 1061u);
  CHECK(a->hardware_ctas == 1061u);
  CHECK(a->hardware_threads == 1024u * 128u + 37u * 32u);
  CHECK(cdpkit::schema::classify(*a) == cdpkit::schema::accounting_status::exact);

  for (const int children : {1, 16, 64}) {
    CAPTURE(children);
    const auto cdp = c.measure("cdp", [&] {
      parent_kernel<<<1, 64>>>(d, children, 16, 1000);
      CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
    });
    REQUIRE(cdp.has_value());
    const auto n = static_cast<std::uint64_t>(children);
    a = prof::account(cdp->hardware, cdp->host, {n, 16 * n, 16 * n * 64});
    REQUIRE(a.has_value());
    CHECK(a->host_blocks == 1u);
    CHECK(a->host_threads == 64u);
    CHECK(a->unaccounted() > 0);  // the device runtime's own CTAs: measured, never none
    CHECK(cdpkit::schema::classify(*a) == cdpkit::schema::accounting_status::device_runtime);
    // a trace claiming one grid of 64 blocks more than ran: the hardware shows it missing
    const auto claimed = prof::account(cdp->hardware, cdp->host, {n + 1, 16 * n + 64, (16 * n + 64) * 64});
    REQUIRE(claimed.has_value());
    CHECK(cdpkit::schema::classify(*claimed) == cdpkit::schema::accounting_status::missing_ctas);
  }
  CHECK(c.notes().empty());
  CDPKIT_CUDA_TRY(cudaFree(d));
}

TEST_CASE("the PM timeline covers the traced run: every child grid's window lies inside sampled "
          "activity, and the accounting of the same workload holds" * CDPKIT_GPU_CASE) {
  const cdpkit_test::cupti_lock lock;
  cdpkit::harness::segment_params seg;
  seg.num_segments = 1u << 15;
  seg.max_len = 1u << 12;
  cdpkit::harness::segment_workload workload(cdpkit::harness::make_segment_offsets(seg), 64, seg.seed);
  cdpkit::launch_runtime runtime;
  prof::collector c(prof::parse_collect("all"), /*quiet=*/true);
  const auto policy = cdpkit::harness::make_policy(cdpkit::loop_policy_kind::thresholded, 256,
                                                   cdpkit::stream_kind::fire_and_forget, {});
  const auto results = cdpkit::harness::run_policies(workload, runtime, {policy}, 2, &c);
  const std::string first_note = c.notes().empty() ? std::string() : c.notes().front();
  INFO(first_note);
  REQUIRE(results.size() == 1u);
  const auto& m = results[0].m;
  CHECK(cdpkit::harness::verified(m));
  REQUIRE(m.collected.timeline.has_value());
  REQUIRE(m.collected.hardware.has_value());
  REQUIRE(m.trace.has_value());
  const auto& t = *m.collected.timeline;
  REQUIRE(t.samples.size() >= 2u);
  // the trace was moved onto CUPTI's clock, and the clock kernel left the host activity
  REQUIRE(t.clock_offset_ns.has_value());
  MESSAGE("trace clock - CUPTI clock: " << *t.clock_offset_ns << " ns");
  CHECK(std::llabs(*t.clock_offset_ns) < 10000000);  // measured about 0.4 ms on the H200
  REQUIRE(m.collected.host.has_value());
  CHECK_FALSE(m.collected.host->kernels.empty());
  for (const auto& k : m.collected.host->kernels) CHECK(k.name != cdpkit::device_clock_kernel);
  CHECK_FALSE(t.overflow);
  const auto active = t.index_of(prof::default_pm_metrics().front());
  REQUIRE(active.has_value());
  std::size_t timed = 0;
  for (const auto& r : m.trace->records) {
    if (!cdpkit::has_execution_time(r)) continue;
    ++timed;
    CHECK(r.start_ns >= t.samples.front().start_ns);
    CHECK(r.end_ns <= t.samples.back().end_ns);
    // some sample overlapping the child's window saw SMs active
    double seen = 0;
    for (const auto& s : t.samples)
      if (s.end_ns > r.start_ns && s.start_ns < r.end_ns) seen = std::max(seen, s.values[*active]);
    CHECK(seen > 0);
  }
  CHECK(timed > 10u);
  const auto& h = *m.collected.hardware;
  REQUIRE(h.warp_efficiency().has_value());
  CHECK(*h.warp_efficiency() > 0.0);
  CHECK(*h.warp_efficiency() <= 1.0);
  REQUIRE(h.accounting.has_value());
  CHECK(h.accounting->child_grids > 10u);
  const auto status = cdpkit::schema::classify(*h.accounting);
  CAPTURE(h.accounting->unaccounted());
  CAPTURE(h.accounting->unaccounted_threads());
  CAPTURE(h.accounting->transfers);
  if (h.accounting->transfers == 0)
    CHECK((status == cdpkit::schema::accounting_status::exact ||
           status == cdpkit::schema::accounting_status::device_runtime));
  else
    CHECK(status == cdpkit::schema::accounting_status::driver_transfers);
  CHECK(m.collected.times.traced_ms.has_value());
  CHECK(m.collected.times.metrics_ms.has_value());
  CHECK(m.collected.times.timeline_ms.has_value());
  REQUIRE(m.collected.times.baseline_ms.has_value());  // the overheads' yardstick
  CHECK(*m.collected.times.baseline_ms > 0.0);
  // every untraced and traced run kept, as many of each (trace_pairs for a short run), their
  // fastest the yardstick and the traced time
  const auto& times = m.collected.times;
  REQUIRE_FALSE(times.baseline_runs_ms.empty());
  REQUIRE(times.traced_runs_ms.size() == times.baseline_runs_ms.size());
  CHECK((times.traced_runs_ms.size() == 1u ||
         times.traced_runs_ms.size() == static_cast<std::size_t>(cdpkit::harness::trace_pairs)));
  CHECK(*std::min_element(times.baseline_runs_ms.begin(), times.baseline_runs_ms.end()) == *times.baseline_ms);
  CHECK(*std::min_element(times.traced_runs_ms.begin(), times.traced_runs_ms.end()) == *times.traced_ms);
}

TEST_CASE("the range profiler and PM sampling take turns in one collector, and repeated range "
          "names stay apart" * CDPKIT_GPU_CASE) {
  const cdpkit_test::cupti_lock lock;
  int* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, sizeof(int)));
  prof::collector c(prof::parse_collect("metrics,timeline"), /*quiet=*/true);
  const auto work = [&] {
    spin_kernel<<<264, 128>>>(d, 200000);
    CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  };
  work();  // the first launches of a process run 4 CTAs more (measured on the H200): not in a range
  const auto first = c.measure("same", work);
  const auto timeline = c.sample(work);
  const auto second = c.measure("same", work);
  const std::string first_note = c.notes().empty() ? std::string() : c.notes().front();
  INFO(first_note);
  REQUIRE(first.has_value());
  REQUIRE(timeline.has_value());
  REQUIRE(second.has_value());
  CHECK(first->hardware.range == "same");
  CHECK(second->hardware.range == "same#2");
  CHECK(first->hardware.value("sm__ctas_launched.sum") == 264.0);
  CHECK(second->hardware.value("sm__ctas_launched.sum") == 264.0);
  CHECK_FALSE(timeline->samples.empty());
  CHECK(c.notes().empty());
  CDPKIT_CUDA_TRY(cudaFree(d));
}

TEST_CASE("a measured run after a warm-up range counts its own CTAs and host kernels only" * CDPKIT_GPU_CASE) {
  const cdpkit_test::cupti_lock lock;
  int* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, sizeof(int)));
  prof::collector c(prof::parse_collect("metrics"), /*quiet=*/true);
  const auto work = [&] {
    spin_kernel<<<264, 128>>>(d, 200000);
    CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  };
  int warm_ups = 0;
  const auto warm_up = [&] {  // other work, other CTAs: none of them may reach the measured range
    ++warm_ups;
    spin_kernel<<<100, 128>>>(d, 200000);
    spin_kernel<<<7, 128>>>(d, 200000);
    CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  };
  work();  // (the process's first launches run 4 CTAs more: not in a range)
  const auto m = c.measure("after warm-up", work, warm_up);
  const std::string first_note = c.notes().empty() ? std::string() : c.notes().front();
  INFO(first_note);
  REQUIRE(m.has_value());
  CHECK(warm_ups == 1);
  CHECK(m->hardware.range == "after warm-up");
  CHECK(m->hardware.value("sm__ctas_launched.sum") == 264.0);
  std::uint64_t host_blocks = 0;
  for (const auto& k : m->host.kernels) host_blocks += k.blocks;
  CHECK(host_blocks == 264u);
  CHECK(c.notes().empty());
  CDPKIT_CUDA_TRY(cudaFree(d));
}

TEST_CASE("a sampled run after a warm-up keeps its own samples and host kernels only" * CDPKIT_GPU_CASE) {
  const cdpkit_test::cupti_lock lock;
  int* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, sizeof(int)));
  prof::collector c(prof::parse_collect("timeline"), /*quiet=*/true);
  const auto work = [&] {
    spin_kernel<<<264, 128>>>(d, 200000);
    CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  };
  std::uint64_t warm_up_start = 0, warm_up_end = 0;
  const auto warm_up = [&] {  // other work, a hundred times as long as the work's (tens of ms)
    REQUIRE(cuptiGetTimestamp(&warm_up_start) == CUPTI_SUCCESS);
    spin_kernel<<<100, 128>>>(d, 20000000);
    CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
    REQUIRE(cuptiGetTimestamp(&warm_up_end) == CUPTI_SUCCESS);
  };
  work();
  cdpkit::profiling::host_activity_log host;
  const auto t = c.sample(work, &host, warm_up);
  std::uint64_t returned = 0;
  REQUIRE(cuptiGetTimestamp(&returned) == CUPTI_SUCCESS);
  const std::string first_note = c.notes().empty() ? std::string() : c.notes().front();
  INFO(first_note);
  REQUIRE(t.has_value());
  REQUIRE(warm_up_end != 0);
  REQUIRE_FALSE(t->samples.empty());
  // every sample left lies between the warm-up's end and sample()'s return on CUPTI's clock: none
  // of the warm-up's is left (the samples go on until sampling stops, after the work and the
  // host activity's flush, so their span is not the work's). Were the samples on another clock
  // than cuptiGetTimestamp's, one bound or the other would fail.
  INFO("warm-up " << warm_up_start << ".." << warm_up_end << ", samples " << t->samples.front().start_ns << ".."
                  << t->samples.back().end_ns << ", returned " << returned);
  CHECK(t->samples.front().end_ns > warm_up_end);
  CHECK(t->samples.back().start_ns < returned);
  std::uint64_t host_blocks = 0;
  for (const auto& k : host.kernels) host_blocks += k.blocks;
  CHECK(host_blocks == 264u);
  CDPKIT_CUDA_TRY(cudaFree(d));
}
