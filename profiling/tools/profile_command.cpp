// The decisions of `cdpkit profile` (profile_command.hpp).

#include "profile_command.hpp"

#include "../src/signal_names.hpp"

#include <cdpkit/quoted_input.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>

extern char** environ;

namespace cdpkit::tools {

namespace fs = std::filesystem;

std::size_t options_end(const std::vector<std::string>& args, const std::vector<std::string>& valued) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return i;
    if (a.size() < 2 || a[0] != '-') return args.size();  // the program's name: the rest is its
    if (std::find(valued.begin(), valued.end(), a) != valued.end()) ++i;  // its value follows
  }
  return args.size();
}

std::string next_report_name(const fs::path& dir) {
  for (int n = 1; n <= 10000; ++n) {
    const std::string name = "report" + std::to_string(n);
    std::error_code ec;
    // a link counts as taken, even a broken one (the exclusive create would find it)
    if (!fs::exists(fs::symlink_status(dir / (name + ".json"), ec)) &&
        !fs::exists(fs::symlink_status(dir / (name + ".html"), ec)))
      return name;
  }
  throw command_error("report1 to report10000 are all taken in " + dir.string() + "; name the output with -o");
}

std::string reserve_report_name(const fs::path& dir) {
  for (int tries = 0; tries < 10000; ++tries) {
    const std::string name = next_report_name(dir);
    const fs::path json = dir / (name + ".json");
    const int fd = ::open(json.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return name;
    }
    if (errno != EEXIST) throw command_error("cannot create " + json.string() + ": " + std::strerror(errno));
  }
  throw command_error("no report name could be taken in " + dir.string() + "; name the output with -o");
}

std::vector<process_profile> find_process_profiles(const fs::path& dir, const std::string& prefix, long program_pid) {
  std::vector<process_profile> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string suffix = ".part";
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    out.push_back({std::stol(digits), it->path()});
  }
  std::sort(out.begin(), out.end(), [&](const process_profile& a, const process_profile& b) {
    return std::make_pair(a.pid != program_pid, a.pid) < std::make_pair(b.pid != program_pid, b.pid);
  });
  return out;
}

namespace {
/// What `path` is, for a program: "" when a regular file this process may execute, else why not.
std::string unrunnable(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "no such program";
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if (::access(path.c_str(), X_OK) != 0) return "not executable";
  return {};
}
}  // namespace

fs::path resolve_program(const std::string& name, const char* path_env) {
  if (name.empty()) throw command_error("no program to profile (an empty name)");
  if (name.find('/') != std::string::npos) {
    if (const std::string why = unrunnable(name); !why.empty()) throw command_error(quoted_input(name) + ": " + why);
    return name;
  }
  const std::string path = path_env != nullptr ? path_env : "/usr/bin:/bin";
  std::string first_reason;
  std::size_t from = 0;
  while (from <= path.size()) {
    const std::size_t colon = std::min(path.find(':', from), path.size());
    const std::string dir = path.substr(from, colon - from);
    const fs::path candidate = (dir.empty() ? fs::path(".") : fs::path(dir)) / name;
    const std::string why = unrunnable(candidate);
    if (why.empty()) return candidate;
    if (why != "no such program" && first_reason.empty()) first_reason = candidate.string() + ": " + why;
    from = colon + 1;
  }
  throw command_error(quoted_input(name) + ": no such program in PATH" +
                    (first_reason.empty() ? std::string() : " (" + first_reason + ")"));
}

std::optional<fs::path> find_library_beside(const fs::path& exe_dir, const std::vector<std::string>& relative_candidates) {
  for (const auto& rel : relative_candidates) {
    const fs::path p = (exe_dir / rel).lexically_normal();
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p;
  }
  return std::nullopt;
}

fs::path find_injection_library(const fs::path& exe_dir, const std::vector<std::string>& relative_candidates,
                                const std::string& file) {
  if (auto found = find_library_beside(exe_dir, relative_candidates)) return *found;
  std::string looked;
  for (const auto& rel : relative_candidates) looked += (looked.empty() ? "" : ", ") + (exe_dir / rel).lexically_normal().string();
  throw command_error("the injection library " + file + " is not installed beside this program (looked at " + looked + ")");
}

collect_plan collect_setting(const std::string& collect) {
  std::vector<std::string> parts;
  std::stringstream in(collect);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  if (collect.empty() || collect.back() == ',') parts.emplace_back();
  collect_plan plan;
  bool none = false;
  for (const auto& part : parts) {
    std::string cupti;
    if (part == "metrics" || part == "timeline") {
      cupti = part;
    } else if (part == "all") {
      cupti = "metrics";
      plan.children = true;
    } else if (part == "children" || part == "trace") {  // an unmodified program's trace is its grids
      plan.children = true;
    } else if (part == "none") {
      none = true;
    } else {
      throw command_error("--collect " + quoted_input(collect) + ": " + quoted_input(part) +
                          " is not one of children (or trace), metrics, timeline, none, all");
    }
    if (!cupti.empty() && !plan.cupti.empty() && plan.cupti != cupti)
      throw command_error("--collect " + quoted_input(collect) +
                          ": metrics and timeline cannot be collected in one run (CUPTI's range profiler and "
                          "PM sampling hold the same counters); profile twice");
    if (!cupti.empty()) plan.cupti = cupti;
  }
  if (none && !plan.cupti.empty())
    throw command_error("--collect " + quoted_input(collect) + ": none (the host timeline alone) cannot go with " + plan.cupti);
  if (none) plan.cupti = "none";
  return plan;
}

nlohmann::json merge_profiles(nlohmann::json cupti, nlohmann::json children) {
  if (cupti.is_null()) return children;
  if (children.is_null()) return cupti;
  nlohmann::json& runs = cupti["runs"];
  if (!runs.is_array()) runs = nlohmann::json::array();
  if (const auto it = children.find("runs"); it != children.end() && it->is_array())
    for (auto& run : *it) {
      run["id"] = runs.size();
      runs.push_back(std::move(run));
    }
  nlohmann::json& col = cupti["collector"];
  const nlohmann::json other = children.contains("collector") ? children["collector"] : nlohmann::json();
  if (col.is_null()) {
    col = other;
  } else if (other.is_object()) {
    for (const char* list : {"requested", "notes"})
      if (const auto it = other.find(list); it != other.end() && it->is_array())
        for (const auto& v : *it) col[list].push_back(v);
    if (!col.contains("incomplete") && other.contains("incomplete")) col["incomplete"] = other.at("incomplete");
  }
  return cupti;
}

program_end describe_end(int wait_status, const std::string& program) {
  if (WIFEXITED(wait_status)) return {WEXITSTATUS(wait_status), {}};
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return {128 + sig, quoted_input(program) + " was killed by " + profiling::detail::signal_description(sig) +
                           (WCOREDUMP(wait_status) ? ", core dumped" : ""), sig};
  }
  return {exit_error, quoted_input(program) + " ended in an unknown way (wait status " + std::to_string(wait_status) + ")"};
}

namespace {
/// The program run now (0 for none), for pass_on.
std::atomic<pid_t> running_program{0};
static_assert(std::atomic<pid_t>::is_always_lock_free);

/// SIGTERM and SIGHUP sent to the front door alone (kill, a job's time limit, a closed terminal)
/// go on to the program, which then ends as it chooses, its profile written.
void pass_on(int sig) {
  const int saved = errno;
  if (const pid_t p = running_program.load(); p > 0) (void)::kill(p, sig);
  errno = saved;
}

/// For its lifetime: SIGINT and SIGQUIT ignored (the terminal sends them to the program too),
/// SIGTERM and SIGHUP passed on to the program, SIGCHLD at its default; the previous handlers
/// restored after.
class program_signals {
 public:
  program_signals() {
    // SIGCHLD at its default: an inherited SIG_IGN would reap the program unseen (waitpid: ECHILD).
    const std::array<void (*)(int), signals_.size()> handlers{SIG_IGN, SIG_IGN, pass_on, pass_on, SIG_DFL};
    for (std::size_t k = 0; k < signals_.size(); ++k) {
      struct sigaction a {};
      a.sa_handler = handlers[k];
      sigemptyset(&a.sa_mask);
      ::sigaction(signals_[k], &a, &old_[k]);
    }
  }
  ~program_signals() { restore(); }
  /// The handlers as they were (also in the forked program, before its exec).
  void restore() const noexcept {
    for (std::size_t k = 0; k < signals_.size(); ++k) ::sigaction(signals_[k], &old_[k], nullptr);
  }
  program_signals(const program_signals&) = delete;
  program_signals& operator=(const program_signals&) = delete;

 private:
  static constexpr std::array<int, 5> signals_{SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD};
  struct sigaction old_[signals_.size()] {};
};

/// A file descriptor closed with the scope.
struct fd_owner {
  int fd = -1;
  ~fd_owner() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

int run_program(const fs::path& program, const std::vector<std::string>& args,
                const std::vector<std::pair<std::string, std::string>>& env, long* pid_out) {
  // Everything the child needs is made before fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_text;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : env) replaced = replaced || k == key;
    if (!replaced) env_text.push_back(entry);
  }
  for (const auto& [k, v] : env) env_text.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_text) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_text = args;
  for (auto& s : arg_text) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string path = program.string();
  // A file the kernel cannot execute (ENOEXEC: a script without "#!") is run by /bin/sh, as
  // execvp and the shells do: sh <path> <args after argv[0]>.
  std::string sh = "/bin/sh", path_arg = path;
  std::vector<char*> sh_argv{sh.data(), path_arg.data()};
  for (std::size_t k = 1; k < arg_text.size(); ++k) sh_argv.push_back(arg_text[k].data());
  sh_argv.push_back(nullptr);

  int pipe_fds[2];  // the child reports a failed exec through it (closed on a successful one)
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw command_error(std::string("cannot start the program: pipe: ") + std::strerror(errno));
  fd_owner read_end{pipe_fds[0]}, write_end{pipe_fds[1]};
  const program_signals handling;
  const pid_t pid = ::fork();
  if (pid < 0) throw command_error(std::string("cannot start the program: fork: ") + std::strerror(errno));
  if (pid == 0) {
    handling.restore();  // the program gets the handlers we had
    ::execve(path.c_str(), argv.data(), envp.data());
    if (errno == ENOEXEC) ::execve(sh_argv[0], sh_argv.data(), envp.data());
    const int err = errno;
    (void)!::write(pipe_fds[1], &err, sizeof err);
    ::_exit(127);
  }
  if (pid_out != nullptr) *pid_out = static_cast<long>(pid);
  running_program = pid;
  struct forget_program {
    ~forget_program() { running_program = 0; }
  } forget;
  ::close(write_end.fd);
  write_end.fd = -1;
  int exec_errno = 0;
  ssize_t got;
  do got = ::read(read_end.fd, &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw command_error(std::string("waiting for the program: ") + std::strerror(errno));
  }
  if (got == static_cast<ssize_t>(sizeof exec_errno))
    throw command_error(quoted_input(path) + ": cannot be run: " + std::strerror(exec_errno));
  return status;
}

}  // namespace cdpkit::tools
