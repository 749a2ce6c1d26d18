// loop_to_child_bench — every policy on every segment distribution, in one process.
//
// 1. Calibrate the cost model: time serial_loop on one warp of equal segments of two lengths;
//    the slope is a lone thread's ns per item, and T = launch cost / that (per stream kind).
// 2. For each distribution: run every policy (median of --reps, tracing off; one traced run;
//    checked against Thrust), print the table with ratios to serial_loop and flat_balanced.
// 3. Sweep T for thresholded and warp_aggregated on power_law to show where the cost model's
//    choice lands.
// 4. Write every row to --json in the docs/bench-format.md shape (ratios are computed from one document).

#include <cdpkit/harness/loop_to_child_runs.hpp>

#include <cdpkit/error.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/harness/table.hpp>

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace {

/// Serial ns per item of a thread looping alone (what a long segment's thread pays per item):
/// slope of serial_loop time over two lengths, one warp of equal segments.
double calibrate_serial_item_ns(cdpkit::launch_runtime& runtime, std::uint32_t rounds, int reps) {
  const auto time_len = [&](std::uint32_t len) {
    cdpkit::harness::segment_params p;
    p.dist = cdpkit::harness::segment_dist::equal;
    p.num_segments = 32;
    p.equal_len = len;
    cdpkit::harness::segment_workload w(cdpkit::harness::make_segment_offsets(p), rounds);
    const auto policy = cdpkit::loop_policy::serial();
    return cdpkit::harness::time_runs([&](cudaStream_t s) { w.run_async(policy, runtime, s); },
                                        {}, reps, 1, nullptr)
        .median_ms;
  };
  const std::uint32_t short_len = 256, long_len = 4096;
  const double t_short = time_len(short_len), t_long = time_len(long_len);
  const double ns = (t_long - t_short) * 1e6 / (long_len - short_len);
  return ns > 0.0 ? ns : cdpkit::launch_cost_model{}.serial_item_ns;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loop_to_child_bench: every policy on every distribution, ratios, JSON rows (docs/bench-format.md)"};
  std::uint32_t segments = 1u << 20, rounds = 8;
  int reps = 5;
  std::string json_path;
  std::vector<std::string> dist_names{"all"};
  std::vector<std::uint32_t> thresholds = {32, 128, 512, 2048, 8192};
  app.add_option("--segments", segments, "segments per workload, N or 2^K (at least 1)")->capture_default_str()
      ->transform(cdpkit::harness::size_number(1u << 26))
      ->check(CLI::Range(1u, 1u << 26));
  app.add_option("--rounds", rounds, "hash rounds per item")->capture_default_str();
  cdpkit::harness::add_timing_options(app, reps, 100);
  app.add_option("--dist", dist_names,
                 "comma-separated: all, uniform, power_law, giant, empty, equal")
      ->delimiter(',')
      ->capture_default_str();
  cdpkit::harness::add_thresholds_option(app, thresholds,
                                         "the sweep on power-law segments: thresholded and warp_aggregated at "
                                         "these T, and child_per_thread on named streams");
  app.add_option("--json", json_path, "write the rows (schema cdpkit-bench/1) here")
      ->check(cdpkit::harness::output_file("a JSON document", '{'));
  return cdpkit::harness::run_program("loop_to_child_bench", app, argc, argv, [&] {
    const auto dists = cdpkit::harness::parse_name_list(
        dist_names, cdpkit::harness::all_segment_dists(), cdpkit::harness::parse_segment_dist);
    cdpkit::require_cuda_device();  // after the arguments: one clear line, exit 3 without a GPU

    cdpkit::launch_runtime runtime;
    auto doc = cdpkit::harness::bench_document(cdpkit::profiling::device_json());
    cdpkit::launch_cost_model model;
    model.serial_item_ns = calibrate_serial_item_ns(runtime, rounds, reps);
    std::cout << "cost model: serial " << cdpkit::harness::format("%.3f", model.serial_item_ns)
              << " ns/item (calibrated); default T: fire_and_forget "
              << model.threshold(cdpkit::stream_kind::fire_and_forget) << ", named_per_thread "
              << model.threshold(cdpkit::stream_kind::named_per_thread) << ", null_stream "
              << model.threshold(cdpkit::stream_kind::null_stream) << "\n";
    doc["cost_model"] = {{"serial_item_ns", model.serial_item_ns},
                         {"threshold_fire_and_forget",
                          model.threshold(cdpkit::stream_kind::fire_and_forget)}};

    bool ok = true;
    for (const auto dist : dists) {
      cdpkit::harness::segment_params p;
      p.num_segments = segments;
      p.dist = dist;
      cdpkit::harness::segment_workload workload(cdpkit::harness::make_segment_offsets(p), rounds, p.seed);
      std::vector<cdpkit::loop_policy> policies;
      for (auto k : cdpkit::all_loop_policy_kinds())
        policies.push_back(cdpkit::harness::make_policy(k, std::nullopt,
                                                        cdpkit::stream_kind::fire_and_forget, model));
      if (dist == cdpkit::harness::segment_dist::power_law && !thresholds.empty()) {
        for (const std::uint32_t t : thresholds) {
          policies.push_back(cdpkit::harness::make_policy(cdpkit::loop_policy_kind::thresholded, t,
                                                          cdpkit::stream_kind::fire_and_forget, model));
          policies.push_back(cdpkit::harness::make_policy(
              cdpkit::loop_policy_kind::warp_aggregated, t, cdpkit::stream_kind::fire_and_forget, model));
        }
        policies.push_back(cdpkit::harness::make_policy(cdpkit::loop_policy_kind::child_per_thread,
                                                        std::nullopt,
                                                        cdpkit::stream_kind::named_per_thread, model));
      }
      const std::string input = cdpkit::harness::input_label(p);
      const auto results = cdpkit::harness::run_policies(workload, runtime, policies, reps);
      cdpkit::harness::print_results(std::cout, input, workload, results);
      ok = cdpkit::harness::add_bench_rows(doc, results, [&](const auto& r) {
             return cdpkit::harness::to_bench_row(input, workload, r);
           }) && ok;
    }
    cdpkit::harness::write_bench_document(doc, json_path, std::cout);
    return ok;
  });
}
