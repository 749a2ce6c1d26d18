#pragma once
// cdpkit/bfs.hpp — breadth-first search with child grids: every variant of the lecture's story (PMPP ch. 21) and
// the non-CDP yardstick. All variants return the level of every vertex (unreached = bfs_unreached).
//
// The neighbour expansion of a frontier is loop-to-child: frontier vertex i is a segment over its
// neighbour list, so the host-driven variants are for_each_segment with the loop policy of the
// same name, and the trace shows the same sites, child sizes and probes:
//
//   serial_loop           each frontier thread loops over its neighbours (the lecture's baseline)
//   child_per_thread      a child grid per frontier vertex, NULL stream, 1024-thread child blocks
//                         (the lecture's code); with stream = named_per_thread: a named stream
//                         per launching thread
//   thresholded{T}        a child only for degree > T, fire-and-forget
//   warp_aggregated / block_aggregated{T}   one child per warp / block (KLAP)
//   device_driver{T}      the level loop runs on the device: each level's driver grid launches
//                         the level's expansion (loop_to_child::thresholded_agent) and
//                         tail-launches itself for the next level; no host round trip per level
//   flat_balanced         no CDP: scan of frontier degrees + search

#include <cdpkit/launch/sites.hpp>
#include <cdpkit/detail/unique_device_ptr.hpp>
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

/// The expansion strategy of a level: the loop-to-child policy of the same name, or
/// device_driver (the level loop itself on the device).
enum class bfs_variant : std::uint8_t {
  serial_loop,
  child_per_thread,
  thresholded,
  warp_aggregated,
  block_aggregated,
  device_driver,
  flat_balanced,
};

/// "serial_loop", "child_per_thread", ... (the loop policy names, and "device_driver").
const char* to_string(bfs_variant v) noexcept;

/// A variant as named on a command line or in a table: the variant and, where the name says so,
/// the stream of its launches (unset: the variant's own default, see bfs_options::stream).
struct bfs_variant_choice {
  bfs_variant variant = bfs_variant::thresholded;
  std::optional<stream_kind> stream;
  friend bool operator==(const bfs_variant_choice& a, const bfs_variant_choice& b) noexcept {
    return a.variant == b.variant && a.stream == b.stream;
  }
  friend bool operator!=(const bfs_variant_choice& a, const bfs_variant_choice& b) noexcept {
    return !(a == b);
  }
};

/// "thresholded", or with a stream "child_per_thread+named_per_thread" (what parse_bfs_variant
/// reads back).
std::string to_string(const bfs_variant_choice& choice);

/// Parse "VARIANT" or "VARIANT+STREAM" (e.g. "child_per_thread+named_per_thread"), VARIANT one of
/// the names to_string(bfs_variant) gives and STREAM one parse_stream_kind reads; serial_loop and
/// flat_balanced launch no child grids and take no STREAM. Throws cdpkit::input_error naming the
/// bad value and the choices.
bfs_variant_choice parse_bfs_variant(const std::string& name);

/// The runs of the story, in order: every variant, and child_per_thread a second time with
/// named per-thread streams.
const std::vector<bfs_variant_choice>& all_bfs_variants();

struct bfs_options {
  bfs_variant variant = bfs_variant::thresholded;
  /// Stream of the expansion's child grids. Unset: the variant's default — the NULL stream for
  /// child_per_thread (the lecture's code), fire_and_forget for every other variant.
  std::optional<stream_kind> stream;
  /// Threads per block of the expansion's child grids (a multiple of 32 in [32, 1024]). Unset:
  /// the variant's default — 1024 for child_per_thread (the lecture's code), 256 otherwise.
  std::optional<std::uint32_t> child_block_threads;
  /// Launch threshold (degree for thresholded / device_driver, group total for aggregated).
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

  /// Options for a named variant (the other fields at their defaults).
  static bfs_options of(const bfs_variant_choice& choice) {
    bfs_options o;
    o.variant = choice.variant;
    o.stream = choice.stream;
    return o;
  }
  /// The variant and the stream option, as named.
  [[nodiscard]] bfs_variant_choice choice() const { return {variant, stream}; }
  /// The stream the expansion's launches use (the option, or the variant's default).
  [[nodiscard]] stream_kind effective_stream() const noexcept;
  /// The child block size the expansion's launches use (the option, or the variant's default).
  [[nodiscard]] std::uint32_t effective_child_block_threads() const noexcept;
};

/// What a run did besides the levels.
struct bfs_stats {
  std::uint32_t num_levels = 0;        ///< levels with a non-empty frontier (source level = 0)
  std::uint64_t reached = 0;           ///< vertices with a level
  std::uint32_t device_levels = 0;     ///< levels driven from the device (device_driver)
  bool driver_handed_back = false;     ///< device_driver could not launch and the host finished
  /// The launch threshold of every expanded level (entry k: the expansion of level k, num_levels
  /// entries), traced or not: the given T, 0 for child_per_thread, the one picked on the device
  /// for each level when automatic, device_driver's T for its levels. Empty for the variants
  /// without child grids (serial_loop, flat_balanced).
  std::vector<std::uint32_t> level_thresholds;
  /// True when the thresholds were picked per level on the device (no threshold given).
  bool threshold_auto = false;
};

/// The balanced-rule threshold (loop_to_child/threshold_rule.hpp) over the degrees of the whole
/// graph, within budget_share of the pending budget: for the device driver, which does not look
/// at each frontier before launching it.
std::uint32_t default_bfs_threshold(const csr_graph& graph, const bfs_options& options,
                                    int pending_budget);

/// Buffers for BFS on one device graph, reused across runs. Move-only RAII (defaulted moves).
class bfs_engine {
 public:
  /// Throws cdpkit::cuda_error on allocation failure. `graph` must outlive the engine.
  explicit bfs_engine(const device_graph& graph);

  /// Run BFS from `source` and synchronize. device_driver needs options.threshold set (see
  /// default_bfs_threshold). Throws cdpkit::input_error for source >= num_vertices or a
  /// child_block_threads that is not a multiple of 32 in [32, 1024], cdpkit::cuda_error on CUDA
  /// or device-side errors.
  bfs_stats run(std::uint32_t source, const bfs_options& options, launch_runtime& runtime,
                cudaStream_t stream = nullptr);

  /// The levels of the last run, copied to the host.
  [[nodiscard]] std::vector<std::uint32_t> levels() const;

 private:
  bfs_stats run_host_loop(std::uint32_t level, std::uint32_t count, int cur,
                          const bfs_options& options, launch_runtime& runtime, cudaStream_t stream);

  const device_graph* graph_;
  detail::unique_device_ptr<std::uint32_t[]> d_levels_;
  detail::unique_device_ptr<std::uint32_t[]> d_frontier_[2];
  /// [0], [1] frontier sizes, [2..5] driver status words, [6] the level's automatic threshold
  detail::unique_device_ptr<std::uint32_t[]> d_counters_;
  detail::unique_pinned_ptr<std::uint32_t[]> h_counters_;  ///< pinned mirror
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
/// Precondition: `levels` holds one level per vertex of `graph`, as the BFS variants return it
/// (bfs_unreached for the others); throws cdpkit::input_error when its size differs.
std::uint64_t bfs_traversed_edges(const csr_graph& graph, const std::vector<std::uint32_t>& levels);

}  // namespace cdpkit
