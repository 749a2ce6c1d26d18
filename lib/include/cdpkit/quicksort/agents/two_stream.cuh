#pragma once
// cdpkit/quicksort/agents/two_stream.cuh — the `two_stream` variant, after NVIDIA's
// cdpAdvancedQuicksort, through the launch layer:
//
//   1. a grid partitions a range around its middle key into the other buffer, 2-way: each warp
//      takes a ballot of "x < pivot" over 32 keys and claims its places on the left (from the
//      range's front) and on the right (from its back) with one atomic each;
//   2. the grid's last block launches the two sides as children, each in a named stream of its
//      own (site quicksort.two_stream_side), or, for a side of a tile or less, a one-block sort
//      in shared memory (site quicksort.two_stream_leaf);
//   3. duplicates: when nothing lies below the pivot, the pivot is the range's minimum and the
//      range is partitioned again by "x <= pivot": its left side is then all equal keys, done.
//      (NVIDIA's sample has no such rule; many duplicates deepen its recursion.)
//
// A side that is not launched (budget, depth cap, launch error, task pool full) is sorted by the
// last block itself (block_sort_range): the recursion is capped and never loses work.

#include <cdpkit/quicksort/agents/common.cuh>

namespace cdpkit::quicksort_detail {

/// Keys each block of a two_stream partition grid takes.
inline constexpr std::uint32_t two_stream_keys_per_block = 4096;

template <class T, class V, class Compare>
struct two_stream_args {
  sort_buffers<T, V> buf;
  two_stream_task<std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>>* tasks;
  std::uint32_t task_capacity;
  scratch_counters* counters;
  std::uint64_t seed;
  Compare comp;
};

template <class T, class V, class Compare>
struct two_stream_agent {
  using args_t = two_stream_args<T, V, Compare>;
  using task_t = std::remove_pointer_t<decltype(args_t::tasks)>;
  using sorter = block_sorter<T, V, Compare>;

  __device__ static T& pivot_of(task_t* t) { return *reinterpret_cast<T*>(&t->pivot); }

  __host__ __device__ static std::uint32_t grid_of(std::uint32_t n) {
    return static_cast<std::uint32_t>((std::uint64_t{n} + two_stream_keys_per_block - 1) /
                                      two_stream_keys_per_block);
  }

  /// A task record for [begin, begin + n) of buffer `which`, pivot given; null when full.
  __device__ static task_t* new_task(const args_t& a, std::uint32_t begin, std::uint32_t n,
                                     std::uint32_t which, const T& pivot, bool or_equal) {
    const std::uint32_t id = atomicAdd(&a.counters->tasks_used, 1u);
    if (id >= a.task_capacity) return nullptr;
    task_t* t = a.tasks + id;
    t->begin = begin;
    t->size = n;
    t->grid = grid_of(n);
    t->left = 0;
    t->right = 0;
    t->done = 0;
    t->which = static_cast<std::uint8_t>(which);
    t->or_equal = or_equal ? 1 : 0;
    pivot_of(t) = pivot;
    return t;
  }

  struct partition_body {
    args_t a;
    task_t* t;
    __device__ void operator()(const launch_context& self) const {
      partition_block(self, a, t, blockIdx.x);
    }
  };

  struct leaf_body {
    static constexpr unsigned int max_block_threads = block_threads;
    static constexpr unsigned int min_blocks_per_sm = 3;
    sort_buffers<T, V> buf;
    std::uint32_t which, begin, n;
    Compare comp;
    __device__ void operator()(const launch_context&) const {
      __shared__ typename tile_sort<T, V, Compare>::temp_storage temp;
      tile_sort<T, V, Compare>::run(temp, buf, which, begin, n, comp);
    }
  };

  __device__ static typename sorter::storage& sorter_shared() {
    __shared__ typename sorter::storage s;
    return s;
  }

  // 1. the partition of block `blk`
  __device__ static void partition_block(const launch_context& ctx, const args_t& a, task_t* t,
                                         std::uint32_t blk) {
    __shared__ bool last;
    const T pivot = pivot_of(t);
    const bool or_equal = t->or_equal != 0;
    const std::uint32_t from = t->which, to = 1 - t->which;
    const T* src = a.buf.keys[from] + t->begin;
    T* dst = a.buf.keys[to] + t->begin;
    const std::uint64_t lo = std::uint64_t{blk} * two_stream_keys_per_block;
    const std::uint64_t hi =
        lo + two_stream_keys_per_block < t->size ? lo + two_stream_keys_per_block : t->size;
    {
      warp_probe probe(ctx, sites::qs_partition_probe);
      // (a warp's lanes start at consecutive keys, block_threads >= 32 apart: two trip counts at most)
      static_assert(block_threads >= 32, "a warp's strided trip counts take two values at most");
      probe.steps_two_valued(static_cast<unsigned int>(strided_trip_count(lo + threadIdx.x, hi, block_threads)));
      for (std::uint64_t i = lo + threadIdx.x; i < hi; i += block_threads) {
        const T x = src[i];
        const bool left = or_equal ? !a.comp(pivot, x) : a.comp(x, pivot);
        const unsigned int active = __activemask();
        const unsigned int ballot = __ballot_sync(active, left);
        const unsigned int lane = lane_id();
        const unsigned int leader = __ffs(active) - 1;
        const unsigned int below = (1u << lane) - 1u;
        const unsigned int n_left = __popc(ballot);
        std::uint32_t lbase = 0, rbase = 0;
        if (lane == leader) {
          lbase = atomicAdd(&t->left, n_left);
          rbase = atomicAdd(&t->right, static_cast<unsigned int>(__popc(active)) - n_left);
        }
        lbase = __shfl_sync(active, lbase, leader);
        rbase = __shfl_sync(active, rbase, leader);
        const std::uint32_t pos =
            left ? lbase + __popc(ballot & below)
                 : t->size - 1 - (rbase + __popc(active & ~ballot & below));
        dst[pos] = x;
        if constexpr (has_values<V>)
          a.buf.values[to][t->begin + pos] = a.buf.values[from][t->begin + i];
      }
      probe.commit();
    }
    if (last_block_to_arrive(&t->done, t->grid, last)) spawn(ctx, a, t);
  }

  // 2. the two sides
  __device__ static void spawn(const launch_context& ctx, const args_t& a, task_t* t) {
    __shared__ bool side_inline[2];
    __shared__ std::uint32_t side_begin[2], side_n[2];
    __shared__ bool equal_left;
    const std::uint32_t to = 1 - t->which;
    if (threadIdx.x == 0) {
      const std::uint32_t n_left = __ldcg(&t->left);
      side_begin[0] = t->begin;
      side_n[0] = n_left;
      side_begin[1] = t->begin + n_left;
      side_n[1] = t->size - n_left;
      // or_equal: the left side holds keys equal to the pivot (the range's minimum): done
      equal_left = t->or_equal != 0;
    }
    __syncthreads();
    // thread `side` requests side's grid, one side after the other: two lanes of a warp must not
    // enter the device runtime's launch from different branches at once (docs/design.md,
    // "Launches from divergent lanes")
    for (unsigned int side = 0; side < 2; ++side) {
      __syncwarp();
      if (threadIdx.x != side) continue;
      side_inline[side] = false;
      const std::uint32_t n = side_n[side], begin = side_begin[side];
      if (n == 0 || (side == 0 && equal_left)) {
        // nothing to launch (an equal left side is copied home below)
      } else if (n == 1) {
        if (to != 0) {  // one key: home, no grid
          a.buf.keys[0][begin] = a.buf.keys[1][begin];
          if constexpr (has_values<V>) a.buf.values[0][begin] = a.buf.values[1][begin];
        }
      } else if (n <= tile_keys) {
        side_inline[side] =
            !launch_child(ctx, sites::qs_two_stream_leaf, dim3(1), dim3(block_threads),
                          stream_kind::named_per_thread, leaf_body{a.buf, to, begin, n, a.comp},
                          0u, n);
      } else {
        // nothing below the pivot: partition the same keys again by "x <= pivot"
        const bool again = side == 1 && side_n[0] == 0 && !equal_left;
        const T pivot = again ? pivot_of(t) : a.buf.keys[to][begin + n / 2];
        task_t* child = new_task(a, begin, n, to, pivot, again);
        side_inline[side] =
            child == nullptr ||
            !launch_child(ctx, sites::qs_two_stream_side, dim3(child->grid), dim3(block_threads),
                          stream_kind::named_per_thread, partition_body{a, child}, 0u, n);
      }
    }
    __syncthreads();
    if (equal_left) {
      block_copy_to_result(a.buf, to, side_begin[0], side_n[0]);
      __syncthreads();
    }
    for (unsigned int side = 0; side < 2; ++side) {
      if (!side_inline[side]) continue;
      sorter::run(sorter_shared(), ctx, a.buf, to, side_begin[side], side_n[side], a.seed, a.comp);
      __syncthreads();
      if (threadIdx.x == 0)
        record_inline_items(ctx,
                            side_n[side] <= tile_keys ? sites::qs_two_stream_leaf
                                                      : sites::qs_two_stream_side,
                            side_n[side]);
    }
  }
};

/// Root task record: the whole range in buffer 0, pivot = its middle key.
template <class T, class V, class Compare>
__global__ void two_stream_init_kernel(two_stream_args<T, V, Compare> a, std::uint32_t n) {
  if (threadIdx.x != 0) return;
  (void)two_stream_agent<T, V, Compare>::new_task(a, 0, n, 0, a.buf.keys[0][n / 2], false);
}

}  // namespace cdpkit::quicksort_detail
