#pragma once
// cdpkit/profiling/trace_session.hpp — RAII tracing of the launch layer around a run, and the
// summary figures the samples print.

#include <cdpkit/launch.hpp>
#include <cdpkit/schema/profile.hpp>

#include <cstdint>

namespace cdpkit::profiling {

/// The headline figures of a trace, as printed in sample tables and benchmark rows, and the
/// function that computes them: both the schema layer's, defined once there.
using schema::trace_summary;
/// Fold a snapshot into its summary (pure host arithmetic): schema::summarize.
using schema::summarize;

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
