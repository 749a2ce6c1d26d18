// children_overhead_bench — what the children collector (libcdpkit_children.so, `cdpkit profile
// --collect children`) costs a program: the CDP workloads of tests/inject/cdp_workloads, each run
// as its own process plain and under the collector, alternating, `reps` times each (medians).
//
// The time compared is the one the workload prints (ms=: its host launches, each from its <<<>>>
// to the synchronization after it, the collector's copies at those synchronizations included);
// the whole process's wall time (CUDA's start, the module patching, the profile written at exit)
// is given beside it. Every run's output is checked by the workload itself (verified=yes, exit 0).
//
//   children_overhead_bench --json children_overhead.json
//   children_overhead_bench --case quicksort,flat --reps 3
//
// The workload program and the library are found beside this one in the build tree
// (../tests/inject/cdp_workloads, ../profiling/children/libcdpkit_children.so) or given.

#include <cdpkit/error.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/table.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/schema/text.hpp>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct workload_case {
  std::string name;
  unsigned size;
};

struct one_run {
  double ms = 0, process_ms = 0;
  bool verified = false;
  std::uint64_t device_grids = 0;
  std::string line;
};

std::string field(const std::string& line, const std::string& key) {
  const auto at = line.find(" " + key + "=");
  if (at == std::string::npos) return {};
  const auto from = at + key.size() + 2;
  return line.substr(from, line.find(' ', from) - from);
}

/// Run the workload once; `env` goes before the command (empty: plain).
one_run run_once(const std::string& program, const workload_case& w, const std::string& env) {
  const std::string command = env + " '" + program + "' " + w.name + " " + std::to_string(w.size) + " 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) throw cdpkit::input_error("children_overhead_bench: cannot run " + program);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = ::pclose(p);
  one_run r;
  r.process_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto at = out.find("cdp_workloads: " + w.name + " ");
  if (at != std::string::npos) r.line = out.substr(at, out.find('\n', at) - at);
  if (out.find("no usable CUDA device") != std::string::npos) throw cdpkit::input_error("children_overhead_bench: no usable CUDA device");
  if (r.line.empty())
    throw cdpkit::input_error("children_overhead_bench: " + w.name + " printed no summary (status " + std::to_string(status) +
                              "):\n" + out);
  r.ms = std::stod(field(r.line, "ms"));
  r.device_grids = std::stoull(field(r.line, "device_grids"));
  r.verified = status == 0 && field(r.line, "verified") == "yes";
  return r;
}

cdpkit::harness::timing timing_of(const std::vector<double>& samples) {
  cdpkit::harness::timing t;
  t.samples_ms = samples;
  std::vector<double> s = samples;
  std::sort(s.begin(), s.end());
  t.reps = static_cast<int>(s.size());
  t.min_ms = s.front();
  t.median_ms = s.size() % 2 == 1 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
  std::vector<double> dev;
  for (double v : s) dev.push_back(std::abs(v - t.median_ms));
  std::sort(dev.begin(), dev.end());
  t.mad_ms = dev.size() % 2 == 1 ? dev[dev.size() / 2] : 0.5 * (dev[dev.size() / 2 - 1] + dev[dev.size() / 2]);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"children_overhead_bench: what the children collector costs CDP workloads and a flat one"};
  int reps = 5;
  std::string json_path, only, program, library;
  fs::path self_dir;
  {
    std::error_code ec;
    self_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  }
  program = (self_dir / "../tests/inject/cdp_workloads").lexically_normal().string();
  library = (self_dir / "../profiling/children/libcdpkit_children.so").lexically_normal().string();
  app.add_option("--reps", reps, "runs per mode and workload (medians)")->capture_default_str()->check(CLI::Range(1, 100));
  app.add_option("--case", only, "run only the workloads whose name contains one of these (comma-separated)");
  app.add_option("--workloads", program, "the cdp_workloads program")->capture_default_str();
  app.add_option("--library", library, "libcdpkit_children.so")->capture_default_str();
  app.add_option("--json", json_path, "write the rows (cdpkit-bench/1) here")
      ->check(cdpkit::harness::output_file("a JSON document", '{'));
  return cdpkit::harness::run_program("children_overhead_bench", app, argc, argv, [&] {
    cdpkit::require_cuda_device();
    for (const std::string& f : {program, library})
      if (!fs::is_regular_file(f)) throw cdpkit::input_error("children_overhead_bench: " + f + " is not there (build it, or name it)");
    const std::vector<workload_case> cases = {{"quicksort", 1u << 20}, {"quadtree", 1u << 22}, {"quadtree", 1u << 24},
                                              {"bezier", 1u << 16},    {"tail_chain", 10000},  {"flat", 1u << 16},
                                              {"flat", 1u << 20}};
    const fs::path scratch = fs::temp_directory_path() / ("children_overhead_bench." + std::to_string(::getpid()));
    fs::create_directories(scratch);
    struct mode {
      const char* variant;
      std::string env;
    };
    const std::string common = "CUDA_INJECTION64_PATH='" + library + "' CDPKIT_INJECT_QUIET=1 CDPKIT_PROFILE_OUT='" +
                               (scratch / "profile.json").string() + "'";
    const std::vector<mode> modes = {{"plain", ""}, {"children", common}};
    auto doc = cdpkit::harness::bench_document(cdpkit::profiling::device_json());
    cdpkit::harness::text_table table(
        {"workload", "size", "device grids", "plain ms", "children ms", "x", "process s (plain / children)"});
    bool all_ok = true;
    for (const auto& w : cases) {
      if (!only.empty() && only.find(w.name) == std::string::npos) continue;
      std::vector<std::vector<double>> ms(modes.size()), process(modes.size());
      std::vector<bool> ok(modes.size(), true);
      std::uint64_t grids = 0;
      for (int rep = 0; rep < reps; ++rep)
        for (std::size_t m = 0; m < modes.size(); ++m) {
          const one_run r = run_once(program, w, modes[m].env);
          ms[m].push_back(r.ms);
          process[m].push_back(r.process_ms);
          ok[m] = ok[m] && r.verified;
          grids = r.device_grids;
        }
      std::vector<cdpkit::harness::timing> t;
      for (std::size_t m = 0; m < modes.size(); ++m) {
        t.push_back(timing_of(ms[m]));
        cdpkit::harness::bench_row row;
        row.family = "profiling";
        row.input = w.name + ":" + std::to_string(w.size);
        row.variant = modes[m].variant;
        row.baseline = "plain";
        row.params = {{"device_grids", grids}, {"process_ms_median", timing_of(process[m]).median_ms}};
        row.n = w.size;
        row.m.time = t.back();
        row.m.checked = true;
        row.m.mismatches = ok[m] ? 0 : 1;
        all_ok = all_ok && ok[m];
        doc["rows"].push_back(cdpkit::harness::bench_row_json(row));
      }
      table.add_row({w.name, std::to_string(w.size), std::to_string(grids), cdpkit::schema::fixed(t[0].median_ms, 2),
                     cdpkit::schema::fixed(t[1].median_ms, 2), cdpkit::schema::fixed(t[1].median_ms / t[0].median_ms, 2),
                     cdpkit::schema::fixed(timing_of(process[0]).median_ms / 1e3, 2) + " / " +
                         cdpkit::schema::fixed(timing_of(process[1]).median_ms / 1e3, 2)});
    }
    std::error_code ec;
    fs::remove_all(scratch, ec);
    table.print(std::cout);
    cdpkit::harness::write_bench_document(doc, json_path, std::cout);
    return all_ok;
  });
}
