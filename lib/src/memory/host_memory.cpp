// Host memory checks (pure C++: also compiled into the sanitizer-built fuzz targets).

#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

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

}  // namespace

std::uint64_t available_host_memory() noexcept {
  try {
    std::uint64_t best = 0;
    const auto consider = [&](std::uint64_t v) {
      if (v > 0) best = best == 0 ? v : std::min(best, v);
    };
    consider(meminfo_available());
    // A cap set by the user (or a test) in the environment.
    if (const char* cap = std::getenv("CDPKIT_HOST_MEMORY_LIMIT"); cap != nullptr && *cap != '\0') {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(cap, &end, 10);
      if (end != cap && *end == '\0' && v > 0) consider(v);
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
  const std::uint64_t available = available_host_memory();
  if (available > 0 && bytes > available)
    throw input_error(what + " needs " + format_bytes(bytes) + " of host memory; only " +
                      format_bytes(available) + " are available");
}

}  // namespace cdpkit
