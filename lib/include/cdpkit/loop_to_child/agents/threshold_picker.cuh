#pragma once
// cdpkit/loop_to_child/agents/threshold_picker.cuh — the automatic threshold, picked on the
// device before the run (no host round trip):
// 1. one pass over the segments: log2 histograms of segment lengths, warp totals, block totals;
// 2. one thread of the pass's last block picks T by the balanced rule (threshold_rule.hpp) within
//    the budget share, writes it where the run's agents read it (threshold_arg) and records it in
//    the trace (record_auto_threshold). One kernel: a launch fewer on the host (each costs more
//    under CUPTI, inside the run's timed window).

#include <cdpkit/loop_to_child/agents/common.cuh>
#include <cdpkit/loop_to_child/threshold_rule.hpp>

namespace cdpkit::loop_to_child {

/// counts[which][b]: lengths (which 0: segments, 1: warp totals, 2: block totals) in log2
/// bucket b.
struct length_histograms {
  unsigned int counts[3][trace_limits::log2_buckets];
  unsigned int blocks_done;  ///< blocks of the pass that have added theirs (the last one picks)
};

/// The log2 bucket of a 64-bit total, the last bucket holding everything from 2^32 on.
__device__ __forceinline__ unsigned int clamped_log2_bucket(unsigned long long v) {
  const unsigned int b = ::cdpkit::detail::log2_bucket(v);
  return b < trace_limits::log2_buckets ? b : trace_limits::log2_buckets - 1;
}

/// Shared storage of length_histogram_agent.
struct length_histogram_storage {
  unsigned int hist[3][trace_limits::log2_buckets];
  unsigned long long block_total;
};

/// Adds the block's segments to *d_hist (zeroed before the first block). Inverted segments count
/// as empty (the run reports them).
/// Preconditions: a 1-D grid of blocks of block_threads threads covering the segments; every
/// thread calls the agent.
template <class Segments>
__device__ void length_histogram_agent(length_histogram_storage& storage, const Segments& s,
                                       length_histograms* d_hist) {
  auto& hist = storage.hist;
  for (unsigned int k = threadIdx.x; k < 3 * trace_limits::log2_buckets; k += blockDim.x)
    hist[k / trace_limits::log2_buckets][k % trace_limits::log2_buckets] = 0;
  if (threadIdx.x == 0) storage.block_total = 0;
  __syncthreads();
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t len = 0;
  if (i < s.num_segments) {
    const std::uint32_t b = s.begin(i), e = s.end(i);
    len = e > b ? e - b : 0;  // inverted segments are reported by the main kernel
  }
  if (len > 0) atomicAdd(&hist[0][::cdpkit::detail::log2_bucket(len)], 1u);
  // Group totals in 64 bits: 32 or 256 lengths of up to 2^32 - 1 items do not fit 32 bits.
  unsigned long long warp_total = len;
  for (unsigned int offset = 16; offset >= 1; offset /= 2)
    warp_total += __shfl_down_sync(0xffffffffu, warp_total, offset);
  if ((threadIdx.x & 31u) == 0 && warp_total > 0) {
    atomicAdd(&hist[1][clamped_log2_bucket(warp_total)], 1u);
    atomicAdd(&storage.block_total, warp_total);
  }
  __syncthreads();
  if (threadIdx.x == 0 && storage.block_total > 0)
    atomicAdd(&hist[2][clamped_log2_bucket(storage.block_total)], 1u);
  __syncthreads();
  for (unsigned int k = threadIdx.x; k < 3 * trace_limits::log2_buckets; k += blockDim.x) {
    const unsigned int v = hist[k / trace_limits::log2_buckets][k % trace_limits::log2_buckets];
    if (v > 0) atomicAdd(&d_hist->counts[k / trace_limits::log2_buckets][k % trace_limits::log2_buckets], v);
  }
}

/// The calling thread picks T from d_hist->counts[which] by balanced_threshold, writes it to
/// *d_threshold and records it (record_auto_threshold). The counts are read from L2 (other
/// blocks' atomics). Precondition: one thread calls it, after every block's additions are visible
/// (see length_histogram_pick_agent).
__device__ inline void pick_threshold_agent(const launch_context& ctx,
                                            const length_histograms* d_hist, int which,
                                            double item_ns, double launch_ns,
                                            unsigned long long max_launches,
                                            std::uint32_t* d_threshold) {
  unsigned int counts[trace_limits::log2_buckets];
  for (int b = 0; b < trace_limits::log2_buckets; ++b) counts[b] = __ldcg(&d_hist->counts[which][b]);
  const std::uint32_t t =
      balanced_threshold(counts, trace_limits::log2_buckets, item_ns, launch_ns, max_launches);
  *d_threshold = t;
  record_auto_threshold(ctx, t);
}

/// length_histogram_agent, then thread 0 of the last block to finish picks T
/// (pick_threshold_agent). Preconditions: those of length_histogram_agent; *d_hist zeroed before
/// the first block, blocks_done included.
template <class Segments>
__device__ void length_histogram_pick_agent(length_histogram_storage& storage, const Segments& s,
                                            length_histograms* d_hist, const launch_context& ctx,
                                            int which, double item_ns, double launch_ns,
                                            unsigned long long max_launches,
                                            std::uint32_t* d_threshold) {
  __shared__ bool last;
  length_histogram_agent(storage, s, d_hist);
  __threadfence();  // this thread's additions are visible device-wide before its block counts itself
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&d_hist->blocks_done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (last && threadIdx.x == 0) {
    __threadfence();  // every other block's additions, counted before its ticket, are seen after ours
    pick_threshold_agent(ctx, d_hist, which, item_ns, launch_ns, max_launches, d_threshold);
  }
}

/// A threshold given on the host, or one picked on the device before the kernel (pointer set).
struct threshold_arg {
  std::uint32_t value;
  const std::uint32_t* d_picked;
  __device__ std::uint32_t resolve() const { return d_picked != nullptr ? *d_picked : value; }
};

}  // namespace cdpkit::loop_to_child
