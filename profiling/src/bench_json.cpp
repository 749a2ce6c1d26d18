// Benchmark rows and documents (BENCH.md shape).

#include <cdpkit/error.hpp>
#include <cdpkit/profiling/bench_json.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/version.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>

namespace cdpkit::profiling {

nlohmann::json bench_row_json(const bench_row& row) {
  const double ms = row.m.time.median_ms;
  nlohmann::json j = {{"family", row.family},
                      {"input", row.input},
                      {"variant", row.variant},
                      {"params", row.params},
                      {"n", row.n},
                      {"work", row.work},
                      {"work_unit", row.work_unit},
                      {"ms_median", ms},
                      {"ms_min", row.m.time.min_ms},
                      {"reps", row.m.time.reps},
                      {"throughput", ms > 0 ? static_cast<double>(row.work) / ms / 1e6 : 0.0},
                      {"throughput_unit", row.throughput_unit},
                      {"verified", row.m.checked && row.m.mismatches == 0}};
  if (row.m.trace) {
    const trace_summary& s = row.m.summary;
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
          {"device", std::move(device)},
          {"build", build_json()},
          {"rows", nlohmann::json::array()}};
}

void write_json_file(const nlohmann::json& doc, const std::string& path) {
  if (path.empty()) throw input_error("empty output path");
  const std::string tmp = path + ".tmp";
  // 1. Print first, before any file exists: a string that is not valid UTF-8 (an input path,
  //    a device name) is written with U+FFFD in place of the bad bytes instead of throwing.
  std::string text;
  try {
    text = doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += '\n';
  } catch (const std::exception& e) {
    throw input_error("cannot write '" + path + "': " + e.what());
  }
  // 2. Write the temporary file and rename it into place. Once created, the temporary file is
  //    removed on every failure (open, write, flush, rename, exception); the rename disarms that.
  struct remove_on_failure {
    const std::string& file;
    bool armed = false;
    ~remove_on_failure() {
      if (armed) std::remove(file.c_str());
    }
  } guard{tmp};
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw input_error("cannot write '" + path + "': cannot open '" + tmp + "' for writing");
    guard.armed = true;
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw input_error("cannot write '" + path + "': writing '" + tmp + "' failed (disk full?)");
  } catch (const input_error&) {
    throw;
  } catch (const std::exception& e) {
    throw input_error("cannot write '" + path + "': " + e.what());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw input_error("cannot write '" + path + "': cannot move '" + tmp + "' into place: " +
                      std::strerror(errno));
  guard.armed = false;
}

}  // namespace cdpkit::profiling
