#pragma once
// cdpkit/bfs.hpp — breadth-first search with child grids: every variant of the seed's story and
// the non-CDP yardstick. All variants return the level of every vertex (unreached = bfs_unreached).
//
// The neighbour expansion of a frontier is loop-to-child: frontier vertex i is a segment over its
// neighbour list, so the host-driven variants are for_each_segment with a policy, and the trace
// shows the same sites, child sizes and probes:
//
//   vertex_loop           serial_loop: each frontier thread loops over its neighbours
//   cdp_naive             child_per_thread, NULL stream, 1024-thread child blocks (the seed)
//   cdp_streams           the same with a named stream per launching thread
//   cdp_threshold{T}      a child only for degree > T, fire-and-forget
//   cdp_aggregated_warp / cdp_aggregated_block{T}   one child per warp / block (KLAP)
//   device_driver{T}      the level loop runs on the device: each level's driver grid launches
//                         the level's expansion (thresholded) and tail-launches itself for the
//                         next level; no host round trip per level
//   edge_balanced         no CDP: scan of frontier degrees + search (flat_balanced)

#include <cdpkit/bfs/sites.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/loop_to_child.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit {

inline constexpr std::uint32_t bfs_unreached = 0xffffffffu;

enum class bfs_variant : std::uint8_t {
  vertex_loop,
  cdp_naive,
  cdp_streams,
  cdp_threshold,
  cdp_aggregated_warp,
  cdp_aggregated_block,
  device_driver,
  edge_balanced,
};

const char* to_string(bfs_variant v) noexcept;
bfs_variant parse_bfs_variant(const std::string& name);  ///< throws cdpkit::input_error
const std::vector<bfs_variant>& all_bfs_variants();

struct bfs_options {
  bfs_variant variant = bfs_variant::cdp_threshold;
  /// Launch threshold (degree for cdp_threshold / device_driver, group total for aggregated).
  /// Unset: chosen per level on the device (cost model and the frontier's degree distribution);
  /// device_driver uses default_bfs_threshold() of the graph.
  std::optional<std::uint32_t> threshold;
  /// serial_item_ns: one thread's cost per neighbour visited (the default was measured on an
  /// H200 by bench/bfs_bench: a lone thread walking a hub).
  launch_cost_model cost_model = default_bfs_cost_model();

  static launch_cost_model default_bfs_cost_model() {
    launch_cost_model m;
    m.serial_item_ns = 808.0;  // bfs_bench on the H200, 2026-11-29
    return m;
  }
};

/// What a run did besides the levels.
struct bfs_stats {
  std::uint32_t num_levels = 0;        ///< levels with a non-empty frontier (source level = 0)
  std::uint64_t reached = 0;           ///< vertices with a level
  std::uint32_t device_levels = 0;     ///< levels driven from the device (device_driver)
  bool driver_handed_back = false;     ///< device_driver could not launch and the host finished
};

/// The balanced-rule threshold (loop_to_child/threshold_rule.hpp) over the degrees of the whole
/// graph, within budget_share of the pending budget: for the device driver, which does not look
/// at each frontier before launching it.
std::uint32_t default_bfs_threshold(const csr_graph& graph, const bfs_options& options,
                                    int pending_budget);

/// Buffers for BFS on one device graph, reused across runs. Move-only.
class bfs_engine {
 public:
  /// Throws cdpkit::cuda_error on allocation failure. `graph` must outlive the engine.
  explicit bfs_engine(const device_graph& graph);
  ~bfs_engine();
  bfs_engine(bfs_engine&&) noexcept;
  bfs_engine& operator=(bfs_engine&&) = delete;
  bfs_engine(const bfs_engine&) = delete;
  bfs_engine& operator=(const bfs_engine&) = delete;

  /// Run BFS from `source` and synchronize. device_driver needs options.threshold set (see
  /// default_bfs_threshold). Throws cdpkit::input_error for source >= num_vertices,
  /// cdpkit::cuda_error on CUDA or device-side errors.
  bfs_stats run(std::uint32_t source, const bfs_options& options, launch_runtime& runtime,
                cudaStream_t stream = nullptr);

  /// The levels of the last run, copied to the host.
  [[nodiscard]] std::vector<std::uint32_t> levels() const;

 private:
  bfs_stats run_host_loop(std::uint32_t level, std::uint32_t count, int cur,
                          const bfs_options& options, launch_runtime& runtime, cudaStream_t stream);
  void release() noexcept;

  const device_graph* graph_;
  std::uint32_t* d_levels_ = nullptr;
  std::uint32_t* d_frontier_[2] = {nullptr, nullptr};
  std::uint32_t* d_counters_ = nullptr;  ///< [2] frontier sizes + driver status words
  std::uint32_t* h_counters_ = nullptr;  ///< pinned mirror
};

/// BFS from `source` with a temporary engine; returns the levels.
std::vector<std::uint32_t> bfs(const device_graph& graph, std::uint32_t source,
                               const bfs_options& options = {},
                               launch_runtime& runtime = default_runtime());

/// CPU reference BFS (a plain queue). Throws cdpkit::input_error for a bad source.
std::vector<std::uint32_t> bfs_reference(const csr_graph& graph, std::uint32_t source);

/// Graph500-style validation of levels on an undirected (symmetric) graph: the source has level
/// 0; along every edge both ends are reached or neither, and levels differ by at most 1; every
/// other reached vertex has a neighbour one level up. Returns the number of violations and the
/// first one, described.
struct bfs_validation {
  std::uint64_t errors = 0;
  std::string first_error;
};
bfs_validation validate_bfs_levels(const csr_graph& graph, std::uint32_t source,
                                   const std::vector<std::uint32_t>& levels);

/// Input edges of the component reached (Graph500 TEPS counting: undirected edges, each once).
std::uint64_t bfs_traversed_edges(const csr_graph& graph, const std::vector<std::uint32_t>& levels);

}  // namespace cdpkit
