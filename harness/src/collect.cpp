// The samples' --collect option, the collector table (cdpkit/harness/collect.hpp).

#include <cdpkit/harness/collect.hpp>

#include <cdpkit/harness/table.hpp>
#include <cdpkit/profiling/pm_sampler.hpp>

#include <cmath>
#include <ostream>

namespace cdpkit::harness {

profiling::collect_options collect_spec::options() const {
  profiling::collect_options o = profiling::parse_collect(parts);
  o.interval_ns = static_cast<std::uint64_t>(std::llround(interval_us * 1000.0));
  return o;
}

void add_collect_options(CLI::App& app, collect_spec& spec) {
  app.add_option("--collect", spec.parts,
                 "what to collect beside the timing: none, trace (the device launch trace), "
                 "metrics (CUPTI range-profiler counters and the CTA accounting, one more run per "
                 "variant), timeline (PM sampling of SM activity during the traced run), all; or a "
                 "comma-separated list")
      ->capture_default_str();
  app.add_option("--pm-interval-us", spec.interval_us, "PM sampling interval of the timeline (us)")
      ->capture_default_str()
      ->check(finite_number(1.0, 1e6));
}

void add_sample_options(CLI::App& app, sample_options& o) {
  add_launch_options(app, o.launch);
  app.add_option("--profile", o.profile_path,
                 std::string("write the profile JSON (") + schema::profile_schema + ") here")
      ->check(output_file("a JSON document", '{'));
  add_collect_options(app, o.collect);
}

std::string accounting_text(const schema::cta_accounting& a) {
  const std::int64_t d = a.unaccounted(), t = a.unaccounted_threads();
  switch (schema::classify(a)) {
    case schema::accounting_status::exact: return "exact";
    case schema::accounting_status::device_runtime: return "+" + std::to_string(d) + " runtime";
    case schema::accounting_status::driver_transfers:
      return d > 0 ? "+" + std::to_string(d) + " copies" : "+" + std::to_string(t) + " threads, copies";
    case schema::accounting_status::missing_ctas:
      return d < 0 ? std::to_string(d) + " missing!" : std::to_string(t) + " threads missing!";
    case schema::accounting_status::extra_ctas: return "+" + std::to_string(d) + " unaccounted!";
  }
  return "?";
}

void print_collected(std::ostream& out, const std::vector<collected_row>& rows,
                     const profiling::collector& collector) {
  const auto& o = collector.options();
  if (o.any_cupti()) {
    text_table table({"variant", "probe eff", "hw eff", "CTAs", "host blocks", "child blocks", "accounting",
                      "SM active %", "trace x", "metrics x", "timeline x"});
    const auto ratio = [](const std::optional<double>& ms, double base) {
      return ms && base > 0 ? format("%.2fx", *ms / base) : std::string("-");
    };
    // the whole sample: per part, its runs' times summed over the same runs' baselines summed
    struct sum {
      double ms = 0, base = 0;
      void add(const std::optional<double>& t, double b) {
        if (t && b > 0) ms += *t, base += b;
      }
      [[nodiscard]] std::string text() const { return base > 0 ? format("%.2fx", ms / base) : std::string("-"); }
    } traced, metrics, timeline;
    for (const auto& r : rows) {
      const measurement& m = *r.m;
      const auto& c = m.collected;
      const double base = c.times.baseline_ms.value_or(m.time.median_ms);
      traced.add(c.times.traced_ms, base);
      metrics.add(c.times.metrics_ms, base);
      timeline.add(c.times.timeline_ms, base);
      std::string hw = "-", ctas = "-", host = "-", child = "-", acc = "-", active = "-";
      if (c.hardware) {
        if (const auto e = c.hardware->warp_efficiency()) hw = format("%.3f", *e);
        if (c.hardware->accounting) {
          const auto& a = *c.hardware->accounting;
          ctas = std::to_string(a.hardware_ctas);
          host = std::to_string(a.host_blocks);
          child = std::to_string(a.child_blocks);
          acc = accounting_text(a);
        }
      }
      if (c.timeline)
        if (const auto v = c.timeline->mean(profiling::default_pm_metrics().front()))
          active = format("%.1f", *v);
      table.add_row({r.variant, m.summary.warp_efficiency >= 0 ? format("%.3f", m.summary.warp_efficiency) : "-", hw,
                     ctas, host, child, acc, active, ratio(c.times.traced_ms, base), ratio(c.times.metrics_ms, base),
                     ratio(c.times.timeline_ms, base)});
    }
    if (rows.size() > 1)
      table.add_row({"whole sample", "", "", "", "", "", "", "", traced.text(), metrics.text(), timeline.text()});
    out << "\nCollected (CUPTI):\n";
    table.print(out);
    out << "probe eff: the trace's warp probes; hw eff: thread / warp instructions / 32 over the measured run "
           "(children included). CTAs = host blocks + child blocks + the device runtime's own (runtime: each of 1 to "
           "32 threads; copies: the driver's copy and memset kernels). SM active: "
           "mean over the sampled run. trace x .. timeline x: that collection's fastest run over the fastest of untraced "
           "runs made the same way (the preparation waited for, then the run between two events; the timed runs "
           "overlap the next run's submission with the GPU's work, these do not; for runs under "
        << collection_short_ms << " ms, " << trace_pairs << " untraced and " << trace_pairs
        << " traced, alternating, and " << collection_reps
        << " of each CUPTI collection). whole sample: per part, the runs' times summed over "
           "their baselines summed (a part's cost per run is mostly fixed: sub-millisecond runs show it as a large "
           "ratio of their own).\n";
  }
  for (const auto& n : collector.notes()) out << "collector: " << n << "\n";
}

}  // namespace cdpkit::harness
