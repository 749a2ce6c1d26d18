// libcdpkit_inject's signal watch (signal_watch.hpp): the handler, the watcher thread, and the
// default actions given back to forked children.

#include "signal_watch.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <iterator>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace cdpkit::profiling::inject {

namespace {

constexpr int sent_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int all_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static_assert(std::size(all_signals) == std::size(sent_signals) + std::size(crash_signals));

bool is_crash(int sig) noexcept {
  for (const int c : crash_signals)
    if (c == sig) return true;
  return false;
}

// Set once by watch_signals before any handler is installed; read by the handler.
int notify_fds[2] = {-1, -1};  // handler -> watcher: the signal's number, one byte
int done_fds[2] = {-1, -1};    // watcher -> a crashing thread's handler: one byte, the work is over
int wait_ms = 0;               // how long a crashing thread waits for the work
pid_t owner = 0;               // the process that started the watch
std::atomic<int> first_signal{0};
std::atomic<long long> first_signal_ns{0};  // when it came (CLOCK_MONOTONIC), 0 until set
std::atomic<bool> installed[NSIG] = {};

void set_default(int sig) noexcept {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  (void)::sigaction(sig, &dfl, nullptr);
}

/// End the process by `sig`'s default action from any thread, in a handler or not. Async-signal-safe.
void die_by(int sig) noexcept {
  set_default(sig);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  (void)::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  (void)::raise(sig);
  ::_exit(128 + sig);  // reached only if the default action did not end the process
}

void write_byte(int fd, unsigned char b) noexcept {
  ssize_t w;
  do w = ::write(fd, &b, 1);
  while (w < 0 && errno == EINTR);
}

long long monotonic_ns() noexcept {  // clock_gettime is async-signal-safe
  struct timespec t {};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

/// A crashing thread cannot go on: wait (bounded) until the work is done, then end by the signal.
void wait_for_work_then_die(int sig) noexcept {
  struct pollfd p {};
  p.fd = done_fds[0];
  p.events = POLLIN;
  int r;
  do r = ::poll(&p, 1, wait_ms);
  while (r < 0 && errno == EINTR);
  die_by(sig);
}

void handler(int sig, siginfo_t*, void*) {
  const int saved_errno = errno;
  if (::getpid() != owner) die_by(sig);  // a child forked without the fork handlers: default action
  const long long now = monotonic_ns();
  int first = 0;
  if (!first_signal.compare_exchange_strong(first, sig)) {
    // The same sent signal again within a second is the same request (a process group's copy
    // beside a launcher's forwarded one); another thread's crash waits for the work under way;
    // any other signal ends the program at once (Ctrl-C twice).
    const long long at = first_signal_ns.load();
    if (sig == first && !is_crash(sig) && (at == 0 || now - at < 1000000000LL)) {
      errno = saved_errno;
      return;
    }
    if (is_crash(sig)) wait_for_work_then_die(sig);
    die_by(sig);
  }
  first_signal_ns = now;
  write_byte(notify_fds[1], static_cast<unsigned char>(sig));
  if (is_crash(sig)) wait_for_work_then_die(sig);
  errno = saved_errno;
}

/// In a child the program forked: the watcher thread is not there; the default actions come back.
void after_fork_in_child() {
  for (int sig = 1; sig < NSIG; ++sig)
    if (installed[sig].load()) {
      set_default(sig);
      installed[sig] = false;
    }
}

/// Blocks every signal on the calling thread for its lifetime (threads started meanwhile inherit it).
class all_signals_blocked {
 public:
  all_signals_blocked() {
    sigset_t all;
    sigfillset(&all);
    (void)::pthread_sigmask(SIG_BLOCK, &all, &old_);
  }
  ~all_signals_blocked() { (void)::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  all_signals_blocked(const all_signals_blocked&) = delete;
  all_signals_blocked& operator=(const all_signals_blocked&) = delete;

 private:
  sigset_t old_{};
};

/// The watcher thread (every signal blocked): wait for a signal's number, run the work on a thread
/// of its own for at most `bound`, then let the signal end the process.
void watch(const std::function<void(const std::string&)>& work, std::chrono::milliseconds bound) {
  unsigned char b = 0;
  ssize_t got;
  do got = ::read(notify_fds[0], &b, 1);
  while (got < 0 && errno == EINTR);
  if (got != 1) return;
  const int sig = b;
  struct progress {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto p = std::make_shared<progress>();
  try {
    std::thread([p, work, why = "the program was stopped by " + signal_description(sig)] {
      try {
        work(why);
      } catch (...) {  // never std::terminate here: the signal decides how the program ends
      }
      std::lock_guard<std::mutex> lock(p->mu);
      p->done = true;
      p->cv.notify_all();
    }).detach();
    std::unique_lock<std::mutex> lock(p->mu);
    p->cv.wait_for(lock, bound, [&] { return p->done; });
  } catch (...) {  // no thread for the work: the signal ends the process without it
  }
  if (is_crash(sig)) {
    write_byte(done_fds[1], 1);  // the crashing thread's handler ends the process
    return;
  }
  die_by(sig);
}

}  // namespace

std::optional<std::vector<int>> watch_signals(std::function<void(const std::string& why)> work,
                                              std::chrono::milliseconds bound) {
  static std::mutex mu;
  static bool started = false;
  static std::optional<std::vector<int>> watched;
  std::lock_guard<std::mutex> lock(mu);
  if (started) return watched;
  started = true;
  if (::pipe2(notify_fds, O_CLOEXEC) != 0) return std::nullopt;
  if (::pipe2(done_fds, O_CLOEXEC) != 0) {
    ::close(notify_fds[0]);
    ::close(notify_fds[1]);
    return std::nullopt;
  }
  owner = ::getpid();
  const auto ms = bound.count() < 0 ? 0 : bound.count();
  wait_ms = static_cast<int>(std::min<decltype(bound.count())>(ms + 1000, 24 * 3600 * 1000));
  try {
    const all_signals_blocked blocked;  // the watcher starts with every signal blocked
    std::thread([w = std::move(work), bound] { watch(w, bound); }).detach();
  } catch (...) {
    for (int* fds : {notify_fds, done_fds}) {
      ::close(fds[0]);
      ::close(fds[1]);
    }
    return std::nullopt;
  }
  watched.emplace();
  (void)::pthread_atfork(nullptr, nullptr, after_fork_in_child);
  for (const int sig : all_signals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;  // the program's own
    struct sigaction ours {};
    ours.sa_sigaction = handler;
    ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;  // a program's sigaltstack serves a stack overflow
    sigemptyset(&ours.sa_mask);
    if (::sigaction(sig, &ours, nullptr) == 0) {
      installed[sig] = true;
      watched->push_back(sig);
    }
  }
  return watched;
}

int caught_signal() noexcept { return first_signal.load(); }

void end_by_caught_signal() noexcept {
  if (const int sig = first_signal.load(); sig != 0) die_by(sig);
}

}  // namespace cdpkit::profiling::inject
