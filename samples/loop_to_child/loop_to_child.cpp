// loop_to_child — PMPP's Fig. 21.4 -> 21.5 story, measured.
//
// 1. Build a segment-length workload (power-law by default: most segments tiny, a few huge).
// 2. Run each policy: serial_loop (each thread loops), child_per_thread (a child grid per
//    segment), thresholded (a child only above T), warp/block_aggregated (one child per group),
//    flat_balanced (no CDP: scan + search over all items).
// 3. Time each with tracing off, trace one more run (child launches, fallbacks, tiny grids,
//    per-warp efficiency from the probes), and check the output against Thrust.
// 4. Print the table; write the profile JSON with --profile. Exit 1 if any check failed.
//
//   loop_to_child --dist power_law --segments 1048576 --profile l2c.json
//   loop_to_child --variant thresholded,warp_aggregated --threshold 256 --stream named_per_thread

#include <cdpkit/harness/collect.hpp>
#include <cdpkit/harness/loop_to_child_runs.hpp>
#include <cdpkit/harness/program.hpp>

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/profiling/profile.hpp>

#include <CLI/CLI.hpp>

#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"loop_to_child: every loop-to-child policy on one workload, timed, traced and checked"};
  std::vector<std::string> variant_names{"all"};
  std::string dist_name = "power_law", stream_name = "fire_and_forget";
  cdpkit::harness::segment_params seg;
  std::optional<std::uint32_t> threshold;
  std::uint32_t rounds = 8;
  int reps = 5;
  double item_ns = cdpkit::launch_cost_model{}.serial_item_ns;
  app.add_option("--variant", variant_names,
                 "comma-separated: all, serial_loop, child_per_thread, thresholded, "
                 "warp_aggregated, block_aggregated, flat_balanced")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--dist", dist_name, "segment lengths: uniform, power_law, giant, empty, equal")
      ->capture_default_str();
  app.add_option("--segments", seg.num_segments, "number of segments (parent threads), N or 2^K")
      ->capture_default_str()
      ->transform(cdpkit::harness::size_number(1u << 30));
  app.add_option("--threshold", threshold,
                 "launch threshold T for thresholded / aggregated (default: cost model)");
  app.add_option("--stream", stream_name,
                 "child stream: fire_and_forget, named_per_thread, null_stream, tail")
      ->capture_default_str();
  app.add_option("--item-ns", item_ns, "cost model: serial ns per item (default threshold)")
      ->capture_default_str()
      ->check(cdpkit::harness::finite_number(0.0, 1e9, /*lo_open=*/true));
  app.add_option("--rounds", rounds, "hash rounds per item (the work per item)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1024u));
  app.add_option("--alpha", seg.alpha, "power_law exponent (> 1)")
      ->capture_default_str()
      ->check(cdpkit::harness::finite_number(1.0, std::numeric_limits<double>::infinity(), /*lo_open=*/true));
  app.add_option("--max-len", seg.max_len, "power_law longest segment")
      ->capture_default_str()
      ->check(CLI::Range(1u, 0xffffffffu));
  app.add_option("--mean-len", seg.mean_len, "uniform mean length (lengths in [0, 2 * mean])")
      ->capture_default_str()
      ->check(CLI::Range(0u, 0x7fffffffu));
  app.add_option("--giant-len", seg.giant_len, "giant segment length")->capture_default_str();
  app.add_option("--equal-len", seg.equal_len, "equal segment length")->capture_default_str();
  app.add_option("--seed", seg.seed, "workload seed")->capture_default_str()
      ->check(cdpkit::harness::whole_number(std::numeric_limits<std::uint64_t>::max()));
  app.add_option("--reps", reps, "timed repetitions per policy")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cdpkit::harness::sample_options opts;
  cdpkit::harness::add_sample_options(app, opts);
  return cdpkit::harness::run_program("loop_to_child", app, argc, argv, [&] {
    CDPKIT_NVTX_SCOPE("loop_to_child sample");
    seg.dist = cdpkit::harness::parse_segment_dist(dist_name);
    const auto stream = cdpkit::parse_stream_kind(stream_name);
    const auto kinds = cdpkit::harness::parse_name_list(variant_names, cdpkit::all_loop_policy_kinds(),
                                                        cdpkit::parse_loop_policy_kind);
    cdpkit::launch_cost_model model;
    model.serial_item_ns = item_ns;
    std::vector<cdpkit::loop_policy> policies;
    for (auto k : kinds) policies.push_back(cdpkit::harness::make_policy(k, threshold, stream, model));
    const auto collect_options = opts.collect.options();
    const auto offsets = cdpkit::harness::make_segment_offsets(seg);

    cdpkit::require_cuda_device();  // after the arguments and the input: one clear line, exit 3 without a GPU
    cdpkit::launch_runtime runtime(opts.launch);
    cdpkit::harness::segment_workload workload(offsets, rounds, seg.seed);
    const std::string input = cdpkit::harness::input_label(seg);

    cdpkit::profiling::collector collector(collect_options);
    const auto results = cdpkit::harness::run_policies(workload, runtime, policies, reps, &collector);
    cdpkit::harness::print_results(std::cout, input, workload, results);
    cdpkit::harness::finish_sample(
        std::cout, "loop_to_child", opts, runtime, collector, results,
        [](const auto& r) { return std::string(to_string(r.policy.kind)); },
        [&](const auto& r) { return cdpkit::harness::to_bench_row(input, workload, r); });
    return cdpkit::harness::all_verified(results);
  });
}
