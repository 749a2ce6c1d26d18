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
//      step at the same depth (launch_step, site quicksort.fast_scatter);
//   3. scatter grid: every block classifies its keys again and writes each one to its bucket in
//      the other buffer, at a position from a shared-memory cursor (one atomic per warp and
//      bucket);
//   4. the scatter grid's last block spawns the next level: a child task per bucket larger than
//      a medium range (depth + 1), a copy grid per large run of equal keys that must move home,
//      and ONE grid over all the other buckets (site quicksort.fast_small: a block per bucket,
//      block_sort_range) — aggregation, so the many small ranges cost one pending launch.
//
// Keys equal to a splitter form their own bucket, which is never sorted again: duplicates never
// deepen the recursion. Whenever the launch layer refuses a launch (budget, depth, error) or
// the task pool is exhausted, the block that asked does the work itself (block_sort_range, the
// scatter loop, a block copy): slower, never wrong.

#include <cdpkit/quicksort/agents/common.cuh>

namespace cdpkit::quicksort_detail {

/// Storage type of the task records: the key's size and alignment.
template <class T>
using key_storage_t = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;

template <class T, class V, class Compare>
struct fast_args {
  sort_buffers<T, V> buf;
  fast_task<key_storage_t<T>>* tasks;
  std::uint32_t task_capacity;
  std::uint32_t* arena;
  std::uint32_t arena_capacity;
  scratch_counters* counters;
  std::uint64_t seed;
  Compare comp;
};

/// The task record's splitters seen as keys.
template <class T>
__device__ __forceinline__ T* record_keys(key_storage_t<T>* p) {
  return reinterpret_cast<T*>(p);
}

/// What happens to bucket b of a finished partition (the same rule for the spawner and the
/// small grid, so that each bucket is handled exactly once).
enum class bucket_action : std::uint8_t { none, small_sort, small_copy, child_task, copy_grid };

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
struct fast_agent {
  using args_t = fast_args<T, V, Compare>;
  using task_t = fast_task<key_storage_t<T>>;
  using sorter = block_sorter<T, V, Compare>;

  struct partition_storage {
    union {
      typename sample_sort<T, Compare>::temp_storage sample;
      typename partition_pass<T, V, Compare>::storage pass;
    } temp;
    splitter_set<T> split;
    std::uint32_t count[max_buckets];
    bool last;
  };
  /// A block runs the block sorts (inline paths, the small grid) only after its own partition
  /// steps are done: the two storages share the same shared memory.
  union shared_storage {
    partition_storage partition;
    typename sorter::storage sort;
  };
  __device__ static shared_storage& shared() {
    __shared__ shared_storage s;
    return s;
  }

  /// The count and scatter steps share one partition storage (a block that does the scatter
  /// itself after its count reuses it).
  __device__ static partition_storage& partition_shared() { return shared().partition; }
  __device__ static typename sorter::storage& sorter_shared() { return shared().sort; }

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

  /// Count block `blk` of task t. In a grid launched through the layer (in_grid), the last block
  /// to finish goes on with the scan and the scatter step; host_driven runs those itself.
  __device__ static void count_block(const launch_context& ctx, const args_t& a, task_t* t,
                                     std::uint32_t blk, bool in_grid = true) {
    partition_storage& s = partition_shared();
    const T* src = a.buf.keys[t->which] + t->begin;
    sample_sort<T, Compare>::run(s.temp.sample, s.split, src, t->size, t->wanted, a.seed, t->id,
                                 a.comp);
    const unsigned int buckets = s.split.buckets();
    if (blk == 0) {
      for (unsigned int i = threadIdx.x; i < s.split.splitters(); i += block_threads) {
        record_keys<T>(t->sorted)[i] = s.split.sorted[i];
        record_keys<T>(t->tree)[i + 1] = s.split.tree[i + 1];
      }
    }
    for (unsigned int b = threadIdx.x; b < buckets; b += block_threads) s.count[b] = 0;
    __syncthreads();
    const std::uint64_t lo = std::uint64_t{blk} * grid_keys_per_block;
    const std::uint64_t hi = lo + grid_keys_per_block < t->size ? lo + grid_keys_per_block : t->size;
    partition_pass<T, V, Compare>::count(ctx, s.split, src, lo, hi, s.count, a.comp);
    __syncthreads();
    // one atomic per bucket and block; the old value is this block's offset inside the bucket
    std::uint32_t* offsets = a.arena + t->arena + std::uint64_t{blk} * buckets;
    for (unsigned int b = threadIdx.x; b < buckets; b += block_threads)
      if (s.count[b] != 0) offsets[b] = atomicAdd(&t->count[b], s.count[b]);
    if (!in_grid) {
      __syncthreads();
      return;
    }
    if (!last_block(&t->count_done, t->grid, s.last)) return;
    // 2. the last block: bucket starts, then the scatter as the next step of this level
    scan_counts(t);
    const args_t args = a;
    const launch_result r = launch_step_once(ctx, args, t);
    if (!r) {
      // not launched: this block scatters the whole range itself, then spawns the next level
      for (std::uint32_t b = 0; b < t->grid; ++b) scatter_block(ctx, a, t, b, false);
      record_inline(ctx, sites::qs_fast_scatter, t->size);
      spawn(ctx, a, t);
    }
  }

  /// True in the block that finished last (all threads of the block get the answer).
  __device__ static bool last_block(std::uint32_t* done, std::uint32_t grid, bool& flag) {
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      flag = atomicAdd(done, 1u) == grid - 1;
      if (flag) __threadfence();
    }
    __syncthreads();
    return flag;
  }

  __device__ static void record_inline(const launch_context& ctx, std::uint16_t site,
                                       std::uint64_t n) {
    if (threadIdx.x == 0) record_inline_items(ctx, site, n);
  }

  /// The count and scatter passes stream keys: enough resident blocks matter more than the
  /// registers of their rare inline paths.
  static constexpr unsigned int pass_min_blocks = 3;
  /// The block sorts (partitions and tile sorts in shared memory) are latency-bound: three
  /// resident blocks per SM overlap them.
  static constexpr unsigned int sort_min_blocks = 3;

  struct scatter_body {
    static constexpr unsigned int max_block_threads = block_threads;
    static constexpr unsigned int min_blocks_per_sm = pass_min_blocks;
    args_t a;
    task_t* t;
    __device__ void operator()(const launch_context& self) const {
      scatter_block(self, a, t, blockIdx.x, true);
    }
  };

  /// Thread 0 asks for the scatter grid; every thread gets the outcome.
  __device__ static launch_result launch_step_once(const launch_context& ctx, const args_t& a,
                                                   task_t* t) {
    __shared__ launch_result result;
    if (threadIdx.x == 0)
      result = launch_step(ctx, sites::qs_fast_scatter, dim3(t->grid), dim3(block_threads),
                           scatter_body{a, t}, t->size);
    __syncthreads();
    const launch_result r = result;
    __syncthreads();
    return r;
  }

  // -- 3. scatter ------------------------------------------------------------------------------
  __device__ static void scatter_block(const launch_context& ctx, const args_t& a, task_t* t,
                                       std::uint32_t blk, bool in_grid) {
    partition_storage& s = partition_shared();
    __syncthreads();  // (the storage may still be read by the caller's previous step)
    if (threadIdx.x == 0) s.split.levels = t->levels;
    __syncthreads();
    const unsigned int m = s.split.splitters();
    const unsigned int buckets = s.split.buckets();
    for (unsigned int i = threadIdx.x; i < m; i += block_threads) {
      s.split.sorted[i] = record_keys<T>(t->sorted)[i];
      s.split.tree[i + 1] = record_keys<T>(t->tree)[i + 1];
    }
    const std::uint32_t* offsets = a.arena + t->arena + std::uint64_t{blk} * buckets;
    for (unsigned int b = threadIdx.x; b < buckets; b += block_threads)
      s.count[b] = t->start[b] + offsets[b];  // (garbage for buckets this block has no key of)
    __syncthreads();
    const std::uint32_t from = t->which, to = 1 - t->which;
    const std::uint64_t lo = std::uint64_t{blk} * grid_keys_per_block;
    const std::uint64_t hi = lo + grid_keys_per_block < t->size ? lo + grid_keys_per_block : t->size;
    const V* src_values = nullptr;
    V* dst_values = nullptr;
    if constexpr (has_values<V>) {
      src_values = a.buf.values[from] + t->begin;
      dst_values = a.buf.values[to] + t->begin;
    }
    partition_pass<T, V, Compare>::scatter(s.temp.pass, s.split, a.buf.keys[from] + t->begin,
                                           src_values, a.buf.keys[to] + t->begin, dst_values, lo,
                                           hi, s.count, buckets, a.comp);
    if (!in_grid) {
      __syncthreads();
      return;
    }
    if (last_block(&t->scatter_done, t->grid, s.last)) spawn(ctx, a, t);
  }

  // -- 4. the next level -----------------------------------------------------------------------
  struct small_body {
    static constexpr unsigned int max_block_threads = block_threads;
    static constexpr unsigned int min_blocks_per_sm = sort_min_blocks;
    args_t a;
    task_t* t;
    __device__ void operator()(const launch_context& self) const {
      small_bucket(self, a, t, blockIdx.x);
    }
  };

  struct count_body {
    static constexpr unsigned int max_block_threads = block_threads;
    static constexpr unsigned int min_blocks_per_sm = pass_min_blocks;
    args_t a;
    task_t* t;
    __device__ void operator()(const launch_context& self) const {
      count_block(self, a, t, blockIdx.x);
    }
  };

  /// Block b of the small grid: bucket b of task t, when it is small.
  __device__ static void small_bucket(const launch_context& ctx, const args_t& a, const task_t* t,
                                      unsigned int b) {
    typename sorter::storage& s = sorter_shared();
    const std::uint32_t to = 1 - t->which;
    const std::uint32_t begin = t->start[b], n = t->start[b + 1] - begin;
    switch (action_of(b, n, to)) {
      case bucket_action::small_sort:
        sorter::run(s, ctx, a.buf, to, t->begin + begin, n, a.seed, a.comp);
        break;
      case bucket_action::small_copy: block_copy_to_result(a.buf, to, t->begin + begin, n); break;
      default: break;
    }
  }

  /// Take a task record and arena words for a range; null when the pool or the arena is full.
  __device__ static task_t* new_task(const args_t& a, std::uint32_t begin, std::uint32_t n,
                                     std::uint32_t which) {
    const std::uint32_t id = atomicAdd(&a.counters->tasks_used, 1u);
    if (id >= a.task_capacity) return nullptr;
    const std::uint32_t wanted = partition_buckets(n, grid_bucket_target);
    const unsigned int levels = tree_levels(wanted);
    const std::uint32_t buckets = 2 * ((1u << levels) - 1) + 1;
    const std::uint32_t grid = partition_grid(n);
    const std::uint64_t words = std::uint64_t{grid} * buckets;
    if (words > a.arena_capacity) return nullptr;
    const std::uint32_t at = atomicAdd(&a.counters->arena_used, static_cast<std::uint32_t>(words));
    if (std::uint64_t{at} + words > a.arena_capacity) return nullptr;
    task_t* t = a.tasks + id;
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

  /// Copy [begin, begin + n) of buffer 1 home (a copy grid's items).
  struct copy_items {
    sort_buffers<T, V> buf;
    std::uint32_t begin;
    __device__ void operator()(const launch_context&, std::uint64_t k) const {
      buf.keys[0][begin + k] = buf.keys[1][begin + k];
      if constexpr (has_values<V>) buf.values[0][begin + k] = buf.values[1][begin + k];
    }
  };

  /// Run by one whole block once task t is partitioned: its buckets' children.
  __device__ static void spawn(const launch_context& ctx, const args_t& a, task_t* t) {
    __shared__ bool done_inline[max_buckets];
    __shared__ bool any_small;
    __shared__ std::uint32_t small_keys;
    __shared__ launch_result small_result;
    const unsigned int buckets = 2 * ((1u << t->levels) - 1) + 1;
    const std::uint32_t to = 1 - t->which;
    if (threadIdx.x == 0) {
      any_small = false;
      small_keys = 0;
    }
    __syncthreads();
    // a. large buckets: a thread each asks for its child (task or copy grid)
    for (unsigned int b = threadIdx.x; b < buckets; b += block_threads) {
      done_inline[b] = false;
      const std::uint32_t begin = t->begin + t->start[b];
      const std::uint32_t n = t->start[b + 1] - t->start[b];
      switch (action_of(b, n, to)) {
        case bucket_action::small_sort:
        case bucket_action::small_copy:
          any_small = true;
          atomicAdd(&small_keys, n);
          break;
        case bucket_action::child_task: {
          task_t* child = new_task(a, begin, n, to);
          if (child == nullptr ||
              !launch_child(ctx, sites::qs_fast_range, dim3(child->grid), dim3(block_threads),
                            stream_kind::fire_and_forget, count_body{a, child}, 0u, n))
            done_inline[b] = true;
          break;
        }
        case bucket_action::copy_grid:
          if (!launch_items(ctx, sites::qs_fast_copy, n, block_threads,
                            stream_kind::fire_and_forget, copy_items{a.buf, begin}))
            done_inline[b] = true;
          break;
        default: break;
      }
    }
    __syncthreads();
    // b. one grid over all the small buckets
    if (threadIdx.x == 0) {
      small_result = {launch_outcome::launched, cudaSuccess};
      if (any_small)
        small_result = launch_child(ctx, sites::qs_fast_small, dim3(buckets), dim3(block_threads),
                                    stream_kind::fire_and_forget, small_body{a, t}, 0u,
                                    small_keys);
    }
    __syncthreads();
    const bool small_launched = static_cast<bool>(small_result);
    // c. what was not launched, this block does now
    for (unsigned int b = 0; b < buckets; ++b) {
      const std::uint32_t begin = t->start[b];
      const std::uint32_t n = t->start[b + 1] - begin;
      const bucket_action act = action_of(b, n, to);
      const bool small = act == bucket_action::small_sort || act == bucket_action::small_copy;
      if (small ? small_launched : !done_inline[b]) continue;
      const bool copy = act == bucket_action::small_copy || act == bucket_action::copy_grid;
      if (copy) {
        block_copy_to_result(a.buf, to, t->begin + begin, n);
        __syncthreads();
      } else {
        run_inline(ctx, a, to, t->begin + begin, n);
      }
      record_inline(ctx, copy ? sites::qs_fast_copy
                              : (small ? sites::qs_fast_small : sites::qs_fast_range),
                    n);
    }
  }

  __device__ static void run_inline(const launch_context& ctx, const args_t& a, std::uint32_t which,
                                    std::uint32_t begin, std::uint32_t n) {
    typename sorter::storage& s = sorter_shared();
    sorter::run(s, ctx, a.buf, which, begin, n, a.seed, a.comp);
    __syncthreads();
  }
};

// ---- thin kernels ------------------------------------------------------------------------------

/// Root task record: the whole range in buffer 0.
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
    a.counters->tasks_used = 1;
    a.counters->arena_used = grid * buckets;
  }
}

/// The root task's count grid (host-launched, depth 0).
template <class T, class V, class Compare>
__global__ void __launch_bounds__(block_threads, fast_agent<T, V, Compare>::pass_min_blocks)
    fast_root_kernel(launch_context ctx, fast_args<T, V, Compare> a) {
  fast_agent<T, V, Compare>::count_block(ctx, a, a.tasks, blockIdx.x);
}

/// One block sorts one whole range (inputs of at most a medium range; no child grids).
template <class T, class V, class Compare>
__global__ void __launch_bounds__(block_threads, fast_agent<T, V, Compare>::sort_min_blocks)
    block_sort_kernel(launch_context ctx, sort_buffers<T, V> buf, std::uint32_t n,
                      std::uint64_t seed, Compare comp) {
  auto& s = fast_agent<T, V, Compare>::sorter_shared();
  block_sorter<T, V, Compare>::run(s, ctx, buf, 0, 0, n, seed, comp);
}

}  // namespace cdpkit::quicksort_detail
