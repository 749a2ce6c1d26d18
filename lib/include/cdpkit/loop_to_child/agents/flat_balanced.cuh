#pragma once
// cdpkit/loop_to_child/agents/flat_balanced.cuh — flat_balanced (no CDP): the yardstick.
//
// 1. flat_prepare_agent: pre_op(i) and the lengths, with their 64-bit total;
// 2. (host) an exclusive scan of the lengths (CUB);
// 3. flat_items_agent: one balanced grid over all items, tile by tile.

#include <cdpkit/loop_to_child/agents/common.cuh>

namespace cdpkit::loop_to_child {

/// Shared storage of flat_prepare_agent.
struct flat_prepare_storage {
  unsigned long long block_sum;
};

/// Thread i runs pre_op(i) and writes d_len[i] = len(i); the thread i == num_segments writes
/// d_len[num_segments] = 0 (so that the exclusive scan's last entry is the total). Also sums the
/// lengths in 64 bits into *d_total (zeroed before): the 32-bit scan of the items agent is only
/// valid when that total is below 2^32.
/// Preconditions: a 1-D grid of at least num_segments + 1 threads, block size a multiple of 32,
/// every thread of the block calls the agent; d_len has num_segments + 1 entries.
template <class Segments, class PreOp>
__device__ void flat_prepare_agent(flat_prepare_storage& storage, const launch_context& ctx,
                                   const Segments& s, const PreOp& pre_op, std::uint32_t* d_len,
                                   unsigned long long* d_total) {
  if (threadIdx.x == 0) storage.block_sum = 0;
  __syncthreads();
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t len = 0;
  if (i < s.num_segments) {
    pre_op(i);
    std::uint32_t begin;
    load_segment(ctx, s, i, begin, len);
    d_len[i] = len;
  } else if (i == s.num_segments) {
    d_len[i] = 0;  // so that the exclusive scan's last entry is the total
  }
  // the block's total in 64 bits: a warp sum by shuffles, one shared atomic per warp
  unsigned long long sum = len;
  for (unsigned int offset = 16; offset >= 1; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31u) == 0 && sum > 0) atomicAdd(&storage.block_sum, sum);
  __syncthreads();
  if (threadIdx.x == 0 && storage.block_sum > 0) atomicAdd(d_total, storage.block_sum);
}

inline constexpr unsigned int flat_items_per_thread = 8;
inline constexpr unsigned int flat_tile_items = block_threads * flat_items_per_thread;

/// Shared storage of flat_items_agent.
struct flat_items_storage {
  std::uint32_t range[2];
};

/// d_scan has num_segments + 1 entries; d_scan[num_segments] is the total. Blocks walk tiles of
/// flat_tile_items consecutive items (grid-stride over tiles, so the host needs no total):
/// 1. thread 0 finds the tile's first and last segments in the whole scan;
/// 2. each thread finds its items' segments by binary search within that narrow range (a few
///    cached steps), and neighbouring threads touch neighbouring items (coalesced).
/// A total of 2^32 items or more (*d_total) is refused: device_error_item_overflow, no item runs.
/// Preconditions: blocks of exactly block_threads threads, every thread calls the agent.
template <class Segments, class ItemOp>
__device__ void flat_items_agent(flat_items_storage& storage, const launch_context& ctx,
                                 const Segments& s, const std::uint32_t* d_scan,
                                 const unsigned long long* d_total, const ItemOp& item_op) {
  if (*d_total > 0xffffffffull) {  // the 32-bit scan wrapped: refuse, never run wrong items
    if (blockIdx.x == 0 && threadIdx.x == 0) raise_device_error(ctx, device_error_item_overflow);
    return;
  }
  const std::uint32_t total = d_scan[s.num_segments];
  const std::uint64_t num_tiles = (1ull * total + flat_tile_items - 1) / flat_tile_items;
  // The probe counts each thread's items at once (nothing per item): flat_items_per_thread per
  // tile of the block's, fewer in a last, partial tile.
  warp_probe probe(ctx, sites::l2c_flat_items, 0xffffffffu);
  {
    std::uint64_t n = 0;
    if (blockIdx.x < num_tiles) {
      const std::uint64_t last = num_tiles - 1;
      n = ((last - blockIdx.x) / gridDim.x + 1) * flat_items_per_thread;
      const std::uint32_t rest = total - static_cast<std::uint32_t>(last * flat_tile_items);  // in (0, tile]
      if (last % gridDim.x == blockIdx.x) {  // the last tile is this block's
        n -= flat_items_per_thread - strided_trip_count(threadIdx.x, rest, block_threads);
      }
    }
    probe.steps(static_cast<unsigned int>(n));
  }
  for (std::uint64_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const auto tile_begin = static_cast<std::uint32_t>(tile * flat_tile_items);
    const std::uint32_t tile_last =
        total - tile_begin > flat_tile_items ? tile_begin + flat_tile_items - 1 : total - 1;
    if (threadIdx.x == 0) {
      storage.range[0] = find_segment(d_scan, s.num_segments, tile_begin);
      storage.range[1] = find_segment(d_scan, s.num_segments, tile_last);
    }
    __syncthreads();
    const std::uint32_t first = storage.range[0], count = storage.range[1] - storage.range[0] + 1;
    // the thread's items of the tile, walk_items at a time: segments found first, then called
    // (find_segments, call_item_round)
    static_assert(flat_items_per_thread % walk_items == 0, "whole rounds per tile");
#pragma unroll 1
    for (unsigned int round = 0; round < flat_items_per_thread; round += walk_items) {
      std::uint32_t k[walk_items], seg[walk_items], item[walk_items];
      bool valid[walk_items];
#pragma unroll
      for (unsigned int r = 0; r < walk_items; ++r) {
        k[r] = tile_begin + (round + r) * block_threads + threadIdx.x;
        valid[r] = k[r] <= tile_last;
      }
      find_segments(d_scan + first, count, k, seg);
#pragma unroll
      for (unsigned int r = 0; r < walk_items; ++r) {
        seg[r] += first;
        item[r] = valid[r] ? s.begin(seg[r]) + (k[r] - d_scan[seg[r]]) : 0u;
      }
      call_item_round(item_op, 0xffffffffu, seg, item, valid);
    }
    __syncthreads();  // range[] is rewritten by the next tile
  }
  probe.commit();
}

}  // namespace cdpkit::loop_to_child
