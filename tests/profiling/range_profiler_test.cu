// The CUPTI range profiler (cdpkit/profiling/range_profiler.hpp): hardware warp efficiency of
// constructed kernels on a GPU; without one, the profiler stands aside and the work still runs.

#include <doctest/doctest.h>

#include "support/gpu.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/profiling/range_profiler.hpp>

#include <cuda_runtime.h>

#include <string>

namespace {

/// Every lane runs `iters` dependent steps (uniform), or only lanes below `active` do.
__global__ void lanes_kernel(float* out, int iters, int active) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  float x = static_cast<float>(threadIdx.x);
  if (lane < active)
    for (int k = 0; k < iters; ++k) x = x * 1.0001f + 0.5f;
  out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

}  // namespace

TEST_CASE("without a GPU the range profiler stands aside, says why, and the work still runs" *
          doctest::skip(cdpkit_test::gpu_available())) {
  cdpkit::profiling::range_profiler rp;
  CHECK_FALSE(rp.available());
  CHECK(rp.unavailable_reason().find("no CUDA device to profile") == 0);
  CHECK(rp.passes() == 0u);
  int runs = 0;
  rp.measure("work", [&] { ++runs; });
  CHECK(runs == 1);
  CHECK(rp.results().empty());
}

TEST_CASE("a range profiler refuses an empty metric list and zero ranges") {
  CHECK_THROWS_AS(cdpkit::profiling::range_profiler({}, 4), cdpkit::input_error);
  CHECK_THROWS_AS(cdpkit::profiling::range_profiler(cdpkit::profiling::default_range_metrics(), 0),
                  cdpkit::input_error);
}

TEST_CASE("the range profiler measures warp efficiency 1 for a uniform kernel and about 1/2 when "
          "half of each warp works, and counts the CTAs" * CDPKIT_GPU_CASE) {
  const cdpkit_test::cupti_lock lock;
  float* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, sizeof(float) * 64 * 256));
  // the process's first launch also runs 4 CTAs of the runtime's own (measured on the H200)
  lanes_kernel<<<1, 32>>>(d, 1, 32);
  CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  cdpkit::profiling::range_profiler rp;
  INFO(rp.unavailable_reason());
  REQUIRE(rp.available());
  CHECK(rp.passes() == 1u);
  rp.measure("uniform", [&] {
    lanes_kernel<<<64, 256>>>(d, 4096, 32);
    CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  });
  rp.measure("half", [&] {
    lanes_kernel<<<64, 256>>>(d, 4096, 16);
    CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  });
  const auto results = rp.results();
  INFO(rp.unavailable_reason());
  REQUIRE(results.size() == 2u);
  CHECK(results[0].name == "uniform");
  CHECK(results[1].name == "half");
  const auto uniform = cdpkit::profiling::hardware_warp_efficiency(results[0]);
  const auto half = cdpkit::profiling::hardware_warp_efficiency(results[1]);
  REQUIRE(uniform.has_value());
  REQUIRE(half.has_value());
  CHECK(*uniform == doctest::Approx(1.0).epsilon(0.01));
  CHECK(*half == doctest::Approx(0.5).epsilon(0.05));
  CHECK(results[0].value("sm__ctas_launched.sum").value_or(-1) == 64.0);
  CHECK(results[1].value("sm__ctas_launched.sum").value_or(-1) == 64.0);
  CHECK(results[0].value("gpu__time_duration.sum").value_or(-1) > 0);
  CDPKIT_CUDA_TRY(cudaFree(d));
}
