// cdpkit — the command-line front door. `cdpkit profile` runs any CUDA program under cdpkit's
// injection library (libcdpkit_inject.so, profiling/inject) and writes its profile and report,
// the way `nsys profile` does:
//
//   cdpkit profile ./app args...                   report1.json and report1.html (report2... next)
//   cdpkit profile -o run --collect timeline -- ./app --flag
//
// The program is not rebuilt: the CUDA driver loads the injection library when the program first
// initializes CUDA (CUDA_INJECTION64_PATH, set here with CDPKIT_PROFILE_OUT and CDPKIT_COLLECT for
// the program alone). The library is found beside this executable: <prefix>/lib when installed,
// profiling/inject in the build tree; no environment variable is needed.
//
// Exit status: the program's own (128 + N when it was killed by signal N, said in one line: the
// injection library still writes what it gathered when the signal was one a program meets, such
// as Ctrl-C, SIGTERM or a crash, and the profile and its report say it is incomplete);
// 2 with one line "cdpkit profile: <what>" when the front door cannot do what was asked: a bad
// option, a program that is missing or not executable, an output that exists (replace it with
// --force-overwrite), a profile the report cannot be made from. A program that made no CUDA call
// leaves no profile: that is said, and its exit status is still passed through. A program that
// starts CUDA programs of its own (a script, a launcher) leaves one profile per process that made
// CUDA calls: the program's (or the first's) is NAME.json, another's NAME.<pid>.json, and NAME.html
// shows them all. A default name is taken when the program starts (NAME.json created empty), so
// front doors started together in one folder never pick the same one.

#include "profile_command.hpp"

#include <cdpkit/report/html.hpp>
#include <cdpkit/quoted_input.hpp>
#include <cdpkit/report/profile.hpp>
#include <cdpkit/schema/text.hpp>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <csignal>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using cdpkit::tools::command_error;

int fail(const std::string& what) {
  std::cerr << "cdpkit profile: " << what << "\n";
  return cdpkit::tools::exit_error;
}

/// The folder of this executable (/proc/self/exe), where the injection library is looked for.
fs::path exe_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw command_error("cannot find this program's own folder (/proc/self/exe): " + ec.message());
  return self.parent_path();
}

/// NAME from -o: a trailing .json or .html is dropped ("run.json" and "run" both give run.json
/// and run.html).
std::string report_stem(std::string name) {
  for (const char* ext : {".json", ".html"}) {
    const std::string e(ext);
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
      name.resize(name.size() - e.size());
      break;
    }
  }
  return name;
}

/// Refuse to replace `path` unless --force-overwrite was given, and even then unless it holds
/// what is written there (`what`, first character `first`).
void check_output(const std::string& path, bool force, const char* what, char first) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return;
  if (!force) throw command_error(path + " exists; name another output with -o, or replace it with --force-overwrite");
  if (const std::string why = cdpkit::schema::output_refusal(path, what, first); !why.empty()) throw command_error(why);
}

/// The profile's signal, re-raised with its default action once the report is written: a script
/// that runs the front door stops on Ctrl-C as it would on the program itself.
[[noreturn]] void die_by(int sig, int fallback_status) {
  std::signal(sig, SIG_DFL);
  std::raise(sig);
  std::_Exit(fallback_status);
}

int profile(bool named, const std::string& output, const std::string& collect, bool force,
            const std::vector<std::string>& command) {
  if (command.empty()) throw command_error("no program given: cdpkit profile [options] [--] <program> [arguments...]");
  if (command.front().size() > 1 && command.front()[0] == '-')
    throw command_error("unknown option " + cdpkit::quoted_input(command.front()) +
                        " (the program and its arguments follow the options, or --)");
  const std::string setting = cdpkit::tools::collect_setting(collect);
  std::string stem;  // the outputs' NAME; a default one is taken below, once nothing can refuse the run
  if (named) {
    stem = report_stem(output);
    if (stem.empty() || stem.find('%') != std::string::npos)
      throw command_error("-o " + cdpkit::quoted_input(output) +
                          ": not a report name (empty, or holding '%', which the injection library expands)");
    if (const fs::path folder = fs::path(stem).parent_path(); !folder.empty()) {
      std::error_code ec;
      if (!fs::is_directory(folder, ec))
        throw command_error("-o " + cdpkit::quoted_input(output) + ": the folder " +
                            cdpkit::quoted_input(folder.string()) + " does not exist");
    }
    check_output(stem + ".json", force, "a JSON document", '{');
    check_output(stem + ".html", force, "an HTML report", '<');
  }
  const fs::path program = cdpkit::tools::resolve_program(command.front(), std::getenv("PATH"));
  const fs::path library = cdpkit::tools::find_injection_library(
      exe_dir(), {CDPKIT_INJECT_FROM_INSTALLED, CDPKIT_INJECT_FROM_BUILD});
  // A default name is taken only now: NAME.json created empty, so that a front door started
  // beside this one takes the next name.
  if (!named) stem = cdpkit::tools::reserve_report_name(fs::current_path());
  const std::string out_json = stem + ".json", out_html = stem + ".html";
  const auto release_name = [&] {
    std::error_code ec;
    if (!named && fs::is_regular_file(out_json, ec) && fs::file_size(out_json, ec) == 0) fs::remove(out_json, ec);
  };
  // Each process that loads the library writes a file of its own ("%p": its process id), moved
  // onto NAME.json after: an existing NAME.json (--force-overwrite) is kept when the run writes no
  // profile, and a program that starts CUDA programs of its own leaves one profile each.
  const fs::path absolute_json = fs::absolute(out_json);
  const std::string prefix = absolute_json.filename().string() + ".cdpkit-" + std::to_string(::getpid()) + "-";
  const fs::path folder = absolute_json.parent_path();
  for (const auto& stale : cdpkit::tools::find_process_profiles(folder, prefix, 0)) {  // a reused process id's
    std::error_code ec;
    fs::remove(stale.path, ec);
  }

  long pid = 0;
  int status = 0;
  try {
    status = cdpkit::tools::run_program(program, command,
                                        {{"CUDA_INJECTION64_PATH", library.string()},
                                         {"CDPKIT_PROFILE_OUT", (folder / (prefix + "%p.part")).string()},
                                         {"CDPKIT_COLLECT", setting}},
                                        &pid);
  } catch (...) {
    release_name();
    throw;
  }
  const cdpkit::tools::program_end end = cdpkit::tools::describe_end(status, command.front());
  const auto finish = [&](int code) {
    if (end.signal == SIGINT || end.signal == SIGQUIT || end.signal == SIGTERM || end.signal == SIGHUP)
      die_by(end.signal, code);
    return code;
  };
  const int failed = end.exit_code != 0 ? end.exit_code : cdpkit::tools::exit_error;
  if (!end.message.empty()) std::cerr << "cdpkit profile: " << end.message << "\n";
  const std::vector<cdpkit::tools::process_profile> parts = cdpkit::tools::find_process_profiles(folder, prefix, pid);
  if (parts.empty()) {
    release_name();
    std::cerr << "cdpkit profile: no profile was written: " << cdpkit::quoted_input(command.front())
              << (end.message.empty() ? " made no CUDA call that loads the injection library"
                                      : " ended before the injection library could write one")
              << "\n";
    return finish(end.exit_code);
  }
  // The program's profile (or, when the program itself made no CUDA call, the first process's) is
  // NAME.json; another process's is NAME.<pid>.json. The report shows them all.
  std::vector<std::string> written;
  std::vector<long> written_pids;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const std::string target = k == 0 ? out_json : stem + "." + std::to_string(parts[k].pid) + ".json";
    std::error_code ec;
    if (k > 0 && fs::exists(fs::symlink_status(target, ec)) && !force) {
      std::cerr << "cdpkit profile: " << cdpkit::quoted_input(target) << " exists: process " << parts[k].pid
                << "'s profile is left in " << cdpkit::quoted_input(parts[k].path.string()) << "\n";
      continue;
    }
    fs::rename(parts[k].path, target, ec);
    if (ec) {
      std::cerr << "cdpkit profile: the profile could not be moved to " << cdpkit::quoted_input(target) << " ("
                << ec.message() << "); it is in " << cdpkit::quoted_input(parts[k].path.string()) << "\n";
      if (k == 0) {
        release_name();
        return finish(failed);
      }
      continue;
    }
    written.push_back(target);
    written_pids.push_back(parts[k].pid);
  }
  std::string incomplete;
  try {
    std::vector<cdpkit::report::profile> profiles;
    for (const auto& w : written) profiles.push_back(cdpkit::report::load_profile(w));
    cdpkit::report::write_file_atomically(out_html, cdpkit::report::render_html(profiles));
    if (profiles.front().collector && profiles.front().collector->incomplete)
      incomplete = *profiles.front().collector->incomplete;
  } catch (const std::exception& e) {
    std::cerr << "cdpkit profile: " << out_json << " was written, but no report was made from it: " << e.what() << "\n";
    return finish(failed);
  }
  std::cerr << "cdpkit profile: ";
  if (written.size() > 1) {
    std::cerr << written.size() << " processes made CUDA calls: wrote";
    for (std::size_t k = 0; k < written.size(); ++k)
      std::cerr << " " << written[k] << " (process " << written_pids[k] << (written_pids[k] == pid ? ", the program" : "")
                << "),";
    std::cerr << " and " << out_html << " (all " << written.size() << ")";
  } else {
    std::cerr << "wrote " << out_json << " and " << out_html;
  }
  std::cerr << (incomplete.empty() ? std::string() : " (incomplete: " + incomplete + ")") << "\n";
  return finish(end.exit_code);
}

int run(int argc, char** argv) {
  CLI::App app{"cdpkit: profile CUDA programs, with every grid their kernels launch"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("cdpkit ") + CDPKIT_VERSION);
  CLI::App* prof = app.add_subcommand(
      "profile", "run a program under cdpkit's injection library; write NAME.json (profile) and NAME.html (report)");
  std::string output, collect = "metrics";
  bool force = false;
  CLI::Option* named = prof->add_option("-o,--output", output,
                   "NAME of the profile and report (NAME.json, NAME.html); default report1, report2, ... "
                   "(the first free)");
  prof->add_option("--collect", collect,
                   "metrics (CUPTI's range profiler: one range per host kernel launch, the grids it "
                   "launches folded in), timeline (PM sampling), none (host timeline only) or all")
      ->capture_default_str();
  prof->add_flag("--force-overwrite", force, "replace NAME.json and NAME.html when they exist");
  prof->prefix_command();  // the first positional and everything after it are the program's
  prof->footer("The program and its arguments follow the options, after -- where the program's own "
               "arguments could be taken for these options: cdpkit profile -o run -- ./app --flag");
  // What follows a "--" among the options is the program's, whatever it looks like (CLI11 is given
  // what comes before); without one, CLI11's prefix command stops at the program's name.
  int ours = argc;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "profile") {
      const std::vector<std::string> rest(argv + i + 1, argv + argc);
      ours = i + 1 + static_cast<int>(cdpkit::tools::options_end(rest, {"-o", "--output", "--collect"}));
      break;
    }
  try {
    app.parse(ours, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return fail(e.what());
  }
  std::vector<std::string> command = prof->remaining();
  if (ours < argc) {
    if (!command.empty())
      return fail("unknown option " + cdpkit::quoted_input(command.front()) +
                  " before -- (the program and its arguments follow the options and --)");
    command.assign(argv + ours + 1, argv + argc);
  }
  return profile(named->count() > 0, output, collect, force, command);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    return fail("out of memory");
  } catch (const std::exception& e) {
    return fail(e.what());
  } catch (...) {
    return fail("unknown error");
  }
}
