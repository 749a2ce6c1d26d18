// trace_cost_bench — what the device launch trace costs a launch request, by outcome and by
// whether the request's record is stored (docs/design.md, "Stops 33–34": Bézier's
// child_per_thread, a million requests refused over the budget, ran 1.2x traced, and the trace's
// per-warp atomics were not the cost).
//
// One thread per request: each asks for a child grid of one 32-thread block through
// launch_child; the child, or the thread itself when refused, marks the request's slot (checked:
// every slot marked once per run). Scenarios, each timed untraced and traced on one runtime, and
// again on a runtime whose record buffer holds every request:
//   refused      the site refused outright (launch_config::refused_sites): no budget traffic,
//                2^log2 requests, the trace's whole cost per refused request
//   over_budget  the default pending budget: a few thousand launched, the rest refused (as
//                Bézier's child_per_thread), 2^log2 requests
//   launched     as many requests as the budget: every one launched, the trace's cost per
//                launched child (its record, its blocks' start and end); the default buffer
//                holds every record already, so it has no second runtime
// A row's "+ns/request" is (traced - untraced median) / requests, both medians of --reps runs on
// the same runtime in this process.
//
//   trace_cost_bench --json trace_cost.json
//   trace_cost_bench --log2 22 --reps 21

#include <cdpkit/detail/device_buffer.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/table.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/profiling/trace_session.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

namespace {

using cdpkit::launch_context;
using cdpkit::harness::format;

constexpr std::uint16_t site = cdpkit::sites::first_user_site;
constexpr unsigned int parent_threads = 256;

/// A launched request's child: its first thread marks the request's slot.
struct mark_body {
  std::uint32_t* marks;
  std::uint32_t slot;
  __device__ void operator()(const launch_context&) const {
    if (threadIdx.x == 0) atomicAdd(&marks[slot], 1u);
  }
};

/// One request per thread (i < n): a child of one 32-thread block, or the mark made inline.
__global__ void request_kernel(launch_context ctx, std::uint32_t* marks, std::uint32_t n) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const auto r = cdpkit::launch_child(ctx, site, dim3(1), dim3(32), cdpkit::stream_kind::fire_and_forget,
                                      mark_body{marks, i}, 0u, 1u);
  if (!r) atomicAdd(&marks[i], 1u);
}

struct scenario {
  const char* name;
  bool refuse_site;
  bool budget_sized;  ///< requests = the pending budget (else 2^log2)
};

struct row {
  std::string scenario, variant, records;
  std::uint32_t n = 0;
  std::uint32_t capacity = 0;
  cdpkit::harness::measurement m;
  double untraced_ms = 0;
  std::uint64_t launched = 0, refused = 0, stored = 0;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trace_cost_bench: what the device launch trace costs a launch request (refused, over "
               "the budget, launched), with its record stored or past the buffer"};
  int log2 = 20, reps = 11;
  std::string json_path;
  app.add_option("--log2", log2, "log2 of the requests of the refused and over_budget scenarios")
      ->capture_default_str()
      ->check(CLI::Range(11, 24));
  app.add_option("--reps", reps, "timed runs per row (the median is kept)")->capture_default_str()->check(
      CLI::Range(1, 1000));
  app.add_option("--json", json_path, "write the rows (cdpkit-bench/1) here");
  return cdpkit::harness::run_program("trace_cost_bench", app, argc, argv, [&] {
    cdpkit::require_cuda_device();
    cdpkit::sites::set_site_name(site, "trace_cost_bench");
    const std::uint32_t big = std::uint32_t{1} << log2;
    const std::uint32_t default_capacity = cdpkit::launch_config{}.trace_record_capacity;
    // the launched scenario's requests: the default runtime's pending budget
    const auto budget = static_cast<std::uint32_t>(cdpkit::launch_runtime{}.pending_budget());
    const std::uint32_t most = std::max(big, budget);
    cdpkit::require_device_memory(std::uint64_t{most} * (sizeof(std::uint32_t) + sizeof(cdpkit::launch_record)),
                                  "trace_cost_bench's marks and records for " + std::to_string(most) +
                                      " requests");
    cdpkit::detail::device_buffer<std::uint32_t> marks(most, nullptr);
    std::vector<std::uint32_t> h_marks(most);
    const cudaStream_t stream = nullptr;
    auto doc = cdpkit::harness::bench_document(cdpkit::profiling::device_json());
    std::vector<row> rows;

    const scenario scenarios[] = {{"refused", true, false}, {"over_budget", false, false}, {"launched", false, true}};
    for (const scenario& sc : scenarios) {
      // the runtime's default record buffer, then one that holds every request
      for (const bool all_records : {false, true}) {
        const std::uint32_t n = sc.budget_sized ? budget : big;
        if (all_records && n <= default_capacity) continue;  // the default buffer holds them all
        cdpkit::launch_config config;
        if (sc.refuse_site) config.refused_sites = 1ull << site;
        if (all_records) config.trace_record_capacity = std::max(n, default_capacity);
        cdpkit::launch_runtime runtime(config);
        const std::uint32_t capacity = config.trace_record_capacity;
        const auto prepare = [&](cudaStream_t s) {
          runtime.reset_trace();
          CDPKIT_CUDA_TRY(cudaMemsetAsync(marks.data(), 0, sizeof(std::uint32_t) * n, s));
        };
        const auto check = [&]() -> std::uint64_t {
          CDPKIT_CUDA_TRY(cudaMemcpy(h_marks.data(), marks.data(), sizeof(std::uint32_t) * n, cudaMemcpyDeviceToHost));
          return static_cast<std::uint64_t>(
              std::count_if(h_marks.begin(), h_marks.begin() + n, [](std::uint32_t v) { return v != 1u; }));
        };
        const auto measure = [&](bool traced) {
          runtime.set_tracing(traced);
          const launch_context ctx = runtime.root_context();
          const auto enqueue = [&](cudaStream_t s) {
            request_kernel<<<(n + parent_threads - 1) / parent_threads, parent_threads, 0, s>>>(ctx, marks.data(), n);
            CDPKIT_CUDA_TRY(cudaGetLastError());
          };
          cdpkit::harness::measurement m;
          m.time = cdpkit::harness::time_runs(enqueue, prepare, reps, 1, stream, &runtime);
          CDPKIT_CHECK_DEVICE_ERRORS(runtime);
          m.checked = true;
          m.timed_mismatches = check();
          m.mismatches = m.timed_mismatches;
          return m;
        };
        // untraced first, then traced, then untraced again: the yardstick is the faster of the two
        // untraced medians (a drift over the rows weighs on neither alone)
        auto untraced = measure(false);
        auto traced = measure(true);
        const auto untraced_b = measure(false);
        const double untraced_ms = std::min(untraced.time.median_ms, untraced_b.time.median_ms);
        untraced.time.median_ms = untraced_ms;
        untraced.time.min_ms = std::min(untraced.time.min_ms, untraced_b.time.min_ms);
        untraced.time.samples_ms.insert(untraced.time.samples_ms.end(), untraced_b.time.samples_ms.begin(),
                                        untraced_b.time.samples_ms.end());
        untraced.time.reps += untraced_b.time.reps;
        untraced.timed_mismatches += untraced_b.timed_mismatches;
        untraced.mismatches += untraced_b.mismatches;
        // the outcomes, from one more traced run
        runtime.set_tracing(true);
        prepare(stream);
        cdpkit::trace_snapshot snap;
        {
          cdpkit::profiling::trace_session session(runtime);
          const launch_context ctx = runtime.root_context();
          request_kernel<<<(n + parent_threads - 1) / parent_threads, parent_threads, 0, stream>>>(ctx, marks.data(), n);
          CDPKIT_CUDA_TRY(cudaGetLastError());
          CDPKIT_CHECK_DEVICE_ERRORS(runtime);
          snap = session.collect();
        }
        traced.mismatches += check();
        const auto& c = snap.sites[site];
        const std::string records = all_records ? "all" : "default";
        const cdpkit::harness::measurement* const both[] = {&untraced, &traced};
        for (const cdpkit::harness::measurement* m : both) {
          row r;
          r.scenario = sc.name;
          r.variant = m == &traced ? "traced" : "untraced";
          r.records = records;
          r.n = n;
          r.capacity = capacity;
          r.m = *m;
          r.untraced_ms = untraced_ms;
          r.launched = c.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)];
          r.refused = c.requests - r.launched;
          r.stored = snap.records.size();
          rows.push_back(r);
        }
      }
    }

    cdpkit::harness::text_table table({"scenario", "records", "requests", "launched", "refused", "stored",
                                       "variant", "ms", "vs untraced", "+ns/request", "check"});
    bool ok = true;
    for (const row& r : rows) {
      ok = ok && cdpkit::harness::verified(r.m);
      const double ms = r.m.time.median_ms;
      const bool traced = r.variant == "traced";
      table.add_row({r.scenario, r.records, std::to_string(r.n), std::to_string(r.launched),
                     std::to_string(r.refused), std::to_string(r.stored), r.variant, format("%.3f", ms),
                     traced ? format("%.2fx", ms / r.untraced_ms) : "-",
                     traced ? format("%+.1f", (ms - r.untraced_ms) * 1e6 / r.n) : "-",
                     cdpkit::harness::check_text(r.m)});
      cdpkit::harness::bench_row b;
      b.family = "launch_trace";
      b.input = r.scenario + ":n=" + std::to_string(r.n) + ":records=" + r.records;
      b.variant = r.variant;
      b.baseline = "untraced";
      b.params = {{"record_capacity", r.capacity},
                  {"launched", r.launched},
                  {"refused", r.refused},
                  {"records_stored", r.stored},
                  {"untraced_ms", r.untraced_ms}};
      b.n = r.n;
      b.work = r.n;
      b.work_unit = "requests";
      b.throughput_unit = "Grequests/s";
      b.m = r.m;
      doc["rows"].push_back(cdpkit::harness::bench_row_json(b));
    }
    std::cout << "one thread per launch request, a child of one 32-thread block each; ms: median of " << reps
              << " runs (untraced: the faster of two medians, before and after the traced runs); +ns/request: "
                 "(traced - untraced) / requests\n";
    table.print(std::cout);
    cdpkit::harness::write_bench_document(doc, json_path, std::cout);
    return ok;
  });
}
