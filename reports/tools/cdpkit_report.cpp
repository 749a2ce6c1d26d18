// cdpkit-report — profile JSON in, one self-contained HTML report (or a Chrome trace) out.
//
//   cdpkit-report run.json [more.json ...] -o report.html     (without -o: run.html)
//   cdpkit-report run.json --format chrome-trace -o trace.json     (open in ui.perfetto.dev)
//   cdpkit-report run.json -o - | gzip > report.html.gz           (- : standard output)
//
// Needs no GPU and no CUDA. One error path: a bad command line, a malformed, truncated, too deep
// or wrong-version profile, an output that is one of the profiles or not a regular file, an
// unwritable output, even running out of memory, prints one line "cdpkit-report: <what>" to
// stderr and exits with 2; no output file and no .tmp are left behind. An existing output is
// replaced only when it holds what the run writes (HTML, or JSON for a Chrome trace). --help and
// --version print and exit with 0.

#include <cdpkit/report/html.hpp>
#include <cdpkit/report/profile.hpp>
#include <cdpkit/schema/text.hpp>

#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <vector>

namespace {

constexpr int exit_error = 2;

int fail(const std::string& what) {
  std::cerr << "cdpkit-report: " << what << "\n";
  return exit_error;
}

/// Whether `output` names the file `input` is: the same device and inode when both exist (a hard
/// link, a symbolic link or another spelling of the path), else the same absolute path with
/// "." and ".." resolved. Writing the report there would replace a profile it reads.
bool same_file(const std::string& input, const std::string& output) {
  struct stat in {}, out {};
  if (::stat(input.c_str(), &in) == 0 && ::stat(output.c_str(), &out) == 0)
    return in.st_dev == out.st_dev && in.st_ino == out.st_ino;
  std::error_code ec_in, ec_out;
  const auto a = std::filesystem::weakly_canonical(input, ec_in), b = std::filesystem::weakly_canonical(output, ec_out);
  return !ec_in && !ec_out && a == b;
}

/// The output when -o is not given: the first profile's file name, in the current folder, with
/// its .json (if any) replaced by .html, or by .trace.json for a Chrome trace ("runs/bfs.json" ->
/// "bfs.html").
std::string default_output(const std::string& first_profile, bool html) {
  std::string stem = std::filesystem::path(first_profile).filename().string();
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0) stem.resize(stem.size() - 5);
  return stem + (html ? ".html" : ".trace.json");
}

int run(int argc, char** argv) {
  CLI::App app{std::string("cdpkit-report: profile JSON (") + cdpkit::schema::profile_schema +
                ") to a self-contained HTML report"};
  std::vector<std::string> inputs;
  std::string output, format = "html";
  app.add_option("profiles", inputs, "profile JSON files (the first is the reference in comparisons)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", output,
                 "output file; - for standard output (default: the first profile's name with .html, "
                 "or .trace.json for a Chrome trace, in the current folder)");
  app.add_option("--format", format, "html or chrome-trace")
      ->capture_default_str()
      ->check(CLI::IsMember({"html", "chrome-trace"}));
  app.set_version_flag("--version", std::string("cdpkit-report (cdpkit ") + CDPKIT_VERSION + ")");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help (and any other "success" exit CLI11 raises) prints what it has to and exits with 0
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return fail(e.what());
  }
  const bool html = format == "html";
  if (output.empty()) output = default_output(inputs.front(), html);
  const bool to_stdout = output == "-";
  if (!to_stdout) {
    for (const auto& path : inputs)
      if (same_file(path, output))
        return fail(output + ": the output is the input profile " + path + "; nothing written");
    // an existing output is replaced only when it holds what this run writes (not a graph, a text...)
    if (const std::string why = cdpkit::schema::output_refusal(output, html ? "an HTML report" : "a JSON document",
                                                               html ? '<' : '{');
        !why.empty())
      return fail(why);
  }
  std::vector<cdpkit::report::profile> profiles;
  profiles.reserve(inputs.size());
  for (const auto& path : inputs) profiles.push_back(cdpkit::report::load_profile(path));
  const std::string text = format == "html" ? cdpkit::report::render_html(profiles)
                                            : cdpkit::report::render_chrome_trace(profiles);
  if (to_stdout) {  // the document alone on standard output, nothing else
    std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
    std::cout.flush();
    if (!std::cout) return fail("-: cannot write to standard output");
    return 0;
  }
  cdpkit::report::write_file_atomically(output, text);
  std::cout << "cdpkit-report: wrote " << output << " (" << text.size() / 1024 << " KiB) from "
            << inputs.size() << " profile(s)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    return fail("out of memory");
  } catch (const std::exception& e) {  // format_error and anything else: the same one line
    return fail(e.what());
  } catch (...) {
    return fail("unknown error");
  }
}
