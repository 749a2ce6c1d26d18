// tree — recursive tree traversal with child grids, measured: a child grid per node drowns in
// tiny grids; a threshold or one grid per warp / block makes the recursion pay; the device-side
// level loop keeps the host out; the host's level loop without CDP is the yardstick. Top-down
// (depth and root-path sums) and bottom-up (subtree sizes and sums, combined as the last child
// of each node finishes: CDP2 has no device-side wait).
//
// 1. Generate or read the tree (random:N:powerlaw, kary:K:D, path:N, caterpillar:N, a list of
//    paths, a parent array).
// 2. Compute the CPU references.
// 3. Run each variant and operation: timed with tracing off, one traced run, every node checked.
// 4. Print the table; write the profile with --profile. Exit 1 if any check failed.
//
//   tree --tree random:4194304:powerlaw --profile tree.json
//   find /usr -printf '%s\t%p\n' > usr.txt && tree --tree paths:usr.txt --op subtree
//   tree --tree path:100000 --variant recursive_naive,level_sync

#include <cdpkit/harness/collect.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/tree_runs.hpp>

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/tree.hpp>
#include <cdpkit/tree_traversal.hpp>

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <limits>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"tree: every tree traversal variant on one tree, timed, traced and checked"};
  std::string tree_spec = "random:1048576:powerlaw";
  std::vector<std::string> variant_names{"all"}, op_names{"depth", "subtree"};
  std::optional<std::uint32_t> threshold;
  std::uint32_t child_block_threads = 256;
  std::uint64_t seed = 1;
  int reps = 5;
  app.add_option("--tree", tree_spec,
                 "random:N[:uniform|geometric|powerlaw[:MEAN]] | kary:K:DEPTH | path:N | caterpillar:N | "
                 "paths:FILE (one path per line, optionally SIZE<TAB>PATH) | parents:FILE (one parent per line, -1 "
                 "for the root)")
      ->capture_default_str();
  app.add_option("--op", op_names, "comma-separated: depth (top-down), subtree (bottom-up)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--variant", variant_names,
                 "comma-separated: all, level_sync, recursive_naive, recursive_threshold, recursive_warp, "
                 "recursive_block, device_driver")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--threshold", threshold, "launch threshold T (default: the variant's)");
  app.add_option("--child-block-threads", child_block_threads, "threads per block of the child grids")
      ->capture_default_str()
      ->check(CLI::Range(32, 1024));
  app.add_option("--seed", seed, "generator seed")->capture_default_str()
      ->check(cdpkit::harness::whole_number(std::numeric_limits<std::uint64_t>::max()));
  app.add_option("--reps", reps, "timed repetitions")->capture_default_str()->check(CLI::Range(1, 1000));
  cdpkit::harness::sample_options opts;
  opts.launch = cdpkit::harness::tree_launch_config();
  cdpkit::harness::add_sample_options(app, opts);
  return cdpkit::harness::run_program("tree", app, argc, argv, [&] {
    CDPKIT_NVTX_SCOPE("tree sample");
    const auto variants = cdpkit::harness::parse_name_list(variant_names, cdpkit::all_tree_variants(),
                                                           cdpkit::parse_tree_variant);
    std::vector<cdpkit::tree_op> ops;
    for (const auto& name : op_names) ops.push_back(cdpkit::parse_tree_op(name));
    if (child_block_threads % 32 != 0)
      throw cdpkit::input_error("--child-block-threads must be a multiple of 32, got " +
                                std::to_string(child_block_threads));
    const auto collect_options = opts.collect.options();

    // the input first: a bad spec or file is one line and exit 2, with or without a GPU
    const cdpkit::tree t = cdpkit::load_tree(tree_spec, seed);
    cdpkit::require_cuda_device();  // one clear line, exit 3 without a GPU
    const auto c = cdpkit::harness::make_tree_case(tree_spec, t);

    cdpkit::launch_runtime runtime(opts.launch);
    const cdpkit::device_tree dt(t);
    std::vector<cdpkit::tree_options> runs;
    for (const auto op : ops)
      for (const auto v : variants) {
        cdpkit::tree_options o;
        o.variant = v;
        o.op = op;
        o.threshold = threshold;
        o.child_block_threads = child_block_threads;
        runs.push_back(o);
      }
    cdpkit::profiling::collector collector(collect_options);
    const auto results = cdpkit::harness::run_tree_variants(c, dt, runtime, runs, reps, &collector);
    cdpkit::harness::print_tree_results(std::cout, c, results);
    cdpkit::harness::finish_sample(
        std::cout, "tree", opts, runtime, collector, results,
        [](const auto& r) {
          return std::string(cdpkit::to_string(r.options.variant)) + "/" + cdpkit::to_string(r.options.op);
        },
        [&](const auto& r) { return cdpkit::harness::to_bench_row(c, r); });
    return cdpkit::harness::all_verified(results);
  });
}
