// libcdpkit_inject's set-up and end: the collectors started on the profiled context at its first
// work call (the host activity, the auto-range session or the PM sampler and its poller), and at
// the end the last ranges decoded, the sampling stopped, the activity flushed; the exit handler.

#include "signal_watch.hpp"
#include "state.hpp"

#include <cdpkit/profiling/collector.hpp>
#include <cdpkit/profiling/profile.hpp>

#include <cuda_runtime_api.h>
#include <cupti_result.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace cdpkit::profiling::inject {

namespace {

constexpr auto poll_period = std::chrono::milliseconds(50);
constexpr std::size_t max_pm_samples = 200000;

void start_poller(state& s) {
  s.poller = std::thread([&s] {
    reentry_guard guard;
    std::unique_lock<std::mutex> lock(s.pm_mu);
    try {
      while (!s.pm_stop) {
        s.pm_cv.wait_for(lock, poll_period);
        if (s.pm_stop || !s.pm) break;
        s.pm->poll();
        if (!s.pm->available()) {
          s.pm_failure = s.pm->unavailable_reason();
          break;
        }
      }
    } catch (const std::exception& e) {  // never std::terminate in the user's program
      s.pm_failure = std::string("the PM poller stopped: ") + e.what();
    } catch (...) {
      s.pm_failure = "the PM poller stopped: unknown error";
    }
  });
}

/// Set the collectors up on the profiled context, current on this thread (the entry of the first
/// work call on it). Caller holds mu and the reentry guard; setup() marks it done at the end, so
/// other threads' first calls wait on mu meanwhile instead of passing unrecorded.
void setup_collectors(state& s) {
  // After this library's CUDA runtime and CUPTI are initialized below, their teardown is
  // registered; registering the exit handler again makes it run before that teardown (atexit
  // runs the latest registration first; the handler runs once).
  struct reregister {
    ~reregister() { (void)std::atexit(at_exit); }
  } reregister_at_end;

  try {
    s.device = prof::device_json();
  } catch (const std::exception& e) {
    note(s, "device", e.what());
  }

  s.activity.emplace(std::size_t{1} << 20, /*warm_up=*/false);  // the whole program: no run to spare
  if (s.activity->available()) s.activity->start();
  if (!s.activity->available()) note(s, "host_activity", s.activity->unavailable_reason());

  if (s.mode == collect_mode::metrics) {
    try {
      const auto dev = prof::detail::require_current_device();
      s.session = std::make_unique<cdpkit::profiling::inject::auto_range_session>(
          dev.context, dev.index, prof::default_range_metrics(), s.batch);
      s.passes = s.session->passes();
      s.metrics_on = true;
    } catch (const cupti_failure& e) {
      note(s, "metrics", e.what());
    }
  }

  if (s.mode == collect_mode::timeline) {
    try {
      std::lock_guard<std::mutex> lock(s.pm_mu);
      s.pm = std::make_unique<prof::pm_sampler>(prof::default_pm_metrics(), s.interval_ns, max_pm_samples);
      if (s.pm->available()) s.pm->start();
      if (!s.pm->available()) {
        note(s, "timeline", s.pm->unavailable_reason());
        s.pm.reset();
      }
    } catch (const std::exception& e) {
      note(s, "timeline", e.what());
      s.pm.reset();
    }
    if (s.pm) {
      try {
        start_poller(s);
      } catch (const std::exception& e) {  // no thread: sample to the end without polling
        note(s, "timeline", std::string("the PM poller thread did not start (") + e.what() +
                                "): samples beyond the hardware buffer may be lost");
      }
    }
  }

  s.started_at = std::chrono::steady_clock::now();  // the program's time under collection starts

  // From now on only kernel launches matter (and only for the metrics): fewer callbacks.
  if (s.subscribed) {
    (void)cuptiEnableDomain(0, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
    if (s.metrics_on)
      for (const auto id : kernel_launch_cbids)
        if (cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) != CUPTI_SUCCESS)
          note_once(s, "enable launch callback", "metrics",
                    "CUPTI: cuptiEnableCallback failed for a kernel launch call: such launches are not measured");
  }
}

/// End the collection: the last ranges decoded, the sampling stopped, the activity flushed. Once;
/// the caller holds the reentry guard and not mu.
void finalize_once(state& s, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(s.pm_mu);
    s.pm_stop = true;
  }
  s.pm_cv.notify_all();
  if (s.poller.joinable()) s.poller.join();

  std::lock_guard<std::mutex> lock(s.mu);
  s.finalized = true;
  s.ended = why;
  s.ended_at = std::chrono::steady_clock::now();
  if (!s.setup_done) return;
  if (s.session) {
    flush_ranges(s);
    s.session.reset();
  }
  s.metrics_on = false;
  {
    std::lock_guard<std::mutex> pm_lock(s.pm_mu);
    if (s.pm) {
      if (!s.pm_failure.empty()) {
        note(s, "timeline", s.pm_failure);
      } else {
        auto t = s.pm->stop();
        if (s.pm->available()) s.timeline = std::move(t);
        else note(s, "timeline", s.pm->unavailable_reason());
      }
      s.pm.reset();
    }
  }
  if (s.activity) {
    auto log = s.activity->stop();
    if (s.activity->available()) s.log = std::move(log);
    else note(s, "host_activity", s.activity->unavailable_reason());
  }
}

}  // namespace

void setup(state& s) {
  setup_collectors(s);
  s.setup_done = true;
}

void finalize(state& s, const std::string& why) {
  std::call_once(s.finalize_flag, [&] { finalize_once(s, why); });
}

namespace {
// at_exit and at_signal: one writes the profile, the other waits. Timed: in a child forked while a
// signal's profile was being written, the mutex stays locked; its exit waits at most 15 s.
std::timed_mutex end_mu;
bool written = false;  // under end_mu
}  // namespace

void at_exit() noexcept {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  reentry_guard guard;
  try {
    std::unique_lock<std::timed_mutex> end_lock(end_mu, std::chrono::seconds(15));  // a signal's profile
    if (!end_lock.owns_lock() || written) {
      end_lock.unlock();
      end_by_caught_signal();
      return;
    }
    written = true;
    state& s = the_state();
    bool sync = false;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      sync = s.setup_done && !s.finalized;
    }
    // the activity records and the last ranges are complete once the device is idle
    if (sync) {
      const cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) {
        std::lock_guard<std::mutex> lock(s.mu);
        note(s, "collector", std::string("cudaDeviceSynchronize at exit: ") + cudaGetErrorString(e) +
                                 " (the context may be gone: what was collected is written)");
      }
    }
    finalize(s, "exit");
    write_profile(s);
    if (caught_signal() != 0) {  // a signal came while the exit wrote: it ends the program, as it would have
      end_lock.unlock();
      end_by_caught_signal();
    }
  } catch (const std::exception& e) {
    say(std::string("at exit: ") + e.what());
  } catch (...) {
    say("at exit: unknown error");
  }
}

void at_signal(const std::string& why) noexcept {
  reentry_guard guard;
  try {
    std::lock_guard<std::timed_mutex> end_lock(end_mu);
    if (written) return;
    written = true;
    state& s = the_state();
    {
      std::lock_guard<std::mutex> lock(s.mu);
      s.incomplete = why;
    }
    say(why + ": writing what was collected");
    finalize(s, why);
    write_profile(s);
  } catch (const std::exception& e) {
    say(std::string("at a signal: ") + e.what());
  } catch (...) {
    say("at a signal: unknown error");
  }
}

}  // namespace cdpkit::profiling::inject
