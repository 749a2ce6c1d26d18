// The doctest main of the cdpkit suites: detects the GPU once. GPU cases carry
// `* CDPKIT_GPU_CASE` and are reported as skipped (by doctest, and by CTest through its skip
// expression) on a machine without a GPU.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "gpu.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

namespace cdpkit_test {

bool gpu_available() {
  static const bool available = [] {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) (void)cudaGetLastError();
    return err == cudaSuccess && count > 0;
  }();
  return available;
}

}  // namespace cdpkit_test

int main(int argc, char** argv) {
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    if (std::strstr(argv[i], "list-test-cases") != nullptr || std::strcmp(argv[i], "-ltc") == 0)
      listing = true;
  // CTest registers every case, GPU cases included, so that it can report them as skipped.
  if (listing) context.setOption("no-skip", true);
  if (!listing && !cdpkit_test::gpu_available())
    std::printf("cdpkit tests: no usable CUDA GPU; GPU cases are skipped\n");
  return context.run();
}
