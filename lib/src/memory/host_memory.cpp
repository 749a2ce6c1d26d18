// Host memory checks (pure C++: also compiled into the sanitizer-built fuzz targets).

#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>

#include "../common/text_input.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

namespace cdpkit {

namespace {

/// The first unsigned number of a one-line file ("max" or unreadable: 0 = unknown).
std::uint64_t read_number_file(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || word[0] < '0' || word[0] > '9') return 0;
  try {
    return std::stoull(word);
  } catch (...) {
    return 0;
  }
}

std::uint64_t meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024ull;
  }
  return 0;
}

/// The cap CDPKIT_HOST_MEMORY_LIMIT sets, in bytes; 0 when it is unset or empty. Throws
/// cdpkit::input_error naming the variable and its value for anything but a decimal number of
/// bytes in [1, 2^64 - 1] (no sign, blank, unit or suffix).
std::uint64_t environment_limit() {
  const char* text = std::getenv("CDPKIT_HOST_MEMORY_LIMIT");
  if (text == nullptr || *text == '\0') return 0;
  const std::string_view v(text);
  const auto refuse = [&] {
    return input_error("the environment variable CDPKIT_HOST_MEMORY_LIMIT=" + quoted_input(v) +
                       " is not a host memory limit: expected a number of bytes, decimal digits only, from 1 to " +
                       std::to_string(UINT64_MAX) + " (e.g. 1073741824 for 1 GiB), or the variable unset");
  };
  if (!detail::all_digits(v)) throw refuse();
  std::uint64_t bytes = 0;
  for (const char c : v) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (bytes > (UINT64_MAX - digit) / 10) throw refuse();
    bytes = bytes * 10 + digit;
  }
  if (bytes == 0) throw refuse();
  return bytes;
}

}  // namespace

std::uint64_t available_host_memory() noexcept {
  try {
    std::uint64_t best = 0;
    const auto consider = [&](std::uint64_t v) {
      if (v > 0) best = best == 0 ? v : std::min(best, v);
    };
    consider(meminfo_available());
    // A cap set by the user (or a test) in the environment; an invalid one is left out here
    // (noexcept) and refused by require_host_memory.
    try {
      consider(environment_limit());
    } catch (const input_error&) {
    }
    const std::uint64_t cg_max = read_number_file("/sys/fs/cgroup/memory.max");
    if (cg_max > 0) {
      const std::uint64_t cg_used = read_number_file("/sys/fs/cgroup/memory.current");
      consider(cg_max > cg_used ? cg_max - cg_used : 1);
    }
    for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
      rlimit lim{};
      if (getrlimit(resource, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        consider(static_cast<std::uint64_t>(lim.rlim_cur));
    }
    return best;
  } catch (...) {
    return 0;
  }
}

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

void require_host_memory(std::uint64_t bytes, const std::string& what) {
  (void)environment_limit();  // an invalid CDPKIT_HOST_MEMORY_LIMIT is an error, not ignored
  const std::uint64_t available = available_host_memory();
  if (available > 0 && bytes > available)
    throw input_error(what + " needs " + format_bytes(bytes) + " of host memory; only " +
                      format_bytes(available) + " are available");
}

}  // namespace cdpkit
