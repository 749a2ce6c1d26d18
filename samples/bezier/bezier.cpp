// bezier — Bézier tessellation, each curve's points a segment of loop-to-child: how many points a
// curve needs depends on its curvature (Wang's flatness bound), so on a set of mostly flat curves
// with a power-law tail of very curved ones a thread per curve leaves its warp idle, a child grid
// per curve drowns in tiny grids, and thresholds and one grid per warp or block pay; the flat
// point grid is the yardstick without child grids.
//
// 1. Generate or read the curves (random:N, straight:N, extreme:N, font:PATH[:PIXELS]).
// 2. The CPU tessellation: the reference of every check.
// 3. Write an SVG picture of a window of the CPU tessellation (points coloured by their curve's
//    point count; every variant's points must match it).
// 4. Run each variant: timed with tracing off, one traced run, every point checked.
// 5. Print the table; write the profile with --profile (the picture inside, for the report).
//    Exit 1 if any check failed.
//
//   bezier --curves random:2^20 --svg bezier.svg --profile bezier.json
//   bezier --curves font:/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:512 --variant block_aggregated,flat_balanced

#include <cdpkit/harness/bezier_runs.hpp>
#include <cdpkit/harness/collect.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/table.hpp>

#include <cdpkit/bezier.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/schema/text.hpp>
#include <cdpkit/tessellation.hpp>

#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>
#include <limits>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"bezier: every tessellation variant on one set of Bezier curves, timed, traced and checked"};
  std::string curves_spec = "random:2^18";
  std::vector<std::string> variant_names{"all"};
  std::optional<std::uint32_t> threshold;
  std::uint32_t child_block_threads = 256;
  float tolerance = cdpkit::default_tolerance;
  std::uint32_t cap = cdpkit::default_point_cap;
  std::uint64_t seed = 1;
  int reps = 5;
  std::string svg_path;  // no picture unless asked for: nothing lands in the working folder
  std::vector<float> window_box;
  app.add_option("--curves", curves_spec,
                 "random:N | straight:N | extreme:N (N decimal or 2^K) | font:PATH[:PIXELS] (every glyph, FreeType)")
      ->capture_default_str();
  app.add_option("--variant", variant_names,
                 "comma-separated: all, serial_loop, child_per_thread, thresholded, warp_aggregated, "
                 "block_aggregated, flat_balanced")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--threshold", threshold, "launch threshold T in points (default: picked on the device)");
  app.add_option("--child-block-threads", child_block_threads, "threads per block of the child grids")
      ->capture_default_str()
      ->check(CLI::Range(32, 1024));
  app.add_option("--tolerance", tolerance, "flatness tolerance in pixels (> 0)")->capture_default_str();
  app.add_option("--cap", cap, "most points of one curve")
      ->capture_default_str()
      ->check(CLI::Range(2u, cdpkit::max_point_cap));
  app.add_option("--seed", seed, "seed of the generators")->capture_default_str()
      ->check(cdpkit::harness::whole_number(std::numeric_limits<std::uint64_t>::max()));
  app.add_option("--reps", reps, "timed repetitions")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--svg", svg_path, "write the SVG picture of the curves here (default: none)");
  app.add_option("--window", window_box,
                 "the picture's window MIN_X,MIN_Y,MAX_X,MAX_Y in pixels (default: a square at the centre of "
                 "the curves, where about 600 of them start)")
      ->delimiter(',')
      ->expected(4);
  cdpkit::harness::sample_options opts;
  cdpkit::harness::add_sample_options(app, opts);
  return cdpkit::harness::run_program("bezier", app, argc, argv, [&] {
    CDPKIT_NVTX_SCOPE("bezier sample");
    const auto variants = cdpkit::harness::parse_name_list(variant_names, cdpkit::all_loop_policy_kinds(),
                                                           cdpkit::parse_loop_policy_kind);
    if (child_block_threads % 32 != 0)
      throw cdpkit::input_error("--child-block-threads must be a multiple of 32, got " +
                                std::to_string(child_block_threads));
    if (!(tolerance > 0.0f) || !std::isfinite(tolerance))
      throw cdpkit::input_error("--tolerance must be a finite number of pixels above 0, got " +
                                std::to_string(tolerance));
    std::optional<cdpkit::curve_window> window;
    if (!window_box.empty()) {
      window = cdpkit::curve_window{window_box[0], window_box[1], window_box[2], window_box[3]};
      if (!(window->max_x > window->min_x) || !(window->max_y > window->min_y) || !std::isfinite(window->min_x) ||
          !std::isfinite(window->min_y) || !std::isfinite(window->max_x) || !std::isfinite(window->max_y))
        throw cdpkit::input_error("--window must be MIN_X,MIN_Y,MAX_X,MAX_Y with MIN < MAX, finite");
    }
    const auto collect_options = opts.collect.options();
    // --svg: never over a file holding something else, and before any work
    cdpkit::harness::check_output_file("--svg", svg_path, "an SVG picture", '<');

    // the input and the reference first: a bad spec or font is one line and exit 2, with or without a GPU
    const cdpkit::curve_set set = cdpkit::load_curves(curves_spec, seed);
    const auto c = cdpkit::harness::make_bezier_case(curves_spec, set, tolerance, cap);
    // The picture is of the CPU tessellation, which every variant's points must match: made for
    // --svg (written now, so that an unwritable path fails before the GPU work) and for --profile
    // (the report shows it).
    std::vector<cdpkit::schema::picture> pictures;
    if ((!svg_path.empty() || !opts.profile_path.empty()) && !set.curves.empty()) {
      CDPKIT_NVTX_SCOPE("bezier::picture");
      std::ostringstream picture;
      cdpkit::svg_options so;
      const std::string name = cdpkit::schema::utf8_replaced("bezier " + curves_spec);  // (a path may be Latin-1)
      so.title = name + " (tolerance " + cdpkit::harness::format("%g", tolerance) + " px, cap " + std::to_string(cap) + ")";
      cdpkit::write_svg(picture, set, c.expected, c.offsets, window.value_or(cdpkit::harness::picture_window(c)), so);
      if (!svg_path.empty()) {
        try {
          cdpkit::schema::write_file_atomically(svg_path, picture.str());
        } catch (const cdpkit::schema::write_error& e) {
          throw cdpkit::input_error(std::string("--svg: ") + e.what());
        }
        std::cout << "picture written to " << svg_path << " (the CPU tessellation's points)\n";
      }
      pictures.push_back({name, picture.str()});
    }
    cdpkit::require_cuda_device();  // one clear line, exit 3 without a GPU

    cdpkit::launch_runtime runtime(opts.launch);
    const cdpkit::device_curves dc(set);
    std::vector<cdpkit::tessellation_options> runs;
    for (const auto v : variants) {
      cdpkit::tessellation_options o;
      o.variant = v;
      o.threshold = threshold;
      o.child_block_threads = child_block_threads;
      runs.push_back(o);
    }
    cdpkit::profiling::collector collector(collect_options);
    const auto results = cdpkit::harness::run_bezier_variants(c, dc, runtime, runs, reps, &collector);
    cdpkit::harness::print_bezier_results(std::cout, c, results);
    cdpkit::harness::finish_sample(
        std::cout, "bezier", opts, runtime, collector, results,
        [](const auto& r) { return std::string(cdpkit::to_string(r.options.variant)); },
        [&](const auto& r) { return cdpkit::harness::to_bench_row(c, r); }, pictures);
    return cdpkit::harness::all_verified(results);
  });
}
