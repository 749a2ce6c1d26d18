#pragma once
// profile_command.hpp — the parts of `cdpkit profile` (cdpkit.cpp) that decide, apart from the
// one that runs: report names, the program to run, the injection library's place, the collection
// setting, and what the program's end means for the front door's exit status. Host C++ only.

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit::tools {

/// A command that cannot be carried out (a bad option, a program that cannot be run, an output it
/// will not replace): its message is the front door's one line.
class command_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The front door's own errors (a bad command line, a program that cannot be run, an output it
/// will not replace): one line "cdpkit profile: <what>" and exit 2.
inline constexpr int exit_error = 2;

/// Where the front door's own arguments end in `args` (those after the subcommand): the index of a
/// "--" met while reading options (`valued` names the options that take a separate value, e.g.
/// "-o"), or args.size() when the program's name comes first: a "--" after the program's name is
/// the program's own argument.
std::size_t options_end(const std::vector<std::string>& args, const std::vector<std::string>& valued);

/// "report1", "report2", ... (as Nsight Systems names its reports): the first NAME for which
/// neither `dir`/NAME.json nor `dir`/NAME.html exists. Throws command_error after 10,000 names.
std::string next_report_name(const std::filesystem::path& dir);

/// next_report_name's NAME, taken: NAME.json is created empty (exclusively), so that a front door
/// started at the same time in the same folder takes the next name. The profile replaces the empty
/// file; a run that writes none removes it. Throws command_error when no name can be taken (the
/// folder cannot be written, or 10,000 tries found each name taken).
std::string reserve_report_name(const std::filesystem::path& dir);

/// A profile the injection library wrote for one process of a run.
struct process_profile {
  long pid = 0;
  std::filesystem::path path;
};

/// The profiles of one run: the files in `dir` named `prefix` + <process id> + ".part" (the
/// library writes CDPKIT_PROFILE_OUT with "%p" replaced by its process id; a program that starts
/// CUDA programs of its own leaves one each). The program's own (`program_pid`) first, then by
/// process id.
std::vector<process_profile> find_process_profiles(const std::filesystem::path& dir, const std::string& prefix,
                                                   long program_pid);

/// The program `name` names: `name` itself when it holds a '/', else the first regular, executable
/// file called `name` in the folders of `path_env` (PATH's value; empty entries mean the current
/// folder; null: no PATH, so "/usr/bin:/bin" as the shells take it). Throws command_error
/// "<name>: no such program" (with "in PATH" for a lookup), "<name>: is a directory" or "<name>:
/// not executable".
std::filesystem::path resolve_program(const std::string& name, const char* path_env);

/// An injection library (`file`: libcdpkit_inject.so, libcdpkit_children.so) for the front door
/// installed or built in `exe_dir`: the first of `relative_candidates` (paths relative to exe_dir)
/// that is a regular file; unset when none is.
std::optional<std::filesystem::path> find_library_beside(const std::filesystem::path& exe_dir,
                                                         const std::vector<std::string>& relative_candidates);

/// The same, required: throws command_error naming `file` and every place looked at when none is.
std::filesystem::path find_injection_library(const std::filesystem::path& exe_dir,
                                             const std::vector<std::string>& relative_candidates,
                                             const std::string& file = "libcdpkit_inject.so");

/// What --collect asks for: a run of the program under libcdpkit_inject.so (CUPTI) and a run under
/// libcdpkit_children.so (the Compute Sanitizer API), which cannot share one process.
struct collect_plan {
  /// CDPKIT_COLLECT for libcdpkit_inject.so: "metrics" (CUPTI's range profiler, one range per
  /// host kernel launch, device-launched children folded in), "timeline" (PM sampling) or "none"
  /// (the host timeline alone); empty: no such run.
  std::string cupti;
  bool children = false;  ///< every grid, device-launched ones included (libcdpkit_children.so)
};

/// --collect's value: a comma-separated list of children (also spelled trace: an unmodified
/// program's launch trace is its grids'), metrics, timeline, none and all (the most that can be
/// had: metrics and children). "metrics,timeline" is refused (CUPTI serves one of
/// them at a time), and so is "none" with metrics or timeline. Throws command_error naming the value.
collect_plan collect_setting(const std::string& collect);

/// One profile from the profiles of one process's runs: the CUPTI run's document (`cupti`, may be
/// null) with the children run's runs appended (renumbered after its own), the collectors'
/// requests and notes joined, and "incomplete" from either. With one of them null, the other as
/// it is. Missing or mistyped parts of either are left out (the report's reader says what is
/// wrong with the result).
nlohmann::json merge_profiles(nlohmann::json cupti, nlohmann::json children);

/// How the profiled program ended, for the front door: its exit status passed through, or
/// 128 + N after signal N with a message naming it ("'<program>' was killed by signal 11 (SIGSEGV)").
struct program_end {
  int exit_code = 0;
  std::string message;  ///< empty for a normal exit
  int signal = 0;       ///< the signal that killed the program, 0 for none
};
/// `wait_status` as waitpid gives it.
program_end describe_end(int wait_status, const std::string& program);

/// Run `program` with `args` (argv[0] first) and the environment of this process plus `env`
/// (replacing variables of the same names), and wait for it. While the program runs, SIGINT and
/// SIGQUIT are ignored by the front door (the terminal sends them to both: the program decides,
/// and the front door still writes the report), SIGTERM and SIGHUP sent to the front door are
/// passed on to the program (which ends as it chooses, its profile written), and SIGCHLD has its
/// default action (an inherited SIG_IGN would reap the program unseen); the program gets the
/// handlers the front door had. A
/// file the kernel cannot execute (a script without "#!") is run by /bin/sh, as execvp does. Returns the wait status. Throws command_error
/// when the program cannot be started (fork or exec failed: the exec's error is passed back).
/// `pid`, when given, receives the program's process id.
int run_program(const std::filesystem::path& program, const std::vector<std::string>& args,
                const std::vector<std::pair<std::string, std::string>>& env, long* pid = nullptr);

}  // namespace cdpkit::tools
