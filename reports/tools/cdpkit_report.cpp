// cdpkit-report — profile JSON in, one self-contained HTML report (or a Chrome trace) out.
//
//   cdpkit-report run.json [more.json ...] -o report.html
//   cdpkit-report run.json --format chrome-trace -o trace.json     (open in ui.perfetto.dev)
//
// Needs no GPU and no CUDA. A malformed, truncated or wrong-version profile is an error naming
// the file and the field; the exit code is then 2 and no output file is left behind.

#include <cdpkit/report/html.hpp>
#include <cdpkit/report/profile.hpp>

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"cdpkit-report: profile JSON (cdpkit-profile/1) to a self-contained HTML report"};
  std::vector<std::string> inputs;
  std::string output, format = "html";
  app.add_option("profiles", inputs, "profile JSON files (the first is the reference in comparisons)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", output, "output file")->required();
  app.add_option("--format", format, "html or chrome-trace")
      ->capture_default_str()
      ->check(CLI::IsMember({"html", "chrome-trace"}));
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<cdpkit::report::profile> profiles;
    for (const auto& path : inputs) profiles.push_back(cdpkit::report::load_profile(path));
    const std::string text = format == "html" ? cdpkit::report::render_html(profiles)
                                              : cdpkit::report::render_chrome_trace(profiles);
    cdpkit::report::write_file_atomically(output, text);
    std::cout << "cdpkit-report: wrote " << output << " (" << text.size() / 1024 << " KiB) from "
              << inputs.size() << " profile(s)\n";
    return 0;
  } catch (const cdpkit::report::format_error& e) {
    std::cerr << "cdpkit-report: " << e.what() << "\n";
    return 2;
  }
}
