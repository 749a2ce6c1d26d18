// quicksort_bench — every quicksort variant against Thrust's radix and merge sorts, in one
// process: uniform keys at 2^20 .. 2^28 for u32, u64 and f32 keys and for u32 keys with u32
// values, then every key distribution at 2^24 (u32). `simple` (one thread per partition pass)
// runs at 2^20 only. Every run is checked key by key against the input sorted by thrust_merge;
// cases that do not fit the device's (or the host's) memory are skipped with a line that says so.
//
// 1. For each case: generate the keys on the host, check the memory, sort the reference, run
//    every variant (median of --reps, tracing off; one traced run), print the table.
// 2. The summary: fast's and radix's times against thrust_merge and thrust_radix at 2^26 and
//    2^28 per type, each one's worst distribution against uniform at 2^24, and fast at 2^20
//    against two_stream (the algorithm of NVIDIA's advanced sample).
// 3. Write every row to --json in the docs/bench-format.md shape (ratios within one document).
//
//   quicksort_bench --json quicksort_bench.json
//   quicksort_bench --max-log2 24 --reps 3          # a quick pass

#include <cdpkit/harness/quicksort_runs.hpp>
#include <cdpkit/harness/sort_inputs.hpp>

#include <cdpkit/error.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/table.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/quicksort.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <limits>
#include <string>
#include <vector>

namespace {

using cdpkit::quicksort_variant;
using cdpkit::harness::format;
using cdpkit::harness::sort_distribution;
using cdpkit::harness::sort_key_type;

/// The median times of one case's runs, for the summary.
struct case_times {
  sort_key_type type;
  bool by_key;
  sort_distribution dist;
  int log2;
  std::map<quicksort_variant, double> ms;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string kind_text(sort_key_type type, bool by_key) {
  return std::string(cdpkit::harness::to_string(type)) + (by_key ? " by key" : "");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"quicksort_bench: every quicksort variant against Thrust, 2^20..2^28 keys, every "
               "distribution, JSON rows (docs/bench-format.md)"};
  std::vector<int> sizes{20, 22, 24, 26, 28};
  int max_log2 = 28, dist_log2 = 24, simple_max_log2 = 20, reps = 5, simple_reps = 3;
  std::vector<std::string> type_names{"u32", "u64", "f32"}, dist_names{"all"},
      variant_names{"all"};
  bool by_key = true;
  std::uint64_t seed = 1;
  std::string json_path;
  app.add_option("--sizes", sizes, "log2 of the key counts of the uniform cases")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(0, 31));
  app.add_option("--max-log2", max_log2, "leave out the sizes above 2^this (all cases)")
      ->capture_default_str()
      ->check(CLI::Range(0, 31));
  app.add_option("--type", type_names,
                 "key types of the uniform cases: i32, u32, i64, u64, f32, f64")
      ->delimiter(',')
      ->capture_default_str();
  app.add_flag("--by-key,!--no-by-key", by_key,
               "also sort u32 keys with u32 values at every size (default: on)");
  app.add_option("--dist", dist_names,
                 "distributions of the u32 cases at 2^--dist-log2 (all, or a comma-separated "
                 "list; none: no distribution cases)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--dist-log2", dist_log2, "log2 of the key count of the distribution cases")
      ->capture_default_str()
      ->check(CLI::Range(0, 31));
  app.add_option("--variant", variant_names,
                 "comma-separated: all, simple, two_stream, fast, host_driven, radix, thrust_radix, "
                 "thrust_merge")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--simple-max-log2", simple_max_log2, "run simple only up to 2^this keys")
      ->capture_default_str()
      ->check(CLI::Range(0, 31));
  cdpkit::harness::add_timing_options(app, reps, 100);
  app.add_option("--simple-reps", simple_reps, "timed repetitions of simple (at most --reps)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app.add_option("--seed", seed, "key generator seed")->capture_default_str()
      ->check(cdpkit::harness::whole_number(std::numeric_limits<std::uint64_t>::max()));
  cdpkit::launch_config config;
  cdpkit::harness::add_launch_options(app, config);
  app.add_option("--json", json_path, "write the rows (cdpkit-bench/1) here")
      ->check(cdpkit::harness::output_file("a JSON document", '{'));
  return cdpkit::harness::run_program("quicksort_bench", app, argc, argv, [&] {
    std::vector<sort_key_type> types;
    for (const auto& t : type_names) types.push_back(cdpkit::harness::parse_sort_key_type(t));
    const bool no_dists = dist_names.size() == 1 && dist_names[0] == "none";
    const auto dists = no_dists ? std::vector<sort_distribution>{}
                                : cdpkit::harness::parse_name_list(
                                      dist_names, cdpkit::harness::all_sort_distributions(),
                                      cdpkit::harness::parse_sort_distribution);
    const auto variants = cdpkit::harness::parse_name_list(
        variant_names, cdpkit::all_quicksort_variants(), cdpkit::parse_quicksort_variant);
    std::vector<int> logs;
    for (int s : sizes)
      if (s <= max_log2 && std::find(logs.begin(), logs.end(), s) == logs.end()) logs.push_back(s);
    std::sort(logs.begin(), logs.end());

    cdpkit::require_cuda_device();  // after the arguments: one clear line, exit 3 without a GPU
    const auto t_start = std::chrono::steady_clock::now();
    cdpkit::launch_runtime runtime(config);
    auto doc = cdpkit::harness::bench_document(cdpkit::profiling::device_json());
    std::cout << "pending launch limit " << runtime.pending_launch_limit() << ", budget "
              << runtime.pending_budget() << "; " << reps << " timed runs per variant ("
              << std::min(simple_reps, reps) << " for simple)\n";
    std::vector<case_times> done;
    std::vector<std::string> skipped;
    bool ok = true;
    std::uint64_t runs_made = 0, runs_failed = 0;

    const auto run_case = [&](sort_key_type type, sort_distribution dist, int log2, bool kv) {
      const std::uint64_t n = std::uint64_t{1} << log2;
      std::vector<quicksort_variant> vars;
      for (auto v : variants)
        if (v != quicksort_variant::simple || log2 <= simple_max_log2) vars.push_back(v);
      const std::string label = cdpkit::harness::sort_input_label(type, dist, n, kv);
      if (vars.empty()) return;
      try {  // what does not fit is skipped, with the reason
        cdpkit::require_host_memory(
            cdpkit::saturating_add(cdpkit::saturating_mul(n, cdpkit::harness::key_bytes(type)),
                                   cdpkit::harness::sort_host_bytes(type, n, kv)),
            "the keys of " + label);
        cdpkit::harness::require_sort_memory(type, n, kv, vars);
      } catch (const cdpkit::input_error& e) {
        std::cout << "\nskipped " << label << ": " << e.what() << "\n";
        skipped.push_back(label);
        return;
      }
      const auto t0 = std::chrono::steady_clock::now();
      const auto c = cdpkit::harness::make_sort_case(type, dist, n, seed, kv);
      const double gen_s = seconds_since(t0);
      cdpkit::harness::sort_runner runner(c, runtime, vars);
      std::vector<cdpkit::harness::quicksort_run> runs;
      for (auto v : vars)
        runs.push_back(runner.run(v, v == quicksort_variant::simple ? std::min(simple_reps, reps)
                                                                    : reps));
      cdpkit::harness::print_quicksort_results(std::cout, c, runs);
      std::cout << "(case: " << format("%.1f", seconds_since(t0)) << " s, of which "
                << format("%.1f", gen_s) << " s generating the keys; "
                << format("%.0f", seconds_since(t_start)) << " s so far)\n";
      case_times times{type, kv, dist, log2, {}};
      for (const auto& r : runs) {
        doc["rows"].push_back(
            cdpkit::harness::bench_row_json(cdpkit::harness::to_bench_row(c, r)));
        times.ms[r.variant] = r.m.time.median_ms;
        ++runs_made;
        runs_failed += cdpkit::harness::verified(r.m) ? 0 : 1;
      }
      done.push_back(std::move(times));
      ok = ok && cdpkit::harness::all_verified(runs);
    };

    for (auto type : types)
      for (int log2 : logs) run_case(type, sort_distribution::uniform, log2, false);
    if (by_key)
      for (int log2 : logs) run_case(sort_key_type::u32, sort_distribution::uniform, log2, true);
    const auto find_case = [&](sort_key_type type, bool kv, sort_distribution dist,
                               int log2) -> const case_times* {
      for (const auto& t : done)
        if (t.type == type && t.by_key == kv && t.dist == dist && t.log2 == log2) return &t;
      return nullptr;
    };
    if (dist_log2 <= max_log2)
      for (auto dist : dists)
        if (!find_case(sort_key_type::u32, false, dist, dist_log2))  // uniform may have run
          run_case(sort_key_type::u32, dist, dist_log2, false);

    // The summary: fast's and radix's times as multiples of each yardstick's (< 1: faster).
    const auto ms_of = [](const case_times* t, quicksort_variant v) -> std::optional<double> {
      if (!t) return std::nullopt;
      const auto it = t->ms.find(v);
      if (it == t->ms.end() || !(it->second > 0)) return std::nullopt;
      return it->second;
    };
    const auto times_text = [](std::optional<double> mine, std::optional<double> base,
                               const char* name) {
      if (!mine || !base) return std::string(name) + ": -";
      return format("%.2fx ", *mine / *base) + name + "'s " + format("%.3f ms", *base);
    };
    std::vector<int> summary_logs;
    for (int s : {26, 28})
      if (std::find(logs.begin(), logs.end(), s) != logs.end()) summary_logs.push_back(s);
    if (summary_logs.empty() && !logs.empty()) summary_logs.push_back(logs.back());
    std::vector<std::pair<sort_key_type, bool>> kinds;
    for (auto t : types) kinds.emplace_back(t, false);
    if (by_key) kinds.emplace_back(sort_key_type::u32, true);
    std::vector<quicksort_variant> summarized;
    for (auto v : {quicksort_variant::fast, quicksort_variant::radix})
      if (std::find(variants.begin(), variants.end(), v) != variants.end()) summarized.push_back(v);
    std::cout << "\n== summary: each variant's time as a multiple of the yardstick's, this run "
                 "(< 1.00x: the variant is faster).\n";
    cdpkit::harness::text_table summary({"keys", "n", "variant", "ms", "vs thrust_merge",
                                         "vs thrust_radix"});
    for (const auto& [type, kv] : kinds)
      for (int log2 : summary_logs)
        for (auto v : summarized) {
          const case_times* t = find_case(type, kv, sort_distribution::uniform, log2);
          const auto mine = ms_of(t, v);
          summary.add_row({kind_text(type, kv), "2^" + std::to_string(log2), cdpkit::to_string(v),
                           t ? (mine ? format("%.3f", *mine) : "-") : "skipped",
                           times_text(mine, ms_of(t, quicksort_variant::thrust_merge), "thrust_merge"),
                           times_text(mine, ms_of(t, quicksort_variant::thrust_radix), "thrust_radix")});
        }
    summary.print(std::cout);
    for (auto v : summarized) {  // the worst distribution against uniform, u32 at 2^dist_log2
      const auto uniform =
          ms_of(find_case(sort_key_type::u32, false, sort_distribution::uniform, dist_log2), v);
      std::optional<double> worst;
      sort_distribution worst_dist = sort_distribution::uniform;
      for (auto dist : dists) {
        if (dist == sort_distribution::uniform) continue;
        const auto ms = ms_of(find_case(sort_key_type::u32, false, dist, dist_log2), v);
        if (ms && (!worst || *ms > *worst)) worst = ms, worst_dist = dist;
      }
      if (worst && uniform)
        std::cout << "worst distribution for " << cdpkit::to_string(v) << " at 2^" << dist_log2
                  << " (u32): " << cdpkit::harness::to_string(worst_dist) << ", "
                  << format("%.3f", *worst) << " ms = " << format("%.2fx", *worst / *uniform)
                  << " uniform's " << format("%.3f", *uniform) << " ms\n";
    }
    {  // fast against two_stream, the algorithm of NVIDIA's cdpAdvancedQuicksort sample
      const case_times* t = find_case(sort_key_type::u32, false, sort_distribution::uniform, 20);
      const auto fast_1m = ms_of(t, quicksort_variant::fast);
      const auto two_stream_1m = ms_of(t, quicksort_variant::two_stream);
      if (fast_1m && two_stream_1m)
        std::cout << "2^20 u32 keys: fast " << format("%.3f", *fast_1m) << " ms, "
                  << format("%.2fx", *two_stream_1m / *fast_1m) << " faster than two_stream's "
                  << format("%.3f", *two_stream_1m)
                  << " ms (the algorithm of cuda-samples' cdpAdvancedQuicksort), this run\n";
    }
    std::cout << runs_made << " runs, " << runs_failed << " failed checks"
              << (skipped.empty() ? std::string()
                                  : ", " + std::to_string(skipped.size()) + " cases skipped")
              << "; " << format("%.0f", seconds_since(t_start)) << " s in all\n";
    cdpkit::harness::write_bench_document(doc, json_path, std::cout);
    return ok;
  });
}
