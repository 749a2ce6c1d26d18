#pragma once
// cdpkit/launch.hpp — host side of the device launch layer: the runtime that owns the layer's
// device state (pending budget, completion slots, trace buffers), its configuration, and the
// snapshot of the trace that the profiler turns into JSON.

#include <cdpkit/launch/sites.hpp>
#include <cdpkit/launch/state.hpp>
#include <cdpkit/launch/types.hpp>
#include <cdpkit/wait.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cdpkit {

/// "fire_and_forget", "named_per_thread", "null_stream", "tail".
const char* to_string(stream_kind kind) noexcept;
/// "launched", "fallback_budget", "fallback_depth", "fallback_error".
const char* to_string(launch_outcome outcome) noexcept;
/// Parse a stream kind name; throws cdpkit::input_error naming the bad value and the choices.
stream_kind parse_stream_kind(const std::string& name);

/// The share of the device's pending-launch limit that the layer's pending budget may take by
/// default. Measured on an H200 (docs/design.md, "Pending headroom"): with the budget equal to the
/// limit, about 1 run in 60 of child_per_thread stalled inside the device runtime
/// (`__cudaCDP2GetParameterBufferV2`) instead of failing with error 69; the budget is given back
/// at a child's last block, before the device runtime frees its own slot, so the runtime must
/// keep headroom above the budget.
inline constexpr double safe_pending_fraction = 0.5;
/// The largest pending budget with that headroom below a pending-launch limit (> 0):
/// max(1, floor(limit * safe_pending_fraction)), e.g. 512 for 1024.
inline int safe_pending_budget(int pending_launch_limit) noexcept {
  const int share = static_cast<int>(pending_launch_limit * safe_pending_fraction);  // floor: limit > 0
  return share > 1 ? share : 1;
}
/// The pending budget when none is configured.
inline constexpr int default_pending_budget = 2048;

/// Configuration of a launch_runtime. Zero means "use the default" where stated.
struct launch_config {
  /// cudaLimitDevRuntimePendingLaunchCount to set on the device. 0 (automatic): the device's
  /// limit is raised, while this runtime lives, to budget / safe_pending_fraction when it is
  /// lower (the device's own default is 2048). Raising it reserves device memory.
  /// The limit is device-wide: a runtime with an explicit value sets it exactly while it lives
  /// (the latest such runtime wins); an automatic runtime made meanwhile lowers its own budget
  /// to keep the headroom, and runtimes made before it should not launch until it is gone.
  int pending_launch_limit = 0;
  /// In-flight children the layer allows before falling back. 0: default_pending_budget, or
  /// safe_pending_fraction of pending_launch_limit when that is given.
  int pending_budget = 0;
  /// Accept a budget above safe_pending_fraction of an explicit pending_launch_limit (only to
  /// provoke the device's own launch failures in tests: the device runtime may then stall).
  /// Without it, such a configuration is an input_error.
  bool allow_unsafe_budget = false;
  /// Deepest child grid the layer launches (the host-launched grid is depth 0). CDP2 does not
  /// enforce CDP1's 24 levels, so the library caps recursion itself.
  int max_depth = 24;
  /// Launch records kept per run; further requests that take a record are counted as dropped,
  /// never a crash.
  std::uint32_t trace_record_capacity = 1u << 16;
  /// Store a launch record for the requests the layer refuses too (over the pending budget, past
  /// max_depth, or at a site of refused_sites), not only for the grids launched and the launches
  /// that failed. Off by default: a refusal is counted all the same (its site's outcomes and
  /// inline items) but takes no record, so that a storm of refusals (a million requests over the
  /// budget) neither fills the buffer before the grids that ran nor reads the buffer's fill once
  /// per request (bench/trace_cost_bench.cu measures both policies; commit 46d22d3). On, each
  /// refused request's record shows where and when the work stayed in its parent.
  bool record_refusals = false;
  /// The lanes of a warp that request launches together enter the device runtime one at a time
  /// (in lane order; the others wait at a barrier of the group) instead of each as soon as its
  /// own request is decided. Off by default. An experiment against the tree recursions' stall
  /// (docs/design.md, "Launches from divergent lanes") that did not end it on the H200: its group
  /// is what __activemask() reads at the call, which need not be the lanes that reach its
  /// barriers. Code whose whole warp reaches the request uses launch_child_warp (launch.cuh)
  /// instead, whose group the program names. The trace's request times are taken before the
  /// wait, so its request-to-start latencies include the wait for warp-mates.
  bool serialize_warp_launches = false;
  /// Sites whose launch requests are always refused (bit s for site id s, s < 64), as if the
  /// pending budget were spent: the request returns fallback_budget and is counted so, and the
  /// caller takes its fallback path (walks the work, hands it back to the host, ...). For tests
  /// of an algorithm's fallback paths, and for measuring what one site costs without child grids.
  /// 0 (default): none.
  std::uint64_t refused_sites = 0;
};

namespace detail {
struct runtime_storage;
}

/// The name of the kernel launch_runtime::read_device_clock runs (extern "C": not mangled).
inline constexpr const char* device_clock_kernel = "cdpkit_device_clock";

/// Throws cdpkit::input_error for a configuration launch_runtime would refuse, without touching
/// the device: a negative limit or budget, a max_depth outside [0, 65535], a budget above
/// safe_pending_fraction of an explicit limit (unless allow_unsafe_budget), or a budget whose
/// automatic limit would exceed 10^8. launch_runtime's constructor calls it first; a program
/// calls it right after reading its options, so that a bad option is a command-line error
/// whether or not the machine has a GPU.
void check_launch_config(const launch_config& config);

/// Owns the launch layer's device state for the current device. Move-only RAII.
///
/// One runtime serves any number of algorithm calls; algorithms use default_runtime() unless
/// given another. Tracing is off by default. Calls that reset or read counters synchronize the
/// device, under the watchdog (cdpkit/wait.hpp). Not thread-safe: use one runtime per host
/// thread, or serialize.
class launch_runtime {
 public:
  /// Applies the pending launch limit to the device (see launch_config; the device-wide limit is
  /// restored when the last runtime that needed it goes) and allocates the state. Also sets the
  /// release threshold of the device's default memory pool to "keep", so that the algorithms'
  /// stream-ordered scratch is reused across calls instead of being unmapped at every sync.
  /// Throws cdpkit::input_error for what check_launch_config() refuses; cdpkit::no_device_error
  /// without a usable GPU; cdpkit::cuda_error when the device refuses.
  explicit launch_runtime(launch_config config = {});
  ~launch_runtime();
  /// Move-only RAII: the device state (and the device-wide limit it holds) moves with it. A
  /// moved-from runtime may only be destroyed or assigned to.
  launch_runtime(launch_runtime&& other) noexcept;
  launch_runtime& operator=(launch_runtime&& other) noexcept;
  launch_runtime(const launch_runtime&) = delete;
  launch_runtime& operator=(const launch_runtime&) = delete;

  /// The context to pass to a host-launched parent kernel (depth 0, no record, no slot).
  [[nodiscard]] launch_context root_context() const noexcept;

  /// Turn the device trace on or off for the following launches.
  void set_tracing(bool on) noexcept { tracing_ = on; }
  [[nodiscard]] bool tracing() const noexcept { return tracing_; }

  /// Zero the trace counters, records and error flags. Synchronizes the device first.
  /// Precondition: no kernel using this runtime is running (checked: the pending count is 0).
  void reset_trace();

  /// Synchronize the device (under the watchdog); throw cdpkit::cuda_error if any device error
  /// flag was raised since the last check (the flags are cleared), or if a child is still
  /// counted as pending or a completion slot is still occupied (both are then cleared).
  void check_device_errors(const char* file, int line);

  /// Synchronize and copy the trace to the host.
  [[nodiscard]] trace_snapshot snapshot() const;

  /// The device's %globaltimer now (the trace's clock, ns), read by a one-thread kernel named
  /// device_clock_kernel on `stream` and waited for (that stream only). The kernel writes to
  /// mapped host memory of the runtime's: no copy appears beside it. With CUPTI's activity API
  /// on, its record gives CUPTI's time of the same instant (docs/design.md: the two clocks
  /// differ by about 0.4 ms on the H200). Throws cdpkit::cuda_error.
  [[nodiscard]] std::uint64_t read_device_clock(cudaStream_t stream) const;

  /// The launch layer's state, read over a separate stream so that it works while the device
  /// is stuck: pending count against budget and limit, occupied completion slots (and the blocks
  /// each child still has to finish), trace records so far, error flags, and the counters of
  /// every site that saw requests. One paragraph of text; never throws.
  [[nodiscard]] std::string diagnose() const noexcept;

  /// At least `bytes` of device scratch (aligned for any type) that the runtime keeps for the
  /// synchronous algorithm calls (e.g. for_each_segment), so that a call whose scratch fits makes
  /// no allocation of its own (on the H200, stream-ordered scratch and the host calls around it
  /// cost tens of µs per call inside a range the CUPTI collector measures). Every synchronous
  /// algorithm call on this runtime may overwrite, grow or abandon it: keep no data in it across
  /// calls. Grows when asked for more (the device waited for under the watchdog, the old block
  /// freed, a new one allocated); never shrinks. Valid until the next workspace() or
  /// abandon_workspace() call or the runtime's end. Precondition: no work that uses an earlier
  /// workspace() block is still running (a synchronous call waits for its work before it
  /// returns). Throws cdpkit::input_error when the device has not that much free memory,
  /// cdpkit::cuda_error when the wait or the allocation fails.
  [[nodiscard]] void* workspace(std::size_t bytes);
  /// The workspace's size in bytes (0 before the first workspace() call and after
  /// abandon_workspace()).
  [[nodiscard]] std::size_t workspace_bytes() const noexcept;
  /// Give up the workspace without freeing it: for a call that could not see its work finish (a
  /// missed deadline), so that no later call reuses memory the work may still use.
  void abandon_workspace() noexcept;

  [[nodiscard]] const launch_config& config() const noexcept { return config_; }
  /// The device's actual cudaLimitDevRuntimePendingLaunchCount.
  [[nodiscard]] int pending_launch_limit() const noexcept { return pending_launch_limit_; }
  [[nodiscard]] int pending_budget() const noexcept { return pending_budget_; }

 private:
  launch_config config_{};
  int pending_launch_limit_ = 0;
  int pending_budget_ = 0;
  bool tracing_ = false;
  std::unique_ptr<detail::runtime_storage> storage_;
};

/// Throws cdpkit::no_device_error (one line for the user: "no CUDA device found (...)") when
/// CUDA has no usable device: no GPU, no driver, or a driver too old for this build.
void require_cuda_device();

/// The process-wide runtime used by algorithms that are not given one, created on first use with
/// the default launch_config. Throws cdpkit::cuda_error if there is no usable GPU.
launch_runtime& default_runtime();

/// Replace the process-wide runtime with one made from `config` (e.g. a tiny pending limit for a
/// test). Precondition: no kernel is using the old one.
launch_runtime& reset_default_runtime(launch_config config);

}  // namespace cdpkit

/// Check the runtime's device error flags, throwing cdpkit::cuda_error with this file and line.
#define CDPKIT_CHECK_DEVICE_ERRORS(runtime) (runtime).check_device_errors(__FILE__, __LINE__)
