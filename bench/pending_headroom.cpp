// pending_headroom — how much headroom the device runtime needs above the launch layer's pending
// budget (docs/design.md, "Pending headroom").
//
// Runs one loop_to_child policy (child_per_thread by default: every non-empty segment asks for a
// child, so the budget is exhausted all the time) on 2^20 power-law segments, again and again in
// one process, with the given device limit and budget. Every wait is under the watchdog: a run
// that stalls on the device ends the program with exit 3 and the launch layer's state. The output
// of the last run is checked against Thrust. scripts/headroom runs this over several budgets and
// counts stalls per run.
//
//   pending_headroom --limit 2048 --budget 2048 --runs 200 --timeout 10

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/segment_workload.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  CLI::App app{"pending_headroom: repeat a loop_to_child policy at a given pending budget and "
               "device limit; a stall ends the program with the watchdog's diagnosis (exit 3)"};
  int limit = 2048, budget = 0, runs = 100;
  std::string policy_name = "child_per_thread";
  cdpkit::harness::segment_params seg;  // 2^20 power-law segments, as the loop_to_child sample
  app.add_option("--limit", limit, "cudaLimitDevRuntimePendingLaunchCount")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("--budget", budget,
                 "the layer's pending budget (0: the safe share of the limit); may exceed the "
                 "safe share here, that is what is measured")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  app.add_option("--runs", runs, "runs in this process")->capture_default_str()->check(
      CLI::Range(1, 1000000));
  app.add_option("--variant", policy_name, "loop_to_child variant (its loop policy)")
      ->capture_default_str();
  app.add_option("--segments", seg.num_segments, "segments, N or 2^K (at least 1)")
      ->capture_default_str()
      ->transform(cdpkit::harness::size_number(1u << 26))
      ->check(CLI::Range(1u, 1u << 26));
  return cdpkit::harness::run_program("pending_headroom", app, argc, argv, [&] {
    const auto kind = cdpkit::parse_loop_policy_kind(policy_name);
    const cdpkit::loop_policy policy = cdpkit::loop_policy::of(kind);
    cdpkit::launch_config config;
    config.pending_launch_limit = limit;
    config.pending_budget = budget;
    config.allow_unsafe_budget = true;
    cdpkit::launch_runtime runtime(config);
    cdpkit::harness::segment_workload workload(cdpkit::harness::make_segment_offsets(seg), 8, seg.seed);
    std::cout << "pending_headroom: " << policy_name << ", device limit "
              << runtime.pending_launch_limit() << ", budget " << runtime.pending_budget() << " ("
              << 100.0 * runtime.pending_budget() / runtime.pending_launch_limit()
              << "% of the limit), " << runs << " runs" << std::endl;
    const auto start = std::chrono::steady_clock::now();
    for (int r = 1; r <= runs; ++r) {
      workload.run(policy, runtime);  // waits under the watchdog; a stall throws (exit 3)
      std::cout << "run " << r << " ok" << std::endl;  // a heartbeat for scripts/headroom
    }
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto bad = workload.count_mismatches();
    std::cout << "pending_headroom: " << runs << " runs in " << s << " s, 0 stalls; last run "
              << (bad == 0 ? "verified" : "FAILED: " + std::to_string(bad) + " mismatches")
              << std::endl;
    return bad == 0;
  });
}
