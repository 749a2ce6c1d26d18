#pragma once
// cdpkit/loop_to_child/frontier.cuh — frontiers for level-by-level algorithms over CSR rows (a
// BFS frontier's neighbour lists, a tree level's children lists): the frontier as segments, and
// the append of the next frontier.

#include <cdpkit/detail/lane.cuh>

#include <cstdint>

namespace cdpkit::loop_to_child {

/// Segment i: the CSR row of ids[i], [offsets[ids[i]], offsets[ids[i] + 1]).
struct id_list_segments {
  const std::uint32_t* offsets;
  const std::uint32_t* ids;
  std::uint32_t num_segments;
  __device__ std::uint32_t begin(std::uint32_t i) const { return offsets[ids[i]]; }
  __device__ std::uint32_t end(std::uint32_t i) const { return offsets[ids[i] + 1]; }
};

/// Append `value` to out[0, *count): the calling thread's place is reserved together with the
/// other active lanes of its warp, one atomicAdd per warp. Order among appends is not kept.
__device__ __forceinline__ void append_to_frontier(std::uint32_t* out, std::uint32_t* count, std::uint32_t value) {
  const unsigned int mask = __activemask();
  const unsigned int lane = cdpkit::detail::lane_id();
  const unsigned int leader = __ffs(mask) - 1;
  const unsigned int rank = __popc(mask & ((1u << lane) - 1u));
  std::uint32_t base = 0;
  if (lane == leader) base = atomicAdd(count, static_cast<unsigned int>(__popc(mask)));
  base = __shfl_sync(mask, base, leader);
  out[base + rank] = value;
}

}  // namespace cdpkit::loop_to_child
