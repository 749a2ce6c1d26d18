// The watchdog behind every host wait: poll with back-off, and on expiry throw with the launch
// layer's state as evidence.

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/wait.hpp>

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

/// One device-wide synchronization asked of a device_sync_worker: done once a cudaDeviceSynchronize
/// started after the request was queued has returned, with its result in `error`.
struct device_sync_request {
  std::atomic<bool> done{false};
  cudaError_t error = cudaSuccess;
};

/// The thread that runs cudaDeviceSynchronize for wait_for_device on one device, so that a
/// device-wide wait keeps the watchdog's deadline (the caller polls the request) without starting
/// a thread per wait: a thread's start, and its first CUDA call, cost tens of microseconds, and
/// far more under CUPTI, inside every synchronous call's timed window (docs/design.md, "The CUPTI
/// collector"). One per device, started on first use and never stopped (a synchronization stuck
/// on a hung device must not block the process's exit). Each synchronization answers every
/// request queued before it started: callers that gave up on a stuck one add no work behind it.
class device_sync_worker {
 public:
  /// The worker of `device` (created on first use).
  static device_sync_worker& of(int device) {
    static std::mutex registry_mutex;
    static auto* const registry = new std::map<int, device_sync_worker*>();  // (never destroyed: see above)
    const std::lock_guard<std::mutex> lock(registry_mutex);
    device_sync_worker*& worker = (*registry)[device];
    if (worker == nullptr) worker = new device_sync_worker(device);
    return *worker;
  }

  /// Queues a synchronization; the caller polls the request's `done`.
  std::shared_ptr<device_sync_request> submit() {
    auto request = std::make_shared<device_sync_request>();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(request);
      queued_.store(true, std::memory_order_release);
    }
    ready_.notify_one();
    return request;
  }

 private:
  explicit device_sync_worker(int device) : device_(device) { std::thread([this] { serve(); }).detach(); }

  [[noreturn]] void serve() {
    const cudaError_t set = cudaSetDevice(device_);
    for (;;) {
      // Requests come in bursts (a synchronous call's check, the next call's, a snapshot): for a
      // while after each synchronization the thread looks for the next one, yielding, before it
      // sleeps; waking a sleeping thread costs tens of microseconds inside the caller's wait.
      const auto look_until = std::chrono::steady_clock::now() + look_for_next;
      while (!queued_.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < look_until)
        std::this_thread::yield();
      std::vector<std::shared_ptr<device_sync_request>> batch;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return !queue_.empty(); });
        batch.swap(queue_);
        queued_.store(false, std::memory_order_relaxed);
      }
      const cudaError_t e = set == cudaSuccess ? cudaDeviceSynchronize() : set;
      if (e != cudaSuccess) (void)cudaGetLastError();  // (this thread's record of it; the waiters get e)
      for (const auto& request : batch) {
        request->error = e;
        request->done.store(true, std::memory_order_release);
      }
    }
  }

  /// How long the thread looks for the next request after a synchronization before it sleeps.
  static constexpr std::chrono::microseconds look_for_next{1000};

  int device_;
  std::atomic<bool> queued_{false};  ///< queue_ is not empty (read without the lock)
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<std::shared_ptr<device_sync_request>> queue_;
};

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
  int device = 0;
  CDPKIT_CUDA_TRY(cudaGetDevice(&device));
  const std::shared_ptr<device_sync_request> request = device_sync_worker::of(device).submit();
  poll_until_done(
      [&request] {
        if (!request->done.load(std::memory_order_acquire)) return cudaErrorNotReady;
        return request->error;
      },
      what, runtime, file, line);
}

}  // namespace cdpkit
