#include <cdpkit/harness/spmv_runs.hpp>

#include <cdpkit/harness/table.hpp>

#include <ostream>

namespace cdpkit::harness {

using harness::format;

spmv_case make_spmv_case(std::string input, const csr_matrix& a, std::uint64_t seed) {
  spmv_case c{std::move(input), &a, make_spmv_vector(a.cols, seed), {}};
  c.expected = spmv_reference(a, c.x);
  return c;
}

std::vector<spmv_run> run_spmv_variants(const spmv_case& c, const device_csr_matrix& da, launch_runtime& runtime,
                                        const std::vector<spmv_options>& runs, int reps,
                                        profiling::collector* collector) {
  spmv_engine engine(da);
  engine.set_x(c.x);
  std::vector<spmv_run> out;
  for (const spmv_options& o : runs) {
    spmv_stats stats;
    auto m = harness::measure(
        runtime, [&](cudaStream_t s) { stats = engine.run(o, runtime, s); },
        [&](cudaStream_t s) { engine.poison_y(s); },  // untimed: a run that writes nothing fails its check
        [&] { return spmv_mismatches(*c.a, c.x, engine.y(), c.expected); }, reps, /*traced=*/true, nullptr,
        collector, std::string("spmv::") + to_string(o.variant));
    out.push_back({o, std::move(m), stats});
  }
  return out;
}

namespace {
std::string threshold_cell(const spmv_run& r) {
  if (!r.stats.threshold) return "-";
  return std::to_string(*r.stats.threshold) + (r.stats.threshold_auto ? " (auto)" : "");
}
}  // namespace

void print_spmv_results(std::ostream& out, const spmv_case& c, const std::vector<spmv_run>& runs) {
  const csr_matrix& a = *c.a;
  out << "\nspmv " << c.input << ": " << a.rows << " x " << a.cols << ", " << a.nnz() << " nonzeros, longest row "
      << a.max_row_length() << "\n";
  const spmv_run* base = nullptr;
  for (const auto& b : runs)
    if (b.options.variant == spmv_variant::cusparse) base = &b;
  text_table table({"variant", "T", "ms", "Gnnz/s", "vs cusparse", "launches", "tiny %", "max depth", "fallbacks",
                    "warp eff", "check"});
  for (const auto& r : runs) {
    const auto& s = r.m.summary;
    const double ms = r.m.time.median_ms;
    table.add_row({to_string(r.options.variant), threshold_cell(r), format("%.3f", ms),
                   format("%.2f", ms > 0 ? static_cast<double>(a.nnz()) / ms / 1e6 : 0.0),
                   ratio_text(base ? base->m.time.median_ms : 0, ms), std::to_string(s.child_launches),
                   s.child_launches > 0 ? format("%.1f", 100.0 * s.tiny_grid_share) : "-",
                   s.child_launches > 0 ? std::to_string(s.max_depth) : "-", std::to_string(s.fallbacks),
                   s.warp_efficiency >= 0 ? format("%.3f", s.warp_efficiency) : "-", check_text(r.m)});
  }
  table.print(out);
  out << "ms: median of the timed runs (tracing off), y = A x from x on the device. vs cusparse: its time / this "
         "variant's, same run (>1 = faster). T: the launch threshold (auto: picked on the device from the row "
         "lengths). launches, tiny % (child grids over fewer than 32 nonzeros), fallbacks, warp eff: one traced "
         "run. check: every row against the double-precision reference (relative tolerance "
      << format("%.0e", spmv_default_rel_tol) << " of the row's sum of |a x|).\n";
}

bench_row to_bench_row(const spmv_case& c, const spmv_run& r) {
  bench_row row;
  row.family = "spmv";
  row.input = c.input;
  row.variant = to_string(r.options.variant);
  row.baseline = to_string(spmv_variant::cusparse);
  row.params = {{"rows", c.a->rows},
                {"cols", c.a->cols},
                {"longest_row", c.a->max_row_length()},
                {"child_block_threads", r.options.child_block_threads}};
  if (r.stats.threshold) {
    row.params["threshold"] = *r.stats.threshold;
    row.params["threshold_auto"] = r.stats.threshold_auto;
  }
  row.n = c.a->rows;
  row.work = c.a->nnz();
  row.work_unit = "nonzeros";
  row.throughput_unit = "Gnnz/s";
  row.m = r.m;
  return row;
}

}  // namespace cdpkit::harness
