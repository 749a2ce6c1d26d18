#pragma once
// cdpkit/quicksort/agents/fast.cuh — the `fast` variant: a samplesort-style recursion of child
// grids through the launch layer. One large range (a "task") goes through:
//
//   1. count grid (site quicksort.fast_range for a child; the host launches the root's): every
//      block draws the same sample, sorts it and picks up to 127 splitters (block 0 keeps them
//      in the task record), classifies its keys into up to 255 buckets with counters in shared
//      memory, and adds its counts to the task's with ONE atomic per bucket (the value returned
//      is the block's offset inside the bucket, kept for the scatter);
//   2. the count grid's last block scans the counts and launches the scatter grid as the next
//      step at the same depth (launch_step, site quicksort.fast_scatter; 1024-thread blocks, as
//      every count and scatter grid the device launches here: see below);
//   3. scatter grid: every block classifies its keys again and writes each one to its bucket in
//      the other buffer, at a position from a shared-memory cursor (one atomic per warp and
//      bucket);
//   4. the scatter grid's last block spawns the next level: a child task per bucket larger than
//      a medium range (depth + 1), a copy grid per large run of equal keys that must move home,
//      and every other bucket goes to a queue of small ranges;
//   5. once the whole partition tree is done (the host-launched root grid is complete only when
//      all its descendants are), ONE drain grid, next on the caller's stream, sorts the queue: its
//      blocks take the small ranges one at a time (block_sorter) — aggregation: the thousands of
//      small ranges of a sort cost no launch at all and run as one full grid.
//
// Keys equal to a splitter form their own bucket, which is never sorted again: duplicates never
// deepen the recursion. Whenever the launch layer refuses a launch (budget, depth, error) or the
// task pool or offsets arena is full, the work is not lost: the range becomes a job of the drain
// grid (a refused child task or copy grid: that bucket; a refused scatter step: the whole task's
// range, still unmoved), which one block sorts or copies beside the others: slower, never wrong.
// The queue holds a job for every bucket of every task the pool can hold, so it never overflows
// (if it did, a library bug, device_error_queue_overflow is raised and the call throws).
//
// The count and scatter grids stream the keys and hold no block-sort code: the fallbacks only
// queue work, so the count kernel stays small enough (registers) for twice the resident blocks.
//
// Measured on an H200 (docs/design.md, "Device-launched grids and shared memory"): a grid the
// device launches gets about one resident block per SM once its blocks use several KB of shared
// memory, as these do (15-44 KB). So the count and scatter grids fast launches from the device
// (every count grid but the root's, every scatter grid) have blocks of child_pass_threads = 1024
// threads (the copy grids, without shared memory, keep 256): the
// scatter step of 2^26 keys takes 0.81 ms that way, 1.14 ms with 256-thread blocks (0.55 ms when
// the host launches those). The host-launched root count grid keeps 256 threads, six per SM.

#include <cdpkit/quicksort/agents/queue.cuh>

namespace cdpkit::quicksort_detail {

/// Storage type of the task records: the key's size and alignment.
template <class T>
using key_storage_t = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;

template <class T, class V, class Compare>
using fast_args = partition_args<T, V, Compare, fast_task<key_storage_t<T>>>;

/// The task record's splitters seen as keys.
template <class T>
__device__ __forceinline__ T* record_keys(key_storage_t<T>* p) {
  return reinterpret_cast<T*>(p);
}

/// What happens to bucket b of a finished partition (the same rule for the spawner and
/// host_driven, so that each bucket is handled exactly once).
__host__ __device__ __forceinline__ bucket_action action_of(unsigned int b, std::uint32_t n,
                                                   std::uint32_t to) {
  if (n == 0) return bucket_action::none;
  if (b % 2 == 1) {  // equal keys: sorted already; only their place changes
    if (to == 0) return bucket_action::none;
    return n <= medium_keys ? bucket_action::small_copy : bucket_action::copy_grid;
  }
  return n <= medium_keys ? bucket_action::small_sort : bucket_action::child_task;
}

template <class T, class V, class Compare>
struct fast_agent : small_queue<T, V, Compare, fast_args<T, V, Compare>> {
  using args_t = fast_args<T, V, Compare>;
  using task_t = fast_task<key_storage_t<T>>;
  using queue = small_queue<T, V, Compare, args_t>;
  using queue::enqueue;

  /// The count and scatter steps' shared memory, for blocks of BlockThreads threads. The
  /// partition kernels hold nothing else (no block-sort storage): the smaller the blocks' shared
  /// memory, the more of them are resident.
  template <unsigned int BlockThreads>
  struct partition_storage {
    union {
      typename sample_sort<T, Compare, BlockThreads>::temp_storage sample;
      typename partition_pass<T, V, Compare, BlockThreads>::storage pass;
    } temp;
    splitter_set<T> split;
    std::uint32_t count[max_buckets];
    bool last;
  };
  template <unsigned int BlockThreads>
  __device__ static partition_storage<BlockThreads>& partition_shared() {
    __shared__ partition_storage<BlockThreads> s;
    return s;
  }

  // -- 1. count --------------------------------------------------------------------------------
  /// Bucket starts from the counts (thread 0; the block synchronizes after).
  __device__ static void scan_counts(task_t* t) {
    if (threadIdx.x == 0) {
      const unsigned int buckets = 2 * ((1u << t->levels) - 1) + 1;
      std::uint32_t sum = 0;
      for (unsigned int b = 0; b < buckets; ++b) {
        t->start[b] = sum;
        sum += __ldcg(&t->count[b]);
      }
      t->start[buckets] = sum;
    }
    __syncthreads();
  }

  /// Count block `blk` of task t. In a grid launched through the layer (InGrid), the last block
  /// to finish goes on with the scan and the scatter step; host_driven runs those itself (and
  /// its kernels hold no spawning code).
  template <bool InGrid, unsigned int BlockThreads = block_threads>
  __device__ static void count_block(const launch_context& ctx, const args_t& a, task_t* t,
                                     std::uint32_t blk) {
    partition_storage<BlockThreads>& s = partition_shared<BlockThreads>();
    const T* src = a.buf.keys[t->which] + t->begin;
    sample_sort<T, Compare, BlockThreads>::run(s.temp.sample, s.split, src, t->size, t->wanted, a.seed, t->id,
                                 a.comp);
    const unsigned int buckets = s.split.buckets();
    if (blk == 0) {
      for (unsigned int i = threadIdx.x; i < s.split.splitters(); i += BlockThreads) {
        record_keys<T>(t->sorted)[i] = s.split.sorted[i];
        record_keys<T>(t->tree)[i + 1] = s.split.tree[i + 1];
      }
    }
    for (unsigned int b = threadIdx.x; b < buckets; b += BlockThreads) s.count[b] = 0;
    __syncthreads();
    const block_share share = share_of_block(blk, t->size);
    partition_pass<T, V, Compare, BlockThreads>::count(ctx, s.split, src, share.lo, share.hi, s.count,
                                                       a.comp);
    __syncthreads();
    // one atomic per bucket and block; the old value is this block's offset inside the bucket
    std::uint32_t* offsets = a.arena + t->arena + std::uint64_t{blk} * buckets;
    for (unsigned int b = threadIdx.x; b < buckets; b += BlockThreads)
      offsets[b] = s.count[b] != 0 ? atomicAdd(&t->count[b], s.count[b]) : 0u;
    if constexpr (!InGrid) {
      __syncthreads();
      return;
    } else {
    if (!last_block_to_arrive(&t->count_done, t->grid, s.last)) return;
    // 2. the last block: bucket starts, then the scatter as the next step of this level
    scan_counts(t);
    if (threadIdx.x == 0) {
      const launch_result r =
          launch_step(ctx, sites::qs_fast_scatter, dim3(t->grid), dim3(child_pass_threads),
                      scatter_body<child_pass_threads>{a, t}, t->size);
      // not launched: the range, not moved yet, is sorted by one block of the drain grid
      if (!r) enqueue(ctx, a, small_job{t->begin, t->size, t->which});
    }
    }
  }

  /// The count and scatter passes stream keys: enough resident blocks matter more than the
  /// registers of their rare paths. The host-launched count kernel (256 threads) holds no
  /// scatter (about 40 registers): six blocks per SM; host_driven's scatter (about 72): three.
  /// The device-launched passes have blocks of child_pass_threads (one per SM: 64 registers).
  static constexpr unsigned int count_min_blocks = 6;
  static constexpr unsigned int pass_min_blocks = 3;
  template <unsigned int BlockThreads, unsigned int MinBlocks>
  static constexpr unsigned int min_blocks_for = BlockThreads == block_threads ? MinBlocks : 1;

  template <unsigned int BlockThreads>
  struct scatter_body {
    static constexpr unsigned int max_block_threads = BlockThreads;
    static constexpr unsigned int min_blocks_per_sm = min_blocks_for<BlockThreads, pass_min_blocks>;
    args_t a;
    task_t* t;
    __device__ void operator()(const launch_context& self) const {
      scatter_block<true, BlockThreads>(self, a, t, blockIdx.x);
    }
  };

  // -- 3. scatter ------------------------------------------------------------------------------
  template <bool InGrid, unsigned int BlockThreads = block_threads>
  __device__ static void scatter_block(const launch_context& ctx, const args_t& a, task_t* t,
                                       std::uint32_t blk) {
    partition_storage<BlockThreads>& s = partition_shared<BlockThreads>();
    __syncthreads();  // (the storage may still be read by the caller's previous step)
    if (threadIdx.x == 0) s.split.levels = t->levels;
    __syncthreads();
    const unsigned int m = s.split.splitters();
    const unsigned int buckets = s.split.buckets();
    for (unsigned int i = threadIdx.x; i < m; i += BlockThreads) {
      s.split.sorted[i] = record_keys<T>(t->sorted)[i];
      s.split.tree[i + 1] = record_keys<T>(t->tree)[i + 1];
    }
    const std::uint32_t* offsets = a.arena + t->arena + std::uint64_t{blk} * buckets;
    for (unsigned int b = threadIdx.x; b < buckets; b += BlockThreads)
      s.count[b] = t->start[b] + offsets[b];
    __syncthreads();
    queue::template scatter_share<BlockThreads>(s.temp.pass, s.split, a, t->which, t->begin, t->size,
                                                blk, s.count, buckets);
    if constexpr (!InGrid) {
      __syncthreads();
    } else {
      if (last_block_to_arrive(&t->scatter_done, t->grid, s.last)) spawn<BlockThreads>(ctx, a, t);
    }
  }

  // -- 4. the next level -----------------------------------------------------------------------

  template <unsigned int BlockThreads>
  struct count_body {
    static constexpr unsigned int max_block_threads = BlockThreads;
    static constexpr unsigned int min_blocks_per_sm = min_blocks_for<BlockThreads, count_min_blocks>;
    args_t a;
    task_t* t;
    __device__ void operator()(const launch_context& self) const {
      count_block<true, BlockThreads>(self, a, t, blockIdx.x);
    }
  };

  /// Take a task record and arena words for a range; null when the pool or the arena is full.
  __device__ static task_t* new_task(const args_t& a, std::uint32_t begin, std::uint32_t n,
                                     std::uint32_t which) {
    const std::uint32_t wanted = partition_buckets(n, grid_bucket_target);
    const unsigned int levels = tree_levels(wanted);
    const std::uint32_t buckets = 2 * ((1u << levels) - 1) + 1;
    const std::uint32_t grid = partition_grid(n);
    std::uint32_t at = 0;
    task_t* t = queue::take_task(a, std::uint64_t{grid} * buckets, &at);
    if (t == nullptr) return nullptr;
    const auto id = static_cast<std::uint32_t>(t - a.tasks);
    t->begin = begin;
    t->size = n;
    t->grid = grid;
    t->arena = at;
    t->id = id;
    t->count_done = 0;
    t->scatter_done = 0;
    t->which = static_cast<std::uint8_t>(which);
    t->levels = static_cast<std::uint8_t>(levels);
    t->wanted = static_cast<std::uint16_t>(wanted);
    for (unsigned int b = 0; b < buckets; ++b) t->count[b] = 0;
    return t;
  }

  /// Run by one whole block once task t is partitioned: a thread per bucket queues a small one
  /// and asks for a large one's child grid (a task, or a copy grid for a run of equal keys);
  /// what is not launched is queued as well.
  template <unsigned int BlockThreads>
  __device__ static void spawn(const launch_context& ctx, const args_t& a, task_t* t) {
    const unsigned int buckets = 2 * ((1u << t->levels) - 1) + 1;
    const std::uint32_t to = 1 - t->which;
    // every thread takes the same number of rounds (a bucket or none in each): place_bucket
    // keeps a warp's launch requests converged
    for (unsigned int first = 0; first < buckets; first += BlockThreads) {
      const unsigned int b = first + threadIdx.x;
      const bool mine = b < buckets;
      const std::uint32_t begin = mine ? t->begin + t->start[b] : 0;
      const std::uint32_t n = mine ? t->start[b + 1] - t->start[b] : 0;
      const bucket_action action = mine ? action_of(b, n, to) : bucket_action::none;
      queue::place_bucket(ctx, a, action, begin, n, to | (b % 2 == 1 ? 2u : 0u), sites::qs_fast_copy, [&] {
        task_t* child = new_task(a, begin, n, to);
        return child != nullptr &&
               static_cast<bool>(launch_child(ctx, sites::qs_fast_range, dim3(child->grid),
                                              dim3(child_pass_threads), stream_kind::fire_and_forget,
                                              count_body<child_pass_threads>{a, child}, 0u, n));
      });
    }
  }
};

// ---- thin kernels ------------------------------------------------------------------------------

/// Root task record: the whole range in buffer 0, and an empty queue. (The root's count grid,
/// bounded_child_entry_kernel<count_body<block_threads>>, is launched by the host with the root
/// context; the children's count grids are count_body<child_pass_threads>.)
template <class T, class V, class Compare>
__global__ void __launch_bounds__(block_threads)
    fast_init_kernel(fast_args<T, V, Compare> a, std::uint32_t n) {
  using task_t = typename fast_agent<T, V, Compare>::task_t;
  task_t* t = a.tasks;
  const std::uint32_t wanted = partition_buckets(n, grid_bucket_target);
  const unsigned int levels = tree_levels(wanted);
  const unsigned int buckets = 2 * ((1u << levels) - 1) + 1;
  for (unsigned int b = threadIdx.x; b < buckets; b += block_threads) t->count[b] = 0;
  if (threadIdx.x == 0) {
    const std::uint32_t grid = partition_grid(n);
    t->begin = 0;
    t->size = n;
    t->grid = grid;
    t->arena = 0;
    t->id = 0;
    t->count_done = 0;
    t->scatter_done = 0;
    t->which = 0;
    t->levels = static_cast<std::uint8_t>(levels);
    t->wanted = static_cast<std::uint16_t>(wanted);
    start_counters(a.counters, grid * buckets);
  }
}


}  // namespace cdpkit::quicksort_detail
