#pragma once
// cdpkit/quadtree/agents/device_driver.cuh — device_driver: the level loop on the device. Each
// level is two passes over its active points (the points of its nodes that split), a grid of
// level_chunk points a block each: a count pass (every point's quadrant into its node's counts)
// and a scatter pass (every point to its quadrant's place in the other buffer; the lane that
// scatters a node's last points places the node's quadrants: leaves, or nodes of the next level's
// frontier). The last block of each pass launches the next pass as a step at the same depth
// (launch_step, site quadtree.level): the scatter, or the next level's count. A refused launch
// hands the loop back to the host (driver_state::handed_back), which launches the pass it names
// from there (level_root_kernel), and the loop goes on on the device.

#include <cdpkit/launch.cuh>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/quadtree/agents/common.cuh>

#include <cstdint>

namespace cdpkit::quadtree_device {
namespace {

constexpr unsigned int level_threads = 256;
constexpr unsigned int level_items = 8;  ///< active points per thread of a level pass
constexpr std::uint32_t level_chunk = level_threads * level_items;
/// A level's frontier count, packed so that one atomic gives a node both its index and its first
/// active index: nodes in the low bits, active points above them.
constexpr unsigned int node_bits = 26;
constexpr unsigned long long node_mask = (1ull << node_bits) - 1;
/// The most nodes one level may hold (node_bits).
constexpr std::uint64_t max_level_nodes = 1ull << node_bits;

/// A node of a level that splits: its points [begin, begin + size) of the buffer of the level's
/// parity, which are the level's active points [active, active + size).
struct level_node {
  std::uint64_t code;
  std::uint64_t active;
  std::uint32_t begin, size;
  unsigned int count[4];  ///< its points per quadrant (the count pass's atomics)
  unsigned int fill[4];   ///< the scatter pass's cursors, from 0
  unsigned int scattered; ///< its points scattered: the lane that completes them places it
};

struct driver_state {
  unsigned long long next[2];  ///< per level parity: the level's nodes and active points (packed)
  unsigned int done[2];        ///< blocks arrived in the current count [0] and scatter [1] pass
  unsigned int levels;         ///< levels split
  unsigned int handed_back;    ///< a launch was refused: the host goes on from resume_*
  unsigned int resume_level, resume_pass;  ///< pass 0: count, 1: scatter
};

struct driver_args {
  quad_args a;
  level_node* nodes[2];  ///< per level parity
  std::uint32_t node_capacity;
  driver_state* st;
};

/// The grid of a level's pass over `active` points.
__host__ __device__ inline std::uint32_t level_grid(unsigned long long active) {
  return static_cast<std::uint32_t>((active + level_chunk - 1) / level_chunk);
}

/// The index of the node holding active index k, among nodes[lo, hi] (k is in one of them).
__device__ __forceinline__ std::uint32_t node_of(const level_node* nodes, std::uint32_t lo, std::uint32_t hi,
                                                std::uint64_t k) {
  while (lo < hi) {  // the last node whose first active index is <= k
    const std::uint32_t mid = lo + (hi - lo + 1) / 2;
    if (__ldcg(&nodes[mid].active) <= k) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/// Node v (of level L), its points scattered: each non-empty quadrant is a leaf or a node of the
/// next level's frontier. One thread.
__device__ void place_level_node(const launch_context& ctx, const driver_args& d, std::uint32_t level,
                                 const level_node& v, const unsigned int* count) {
  const quad_args& a = d.a;
  atomicAdd(&a.counters[1], 1u);  // v (split)
  const unsigned int np = (level + 1) & 1u;
  std::uint32_t first = v.begin;
  for (std::uint32_t q = 0; q < 4; ++q) {
    const unsigned int c = count[q];
    if (c == 0) continue;
    const quad_node child{v.code * 4 + q, first, first + c, level + 1};
    first += c;
    if (c <= a.min_points || child.depth >= a.max_depth) {
      append_leaf(a, child);
      continue;
    }
    const unsigned long long old = atomicAdd(&d.st->next[np], 1ull | (static_cast<unsigned long long>(c) << node_bits));
    const auto k = static_cast<std::uint32_t>(old & node_mask);
    if (k >= d.node_capacity) {  // impossible: a level's nodes hold more than min_points points each
      raise_device_error(ctx, device_error_queue_overflow);
      continue;
    }
    level_node& w = d.nodes[np][k];
    w.code = child.code;
    w.active = old >> node_bits;
    w.begin = child.begin;
    w.size = c;
    for (int r = 0; r < 4; ++r) {
      w.count[r] = 0;
      w.fill[r] = 0;
    }
    w.scattered = 0;
  }
}

struct level_pass_body {
  driver_args d;
  std::uint32_t level;
  std::uint32_t pass;  ///< 0: count, 1: scatter
  __device__ void operator()(const launch_context& self) const;
};

/// Launch the pass `body` names over `active` points from the calling thread (the last block of
/// the pass before it), or hand the loop to the host.
__device__ void launch_level_pass(const launch_context& ctx, const level_pass_body& body, unsigned long long active) {
  const launch_result r = launch_step(ctx, sites::quadtree_level, dim3(level_grid(active)), dim3(level_threads), body,
                                      static_cast<std::uint32_t>(active < 0xffffffffull ? active : 0xffffffffull));
  if (!r) {
    body.d.st->resume_level = body.level;
    body.d.st->resume_pass = body.pass;
    __threadfence();
    body.d.st->handed_back = 1;
  }
}

/// One block of a level pass: its level_chunk active points, each found in its node (a binary
/// search among the nodes the block spans). count: the points' quadrants into their nodes' counts
/// (one atomic per node and quadrant a warp holds). scatter: each point to its quadrant's place in
/// the other buffer; the lane that scatters a node's last points places the node. The pass's last
/// block launches the next pass (the scatter, or the next level's count).
///
/// Every thread of a grid of level_grid(active) blocks of level_threads threads calls it (the
/// host launches the first pass, and each pass after a hand-back, with level_root_kernel).
/// Preconditions: d.st->next[level & 1] holds the level's nodes and active points (packed), its
/// nodes are d.nodes[level & 1] in active-index order, and d.st->done[pass] is zero; the count
/// pass needs the nodes' counts, cursors and scattered zero (place_level_node makes them so),
/// the scatter pass d.st->next[(level + 1) & 1] zero (the count pass's last block makes it so).
__device__ void level_pass_block(const launch_context& ctx, const level_pass_body& body) {
  __shared__ std::uint32_t span[2];
  __shared__ bool last;
  const driver_args& d = body.d;
  const quad_args& a = d.a;
  const std::uint32_t level = body.level;
  const unsigned int p = level & 1u, src = p, dst = p ^ 1u;
  level_node* nodes = d.nodes[p];
  const unsigned long long packed = __ldcg(&d.st->next[p]);
  const auto node_count = static_cast<std::uint32_t>(packed & node_mask);
  const unsigned long long total = packed >> node_bits;
  const std::uint64_t base = static_cast<std::uint64_t>(blockIdx.x) * level_chunk;
  const std::uint64_t top = base + level_chunk < total ? base + level_chunk : total;
  if (threadIdx.x == 0) {
    span[0] = node_of(nodes, 0, node_count - 1, base);
    span[1] = node_of(nodes, span[0], node_count - 1, top - 1);
  }
  __syncthreads();
  const std::uint32_t shift = 2 * (a.max_depth - level - 1);
  if (span[0] == span[1]) {
    // the block's points are all one node's (the top levels): counted in the block first, then
    // one atomic per quadrant for the block, as the wide passes do
    __shared__ unsigned int counts[4], cursor[4];
    level_node* v = nodes + span[0];
    const std::uint32_t begin = __ldcg(&v->begin);
    const std::uint64_t active = __ldcg(&v->active);
    // the block's points are the node's [lo, hi) of the buffer
    const std::uint32_t lo = begin + static_cast<std::uint32_t>(base - active);
    const std::uint32_t hi = begin + static_cast<std::uint32_t>(top - active);
    if (threadIdx.x < 4) counts[threadIdx.x] = 0;
    __syncthreads();
    std::uint64_t code[level_items];
    std::uint32_t id[level_items];
    load_chunk(a, src, lo, hi, shift, body.pass == 1, code, id, counts);
    __syncthreads();
    if (body.pass == 0) {
      if (threadIdx.x < 4 && counts[threadIdx.x] != 0) atomicAdd(&v->count[threadIdx.x], counts[threadIdx.x]);
    } else {
      if (threadIdx.x < 4) {
        std::uint32_t first = begin;
        for (unsigned int r = 0; r < threadIdx.x; ++r) first += __ldcg(&v->count[r]);
        cursor[threadIdx.x] = counts[threadIdx.x] != 0 ? first + atomicAdd(&v->fill[threadIdx.x], counts[threadIdx.x]) : 0u;
      }
      __syncthreads();
      scatter_chunk(a, dst, lo, hi, shift, code, id, cursor);
      if (threadIdx.x == 0) {
        const unsigned int n = counts[0] + counts[1] + counts[2] + counts[3];
        if (atomicAdd(&v->scattered, n) + n == __ldcg(&v->size)) {  // the node's last points
          unsigned int count[4];
          for (int r = 0; r < 4; ++r) count[r] = __ldcg(&v->count[r]);
          level_node u;
          u.code = __ldcg(&v->code);
          u.begin = begin;
          place_level_node(ctx, d, level, u, count);
        }
      }
    }
  } else {
    // points of several nodes (the deeper levels): one atomic per node and quadrant a warp holds.
    // The first active indices of the nodes the block spans, in shared memory for the searches
    // (each of them holds at least one of the block's points: at most level_chunk of them).
    __shared__ std::uint64_t starts[level_chunk];
    const std::uint32_t spanned = span[1] - span[0] + 1;
    for (std::uint32_t j = threadIdx.x; j < spanned; j += level_threads) starts[j] = __ldcg(&nodes[span[0] + j].active);
    __syncthreads();
    const unsigned int lane = threadIdx.x & 31u;
    for (unsigned int i = 0; i < level_items; ++i) {  // every thread runs every step (the warp votes)
      const std::uint64_t k = base + i * level_threads + threadIdx.x;
      const bool valid = k < top;
      const unsigned int valid_lanes = __ballot_sync(0xffffffffu, valid);
      if (!valid) continue;
      std::uint32_t lo = 0, hi = spanned - 1;  // the last spanned node whose first active index is <= k
      while (lo < hi) {
        const std::uint32_t mid = lo + (hi - lo + 1) / 2;
        if (starts[mid] <= k) lo = mid;
        else hi = mid - 1;
      }
      const std::uint32_t idx = span[0] + lo;
      level_node* v = nodes + idx;
      const std::uint32_t pos = __ldcg(&v->begin) + static_cast<std::uint32_t>(k - __ldcg(&v->active));
      const std::uint64_t code = a.codes[src][pos];
      const unsigned int q = static_cast<unsigned int>((code >> shift) & 3u);
      const unsigned int peers = __match_any_sync(valid_lanes, (idx << 2) | q);
      const unsigned int leader = static_cast<unsigned int>(__ffs(static_cast<int>(peers)) - 1);
      const unsigned int n = static_cast<unsigned int>(__popc(peers));
      if (body.pass == 0) {
        if (lane == leader) atomicAdd(&v->count[q], n);
        continue;
      }
      unsigned int at = 0;
      if (lane == leader) at = atomicAdd(&v->fill[q], n);
      at = __shfl_sync(peers, at, static_cast<int>(leader));
      unsigned int count[4];
      for (int r = 0; r < 4; ++r) count[r] = __ldcg(&v->count[r]);
      std::uint32_t first = __ldcg(&v->begin);
      for (unsigned int r = 0; r < q; ++r) first += count[r];
      const std::uint32_t to = first + at + static_cast<unsigned int>(__popc(peers & ((1u << lane) - 1u)));
      a.codes[dst][to] = code;
      a.ids[dst][to] = a.ids[src][pos];
      // the node's placement reads its counts only; the next pass reads the points after every
      // block of this one has arrived (last_block_to_arrive fences)
      if (lane == leader && atomicAdd(&v->scattered, n) + n == __ldcg(&v->size)) {  // the node's last points
        level_node u;
        u.code = __ldcg(&v->code);
        u.begin = __ldcg(&v->begin);
        place_level_node(ctx, d, level, u, count);
      }
    }
  }
  const unsigned int pass_done = body.pass;
  if (!last_block_to_arrive(&d.st->done[pass_done], gridDim.x, last)) return;
  if (threadIdx.x != 0) return;
  if (body.pass == 0) {  // the scatter of this level next
    d.st->done[1] = 0;
    d.st->next[p ^ 1u] = 0;  // the next level's frontier, which the scatter fills
    __threadfence();
    launch_level_pass(ctx, level_pass_body{d, level, 1}, total);
    return;
  }
  d.st->levels = level + 1;
  const unsigned long long next = __ldcg(&d.st->next[p ^ 1u]);
  if ((next & node_mask) == 0) return;  // no node splits further: built
  // more nodes than the level holds: place_level_node raised the error, the host throws it; the
  // nodes past the capacity were never written, so no pass may read them
  if ((next & node_mask) > d.node_capacity) return;
  d.st->done[0] = 0;
  __threadfence();
  launch_level_pass(ctx, level_pass_body{d, level + 1, 0}, next >> node_bits);
}

__device__ void level_pass_body::operator()(const launch_context& self) const { level_pass_block(self, *this); }

}  // namespace
}  // namespace cdpkit::quadtree_device
