#include <cdpkit/harness/bezier_runs.hpp>

#include <cdpkit/harness/table.hpp>

#include <cdpkit/error.hpp>

#include <algorithm>
#include <cmath>
#include <ostream>

namespace cdpkit::harness {

using harness::format;

bezier_case make_bezier_case(std::string input, const curve_set& set, float tolerance, std::uint32_t cap) {
  bezier_case c;
  c.input = std::move(input);
  c.set = &set;
  c.tolerance = tolerance;
  c.cap = cap;
  c.offsets = tessellation_offsets(set, tolerance, cap);
  c.expected = tessellate_reference(set, tolerance, cap);
  c.abs_tol = reference_tolerance(set);
  for (std::size_t i = 0; i + 1 < c.offsets.size(); ++i)
    c.max_points = std::max(c.max_points, c.offsets[i + 1] - c.offsets[i]);
  return c;
}

std::vector<bezier_run> run_bezier_variants(const bezier_case& c, const device_curves& dc, launch_runtime& runtime,
                                            std::vector<tessellation_options> runs, int reps,
                                            profiling::collector* collector) {
  tessellation_engine engine(dc);
  std::vector<bezier_run> out;
  for (tessellation_options& o : runs) {
    o.tolerance = c.tolerance;
    o.cap = c.cap;
    tessellation_stats stats;
    auto m = harness::measure(
        runtime, [&](cudaStream_t s) { stats = engine.run(o, runtime, s); },
        [&](cudaStream_t s) { engine.poison_points(s); },  // untimed: a point left unwritten fails the check
        [&] { return tessellation_mismatches(engine.points(), c.expected, c.abs_tol); }, reps, /*traced=*/true,
        nullptr, collector, std::string("bezier::") + to_string(o.variant));
    out.push_back({o, std::move(m), stats});
  }
  return out;
}

namespace {
std::string threshold_cell(const bezier_run& r) {
  if (!r.stats.threshold) return "-";
  return std::to_string(*r.stats.threshold) + (r.stats.threshold_auto ? " (auto)" : "");
}
}  // namespace

void print_bezier_results(std::ostream& out, const bezier_case& c, const std::vector<bezier_run>& runs) {
  const std::uint64_t points = c.expected.size();
  out << "\nbezier " << c.input << ": " << c.set->curves.size() << " curves, " << points << " points (tolerance "
      << c.tolerance << " px, cap " << c.cap << "), most points of a curve " << c.max_points << "\n";
  const bezier_run* base = nullptr;
  for (const auto& b : runs)
    if (b.options.variant == loop_policy_kind::flat_balanced) base = &b;
  text_table table({"variant", "T", "ms", "Gpoints/s", "vs flat", "launches", "tiny %", "max depth", "fallbacks",
                    "warp eff", "check"});
  for (const auto& r : runs) {
    const auto& s = r.m.summary;
    const double ms = r.m.time.median_ms;
    table.add_row({to_string(r.options.variant), threshold_cell(r), format("%.3f", ms),
                   format("%.2f", ms > 0 ? static_cast<double>(points) / ms / 1e6 : 0.0),
                   ratio_text(base ? base->m.time.median_ms : 0, ms), std::to_string(s.child_launches),
                   s.child_launches > 0 ? format("%.1f", 100.0 * s.tiny_grid_share) : "-",
                   s.child_launches > 0 ? std::to_string(s.max_depth) : "-", std::to_string(s.fallbacks),
                   s.warp_efficiency >= 0 ? format("%.3f", s.warp_efficiency) : "-", check_text(r.m)});
  }
  table.print(out);
  out << "ms: median of the timed runs (tracing off): the counts, their scan and the points, from the curves on the "
         "device. vs flat: flat_balanced's time / this variant's, same run (>1 = faster). T: the launch threshold "
         "(auto: picked on the device from the point counts). launches, tiny % (child grids over fewer than 32 "
         "points), fallbacks, warp eff: one traced run. check: every point against the CPU tessellation (within "
      << format("%.2g", static_cast<double>(c.abs_tol)) << " px).\n";
}

curve_window picture_window(const bezier_case& c, std::size_t target_curves) {
  const curve_window box = end_point_bounds(*c.set);  // throws for an empty set
  const std::size_t n = c.set->curves.size();
  if (n <= target_curves) return box;
  const double w = static_cast<double>(box.max_x) - box.min_x, h = static_cast<double>(box.max_y) - box.min_y;
  const double half =
      0.5 * std::max(16.0, std::sqrt(w * h * static_cast<double>(target_curves) / static_cast<double>(n)));
  const double cx = 0.5 * (static_cast<double>(box.min_x) + box.max_x);
  const double cy = 0.5 * (static_cast<double>(box.min_y) + box.max_y);
  return curve_window{static_cast<float>(cx - half), static_cast<float>(cy - half), static_cast<float>(cx + half),
                      static_cast<float>(cy + half)};
}

bench_row to_bench_row(const bezier_case& c, const bezier_run& r) {
  bench_row row;
  row.family = "bezier";
  row.input = c.input;
  row.variant = to_string(r.options.variant);
  row.baseline = to_string(loop_policy_kind::flat_balanced);
  row.params = {{"curves", c.set->curves.size()},
                {"tolerance", c.tolerance},
                {"cap", c.cap},
                {"max_points", c.max_points},
                {"child_block_threads", r.options.child_block_threads}};
  if (r.stats.threshold) {
    row.params["threshold"] = *r.stats.threshold;
    row.params["threshold_auto"] = r.stats.threshold_auto;
  }
  row.n = c.set->curves.size();
  row.work = c.expected.size();
  row.work_unit = "points";
  row.throughput_unit = "Gpoints/s";
  row.m = r.m;
  return row;
}

}  // namespace cdpkit::harness
