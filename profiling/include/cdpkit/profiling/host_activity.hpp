#pragma once
// cdpkit/profiling/host_activity.hpp — the host timeline: the kernels, copies and memsets the
// host launched, as CUPTI's activity API records them (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
// MEMCPY and MEMSET), with their start and end times.
//
// CUPTI's timestamps are in ns, on the clock of PM sampling too. %globaltimer, which the device
// trace records child windows in, differs from it by about 0.4 ms on the H200: a program lines
// the two up with launch_runtime::read_device_clock (a kernel this collector records), as the
// harness does for its sampled runs. The activity API does not see grids launched from the
// device: the device trace and the range profiler do.
//
//   cdpkit::profiling::host_activity ha;
//   if (!ha.available()) std::cerr << ha.unavailable_reason() << "\n";   // the program goes on
//   const auto log = ha.record([&] { run(); cudaDeviceSynchronize(); });
//   for (const auto& k : log.kernels) ... k.name, k.start_ns, k.end_ns ...
//
// A CUPTI failure never breaks the caller's program: the collector is then unavailable, says why
// (no device, another profiler such as Nsight Systems holds CUPTI, no permission), and record()
// still runs the work once, returning an empty log.
//
// CUPTI's activity buffers are process-wide: one host_activity may be started at a time in a
// process (a second one that tries stands aside, unavailable, saying so).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cdpkit::profiling {

/// A kernel launched from the host, as CUPTI's activity API saw it
/// (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL). Times: CUPTI timestamps in ns (CUPTI's clock: see
/// the top of this file); both 0 when CUPTI could not time the kernel. (Kernels of device graph
/// launches, which CUPTI marks isDeviceLaunched, are not the host's and are left out; so are such
/// copies and memsets.)
struct host_kernel {
  std::string name;                 ///< the kernel's (mangled) name, "(unnamed)" without one
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t blocks = 0;         ///< gridX * gridY * gridZ
  std::uint32_t block_threads = 0;  ///< blockX * blockY * blockZ
  std::uint32_t stream = 0;         ///< CUPTI's stream id
  std::uint32_t correlation = 0;    ///< CUPTI's correlation id (that of the launching API call)
};

/// A copy or a memset (CUPTI_ACTIVITY_KIND_MEMCPY / MEMSET). Times as in host_kernel.
struct host_transfer {
  /// "HtoD", "DtoH", "DtoD", "HtoH", "PtoP" or "other" (arrays) for copies, "memset" for memsets.
  std::string kind;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t bytes = 0;
  std::uint32_t stream = 0;  ///< CUPTI's stream id
};

/// What one start()/stop() recorded.
struct host_activity_log {
  std::vector<host_kernel> kernels;      ///< sorted by start_ns
  std::vector<host_transfer> transfers;  ///< sorted by start_ns
  /// Records lost: those CUPTI dropped (no buffer to put them in) plus those beyond max_records.
  std::uint64_t dropped = 0;
};

/// CUPTI's activity API on the host timeline, between start() and stop(). Move-only RAII: the
/// destructor stops a started collection. Not thread-safe (the buffers CUPTI fills are handed
/// back on CUPTI's thread and parsed there, under a lock).
class host_activity {
 public:
  /// A collector keeping at most `max_records` records (kernels and transfers together) per
  /// start()/stop(); later ones are counted in the log's `dropped`. Never throws for CUPTI or
  /// device trouble: the collector is then unavailable (see unavailable_reason()).
  /// Throws cdpkit::input_error for max_records == 0.
  /// `warm_up`: start() runs its warm-up memset (see start()); a collection of a whole program,
  /// started before the program's own work (the injection library, inside a driver callback),
  /// passes false.
  explicit host_activity(std::size_t max_records = std::size_t{1} << 20, bool warm_up = true);
  /// Stops a started collection (disabling the kinds; the buffers are freed as CUPTI hands them
  /// back, which the stop's flush makes it do).
  ~host_activity();
  host_activity(host_activity&&) noexcept;
  /// Stops this collector's started collection (if any), then takes over `other`'s.
  host_activity& operator=(host_activity&&) noexcept;
  host_activity(const host_activity&) = delete;
  host_activity& operator=(const host_activity&) = delete;

  /// True when start() records.
  [[nodiscard]] bool available() const noexcept;
  /// Why not, in one line naming the CUPTI call and its error (empty when available).
  [[nodiscard]] const std::string& unavailable_reason() const noexcept;

  /// Enable the three activity kinds (registering CUPTI's buffer callbacks, once per process),
  /// then (unless constructed without warm-up, or a CUDA error is pending) run a 4-byte memset
  /// of its own on a stream of its own and wait for it: on the H200 the first operation after
  /// enabling runs 0.3 to 0.9 ms late, and the memset takes part of that cost before the
  /// recorded work (its record is left out; docs/design.md says how much). The memset does not
  /// wait for work in flight, and leaves the caller's CUDA error state as it was.
  /// Precondition: this collector is not started (a second start() is ignored). No-op when
  /// unavailable. When another host_activity of the process is started, or CUPTI fails, this
  /// collector becomes unavailable (it does not throw).
  void start();

  /// Flush CUPTI's buffers (cuptiActivityFlushAll with CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), disable
  /// the kinds, and return what was recorded since start(), kernels and transfers each sorted by
  /// start_ns. Precondition: the work recorded has finished on the device (synchronize first:
  /// records of unfinished work are incomplete and lost). An empty log when unavailable or not
  /// started; a CUPTI failure makes the collector unavailable and returns an empty log.
  host_activity_log stop();

  /// What was recorded since start() or the previous take(), kernels and transfers each sorted
  /// by start_ns, flushing CUPTI's buffers but leaving the kinds enabled (so that the next
  /// operation pays no set-up: see start()). Precondition as for stop(). An empty log when
  /// unavailable or not started; a CUPTI failure stops the collection, makes the collector
  /// unavailable and returns an empty log.
  host_activity_log take();

  /// Run `work` between start() and stop() and return the log. `work` must synchronize the
  /// device before it returns (see stop()). Unavailable (or once start() failed), `work` runs
  /// once and the log is empty. Exceptions from `work` propagate, after stop().
  host_activity_log record(const std::function<void()>& work);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cdpkit::profiling
