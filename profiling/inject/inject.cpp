// libcdpkit_inject.so — a CUDA injection library: cdpkit's profile of an unmodified CUDA program.
//
// Usage (the program is not rebuilt; the CUDA driver loads the library during cuInit and calls
// its InitializeInjection()):
//
//   CUDA_INJECTION64_PATH=$PWD/build/release/profiling/inject/libcdpkit_inject.so CDPKIT_PROFILE_OUT=out.json ./app
//   build/release/reports/cdpkit-report out.json -o out.html
//
// At exit it writes one profile JSON (the current version) to $CDPKIT_PROFILE_OUT (default
// "cdpkit-inject-profile.json" in the working directory; "%p" in the name becomes the process id,
// for programs that start CUDA programs of their own). It says one line on stderr per problem
// ("cdpkit inject: ...") and one when the profile is written (none with CDPKIT_INJECT_QUIET=1).
//
// What it collects, chosen by CDPKIT_COLLECT (metrics and timeline cannot be enabled together:
// CUPTI answers CUPTI_ERROR_HARDWARE_BUSY on the H200):
//   metrics (default)  one range per host kernel launch, CUPTI's range profiler in auto-range
//                      mode with kernel replay (the default metrics fit one pass, so nothing is
//                      replayed), with profiling::default_range_metrics(). Each range is a run:
//                      algorithm "injected", variant = the kernel's (demangled) name, input = the
//                      command line, ms = gpu__time_duration.sum, hardware = the metrics. The
//                      counters of a range include every grid the kernel launched from the device
//                      (CDP children are folded into their host parent's range). The accounting
//                      (profiling::account) has the launch as its one host grid (blocks and
//                      threads from the host activity record of the same launch); child grids are
//                      not traced in an injected program and count 0, so a CDP kernel's extra
//                      CTAs read as unaccounted (they are its children and the device runtime's).
//   timeline           PM sampling of the device (profiling::pm_sampler, default_pm_metrics(),
//                      every CDPKIT_INTERVAL_NS ns, default 100000) from the first CUDA work to
//                      exit, polled every 50 ms from a thread of its own: one run "program".
//   all                means metrics (said once on stderr).
//   none               the host timeline alone.
// Always: the host timeline, CUPTI's activity API (profiling::host_activity: host kernels,
// copies, memsets) for the whole program, in the document's host_activity, each kernel tagged
// with the run of its range (metrics) or with the program run (timeline).
//
// Other settings: CDPKIT_INJECT_MAX_RANGES (default 4096): kernel launches measured at most,
// later ones run unmeasured and are counted in a note; CDPKIT_INJECT_BATCH (default 256): ranges
// per counter-data image (when it fills, it is decoded, its values kept, and measuring goes on).
//
// When it starts: the library subscribes to CUPTI's callbacks in InitializeInjection (CUPTI allows
// one subscriber per process: under Nsight Systems or Nsight Compute, which inject themselves,
// this library is not loaded at all; another subscriber makes it stand aside with a note). The
// collectors are set up for the first CUDA context created (CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
// at the entry of the first kernel launch, copy or memset on it: the collectors find their device
// through the CUDA runtime, which must not be re-entered while the driver is still creating the
// context, and nothing is recorded before the first such call anyway.
//
// When it ends: at exit (atexit), or earlier when the profiled context is destroyed
// (CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, e.g. cudaDeviceReset): the last ranges are
// decoded, the sampling stopped, the activity flushed; the profile is written at exit. Why atexit
// runs while the context still lives: atexit handlers run in the reverse order of their
// registration. The program's CUDA runtime registers its teardown (nvcc's generated
// __cudaUnregisterBinaryUtil, registered by the fat-binary constructors before main, and the
// runtime's own state) before it first calls cuInit, which is when InitializeInjection registers
// this library's handler; the handler is registered once more after the set-up, after this
// library's own runtime and CUPTI were initialized, so that it also runs before their teardown.
// So the handler runs first, while the context lives. If the context is gone anyway (destroyed
// by the program, or a teardown this reasoning missed), what was collected is written with a note.
// A program stopped by a signal (Ctrl-C, SIGTERM, a crash, abort) still writes its profile, marked
// incomplete (the collector's "incomplete": why), without waiting for the device, within 10 s, and
// then ends by that signal (signal_watch.hpp: which signals, how; CDPKIT_INJECT_SIGNALS=0 leaves
// the program's signals alone). A signal the program handles itself is left to it.
//
// Measured on the H200 (CUDA 13.0): CUPTI names auto ranges by number ("0", "1", ... since the
// profiler was enabled, on across every decode), so each range is paired with its launch from
// the launch callbacks (the kernel's name, the launch's order); ranges of one kernel are not
// merged; the activity API gives the kernels the range profiler measures no times (start = end =
// 0, said in a note; their durations are gpu__time_duration.sum); a CDP parent's range counts
// its children and the device runtime's CTAs (small_cdp: 2 + 16 x 4 + 6 = 72); the exit handler
// and the cudaDeviceReset path both find the context alive, with the static and the shared CUDA
// runtime in the program; the PM samples cover the program's GPU work (the set-up, about 0.5 s,
// is before the program run's time starts).
//
// Limits: one context (the first; a note says when more were created); kernels of CUDA graphs
// are not measured as ranges (they are in the host timeline); a program that ends with _exit(),
// quick_exit() or SIGKILL writes no profile; launches from several threads at once are paired
// with their ranges in callback order (by range number or kernel name when the counts differ,
// with a note). Never breaks the program: every
// CUPTI or CUDA failure becomes a note in the profile's collector and one line on stderr, and the
// program's exit code is its own.
//
// The code: InitializeInjection in this file; the parts it starts, one job a file, are listed in
// state.hpp (their shared state).

#include "signal_watch.hpp"
#include "state.hpp"

#include <cdpkit/profiling/collector.hpp>

#include <cupti_callbacks.h>
#include <cupti_result.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string>

extern char** environ;

namespace cdpkit::profiling::inject {

namespace {

/// True when CUDA_INJECTION64_PATH names this library: a path containing "cdpkit_inject", or
/// the file this code was loaded from (a copy under another name).
bool injection_is_ours() {
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  if (injection == nullptr || *injection == '\0') return false;
  if (std::strstr(injection, "cdpkit_inject") != nullptr) return true;
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&the_state), &self) == 0 || self.dli_fname == nullptr) return false;
  char a[PATH_MAX], b[PATH_MAX];
  return ::realpath(injection, a) != nullptr && ::realpath(self.dli_fname, b) != nullptr && std::strcmp(a, b) == 0;
}

/// Another profiler that holds CUPTI in this process, per profiling::foreign_profiler(); this
/// library itself is not one.
std::optional<std::string> other_profiler() {
  auto other = prof::foreign_profiler();
  if (!injection_is_ours()) return other;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)  // foreign_profiler looks no further
    if (std::strncmp(*e, "NSYS_", 5) == 0) return std::string("Nsight Systems (") + *e + ")";
  return std::nullopt;
}

}  // namespace

}  // namespace cdpkit::profiling::inject

// InitializeInjection, the library's one exported symbol (exports.map), has C linkage at global
// scope; the library's own names are in cdpkit::profiling::inject.
using namespace cdpkit::profiling::inject;

/// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names this library.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::atomic<bool> once{false};
  if (once.exchange(true)) return 1;
  reentry_guard guard;
  try {
    state& s = the_state();
    std::lock_guard<std::mutex> lock(s.mu);
    configure(s);
    if (std::atexit(at_exit) != 0) say("atexit failed: no profile will be written");
    if (s.watch_signals && !watch_signals(at_signal))
      say("the signal watch could not start: a program stopped by a signal will write no profile");
    if (const auto other = other_profiler()) {
      if (s.mode != collect_mode::none)
        note(s, s.mode == collect_mode::metrics ? "metrics" : "timeline",
             *other + " holds CUPTI: cdpkit stands aside, the program runs as usual");
      s.mode = collect_mode::none;
    }
    const CUptiResult r = cuptiSubscribe(&s.subscriber, callback, nullptr);
    if (r != CUPTI_SUCCESS) {
      try {
        prof::detail::check(r, "cuptiSubscribe");
      } catch (const cupti_failure& e) {
        note(s, "collector", std::string(e.what()) + ": nothing is collected");
      }
      return 1;
    }
    s.subscribed = true;
    const auto enable = [&](CUptiResult res, const char* call) {
      try {
        prof::detail::check(res, call);
      } catch (const cupti_failure& e) {
        note(s, "collector", e.what());
      }
    };
    enable(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
           "cuptiEnableCallback(CONTEXT_CREATED)");
    enable(cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
           "cuptiEnableCallback(CONTEXT_DESTROY_STARTING)");
    // until the set-up: every driver call, to catch the first work on the context
    enable(cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "cuptiEnableDomain(DRIVER_API)");
  } catch (const std::exception& e) {
    say(std::string("InitializeInjection: ") + e.what());
  } catch (...) {
    say("InitializeInjection: unknown error");
  }
  return 1;
}
