// The host timeline through CUPTI's activity API (cdpkit/profiling/host_activity.hpp): a kernel,
// a copy and a memset launched from the host on a GPU, the record cap; without a GPU, the
// collector stands aside and the work still runs.

#include <doctest/doctest.h>

#include "support/gpu.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/profiling/host_activity.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/// Each thread writes its global index.
__global__ void host_activity_stamp_kernel(int* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = static_cast<int>(i);
}

constexpr std::size_t copy_bytes = std::size_t{1} << 20;
constexpr std::size_t memset_bytes = 4096;

}  // namespace

TEST_CASE("without a GPU the host timeline stands aside, says why, and the work still runs once" *
          doctest::skip(cdpkit_test::gpu_available())) {
  cdpkit::profiling::host_activity ha;
  CHECK_FALSE(ha.available());
  CHECK(ha.unavailable_reason().find("no CUDA device to profile") == 0);
  int runs = 0;
  const auto log = ha.record([&] { ++runs; });
  CHECK(runs == 1);
  CHECK(log.kernels.empty());
  CHECK(log.transfers.empty());
  CHECK(log.dropped == 0u);
  ha.start();
  CHECK(ha.stop().kernels.empty());
  CHECK_THROWS_AS(ha.record([] { throw std::runtime_error("work failed"); }), std::runtime_error);
}

TEST_CASE("a host timeline refuses zero records") {
  CHECK_THROWS_AS(cdpkit::profiling::host_activity(0), cdpkit::input_error);
}

TEST_CASE("the host timeline records a kernel launched on a stream with its grid, a 1 MiB host to "
          "device copy and a 4 KiB memset" * CDPKIT_GPU_CASE) {
  const cdpkit_test::cupti_lock lock;
  int* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, copy_bytes));
  const std::vector<unsigned char> host(copy_bytes, 1);
  cudaStream_t stream = nullptr;
  CDPKIT_CUDA_TRY(cudaStreamCreate(&stream));
  cdpkit::profiling::host_activity ha;
  INFO(ha.unavailable_reason());
  REQUIRE(ha.available());
  const auto log = ha.record([&] {
    host_activity_stamp_kernel<<<37, 64, 0, stream>>>(d);
    CDPKIT_CUDA_TRY(cudaGetLastError());
    CDPKIT_CUDA_TRY(cudaStreamSynchronize(stream));
    CDPKIT_CUDA_TRY(cudaMemcpy(d, host.data(), copy_bytes, cudaMemcpyHostToDevice));
    CDPKIT_CUDA_TRY(cudaMemset(d, 0, memset_bytes));
    CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  });
  INFO(ha.unavailable_reason());
  CHECK(ha.available());
  CHECK(log.dropped == 0u);

  const cdpkit::profiling::host_kernel* kernel = nullptr;
  for (const auto& k : log.kernels)
    if (k.blocks == 37u && k.block_threads == 64u) kernel = &k;
  REQUIRE(kernel != nullptr);
  CHECK(kernel->name.find("host_activity_stamp_kernel") != std::string::npos);
  CHECK(kernel->start_ns <= kernel->end_ns);
  CHECK(kernel->start_ns > 0u);

  bool copy = false;
  bool set = false;
  for (const auto& t : log.transfers) {
    CHECK(t.start_ns <= t.end_ns);
    if (t.kind == "HtoD" && t.bytes == copy_bytes) copy = true;
    if (t.kind == "memset" && t.bytes == memset_bytes) set = true;
  }
  CHECK(copy);
  CHECK(set);
  for (std::size_t k = 1; k < log.kernels.size(); ++k)
    CHECK(log.kernels[k - 1].start_ns <= log.kernels[k].start_ns);
  for (std::size_t k = 1; k < log.transfers.size(); ++k)
    CHECK(log.transfers[k - 1].start_ns <= log.transfers[k].start_ns);

  CDPKIT_CUDA_TRY(cudaStreamDestroy(stream));
  CDPKIT_CUDA_TRY(cudaFree(d));
}

TEST_CASE("the host timeline keeps at most max_records records and counts the rest as dropped" *
          CDPKIT_GPU_CASE) {
  const cdpkit_test::cupti_lock lock;
  int* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, sizeof(int) * 64));
  cdpkit::profiling::host_activity ha(3);
  INFO(ha.unavailable_reason());
  REQUIRE(ha.available());
  const auto log = ha.record([&] {
    for (int k = 0; k < 10; ++k) host_activity_stamp_kernel<<<1, 64>>>(d);
    CDPKIT_CUDA_TRY(cudaGetLastError());
    CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  });
  INFO(ha.unavailable_reason());
  CHECK(ha.available());
  CHECK(log.kernels.size() == 3u);
  CHECK(log.dropped >= 7u);
  CDPKIT_CUDA_TRY(cudaFree(d));
}

TEST_CASE("a second host timeline started while another is started stands aside and the first "
          "goes on recording" * CDPKIT_GPU_CASE) {
  const cdpkit_test::cupti_lock lock;
  int* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, sizeof(int) * 64));
  cdpkit::profiling::host_activity first;
  INFO(first.unavailable_reason());
  REQUIRE(first.available());
  first.start();
  cdpkit::profiling::host_activity second;
  int runs = 0;
  const auto second_log = second.record([&] { ++runs; });
  CHECK(runs == 1);
  CHECK_FALSE(second.available());
  CHECK(second.unavailable_reason().find("another host_activity is started") != std::string::npos);
  CHECK(second_log.kernels.empty());
  host_activity_stamp_kernel<<<1, 64>>>(d);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  const auto log = first.stop();
  CHECK(first.available());
  CHECK(log.kernels.size() == 1u);
  CDPKIT_CUDA_TRY(cudaFree(d));
}

TEST_CASE("take() hands over the records so far and keeps recording until stop()" * CDPKIT_GPU_CASE) {
  const cdpkit_test::cupti_lock lock;
  int* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, 256 * sizeof(int)));
  cdpkit::profiling::host_activity ha;
  INFO(ha.unavailable_reason());
  REQUIRE(ha.available());
  CHECK(ha.take().kernels.empty());  // not started: nothing
  ha.start();
  host_activity_stamp_kernel<<<1, 64>>>(d);
  CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  const auto first = ha.take();
  host_activity_stamp_kernel<<<3, 64>>>(d);
  host_activity_stamp_kernel<<<4, 64>>>(d);
  CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  const auto second = ha.take();
  const auto last = ha.stop();
  CHECK(ha.available());
  REQUIRE(first.kernels.size() == 1u);
  CHECK(first.kernels[0].blocks == 1u);
  REQUIRE(second.kernels.size() == 2u);  // the warm-up memset of start() is in neither
  CHECK(second.kernels[0].blocks == 3u);
  CHECK(second.kernels[1].blocks == 4u);
  CHECK(second.kernels[0].start_ns >= first.kernels[0].end_ns);
  CHECK(first.transfers.empty());
  CHECK(last.kernels.empty());
  CHECK(ha.take().kernels.empty());  // stopped
  CDPKIT_CUDA_TRY(cudaFree(d));
}
