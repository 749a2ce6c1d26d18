// Divergence probes: a loop counted per iteration, at its start, with at most two trip counts per
// warp, or in single steps gives the same counts; exact efficiencies of constructed divergence
// patterns; and the trip counts of strided loops and blocked walks that the probes are given.

#include <doctest/doctest.h>

#include "support/gpu.hpp"
#include "test_sites.hpp"

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch.hpp>
#include <cdpkit/probe.cuh>
#include <cdpkit/profiling/trace_session.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {
/// How probe_kernel counts its loop.
enum class probe_mode { per_iteration, at_entry, at_entry_partial, at_entry_whole_warp, at_entry_two_valued, single_step };

__device__ unsigned int probe_scratch;

/// Thread t loops lengths[t] times with a probe step per iteration (per_iteration), or counts
/// its lengths[t] steps at the loop's start (at_entry; at_entry_two_valued: with
/// steps_two_valued); single_step: threads with lengths[t] > 0
/// make one single-step probe. Not unrolled: the probe counts the lanes active where it stands,
/// so an unrolled loop would group the steps.
template <probe_mode Mode>
__global__ void probe_kernel(cdpkit::launch_context ctx, const std::uint32_t* d_len) {
  const std::uint32_t n = d_len[blockIdx.x * blockDim.x + threadIdx.x];
  if constexpr (Mode == probe_mode::single_step) {
    if (n > 0) cdpkit::probe_single_step(ctx, probe_site);
  } else if constexpr (Mode == probe_mode::at_entry_whole_warp) {
    // the probe's lanes given by the program (every lane of the warp), after a divergent branch
    if (n % 3 == 0) atomicAdd(&probe_scratch, n);
    cdpkit::warp_probe probe(ctx, probe_site, 0xffffffffu);
    probe.steps(n);
    probe.commit();
  } else {
    cdpkit::warp_probe probe(ctx, probe_site);
    if constexpr (Mode == probe_mode::at_entry) {
      probe.steps(n);
    } else if constexpr (Mode == probe_mode::at_entry_two_valued) {
      probe.steps_two_valued(n);
    } else if constexpr (Mode == probe_mode::at_entry_partial) {
      if (n != 0) probe.steps(n);  // lanes without steps stay out: a partial mask
    } else {
#pragma unroll 1
      for (std::uint32_t k = 0; k < n; ++k) probe.step();
    }
    probe.commit();
  }
}

/// probe_kernel's lengths on the device.
cdpkit::detail::unique_device_ptr<std::uint32_t[]> device_lengths(const std::vector<std::uint32_t>& lengths) {
  cdpkit::detail::unique_device_ptr<std::uint32_t[]> d;
  CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(d), lengths.size() * sizeof(std::uint32_t)));
  CDPKIT_CUDA_TRY(cudaMemcpy(d.get(), lengths.data(), lengths.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  return d;
}

cdpkit::site_counters run_probe(const std::vector<std::uint32_t>& lengths,
                                probe_mode mode = probe_mode::per_iteration) {
  cdpkit::launch_runtime rt;
  cdpkit::profiling::trace_session session(rt);
  const auto owned = device_lengths(lengths);
  const std::uint32_t* d = owned.get();
  const auto blocks = static_cast<unsigned int>(lengths.size() / 128);
  switch (mode) {
    case probe_mode::per_iteration: probe_kernel<probe_mode::per_iteration><<<blocks, 128>>>(rt.root_context(), d); break;
    case probe_mode::at_entry: probe_kernel<probe_mode::at_entry><<<blocks, 128>>>(rt.root_context(), d); break;
    case probe_mode::at_entry_partial:
      probe_kernel<probe_mode::at_entry_partial><<<blocks, 128>>>(rt.root_context(), d);
      break;
    case probe_mode::at_entry_whole_warp:
      probe_kernel<probe_mode::at_entry_whole_warp><<<blocks, 128>>>(rt.root_context(), d);
      break;
    case probe_mode::at_entry_two_valued:
      probe_kernel<probe_mode::at_entry_two_valued><<<blocks, 128>>>(rt.root_context(), d);
      break;
    case probe_mode::single_step: probe_kernel<probe_mode::single_step><<<blocks, 128>>>(rt.root_context(), d); break;
  }
  CDPKIT_CHECK_DEVICE_ERRORS(rt);
  return session.collect().sites[probe_site];
}

/// The probed warps, steps, active lanes and lanes histogram of two counters are the same.
void check_same_step_counts(const cdpkit::site_counters& a, const cdpkit::site_counters& b) {
  CHECK(a.probe_warps == b.probe_warps);
  CHECK(a.probe_steps == b.probe_steps);
  CHECK(a.probe_active_lanes == b.probe_active_lanes);
  for (int k = 1; k < cdpkit::trace_limits::lane_buckets; ++k) {
    CAPTURE(k);
    CHECK(a.lanes_hist[k] == b.lanes_hist[k]);
  }
}

/// The probe counters of two runs are the same.
void check_same_probe_counts(const cdpkit::site_counters& a, const cdpkit::site_counters& b) {
  check_same_step_counts(a, b);
  for (int k = 0; k < cdpkit::trace_limits::efficiency_buckets; ++k) {
    CAPTURE(k);
    CHECK(a.efficiency_hist[k] == b.efficiency_hist[k]);
  }
  CHECK(a.efficiency_sum == doctest::Approx(b.efficiency_sum));
}
}  // namespace

TEST_CASE("a loop counted at its start (warp_probe::steps) has the counts of one probe step per "
          "iteration" * CDPKIT_GPU_CASE) {
  std::vector<std::uint32_t> lengths(7168);
  std::uint64_t x = 12345;
  for (std::size_t t = 0; t < lengths.size(); ++t) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const auto r = static_cast<std::uint32_t>(x >> 33);
    const auto warp = static_cast<std::uint32_t>(t / 32), lane = static_cast<std::uint32_t>(t % 32);
    // zeros, ties, a staircase and long tails; then the shapes steps() counts without ranking the
    // lanes: one value per warp (0 included), and two (a strided loop's n + 1 and n; 0 and n);
    // last, large counts whose lanes differ in many bits (from bit 0 to bit 17)
    lengths[t] = t < 1024   ? r % 4
                 : t < 2048 ? lane
                 : t < 4096 ? r % 300
                 : t < 5120 ? warp % 7 * 13
                 : t < 6144 ? (warp % 2 == 0 ? warp % 5 + (lane < warp % 32 ? 1u : 0u)
                                             : (lane % 3 == 0 ? warp % 9 : 0u))
                            : (lane % 4 == 0 ? 65536u : 0u) + r % 70000;
  }
  const auto per_iteration = run_probe(lengths, probe_mode::per_iteration);
  const auto at_entry = run_probe(lengths, probe_mode::at_entry);
  CHECK(per_iteration.probe_steps > 0);
  check_same_probe_counts(per_iteration, at_entry);
  // lanes with no steps not calling it (a partial mask) count the same
  check_same_probe_counts(per_iteration, run_probe(lengths, probe_mode::at_entry_partial));
  // a probe built for the whole warp after divergent code (lanes given, not read) counts the same
  check_same_probe_counts(per_iteration, run_probe(lengths, probe_mode::at_entry_whole_warp));
}

TEST_CASE("a loop counted at its start counts trip counts up to 2^32 - 1 exactly, the warp's sum past 2^32" *
          CDPKIT_GPU_CASE) {
  // counts whose lanes differ in every bit, near 2^32 and 2^31, at 16-bit boundaries, ties and
  // zeros (the lanes with 0 stay out of at_entry_partial's probe: a partial mask); per warp, the
  // expected counts from the lanes sorted on the host (a loop per step would take hours)
  const std::uint32_t pool[] = {0xffffffffu, 0xfffffffeu, 0x80000000u, 0x80000001u, 0x7fffffffu,
                                0xffffu,     0x10000u,    0x1ffffu,    0u,          1u};
  std::vector<std::uint32_t> lengths(1024);
  std::uint64_t x = 99;
  for (auto& n : lengths) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    n = (x >> 60) < 10 ? pool[x >> 60] : static_cast<std::uint32_t>(x >> 20);
  }
  cdpkit::site_counters expected{};
  for (std::size_t w = 0; w < lengths.size() / 32; ++w) {
    std::vector<std::uint64_t> lanes(lengths.begin() + 32 * w, lengths.begin() + 32 * (w + 1));
    std::sort(lanes.rbegin(), lanes.rend());
    lanes.push_back(0);
    for (std::size_t k = 0; k < 32; ++k) expected.lanes_hist[k + 1] += lanes[k] - lanes[k + 1];
    expected.probe_steps += lanes[0];
    for (std::size_t k = 0; k < 32; ++k) expected.probe_active_lanes += lanes[k];
    expected.probe_warps += lanes[0] > 0 ? 1u : 0u;
  }
  CHECK(expected.probe_active_lanes > (1ull << 36));  // warps whose sums pass 2^32
  check_same_step_counts(run_probe(lengths, probe_mode::at_entry), expected);
  check_same_step_counts(run_probe(lengths, probe_mode::at_entry_partial), expected);
}

TEST_CASE("a loop of at most two trip counts per warp (warp_probe::steps_two_valued) has the counts of "
          "one probe step per iteration" * CDPKIT_GPU_CASE) {
  // strided loops over consecutive positions (stride 128 and 32), one value per warp, 0 and n
  std::vector<std::uint32_t> lengths(4096);
  for (std::size_t t = 0; t < lengths.size(); ++t) {
    const auto warp = static_cast<std::uint32_t>(t / 32), lane = static_cast<std::uint32_t>(t % 32);
    lengths[t] = t < 1024   ? static_cast<std::uint32_t>(cdpkit::strided_trip_count(t % 128, 1000 + warp, 128))
                 : t < 2048 ? static_cast<std::uint32_t>(cdpkit::strided_trip_count(lane, warp * 7, 32))
                 : t < 3072 ? warp % 11
                            : (lane < warp % 32 ? warp % 5 : 0u);
  }
  const auto per_iteration = run_probe(lengths, probe_mode::per_iteration);
  const auto two_valued = run_probe(lengths, probe_mode::at_entry_two_valued);
  CHECK(per_iteration.probe_steps > 0);
  check_same_probe_counts(per_iteration, two_valued);
}

TEST_CASE("steps_two_valued over three trip counts in a warp counts nothing and raises a device error "
          "that the host throws" * CDPKIT_GPU_CASE) {
  std::vector<std::uint32_t> lengths(128);
  for (std::size_t t = 0; t < lengths.size(); ++t) lengths[t] = static_cast<std::uint32_t>(t % 3);  // 0, 1, 2
  cdpkit::launch_runtime rt;
  cdpkit::profiling::trace_session session(rt);
  const auto d = device_lengths(lengths);
  probe_kernel<probe_mode::at_entry_two_valued><<<1, 128>>>(rt.root_context(), d.get());
  CDPKIT_CUDA_TRY(cudaGetLastError());
  try {
    CDPKIT_CHECK_DEVICE_ERRORS(rt);
    FAIL("no device error was raised");
  } catch (const cdpkit::cuda_error& e) {
    CHECK(std::string(e.what()).find("probe_values") != std::string::npos);
  }
  CHECK_NOTHROW(CDPKIT_CHECK_DEVICE_ERRORS(rt));  // the flag was cleared
  const auto c = session.collect().sites[probe_site];
  CHECK(c.probe_warps == 0u);
  CHECK(c.probe_steps == 0u);
}

TEST_CASE("single-step probes count each warp once with its active lanes" * CDPKIT_GPU_CASE) {
  // 0 or 1 step per thread: one step per iteration and a single-step probe must agree
  std::vector<std::uint32_t> lengths(8192);
  std::uint64_t x = 777;
  for (std::size_t t = 0; t < lengths.size(); ++t) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    lengths[t] = t < 4096 ? 1u : static_cast<std::uint32_t>((x >> 40) % 3 != 0);
  }
  const auto per_iteration = run_probe(lengths, probe_mode::per_iteration);
  const auto single = run_probe(lengths, probe_mode::single_step);
  CHECK(single.lanes_hist[32] >= 128u);  // the first 4096 threads: 128 full warps
  check_same_probe_counts(per_iteration, single);
}

TEST_CASE("a strided loop's trip count is the number of its positions below the end") {
  const auto brute = [](unsigned long long first, unsigned long long end, unsigned long long stride) {
    unsigned long long n = 0;
    for (unsigned long long k = first; k < end; k += stride) ++n;
    return n;
  };
  for (const unsigned long long stride : {1ull, 32ull, 256ull})
    for (unsigned long long first = 0; first < 300; first += 7)
      for (unsigned long long end = 0; end < 2100; end += 13) {
        CAPTURE(stride);
        CAPTURE(first);
        CAPTURE(end);
        REQUIRE(cdpkit::strided_trip_count(first, end, stride) == brute(first, end, stride));
      }
  CHECK(cdpkit::strided_trip_count(5, 0xffffffffffffffffull, 1ull << 62) == 4u);
}

TEST_CASE("a blocked walk's trip count is the number of the thread's positions below the end") {
  // rounds of threads * items positions, thread t holding the `items` from t * items of each
  const auto brute = [](unsigned long long t, unsigned long long total, unsigned long long threads,
                        unsigned long long items) {
    unsigned long long n = 0;
    for (unsigned long long base = 0; base < total; base += threads * items)
      for (unsigned long long r = 0; r < items; ++r) n += base + t * items + r < total;
    return n;
  };
  for (const unsigned long long threads : {32ull, 256ull})
    for (const unsigned long long items : {1ull, 4ull, 8ull})
      for (unsigned long long t = 0; t < threads; t += 5)
        for (unsigned long long total = 0; total < 5000; total += 37) {
          CAPTURE(threads);
          CAPTURE(items);
          CAPTURE(t);
          CAPTURE(total);
          REQUIRE(cdpkit::blocked_trip_count(t, total, threads, items) == brute(t, total, threads, items));
        }
  // every position is some thread's: the counts add up to the total
  unsigned long long sum = 0;
  for (unsigned long long t = 0; t < 256; ++t) sum += cdpkit::blocked_trip_count(t, 123457, 256, 4);
  CHECK(sum == 123457u);
}

TEST_CASE("probes measure efficiency 1 when every lane has the same trip count" * CDPKIT_GPU_CASE) {
  const std::vector<std::uint32_t> lengths(1024, 17);  // 32 warps
  const auto c = run_probe(lengths);
  CHECK(c.probe_warps == 32u);
  CHECK(c.probe_steps == 32u * 17u);
  CHECK(c.lanes_hist[32] == 32u * 17u);
  CHECK(c.efficiency_hist[31] == 32u);
  CHECK(c.efficiency_sum / c.probe_warps == doctest::Approx(1.0));
}

TEST_CASE("probes measure the exact efficiency of a staircase divergence pattern" *
          CDPKIT_GPU_CASE) {
  // Lane l loops l + 1 times: a warp makes 32 steps with 32, 31, ..., 1 active lanes, so its
  // efficiency is (1 + ... + 32) / (32 * 32) = 528 / 1024.
  std::vector<std::uint32_t> lengths(256);
  for (std::size_t t = 0; t < lengths.size(); ++t) lengths[t] = static_cast<std::uint32_t>(t % 32 + 1);
  const auto c = run_probe(lengths);
  const unsigned warps = 8;
  CHECK(c.probe_warps == warps);
  CHECK(c.probe_steps == warps * 32u);
  CHECK(c.probe_active_lanes == warps * 528u);
  for (int a = 1; a <= 32; ++a) {
    CAPTURE(a);
    CHECK(c.lanes_hist[a] == warps);
  }
  CHECK(c.efficiency_sum / c.probe_warps == doctest::Approx(528.0 / 1024.0));
  CHECK(c.efficiency_hist[16] == warps);  // 0.515625 is in [16/32, 17/32)
}
