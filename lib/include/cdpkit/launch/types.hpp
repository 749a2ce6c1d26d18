#pragma once
// cdpkit/launch/types.hpp — plain data shared by the host and the device side of the launch layer.
// Everything here is trivially copyable and laid out identically on both sides, so the host can
// copy the device's counters back with one cudaMemcpy.

#include <cstdint>

namespace cdpkit {

/// Which stream a device-side launch goes to (CDP2 semantics; see DESIGN.md).
enum class stream_kind : std::uint8_t {
  fire_and_forget = 0,   ///< cudaStreamFireAndForget: independent of the parent and of siblings
  named_per_thread = 1,  ///< a non-blocking stream created by the launching thread for this launch
  null_stream = 2,       ///< the block's implicit NULL stream: children of one block serialize
  tail = 3,              ///< cudaStreamTailLaunch: runs after the launching grid and its other work
};
inline constexpr int stream_kind_count = 4;

/// What happened to one request for a child grid.
enum class launch_outcome : std::uint8_t {
  launched = 0,          ///< the child grid was launched; it will do the work
  fallback_budget = 1,   ///< pending budget exhausted: the caller must do the work inline
  fallback_depth = 2,    ///< depth cap reached: the caller must do the work inline
  fallback_error = 3,    ///< the launch returned an error: the caller must do the work inline
};
inline constexpr int launch_outcome_count = 4;

/// Bits of the device error flag word; the host API turns any set bit into cdpkit::cuda_error.
enum device_error_bits : std::uint32_t {
  device_error_none = 0,
  device_error_bad_segment = 1u << 0,      ///< a segment with end < start was found
  device_error_bad_site = 1u << 1,         ///< a launch or probe used a site id >= max_sites
  device_error_pending_underflow = 1u << 2, ///< the pending budget went negative (library bug)
  /// the completion-slot probe found no free slot although the budget had room (library bug;
  /// the request fell back and its work was done inline)
  device_error_slot_probe_exhausted = 1u << 3,
  /// the segments hold 2^32 or more items in all, more than a 32-bit scan can index
  /// (flat_balanced refused the items: pre_op has run, no item_op has)
  device_error_item_overflow = 1u << 4,
};

namespace trace_limits {
inline constexpr int max_sites = 64;         ///< launch/probe site ids are in [0, max_sites)
inline constexpr int log2_buckets = 33;      ///< bucket b counts values v with floor(log2 v) == b
inline constexpr int depth_buckets = 64;     ///< depths >= 63 are counted in the last bucket
inline constexpr int error_slots = 8;        ///< distinct launch error codes remembered per site
inline constexpr int lane_buckets = 33;      ///< index = active lanes (1..32); index 0 unused
inline constexpr int efficiency_buckets = 32; ///< bucket b: per-warp efficiency in [b/32,(b+1)/32)
}  // namespace trace_limits

/// Sentinel for "no launch record" (tracing off, or the root grid launched by the host).
inline constexpr std::uint32_t no_record = 0xffffffffu;

/// One device-side launch request, appended to the bounded trace buffer when tracing is on.
struct launch_record {
  std::uint64_t t_ns;           ///< %globaltimer at the request (ns)
  std::uint32_t id;             ///< this record's id (its index in the append order)
  std::uint32_t parent;         ///< id of the record that launched the requesting grid, or no_record
  std::uint32_t blocks;         ///< child grid size in blocks
  std::uint32_t block_threads;  ///< threads per child block
  std::uint32_t work;           ///< useful work items the child covers (0 = not given)
  std::uint16_t site;           ///< launch site id
  std::uint16_t depth;          ///< depth of the child grid (the host-launched grid is depth 0)
  std::uint8_t stream;          ///< stream_kind
  std::uint8_t outcome;         ///< launch_outcome
  std::int16_t error;           ///< cudaError_t of a failed launch, else 0
};
static_assert(sizeof(launch_record) == 40, "launch_record layout is part of the trace format");

/// Per-site counters. Launch-side fields are written by launches from the site; probe-side
/// fields by warp probes naming the site.
struct site_counters {
  unsigned long long requests;                      ///< launch requests (all outcomes)
  unsigned long long outcomes[launch_outcome_count];///< requests by launch_outcome
  unsigned long long child_threads;                 ///< sum of threads of launched grids
  unsigned long long child_blocks;                  ///< sum of blocks of launched grids
  unsigned long long work_items;                    ///< sum of work items of launched grids
  unsigned long long tiny_launches;                 ///< launched grids with work < tiny_grid_work
  unsigned long long inline_items;                  ///< work items done inline after a fallback
  unsigned long long stream_launches[stream_kind_count];
  unsigned int threads_log2[trace_limits::log2_buckets]; ///< launched grids by total threads
  unsigned int blocks_log2[trace_limits::log2_buckets];  ///< launched grids by blocks
  unsigned int work_log2[trace_limits::log2_buckets];    ///< launched grids by work items
  unsigned int depth_hist[trace_limits::depth_buckets];  ///< launched grids by child depth
  unsigned int max_depth;                                ///< deepest child grid launched
  int error_code[trace_limits::error_slots];             ///< launch error codes seen (0 = free)
  unsigned int error_count[trace_limits::error_slots];   ///< ... and how often
  unsigned int error_overflow;                           ///< failures with codes beyond the slots
  // --- divergence probes ---
  unsigned long long lanes_hist[trace_limits::lane_buckets]; ///< probed warp steps by active lanes
  unsigned long long probe_steps;                            ///< probed warp steps
  unsigned long long probe_active_lanes;                     ///< sum of active lanes over steps
  unsigned long long probe_warps;                            ///< warps that committed a probe
  unsigned int efficiency_hist[trace_limits::efficiency_buckets]; ///< warps by efficiency bucket
  double efficiency_sum;                                     ///< sum of per-warp efficiencies
};

/// Device-wide counters of the trace.
struct trace_totals {
  unsigned long long records_requested;  ///< records appended or dropped (the next record id)
  unsigned int pending_high_water;       ///< highest pending count seen after an acquire
  unsigned int last_auto_threshold;      ///< the threshold an algorithm last chose on the device
};

/// A child grid with fewer work items than a warp has lanes is "tiny": at most one partially
/// busy warp on one of the GPU's SMs, for the ~1 us that the launch itself cost.
inline constexpr unsigned int tiny_grid_work = 32;

}  // namespace cdpkit
