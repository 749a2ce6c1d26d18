// RAII trace sessions (the trace summary is the schema layer's: schema::summarize).

#include <cdpkit/profiling/trace_session.hpp>


namespace cdpkit::profiling {

trace_session::trace_session(launch_runtime& runtime)
    : runtime_(runtime), was_tracing_(runtime.tracing()) {
  runtime_.reset_trace();
  runtime_.set_tracing(true);
}

trace_session::~trace_session() { runtime_.set_tracing(was_tracing_); }

trace_snapshot trace_session::collect() const { return runtime_.snapshot(); }

void trace_session::restart() { runtime_.reset_trace(); }

}  // namespace cdpkit::profiling
