// loop_to_child: every policy gives exactly the Thrust reference on every workload; the trace
// counts what the policy launched; fallbacks keep results exact; bad segments are errors.

#include <doctest/doctest.h>

#include "support/gpu.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/loop_to_child.cuh>
#include <cdpkit/harness/segment_workload.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/wait.hpp>

#include <thrust/device_vector.h>
#include <thrust/fill.h>
#include <thrust/host_vector.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

std::vector<cdpkit::loop_policy> every_policy() {
  using cdpkit::loop_policy;
  return {loop_policy::serial(),
          loop_policy::child_per_thread(),
          loop_policy::child_per_thread(cdpkit::stream_kind::named_per_thread),
          loop_policy::thresholded(64),
          loop_policy::thresholded(),
          loop_policy::warp_aggregated(0),
          loop_policy::warp_aggregated(),
          loop_policy::block_aggregated(0),
          loop_policy::block_aggregated(),
          loop_policy::flat_balanced()};
}

std::uint64_t segments_longer_than(const std::vector<std::uint32_t>& offsets, std::uint32_t t) {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) n += (offsets[i + 1] - offsets[i]) > t;
  return n;
}

}  // namespace

TEST_CASE("every policy matches the Thrust reference on every distribution and size" *
          CDPKIT_GPU_CASE) {
  auto& rt = cdpkit::default_runtime();
  for (const auto dist : cdpkit::harness::all_segment_dists()) {
    for (const std::uint32_t n : {0u, 1u, 1000u, 77777u}) {
      cdpkit::harness::segment_params p;
      p.dist = dist;
      p.num_segments = n;
      p.giant_len = 1u << 18;
      cdpkit::harness::segment_workload w(cdpkit::harness::make_segment_offsets(p), 4);
      for (const auto& policy : every_policy()) {
        CAPTURE(std::string(cdpkit::harness::to_string(dist)));
        CAPTURE(n);
        CAPTURE(std::string(cdpkit::to_string(policy.kind)));
        CAPTURE(std::string(cdpkit::to_string(policy.stream)));
        CAPTURE(policy.threshold.value_or(0xffffffffu));
        w.clear_outputs();
        w.run(policy, rt);
        CHECK(w.count_mismatches() == 0u);
      }
    }
  }
}

TEST_CASE("every policy is exact on 2^20 power-law segments" * CDPKIT_GPU_CASE) {
  cdpkit::harness::segment_params p;  // defaults: 2^20 segments, alpha 2, max 2^16
  cdpkit::harness::segment_workload w(cdpkit::harness::make_segment_offsets(p), 4);
  for (const auto& policy : every_policy()) {
    CAPTURE(std::string(cdpkit::to_string(policy.kind)));
    w.clear_outputs();
    w.run(policy, cdpkit::default_runtime());
    CHECK(w.count_mismatches() == 0u);
  }
}

TEST_CASE("thresholded launches exactly the segments longer than the threshold" * CDPKIT_GPU_CASE) {
  cdpkit::harness::segment_params p;
  p.num_segments = 20000;  // power law: a few hundred segments above 64, far below the budget
  const auto offsets = cdpkit::harness::make_segment_offsets(p);
  cdpkit::harness::segment_workload w(offsets, 2);
  auto& rt = cdpkit::default_runtime();
  for (const std::uint32_t t : {8u, 64u, 1000u}) {
    CAPTURE(t);
    cdpkit::profiling::trace_session session(rt);
    w.clear_outputs();
    w.run(cdpkit::loop_policy::thresholded(t), rt);
    CHECK(w.count_mismatches() == 0u);
    const auto trace = session.collect();
    const auto& site = trace.sites[cdpkit::sites::l2c_thresholded];
    const auto expected = segments_longer_than(offsets, t);
    REQUIRE(expected < static_cast<std::uint64_t>(rt.pending_budget()));
    CHECK(site.outcomes[0] == expected);
    CHECK(site.requests == expected);
    // child grid sizes: every launched grid has ceil(len / 256) blocks of 256 threads
    std::uint64_t blocks = 0, items = 0;
    for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
      const std::uint32_t len = offsets[i + 1] - offsets[i];
      if (len > t) {
        blocks += (len + 255) / 256;
        items += len;
      }
    }
    CHECK(site.child_blocks == blocks);
    CHECK(site.work_items == items);
    CHECK(site.child_threads == blocks * 256);
  }
}

TEST_CASE("child_per_thread under a pending limit of 16 stays exact and counts its fallbacks" *
          CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.pending_launch_limit = 16;
  cdpkit::launch_runtime rt(config);
  cdpkit::harness::segment_params p;  // 2^20 power-law segments
  const auto offsets = cdpkit::harness::make_segment_offsets(p);
  cdpkit::harness::segment_workload w(offsets, 4);
  cdpkit::profiling::trace_session session(rt);
  w.run(cdpkit::loop_policy::child_per_thread(), rt);
  CHECK(w.count_mismatches() == 0u);
  const auto trace = session.collect();
  const auto summary = cdpkit::profiling::summarize(trace);
  const auto& site = trace.sites[cdpkit::sites::l2c_child_per_thread];
  CHECK(site.requests == segments_longer_than(offsets, 0));
  CHECK(summary.fallbacks > 0u);
  CHECK(summary.child_launches + summary.fallbacks == site.requests);
  CHECK(rt.pending_budget() == 8);  // half the configured 16 (the driver may round the limit up)
  CHECK(rt.pending_budget() <= rt.pending_launch_limit() / 2);  // headroom below the limit
  CHECK(summary.pending_high_water <= static_cast<unsigned int>(rt.pending_budget()));
  CHECK(site.inline_items > 0u);
}

TEST_CASE("aggregated policies launch at most one child per warp or block" * CDPKIT_GPU_CASE) {
  cdpkit::harness::segment_params p;
  p.num_segments = 50000;
  p.dist = cdpkit::harness::segment_dist::uniform;
  cdpkit::harness::segment_workload w(cdpkit::harness::make_segment_offsets(p), 2);
  auto& rt = cdpkit::default_runtime();
  struct expectation {
    cdpkit::loop_policy policy;
    std::uint16_t site;
    std::uint32_t group;
  };
  for (const auto& e : {expectation{cdpkit::loop_policy::warp_aggregated(0),
                                    cdpkit::sites::l2c_warp_aggregated, 32},
                        expectation{cdpkit::loop_policy::block_aggregated(0),
                                    cdpkit::sites::l2c_block_aggregated, 256}}) {
    CAPTURE(std::string(cdpkit::to_string(e.policy.kind)));
    cdpkit::profiling::trace_session session(rt);
    w.clear_outputs();
    w.run(e.policy, rt);
    CHECK(w.count_mismatches() == 0u);
    const auto trace = session.collect();
    const std::uint64_t groups = (p.num_segments + e.group - 1) / e.group;
    CHECK(trace.sites[e.site].requests == groups);  // uniform: no group is empty
    CHECK(trace.sites[e.site].work_items + trace.sites[e.site].inline_items == w.num_items());
  }
}

TEST_CASE("probes report full efficiency for equal segments under serial_loop" * CDPKIT_GPU_CASE) {
  cdpkit::harness::segment_params p;
  p.dist = cdpkit::harness::segment_dist::equal;
  p.num_segments = 4096;
  p.equal_len = 40;
  cdpkit::harness::segment_workload w(cdpkit::harness::make_segment_offsets(p), 1);
  auto& rt = cdpkit::default_runtime();
  cdpkit::profiling::trace_session session(rt);
  w.run(cdpkit::loop_policy::serial(), rt);
  const auto trace = session.collect();
  const auto& c = trace.sites[cdpkit::sites::l2c_serial_items];
  CHECK(c.probe_warps == 4096u / 32u);
  CHECK(c.probe_steps == 4096u / 32u * 40u);
  CHECK(c.efficiency_sum / c.probe_warps == doctest::Approx(1.0));
  CHECK(cdpkit::profiling::summarize(trace).warp_efficiency == doctest::Approx(1.0));
}

TEST_CASE("for_each_segment runs user lambdas over arbitrary begin and end arrays" *
          CDPKIT_GPU_CASE) {
  // Non-CSR segments: gaps, overlaps and empty ones; item_op(j) form counting visits per item.
  const std::vector<std::uint32_t> begin = {0, 5, 5, 100, 30, 7, 7};
  const std::vector<std::uint32_t> end = {10, 5, 40, 300, 31, 7, 2000};
  std::vector<std::uint32_t> expected(2000, 0);
  for (std::size_t i = 0; i < begin.size(); ++i)
    for (auto j = begin[i]; j < end[i]; ++j) ++expected[j];
  thrust::device_vector<std::uint32_t> d_begin(begin.begin(), begin.end());
  thrust::device_vector<std::uint32_t> d_end(end.begin(), end.end());
  const cdpkit::segments_view segs{thrust::raw_pointer_cast(d_begin.data()),
                                   thrust::raw_pointer_cast(d_end.data()),
                                   static_cast<std::uint32_t>(begin.size())};
  for (const auto& policy : every_policy()) {
    CAPTURE(std::string(cdpkit::to_string(policy.kind)));
    thrust::device_vector<std::uint32_t> visits(2000, 0);
    thrust::device_vector<std::uint32_t> parents(begin.size(), 0);
    auto* v = thrust::raw_pointer_cast(visits.data());
    auto* pv = thrust::raw_pointer_cast(parents.data());
    cdpkit::for_each_segment(
        segs, [pv] __device__(std::uint32_t i) { pv[i] = i + 1; },
        [v] __device__(std::uint32_t j) { atomicAdd(&v[j], 1u); }, policy);
    const thrust::host_vector<std::uint32_t> got = visits;
    const thrust::host_vector<std::uint32_t> got_parents = parents;
    CHECK(std::equal(expected.begin(), expected.end(), got.begin()));
    for (std::uint32_t i = 0; i < begin.size(); ++i) CHECK(got_parents[i] == i + 1);
  }
}

TEST_CASE("a segment with end before begin is reported as a device error" * CDPKIT_GPU_CASE) {
  const std::vector<std::uint32_t> begin = {0, 10};
  const std::vector<std::uint32_t> end = {5, 3};
  thrust::device_vector<std::uint32_t> d_begin(begin.begin(), begin.end());
  thrust::device_vector<std::uint32_t> d_end(end.begin(), end.end());
  const cdpkit::segments_view segs{thrust::raw_pointer_cast(d_begin.data()),
                                   thrust::raw_pointer_cast(d_end.data()), 2};
  for (const auto& policy : every_policy()) {
    CAPTURE(std::string(cdpkit::to_string(policy.kind)));
    CHECK_THROWS_WITH_AS(cdpkit::for_each_segment(
                             segs, [] __device__(std::uint32_t) {},
                             [] __device__(std::uint32_t, std::uint32_t) {}, policy),
                         doctest::Contains("bad_segment"), cdpkit::cuda_error);
  }
}

TEST_CASE("an automatic threshold keeps launches within the budget share and finds the giant" *
          CDPKIT_GPU_CASE) {
  auto& rt = cdpkit::default_runtime();
  SUBCASE("power law") {
    cdpkit::harness::segment_params p;  // 2^20 segments: far more segments above the cost-model T than
    const auto offsets = cdpkit::harness::make_segment_offsets(p);  // the budget could launch
    cdpkit::harness::segment_workload w(offsets, 4);
    const auto policy = cdpkit::loop_policy::thresholded();
    cdpkit::profiling::trace_session session(rt);
    w.run(policy, rt);
    CHECK(w.count_mismatches() == 0u);
    const auto trace = session.collect();
    const auto t = trace.totals.last_auto_threshold;
    const auto launches = segments_longer_than(offsets, t);
    CHECK(launches <= static_cast<std::uint64_t>(rt.pending_budget() / 2));
    CHECK(trace.sites[cdpkit::sites::l2c_thresholded].requests == launches);
    CHECK(cdpkit::profiling::summarize(trace).fallbacks == 0u);
  }
  SUBCASE("giant") {
    cdpkit::harness::segment_params p;
    p.dist = cdpkit::harness::segment_dist::giant;
    p.giant_len = 1u << 20;
    cdpkit::harness::segment_workload w(cdpkit::harness::make_segment_offsets(p), 4);
    cdpkit::profiling::trace_session session(rt);
    w.run(cdpkit::loop_policy::thresholded(), rt);
    CHECK(w.count_mismatches() == 0u);
    const auto trace = session.collect();
    CHECK(trace.sites[cdpkit::sites::l2c_thresholded].outcomes[0] == 1u);  // only the giant
    CHECK(trace.sites[cdpkit::sites::l2c_thresholded].work_items == (1u << 20));
  }
}

TEST_CASE("under a pending limit of 16 every policy runs every item and every pre_op exactly once" *
          CDPKIT_GPU_CASE) {
  // Non-idempotent operators (atomic visit counters): an item done both by a child and inline
  // after a miscounted fallback, or by nobody, shows as a count other than 1.
  cdpkit::launch_config config;
  config.pending_launch_limit = 16;
  cdpkit::launch_runtime rt(config);
  cdpkit::harness::segment_params p;
  p.num_segments = 1u << 18;
  const auto offsets = cdpkit::harness::make_segment_offsets(p);
  thrust::device_vector<std::uint32_t> d_offsets(offsets.begin(), offsets.end());
  const cdpkit::segments_view segs{thrust::raw_pointer_cast(d_offsets.data()),
                                   thrust::raw_pointer_cast(d_offsets.data()) + 1, p.num_segments};
  for (const auto& policy : every_policy()) {
    CAPTURE(std::string(cdpkit::to_string(policy.kind)));
    CAPTURE(std::string(cdpkit::to_string(policy.stream)));
    CAPTURE(policy.threshold.value_or(0xffffffffu));
    thrust::device_vector<std::uint32_t> visits(offsets.back(), 0);
    thrust::device_vector<std::uint32_t> parents(p.num_segments, 0);
    auto* v = thrust::raw_pointer_cast(visits.data());
    auto* pv = thrust::raw_pointer_cast(parents.data());
    cdpkit::profiling::trace_session session(rt);
    cdpkit::for_each_segment(
        segs, [pv] __device__(std::uint32_t i) { atomicAdd(&pv[i], 1u); },
        [v] __device__(std::uint32_t, std::uint32_t j) { atomicAdd(&v[j], 1u); }, policy, rt);
    const auto trace = session.collect();
    const thrust::host_vector<std::uint32_t> got = visits;
    const thrust::host_vector<std::uint32_t> got_parents = parents;
    CHECK(std::all_of(got.begin(), got.end(), [](std::uint32_t c) { return c == 1u; }));
    CHECK(std::all_of(got_parents.begin(), got_parents.end(),
                      [](std::uint32_t c) { return c == 1u; }));
    CHECK(cdpkit::profiling::summarize(trace).pending_high_water <= 8u);
  }
}

TEST_CASE("segments holding 2^32 items or more are refused by flat_balanced, never wrapped" *
          CDPKIT_GPU_CASE) {
  const std::vector<std::uint32_t> begin = {0, 0, 0};
  const std::vector<std::uint32_t> end = {0x80000000u, 0x80000000u, 7};
  thrust::device_vector<std::uint32_t> d_begin(begin.begin(), begin.end());
  thrust::device_vector<std::uint32_t> d_end(end.begin(), end.end());
  const cdpkit::segments_view segs{thrust::raw_pointer_cast(d_begin.data()),
                                   thrust::raw_pointer_cast(d_end.data()), 3};
  thrust::device_vector<std::uint32_t> touched(1, 0);
  auto* t = thrust::raw_pointer_cast(touched.data());
  CHECK_THROWS_WITH_AS(
      cdpkit::for_each_segment(
          segs, [] __device__(std::uint32_t) {},
          [t] __device__(std::uint32_t, std::uint32_t) { atomicAdd(t, 1u); },
          cdpkit::loop_policy::flat_balanced()),
      doctest::Contains("item_overflow"), cdpkit::cuda_error);
  CHECK(touched[0] == 0u);  // refused: no item ran
}

TEST_CASE("a segment count past 2^32 - 256 is refused before anything runs" * CDPKIT_GPU_CASE) {
  const cdpkit::segments_view segs{nullptr, nullptr, cdpkit::max_segments + 1};
  CHECK_THROWS_WITH_AS(cdpkit::for_each_segment(segs, [] __device__(std::uint32_t) {},
                                                [] __device__(std::uint32_t) {},
                                                cdpkit::loop_policy::serial()),
                       doctest::Contains("at most 4294967040"), cdpkit::input_error);
}

TEST_CASE("the automatic threshold is the balanced rule over every block's lengths" * CDPKIT_GPU_CASE) {
  // One pass of 256 blocks adds its histograms; its last block picks. The host builds the same
  // histograms (segments, warp totals, block totals) and applies the same rule.
  auto& rt = cdpkit::default_runtime();
  cdpkit::harness::segment_params p;
  p.num_segments = 1u << 16;  // power law
  p.seed = 11;
  const auto offsets = cdpkit::harness::make_segment_offsets(p);
  thrust::device_vector<std::uint32_t> d_offsets(offsets.begin(), offsets.end());
  const cdpkit::segments_view segs{thrust::raw_pointer_cast(d_offsets.data()),
                                   thrust::raw_pointer_cast(d_offsets.data()) + 1, p.num_segments};
  const auto bucket = [](std::uint64_t v) {
    const int b = 63 - __builtin_clzll(v);
    return std::min(b, cdpkit::trace_limits::log2_buckets - 1);
  };
  const auto group_histogram = [&](std::uint32_t group) {
    std::vector<std::uint64_t> hist(cdpkit::trace_limits::log2_buckets, 0);
    for (std::uint32_t first = 0; first < p.num_segments; first += group) {
      std::uint64_t total = 0;
      for (std::uint32_t i = first; i < std::min(first + group, p.num_segments); ++i)
        total += offsets[i + 1] - offsets[i];
      if (total > 0) ++hist[static_cast<std::size_t>(bucket(total))];
    }
    return hist;
  };
  const auto pre = [] __device__(std::uint32_t) {};
  const auto item = [] __device__(std::uint32_t) {};
  using cdpkit::loop_policy;
  const std::pair<loop_policy, std::uint32_t> cases[] = {{loop_policy::thresholded(), 1u},
                                                         {loop_policy::warp_aggregated(), 32u},
                                                         {loop_policy::block_aggregated(), 256u}};
  for (const auto& [policy, group] : cases) {
    CAPTURE(std::string(cdpkit::to_string(policy.kind)));
    const auto hist = group_histogram(group);
    const auto max_launches = static_cast<std::uint32_t>(policy.cost_model.budget_share *
                                                          static_cast<double>(rt.pending_budget()));
    const std::uint32_t expected = cdpkit::balanced_threshold(
        hist.data(), cdpkit::trace_limits::log2_buckets,
        policy.cost_model.serial_item_ns / policy.loop_lanes(),
        policy.cost_model.launch_ns[static_cast<int>(policy.stream)], max_launches);
    const auto r = cdpkit::for_each_segment(segs, pre, item, policy, rt);
    REQUIRE(r.threshold.has_value());
    CHECK(*r.threshold == expected);
  }
}

TEST_CASE("for_each_segment returns the threshold it used, traced or not" * CDPKIT_GPU_CASE) {
  auto& rt = cdpkit::default_runtime();
  cdpkit::harness::segment_params p;
  p.num_segments = 1u << 16;  // power law
  const auto offsets = cdpkit::harness::make_segment_offsets(p);
  thrust::device_vector<std::uint32_t> d_offsets(offsets.begin(), offsets.end());
  const cdpkit::segments_view segs{thrust::raw_pointer_cast(d_offsets.data()),
                                   thrust::raw_pointer_cast(d_offsets.data()) + 1, p.num_segments};
  thrust::device_vector<std::uint32_t> visits(offsets.back(), 0);
  auto* v = thrust::raw_pointer_cast(visits.data());
  const auto pre = [] __device__(std::uint32_t) {};
  const auto item = [v] __device__(std::uint32_t j) { v[j] = j; };
  using cdpkit::loop_policy;
  for (const auto& policy : {loop_policy::thresholded(), loop_policy::warp_aggregated(),
                             loop_policy::block_aggregated()}) {
    CAPTURE(std::string(cdpkit::to_string(policy.kind)));
    cdpkit::segment_result traced;
    cdpkit::trace_snapshot trace;
    {
      cdpkit::profiling::trace_session session(rt);
      traced = cdpkit::for_each_segment(segs, pre, item, policy, rt);
      trace = session.collect();
    }
    CHECK(traced.kind == policy.kind);
    CHECK(traced.threshold_auto);
    REQUIRE(traced.threshold.has_value());
    CHECK(*traced.threshold == trace.totals.last_auto_threshold);
    // untraced: the same distribution, the same pick, known without the trace
    REQUIRE_FALSE(rt.tracing());
    const auto untraced = cdpkit::for_each_segment(segs, pre, item, policy, rt);
    CHECK(untraced.threshold == traced.threshold);
    // asynchronous: the handle's result once the stream is done
    auto first = cdpkit::for_each_segment_async(segs, pre, item, policy, rt, nullptr);
    const auto pending = std::move(first);  // the device address moves with the buffer
    CDPKIT_WAIT_STREAM(nullptr, rt, "test");
    CDPKIT_CHECK_DEVICE_ERRORS(rt);
    CHECK(first.d_threshold() == nullptr);  // NOLINT(bugprone-use-after-move): what is checked
    CHECK(pending.d_threshold() != nullptr);
    CHECK(pending.result().threshold == traced.threshold);
  }
  // given thresholds are returned as given; the policies without child grids have none
  CHECK(cdpkit::for_each_segment(segs, pre, item, loop_policy::thresholded(64), rt).threshold ==
        64u);
  CHECK_FALSE(cdpkit::for_each_segment(segs, pre, item, loop_policy::thresholded(64), rt)
                  .threshold_auto);
  CHECK(cdpkit::for_each_segment(segs, pre, item, loop_policy::child_per_thread(), rt).threshold ==
        0u);
  CHECK_FALSE(
      cdpkit::for_each_segment(segs, pre, item, loop_policy::serial(), rt).threshold.has_value());
  CHECK_FALSE(cdpkit::for_each_segment(segs, pre, item, loop_policy::flat_balanced(), rt)
                  .threshold.has_value());
  // no segments: nothing ran, nothing was picked
  const cdpkit::segments_view none{segs.d_begin, segs.d_end, 0};
  const auto empty = cdpkit::for_each_segment(none, pre, item, loop_policy::thresholded(), rt);
  CHECK(empty.threshold_auto);
  CHECK_FALSE(empty.threshold.has_value());
}

namespace {

/// segment_sum's term for the test: a hash of the item, so that a dropped or doubled item shows.
struct hashed_term {
  __device__ unsigned long long operator()(std::uint32_t, std::uint32_t j) const {
    return (1ull * j * 2654435761u) >> 12;
  }
};

/// Adds each partial into sums[i] and counts the calls.
struct counted_combine {
  unsigned long long* sums;
  unsigned long long* calls;
  __device__ void operator()(std::uint32_t i, unsigned long long partial) const {
    atomicAdd(&sums[i], partial);
    atomicAdd(calls, 1ull);
  }
};

}  // namespace

TEST_CASE("segment_sum gives every segment's exact sum under every policy, one combine per thread "
          "or warp share" * CDPKIT_GPU_CASE) {
  // lengths 0..199 from a hash, a giant of 10^5 items every 5,000 segments, empty ones between
  const std::uint32_t n = 20000;
  std::vector<std::uint32_t> offsets(n + 1, 0);
  std::vector<unsigned long long> expected(n, 0);
  std::uint64_t nonempty = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t len = i % 5000 == 17 ? 100000u : (i * 2654435761u >> 7) % 200u;
    offsets[i + 1] = offsets[i] + len;
    for (std::uint32_t j = offsets[i]; j < offsets[i + 1]; ++j) expected[i] += (1ull * j * 2654435761u) >> 12;
    nonempty += len > 0;
  }
  const std::uint64_t total = offsets.back();
  thrust::device_vector<std::uint32_t> d_offsets(offsets.begin(), offsets.end());
  const cdpkit::segments_view segs{thrust::raw_pointer_cast(d_offsets.data()),
                                   thrust::raw_pointer_cast(d_offsets.data()) + 1, n};
  cdpkit::launch_config small;
  small.pending_launch_limit = 16;  // fallbacks: inline loops and cooperative walks
  cdpkit::launch_runtime limited(small);
  for (cdpkit::launch_runtime* rt : {&cdpkit::default_runtime(), &limited}) {
    for (const auto& policy : every_policy()) {
      CAPTURE(rt == &limited);
      CAPTURE(std::string(cdpkit::to_string(policy.kind)));
      CAPTURE(policy.threshold.value_or(0xffffffffu));
      thrust::device_vector<unsigned long long> sums(n, 0);
      thrust::device_vector<unsigned long long> calls(1, 0);
      cdpkit::for_each_segment(
          segs, cdpkit::loop_to_child::no_pre_op{},
          cdpkit::segment_sum<hashed_term, counted_combine>{
              {}, {thrust::raw_pointer_cast(sums.data()), thrust::raw_pointer_cast(calls.data())}},
          policy, *rt);
      const thrust::host_vector<unsigned long long> got = sums;
      CHECK(std::equal(expected.begin(), expected.end(), got.begin()));
      const unsigned long long c = calls[0];
      CHECK(c >= nonempty);
      // a call per item would be `total` (2.4 million): a thread's segment takes one call, a
      // warp's share of a segment one
      CHECK(c <= 2 * nonempty + total / 16);
      if (policy.kind == cdpkit::loop_policy_kind::serial_loop) CHECK(c == nonempty);
    }
  }
}

TEST_CASE("for_each_segment keeps its scratch in the runtime's workspace: a call that fits leaves it as it is, a "
          "larger one grows it, an asynchronous call takes its own, an abandoned workspace is replaced" *
          CDPKIT_GPU_CASE) {
  // lengths 0..99 from a hash and a giant of 50,000: every policy but serial_loop and the
  // thresholds given needs scratch (the pick's histograms and result, the scans, the flat grid's
  // lengths, total and CUB storage); `big` segments of the same law need more than a MiB
  const auto make = [](std::uint32_t n, std::vector<std::uint32_t>& offsets, std::vector<unsigned long long>& expected) {
    offsets.assign(n + 1, 0);
    expected.assign(n, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t len = i == 12345 ? 50000u : (i * 2654435761u >> 9) % 100u;
      offsets[i + 1] = offsets[i] + len;
      for (std::uint32_t j = offsets[i]; j < offsets[i + 1]; ++j) expected[i] += (1ull * j * 2654435761u) >> 12;
    }
  };
  const std::uint32_t n = 30000, big = 400000;  // flat_balanced on `big`: about 3.2 MB of scratch
  std::vector<std::uint32_t> offsets, big_offsets;
  std::vector<unsigned long long> expected, big_expected;
  make(n, offsets, expected);
  make(big, big_offsets, big_expected);
  thrust::device_vector<std::uint32_t> d_offsets(offsets.begin(), offsets.end());
  thrust::device_vector<std::uint32_t> d_big(big_offsets.begin(), big_offsets.end());
  const cdpkit::segments_view segs{thrust::raw_pointer_cast(d_offsets.data()),
                                   thrust::raw_pointer_cast(d_offsets.data()) + 1, n};
  const cdpkit::segments_view big_segs{thrust::raw_pointer_cast(d_big.data()), thrust::raw_pointer_cast(d_big.data()) + 1,
                                       big};
  cdpkit::launch_runtime rt;
  CHECK(rt.workspace_bytes() == 0u);
  thrust::device_vector<unsigned long long> sums(big, 0);
  thrust::device_vector<unsigned long long> calls(1, 0);
  const cdpkit::segment_sum<hashed_term, counted_combine> op{
      {}, {thrust::raw_pointer_cast(sums.data()), thrust::raw_pointer_cast(calls.data())}};
  const auto exact = [&](const std::vector<unsigned long long>& want) {
    const thrust::host_vector<unsigned long long> got = sums;
    thrust::fill(sums.begin(), sums.end(), 0ull);
    return std::equal(want.begin(), want.end(), got.begin());
  };
  const auto run = [&](const cdpkit::segments_view& s, const cdpkit::loop_policy& p) {
    return cdpkit::for_each_segment(s, cdpkit::loop_to_child::no_pre_op{}, op, p, rt);
  };
  for (const auto& policy : every_policy()) {
    CAPTURE(std::string(cdpkit::to_string(policy.kind)));
    CAPTURE(policy.threshold.value_or(0xffffffffu));
    (void)run(segs, policy);
    CHECK(exact(expected));
    void* const first = rt.workspace(1);  // (no growth: it holds at least what the call took)
    const std::size_t size = rt.workspace_bytes();
    REQUIRE(first != nullptr);
    CHECK(size >= (std::size_t{1} << 20));
    const auto r = run(segs, policy);
    CHECK(exact(expected));
    CHECK(rt.workspace(1) == first);
    CHECK(rt.workspace_bytes() == size);

    // the asynchronous call's scratch is its own: the workspace stays as it is; the same input
    // picks the same threshold (the synchronous call's was read from the workspace)
    const auto pending = cdpkit::for_each_segment_async(segs, cdpkit::loop_to_child::no_pre_op{}, op, policy, rt,
                                                        nullptr);
    cdpkit::wait_for_stream(nullptr, "test", &rt, __FILE__, __LINE__);
    const auto a = pending.result();
    CHECK(a.kind == policy.kind);
    CHECK(a.threshold == r.threshold);
    CHECK(exact(expected));
    CHECK(rt.workspace(1) == first);
    CHECK(rt.workspace_bytes() == size);

    // abandoned (as after a missed deadline): never freed, so the next call's block is another
    rt.abandon_workspace();
    CHECK(rt.workspace_bytes() == 0u);
    (void)run(segs, policy);
    CHECK(exact(expected));
    CHECK(rt.workspace(1) != first);
  }
  // a call that needs more than the workspace holds grows it, and stays exact
  const std::size_t before = rt.workspace_bytes();
  (void)run(big_segs, cdpkit::loop_policy::flat_balanced());
  CHECK(exact(big_expected));
  CHECK(rt.workspace_bytes() > before);
  CHECK(rt.workspace_bytes() >= std::size_t{2} * big * sizeof(std::uint32_t));
}

namespace {

/// One warp per case: the lanes of masks[c] call warp_run_sum with ids[c * 32 + lane] and the
/// value lane + 1; sums and firsts get each lane's result.
__global__ void warp_run_sum_kernel(const unsigned int* masks, const std::uint32_t* ids,
                                    unsigned long long* sums, int* firsts) {
  const unsigned int c = blockIdx.x, lane = threadIdx.x;
  if ((masks[c] >> lane) & 1u) {
    bool first = false;
    sums[c * 32 + lane] = cdpkit::loop_to_child::warp_run_sum(masks[c], ids[c * 32 + lane], lane + 1ull, first);
    firsts[c * 32 + lane] = first ? 1 : 0;
  }
}

}  // namespace

TEST_CASE("warp_run_sum gives each run of adjacent active lanes with one segment its sum, in its first lane, "
          "whatever the mask" * CDPKIT_GPU_CASE) {
  std::vector<unsigned int> masks = {0xffffffffu, 0xffffffffu, 0x0000ffffu, 0x80000000u, 0x00000001u,
                                     0xa5a5a5a5u, 0xffff00ffu, 0x7ffffffeu};
  std::vector<std::uint32_t> ids(masks.size() * 32, 7u);
  for (unsigned int lane = 0; lane < 32; ++lane) ids[32 + lane] = lane;  // case 1: every lane its own run
  std::uint64_t state = 12345;
  const auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  for (int extra = 0; extra < 200; ++extra) {  // random masks, ids in 0..3 (runs of every length)
    masks.push_back(static_cast<unsigned int>(next() >> 32) | (extra % 4 == 0 ? 0xffffffffu : 0u));
    for (int lane = 0; lane < 32; ++lane) ids.push_back(static_cast<std::uint32_t>(next() >> 62));
  }
  const auto cases = static_cast<unsigned int>(masks.size());
  thrust::device_vector<unsigned int> d_masks(masks.begin(), masks.end());
  thrust::device_vector<std::uint32_t> d_ids(ids.begin(), ids.end());
  thrust::device_vector<unsigned long long> d_sums(std::size_t{cases} * 32, 0);
  thrust::device_vector<int> d_firsts(std::size_t{cases} * 32, -1);
  warp_run_sum_kernel<<<cases, 32>>>(thrust::raw_pointer_cast(d_masks.data()), thrust::raw_pointer_cast(d_ids.data()),
                                     thrust::raw_pointer_cast(d_sums.data()), thrust::raw_pointer_cast(d_firsts.data()));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const thrust::host_vector<unsigned long long> sums = d_sums;
  const thrust::host_vector<int> firsts = d_firsts;
  for (unsigned int c = 0; c < cases; ++c) {
    CAPTURE(c);
    CAPTURE(masks[c]);
    for (unsigned int lane = 0; lane < 32; ++lane) {
      if (((masks[c] >> lane) & 1u) == 0) continue;
      const bool first = lane == 0 || ((masks[c] >> (lane - 1)) & 1u) == 0 || ids[c * 32 + lane - 1] != ids[c * 32 + lane];
      CHECK(firsts[c * 32 + lane] == (first ? 1 : 0));
      if (!first) continue;
      unsigned long long expected = 0;  // the run: this lane and the active lanes after it with its id
      for (unsigned int k = lane; k < 32 && ((masks[c] >> k) & 1u) != 0 && ids[c * 32 + k] == ids[c * 32 + lane]; ++k)
        expected += k + 1ull;
      CHECK(sums[c * 32 + lane] == expected);
    }
  }
}
