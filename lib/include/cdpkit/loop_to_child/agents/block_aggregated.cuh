#pragma once
// cdpkit/loop_to_child/agents/block_aggregated.cuh — block_aggregated (KLAP): one child per
// block over its threads' concatenated segments; below the threshold the block does the items
// itself. The same four steps as warp_aggregated, with a CUB block scan (64-bit) and a
// shared-memory search.

#include <cdpkit/loop_to_child/agents/common.cuh>

#include <cub/block/block_scan.cuh>

namespace cdpkit::loop_to_child {

/// Shared storage of block_aggregated_agent: the kernel declares one `__shared__` instance.
struct block_aggregated_storage {
  // 64-bit scan: 256 lengths of up to 2^32 - 1 items do not fit 32 bits.
  using block_scan = cub::BlockScan<unsigned long long, block_threads>;
  typename block_scan::TempStorage scan;
  unsigned long long excl[block_threads];
  std::uint32_t excl32[block_threads];  ///< excl in 32 bits, for a walk of a total below 2^32 - 1024
  std::uint32_t begin[block_threads];
  int launched;
};

/// Step 4 of block_aggregated_agent: the block walks its `total` concatenated items, walk_items
/// per thread and round, positions of type Pos (32 bits where they fit: half the search's work).
/// excl, begin: the block's shared exclusive scan and segment starts, `count` entries.
/// A segment_sum walks in blocked order instead (sum_blocked_round: thread t holds positions
/// base + walk_items * t ..  + walk_items - 1 of each round), one search per thread and round.
template <class Pos, class ItemOp>
__device__ __forceinline__ void block_walk(const Pos* excl, const std::uint32_t* begin, std::uint32_t count,
                                           std::uint32_t block_first, Pos total, const ItemOp& item_op) {
  if constexpr (is_segment_sum_v<ItemOp>) {
    const auto start = [begin](std::uint32_t o) { return begin[o]; };
    for (Pos base = 0; base < total; base += block_threads * walk_items)
      sum_blocked_round<walk_items>(item_op, excl, start, count, block_first,
                                    static_cast<Pos>(base + walk_items * threadIdx.x), total);
  } else {
    for (Pos base = 0; base < total; base += block_threads * walk_items) {
      Pos k[walk_items];
      std::uint32_t owner[walk_items], seg[walk_items], item[walk_items];
      bool valid[walk_items];
#pragma unroll
      for (unsigned int r = 0; r < walk_items; ++r) {
        k[r] = base + r * block_threads + threadIdx.x;
        valid[r] = k[r] < total;
      }
      find_segments(excl, count, k, owner);
#pragma unroll
      for (unsigned int r = 0; r < walk_items; ++r) {
        seg[r] = block_first + owner[r];
        item[r] = begin[owner[r]] + static_cast<std::uint32_t>(k[r] - excl[owner[r]]);
      }
      call_item_round(item_op, 0xffffffffu, seg, item, valid);
    }
  }
}

/// Thread threadIdx.x of block b handles segment b * block_threads + threadIdx.x; the block is
/// the group.
///
/// Preconditions: a 1-D grid of blocks of exactly block_threads (256) threads covering the
/// segments; every thread of the block calls the agent (block-wide barriers); d_scan has
/// num_segments entries and lives until the children are done; `site` <
/// trace_limits::max_sites; child_block_threads is a multiple of 32 in [32, 1024]. A group total
/// of 2^32 items or more is done by the block itself.
template <class Segments, class PreOp, class ItemOp>
__device__ void block_aggregated_agent(block_aggregated_storage& storage, const launch_context& ctx,
                                       const Segments& s, const PreOp& pre_op,
                                       const ItemOp& item_op, std::uint32_t threshold,
                                       stream_kind stream, std::uint32_t* d_scan,
                                       unsigned int child_block_threads, std::uint16_t site) {
  using block_scan = block_aggregated_storage::block_scan;
  const std::uint32_t block_first = blockIdx.x * block_threads;
  const std::uint32_t i = block_first + threadIdx.x;
  std::uint32_t begin = 0, len = 0;
  // 1. pre_op and the segment
  if (i < s.num_segments) {
    pre_op(i);
    load_segment(ctx, s, i, begin, len);
  }
  // 2. block exclusive scan of the lengths
  unsigned long long excl = 0, total = 0;
  block_scan(storage.scan).ExclusiveSum(static_cast<unsigned long long>(len), excl, total);
  if (total == 0) return;  // block-uniform
  const std::uint32_t count = s.num_segments - block_first < block_threads
                                  ? s.num_segments - block_first
                                  : block_threads;
  storage.excl[threadIdx.x] = excl;
  storage.excl32[threadIdx.x] = static_cast<std::uint32_t>(excl);  // (read only when total fits)
  storage.begin[threadIdx.x] = begin;
  if (threadIdx.x == 0) storage.launched = 0;
  // a child indexes the concatenation in 32 bits: a larger total is done by the block itself
  const bool launch = total > threshold && total <= 0xffffffffull;
  if (launch && i < s.num_segments) d_scan[i] = static_cast<std::uint32_t>(excl);
  __syncthreads();  // also orders every thread's pre_op writes before the launch and step 4

  // 3. one launch per block
  if (launch && threadIdx.x == 0) {
    __threadfence();
    storage.launched = static_cast<bool>(launch_group_child(ctx, site, static_cast<std::uint32_t>(total),
                                                            child_block_threads, stream, s, d_scan + block_first,
                                                            block_first, count, item_op));
    if (!storage.launched) record_inline_items(ctx, site, total);
  }
  __syncthreads();
  if (storage.launched) return;

  // 4. cooperative: the block walks the concatenation (every lane of every warp is here; the
  // probe counts each thread's trip count at once, nothing per item)
  warp_probe probe(ctx, sites::l2c_cooperative_items, 0xffffffffu);
  const unsigned long long trips = is_segment_sum_v<ItemOp>
                                       ? blocked_trip_count(threadIdx.x, total, block_threads, walk_items)
                                       : strided_trip_count(threadIdx.x, total, block_threads);
  probe.steps(static_cast<unsigned int>(trips < 0xffffffffull ? trips : 0xffffffffull));  // (2^32 near 2^40 items)
  // (32-bit positions where a round's last position cannot wrap: block-uniform choice)
  if (total <= 0xffffffffull - block_threads * walk_items)
    block_walk(storage.excl32, storage.begin, count, block_first, static_cast<std::uint32_t>(total), item_op);
  else
    block_walk(storage.excl, storage.begin, count, block_first, total, item_op);
  probe.commit();
}

}  // namespace cdpkit::loop_to_child
