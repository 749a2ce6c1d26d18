#pragma once
// cdpkit/harness/bench_json.hpp — benchmark documents in the shape of docs/bench-format.md
// (schema "cdpkit-bench/1"): one row per (family, input, variant).

#include <cdpkit/harness/measure.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/schema/text.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>

namespace cdpkit::harness {

inline constexpr const char* bench_schema = "cdpkit-bench/1";

/// One run of one variant on one input, described once: the benchmark's JSON row and the
/// profile's run (to_run_info) are both made from it.
struct bench_row {
  std::string family, input, variant;
  /// The variant this run's ratios compare to among the runs of its input (e.g. "serial_loop").
  std::string baseline;
  nlohmann::json params = nlohmann::json::object();
  std::uint64_t n = 0;
  std::uint64_t work = 0;
  std::string work_unit;
  std::string throughput_unit;   ///< e.g. "Gitems/s"; throughput = work / ms_median / 1e6
  measurement m;
};

/// The profile's description of the same run (cdpkit/profiling/profile.hpp).
profiling::run_info to_run_info(const bench_row& row);

/// The row's JSON: its names (baseline included), ms_median/min, reps, throughput, verified,
/// trace (when traced).
nlohmann::json bench_row_json(const bench_row& row);

/// A bench document: schema, commit, device (from `device`), rows = [].
nlohmann::json bench_document(nlohmann::json device);

/// Write `doc` to `path` whole with the schema layer's atomic write (cdpkit/schema/text.hpp):
/// never a partial file or a leftover temporary. Throws cdpkit::input_error naming `path` (the
/// programs' exit 2) on any failure.
void write_json_file(const nlohmann::json& doc, const std::string& path);

/// Append the row of every result (`row_of(result)` -> bench_row) to `doc["rows"]`; true when
/// every result was checked and matched (all_verified).
template <class Results, class RowOf>
bool add_bench_rows(nlohmann::json& doc, const Results& results, RowOf row_of) {
  for (const auto& r : results) doc["rows"].push_back(bench_row_json(row_of(r)));
  return all_verified(results);
}

/// A document's "timing_floor" (docs/bench-format.md): what, ms_median, ms_min, ms_mad, reps.
nlohmann::json timing_floor_json(const timing& floor);

/// The benchmarks' --json: write `doc` to `path` (write_json_file) and say so on `out`; nothing
/// when `path` is empty. A document without "timing_floor" gets one, measured now (timing_floor()
/// on the default stream; when that fails with a CUDA error, the document is written without one
/// and a note says so on `out`).
void write_bench_document(const nlohmann::json& doc, const std::string& path, std::ostream& out);

}  // namespace cdpkit::harness
