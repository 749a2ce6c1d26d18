#pragma once
// cdpkit/profiling/trace_session.hpp — RAII tracing of the launch layer around a run, and the
// summary figures the samples print.

#include <cdpkit/launch.hpp>

#include <cstdint>

namespace cdpkit::profiling {

/// The headline figures of a trace, as printed in sample tables and benchmark rows.
struct trace_summary {
  std::uint64_t launch_requests = 0;  ///< device launch requests (all outcomes)
  std::uint64_t child_launches = 0;   ///< requests that launched a child grid
  std::uint64_t fallbacks = 0;        ///< requests whose work was done inline instead
  std::uint64_t failed_launches = 0;  ///< fallbacks because the launch returned an error
  std::uint64_t tiny_launches = 0;    ///< launched grids with fewer than tiny_grid_work items
  double tiny_grid_share = 0.0;       ///< tiny_launches / child_launches (0 without launches)
  std::uint32_t max_depth = 0;        ///< deepest child grid launched
  std::uint32_t pending_high_water = 0;
  std::uint64_t probe_steps = 0;      ///< probed warp steps over every site
  /// Active lanes / (32 * steps) over every probed warp step of every site (1 = no divergence);
  /// negative when nothing was probed.
  double warp_efficiency = -1.0;
  /// Mean of the per-warp efficiencies over every probed warp; negative when none.
  double mean_warp_efficiency = -1.0;
};

/// Fold a snapshot into its summary (pure host arithmetic).
trace_summary summarize(const trace_snapshot& snapshot);

/// Turns tracing on for `runtime` and clears its trace; collect() returns what the runs between
/// made; the destructor turns tracing back off. Sessions do not nest.
class trace_session {
 public:
  explicit trace_session(launch_runtime& runtime);
  ~trace_session();
  trace_session(const trace_session&) = delete;
  trace_session& operator=(const trace_session&) = delete;

  /// Synchronize and copy the trace of everything launched since the session (or the last
  /// restart()) began.
  [[nodiscard]] trace_snapshot collect() const;
  /// Clear the trace for the next run (synchronizes; no kernel may be running).
  void restart();

 private:
  launch_runtime& runtime_;
  bool was_tracing_;
};

}  // namespace cdpkit::profiling
