#pragma once
// cdpkit/quicksort/agents/radix.cuh — the `radix` variant: a most-significant-digit radix sort by
// a recursion of child grids through the launch layer, for the orders that map keys to unsigned
// integers (radix_order: less, greater, total_order_less on 4- and 8-byte arithmetic keys). Each
// range is an independent, irregularly sized subproblem, as quicksort's partitions are, but it is
// split by 8 bits of its keys' order bits: no sample, no comparisons. One large range (a task)
// goes through:
//
//   1. count grid (site quicksort.radix_range for a child; the host launches the root's): every
//      block counts its keys per digit value in shared memory, ORs together how each key differs
//      from the range's first one, and adds its counts to the task's with ONE atomic per bucket
//      (the value returned is the block's offset inside the bucket);
//   2. the count grid's last block scans the counts. If every key fell in one bucket, nothing
//      needs to move: the task's digit goes down to the highest bit in which its keys differ and
//      the count grid runs again (a run of equal keys, none left, is done or copied home); else
//      it launches the scatter grid as the next step at the same depth (launch_step, site
//      quicksort.radix_scatter);
//   3. scatter grid: every block ranks its keys by digit in shared memory and writes each bucket's
//      run to its place in the other buffer (partition_pass, as fast's);
//   4. the scatter grid's last block spawns the next digit: a child task per bucket larger than
//      radix_block_keys (depth + 1), a copy grid per large run of equal keys that must move home
//      (the lowest digit's buckets), and every other bucket goes to the small-range queue;
//   5. once the whole recursion is done, ONE drain grid, next on the caller's stream, sorts the
//      queue's ranges one block each (queue.cuh) by the same digit passes inside the block
//      (radix_block_sorter: no sample), down to tiles sorted in shared memory.
//
// A refused launch (budget, depth, error) or a full task pool or arena loses nothing: the range
// becomes a job of the drain grid, sorted by one block (radix_block_sorter): slower, never wrong.
// The count and scatter grids the device launches have blocks of child_pass_threads, as fast's do
// (tuning.hpp says why).

#include <cdpkit/quicksort/agents/queue.cuh>

namespace cdpkit::quicksort_detail {

template <class T, class V, class Compare>
using radix_args = partition_args<T, V, Compare, radix_task<radix_bits_t<T>>>;

/// The bucket of a key: one digit (the bits of `mask`, radix_digit_bits of them unless a block's
/// pass asks for fewer, from `shift`) of its order bits.
template <class T, class Compare>
struct digit_classifier {
  using order = radix_order<T, Compare>;
  unsigned int shift;
  std::uint32_t mask = radix_buckets - 1;
  __device__ __forceinline__ std::uint32_t classify(const T& x, const Compare&) const {
    return static_cast<std::uint32_t>(order::to_bits(x) >> shift) & mask;
  }
};

/// *p |= v for 32- and 64-bit order bits (global or shared memory).
template <class Bits>
__device__ __forceinline__ void atomic_or_bits(Bits* p, Bits v) {
  if constexpr (sizeof(Bits) == 8)
    atomicOr(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  else
    atomicOr(reinterpret_cast<unsigned int*>(p), static_cast<unsigned int>(v));
}

/// The OR of v over the calling warp's lanes (every lane calls).
template <class Bits>
__device__ __forceinline__ Bits warp_or(Bits v) {
  if constexpr (sizeof(Bits) == 8) {
    const auto lo = __reduce_or_sync(0xffffffffu, static_cast<unsigned int>(v));
    const auto hi = __reduce_or_sync(0xffffffffu, static_cast<unsigned int>(v >> 32));
    return (static_cast<Bits>(hi) << 32) | lo;
  } else {
    return __reduce_or_sync(0xffffffffu, static_cast<unsigned int>(v));
  }
}

/// The shift of the digit whose highest bit is the highest bit set in `differ` (> 0).
template <class Bits>
__device__ __forceinline__ unsigned int digit_shift_below(Bits differ) {
  unsigned int high;
  if constexpr (sizeof(Bits) == 8) high = 63u - __clzll(static_cast<long long>(differ));
  else high = 31u - __clz(static_cast<int>(differ));
  return high >= radix_digit_bits - 1 ? high - (radix_digit_bits - 1) : 0u;
}

/// radix's drain: one block sorts a range whose keys agree on every order bit from bit S up (a
/// job word's bits 8..15; 0: none known), by its own digit passes: count the keys by the d bits
/// below S (d chosen so that the buckets come out about half a tile each), scatter them into the
/// other buffer, then sort each bucket of a tile or less in shared memory (tile_sort: a CUB block
/// radix sort over the bits in which its keys differ) and split the larger ones again, from an
/// explicit stack in shared memory. A pass that finds every key in one bucket moves nothing.
template <class T, class V, class Compare>
struct radix_block_sorter {
  using order = radix_order<T, Compare>;
  using pass = partition_pass<T, V, Compare>;
  using tile = tile_sort<T, V, Compare>;
  static constexpr unsigned int key_bits = 8 * sizeof(T);

  struct entry {
    std::uint32_t begin;
    std::uint32_t size;
    std::uint8_t which;
    std::uint8_t shared_from;  ///< the keys agree on every order bit from this one up
  };
  struct storage {
    union {
      typename tile::temp_storage tile;
      typename pass::storage pass;
    } temp;
    std::uint32_t count[radix_buckets];
    std::uint32_t start[radix_buckets + 1];
    entry stack[block_stack_entries];
    int top;
    bool one_bucket;  ///< the last count found every key in one bucket
    radix_bits_t<T> differ;  ///< the last count's OR of each key's bits XOR the first key's
  };

  /// start[b] = exclusive sum of count[0..b), start[nb] = the total, and whether one bucket holds
  /// every key: by the block's first warp (every lane calls), 8 buckets a lane at most.
  __device__ static void scan_counts(storage& s, std::uint32_t nb) {
    constexpr unsigned int per_lane = radix_buckets / 32;
    const unsigned int lane = threadIdx.x;
    std::uint32_t c[per_lane];
    std::uint32_t sum = 0;
    bool full = false;
#pragma unroll
    for (unsigned int k = 0; k < per_lane; ++k) {
      const unsigned int b = lane * per_lane + k;
      c[k] = b < nb ? s.count[b] : 0u;
      sum += c[k];
    }
    std::uint32_t incl = sum;
#pragma unroll
    for (unsigned int o = 1; o < 32; o <<= 1) {
      const std::uint32_t up = __shfl_up_sync(0xffffffffu, incl, o);
      if (lane >= o) incl += up;
    }
    const std::uint32_t total = __shfl_sync(0xffffffffu, incl, 31);
    std::uint32_t run = incl - sum;
#pragma unroll
    for (unsigned int k = 0; k < per_lane; ++k) {
      const unsigned int b = lane * per_lane + k;
      if (b < nb) s.start[b] = run;
      full |= c[k] == total;
      run += c[k];
    }
    full = __any_sync(0xffffffffu, full);
    if (lane == 0) {
      s.start[nb] = total;
      s.one_bucket = full;
    }
  }

  /// Digit bits for a pass over n keys below bit `shared_from` (> 0): buckets of about half a
  /// tile, 1 to radix_digit_bits bits, no more than there are.
  __device__ static unsigned int digit_bits(std::uint32_t n, unsigned int shared_from) {
    unsigned int d = 1;
    while (d < radix_digit_bits && (std::uint64_t{tile_keys} << d) < 2ull * n) ++d;
    return d < shared_from ? d : shared_from;
  }

  __device__ static void run_job(storage& s, const launch_context& probe_ctx,
                                 const sort_buffers<T, V>& buf, const small_job& j,
                                 std::uint64_t, const Compare& comp) {
    unsigned int shared_from = (j.which_copy >> 8) & 0xffu;
    if (shared_from == 0 || shared_from > key_bits) shared_from = key_bits;
    if (threadIdx.x == 0) {
      s.stack[0] = {j.begin, j.size, static_cast<std::uint8_t>(j.which_copy & 1u),
                    static_cast<std::uint8_t>(shared_from)};
      s.top = 1;
    }
    __syncthreads();
    while (s.top > 0) {
      const entry r = s.stack[s.top - 1];
      __syncthreads();
      if (threadIdx.x == 0) --s.top;
      __syncthreads();  // every thread tests the loop condition on the new top
      if (r.size <= tile_keys) {
        tile::run(s.temp.tile, buf, r.which, r.begin, r.size, comp);
        continue;
      }
      // 1. count by the d bits below shared_from (the bits above are the same in every key)
      const unsigned int d = digit_bits(r.size, r.shared_from);
      const unsigned int shift = r.shared_from - d;
      const std::uint32_t nb = 1u << d;
      const digit_classifier<T, Compare> digit{shift, nb - 1};
      for (unsigned int b = threadIdx.x; b < nb; b += block_threads) s.count[b] = 0;
      if (threadIdx.x == 0) s.differ = 0;
      __syncthreads();
      const T* src = buf.keys[r.which] + r.begin;
      using bits_t = radix_bits_t<T>;
      const bits_t first = order::to_bits(src[0]);
      bits_t differ = 0;
      pass::count(probe_ctx, digit, src, 0, r.size, s.count, comp,
                  [&](const T& x) { differ |= order::to_bits(x) ^ first; });
      differ = warp_or(differ);
      if (cdpkit::detail::lane_id() == 0 && differ != 0) atomic_or_bits(&s.differ, differ);
      __syncthreads();
      if (threadIdx.x < 32) scan_counts(s, nb);
      __syncthreads();
      if (s.one_bucket) {  // the digit is shared too: nothing moves
        const bits_t all = s.differ;
        if (all == 0) {  // every bit agrees: equal keys
          if (r.which == 1) block_copy_to_result(buf, 1, r.begin, r.size);
        } else if (threadIdx.x == 0) {  // the range goes on below the highest bit that differs
          unsigned int high = 0;
          if constexpr (sizeof(bits_t) == 8) high = 63u - __clzll(static_cast<long long>(all));
          else high = 31u - __clz(static_cast<int>(all));
          s.stack[s.top++] = {r.begin, r.size, r.which, static_cast<std::uint8_t>(high + 1)};
        }
        __syncthreads();
        continue;
      }
      // 2. scatter into the other buffer
      for (unsigned int b = threadIdx.x; b < nb; b += block_threads) s.count[b] = s.start[b];
      __syncthreads();
      const std::uint32_t to = 1 - r.which;
      const V* src_values = nullptr;
      V* dst_values = nullptr;
      if constexpr (has_values<V>) {
        src_values = buf.values[r.which] + r.begin;
        dst_values = buf.values[to] + r.begin;
      }
      pass::scatter(s.temp.pass, digit, src, src_values, buf.keys[to] + r.begin, dst_values, 0,
                    r.size, s.count, nb, comp);
      // 3. the buckets: equal keys (the lowest digit) done or copied home, tiles sorted now,
      //    larger ones pushed (or, with the stack full, sorted by the bitonic last resort)
      for (unsigned int b = 0; b < nb; ++b) {
        const std::uint32_t bb = r.begin + s.start[b];
        const std::uint32_t bn = s.start[b + 1] - s.start[b];
        if (bn == 0) continue;
        if (shift == 0) {
          if (to == 1) block_copy_to_result(buf, to, bb, bn);
        } else if (bn <= tile_keys) {
          tile::run(s.temp.tile, buf, to, bb, bn, comp);
        } else if (s.top < static_cast<int>(block_stack_entries)) {
          __syncthreads();
          if (threadIdx.x == 0) s.stack[s.top++] = {bb, bn, static_cast<std::uint8_t>(to),
                                                    static_cast<std::uint8_t>(shift)};
        } else {
          block_sorter<T, V, Compare>::bitonic(buf, to, bb, bn, comp);
        }
        __syncthreads();
      }
    }
  }
};

template <class T, class V, class Compare>
struct radix_agent
    : small_queue<T, V, Compare, radix_args<T, V, Compare>, radix_block_sorter<T, V, Compare>> {
  using order = radix_order<T, Compare>;
  static_assert(order::enabled, "radix sorts the orders radix_order maps to unsigned integers");
  using bits_t = radix_bits_t<T>;
  using args_t = radix_args<T, V, Compare>;
  using task_t = radix_task<bits_t>;
  using queue = small_queue<T, V, Compare, args_t, radix_block_sorter<T, V, Compare>>;
  using queue::enqueue;
  using classifier = digit_classifier<T, Compare>;

  /// The count step's shared memory: its counters only (many resident blocks).
  struct count_storage {
    std::uint32_t count[radix_buckets];
    bits_t differ;
    bool last;
    bool one_bucket;
  };
  __device__ static count_storage& count_shared() {
    __shared__ count_storage s;
    return s;
  }
  /// The scatter step's: a tile, its ranks and the block's cursors.
  template <unsigned int BlockThreads>
  struct scatter_storage {
    typename partition_pass<T, V, Compare, BlockThreads>::storage pass;
    std::uint32_t cursor[radix_buckets];
    bool last;
  };
  template <unsigned int BlockThreads>
  __device__ static scatter_storage<BlockThreads>& scatter_shared() {
    __shared__ scatter_storage<BlockThreads> s;
    return s;
  }

  /// Resident blocks asked of the host-launched root count grid (small shared memory) and of
  /// the scatter grids; the device-launched grids have child_pass_threads blocks.
  static constexpr unsigned int count_min_blocks = 6;
  static constexpr unsigned int pass_min_blocks = 3;
  template <unsigned int BlockThreads, unsigned int MinBlocks>
  static constexpr unsigned int min_blocks_for = BlockThreads == block_threads ? MinBlocks : 1;

  template <unsigned int BlockThreads>
  struct count_body {
    static constexpr unsigned int max_block_threads = BlockThreads;
    static constexpr unsigned int min_blocks_per_sm = min_blocks_for<BlockThreads, count_min_blocks>;
    args_t a;
    task_t* t;
    __device__ void operator()(const launch_context& self) const {
      count_block<BlockThreads>(self, a, t, blockIdx.x);
    }
  };

  template <unsigned int BlockThreads>
  struct scatter_body {
    static constexpr unsigned int max_block_threads = BlockThreads;
    static constexpr unsigned int min_blocks_per_sm = min_blocks_for<BlockThreads, pass_min_blocks>;
    args_t a;
    task_t* t;
    __device__ void operator()(const launch_context& self) const {
      scatter_block<BlockThreads>(self, a, t, blockIdx.x);
    }
  };

  // -- 1. count --------------------------------------------------------------------------------
  template <unsigned int BlockThreads>
  __device__ static void count_block(const launch_context& ctx, const args_t& a, task_t* t,
                                     std::uint32_t blk) {
    count_storage& s = count_shared();
    for (unsigned int b = threadIdx.x; b < radix_buckets; b += BlockThreads) s.count[b] = 0;
    if (threadIdx.x == 0) s.differ = 0;
    __syncthreads();
    const T* src = a.buf.keys[t->which] + t->begin;
    const bits_t first = order::to_bits(src[0]);
    bits_t differ = 0;
    const block_share share = share_of_block(blk, t->size);
    partition_pass<T, V, Compare, BlockThreads>::count(
        ctx, classifier{t->shift}, src, share.lo, share.hi, s.count, a.comp,
        [&](const T& x) { differ |= order::to_bits(x) ^ first; });
    differ = warp_or(differ);
    if (cdpkit::detail::lane_id() == 0 && differ != 0) atomic_or_bits(&s.differ, differ);
    __syncthreads();
    // one atomic per bucket and block; the old value is this block's offset inside the bucket
    std::uint32_t* offsets = a.arena + t->arena + std::uint64_t{blk} * radix_buckets;
    for (unsigned int b = threadIdx.x; b < radix_buckets; b += BlockThreads)
      offsets[b] = s.count[b] != 0 ? atomicAdd(&t->count[b], s.count[b]) : 0u;
    if (threadIdx.x == 0 && s.differ != 0) atomic_or_bits(&t->differ, s.differ);
    if (!last_block_to_arrive(&t->count_done, t->grid, s.last)) return;

    // 2. the last block: bucket starts; a range in one bucket skips its scatter
    if (threadIdx.x == 0) {
      std::uint32_t sum = 0, most = 0;
      for (unsigned int b = 0; b < radix_buckets; ++b) {
        const std::uint32_t c = __ldcg(&t->count[b]);
        t->start[b] = sum;
        sum += c;
        most = c > most ? c : most;
      }
      t->start[radix_buckets] = sum;
      s.one_bucket = most == t->size;
    }
    __syncthreads();
    if (!s.one_bucket) {
      if (threadIdx.x == 0) {
        const launch_result r =
            launch_step(ctx, sites::qs_radix_scatter, dim3(t->grid), dim3(child_pass_threads),
                        scatter_body<child_pass_threads>{a, t}, t->size);
        // not launched: the range, not moved yet, is sorted by one block of the drain grid
        if (!r) enqueue(ctx, a, small_job{t->begin, t->size, radix_job_word(t->which, t->shift + radix_digit_bits)});
      }
      return;
    }
    const bits_t all = __ldcg(&t->differ);
    if (all == 0) {  // equal keys: sorted; only their place may change
      if (threadIdx.x == 0 && t->which == 1) copy_home(ctx, a, t->begin, t->size);
      return;
    }
    // the count again, at the digit of the highest bit in which the keys differ (below this one)
    for (unsigned int b = threadIdx.x; b < radix_buckets; b += BlockThreads) t->count[b] = 0;
    if (threadIdx.x == 0) {
      t->shift = static_cast<std::uint8_t>(digit_shift_below(all));
      t->differ = 0;
      t->count_done = 0;
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
      const launch_result r =
          launch_step(ctx, sites::qs_radix_scatter, dim3(t->grid), dim3(child_pass_threads),
                      count_body<child_pass_threads>{a, t}, t->size);
      if (!r) enqueue(ctx, a, small_job{t->begin, t->size, radix_job_word(t->which, t->shift + radix_digit_bits)});
    }
  }

  // -- 3. scatter ------------------------------------------------------------------------------
  template <unsigned int BlockThreads>
  __device__ static void scatter_block(const launch_context& ctx, const args_t& a, task_t* t,
                                       std::uint32_t blk) {
    scatter_storage<BlockThreads>& s = scatter_shared<BlockThreads>();
    const std::uint32_t* offsets = a.arena + t->arena + std::uint64_t{blk} * radix_buckets;
    for (unsigned int b = threadIdx.x; b < radix_buckets; b += BlockThreads)
      s.cursor[b] = t->start[b] + offsets[b];
    __syncthreads();
    queue::template scatter_share<BlockThreads>(s.pass, classifier{t->shift}, a, t->which, t->begin,
                                                t->size, blk, s.cursor, radix_buckets);
    if (last_block_to_arrive(&t->scatter_done, t->grid, s.last)) spawn<BlockThreads>(ctx, a, t);
  }

  // -- 4. the next digit -----------------------------------------------------------------------
  /// Move a run of equal keys [begin, begin + n) from buffer 1 home: a copy grid when it is
  /// large, else (or when the grid is refused) a job of the drain grid. One thread calls.
  __device__ static void copy_home(const launch_context& ctx, const args_t& a, std::uint32_t begin,
                                   std::uint32_t n) {
    const bool launched = n > medium_keys && queue::launch_copy(ctx, a, sites::qs_radix_copy, begin, n);
    if (!launched) enqueue(ctx, a, small_job{begin, n, 1u | 2u});
  }

  /// Take a task record and arena words for a range whose digit is at `shift`; null when the
  /// pool or the arena is full.
  __device__ static task_t* new_task(const args_t& a, std::uint32_t begin, std::uint32_t n,
                                     std::uint32_t which, unsigned int shift) {
    const std::uint32_t grid = partition_grid(n);
    std::uint32_t at = 0;
    task_t* t = queue::take_task(a, std::uint64_t{grid} * radix_buckets, &at);
    if (t == nullptr) return nullptr;
    t->begin = begin;
    t->size = n;
    t->grid = grid;
    t->arena = at;
    t->count_done = 0;
    t->scatter_done = 0;
    t->which = static_cast<std::uint8_t>(which);
    t->shift = static_cast<std::uint8_t>(shift);
    t->differ = 0;
    for (unsigned int b = 0; b < radix_buckets; ++b) t->count[b] = 0;
    return t;
  }

  /// Run by one whole block once task t is scattered: a thread per bucket queues a small one
  /// and asks for a large one's child grid (the next digit's task, or a copy grid for a run of
  /// equal keys: every bucket of the lowest digit); what is not launched is queued as well.
  template <unsigned int BlockThreads>
  __device__ static void spawn(const launch_context& ctx, const args_t& a, task_t* t) {
    const std::uint32_t to = 1 - t->which;
    const bool equal = t->shift == 0;  // the lowest digit: a bucket's keys share every bit
    // every thread takes the same number of rounds (a bucket or none in each): place_bucket
    // keeps a warp's launch requests converged
    for (unsigned int first = 0; first < radix_buckets; first += BlockThreads) {
      const unsigned int b = first + threadIdx.x;
      const bool mine = b < radix_buckets;
      const std::uint32_t begin = mine ? t->begin + t->start[b] : 0;
      const std::uint32_t n = mine ? t->start[b + 1] - t->start[b] : 0;
      bucket_action action = bucket_action::none;
      if (n != 0) {
        if (equal) action = to == 0 ? bucket_action::none
                                    : (n <= medium_keys ? bucket_action::small_copy : bucket_action::copy_grid);
        else action = n <= radix_block_keys ? bucket_action::small_sort : bucket_action::child_task;
      }
      queue::place_bucket(ctx, a, action, begin, n, equal ? to | 2u : radix_job_word(to, t->shift),
                          sites::qs_radix_copy, [&] {
        task_t* child = new_task(a, begin, n, to, next_digit_shift(t->shift));
        return child != nullptr &&
               static_cast<bool>(launch_child(ctx, sites::qs_radix_range, dim3(child->grid),
                                              dim3(child_pass_threads), stream_kind::fire_and_forget,
                                              count_body<child_pass_threads>{a, child}, 0u, n));
      });
    }
  }
};

// ---- thin kernels ------------------------------------------------------------------------------

/// Root task record: the whole range in buffer 0 at the highest digit, and an empty queue. (The
/// root's count grid, bounded_child_entry_kernel<count_body<block_threads>>, is launched by the
/// host with the root context; the children's count grids are count_body<child_pass_threads>.)
template <class T, class V, class Compare>
__global__ void __launch_bounds__(block_threads)
    radix_init_kernel(radix_args<T, V, Compare> a, std::uint32_t n) {
  using task_t = typename radix_agent<T, V, Compare>::task_t;
  task_t* t = a.tasks;
  for (unsigned int b = threadIdx.x; b < radix_buckets; b += block_threads) t->count[b] = 0;
  if (threadIdx.x == 0) {
    const std::uint32_t grid = partition_grid(n);
    t->begin = 0;
    t->size = n;
    t->grid = grid;
    t->arena = 0;
    t->count_done = 0;
    t->scatter_done = 0;
    t->which = 0;
    t->shift = static_cast<std::uint8_t>(8 * sizeof(T) - radix_digit_bits);
    t->differ = 0;
    start_counters(a.counters, grid * radix_buckets);
  }
}

}  // namespace cdpkit::quicksort_detail
