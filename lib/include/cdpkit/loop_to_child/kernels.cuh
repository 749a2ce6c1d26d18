#pragma once
// Thin kernels of loop-to-child, one per policy. Each declares its shared storage (if any) and
// calls the building blocks of agents.cuh.

#include <cdpkit/loop_to_child/agents.cuh>
#include <cdpkit/loop_to_child/threshold_rule.hpp>

#include <cub/block/block_scan.cuh>

namespace cdpkit::loop_to_child_detail {

// ---- distribution-aware threshold (policies without a given T) --------------------------------
// 1. one pass over the segments: log2 histograms of segment lengths, warp totals, block totals;
// 2. one thread picks T by the balanced rule (threshold_rule.hpp) within the budget share.
struct length_histograms {
  unsigned int counts[3][trace_limits::log2_buckets];  // [segment, warp total, block total][bucket]
};

/// The log2 bucket of a 64-bit total, the last bucket holding everything from 2^32 on.
__device__ __forceinline__ unsigned int clamped_log2_bucket(unsigned long long v) {
  const unsigned int b = detail::log2_bucket(v);
  return b < trace_limits::log2_buckets ? b : trace_limits::log2_buckets - 1;
}

template <class Segments>
__global__ void __launch_bounds__(block_threads)
    length_histogram_kernel(Segments s, length_histograms* d_hist) {
  __shared__ unsigned int hist[3][trace_limits::log2_buckets];
  __shared__ unsigned long long block_total;
  for (unsigned int k = threadIdx.x; k < 3 * trace_limits::log2_buckets; k += blockDim.x)
    hist[k / trace_limits::log2_buckets][k % trace_limits::log2_buckets] = 0;
  if (threadIdx.x == 0) block_total = 0;
  __syncthreads();
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t len = 0;
  if (i < s.num_segments) {
    const std::uint32_t b = s.begin(i), e = s.end(i);
    len = e > b ? e - b : 0;  // inverted segments are reported by the main kernel
  }
  if (len > 0) atomicAdd(&hist[0][detail::log2_bucket(len)], 1u);
  // Group totals in 64 bits: 32 or 256 lengths of up to 2^32 - 1 items do not fit 32 bits.
  unsigned long long warp_total = len;
  for (unsigned int offset = 16; offset >= 1; offset /= 2)
    warp_total += __shfl_down_sync(0xffffffffu, warp_total, offset);
  if ((threadIdx.x & 31u) == 0 && warp_total > 0) {
    atomicAdd(&hist[1][clamped_log2_bucket(warp_total)], 1u);
    atomicAdd(&block_total, warp_total);
  }
  __syncthreads();
  if (threadIdx.x == 0 && block_total > 0)
    atomicAdd(&hist[2][clamped_log2_bucket(block_total)], 1u);
  __syncthreads();
  for (unsigned int k = threadIdx.x; k < 3 * trace_limits::log2_buckets; k += blockDim.x) {
    const unsigned int v = hist[k / trace_limits::log2_buckets][k % trace_limits::log2_buckets];
    if (v > 0) atomicAdd(&d_hist->counts[k / trace_limits::log2_buckets][k % trace_limits::log2_buckets], v);
  }
}

template <int Unused = 0>
__global__ void pick_threshold_kernel(launch_context ctx, const length_histograms* d_hist,
                                      int which, double item_ns, double launch_ns,
                                      unsigned long long max_launches, std::uint32_t* d_threshold) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const std::uint32_t t = balanced_threshold(d_hist->counts[which], trace_limits::log2_buckets,
                                             item_ns, launch_ns, max_launches);
  *d_threshold = t;
  ctx.state->totals->last_auto_threshold = t;
}

/// A threshold given on the host, or one picked on the device before the kernel (pointer set).
struct threshold_arg {
  std::uint32_t value;
  const std::uint32_t* d_picked;
  __device__ std::uint32_t resolve() const { return d_picked != nullptr ? *d_picked : value; }
};

// ---- serial_loop (Fig. 21.4): each thread loops over its own segment ---------------------------
template <class Segments, class PreOp, class ItemOp>
__global__ void __launch_bounds__(block_threads)
    serial_loop_kernel(launch_context ctx, Segments s, PreOp pre_op, ItemOp item_op) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  warp_probe probe(ctx, sites::l2c_serial_items);
  if (i < s.num_segments) {
    pre_op(i);
    std::uint32_t begin, len;
    load_segment(ctx, s, i, begin, len);
    for (std::uint32_t k = 0; k < len; ++k) {
      probe.step();
      call_item(item_op, i, begin + k);
    }
  }
  probe.commit();
}

// ---- child_per_thread and thresholded (Fig. 21.5): a child grid per long segment ---------------
// threshold 0 launches for every non-empty segment (child_per_thread). A segment that is not
// launched (short, or the launch layer said no) is looped over by its thread. The agent is a
// device function so that a grid launched from the device (BFS's device driver) can run it too.
template <class Segments, class PreOp, class ItemOp>
__device__ void thresholded_agent(const launch_context& ctx, const Segments& s, const PreOp& pre_op,
                                  const ItemOp& item_op, std::uint32_t threshold,
                                  stream_kind stream, std::uint16_t site,
                                  unsigned int child_threads) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  warp_probe probe(ctx, sites::l2c_inline_items);
  if (i < s.num_segments) {
    pre_op(i);
    std::uint32_t begin, len;
    load_segment(ctx, s, i, begin, len);
    bool launched = false;
    if (len > threshold) {
      launched = static_cast<bool>(launch_items(ctx, site, len, child_threads, stream,
                                                segment_items_fn<ItemOp>{i, begin, item_op}));
      if (!launched && ctx.tracing) atomicAdd(&ctx.state->sites[site].inline_items, 1ull * len);
    }
    if (!launched) {
      for (std::uint32_t k = 0; k < len; ++k) {
        probe.step();
        call_item(item_op, i, begin + k);
      }
    }
  }
  probe.commit();
}

template <class Segments, class PreOp, class ItemOp>
__global__ void __launch_bounds__(block_threads)
    thresholded_kernel(launch_context ctx, Segments s, PreOp pre_op, ItemOp item_op,
                       threshold_arg t, stream_kind stream, std::uint16_t site,
                       unsigned int child_threads) {
  thresholded_agent(ctx, s, pre_op, item_op, t.resolve(), stream, site, child_threads);
}

// ---- warp_aggregated (KLAP): one child per warp over its lanes' concatenated segments ----------
// 1. each lane runs pre_op and reads its segment; 2. warp exclusive scan of lengths;
// 3. if the warp's total exceeds the threshold, lane 0 launches one child over the total (the
//    child finds (segment, offset) by binary search in the scan, written to d_scan);
// 4. otherwise, or if the launch layer said no, the warp does the items itself, 32 at a time,
//    finding each item's segment by a shuffle-based binary search: no lane idles.
template <class Segments, class PreOp, class ItemOp>
__global__ void __launch_bounds__(block_threads)
    warp_aggregated_kernel(launch_context ctx, Segments s, PreOp pre_op, ItemOp item_op,
                           threshold_arg t, stream_kind stream, std::uint32_t* d_scan,
                           unsigned int child_threads, std::uint16_t site) {
  constexpr unsigned int full = 0xffffffffu;
  const std::uint32_t threshold = t.resolve();
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
      launched = static_cast<bool>(
          launch_items(ctx, site, total, child_threads, stream,
                       group_items_fn<Segments, ItemOp>{s, d_scan + warp_first, warp_first, count, item_op}));
      if (!launched && ctx.tracing)
        atomicAdd(&ctx.state->sites[site].inline_items, total);
    }
    launched = __shfl_sync(full, launched, 0);
  }
  if (launched) return;

  // 4. cooperative: the warp walks the concatenation (64-bit positions: no wrap near 2^32)
  __syncwarp();  // other lanes' pre_op writes are visible to this lane from here on
  warp_probe probe(ctx, sites::l2c_cooperative_items);
  for (unsigned long long base = 0; base < total; base += 32) {
    const unsigned long long k = base + lane;
    std::uint32_t owner = 0;  // last lane whose excl <= k (binary lifting over the lanes)
    for (unsigned int step = 16; step >= 1; step /= 2) {
      const std::uint32_t candidate = owner + step;
      const unsigned long long v = __shfl_sync(full, excl, candidate & 31u);
      if (candidate < count && v <= k) owner = candidate;
    }
    const std::uint32_t owner_begin = __shfl_sync(full, begin, owner);
    const unsigned long long owner_excl = __shfl_sync(full, excl, owner);
    if (k < total) {
      probe.step();
      call_item(item_op, warp_first + owner,
                owner_begin + static_cast<std::uint32_t>(k - owner_excl));
    }
  }
  probe.commit();
}

// ---- block_aggregated (KLAP): one child per block over its threads' concatenated segments ------
// Same four steps as the warp version, with a CUB block scan and a shared-memory search.
template <class Segments, class PreOp, class ItemOp>
__global__ void __launch_bounds__(block_threads)
    block_aggregated_kernel(launch_context ctx, Segments s, PreOp pre_op, ItemOp item_op,
                            threshold_arg t, stream_kind stream, std::uint32_t* d_scan,
                           unsigned int child_threads, std::uint16_t site) {
  const std::uint32_t threshold = t.resolve();
  // 64-bit scan: 256 lengths of up to 2^32 - 1 items do not fit 32 bits.
  using block_scan = cub::BlockScan<unsigned long long, block_threads>;
  __shared__ typename block_scan::TempStorage scan_storage;
  __shared__ unsigned long long s_excl[block_threads];
  __shared__ std::uint32_t s_begin[block_threads];
  __shared__ int s_launched;

  const std::uint32_t block_first = blockIdx.x * block_threads;
  const std::uint32_t i = block_first + threadIdx.x;
  std::uint32_t begin = 0, len = 0;
  if (i < s.num_segments) {
    pre_op(i);
    load_segment(ctx, s, i, begin, len);
  }
  unsigned long long excl = 0, total = 0;
  block_scan(scan_storage).ExclusiveSum(static_cast<unsigned long long>(len), excl, total);
  if (total == 0) return;  // block-uniform
  const std::uint32_t count = s.num_segments - block_first < block_threads
                                  ? s.num_segments - block_first
                                  : block_threads;
  s_excl[threadIdx.x] = excl;
  s_begin[threadIdx.x] = begin;
  if (threadIdx.x == 0) s_launched = 0;
  // a child indexes the concatenation in 32 bits: a larger total is done by the block itself
  const bool launch = total > threshold && total <= 0xffffffffull;
  if (launch && i < s.num_segments) d_scan[i] = static_cast<std::uint32_t>(excl);
  __syncthreads();  // also orders every thread's pre_op writes before the launch and step 4

  if (launch && threadIdx.x == 0) {
    __threadfence();
    s_launched = static_cast<bool>(launch_items(
        ctx, site, total, child_threads, stream,
        group_items_fn<Segments, ItemOp>{s, d_scan + block_first, block_first, count, item_op}));
    if (!s_launched && ctx.tracing)
      atomicAdd(&ctx.state->sites[site].inline_items, total);
  }
  __syncthreads();
  if (s_launched) return;

  warp_probe probe(ctx, sites::l2c_cooperative_items);
  for (unsigned long long k = threadIdx.x; k < total; k += block_threads) {
    probe.step();
    const std::uint32_t owner = find_segment(s_excl, count, k);
    call_item(item_op, block_first + owner,
              s_begin[owner] + static_cast<std::uint32_t>(k - s_excl[owner]));
  }
  probe.commit();
}

// ---- flat_balanced (no CDP): pre_op + lengths, exclusive scan, one balanced grid over items ----
/// Also sums the lengths in 64 bits into *d_total (zeroed before): the 32-bit scan of the items
/// kernel is only valid when that total is below 2^32.
template <class Segments, class PreOp>
__global__ void __launch_bounds__(block_threads)
    flat_prepare_kernel(launch_context ctx, Segments s, PreOp pre_op, std::uint32_t* d_len,
                        unsigned long long* d_total) {
  __shared__ unsigned long long block_sum;
  if (threadIdx.x == 0) block_sum = 0;
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
  if ((threadIdx.x & 31u) == 0 && sum > 0) atomicAdd(&block_sum, sum);
  __syncthreads();
  if (threadIdx.x == 0 && block_sum > 0) atomicAdd(d_total, block_sum);
}

inline constexpr unsigned int flat_items_per_thread = 8;
inline constexpr unsigned int flat_tile_items = block_threads * flat_items_per_thread;

/// d_scan has num_segments + 1 entries; d_scan[num_segments] is the total. Blocks walk tiles of
/// flat_tile_items consecutive items (grid-stride over tiles, so the host needs no total):
/// 1. thread 0 finds the tile's first and last segments in the whole scan;
/// 2. each thread finds its items' segments by binary search within that narrow range (a few
///    cached steps), and neighbouring threads touch neighbouring items (coalesced).
template <class Segments, class ItemOp>
__global__ void __launch_bounds__(block_threads)
    flat_items_kernel(launch_context ctx, Segments s, const std::uint32_t* d_scan,
                      const unsigned long long* d_total, ItemOp item_op) {
  __shared__ std::uint32_t range[2];
  if (*d_total > 0xffffffffull) {  // the 32-bit scan wrapped: refuse, never run wrong items
    if (blockIdx.x == 0 && threadIdx.x == 0) raise_device_error(ctx, device_error_item_overflow);
    return;
  }
  const std::uint32_t total = d_scan[s.num_segments];
  const std::uint64_t num_tiles = (1ull * total + flat_tile_items - 1) / flat_tile_items;
  warp_probe probe(ctx, sites::l2c_flat_items);
  for (std::uint64_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const auto tile_begin = static_cast<std::uint32_t>(tile * flat_tile_items);
    const std::uint32_t tile_last =
        total - tile_begin > flat_tile_items ? tile_begin + flat_tile_items - 1 : total - 1;
    if (threadIdx.x == 0) {
      range[0] = find_segment(d_scan, s.num_segments, tile_begin);
      range[1] = find_segment(d_scan, s.num_segments, tile_last);
    }
    __syncthreads();
    const std::uint32_t first = range[0], count = range[1] - range[0] + 1;
    for (unsigned int r = 0; r < flat_items_per_thread; ++r) {
      const std::uint32_t k = tile_begin + r * block_threads + threadIdx.x;
      if (k <= tile_last) {
        probe.step();
        const std::uint32_t owner = first + find_segment(d_scan + first, count, k);
        call_item(item_op, owner, s.begin(owner) + (k - d_scan[owner]));
      }
    }
    __syncthreads();  // range[] is rewritten by the next tile
  }
  probe.commit();
}

}  // namespace cdpkit::loop_to_child_detail
