#pragma once
// cdpkit/loop_to_child/agents/serial_loop.cuh — serial_loop (PMPP Fig. 21.4): each thread loops
// over its own segment. No child grids; the baseline whose divergence the other strategies fix.

#include <cdpkit/loop_to_child/agents/common.cuh>

namespace cdpkit::loop_to_child {

/// Thread i = blockIdx.x * blockDim.x + threadIdx.x of a 1-D grid runs pre_op(i) and then
/// item_op(i, j) for every j of segment i, in order (probe site l2c_serial_items).
/// Preconditions: the grid covers the segments (threads past num_segments do nothing); any block
/// size.
template <class Segments, class PreOp, class ItemOp>
__device__ void serial_loop_agent(const launch_context& ctx, const Segments& s, const PreOp& pre_op,
                                  const ItemOp& item_op) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  warp_probe probe(ctx, sites::l2c_serial_items);
  if (i < s.num_segments) {
    pre_op(i);
    std::uint32_t begin, len;
    load_segment(ctx, s, i, begin, len);
    probe.steps(len);  // the loop's steps, counted here: nothing per iteration
    call_items(item_op, i, begin, len);
  }
  probe.commit();
}

}  // namespace cdpkit::loop_to_child
