#pragma once
// Internal to libcdpkit_inject (inject.cpp says what the library does and how it is used): the
// state its parts share, the re-entry guard, the notes, and what one part calls in another.
//
// The parts: inject.cpp (InitializeInjection), settings.cpp (the environment, the program's
// names), callbacks.cpp (CUPTI's callbacks), metrics.cpp (launches paired with their ranges),
// lifecycle.cpp (the set-up and the end), document.cpp (the profile written at exit), state.cpp,
// signal_watch.cpp (a program stopped by a signal still writes its profile).

#include "auto_range.hpp"
#include "cupti_support.hpp"

#include <cdpkit/profiling/host_activity.hpp>
#include <cdpkit/profiling/pm_sampler.hpp>
#include <cdpkit/profiling/range_profiler.hpp>

#include <cuda.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cdpkit::profiling::inject {

namespace prof = cdpkit::profiling;
using prof::detail::cupti_failure;

// --- settings ---------------------------------------------------------------------------------

enum class collect_mode { metrics, timeline, none };

// --- CUPTI callback ids -----------------------------------------------------------------------

/// The driver calls that launch one kernel (each one range in auto-range mode).
inline constexpr CUpti_CallbackId kernel_launch_cbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};

// --- the state --------------------------------------------------------------------------------

/// A host kernel launch inside a started range-profiler session, waiting for its range.
struct pending_launch {
  std::string kernel;  ///< the symbol name the driver launched (mangled)
  std::uint32_t correlation = 0;
  std::uint64_t index = 0;  ///< among the launches on the profiled context, from 0
};

/// A launch with its range's metrics.
struct measured_launch {
  pending_launch launch;
  prof::range_metrics range;
};

struct state {
  std::mutex mu;  ///< everything below but the PM poller's part

  // settings
  collect_mode mode = collect_mode::metrics;
  std::vector<std::string> requested;
  std::size_t max_ranges = 4096;
  std::size_t batch = 256;
  std::uint64_t interval_ns = 100000;
  bool quiet = false;
  bool watch_signals = true;  ///< write the profile when a signal stops the program (signal_watch.hpp)

  // CUPTI
  CUpti_SubscriberHandle subscriber = nullptr;
  bool subscribed = false;
  CUcontext context = nullptr;  ///< the profiled context: the first one created
  std::uint64_t contexts_created = 0;
  std::atomic<bool> setup_done{false};
  std::atomic<bool> finalized{false};
  std::atomic<bool> metrics_on{false};
  std::once_flag finalize_flag;
  std::string ended;  ///< why collection ended ("exit", "the context was destroyed ...")
  std::optional<std::string> incomplete;  ///< set when a signal stopped the program (the collector's)

  // what was collected
  std::optional<nlohmann::json> device;
  std::optional<prof::host_activity> activity;
  std::optional<prof::host_activity_log> log;
  std::unique_ptr<cdpkit::profiling::inject::auto_range_session> session;
  std::size_t passes = 0;
  std::vector<pending_launch> pending;
  std::vector<measured_launch> measured;
  std::uint64_t launches = 0;      ///< host kernel launches on the profiled context since set-up
  std::uint64_t not_measured = 0;  ///< of them, launches without a range
  bool capped = false;
  std::optional<prof::pm_timeline> timeline;
  std::chrono::steady_clock::time_point started_at, ended_at;

  // the PM sampler and its poller (pm_mu only: the poller never takes mu)
  std::mutex pm_mu;
  std::condition_variable pm_cv;
  std::unique_ptr<prof::pm_sampler> pm;
  bool pm_stop = false;
  std::string pm_failure;
  std::thread poller;

  std::vector<std::string> notes;
  std::set<std::string> said_once;
};

/// Never destroyed: callbacks and the exit handler may run after static destructors.
state& the_state();

/// Set while this library runs CUDA or CUPTI calls on a thread: callbacks of the calls this
/// library makes itself are ignored.
extern thread_local bool in_cdpkit;
struct reentry_guard {
  bool previous;
  reentry_guard() noexcept : previous(in_cdpkit) { in_cdpkit = true; }
  ~reentry_guard() { in_cdpkit = previous; }
  reentry_guard(const reentry_guard&) = delete;
  reentry_guard& operator=(const reentry_guard&) = delete;
};

/// One line on stderr, "cdpkit inject: " first.
void say(const std::string& line) noexcept;

/// A note in the profile (part: "metrics", "timeline", "host_activity", ...) and one line on
/// stderr. Caller holds mu.
void note(state& s, const std::string& part, const std::string& why);

/// The same, once per `key`.
void note_once(state& s, const std::string& key, const std::string& part, const std::string& why);

// --- the settings and the program's names (settings.cpp) --------------------------------------

/// Read the settings; say once what "all" means and what an unknown word becomes.
void configure(state& s);

/// The command line, its words joined by spaces (those with a space or tab quoted).
std::string command_line();

/// The executable's name: /proc/self/exe, else the first word of the command line.
std::string program_name();

/// `mangled` demangled (abi::__cxa_demangle), or as it is when it is not a C++ name.
std::string demangled(const std::string& mangled);

/// The profile's path: CDPKIT_PROFILE_OUT with "%p" replaced by the process id.
std::string profile_path();

// --- metrics (metrics.cpp) --------------------------------------------------------------------

/// Stop, decode and keep the ranges of the session's image. Caller holds mu.
void flush_ranges(state& s);

/// The entry of a host kernel launch on the profiled context. Caller holds mu.
void on_launch_enter(state& s, const CUpti_CallbackData& cb);

/// The exit of a host kernel launch: a launch that failed ran no kernel and gets no range.
void on_launch_exit(state& s, const CUpti_CallbackData& cb);

// --- set-up and the end (lifecycle.cpp) -------------------------------------------------------

/// Set the collectors up (the entry of the first work call on the profiled context) and mark the
/// set-up done. Caller holds mu and the reentry guard.
void setup(state& s);

/// The first caller finalizes; a concurrent second one (exit while the context is destroyed)
/// waits until that is done, so the profile written after holds everything.
void finalize(state& s, const std::string& why);

/// The exit handler (atexit, registered by InitializeInjection and again after the set-up): the
/// device synchronized while the collection runs, the collection ended, the profile written. Runs
/// once. When a signal's profile is being written (at_signal), it waits for it and then ends the
/// process by that signal, as the signal would have.
void at_exit() noexcept;

/// The work of the signal watch (signal_watch.hpp), on a thread of its own: the collection ended
/// without waiting for the device (a kernel may never finish), the profile written and marked
/// incomplete with `why`. Once, and never together with at_exit.
void at_signal(const std::string& why) noexcept;

// --- the document (document.cpp) --------------------------------------------------------------

/// Write the profile (at exit, after finalize). Caller holds the reentry guard.
void write_profile(state& s);

// --- the callback (callbacks.cpp) -------------------------------------------------------------

/// CUPTI's callback for every subscribed domain (the resource and driver API domains).
void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept;

}  // namespace cdpkit::profiling::inject
