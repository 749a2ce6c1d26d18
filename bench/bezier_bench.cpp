// bezier_bench — every tessellation variant in one process: 2^20 random curves (mostly flat, a
// power-law tail of very curved ones: where child grids must earn their launches against the
// flat point grid), 2^20 straight ones (2 points each: nothing to launch), 2^10 extreme ones (every
// curve at the cap), every glyph of DejaVu Sans where FreeType and the font are present (skipped
// with a message otherwise), and a threshold sweep on the random curves. JSON in the
// docs/bench-format.md shape.
//
//   bezier_bench --json bezier.json
//   bezier_bench --curves random:2^18,extreme:256 --reps 9

#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/bezier_runs.hpp>
#include <cdpkit/harness/program.hpp>

#include <cdpkit/bezier.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/tessellation.hpp>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"bezier_bench: every tessellation variant on random, straight, extreme and font curves"};
  std::vector<std::string> specs = {"random:2^20", "straight:2^20", "extreme:2^10"};
  std::vector<std::uint32_t> thresholds = {16, 128, 1024};
  std::string json_path, font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  int reps = 5;
  app.add_option("--curves", specs, "curve specs (as bezier --curves takes them)")->delimiter(',')->capture_default_str();
  cdpkit::harness::add_thresholds_option(
      app, thresholds, "the sweep on random curves: thresholded, warp_aggregated and block_aggregated at these T (points)");
  app.add_option("--font", font, "a font whose every glyph is one more input (empty: none)")->capture_default_str();
  cdpkit::harness::add_timing_options(app, reps, 100);
  app.add_option("--json", json_path, "write the rows (cdpkit-bench/1) here")
      ->check(cdpkit::harness::output_file("a JSON document", '{'));
  return cdpkit::harness::run_program("bezier_bench", app, argc, argv, [&] {
    cdpkit::require_cuda_device();  // first: one clear line and exit 3 without a GPU
    cdpkit::launch_runtime runtime;
    auto doc = cdpkit::harness::bench_document(cdpkit::profiling::device_json());
    std::vector<std::string> inputs = specs;
    if (!font.empty()) {
      if (!cdpkit::font_reader_available()) std::cout << "(no cdpkit::fonts part: cdpkit was built without FreeType; the font input is skipped)\n";
      else if (!std::filesystem::exists(font)) std::cout << "(" << font << " not found: skipped)\n";
      else inputs.push_back("font:" + font + ":256");
    }
    // every input first: a bad spec is one line and exit 2 before any run
    std::vector<cdpkit::curve_set> sets;
    for (const auto& spec : inputs) sets.push_back(cdpkit::load_curves(spec));
    bool ok = true;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const std::string& spec = inputs[k];
      const cdpkit::curve_set& set = sets[k];
      const auto c = cdpkit::harness::make_bezier_case(spec, set, cdpkit::default_tolerance, cdpkit::default_point_cap);
      const cdpkit::device_curves dc(set);
      std::vector<cdpkit::tessellation_options> runs;
      for (const auto v : cdpkit::all_loop_policy_kinds()) {
        cdpkit::tessellation_options o;
        o.variant = v;
        runs.push_back(o);
      }
      if (spec.rfind("random:", 0) == 0)
        for (const auto v : {cdpkit::loop_policy_kind::thresholded, cdpkit::loop_policy_kind::warp_aggregated,
                             cdpkit::loop_policy_kind::block_aggregated})
          for (const std::uint32_t t : thresholds) {
            cdpkit::tessellation_options o;
            o.variant = v;
            o.threshold = t;
            runs.push_back(o);
          }
      const auto results = cdpkit::harness::run_bezier_variants(c, dc, runtime, runs, reps);
      cdpkit::harness::print_bezier_results(std::cout, c, results);
      ok = cdpkit::harness::add_bench_rows(doc, results, [&](const auto& r) { return cdpkit::harness::to_bench_row(c, r); }) && ok;
    }
    cdpkit::harness::write_bench_document(doc, json_path, std::cout);
    return ok;
  });
}
