#pragma once
// cdpkit/report/html.hpp — the self-contained HTML report (inline CSS and SVG, no requests) and
// the Chrome trace-event export of the launch records.

#include <cdpkit/report/profile.hpp>

#include <string>
#include <vector>

namespace cdpkit::report {

/// The whole report for one or more profiles (several: the comparison section compares them,
/// the first being the reference).
std::string render_html(const std::vector<profile>& profiles);

/// Chrome trace-event JSON (opens in Perfetto / chrome://tracing): one track per run and depth,
/// each launch request a 1 us slice at its %globaltimer stamp, flows from parent to child.
std::string render_chrome_trace(const std::vector<profile>& profiles);

/// Write `text` to `path` through a temporary file renamed into place: a failure leaves no
/// partial output. Throws format_error naming the path.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace cdpkit::report
