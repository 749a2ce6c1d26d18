#pragma once
// cdpkit/harness/program.hpp — the one error path of the sample and benchmark programs.
//
//   int main(int argc, char** argv) {
//     CLI::App app{"..."};
//     ... add options ...
//     return cdpkit::harness::run_program("my_sample", app, argc, argv, [&] { ...; return ok; });
//   }
//
// Exit codes: 0 every result check passed; 1 a result check failed; 2 bad arguments or input
// (cdpkit::input_error, a command-line error, not enough host memory, any other error the input
// caused); 3 CUDA or the device (cdpkit::cuda_error, no CUDA device, the watchdog). Every message
// is one line on stderr that starts with the program's name.

#include <cdpkit/error.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/sizes.hpp>
#include <cdpkit/version.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit::harness {

/// Run a program's body behind the error path above (the command line already parsed).
/// After a watchdog timeout the device is still busy with the stuck work, so the process then
/// exits at once (std::_Exit(3), after flushing), instead of blocking in destructors.
int run_program(const char* name, const std::function<bool()>& body);

/// Set the watchdog's deadline (cdpkit/wait.hpp) from a --timeout value in seconds (> 0).
void apply_timeout_option(double seconds);

/// The default of a benchmark's --data: $CDPKIT_DATA_DIR/`sub` (the variable names the folder of
/// the shared data, which holds graphs/, ...) when the variable is set and not empty, else ""
/// (the real inputs are skipped, with a line that says how to name them). Never a path of the
/// build tree, which a binary would carry to another machine.
inline std::string default_data_dir(const char* sub) {
  const char* root = std::getenv("CDPKIT_DATA_DIR");
  return root != nullptr && *root != '\0' ? std::string(root) + "/" + sub : std::string();
}

/// A CLI11 check for an unsigned option (or each item of a list): decimal digits without a
/// leading zero ("0" itself excepted), at most `max`. CLI11 alone reads "-1" into an unsigned
/// 64-bit option as 2^64 - 1, saturates 2^64, reads "010" as octal 8 and an empty list item as
/// 0; each is refused here, naming the text.
inline CLI::Validator whole_number(std::uint64_t max) {
  const std::string top = std::to_string(max);
  return CLI::Validator(
      [top](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
                            (text[0] != '0' || text.size() == 1);
        const bool inside = digits && (text.size() < top.size() || (text.size() == top.size() && text <= top));
        return inside ? std::string()
                      : "'" + text + "' is not a whole number in [0, " + top + "] (decimal, no leading zero)";
      },
      "UINT in [0, " + top + "]");
}

/// A CLI11 transform (->transform(), not ->check(), which would drop the rewrite) for a size
/// option: a size as cdpkit::parse_size reads it (decimal, or 2^K with K in [0, 63]), at most
/// `max`, handed on to the option as its decimal value, so that sizes are written one way in every
/// program ("--n 2^24", as generator specs take "random:2^20") and CLI11 never reads a leading
/// zero as octal.
inline CLI::Validator size_number(std::uint64_t max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        std::uint64_t v = 0;
        try {
          v = cdpkit::parse_size(text, {}, "size");
        } catch (const cdpkit::input_error& e) {
          return e.what();
        }
        if (v > max) return "size " + cdpkit::quoted_input(text) + " is more than " + std::to_string(max);
        text = std::to_string(v);
        return {};
      },
      "SIZE (N or 2^K) in [0, " + std::to_string(max) + "]");
}

/// Add an option taking a comma-separated list of whole numbers in [0, max], written into
/// `values`: every item must pass whole_number(max), so an empty item ("1,,2", or an empty
/// value) is a command-line error naming the option, where CLI11's own splitting would drop it.
template <class T>
void add_whole_number_list_option(CLI::App& app, const std::string& name, std::vector<T>& values,
                                  const std::string& description) {
  const auto max = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
  app.add_option_function<std::string>(
         name,
         [&values, name, check = whole_number(max)](const std::string& text) {
           std::vector<T> out;
           std::size_t from = 0;
           while (true) {
             const std::size_t comma = text.find(',', from);
             std::string item = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
             const std::string why = check(item);
             if (!why.empty()) throw CLI::ValidationError(name, why);
             out.push_back(static_cast<T>(std::stoull(item)));
             if (comma == std::string::npos) break;
             from = comma + 1;
           }
           values = std::move(out);
         },
         description)
      ->type_name("UINT,...");
}

/// A CLI11 check for a real-valued option: a finite number in [lo, hi], or in (lo, hi] when
/// `lo_open`; hi = infinity leaves it unbounded above. NaN and the infinities are refused, which
/// CLI::Range and CLI::PositiveNumber let through ("nan" compares false with both bounds).
/// Precondition: lo < hi.
inline CLI::Validator finite_number(double lo, double hi, bool lo_open = false) {
  const auto show = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  const bool bounded = std::isfinite(hi);
  const std::string wanted = !bounded ? std::string(lo_open ? "a finite number > " : "a finite number >= ") + show(lo)
                                      : std::string("a finite number in ") + (lo_open ? "(" : "[") + show(lo) +
                                            ", " + show(hi) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        const double v = std::strtod(begin, &end);
        const bool parsed = !text.empty() && end == begin + text.size();
        const bool inside = parsed && std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
        return inside ? std::string() : "'" + text + "' is not " + wanted;
      },
      bounded ? "NUMBER in " + std::string(lo_open ? "(" : "[") + show(lo) + ", " + show(hi) + "]"
              : "NUMBER " + std::string(lo_open ? "> " : ">= ") + show(lo));
}

/// A CLI11 check for an output file option, made when the command line is read so that a path
/// that cannot be written fails before the GPU work, not after it: what the writer would refuse
/// (schema::output_target: not a regular file, a dangling or foreign link) is refused; the folder
/// must exist and be writable; an existing file is replaced only when it can be read and holds
/// what the option writes, i.e. is empty or starts (after white space) with `first` ('{' for
/// JSON, '<' for SVG). So a misdirected `--profile graph.mtx` refuses to overwrite the graph.
/// `kind` names the content in the message ("a JSON document"). An empty value passes (no
/// output). CLI11 checks only values given on the command line: a program whose option has a
/// default path checks it itself (check_output_file).
CLI::Validator output_file(const std::string& kind, char first);

/// output_file's check of `path` for `option` (e.g. a default that CLI11 does not check):
/// throws cdpkit::input_error "<option>: <why>" when it fails.
void check_output_file(const std::string& option, const std::string& path, const std::string& kind, char first);

/// After the command line (`budget_given`: --pending-budget was given): a budget the program set
/// itself (the tree programs' 2048, tree_launch_config) that a given --pending-limit is too small
/// for is lowered to safe_pending_fraction of the limit (1024: 512) instead of being refused for
/// a budget the user never set; at larger limits it stays (runs at a limit of 2^20 keep the budget
/// their measurements had, not half the limit). A given budget is left for check_launch_config.
inline void fit_pending_budget(launch_config& config, bool budget_given) {
  if (budget_given || config.pending_launch_limit <= 0) return;
  config.pending_budget = std::min(config.pending_budget, safe_pending_budget(config.pending_launch_limit));
}

/// Add the launch layer's options to a program: --pending-limit, --pending-budget,
/// --serialize-warp-launches and --record-refusals, written into `config` when parsed (defaults
/// as in cdpkit::launch_config, or as the program preset them in `config`). Once the command
/// line is read, a preset budget follows the limit (fit_pending_budget) and the configuration is
/// checked (check_launch_config: a given budget without headroom below the limit, say) as a
/// command-line error, before any GPU check. Takes the app's final callback.
inline void add_launch_options(CLI::App& app, launch_config& config) {
  app.final_callback([&app, &config] {
    fit_pending_budget(config, app.count("--pending-budget") > 0);
    try {
      check_launch_config(config);
    } catch (const input_error& e) {
      throw CLI::ValidationError("--pending-limit/--pending-budget", e.what());
    }
  });
  app.add_option("--pending-limit", config.pending_launch_limit,
                 "cudaLimitDevRuntimePendingLaunchCount (0: raised as the budget needs)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  app.add_option("--pending-budget", config.pending_budget,
                 "children in flight before launches fall back (0: 2048, or half the limit)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 23));
  app.add_flag("--serialize-warp-launches", config.serialize_warp_launches,
               "a warp's lanes that ask together enter the device runtime's launch one at a time (an "
               "experiment that did not end the tree recursions' stall: docs/design.md)");
  app.add_flag("--record-refusals", config.record_refusals,
               "traced runs keep a launch record for each request refused (over the pending budget or "
               "the depth cap) too, not only for the grids launched or failed; refusals are counted "
               "either way, and recording a storm of them costs time");
}

/// Add a benchmark's timing options: --reps (the timed runs made at least, into `reps`, in
/// [1, max_reps]), --max-noise PCT (more runs are made while the runs' relative spread, median
/// absolute deviation / median, is above PCT percent; 0: exactly --reps runs) and --time-budget S
/// (those extra runs stop once a measurement's timed runs took S seconds). Sets the process's
/// stopping rule (measure.hpp) at once with the defaults given, and again as each option is read.
inline void add_timing_options(CLI::App& app, int& reps, int max_reps, double max_noise_pct = 1.0,
                               double budget_s = 1.0) {
  set_stopping_rule({max_noise_pct / 100.0, budget_s, stopping_rule{}.max_reps});
  app.add_option("--reps", reps, "timed repetitions (at least; more while --max-noise is not met)")
      ->capture_default_str()
      ->check(CLI::Range(1, max_reps));
  app.add_option_function<double>(
         "--max-noise",
         [](double pct) {
           stopping_rule rule = current_stopping_rule();
           rule.max_noise = pct / 100.0;
           set_stopping_rule(rule);
         },
         "time until the runs' spread (median absolute deviation / median) is at most this many percent, "
         "or --time-budget is spent (0: exactly --reps runs)")
      ->default_val(max_noise_pct)
      ->check(finite_number(0.0, 100.0));
  app.add_option_function<double>(
         "--time-budget",
         [](double seconds) {
           stopping_rule rule = current_stopping_rule();
           rule.budget_s = seconds;
           set_stopping_rule(rule);
         },
         "seconds of timed runs per measurement after which --max-noise stops asking for more")
      ->default_val(budget_s)
      ->check(finite_number(0.0, 3600.0, true));
}

/// Add a --thresholds option: the launch thresholds of a benchmark's sweep, comma-separated whole
/// numbers in [0, 2^32 - 1] written into `thresholds` (whose values are the default); an empty
/// value or "none" asks for no sweep. An entry that is not a threshold is a command-line error
/// naming it (CLI11 would otherwise read an empty value as 0, a sweep of launches per segment).
inline void add_thresholds_option(CLI::App& app, std::vector<std::uint32_t>& thresholds,
                                  const std::string& description) {
  std::string shown;
  for (const std::uint32_t t : thresholds) shown += (shown.empty() ? "" : ",") + std::to_string(t);
  app.add_option_function<std::vector<std::string>>(
         "--thresholds",
         [&thresholds](const std::vector<std::string>& items) {
           std::vector<std::uint32_t> out;
           for (const std::string& item : items) {
             if (item.empty() || item == "none") continue;
             bool digits = item.size() <= 10;
             for (const char c : item) digits = digits && c >= '0' && c <= '9';
             if (!digits || std::stoull(item) > 0xffffffffull)
               throw CLI::ValidationError("--thresholds", "'" + item +
                                                              "' is not a threshold (a whole number below 2^32, "
                                                              "or none)");
             out.push_back(static_cast<std::uint32_t>(std::stoull(item)));
           }
           thresholds = out;
         },
         description + " (none: no sweep)")
      ->delimiter(',')
      ->default_str(shown.empty() ? "none" : shown);
}

/// The values a comma-separated list option names, in the order given: "all" stands for every
/// value of `all` (in its order); any other name goes through `parse`, which throws
/// cdpkit::input_error naming the bad value and the choices. An empty list means "all".
template <class T, class Parse>
std::vector<T> parse_name_list(const std::vector<std::string>& names, const std::vector<T>& all,
                               Parse parse) {
  std::vector<T> out;
  for (const std::string& name : names) {
    if (name == "all") out.insert(out.end(), all.begin(), all.end());
    else out.push_back(parse(name));
  }
  return names.empty() ? all : out;
}

/// Add --timeout and --version, parse the command line (errors: "<name>: <what>", exit 2;
/// --help and --version: exit 0), then run the body as run_program(name, body) does.
inline int run_program(const char* name, CLI::App& app, int argc, char** argv,
                       const std::function<bool()>& body) {
  app.set_version_flag("--version", std::string(name) + " (cdpkit " + version::string + ", " +
                                        version::commit + ")");
  double timeout_s = 0.0;
  app.add_option("--timeout", timeout_s,
                 "watchdog: seconds any wait for the GPU may take before the program stops with "
                 "a diagnosis of the launch layer (default: $CDPKIT_WAIT_TIMEOUT_S or 60)")
      ->check(finite_number(0.001, 1e7));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << name << ": " << e.what() << " (run with --help for the options)\n";
    return 2;
  }
  return run_program(name, [&] {
    if (timeout_s > 0) apply_timeout_option(timeout_s);
    return body();
  });
}

}  // namespace cdpkit::harness
