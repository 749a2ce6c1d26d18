#include <cdpkit/harness/tree_runs.hpp>

#include <cdpkit/harness/table.hpp>

#include <ostream>

namespace cdpkit::harness {

using harness::format;

tree_case make_tree_case(std::string input, const tree& t) {
  tree_case c{std::move(input), &t, tree_top_down_reference(t), tree_bottom_up_reference(t), 0};
  for (const std::uint32_t d : c.top_down.depth) c.height = std::max(c.height, d);
  return c;
}

std::vector<tree_run> run_tree_variants(const tree_case& c, const device_tree& dt, launch_runtime& runtime,
                                        const std::vector<tree_options>& runs, int reps,
                                        profiling::collector* collector) {
  tree_engine engine(dt);
  std::vector<tree_run> out;
  for (const tree_options& o : runs) {
    tree_stats stats;
    auto m = harness::measure(
        runtime, [&](cudaStream_t s) { stats = engine.run(o, runtime, s); }, {},
        [&] {
          std::uint64_t bad = 0;
          if (o.op == tree_op::top_down) {
            const auto got = engine.top_down();
            for (std::size_t k = 0; k < got.depth.size(); ++k)
              bad += got.depth[k] != c.top_down.depth[k] || got.path_sum[k] != c.top_down.path_sum[k];
          } else {
            const auto got = engine.bottom_up();
            for (std::size_t k = 0; k < got.size.size(); ++k)
              bad += got.size[k] != c.bottom_up.size[k] || got.sum[k] != c.bottom_up.sum[k];
          }
          return bad;
        },
        reps, /*traced=*/true, nullptr, collector, std::string("tree::") + to_string(o.variant));
    out.push_back({o, std::move(m), stats});
  }
  return out;
}

namespace {
std::string threshold_cell(const tree_options& o) {
  if (o.variant == tree_variant::level_sync || o.variant == tree_variant::recursive_naive) return "-";
  return std::to_string(o.effective_threshold());
}
}  // namespace

void print_tree_results(std::ostream& out, const tree_case& c, const std::vector<tree_run>& runs) {
  out << "\ntree " << c.input << ": " << c.t->num_nodes() << " nodes, height " << c.height << ", "
      << c.t->leaves() << " leaves, widest node " << c.t->max_children() << " children\n";
  text_table table({"variant", "op", "T", "ms", "Mnodes/s", "vs level_sync", "launches", "tiny %", "max depth",
                    "fallbacks", "warp eff", "check"});
  for (const auto& r : runs) {
    const tree_run* base = nullptr;
    for (const auto& b : runs)
      if (b.options.variant == tree_variant::level_sync && b.options.op == r.options.op) base = &b;
    const auto& s = r.m.summary;
    const double ms = r.m.time.median_ms;
    table.add_row({to_string(r.options.variant), to_string(r.options.op), threshold_cell(r.options),
                   format("%.3f", ms), format("%.1f", ms > 0 ? c.t->num_nodes() / ms / 1e3 : 0.0),
                   ratio_text(base ? base->m.time.median_ms : 0, ms), std::to_string(s.child_launches),
                   s.child_launches > 0 ? format("%.1f", 100.0 * s.tiny_grid_share) : "-",
                   s.child_launches > 0 ? std::to_string(s.max_depth) : "-", std::to_string(s.fallbacks),
                   s.warp_efficiency >= 0 ? format("%.3f", s.warp_efficiency) : "-", check_text(r.m)});
  }
  table.print(out);
  out << "ms: median of the timed runs (tracing off), the whole traversal. vs level_sync: its time / this "
         "variant's, same operation, same run (>1 = faster). launches, tiny % (child grids over fewer than 32 "
         "nodes), max depth (of the child grids; the layer's cap stops the recursion there and the rest is "
         "walked), fallbacks (refused launches, walked instead), warp eff (active lanes / 32 over the walks' "
         "steps and the child grids' nodes): one traced run. check: every node against the CPU reference.\n";
}

bench_row to_bench_row(const tree_case& c, const tree_run& r) {
  bench_row row;
  row.family = "tree";
  row.input = c.input;
  row.variant = std::string(to_string(r.options.variant)) + "/" + to_string(r.options.op);
  row.baseline = std::string(to_string(tree_variant::level_sync)) + "/" + to_string(r.options.op);
  row.params = {{"threshold", r.options.effective_threshold()},
                {"child_block_threads", r.options.child_block_threads},
                {"op", to_string(r.options.op)},
                {"height", c.height},
                {"levels", r.stats.levels},
                {"pool_refusals", r.stats.pool_refusals}};
  if (r.options.variant == tree_variant::device_driver) {
    row.params["device_levels"] = r.stats.device_levels;
    row.params["handed_back"] = r.stats.driver_handed_back;
    if (r.options.op == tree_op::bottom_up) row.params["host_added_levels"] = r.stats.host_added_levels;
  }
  row.n = c.t->num_nodes();
  row.work = c.t->num_nodes();
  row.work_unit = "nodes";
  row.throughput_unit = "Gnodes/s";
  row.m = r.m;
  return row;
}

}  // namespace cdpkit::harness
