// libcdpkit_inject's settings (the CDPKIT_* environment variables, read once by configure()) and
// the names the profile gives the program: its command line, its executable, its kernels
// (demangled) and the profile's path.

#include "state.hpp"

#include "process_names.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace cdpkit::profiling::inject {

namespace {

constexpr const char* default_profile_out = "cdpkit-inject-profile.json";

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

}  // namespace

std::string command_line() { return detail::command_line(); }
std::string program_name() { return detail::program_name(); }
std::string demangled(const std::string& mangled) { return detail::demangled(mangled); }
std::string profile_path() { return detail::profile_path("CDPKIT_PROFILE_OUT", default_profile_out); }

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
  s.watch_signals = env_or("CDPKIT_INJECT_SIGNALS", "1") != "0";
}

}  // namespace cdpkit::profiling::inject
