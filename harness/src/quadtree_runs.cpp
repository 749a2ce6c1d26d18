#include <cdpkit/harness/quadtree_runs.hpp>

#include <cdpkit/harness/table.hpp>

#include <ostream>

namespace cdpkit::harness {

using harness::format;

quadtree_case make_quadtree_case(std::string input, const std::vector<point2>& points, const quadtree_params& params) {
  return {std::move(input), &points, params, quadtree_reference(points, params)};
}

std::vector<quadtree_run> run_quadtree_variants(const quadtree_case& c, const device_points& dp, launch_runtime& runtime,
                                                const std::vector<quadtree_options>& runs, int reps,
                                                profiling::collector* collector) {
  quadtree_engine engine(dp);
  std::vector<quadtree_run> out;
  for (quadtree_options o : runs) {
    o.params = c.params;
    quadtree_stats stats;
    auto m = harness::measure(
        runtime, [&](cudaStream_t s) { stats = engine.run(o, runtime, s); }, {},
        [&] { return compare_quadtrees(c.reference, engine.result()); }, reps, /*traced=*/true, nullptr, collector,
        std::string("quadtree::") + to_string(o.variant));
    out.push_back({o, std::move(m), stats});
  }
  return out;
}

void print_quadtree_results(std::ostream& out, const quadtree_case& c, const std::vector<quadtree_run>& runs) {
  out << "\nquadtree over " << c.input << ": " << c.points->size() << " points, max depth " << c.params.max_depth
      << ", split above " << c.params.min_points << " points: " << c.reference.nodes << " nodes, "
      << c.reference.leaves.size() << " leaves, height " << c.reference.height << "\n";
  const quadtree_run* base = nullptr;
  for (const auto& r : runs)
    if (r.options.variant == quadtree_variant::morton) base = &r;
  text_table table({"variant", "T", "ms", "Mpoints/s", "vs morton", "launches", "tiny %", "max depth", "fallbacks",
                    "check"});
  for (const auto& r : runs) {
    const auto& s = r.m.summary;
    const double ms = r.m.time.median_ms;
    table.add_row({to_string(r.options.variant),
                   r.options.variant == quadtree_variant::thresholded ? std::to_string(r.options.threshold.value_or(4096u))
                                                                      : "-",
                   format("%.3f", ms), format("%.1f", ms > 0 ? c.points->size() / ms / 1e3 : 0.0),
                   ratio_text(base ? base->m.time.median_ms : 0, ms), std::to_string(s.child_launches),
                   s.child_launches > 0 ? format("%.1f", 100.0 * s.tiny_grid_share) : "-",
                   s.child_launches > 0 ? std::to_string(s.max_depth) : "-", std::to_string(s.fallbacks),
                   check_text(r.m)});
  }
  table.print(out);
  out << "ms: median of the timed runs (tracing off), the whole build from the points' cells. vs morton: its time / "
         "this variant's, same run (>1 = faster). launches, tiny % (child grids over fewer than 32 points), max depth, "
         "fallbacks (refused launches, refined by the block instead): one traced run. check: the same leaves with "
         "the same points as the CPU reference.\n";
}

bench_row to_bench_row(const quadtree_case& c, const quadtree_run& r) {
  bench_row row;
  row.family = "quadtree";
  row.input = c.input;
  row.variant = to_string(r.options.variant);
  row.baseline = to_string(quadtree_variant::morton);
  row.params = {{"max_depth", c.params.max_depth},
                {"min_points", c.params.min_points},
                {"nodes", r.stats.nodes},
                {"leaves", r.stats.leaves}};
  if (r.options.variant == quadtree_variant::thresholded) row.params["threshold"] = r.options.threshold.value_or(4096u);
  if (r.options.variant == quadtree_variant::device_driver) {
    row.params["levels"] = r.stats.levels;
    row.params["handed_back"] = r.stats.driver_handed_back;
  }
  row.n = c.points->size();
  row.work = c.points->size();
  row.work_unit = "points";
  row.throughput_unit = "Gpoints/s";
  row.m = r.m;
  return row;
}

}  // namespace cdpkit::harness
