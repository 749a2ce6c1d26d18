// tree_bench — every tree traversal variant, top-down and bottom-up, in one process: a power-law
// tree of 2^22 nodes (every CDP variant beside level_sync, the non-CDP yardstick), the
// deep path (10^5 levels: capped recursion, walked on), a complete 8-ary tree, and a real path
// tree (this machine's /usr, listed at start; skipped with a message when it cannot be read),
// with a threshold sweep on the power-law trees (--thresholds). JSON in the docs/bench-format.md shape.
//
//   tree_bench --json tree.json
//   tree_bench --trees random:1048576:powerlaw,path:100000 --reps 9
//   tree_bench --variant level_sync,device_driver,recursive_warp,recursive_block   (a subset; a
//       variant that stalls the device ends the process, so the ones at risk can run apart)

#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/tree_runs.hpp>

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/tree.hpp>
#include <cdpkit/tree_traversal.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace {

/// A listing of `dir` as `find DIR -printf '%s\t%p\n'` prints it (regular files and directories;
/// unreadable entries skipped), or nothing when the folder cannot be read.
std::string list_directory(const std::filesystem::path& dir) {
  std::string listing;
  std::error_code ec;
  auto it = std::filesystem::recursive_directory_iterator(
      dir, std::filesystem::directory_options::skip_permission_denied, ec);
  if (ec) return listing;
  for (; it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::error_code e2;
    const bool file = it->is_regular_file(e2), folder = !file && it->is_directory(e2);
    if (!file && !folder) continue;
    const auto size = file ? it->file_size(e2) : 0;
    listing += std::to_string(e2 ? 0 : size) + "\t" + it->path().string() + "\n";
  }
  return listing;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tree_bench: every tree traversal variant on power-law, deep, k-ary and real trees"};
  std::vector<std::string> specs = {"random:4194304:powerlaw", "path:100000", "kary:8:7"};
  std::vector<std::string> variant_names{"all"};
  std::string real_dir = "/usr", json_path;
  std::vector<std::uint32_t> thresholds = {0, 4, 16, 64, 256};
  int reps = 5;
  app.add_option("--trees", specs, "tree specs (as tree --tree takes them)")->delimiter(',')->capture_default_str();
  app.add_option("--variant", variant_names,
                 "comma-separated: all, level_sync, recursive_naive, recursive_threshold, recursive_warp, "
                 "recursive_block, device_driver (the threshold sweep follows the variants it names)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--real", real_dir, "folder listed as the real path tree (empty: none)")->capture_default_str();
  cdpkit::harness::add_thresholds_option(app, thresholds,
                                         "the sweep on power-law trees: each launching variant named also runs at these thresholds");
  cdpkit::harness::add_timing_options(app, reps, 100);
  cdpkit::launch_config config = cdpkit::harness::tree_launch_config();
  cdpkit::harness::add_launch_options(app, config);
  app.add_option("--json", json_path, "write the rows (cdpkit-bench/1) here")
      ->check(cdpkit::harness::output_file("a JSON document", '{'));
  return cdpkit::harness::run_program("tree_bench", app, argc, argv, [&] {
    const auto variants = cdpkit::harness::parse_name_list(variant_names, cdpkit::all_tree_variants(),
                                                           cdpkit::parse_tree_variant);
    const auto wanted = [&](cdpkit::tree_variant v) {
      return std::find(variants.begin(), variants.end(), v) != variants.end();
    };
    cdpkit::require_cuda_device();  // one clear line and exit 3 without a GPU (after the options)
    cdpkit::launch_runtime runtime(config);
    auto doc = cdpkit::harness::bench_document(cdpkit::profiling::device_json());
    struct input {
      std::string name;
      cdpkit::tree t;
    };
    std::vector<input> inputs;
    for (const auto& spec : specs) inputs.push_back({spec, cdpkit::load_tree(spec)});
    if (!real_dir.empty()) {
      const std::string listing = list_directory(real_dir);
      if (listing.empty()) std::cout << "(" << real_dir << " could not be listed: the real path tree is skipped)\n";
      else inputs.push_back({"paths:" + real_dir, cdpkit::parse_path_list(listing, "listing of " + real_dir)});
    }
    bool ok = true;
    for (const auto& in : inputs) {
      const auto c = cdpkit::harness::make_tree_case(in.name, in.t);
      const cdpkit::device_tree dt(in.t);
      std::vector<cdpkit::tree_options> runs;
      for (const auto op : {cdpkit::tree_op::top_down, cdpkit::tree_op::bottom_up}) {
        for (const auto v : variants) {
          cdpkit::tree_options o;
          o.variant = v;
          o.op = op;
          runs.push_back(o);
        }
        if (in.name.rfind("random:", 0) == 0) {
          for (const auto v : {cdpkit::tree_variant::recursive_threshold, cdpkit::tree_variant::recursive_warp,
                               cdpkit::tree_variant::recursive_block, cdpkit::tree_variant::device_driver}) {
            if (!wanted(v)) continue;
            for (const std::uint32_t t : thresholds) {
              if (t == cdpkit::default_tree_threshold(v)) continue;  // run above already
              cdpkit::tree_options o;
              o.variant = v;
              o.op = op;
              o.threshold = t;
              runs.push_back(o);
            }
          }
        }
      }
      const auto results = cdpkit::harness::run_tree_variants(c, dt, runtime, runs, reps);
      cdpkit::harness::print_tree_results(std::cout, c, results);
      ok = cdpkit::harness::add_bench_rows(doc, results, [&](const auto& r) { return cdpkit::harness::to_bench_row(c, r); }) && ok;
    }
    cdpkit::harness::write_bench_document(doc, json_path, std::cout);
    return ok;
  });
}
