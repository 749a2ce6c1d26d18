// loop_to_child's policies on the host: their names, the cost model's threshold (launch cost over
// serial item cost) and each kind's factory, and the balanced threshold rule that weighs the
// launches against the longest inline loop.

#include <doctest/doctest.h>

#include <cdpkit/error.hpp>
#include <cdpkit/harness/segment_workload.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/loop_to_child/threshold_rule.hpp>

#include <algorithm>
#include <cstdint>

TEST_CASE("policy and stream names round-trip and unknown names list the choices") {
  for (auto k : cdpkit::all_loop_policy_kinds())
    CHECK(cdpkit::parse_loop_policy_kind(cdpkit::to_string(k)) == k);
  for (auto d : cdpkit::harness::all_segment_dists())
    CHECK(cdpkit::harness::parse_segment_dist(cdpkit::harness::to_string(d)) == d);
  CHECK(cdpkit::parse_stream_kind("tail") == cdpkit::stream_kind::tail);
  CHECK_THROWS_WITH_AS(cdpkit::parse_loop_policy_kind("fastest"),
                       doctest::Contains("unknown loop policy 'fastest' (choose one of: serial_loop"),
                       cdpkit::input_error);
  CHECK_THROWS_AS(cdpkit::parse_stream_kind(""), cdpkit::input_error);
}

TEST_CASE("the cost model threshold is the launch cost over the serial item cost") {
  cdpkit::launch_cost_model m;
  m.serial_item_ns = 2.0;
  CHECK(m.threshold(cdpkit::stream_kind::fire_and_forget) == 550u);
  CHECK(m.threshold(cdpkit::stream_kind::tail) == 4950u);
  m.serial_item_ns = 0.0;
  CHECK_THROWS_AS((void)m.threshold(cdpkit::stream_kind::tail), cdpkit::input_error);
  m.serial_item_ns = 2.0;
  CHECK(m.threshold(cdpkit::stream_kind::fire_and_forget, 32) == 32u * 550u);
  CHECK_THROWS_AS((void)m.threshold(cdpkit::stream_kind::tail, 0), cdpkit::input_error);
  CHECK(cdpkit::loop_policy::child_per_thread().cost_model_threshold() == 0u);
  // of(kind, T, stream) is the kind's factory: T = 0 for child_per_thread, none without launches
  using cdpkit::loop_policy_kind;
  CHECK(cdpkit::loop_policy::of(loop_policy_kind::child_per_thread, 99u).threshold == 0u);
  CHECK(cdpkit::loop_policy::of(loop_policy_kind::thresholded, 99u).threshold == 99u);
  CHECK(cdpkit::loop_policy::of(loop_policy_kind::block_aggregated).auto_threshold());
  CHECK_FALSE(cdpkit::loop_policy::of(loop_policy_kind::serial_loop, 99u).threshold.has_value());
  CHECK_FALSE(cdpkit::loop_policy::of(loop_policy_kind::flat_balanced, 99u).threshold.has_value());
  CHECK(cdpkit::loop_policy::of(loop_policy_kind::warp_aggregated, 5u, cdpkit::stream_kind::named_per_thread).stream ==
        cdpkit::stream_kind::named_per_thread);
  CHECK_FALSE(cdpkit::loop_policy::child_per_thread().auto_threshold());
  CHECK_FALSE(cdpkit::loop_policy::thresholded(77).auto_threshold());
  auto p = cdpkit::loop_policy::thresholded();
  CHECK(p.auto_threshold());
  CHECK(p.cost_model_threshold() == p.cost_model.threshold(p.stream));
  p.kind = cdpkit::loop_policy_kind::block_aggregated;
  CHECK(p.loop_lanes() == 256u);
  CHECK(p.cost_model_threshold() == p.cost_model.threshold(p.stream, 256));
  CHECK_FALSE(cdpkit::loop_policy::flat_balanced().uses_cdp());
  CHECK(cdpkit::loop_policy::warp_aggregated().uses_cdp());
}

TEST_CASE("the balanced threshold rule weighs the launch path against the longest inline loop") {
  std::uint64_t hist[33] = {};
  SUBCASE("many short lists launch nothing") {
    hist[2] = 500;  // 500 lists of 4..7 items: 500 launches cost far more than a 7-item loop
    CHECK(cdpkit::balanced_threshold(hist, 33, 808.0, 1100.0, 1024) >= 7u);
  }
  SUBCASE("one giant among tiny lists launches only the giant") {
    hist[0] = 100000;
    hist[1] = 100000;
    hist[20] = 1;
    const auto t = cdpkit::balanced_threshold(hist, 33, 345.0, 1100.0, 1024);
    CHECK(t >= 3u);
    CHECK(t < (1u << 20));
  }
  SUBCASE("a power law settles where launches and loops balance") {
    for (int b = 0; b < 16; ++b) hist[b] = 1ull << (20 - b);  // halving per bucket
    // makespan at T = 2^b - 1: launches of buckets >= b vs the loop over the top of bucket b - 1
    const auto makespan = [&](int b) {
      std::uint64_t launches = 0;
      for (int k = b; k < 33; ++k) launches += hist[k];
      return std::max(launches * 1100.0, b == 0 ? 0.0 : ((2.0 * (1u << (b - 1))) - 1) * 345.0);
    };
    const auto t = cdpkit::balanced_threshold(hist, 33, 345.0, 1100.0, 1u << 20);
    int b = 0;
    while (b < 32 && (1u << b) - 1u != t) ++b;
    CAPTURE(t);
    REQUIRE(b < 32);
    CHECK(makespan(b) <= makespan(b - 1));
    CHECK(makespan(b) <= makespan(b + 1));
    CHECK(t > 64u);
  }
  SUBCASE("the budget caps the launches") {
    hist[12] = 5000;
    CHECK(cdpkit::balanced_threshold(hist, 33, 345.0, 1.0, 1000) >= 8191u);
  }
}
