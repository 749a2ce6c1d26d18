#pragma once
// What the report's cases check with: the format_error a profile gets, one section of the HTML,
// numbers grouped as the report writes them, and cdpkit-report run as a program (its exit code,
// its output, the temporary files it left).

#include <cdpkit/report/profile.hpp>

#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cdpkit_test {

using nlohmann::json;
namespace rep = cdpkit::report;

inline std::string parse_error(const json& doc) {
  try {
    (void)rep::parse_profile(doc.dump(), "p.json");
  } catch (const rep::format_error& e) {
    return e.what();
  }
  return "no error";
}

/// The format_error message for a profile text; "no error" when it is accepted. Any other
/// exception escapes and fails the case.
inline std::string text_error(const std::string& text, const std::string& name = "p.json") {
  try {
    (void)rep::parse_profile(text, name);
  } catch (const rep::format_error& e) {
    return e.what();
  }
  return "no error";
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

/// One section of the report: from its heading <h2 id="id"> up to the next <h2> (the last one
/// up to the script). Empty when the heading is missing.
inline std::string section_of(const std::string& html, const std::string& id) {
  const auto start = html.find("<h2 id=\"" + id + "\">");
  if (start == std::string::npos) return {};
  auto end = html.find("<h2 ", start + 1);
  if (end == std::string::npos) end = html.find("<script>", start);
  return html.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

/// 1234567 -> "1,234,567" (the report's thousands separators), written here independently.
inline std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return out;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Run cdpkit-report with `args`; returns the exit code, stdout and stderr in `out` and `err`.
/// `shell` runs in the same shell first (e.g. "ulimit -v 800000;").
inline int run_report(const std::string& args, const std::filesystem::path& dir, std::string& out, std::string& err,
                      const std::string& shell = "") {
  const auto out_file = dir / "stdout.txt", err_file = dir / "stderr.txt";
  const int rc = std::system((shell + " exec " + std::string(CDPKIT_REPORT_EXE) + " " + args + " >" +
                              out_file.string() + " 2>" + err_file.string()).c_str());
  out = read_text(out_file);
  err = read_text(err_file);
  std::filesystem::remove(out_file);
  std::filesystem::remove(err_file);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

/// Files in `dir` whose names end in ".tmp".
inline std::vector<std::string> tmp_files(const std::filesystem::path& dir) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.path().extension() == ".tmp") found.push_back(entry.path().string());
  return found;
}

}  // namespace cdpkit_test
