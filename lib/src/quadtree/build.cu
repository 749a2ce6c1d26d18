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

struct quad_args {
  std::uint64_t* codes[2];    ///< cell codes at max_depth, by depth parity
  std::uint32_t* ids[2];      ///< point ids, alongside
  device_leaf* leaves;
  unsigned int* counters;     ///< [0] leaves, [1] nodes
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
    const unsigned int lane = threadIdx.x & 31u;
    // one shared atomic per quadrant per warp step (clustered points all fall in one quadrant)
    // (whole warps step together: the loop bound is the block's, blockDim a multiple of 32)
    for (std::uint32_t base = v.begin; base < v.end; base += blockDim.x) {
      const std::uint32_t k = base + threadIdx.x;
      const unsigned int q = k < v.end ? static_cast<unsigned int>((a.codes[src][k] >> shift) & 3u) : 4u;
      for (unsigned int c = 0; c < 4; ++c) {
        const unsigned int same = __ballot_sync(0xffffffffu, q == c);
        if (same != 0 && lane == static_cast<unsigned int>(__ffs(same) - 1)) atomicAdd(&count[c], __popc(same));
      }
    }
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
      unsigned int pos = 0;
      for (unsigned int c = 0; c < 4; ++c) {  // the warp's points of quadrant c take one range
        const unsigned int same = __ballot_sync(0xffffffffu, q == c);
        if (same == 0) continue;
        const unsigned int leader = static_cast<unsigned int>(__ffs(same) - 1);
        unsigned int first = 0;
        if (lane == leader) first = atomicAdd(&fill[c], __popc(same));
        first = __shfl_sync(0xffffffffu, first, leader);
        if (q == c) pos = first + __popc(same & ((1u << lane) - 1u));
      }
      if (valid) {
        a.codes[dst][v.begin + pos] = code;
        a.ids[dst][v.begin + pos] = a.ids[src][k];
      }
    }
    __threadfence();  // the scatter, before a child grid (launched by thread 0) reads it
    __syncthreads();
    if (threadIdx.x != 0) continue;
    quad_node split[4];
    std::uint32_t splits = 0;
    for (std::uint32_t q = 0; q < 4; ++q) {
      if (count[q] == 0) continue;  // an empty quadrant is not a node
      const quad_node c{v.code * 4 + q, v.begin + start[q], v.begin + start[q] + count[q], v.depth + 1};
      if (count[q] <= a.min_points || c.depth >= a.max_depth) append_leaf(a, c);
      else split[splits++] = c;
    }
    if (a.variant == quadtree_variant::child_per_node) {
      for (std::uint32_t s = 0; s < splits; ++s) {
        refine_body body{a, {split[s]}, 1};
        if (!launch_child(ctx, sites::quadtree_nodes, dim3(1), dim3(node_threads), stream_kind::fire_and_forget, body,
                          0u, split[s].end - split[s].begin))
          push_node(ctx, stack, top, split[s]);
      }
    } else {
      refine_body body{a, {}, 0};
      std::uint32_t work = 0;
      for (std::uint32_t s = 0; s < splits; ++s) {
        if (split[s].end - split[s].begin > a.threshold) {
          body.nodes[body.count++] = split[s];
          work += split[s].end - split[s].begin;
        } else {
          push_node(ctx, stack, top, split[s]);
        }
      }
      if (body.count > 0 && !launch_child(ctx, sites::quadtree_nodes, dim3(body.count), dim3(node_threads),
                                          stream_kind::fire_and_forget, body, 0u, work))
        for (std::uint32_t s = 0; s < body.count; ++s) push_node(ctx, stack, top, body.nodes[s]);
    }
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

unsigned int blocks_for(std::uint64_t n, unsigned int threads) { return static_cast<unsigned int>((n + threads - 1) / threads); }

}  // namespace

// ---- names ----------------------------------------------------------------------------------

const char* to_string(quadtree_variant v) noexcept {
  switch (v) {
    case quadtree_variant::morton: return "morton";
    case quadtree_variant::child_per_node: return "child_per_node";
    case quadtree_variant::aggregated: return "aggregated";
    case quadtree_variant::thresholded: return "thresholded";
  }
  return "?";
}

const std::vector<quadtree_variant>& all_quadtree_variants() {
  static const std::vector<quadtree_variant> all = {quadtree_variant::child_per_node, quadtree_variant::aggregated,
                                                    quadtree_variant::thresholded, quadtree_variant::morton};
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
  require_device_memory(n * (2 * 12 + sizeof(device_leaf) + 1) + temp, "quadtree_engine (" + std::to_string(n) + " points)");
  for (int p = 0; p < 2; ++p) {
    CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->codes[p]), sizeof(std::uint64_t) * n));
    CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->ids[p]), sizeof(std::uint32_t) * n));
  }
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->leaves), sizeof(device_leaf) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->done), n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->counters), sizeof(unsigned int) * 4));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->sort_temp), std::max<std::size_t>(temp, 1)));
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
  } else {
    CDPKIT_NVTX_SCOPE("quadtree::recursion");
    quad_args a{{b_->codes[0].get(), b_->codes[1].get()},
                {b_->ids[0].get(), b_->ids[1].get()},
                b_->leaves.get(),
                b_->counters.get(),
                depth,
                min_points,
                options.variant == quadtree_variant::thresholded ? options.threshold.value_or(4096u) : 0u,
                options.variant};
    refine_body root{a, {quad_node{0, 0, n, 0}}, 1};
    refine_root_kernel<<<1, node_threads, 0, stream>>>(runtime.root_context(), root);
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
