// BFS's host engine (cdpkit/bfs.hpp): bfs_engine's buffers, the level loop on the host around a
// loop-to-child neighbour expansion (for_each_segment), and the launch of the device driver
// (device_driver), with the host finishing the levels when the driver hands the loop back. The
// device code is cdpkit/bfs/agents/ and cdpkit/bfs/kernels.cuh.

#include <cdpkit/bfs.hpp>
#include <cdpkit/bfs/kernels.cuh>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/loop_to_child.cuh>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/wait.hpp>

#include <string>
#include <utility>

namespace cdpkit {

namespace {

using bfs_device::driver_args;
using bfs_device::driver_body;
using bfs_device::frontier_segments;
using bfs_device::visit_op;
using loop_to_child::no_pre_op;

loop_policy policy_for(const bfs_options& o) {
  loop_policy p;
  p.cost_model = o.cost_model;
  p.threshold = o.threshold;
  p.launch_site = static_cast<std::uint16_t>(sites::bfs_neighbors);
  p.stream = o.effective_stream();
  p.child_block_threads = o.effective_child_block_threads();
  switch (o.variant) {
    case bfs_variant::serial_loop: p.kind = loop_policy_kind::serial_loop; break;
    case bfs_variant::child_per_thread:  // the lecture's code: a 1024-thread child per vertex
      p.kind = loop_policy_kind::child_per_thread;
      p.threshold = 0u;
      break;
    case bfs_variant::thresholded:
    case bfs_variant::device_driver: p.kind = loop_policy_kind::thresholded; break;
    case bfs_variant::warp_aggregated: p.kind = loop_policy_kind::warp_aggregated; break;
    case bfs_variant::block_aggregated: p.kind = loop_policy_kind::block_aggregated; break;
    case bfs_variant::flat_balanced: p.kind = loop_policy_kind::flat_balanced; break;
  }
  return p;
}

/// Slot of d_counters where an automatic threshold is picked for the level being expanded.
constexpr int auto_threshold_slot = 6;
constexpr std::size_t counter_words = 8;

}  // namespace

bfs_engine::bfs_engine(const device_graph& graph) : graph_(&graph) {
  if (graph.num_vertices() > max_segments)
    throw input_error("bfs: " + std::to_string(graph.num_vertices()) + " vertices; at most " +
                      std::to_string(max_segments) + " (2^32 - 256) are supported");
  const std::size_t n = std::max<std::size_t>(1, graph.num_vertices());
  // (on a throw, the members free what was allocated)
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_levels_), sizeof(std::uint32_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_frontier_[0]), sizeof(std::uint32_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_frontier_[1]), sizeof(std::uint32_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_counters_), sizeof(std::uint32_t) * counter_words));
  CDPKIT_CUDA_TRY(
      cudaMallocHost(detail::out_ptr(h_counters_), sizeof(std::uint32_t) * counter_words));
}

bfs_stats bfs_engine::run(std::uint32_t source, const bfs_options& options,
                          launch_runtime& runtime, cudaStream_t stream) {
  CDPKIT_NVTX_SCOPE("bfs::run");
  const std::uint32_t n = graph_->num_vertices();
  if (source >= n)
    throw input_error("bfs: source " + std::to_string(source) + " is not a vertex (the graph has " +
                      std::to_string(n) + ")");
  const std::uint32_t child_block_threads = options.effective_child_block_threads();
  detail::check_child_block_threads(child_block_threads, "bfs_options::child_block_threads");
  bfs_device::init_kernel<<<static_cast<unsigned int>((std::uint64_t{n} + 255) / 256), 256, 0, stream>>>(
      d_levels_.get(), n, source, d_frontier_[0].get(), d_counters_.get());
  CDPKIT_CUDA_TRY(cudaGetLastError());
  if (options.variant != bfs_variant::device_driver)
    return run_host_loop(0, 1, 0, options, runtime, stream);

  if (!options.threshold)
    throw input_error("bfs: device_driver needs a threshold (see default_bfs_threshold)");
  const driver_args args{graph_->d_offsets(), graph_->d_neighbors(), d_levels_.get(),
                         d_frontier_[0].get(), d_frontier_[1].get(), d_counters_.get(),
                         *options.threshold, options.effective_stream(), child_block_threads};
  {
    CDPKIT_NVTX_SCOPE("bfs::device_driver");
    bfs_device::driver_root_kernel<<<1, 32, 0, stream>>>(runtime.root_context(), driver_body{args, 0, 0});
    CDPKIT_CUDA_TRY(cudaGetLastError());
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_counters_.get(), d_counters_.get(),
                                    sizeof(std::uint32_t) * counter_words, cudaMemcpyDeviceToHost,
                                    stream));
    CDPKIT_WAIT_STREAM(stream, runtime, "bfs::device_driver");
  }
  CDPKIT_CHECK_DEVICE_ERRORS(runtime);
  bfs_stats stats;
  stats.device_levels = h_counters_[2];
  if (h_counters_[3] != 0) {
    // the device could not launch: finish the remaining levels from the host (with the same T)
    const std::uint32_t level = h_counters_[4], cur = h_counters_[5];
    const std::uint32_t count = h_counters_[cur];
    bfs_stats rest = run_host_loop(level, count, static_cast<int>(cur), options, runtime, stream);
    rest.device_levels = stats.device_levels;
    rest.driver_handed_back = true;
    rest.level_thresholds.insert(rest.level_thresholds.begin(), level, *options.threshold);
    return rest;
  }
  stats.num_levels = stats.device_levels;
  stats.level_thresholds.assign(stats.num_levels, *options.threshold);
  return stats;
}

bfs_stats bfs_engine::run_host_loop(std::uint32_t level, std::uint32_t count, int cur,
                                    const bfs_options& options, launch_runtime& runtime,
                                    cudaStream_t stream) {
  const loop_policy policy = policy_for(options);
  bfs_stats stats;
  stats.threshold_auto = policy.auto_threshold();
  std::uint32_t* d_picked = d_counters_.get() + auto_threshold_slot;
  while (count > 0) {
    CDPKIT_NVTX_SCOPE_PAYLOAD("bfs::level", level);
    const std::string range = "bfs level " + std::to_string(level);  // (the watchdog's wording)
    CDPKIT_CUDA_TRY(
        cudaMemsetAsync(d_counters_.get() + (1 - cur), 0, sizeof(std::uint32_t), stream));
    // An automatic threshold is picked into d_counters_[auto_threshold_slot], so that the one
    // copy per level brings it back with the next frontier's size.
    const segment_async_result expanded = loop_to_child::detail::enqueue_for_each_segment(
        frontier_segments{graph_->d_offsets(), d_frontier_[cur].get(), count}, no_pre_op{},
        visit_op{graph_->d_neighbors(), d_levels_.get(), level + 1, d_frontier_[1 - cur].get(),
                 d_counters_.get() + (1 - cur)},
        policy, runtime, stream, d_picked);
    std::uint32_t next_count = 0;
    if (stats.threshold_auto) {
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_counters_.get(), d_counters_.get(),
                                      sizeof(std::uint32_t) * counter_words,
                                      cudaMemcpyDeviceToHost, stream));
      CDPKIT_WAIT_STREAM(stream, runtime, range.c_str());
      next_count = h_counters_[1 - cur];
      stats.level_thresholds.push_back(h_counters_[auto_threshold_slot]);
    } else {
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_counters_.get(), d_counters_.get() + (1 - cur),
                                      sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
      CDPKIT_WAIT_STREAM(stream, runtime, range.c_str());
      next_count = h_counters_[0];
      if (policy.uses_cdp()) stats.level_thresholds.push_back(policy.threshold.value_or(0u));
    }
    (void)expanded;
    count = next_count;
    cur = 1 - cur;
    ++level;
  }
  CDPKIT_CHECK_DEVICE_ERRORS(runtime);
  stats.num_levels = level;
  return stats;
}

std::vector<std::uint32_t> bfs_engine::levels() const {
  std::vector<std::uint32_t> out(graph_->num_vertices());
  wait_for_device("bfs_engine::levels", nullptr, __FILE__, __LINE__);
  if (!out.empty())
    CDPKIT_CUDA_TRY(cudaMemcpy(out.data(), d_levels_.get(), sizeof(std::uint32_t) * out.size(),
                               cudaMemcpyDeviceToHost));
  return out;
}

std::vector<std::uint32_t> bfs(const device_graph& graph, std::uint32_t source,
                               const bfs_options& options, launch_runtime& runtime) {
  bfs_engine engine(graph);
  (void)engine.run(source, options, runtime);
  return engine.levels();
}

}  // namespace cdpkit
