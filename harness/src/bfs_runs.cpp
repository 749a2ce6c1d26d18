#include <cdpkit/harness/bfs_runs.hpp>

#include <cdpkit/harness/table.hpp>

#include <ostream>

namespace cdpkit::harness {

using harness::format;

bfs_case make_bfs_case(std::string input, const csr_graph& graph, std::uint32_t source) {
  bfs_case c{std::move(input), &graph, source, bfs_reference(graph, source), 0, 0};
  c.traversed_edges = bfs_traversed_edges(graph, c.reference);
  for (auto l : c.reference)
    if (l != bfs_unreached && l + 1 > c.num_levels) c.num_levels = l + 1;
  return c;
}

std::vector<bfs_run> run_bfs_variants(const bfs_case& c, const device_graph& graph,
                                      launch_runtime& runtime, std::vector<bfs_options> variants,
                                      int reps, profiling::collector* collector) {
  bfs_engine engine(graph);
  std::vector<bfs_run> runs;
  for (bfs_options o : variants) {
    if (o.variant == bfs_variant::device_driver && !o.threshold)
      o.threshold = default_bfs_threshold(*c.graph, o, runtime.pending_budget());
    bfs_stats stats;
    auto m = harness::measure(
        runtime, [&](cudaStream_t s) { stats = engine.run(c.source, o, runtime, s); }, {},
        [&] {
          const auto got = engine.levels();
          std::uint64_t bad = 0;
          for (std::size_t k = 0; k < got.size(); ++k) bad += got[k] != c.reference[k];
          return bad;
        },
        reps, /*traced=*/true, nullptr, collector, "bfs::" + to_string(o.choice()));
    runs.push_back({o, std::move(m), stats, runtime.pending_launch_limit()});
  }
  return runs;
}

namespace {
const bfs_run* find(const std::vector<bfs_run>& runs, bfs_variant v) {
  for (const auto& r : runs)
    if (r.options.variant == v) return &r;
  return nullptr;
}

std::string threshold_cell(const bfs_run& r) {
  switch (r.options.variant) {
    case bfs_variant::serial_loop:
    case bfs_variant::flat_balanced:
    case bfs_variant::child_per_thread: return "-";
    default: break;
  }
  if (r.options.threshold) return std::to_string(*r.options.threshold);
  return "auto";
}
}  // namespace

void print_bfs_results(std::ostream& out, const bfs_case& c, const std::vector<bfs_run>& runs) {
  out << "\nBFS on " << c.input << ": " << c.graph->num_vertices << " vertices, "
      << c.graph->num_edges() << " directed edges, max degree " << c.graph->max_degree()
      << "; source " << c.source << ", " << c.num_levels << " levels, " << c.traversed_edges
      << " edges in the reached component\n";
  harness::text_table table({"variant", "T", "limit", "ms", "GTEPS", "levels", "vs serial_loop",
                               "vs flat_bal",
                               "launches", "tiny %", "fallbacks", "pending hw", "warp eff",
                               "check"});
  const bfs_run* base = find(runs, bfs_variant::serial_loop);
  const bfs_run* flat = find(runs, bfs_variant::flat_balanced);
  for (const auto& r : runs) {
    const auto& s = r.m.summary;
    const double ms = r.m.time.median_ms;
    table.add_row({to_string(r.options.choice()), threshold_cell(r),
                   std::to_string(r.pending_launch_limit), format("%.3f", ms),
                   format("%.2f", ms > 0 ? c.traversed_edges / ms / 1e6 : 0.0),
                   std::to_string(r.stats.num_levels), ratio_text(base ? base->m.time.median_ms : 0, ms),
                   ratio_text(flat ? flat->m.time.median_ms : 0, ms), std::to_string(s.child_launches),
                   s.child_launches > 0 ? format("%.1f", 100.0 * s.tiny_grid_share) : "-",
                   std::to_string(s.fallbacks), std::to_string(s.pending_high_water),
                   s.warp_efficiency >= 0 ? format("%.3f", s.warp_efficiency) : "-",
                   check_text(r.m)});
  }
  table.print(out);
  out << "ms: median of timed runs (tracing off), whole BFS incl. the host's per-level round trips."
         " GTEPS: Graph500 counting. launches .. warp eff: one traced run. check: every level"
         " equals the CPU reference. T auto: chosen per level on the device. limit: the device's"
         " pending launch limit.\n";
}

namespace {
nlohmann::json params_of(const bfs_run& r) {
  nlohmann::json p = nlohmann::json::object();
  if (r.options.threshold) p["threshold"] = *r.options.threshold;
  p["serial_item_ns"] = r.options.cost_model.serial_item_ns;
  p["pending_launch_limit"] = r.pending_launch_limit;
  p["levels"] = r.stats.num_levels;
  if (r.options.variant == bfs_variant::device_driver) {
    p["device_levels"] = r.stats.device_levels;
    p["handed_back"] = r.stats.driver_handed_back;
  }
  return p;
}
}  // namespace

bench_row to_bench_row(const bfs_case& c, const bfs_run& r) {
  bench_row row;
  row.family = "bfs";
  row.input = c.input;
  row.variant = to_string(r.options.choice());
  row.baseline = to_string(bfs_variant::serial_loop);  // the ratios compare to the lecture's baseline
  row.params = params_of(r);
  row.n = c.graph->num_vertices;
  row.work = c.traversed_edges;
  row.work_unit = "edges";
  row.throughput_unit = "GTEPS";
  row.m = r.m;
  return row;
}

}  // namespace cdpkit::harness
