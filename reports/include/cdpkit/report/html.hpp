#pragma once
// cdpkit/report/html.hpp — the renderers: the self-contained HTML report (inline CSS and SVG, no
// requests) and the Chrome trace-event export of the launch records. They render what the
// analysis (cdpkit/report/analysis.hpp) computed; they compute nothing of their own.

#include <cdpkit/report/profile.hpp>
#include <cdpkit/schema/text.hpp>

#include <string>
#include <vector>

namespace cdpkit::report {

/// The whole report for one or more profiles (several: the comparison section compares them,
/// the first being the reference). Each profile is analysed once (analyze()). The hardware
/// sections (hardware vs probes, CTA accounting, SM activity over time, collection overhead)
/// appear only where some profile has what they show; the collector's notes open the report.
std::string render_html(const std::vector<profile>& profiles);

/// Chrome trace-event JSON (opens in Perfetto / chrome://tracing): a process per run; measured
/// child grids as slices on non-overlapping lanes per depth, each recorded request an instant (a
/// 1 us slice per request on a track per depth where no grid was measured), flows from parent to
/// child; the PM samples as counter tracks ("SM active %", "warps active %") and the run's
/// host-launched kernels as slices on their own track, on the same time base. Strings that are
/// not valid UTF-8 are printed with U+FFFD.
std::string render_chrome_trace(const std::vector<profile>& profiles);

/// Write `text` to `path` whole or not at all (schema::write_file_atomically: a temporary file
/// in the same folder, fsync, rename; no partial output and no .tmp left behind). Throws
/// format_error naming the path, the one error type of the report tool.
inline void write_file_atomically(const std::string& path, const std::string& text) {
  try {
    schema::write_file_atomically(path, text);
  } catch (const schema::write_error& e) {
    throw format_error(e.what());
  }
}

}  // namespace cdpkit::report
