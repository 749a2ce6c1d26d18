#include <cdpkit/harness/loop_to_child_runs.hpp>

#include <cdpkit/harness/table.hpp>

#include <ostream>

namespace cdpkit::harness {

using harness::format;

loop_policy make_policy(loop_policy_kind kind, std::optional<std::uint32_t> threshold,
                        stream_kind stream, const launch_cost_model& model) {
  loop_policy p = loop_policy::of(kind, threshold, stream);
  p.cost_model = model;
  return p;
}

std::string input_label(const segment_params& params) {
  return std::string(to_string(params.dist)) + ":" + std::to_string(params.num_segments);
}

std::vector<policy_result> run_policies(segment_workload& workload, launch_runtime& runtime,
                                        const std::vector<loop_policy>& policies, int reps,
                                        profiling::collector* collector) {
  std::vector<policy_result> results;
  for (const loop_policy& policy : policies) {
    segment_async_result last;  // the latest run's handle; read after measure() has waited
    auto m = harness::measure(
        runtime, [&](cudaStream_t s) { last = workload.run_async(policy, runtime, s); },
        [&](cudaStream_t s) { workload.clear_outputs(s); },
        [&] { return workload.count_mismatches(); }, reps, /*traced=*/true, nullptr, collector,
        std::string("loop_to_child::") + to_string(policy.kind));
    results.push_back({policy, std::move(m), last.result()});
  }
  return results;
}

namespace {
const policy_result* find(const std::vector<policy_result>& results, loop_policy_kind kind) {
  for (const auto& r : results)
    if (r.policy.kind == kind) return &r;
  return nullptr;
}

/// The threshold the run used, as its result says: given, or picked on the device ("auto");
/// "-" for the policies without child grids.
std::string threshold_cell(const policy_result& r) {
  if (!r.used.threshold) return "-";
  return (r.used.threshold_auto ? "auto " : "") + std::to_string(*r.used.threshold);
}

}  // namespace

void print_results(std::ostream& out, const std::string& input, const segment_workload& workload,
                   const std::vector<policy_result>& results) {
  out << "\nloop_to_child on " << input << ": " << workload.num_segments() << " segments, "
      << workload.num_items() << " items, longest " << workload.max_segment_len() << "\n";
  harness::text_table table({"policy", "T", "ms", "Gitems/s", "vs serial", "vs flat",
                               "launches", "fallbacks", "tiny %", "warp eff", "check"});
  const policy_result* serial = find(results, loop_policy_kind::serial_loop);
  const policy_result* flat = find(results, loop_policy_kind::flat_balanced);
  for (const auto& r : results) {
    const auto& s = r.m.summary;
    const double ms = r.m.time.median_ms;
    table.add_row(
        {to_string(r.policy.kind),
         threshold_cell(r),
         format("%.3f", ms), format("%.2f", ms > 0 ? workload.num_items() / ms / 1e6 : 0.0),
         ratio_text(serial ? serial->m.time.median_ms : 0, ms), ratio_text(flat ? flat->m.time.median_ms : 0, ms), std::to_string(s.child_launches),
         std::to_string(s.fallbacks),
         s.child_launches > 0 ? format("%.1f", 100.0 * s.tiny_grid_share) : "-",
         s.warp_efficiency >= 0 ? format("%.3f", s.warp_efficiency) : "-",
         check_text(r.m)});
  }
  table.print(out);
  out << "ms: median of the timed runs (tracing off). launches, fallbacks, tiny % (child grids with"
         " < "
      << tiny_grid_work
      << " items) and warp eff (active lanes / 32 over probed item-loop steps): one traced run.\n"
         "vs serial / vs flat: speedup over serial_loop / flat_balanced in this run (>1 = faster).\n"
         "T: launch when a segment (thresholded) or a warp's / block's items (aggregated) exceed "
         "it; auto: chosen on the device, balancing the launch path against the longest inline loop"
         " within half the pending budget.\n";
}

nlohmann::json policy_params(const policy_result& r) {
  const loop_policy& policy = r.policy;
  nlohmann::json p = nlohmann::json::object();
  if (policy.uses_cdp()) {
    p["threshold"] = r.used.threshold ? nlohmann::json(*r.used.threshold) : nlohmann::json();
    p["threshold_source"] =
        r.used.threshold_auto ? "auto (cost model and length distribution)" : "given";
    p["cost_model_threshold"] = policy.cost_model_threshold();
    p["stream"] = to_string(policy.stream);
    p["serial_item_ns"] = policy.cost_model.serial_item_ns;
    p["launch_ns"] = policy.cost_model.launch_ns[static_cast<int>(policy.stream)];
  }
  return p;
}

bench_row to_bench_row(const std::string& input, const segment_workload& workload,
                                  const policy_result& r) {
  bench_row row;
  row.family = "loop_to_child";
  row.input = input;
  row.variant = to_string(r.policy.kind);
  row.baseline = to_string(loop_policy_kind::serial_loop);  // the ratios compare to Fig. 21.4
  row.params = policy_params(r);
  row.n = workload.num_segments();
  row.work = workload.num_items();
  row.work_unit = "items";
  row.throughput_unit = "Gitems/s";
  row.m = r.m;
  return row;
}

}  // namespace cdpkit::harness
