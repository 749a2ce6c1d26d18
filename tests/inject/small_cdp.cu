// small_cdp — a small CUDA Dynamic Parallelism program that knows nothing of cdpkit (the CUDA
// runtime and cudadevrt only), profiled through libcdpkit_inject.so by check_inject.sh.
//
//   small_cdp [plain_launches [reset|segv|term]]
//     (default 1; "reset": cudaDeviceReset before exit; "segv": a null write after the checks, the
//     way a program crashes; "term": SIGTERM raised after the checks, the program then running on
//     until it ends by it)
//
// cdp_parent<<<2, 32>>>: threads 0..7 of each block launch cdp_child<<<4, 32>>> (16 child grids,
// 64 child blocks); plain_kernel<<<10, 64>>> (launched plain_launches times). Each kernel writes
// what the program then checks. Exit codes: 0 success, 1 wrong output or a CUDA error, 77 no
// usable CUDA device (the line "small_cdp: no usable CUDA device" says so).

#include <cuda_runtime.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int parent_blocks = 2;
constexpr int parent_threads = 32;
constexpr int launchers_per_block = 8;
constexpr int child_blocks = 4;
constexpr int child_threads = 32;
constexpr int child_grids = parent_blocks * launchers_per_block;
constexpr int child_items = child_grids * child_blocks * child_threads;
constexpr int plain_blocks = 10;
constexpr int plain_threads = 64;
constexpr int plain_items = plain_blocks * plain_threads;

}  // namespace

__global__ void cdp_child(int* out, int grid) {
  out[(grid * child_blocks + blockIdx.x) * child_threads + threadIdx.x] = grid + 1;
}

__global__ void cdp_parent(int* out) {
  if (threadIdx.x < launchers_per_block) {
    const int grid = blockIdx.x * launchers_per_block + threadIdx.x;
    cdp_child<<<child_blocks, child_threads>>>(out, grid);
  }
}

__global__ void plain_kernel(int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 2 * i + 1;
}

static int cuda_failed(const char* what, cudaError_t e) {
  std::fprintf(stderr, "small_cdp: %s: %s\n", what, cudaGetErrorString(e));
  return 1;
}

int main(int argc, char** argv) {
  const int plain_launches = argc > 1 ? std::atoi(argv[1]) : 1;
  const char* end_mode = argc > 2 ? argv[2] : "";
  const bool reset = std::strcmp(end_mode, "reset") == 0;
  int devices = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    std::printf("small_cdp: no usable CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return 77;
  }
  int* child_out = nullptr;
  int* plain_out = nullptr;
  if (const cudaError_t e = cudaMalloc(&child_out, child_items * sizeof(int)); e != cudaSuccess)
    return cuda_failed("cudaMalloc", e);
  if (const cudaError_t e = cudaMalloc(&plain_out, plain_items * sizeof(int)); e != cudaSuccess)
    return cuda_failed("cudaMalloc", e);
  if (const cudaError_t e = cudaMemset(child_out, 0, child_items * sizeof(int)); e != cudaSuccess)
    return cuda_failed("cudaMemset", e);

  cdp_parent<<<parent_blocks, parent_threads>>>(child_out);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_failed("cdp_parent launch", e);
  for (int k = 0; k < plain_launches; ++k) {
    plain_kernel<<<plain_blocks, plain_threads>>>(plain_out);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_failed("plain_kernel launch", e);
  }
  if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return cuda_failed("cudaDeviceSynchronize", e);

  std::vector<int> child(child_items), plain(plain_items);
  if (const cudaError_t e = cudaMemcpy(child.data(), child_out, child_items * sizeof(int), cudaMemcpyDeviceToHost);
      e != cudaSuccess)
    return cuda_failed("cudaMemcpy", e);
  if (const cudaError_t e = cudaMemcpy(plain.data(), plain_out, plain_items * sizeof(int), cudaMemcpyDeviceToHost);
      e != cudaSuccess)
    return cuda_failed("cudaMemcpy", e);
  int wrong = 0;
  for (int i = 0; i < child_items; ++i) wrong += child[i] != i / (child_blocks * child_threads) + 1;
  for (int i = 0; i < plain_items; ++i) wrong += plain[i] != 2 * i + 1;
  cudaFree(child_out);
  cudaFree(plain_out);
  if (wrong != 0) {
    std::fprintf(stderr, "small_cdp: %d wrong values\n", wrong);
    return 1;
  }
  if (reset) {
    if (const cudaError_t e = cudaDeviceReset(); e != cudaSuccess) return cuda_failed("cudaDeviceReset", e);
  }
  std::printf("small_cdp: ok (%d child grids of %d blocks, %d plain launches of %d blocks)\n", child_grids,
              child_blocks, plain_launches, plain_blocks);
  std::fflush(stdout);
  if (std::strcmp(end_mode, "segv") == 0) {
    volatile std::uintptr_t address = 0;
    *reinterpret_cast<volatile int*>(address) = 1;
  } else if (std::strcmp(end_mode, "term") == 0) {
    std::raise(SIGTERM);
    std::this_thread::sleep_for(std::chrono::seconds(60));  // ended by SIGTERM before this is over
    std::fprintf(stderr, "small_cdp: still running 60 s after SIGTERM\n");
    return 1;
  }
  return 0;
}
