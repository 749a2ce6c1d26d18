#pragma once
// cdpkit/quicksort/agents/common.cuh — the device building blocks every quicksort variant shares:
//
//   sort_buffers          the caller's arrays (buffer 0, where the result ends) and the scratch
//                         copy (buffer 1) that out-of-place partitions write into
//   tile_sort             one block sorts <= tile_keys keys in shared memory (CUB block radix
//                         sort over the bits in which the keys differ, for the shipped
//                         comparators on arithmetic keys; CUB block merge sort otherwise),
//                         reading either buffer and writing buffer 0
//   splitters             a sample of 1024 keys sorted by one block, up to 127 splitters picked
//                         from it, and the implicit search tree that classifies a key into one of
//                         up to 255 buckets: 2i for keys between splitters i-1 and i, 2i+1 for
//                         keys equal to splitter i (three-way by construction)
//   warp_aggregated_add   a shared-memory counter bumped once per warp and bucket
//   block_sorter          one block sorts a range of any size: its own multi-way partitions
//                         (counts and cursors in shared memory), tile sorts for the leaves, an
//                         explicit stack in shared memory; simple's and two_stream's fallback
//                         when a child grid is not launched, and the sort of fast's drain jobs
//
// Every function here is called by all threads of a block (they synchronize), except where said.

#include <cdpkit/detail/lane.cuh>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/probe.cuh>
#include <cdpkit/quicksort/agents/radix_tile.cuh>
#include <cdpkit/quicksort/tuning.hpp>

#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include <cstdint>
#include <type_traits>

namespace cdpkit::quicksort_detail {

/// Value type of a keys-only sort.
struct no_values {};

template <class V>
inline constexpr bool has_values = !std::is_same_v<V, no_values>;

/// Buffer 0: the caller's keys (and values), where the sorted result ends; buffer 1: scratch of
/// the same size. A range [b, b + n) of one buffer is partitioned into the same range of the
/// other, so that concurrent ranges never overlap.
template <class T, class V>
struct sort_buffers {
  T* keys[2];
  V* values[2];  ///< unused (null) when V is no_values
};

using cdpkit::detail::lane_id;

/// counters[b] += 1 for the calling thread; returns the counter's value before the thread's own
/// increment (a distinct slot per thread). When every active lane of the warp has the same bucket
/// (runs of equal keys, sorted inputs) one lane adds for all of them; otherwise each lane adds
/// for itself (shared-memory atomics on distinct addresses cost about a load; __match_any_sync's
/// grouping costs more than it saves with many buckets). May be called by any subset of a
/// warp's lanes.
__device__ __forceinline__ std::uint32_t warp_aggregated_add(std::uint32_t* counters,
                                                             std::uint32_t b) {
  const unsigned int active = __activemask();
  const unsigned int leader = __ffs(active) - 1;
  const std::uint32_t first = __shfl_sync(active, b, leader);
  if (__all_sync(active, b == first)) {
    const unsigned int lane = lane_id();
    std::uint32_t base = 0;
    if (lane == leader) base = atomicAdd(&counters[b], static_cast<unsigned int>(__popc(active)));
    base = __shfl_sync(active, base, leader);
    return base + __popc(active & ((1u << lane) - 1u));
  }
  return atomicAdd(&counters[b], 1u);
}

/// Copy keys (and values) [begin, begin + n) from buffer `from` to buffer 0, by the block.
template <class T, class V>
__device__ void block_copy_to_result(const sort_buffers<T, V>& buf, std::uint32_t from,
                                     std::uint32_t begin, std::uint32_t n) {
  if (from == 0) return;
  for (std::uint64_t i = threadIdx.x; i < n; i += block_threads) {
    buf.keys[0][begin + i] = buf.keys[1][begin + i];
    if constexpr (has_values<V>) buf.values[0][begin + i] = buf.values[1][begin + i];
  }
}

// ---- the tile sort ----------------------------------------------------------------------------

template <class T, class V, class Compare>
struct tile_sort {
  using value_t = std::conditional_t<has_values<V>, V, cub::NullType>;
  using block_sort = cub::BlockMergeSort<T, block_threads, tile_items_per_thread, value_t>;
  using order = radix_order<T, Compare>;
  static constexpr bool radix = order::enabled;
  /// Bits of the radix path's keys (the key type itself where there is no radix path).
  struct no_radix {
    using bits_t = T;
  };
  using bits_t = typename std::conditional_t<radix, order, no_radix>::bits_t;
  using radix_sort = cub::BlockRadixSort<bits_t, block_threads, tile_items_per_thread, value_t>;
  /// The radix path covers up to 32 bits (8 passes); wider spans of 64-bit keys merge-sort.
  static constexpr unsigned int radix_max_bits = 32;
  static constexpr bool needs_merge = !radix || sizeof(bits_t) == 8;

  struct empty {};
  struct temp_storage {
    union {
      std::conditional_t<needs_merge, typename block_sort::TempStorage, empty> merge;
      std::conditional_t<radix, typename radix_sort::TempStorage, empty> radix;
    } sort;
    bits_t diff;  ///< radix path: OR over the tile of each key's bits XOR the first key's
  };

  /// Sort keys [begin, begin + n) of buffer `from` into the same range of buffer 0.
  /// Precondition: n <= tile_keys.
  __device__ static void run(temp_storage& temp, const sort_buffers<T, V>& buf, std::uint32_t from,
                             std::uint32_t begin, std::uint32_t n, const Compare& comp) {
    if (n <= 1) {
      if (n == 1 && threadIdx.x == 0 && from != 0) {
        buf.keys[0][begin] = buf.keys[1][begin];
        if constexpr (has_values<V>) buf.values[0][begin] = buf.values[1][begin];
      }
      return;
    }
    if constexpr (radix) {
      if (run_radix(temp, buf, from, begin, n)) return;
    }
    if constexpr (needs_merge) run_merge(temp, buf, from, begin, n, comp);
  }

  /// The radix path; false (nothing done) when the keys differ in more than radix_max_bits bits.
  __device__ static bool run_radix(temp_storage& temp, const sort_buffers<T, V>& buf,
                                   std::uint32_t from, std::uint32_t begin, std::uint32_t n) {
    const T* src = buf.keys[from] + begin;
    bits_t keys[tile_items_per_thread];
    value_t values[tile_items_per_thread];
    // Blocked arrangement: thread t holds keys [8t, 8t + 8). Past n, the slots hold all ones:
    // they sort last, and after any valid key of the same bits, since the sort is stable and
    // they come last in the blocked order.
    const std::uint32_t first = threadIdx.x * tile_items_per_thread;
    const bits_t u0 = order::to_bits(src[0]);
    bits_t diff = 0;
#pragma unroll
    for (unsigned int k = 0; k < tile_items_per_thread; ++k) {
      const std::uint32_t i = first + k;
      keys[k] = ~bits_t{0};
      if (i < n) {
        keys[k] = order::to_bits(src[i]);
        diff |= keys[k] ^ u0;
        if constexpr (has_values<V>) values[k] = buf.values[from][begin + i];
      }
    }
    if (threadIdx.x == 0) temp.diff = 0;
    __syncthreads();
    if constexpr (sizeof(bits_t) == 8) {
      const auto lo = __reduce_or_sync(0xffffffffu, static_cast<std::uint32_t>(diff));
      const auto hi = __reduce_or_sync(0xffffffffu, static_cast<std::uint32_t>(diff >> 32));
      const bits_t w = (static_cast<bits_t>(hi) << 32) | lo;
      if (lane_id() == 0 && w != 0) atomicOr(reinterpret_cast<unsigned long long*>(&temp.diff), w);
    } else {
      const bits_t w = __reduce_or_sync(0xffffffffu, diff);
      if (lane_id() == 0 && w != 0) atomicOr(&temp.diff, w);
    }
    __syncthreads();
    const bits_t all = temp.diff;
    unsigned int end_bit = 0;
    if constexpr (sizeof(bits_t) == 8) end_bit = all == 0 ? 0u : 64u - __clzll(static_cast<long long>(all));
    else end_bit = all == 0 ? 0u : 32u - __clz(static_cast<int>(all));
    if (end_bit > radix_max_bits) {
      __syncthreads();  // (the merge path starts from a synchronized block)
      return false;
    }
    if (end_bit > 0) {
      if constexpr (has_values<V>) {
        radix_sort(temp.sort.radix).SortBlockedToStriped(keys, values, 0, static_cast<int>(end_bit));
      } else {
        radix_sort(temp.sort.radix).SortBlockedToStriped(keys, 0, static_cast<int>(end_bit));
      }
      // striped now: thread t holds sorted positions t, t + 256, ... (coalesced stores)
      T* dst = buf.keys[0] + begin;
#pragma unroll
      for (unsigned int k = 0; k < tile_items_per_thread; ++k) {
        const std::uint32_t i = k * block_threads + threadIdx.x;
        if (i < n) {
          dst[i] = order::from_bits(keys[k]);
          if constexpr (has_values<V>) buf.values[0][begin + i] = values[k];
        }
      }
    } else if (from != 0) {
      // every key has the same bits: in order already; only its place changes
      T* dst = buf.keys[0] + begin;
#pragma unroll
      for (unsigned int k = 0; k < tile_items_per_thread; ++k) {
        const std::uint32_t i = first + k;
        if (i < n) {
          dst[i] = src[i];
          if constexpr (has_values<V>) buf.values[0][begin + i] = values[k];
        }
      }
    }
    __syncthreads();  // the temp storage is reused by the caller's next step
    return true;
  }

  /// The merge path: any strict weak order.
  __device__ static void run_merge(temp_storage& temp, const sort_buffers<T, V>& buf,
                                   std::uint32_t from, std::uint32_t begin, std::uint32_t n,
                                   const Compare& comp) {
    const T* src = buf.keys[from] + begin;
    T keys[tile_items_per_thread];
    value_t values[tile_items_per_thread];
    const std::uint32_t first = threadIdx.x * tile_items_per_thread;
    // Blocked arrangement: thread t holds keys [8t, 8t + 8). Past n, the slots hold the thread's
    // largest valid key (CUB merges only the first n; a thread's filler must sort after its
    // own valid keys), or anything for a thread with no valid key.
    T largest = src[first < n ? first : 0];
#pragma unroll
    for (unsigned int k = 0; k < tile_items_per_thread; ++k) {
      const std::uint32_t i = first + k;
      if (i < n) {
        keys[k] = src[i];
        if (comp(largest, keys[k])) largest = keys[k];
        if constexpr (has_values<V>) values[k] = buf.values[from][begin + i];
      }
    }
#pragma unroll
    for (unsigned int k = 0; k < tile_items_per_thread; ++k)
      if (first + k >= n) keys[k] = largest;
    if constexpr (has_values<V>) {
      block_sort(temp.sort.merge).Sort(keys, values, comp, static_cast<int>(n), largest);
    } else {
      block_sort(temp.sort.merge).Sort(keys, comp, static_cast<int>(n), largest);
    }
    T* dst = buf.keys[0] + begin;
#pragma unroll
    for (unsigned int k = 0; k < tile_items_per_thread; ++k) {
      const std::uint32_t i = first + k;
      if (i < n) {
        dst[i] = keys[k];
        if constexpr (has_values<V>) buf.values[0][begin + i] = values[k];
      }
    }
    __syncthreads();  // the temp storage is reused by the caller's next step
  }
};

// ---- splitters ---------------------------------------------------------------------------------

/// 64-bit mix (splitmix64's finalizer): sample positions from (seed, task, k).
__host__ __device__ __forceinline__ std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

/// The splitters of one partition, in shared memory.
template <class T>
struct splitter_set {
  T sorted[max_splitters];    ///< ascending
  T tree[max_splitters + 1];  ///< implicit search tree, nodes [1, m]
  unsigned int levels;        ///< log2(m + 1)

  __device__ unsigned int splitters() const { return (1u << levels) - 1; }
  __device__ unsigned int buckets() const { return 2 * splitters() + 1; }

  /// Bucket of x: 2i when x lies between splitters i-1 and i (i = how many splitters are below
  /// x), 2i + 1 when x is equivalent to splitter i.
  template <class Compare>
  __device__ __forceinline__ std::uint32_t classify(const T& x, const Compare& comp) const {
    unsigned int j = 1;
#pragma unroll
    for (unsigned int l = 0; l < max_levels; ++l)
      if (l < levels) j = 2 * j + (comp(tree[j], x) ? 1u : 0u);
    const unsigned int i = j - (1u << levels);
    const bool equal = i < splitters() && !comp(x, sorted[i]);
    return 2 * i + (equal ? 1u : 0u);
  }

  /// Fill `tree` from `sorted` (thread-parallel, any block size; the caller synchronizes before
  /// and after).
  __device__ void build_tree() {
    const unsigned int m = splitters();
    for (unsigned int node = threadIdx.x + 1; node <= m; node += blockDim.x) {
      const unsigned int depth = 31 - __clz(node);
      const unsigned int pos = node - (1u << depth);
      tree[node] = sorted[(2 * pos + 1) * (1u << (levels - 1 - depth)) - 1];
    }
  }
};

/// BlockThreads threads sort the sample: the same sample_keys positions whatever the block size
/// (thread t draws positions t * items .. t * items + items - 1), so the same splitters.
template <class T, class Compare, unsigned int BlockThreads = block_threads>
struct sample_sort {
  static_assert(sample_keys % BlockThreads == 0, "the sample is a whole number of keys per thread");
  static constexpr unsigned int items = sample_keys / BlockThreads;
  using block_sort = cub::BlockMergeSort<T, BlockThreads, items>;
  union temp_storage {
    typename block_sort::TempStorage sort;
    T samples[sample_keys];
  };

  /// Choose k - 1 splitters (2 <= k <= 2^max_levels between-buckets) for keys [0, n) of `src`
  /// from a sample of sample_keys keys at positions drawn from (seed, task): splitter i is the
  /// sample's element (i + 1) * sample_keys / k; the tree is padded to 2^levels - 1 nodes with
  /// the last one. Writes out.sorted and out.tree. Precondition: n >= 1.
  __device__ static void run(temp_storage& temp, splitter_set<T>& out, const T* src,
                             std::uint32_t n, std::uint32_t k, std::uint64_t seed,
                             std::uint64_t task, const Compare& comp) {
    T keys[items];
#pragma unroll
    for (unsigned int j = 0; j < items; ++j) {
      const std::uint64_t h = mix64(seed ^ mix64(task * 0x9e3779b97f4a7c15ull +
                                                 threadIdx.x * items + j));
      keys[j] = src[h % n];
    }
    block_sort(temp.sort).Sort(keys, comp);
    __syncthreads();
#pragma unroll
    for (unsigned int j = 0; j < items; ++j)
      temp.samples[threadIdx.x * items + j] = keys[j];
    const unsigned int levels = tree_levels(k);
    if (threadIdx.x == 0) out.levels = levels;
    __syncthreads();
    const unsigned int m = (1u << levels) - 1;
    for (unsigned int i = threadIdx.x; i < m; i += BlockThreads) {
      const unsigned int real = i < k - 1 ? i : k - 2;
      out.sorted[i] = temp.samples[(real + 1) * sample_keys / k];
    }
    __syncthreads();
    out.build_tree();
    __syncthreads();
  }
};

// ---- the partition passes, a tile at a time ----------------------------------------------------

/// The count and scatter passes of a partition over keys [lo, hi) of a range, by one block of
/// BlockThreads threads, a tile of 2048 keys at a time (8 keys per thread in 256-thread blocks, 2
/// in 1024-thread blocks): each thread loads its keys of the tile at once (coalesced, all loads
/// in flight), classifies them, and
///   count:   adds them to shared-memory bucket counters;
///   scatter: ranks them inside the tile by bucket (shared counters, a block scan), reorders the
///            tile by bucket in shared memory, and writes each bucket's run of the tile to its
///            place in the other buffer: consecutive threads write consecutive addresses.
/// partition_pass::count's default per-key hook: nothing.
struct ignore_key {
  template <class T>
  __device__ void operator()(const T&) const {}
};

template <class T, class V, class Compare, unsigned int BlockThreads = block_threads>
struct partition_pass {
  static_assert(BlockThreads >= max_buckets + 1 && tile_keys % BlockThreads == 0,
                "a thread per bucket; a whole number of keys per thread");
  static constexpr unsigned int items = tile_keys / BlockThreads;
  static constexpr std::uint32_t tile = tile_keys;
  using value_t = std::conditional_t<has_values<V>, V, char>;
  using block_scan = cub::BlockScan<std::uint32_t, BlockThreads>;
  static constexpr unsigned int bucket_slots = max_buckets + 1;

  struct storage {
    T keys[tile];
    value_t values[has_values<V> ? tile : 1];
    std::uint8_t bucket[tile];
    std::uint32_t count[bucket_slots];  // per bucket of the tile (threads past them: none)
    std::uint32_t start[bucket_slots];
    typename block_scan::TempStorage scan;
  };
  static_assert(max_buckets < 256, "bucket ids are stored in a byte");

  /// counts[b] += keys of [lo, hi) in bucket b (counts: shared memory), where b is
  /// split.classify(key, comp) (a splitter_set, or radix's digit); each(key) is called on every
  /// key too, by the thread that loaded it.
  template <class Classifier, class Each = ignore_key>
  __device__ static void count(const launch_context& probe_ctx, const Classifier& split,
                               const T* src, std::uint64_t lo, std::uint64_t hi,
                               std::uint32_t* counts, const Compare& comp, Each&& each = {}) {
    // thread t's keys are lo + t, lo + t + BlockThreads, ... below hi (tile by tile): the probe
    // counts them at once, nothing per key
    // (a warp's lanes start at consecutive keys, BlockThreads >= 32 apart: two trip counts at most)
    static_assert(BlockThreads >= 32, "a warp's strided trip counts take two values at most");
    warp_probe probe(probe_ctx, sites::qs_partition_probe);
    probe.steps_two_valued(static_cast<unsigned int>(strided_trip_count(lo + threadIdx.x, hi, BlockThreads)));
    for (std::uint64_t base = lo; base < hi; base += tile) {
      T x[items];
#pragma unroll
      for (unsigned int k = 0; k < items; ++k) {
        const std::uint64_t i = base + k * BlockThreads + threadIdx.x;
        if (i < hi) x[k] = src[i];
      }
#pragma unroll
      for (unsigned int k = 0; k < items; ++k) {
        const std::uint64_t i = base + k * BlockThreads + threadIdx.x;
        if (i < hi) {
          (void)warp_aggregated_add(counts, split.classify(x[k], comp));
          each(x[k]);
        }
      }
    }
    probe.commit();
  }

  /// Move keys (and values) [lo, hi) of the source arrays to the destination arrays: key x of
  /// bucket b goes to index cursor[b]++ (cursor: shared memory, one per bucket).
  /// Preconditions: the storage is free; every thread calls; synchronizes before returning.
  template <class Classifier>
  __device__ static void scatter(storage& st, const Classifier& split, const T* src_keys,
                                 const V* src_values, T* dst_keys, V* dst_values,
                                 std::uint64_t lo, std::uint64_t hi, std::uint32_t* cursor,
                                 unsigned int buckets, const Compare& comp) {
    for (std::uint64_t base = lo; base < hi; base += tile) {
      const auto n = static_cast<std::uint32_t>(hi - base < tile ? hi - base : tile);
      T x[items];
      value_t v[items];
      std::uint32_t b[items], rank[items];
#pragma unroll
      for (unsigned int k = 0; k < items; ++k) {
        const std::uint32_t i = k * BlockThreads + threadIdx.x;
        if (i < n) {
          x[k] = src_keys[base + i];
          if constexpr (has_values<V>) v[k] = src_values[base + i];
        }
      }
      if (threadIdx.x < bucket_slots) st.count[threadIdx.x] = 0;
      __syncthreads();
#pragma unroll
      for (unsigned int k = 0; k < items; ++k) {
        const std::uint32_t i = k * BlockThreads + threadIdx.x;
        if (i < n) {
          b[k] = split.classify(x[k], comp);
          rank[k] = warp_aggregated_add(st.count, b[k]);
        }
      }
      __syncthreads();
      const std::uint32_t mine = threadIdx.x < bucket_slots ? st.count[threadIdx.x] : 0u;
      std::uint32_t excl = 0;
      block_scan(st.scan).ExclusiveSum(mine, excl);
      if (threadIdx.x < bucket_slots) st.start[threadIdx.x] = excl;
      __syncthreads();
#pragma unroll
      for (unsigned int k = 0; k < items; ++k) {
        const std::uint32_t i = k * BlockThreads + threadIdx.x;
        if (i < n) {
          const std::uint32_t p = st.start[b[k]] + rank[k];
          st.keys[p] = x[k];
          st.bucket[p] = static_cast<std::uint8_t>(b[k]);
          if constexpr (has_values<V>) st.values[p] = v[k];
        }
      }
      __syncthreads();
      for (std::uint32_t j = threadIdx.x; j < n; j += BlockThreads) {
        const std::uint32_t bb = st.bucket[j];
        const std::uint32_t g = cursor[bb] + (j - st.start[bb]);
        dst_keys[g] = st.keys[j];
        if constexpr (has_values<V>) dst_values[g] = st.values[j];
      }
      __syncthreads();
      if (threadIdx.x < buckets) cursor[threadIdx.x] += mine;
      __syncthreads();
    }
  }
};

// ---- one block sorts a range of any size ----------------------------------------------------------

/// A pending range of a block's own recursion.
struct range_entry {
  std::uint32_t begin;
  std::uint32_t size;
  std::uint32_t which;
};

template <class T, class V, class Compare>
struct block_sorter {
  struct storage {
    union {
      typename tile_sort<T, V, Compare>::temp_storage tile;
      typename sample_sort<T, Compare>::temp_storage sample;
      typename partition_pass<T, V, Compare>::storage pass;
    } temp;
    splitter_set<T> split;
    std::uint32_t count[max_buckets];
    std::uint32_t start[max_buckets + 1];
    range_entry stack[block_stack_entries];
    int top;
  };

  /// In-place bitonic sort of [begin, begin + n) in buffer `which`, then the copy to buffer 0:
  /// the last resort when the stack is full (never expected; slow, always correct). Arbitrary n:
  /// out-of-range partners count as +infinity, so their compare-exchanges are skipped.
  __device__ static void bitonic(const sort_buffers<T, V>& buf, std::uint32_t which,
                                 std::uint32_t begin, std::uint32_t n, const Compare& comp) {
    T* a = buf.keys[which] + begin;
    auto exchange = [&](std::uint64_t i, std::uint64_t p) {
      if (comp(a[p], a[i])) {
        const T t = a[i];
        a[i] = a[p];
        a[p] = t;
        if constexpr (has_values<V>) {
          V* v = buf.values[which] + begin;
          const V tv = v[i];
          v[i] = v[p];
          v[p] = tv;
        }
      }
    };
    for (std::uint64_t k = 2; k < 2ull * n; k <<= 1) {
      for (std::uint64_t i = threadIdx.x; i < n; i += block_threads) {
        const std::uint64_t p = i ^ (k - 1);
        if (p > i && p < n) exchange(i, p);
      }
      __syncthreads();
      for (std::uint64_t j = k >> 2; j > 0; j >>= 1) {
        for (std::uint64_t i = threadIdx.x; i < n; i += block_threads) {
          const std::uint64_t p = i ^ j;
          if (p > i && p < n) exchange(i, p);
        }
        __syncthreads();
      }
    }
    block_copy_to_result(buf, which, begin, n);
    __syncthreads();
  }

  /// The drain's entry: sort job j's range (not a copy job).
  __device__ static void run_job(storage& s, const launch_context& probe_ctx,
                                 const sort_buffers<T, V>& buf, const small_job& j,
                                 std::uint64_t seed, const Compare& comp) {
    run(s, probe_ctx, buf, j.which_copy & 1u, j.begin, j.size, seed, comp);
  }

  /// Sort keys [begin, begin + n) of buffer `which` into the same range of buffer 0, by the
  /// block alone. `probe_ctx` (may be a context with tracing off) receives the partition probe.
  __device__ static void run(storage& s, const launch_context& probe_ctx,
                             const sort_buffers<T, V>& buf, std::uint32_t which,
                             std::uint32_t begin, std::uint32_t n, std::uint64_t seed,
                             const Compare& comp) {
    if (threadIdx.x == 0) {
      s.stack[0] = {begin, n, which};
      s.top = 1;
    }
    __syncthreads();
    while (s.top > 0) {
      const range_entry r = s.stack[s.top - 1];
      __syncthreads();
      if (threadIdx.x == 0) --s.top;
      __syncthreads();  // every thread tests the loop condition on the new top
      if (r.size <= tile_keys) {
        tile_sort<T, V, Compare>::run(s.temp.tile, buf, r.which, r.begin, r.size, comp);
        continue;
      }
      // 1. splitters from a sample of the range
      sample_sort<T, Compare>::run(s.temp.sample, s.split, buf.keys[r.which] + r.begin, r.size,
                                   partition_buckets(r.size, block_bucket_target), seed,
                                   (std::uint64_t{r.begin} << 32) ^ r.size, comp);
      const unsigned int buckets = s.split.buckets();
      for (unsigned int b = threadIdx.x; b < buckets; b += block_threads) s.count[b] = 0;
      __syncthreads();
      // 2. count the keys of each bucket (shared-memory counters)
      const T* src = buf.keys[r.which] + r.begin;
      partition_pass<T, V, Compare>::count(probe_ctx, s.split, src, 0, r.size, s.count, comp);
      __syncthreads();
      // 3. bucket starts (one thread: at most 255 buckets), then the scatter into the other buffer
      if (threadIdx.x == 0) {
        std::uint32_t sum = 0;
        for (unsigned int b = 0; b < buckets; ++b) {
          s.start[b] = sum;
          sum += s.count[b];
        }
        s.start[buckets] = sum;
      }
      __syncthreads();
      for (unsigned int b = threadIdx.x; b < buckets; b += block_threads) s.count[b] = s.start[b];
      __syncthreads();
      const std::uint32_t to = 1 - r.which;
      const V* src_values = nullptr;
      V* dst_values = nullptr;
      if constexpr (has_values<V>) {
        src_values = buf.values[r.which] + r.begin;
        dst_values = buf.values[to] + r.begin;
      }
      partition_pass<T, V, Compare>::scatter(s.temp.pass, s.split, src, src_values,
                                             buf.keys[to] + r.begin, dst_values, 0, r.size,
                                             s.count, buckets, comp);
      // 4. the buckets: equal keys are done (copied home when needed), tiles sorted now, larger
      //    ones pushed (or, with the stack full, sorted by the bitonic last resort)
      for (unsigned int b = 0; b < buckets; ++b) {
        const std::uint32_t bb = r.begin + s.start[b];
        const std::uint32_t bn = s.start[b + 1] - s.start[b];
        if (bn == 0) continue;
        if (b % 2 == 1) {
          block_copy_to_result(buf, to, bb, bn);
        } else if (bn <= tile_keys) {
          tile_sort<T, V, Compare>::run(s.temp.tile, buf, to, bb, bn, comp);
        } else if (s.top < static_cast<int>(block_stack_entries)) {
          __syncthreads();
          if (threadIdx.x == 0) s.stack[s.top++] = {bb, bn, to};
        } else {
          bitonic(buf, to, bb, bn, comp);
        }
        __syncthreads();
      }
    }
  }
};

}  // namespace cdpkit::quicksort_detail
