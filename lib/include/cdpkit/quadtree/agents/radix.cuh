#pragma once
// cdpkit/quadtree/agents/radix.cuh — the radix build: the adaptive quadtree as one most-
// significant-digit radix recursion over the points' cells at max_depth (their Morton codes),
// k levels (2k bits, k <= 4) a pass. A pass counts a node's points by their cells k levels down
// (up to 256 buckets) and moves them into the other buffer by bucket; the counts alone then give
// the k levels of the tree below the node (place_digit): a cell of few points, or at max_depth,
// is a leaf, the others split, and the cells k levels down that split are the next nodes. The
// recursion sorts the points and builds the tree at once, and no point is sorted below its leaf.
//
//   1. a node of more than wide_points points gets a count grid (site quadtree.radix), a block per
//      wide_chunk points, adding its chunk's bucket counts into the node's task (radix_task); the
//      last block scans them and launches the scatter step (site quadtree.radix_scatter), or,
//      when every point lies in one bucket, places the levels at once (nothing moves);
//   2. scatter step: each block moves its chunk's points to their buckets in the other buffer;
//      the last block places the levels: leaves, nodes that split, and the next nodes, each a
//      count grid of its own when wide, else a job of the drain queue;
//   3. the drain grid, which the host launches right behind the root's grid on the same stream
//      (it starts once every grid of the recursion is done), takes the jobs a block each: the
//      block runs the same passes over its node with counts in shared memory, finishes a node of
//      a tile or less in shared memory (a block radix sort of its codes, then its leaves found
//      among the sorted runs, level by level), and queues every larger node it finds as a job
//      for any block of the grid, so that one busy node does not keep one block busy alone.
//
// A refused launch (depth cap, pending budget) or a full task pool makes the node a job of the
// drain: a block then runs every pass of its subtree. Nothing is lost.
//
// Every pass reads its points past L1 (__ldcg): the drain's blocks read points that blocks on
// other SMs moved during the same grid (after the queue's flag and fence), and a grid's pass reads
// a buffer that the SM may have cached from an earlier pass over the same range.
//
// Unlike the other recursions, a node's points may lie in either buffer (a pass that finds every
// point in one bucket moves nothing): each task and job carries its buffer, and every leaf its
// own (device_leaf::parity).

#include <cdpkit/launch.cuh>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/quadtree/agents/common.cuh>
#include <cdpkit/quadtree/agents/wide_partition.cuh>

#include <cooperative_groups.h>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include <cstdint>

namespace cdpkit::quadtree_device {
namespace {

constexpr unsigned int radix_levels = 4;                           ///< levels of a pass at most
constexpr unsigned int radix_buckets = 1u << (2 * radix_levels);   ///< 256
constexpr unsigned int radix_threads = 256;                        ///< every radix grid's blocks
constexpr unsigned int radix_tile_items = 8;
/// A node of this many points or fewer is finished by one block in shared memory.
constexpr std::uint32_t radix_tile = radix_threads * radix_tile_items;  // 2048
static_assert(radix_threads == radix_buckets, "a thread per bucket in the scans");
static_assert(radix_threads * wide_items == wide_chunk, "the radix grids' chunks are the wide grids'");

/// Levels of a pass over a node of n points with `left` levels below it (left >= 1): a grid's
/// pass takes radix_levels; a block's, the fewest that make buckets of about half a tile.
__host__ __device__ inline unsigned int radix_pass_levels(std::uint32_t n, std::uint32_t left, bool by_block) {
  unsigned int k = radix_levels;
  if (by_block) {
    k = 1;
    while (k < radix_levels && (std::uint64_t{radix_tile} << (2 * k)) < 2ull * n) ++k;
  }
  return k < left ? k : left;
}

/// A node partitioned by grids: its count grid adds the buckets' counts, its last block scans
/// them into start and fill and launches the scatter step, whose last block places the levels.
struct radix_task {
  quad_node v;
  std::uint32_t which;   ///< the buffer holding v's points
  std::uint32_t levels;  ///< k: the pass splits v by its cells k levels down
  std::uint32_t grid;    ///< blocks of both passes
  unsigned int count_done, scatter_done;
  unsigned int count[radix_buckets];      ///< points per bucket (the count grid's atomics)
  unsigned int fill[radix_buckets];       ///< the scatter blocks' cursors (absolute positions)
  unsigned int start[radix_buckets + 1];  ///< first position of each bucket, from v.begin
};

/// The task of node v in buffer `which`: nothing counted, a block per wide_chunk points.
__host__ __device__ inline void init_radix_task(radix_task& t, const quad_node& v, std::uint32_t which,
                                                std::uint32_t max_depth) {
  t.v = v;
  t.which = which;
  t.levels = radix_pass_levels(v.end - v.begin, max_depth - v.depth, false);
  t.grid = (v.end - v.begin + wide_chunk - 1) / wide_chunk;
  t.count_done = 0;
  t.scatter_done = 0;
  for (unsigned int b = 0; b < (1u << (2 * t.levels)); ++b) t.count[b] = 0;
}

/// A job of the drain queue: a node to finish, the buffer holding its points. `ready` is
/// which + 1 once the job is written (0: the slot is free or being written).
struct radix_job {
  quad_node v;
  unsigned int ready;
};

/// The queue's counters (radix_args::queue, zeroed by the host before a build).
enum radix_counter : unsigned int { jobs_added = 0, jobs_taken = 1, jobs_done = 2, tasks_taken = 3 };

/// What every radix body carries: the build's arguments, the task pool and the drain queue.
struct radix_args {
  quad_args a;
  radix_task* tasks;
  std::uint32_t task_capacity;
  radix_job* jobs;  ///< ready flags zeroed by the host before a build
  std::uint32_t job_capacity;
  unsigned int* queue;  ///< radix_counter
};

struct radix_count_body {
  radix_args r;
  radix_task* t;
  __device__ void operator()(const launch_context& self) const;
};

struct radix_scatter_body {
  radix_args r;
  radix_task* t;
  __device__ void operator()(const launch_context& self) const;
};

// ---- the steps every pass shares ---------------------------------------------------------------

/// counts[bucket] += 1 for the calling lane's point (bucket ~0u: none), one shared atomic per
/// bucket and warp; returns the point's rank among the block's points of its bucket (the value
/// counts[bucket] had, plus the lanes before it). Every lane of the warp calls it.
__device__ __forceinline__ unsigned int warp_bucket_add(unsigned int* counts, unsigned int bucket) {
  const unsigned int peers = __match_any_sync(0xffffffffu, bucket);
  const unsigned int lane = threadIdx.x & 31u;
  const unsigned int leader = static_cast<unsigned int>(__ffs(peers) - 1);
  unsigned int base = 0;
  if (bucket != ~0u && lane == leader) base = atomicAdd(&counts[bucket], static_cast<unsigned int>(__popc(peers)));
  base = __shfl_sync(0xffffffffu, base, leader);
  return base + static_cast<unsigned int>(__popc(peers & ((1u << lane) - 1u)));
}

/// The bucket of a code: its cell `levels` levels below a node with `left` levels below it.
__device__ __forceinline__ unsigned int radix_digit(std::uint64_t code, std::uint32_t left, std::uint32_t levels) {
  return static_cast<unsigned int>(code >> (2 * (left - levels))) & ((1u << (2 * levels)) - 1u);
}

/// Append a leaf whose points lie in buffer `parity`, one atomic for the calling lanes together.
__device__ __forceinline__ void append_leaf_in(const quad_args& a, const quad_node& c, unsigned int parity) {
  const auto lanes = cooperative_groups::coalesced_threads();
  unsigned int base = 0;
  if (lanes.thread_rank() == 0) base = atomicAdd(&a.counters[0], lanes.size());
  base = lanes.shfl(base, 0);
  a.leaves[base + lanes.thread_rank()] = {c.code, c.begin, c.end, c.depth, parity};
}

/// Add the block's nodes (each thread's tally, leaves included) into counters[1]. Every thread
/// of the block calls it.
__device__ __forceinline__ void add_nodes(const quad_args& a, unsigned int tally) {
  const unsigned int sum = __reduce_add_sync(0xffffffffu, tally);
  if ((threadIdx.x & 31u) == 0 && sum != 0) atomicAdd(&a.counters[1], sum);
}

/// The k levels below node v after its pass (its points [v.begin + start[b], v.begin +
/// start[b + 1]) in bucket b of buffer `parity`): level j's cells are groups of 4^(k - j)
/// buckets; a non-empty cell whose parent splits is a node, a leaf when it holds at most
/// min_points points or lies at max_depth, and a split cell at level k is given to next(c), by the
/// thread that found it. Counts every node but v. Every thread of the block calls it.
template <class Next>
__device__ void place_digit(const quad_args& a, const quad_node& v, unsigned int parity, unsigned int k,
                            const unsigned int* start, Next&& next) {
  const unsigned int cells = ((1u << (2 * k + 2)) - 4u) / 3u;  // 4 + 16 + ... + 4^k
  unsigned int tally = 0;
  for (unsigned int first = 0; first < cells; first += blockDim.x) {
    const unsigned int idx = first + threadIdx.x;
    if (idx >= cells) continue;
    unsigned int j = 1, offset = 0, width = 4;
    while (idx >= offset + width) {
      offset += width;
      width *= 4;
      ++j;
    }
    const unsigned int g = idx - offset;
    const unsigned int span = 1u << (2 * (k - j));
    const unsigned int lo = start[g * span], hi = start[(g + 1) * span];
    if (hi == lo) continue;  // an empty cell is not a node
    if (j > 1) {
      const unsigned int p = g >> 2, pspan = span * 4;
      if (start[(p + 1) * pspan] - start[p * pspan] <= a.min_points) continue;  // inside a leaf
    }
    const quad_node c{(v.code << (2 * j)) | g, v.begin + lo, v.begin + hi, v.depth + j};
    ++tally;
    if (hi - lo <= a.min_points || c.depth >= a.max_depth) append_leaf_in(a, c, parity);
    else if (j == k) next(c);
  }
  add_nodes(a, tally);
}

// ---- the drain queue ---------------------------------------------------------------------------

/// Queue node v (points in buffer `which`) for the drain. Any thread; a full queue (impossible:
/// radix_job_capacity bounds every build) raises device_error_queue_overflow.
__device__ void radix_enqueue(const launch_context& ctx, const radix_args& r, const quad_node& v, unsigned int which) {
  const unsigned int slot = atomicAdd(&r.queue[jobs_added], 1u);
  if (slot >= r.job_capacity) {
    raise_device_error(ctx, device_error_queue_overflow);
    return;
  }
  r.jobs[slot].v = v;
  __threadfence();
  *static_cast<volatile unsigned int*>(&r.jobs[slot].ready) = which + 1u;
}

/// Take the next job (thread 0 of a drain block): its slot, or -1 once every job queued is done
/// (a job's own jobs are queued before it is done, so none can come after). Waits while jobs are
/// being worked on that may queue more.
__device__ int radix_take(const radix_args& r, radix_job& out) {
  volatile unsigned int* q = r.queue;
  for (;;) {
    const unsigned int taken = q[jobs_taken];
    if (taken < q[jobs_added]) {
      if (atomicCAS(&r.queue[jobs_taken], taken, taken + 1u) != taken) continue;
      if (taken >= r.job_capacity) {  // a slot radix_enqueue refused: nothing to do
        atomicAdd(&r.queue[jobs_done], 1u);
        continue;
      }
      volatile unsigned int* ready = &r.jobs[taken].ready;
      unsigned int w = 0;
      while ((w = *ready) == 0u) __nanosleep(32);
      __threadfence();
      const quad_node* v = &r.jobs[taken].v;  // written by another block: past L1
      out.v = {__ldcg(&v->code), __ldcg(&v->begin), __ldcg(&v->end), __ldcg(&v->depth)};
      out.ready = w;
      *ready = 0u;  // the slot is free for the next build
      return static_cast<int>(taken);
    }
    const unsigned int done = q[jobs_done];
    __threadfence();
    if (done == q[jobs_added]) return -1;
    __nanosleep(256);
  }
}

/// A count grid for node c (points in buffer `which`): false when the pool is full or the launch
/// is refused (the caller queues c instead).
__device__ bool launch_radix(const launch_context& ctx, const radix_args& r, const quad_node& c, unsigned int which) {
  const unsigned int k = atomicAdd(&r.queue[tasks_taken], 1u);
  if (k >= r.task_capacity) return false;
  radix_task* t = r.tasks + k;
  init_radix_task(*t, c, which, r.a.max_depth);
  return static_cast<bool>(launch_child(ctx, sites::quadtree_radix, dim3(t->grid), dim3(radix_threads),
                                        stream_kind::fire_and_forget, radix_count_body{r, t}, 0u, c.end - c.begin));
}

/// The k levels below node v after a grid's pass (place_digit), by the grid's last block: next
/// nodes of a block's size or less become jobs at once; the wide ones are gathered, then launched
/// a count grid each in rounds of a node per thread, the lanes of a warp requesting from one
/// convergent point (a refused one becomes a job). Every thread of the block calls it.
__device__ void place_levels_from_grid(const launch_context& ctx, const radix_args& r, const quad_node& v,
                                       unsigned int parity, unsigned int k, const unsigned int* start) {
  __shared__ quad_node wide[radix_buckets];
  __shared__ unsigned int wide_count;
  if (threadIdx.x == 0) wide_count = 0;
  __syncthreads();
  place_digit(r.a, v, parity, k, start, [&](const quad_node& c) {
    if (c.end - c.begin > wide_points) wide[atomicAdd(&wide_count, 1u)] = c;
    else radix_enqueue(ctx, r, c, parity);
  });
  __syncthreads();
  const unsigned int count = wide_count;
  for (unsigned int first = 0; first < count; first += blockDim.x) {
    const unsigned int m = first + threadIdx.x;
    const bool mine = m < count;
    bool launched = false;
    __syncwarp();
    if (mine) launched = launch_radix(ctx, r, wide[m], parity);
    if (mine && !launched) radix_enqueue(ctx, r, wide[m], parity);
  }
}

// ---- the grids' passes -------------------------------------------------------------------------

/// A count block of task t: its chunk's bucket counts into the task's; the last block scans them,
/// then launches the scatter step, or places the levels when one bucket holds every point (or
/// queues the node when the step is refused).
__device__ void radix_count_block(const launch_context& ctx, const radix_args& r, radix_task* t) {
  using block_scan = cub::BlockScan<unsigned int, radix_threads>;
  __shared__ unsigned int counts[radix_buckets];
  __shared__ unsigned int start[radix_buckets + 1];
  __shared__ typename block_scan::TempStorage scan;
  __shared__ bool last, one_bucket, scattering;
  const quad_node v = t->v;
  const unsigned int which = t->which, k = t->levels, left = r.a.max_depth - v.depth;
  const unsigned int nb = 1u << (2 * k);
  counts[threadIdx.x] = 0;
  if (threadIdx.x == 0) one_bucket = false;
  __syncthreads();
  std::uint32_t lo = 0, hi = 0;
  wide_chunk_of(v, blockIdx.x, lo, hi);
  const std::uint64_t* codes = r.a.codes[which];
  std::uint64_t code[wide_items];
#pragma unroll
  for (unsigned int u = 0; u < wide_items; ++u) {
    const std::uint32_t i = lo + u * radix_threads + threadIdx.x;
    code[u] = i < hi ? __ldcg(&codes[i]) : 0;
  }
#pragma unroll
  for (unsigned int u = 0; u < wide_items; ++u) {
    const bool valid = lo + u * radix_threads + threadIdx.x < hi;
    (void)warp_bucket_add(counts, valid ? radix_digit(code[u], left, k) : ~0u);
  }
  __syncthreads();
  if (threadIdx.x < nb && counts[threadIdx.x] != 0) atomicAdd(&t->count[threadIdx.x], counts[threadIdx.x]);
  if (!last_block_to_arrive(&t->count_done, t->grid, last)) return;
  const unsigned int mine = threadIdx.x < nb ? __ldcg(&t->count[threadIdx.x]) : 0u;
  unsigned int excl = 0;
  block_scan(scan).ExclusiveSum(mine, excl);
  const unsigned int size = v.end - v.begin;
  if (threadIdx.x < nb) start[threadIdx.x] = excl;
  if (threadIdx.x == 0) start[nb] = size;
  if (mine == size) one_bucket = true;
  if (threadIdx.x < nb) {
    t->start[threadIdx.x] = excl;
    t->fill[threadIdx.x] = v.begin + excl;
  }
  __syncthreads();
  if (one_bucket) {  // nothing moves: the levels below v hold all of its points, in place
    place_levels_from_grid(ctx, r, v, which, k, start);
    return;
  }
  if (threadIdx.x == 0) {
    t->start[nb] = size;
    scattering = static_cast<bool>(launch_step(ctx, sites::quadtree_radix_scatter, dim3(t->grid),
                                               dim3(radix_threads), radix_scatter_body{r, t}, size));
    if (!scattering) radix_enqueue(ctx, r, v, which);  // a block of the drain runs v's passes
  }
}

/// A scatter block of task t: its chunk's points (held in registers) to their buckets in the
/// other buffer, from the task's cursors (one atomic per bucket and block, then one shared
/// atomic per bucket and warp); the last block places the levels.
__device__ void radix_scatter_block(const launch_context& ctx, const radix_args& r, radix_task* t) {
  __shared__ unsigned int counts[radix_buckets];
  __shared__ unsigned int start[radix_buckets + 1];
  __shared__ bool last;
  const quad_node v = t->v;
  const unsigned int which = t->which, to = which ^ 1u, k = t->levels, left = r.a.max_depth - v.depth;
  const unsigned int nb = 1u << (2 * k);
  counts[threadIdx.x] = 0;
  __syncthreads();
  std::uint32_t lo = 0, hi = 0;
  wide_chunk_of(v, blockIdx.x, lo, hi);
  std::uint64_t code[wide_items];
  std::uint32_t id[wide_items];
  unsigned int rank[wide_items], bucket[wide_items];
#pragma unroll
  for (unsigned int u = 0; u < wide_items; ++u) {
    const std::uint32_t i = lo + u * radix_threads + threadIdx.x;
    code[u] = i < hi ? __ldcg(&r.a.codes[which][i]) : 0;
    id[u] = i < hi ? __ldcg(&r.a.ids[which][i]) : 0;
  }
#pragma unroll
  for (unsigned int u = 0; u < wide_items; ++u) {
    const bool valid = lo + u * radix_threads + threadIdx.x < hi;
    bucket[u] = valid ? radix_digit(code[u], left, k) : ~0u;
    rank[u] = warp_bucket_add(counts, bucket[u]);
  }
  __syncthreads();
  if (threadIdx.x < nb && counts[threadIdx.x] != 0)
    counts[threadIdx.x] = atomicAdd(&t->fill[threadIdx.x], counts[threadIdx.x]);
  __syncthreads();
#pragma unroll
  for (unsigned int u = 0; u < wide_items; ++u) {
    if (bucket[u] == ~0u) continue;
    const unsigned int p = counts[bucket[u]] + rank[u];
    r.a.codes[to][p] = code[u];
    r.a.ids[to][p] = id[u];
  }
  if (!last_block_to_arrive(&t->scatter_done, t->grid, last)) return;
  if (threadIdx.x < nb) start[threadIdx.x] = __ldcg(&t->start[threadIdx.x]);
  if (threadIdx.x == 0) start[nb] = v.end - v.begin;
  __syncthreads();
  place_levels_from_grid(ctx, r, v, to, k, start);
}

__device__ void radix_count_body::operator()(const launch_context& self) const { radix_count_block(self, r, t); }
__device__ void radix_scatter_body::operator()(const launch_context& self) const { radix_scatter_block(self, r, t); }

// ---- the drain's blocks ------------------------------------------------------------------------

struct radix_block_storage {
  using tile_sort = cub::BlockRadixSort<std::uint64_t, radix_threads, radix_tile_items, std::uint32_t>;
  using block_scan = cub::BlockScan<unsigned int, radix_threads>;
  union {
    typename tile_sort::TempStorage sort;
    std::uint64_t codes[radix_tile];  ///< a finished tile's codes, sorted
    typename block_scan::TempStorage scan;
  } temp;
  std::uint8_t done[radix_tile];  ///< a finished tile's points already in a leaf
  unsigned int counts[radix_buckets];
  unsigned int start[radix_buckets + 1];
  quad_node small[radix_buckets];  ///< a pass's next nodes of a tile or less
  unsigned int small_count;
  bool one_bucket;
  radix_job job;
  int slot;
};

/// Finish node v (points in buffer w; more than min_points of them, at most radix_tile; above
/// max_depth) in shared memory: sort its codes (with the ids) over the bits below v, write them
/// back in place, then walk down the levels: the first point of each run of equal cells, not
/// inside a leaf yet, is a node, and a leaf when its run holds at most min_points points or it
/// lies at max_depth. Every thread of the block calls it.
__device__ void radix_finish_tile(const quad_args& a, radix_block_storage& s, const quad_node& v, unsigned int w) {
  const std::uint32_t n = v.end - v.begin, left = a.max_depth - v.depth;
  std::uint64_t keys[radix_tile_items];
  std::uint32_t ids[radix_tile_items];
  // blocked: thread t holds points [8t, 8t + 8); past n, all ones (after every valid code of the
  // same bits: the sort is stable and they come last)
#pragma unroll
  for (unsigned int u = 0; u < radix_tile_items; ++u) {
    const std::uint32_t i = threadIdx.x * radix_tile_items + u;
    keys[u] = i < n ? __ldcg(&a.codes[w][v.begin + i]) : ~std::uint64_t{0};
    ids[u] = i < n ? __ldcg(&a.ids[w][v.begin + i]) : 0u;
  }
  radix_block_storage::tile_sort(s.temp.sort).Sort(keys, ids, 0, static_cast<int>(2 * left));
  __syncthreads();  // the sort's storage becomes the codes
  bool open = false;  // a point of mine is not in a leaf yet
#pragma unroll
  for (unsigned int u = 0; u < radix_tile_items; ++u) {
    const std::uint32_t i = threadIdx.x * radix_tile_items + u;
    if (i < n) {
      s.temp.codes[i] = keys[u];
      s.done[i] = 0;
      a.codes[w][v.begin + i] = keys[u];
      a.ids[w][v.begin + i] = ids[u];
      open = true;
    }
  }
  unsigned int tally = 0;
  for (std::uint32_t j = 1; j <= left; ++j) {
    if (!__syncthreads_or(open)) break;
    const std::uint32_t shift = 2 * (left - j);
    open = false;
#pragma unroll
    for (unsigned int u = 0; u < radix_tile_items; ++u) {
      const std::uint32_t i = threadIdx.x * radix_tile_items + u;
      if (i >= n || s.done[i] != 0) continue;
      const std::uint64_t cell = s.temp.codes[i] >> shift;
      if (i > 0 && (s.temp.codes[i - 1] >> shift) == cell) {
        open = true;  // inside the run of an earlier point
        continue;
      }
      std::uint32_t lo = i + 1, hi = n;  // the run's end: the first code past the cell
      const std::uint64_t past = (cell + 1) << shift;
      while (lo < hi) {
        const std::uint32_t mid = lo + (hi - lo) / 2;
        if (s.temp.codes[mid] < past) lo = mid + 1;
        else hi = mid;
      }
      ++tally;
      if (lo - i <= a.min_points || j == left) {
        append_leaf_in(a, {cell, v.begin + i, v.begin + lo, v.depth + j}, w);
        for (std::uint32_t m = i; m < lo; ++m) s.done[m] = 1;
      } else {
        open = true;
      }
    }
    // a point marked done in this level by another thread may have counted as open: harmless
  }
  add_nodes(a, tally);
  __syncthreads();  // the storage is reused by the next node
}

/// One pass of a drain block over node v (points in buffer w; more than radix_tile of them):
/// count by the cells k levels down (k: buckets of about half a tile), move the points into the
/// other buffer by bucket (unless one bucket holds them all), place the levels, then finish the
/// next nodes of a tile or less here and queue the larger ones. Every thread of the block calls it.
__device__ void radix_block_pass(const launch_context& ctx, const radix_args& r, radix_block_storage& s,
                                 const quad_node& v, unsigned int w) {
  const quad_args& a = r.a;
  const std::uint32_t n = v.end - v.begin, left = a.max_depth - v.depth;
  const unsigned int k = radix_pass_levels(n, left, true), nb = 1u << (2 * k);
  s.counts[threadIdx.x] = 0;
  if (threadIdx.x == 0) {
    s.small_count = 0;
    s.one_bucket = false;
  }
  __syncthreads();
  for (std::uint32_t base = v.begin; base < v.end; base += radix_tile) {
    std::uint64_t code[radix_tile_items];
#pragma unroll
    for (unsigned int u = 0; u < radix_tile_items; ++u) {
      const std::uint32_t i = base + u * radix_threads + threadIdx.x;
      code[u] = i < v.end ? __ldcg(&a.codes[w][i]) : 0;
    }
#pragma unroll
    for (unsigned int u = 0; u < radix_tile_items; ++u) {
      const bool valid = base + u * radix_threads + threadIdx.x < v.end;
      (void)warp_bucket_add(s.counts, valid ? radix_digit(code[u], left, k) : ~0u);
    }
  }
  __syncthreads();
  const unsigned int mine = threadIdx.x < nb ? s.counts[threadIdx.x] : 0u;
  unsigned int excl = 0;
  radix_block_storage::block_scan(s.temp.scan).ExclusiveSum(mine, excl);
  if (threadIdx.x < nb) {
    s.start[threadIdx.x] = excl;
    s.counts[threadIdx.x] = excl;  // the scatter's cursors, from v.begin
  }
  if (threadIdx.x == 0) s.start[nb] = n;
  if (mine == n) s.one_bucket = true;
  __syncthreads();
  unsigned int parity = w;
  if (!s.one_bucket) {
    parity = w ^ 1u;
    for (std::uint32_t base = v.begin; base < v.end; base += radix_tile) {
      std::uint64_t code[radix_tile_items];
      std::uint32_t id[radix_tile_items];
#pragma unroll
      for (unsigned int u = 0; u < radix_tile_items; ++u) {
        const std::uint32_t i = base + u * radix_threads + threadIdx.x;
        code[u] = i < v.end ? __ldcg(&a.codes[w][i]) : 0;
        id[u] = i < v.end ? __ldcg(&a.ids[w][i]) : 0;
      }
#pragma unroll
      for (unsigned int u = 0; u < radix_tile_items; ++u) {
        const bool valid = base + u * radix_threads + threadIdx.x < v.end;
        const unsigned int p = warp_bucket_add(s.counts, valid ? radix_digit(code[u], left, k) : ~0u);
        if (valid) {
          a.codes[parity][v.begin + p] = code[u];
          a.ids[parity][v.begin + p] = id[u];
        }
      }
    }
    __threadfence();  // the moved points, before another block takes a job over them
    __syncthreads();
  }
  place_digit(a, v, parity, k, s.start, [&](const quad_node& c) {
    if (c.end - c.begin > radix_tile) {
      radix_enqueue(ctx, r, c, parity);
    } else {
      const unsigned int at = atomicAdd(&s.small_count, 1u);
      s.small[at] = c;
    }
  });
  __syncthreads();
  const unsigned int small = s.small_count;
  for (unsigned int m = 0; m < small; ++m) radix_finish_tile(a, s, s.small[m], parity);
}

/// The drain grid's body: each block takes jobs until every job queued is done.
__device__ void radix_drain(const launch_context& ctx, const radix_args& r) {
  __shared__ radix_block_storage s;
  for (;;) {
    if (threadIdx.x == 0) s.slot = radix_take(r, s.job);
    __syncthreads();
    if (s.slot < 0) return;
    const quad_node v = s.job.v;
    const unsigned int w = s.job.ready - 1u;
    __syncthreads();
    if (v.end - v.begin <= radix_tile) radix_finish_tile(r.a, s, v, w);
    else radix_block_pass(ctx, r, s, v, w);
    __syncthreads();  // the job's own jobs are queued
    if (threadIdx.x == 0) {
      __threadfence();
      atomicAdd(&r.queue[jobs_done], 1u);
    }
  }
}

}  // namespace
}  // namespace cdpkit::quadtree_device
