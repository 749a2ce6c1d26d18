// The consumer test's program: for_each_segment with a policy and a device lambda, from an
// installed cdpkit. Exit 0 when the sums match a CPU loop, 1 when not, 77 without a GPU.
// With --parts (no GPU needed): a program that links cdpkit::core alone is told which part a
// font input needs (exit 0 when the error names cdpkit::fonts, 1 otherwise).

#include <cdpkit/bezier.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/loop_to_child.cuh>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int check_parts() {
  if (cdpkit::font_reader_available()) {
    std::puts("consumer: font_reader_available() is true in a program without cdpkit::fonts");
    return 1;
  }
  try {
    (void)cdpkit::load_curves("font:/no/such.ttf");
  } catch (const cdpkit::input_error& e) {
    const bool names_part = std::string(e.what()).find("cdpkit::fonts") != std::string::npos;
    std::printf("consumer: without cdpkit::fonts, a font input is refused: %s\n", e.what());
    return names_part ? 0 : 1;
  }
  std::puts("consumer: a font input was read without cdpkit::fonts");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--parts") == 0) return check_parts();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }
  // Segment i covers [offsets[i], offsets[i + 1]); every 100th one is long enough to launch.
  const std::uint32_t n = 4096;
  std::vector<std::uint32_t> offsets{0};
  for (std::uint32_t i = 0; i < n; ++i) offsets.push_back(offsets.back() + (i % 100 == 0 ? 3000 : i % 5));
  std::uint32_t* d_offsets = nullptr;
  unsigned long long* d_sums = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d_offsets, offsets.size() * sizeof(std::uint32_t)));
  CDPKIT_CUDA_TRY(cudaMalloc(&d_sums, n * sizeof(unsigned long long)));
  CDPKIT_CUDA_TRY(cudaMemset(d_sums, 0, n * sizeof(unsigned long long)));
  CDPKIT_CUDA_TRY(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(std::uint32_t),
                             cudaMemcpyHostToDevice));

  cdpkit::for_each_segment(
      cdpkit::segments_view{d_offsets, d_offsets + 1, n}, [] __device__(std::uint32_t) {},
      [=] __device__(std::uint32_t i, std::uint32_t j) { atomicAdd(&d_sums[i], j + 1ull); },
      cdpkit::loop_policy::warp_aggregated());

  std::vector<unsigned long long> sums(n);
  CDPKIT_CUDA_TRY(cudaMemcpy(sums.data(), d_sums, n * sizeof(unsigned long long),
                             cudaMemcpyDeviceToHost));
  std::uint32_t wrong = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    unsigned long long expected = 0;
    for (std::uint32_t j = offsets[i]; j < offsets[i + 1]; ++j) expected += j + 1ull;
    wrong += sums[i] == expected ? 0 : 1;
  }
  CDPKIT_CUDA_TRY(cudaFree(d_sums));
  CDPKIT_CUDA_TRY(cudaFree(d_offsets));
  std::printf("consumer: for_each_segment(warp_aggregated): %u of %u segment sums wrong\n", wrong, n);
  return wrong == 0 ? 0 : 1;
}
