// The profile JSON document (schema cdpkit-profile/1; profiling/README.md documents every field).

#include <cdpkit/error.hpp>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/profiling/json_file.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/version.hpp>

#include <cuda_runtime_api.h>

#include <chrono>
#include <ctime>
#include <string>

namespace cdpkit::profiling {

namespace {

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

template <class T, std::size_t N>
nlohmann::json array_json(const T (&values)[N]) {
  nlohmann::json a = nlohmann::json::array();
  for (const T& v : values) a.push_back(v);
  return a;
}

bool site_active(const site_counters& c) { return c.requests > 0 || c.probe_steps > 0; }

nlohmann::json site_json(std::uint16_t id, const site_counters& c) {
  nlohmann::json outcomes = nlohmann::json::object();
  for (int o = 0; o < launch_outcome_count; ++o) outcomes[to_string(static_cast<launch_outcome>(o))] = c.outcomes[o];
  nlohmann::json streams = nlohmann::json::object();
  for (int k = 0; k < stream_kind_count; ++k) streams[to_string(static_cast<stream_kind>(k))] = c.stream_launches[k];
  nlohmann::json errors = nlohmann::json::array();
  for (int k = 0; k < trace_limits::error_slots; ++k) {
    if (c.error_code[k] == 0) continue;
    errors.push_back({{"code", c.error_code[k]},
                      {"name", cudaGetErrorName(static_cast<cudaError_t>(c.error_code[k]))},
                      {"count", c.error_count[k]}});
  }
  // lanes_hist[0] is never written (a step has at least one active lane): the JSON lists 1..32.
  nlohmann::json lanes = nlohmann::json::array();
  for (int k = 1; k < trace_limits::lane_buckets; ++k) lanes.push_back(c.lanes_hist[k]);
  nlohmann::json probe = {
      {"steps", c.probe_steps},
      {"active_lanes", c.probe_active_lanes},
      {"lanes_hist", lanes},
      {"warps", c.probe_warps},
      {"efficiency_hist", array_json(c.efficiency_hist)},
      {"step_efficiency", c.probe_steps > 0 ? nlohmann::json(static_cast<double>(c.probe_active_lanes) /
                                                             (32.0 * c.probe_steps))
                                            : nlohmann::json()},
      {"mean_warp_efficiency", c.probe_warps > 0
                                   ? nlohmann::json(c.efficiency_sum / static_cast<double>(c.probe_warps))
                                   : nlohmann::json()},
  };
  return {
      {"id", id},
      {"name", sites::site_name(id)},
      {"requests", c.requests},
      {"outcomes", outcomes},
      {"failed_by_error", errors},
      {"failed_other_codes", c.error_overflow},
      {"inline_items", c.inline_items},
      {"child_threads", c.child_threads},
      {"child_blocks", c.child_blocks},
      {"work_items", c.work_items},
      {"tiny_launches", c.tiny_launches},
      {"streams", streams},
      {"threads_log2", array_json(c.threads_log2)},
      {"blocks_log2", array_json(c.blocks_log2)},
      {"work_log2", array_json(c.work_log2)},
      {"depth_hist", array_json(c.depth_hist)},
      {"max_depth", c.max_depth},
      {"probe", probe},
  };
}

}  // namespace

nlohmann::json device_json() {
  int device = 0, driver = 0, runtime = 0;
  CDPKIT_CUDA_TRY(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CDPKIT_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  CDPKIT_CUDA_TRY(cudaDriverGetVersion(&driver));
  CDPKIT_CUDA_TRY(cudaRuntimeGetVersion(&runtime));
  return {{"name", prop.name},
          {"cc", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
          {"sms", prop.multiProcessorCount},
          {"max_threads_per_sm", prop.maxThreadsPerMultiProcessor},
          {"memory_bytes", prop.totalGlobalMem},
          {"driver", driver},
          {"runtime", runtime}};
}

nlohmann::json build_json() {
  return {{"version", version::string},
          {"commit", version::commit},
          {"cuda_architectures", version::cuda_architectures},
          {"build_type", version::build_type},
          {"cuda_compiler", version::cuda_compiler},
          {"nvtx", CDPKIT_ENABLE_NVTX != 0}};
}

nlohmann::json summary_json(const trace_summary& s) {
  const auto optional = [](double v) { return v < 0 ? nlohmann::json() : nlohmann::json(v); };
  return {{"launch_requests", s.launch_requests},
          {"child_launches", s.child_launches},
          {"fallbacks", s.fallbacks},
          {"failed_launches", s.failed_launches},
          {"tiny_launches", s.tiny_launches},
          {"tiny_grid_share", s.tiny_grid_share},
          {"max_depth", s.max_depth},
          {"pending_high_water", s.pending_high_water},
          {"probe_steps", s.probe_steps},
          {"warp_efficiency", optional(s.warp_efficiency)},
          {"mean_warp_efficiency", optional(s.mean_warp_efficiency)}};
}

nlohmann::json trace_json(const trace_snapshot& snap, std::size_t max_records) {
  nlohmann::json site_list = nlohmann::json::array();
  for (std::size_t id = 0; id < snap.sites.size(); ++id)
    if (site_active(snap.sites[id]))
      site_list.push_back(site_json(static_cast<std::uint16_t>(id), snap.sites[id]));

  nlohmann::json rows = nlohmann::json::array();
  const std::size_t kept = std::min(max_records, snap.records.size());
  for (std::size_t k = 0; k < kept; ++k) {
    const launch_record& r = snap.records[k];
    rows.push_back({r.id, r.parent == no_record ? nlohmann::json() : nlohmann::json(r.parent),
                    r.t_ns, r.site, r.depth, r.blocks, r.block_threads, r.work,
                    to_string(static_cast<stream_kind>(r.stream)),
                    to_string(static_cast<launch_outcome>(r.outcome)), r.error});
  }
  return {
      {"pending", {{"limit", snap.pending_launch_limit},
                   {"budget", snap.pending_budget},
                   {"high_water", snap.totals.pending_high_water}}},
      {"max_depth_limit", snap.max_depth},
      {"tiny_grid_work", tiny_grid_work},
      {"summary", summary_json(summarize(snap))},
      {"sites", site_list},
      {"records",
       {{"requested", snap.totals.records_requested},
        {"stored", snap.records.size()},
        {"dropped", snap.records_dropped},
        {"in_profile", kept},
        {"fields", {"id", "parent", "t_ns", "site", "depth", "blocks", "block_threads", "work",
                    "stream", "outcome", "error"}},
        {"rows", rows}}},
  };
}

profile_document::profile_document(std::string program, nlohmann::json device) {
  doc_ = {{"schema", profile_schema},
          {"program", std::move(program)},
          {"created", utc_now_iso8601()},
          {"device", std::move(device)},
          {"build", build_json()},
          {"runs", nlohmann::json::array()}};
}

void profile_document::add_run(const run_info& run, const std::optional<trace_snapshot>& trace,
                               std::size_t max_records) {
  nlohmann::json r = {{"id", doc_["runs"].size()},
                      {"algorithm", run.algorithm},
                      {"variant", run.variant},
                      {"input", run.input},
                      {"params", run.params},
                      {"ms", run.ms},
                      {"work", run.work},
                      {"work_unit", run.work_unit},
                      {"checked", run.checked},
                      {"verified", run.verified},
                      {"mismatches", run.mismatches},
                      {"trace", trace ? trace_json(*trace, max_records) : nlohmann::json()}};
  doc_["runs"].push_back(std::move(r));
}

void profile_document::write(const std::string& path) const {
  try {
    write_json_file(doc_, path);
  } catch (const input_error& e) {
    throw input_error(std::string("profile: ") + e.what());
  }
}

}  // namespace cdpkit::profiling
