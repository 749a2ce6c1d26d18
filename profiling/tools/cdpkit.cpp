// cdpkit — the command-line front door. `cdpkit profile` runs any CUDA program under cdpkit's
// injection libraries and writes its profile and report, the way `nsys profile` does:
//
//   cdpkit profile ./app args...                   report1.json and report1.html (report2... next)
//   cdpkit profile -o run --collect timeline -- ./app --flag
//
// The libraries: libcdpkit_children.so (profiling/children: every grid, device-launched ones
// included, through the Compute Sanitizer API; the default where it is built) and
// libcdpkit_inject.so (profiling/inject: CUPTI's metrics, timeline and host timeline). They cannot
// share a process: asked for both, the program runs twice, CUPTI's run first, and the two
// profiles of the program become one.
//
// The program is not rebuilt: the CUDA driver loads the injection library when the program first
// initializes CUDA (CUDA_INJECTION64_PATH, set here with CDPKIT_PROFILE_OUT and CDPKIT_COLLECT for
// the program alone). The libraries are found beside this executable: <prefix>/lib when
// installed, profiling/inject and profiling/children in the build tree; no environment variable
// is needed.
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

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <csignal>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
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

/// The text of a file, or empty when it cannot be read.
std::string file_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// One run of the program under one injection library.
struct library_run {
  std::string tag;  ///< "children" or "cupti": the part files' prefix holds it
  fs::path library;
  std::vector<std::pair<std::string, std::string>> env;
  long pid = 0;
  cdpkit::tools::program_end end;
  std::vector<cdpkit::tools::process_profile> parts;
};

int profile(bool named, const std::string& output, const std::string& collect, bool collect_given, bool force,
            const std::vector<std::string>& command) {
  if (command.empty()) throw command_error("no program given: cdpkit profile [options] [--] <program> [arguments...]");
  if (command.front().size() > 1 && command.front()[0] == '-')
    throw command_error("unknown option " + cdpkit::quoted_input(command.front()) +
                        " (the program and its arguments follow the options, or --)");
  cdpkit::tools::collect_plan plan = cdpkit::tools::collect_setting(collect);
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
  // The runs: CUPTI's (metrics, timeline or the host timeline), then the children collector's
  // (every grid); the two cannot share a process. Without --collect: children where the library is
  // installed (one run), else metrics.
  const std::vector<std::string> children_places{CDPKIT_CHILDREN_FROM_INSTALLED, CDPKIT_CHILDREN_FROM_BUILD};
  const auto children_library = cdpkit::tools::find_library_beside(exe_dir(), children_places);
  if (!collect_given) plan = children_library ? cdpkit::tools::collect_plan{"", true} : cdpkit::tools::collect_plan{"metrics", false};
  std::vector<library_run> runs;
  if (!plan.cupti.empty())
    runs.push_back({"cupti",
                    cdpkit::tools::find_injection_library(exe_dir(), {CDPKIT_INJECT_FROM_INSTALLED, CDPKIT_INJECT_FROM_BUILD}),
                    {{"CDPKIT_COLLECT", plan.cupti}}, 0, {}, {}});
  if (plan.children)
    runs.push_back({"children",
                    children_library ? *children_library
                                     : cdpkit::tools::find_injection_library(exe_dir(), children_places, "libcdpkit_children.so"),
                    {}, 0, {}, {}});
  if (runs.size() > 1)
    std::cerr << "cdpkit profile: the program runs twice: once for CUPTI's " << plan.cupti
              << ", once for every grid it launches (the Compute Sanitizer API); the two cannot share a process\n";
  // A default name is taken only now: NAME.json created empty, so that a front door started
  // beside this one takes the next name.
  if (!named) stem = cdpkit::tools::reserve_report_name(fs::current_path());
  const std::string out_json = stem + ".json", out_html = stem + ".html";
  const auto release_name = [&] {
    std::error_code ec;
    if (!named && fs::is_regular_file(out_json, ec) && fs::file_size(out_json, ec) == 0) fs::remove(out_json, ec);
  };
  // Each process that loads a library writes a file of its own ("%p": its process id), merged or
  // moved onto NAME.json after: an existing NAME.json (--force-overwrite) is kept when no run writes
  // a profile, and a program that starts CUDA programs of its own leaves one profile each.
  const fs::path absolute_json = fs::absolute(out_json);
  const std::string base_prefix = absolute_json.filename().string() + ".cdpkit-" + std::to_string(::getpid()) + "-";
  const fs::path folder = absolute_json.parent_path();

  const cdpkit::tools::program_end* last_end = nullptr;
  for (library_run& r : runs) {
    const std::string prefix = base_prefix + r.tag + "-";
    for (const auto& stale : cdpkit::tools::find_process_profiles(folder, prefix, 0)) {  // a reused process id's
      std::error_code ec;
      fs::remove(stale.path, ec);
    }
    std::vector<std::pair<std::string, std::string>> env = r.env;
    env.emplace_back("CUDA_INJECTION64_PATH", r.library.string());
    env.emplace_back("CDPKIT_PROFILE_OUT", (folder / (prefix + "%p.part")).string());
    int status = 0;
    try {
      status = cdpkit::tools::run_program(program, command, env, &r.pid);
    } catch (...) {
      release_name();
      throw;
    }
    r.end = cdpkit::tools::describe_end(status, command.front());
    last_end = &r.end;
    if (!r.end.message.empty()) std::cerr << "cdpkit profile: " << r.end.message << "\n";
    r.parts = cdpkit::tools::find_process_profiles(folder, prefix, r.pid);
    if (r.end.signal != 0) break;  // a program stopped by a signal is not run again
    if (r.end.exit_code != 0) break;  // nor one that failed: its status is the one passed through
  }
  const cdpkit::tools::program_end end = last_end != nullptr ? *last_end : cdpkit::tools::program_end{};
  const auto finish = [&](int code) {
    if (end.signal == SIGINT || end.signal == SIGQUIT || end.signal == SIGTERM || end.signal == SIGHUP)
      die_by(end.signal, code);
    return code;
  };
  const int failed = end.exit_code != 0 ? end.exit_code : cdpkit::tools::exit_error;
  // The program's profile (or, when the program itself made no CUDA call, the first process's) is
  // NAME.json: with one run moved there as written, with two the runs' documents merged; another
  // process's is NAME.<pid>.json. The report shows them all.
  std::vector<const library_run*> with_parts;
  std::vector<cdpkit::tools::process_profile> others;
  for (const library_run& r : runs)
    if (!r.parts.empty()) {
      with_parts.push_back(&r);
      others.insert(others.end(), r.parts.begin() + 1, r.parts.end());
    }
  if (with_parts.empty()) {
    release_name();
    std::cerr << "cdpkit profile: no profile was written: " << cdpkit::quoted_input(command.front())
              << (end.message.empty() ? " made no CUDA call that loads the injection library"
                                      : " ended before the injection library could write one")
              << "\n";
    return finish(end.exit_code);
  }
  const cdpkit::tools::process_profile& main_part = with_parts.front()->parts.front();
  const bool main_is_program = main_part.pid == with_parts.front()->pid;
  if (with_parts.size() == 1) {
    std::error_code ec;
    fs::rename(main_part.path, out_json, ec);
    if (ec) {
      std::cerr << "cdpkit profile: the profile could not be moved to " << cdpkit::quoted_input(out_json) << " ("
                << ec.message() << "); it is in " << cdpkit::quoted_input(main_part.path.string()) << "\n";
      release_name();
      return finish(failed);
    }
  } else {
    nlohmann::json main_doc;
    std::vector<fs::path> merged;
    for (const library_run* r : with_parts) {  // CUPTI's run first: its document takes the children run's runs
      nlohmann::json doc = nlohmann::json::parse(file_text(r->parts.front().path), nullptr, /*allow_exceptions=*/false);
      if (doc.is_discarded() || !doc.is_object()) {
        std::cerr << "cdpkit profile: the " << r->tag << " run's profile " << cdpkit::quoted_input(r->parts.front().path.string())
                  << " is not a JSON document: it is left as it is\n";
        continue;
      }
      main_doc = cdpkit::tools::merge_profiles(std::move(main_doc), std::move(doc));
      merged.push_back(r->parts.front().path);
    }
    if (merged.empty()) {
      release_name();
      return finish(failed);
    }
    try {
      cdpkit::schema::write_json_file(main_doc, out_json);
    } catch (const std::exception& e) {
      std::cerr << "cdpkit profile: the profile could not be written to " << cdpkit::quoted_input(out_json) << " ("
                << e.what() << ")\n";
      release_name();
      return finish(failed);
    }
    for (const auto& m : merged) {
      std::error_code ec;
      fs::remove(m, ec);
    }
  }
  std::vector<std::string> written{out_json};
  std::vector<long> written_pids{main_part.pid};
  for (const auto& part : others) {
    const std::string target = stem + "." + std::to_string(part.pid) + ".json";
    std::error_code ec;
    if (fs::exists(fs::symlink_status(target, ec)) && !force) {
      std::cerr << "cdpkit profile: " << cdpkit::quoted_input(target) << " exists: process " << part.pid
                << "'s profile is left in " << cdpkit::quoted_input(part.path.string()) << "\n";
      continue;
    }
    fs::rename(part.path, target, ec);
    if (ec) {
      std::cerr << "cdpkit profile: the profile could not be moved to " << cdpkit::quoted_input(target) << " ("
                << ec.message() << "); it is in " << cdpkit::quoted_input(part.path.string()) << "\n";
      continue;
    }
    written.push_back(target);
    written_pids.push_back(part.pid);
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
      std::cerr << " " << written[k] << " (process " << written_pids[k] << (k == 0 && main_is_program ? ", the program" : "")
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
  std::string output, collect = "children";
  bool force = false;
  CLI::Option* named = prof->add_option("-o,--output", output,
                   "NAME of the profile and report (NAME.json, NAME.html); default report1, report2, ... "
                   "(the first free)");
  CLI::Option* collect_opt = prof->add_option("--collect", collect,
                   "a comma-separated list: children or trace (every grid, device-launched ones included: size, "
                   "depth, times, launching grid and call site, through the Compute Sanitizer API), metrics (CUPTI's "
                   "range profiler: one range per host kernel launch, the grids it launches folded in), timeline "
                   "(PM sampling), none (host timeline only), all (metrics and children). children and CUPTI's "
                   "parts cannot share a process: with both, the program runs twice. Default: children where "
                   "libcdpkit_children.so is installed, else metrics");
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
  return profile(named->count() > 0, output, collect, collect_opt->count() > 0, force, command);
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
