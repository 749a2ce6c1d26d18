#pragma once
// cdpkit/profiling/profile.hpp — the profile JSON document (schema cdpkit::schema::profile_schema,
// the current profile version, see profiling/README.md): device and build information, runs, and
// per-run launch traces. The format itself (types, JSON, version, summary) is the schema layer's
// (cdpkit/schema/profile.hpp); this is the writer that fills it from the device and a snapshot.

#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/host_activity.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/schema/profile.hpp>
#include <cdpkit/schema/text.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace cdpkit::profiling {

inline constexpr const char* profile_schema = schema::profile_schema;

/// One algorithm run, as it goes into the profile (the schema's run description).
using run_info = schema::run_description;

/// The device the profile was taken on (queried with the CUDA runtime).
nlohmann::json device_json();
/// The build: version, commit, architectures, build type, NVTX on/off.
nlohmann::json build_json();
/// The current UTC time as ISO 8601: when a profile or benchmark was made (schema::utc_now_iso8601).
using schema::utc_now_iso8601;
/// A snapshot in the document's form: sites with activity only, named by the library's site
/// registry (cdpkit::sites::site_name) with their roles, launch errors named by the CUDA runtime,
/// its first `max_records` records, and its summary (schema::make_trace).
schema::trace_profile trace_profile_of(const trace_snapshot& snapshot, std::size_t max_records = 65536);
/// A launch trace in the profile's form: schema::trace_json(trace_profile_of(snapshot, max_records)).
nlohmann::json trace_json(const trace_snapshot& snapshot, std::size_t max_records = 65536);
/// The summary in the profile's form (schema::summary_json).
using schema::summary_json;

/// What the collector measured for a run beside its trace (cdpkit/profiling/collector.hpp).
struct run_collected {
  std::optional<schema::hardware_profile> hardware;
  std::optional<schema::timeline_profile> timeline;
  schema::collect_times times;
  /// The host kernels and transfers of the run's collection runs, for the document's
  /// host_activity (tagged with the run's id).
  std::optional<host_activity_log> host;
};

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
  /// The same with what the collector measured for the run.
  void add_run(const run_info& run, const std::optional<trace_snapshot>& trace, const run_collected& collected,
               std::size_t max_records = 16384);
  /// Record what the collector was asked for and its notes (the document's "collector").
  void set_collector(const schema::collector_profile& collector);
  /// Append a picture (the document's "pictures"; the report shows it as an image). Throws
  /// cdpkit::input_error naming the title for an SVG that schema::picture_problem refuses.
  void add_picture(const schema::picture& picture);

  /// The document so far (the host activity of all runs assembled on first use after a change).
  [[nodiscard]] const nlohmann::json& json() const;

  /// Write the document to `path` through a temporary file renamed into place
  /// (schema::write_json_file), so a failed write never leaves a partial profile or a .tmp file.
  /// Throws cdpkit::input_error naming the path on failure.
  void write(const std::string& path) const;

 private:
  mutable nlohmann::json doc_;
  std::optional<schema::host_activity_profile> host_;
  mutable bool host_stale_ = false;  ///< doc_'s host_activity is older than host_
};

}  // namespace cdpkit::profiling
