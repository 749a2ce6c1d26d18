// quicksort — the recursive CDP quicksort story, measured: the lecture's recursion (one thread
// partitions, a one-thread child per side) is hopeless; NVIDIA's advanced design (a grid per
// partition, two named streams) is parallel but makes a pass over memory per level and a launch
// per range; the fast variant splits each range many ways around sampled splitters, never
// recurses into runs of equal keys and sorts all the small buckets of a range with ONE child
// grid; host_driven runs the same steps level by level from the host (no CDP); Thrust's radix and
// merge sorts are the yardsticks.
//
// 1. Generate the keys on the host (--type, --dist, --n, --seed), for each distribution named.
// 2. Sort them once with thrust_merge: the reference.
// 3. Run each variant: the input copied back onto the device keys before every run (untimed),
//    timed with tracing off, one traced run, both outputs checked key by key (by key: each value
//    the input position of its key, and a permutation).
// 4. Print the table (ms, Mkeys/s, ratios to thrust_radix and thrust_merge, child launches, tiny
//    grids, max depth, fallbacks, warp efficiency, check); write the profile with --profile, where
//    the launch tree shows the recursion. Exit 1 if any check failed.
//
// `simple` is skipped above 2^21 keys (it takes seconds there: one thread does each pass) unless
// --variant names it.
//
//   quicksort --n 16777216 --profile quicksort.json
//   quicksort --n 1048576 --dist all --variant fast,thrust_merge
//   quicksort --type f64 --by-key --variant fast,host_driven,thrust_radix

#include <cdpkit/harness/collect.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/quicksort_runs.hpp>
#include <cdpkit/harness/sort_inputs.hpp>

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/quicksort.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

namespace {
/// Above this many keys `simple` is left out unless named (one thread per partition pass).
constexpr std::uint64_t simple_max_default = std::uint64_t{1} << 21;
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"quicksort: every quicksort variant on one key type and distribution, timed, "
               "traced and checked against Thrust"};
  std::uint64_t n = std::uint64_t{1} << 24;
  std::string type_name = "u32";
  std::vector<std::string> dist_names{"uniform"}, variant_names{"all"};
  std::uint64_t seed = 1;
  int reps = 5;
  bool by_key = false;
  app.add_option("--n", n,
                 "number of keys, N or 2^K, 0 to 4294967295 "
                 "(quicksort_max_keys); checked against the device's free memory")
      ->capture_default_str()
      ->transform(cdpkit::harness::size_number(cdpkit::quicksort_max_keys));
  app.add_option("--type", type_name, "key type: i32, u32, i64, u64, f32, f64")
      ->capture_default_str();
  app.add_option("--dist", dist_names,
                 "comma-separated key distributions, or all: uniform, sorted, reverse, "
                 "all_equal, two_values, sixteen_values, organ_pipe, sawtooth, staircase, zipf, "
                 "gaussian, pivot_copies, median3_killer, shared_prefix, powers_of_two, one_different, "
                 "alternating_extremes")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--variant", variant_names,
                 "comma-separated: all, simple, two_stream, fast, host_driven, radix, thrust_radix, "
                 "thrust_merge (all leaves simple out above 2^21 keys; name it to run it)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_flag("--by-key", by_key, "sort u32 values along with the keys (quicksort_by_key)");
  app.add_option("--seed", seed, "key generator seed")->capture_default_str()
      ->check(cdpkit::harness::whole_number(std::numeric_limits<std::uint64_t>::max()));
  app.add_option("--reps", reps, "timed repetitions per variant")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cdpkit::harness::sample_options opts;
  cdpkit::harness::add_sample_options(app, opts);
  return cdpkit::harness::run_program("quicksort", app, argc, argv, [&] {
    CDPKIT_NVTX_SCOPE("quicksort sample");
    const auto type = cdpkit::harness::parse_sort_key_type(type_name);
    const auto collect_options = opts.collect.options();
    const auto dists = cdpkit::harness::parse_name_list(
        dist_names, cdpkit::harness::all_sort_distributions(),
        cdpkit::harness::parse_sort_distribution);
    auto variants = cdpkit::harness::parse_name_list(
        variant_names, cdpkit::all_quicksort_variants(), cdpkit::parse_quicksort_variant);
    const bool simple_named =
        std::find(variant_names.begin(), variant_names.end(), "simple") != variant_names.end();
    if (n > simple_max_default && !simple_named) {
      const auto simple = std::find(variants.begin(), variants.end(),
                                    cdpkit::quicksort_variant::simple);
      if (simple != variants.end()) {
        variants.erase(std::remove(variants.begin(), variants.end(),
                                   cdpkit::quicksort_variant::simple),
                       variants.end());
        std::cout << "(simple left out: " << n << " keys is above 2^21, where one thread per "
                  << "partition pass takes seconds; --variant simple runs it)\n";
      }
    }

    // The host's memory needs no GPU: a size too large for it is a command-line error (exit 2)
    // on any machine.
    cdpkit::harness::require_sort_host_memory(type, n, by_key);
    cdpkit::require_cuda_device();  // after the arguments: one clear line, exit 3 without a GPU
    cdpkit::launch_runtime runtime(opts.launch);
    // Before generating anything: the sizes against the device's and the host's memory.
    cdpkit::harness::require_sort_memory(type, n, by_key, variants);
    cdpkit::profiling::profile_document doc("quicksort", cdpkit::profiling::device_json());
    cdpkit::profiling::collector collector(collect_options);
    bool ok = true;
    for (const auto dist : dists) {
      const auto c = cdpkit::harness::make_sort_case(type, dist, n, seed, by_key);
      const auto runs = cdpkit::harness::run_quicksort_variants(c, runtime, variants, reps, &collector);
      cdpkit::harness::print_quicksort_results(std::cout, c, runs);
      cdpkit::harness::print_collected(
          std::cout, cdpkit::harness::collected_rows(runs, [](const auto& r) { return std::string(to_string(r.variant)); }),
          collector);
      for (const auto& r : runs)
        doc.add_run(cdpkit::harness::to_run_info(cdpkit::harness::to_bench_row(c, r)), r.m.trace, r.m.collected);
      ok = ok && cdpkit::harness::all_verified(runs);
    }
    std::cout << "pending launch limit " << runtime.pending_launch_limit() << ", budget "
              << runtime.pending_budget() << ", depth cap " << runtime.config().max_depth << "\n";
    if (!opts.profile_path.empty()) {
      doc.set_collector(collector.profile());
      doc.write(opts.profile_path);
      std::cout << "profile written to " << opts.profile_path << "\n";
    }
    return ok;
  });
}
