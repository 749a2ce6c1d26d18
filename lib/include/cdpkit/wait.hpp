#pragma once
// cdpkit/wait.hpp — every host wait of cdpkit has a deadline (the watchdog).
//
// A CDP program that stalls on the device (a child that never finishes, a device runtime stuck at
// its pending-launch limit) would otherwise leave the host in cudaStreamSynchronize forever. Every
// wait for an algorithm's work in the library and in the benchmark harness goes through these
// functions: they poll the stream or event, and when the deadline passes they print and throw
// cdpkit::cuda_error with code cudaErrorTimeout and a diagnosis: the launch layer's books
// (pending children, occupied completion slots and their blocks, launches so far, the time since
// the last launch or child end) from a mirror in mapped host memory, readable while the device is
// stuck, and, when the device still answers a copy on another stream, its own counters (error
// flags, trace records, per-site counts). (Synchronous copies and Thrust's internal waits that
// follow a watched wait — reading results back, the reference checks — have no deadline of
// their own: the work they wait for has already finished.)
//
// After a timeout the device is considered unresponsive (device_unresponsive()): cdpkit's RAII
// owners then skip the frees that would block on the stuck work, and the programs exit at once.

#include <cuda_runtime_api.h>

#include <chrono>

namespace cdpkit {

class launch_runtime;

/// The deadline of every host wait: 60 s unless the environment variable CDPKIT_WAIT_TIMEOUT_S
/// (seconds, a positive number) or set_wait_deadline() says otherwise.
[[nodiscard]] std::chrono::milliseconds wait_deadline() noexcept;

/// Set the deadline of every host wait in this process. Throws cdpkit::input_error for a
/// deadline <= 0.
void set_wait_deadline(std::chrono::milliseconds deadline);

/// True after a wait ran past its deadline, until a later wait succeeds (the device answered).
[[nodiscard]] bool device_unresponsive() noexcept;

/// Wait until all work enqueued on `stream` is done. Throws cdpkit::cuda_error: the stream's
/// error if the work failed; cudaErrorTimeout with `what` and the diagnosis of `runtime` (may be
/// null) when it is not done within wait_deadline().
void wait_for_stream(cudaStream_t stream, const char* what, const launch_runtime* runtime,
                     const char* file, int line);

/// The same for an event.
void wait_for_event(cudaEvent_t event, const char* what, const launch_runtime* runtime,
                    const char* file, int line);

/// Wait until all work on the current device is done, on every stream: cudaDeviceSynchronize,
/// run by cdpkit's synchronizing thread of that device (started on first use, kept for the
/// process) while this thread polls it under the deadline. Same errors as wait_for_stream. After
/// a timeout that synchronization goes on: later device-wide waits on the device wait behind it
/// (one synchronization then answers them all). For 1 ms after each synchronization that thread
/// looks for the next request, yielding its core, before it sleeps (a burst of synchronous calls
/// then pays no thread wake-up each).
void wait_for_device(const char* what, const launch_runtime* runtime, const char* file, int line);

}  // namespace cdpkit

/// Wait for `stream` under the watchdog; `runtime` is a cdpkit::launch_runtime (its state is the
/// diagnosis on a timeout).
#define CDPKIT_WAIT_STREAM(stream, runtime, what) \
  ::cdpkit::wait_for_stream((stream), (what), &(runtime), __FILE__, __LINE__)
