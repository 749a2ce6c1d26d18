#pragma once
// The constructed recursion the launch layer's trace and fallback cases run: `levels` deep,
// `fanout` children per grid, each grid counting its run at its depth and each child that is not
// launched counted as done inline (run_recursion, traced).
//
// In an anonymous namespace: each test translation unit gets its own copy of the kernel (the tests
// are compiled with relocatable device code, where one kernel defined in two translation units
// would clash at the device link).

#include "test_sites.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/trace_session.hpp>

#include <vector>

namespace {

/// A recursion `levels` deep with `fanout` children per grid; every grid counts its run at its
/// depth, and the work of a child that is not launched is counted as done inline.
struct recurse_body {
  int levels;
  int fanout;
  cdpkit::stream_kind stream;
  unsigned int* d_runs;    // grids that ran, by depth
  unsigned int* d_inline;  // children done inline, by the depth they would have had
  __device__ void operator()(const cdpkit::launch_context& self) const {
    if (threadIdx.x != 0) return;
    atomicAdd(&d_runs[self.depth], 1u);
    if (self.depth >= levels) return;
    for (int f = 0; f < fanout; ++f) {
      if (!cdpkit::launch_child(self, test_site, dim3(1), dim3(32), stream, *this)) {
        atomicAdd(&d_inline[self.depth + 1], 1u);
      }
    }
  }
};

__global__ void recurse_root_kernel(cdpkit::launch_context ctx, recurse_body body) { body(ctx); }

struct recursion_result {
  std::vector<unsigned int> runs, inlined;
  cdpkit::trace_snapshot trace;
};

recursion_result run_recursion(cdpkit::launch_runtime& rt, int levels, int fanout,
                               cdpkit::stream_kind stream) {
  constexpr int slots = 16;
  unsigned int* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, 2 * slots * sizeof(unsigned int)));
  CDPKIT_CUDA_TRY(cudaMemset(d, 0, 2 * slots * sizeof(unsigned int)));
  cdpkit::profiling::trace_session session(rt);
  recurse_root_kernel<<<1, 32>>>(rt.root_context(), recurse_body{levels, fanout, stream, d, d + slots});
  CDPKIT_CUDA_TRY(cudaGetLastError());
  CDPKIT_CHECK_DEVICE_ERRORS(rt);
  recursion_result r{std::vector<unsigned int>(slots), std::vector<unsigned int>(slots),
                     session.collect()};
  CDPKIT_CUDA_TRY(cudaMemcpy(r.runs.data(), d, slots * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaMemcpy(r.inlined.data(), d + slots, slots * sizeof(unsigned int),
                             cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaFree(d));
  return r;
}

}  // namespace
