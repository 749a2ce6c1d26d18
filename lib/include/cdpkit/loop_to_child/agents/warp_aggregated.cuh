#pragma once
// cdpkit/loop_to_child/agents/warp_aggregated.cuh — warp_aggregated (KLAP): one child per warp
// over its lanes' concatenated segments; below the threshold the warp does the items itself.
//
// 1. each lane runs pre_op and reads its segment; 2. warp exclusive scan of lengths (64-bit);
// 3. if the warp's total exceeds the threshold, lane 0 launches one child over the total (the
//    child finds (segment, offset) by binary search in the scan, written to d_scan);
// 4. otherwise, or if the launch layer said no, the warp does the items itself, 32 * walk_items
//    at a time (walk_items positions per lane, their searches and loads together), finding each
//    item's segment by a shuffle-based binary search: no lane idles.

#include <cdpkit/loop_to_child/agents/common.cuh>

namespace cdpkit::loop_to_child {

/// Thread i = blockIdx.x * blockDim.x + threadIdx.x handles segment i; its warp, lanes 32k ..
/// 32k + 31, is the group.
///
/// Preconditions: a 1-D grid whose block size is a multiple of 32, covering the segments; every
/// thread of every warp calls the agent (full-mask shuffles; threads past num_segments take part
/// with empty segments); d_scan has num_segments entries and lives until the children are done;
/// `site` < trace_limits::max_sites; child_block_threads is a multiple of 32 in [32, 1024]. A
/// group total of 2^32 items or more is done by the warp itself (children index it in 32 bits).
template <class Segments, class PreOp, class ItemOp>
__device__ void warp_aggregated_agent(const launch_context& ctx, const Segments& s,
                                      const PreOp& pre_op, const ItemOp& item_op,
                                      std::uint32_t threshold, stream_kind stream,
                                      std::uint32_t* d_scan, unsigned int child_block_threads,
                                      std::uint16_t site) {
  constexpr unsigned int full = 0xffffffffu;
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t lane = threadIdx.x & 31u;
  const std::uint32_t warp_first = i - lane;
  std::uint32_t begin = 0, len = 0;
  if (i < s.num_segments) {
    pre_op(i);
    load_segment(ctx, s, i, begin, len);
  }
  // 2. inclusive scan by shuffles, in 64 bits (32 lengths of up to 2^32 - 1 items)
  unsigned long long incl = len;
  for (unsigned int offset = 1; offset < 32; offset *= 2) {
    const unsigned long long v = __shfl_up_sync(full, incl, offset);
    if (lane >= offset) incl += v;
  }
  const unsigned long long excl = incl - len;
  const unsigned long long total = __shfl_sync(full, incl, 31);
  if (total == 0) return;  // warp-uniform
  const std::uint32_t count =
      s.num_segments - warp_first < 32u ? s.num_segments - warp_first : 32u;

  // 3. one launch per warp (a child indexes the concatenation in 32 bits: a larger total is
  //    done by the warp itself)
  int launched = 0;
  if (total > threshold && total <= 0xffffffffull) {
    if (i < s.num_segments) d_scan[i] = static_cast<std::uint32_t>(excl);
    __syncwarp();
    if (lane == 0) {
      __threadfence();  // the lanes' pre_op and scan writes, before the child can read them
      launched = static_cast<bool>(launch_group_child(ctx, site, static_cast<std::uint32_t>(total),
                                                      child_block_threads, stream, s, d_scan + warp_first,
                                                      warp_first, count, item_op));
      if (!launched) record_inline_items(ctx, site, total);
    }
    launched = __shfl_sync(full, launched, 0);
  }
  if (launched) return;

  // 4. cooperative: the warp walks the concatenation (64-bit positions: no wrap near 2^32)
  __syncwarp();  // other lanes' pre_op writes are visible to this lane from here on
  // (the probe counts each lane's trip count at once, nothing per item)
  warp_probe probe(ctx, sites::l2c_cooperative_items, full);
  probe.steps_two_valued(static_cast<unsigned int>(strided_trip_count(lane, total, 32)));  // (lanes 0..31, stride 32)
  for (unsigned long long base = 0; base < total; base += 32 * walk_items) {
    std::uint32_t seg[walk_items], item[walk_items];
    bool valid[walk_items];
#pragma unroll
    for (unsigned int r = 0; r < walk_items; ++r) {
      const unsigned long long k = base + r * 32 + lane;
      std::uint32_t owner = 0;  // last lane whose excl <= k (binary lifting over the lanes)
      for (unsigned int step = 16; step >= 1; step /= 2) {
        const std::uint32_t candidate = owner + step;
        const unsigned long long v = __shfl_sync(full, excl, candidate & 31u);
        if (candidate < count && v <= k) owner = candidate;
      }
      valid[r] = k < total;
      seg[r] = warp_first + owner;
      item[r] = __shfl_sync(full, begin, owner) + static_cast<std::uint32_t>(k - __shfl_sync(full, excl, owner));
    }
    call_item_round(item_op, full, seg, item, valid);
  }
  probe.commit();
}

}  // namespace cdpkit::loop_to_child
