// Example: an HTML report from a profile (cdpkit/report). Pure C++: no CUDA, no GPU needed.
//
// load_profile reads and validates a profile JSON (as written by the programs' --profile, or by
// the profile_run example); findings() are the report's plain-sentence conclusions; render_html()
// makes one self-contained HTML file (inline CSS and SVG, readable without JavaScript).
//
// Usage: html_report <profile.json> [out.html]   (default: report.html)

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/html.hpp>
#include <cdpkit/report/profile.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: html_report <profile.json> [out.html]\n");
    return 2;
  }
  const std::string out = argc > 2 ? argv[2] : "report.html";

  // 1. Read the profile; a malformed one throws cdpkit::report::format_error naming the field.
  const cdpkit::report::profile profile = cdpkit::report::load_profile(argv[1]);
  std::printf("%s: %zu runs from %s on %s\n", argv[1], profile.runs.size(),
              profile.program.c_str(), profile.device.name.c_str());

  // 2. What the report concludes, most important first.
  const std::vector<cdpkit::report::finding> findings = cdpkit::report::findings(profile);
  for (const auto& f : findings) std::printf("  - %s\n", f.text.c_str());

  // 3. Render and write the report (several profiles would add a comparison section).
  const std::string html = cdpkit::report::render_html({profile});
  cdpkit::report::write_file_atomically(out, html);
  std::printf("wrote %s (%zu bytes)\n", out.c_str(), html.size());

  // 4. Check: a complete document that names every run's variant.
  bool ok = !profile.runs.empty() && html.find("</html>") != std::string::npos;
  for (const auto& run : profile.runs) ok = ok && html.find(run.variant) != std::string::npos;
  return ok ? 0 : 1;
}
