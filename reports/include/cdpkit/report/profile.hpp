#pragma once
// cdpkit/report/profile.hpp — the profile JSON (schema cdpkit-profile/1, profiling/README.md)
// read into plain structs, validated field by field. The report tool knows nothing of CUDA: it
// reads only this JSON, so reports can be made on a machine without a GPU.

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cdpkit::report {

/// A profile that cannot be read: the message names the file and the JSON field
/// (e.g. "run.json: /runs/2/trace/sites/0/threads_log2: expected an array of 33 numbers").
class format_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr const char* supported_schema = "cdpkit-profile/1";
inline constexpr int log2_buckets = 33;
/// The deepest nesting of arrays and objects a profile may have. A real profile nests 8 levels
/// (runs/k/trace/sites/k/probe/lanes_hist); `params` and `build` are free-form, so the cap leaves
/// room, but a document nested deeper is refused before any value is built: copying, printing
/// or destroying a deep value recurses once per level and would overflow the stack.
inline constexpr int max_nesting_depth = 64;

struct error_count {
  int code = 0;
  std::string name;
  std::uint64_t count = 0;
};

struct probe_profile {
  std::uint64_t steps = 0, active_lanes = 0, warps = 0;
  std::array<std::uint64_t, 32> lanes_hist{};       ///< [i]: steps with i + 1 active lanes
  std::array<std::uint64_t, 32> efficiency_hist{};  ///< [b]: warps with efficiency in [b/32, (b+1)/32)
  std::optional<double> step_efficiency, mean_warp_efficiency;
};

struct site_profile {
  int id = 0;
  std::string name;
  std::uint64_t requests = 0;
  std::uint64_t launched = 0, fallback_budget = 0, fallback_depth = 0, fallback_error = 0;
  std::vector<error_count> failed_by_error;
  std::uint64_t inline_items = 0, child_threads = 0, child_blocks = 0, work_items = 0,
                tiny_launches = 0;
  std::array<std::uint64_t, log2_buckets> threads_log2{}, blocks_log2{}, work_log2{};
  std::vector<std::uint64_t> depth_hist;
  std::uint32_t max_depth = 0;
  probe_profile probe;
  [[nodiscard]] std::uint64_t fallbacks() const { return fallback_budget + fallback_depth + fallback_error; }
};

struct launch_rec {
  std::uint32_t id = 0;
  std::optional<std::uint32_t> parent;
  std::uint64_t t_ns = 0;
  int site = 0;
  int depth = 0;
  std::uint32_t blocks = 0, block_threads = 0, work = 0;
  std::string stream, outcome;
  int error = 0;
};

struct trace_profile {
  std::uint64_t pending_limit = 0, pending_budget = 0, pending_high_water = 0;
  std::uint64_t max_depth_limit = 0, tiny_grid_work = 32;
  std::uint64_t records_requested = 0, records_stored = 0, records_dropped = 0;
  std::vector<site_profile> sites;
  std::vector<launch_rec> records;
  [[nodiscard]] const site_profile* site(int id) const;
};

struct run_profile {
  std::uint64_t id = 0;
  std::string algorithm, variant, input;
  nlohmann::json params;
  double ms = 0;
  std::uint64_t work = 0;
  std::string work_unit;
  bool checked = false, verified = false;
  std::uint64_t mismatches = 0;
  std::optional<trace_profile> trace;
};

struct device_profile {
  std::string name, cc;
  std::uint64_t sms = 0, memory_bytes = 0;
  std::uint64_t max_threads_per_sm = 2048;  ///< optional in the profile; 2048 on sm_90
  std::int64_t driver = 0, runtime = 0;
};

struct profile {
  std::string path;  ///< the name given to the reader, invalid UTF-8 replaced by U+FFFD (display only)
  std::string program, created;
  device_profile device;
  nlohmann::json build;
  std::vector<run_profile> runs;
};

/// Parse and validate one profile; `name` is used in error messages. Throws format_error for
/// anything the text can hold: invalid JSON, numbers out of range (1e999), nesting deeper than
/// max_nesting_depth, a missing or mistyped field. The message names `name` and where: the byte
/// offset, line and column for the JSON syntax, the JSON pointer for a field.
profile parse_profile(const std::string& text, const std::string& name);
/// Largest profile file load_profile reads (1 GiB; a million launch records take about 60 MB).
inline constexpr std::uint64_t max_profile_bytes = 1ull << 30;

/// Read, parse and validate a profile file. Throws format_error (also for unreadable files and
/// directories).
profile load_profile(const std::string& path);

}  // namespace cdpkit::report
