// The injection library's signal watch (profiling/inject/signal_watch.hpp): a program stopped by
// a signal still does the work (writes its profile), then ends by that signal; the work is
// bounded; a second signal ends the program at once; the program's own handlers and its forked
// children are left alone. Host only: each case runs the "program" in a forked child, which never
// returns into the test runner.

#include <doctest/doctest.h>

#include "../../profiling/inject/signal_watch.hpp"
#include "support/temp_dir.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using cdpkit::profiling::inject::signal_description;
using cdpkit::profiling::inject::watch_signals;

namespace {

constexpr int watched_by_default[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

struct child_end {
  int status = 0;
  bool finished = false;  ///< false: still running at the limit (then killed)
  double seconds = 0;
};

/// Run `program` in a forked child (the test runner's own handlers taken off first, as a program
/// that installs none has them, and no core file) and wait for it, at most `limit`.
template <class Program>
child_end run_child(Program program, std::chrono::seconds limit = 30s) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (const int sig : watched_by_default) std::signal(sig, SIG_DFL);
    const struct rlimit no_core {0, 0};
    (void)::setrlimit(RLIMIT_CORE, &no_core);
    program();
    ::_exit(0);
  }
  child_end end;
  while (std::chrono::steady_clock::now() - start < limit) {
    const pid_t r = ::waitpid(pid, &end.status, WNOHANG);
    if (r == pid) {
      end.finished = true;
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  if (!end.finished) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &end.status, 0);
  }
  end.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return end;
}

bool ended_by(const child_end& e, int sig) { return e.finished && WIFSIGNALED(e.status) && WTERMSIG(e.status) == sig; }

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The work of a test program: write `why` to `path` (as the library writes its profile).
auto write_to(const fs::path& path) {
  return [path](const std::string& why) { std::ofstream(path) << why; };
}

/// Wait (the program's main thread goes on after a sent signal) until the watch ends the process.
[[noreturn]] void run_on() {
  for (int k = 0; k < 2000; ++k) std::this_thread::sleep_for(10ms);
  ::_exit(99);
}

void crash() {
  volatile std::uintptr_t address = 0;
  *reinterpret_cast<volatile int*>(address) = 1;
}

}  // namespace

namespace {

/// A program that starts the watch on every signal it has (its work writes why to a file), then
/// does `stop`: it must end by `sig`, the work done first.
void check_work_then_end(void (*stop)(), int sig, const std::string& why) {
  const cdpkit_test::temp_dir dir;
  const fs::path out = dir.path() / "profile.txt";
  const child_end e = run_child([&] {
    const auto watched = watch_signals(write_to(out));
    if (!watched || watched->size() != std::size(watched_by_default)) ::_exit(3);
    stop();
    run_on();
  });
  CHECK(ended_by(e, sig));
  CHECK(read_text(out) == why);
}

/// In a child: starts the watch with work that creates `started`, then outlasts any test (60 s,
/// bounded at 120 s); exits 3 when the watch cannot start.
void watch_with_slow_work(const fs::path& started) {
  const auto slow = [started](const std::string&) {
    std::ofstream(started) << "1";
    std::this_thread::sleep_for(60s);
  };
  if (!watch_signals(slow, 120s)) ::_exit(3);
}

void wait_until_exists(const fs::path& file) {
  while (!fs::exists(file)) std::this_thread::sleep_for(5ms);
}

}  // namespace

TEST_CASE("a program stopped by SIGTERM does the work, then ends by SIGTERM") {
  check_work_then_end([] { std::raise(SIGTERM); }, SIGTERM, "the program was stopped by signal 15 (SIGTERM)");
}

TEST_CASE("a crash does the work before the program ends by SIGSEGV") {
  check_work_then_end(crash, SIGSEGV, "the program was stopped by signal 11 (SIGSEGV)");
}

TEST_CASE("abort() does the work before the program ends by SIGABRT") {
  check_work_then_end([] { std::abort(); }, SIGABRT, "the program was stopped by signal 6 (SIGABRT)");
}

TEST_CASE("a second signal while the work runs ends the program at once by that signal") {
  const cdpkit_test::temp_dir dir;
  const fs::path started = dir.path() / "started";
  const child_end e = run_child([&] {
    watch_with_slow_work(started);
    std::raise(SIGTERM);
    wait_until_exists(started);
    std::raise(SIGINT);
    run_on();
  });
  CHECK(ended_by(e, SIGINT));
  CHECK(e.seconds < 20);
}

TEST_CASE("the same sent signal again within a second is the same request: the work goes on") {
  const cdpkit_test::temp_dir dir;
  const fs::path started = dir.path() / "started", survived = dir.path() / "survived";
  const child_end e = run_child([&] {
    watch_with_slow_work(started);
    std::raise(SIGTERM);
    std::raise(SIGTERM);  // a process group's copy beside a forwarded one
    std::ofstream(survived) << "1";
    wait_until_exists(started);
    std::raise(SIGINT);
    run_on();
  });
  CHECK(fs::exists(survived));
  CHECK(ended_by(e, SIGINT));
}

TEST_CASE("work that outlasts its bound is cut off: the program still ends by its signal") {
  const auto stuck = [](const std::string&) { std::this_thread::sleep_for(60s); };
  SUBCASE("a sent signal") {
    const child_end e = run_child([&] {
      if (!watch_signals(stuck, 300ms)) ::_exit(3);
      std::raise(SIGHUP);
      run_on();
    });
    CHECK(ended_by(e, SIGHUP));
    CHECK(e.seconds < 20);
  }
  SUBCASE("a crash") {
    const child_end e = run_child([&] {
      if (!watch_signals(stuck, 300ms)) ::_exit(3);
      crash();
      ::_exit(98);
    });
    CHECK(ended_by(e, SIGSEGV));
    CHECK(e.seconds < 20);
  }
}

TEST_CASE("a signal the program handles itself is left to the program") {
  const cdpkit_test::temp_dir dir;
  const fs::path out = dir.path() / "profile.txt";
  const child_end e = run_child([&] {
    std::signal(SIGTERM, [](int) { ::_exit(42); });
    const auto watched = watch_signals(write_to(out));
    if (!watched) ::_exit(3);
    for (const int sig : *watched)
      if (sig == SIGTERM) ::_exit(4);
    std::raise(SIGTERM);
    run_on();
  });
  REQUIRE(e.finished);
  REQUIRE(WIFEXITED(e.status));
  CHECK(WEXITSTATUS(e.status) == 42);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("a child the program forks gets the default action back: the program's work does not run") {
  const cdpkit_test::temp_dir dir;
  const fs::path out = dir.path() / "profile.txt";
  const child_end e = run_child([&] {
    if (!watch_signals(write_to(out))) ::_exit(3);
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      std::raise(SIGTERM);
      ::_exit(5);
    }
    int status = 0;
    ::waitpid(grandchild, &status, 0);
    std::this_thread::sleep_for(200ms);  // time for a watcher that wrongly woke up
    ::_exit(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM && !fs::exists(out) ? 0 : 6);
  });
  REQUIRE(e.finished);
  REQUIRE(WIFEXITED(e.status));
  CHECK(WEXITSTATUS(e.status) == 0);
}

TEST_CASE("signals are described by number and usual name") {
  CHECK(signal_description(SIGSEGV) == "signal 11 (SIGSEGV)");
  CHECK(signal_description(SIGINT) == "signal 2 (SIGINT)");
  CHECK(signal_description(SIGRTMIN + 1).rfind("signal ", 0) == 0);
  CHECK(signal_description(SIGRTMIN + 1).find('(') == std::string::npos);
}
