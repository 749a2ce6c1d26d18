#pragma once
// cdpkit/detail/resident_blocks.cuh — how many blocks of a kernel the current device holds at
// once: the size of a grid whose blocks loop over a queue (a larger one only waits).

#include <cdpkit/error.hpp>

#include <cuda_runtime.h>

#include <algorithm>

namespace cdpkit::detail {

/// Blocks of `kernel` (blocks of `threads` threads, static shared memory only) resident at once
/// on the current device (at least one). Throws cdpkit::cuda_error when a query fails.
template <class Kernel>
unsigned int resident_blocks(Kernel kernel, unsigned int threads) {
  int device = 0, sms = 0, per_sm = 0;
  CDPKIT_CUDA_TRY(cudaGetDevice(&device));
  CDPKIT_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CDPKIT_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(threads), 0));
  return static_cast<unsigned int>(std::max(1, sms) * std::max(1, per_sm));
}

}  // namespace cdpkit::detail
