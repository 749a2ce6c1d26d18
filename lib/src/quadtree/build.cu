// The quadtree built on the GPU (cdpkit/quadtree_build.hpp): the Morton yardstick (radix sort of
// the cell codes, then one grid per depth finding the leaves among the runs of equal cells) and
// the recursions, where a block refines a node and its quadrants that must split get child grids
// or go on the block's own stack.

#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/quadtree/sites.hpp>
#include <cdpkit/quadtree_build.hpp>
#include <cdpkit/wait.hpp>

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <string>

namespace cdpkit {

namespace {

constexpr unsigned int node_threads = 256;  ///< threads of a block refining a node
constexpr int stack_capacity = 128;         ///< a block's own nodes: 3 per level + 4 is enough
/// A node of more points is partitioned by a grid (a count grid, then a scatter step, a block per
/// wide_chunk points), in every CDP variant: one block per node at the top of the tree left the
/// GPU idle (measured on the H200 before: 2^22 uniform points, 47 ms thresholded against 1.0 ms
/// for the Morton build, the root's 2^22 points partitioned by one block).
constexpr std::uint32_t wide_points = 1u << 15;
constexpr unsigned int wide_threads = 256;
constexpr unsigned int wide_items = 16;  ///< points per thread of a wide pass (held in registers)
constexpr std::uint32_t wide_chunk = wide_threads * wide_items;

/// A node: its points [begin, end) of the buffer of its depth's parity, its depth and cell.
struct quad_node {
  std::uint64_t code;
  std::uint32_t begin, end, depth;
};

/// A leaf as the device appends it: the node and the buffer (depth parity) holding its points.
struct device_leaf {
  std::uint64_t code;
  std::uint32_t begin, end, depth, parity;
};

/// A node partitioned by a grid: its count grid adds the quadrants' counts, its last block
/// sets the quadrants' first positions and launches the scatter step, whose last block places
/// the quadrants (place_quadrants).
struct wide_task {
  quad_node v;
  unsigned int count[4];  ///< points per quadrant (the count grid's atomics)
  unsigned int first[4];  ///< each quadrant's first position (the count grid's last block)
  unsigned int fill[4];   ///< the scatter blocks' cursors, from first
  unsigned int count_done, scatter_done;
  std::uint32_t grid;     ///< blocks of both passes
};

/// The task of wide node v: nothing counted or arrived yet, a block per wide_chunk points.
__host__ __device__ inline wide_task wide_task_for(const quad_node& v) {
  wide_task t{};
  t.v = v;
  t.grid = (v.end - v.begin + wide_chunk - 1) / wide_chunk;
  return t;
}

struct quad_args {
  std::uint64_t* codes[2];    ///< cell codes at max_depth, by depth parity
  std::uint32_t* ids[2];      ///< point ids, alongside
  device_leaf* leaves;
  unsigned int* counters;     ///< [0] leaves, [1] nodes, [2] wide tasks taken
  wide_task* tasks;           ///< the wide nodes' records (enough for every wide node)
  std::uint32_t task_capacity;
  std::uint32_t max_depth;
  std::uint32_t min_points;
  std::uint32_t threshold;    ///< launch quadrants of more points (0: every splitting quadrant)
  quadtree_variant variant;
};

/// Push a node on the block's stack (thread 0); a full stack (impossible within 3 entries per
/// level) raises device_error_queue_overflow and drops nothing silently.
__device__ __forceinline__ void push_node(const launch_context& ctx, quad_node* stack, int& top, const quad_node& v) {
  if (top < stack_capacity) stack[top++] = v;
  else raise_device_error(ctx, device_error_queue_overflow);
}

__device__ void append_leaf(const quad_args& a, const quad_node& v) {
  const unsigned int k = atomicAdd(&a.counters[0], 1u);
  a.leaves[k] = {v.code, v.begin, v.end, v.depth, v.depth & 1u};
  atomicAdd(&a.counters[1], 1u);
}

/// A child grid: block b refines nodes[b] (and whatever it pushes on its stack).
struct refine_body {
  quad_args a;
  quad_node nodes[4];
  std::uint32_t count;
  __device__ void operator()(const launch_context& self) const;
};

/// The position of the calling lane's point of quadrant q (4: none) from the block's shared
/// cursors: the warp's points of each quadrant take one range (one shared atomic per quadrant
/// and warp). Every lane of the warp calls it.
__device__ __forceinline__ unsigned int quadrant_position(unsigned int q, unsigned int* cursor) {
  const unsigned int lane = threadIdx.x & 31u;
  unsigned int pos = 0;
  for (unsigned int c = 0; c < 4; ++c) {
    const unsigned int same = __ballot_sync(0xffffffffu, q == c);
    if (same == 0) continue;
    const unsigned int leader = static_cast<unsigned int>(__ffs(same) - 1);
    unsigned int at = 0;
    if (lane == leader) at = atomicAdd(&cursor[c], __popc(same));
    at = __shfl_sync(0xffffffffu, at, leader);
    if (q == c) pos = at + __popc(same & ((1u << lane) - 1u));
  }
  return pos;
}

__device__ void refine_block(const launch_context& ctx, const quad_args& a, const quad_node* first,
                             std::uint32_t first_count);
__device__ bool launch_wide(const launch_context& ctx, const quad_args& a, const quad_node& c);

/// The quadrants of node v, split into [first[q], first[q] + count[q]) of the other buffer
/// (thread 0): each non-empty one is a leaf (few points or max_depth), a wide node (its own count
/// grid), or a node to split, launched as the variant says and the layer allows. What is not
/// launched is given to keep(node) (the caller's block refines it itself).
template <class Keep>
__device__ void place_quadrants(const launch_context& ctx, const quad_args& a, const quad_node& v,
                                const unsigned int* first, const unsigned int* count, Keep keep) {
  quad_node split[4];
  std::uint32_t splits = 0;
  for (std::uint32_t q = 0; q < 4; ++q) {
    if (count[q] == 0) continue;  // an empty quadrant is not a node
    const quad_node c{v.code * 4 + q, first[q], first[q] + count[q], v.depth + 1};
    if (count[q] <= a.min_points || c.depth >= a.max_depth) append_leaf(a, c);
    else if (count[q] > wide_points) {
      if (!launch_wide(ctx, a, c)) keep(c);
    } else {
      split[splits++] = c;
    }
  }
  if (a.variant == quadtree_variant::child_per_node) {
    for (std::uint32_t k = 0; k < splits; ++k) {
      refine_body body{a, {split[k]}, 1};
      if (!launch_child(ctx, sites::quadtree_nodes, dim3(1), dim3(node_threads), stream_kind::fire_and_forget, body,
                        0u, split[k].end - split[k].begin))
        keep(split[k]);
    }
    return;
  }
  refine_body body{a, {}, 0};
  std::uint32_t work = 0;
  for (std::uint32_t k = 0; k < splits; ++k) {
    if (split[k].end - split[k].begin > a.threshold) {
      body.nodes[body.count++] = split[k];
      work += split[k].end - split[k].begin;
    } else {
      keep(split[k]);
    }
  }
  if (body.count > 0 && !launch_child(ctx, sites::quadtree_nodes, dim3(body.count), dim3(node_threads),
                                      stream_kind::fire_and_forget, body, 0u, work))
    for (std::uint32_t k = 0; k < body.count; ++k) keep(body.nodes[k]);
}

/// The points of block `blk`'s chunk of wide node v: [lo, hi).
__device__ __forceinline__ void wide_chunk_of(const quad_node& v, std::uint32_t blk, std::uint32_t& lo,
                                              std::uint32_t& hi) {
  lo = v.begin + blk * wide_chunk;
  hi = v.end - lo < wide_chunk ? v.end : lo + wide_chunk;
}

/// Add the calling thread's quadrant counts into the block's (shared): a warp sum, then one
/// shared atomic per quadrant and warp. Every thread of the block calls it.
__device__ __forceinline__ void add_block_counts(unsigned int* block_counts, const unsigned int (&local)[4]) {
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const unsigned int sum = __reduce_add_sync(0xffffffffu, local[q]);
    if ((threadIdx.x & 31u) == 0 && sum != 0) atomicAdd(&block_counts[q], sum);
  }
}

/// Count quadrant q of a point (compile-time indices: the counts stay in registers).
__device__ __forceinline__ void count_quadrant(unsigned int (&local)[4], unsigned int q) {
  local[0] += q == 0;
  local[1] += q == 1;
  local[2] += q == 2;
  local[3] += q == 3;
}

/// A block's chunk of contiguous points [lo, hi) of buffer src, Items a thread (point
/// lo + i * blockDim.x + threadIdx.x) held in registers (ids only `with_ids`), their quadrants at
/// `shift` added into the block's `counts` (shared, zeroed before a barrier). Every thread of the
/// block calls it.
template <unsigned int Items>
__device__ __forceinline__ void load_chunk(const quad_args& a, unsigned int src, std::uint32_t lo, std::uint32_t hi,
                                           std::uint32_t shift, bool with_ids, std::uint64_t (&code)[Items],
                                           std::uint32_t (&id)[Items], unsigned int* counts) {
  unsigned int local[4] = {0, 0, 0, 0};
#pragma unroll
  for (unsigned int i = 0; i < Items; ++i) {
    const std::uint32_t k = lo + i * blockDim.x + threadIdx.x;
    code[i] = 0;
    id[i] = 0;
    if (k < hi) {
      code[i] = a.codes[src][k];
      if (with_ids) id[i] = a.ids[src][k];
      count_quadrant(local, static_cast<unsigned int>((code[i] >> shift) & 3u));
    }
  }
  add_block_counts(counts, local);
}

/// The chunk load_chunk held, each point to its quadrant's next place in buffer dst from the
/// block's `cursor` (shared, absolute positions). Every thread of the block calls it (the ballots).
template <unsigned int Items>
__device__ __forceinline__ void scatter_chunk(const quad_args& a, unsigned int dst, std::uint32_t lo, std::uint32_t hi,
                                              std::uint32_t shift, const std::uint64_t (&code)[Items],
                                              const std::uint32_t (&id)[Items], unsigned int* cursor) {
#pragma unroll
  for (unsigned int i = 0; i < Items; ++i) {
    const bool valid = lo + i * blockDim.x + threadIdx.x < hi;
    const unsigned int q = valid ? static_cast<unsigned int>((code[i] >> shift) & 3u) : 4u;
    const unsigned int pos = quadrant_position(q, cursor);
    if (valid) {
      a.codes[dst][pos] = code[i];
      a.ids[dst][pos] = id[i];
    }
  }
}

struct wide_scatter_body {
  quad_args a;
  wide_task* t;
  __device__ void operator()(const launch_context& self) const;
};

/// A count block of wide node t->v: its chunk's quadrant counts into the task's; the last block
/// sets the quadrants' first positions and launches the scatter step, or, refused, refines the
/// node itself (and its subtree, as refine_block does).
__device__ void wide_count_block(const launch_context& ctx, const quad_args& a, wide_task* t) {
  __shared__ unsigned int counts[4];
  __shared__ bool last, scattering;
  const quad_node v = t->v;
  if (threadIdx.x < 4) counts[threadIdx.x] = 0;
  __syncthreads();
  const std::uint32_t shift = 2 * (a.max_depth - v.depth - 1);
  const std::uint64_t* codes = a.codes[v.depth & 1u];
  std::uint32_t lo = 0, hi = 0;
  wide_chunk_of(v, blockIdx.x, lo, hi);
  unsigned int local[4] = {0, 0, 0, 0};
  for (std::uint32_t k = lo + threadIdx.x; k < hi; k += wide_threads)
    count_quadrant(local, static_cast<unsigned int>((codes[k] >> shift) & 3u));
  add_block_counts(counts, local);
  __syncthreads();
  if (threadIdx.x < 4 && counts[threadIdx.x] != 0) atomicAdd(&t->count[threadIdx.x], counts[threadIdx.x]);
  if (!last_block_to_arrive(&t->count_done, t->grid, last)) return;
  if (threadIdx.x == 0) {
    unsigned int at = v.begin;
    for (int q = 0; q < 4; ++q) {
      t->first[q] = at;
      t->fill[q] = at;
      at += __ldcg(&t->count[q]);
    }
    scattering = static_cast<bool>(launch_step(ctx, sites::quadtree_wide_scatter, dim3(t->grid),
                                               dim3(wide_threads), wide_scatter_body{a, t}, v.end - v.begin));
  }
  __syncthreads();
  if (!scattering) refine_block(ctx, a, &v, 1);
}

/// A scatter block of wide node t->v: its chunk's points (held in registers) to their
/// quadrants in the other buffer, at positions from the task's cursors (one atomic per quadrant
/// and block, then one shared atomic per quadrant and warp); the last block places the
/// quadrants, and refines what it could not launch.
__device__ void wide_scatter_block(const launch_context& ctx, const quad_args& a, wide_task* t) {
  __shared__ unsigned int counts[4], cursor[4];
  __shared__ bool flag;
  __shared__ quad_node kept[4];
  __shared__ unsigned int kept_count;
  const quad_node v = t->v;
  if (threadIdx.x < 4) counts[threadIdx.x] = 0;
  __syncthreads();
  const std::uint32_t shift = 2 * (a.max_depth - v.depth - 1);
  const unsigned int src = v.depth & 1u, dst = src ^ 1u;
  std::uint32_t lo = 0, hi = 0;
  wide_chunk_of(v, blockIdx.x, lo, hi);
  std::uint64_t code[wide_items];
  std::uint32_t id[wide_items];
  load_chunk(a, src, lo, hi, shift, true, code, id, counts);
  __syncthreads();
  if (threadIdx.x < 4) cursor[threadIdx.x] = counts[threadIdx.x] != 0 ? atomicAdd(&t->fill[threadIdx.x], counts[threadIdx.x]) : 0u;
  __syncthreads();
  scatter_chunk(a, dst, lo, hi, shift, code, id, cursor);
  if (!last_block_to_arrive(&t->scatter_done, t->grid, flag)) return;
  if (threadIdx.x == 0) {
    atomicAdd(&a.counters[1], 1u);  // v (split)
    kept_count = 0;
    unsigned int first[4], count[4];
    for (int q = 0; q < 4; ++q) {
      first[q] = t->first[q];
      count[q] = __ldcg(&t->count[q]);
    }
    place_quadrants(ctx, a, v, first, count, [&](const quad_node& c) { kept[kept_count++] = c; });
  }
  __syncthreads();
  if (kept_count > 0) refine_block(ctx, a, kept, kept_count);
}

__device__ void wide_scatter_body::operator()(const launch_context& self) const { wide_scatter_block(self, a, t); }

struct wide_count_body {
  quad_args a;
  wide_task* t;
  __device__ void operator()(const launch_context& self) const { wide_count_block(self, a, t); }
};

/// Take a task for wide node c and launch its count grid; false when the pool is full or the
/// launch is refused (the caller refines c itself).
__device__ bool launch_wide(const launch_context& ctx, const quad_args& a, const quad_node& c) {
  const unsigned int k = atomicAdd(&a.counters[2], 1u);
  if (k >= a.task_capacity) return false;
  wide_task* t = a.tasks + k;
  *t = wide_task_for(c);
  return static_cast<bool>(launch_child(ctx, sites::quadtree_wide, dim3(t->grid), dim3(wide_threads),
                                        stream_kind::fire_and_forget, wide_count_body{a, t}, 0u, c.end - c.begin));
}

__global__ void wide_root_kernel(launch_context ctx, wide_count_body body) { body(ctx); }

/// The block's loop: refine the nodes on its stack until none is left. Refining a node: count its
/// points per quadrant, scatter them into the other buffer by quadrant, then each non-empty
/// quadrant is a leaf (few points or max_depth), or a node to split: launched (as the variant
/// says and the layer allows) or pushed on the stack.
__device__ void refine_block(const launch_context& ctx, const quad_args& a, const quad_node* first,
                             std::uint32_t first_count) {
  __shared__ quad_node stack[stack_capacity];
  __shared__ int top;
  __shared__ unsigned int count[4], fill[4];
  if (threadIdx.x == 0) {
    top = 0;
    for (std::uint32_t k = 0; k < first_count; ++k) stack[top++] = first[k];
  }
  for (;;) {
    __syncthreads();
    if (top == 0) break;
    const quad_node v = stack[top - 1];
    __syncthreads();
    if (threadIdx.x == 0) --top;
    if (threadIdx.x < 4) count[threadIdx.x] = 0;
    if (threadIdx.x == 0) atomicAdd(&a.counters[1], 1u);  // this node (split)
    __syncthreads();
    const std::uint32_t shift = 2 * (a.max_depth - v.depth - 1);
    const unsigned int src = v.depth & 1u, dst = src ^ 1u;
    // counts in registers, then one warp sum and shared atomic per quadrant and warp
    unsigned int local[4] = {0, 0, 0, 0};
    for (std::uint32_t k = v.begin + threadIdx.x; k < v.end; k += blockDim.x)
      count_quadrant(local, static_cast<unsigned int>((a.codes[src][k] >> shift) & 3u));
    add_block_counts(count, local);
    __syncthreads();
    if (threadIdx.x == 0) {
      fill[0] = 0;
      for (int q = 1; q < 4; ++q) fill[q] = fill[q - 1] + count[q - 1];
    }
    __syncthreads();
    unsigned int start[4];
    for (int q = 0; q < 4; ++q) start[q] = fill[q];  // (read before the scatter moves fill)
    __syncthreads();
    for (std::uint32_t base = v.begin; base < v.end; base += blockDim.x) {
      const std::uint32_t k = base + threadIdx.x;
      const bool valid = k < v.end;
      const std::uint64_t code = valid ? a.codes[src][k] : 0;
      const unsigned int q = valid ? static_cast<unsigned int>((code >> shift) & 3u) : 4u;
      const unsigned int pos = quadrant_position(q, fill);
      if (valid) {
        a.codes[dst][v.begin + pos] = code;
        a.ids[dst][v.begin + pos] = a.ids[src][k];
      }
    }
    __threadfence();  // the scatter, before a child grid (launched by thread 0) reads it
    __syncthreads();
    if (threadIdx.x != 0) continue;
    unsigned int first[4];
    for (int q = 0; q < 4; ++q) first[q] = v.begin + start[q];
    place_quadrants(ctx, a, v, first, count, [&](const quad_node& c) { push_node(ctx, stack, top, c); });
  }
}

__device__ void refine_body::operator()(const launch_context& self) const {
  if (blockIdx.x < count) refine_block(self, a, &nodes[blockIdx.x], 1);
}

__global__ void refine_root_kernel(launch_context ctx, refine_body body) { body(ctx); }

__global__ void cells_kernel(const point2* points, std::uint32_t n, quadtree_bounds b, std::uint32_t depth,
                             std::uint64_t* codes, std::uint32_t* ids) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  codes[i] = quadtree_cell(points[i], b, depth);
  ids[i] = i;
}

/// The first position in sorted[lo, hi) whose value is >= key.
__device__ std::uint32_t lower_bound(const std::uint64_t* sorted, std::uint32_t lo, std::uint32_t hi, std::uint64_t key) {
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (sorted[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/// Depth d of the Morton build: every run of equal cells at depth d not inside an earlier leaf
/// is a node; it is a leaf when it holds at most min_points points or d is max_depth (its points
/// are then marked done, unless d is the last depth: nothing reads them afterwards).
__global__ void morton_level_kernel(const std::uint64_t* sorted, std::uint32_t n, std::uint32_t d,
                                    std::uint32_t max_depth, std::uint32_t min_points, std::uint32_t parity,
                                    std::uint8_t* done, device_leaf* leaves, unsigned int* counters) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || done[i]) return;
  const std::uint32_t shift = 2 * (max_depth - d);
  const std::uint64_t prefix = sorted[i] >> shift;
  if (i > 0 && (sorted[i - 1] >> shift) == prefix) return;  // not the run's first point
  const std::uint32_t end = d == 0 ? n : lower_bound(sorted, i + 1, n, (prefix + 1) << shift);
  atomicAdd(&counters[1], 1u);
  if (end - i <= min_points || d == max_depth) {
    const unsigned int k = atomicAdd(&counters[0], 1u);
    leaves[k] = {prefix, i, end, d, parity};
    if (d < max_depth)
      for (std::uint32_t j = i; j < end; ++j) done[j] = 1;
  }
}

// ---- device_driver: the level loop on the device ---------------------------------------------

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

__global__ void level_root_kernel(launch_context ctx, level_pass_body body) { body(ctx); }

unsigned int blocks_for(std::uint64_t n, unsigned int threads) { return static_cast<unsigned int>((n + threads - 1) / threads); }

}  // namespace

// ---- names ----------------------------------------------------------------------------------

const char* to_string(quadtree_variant v) noexcept {
  switch (v) {
    case quadtree_variant::morton: return "morton";
    case quadtree_variant::child_per_node: return "child_per_node";
    case quadtree_variant::aggregated: return "aggregated";
    case quadtree_variant::thresholded: return "thresholded";
    case quadtree_variant::device_driver: return "device_driver";
  }
  return "?";
}

const std::vector<quadtree_variant>& all_quadtree_variants() {
  static const std::vector<quadtree_variant> all = {quadtree_variant::child_per_node, quadtree_variant::aggregated,
                                                    quadtree_variant::thresholded, quadtree_variant::device_driver,
                                                    quadtree_variant::morton};
  return all;
}

quadtree_variant parse_quadtree_variant(const std::string& name) {
  std::string choices;
  for (const auto v : all_quadtree_variants()) {
    if (name == to_string(v)) return v;
    choices += (choices.empty() ? "" : ", ") + std::string(to_string(v));
  }
  throw input_error("unknown quadtree variant '" + name + "' (expected one of " + choices + ")");
}

// ---- device_points ---------------------------------------------------------------------------

device_points::device_points(const std::vector<point2>& points) {
  CDPKIT_NVTX_SCOPE("quadtree::upload");
  check_quadtree_input(points, {});
  n_ = static_cast<std::uint32_t>(points.size());
  bounds_ = bounds_of(points);
  require_device_memory(std::uint64_t{n_} * sizeof(point2), "device_points (" + std::to_string(n_) + " points)");
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_points_), sizeof(point2) * n_));
  CDPKIT_CUDA_TRY(cudaMemcpy(d_points_.get(), points.data(), sizeof(point2) * n_, cudaMemcpyHostToDevice));
}

// ---- quadtree_engine -------------------------------------------------------------------------

struct quadtree_engine::buffers {
  detail::unique_device_ptr<std::uint64_t[]> codes[2];
  detail::unique_device_ptr<std::uint32_t[]> ids[2];
  detail::unique_device_ptr<device_leaf[]> leaves;
  detail::unique_device_ptr<std::uint8_t[]> done;
  detail::unique_device_ptr<unsigned int[]> counters;
  detail::unique_device_ptr<unsigned char[]> sort_temp;
  detail::unique_device_ptr<wide_task[]> tasks;
  std::uint32_t task_capacity = 0;
  detail::unique_device_ptr<level_node[]> level_nodes[2];  ///< device_driver, allocated at its first run
  detail::unique_device_ptr<driver_state[]> driver;
  std::uint64_t level_node_capacity = 0;
  std::size_t sort_temp_bytes = 0;
  unsigned int morton_parity = 0;  ///< which buffer the sort left the points in
};

quadtree_engine::quadtree_engine(const device_points& points) : points_(&points), b_(std::make_unique<buffers>()) {
  quadtree_sites::register_site_names();
  const std::uint64_t n = points.size();
  if (n > 0x7fffffffull)  // CUB's sort counts items in an int here
    throw input_error("quadtree_engine: " + std::to_string(n) + " points; at most 2^31 - 1 are built on the GPU");
  std::size_t temp = 0;
  cub::DoubleBuffer<std::uint64_t> keys(nullptr, nullptr);
  cub::DoubleBuffer<std::uint32_t> values(nullptr, nullptr);
  CDPKIT_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp, keys, values, static_cast<int>(n), 0,
                                                  static_cast<int>(2 * max_quadtree_depth)));
  b_->sort_temp_bytes = temp;
  // wide nodes of one depth are disjoint: at most n / wide_points of them per depth
  b_->task_capacity = static_cast<std::uint32_t>((max_quadtree_depth + 1) * (n / wide_points + 1));
  require_device_memory(n * (2 * 12 + sizeof(device_leaf) + 1) + temp + sizeof(wide_task) * b_->task_capacity,
                        "quadtree_engine (" + std::to_string(n) + " points)");
  for (int p = 0; p < 2; ++p) {
    CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->codes[p]), sizeof(std::uint64_t) * n));
    CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->ids[p]), sizeof(std::uint32_t) * n));
  }
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->leaves), sizeof(device_leaf) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->done), n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->counters), sizeof(unsigned int) * 4));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->sort_temp), std::max<std::size_t>(temp, 1)));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->tasks), sizeof(wide_task) * b_->task_capacity));
}

quadtree_engine::~quadtree_engine() = default;
quadtree_engine::quadtree_engine(quadtree_engine&&) noexcept = default;
quadtree_engine& quadtree_engine::operator=(quadtree_engine&&) noexcept = default;

quadtree_stats quadtree_engine::run(const quadtree_options& options, launch_runtime& runtime, cudaStream_t stream) {
  CDPKIT_NVTX_SCOPE_PAYLOAD("quadtree::run", static_cast<std::uint32_t>(options.variant));
  if (options.params.max_depth > max_quadtree_depth)
    throw input_error("quadtree: max_depth " + std::to_string(options.params.max_depth) + " is above the " +
                      std::to_string(max_quadtree_depth) + " the library builds");
  const std::uint32_t n = points_->size();
  const std::uint32_t depth = options.params.max_depth, min_points = options.params.min_points;
  last_ = options;
  ran_ = true;
  CDPKIT_CUDA_TRY(cudaMemsetAsync(b_->counters.get(), 0, sizeof(unsigned int) * 4, stream));
  cells_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(points_->data(), n, points_->bounds(), depth,
                                                        b_->codes[0].get(), b_->ids[0].get());
  CDPKIT_CUDA_TRY(cudaGetLastError());
  quadtree_stats stats;
  // the device builds' arguments (threshold: launch quadrants of more points; 0: every one)
  const auto args_with_threshold = [&](std::uint32_t threshold) {
    return quad_args{{b_->codes[0].get(), b_->codes[1].get()},
                     {b_->ids[0].get(), b_->ids[1].get()},
                     b_->leaves.get(),
                     b_->counters.get(),
                     b_->tasks.get(),
                     b_->task_capacity,
                     depth,
                     min_points,
                     threshold,
                     options.variant};
  };
  if (options.variant == quadtree_variant::morton) {
    CDPKIT_NVTX_SCOPE("quadtree::morton");
    cub::DoubleBuffer<std::uint64_t> keys(b_->codes[0].get(), b_->codes[1].get());
    cub::DoubleBuffer<std::uint32_t> values(b_->ids[0].get(), b_->ids[1].get());
    std::size_t temp = b_->sort_temp_bytes;
    if (depth > 0)
      CDPKIT_CUDA_TRY(cub::DeviceRadixSort::SortPairs(b_->sort_temp.get(), temp, keys, values, static_cast<int>(n), 0,
                                                      static_cast<int>(2 * depth), stream));
    b_->morton_parity = depth > 0 ? static_cast<unsigned int>(keys.selector) : 0u;
    CDPKIT_CUDA_TRY(cudaMemsetAsync(b_->done.get(), 0, n, stream));
    for (std::uint32_t d = 0; d <= depth; ++d) {
      morton_level_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(keys.Current(), n, d, depth, min_points,
                                                                   b_->morton_parity, b_->done.get(), b_->leaves.get(),
                                                                   b_->counters.get());
      CDPKIT_CUDA_TRY(cudaGetLastError());
    }
    stats.levels = depth + 1;
  } else if (n <= min_points || depth == 0) {
    // the root is the only node: a leaf (appended by the host, as a device leaf would be)
    const device_leaf root{0, 0, n, 0, 0};
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(b_->leaves.get(), &root, sizeof root, cudaMemcpyHostToDevice, stream));
    const unsigned int one[2] = {1, 1};
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(b_->counters.get(), one, sizeof one, cudaMemcpyHostToDevice, stream));
    CDPKIT_WAIT_STREAM(stream, runtime, "quadtree (root leaf)");
  } else if (options.variant == quadtree_variant::device_driver) {
    CDPKIT_NVTX_SCOPE("quadtree::device_driver");
    // a level's nodes that split hold more than min_points points each
    const std::uint64_t capacity = std::uint64_t{n} / (std::uint64_t{min_points} + 1) + 1;
    if (capacity > max_level_nodes)
      throw input_error("quadtree device_driver: " + std::to_string(n) + " points with min_points " +
                        std::to_string(min_points) + " could make more than 2^26 nodes in one level; raise min_points");
    if (b_->level_node_capacity < capacity) {
      b_->level_nodes[0].reset();
      b_->level_nodes[1].reset();
      b_->level_node_capacity = 0;
      require_device_memory(2 * capacity * sizeof(level_node) + sizeof(driver_state),
                            "quadtree device_driver (" + std::to_string(capacity) + " nodes per level)");
      for (int p = 0; p < 2; ++p)
        CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->level_nodes[p]), sizeof(level_node) * capacity));
      if (!b_->driver) CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->driver), sizeof(driver_state)));
      b_->level_node_capacity = capacity;
    }
    const driver_args d{args_with_threshold(0u), {b_->level_nodes[0].get(), b_->level_nodes[1].get()},
                        static_cast<std::uint32_t>(capacity), b_->driver.get()};
    // level 0: the root, every point active
    level_node root{};
    root.size = n;
    driver_state st{};
    st.next[0] = 1ull | (static_cast<unsigned long long>(n) << node_bits);
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(b_->level_nodes[0].get(), &root, sizeof root, cudaMemcpyHostToDevice, stream));
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(b_->driver.get(), &st, sizeof st, cudaMemcpyHostToDevice, stream));
    level_pass_body body{d, 0, 0};
    level_root_kernel<<<level_grid(n), level_threads, 0, stream>>>(runtime.root_context(), body);
    CDPKIT_CUDA_TRY(cudaGetLastError());
    // a refused launch hands the loop back: the host launches the pass it names, whose last block
    // goes on on the device again
    for (;;) {
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(&st, b_->driver.get(), sizeof st, cudaMemcpyDeviceToHost, stream));
      CDPKIT_WAIT_STREAM(stream, runtime, "quadtree::device_driver");
      if (st.handed_back == 0) break;
      stats.driver_handed_back = true;
      const unsigned int cleared = 0;
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(&b_->driver.get()->handed_back, &cleared, sizeof cleared, cudaMemcpyHostToDevice,
                                      stream));
      body.level = st.resume_level;
      body.pass = st.resume_pass;
      const unsigned long long active = st.next[st.resume_level & 1u] >> node_bits;
      CDPKIT_NVTX_SCOPE_PAYLOAD("quadtree::level (handed back)", st.resume_level);
      level_root_kernel<<<level_grid(active), level_threads, 0, stream>>>(runtime.root_context(), body);
      CDPKIT_CUDA_TRY(cudaGetLastError());
    }
    stats.levels = st.levels;
  } else {
    CDPKIT_NVTX_SCOPE("quadtree::recursion");
    const quad_args a = args_with_threshold(
        options.variant == quadtree_variant::thresholded ? options.threshold.value_or(4096u) : 0u);
    const quad_node root{0, 0, n, 0};
    if (n > wide_points) {  // the root's count grid, from the host (task 0)
      const wide_task t = wide_task_for(root);
      const unsigned int taken = 1;
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(b_->tasks.get(), &t, sizeof t, cudaMemcpyHostToDevice, stream));
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(b_->counters.get() + 2, &taken, sizeof taken, cudaMemcpyHostToDevice, stream));
      wide_root_kernel<<<t.grid, wide_threads, 0, stream>>>(runtime.root_context(), wide_count_body{a, b_->tasks.get()});
    } else {
      refine_root_kernel<<<1, node_threads, 0, stream>>>(runtime.root_context(), refine_body{a, {root}, 1});
    }
    CDPKIT_CUDA_TRY(cudaGetLastError());
  }
  unsigned int counters[4] = {0, 0, 0, 0};
  CDPKIT_CUDA_TRY(cudaMemcpyAsync(counters, b_->counters.get(), sizeof counters, cudaMemcpyDeviceToHost, stream));
  CDPKIT_WAIT_STREAM(stream, runtime, "quadtree::run");
  CDPKIT_CHECK_DEVICE_ERRORS(runtime);
  stats.leaves = counters[0];
  stats.nodes = counters[1];
  return stats;
}

quadtree quadtree_engine::result() const {
  quadtree q;
  if (!ran_) return q;
  wait_for_device("quadtree_engine::result", nullptr, __FILE__, __LINE__);
  const std::uint32_t n = points_->size();
  unsigned int counters[4];
  CDPKIT_CUDA_TRY(cudaMemcpy(counters, b_->counters.get(), sizeof counters, cudaMemcpyDeviceToHost));
  std::vector<device_leaf> leaves(counters[0]);
  if (!leaves.empty())
    CDPKIT_CUDA_TRY(cudaMemcpy(leaves.data(), b_->leaves.get(), sizeof(device_leaf) * leaves.size(), cudaMemcpyDeviceToHost));
  std::vector<std::uint32_t> ids[2];
  for (int p = 0; p < 2; ++p) {
    ids[p].resize(n);
    CDPKIT_CUDA_TRY(cudaMemcpy(ids[p].data(), b_->ids[p].get(), sizeof(std::uint32_t) * n, cudaMemcpyDeviceToHost));
  }
  q.params = last_.params;
  q.bounds = points_->bounds();
  q.nodes = counters[1];
  q.order.assign(n, 0);
  for (const device_leaf& l : leaves) {
    const unsigned int parity = last_.variant == quadtree_variant::morton ? b_->morton_parity : l.parity;
    for (std::uint32_t k = l.begin; k < l.end && k < n; ++k) q.order[k] = ids[parity][k];
    q.leaves.push_back({l.depth, l.code, l.begin, l.end});
    q.height = std::max(q.height, l.depth);
  }
  sort_leaves(q);
  return q;
}

quadtree quadtree_gpu(const device_points& points, const quadtree_options& options, launch_runtime& runtime) {
  quadtree_engine engine(points);
  (void)engine.run(options, runtime);
  return engine.result();
}

}  // namespace cdpkit
