// The cost of collecting: a run's collection times over its baseline, and a whole profile's.

#include "detail.hpp"

#include <optional>

namespace cdpkit::report {

namespace {
/// The yardstick of a run's collection times: the untraced runs made as the collection runs were,
/// when the profile has them, else the timed median.
double collection_baseline(const run_profile& run) {
  return run.collect.baseline_ms && *run.collect.baseline_ms > 0 ? *run.collect.baseline_ms : run.ms;
}
}  // namespace

collect_overhead collection_overhead(const run_profile& run) {
  collect_overhead o;
  const double base = collection_baseline(run);
  if (base <= 0) return o;
  const auto over = [&](const std::optional<double>& ms) { return ms ? std::optional<double>(*ms / base) : std::nullopt; };
  o.traced = over(run.collect.traced_ms);
  o.metrics = over(run.collect.metrics_ms);
  o.timeline = over(run.collect.timeline_ms);
  return o;
}

sample_overhead sample_collection_overhead(const profile& p) {
  sample_overhead o;
  for (const auto& run : p.runs) {
    const double base = collection_baseline(run);
    if (base <= 0) continue;
    const auto add = [&](sample_overhead::part& part, const std::optional<double>& ms) {
      if (!ms) return;
      part.ms += *ms;
      part.baseline_ms += base;
      ++part.runs;
    };
    add(o.traced, run.collect.traced_ms);
    add(o.metrics, run.collect.metrics_ms);
    add(o.timeline, run.collect.timeline_ms);
  }
  return o;
}

}  // namespace cdpkit::report
