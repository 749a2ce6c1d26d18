// The profile JSON document in the current profile version (profiling/README.md: every field).
// What goes into it and how it is written is the schema layer's (cdpkit/schema/profile.hpp):
// this file fills it from the CUDA runtime, the site names (cdpkit/launch/sites.hpp) and a trace
// snapshot.

#include <cdpkit/error.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/schema/text.hpp>
#include <cdpkit/version.hpp>

#include <cuda_runtime_api.h>

#include <chrono>
#include <ctime>
#include <string>

namespace cdpkit::profiling {

namespace {

/// The role of a site in the findings: a library site that probes inside child grids (e.g.
/// loop-to-child's child item loops: cdpkit/launch/site_ids.hpp); other sites launch (when they
/// had requests) or probe the launching code.
schema::site_role site_role_of(std::uint16_t id, const site_counters& counters) {
  if (sites::is_child_probe_site(id)) return schema::site_role::child_probe;
  return schema::default_site_role(counters);
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
          {"nvtx", CDPKIT_NVTX != 0}};
}

schema::trace_profile trace_profile_of(const trace_snapshot& snapshot, std::size_t max_records) {
  schema::trace_naming naming;
  naming.site_name = [](std::uint16_t id) { return sites::site_name(id); };
  naming.role = site_role_of;
  naming.error_name = [](int code) { return std::string(cudaGetErrorName(static_cast<cudaError_t>(code))); };
  return schema::make_trace(snapshot, naming, max_records);
}

nlohmann::json trace_json(const trace_snapshot& snapshot, std::size_t max_records) {
  return schema::trace_json(trace_profile_of(snapshot, max_records));
}

profile_document::profile_document(std::string program, nlohmann::json device) {
  doc_ = {{"schema", profile_schema},
          {"program", std::move(program)},
          {"created", utc_now_iso8601()},
          {"device", std::move(device)},
          {"build", build_json()},
          {"runs", nlohmann::json::array()},
          {"collector", nullptr},
          {"host_activity", nullptr}};
}

void profile_document::add_run(const run_info& run, const std::optional<trace_snapshot>& trace,
                               std::size_t max_records) {
  add_run(run, trace, run_collected{}, max_records);
}

void profile_document::add_run(const run_info& run, const std::optional<trace_snapshot>& trace,
                               const run_collected& collected, std::size_t max_records) {
  schema::run_profile r;
  static_cast<schema::run_description&>(r) = run;
  r.id = doc_["runs"].size();
  if (trace) r.trace = trace_profile_of(*trace, max_records);
  r.hardware = collected.hardware;
  r.timeline = collected.timeline;
  r.collect = collected.times;
  doc_["runs"].push_back(schema::run_json(r));
  if (collected.host) {
    if (!host_) host_.emplace();
    for (const auto& k : collected.host->kernels)
      host_->kernels.push_back({r.id, k.name, k.start_ns, k.end_ns, k.blocks, k.block_threads});
    for (const auto& t : collected.host->transfers)
      host_->transfers.push_back({r.id, t.kind, t.start_ns, t.end_ns, t.bytes});
    host_->dropped += collected.host->dropped;
    host_stale_ = true;  // written once, when the document is read or written
  }
}

const nlohmann::json& profile_document::json() const {
  if (host_stale_) {
    doc_["host_activity"] = schema::host_activity_json(*host_);
    host_stale_ = false;
  }
  return doc_;
}

void profile_document::set_collector(const schema::collector_profile& collector) {
  doc_["collector"] = schema::collector_json(collector);
}

void profile_document::add_picture(const schema::picture& picture) {
  try {
    if (!doc_.contains("pictures")) doc_["pictures"] = nlohmann::json::array();
    doc_["pictures"].push_back(schema::picture_json(picture));
  } catch (const schema::format_error& e) {
    throw input_error(std::string("profile: ") + e.what());
  }
}

void profile_document::write(const std::string& path) const {
  CDPKIT_NVTX_SCOPE("profile::write");
  try {
    schema::write_json_file(json(), path);
  } catch (const schema::write_error& e) {
    throw input_error(std::string("profile: ") + e.what());
  }
}

}  // namespace cdpkit::profiling
