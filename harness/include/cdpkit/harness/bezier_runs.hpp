#pragma once
// The Bézier tessellation runs shared by the sample and the benchmark: run variants (loop-to-child
// policies over the curves) on one curve set with the measurement protocol, check every run's
// points against the CPU tessellation, print the table.

#include <cdpkit/bezier.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/tessellation.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace cdpkit::harness {

/// One curve set, its tolerance and cap, and the reference tessellation.
struct bezier_case {
  std::string input;  ///< e.g. "random:1048576"
  const curve_set* set;
  float tolerance = default_tolerance;
  std::uint32_t cap = default_point_cap;
  std::vector<std::uint32_t> offsets;  ///< tessellation_offsets
  std::vector<vec2> expected;          ///< tessellate_reference
  float abs_tol = 0.0f;                ///< reference_tolerance
  std::uint32_t max_points = 0;        ///< the largest point count of a curve
};

/// The reference tessellation of `set` (which must outlive the case). Throws what
/// tessellate_reference throws.
bezier_case make_bezier_case(std::string input, const curve_set& set, float tolerance, std::uint32_t cap);

/// One variant's result: its options, times (and what was collected), and its last run's stats.
struct bezier_run {
  tessellation_options options;
  measurement m;
  tessellation_stats stats;
};

/// Run each options entry (their tolerance and cap are the case's); `collector` (may be null):
/// what to collect beside the timing (harness::measure), ranges named "bezier::<variant>". Every
/// run's points checked against the reference (NaN-poisoned before each run, untimed).
std::vector<bezier_run> run_bezier_variants(const bezier_case& c, const device_curves& dc, launch_runtime& runtime,
                                            std::vector<tessellation_options> runs, int reps,
                                            profiling::collector* collector = nullptr);

/// The table: ms, Gpoints/s, the ratio to flat_balanced (when it ran), launches, tiny grids,
/// fallbacks, warp efficiency, check.
void print_bezier_results(std::ostream& out, const bezier_case& c, const std::vector<bezier_run>& runs);

/// The sample's picture window: a square at the centre of the set's end points
/// (end_point_bounds), as large as the share of that box in which about `target_curves` curves
/// of an evenly spread set start (the whole box for smaller sets), at least 16 px: the mostly
/// flat curves as a few dots each, and the dense dotted arcs of the very curved ones passing
/// through. (A very curved curve is large: its points span about a quarter of its bend, so a
/// window around the curve with the most points would span the whole plane.) Throws
/// cdpkit::input_error for an empty set.
curve_window picture_window(const bezier_case& c, std::size_t target_curves = 600);

/// family "bezier", baseline "flat_balanced", work = points.
bench_row to_bench_row(const bezier_case& c, const bezier_run& r);

}  // namespace cdpkit::harness
