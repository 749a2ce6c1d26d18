#pragma once
// cdpkit/loop_to_child.hpp — the loop-to-child transformation (PMPP Fig. 21.4 -> 21.5), host API.
//
// The pattern: for each parent index i, do some work pre_op(i), then item_op(i, j) for every j in
// [begin[i], end[i]). A thread that loops over a long list leaves its warp's other lanes idle
// (control divergence) and misses parallelism; launching a child grid per list fixes that for
// long lists and wastes ~1 us per launch on short ones. The policies here tell that story, and
// flat_balanced is the honest non-CDP yardstick.
//
// This header: policies, the launch cost model and what a run returns (segment_result). The
// generic algorithm over your own operators is cdpkit/loop_to_child.cuh; its device building
// blocks (one agent per strategy) are cdpkit/loop_to_child/agents.cuh; its trace sites are the
// l2c_* ids of cdpkit/launch/site_ids.hpp. (The benchmark workloads live in the harness:
// cdpkit/harness/segment_workload.hpp.)

#include <cdpkit/detail/device_buffer.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/launch/types.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit {

namespace detail {
/// Child grids' block size check shared by every entry point that takes one: throws
/// cdpkit::input_error "<what> must be a multiple of 32 in [32, 1024], got <threads>" unless it is.
inline void check_child_block_threads(std::uint32_t threads, const char* what) {
  if (threads == 0 || threads > 1024 || threads % 32 != 0)
    throw input_error(std::string(what) + " must be a multiple of 32 in [32, 1024], got " + std::to_string(threads));
}
}  // namespace detail

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
/// on an H200 (docs/design.md); serial_item_ns is what one thread, looping alone, spends per item of
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
  /// The policy of kind `k` as its factory above makes it: child_per_thread with T = 0, the
  /// thresholded and aggregated kinds with `t` (unset: picked on the device), serial_loop and
  /// flat_balanced without one; `s` is kept whatever the kind (only launching kinds use it).
  static loop_policy of(loop_policy_kind k, std::optional<std::uint32_t> t = {},
                        stream_kind s = stream_kind::fire_and_forget) {
    const bool takes_t = k == loop_policy_kind::thresholded || k == loop_policy_kind::warp_aggregated ||
                         k == loop_policy_kind::block_aggregated;
    return make(k, k == loop_policy_kind::child_per_thread ? std::optional<std::uint32_t>(0u)
                   : takes_t                               ? t
                                                           : std::nullopt,
                s);
  }
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
  /// `picked` is empty, by someone else (the caller; for the synchronous for_each_segment, the
  /// runtime's workspace, read before the call returns).
  segment_async_result(segment_result known, const std::uint32_t* d_threshold,
                       detail::device_buffer<std::uint32_t> picked = {}) noexcept
      : known_(known), d_threshold_(d_threshold), picked_(std::move(picked)) {}
  /// Moves hand over the device address with the buffer: a moved-from handle has none (its
  /// result() then reports the policy's part only).
  segment_async_result(segment_async_result&& other) noexcept
      : known_(other.known_), d_threshold_(std::exchange(other.d_threshold_, nullptr)),
        picked_(std::move(other.picked_)) {}
  segment_async_result& operator=(segment_async_result&& other) noexcept {
    known_ = other.known_;
    d_threshold_ = std::exchange(other.d_threshold_, nullptr);
    picked_ = std::move(other.picked_);
    return *this;
  }
  segment_async_result(const segment_async_result&) = delete;
  segment_async_result& operator=(const segment_async_result&) = delete;

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

}  // namespace cdpkit
