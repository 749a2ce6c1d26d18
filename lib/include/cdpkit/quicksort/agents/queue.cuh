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

/// What happens to a bucket of a finished partition or digit pass: nothing, a job of the drain
/// grid (a sort, or a copy of equal keys home), a child grid, or a copy grid.
enum class bucket_action : std::uint8_t { none, small_sort, small_copy, child_task, copy_grid };

/// The small-range queue of a recursion whose grids carry Args (a partition_args).
template <class T, class V, class Compare, class Args>
struct small_queue {
  using sorter = block_sorter<T, V, Compare>;

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
      sorter::run(sorter_shared(), ctx, a.buf, j.which_copy & 1u, j.begin, j.size, a.seed,
                  a.comp);
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
template <class T, class V, class Compare, class Task>
__global__ void __launch_bounds__(block_threads,
                                  small_queue<T, V, Compare, partition_args<T, V, Compare, Task>>::sort_min_blocks)
    drain_kernel(launch_context ctx, partition_args<T, V, Compare, Task> a) {
  small_queue<T, V, Compare, partition_args<T, V, Compare, Task>>::drain(ctx, a);
}

}  // namespace cdpkit::quicksort_detail
