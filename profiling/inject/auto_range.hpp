#pragma once
// Internal to libcdpkit_inject: CUPTI's range profiler on one context in auto-range mode with
// kernel replay (CUPTI_AutoRange + CUPTI_KernelReplay): every kernel launched between start() and
// stop_and_decode() is one range, named by CUPTI after the kernel, whose counters include the
// grids the kernel launched from the device.
//
// range_profiler (cdpkit/profiling/range_profiler.hpp) is the same CUPTI sequence in user-range
// mode with user replay, but its set-up is private to it; this is the auto-range counterpart,
// built on the same shared helpers (cupti_support.hpp). The report of the injection task
// describes the small refactor that would let both share one set-up.
//
// Not thread-safe: the caller serializes every call (the injection holds its lock).

#include <cdpkit/profiling/range_profiler.hpp>

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace cdpkit::profiling::inject {

class auto_range_session {
 public:
  /// Enable the range profiler on `context` (of CUDA device `device`) measuring `metrics`, with a
  /// counter-data image of `capacity` ranges. Throws detail::cupti_failure naming the CUPTI call.
  auto_range_session(CUcontext context, int device, std::vector<std::string> metrics, std::size_t capacity);
  /// Disables the profiler (ignoring CUPTI's answers).
  ~auto_range_session();
  auto_range_session(const auto_range_session&) = delete;
  auto_range_session& operator=(const auto_range_session&) = delete;

  /// cuptiRangeProfilerStart, unless started. Throws detail::cupti_failure.
  void start();
  [[nodiscard]] bool started() const noexcept { return started_; }
  /// The ranges one image holds.
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  /// Replay passes the metrics need (1 for the default set on an H200).
  [[nodiscard]] std::size_t passes() const noexcept { return passes_; }
  /// Ranges CUPTI reported dropped so far (the image was full).
  [[nodiscard]] std::size_t dropped() const noexcept { return dropped_; }

  /// cuptiRangeProfilerStop (when started), DecodeData, the image's ranges in the order CUPTI
  /// measured them, then the image re-initialized for the next start(). Throws
  /// detail::cupti_failure.
  std::vector<range_metrics> stop_and_decode();

 private:
  void teardown() noexcept;

  std::vector<std::string> metrics_;
  std::vector<const char*> names_;  // into metrics_
  std::size_t capacity_ = 0;
  std::size_t passes_ = 0;
  std::size_t dropped_ = 0;
  bool started_ = false;
  struct cupti_objects;
  std::unique_ptr<cupti_objects> o_;
};

}  // namespace cdpkit::profiling::inject
