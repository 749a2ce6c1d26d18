// quicksort's interface and its recursion: variant names and scratch sizes; asynchronous sorts on
// a stream; caller-provided scratch; bad input refused before anything is touched; exact results
// and counted fallbacks under a tiny pending limit and a depth cap; the recursion as the trace
// shows it.
//
// Host code: it calls the instantiations the library ships (cdpkit/quicksort.hpp), so that it
// compiles quickly.

#include <doctest/doctest.h>

#include "sort_checks.hpp"
#include "support/gpu.hpp"

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/harness/sort_inputs.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/quicksort.hpp>
#include <cdpkit/wait.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace cdpkit_test;

TEST_CASE("quicksort variant names round-trip and scratch sizes follow the variants") {
  const auto& all = cdpkit::all_quicksort_variants();
  REQUIRE(all.size() == 7u);
  CHECK(all.front() == quicksort_variant::simple);
  CHECK(all[2] == quicksort_variant::fast);
  CHECK(all[3] == quicksort_variant::radix);
  CHECK(all.back() == quicksort_variant::thrust_merge);
  for (const auto v : all) {
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    CHECK(cdpkit::parse_quicksort_variant(cdpkit::to_string(v)) == v);
    CHECK(cdpkit::uses_cdp(v) == (v == quicksort_variant::simple ||
                                  v == quicksort_variant::two_stream ||
                                  v == quicksort_variant::fast ||
                                  v == quicksort_variant::radix));
    // more keys, more scratch; values need more; 2^32 keys and more are refused
    const auto small = cdpkit::quicksort_scratch_bytes(v, 1000, 4);
    const auto large = cdpkit::quicksort_scratch_bytes(v, 1u << 24, 4);
    CHECK(large >= small);
    CHECK(cdpkit::quicksort_scratch_bytes(v, 1u << 24, 4, 4) >= large);
    CHECK(cdpkit::quicksort_scratch_bytes(v, 1u << 24, 8) >= large);
    if (v == quicksort_variant::simple) CHECK(large == 0u);  // in place
    else CHECK(large >= (std::size_t{1} << 24) * 4);         // a second buffer of keys
    if (v != quicksort_variant::simple)
      CHECK(cdpkit::quicksort_scratch_bytes(v, cdpkit::quicksort_max_keys, 4) >
            std::size_t{cdpkit::quicksort_max_keys} * 4);
    CHECK_THROWS_WITH_AS((void)cdpkit::quicksort_scratch_bytes(v, cdpkit::quicksort_max_keys + 1, 4),
                         doctest::Contains("4294967295"), cdpkit::input_error);
  }
  CHECK(std::string(cdpkit::to_string(quicksort_variant::host_driven)) == "host_driven");
  CHECK_THROWS_WITH_AS(cdpkit::parse_quicksort_variant("quick"), doctest::Contains("'quick'"),
                       cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::parse_quicksort_variant(""), doctest::Contains("thrust_merge"),
                       cdpkit::input_error);
  // the comparators on the host: IEEE 754 totalOrder for floats
  const cdpkit::total_order_less<float> tol;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(tol(-nan, -inf));
  CHECK(tol(-inf, -1.0f));
  CHECK(tol(-0.0f, 0.0f));
  CHECK_FALSE(tol(0.0f, -0.0f));
  CHECK(tol(inf, nan));
  CHECK_FALSE(tol(nan, nan));
  CHECK(cdpkit::total_order_less<double>{}(-0.0, 0.0));
  CHECK(cdpkit::greater<int>{}(2, 1));
}

TEST_CASE("quicksort_async queues sorts on the caller's stream until wait_for_stream" *
          CDPKIT_GPU_CASE) {
  auto& rt = cdpkit::default_runtime();
  cudaStream_t raw = nullptr;
  CDPKIT_CUDA_TRY(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
  const cdpkit::detail::unique_stream stream(raw);
  for (const auto v : cdpkit::all_quicksort_variants()) {
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    const std::uint64_t n = v == quicksort_variant::simple ? 1000 : mid_n;
    const auto a = make_sort_input<std::uint32_t>(sort_distribution::uniform, n, 21);
    const auto b = make_sort_input<double>(sort_distribution::zipf, n, 22);
    const auto c = make_sort_input<std::int64_t>(sort_distribution::pivot_copies, n, 23);
    device_array<std::uint32_t> da(a);
    device_array<double> db(b);
    device_array<std::int64_t> dc(c);
    device_array<std::uint32_t> dv(indices(n));
    quicksort_options o;
    o.variant = v;
    // three sorts queued back to back on one stream, then one wait
    const auto r = cdpkit::quicksort_async(da.get(), n, cdpkit::less<std::uint32_t>{}, o, stream.get());
    CHECK(r.variant == v);
    CHECK(r.n == n);
    // thrust_radix takes less only: its double sort is ascending here, descending elsewhere
    const bool descending = takes<double, cdpkit::greater<double>>(v);
    if (descending)
      cdpkit::quicksort_async(db.get(), n, cdpkit::greater<double>{}, o, stream.get());
    else
      cdpkit::quicksort_async(db.get(), n, cdpkit::less<double>{}, o, stream.get());
    cdpkit::quicksort_by_key_async(dc.get(), dv.get(), n, cdpkit::less<std::int64_t>{}, o,
                                   stream.get());
    cdpkit::wait_for_stream(stream.get(), "quicksort_async test", &rt, __FILE__, __LINE__);
    CDPKIT_CHECK_DEVICE_ERRORS(rt);
    CHECK(differences(da.to_host(), host_sorted(a, cdpkit::less<std::uint32_t>{})) == "same");
    CHECK(differences(db.to_host(), descending ? host_sorted(b, cdpkit::greater<double>{})
                                               : host_sorted(b, cdpkit::less<double>{})) == "same");
    const auto got = dc.to_host();
    CHECK(differences(got, host_sorted(c, cdpkit::less<std::int64_t>{})) == "same");
    CHECK(pairs_kept(c, got, dv.to_host()) == "kept");
  }
}

TEST_CASE("quicksort sorts in caller-provided scratch and refuses scratch that is too small" *
          CDPKIT_GPU_CASE) {
  for (const auto v : cdpkit::all_quicksort_variants()) {
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    const std::uint64_t n = v == quicksort_variant::simple ? 1000 : mid_n;
    const std::size_t need = cdpkit::quicksort_scratch_bytes(v, n, sizeof(std::uint64_t));
    const std::size_t need_kv =
        cdpkit::quicksort_scratch_bytes(v, n, sizeof(std::uint64_t), sizeof(std::uint32_t));
    CHECK(need_kv >= need);
    cdpkit::detail::unique_device_ptr<char[]> scratch;  // cudaMalloc: 256-byte aligned
    CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(scratch), std::max<std::size_t>(need_kv, 256)));
    const auto keys = make_sort_input<std::uint64_t>(sort_distribution::sixteen_values, n, 31);
    const auto want = host_sorted(keys, cdpkit::less<std::uint64_t>{});
    quicksort_options o;
    o.variant = v;
    o.scratch = scratch.get();
    o.scratch_bytes = need;
    {
      device_array<std::uint64_t> d(keys);
      const auto r = cdpkit::quicksort(d.get(), n, cdpkit::less<std::uint64_t>{}, o);
      CHECK(r.scratch_bytes == need);
      CHECK(differences(d.to_host(), want) == "same");
    }
    {
      o.scratch_bytes = need_kv;
      device_array<std::uint64_t> d(keys);
      device_array<std::uint32_t> dv(indices(n));
      cdpkit::quicksort_by_key(d.get(), dv.get(), n, cdpkit::less<std::uint64_t>{}, o);
      const auto got = d.to_host();
      CHECK(differences(got, want) == "same");
      CHECK(pairs_kept(keys, got, dv.to_host()) == "kept");
    }
    if (need == 0) continue;  // simple: in place, no scratch can be too small
    {
      o.scratch_bytes = need - 1;
      device_array<std::uint64_t> d(keys);
      CHECK_THROWS_WITH_AS(cdpkit::quicksort(d.get(), n, cdpkit::less<std::uint64_t>{}, o),
                           doctest::Contains("scratch"), cdpkit::input_error);
      o.scratch_bytes = need_kv - 1;
      device_array<std::uint32_t> dv(indices(n));
      CHECK_THROWS_AS(
          cdpkit::quicksort_by_key(d.get(), dv.get(), n, cdpkit::less<std::uint64_t>{}, o),
          cdpkit::input_error);
      CHECK(differences(d.to_host(), keys) == "same");  // refused before anything ran
    }
  }
}

TEST_CASE("radix sorts a block's range whose keys share the bits below its digit, with their values" *
          CDPKIT_GPU_CASE) {
  // ranges of 2 tiles to above radix_block_keys, sorted by the drain's blocks: keys that agree on
  // all but their lowest bits (a count finds one bucket and goes on below the highest bit that
  // differs), runs of equal keys (the lowest digit's buckets, copied home with their values)
  using cdpkit::harness::sort_distribution;
  for (const sort_distribution dist :
       {sort_distribution::shared_prefix, sort_distribution::one_different, sort_distribution::staircase}) {
    for (const std::uint64_t n : {5000ull, 30000ull, 200000ull}) {
      CAPTURE(std::string(cdpkit::harness::to_string(dist)));
      CAPTURE(n);
      const auto keys = make_sort_input<std::uint64_t>(dist, n, 41);
      const auto want = host_sorted(keys, cdpkit::less<std::uint64_t>{});
      quicksort_options o;
      o.variant = quicksort_variant::radix;
      device_array<std::uint64_t> d(keys);
      device_array<std::uint32_t> dv(indices(n));
      cdpkit::quicksort_by_key(d.get(), dv.get(), n, cdpkit::less<std::uint64_t>{}, o);
      const auto got = d.to_host();
      CHECK(differences(got, want) == "same");
      CHECK(pairs_kept(keys, got, dv.to_host()) == "kept");
    }
  }
}

TEST_CASE("more than quicksort_max_keys keys are refused before any memory is touched" *
          CDPKIT_GPU_CASE) {
  // null pointers: a call that read or wrote them would fault
  for (const auto v : cdpkit::all_quicksort_variants()) {
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    quicksort_options o;
    o.variant = v;
    CHECK_THROWS_WITH_AS(cdpkit::quicksort<std::uint32_t>(nullptr, cdpkit::quicksort_max_keys + 1,
                                                          cdpkit::less<std::uint32_t>{}, o),
                         doctest::Contains("4294967295"), cdpkit::input_error);
    CHECK_THROWS_AS((cdpkit::quicksort_by_key<std::uint64_t, std::uint32_t>(
                        nullptr, nullptr, 1ull << 40, cdpkit::greater<std::uint64_t>{}, o)),
                    cdpkit::input_error);
    CHECK_THROWS_AS(cdpkit::quicksort_async<float>(nullptr, ~0ull, cdpkit::less<float>{}, o, nullptr),
                    cdpkit::input_error);
  }
  CHECK(cudaDeviceSynchronize() == cudaSuccess);  // nothing faulted
}

TEST_CASE("thrust_radix refuses comparators other than less, thrust_merge takes them" *
          CDPKIT_GPU_CASE) {
  const auto keys = make_sort_input<float>(sort_distribution::uniform, 1000, 41);
  device_array<float> d(keys);
  device_array<std::uint32_t> dv(indices(1000));
  quicksort_options o;
  o.variant = quicksort_variant::thrust_radix;
  CHECK_THROWS_WITH_AS(cdpkit::quicksort(d.get(), 1000, cdpkit::total_order_less<float>{}, o),
                       doctest::Contains("thrust_radix"), cdpkit::input_error);
  CHECK_THROWS_AS(cdpkit::quicksort_by_key(d.get(), dv.get(), 1000, cdpkit::total_order_less<float>{}, o),
                  cdpkit::input_error);
  CHECK_THROWS_AS(cdpkit::quicksort_async(d.get(), 1000, cdpkit::total_order_less<float>{}, o, nullptr),
                  cdpkit::input_error);
  CHECK_THROWS_AS(cdpkit::quicksort(d.get(), 1000, cdpkit::greater<float>{}, o),
                  cdpkit::input_error);
  CHECK(differences(d.to_host(), keys) == "same");  // untouched
  const auto want = host_sorted(keys, cdpkit::total_order_less<float>{});
  CHECK(differences(sorted_by(quicksort_variant::thrust_merge, keys, cdpkit::total_order_less<float>{}),
                    want) == "same");
  const auto dkeys = make_sort_input<double>(sort_distribution::uniform, 1000, 42);
  device_array<double> dd(dkeys);
  CHECK_THROWS_AS(cdpkit::quicksort(dd.get(), 1000, cdpkit::total_order_less<double>{}, o),
                  cdpkit::input_error);
}

TEST_CASE("under a pending limit of 16 and a depth cap of 2 quicksort stays exact and counts fallbacks" *
          CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.pending_launch_limit = 16;
  config.pending_budget = 8;
  config.max_depth = 2;
  cdpkit::launch_runtime rt(config);
  REQUIRE(rt.pending_budget() == 8);
  quicksort_options o;
  o.runtime = &rt;  // every call here, so that no other runtime is made while this one lives
  struct input {
    sort_distribution dist;
    std::uint64_t n;
  };
  for (const auto v : {quicksort_variant::fast, quicksort_variant::radix,
                       quicksort_variant::two_stream, quicksort_variant::simple}) {
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    std::vector<input> inputs = {{sort_distribution::uniform, mid_n},
                                 {sort_distribution::all_equal, 1u << 20},
                                 {sort_distribution::zipf, 1u << 20}};
    // fast's buckets of 2^20 keys are all small (one grid, nothing refused): at 2^23 its root
    // asks for ~128 range grids at once against a budget of 8
    if (v == quicksort_variant::fast)
      inputs.push_back({sort_distribution::uniform, 2 * fast_one_level_keys + 5});
    // radix's root splits 2^25 uniform keys into 256 buckets of 2^17 + a few: about half of them
    // ask for range grids, against a budget of 8
    if (v == quicksort_variant::radix)
      inputs.push_back({sort_distribution::uniform, 256ull * cdpkit::quicksort_detail::radix_block_keys + 5});
    // simple: a few thousand keys (the rest of its recursion is heap-sorted by single threads)
    if (v == quicksort_variant::simple) inputs = {{sort_distribution::uniform, 20000}};
    cdpkit::profiling::trace_session session(rt);
    for (const auto& in : inputs) {
      const std::string dist = cdpkit::harness::to_string(in.dist);
      CAPTURE(dist);
      CAPTURE(in.n);
      const auto keys = make_sort_input<std::uint32_t>(in.dist, in.n, 51);
      CHECK(differences(sorted_by(v, keys, cdpkit::less<std::uint32_t>{}, o),
                        host_sorted(keys, cdpkit::less<std::uint32_t>{})) == "same");
    }
    const auto trace = session.collect();
    const auto summary = cdpkit::profiling::summarize(trace);
    CHECK(summary.fallbacks > 0u);
    CHECK(summary.fallbacks == summary.fallback_budget + summary.fallback_depth +
                                   summary.failed_launches);
    std::uint64_t budget = 0, depth = 0, inline_items = 0;
    for (const auto& site : trace.sites) {
      budget += site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_budget)];
      depth += site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_depth)];
      inline_items += site.inline_items;
    }
    CHECK(budget + depth > 0u);
    if (v == quicksort_variant::fast || v == quicksort_variant::radix) {
      // refused range grids become jobs of the drain grid (host-launched: never refused)
      const auto& range = trace.sites[v == quicksort_variant::fast ? cdpkit::sites::qs_fast_range
                                                                    : cdpkit::sites::qs_radix_range];
      CHECK(range.requests > range.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)]);
    } else {
      CHECK(inline_items > 0u);  // the refused sides were sorted by their launchers
    }
    CHECK(summary.max_depth <= 2u);
    CHECK(summary.pending_high_water <= 8u);
    // 2-way recursions are deeper than 2
    if (v != quicksort_variant::fast && v != quicksort_variant::radix) CHECK(depth > 0u);
  }
}

TEST_CASE("with a depth cap of 0 fast still sorts: every large bucket becomes a job of the drain" *
          CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.max_depth = 0;  // no child grid at all (the scatter is a step, the drain host-launched)
  cdpkit::launch_runtime rt(config);
  quicksort_options o;
  o.runtime = &rt;
  cdpkit::profiling::trace_session session(rt);
  const auto keys =
      make_sort_input<std::uint32_t>(sort_distribution::uniform, 2 * fast_one_level_keys + 5, 52);
  CHECK(differences(sorted_by(quicksort_variant::fast, keys, cdpkit::less<std::uint32_t>{}, o),
                    host_sorted(keys, cdpkit::less<std::uint32_t>{})) == "same");
  const auto trace = session.collect();
  const auto& range = trace.sites[cdpkit::sites::qs_fast_range];
  constexpr int launched = static_cast<int>(cdpkit::launch_outcome::launched);
  CHECK(range.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_depth)] > 0u);
  CHECK(range.outcomes[launched] == 0u);
  // the root's scatter step ran (same depth: the cap does not refuse it)
  CHECK(trace.sites[cdpkit::sites::qs_fast_scatter].outcomes[launched] == 1u);
}

TEST_CASE("the trace shows each variant's recursion: range grids and their scatter steps, sides" *
          CDPKIT_GPU_CASE) {
  auto& rt = cdpkit::default_runtime();
  const auto run = [&](quicksort_variant v, const std::vector<std::uint32_t>& keys,
                       const std::vector<std::uint32_t>& want) {
    traced_run out;
    cdpkit::profiling::trace_session session(rt);
    quicksort_options o;
    o.variant = v;
    o.runtime = &rt;
    device_array<std::uint32_t> d(keys);
    const auto r = cdpkit::quicksort(d.get(), keys.size(), cdpkit::less<std::uint32_t>{}, o);
    out.trace = session.collect();
    out.summary = cdpkit::profiling::summarize(out.trace);
    CHECK(differences(d.to_host(), want) == "same");
    // the library's own scratch; the Thrust variants let Thrust allocate its own
    const bool thrust =
        v == quicksort_variant::thrust_radix || v == quicksort_variant::thrust_merge;
    CHECK(r.scratch_bytes == (thrust ? 0u : cdpkit::quicksort_scratch_bytes(v, keys.size(), 4)));
    return std::make_pair(out, r);
  };
  using cdpkit::sites::qs_fast_range;
  constexpr int launched = static_cast<int>(cdpkit::launch_outcome::launched);
  SUBCASE("fast on 2^24 uniform keys: range grids at depth 1, small buckets aggregated") {
    REQUIRE(large_n >= 2 * fast_one_level_keys);  // the root's buckets need range grids
    const auto keys = make_sort_input<std::uint32_t>(sort_distribution::uniform, large_n, 61);
    const auto want = sorted_by(quicksort_variant::thrust_merge, keys, cdpkit::less<std::uint32_t>{});
    const auto [t, r] = run(quicksort_variant::fast, keys, want);
    const auto& range = t.trace.sites[qs_fast_range];
    const auto& scatter = t.trace.sites[cdpkit::sites::qs_fast_scatter];
    CHECK(range.outcomes[launched] > 0u);
    CHECK(range.depth_hist[1] > 0u);
    CHECK(t.summary.max_depth >= 1u);
    // a scatter step per range grid, and the root's
    CHECK(scatter.outcomes[launched] == range.outcomes[launched] + 1u);
    CHECK(t.trace.sites[cdpkit::sites::qs_partition_probe].probe_warps > 0u);
    // aggregation: the thousands of small buckets cost no launch (one host-launched drain grid):
    // the only child grids are the range grids, their scatter steps and copy grids
    CHECK(t.summary.child_launches == range.outcomes[launched] + scatter.outcomes[launched] +
                                          t.trace.sites[cdpkit::sites::qs_fast_copy].outcomes[launched]);
    CHECK(r.host_levels == 0u);
  }
  SUBCASE("radix on 2^24 uniform keys: one scatter, and its buckets sorted by blocks of the drain") {
    const auto keys = make_sort_input<std::uint32_t>(sort_distribution::uniform, large_n, 66);
    const auto want = sorted_by(quicksort_variant::thrust_merge, keys, cdpkit::less<std::uint32_t>{});
    const auto [t, r] = run(quicksort_variant::radix, keys, want);
    // 256 buckets of about 2^16 keys, each at most radix_block_keys: no range grid
    CHECK(t.summary.launch_requests == 1u);
    CHECK(t.trace.sites[cdpkit::sites::qs_radix_scatter].outcomes[launched] == 1u);
  }
  SUBCASE("radix on 2^26 uniform keys: a range grid per bucket of the top digit, one scatter each") {
    const std::uint64_t n = 1ull << 26;
    const auto keys = make_sort_input<std::uint32_t>(sort_distribution::uniform, n, 66);
    const auto want = sorted_by(quicksort_variant::thrust_merge, keys, cdpkit::less<std::uint32_t>{});
    const auto [t, r] = run(quicksort_variant::radix, keys, want);
    const auto& range = t.trace.sites[cdpkit::sites::qs_radix_range];
    const auto& scatter = t.trace.sites[cdpkit::sites::qs_radix_scatter];
    // 2^26 keys in 256 buckets of about 2^18: every one above radix_block_keys, a grid each
    CHECK(range.outcomes[launched] == cdpkit::quicksort_detail::radix_buckets);
    CHECK(range.depth_hist[1] == range.outcomes[launched]);
    // a scatter step per range grid, and the root's (uniform keys never share a digit)
    CHECK(scatter.outcomes[launched] == range.outcomes[launched] + 1u);
    CHECK(t.trace.sites[cdpkit::sites::qs_radix_copy].outcomes[launched] == 0u);
    CHECK(t.summary.child_launches == range.outcomes[launched] + scatter.outcomes[launched]);
    CHECK(t.summary.fallbacks == 0u);
  }
  SUBCASE("radix skips the digits its keys share: no pass moves keys that share their top 16 bits") {
    // keys below 2^16: the root's first count finds them all in one bucket and counts again at
    // bits 8..15; its 256 buckets (2^14 keys each) are small: no range grid
    std::vector<std::uint32_t> keys = make_sort_input<std::uint32_t>(sort_distribution::uniform, 1u << 22, 67);
    for (auto& k : keys) k &= 0xffffu;
    const auto [t, r] = run(quicksort_variant::radix, keys, host_sorted(keys, cdpkit::less<std::uint32_t>{}));
    CHECK(t.trace.sites[cdpkit::sites::qs_radix_scatter].outcomes[launched] == 2u);  // count again, scatter
    CHECK(t.trace.sites[cdpkit::sites::qs_radix_range].requests == 0u);
    // equal keys: counted once, and nothing moves
    const std::vector<std::uint32_t> same(1u << 20, 0x12345678u);
    const auto [e, er] = run(quicksort_variant::radix, same, same);
    CHECK(e.summary.launch_requests == 0u);
  }
  SUBCASE("two_stream on 2^20+7 uniform keys: partition grids per side and one-block leaves") {
    const auto keys = make_sort_input<std::uint32_t>(sort_distribution::uniform, mid_n, 62);
    const auto [t, r] = run(quicksort_variant::two_stream, keys,
                            host_sorted(keys, cdpkit::less<std::uint32_t>{}));
    CHECK(t.trace.sites[cdpkit::sites::qs_two_stream_side].outcomes[launched] > 0u);
    CHECK(t.trace.sites[cdpkit::sites::qs_two_stream_leaf].outcomes[launched] > 0u);
    CHECK(t.summary.max_depth >= 2u);
    CHECK(r.host_levels == 0u);
  }
  SUBCASE("simple on 1000 keys: one-thread sides, one active lane per probed step") {
    const auto keys = make_sort_input<std::uint32_t>(sort_distribution::uniform, 1000, 63);
    const auto [t, r] = run(quicksort_variant::simple, keys,
                            host_sorted(keys, cdpkit::less<std::uint32_t>{}));
    const auto& side = t.trace.sites[cdpkit::sites::qs_simple_side];
    CHECK(side.outcomes[launched] > 0u);
    CHECK(side.child_threads == side.outcomes[launched]);  // one thread per child grid
    const auto& probe = t.trace.sites[cdpkit::sites::qs_serial_probe];
    CHECK(probe.probe_steps > 0u);
    CHECK(probe.probe_active_lanes == probe.probe_steps);
    CHECK(t.summary.warp_efficiency == doctest::Approx(1.0 / 32));
    CHECK(r.scratch_bytes == 0u);
  }
  SUBCASE("host_driven and the Thrust yardsticks launch nothing from the device") {
    const auto mid = make_sort_input<std::uint32_t>(sort_distribution::uniform, mid_n, 64);
    const auto mid_want = host_sorted(mid, cdpkit::less<std::uint32_t>{});
    for (const auto v : {quicksort_variant::host_driven, quicksort_variant::thrust_radix,
                         quicksort_variant::thrust_merge}) {
      const std::string variant = cdpkit::to_string(v);
      CAPTURE(variant);
      const auto [t, r] = run(v, mid, mid_want);
      CHECK(t.summary.launch_requests == 0u);
      if (v == quicksort_variant::host_driven) CHECK(r.host_levels >= 1u);
      else CHECK(r.host_levels == 0u);
    }
    // more keys, at least as many levels driven from the host
    const auto large = make_sort_input<std::uint32_t>(sort_distribution::uniform, large_n, 65);
    const auto large_want =
        sorted_by(quicksort_variant::thrust_merge, large, cdpkit::less<std::uint32_t>{});
    const auto [t1, r1] = run(quicksort_variant::host_driven, mid, mid_want);
    const auto [t2, r2] = run(quicksort_variant::host_driven, large, large_want);
    CHECK(r2.host_levels >= r1.host_levels);
    CHECK(r2.host_levels >= 2u);
  }
}
