#pragma once
// cdpkit/loop_to_child/agents/common.cuh — what every loop-to-child agent shares: the segments,
// the parent block size, the per-item call, segment lookup, and the bodies of the child grids.

#include <cdpkit/detail/lane.cuh>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/probe.cuh>


#include <cstdint>
#include <type_traits>

namespace cdpkit {

/// Device view of the segments: segment i covers items [d_begin[i], d_end[i]).
///
/// Any type with `num_segments` and `__device__ begin(i)` / `end(i)` can stand in its place
/// (e.g. a BFS frontier, whose segment i is the neighbour list of frontier vertex i).
struct segments_view {
  const std::uint32_t* d_begin;
  const std::uint32_t* d_end;
  std::uint32_t num_segments;
  __device__ std::uint32_t begin(std::uint32_t i) const { return d_begin[i]; }
  __device__ std::uint32_t end(std::uint32_t i) const { return d_end[i]; }
};

/// An item operator that sums per segment (a segmented reduction: SpMV's rows, a histogram's
/// bins). Instead of a call per item, the agents add term(i, j) over the items of segment i that
/// one thread walks, or that adjacent lanes of one warp hold at once, and hand each partial sum
/// to combine(i, partial): once per segment where a thread walks it alone; once per run of a
/// warp's lanes holding it in warp_aggregated's walk or the flat grid (a warp that meets the
/// segment again in a later round of its loop makes another call; a full warp whose whole round
/// lies in one segment makes one); once per warp and round in block_aggregated's walk and in a
/// child grid of a group (sum_blocked_round: each lane sums its consecutive items first); once
/// per warp in a child grid of one segment (each thread sums sum_child_items terms first). A segment's
/// partials reach combine in no set order and possibly from several threads at once, so combine
/// must add them atomically (e.g. atomicAdd into an output zeroed before); an empty segment gets
/// no call. Term: `__device__ T term(std::uint32_t i, std::uint32_t j) const` with T arithmetic;
/// Combine: `__device__ void combine(std::uint32_t i, T partial) const`. Floating-point sums
/// are therefore grouped differently under each policy (within the usual rounding).
template <class Term, class Combine>
struct segment_sum {
  Term term;
  Combine combine;
};

namespace loop_to_child {

/// A pre_op that does nothing.
struct no_pre_op {
  __device__ void operator()(std::uint32_t) const {}
};

/// Threads per block of the parent grids (Fig. 21.5): the kernels of cdpkit/loop_to_child/
/// kernels.cuh run blocks of this size, and block_aggregated_agent requires it.
inline constexpr unsigned int block_threads = 256;

template <class ItemOp>
inline constexpr bool is_segment_sum_v = false;
template <class Term, class Combine>
inline constexpr bool is_segment_sum_v<segment_sum<Term, Combine>> = true;

/// The sum of `v` over the run of lanes holding segment i that the calling lane belongs to, in
/// the run's first lane (other lanes get partial sums): a run is a maximal set of consecutive
/// active lanes with the same i. `active` is the calling lanes' mask (every lane in it calls).
/// Lanes that hold the same segment but are not adjacent form separate runs: still correct, one
/// more combine. The agents' callers give lanes consecutive items (k = base + lane), so a
/// segment's items in a warp are one run. Costs a shuffle up, a ballot and five shuffle-down
/// steps (a segmented suffix sum), no match or partition.
template <class T>
__device__ __forceinline__ T warp_run_sum(unsigned int active, std::uint32_t i, T v, bool& first) {
  const unsigned int lane = cdpkit::detail::lane_id();
  const std::uint32_t before = __shfl_up_sync(active, i, 1);
  first = lane == 0 || ((active >> (lane - 1)) & 1u) == 0 || before != i;
  const unsigned int firsts = __ballot_sync(active, first);
  // the run ends before the next run's first lane or the next inactive lane
  const unsigned int stops = (firsts | ~active) & ~((2u << lane) - 1u);  // (lane 31: none above)
  const unsigned int last = stops ? static_cast<unsigned int>(__ffs(static_cast<int>(stops))) - 2u : 31u;
  for (unsigned int d = 1; d < 32; d *= 2) {
    const T other = __shfl_down_sync(active, v, d);
    if (lane + d <= last) v += other;
  }
  return v;
}

/// A segment_sum's value `v` of segment i, summed over the run of `active` lanes holding i
/// (warp_run_sum) and handed to combine by the run's first lane. Every lane of `active` calls.
template <class ItemOp, class T>
__device__ __forceinline__ void combine_run(const ItemOp& op, unsigned int active, std::uint32_t i, T v) {
  bool first = false;
  const T sum = warp_run_sum(active, i, v, first);
  if (first) op.combine(i, sum);
}

/// One item, by a thread whose warp-mates may be running items at the same time (a child, a
/// cooperative loop, the flat grid). item_op may take (segment, item) or just (item), as in
/// Fig. 21.4's doMoreWork(j). A segment_sum is summed over each run of adjacent lanes holding
/// the same segment (warp_run_sum), and the run's first lane hands the sum to combine.
template <class ItemOp>
__device__ __forceinline__ void call_item(const ItemOp& op, std::uint32_t i, std::uint32_t j) {
  if constexpr (is_segment_sum_v<ItemOp>) {
    combine_run(op, __activemask(), i, op.term(i, j));
  } else if constexpr (std::is_invocable_v<const ItemOp&, std::uint32_t, std::uint32_t>) {
    op(i, j);
  } else {
    op(j);
  }
}

/// Items per thread and round of the cooperative walks (block_aggregated, warp_aggregated): a
/// thread finds the segments of this many items first, then calls them, so that their searches
/// and loads are in flight together rather than one item's after another's.
inline constexpr unsigned int walk_items = 4;

/// One round of a walk: item r of the calling thread is item[r] of segment seg[r] where
/// valid[r]. `lanes`: the warp's lanes, which all call (a walk's rounds are uniform), each with
/// consecutive positions per r (lane l holds position base + r * width + l, width >= 32), so
/// that a segment's items of one r are a run of lanes, and valid[r] is true for the positions
/// below some end. A segment_sum reads every term of the round first, then sums them per run
/// (warp_run_sum) and combines; a full warp whose whole round lies in one segment sums it at
/// once and combines once. Any other item_op is called item by item.
template <unsigned int R, class ItemOp>
__device__ __forceinline__ void call_item_round(const ItemOp& op, unsigned int lanes,
                                                const std::uint32_t (&seg)[R],
                                                const std::uint32_t (&item)[R], const bool (&valid)[R]) {
  if constexpr (is_segment_sum_v<ItemOp>) {
    using value_t = std::remove_cv_t<std::remove_reference_t<decltype(op.term(seg[0], item[0]))>>;
    value_t v[R];
#pragma unroll
    for (unsigned int r = 0; r < R; ++r) v[r] = valid[r] ? op.term(seg[r], item[r]) : value_t{};
    if (lanes == 0xffffffffu) {
      // Inside a long segment every item of the round is in one segment: the positions grow
      // with r and with the lane, so lane 0's first segment equal to lane 31's last (and every
      // item valid) says so. Then one sum of the whole round and one combine, not one per r.
      const std::uint32_t lo = __shfl_sync(lanes, seg[0], 0), hi = __shfl_sync(lanes, seg[R - 1], 31);
      if (__all_sync(lanes, valid[R - 1]) && lo == hi) {
        value_t sum = v[0];
#pragma unroll
        for (unsigned int r = 1; r < R; ++r) sum += v[r];
        for (unsigned int d = 16; d >= 1; d /= 2) sum += __shfl_xor_sync(lanes, sum, d);
        if (cdpkit::detail::lane_id() == 0) op.combine(lo, sum);
        return;
      }
    }
#pragma unroll
    for (unsigned int r = 0; r < R; ++r) {
      const unsigned int active = __ballot_sync(lanes, valid[r]);
      if (valid[r]) combine_run(op, active, seg[r], v[r]);
    }
  } else {
#pragma unroll
    for (unsigned int r = 0; r < R; ++r)
      if (valid[r]) call_item(op, seg[r], item[r]);
  }
}

/// Items [begin, begin + len) of segment i, in order, by one thread (the serial loop, the
/// inline loop of a segment not launched): a segment_sum adds its terms in a register and calls
/// combine once (nothing for an empty segment).
template <class ItemOp>
__device__ __forceinline__ void call_items(const ItemOp& op, std::uint32_t i, std::uint32_t begin,
                                           std::uint32_t len) {
  if constexpr (is_segment_sum_v<ItemOp>) {
    if (len == 0) return;
    auto sum = op.term(i, begin);
    for (std::uint32_t k = 1; k < len; ++k) sum += op.term(i, begin + k);
    op.combine(i, sum);
  } else {
    for (std::uint32_t k = 0; k < len; ++k) call_item(op, i, begin + k);
  }
}

/// Read segment i's bounds; an inverted segment raises device_error_bad_segment and is empty.
template <class Segments>
__device__ __forceinline__ void load_segment(const launch_context& ctx, const Segments& s,
                                             std::uint32_t i, std::uint32_t& begin,
                                             std::uint32_t& len) {
  begin = s.begin(i);
  const std::uint32_t end = s.end(i);
  if (end < begin) {
    raise_device_error(ctx, device_error_bad_segment);
    len = 0;
  } else {
    len = end - begin;
  }
}

/// Index of the last entry <= k in the non-decreasing d_scan[0, count): the segment holding
/// concatenated item k (empty segments share their scan value with the next one and are skipped).
template <class Scan, class Position>
__device__ __forceinline__ std::uint32_t find_segment(const Scan* d_scan, std::uint32_t count,
                                                      Position k) {
  std::uint32_t lo = 0, hi = count;  // invariant: d_scan[lo] <= k, answer in [lo, hi)
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (d_scan[mid] <= k) lo = mid; else hi = mid;
  }
  return lo;
}

/// find_segment for R positions at once, by binary lifting: the R searches take their steps
/// together (the same number of steps, uniform across the warp: count is), so that their loads
/// are in flight together. pos[r] = the index of the last entry <= k[r] in the non-decreasing
/// d_scan[0, count), where d_scan[0] <= k[r] (a position past the end gets count - 1).
template <unsigned int R, class Scan, class Position>
__device__ __forceinline__ void find_segments(const Scan* d_scan, std::uint32_t count,
                                              const Position (&k)[R], std::uint32_t (&pos)[R]) {
#pragma unroll
  for (unsigned int r = 0; r < R; ++r) pos[r] = 0;
  if (count <= 1) return;
  // the largest power of two below count: the steps reach every index up to count - 1
  for (std::uint32_t step = 1u << (31 - __clz(static_cast<int>(count - 1))); step > 0; step /= 2) {
#pragma unroll
    for (unsigned int r = 0; r < R; ++r) {
      const std::uint32_t candidate = pos[r] + step;
      if (candidate < count && d_scan[candidate] <= k[r]) pos[r] = candidate;
    }
  }
}

/// One round of a segment_sum's walk in blocked order, by a full warp: the calling lane holds
/// the R consecutive positions p0 .. p0 + R - 1 of a concatenation of `count` segments (lane
/// l + 1's p0 is lane l's p0 + R; positions at or past `total` are no items), where segment o
/// (global index first_segment + o) starts at excl[o] (non-decreasing, excl[0] = 0) and position
/// p of it is its item start(o) + (p - excl[o]). A lane finds its first position's segment by one
/// binary search and steps on from there (the round's other R - 1 positions cost no search: a
/// quarter of the striped walk's search work at R = 4). The lane sums its terms per segment in
/// registers; a segment that begins and ends inside the lane's positions goes to combine from
/// there, and the lanes' trailing runs are summed across the warp by a scan keyed by segment
/// (keys grow with the lane: equal keys are adjacent), so that each segment's share of the warp's
/// round reaches combine once (its last lane, or the lane where the next segment begins).
/// Preconditions: the 32 lanes of a warp call together, with the same count and total; p0 + R - 1
/// does not wrap in Pos; a position's offset in its segment fits 32 bits.
template <unsigned int R, class Scan, class Pos, class Start, class ItemOp>
__device__ __forceinline__ void sum_blocked_round(const ItemOp& op, const Scan* excl, const Start& start,
                                                  std::uint32_t count, std::uint32_t first_segment, Pos p0,
                                                  Pos total) {
  using value_t = std::remove_cv_t<std::remove_reference_t<decltype(op.term(first_segment, 0u))>>;
  constexpr std::uint32_t none = 0xffffffffu;  // past the end: above every segment, so keys still grow
  constexpr unsigned int full = 0xffffffffu;
  std::uint32_t o[R];
  value_t v[R];
  std::uint32_t cur = p0 < total ? find_segment(excl, count, p0) : 0;
#pragma unroll
  for (unsigned int r = 0; r < R; ++r) {
    const Pos p = p0 + r;
    if (p < total) {
      while (cur + 1 < count && excl[cur + 1] <= p) ++cur;  // (empty segments are stepped over)
      o[r] = cur;
    } else {
      o[r] = none;
    }
  }
#pragma unroll
  for (unsigned int r = 0; r < R; ++r)
    v[r] = o[r] != none ? op.term(first_segment + o[r], start(o[r]) + static_cast<std::uint32_t>(p0 + r - excl[o[r]]))
                        : value_t{};
  // the lane's runs: the first (head), the ones between (whole segments: combined here), the last (tail)
  const std::uint32_t first = o[0], last = o[R - 1];
  value_t head{}, run = v[0];
#pragma unroll
  for (unsigned int r = 1; r < R; ++r) {
    if (o[r] == o[r - 1]) {
      run += v[r];
    } else {
      if (o[r - 1] == first) head = run;
      else op.combine(first_segment + o[r - 1], run);
      run = v[r];
    }
  }
  // the tails, summed over each run of lanes with the same last segment (an inclusive scan)
  const unsigned int lane = cdpkit::detail::lane_id();
  value_t incl = run;
  for (unsigned int d = 1; d < 32; d *= 2) {
    const value_t other = __shfl_up_sync(full, incl, d);
    const std::uint32_t other_key = __shfl_up_sync(full, last, d);
    if (lane >= d && other_key == last) incl += other;
  }
  const std::uint32_t prev_key = __shfl_up_sync(full, last, 1);
  const value_t prev_incl = __shfl_up_sync(full, incl, 1);
  const std::uint32_t next_first = __shfl_down_sync(full, first, 1);
  // a head ends its segment's share: it adds the lanes before that end in its segment
  if (first != last) op.combine(first_segment + first, lane > 0 && prev_key == first ? head + prev_incl : head);
  // a tail run ends here unless the next lane goes on in the same segment (wholly or as its head)
  if (last != none && (lane == 31 || next_first != last)) op.combine(first_segment + last, incl);
}

/// A child over the concatenated segments of one group (warp or block): child thread k finds its
/// segment in the group's exclusive scan and runs item_op there.
template <class Segments, class ItemOp>
struct group_items_fn {
  Segments segments;
  const std::uint32_t* d_scan;  ///< the group's exclusive scan of lengths, `count` entries
  std::uint32_t first_segment;
  std::uint32_t count;
  ItemOp item_op;
  __device__ void operator()(const launch_context& self, std::uint64_t k64) const {
    probe_single_step(self, sites::l2c_child_items);
    const auto k = static_cast<std::uint32_t>(k64);
    const std::uint32_t s = find_segment(d_scan, count, k);
    const std::uint32_t i = first_segment + s;
    call_item(item_op, i, segments.begin(i) + (k - d_scan[s]));
  }
};

/// A child over one segment: child thread k runs item_op(i, begin + k).
template <class ItemOp>
struct segment_items_fn {
  std::uint32_t segment;
  std::uint32_t begin;
  ItemOp item_op;
  __device__ void operator()(const launch_context& self, std::uint64_t k) const {
    probe_single_step(self, sites::l2c_child_items);
    call_item(item_op, segment, begin + static_cast<std::uint32_t>(k));
  }
};

/// Items per thread of a segment_sum's child grids (segment_sum_child, group_sum_child): a thread
/// reads its items' terms together and sums them in registers, so that a long segment's child
/// runs a block per child_block_threads * sum_child_items items and combines once per warp and
/// round, where a child of an item per thread combined once per 32 items (a million-item row: 32,768
/// atomic adds to one address, and 4,096 blocks of 256 threads).
inline constexpr unsigned int sum_child_items = 2 * walk_items;

/// The blocks of a segment_sum child over `items` items (1 <= items < 2^32).
__device__ __forceinline__ unsigned int sum_child_blocks(std::uint32_t items, unsigned int child_block_threads) {
  const std::uint32_t per_block = child_block_threads * sum_child_items;  // <= 8,192
  return items / per_block + (items % per_block != 0);
}

/// A segment_sum's child over one segment of `len` items from `begin`: thread t of block b holds
/// items b * blockDim.x * sum_child_items + r * blockDim.x + t (r < sum_child_items) below len,
/// sums their terms, and the warp's sum goes to combine once. Every thread of the child's blocks
/// runs it (whole warps: child_block_threads is a multiple of 32).
template <class ItemOp>
struct segment_sum_child {
  std::uint32_t segment;
  std::uint32_t begin;
  std::uint32_t len;
  ItemOp op;
  __device__ void operator()(const launch_context& self) const {
    using value_t = std::remove_cv_t<std::remove_reference_t<decltype(op.term(segment, begin))>>;
    const std::uint64_t base = 1ull * blockIdx.x * blockDim.x * sum_child_items + threadIdx.x;
    value_t v[sum_child_items];
#pragma unroll
    for (unsigned int r = 0; r < sum_child_items; ++r) {
      const std::uint64_t k = base + 1ull * r * blockDim.x;
      v[r] = k < len ? op.term(segment, begin + static_cast<std::uint32_t>(k)) : value_t{};
    }
    value_t sum = v[0];
#pragma unroll
    for (unsigned int r = 1; r < sum_child_items; ++r) sum += v[r];
    if (self.tracing) {  // a step per item row of the warp, with the lanes that hold one
#pragma unroll
      for (unsigned int r = 0; r < sum_child_items; ++r)
        if (base + 1ull * r * blockDim.x < len) probe_single_step(self, sites::l2c_child_items);
    }
    if (!__any_sync(0xffffffffu, base < len)) return;  // a warp past the end: no items, no combine
    for (unsigned int d = 16; d >= 1; d /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, d);
    if (cdpkit::detail::lane_id() == 0) op.combine(segment, sum);
  }
};

/// A segment_sum's child over the concatenated segments of one group (warp or block): `total`
/// items, whose segments are found in the group's exclusive scan d_scan[0, count); block b holds
/// positions from b * blockDim.x * sum_child_items, walked in rounds of blockDim.x * walk_items
/// in blocked order (sum_blocked_round: thread t the walk_items positions from walk_items * t).
template <class Segments, class ItemOp>
struct group_sum_child {
  Segments segments;
  const std::uint32_t* d_scan;  ///< the group's exclusive scan of lengths, `count` entries
  std::uint32_t first_segment;
  std::uint32_t count;
  std::uint32_t total;
  ItemOp op;
  __device__ void operator()(const launch_context& self) const {
    const std::uint64_t block_base = 1ull * blockIdx.x * blockDim.x * sum_child_items;
    const auto start = [this](std::uint32_t o) { return segments.begin(first_segment + o); };
#pragma unroll 1
    for (unsigned int round = 0; round < sum_child_items; round += walk_items) {
      // 64-bit positions: a round's last ones may pass 2^32 where total is near it
      const std::uint64_t p0 = block_base + 1ull * round * blockDim.x + 1ull * walk_items * threadIdx.x;
      if (!__any_sync(0xffffffffu, p0 < total)) break;  // warp-uniform: the rest of the warp's rounds are past the end
      if (self.tracing) {
#pragma unroll
        for (unsigned int r = 0; r < walk_items; ++r)
          if (p0 + r < total) probe_single_step(self, sites::l2c_child_items);
      }
      sum_blocked_round<walk_items>(op, d_scan, start, count, first_segment, p0, std::uint64_t{total});
    }
  }
};

/// The child of a group (warp_aggregated, block_aggregated): `total` (1 <= total < 2^32) items
/// of the segments first_segment .. first_segment + count - 1, whose exclusive scan is d_scan.
/// A segment_sum runs group_sum_child (sum_child_items per thread), any other item_op
/// group_items_fn (an item per thread). Same contract as launch_items.
template <class Segments, class ItemOp>
__device__ launch_result launch_group_child(const launch_context& ctx, std::uint16_t site, std::uint32_t total,
                                            unsigned int child_block_threads, stream_kind stream,
                                            const Segments& s, const std::uint32_t* d_scan,
                                            std::uint32_t first_segment, std::uint32_t count,
                                            const ItemOp& item_op) {
  if constexpr (is_segment_sum_v<ItemOp>) {
    return launch_child(ctx, site, dim3(sum_child_blocks(total, child_block_threads)), dim3(child_block_threads),
                        stream,
                        group_sum_child<Segments, ItemOp>{s, d_scan, first_segment, count, total, item_op}, 0u,
                        total);
  } else {
    return launch_items(ctx, site, total, child_block_threads, stream,
                        group_items_fn<Segments, ItemOp>{s, d_scan, first_segment, count, item_op});
  }
}

/// The child of one segment (child_per_thread, thresholded): `len` (>= 1) items of segment i
/// from `begin`. A segment_sum runs segment_sum_child, any other item_op segment_items_fn. Same
/// contract as launch_items.
template <class ItemOp>
__device__ launch_result launch_segment_child(const launch_context& ctx, std::uint16_t site, std::uint32_t i,
                                              std::uint32_t begin, std::uint32_t len,
                                              unsigned int child_block_threads, stream_kind stream,
                                              const ItemOp& item_op) {
  if constexpr (is_segment_sum_v<ItemOp>) {
    return launch_child(ctx, site, dim3(sum_child_blocks(len, child_block_threads)), dim3(child_block_threads),
                        stream, segment_sum_child<ItemOp>{i, begin, len, item_op}, 0u, len);
  } else {
    return launch_items(ctx, site, len, child_block_threads, stream, segment_items_fn<ItemOp>{i, begin, item_op});
  }
}

}  // namespace loop_to_child
}  // namespace cdpkit
