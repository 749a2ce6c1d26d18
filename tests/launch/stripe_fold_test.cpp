// The host's side of the trace's striped counters: the single-step counts, the warp probes and the
// requests' outcomes, summed from their SM stripes into each site's counters.

#include <doctest/doctest.h>

#include <cdpkit/launch.hpp>

#include <vector>

TEST_CASE("the host folds striped single-step counts into the site's probe counters") {
  std::vector<unsigned long long> single(cdpkit::single_step_entries, 0);
  const auto at = [&](int site, int stripe, int lanes) -> unsigned long long& {
    return single[(site * cdpkit::single_step_stripes + stripe) * cdpkit::trace_limits::lane_buckets + lanes];
  };
  at(3, 0, 32) = 5;
  at(3, 15, 32) = 2;
  at(3, 7, 16) = 4;
  std::vector<cdpkit::site_counters> sites(cdpkit::trace_limits::max_sites);
  sites[3].probe_warps = 1;  // a committed probe of one step with 8 lanes
  sites[3].probe_steps = 1;
  sites[3].probe_active_lanes = 8;
  sites[3].lanes_hist[8] = 1;
  sites[3].efficiency_hist[8] = 1;
  sites[3].efficiency_sum = 0.25;
  cdpkit::detail::fold_single_steps(single.data(), sites.data());
  const auto& c = sites[3];
  CHECK(c.probe_warps == 12u);
  CHECK(c.probe_steps == 12u);
  CHECK(c.probe_active_lanes == 8u + 7u * 32u + 4u * 16u);
  CHECK(c.lanes_hist[32] == 7u);
  CHECK(c.lanes_hist[16] == 4u);
  CHECK(c.lanes_hist[8] == 1u);
  CHECK(c.efficiency_hist[31] == 7u);  // efficiency 1 is in the last bucket
  CHECK(c.efficiency_hist[16] == 4u);
  CHECK(c.efficiency_sum == doctest::Approx(0.25 + 7.0 + 2.0));
  CHECK(sites[2].probe_warps == 0u);
  CHECK(sites[4].probe_warps == 0u);
}

TEST_CASE("the host sums the warp probes' SM stripes into the site's probe counters") {
  std::vector<cdpkit::probe_counters> probes(cdpkit::probe_entries, cdpkit::probe_counters{});
  const auto at = [&](int site, int stripe) -> cdpkit::probe_counters& {
    return probes[site * cdpkit::probe_stripes + stripe];
  };
  at(5, 0).lanes_hist[32] = 10;  // stripe 0: two warps of 5 full steps
  at(5, 0).probe_steps = 10;
  at(5, 0).probe_active_lanes = 320;
  at(5, 0).probe_warps = 2;
  at(5, 0).efficiency_hist[31] = 2;
  at(5, 0).efficiency_sum = 2.0;
  at(5, 15).lanes_hist[8] = 3;  // the last stripe: a warp of 3 steps with 8 lanes
  at(5, 15).probe_steps = 3;
  at(5, 15).probe_active_lanes = 24;
  at(5, 15).probe_warps = 1;
  at(5, 15).efficiency_hist[8] = 1;
  at(5, 15).efficiency_sum = 0.25;
  at(6, 3).probe_warps = 7;  // another site's stripe stays there
  std::vector<cdpkit::site_counters> sites(cdpkit::trace_limits::max_sites);
  sites[5].probe_warps = 1;  // what the site held before (e.g. folded single steps)
  sites[5].probe_steps = 1;
  sites[5].lanes_hist[32] = 1;
  cdpkit::detail::fold_probes(probes.data(), sites.data());
  const auto& c = sites[5];
  CHECK(c.probe_warps == 4u);
  CHECK(c.probe_steps == 14u);
  CHECK(c.probe_active_lanes == 344u);
  CHECK(c.lanes_hist[32] == 11u);
  CHECK(c.lanes_hist[8] == 3u);
  CHECK(c.efficiency_hist[31] == 2u);
  CHECK(c.efficiency_hist[8] == 1u);
  CHECK(c.efficiency_sum == doctest::Approx(2.25));
  CHECK(sites[6].probe_warps == 7u);
  CHECK(sites[4].probe_warps == 0u);
}

TEST_CASE("the host sums the requests' SM stripes into the site's counters and folds the requests and the records requested from the outcomes") {
  std::vector<cdpkit::probe_counters> probes(cdpkit::probe_entries, cdpkit::probe_counters{});
  const auto at = [&](int site, int stripe) -> cdpkit::probe_counters& {
    return probes[site * cdpkit::probe_stripes + stripe];
  };
  constexpr int budget = static_cast<int>(cdpkit::launch_outcome::fallback_budget);
  constexpr int error = static_cast<int>(cdpkit::launch_outcome::fallback_error);
  at(5, 0).outcomes[budget] = 40;  // stripe 0: 40 requests refused over the budget, 900 items done inline
  at(5, 0).inline_items = 900;
  at(5, 15).outcomes[0] = 2;  // the last stripe: 2 launched
  at(7, 3).outcomes[error] = 5;  // another site: 5 failed launches
  std::vector<cdpkit::site_counters> sites(cdpkit::trace_limits::max_sites);
  sites[5].requests = 1;  // what the site held before
  sites[5].outcomes[0] = 1;
  cdpkit::trace_totals totals{};
  totals.records_requested = 13;  // the ids the device took
  cdpkit::detail::fold_probes(probes.data(), sites.data(), &totals, /*refusals_recorded=*/true);
  CHECK(sites[5].requests == 43u);
  CHECK(sites[5].outcomes[0] == 3u);
  CHECK(sites[5].outcomes[budget] == 40u);
  CHECK(sites[5].inline_items == 900u);
  CHECK(sites[7].requests == 5u);
  CHECK(sites[7].outcomes[error] == 5u);
  CHECK(sites[6].requests == 0u);
  CHECK(totals.records_requested == 40u + 2u + 5u);  // every traced request of the stripes, with an id or not
  // by default a refusal takes no record: the records requested are the grids launched or failed
  cdpkit::trace_totals launched_only{};
  launched_only.records_requested = 4;  // the ids the device took: a buffer of 4, full
  std::vector<cdpkit::site_counters> by_default(cdpkit::trace_limits::max_sites);
  cdpkit::detail::fold_probes(probes.data(), by_default.data(), &launched_only);
  CHECK(by_default[5].requests == 42u);  // the site still counts every request
  CHECK(launched_only.records_requested == 2u + 5u);
  std::vector<cdpkit::site_counters> again(cdpkit::trace_limits::max_sites);
  cdpkit::detail::fold_probes(probes.data(), again.data());  // without totals: the sites alone
  CHECK(again[5].requests == 42u);
  // a snapshot of a run in flight: ids taken by requests whose outcomes are not counted yet
  cdpkit::trace_totals in_flight{};
  in_flight.records_requested = 60;
  std::vector<cdpkit::site_counters> third(cdpkit::trace_limits::max_sites);
  cdpkit::detail::fold_probes(probes.data(), third.data(), &in_flight);
  CHECK(in_flight.records_requested == 60u);  // never fewer than the ids taken
}
