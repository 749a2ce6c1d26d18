#pragma once
// Internal to profiling: the usual names of POSIX signals, for the one-line messages of the
// injection library (inject/signal_watch.cpp) and of `cdpkit profile` (tools/profile_command.cpp).

#include <csignal>
#include <string>
#include <utility>

namespace cdpkit::profiling::detail {

/// "SIGSEGV" for 11; empty for a signal without a usual name (a real-time signal).
inline std::string signal_name(int sig) {
  static const std::pair<int, const char*> names[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"},
      {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
      {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
      {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"}};
  for (const auto& [n, name] : names)
    if (n == sig) return name;
  return {};
}

/// "signal 11 (SIGSEGV)"; "signal N" for one without a usual name.
inline std::string signal_description(int sig) {
  const std::string name = signal_name(sig);
  return "signal " + std::to_string(sig) + (name.empty() ? std::string() : " (" + name + ")");
}

}  // namespace cdpkit::profiling::detail
