// sanitizer_children_target — the CDP program the Compute Sanitizer probe instruments
// (sanitizer_children_tool.cpp, probes/README.md). It knows nothing of cdpkit or of the probe:
// the CUDA runtime and cudadevrt only. It says what it launched, so that the tool's counts can be
// checked against it, and times two grids of tiny blocks (launched by the host, and by the device),
// so that the cost of the instrumentation per block is the difference of two runs, with the tool
// and without it.
//
//   sanitizer_children_target [tiny_blocks]      (default 1048576; prints lines "target: ...")
//
// Launches, in order (one stream; each waits for the one before):
//   cdp_parent<<<2, 32>>>: threads 0..7 of each block launch cdp_child<<<4, 32>>> (16 grids);
//   block 0 of each cdp_child launches cdp_grandchild<<<2, 32>>> from its thread 0 (16 grids).
//   tiny<<<tiny_blocks, 32>>> from the host, 5 times, timed (median);
//   tiny_parent<<<1, 32>>>: thread 0 launches tiny<<<tiny_blocks, 32>>>, 5 times, timed (median);
//   last<<<1, 32>>>: a host-launched grid after all the others.
// Exit codes: 0 ok, 1 wrong results or a CUDA error, 77 no usable CUDA device.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int parent_blocks = 2, parent_threads = 32, launchers_per_block = 8;
constexpr int child_blocks = 4, child_threads = 32;
constexpr int grandchild_blocks = 2, grandchild_threads = 32;
constexpr int child_grids = parent_blocks * launchers_per_block;
constexpr int reps = 5;

}  // namespace

__global__ void cdp_grandchild(int* out, int grid) {
  if (threadIdx.x == 0) atomicAdd(&out[grid], 100);
}

__global__ void cdp_child(int* out, int grid) {
  if (threadIdx.x == 0) atomicAdd(&out[grid], 1);
  if (blockIdx.x == 0 && threadIdx.x == 0) cdp_grandchild<<<grandchild_blocks, grandchild_threads>>>(out, grid);
}

__global__ void cdp_parent(int* out) {
  if (threadIdx.x < launchers_per_block)
    cdp_child<<<child_blocks, child_threads>>>(out, blockIdx.x * launchers_per_block + threadIdx.x);
}

__global__ void tiny(unsigned* counts) {
  if (threadIdx.x == 0) counts[blockIdx.x] += 1;
}

__global__ void tiny_parent(unsigned* counts, unsigned blocks) {
  if (threadIdx.x == 0) tiny<<<blocks, 32>>>(counts);
}

__global__ void last(int* out) {
  if (threadIdx.x == 0) out[child_grids] = 1;
}

namespace {

int failed(const char* what, cudaError_t e) {
  std::fprintf(stderr, "sanitizer_children_target: %s: %s\n", what, cudaGetErrorString(e));
  return 1;
}

#define CHECK_CUDA(call)                                   \
  do {                                                     \
    if (const cudaError_t e_ = (call); e_ != cudaSuccess) { \
      return failed(#call, e_);                            \
    }                                                      \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  const unsigned long tiny_blocks = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1048576ul;
  if (tiny_blocks == 0 || tiny_blocks > (1ul << 30)) {
    std::fprintf(stderr, "sanitizer_children_target: tiny_blocks must be in [1, 2^30]\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("sanitizer_children_target: no usable CUDA device\n");
    return 77;
  }
  int* out = nullptr;
  unsigned* counts = nullptr;
  CHECK_CUDA(cudaMalloc(&out, (child_grids + 1) * sizeof(int)));
  CHECK_CUDA(cudaMemset(out, 0, (child_grids + 1) * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&counts, tiny_blocks * sizeof(unsigned)));
  CHECK_CUDA(cudaMemset(counts, 0, tiny_blocks * sizeof(unsigned)));

  cdp_parent<<<parent_blocks, parent_threads>>>(out);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  const auto median_ms = [&](auto launch, float& ms) -> int {
    std::vector<float> t;
    for (int r = 0; r < reps; ++r) {
      CHECK_CUDA(cudaEventRecord(start));
      launch();
      CHECK_CUDA(cudaGetLastError());
      CHECK_CUDA(cudaEventRecord(stop));
      CHECK_CUDA(cudaEventSynchronize(stop));
      float m = 0;
      CHECK_CUDA(cudaEventElapsedTime(&m, start, stop));
      t.push_back(m);
    }
    std::sort(t.begin(), t.end());
    ms = t[t.size() / 2];
    return 0;
  };
  float host_ms = 0, device_ms = 0;
  const auto grid = static_cast<unsigned>(tiny_blocks);
  if (median_ms([&] { tiny<<<grid, 32>>>(counts); }, host_ms) != 0) return 1;
  if (median_ms([&] { tiny_parent<<<1, 32>>>(counts, grid); }, device_ms) != 0) return 1;

  last<<<1, 32>>>(out);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  std::vector<int> h(child_grids + 1);
  std::vector<unsigned> c(tiny_blocks);
  CHECK_CUDA(cudaMemcpy(h.data(), out, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(c.data(), counts, c.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int g = 0; g < child_grids; ++g) wrong += h[g] != child_blocks + 100 * grandchild_blocks;
  wrong += h[child_grids] != 1;
  for (const unsigned v : c) wrong += v != 2u * reps;
  if (wrong != 0) {
    std::fprintf(stderr, "sanitizer_children_target: %d wrong values\n", wrong);
    return 1;
  }
  std::printf("target: launched cdp_parent 1 grid x %d blocks (host), cdp_child %d grids x %d blocks (device), "
              "cdp_grandchild %d grids x %d blocks (device), tiny %d + %d grids x %lu blocks (host + device), "
              "last 1 grid x 1 block (host)\n",
              parent_blocks, child_grids, child_blocks, child_grids, grandchild_blocks, reps, reps, tiny_blocks);
  std::printf("target: tiny from the host %.3f ms, from the device %.3f ms (medians of %d; %lu blocks of 32 threads)\n",
              host_ms, device_ms, reps, tiny_blocks);
  return 0;
}
