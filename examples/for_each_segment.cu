// Example: cdpkit::for_each_segment with your own device lambdas (cdpkit/loop_to_child.cuh).
//
// The loop-to-child pattern (PMPP Fig. 21.4 -> 21.5): for every parent i, run pre_op(i), then
// item_op(i, j) for every j of its segment [begin[i], end[i]). A policy decides how the items
// are mapped to threads: looped over by the parent thread, or given to child grids launched
// from the device when a segment (or a warp's segments together) is long enough.
//
// Here: 20,000 segments over one array of values, mostly short, every 1000th one long. pre_op
// seeds each segment's sum, item_op adds the segment's values to it; the result must equal a
// plain CPU loop, whatever the policy.
//
// Build: relocatable device code and --extended-lambda (cdpkit_enable_cdp(<target>) in CMake).

#include <cdpkit/error.hpp>
#include <cdpkit/loop_to_child.cuh>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }

  // 1. The segments, as CSR offsets: segment i is [offsets[i], offsets[i + 1]).
  const std::uint32_t num_segments = 20000;
  std::vector<std::uint32_t> offsets{0};
  for (std::uint32_t i = 0; i < num_segments; ++i)
    offsets.push_back(offsets.back() + (i % 1000 == 0 ? 5000u : i % 7u));
  const std::uint32_t num_items = offsets.back();
  std::vector<std::uint32_t> values(num_items);
  for (std::uint32_t j = 0; j < num_items; ++j) values[j] = j % 13u;

  // 2. Device copies. The begin of segment i is offsets[i] and its end offsets[i + 1].
  std::uint32_t *d_offsets = nullptr, *d_values = nullptr;
  unsigned long long* d_sums = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d_offsets, offsets.size() * sizeof(std::uint32_t)));
  CDPKIT_CUDA_TRY(cudaMalloc(&d_values, values.size() * sizeof(std::uint32_t)));
  CDPKIT_CUDA_TRY(cudaMalloc(&d_sums, num_segments * sizeof(unsigned long long)));
  CDPKIT_CUDA_TRY(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(std::uint32_t),
                             cudaMemcpyHostToDevice));
  CDPKIT_CUDA_TRY(cudaMemcpy(d_values, values.data(), values.size() * sizeof(std::uint32_t),
                             cudaMemcpyHostToDevice));
  const cdpkit::segments_view segments{d_offsets, d_offsets + 1, num_segments};

  // 3. The expected sums, by a CPU loop: i + the values of segment i.
  std::vector<unsigned long long> expected(num_segments);
  for (std::uint32_t i = 0; i < num_segments; ++i) {
    expected[i] = i;
    for (std::uint32_t j = offsets[i]; j < offsets[i + 1]; ++j) expected[i] += values[j];
  }

  // 4. The same operators under several policies. pre_op(i) runs before every item_op(i, j) of
  //    its segment, with its writes visible; the items of one segment may run in any order and
  //    in parallel (in child grids), hence the atomic add.
  int failures = 0;
  for (const auto& policy : {cdpkit::loop_policy::serial(), cdpkit::loop_policy::thresholded(),
                             cdpkit::loop_policy::warp_aggregated(),
                             cdpkit::loop_policy::flat_balanced()}) {
    // The result says what the run used: the launch threshold T, given or picked on the device.
    const cdpkit::segment_result used = cdpkit::for_each_segment(
        segments,
        [=] __device__(std::uint32_t i) { d_sums[i] = i; },
        [=] __device__(std::uint32_t i, std::uint32_t j) { atomicAdd(&d_sums[i], d_values[j]); },
        policy);  // synchronizes; throws cdpkit::cuda_error on a CUDA or device-side error
    std::vector<unsigned long long> sums(num_segments);
    CDPKIT_CUDA_TRY(cudaMemcpy(sums.data(), d_sums, num_segments * sizeof(unsigned long long),
                               cudaMemcpyDeviceToHost));
    const bool ok = sums == expected;
    std::printf("%-18s T = %-10s %s\n", cdpkit::to_string(policy.kind),
                used.threshold ? std::to_string(*used.threshold).c_str() : "-",
                ok ? "matches the CPU loop" : "WRONG");
    failures += ok ? 0 : 1;
  }

  CDPKIT_CUDA_TRY(cudaFree(d_sums));
  CDPKIT_CUDA_TRY(cudaFree(d_values));
  CDPKIT_CUDA_TRY(cudaFree(d_offsets));
  return failures == 0 ? 0 : 1;
}
