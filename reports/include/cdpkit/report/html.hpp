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
/// the first being the reference). Each profile is analysed once (analyze()).
std::string render_html(const std::vector<profile>& profiles);

/// Chrome trace-event JSON (opens in Perfetto / chrome://tracing): one track per run and depth,
/// each launch request a 1 us slice at its %globaltimer stamp, flows from parent to child.
/// Strings that are not valid UTF-8 are printed with U+FFFD.
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
