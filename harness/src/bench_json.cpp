// Benchmark rows and documents (docs/bench-format.md shape).

#include <cdpkit/error.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/version.hpp>


namespace cdpkit::harness {

profiling::run_info to_run_info(const bench_row& row) {
  profiling::run_info run;
  run.algorithm = row.family;
  run.variant = row.variant;
  run.input = row.input;
  run.baseline = row.baseline;
  run.params = row.params;
  run.ms = row.m.time.median_ms;
  run.work = row.work;
  run.work_unit = row.work_unit;
  run.checked = row.m.checked;
  run.verified = verified(row.m);
  run.mismatches = row.m.mismatches;
  return run;
}

nlohmann::json bench_row_json(const bench_row& row) {
  const double ms = row.m.time.median_ms;
  nlohmann::json j = {{"family", row.family},
                      {"input", row.input},
                      {"variant", row.variant},
                      {"baseline", row.baseline},
                      {"params", row.params},
                      {"n", row.n},
                      {"work", row.work},
                      {"work_unit", row.work_unit},
                      {"ms_median", ms},
                      {"ms_min", row.m.time.min_ms},
                      {"ms_mad", row.m.time.mad_ms},
                      {"reps", row.m.time.reps},
                      {"stop", row.m.time.stop},
                      {"throughput", ms > 0 ? static_cast<double>(row.work) / ms / 1e6 : 0.0},
                      {"throughput_unit", row.throughput_unit},
                      {"verified", verified(row.m)}};
  if (row.m.trace) {
    const profiling::trace_summary& s = row.m.summary;
    j["params"]["traced_run"] = "separate run with tracing on; timings are from untraced runs";
    j["trace"] = {{"child_launches", s.child_launches},
                  {"fallbacks", s.fallbacks},
                  {"failed_launches", s.failed_launches},
                  {"tiny_grid_share", s.tiny_grid_share},
                  {"max_depth", s.max_depth},
                  {"pending_high_water", s.pending_high_water},
                  {"warp_efficiency",
                   s.warp_efficiency < 0 ? nlohmann::json() : nlohmann::json(s.warp_efficiency)}};
  }
  return j;
}

nlohmann::json bench_document(nlohmann::json device) {
  return {{"schema", bench_schema},
          {"commit", version::commit},
          {"created", profiling::utc_now_iso8601()},
          {"device", std::move(device)},
          {"build", profiling::build_json()},
          {"rows", nlohmann::json::array()}};
}

void write_json_file(const nlohmann::json& doc, const std::string& path) {
  CDPKIT_NVTX_SCOPE("bench::write_json");
  try {
    schema::write_json_file(doc, path);
  } catch (const schema::write_error& e) {
    throw input_error(e.what());
  }
}

nlohmann::json timing_floor_json(const timing& floor) {
  return {{"what", "a 4-byte cudaMemsetAsync timed as every row is (event, operation, event, wait)"},
          {"ms_median", floor.median_ms},
          {"ms_min", floor.min_ms},
          {"ms_mad", floor.mad_ms},
          {"reps", floor.reps}};
}

void write_bench_document(const nlohmann::json& doc, const std::string& path, std::ostream& out) {
  if (path.empty()) return;
  if (doc.contains("timing_floor")) {
    write_json_file(doc, path);
  } else {
    nlohmann::json with_floor = doc;
    try {
      with_floor["timing_floor"] = timing_floor_json(timing_floor());
    } catch (const cuda_error& e) {  // the rows are kept: written without a floor, said once
      out << "note: no timing floor measured (" << e.what() << "); the document is written without one\n";
    }
    write_json_file(with_floor, path);
  }
  out << "\nrows written to " << path << "\n";
}

}  // namespace cdpkit::harness
