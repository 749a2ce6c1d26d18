#pragma once
// cdpkit/loop_to_child/kernels.cuh — the thin __global__ wrappers of loop-to-child, one per agent
// (cdpkit/loop_to_child/agents.cuh): each declares its shared storage, resolves the threshold
// and calls its agent; none holds an algorithm of its own. for_each_segment_async launches them
// with blocks of loop_to_child::block_threads threads.

#include <cdpkit/loop_to_child/agents.cuh>

namespace cdpkit::loop_to_child {

/// Blocks per SM that the aggregated kernels are compiled for (64K-register SMs: at most 64 and
/// 48 registers a thread, no spills with the library's item operations): their cooperative walks
/// hide latency with resident warps as well as with walk_items. Without the bounds they took 72
/// and 66 registers (3 blocks per SM).
inline constexpr int warp_aggregated_min_blocks = 4;
inline constexpr int block_aggregated_min_blocks = 5;

template <class Segments>
__global__ void __launch_bounds__(block_threads)
    pick_threshold_kernel(launch_context ctx, Segments s, length_histograms* d_hist, int which,
                          double item_ns, double launch_ns, unsigned long long max_launches,
                          std::uint32_t* d_threshold) {
  __shared__ length_histogram_storage storage;
  length_histogram_pick_agent(storage, s, d_hist, ctx, which, item_ns, launch_ns, max_launches,
                              d_threshold);
}

template <class Segments, class PreOp, class ItemOp>
__global__ void __launch_bounds__(block_threads)
    serial_loop_kernel(launch_context ctx, Segments s, PreOp pre_op, ItemOp item_op) {
  serial_loop_agent(ctx, s, pre_op, item_op);
}

template <class Segments, class PreOp, class ItemOp>
__global__ void __launch_bounds__(block_threads)
    thresholded_kernel(launch_context ctx, Segments s, PreOp pre_op, ItemOp item_op,
                       threshold_arg t, stream_kind stream, std::uint16_t site,
                       unsigned int child_block_threads) {
  thresholded_agent(ctx, s, pre_op, item_op, t.resolve(), stream, site, child_block_threads);
}

template <class Segments, class PreOp, class ItemOp>
__global__ void __launch_bounds__(block_threads, warp_aggregated_min_blocks)
    warp_aggregated_kernel(launch_context ctx, Segments s, PreOp pre_op, ItemOp item_op,
                           threshold_arg t, stream_kind stream, std::uint32_t* d_scan,
                           unsigned int child_block_threads, std::uint16_t site) {
  warp_aggregated_agent(ctx, s, pre_op, item_op, t.resolve(), stream, d_scan, child_block_threads,
                        site);
}

template <class Segments, class PreOp, class ItemOp>
__global__ void __launch_bounds__(block_threads, block_aggregated_min_blocks)
    block_aggregated_kernel(launch_context ctx, Segments s, PreOp pre_op, ItemOp item_op,
                            threshold_arg t, stream_kind stream, std::uint32_t* d_scan,
                            unsigned int child_block_threads, std::uint16_t site) {
  __shared__ block_aggregated_storage storage;
  block_aggregated_agent(storage, ctx, s, pre_op, item_op, t.resolve(), stream, d_scan,
                         child_block_threads, site);
}

template <class Segments, class PreOp>
__global__ void __launch_bounds__(block_threads)
    flat_prepare_kernel(launch_context ctx, Segments s, PreOp pre_op, std::uint32_t* d_len,
                        unsigned long long* d_total) {
  __shared__ flat_prepare_storage storage;
  flat_prepare_agent(storage, ctx, s, pre_op, d_len, d_total);
}

template <class Segments, class ItemOp>
__global__ void __launch_bounds__(block_threads)
    flat_items_kernel(launch_context ctx, Segments s, const std::uint32_t* d_scan,
                      const unsigned long long* d_total, ItemOp item_op) {
  __shared__ flat_items_storage storage;
  flat_items_agent(storage, ctx, s, d_scan, d_total, item_op);
}

}  // namespace cdpkit::loop_to_child
