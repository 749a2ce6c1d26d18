// libcdpkit_inject.so — a CUDA injection library: cdpkit's profile of an unmodified CUDA program.
//
// Usage (the program is not rebuilt; the CUDA driver loads the library during cuInit and calls
// its InitializeInjection()):
//
//   CUDA_INJECTION64_PATH=$PWD/build/release/profiling/inject/libcdpkit_inject.so CDPKIT_PROFILE_OUT=out.json ./app
//   build/release/reports/cdpkit-report out.json -o out.html
//
// At exit it writes one cdpkit-profile/4 JSON to $CDPKIT_PROFILE_OUT (default
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
// quick_exit() or a signal writes no profile; launches from several threads at once are paired
// with their ranges in callback order (by range number or kernel name when the counts differ,
// with a note). Never breaks the program: every
// CUPTI or CUDA failure becomes a note in the profile's collector and one line on stderr, and the
// program's exit code is its own.

#include "auto_range.hpp"
#include "cupti_support.hpp"

#include <cdpkit/profiling/collector.hpp>
#include <cdpkit/profiling/host_activity.hpp>
#include <cdpkit/profiling/pm_sampler.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/profiling/range_profiler.hpp>
#include <cdpkit/schema/profile.hpp>
#include <cdpkit/schema/text.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>

#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

extern char** environ;

namespace {

namespace prof = cdpkit::profiling;
namespace schema = cdpkit::schema;
using prof::detail::cupti_failure;

// --- settings ---------------------------------------------------------------------------------

enum class collect_mode { metrics, timeline, none };

constexpr const char* default_profile_out = "cdpkit-inject-profile.json";
using prof::range_profiler_kernel;  // CUPTI's own kernel: left out of the timeline and the pairing
constexpr auto poll_period = std::chrono::milliseconds(50);
constexpr std::size_t max_pm_samples = 200000;

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : std::string(fallback);
}

/// A positive integer setting, or `fallback` (with a line on stderr) when it does not parse.
std::uint64_t env_count(const char* name, std::uint64_t fallback, std::uint64_t lo, std::uint64_t hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0' || n < lo || n > hi) {
    std::fprintf(stderr, "cdpkit inject: %s=%s is not a number in [%llu, %llu]: using %llu\n", name, v,
                 static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi),
                 static_cast<unsigned long long>(fallback));
    return fallback;
  }
  return n;
}

/// The program's command line from /proc/self/cmdline, arguments joined by spaces (those with a
/// space quoted); empty when it cannot be read.
std::vector<std::string> command_line_words() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> words;
  std::string word;
  for (const char c : all) {
    if (c == '\0') {
      words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

std::string command_line() {
  std::string out;
  for (const auto& w : command_line_words()) {
    if (!out.empty()) out += ' ';
    out += w.find_first_of(" \t") == std::string::npos ? w : "'" + w + "'";
  }
  return out;
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// The executable's name: /proc/self/exe, else the first word of the command line.
std::string program_name() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return base_name(std::string(buf, static_cast<std::size_t>(n)));
  const auto words = command_line_words();
  return words.empty() ? std::string("(unknown program)") : base_name(words.front());
}

/// `mangled` demangled (abi::__cxa_demangle), or as it is when it is not a C++ name.
std::string demangled(const std::string& mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) {
    std::free(d);
    return mangled;
  }
  std::string out(d);
  std::free(d);
  return out;
}

/// The profile's path: CDPKIT_PROFILE_OUT with "%p" replaced by the process id.
std::string profile_path() {
  std::string p = env_or("CDPKIT_PROFILE_OUT", default_profile_out);
  const std::string pid = std::to_string(::getpid());
  for (auto at = p.find("%p"); at != std::string::npos; at = p.find("%p", at + pid.size()))
    p.replace(at, 2, pid);
  return p;
}

// --- CUPTI callback ids -----------------------------------------------------------------------

/// The driver calls that launch one kernel (each one range in auto-range mode).
constexpr CUpti_CallbackId kernel_launch_cbids[] = {
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

bool is_kernel_launch(CUpti_CallbackId cbid) noexcept {
  for (const auto id : kernel_launch_cbids)
    if (id == cbid) return true;
  return false;
}

/// A driver call that puts work on the device (the set-up waits for the first one).
bool is_work_call(const char* function) noexcept {
  if (function == nullptr) return false;
  for (const char* prefix : {"cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch"})
    if (std::strncmp(function, prefix, std::strlen(prefix)) == 0) return true;
  return false;
}

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
state& the_state() {
  static state* const s = new state();
  return *s;
}

/// Set while this library runs CUDA or CUPTI calls on a thread: callbacks of the calls this
/// library makes itself are ignored.
thread_local bool in_cdpkit = false;
struct reentry_guard {
  bool previous;
  reentry_guard() noexcept : previous(in_cdpkit) { in_cdpkit = true; }
  ~reentry_guard() { in_cdpkit = previous; }
  reentry_guard(const reentry_guard&) = delete;
  reentry_guard& operator=(const reentry_guard&) = delete;
};

void say(const std::string& line) noexcept { std::fprintf(stderr, "cdpkit inject: %s\n", line.c_str()); }

/// A note in the profile (part: "metrics", "timeline", "host_activity", ...) and one line on
/// stderr. Caller holds mu.
void note(state& s, const std::string& part, const std::string& why) {
  s.notes.push_back(part + ": " + why);
  say(s.notes.back());
}

/// The same, once per `key`.
void note_once(state& s, const std::string& key, const std::string& part, const std::string& why) {
  if (s.said_once.insert(key).second) note(s, part, why);
}

// --- metrics ----------------------------------------------------------------------------------

/// The metrics part stands aside: the session is disabled, its waiting launches unmeasured.
/// Caller holds mu.
void metrics_fail(state& s, const std::string& why) {
  note(s, "metrics", why);
  s.session.reset();
  s.metrics_on = false;
  s.not_measured += s.pending.size();
  s.pending.clear();
}

/// The number a range's name is, when it is one: CUPTI names auto ranges by their index since
/// the profiler was enabled ("0", "1", ...; measured on the H200, CUDA 13.0).
std::optional<std::uint64_t> range_number(const std::string& name) {
  if (name.empty() || name.size() > 18 || name.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(name);
}

/// Pair decoded ranges with the launches waiting for them: in order when the counts agree (one
/// range per launch, in launch order), else each range with the waiting launch its name numbers,
/// or with the next waiting launch of its kernel's name.
void pair_ranges(state& s, std::vector<prof::range_metrics>& ranges) {
  if (ranges.size() == s.pending.size()) {
    for (std::size_t k = 0; k < ranges.size(); ++k) s.measured.push_back({s.pending[k], std::move(ranges[k])});
    s.pending.clear();
    return;
  }
  note_once(s, "range count", "metrics",
            "CUPTI returned " + std::to_string(ranges.size()) + " ranges for " + std::to_string(s.pending.size()) +
                " kernel launches (at one decode); ranges were paired with launches by range number or kernel name");
  std::vector<bool> used(s.pending.size(), false);
  std::size_t from = 0;
  for (auto& r : ranges) {
    std::optional<std::size_t> hit;
    if (const auto n = range_number(r.name))
      for (std::size_t k = 0; k < s.pending.size() && !hit; ++k)
        if (!used[k] && s.pending[k].index == *n) hit = k;
    for (std::size_t k = from; k < s.pending.size() && !hit; ++k)
      if (!used[k] && (s.pending[k].kernel == r.name || demangled(s.pending[k].kernel) == r.name)) hit = k;
    if (hit) {
      used[*hit] = true;
      from = *hit + 1;
      s.measured.push_back({s.pending[*hit], std::move(r)});
    } else {
      pending_launch unknown;
      unknown.kernel = "(a kernel of CUPTI range " + r.name + ")";
      s.measured.push_back({unknown, std::move(r)});
    }
  }
  for (std::size_t k = 0; k < s.pending.size(); ++k) s.not_measured += used[k] ? 0 : 1;
  s.pending.clear();
}

/// Stop, decode and keep the ranges of the session's image. Caller holds mu.
void flush_ranges(state& s) {
  if (!s.session) return;
  try {
    auto ranges = s.session->stop_and_decode();
    pair_ranges(s, ranges);
  } catch (const cupti_failure& e) {
    metrics_fail(s, e.what());
  }
}

/// The entry of a host kernel launch on the profiled context. Caller holds mu.
void on_launch_enter(state& s, const CUpti_CallbackData& cb) {
  if (s.capped) {  // counted, not measured
    ++s.launches;
    ++s.not_measured;
    return;
  }
  if (!s.session) return;
  if (s.measured.size() + s.pending.size() >= s.max_ranges) {
    s.capped = true;
    ++s.launches;
    ++s.not_measured;
    flush_ranges(s);
    s.session.reset();  // the later kernels run without the profiler
    note(s, "metrics",
         "the first " + std::to_string(s.max_ranges) +
             " kernel launches were measured (CDPKIT_INJECT_MAX_RANGES); later ones run unmeasured");
    return;
  }
  if (s.pending.size() >= s.session->capacity()) flush_ranges(s);  // the image is full
  if (!s.session) return;
  try {
    s.session->start();
  } catch (const cupti_failure& e) {
    metrics_fail(s, e.what());
    return;
  }
  s.pending.push_back({cb.symbolName != nullptr ? cb.symbolName : "(unnamed)", cb.correlationId, s.launches});
  ++s.launches;
}

/// The exit of a host kernel launch: a launch that failed ran no kernel and gets no range.
void on_launch_exit(state& s, const CUpti_CallbackData& cb) {
  if (cb.functionReturnValue == nullptr || *static_cast<const CUresult*>(cb.functionReturnValue) == CUDA_SUCCESS)
    return;
  for (auto it = s.pending.rbegin(); it != s.pending.rend(); ++it)
    if (it->correlation == cb.correlationId) {
      s.pending.erase(std::next(it).base());
      break;
    }
}

// --- set-up and the end -----------------------------------------------------------------------

void at_exit() noexcept;

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
void finalize_once(state& s, const std::string& why);

void setup(state& s) {
  setup_collectors(s);
  s.setup_done = true;
}

/// The first caller finalizes; a concurrent second one (exit while the context is destroyed)
/// waits until that is done, so the profile written after holds everything.
void finalize(state& s, const std::string& why) {
  std::call_once(s.finalize_flag, [&] { finalize_once(s, why); });
}

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

// --- the document -----------------------------------------------------------------------------

/// The device when device_json() could not say: the fields the reader requires.
nlohmann::json unknown_device() {
  return {{"name", "unknown"}, {"cc", "0.0"}, {"sms", 0}, {"driver", 0}, {"runtime", 0}};
}

/// collector::sample's clean-up of a whole-program timeline: the first sample, which CUPTI opens
/// at enable time, is left out when it spans more than 4 intervals; windows never overlap.
schema::timeline_profile timeline_of(prof::pm_timeline& t, double ms) {
  schema::timeline_profile out = prof::timeline_profile_of(std::move(t));
  out.ms = ms;
  return out;
}

/// Write the profile (at exit, after finalize). Caller holds the reentry guard.
void write_profile(state& s) {
  std::lock_guard<std::mutex> lock(s.mu);
  const std::string path = profile_path();
  const std::string input = command_line();

  nlohmann::json device;
  if (s.device) {
    device = *s.device;
  } else {
    try {
      device = prof::device_json();
    } catch (const std::exception& e) {
      device = unknown_device();
      note(s, "device", e.what());
    }
  }
  if (!s.setup_done)
    note(s, "collector", s.contexts_created == 0 ? "the program created no CUDA context: nothing was collected"
                                                 : "the program put no work on its CUDA context: nothing was collected");
  else if (s.ended != "exit")
    note(s, "collector", "collection ended when " + s.ended + "; later work is not in the profile");
  if (s.contexts_created > 1)
    note(s, "collector", std::to_string(s.contexts_created) + " CUDA contexts were created: only the first is profiled");

  // the host timeline, CUPTI's kernels left out
  prof::host_activity_log log = s.log ? std::move(*s.log) : prof::host_activity_log{};
  const std::size_t kernels_with_cupti = log.kernels.size();
  prof::drop_range_profiler_kernels(log);
  const std::uint64_t cupti_kernels = kernels_with_cupti - log.kernels.size();
  const double program_ms =
      s.setup_done ? std::chrono::duration<double, std::milli>(s.ended_at - s.started_at).count() : 0.0;

  prof::profile_document doc(program_name(), device);
  std::vector<std::optional<std::uint64_t>> kernel_run(log.kernels.size());
  std::vector<std::optional<std::uint64_t>> transfer_run(log.transfers.size());

  if (s.mode == collect_mode::metrics) {
    // each measured launch's activity record: the same correlation id, else the next record of
    // the same kernel in launch order (the kernels of a range-profiler session run one at a time)
    std::unordered_map<std::uint32_t, std::size_t> by_correlation;
    for (std::size_t k = 0; k < log.kernels.size(); ++k) by_correlation.emplace(log.kernels[k].correlation, k);
    std::vector<std::optional<std::size_t>> record_of(s.measured.size());
    std::vector<bool> taken(log.kernels.size(), false);
    for (std::size_t m = 0; m < s.measured.size(); ++m) {
      const auto& l = s.measured[m].launch;
      const auto it = by_correlation.find(l.correlation);
      if (l.correlation != 0 && it != by_correlation.end() && log.kernels[it->second].name == l.kernel &&
          !taken[it->second]) {
        record_of[m] = it->second;
        taken[it->second] = true;
      }
    }
    std::size_t cursor = 0;
    for (std::size_t m = 0; m < s.measured.size(); ++m) {
      if (record_of[m]) {
        cursor = *record_of[m] + 1;
        continue;
      }
      for (std::size_t k = cursor; k < log.kernels.size(); ++k)
        if (!taken[k] && log.kernels[k].name == s.measured[m].launch.kernel) {
          record_of[m] = k;
          taken[k] = true;
          cursor = k + 1;
          break;
        }
    }

    std::uint64_t unmatched = 0;
    for (std::size_t m = 0; m < s.measured.size(); ++m) {
      const auto& ml = s.measured[m];
      prof::run_info run;
      run.algorithm = "injected";
      run.variant = demangled(ml.launch.kernel);
      run.input = input;
      run.params = {{"kernel", ml.launch.kernel}, {"launch", ml.launch.index}, {"range", ml.range.name}};
      const auto ns = ml.range.value("gpu__time_duration.sum");
      run.ms = ns && *ns > 0 ? *ns / 1e6 : 0.0;
      run.checked = false;
      run.verified = false;
      schema::hardware_profile hw;
      hw.range = run.variant + " #" + std::to_string(ml.launch.index);  // CUPTI's name is a number
      hw.ms = run.ms;
      hw.passes = s.passes == 0 ? 1 : s.passes;
      for (const auto& v : ml.range.values) hw.metrics.emplace_back(v.metric, v.value);
      if (record_of[m]) {
        const auto& rec = log.kernels[*record_of[m]];
        // the launch alone: one host grid, its blocks and threads; no traced children
        prof::host_activity_log launch_log;
        launch_log.kernels.push_back(rec);
        hw.accounting = prof::account(hw, launch_log, prof::child_counts{});
        run.params["grid_blocks"] = rec.blocks;
        run.params["block_threads"] = rec.block_threads;
        kernel_run[*record_of[m]] = m;  // add_run numbers the runs 0, 1, ... in this order
      } else {
        ++unmatched;
      }
      prof::run_collected c;
      c.hardware = std::move(hw);
      c.times.metrics_ms = run.ms;
      doc.add_run(run, std::nullopt, c);
    }
    if (!s.measured.empty())
      s.notes.insert(s.notes.begin(),
                     "metrics: one range per host kernel launch (CUPTI auto range, kernel replay, " +
                         std::to_string(s.passes) +
                         " pass(es)), including the grids the kernel launched from the device; an injected "
                         "program is not traced, so the accounting counts no child grids and a CDP kernel's "
                         "children show as unaccounted CTAs");
    if (unmatched > 0 && s.log)
      note(s, "metrics", std::to_string(unmatched) + " measured launches have no host activity record: no accounting");
    if (s.not_measured > 0)
      note(s, "metrics", std::to_string(s.not_measured) + " of " + std::to_string(s.launches) +
                             " host kernel launches were not measured");
  } else if (s.mode == collect_mode::timeline && s.timeline) {
    prof::run_info run;
    run.algorithm = "injected";
    run.variant = "program";
    run.input = input;
    run.ms = program_ms;
    prof::run_collected c;
    c.timeline = timeline_of(*s.timeline, program_ms);
    c.times.timeline_ms = program_ms;
    doc.add_run(run, std::nullopt, c);
    for (auto& r : kernel_run) r = 0;
    for (auto& r : transfer_run) r = 0;
  }
  std::uint64_t untimed = 0;
  for (const auto& k : log.kernels) untimed += k.start_ns == 0 && k.end_ns == 0 ? 1 : 0;
  if (untimed > 0)
    note(s, "host_activity", std::to_string(untimed) + " of " + std::to_string(log.kernels.size()) +
                                 " kernels have no start and end times: CUPTI does not time the kernels its range "
                                 "profiler measures (their durations are their runs' gpu__time_duration.sum)");
  if (cupti_kernels > 0)
    note(s, "host_activity", std::to_string(cupti_kernels) + " kernels of CUPTI's own (" +
                                 range_profiler_kernel + ") left out");

  doc.set_collector({s.requested, s.notes});
  nlohmann::json j = doc.json();
  if (s.log) {
    schema::host_activity_profile ha;
    for (std::size_t k = 0; k < log.kernels.size(); ++k) {
      const auto& kr = log.kernels[k];
      ha.kernels.push_back({kernel_run[k], kr.name, kr.start_ns, kr.end_ns, kr.blocks, kr.block_threads});
    }
    for (std::size_t k = 0; k < log.transfers.size(); ++k) {
      const auto& t = log.transfers[k];
      ha.transfers.push_back({transfer_run[k], t.kind, t.start_ns, t.end_ns, t.bytes});
    }
    ha.dropped = log.dropped;
    j["host_activity"] = schema::host_activity_json(ha);
  }
  try {
    schema::write_json_file(j, path);
    if (!s.quiet)
      say("wrote " + path + " (" + std::to_string(j["runs"].size()) + " runs, " + std::to_string(log.kernels.size()) +
          " host kernels, " + std::to_string(s.notes.size()) + " notes)");
  } catch (const std::exception& e) {
    say(std::string("cannot write the profile (CDPKIT_PROFILE_OUT): ") + e.what());
  }
}

void at_exit() noexcept {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  reentry_guard guard;
  try {
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
  } catch (const std::exception& e) {
    say(std::string("at exit: ") + e.what());
  } catch (...) {
    say("at exit: unknown error");
  }
}

// --- the callback -----------------------------------------------------------------------------

void on_resource(state& s, CUpti_CallbackId cbid, const CUpti_ResourceData& r) {
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.contexts_created;
    if (s.context == nullptr && !s.finalized) s.context = r.context;
    return;
  }
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    bool ours = false;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      ours = r.context != nullptr && r.context == s.context && !s.finalized;
    }
    if (ours) finalize(s, "the profiled CUDA context was destroyed (e.g. cudaDeviceReset) before exit");
  }
}

void on_driver(state& s, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  if (s.finalized) return;
  const bool launch = is_kernel_launch(cbid);
  if (!s.setup_done) {
    if (cb.callbackSite != CUPTI_API_ENTER || cb.context == nullptr) return;
    if (!launch && !is_work_call(cb.functionName)) return;
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.setup_done || s.finalized) {
      // set up meanwhile by another thread: fall through below
    } else if (s.context != nullptr && cb.context != s.context) {
      note_once(s, "other context", "collector",
                "work on a CUDA context other than the first one created is not profiled");
      return;
    } else {
      if (s.context == nullptr) s.context = cb.context;  // no creation callback came
      setup(s);
    }
  }
  if (!launch || !s.metrics_on) return;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.finalized || !s.metrics_on) return;
  if (cb.context != s.context) {
    note_once(s, "other context launch", "metrics",
              "kernels launched on a CUDA context other than the first one created are not measured");
    return;
  }
  if (cb.callbackSite == CUPTI_API_ENTER) on_launch_enter(s, cb);
  else on_launch_exit(s, cb);
}

void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept {
  if (in_cdpkit || data == nullptr) return;
  reentry_guard guard;
  try {
    state& s = the_state();
    if (domain == CUPTI_CB_DOMAIN_RESOURCE)
      on_resource(s, cbid, *static_cast<const CUpti_ResourceData*>(data));
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
      on_driver(s, cbid, *static_cast<const CUpti_CallbackData*>(data));
  } catch (const std::exception& e) {
    say(std::string("in a CUPTI callback: ") + e.what());
  } catch (...) {
    say("in a CUPTI callback: unknown error");
  }
}

/// Read the settings; say once what "all" means and what an unknown word becomes.
void configure(state& s) {
  const std::string collect = env_or("CDPKIT_COLLECT", "metrics");
  if (collect == "metrics") {
    s.mode = collect_mode::metrics;
  } else if (collect == "timeline") {
    s.mode = collect_mode::timeline;
  } else if (collect == "all") {
    s.mode = collect_mode::metrics;
    note(s, "timeline",
         "CDPKIT_COLLECT=all collects metrics: the range profiler and PM sampling cannot be enabled together "
         "(CDPKIT_COLLECT=timeline for the timeline)");
  } else if (collect == "none") {
    s.mode = collect_mode::none;
  } else {
    s.mode = collect_mode::metrics;
    note(s, "collector", "CDPKIT_COLLECT=" + collect + " is not one of metrics, timeline, all, none: collecting metrics");
  }
  s.requested = s.mode == collect_mode::metrics    ? std::vector<std::string>{"metrics"}
                : s.mode == collect_mode::timeline ? std::vector<std::string>{"timeline"}
                                                   : std::vector<std::string>{"none"};
  s.max_ranges = static_cast<std::size_t>(env_count("CDPKIT_INJECT_MAX_RANGES", 4096, 1, 1u << 24));
  s.batch = static_cast<std::size_t>(env_count("CDPKIT_INJECT_BATCH", 256, 1, 65536));
  s.interval_ns = env_count("CDPKIT_INTERVAL_NS", 100000, 1000, 1000000000);
  s.quiet = env_or("CDPKIT_INJECT_QUIET", "0") != "0";
}

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
