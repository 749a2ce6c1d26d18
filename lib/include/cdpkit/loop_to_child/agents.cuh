#pragma once
// cdpkit/loop_to_child/agents.cuh — loop-to-child's device building blocks ("agents"), one file
// per strategy, for any algorithm whose step is "for every parent i, pre_op(i), then item_op(i, j)
// for every j of segment i" (BFS's neighbour expansion is one; the tree family's is another).
//
// An agent is a __device__ function run by every thread of a grid that was given a
// launch_context: it maps threads to segments, launches child grids through the launch layer
// (cdpkit/launch.cuh) and does inline whatever is not launched, so no work is ever lost. The thin
// __global__ wrappers of cdpkit/loop_to_child/kernels.cuh run one agent each, and
// cdpkit::for_each_segment_async (cdpkit/loop_to_child.cuh) picks the wrapper from the policy;
// an algorithm that needs the strategy inside its own grid (e.g. a grid launched from the
// device) calls the agent directly, in namespace cdpkit::loop_to_child:
//
//   agents/serial_loop.cuh       serial_loop_agent       each thread loops (Fig. 21.4)
//   agents/thresholded.cuh       thresholded_agent       a child per segment longer than T
//                                                        (T = 0: child_per_thread, Fig. 21.5)
//   agents/warp_aggregated.cuh   warp_aggregated_agent   one child per warp (KLAP)
//   agents/block_aggregated.cuh  block_aggregated_agent  one child per block (KLAP)
//   agents/flat_balanced.cuh     flat_prepare_agent,     no CDP: lengths, scan, one balanced
//                                flat_items_agent        grid over all items
//   agents/threshold_picker.cuh  length_histogram_agent, the automatic threshold, on the device
//                                pick_threshold_agent,   (one pass; its last block picks)
//                                length_histogram_pick_agent
//   agents/common.cuh            segments_view, segment_sum, block_threads, call_item,
//                                call_items, load_segment, find_segment, the child grids' bodies
//
// Common contract: Segments is cdpkit::segments_view or any trivially copyable type with
// `num_segments` and `__device__ std::uint32_t begin(i)` / `end(i)`; pre_op(i) runs exactly once
// per segment, item_op(i, j) (or item_op(j)) exactly once per item, after pre_op(i) and with its
// writes visible; an inverted segment (end < begin) raises device_error_bad_segment and is empty.
// Each agent's own preconditions (grid shape, which threads must call it, scratch) are at its
// declaration. The agents reach the trace only through the launch layer (launch_items,
// record_inline_items, record_auto_threshold, warp_probe) at the l2c_* sites of
// cdpkit/launch/site_ids.hpp, or at the launch site the caller gives.

#include <cdpkit/loop_to_child/agents/block_aggregated.cuh>
#include <cdpkit/loop_to_child/agents/common.cuh>
#include <cdpkit/loop_to_child/agents/flat_balanced.cuh>
#include <cdpkit/loop_to_child/agents/serial_loop.cuh>
#include <cdpkit/loop_to_child/agents/threshold_picker.cuh>
#include <cdpkit/loop_to_child/agents/thresholded.cuh>
#include <cdpkit/loop_to_child/agents/warp_aggregated.cuh>
