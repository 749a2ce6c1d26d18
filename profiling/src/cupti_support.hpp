#pragma once
// Internal to cdpkit::profiling: what the CUPTI-based parts share (the range profiler, the PM
// sampler, the host timeline): one failure type, one error check with advice, parameter structs,
// the current context without linking libcuda, and CUPTI's profiler initialization counted so
// that several of them may be alive at once.

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_result.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cdpkit::profiling::detail {

/// A failed CUPTI (or CUDA) call inside a collector: caught by the collector itself, which then
/// stands aside with the message.
struct cupti_failure : std::runtime_error {
  explicit cupti_failure(const std::string& what, CUptiResult r = CUPTI_ERROR_UNKNOWN)
      : std::runtime_error(what), result(r) {}
  CUptiResult result;  ///< CUPTI's code (CUPTI_ERROR_UNKNOWN for failures of ours)
};

/// Run `setup` (which throws cupti_failure), again while CUPTI answers that the profiling
/// hardware is busy (another process profiles the GPU; measured on the H200: the range
/// profiler and PM sampling of two processes exclude each other), for up to 5 s; `undo` runs
/// before every retry. The last failure propagates.
void retry_while_busy(const std::function<void()>& setup, const std::function<void()>& undo);

/// What to do about an error a user can fix (permission, another profiler), or "".
std::string advice_for(CUptiResult r);

/// Throws cupti_failure "CUPTI: <call>: <CUPTI's message><advice>" unless r is CUPTI_SUCCESS.
void check(CUptiResult r, const char* call);

/// A CUPTI parameter struct, zeroed, with its size set (the other fields are the caller's).
template <class P>
P params(std::size_t size) {
  P p{};
  p.structSize = size;
  return p;
}

/// The current device's index and the runtime's primary context, made current (through the
/// runtime's driver entry points: programs start on machines without libcuda). Throws
/// cupti_failure "no CUDA device to profile (...)" without one.
struct current_device {
  int index = 0;
  CUcontext context = nullptr;
};
current_device require_current_device();

/// A metric configuration for one chip: CUPTI's host object (the caller deinitializes it with
/// release_host()), the config image and the replay passes it needs.
struct host_config {
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<std::uint8_t> image;
  std::size_t passes = 0;
};

/// cuptiProfilerHost {Initialize (`type`), ConfigAddMetrics, GetConfigImageSize, GetConfigImage,
/// GetNumOfPasses} for `metrics` on `chip`, with the counter availability image of the profiler
/// kind. Throws cupti_failure (the host object released).
host_config make_host_config(CUpti_ProfilerType type, const char* chip,
                             const std::vector<std::uint8_t>& availability,
                             const std::vector<const char*>& metrics);
/// cuptiProfilerHostDeinitialize, then null; nothing when null.
void release_host(CUpti_Profiler_Host_Object*& host) noexcept;

/// The first GPU operation after a range-profiler range or PM sampling starts, while the
/// Activity API is enabled (the collector's host timeline), took 0.6-1.0 ms more than it does
/// without (measured on the H200: a 0.2 ms kernel took 0.84-1.08 ms as the range's first
/// operation, 0.25 ms after a 4-byte memset, 0.25 ms without the Activity API; the same for PM
/// sampling). The collector calls absorb() first thing inside each range and sampled run, so
/// that the measured work is not the one to pay it: a memset of `bytes` bytes and a device
/// synchronization (a copy, no CTA), on a word the constructor allocates (outside the range).
/// Best effort: absorb() returns false and does nothing while the program has an error pending
/// (not ours to clear) or without the word. The host timeline records the memset: the
/// collector drops it (drop_absorber_memset). (The host timeline's own start absorbs the cost
/// of enabling the Activity API: host_activity.cpp, absorb_enable_cost.)
class first_operation_absorber {
 public:
  static constexpr std::uint64_t bytes = 4;
  first_operation_absorber() noexcept;
  ~first_operation_absorber();
  first_operation_absorber(const first_operation_absorber&) = delete;
  first_operation_absorber& operator=(const first_operation_absorber&) = delete;
  bool absorb() noexcept;

 private:
  void* word_ = nullptr;
};

/// cuptiProfilerInitialize / cuptiProfilerDeInitialize, counted: the first holder initializes,
/// the last one deinitializes. Move-only.
class profiler_init {
 public:
  profiler_init();  ///< throws cupti_failure
  ~profiler_init();
  profiler_init(profiler_init&& o) noexcept : held_(o.held_) { o.held_ = false; }
  profiler_init& operator=(profiler_init&&) = delete;
  profiler_init(const profiler_init&) = delete;
  profiler_init& operator=(const profiler_init&) = delete;

 private:
  bool held_ = false;
};

}  // namespace cdpkit::profiling::detail
