// cdpkit-report as a program: exit 2 and one line on every error with no output left behind,
// exit 0 for help; never an output over one of its input profiles; written through a temporary
// file of its own, replacing only a regular file.

#include <doctest/doctest.h>

#include "profiles.hpp"
#include "report_checks.hpp"

#include <cdpkit/report/html.hpp>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace cdpkit_test;

TEST_CASE("the command line rejects a bad profile with exit code 2 and leaves no output") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_cli";
  std::filesystem::create_directories(dir);
  const auto bad = dir / "bad.json", out = dir / "out.html", good = dir / "good.json";
  {
    std::ofstream(bad) << "{\"schema\": \"" << cdpkit::schema::profile_schema << "\", \"runs\": [";
    std::ofstream(good) << valid_profile().dump();
  }
  const std::string tool = CDPKIT_REPORT_EXE;
  const int rc = std::system((tool + " " + bad.string() + " -o " + out.string() + " 2>/dev/null").c_str());
  CHECK(WEXITSTATUS(rc) == 2);
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK_FALSE(std::filesystem::exists(out.string() + ".tmp"));
  CHECK(std::system((tool + " " + good.string() + " -o " + out.string() + " >/dev/null").c_str()) == 0);
  CHECK(std::filesystem::file_size(out) > 1000u);
  const auto trace = dir / "trace.json";
  CHECK(std::system((tool + " " + good.string() + " --format chrome-trace -o " + trace.string() + " >/dev/null").c_str()) == 0);
  CHECK(json::parse(std::ifstream(trace)).contains("traceEvents"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("an output that cannot be moved into place leaves no temporary file") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_atomic";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "taken" / "inside");
  CHECK_THROWS_AS(rep::write_file_atomically((dir / "taken").string(), "text"), rep::format_error);
  CHECK_THROWS_AS(rep::write_file_atomically((dir / "missing" / "out.html").string(), "text"), rep::format_error);
  CHECK_THROWS_AS(rep::write_file_atomically("", "text"), rep::format_error);
  CHECK(tmp_files(dir).empty());
  rep::write_file_atomically((dir / "ok.html").string(), "text");
  CHECK(read_text(dir / "ok.html") == "text");
  CHECK(tmp_files(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("the command line prints one line and exits with 2 on every error and with 0 for help") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_cli_errors";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "a_directory");
  const auto good = dir / "good.json", out = dir / "out.html";
  std::ofstream(good) << valid_profile().dump();
  {
    std::string huge = valid_profile().dump();
    huge.replace(huge.find("\"ms\":40.0"), 9, "\"ms\":1e999");
    std::ofstream(dir / "huge.json") << huge;
    std::string deep = valid_profile().dump();
    deep.replace(deep.find("\"params\":{}"), 11, "\"params\":" + std::string(200000, '[') + std::string(200000, ']'));
    std::ofstream(dir / "deep.json") << deep;
    std::ofstream(dir / "cut.json") << huge.substr(0, 100);
    std::ofstream(dir / "empty.json") << "";
    std::ofstream(dir / "binary.json") << std::string("\x7f" "ELF\0\0\xff\xfe", 8);
  }
  struct cli_case {
    std::string args, message;
  };
  const std::string g = good.string(), o = out.string(), d = dir.string();
  const std::vector<cli_case> cases = {
      {"", "profiles is required"},
      {"-o " + o, "profiles is required"},
      {g + " -o " + o + " --no-such-option", "--no-such-option"},
      {g + " -o " + o + " --format pdf", "--format"},
      {d + "/missing.json -o " + o, "missing.json"},
      {d + "/huge.json -o " + o, "huge.json: not valid JSON at byte "},
      {d + "/deep.json -o " + o, "deep.json: byte "},
      {d + "/cut.json -o " + o, "cut.json: not valid JSON at byte "},
      {d + "/empty.json -o " + o, "empty.json: not valid JSON at byte 0"},
      {d + "/binary.json -o " + o, "binary.json: not valid JSON at byte 0"},
      {g + " " + d + "/deep.json -o " + o, "deep.json"},  // the second profile fails: nothing written
      {g + " -o " + d + "/no_such_dir/out.html", "no_such_dir/out.html"},
      {g + " -o " + d + "/a_directory", "a_directory: exists and is a directory, not a regular file; nothing written"},
      {g + " --format chrome-trace -o " + d + "/a_directory", "a_directory"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    std::string out_text, err_text;
    CHECK(run_report(c.args, dir, out_text, err_text) == 2);
    CAPTURE(err_text);
    CHECK(err_text.rfind("cdpkit-report: ", 0) == 0);
    CHECK(contains(err_text, c.message));
    CHECK(std::count(err_text.begin(), err_text.end(), '\n') == 1);  // one line
    CHECK(out_text.empty());
    CHECK_FALSE(std::filesystem::exists(out));
    CHECK(tmp_files(dir).empty());
  }
  std::string out_text, err_text;
  CHECK(run_report("--help", dir, out_text, err_text) == 0);
  CHECK(contains(out_text, "profiles"));
  CHECK(contains(out_text, "--format"));
  CHECK(run_report(g + " -o " + o, dir, out_text, err_text) == 0);
  CHECK(err_text.empty());
  CHECK(contains(out_text, "cdpkit-report: wrote " + o));
  CHECK(std::filesystem::file_size(out) > 1000u);
  CHECK(tmp_files(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("the command line refuses to write its output over one of its input profiles") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_output_is_input";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "sub");
  const std::string profile_text = valid_profile().dump();
  std::ofstream(dir / "a.json") << profile_text;
  std::ofstream(dir / "b.json") << profile_text;
  std::filesystem::create_hard_link(dir / "a.json", dir / "hard.json");
  std::filesystem::create_symlink(dir / "a.json", dir / "soft.json");
  const std::string a = (dir / "a.json").string(), b = (dir / "b.json").string(), d = dir.string();
  struct cli_case {
    std::string args, output;
  };
  const std::vector<cli_case> cases = {
      {a + " -o " + a, a},
      {a + " --format chrome-trace -o " + a, a},
      {a + " " + b + " -o " + b, b},
      {a + " -o " + d + "/sub/../a.json", d + "/sub/../a.json"},  // the same file spelled differently
      {a + " -o " + d + "/./a.json", d + "/./a.json"},
      {a + " -o " + d + "/hard.json", d + "/hard.json"},  // another name of the same inode
      {a + " -o " + d + "/soft.json", d + "/soft.json"},  // a link to the input
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    std::string out_text, err_text;
    CHECK(run_report(c.args, dir, out_text, err_text) == 2);
    CAPTURE(err_text);
    CHECK(err_text.rfind("cdpkit-report: " + c.output + ": the output is the input profile ", 0) == 0);
    CHECK(std::count(err_text.begin(), err_text.end(), '\n') == 1);
    CHECK(out_text.empty());
    CHECK(read_text(dir / "a.json") == profile_text);  // nothing written
    CHECK(read_text(dir / "b.json") == profile_text);
    CHECK(std::filesystem::is_symlink(dir / "soft.json"));
    CHECK(tmp_files(dir).empty());
  }
  std::string out_text, err_text;  // another output next to the inputs is fine
  CHECK(run_report(a + " " + b + " -o " + d + "/report.html", dir, out_text, err_text) == 0);
  CHECK(read_text(dir / "report.html").rfind("<!DOCTYPE html>", 0) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the command line writes through a temporary file of its own and replaces only a regular file") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_output_kinds";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "keep");
  const std::string profile_text = valid_profile().dump(), d = dir.string();
  std::string out_text, err_text;
  // an input named as the old fixed temporary (OUTPUT.tmp) is read, never truncated
  std::ofstream(dir / "a.json.tmp") << profile_text;
  CHECK(run_report(d + "/a.json.tmp -o " + d + "/a.json", dir, out_text, err_text) == 0);
  CHECK(read_text(dir / "a.json.tmp") == profile_text);
  CHECK(read_text(dir / "a.json").rfind("<!DOCTYPE html>", 0) == 0);
  std::filesystem::remove(dir / "a.json.tmp");
  // an output that is a directory is refused, and a user's file named like its temporary stays
  std::ofstream(dir / "keep.tmp") << "mine";
  std::ofstream(dir / "p.json") << profile_text;
  CHECK(run_report(d + "/p.json -o " + d + "/keep", dir, out_text, err_text) == 2);
  CHECK(err_text == "cdpkit-report: " + d + "/keep: exists and is a directory, not a regular file; nothing written\n");
  CHECK(read_text(dir / "keep.tmp") == "mine");
  CHECK(std::filesystem::is_directory(dir / "keep"));
  std::filesystem::remove(dir / "keep.tmp");
  // a FIFO (and, where this user may make one, a device like /dev/full) is not replaced by a file
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK(run_report(d + "/p.json -o " + d + "/fifo", dir, out_text, err_text) == 2);
  CHECK(contains(err_text, d + "/fifo: exists and is a FIFO, not a regular file"));
  CHECK(std::filesystem::is_fifo(dir / "fifo"));
  if (::mknod((dir / "full").c_str(), S_IFCHR | 0600, makedev(1, 7)) == 0) {  // root only
    CHECK(run_report(d + "/p.json -o " + d + "/full", dir, out_text, err_text) == 2);
    CHECK(contains(err_text, d + "/full: exists and is a character device"));
    CHECK(std::filesystem::is_character_file(dir / "full"));
  }
  CHECK(tmp_files(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a profile too large for the memory the process may use is refused with exit 2 and one line") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_memory";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // 30 million numbers in one array: 57 MiB of text, about 1 GiB as a parsed document
  {
    std::ofstream big(dir / "big.json", std::ios::binary);
    big << "{\"schema\": \"" << cdpkit::schema::profile_schema << "\", \"runs\": [0";
    const std::string chunk = [] {
      std::string c;
      for (int k = 0; k < 1000; ++k) c += ",0";
      return c;
    }();
    for (int k = 0; k < 30000; ++k) big << chunk;
    big << "]}";
  }
  const std::string args = (dir / "big.json").string() + " -o " + (dir / "out.html").string();
  struct memory_case {
    std::string ulimit, message;
  };
  // under 800 MB of address space the text fits and the document does not; under 120 MB not even
  // the text does
  const std::vector<memory_case> cases = {
      {"ulimit -v 800000;", "MiB of JSON would take more than"},
      {"ulimit -v 120000;", "MiB this process can still allocate"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.ulimit);
    std::string out_text, err_text;
    CHECK(run_report(args, dir, out_text, err_text, c.ulimit) == 2);
    CAPTURE(err_text);
    CHECK(err_text.rfind("cdpkit-report: " + (dir / "big.json").string() + ": ", 0) == 0);
    CHECK(contains(err_text, c.message));
    CHECK(std::count(err_text.begin(), err_text.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(dir / "out.html"));
    CHECK(tmp_files(dir).empty());
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("the command line replaces an existing output only when it holds what the run writes") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_output_format";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string d = dir.string(), graph_text = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n";
  std::ofstream(dir / "p.json") << valid_profile().dump();
  std::ofstream(dir / "graph.mtx") << graph_text;
  std::ofstream(dir / "notes.txt") << "my notes\n";
  std::ofstream(dir / "old.html") << "\n  <!DOCTYPE html><p>an older report</p>";
  std::ofstream(dir / "old.json") << "{\"traceEvents\": []}";
  std::filesystem::create_symlink(dir / "notes.txt", dir / "link.html");
  struct cli_case {
    std::string args, output, kind;
  };
  const std::string p = d + "/p.json";
  const std::vector<cli_case> cases = {
      {p + " -o " + d + "/graph.mtx", d + "/graph.mtx", "an HTML report"},
      {p + " -o " + d + "/notes.txt", d + "/notes.txt", "an HTML report"},
      {p + " -o " + d + "/link.html", d + "/link.html", "an HTML report"},  // the link's target is a text
      {p + " --format chrome-trace -o " + d + "/old.html", d + "/old.html", "a JSON document"},
      {p + " -o " + d + "/old.json", d + "/old.json", "an HTML report"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    std::string out_text, err_text;
    CHECK(run_report(c.args, dir, out_text, err_text) == 2);
    CHECK(err_text == "cdpkit-report: '" + c.output + "' exists and does not hold " + c.kind +
                          ": refusing to replace it\n");
    CHECK(tmp_files(dir).empty());
  }
  CHECK(read_text(dir / "graph.mtx") == graph_text);  // nothing replaced
  CHECK(read_text(dir / "notes.txt") == "my notes\n");
  CHECK(read_text(dir / "old.json") == "{\"traceEvents\": []}");
  std::string out_text, err_text;  // a report over a report, a trace over a trace, an empty file
  CHECK(run_report(p + " -o " + d + "/old.html", dir, out_text, err_text) == 0);
  CHECK(read_text(dir / "old.html").rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(run_report(p + " --format chrome-trace -o " + d + "/old.json", dir, out_text, err_text) == 0);
  CHECK(json::parse(read_text(dir / "old.json")).contains("traceEvents"));
  std::ofstream(dir / "empty.html").flush();
  CHECK(run_report(p + " -o " + d + "/empty.html", dir, out_text, err_text) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("without -o the report is named after the first profile, and -o - writes standard output") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_report_default_output";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "runs");
  const std::string d = dir.string(), profile = d + "/runs/bfs.json";
  std::ofstream(profile) << valid_profile().dump();
  const std::string here = "cd " + d + " &&";
  std::string out_text, err_text;
  CHECK(run_report(profile, dir, out_text, err_text, here) == 0);  // runs/bfs.json -> ./bfs.html
  CHECK(read_text(dir / "bfs.html").rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(contains(out_text, "cdpkit-report: wrote bfs.html"));
  CHECK(run_report(profile + " --format chrome-trace", dir, out_text, err_text, here) == 0);
  CHECK(json::parse(read_text(dir / "bfs.trace.json")).contains("traceEvents"));
  // standard output: the document alone, no status line, no file named "-"
  CHECK(run_report(profile + " -o -", dir, out_text, err_text, here) == 0);
  CHECK(out_text.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(out_text == read_text(dir / "bfs.html"));
  CHECK(err_text.empty());
  CHECK(run_report(profile + " --format chrome-trace -o -", dir, out_text, err_text, here) == 0);
  CHECK(json::parse(out_text).contains("traceEvents"));
  CHECK_FALSE(std::filesystem::exists(dir / "-"));
  CHECK(tmp_files(dir).empty());
  std::filesystem::remove_all(dir);
}
