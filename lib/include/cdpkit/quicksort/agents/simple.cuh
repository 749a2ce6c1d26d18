#pragma once
// cdpkit/quicksort/agents/simple.cuh — the `simple` variant: the lecture's recursion, after
// NVIDIA's cdpSimpleQuicksort, through the launch layer.
//
//   1. one thread partitions its range in place around the middle key (Hoare's scheme: keys equal
//      to the pivot stop both scans, so duplicates split evenly);
//   2. it launches a one-thread child grid per side, each in a named stream of its own (site
//      quicksort.simple_side);
//   3. a range of 32 keys or fewer is selection-sorted by its thread.
//
// One thread does every pass over its range: the probe of the partition loop reads 1/32 of a
// warp active, and a million keys take about a second. A side that is not launched (budget,
// depth cap, launch error) is heap-sorted by the thread that asked: slow, never wrong.

#include <cdpkit/quicksort/agents/common.cuh>

namespace cdpkit::quicksort_detail {

template <class T, class V, class Compare>
struct simple_agent {
  struct range {
    T* keys;
    V* values;
    std::uint32_t begin, size;
    Compare comp;
  };

  __device__ static void swap_at(const range& r, std::uint64_t i, std::uint64_t j) {
    const T t = r.keys[i];
    r.keys[i] = r.keys[j];
    r.keys[j] = t;
    if constexpr (has_values<V>) {
      const V v = r.values[i];
      r.values[i] = r.values[j];
      r.values[j] = v;
    }
  }

  __device__ static void selection_sort(const range& r) {
    const std::uint64_t e = std::uint64_t{r.begin} + r.size;
    for (std::uint64_t i = r.begin; i + 1 < e; ++i) {
      std::uint64_t m = i;
      for (std::uint64_t j = i + 1; j < e; ++j)
        if (r.comp(r.keys[j], r.keys[m])) m = j;
      if (m != i) swap_at(r, i, m);
    }
  }

  /// Serial heapsort of the range: the inline fallback of a side that was not launched.
  __device__ static void heap_sort(const range& r) {
    const std::uint64_t n = r.size, b = r.begin;
    auto sift = [&](std::uint64_t root, std::uint64_t end) {
      while (2 * root + 1 < end) {
        std::uint64_t child = 2 * root + 1;
        if (child + 1 < end && r.comp(r.keys[b + child], r.keys[b + child + 1])) ++child;
        if (!r.comp(r.keys[b + root], r.keys[b + child])) return;
        swap_at(r, b + root, b + child);
        root = child;
      }
    };
    for (std::uint64_t k = n / 2; k-- > 0;) sift(k, n);
    for (std::uint64_t end = n; end-- > 1;) {
      swap_at(r, b, b + end);
      sift(0, end);
    }
  }

  struct body {
    range r;
    __device__ void operator()(const launch_context& self) const { sort(self, r); }
  };

  /// The one thread of a grid sorts its range.
  __device__ static void sort(const launch_context& ctx, const range& r) {
    if (r.size <= simple_cutoff) {
      selection_sort(r);
      return;
    }
    // 1. Hoare partition around the middle key
    const T pivot = r.keys[r.begin + r.size / 2];
    std::int64_t i = r.begin, j = std::int64_t{r.begin} + r.size - 1;
    {
      warp_probe probe(ctx, sites::qs_serial_probe);
      while (i <= j) {
        probe.step();
        while (r.comp(r.keys[i], pivot)) ++i;
        while (r.comp(pivot, r.keys[j])) --j;
        if (i <= j) {
          swap_at(r, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j));
          ++i;
          --j;
        }
      }
      probe.commit();
    }
    // 2. a child grid per side: [begin, j] and [i, end)
    const range sides[2] = {
        {r.keys, r.values, r.begin, static_cast<std::uint32_t>(j + 1 - r.begin), r.comp},
        {r.keys, r.values, static_cast<std::uint32_t>(i),
         static_cast<std::uint32_t>(std::int64_t{r.begin} + r.size - i), r.comp}};
    for (const range& side : sides) {
      if (side.size < 2) continue;
      if (!launch_child(ctx, sites::qs_simple_side, dim3(1), dim3(1),
                        stream_kind::named_per_thread, body{side}, 0u, side.size)) {
        heap_sort(side);
        record_inline_items(ctx, sites::qs_simple_side, side.size);
      }
    }
  }
};

/// The root: one thread, depth 0.
template <class T, class V, class Compare>
__global__ void simple_root_kernel(launch_context ctx,
                                   typename simple_agent<T, V, Compare>::range r) {
  simple_agent<T, V, Compare>::sort(ctx, r);
}

}  // namespace cdpkit::quicksort_detail
