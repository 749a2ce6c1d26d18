#pragma once
// cdpkit/profiling/profile.hpp — the profile JSON document (schema "cdpkit-profile/1", see
// profiling/README.md): device and build information, runs, and per-run launch traces.

#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/trace_session.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace cdpkit::profiling {

inline constexpr const char* profile_schema = "cdpkit-profile/1";

/// One algorithm run, as it goes into the profile.
struct run_info {
  std::string algorithm;     ///< family: "loop_to_child", "bfs", ...
  std::string variant;       ///< the library's variant name: "thresholded", ...
  std::string input;         ///< e.g. "power_law:1048576"
  nlohmann::json params = nlohmann::json::object();  ///< variant parameters (threshold, stream...)
  double ms = 0.0;           ///< wall time of the run (CUDA events)
  std::uint64_t work = 0;    ///< items / edges / keys processed
  std::string work_unit;     ///< "items", "edges", "keys"
  bool verified = false;     ///< the output was checked against the reference and matched
  bool checked = false;      ///< the output was checked at all
  std::uint64_t mismatches = 0;
};

/// The device the profile was taken on (queried with the CUDA runtime).
nlohmann::json device_json();
/// The build: version, commit, architectures, build type, NVTX on/off.
nlohmann::json build_json();
/// A launch trace in the profile's form (sites with activity only; up to max_records records).
nlohmann::json trace_json(const trace_snapshot& snapshot, std::size_t max_records = 65536);
/// The summary in the profile's form.
nlohmann::json summary_json(const trace_summary& summary);

/// Accumulates runs and writes one profile document.
class profile_document {
 public:
  /// `program`: the program that made the profile (e.g. "loop_to_child"). `device`: from
  /// device_json(), or any object (host tests pass their own).
  profile_document(std::string program, nlohmann::json device);

  /// Append a run, with its trace when it was traced (its first `max_records` launch records;
  /// the counters are always complete).
  void add_run(const run_info& run, const std::optional<trace_snapshot>& trace = std::nullopt,
               std::size_t max_records = 16384);

  [[nodiscard]] const nlohmann::json& json() const noexcept { return doc_; }

  /// Write the document to `path` through a temporary file renamed into place, so a failed write
  /// never leaves a partial profile. Throws cdpkit::input_error naming the path on failure.
  void write(const std::string& path) const;

 private:
  nlohmann::json doc_;
};

}  // namespace cdpkit::profiling
