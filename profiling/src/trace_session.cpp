// RAII trace sessions and the trace summary.

#include <cdpkit/profiling/trace_session.hpp>

#include <algorithm>

namespace cdpkit::profiling {

trace_summary summarize(const trace_snapshot& snapshot) {
  trace_summary s;
  std::uint64_t active = 0, warps = 0;
  double efficiency_sum = 0.0;
  for (const site_counters& c : snapshot.sites) {
    s.launch_requests += c.requests;
    s.child_launches += c.outcomes[static_cast<int>(launch_outcome::launched)];
    s.failed_launches += c.outcomes[static_cast<int>(launch_outcome::fallback_error)];
    s.fallbacks += c.outcomes[static_cast<int>(launch_outcome::fallback_budget)] +
                   c.outcomes[static_cast<int>(launch_outcome::fallback_depth)] +
                   c.outcomes[static_cast<int>(launch_outcome::fallback_error)];
    s.tiny_launches += c.tiny_launches;
    s.max_depth = std::max(s.max_depth, c.max_depth);
    s.probe_steps += c.probe_steps;
    active += c.probe_active_lanes;
    warps += c.probe_warps;
    efficiency_sum += c.efficiency_sum;
  }
  s.tiny_grid_share =
      s.child_launches > 0 ? static_cast<double>(s.tiny_launches) / s.child_launches : 0.0;
  s.pending_high_water = snapshot.totals.pending_high_water;
  if (s.probe_steps > 0) s.warp_efficiency = static_cast<double>(active) / (32.0 * s.probe_steps);
  if (warps > 0) s.mean_warp_efficiency = efficiency_sum / static_cast<double>(warps);
  return s;
}

trace_session::trace_session(launch_runtime& runtime)
    : runtime_(runtime), was_tracing_(runtime.tracing()) {
  runtime_.reset_trace();
  runtime_.set_tracing(true);
}

trace_session::~trace_session() { runtime_.set_tracing(was_tracing_); }

trace_snapshot trace_session::collect() const { return runtime_.snapshot(); }

void trace_session::restart() { runtime_.reset_trace(); }

}  // namespace cdpkit::profiling
