// The watchdog behind every host wait: poll with back-off, and on expiry throw with the launch
// layer's state as evidence.

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/wait.hpp>

#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

namespace cdpkit {

namespace {

std::chrono::milliseconds initial_deadline() noexcept {
  constexpr std::chrono::milliseconds fallback{60000};
  const char* env = std::getenv("CDPKIT_WAIT_TIMEOUT_S");
  if (env == nullptr || *env == '\0') return fallback;
  char* end = nullptr;
  const double seconds = std::strtod(env, &end);
  if (end == env || *end != '\0' || !(seconds > 0) || !std::isfinite(seconds) || seconds > 1e7) {
    std::fprintf(stderr,
                 "cdpkit: ignoring CDPKIT_WAIT_TIMEOUT_S='%s' (expected seconds > 0); using 60\n",
                 env);
    return fallback;
  }
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000.0)));
}

std::atomic<long long>& deadline_ms() {
  static std::atomic<long long> value{initial_deadline().count()};
  return value;
}

std::atomic<bool> unresponsive{false};

std::string seconds_text(std::chrono::steady_clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s",
                std::chrono::duration<double>(d).count());
  return buf;
}

/// Poll `query` (cudaStreamQuery / cudaEventQuery) until it is not cudaErrorNotReady.
template <class Query>
void poll_until_done(Query query, const char* what, const launch_runtime* runtime,
                     const char* file, int line) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto limit = std::chrono::milliseconds(deadline_ms().load(std::memory_order_relaxed));
  for (;;) {
    const cudaError_t e = query();
    if (e == cudaSuccess) {
      unresponsive.store(false, std::memory_order_relaxed);
      return;
    }
    if (e != cudaErrorNotReady) {
      (void)cudaGetLastError();
      throw cuda_error(e, what, file, line);
    }
    const auto elapsed = clock::now() - start;
    if (elapsed >= limit) {
      unresponsive.store(true, std::memory_order_relaxed);
      std::string message = std::string(what) + ": the device did not finish within " +
                            seconds_text(elapsed) +
                            " (cdpkit watchdog; the deadline is set by CDPKIT_WAIT_TIMEOUT_S"
                            " or --timeout). ";
      message += runtime != nullptr ? runtime->diagnose()
                                    : std::string("No launch runtime to diagnose.");
      // Print the evidence now: unwinding may still block in a destructor that frees device
      // memory (a thrust vector, a user's RAII) on the stuck work.
      std::fprintf(stderr, "cdpkit watchdog: %s:%d: %s\n", file, line, message.c_str());
      std::fflush(stderr);
      throw cuda_error(cudaErrorTimeout, message, file, line);
    }
    // Back-off: spin for the first 100 us (latency of short host round trips), then yield,
    // then sleep, up to 1 ms between polls.
    if (elapsed < std::chrono::microseconds(100)) continue;
    if (elapsed < std::chrono::milliseconds(5)) {
      std::this_thread::yield();
    } else if (elapsed < std::chrono::milliseconds(100)) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

}  // namespace

std::chrono::milliseconds wait_deadline() noexcept {
  return std::chrono::milliseconds(deadline_ms().load(std::memory_order_relaxed));
}

void set_wait_deadline(std::chrono::milliseconds deadline) {
  if (deadline.count() <= 0)
    throw input_error("the wait deadline must be positive, got " +
                      std::to_string(deadline.count()) + " ms");
  deadline_ms().store(deadline.count(), std::memory_order_relaxed);
}

bool device_unresponsive() noexcept { return unresponsive.load(std::memory_order_relaxed); }

void wait_for_stream(cudaStream_t stream, const char* what, const launch_runtime* runtime,
                     const char* file, int line) {
  poll_until_done([stream] { return cudaStreamQuery(stream); }, what, runtime, file, line);
}

void wait_for_event(cudaEvent_t event, const char* what, const launch_runtime* runtime,
                    const char* file, int line) {
  poll_until_done([event] { return cudaEventQuery(event); }, what, runtime, file, line);
}

void wait_for_device(const char* what, const launch_runtime* runtime, const char* file,
                     int line) {
  cudaEvent_t event = nullptr;
  CDPKIT_CUDA_TRY(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  try {
    CDPKIT_CUDA_TRY(cudaEventRecord(event, cudaStreamLegacy));
    wait_for_event(event, what, runtime, file, line);
  } catch (...) {
    (void)cudaEventDestroy(event);
    throw;
  }
  (void)cudaEventDestroy(event);
  // Work on non-blocking streams is not ordered before the legacy stream's event: finish with
  // cudaDeviceSynchronize, on a helper thread so that it too has the deadline.
  struct shared_result {
    std::atomic<bool> done{false};
    cudaError_t error = cudaSuccess;
  };
  auto result = std::make_shared<shared_result>();
  int device = 0;
  CDPKIT_CUDA_TRY(cudaGetDevice(&device));  // a new thread starts on device 0
  std::thread([result, device] {
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    result->error = e;
    result->done.store(true, std::memory_order_release);
  }).detach();
  poll_until_done(
      [&result] {
        if (!result->done.load(std::memory_order_acquire)) return cudaErrorNotReady;
        return result->error;
      },
      what, runtime, file, line);
}

}  // namespace cdpkit
