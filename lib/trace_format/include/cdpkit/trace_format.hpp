#pragma once
// cdpkit/trace_format.hpp — the launch trace's format, defined once: the plain structs the
// device fills (launch_record, site_counters, trace_totals), their limits, the enums they hold
// and the names those enums have in the profile JSON.
//
// Everything here is trivially copyable and laid out identically on the host and the device (nvcc
// compiles this header into device code), so the host copies the device's counters back with one
// cudaMemcpy. The types live in namespace cdpkit (the launch layer uses them by those names), and
// so does takes_record, which the device calls too; the other functions on them live in
// cdpkit::schema. No CUDA, no GPU: the reports read the same format.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <cdpkit/host_device.hpp>

namespace cdpkit {

/// Which stream a device-side launch goes to (CDP2 semantics).
enum class stream_kind : std::uint8_t {
  fire_and_forget = 0,   ///< cudaStreamFireAndForget: independent of the parent and of siblings
  named_per_thread = 1,  ///< a non-blocking stream created by the launching thread for this launch
  null_stream = 2,       ///< the block's implicit NULL stream: children of one block serialize
  tail = 3,              ///< cudaStreamTailLaunch: runs after the launching grid and its other work
  /// Not seen: a grid an unmodified program launched, observed through the Compute Sanitizer API
  /// (profiling/children), which sees the launch but not the stream it names. Never a launch
  /// layer's choice (parse_stream_kind refuses it).
  not_observed = 4,
};
inline constexpr int stream_kind_count = 5;

/// What happened to one request for a child grid.
enum class launch_outcome : std::uint8_t {
  launched = 0,          ///< the child grid was launched; it will do the work
  fallback_budget = 1,   ///< pending budget exhausted: the caller must do the work inline
  fallback_depth = 2,    ///< depth cap reached: the caller must do the work inline
  fallback_error = 3,    ///< the launch returned an error: the caller must do the work inline
};
inline constexpr int launch_outcome_count = 4;

/// Whether a traced request with this outcome takes a launch record: a grid launched, or one whose
/// launch failed. Refusals (fallback_budget, fallback_depth) take one only under
/// launch_config::record_refusals; they are counted all the same. The one rule for the device,
/// which reserves the records (launch_impl), and the host, which counts them (fold_probes).
CDPKIT_HOST_DEVICE constexpr bool takes_record(launch_outcome outcome) noexcept {
  return outcome == launch_outcome::launched || outcome == launch_outcome::fallback_error;
}

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

/// A child grid with fewer work items than a warp has lanes is "tiny": at most one partially
/// busy warp on one of the GPU's SMs, for the ~1 us that the launch itself cost.
inline constexpr unsigned int tiny_grid_work = 32;

/// One device-side launch request, appended to the bounded trace buffer when tracing is on: a grid
/// launched or a launch that failed (takes_record), a refused request only under
/// launch_config::record_refusals.
/// The profile writes it as a row whose columns are schema::record_fields, in that order.
struct launch_record {
  std::uint64_t t_ns;                 ///< %globaltimer at the request (ns)
  std::uint32_t id;                   ///< this record's id (its index in the append order)
  std::uint32_t parent;               ///< id of the record that launched the requesting grid, or no_record
  std::uint32_t blocks;               ///< child grid size in blocks
  std::uint32_t child_block_threads;  ///< threads per child block
  std::uint32_t work;                 ///< useful work items the child covers (0 = not given)
  std::uint16_t site;                 ///< launch site id
  std::uint16_t depth;                ///< depth of the child grid (the host-launched grid is depth 0)
  std::uint8_t stream;                ///< stream_kind
  std::uint8_t outcome;               ///< launch_outcome
  std::int16_t error;                 ///< cudaError_t of a failed launch, else 0
  /// %globaltimer when the child's first block started its body, and when its last block
  /// finished it (ns); no_time_start / no_time_end when not measured (the child was not
  /// launched).
  std::uint64_t start_ns;
  std::uint64_t end_ns;
};
static_assert(sizeof(launch_record) == 56, "launch_record layout is part of the trace format");

/// launch_record::start_ns / end_ns of a record whose child's execution was not measured.
inline constexpr std::uint64_t no_time_start = ~0ull;
inline constexpr std::uint64_t no_time_end = 0;

/// True when the record holds the child's execution window (start_ns <= end_ns, both set).
constexpr bool has_execution_time(const launch_record& r) noexcept {
  return r.start_ns != no_time_start && r.end_ns != no_time_end && r.start_ns <= r.end_ns;
}

/// Per-site counters. Launch-side fields count the launches from the site; probe-side fields the
/// warp probes naming the site. (On the device, the outcomes, inline items and probe fields are
/// counted in per-SM stripes that the host sums into these, and the requests are the outcomes'
/// sum: launch_runtime::snapshot.)
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
  /// Records appended or dropped: every traced request that takes a record (takes_record; every
  /// one under launch_config::record_refusals). On the device it is the count of record ids taken
  /// (the next id while the buffer has room; requests after it is full take none);
  /// launch_runtime::snapshot (and diagnose) replaces it with those requests' outcomes summed over
  /// the sites' stripes (launch_state::probes).
  unsigned long long records_requested;
  unsigned int pending_high_water;       ///< highest pending count seen after an acquire
  unsigned int last_auto_threshold;      ///< the threshold an algorithm last chose on the device
};

/// Everything the trace holds after a run, copied to the host (host code only).
struct trace_snapshot {
  std::vector<site_counters> sites;     ///< trace_limits::max_sites entries, indexed by site id
  std::vector<launch_record> records;   ///< min(requested, capacity) records, in id order
  trace_totals totals{};
  std::uint64_t records_dropped = 0;    ///< requested - stored
  /// launch_config::record_refusals of the run: refused requests have records too (else only the
  /// grids launched and the failed launches do).
  bool refusals_recorded = false;
  int pending_launch_limit = 0;         ///< the device's cudaLimitDevRuntimePendingLaunchCount
  int pending_budget = 0;
  int max_depth = 0;
};

namespace schema {

/// The profile's name of a stream kind: "fire_and_forget", "named_per_thread", "null_stream",
/// "tail", "not_observed"; "unknown" for a value outside the enum.
constexpr const char* name(stream_kind kind) noexcept {
  switch (kind) {
    case stream_kind::fire_and_forget: return "fire_and_forget";
    case stream_kind::named_per_thread: return "named_per_thread";
    case stream_kind::null_stream: return "null_stream";
    case stream_kind::tail: return "tail";
    case stream_kind::not_observed: return "not_observed";
  }
  return "unknown";
}

/// The profile's name of a launch outcome: "launched", "fallback_budget", "fallback_depth",
/// "fallback_error"; "unknown" for a value outside the enum.
constexpr const char* name(launch_outcome outcome) noexcept {
  switch (outcome) {
    case launch_outcome::launched: return "launched";
    case launch_outcome::fallback_budget: return "fallback_budget";
    case launch_outcome::fallback_depth: return "fallback_depth";
    case launch_outcome::fallback_error: return "fallback_error";
  }
  return "unknown";
}

/// The stream kind named `text` (one of name(stream_kind)'s values); unset for any other text.
inline std::optional<stream_kind> stream_kind_named(std::string_view text) noexcept {
  for (int k = 0; k < stream_kind_count; ++k)
    if (text == name(static_cast<stream_kind>(k))) return static_cast<stream_kind>(k);
  return std::nullopt;
}

/// The launch outcome named `text` (one of name(launch_outcome)'s values); unset otherwise.
inline std::optional<launch_outcome> launch_outcome_named(std::string_view text) noexcept {
  for (int k = 0; k < launch_outcome_count; ++k)
    if (text == name(static_cast<launch_outcome>(k))) return static_cast<launch_outcome>(k);
  return std::nullopt;
}

}  // namespace schema
}  // namespace cdpkit
