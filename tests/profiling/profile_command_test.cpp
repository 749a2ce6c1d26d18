// cdpkit profile (profiling/tools): where its options end, report names, the program to run, the
// injection library's place, --collect, the program's end, and the front door as a program: the
// program's exit status passed through, a signal named, one line and exit 2 for its own errors.
// Host only: a program that makes no CUDA call never loads the injection library.

#include <doctest/doctest.h>

#include "../../profiling/tools/profile_command.hpp"
#include "support/temp_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace cdpkit::tools;

TEST_CASE("the front door's options end at a -- among them, never at one after the program's name") {
  const std::vector<std::string> valued{"-o", "--output", "--collect"};
  CHECK(options_end({"-o", "r", "--", "./app", "--x"}, valued) == 2u);
  CHECK(options_end({"./app", "--", "x"}, valued) == 3u);     // the program's own --
  CHECK(options_end({"-o", "--", "./app"}, valued) == 3u);    // -o's value, then the program
  CHECK(options_end({"--force-overwrite", "--"}, valued) == 1u);
  CHECK(options_end({}, valued) == 0u);
}

TEST_CASE("report names count up from report1 past every NAME.json or NAME.html that exists") {
  const cdpkit_test::temp_dir dir;
  CHECK(next_report_name(dir.path()) == "report1");
  std::ofstream(dir.path() / "report1.json") << "{}";
  CHECK(next_report_name(dir.path()) == "report2");
  std::ofstream(dir.path() / "report2.html") << "<html>";
  CHECK(next_report_name(dir.path()) == "report3");
}

TEST_CASE("the program is a path when it holds a slash, else found in PATH, and refused naming why") {
  const cdpkit_test::temp_dir dir;
  CHECK(resolve_program("/bin/sh", nullptr) == fs::path("/bin/sh"));
  CHECK(resolve_program("sh", (dir.path().string() + ":/bin").c_str()) == fs::path("/bin/sh"));
  CHECK_THROWS_WITH_AS(resolve_program("./no-such-program", nullptr), "'./no-such-program': no such program",
                       command_error);
  CHECK_THROWS_WITH_AS(resolve_program(dir.path().string() + "/", nullptr),
                       doctest::Contains("is a directory"), command_error);
  const fs::path plain = dir.path() / "plain";
  std::ofstream(plain) << "text";
  CHECK_THROWS_WITH_AS(resolve_program(plain.string(), nullptr), doctest::Contains("not executable"), command_error);
  CHECK_THROWS_WITH_AS(resolve_program("no-such-program-anywhere", dir.path().c_str()),
                       "'no-such-program-anywhere': no such program in PATH", command_error);
  // a PATH entry holding the name but not executable is named in the message
  CHECK_THROWS_WITH_AS(resolve_program("plain", dir.path().c_str()), doctest::Contains("plain: not executable"),
                       command_error);
  CHECK_THROWS_AS(resolve_program("", nullptr), command_error);
}

TEST_CASE("the injection library is the first candidate beside the executable that is a file") {
  const cdpkit_test::temp_dir dir;
  fs::create_directories(dir.path() / "bin");
  fs::create_directories(dir.path() / "lib");
  CHECK_THROWS_WITH_AS(find_injection_library(dir.path() / "bin", {"../lib/libcdpkit_inject.so"}),
                       doctest::Contains("is not installed beside this program"), command_error);
  std::ofstream(dir.path() / "lib" / "libcdpkit_inject.so") << "x";
  CHECK(find_injection_library(dir.path() / "bin", {"../nowhere/libcdpkit_inject.so", "../lib/libcdpkit_inject.so"}) ==
        dir.path() / "lib" / "libcdpkit_inject.so");
}

TEST_CASE("--collect names the runs: CUPTI's one collection and the children collector's") {
  const auto plan = [](const std::string& v) {
    const collect_plan p = collect_setting(v);
    return p.cupti + (p.children ? "+children" : "");
  };
  CHECK(plan("metrics") == "metrics");
  CHECK(plan("all") == "metrics+children");
  CHECK(plan("timeline") == "timeline");
  CHECK(plan("none") == "none");
  CHECK(plan("children") == "+children");
  CHECK(plan("trace") == "+children");
  CHECK(plan("children,timeline") == "timeline+children");
  CHECK(plan("metrics,children") == "metrics+children");
  CHECK(plan("metrics,all") == "metrics+children");
  CHECK(plan("none,children") == "none+children");
  CHECK_THROWS_WITH_AS(collect_setting("metrics,timeline"), doctest::Contains("cannot be collected in one run"),
                       command_error);
  CHECK_THROWS_WITH_AS(collect_setting("timeline,all"), doctest::Contains("cannot be collected in one run"),
                       command_error);
  CHECK_THROWS_WITH_AS(collect_setting("none,metrics"), doctest::Contains("cannot go with metrics"), command_error);
  CHECK_THROWS_WITH_AS(collect_setting("graphs"), doctest::Contains("'graphs' is not one of"), command_error);
  CHECK_THROWS_AS(collect_setting(""), command_error);
  CHECK_THROWS_AS(collect_setting("metrics,"), command_error);
}

TEST_CASE("a missing children collector is named with every place looked at") {
  const cdpkit_test::temp_dir dir;
  fs::create_directories(dir.path() / "bin");
  CHECK_FALSE(find_library_beside(dir.path() / "bin", {"../lib/libcdpkit_children.so"}).has_value());
  CHECK_THROWS_WITH_AS(find_injection_library(dir.path() / "bin", {"../lib/libcdpkit_children.so"}, "libcdpkit_children.so"),
                       doctest::Contains("libcdpkit_children.so is not installed beside this program (looked at"),
                       command_error);
}

TEST_CASE("the children run's profile joins the CUPTI run's: runs appended, collectors joined") {
  const nlohmann::json cupti = {{"schema", "x"},
                                {"runs", {{{"id", 0}, {"variant", "k"}}, {{"id", 1}, {"variant", "k"}}}},
                                {"collector", {{"requested", {"metrics"}}, {"notes", {"metrics: one"}}}}};
  const nlohmann::json children = {{"schema", "x"},
                                   {"runs", {{{"id", 0}, {"variant", "children"}}}},
                                   {"collector", {{"requested", {"children"}}, {"notes", {"children: two"}}, {"incomplete", "why"}}}};
  const nlohmann::json m = merge_profiles(cupti, children);
  REQUIRE(m["runs"].size() == 3);
  CHECK(m["runs"][2]["id"] == 2);
  CHECK(m["runs"][2]["variant"] == "children");
  CHECK(m["collector"]["requested"] == nlohmann::json({"metrics", "children"}));
  CHECK(m["collector"]["notes"] == nlohmann::json({"metrics: one", "children: two"}));
  CHECK(m["collector"]["incomplete"] == "why");
  CHECK(merge_profiles(nullptr, children) == children);
  CHECK(merge_profiles(cupti, nullptr) == cupti);
}

TEST_CASE("the program's exit status is passed through, and a signal N gives 128 + N and its name") {
  const program_end ok = describe_end(0, "app");
  CHECK(ok.exit_code == 0);
  CHECK(ok.message.empty());
  const int seven = run_program("/bin/sh", {"sh", "-c", "exit 7"}, {});
  CHECK(describe_end(seven, "sh").exit_code == 7);
  const int killed = run_program("/bin/sh", {"sh", "-c", "ulimit -c 0; kill -SEGV $$"}, {});
  const program_end end = describe_end(killed, "sh");
  CHECK(end.exit_code == 128 + 11);
  CHECK(end.message.find("'sh' was killed by signal 11 (SIGSEGV)") == 0);
  CHECK(end.signal == SIGSEGV);
}

TEST_CASE("the program runs with the variables given, replacing those of the same name, and a failed exec is an error") {
  setenv("CDPKIT_TEST_REPLACED", "old", 1);
  const int status = run_program("/bin/sh", {"sh", "-c", "test \"$CDPKIT_TEST_REPLACED\" = new && test \"$1\" = arg", "sh", "arg"},
                                 {{"CDPKIT_TEST_REPLACED", "new"}});
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  unsetenv("CDPKIT_TEST_REPLACED");
  const cdpkit_test::temp_dir dir;
  // an exec the kernel refuses (one argument past its 128 KiB limit) is the front door's error
  CHECK_THROWS_WITH_AS(run_program("/bin/true", {"true", std::string(200 * 1024, 'x')}, {}),
                       doctest::Contains("cannot be run: Argument list too long"), command_error);
  // a script without "#!" is run by /bin/sh, as execvp runs it
  const fs::path script = dir.path() / "script";
  std::ofstream(script) << "test \"$1\" = one && exit 4\n";
  fs::permissions(script, fs::perms::owner_all);
  const int by_sh = run_program(script, {"script", "one"}, {});
  CHECK(WIFEXITED(by_sh));
  CHECK(WEXITSTATUS(by_sh) == 4);
}

namespace {
/// Run the front door with `args` in `dir`; its exit status, and its standard error in `err`.
int front_door(const fs::path& dir, const std::string& args, std::string& err) {
  const fs::path err_file = dir / "stderr.txt";
  const std::string command = "cd '" + dir.string() + "' && ulimit -c 0 && '" + CDPKIT_CLI_EXE + "' " + args +
                              " >/dev/null 2>'" + err_file.string() + "'";
  const int rc = std::system(command.c_str());
  std::ifstream in(err_file);
  err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}
}  // namespace

TEST_CASE("cdpkit profile passes the program's exit status through and says when no profile was written") {
  const cdpkit_test::temp_dir dir;
  std::string err;
  CHECK(front_door(dir.path(), "profile -- sh -c 'exit 7'", err) == 7);
  CHECK(err == "cdpkit profile: no profile was written: 'sh' made no CUDA call that loads the injection library\n");
  CHECK_FALSE(fs::exists(dir.path() / "report1.json"));  // the name taken for the run is given back
  CHECK(front_door(dir.path(), "profile sh -c 'kill -SEGV $$'", err) == 139);
  CHECK(err.find("cdpkit profile: 'sh' was killed by signal 11 (SIGSEGV)\n") == 0);
  CHECK(front_door(dir.path(), "profile sh -c 'exit 0' -- -o", err) == 0);  // a -- after the program is its own
}

TEST_CASE("cdpkit profile's own errors are one line and exit 2, and an existing output is kept") {
  const cdpkit_test::temp_dir dir;
  std::string err;
  CHECK(front_door(dir.path(), "profile ./missing", err) == 2);
  CHECK(err == "cdpkit profile: './missing': no such program\n");
  CHECK(front_door(dir.path(), "profile", err) == 2);
  CHECK(err.find("cdpkit profile: no program given") == 0);
  CHECK(front_door(dir.path(), "profile --collect metrics,timeline true", err) == 2);
  CHECK(front_door(dir.path(), "profile -o 'run%p' true", err) == 2);
  CHECK(err.find("holding '%'") != std::string::npos);
  CHECK(front_door(dir.path(), "profile -o no/such/folder/run true", err) == 2);
  CHECK(err == "cdpkit profile: -o 'no/such/folder/run': the folder 'no/such/folder' does not exist\n");
  CHECK(front_door(dir.path(), "profile --bogus true", err) == 2);
  CHECK(err == "cdpkit profile: unknown option '--bogus' (the program and its arguments follow the options, or --)\n");
  CHECK(front_door(dir.path(), "profile --colect timeline true", err) == 2);  // a typo is not a program
  CHECK(err.find("unknown option '--colect'") != std::string::npos);
  CHECK(front_door(dir.path(), "profile -x -- true", err) == 2);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  std::ofstream(dir.path() / "mine.json") << "{\"keep\": true}";
  CHECK(front_door(dir.path(), "profile -o mine true", err) == 2);
  CHECK(err == "cdpkit profile: mine.json exists; name another output with -o, or replace it with --force-overwrite\n");
  std::ofstream(dir.path() / "graph.html") << "1 2\n";
  CHECK(front_door(dir.path(), "profile -o graph --force-overwrite true", err) == 2);  // not a report: kept
  CHECK(fs::file_size(dir.path() / "mine.json") == 14u);
  CHECK(fs::file_size(dir.path() / "graph.html") == 4u);
  // --force-overwrite on a run that writes no profile: the old profile is kept, not deleted first
  CHECK(front_door(dir.path(), "profile -o mine --force-overwrite true", err) == 0);
  CHECK(fs::file_size(dir.path() / "mine.json") == 14u);
  CHECK(front_door(dir.path(), "profile -o '' true", err) == 2);  // an empty name is not the default
}

TEST_CASE("SIGTERM sent to cdpkit profile alone goes on to the program, which ends by it") {
  const cdpkit_test::temp_dir dir;
  const fs::path ready = dir.path() / "ready";
  const std::string program = "touch '" + ready.string() + "' && exec sleep 30";  // no orphan left
  const pid_t front = ::fork();
  REQUIRE(front >= 0);
  const fs::path err_file = dir.path() / "stderr.txt";
  if (front == 0) {
    const int fd = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) ::dup2(fd, 2);
    ::execl(CDPKIT_CLI_EXE, "cdpkit", "profile", "-o", (dir.path() / "run").c_str(), "--", "/bin/sh", "-c",
            program.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int k = 0; k < 2000 && !fs::exists(ready); ++k) ::usleep(10000);
  REQUIRE(fs::exists(ready));
  ::kill(front, SIGTERM);
  int status = 0;
  ::waitpid(front, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  // the front door outlived the signal: it passed it on and saw the program end by it
  std::ifstream in(err_file);
  const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(err.find("'/bin/sh' was killed by signal 15 (SIGTERM)") != std::string::npos);
}

TEST_CASE("cdpkit profile dies by the program's SIGINT after its report, so a calling script stops too") {
  const int status = run_program(CDPKIT_CLI_EXE, {"cdpkit", "profile", "--", "sh", "-c", "kill -INT $$"}, {});
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
}

TEST_CASE("a default report name is taken exclusively: a second taker gets the next one") {
  const cdpkit_test::temp_dir dir;
  fs::create_symlink(dir.path() / "nowhere", dir.path() / "report5.json");  // a broken link counts as taken
  CHECK(reserve_report_name(dir.path()) == "report1");
  CHECK(fs::file_size(dir.path() / "report1.json") == 0u);
  CHECK(reserve_report_name(dir.path()) == "report2");
  std::ofstream(dir.path() / "report3.html") << "<html>";
  CHECK(reserve_report_name(dir.path()) == "report4");
  CHECK(reserve_report_name(dir.path()) == "report6");
  CHECK_THROWS_AS(reserve_report_name(dir.path() / "no-such-folder"), command_error);
}

TEST_CASE("a run's profiles are found by process id, the program's first, and nothing else is taken") {
  const cdpkit_test::temp_dir dir;
  for (const char* name : {"run.json.cdpkit-9-300.part", "run.json.cdpkit-9-20.part", "run.json.cdpkit-9-41.part",
                           "run.json.cdpkit-8-50.part", "run.json.cdpkit-9-x.part", "run.json.cdpkit-9-.part",
                           "run.json.cdpkit-9-7.part.tmp", "other.json.cdpkit-9-5.part"})
    std::ofstream(dir.path() / name) << "{}";
  const auto found = find_process_profiles(dir.path(), "run.json.cdpkit-9-", 41);
  REQUIRE(found.size() == 3u);
  CHECK(found[0].pid == 41);
  CHECK(found[1].pid == 20);
  CHECK(found[2].pid == 300);
  CHECK(found[0].path == dir.path() / "run.json.cdpkit-9-41.part");
  CHECK(find_process_profiles(dir.path(), "run.json.cdpkit-9-", 0).front().pid == 20);
}

namespace {
/// A stand-in for a CUDA program under the injection library, which the front door cannot tell
/// from one on the host: it writes a profile (a committed one) where the library would,
/// CDPKIT_PROFILE_OUT with "%p" replaced by its process id; "spawn" runs a second such process
/// first, "quiet" writes nothing itself (a launcher).
fs::path stand_in_program(const fs::path& dir) {
  const fs::path script = dir / "stand_in";
  std::ofstream(script) << "#!/bin/sh\n"
                        << "if [ \"$1\" = spawn ] || [ \"$1\" = quiet ]; then sh \"$0\" child || exit 1; fi\n"
                        << "[ \"$1\" = quiet ] && exit 0\n"
                        << "out=$(printf '%s' \"$CDPKIT_PROFILE_OUT\" | sed \"s/%p/$$/\")\n"
                        << "cp '" << CDPKIT_TEST_FIXTURES << "/profile_h200.json' \"$out\"\n";
  fs::permissions(script, fs::perms::owner_all);
  return script;
}
}  // namespace

TEST_CASE("a program that starts CUDA processes of its own leaves one profile each and one report of them all") {
  const cdpkit_test::temp_dir dir;
  const fs::path program = stand_in_program(dir.path());
  std::string err;
  REQUIRE(front_door(dir.path(), "profile -o run -- '" + program.string() + "' spawn", err) == 0);
  CHECK(err.find("cdpkit profile: 2 processes made CUDA calls: wrote run.json (process ") == 0);
  CHECK(err.find(", the program), run.") != std::string::npos);
  CHECK(err.find("and run.html (all 2)") != std::string::npos);
  int others = 0, parts = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    const std::string name = e.path().filename().string();
    others += name.rfind("run.", 0) == 0 && name != "run.json" && name != "run.html" &&
              name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
    parts += name.find(".part") != std::string::npos;
  }
  CHECK(others == 1);
  CHECK(parts == 0);
  CHECK(fs::file_size(dir.path() / "run.json") == fs::file_size(CDPKIT_TEST_FIXTURES "/profile_h200.json"));
  CHECK(fs::file_size(dir.path() / "run.html") > 0u);
  // a launcher that makes no CUDA call itself: its child's profile is NAME.json
  REQUIRE(front_door(dir.path(), "profile -o launcher -- '" + program.string() + "' quiet", err) == 0);
  CHECK(err.find("cdpkit profile: wrote launcher.json and launcher.html") == 0);
}

TEST_CASE("front doors started together in one folder take different default names") {
  const cdpkit_test::temp_dir dir;
  const fs::path program = stand_in_program(dir.path());
  const std::string one = "'" + std::string(CDPKIT_CLI_EXE) + "' profile '" + program.string() + "' 2>/dev/null";
  const std::string both = "cd '" + dir.path().string() + "' && (" + one + " & " + one + " & " + one + " & wait)";
  REQUIRE(std::system(both.c_str()) == 0);
  for (const char* name : {"report1", "report2", "report3"}) {
    CAPTURE(name);
    CHECK(fs::file_size(dir.path() / (std::string(name) + ".json")) ==
          fs::file_size(CDPKIT_TEST_FIXTURES "/profile_h200.json"));
    CHECK(fs::exists(dir.path() / (std::string(name) + ".html")));
  }
  CHECK_FALSE(fs::exists(dir.path() / "report4.json"));
}
