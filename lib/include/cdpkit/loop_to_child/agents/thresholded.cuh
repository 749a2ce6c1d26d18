#pragma once
// cdpkit/loop_to_child/agents/thresholded.cuh — child_per_thread and thresholded (PMPP
// Fig. 21.5): a child grid per segment longer than a threshold, a loop for the others.
//
// 1. thread i runs pre_op(i) and reads its segment;
// 2. if len > threshold, it asks the launch layer for a child of ceil(len / child_block_threads)
//    blocks whose thread k runs item_op(i, begin + k) (a segment_sum's child: sum_child_items
//    items per thread, summed in registers; launch_segment_child);
// 3. if the segment is short, or the layer said no (budget, depth, launch error), the thread
//    loops over the segment itself (counted as inline items of the site): no work is lost.
// Threshold 0 launches for every non-empty segment: that is child_per_thread.

#include <cdpkit/loop_to_child/agents/common.cuh>

namespace cdpkit::loop_to_child {

/// Thread i = blockIdx.x * blockDim.x + threadIdx.x runs segment i as above. A device function,
/// so that any grid launched through the launch layer (a host-launched kernel, or a grid launched
/// from the device such as BFS's device driver) can run it; BFS's neighbour expansion is this
/// agent over the frontier.
///
/// Preconditions: a 1-D grid covering the segments, any block size; `ctx` is the calling grid's
/// launch context; `site` < trace_limits::max_sites names the launches (e.g.
/// sites::l2c_thresholded); child_block_threads is a multiple of 32 in [32, 1024]. pre_op(i)'s
/// writes are visible to the child (the launch orders them).
template <class Segments, class PreOp, class ItemOp>
__device__ void thresholded_agent(const launch_context& ctx, const Segments& s, const PreOp& pre_op,
                                  const ItemOp& item_op, std::uint32_t threshold,
                                  stream_kind stream, std::uint16_t site,
                                  unsigned int child_block_threads) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  warp_probe probe(ctx, sites::l2c_inline_items);
  if (i < s.num_segments) {
    pre_op(i);
    std::uint32_t begin, len;
    load_segment(ctx, s, i, begin, len);
    bool launched = false;
    if (len > threshold) {
      launched = static_cast<bool>(
          launch_segment_child(ctx, site, i, begin, len, child_block_threads, stream, item_op));
      if (!launched) record_inline_items(ctx, site, 1ull * len);
    }
    if (!launched) {
      probe.steps(len);  // the inline loop's steps, counted here: nothing per iteration
      call_items(item_op, i, begin, len);
    }
  }
  probe.commit();
}

}  // namespace cdpkit::loop_to_child
