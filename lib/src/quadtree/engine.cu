// The quadtree's host engine (cdpkit/quadtree_build.hpp): the variants' names, device_points, and
// quadtree_engine: its buffers, the dispatch of each variant (the Morton yardstick's sort and
// level grids, device_driver's level loop with the host resuming what the device hands back, the
// recursions' root grid) and the assembly of the result. The device code is
// cdpkit/quadtree/agents/ and cdpkit/quadtree/kernels.cuh.

#include <cdpkit/detail/resident_blocks.cuh>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/quadtree/kernels.cuh>
#include <cdpkit/quadtree_build.hpp>
#include <cdpkit/wait.hpp>

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <string>

namespace cdpkit {

namespace {

using quadtree_device::cells_kernel;
using quadtree_device::device_leaf;
using quadtree_device::driver_args;
using quadtree_device::driver_state;
using quadtree_device::level_grid;
using quadtree_device::level_node;
using quadtree_device::level_pass_body;
using quadtree_device::level_root_kernel;
using quadtree_device::level_threads;
using quadtree_device::max_level_nodes;
using quadtree_device::morton_level_kernel;
using quadtree_device::node_bits;
using quadtree_device::node_threads;
using quadtree_device::quad_args;
using quadtree_device::quad_node;
using quadtree_device::radix_args;
using quadtree_device::radix_count_body;
using quadtree_device::radix_drain_kernel;
using quadtree_device::radix_job;
using quadtree_device::radix_root_kernel;
using quadtree_device::radix_task;
using quadtree_device::radix_threads;
using quadtree_device::radix_tile;
using quadtree_device::refine_body;
using quadtree_device::refine_root_kernel;
using quadtree_device::wide_count_body;
using quadtree_device::wide_points;
using quadtree_device::wide_root_kernel;
using quadtree_device::wide_task;
using quadtree_device::wide_task_for;
using quadtree_device::wide_threads;

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
    case quadtree_variant::radix: return "radix";
  }
  return "?";
}

const std::vector<quadtree_variant>& all_quadtree_variants() {
  static const std::vector<quadtree_variant> all = {quadtree_variant::child_per_node, quadtree_variant::aggregated,
                                                    quadtree_variant::thresholded, quadtree_variant::device_driver,
                                                    quadtree_variant::radix, quadtree_variant::morton};
  return all;
}

quadtree_variant parse_quadtree_variant(const std::string& name) {
  std::string choices;
  for (const auto v : all_quadtree_variants()) {
    if (name == to_string(v)) return v;
    choices += (choices.empty() ? "" : ", ") + std::string(to_string(v));
  }
  throw input_error("unknown quadtree variant " + quoted_input(name) + " (expected one of " + choices + ")");
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
  detail::unique_device_ptr<radix_task[]> radix_tasks;  ///< radix, allocated at its first run
  detail::unique_device_ptr<radix_job[]> radix_jobs;
  detail::unique_device_ptr<unsigned int[]> radix_queue;
  std::uint64_t radix_task_capacity = 0, radix_job_capacity = 0;
  std::size_t sort_temp_bytes = 0;
  unsigned int morton_parity = 0;  ///< which buffer the sort left the points in
};

quadtree_engine::quadtree_engine(const device_points& points) : points_(&points), b_(std::make_unique<buffers>()) {
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
  } else if (options.variant == quadtree_variant::radix) {
    CDPKIT_NVTX_SCOPE("quadtree::radix");
    // wide nodes of one depth are disjoint (more than wide_points points each), and the grids'
    // passes go 4 levels at a time (tasks at depths 0, 4, 8, ...); the jobs queued by grids are
    // disjoint (more than min_points each), and so are the larger-than-a-tile jobs the drain's
    // blocks queue at one depth
    const std::uint64_t tasks = std::uint64_t{(depth + 3) / 4 + 1} * (n / wide_points) + 1;
    const std::uint64_t jobs = n / (std::uint64_t{min_points} + 1) + 1 + std::uint64_t{depth + 1} * (n / radix_tile + 1);
    if (jobs > 0xffffffffull || tasks > 0xffffffffull)
      throw input_error("quadtree radix: " + std::to_string(n) + " points with min_points " + std::to_string(min_points) +
                        " could queue more than 2^32 jobs; raise min_points");
    if (b_->radix_task_capacity < tasks || b_->radix_job_capacity < jobs) {
      b_->radix_tasks.reset();
      b_->radix_jobs.reset();
      b_->radix_task_capacity = b_->radix_job_capacity = 0;
      require_device_memory(tasks * sizeof(radix_task) + jobs * sizeof(radix_job),
                            "quadtree radix (" + std::to_string(jobs) + " queue slots, " + std::to_string(tasks) + " tasks)");
      CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->radix_tasks), sizeof(radix_task) * tasks));
      CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->radix_jobs), sizeof(radix_job) * jobs));
      if (!b_->radix_queue) CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(b_->radix_queue), sizeof(unsigned int) * 4));
      b_->radix_task_capacity = tasks;
      b_->radix_job_capacity = jobs;
    }
    const radix_args r{args_with_threshold(0u),
                       b_->radix_tasks.get(),
                       static_cast<std::uint32_t>(b_->radix_task_capacity),
                       b_->radix_jobs.get(),
                       static_cast<std::uint32_t>(b_->radix_job_capacity),
                       b_->radix_queue.get()};
    CDPKIT_CUDA_TRY(cudaMemsetAsync(r.jobs, 0, sizeof(radix_job) * b_->radix_job_capacity, stream));
    const quad_node root{0, 0, n, 0};
    unsigned int queue[4] = {0, 0, 0, 0};  // jobs added, taken, done; tasks taken
    const unsigned int one = 1;            // the root, counted as a node
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(b_->counters.get() + 1, &one, sizeof one, cudaMemcpyHostToDevice, stream));
    radix_task root_task{};
    if (n > wide_points) {  // the root's count grid, from the host (task 0)
      quadtree_device::init_radix_task(root_task, root, 0u, depth);
      queue[3] = 1;
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(r.tasks, &root_task, sizeof root_task, cudaMemcpyHostToDevice, stream));
    } else {  // the root is the drain's first job
      const radix_job job{root, 1u};
      queue[0] = 1;
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(r.jobs, &job, sizeof job, cudaMemcpyHostToDevice, stream));
    }
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(r.queue, queue, sizeof queue, cudaMemcpyHostToDevice, stream));
    if (n > wide_points) {
      radix_root_kernel<<<root_task.grid, radix_threads, 0, stream>>>(runtime.root_context(), radix_count_body{r, r.tasks});
      CDPKIT_CUDA_TRY(cudaGetLastError());
    }
    radix_drain_kernel<<<detail::resident_blocks(radix_drain_kernel, radix_threads), radix_threads, 0, stream>>>(
        runtime.root_context(), r);
    CDPKIT_CUDA_TRY(cudaGetLastError());
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
