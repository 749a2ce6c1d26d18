// trace_cost_bench — what the device launch trace costs a launch request, by outcome and by
// whether the request's record is stored (Bézier's child_per_thread, a million requests
// refused over the budget, ran slower traced than untraced, and the trace's per-warp atomics
// were not the cost: this benchmark separates the parts).
//
// One thread per request: each asks for a child grid of one 32-thread block through
// launch_child; the child, or the thread itself when refused, marks the request's slot, and a
// launched child counts itself (checked: every slot marked once in the last run of each series
// and in the outcome run). Scenarios, each timed untraced and traced on one runtime (by default a
// refused request takes no record), and again on a runtime that records every request, refusals
// included (launch_config::record_refusals), in a buffer that holds them all:
//   refused      the site refused outright (launch_config::refused_sites): no budget traffic,
//                2^log2 requests, the trace's whole cost per refused request
//   over_budget  the default pending budget: a few thousand launched, the rest refused (as
//                Bézier's child_per_thread), 2^log2 requests; how many launch depends on how
//                fast children finish, so each variant's launches (its last run's) are shown
//   launched     as many requests as the budget: every one launched, the trace's cost per
//                launched child (its record, its blocks' start and end); the default buffer
//                holds every record already, so it has no second runtime
// The untraced series runs before and after the traced one (--reps runs each); a traced row's
// "vs untraced" and "+ns/request" ((traced - untraced) / requests) take the faster of the two
// untraced medians. The untraced row is the first series; the second's median is in its params.
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

/// A launched request's child: its first thread marks the request's slot and counts the launch
/// (marks[n]).
struct mark_body {
  std::uint32_t* marks;
  std::uint32_t slot, n;
  __device__ void operator()(const launch_context&) const {
    if (threadIdx.x == 0) {
      atomicAdd(&marks[slot], 1u);
      atomicAdd(&marks[n], 1u);
    }
  }
};

/// One request per thread (i < n): a child of one 32-thread block, or the mark made inline.
/// `marks` holds n slots and the launch count after them.
__global__ void request_kernel(launch_context ctx, std::uint32_t* marks, std::uint32_t n) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const auto r = cdpkit::launch_child(ctx, site, dim3(1), dim3(32), cdpkit::stream_kind::fire_and_forget,
                                      mark_body{marks, i, n}, 0u, 1u);
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
  double untraced_ms = 0;        ///< the faster of the two untraced medians (the ratios' yardstick)
  double untraced_after_ms = 0;  ///< the second untraced series' median
  std::uint32_t launched = 0;    ///< launched in the series' last run
  std::uint64_t stored = 0;      ///< records stored in the outcome run (traced)
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trace_cost_bench: what the device launch trace costs a launch request (refused, over "
               "the budget, launched), with its record stored or past the buffer"};
  int log2 = 20, reps = 11;
  std::string json_path;
  app.add_option("--log2", log2, "log2 of the requests of the refused and over_budget scenarios")
      ->capture_default_str()
      ->check(CLI::Range(12, 24));
  app.add_option("--reps", reps, "timed runs per series (its median is kept)")->capture_default_str()->check(
      CLI::Range(1, 1000));
  app.add_option("--json", json_path, "write the rows (cdpkit-bench/1) here")
      ->check(cdpkit::harness::output_file("a JSON document", '{'));
  return cdpkit::harness::run_program("trace_cost_bench", app, argc, argv, [&] {
    cdpkit::require_cuda_device();
    cdpkit::sites::set_site_name(site, "trace_cost_bench");
    const std::uint32_t big = std::uint32_t{1} << log2;
    const std::uint32_t default_capacity = cdpkit::launch_config{}.trace_record_capacity;
    cdpkit::require_device_memory(std::uint64_t{big} * (sizeof(std::uint32_t) + sizeof(cdpkit::launch_record)),
                                  "trace_cost_bench's marks and records for 2^" + std::to_string(log2) +
                                      " requests");
    const cudaStream_t stream = nullptr;
    auto doc = cdpkit::harness::bench_document(cdpkit::profiling::device_json());
    std::vector<row> rows;

    const scenario scenarios[] = {{"refused", true, false}, {"over_budget", false, false}, {"launched", false, true}};
    for (const scenario& sc : scenarios) {
      // the runtime's default records, then every request's
      for (const bool all_records : {false, true}) {
        // the launched scenario's requests (the runtime's pending budget) fit the default buffer
        if (all_records && sc.budget_sized) continue;
        cdpkit::launch_config config;
        if (sc.refuse_site) config.refused_sites = 1ull << site;
        if (all_records) {  // every request recorded, refusals included (by default they take none)
          config.trace_record_capacity = std::max(big, default_capacity);
          config.record_refusals = true;
        }
        cdpkit::launch_runtime runtime(config);
        const std::uint32_t n = sc.budget_sized ? static_cast<std::uint32_t>(runtime.pending_budget()) : big;
        if (sc.budget_sized && n > default_capacity)
          throw cdpkit::input_error("trace_cost_bench: the pending budget " + std::to_string(n) +
                                    " exceeds the default record buffer");
        if (!sc.budget_sized && n <= static_cast<std::uint32_t>(runtime.pending_budget()))
          throw cdpkit::input_error("trace_cost_bench: 2^" + std::to_string(log2) +
                                    " requests are not over the pending budget " +
                                    std::to_string(runtime.pending_budget()) + "; raise --log2");
        const std::uint32_t capacity = config.trace_record_capacity;
        cdpkit::detail::device_buffer<std::uint32_t> marks(std::size_t{n} + 1, nullptr);
        std::vector<std::uint32_t> h_marks(std::size_t{n} + 1);
        const auto prepare = [&](cudaStream_t s) {
          runtime.reset_trace();
          CDPKIT_CUDA_TRY(cudaMemsetAsync(marks.data(), 0, sizeof(std::uint32_t) * (std::size_t{n} + 1), s));
        };
        // the slots not marked exactly once; `launched`: the launch count of that run
        const auto check = [&](std::uint32_t& launched) -> std::uint64_t {
          CDPKIT_CUDA_TRY(cudaMemcpy(h_marks.data(), marks.data(), sizeof(std::uint32_t) * (std::size_t{n} + 1),
                                     cudaMemcpyDeviceToHost));
          launched = h_marks[n];
          return static_cast<std::uint64_t>(
              std::count_if(h_marks.begin(), h_marks.begin() + n, [](std::uint32_t v) { return v != 1u; }));
        };
        // one run's requests, traced or not as the runtime's root context says
        const auto enqueue = [&](cudaStream_t s) {
          request_kernel<<<(n + parent_threads - 1) / parent_threads, parent_threads, 0, s>>>(runtime.root_context(),
                                                                                            marks.data(), n);
          CDPKIT_CUDA_TRY(cudaGetLastError());
        };
        const auto measure = [&](bool traced, std::uint32_t& launched) {
          runtime.set_tracing(traced);
          cdpkit::harness::measurement m;
          m.time = cdpkit::harness::time_runs(enqueue, prepare, reps, 1, stream, &runtime);
          CDPKIT_CHECK_DEVICE_ERRORS(runtime);
          m.checked = true;
          m.timed_mismatches = check(launched);
          m.mismatches = m.timed_mismatches;
          return m;
        };
        // untraced first, then traced, then untraced again: the yardstick is the faster of the two
        // untraced medians (a drift over the rows weighs on neither alone)
        std::uint32_t launched_untraced = 0, launched_traced = 0, launched_after = 0, launched_outcome = 0;
        auto untraced = measure(false, launched_untraced);
        auto traced = measure(true, launched_traced);
        const auto untraced_after = measure(false, launched_after);
        const double untraced_ms = std::min(untraced.time.median_ms, untraced_after.time.median_ms);
        untraced.mismatches += untraced_after.mismatches;  // the second series' check counts too
        // the outcomes, from one more traced run (the session resets the trace and turns it on)
        prepare(stream);
        cdpkit::trace_snapshot snap;
        {
          cdpkit::profiling::trace_session session(runtime);
          enqueue(stream);
          CDPKIT_CHECK_DEVICE_ERRORS(runtime);
          snap = session.collect();
        }
        traced.mismatches += check(launched_outcome);
        // the outcome run's launches, counted by the trace and by the children alike
        const auto& c = snap.sites[site];
        if (c.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)] != launched_outcome) ++traced.mismatches;
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
          r.untraced_after_ms = untraced_after.time.median_ms;
          r.launched = m == &traced ? launched_traced : launched_untraced;
          r.stored = m == &traced ? snap.records.size() : 0;
          rows.push_back(r);
        }
      }
    }

    cdpkit::harness::text_table table({"scenario", "records", "requests", "variant", "launched", "stored", "ms",
                                       "vs untraced", "+ns/request", "check"});
    bool ok = true;
    for (const row& r : rows) {
      ok = ok && cdpkit::harness::verified(r.m);
      const double ms = r.m.time.median_ms;
      const bool traced = r.variant == "traced";
      table.add_row({r.scenario, r.records, std::to_string(r.n), r.variant, std::to_string(r.launched),
                     traced ? std::to_string(r.stored) : "-", format("%.3f", ms),
                     traced ? format("%.2fx", ms / r.untraced_ms) : "-",
                     traced ? format("%+.1f", (ms - r.untraced_ms) * 1e6 / r.n) : "-",
                     cdpkit::harness::check_text(r.m)});
      cdpkit::harness::bench_row b;
      b.family = "launch_trace";
      b.input = r.scenario + ":n=" + std::to_string(r.n) + ":records=" + r.records;
      b.variant = r.variant;
      b.baseline = "untraced";
      b.params = {{"record_capacity", r.capacity}, {"launched", r.launched}, {"untraced_ms", r.untraced_ms}};
      if (traced) b.params["records_stored"] = r.stored;
      else b.params["untraced_after_ms"] = r.untraced_after_ms;
      b.n = r.n;
      b.work = r.n;
      b.work_unit = "requests";
      b.throughput_unit = "Grequests/s";
      b.m = r.m;
      doc["rows"].push_back(cdpkit::harness::bench_row_json(b));
    }
    std::cout << "one thread per launch request, a child of one 32-thread block each; ms: median of " << reps
              << " runs; launched: in a series' last run; stored: records kept in one more traced run; vs "
                 "untraced and +ns/request ((traced - untraced) / requests): over the faster of the untraced "
                 "medians before and after the traced runs\n";
    table.print(std::cout);
    cdpkit::harness::write_bench_document(doc, json_path, std::cout);
    return ok;
  });
}
