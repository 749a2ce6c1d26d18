#pragma once
// cdpkit/loop_to_child.hpp — the loop-to-child transformation (PMPP Fig. 21.4 -> 21.5), host API.
//
// The pattern: for each parent index i, do some work pre_op(i), then item_op(i, j) for every j in
// [begin[i], end[i]). A thread that loops over a long list leaves its warp's other lanes idle
// (control divergence) and misses parallelism; launching a child grid per list fixes that for
// long lists and wastes ~1 us per launch on short ones. The policies here tell that story, and
// flat_balanced is the honest non-CDP yardstick.
//
// This header: policies, the launch cost model, what a run returns (segment_result),
// segment-length generators and the reference workload used by the sample, the benchmark and the
// tests. The generic algorithm over your own operators is cdpkit/loop_to_child.cuh; its device
// building blocks (one agent per strategy) are cdpkit/loop_to_child/agents.cuh; its trace sites
// are cdpkit/loop_to_child/sites.hpp.

#include <cdpkit/detail/device_buffer.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/launch/types.hpp>
#include <cdpkit/loop_to_child/sites.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit {

/// Most segments for_each_segment takes: 2^32 - 256, so that 32-bit thread indices of the parent
/// grid (blocks of 256) never wrap.
inline constexpr std::uint32_t max_segments = 0xffffff00u;

/// How for_each_segment maps segments to threads and grids.
enum class loop_policy_kind : std::uint8_t {
  serial_loop,       ///< each parent thread loops over its segment (Fig. 21.4)
  child_per_thread,  ///< each parent thread launches ceil(len/256) blocks of 256 (Fig. 21.5)
  thresholded,       ///< launch only when len > threshold, loop otherwise
  warp_aggregated,   ///< one child per warp over its lanes' concatenated segments (KLAP)
  block_aggregated,  ///< one child per block over its threads' concatenated segments (KLAP)
  flat_balanced,     ///< no CDP: one grid over all items, scan + search (the yardstick)
};

/// The launch cost model behind default thresholds: a child grid pays off when the serial work
/// it replaces exceeds what the launch costs. launch_ns are the fan-out costs per child measured
/// on an H200 (DESIGN.md); serial_item_ns is what one thread, looping alone, spends per item of
/// the reference workload (8 hash rounds), measured on an H200 by bench/loop_to_child_bench.
/// A loop run by `lanes` threads together (a warp's or a block's cooperative loop) is that many
/// times cheaper per item, so its threshold is that many times higher.
struct launch_cost_model {
  double launch_ns[stream_kind_count] = {1100.0, 750.0, 1600.0, 9900.0};
  double serial_item_ns = 345.0;  // loop_to_child_bench on the H200, 2026-11-29
  /// Share of the pending budget that an automatic threshold's launches may use.
  double budget_share = 0.5;
  /// ceil(lanes * launch_ns[stream] / serial_item_ns); throws cdpkit::input_error for a
  /// non-positive serial_item_ns or lanes == 0.
  [[nodiscard]] std::uint32_t threshold(stream_kind stream, std::uint32_t lanes = 1) const;
};

/// A policy with its parameters.
///
/// Thresholds: a segment (thresholded) or a group's concatenation (*_aggregated) gets a child
/// grid when its length exceeds T. A given T is used as is. Unset, T is chosen on the device
/// before the run from a log2 histogram of the lengths by the balanced rule
/// (loop_to_child/threshold_rule.hpp): the T = 2^b - 1 that minimizes the longer of "all launches
/// one after another on the launch path" and "the longest loop left inline", among those whose
/// launches stay within budget_share of the pending budget (past the budget, launches fall back
/// in thread order, and a huge segment may end up looped over by one thread).
struct loop_policy {
  loop_policy_kind kind = loop_policy_kind::serial_loop;
  std::optional<std::uint32_t> threshold;
  stream_kind stream = stream_kind::fire_and_forget;
  launch_cost_model cost_model{};
  /// Threads per block of the child grids (a multiple of 32, at most 1024).
  std::uint32_t child_block_threads = 256;
  /// Launch site recorded in the trace for this policy's launches (an algorithm built on
  /// loop-to-child names its own, e.g. sites::bfs_neighbors); unset: loop_to_child.<policy>.
  std::optional<std::uint16_t> launch_site;

  static loop_policy serial() { return make(loop_policy_kind::serial_loop, {}, {}); }
  static loop_policy child_per_thread(stream_kind s = stream_kind::fire_and_forget) {
    return make(loop_policy_kind::child_per_thread, 0u, s);
  }
  static loop_policy thresholded(std::optional<std::uint32_t> t = {},
                                 stream_kind s = stream_kind::fire_and_forget) {
    return make(loop_policy_kind::thresholded, t, s);
  }
  static loop_policy warp_aggregated(std::optional<std::uint32_t> t = {},
                                     stream_kind s = stream_kind::fire_and_forget) {
    return make(loop_policy_kind::warp_aggregated, t, s);
  }
  static loop_policy block_aggregated(std::optional<std::uint32_t> t = {},
                                      stream_kind s = stream_kind::fire_and_forget) {
    return make(loop_policy_kind::block_aggregated, t, s);
  }
  static loop_policy flat_balanced() { return make(loop_policy_kind::flat_balanced, {}, {}); }
  static loop_policy make(loop_policy_kind k, std::optional<std::uint32_t> t, stream_kind s) {
    loop_policy p;
    p.kind = k;
    p.threshold = t;
    p.stream = s;
    return p;
  }

  /// Threads that loop together in this policy's inline path: 1, 32 (warp) or 256 (block).
  [[nodiscard]] std::uint32_t loop_lanes() const noexcept;
  /// Break-even length of one segment on its own, lanes * launch_ns / serial_item_ns (0 for
  /// child_per_thread and the non-CDP policies); automatic thresholds are never below it when a
  /// single launch is at stake.
  [[nodiscard]] std::uint32_t cost_model_threshold() const;
  /// True when T is chosen on the device from the length distribution (a CDP policy, no T given).
  [[nodiscard]] bool auto_threshold() const noexcept { return uses_cdp() && !threshold; }
  /// Does this policy launch child grids?
  [[nodiscard]] bool uses_cdp() const noexcept {
    return kind != loop_policy_kind::serial_loop && kind != loop_policy_kind::flat_balanced;
  }
};

/// What a for_each_segment run did: its policy and the launch threshold it used, traced or not.
struct segment_result {
  loop_policy_kind kind = loop_policy_kind::serial_loop;
  /// The threshold T the run launched by (a segment or group total longer than T got a child):
  /// the policy's T when given (0 for child_per_thread), else the one picked on the device.
  /// Unset for the policies without child grids (serial_loop, flat_balanced), and for an
  /// automatic threshold when there were no segments (nothing was picked).
  std::optional<std::uint32_t> threshold;
  /// True when T was picked on the device (loop_policy::auto_threshold()).
  bool threshold_auto = false;
};

/// What for_each_segment_async enqueued: read result() once the caller has synchronized the
/// stream. Holds the 4 bytes on the device where an automatic threshold is picked (freed
/// stream-ordered when the handle goes). Move-only; ignoring it is fine.
class segment_async_result {
 public:
  segment_async_result() = default;
  /// For for_each_segment_async: `known` holds the policy's part of the result; `d_threshold`
  /// (may be null) is where the device writes the picked threshold, owned by `picked` or, when
  /// `picked` is empty, by the caller.
  segment_async_result(segment_result known, const std::uint32_t* d_threshold,
                       detail::device_buffer<std::uint32_t> picked = {}) noexcept
      : known_(known), d_threshold_(d_threshold), picked_(std::move(picked)) {}

  /// The result. Precondition: the run's work is done (the caller synchronized the stream, e.g.
  /// with cdpkit::wait_for_stream). An automatic threshold costs one 4-byte copy from the device;
  /// throws cdpkit::cuda_error when it fails.
  [[nodiscard]] segment_result result() const;
  /// Device address of the picked threshold (nullptr unless one is picked); valid while this
  /// handle lives. For callers that copy it back together with their own results.
  [[nodiscard]] const std::uint32_t* d_threshold() const noexcept { return d_threshold_; }

 private:
  segment_result known_{};
  const std::uint32_t* d_threshold_ = nullptr;
  detail::device_buffer<std::uint32_t> picked_;
};

/// "serial_loop", "child_per_thread", ... (the names used in CLI flags, JSON and reports).
const char* to_string(loop_policy_kind kind) noexcept;
/// Parse a policy name; throws cdpkit::input_error naming the bad value and the choices.
loop_policy_kind parse_loop_policy_kind(const std::string& name);
/// Every policy kind, in the order of the story.
const std::vector<loop_policy_kind>& all_loop_policy_kinds();

// ---------------------------------------------------------------------------------------------
// Segment-length workloads

enum class segment_dist : std::uint8_t {
  uniform,    ///< lengths uniform in [0, 2 * mean_len]
  power_law,  ///< P(len = k) proportional to k^-alpha on [1, max_len] (Zipf)
  giant,      ///< one segment of giant_len in the middle, the others 0..3 items
  empty,      ///< every segment empty
  equal,      ///< every segment equal_len items
};

const char* to_string(segment_dist d) noexcept;
segment_dist parse_segment_dist(const std::string& name);  ///< throws cdpkit::input_error
const std::vector<segment_dist>& all_segment_dists();

struct segment_params {
  std::uint32_t num_segments = 1u << 20;
  segment_dist dist = segment_dist::power_law;
  std::uint64_t seed = 42;
  std::uint32_t mean_len = 32;        ///< uniform
  double alpha = 2.0;                 ///< power_law exponent, > 1
  std::uint32_t max_len = 1u << 16;   ///< power_law cap
  std::uint32_t giant_len = 1u << 22; ///< giant
  std::uint32_t equal_len = 64;       ///< equal
};

/// CSR offsets (num_segments + 1 entries, offsets[0] == 0) of a deterministic workload.
/// Throws cdpkit::input_error for a bad parameter (alpha <= 1, max_len == 0, ...) or when the
/// total number of items does not fit 32 bits.
std::vector<std::uint32_t> make_segment_offsets(const segment_params& params);

// ---------------------------------------------------------------------------------------------
// The reference workload: pre_op(i) writes a hash of i to parent_out[i]; item_op(i, j) hashes
// item_in[j] with i for `rounds` rounds into item_out[j]. Integer-exact, so every policy must
// match the Thrust reference bit for bit.

/// Owns the device buffers of one workload. Move-only.
class segment_workload {
 public:
  /// Precondition: offsets is non-decreasing, offsets.size() >= 1, offsets[0] == 0 (checked:
  /// cdpkit::input_error). rounds: hash rounds per item, the "doMoreWork" cost knob.
  explicit segment_workload(const std::vector<std::uint32_t>& offsets, std::uint32_t rounds = 8,
                            std::uint64_t seed = 7);
  ~segment_workload();
  segment_workload(segment_workload&&) noexcept;
  segment_workload& operator=(segment_workload&&) noexcept;
  segment_workload(const segment_workload&) = delete;
  segment_workload& operator=(const segment_workload&) = delete;

  /// Zero the outputs (not part of a timed run).
  void clear_outputs(cudaStream_t stream = nullptr);
  /// Run for_each_segment with `policy` on `stream` and synchronize; throws cdpkit::cuda_error on
  /// a CUDA or device-side error.
  void run(const loop_policy& policy, launch_runtime& runtime, cudaStream_t stream = nullptr);
  /// The same without synchronizing or checking device errors (for timing with events).
  void run_async(const loop_policy& policy, launch_runtime& runtime, cudaStream_t stream);
  /// Mismatches between the outputs and the Thrust reference (0 = exact). Synchronizes.
  [[nodiscard]] std::uint64_t count_mismatches() const;

  [[nodiscard]] std::uint32_t num_segments() const noexcept { return num_segments_; }
  [[nodiscard]] std::uint64_t num_items() const noexcept { return num_items_; }
  [[nodiscard]] std::uint32_t max_segment_len() const noexcept { return max_len_; }

 private:
  void release() noexcept;
  std::uint32_t num_segments_ = 0;
  std::uint64_t num_items_ = 0;
  std::uint32_t max_len_ = 0;
  std::uint32_t rounds_ = 0;
  std::uint32_t* d_offsets_ = nullptr;
  std::uint32_t* d_item_in_ = nullptr;
  std::uint32_t* d_item_out_ = nullptr;
  std::uint32_t* d_parent_out_ = nullptr;
  mutable std::uint32_t* d_ref_item_ = nullptr;   // reference, computed on first check
  mutable std::uint32_t* d_ref_parent_ = nullptr;
};

}  // namespace cdpkit
