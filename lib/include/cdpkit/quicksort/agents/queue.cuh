#pragma once
// cdpkit/quicksort/agents/queue.cuh — what the grid recursions (fast's sample partitions, radix's
// digit passes) share: the arguments their grids carry, and the queue of small ranges that ONE
// drain grid sorts once the recursion is done (aggregation: thousands of small ranges cost no
// launch at all and run as one full grid), together with the copy grid that moves a large run of
// equal keys home.

#include <cdpkit/quicksort/agents/common.cuh>

namespace cdpkit::quicksort_detail {

/// What a grid of a recursion reads: the buffers, its task records (Task: fast_task or
/// radix_task), the per-block bucket offsets arena, the small-range queue and its counters.
template <class T, class V, class Compare, class Task>
struct partition_args {
  sort_buffers<T, V> buf;
  Task* tasks;
  std::uint32_t task_capacity;
  std::uint32_t* arena;
  std::uint32_t arena_capacity;  ///< words
  scratch_counters* counters;
  small_job* jobs;
  std::uint32_t job_capacity;
  std::uint64_t seed;  ///< of the block sorts' samples
  Compare comp;
};

/// The keys [lo, hi) of a task of `size` keys that block `blk` of its count or scatter grid takes.
struct block_share {
  std::uint64_t lo, hi;
};
__device__ __forceinline__ block_share share_of_block(std::uint32_t blk, std::uint32_t size) {
  const std::uint64_t lo = std::uint64_t{blk} * grid_keys_per_block;
  return {lo, lo + grid_keys_per_block < size ? lo + grid_keys_per_block : size};
}

/// The queue's counters for a recursion whose root task (record 0) holds `arena_used` words of
/// the offsets arena. One thread calls, from the root's init kernel.
__device__ __forceinline__ void start_counters(scratch_counters* c, std::uint32_t arena_used) {
  c->tasks_used = 1;
  c->arena_used = arena_used;
  c->jobs_used = 0;
  c->small_keys = 0;
  c->drain_next = 0;
}

/// What happens to a bucket of a finished partition or digit pass: nothing, a job of the drain
/// grid (a sort, or a copy of equal keys home), a child grid, or a copy grid.
enum class bucket_action : std::uint8_t { none, small_sort, small_copy, child_task, copy_grid };

/// The small-range queue of a recursion whose grids carry Args (a partition_args); Sorter sorts
/// a job's range with one block (block_sorter, or radix's digit passes).
template <class T, class V, class Compare, class Args, class Sorter = block_sorter<T, V, Compare>>
struct small_queue {
  using sorter = Sorter;

  /// The drain's block sorts (latency-bound: three resident blocks per SM overlap them).
  static constexpr unsigned int sort_min_blocks = 3;
  __device__ static typename sorter::storage& sorter_shared() {
    __shared__ typename sorter::storage s;
    return s;
  }

  /// One small range of the queue, by the whole block.
  __device__ static void run_job(const launch_context& ctx, const Args& a, const small_job& j) {
    if (j.which_copy & 2u) {
      block_copy_to_result(a.buf, j.which_copy & 1u, j.begin, j.size);
      __syncthreads();
    } else {
      sorter::run_job(sorter_shared(), ctx, a.buf, j, a.seed, a.comp);
      __syncthreads();
    }
  }

  /// A grid whose block k runs job k of the queue, or (one block) `only`: a whole sort of at
  /// most a medium range (and host_driven's small buckets of a level).
  struct drain_body {
    static constexpr unsigned int max_block_threads = block_threads;
    static constexpr unsigned int min_blocks_per_sm = sort_min_blocks;
    Args a;
    small_job only;
    bool use_only;
    __device__ void operator()(const launch_context& self) const {
      run_job(self, a, use_only ? only : a.jobs[blockIdx.x]);
    }
  };

  /// Queue a job for the drain grid (any thread). The queue is sized for every bucket of every
  /// task record, so it never fills; should it, the job is lost: device_error_queue_overflow.
  __device__ static void enqueue(const launch_context& ctx, const Args& a, const small_job& job) {
    const std::uint32_t k = atomicAdd(&a.counters->jobs_used, 1u);
    if (k >= a.job_capacity) {
      raise_device_error(ctx, device_error_queue_overflow);
      return;
    }
    a.jobs[k] = job;
    atomicAdd(&a.counters->small_keys, job.size);
  }

  /// The drain grid's blocks: each takes the next job of the queue until none is left
  /// (dynamic: the jobs range from one key to a medium range, or more after a fallback).
  __device__ static void drain(const launch_context& ctx, const Args& a) {
    __shared__ std::uint32_t k;
    const std::uint32_t jobs = a.counters->jobs_used < a.job_capacity ? a.counters->jobs_used
                                                                      : a.job_capacity;
    for (;;) {
      if (threadIdx.x == 0) k = atomicAdd(&a.counters->drain_next, 1u);
      __syncthreads();
      const std::uint32_t mine = k;
      if (mine >= jobs) return;
      run_job(ctx, a, a.jobs[mine]);  // (synchronizes before k is written again)
    }
  }

  /// A free task record, and `words` words of the offsets arena from `*at`; null when the pool
  /// or the arena is full. Any thread.
  __device__ static auto take_task(const Args& a, std::uint64_t words, std::uint32_t* at)
      -> decltype(a.tasks) {
    const std::uint32_t id = atomicAdd(&a.counters->tasks_used, 1u);
    if (id >= a.task_capacity) return nullptr;
    if (words > a.arena_capacity) return nullptr;
    *at = atomicAdd(&a.counters->arena_used, static_cast<std::uint32_t>(words));
    if (std::uint64_t{*at} + words > a.arena_capacity) return nullptr;
    return a.tasks + id;
  }

  /// Block `blk`'s share of a task's scatter: its keys (and values) of [begin, begin + size) in
  /// buffer `which` go to the same range of the other buffer, bucket b's from cursor[b] on (the
  /// bucket's start plus the block's offset in it; shared memory). Every thread calls.
  template <unsigned int BlockThreads, class Classifier>
  __device__ static void scatter_share(typename partition_pass<T, V, Compare, BlockThreads>::storage& st,
                                       const Classifier& split, const Args& a, std::uint32_t which,
                                       std::uint32_t begin, std::uint32_t size, std::uint32_t blk,
                                       std::uint32_t* cursor, unsigned int buckets) {
    const std::uint32_t to = 1 - which;
    const block_share share = share_of_block(blk, size);
    const V* src_values = nullptr;
    V* dst_values = nullptr;
    if constexpr (has_values<V>) {
      src_values = a.buf.values[which] + begin;
      dst_values = a.buf.values[to] + begin;
    }
    partition_pass<T, V, Compare, BlockThreads>::scatter(st, split, a.buf.keys[which] + begin, src_values,
                                                         a.buf.keys[to] + begin, dst_values, share.lo,
                                                         share.hi, cursor, buckets, a.comp);
  }

  /// A grid copying a run of equal keys [begin, begin + n) of buffer 1 home (site `site`);
  /// whether it was launched. Any thread.
  __device__ static bool launch_copy(const launch_context& ctx, const Args& a, std::uint16_t site,
                                     std::uint32_t begin, std::uint32_t n) {
    return static_cast<bool>(launch_items(ctx, site, n, block_threads, stream_kind::fire_and_forget,
                                          copy_items{a.buf, begin}));
  }

  /// One bucket of a finished pass, by every thread of a spawning block (a bucket or none each:
  /// `action`): task grids first (launch_task(), which says whether one was launched), then copy
  /// grids, so that a warp's lanes ask for launches from converged code (docs/design.md,
  /// "Launches from divergent lanes"); a bucket not launched becomes a drain job (`job_word`).
  template <class LaunchTask>
  __device__ static void place_bucket(const launch_context& ctx, const Args& a, bucket_action action,
                                      std::uint32_t begin, std::uint32_t n, std::uint32_t job_word,
                                      std::uint16_t copy_site, const LaunchTask& launch_task) {
    bool launched = false;
    __syncwarp();
    if (action == bucket_action::child_task) launched = launch_task();
    __syncwarp();
    if (action == bucket_action::copy_grid) launched = launch_copy(ctx, a, copy_site, begin, n);
    // small, or not launched: a job of the drain grid
    if (action != bucket_action::none && !launched) enqueue(ctx, a, small_job{begin, n, job_word});
  }

  /// Copy [begin, begin + n) of buffer 1 home (a copy grid's items).
  struct copy_items {
    sort_buffers<T, V> buf;
    std::uint32_t begin;
    __device__ void operator()(const launch_context&, std::uint64_t k) const {
      buf.keys[0][begin + k] = buf.keys[1][begin + k];
      if constexpr (has_values<V>) buf.values[0][begin + k] = buf.values[1][begin + k];
    }
  };
};

/// The drain grid of a recursion: launched by the host right after the root's count grid on the
/// same stream, so it starts once the whole recursion (every descendant grid) is complete.
template <class Queue, class Args>
__global__ void __launch_bounds__(block_threads, Queue::sort_min_blocks)
    drain_kernel(launch_context ctx, Args a) {
  Queue::drain(ctx, a);
}

}  // namespace cdpkit::quicksort_detail
