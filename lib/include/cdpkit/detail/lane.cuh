#pragma once
// cdpkit/detail/lane.cuh — the calling thread's lane in its warp, for the device code of every area.

namespace cdpkit::detail {

/// The calling thread's index in its warp (%laneid: 0..31).
__device__ __forceinline__ unsigned int lane_id() {
  unsigned int lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

}  // namespace cdpkit::detail
