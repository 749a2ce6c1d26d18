#pragma once
// cdpkit/profiling/bench_json.hpp — benchmark documents in the shape of shared/BENCH.md
// (schema "cdpkit-bench/1"): one row per (family, input, variant).

#include <cdpkit/profiling/measure.hpp>
#include <cdpkit/profiling/trace_session.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace cdpkit::profiling {

inline constexpr const char* bench_schema = "cdpkit-bench/1";

struct bench_row {
  std::string family, input, variant;
  nlohmann::json params = nlohmann::json::object();
  std::uint64_t n = 0;
  std::uint64_t work = 0;
  std::string work_unit;
  std::string throughput_unit;   ///< e.g. "Gitems/s"; throughput = work / ms_median / 1e6
  measurement m;
};

/// The row's JSON: ms_median/min, reps, throughput, verified, trace (when traced).
nlohmann::json bench_row_json(const bench_row& row);

/// A bench document: schema, commit, device (from `device`), rows = [].
nlohmann::json bench_document(nlohmann::json device);

/// Write `doc` to `path` whole (temporary file renamed into place). Strings that are not valid
/// UTF-8 are written with U+FFFD in place of the bad bytes. Throws cdpkit::input_error naming
/// `path` on any failure; `path`.tmp is then gone and `path` is as it was.
void write_json_file(const nlohmann::json& doc, const std::string& path);

}  // namespace cdpkit::profiling
