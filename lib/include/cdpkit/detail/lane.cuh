#pragma once
// cdpkit/detail/lane.cuh — the calling thread's lane in its warp and its SM, for the device code of every area.

namespace cdpkit::detail {

/// The calling thread's index in its warp (%laneid: 0..31).
__device__ __forceinline__ unsigned int lane_id() {
  unsigned int lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

/// The SM the calling thread runs on (%smid), e.g. to stripe counters by SM.
__device__ __forceinline__ unsigned int sm_id() {
  unsigned int sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  return sm;
}

}  // namespace cdpkit::detail
