// libcdpkit_inject's document: the profile written at exit, one run per measured launch (metrics)
// or one for the program (timeline), the host activity, and the collector's notes.

#include "state.hpp"

#include <cdpkit/profiling/collector.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/schema/profile.hpp>
#include <cdpkit/schema/text.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cdpkit::profiling::inject {

namespace schema = cdpkit::schema;

namespace {

using prof::range_profiler_kernel;  // CUPTI's own kernel: left out of the timeline and the pairing

/// The device when device_json() could not say: the fields the reader requires.
nlohmann::json unknown_device() {
  return {{"name", "unknown"}, {"cc", "0.0"}, {"sms", 0}, {"driver", 0}, {"runtime", 0}};
}

/// collector::sample's clean-up of a whole-program timeline: the first sample, which CUPTI opens
/// at enable time, is left out when it spans more than 4 intervals; windows never overlap.
schema::timeline_profile timeline_of(prof::pm_timeline& t, double ms) {
  schema::timeline_profile out = prof::timeline_profile_of(std::move(t));
  out.ms = ms;
  return out;
}

}  // namespace

void write_profile(state& s) {
  std::lock_guard<std::mutex> lock(s.mu);
  const std::string path = profile_path();
  const std::string input = command_line();

  nlohmann::json device;
  if (s.device) {
    device = *s.device;
  } else {
    try {
      device = prof::device_json();
    } catch (const std::exception& e) {
      device = unknown_device();
      note(s, "device", e.what());
    }
  }
  if (!s.setup_done)
    note(s, "collector", s.contexts_created == 0 ? "the program created no CUDA context: nothing was collected"
                                                 : "the program put no work on its CUDA context: nothing was collected");
  else if (s.ended != "exit")
    note(s, "collector", "collection ended when " + s.ended + "; later work is not in the profile");
  if (s.contexts_created > 1)
    note(s, "collector", std::to_string(s.contexts_created) + " CUDA contexts were created: only the first is profiled");

  // the host timeline, CUPTI's kernels left out
  prof::host_activity_log log = s.log ? std::move(*s.log) : prof::host_activity_log{};
  const std::size_t kernels_with_cupti = log.kernels.size();
  prof::drop_range_profiler_kernels(log);
  const std::uint64_t cupti_kernels = kernels_with_cupti - log.kernels.size();
  const double program_ms =
      s.setup_done ? std::chrono::duration<double, std::milli>(s.ended_at - s.started_at).count() : 0.0;

  prof::profile_document doc(program_name(), device);
  std::vector<std::optional<std::uint64_t>> kernel_run(log.kernels.size());
  std::vector<std::optional<std::uint64_t>> transfer_run(log.transfers.size());

  if (s.mode == collect_mode::metrics) {
    // each measured launch's activity record: the same correlation id, else the next record of
    // the same kernel in launch order (the kernels of a range-profiler session run one at a time)
    std::unordered_map<std::uint32_t, std::size_t> by_correlation;
    for (std::size_t k = 0; k < log.kernels.size(); ++k) by_correlation.emplace(log.kernels[k].correlation, k);
    std::vector<std::optional<std::size_t>> record_of(s.measured.size());
    std::vector<bool> taken(log.kernels.size(), false);
    for (std::size_t m = 0; m < s.measured.size(); ++m) {
      const auto& l = s.measured[m].launch;
      const auto it = by_correlation.find(l.correlation);
      if (l.correlation != 0 && it != by_correlation.end() && log.kernels[it->second].name == l.kernel &&
          !taken[it->second]) {
        record_of[m] = it->second;
        taken[it->second] = true;
      }
    }
    std::size_t cursor = 0;
    for (std::size_t m = 0; m < s.measured.size(); ++m) {
      if (record_of[m]) {
        cursor = *record_of[m] + 1;
        continue;
      }
      for (std::size_t k = cursor; k < log.kernels.size(); ++k)
        if (!taken[k] && log.kernels[k].name == s.measured[m].launch.kernel) {
          record_of[m] = k;
          taken[k] = true;
          cursor = k + 1;
          break;
        }
    }

    std::uint64_t unmatched = 0;
    for (std::size_t m = 0; m < s.measured.size(); ++m) {
      const auto& ml = s.measured[m];
      prof::run_info run;
      run.algorithm = "injected";
      run.variant = demangled(ml.launch.kernel);
      run.input = input;
      run.params = {{"kernel", ml.launch.kernel}, {"launch", ml.launch.index}, {"range", ml.range.name}};
      const auto ns = ml.range.value("gpu__time_duration.sum");
      run.ms = ns && *ns > 0 ? *ns / 1e6 : 0.0;
      run.checked = false;
      run.verified = false;
      schema::hardware_profile hw;
      hw.range = run.variant + " #" + std::to_string(ml.launch.index);  // CUPTI's name is a number
      hw.ms = run.ms;
      hw.passes = s.passes == 0 ? 1 : s.passes;
      for (const auto& v : ml.range.values) hw.metrics.emplace_back(v.metric, v.value);
      if (record_of[m]) {
        const auto& rec = log.kernels[*record_of[m]];
        // the launch alone: one host grid, its blocks and threads; no traced children
        prof::host_activity_log launch_log;
        launch_log.kernels.push_back(rec);
        hw.accounting = prof::account(hw, launch_log, prof::child_counts{});
        run.params["grid_blocks"] = rec.blocks;
        run.params["block_threads"] = rec.block_threads;
        kernel_run[*record_of[m]] = m;  // add_run numbers the runs 0, 1, ... in this order
      } else {
        ++unmatched;
      }
      prof::run_collected c;
      c.hardware = std::move(hw);
      c.times.metrics_ms = run.ms;
      doc.add_run(run, std::nullopt, c);
    }
    if (!s.measured.empty())
      s.notes.insert(s.notes.begin(),
                     "metrics: one range per host kernel launch (CUPTI auto range, kernel replay, " +
                         std::to_string(s.passes) +
                         " pass(es)), including the grids the kernel launched from the device; an injected "
                         "program is not traced, so the accounting counts no child grids and a CDP kernel's "
                         "children show as unaccounted CTAs");
    if (unmatched > 0 && s.log)
      note(s, "metrics", std::to_string(unmatched) + " measured launches have no host activity record: no accounting");
    if (s.not_measured > 0)
      note(s, "metrics", std::to_string(s.not_measured) + " of " + std::to_string(s.launches) +
                             " host kernel launches were not measured");
  } else if (s.mode == collect_mode::timeline && s.timeline) {
    prof::run_info run;
    run.algorithm = "injected";
    run.variant = "program";
    run.input = input;
    run.ms = program_ms;
    prof::run_collected c;
    c.timeline = timeline_of(*s.timeline, program_ms);
    c.times.timeline_ms = program_ms;
    doc.add_run(run, std::nullopt, c);
    for (auto& r : kernel_run) r = 0;
    for (auto& r : transfer_run) r = 0;
  }
  std::uint64_t untimed = 0;
  for (const auto& k : log.kernels) untimed += k.start_ns == 0 && k.end_ns == 0 ? 1 : 0;
  if (untimed > 0)
    note(s, "host_activity", std::to_string(untimed) + " of " + std::to_string(log.kernels.size()) +
                                 " kernels have no start and end times: CUPTI does not time the kernels its range "
                                 "profiler measures (their durations are their runs' gpu__time_duration.sum)");
  if (cupti_kernels > 0)
    note(s, "host_activity", std::to_string(cupti_kernels) + " kernels of CUPTI's own (" +
                                 range_profiler_kernel + ") left out");

  doc.set_collector({s.requested, s.notes, s.incomplete});
  nlohmann::json j = doc.json();
  if (s.log) {
    schema::host_activity_profile ha;
    for (std::size_t k = 0; k < log.kernels.size(); ++k) {
      const auto& kr = log.kernels[k];
      ha.kernels.push_back({kernel_run[k], kr.name, kr.start_ns, kr.end_ns, kr.blocks, kr.block_threads});
    }
    for (std::size_t k = 0; k < log.transfers.size(); ++k) {
      const auto& t = log.transfers[k];
      ha.transfers.push_back({transfer_run[k], t.kind, t.start_ns, t.end_ns, t.bytes});
    }
    ha.dropped = log.dropped;
    j["host_activity"] = schema::host_activity_json(ha);
  }
  try {
    schema::write_json_file(j, path);
    if (!s.quiet)
      say("wrote " + path + " (" + std::to_string(j["runs"].size()) + " runs, " + std::to_string(log.kernels.size()) +
          " host kernels, " + std::to_string(s.notes.size()) + " notes)");
  } catch (const std::exception& e) {
    say(std::string("cannot write the profile (CDPKIT_PROFILE_OUT): ") + e.what());
  }
}

}  // namespace cdpkit::profiling::inject
