#pragma once
// The quadtree runs shared by the sample and the benchmark: build with each variant under the
// measurement protocol, check every build against the CPU reference, print the table.

#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/quadtree.hpp>
#include <cdpkit/quadtree_build.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace cdpkit::harness {

/// The meshes scripts/real-points extracts into out/data/meshes (CGAL's demo data): the real
/// point sets quadtree_bench and the tests read, skipping those absent.
inline constexpr const char* real_point_meshes[] = {"armadillo.off", "bunny00.off", "refined_elephant.off"};

/// One point set, its parameters and the CPU reference tree.
struct quadtree_case {
  std::string input;  ///< e.g. "clustered:4194304"
  const std::vector<point2>* points;
  quadtree_params params;
  quadtree reference;
};

/// The reference tree of `points` under `params` (quadtree_reference). `points` must outlive the
/// case; throws what quadtree_reference throws (cdpkit::input_error for bad params).
quadtree_case make_quadtree_case(std::string input, const std::vector<point2>& points, const quadtree_params& params);

/// One variant's result: its options, times (and what was collected), and its last run's stats.
struct quadtree_run {
  quadtree_options options;
  measurement m;
  quadtree_stats stats;
};

/// Run each options entry (their params replaced by the case's); `collector` may be null; ranges
/// are named "quadtree::<variant>".
std::vector<quadtree_run> run_quadtree_variants(const quadtree_case& c, const device_points& dp, launch_runtime& runtime,
                                                const std::vector<quadtree_options>& runs, int reps,
                                                profiling::collector* collector = nullptr);

/// The table: threshold, ms, Mpoints/s, the ratio to morton (when it ran), launches, tiny grids,
/// max depth, fallbacks, check.
void print_quadtree_results(std::ostream& out, const quadtree_case& c, const std::vector<quadtree_run>& runs);

/// family "quadtree", work = points (cdpkit-bench/1 row).
bench_row to_bench_row(const quadtree_case& c, const quadtree_run& r);

}  // namespace cdpkit::harness
