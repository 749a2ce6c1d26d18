// collector_overhead_bench — what each CUPTI part of the collector costs a run, on the GPU's
// timeline (docs/design.md, "The CUPTI collector").
//
// The work: k host launches of a spin kernel (every thread waits `us` on %globaltimer; the blocks
// count themselves), of one function or cycling through five, or each after a scratch buffer
// allocated, zeroed, CUB-scanned and freed (the host calls the library's algorithms make), or each
// after a read-back the host waits for (the tessellation's sizing), or each after a memset, or
// each after the scratch row's allocations alone or its CUB scan alone; or a one-block parent
// launching 64 one-warp spin children from the device; or one launch of fixed work (a dependent
// FMA chain per thread: its time follows the SM clock, where a spin's does not), whose block 0
// reads the SM clock against %globaltimer: the table's last line gives that clock per mode (does
// a CUPTI part change the GPU's clocks?). --case picks rows by name.
// Each mode times the same work with CUDA events around it, `reps` times (median):
//   plain           nothing on;
//   activity        CUPTI's activity API enabled just before the run (host_activity::record);
//   activity_held   the activity API kept on across the mode's runs, after one untimed run;
//   range           a fresh range profiler per run, the run inside its range (a reset memset and a
//                   synchronization go first inside the range, then the timed work);
//   range_held      the same with the activity API held on;
//   range_cold      as range_held, with the reset before the range opens: the timed work is the
//                   range's first operation (as in the samples' measured runs);
//   pm, pm_held, pm_cold   the same three with PM sampling (a fresh sampler per run).
// Every run's blocks are counted and checked. Modes CUPTI cannot run (another profiler, no
// permission) are left out with the reason.
//
//   collector_overhead_bench --json collector_overhead.json
//   collector_overhead_bench --reps 9
//   collector_overhead_bench --case "10 launches" --json ten.json

#include <cdpkit/detail/device_buffer.hpp>
#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/table.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/profiling/collector.hpp>
#include <cdpkit/profiling/host_activity.hpp>
#include <cdpkit/profiling/pm_sampler.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/profiling/range_profiler.hpp>
#include <cdpkit/wait.hpp>

#include <CLI/CLI.hpp>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using cdpkit::harness::format;

/// Every thread waits `ns` on %globaltimer; thread 0 of each block counts the block. `Tag` makes
/// distinct functions of the same work.
template <int Tag = 0>
__global__ void spin_blocks(unsigned long long ns, unsigned long long* blocks) {
  const unsigned long long t0 = cdpkit::detail::global_timer_ns();
  while (cdpkit::detail::global_timer_ns() - t0 < ns) {
  }
  if (threadIdx.x == 0) atomicAdd(blocks, 1ull);
}

/// Every thread runs `iters` dependent FMAs (fixed work: its time scales with the SM clock);
/// thread 0 counts the block, and block 0's thread 0 writes the SM cycles and %globaltimer
/// nanoseconds it took to clock[0], clock[1].
__global__ void fixed_work_blocks(unsigned long long iters, unsigned long long* blocks, unsigned long long* clock) {
  const long long c0 = clock64();
  const unsigned long long t0 = cdpkit::detail::global_timer_ns();
  float a = static_cast<float>(threadIdx.x), b = 1.0000001f;
  for (unsigned long long k = 0; k < iters; ++k) a = fmaf(a, b, 0.5f);
  const long long c1 = clock64();
  const unsigned long long t1 = cdpkit::detail::global_timer_ns();
  if (threadIdx.x == 0) {
    atomicAdd(blocks, a == -1.0f ? 2ull : 1ull);  // (a is never -1: the chain is kept, the count exact)
    if (blockIdx.x == 0) {
      clock[0] = static_cast<unsigned long long>(c1 - c0);
      clock[1] = t1 - t0;
    }
  }
}

/// Thread c < children launches one one-warp spin child; thread 0 counts the parent's block.
__global__ void spin_parent(int children, unsigned long long ns, unsigned long long* blocks) {
  if (static_cast<int>(threadIdx.x) < children)
    spin_blocks<<<1, 32, 0, cudaStreamFireAndForget>>>(ns, blocks);
  if (threadIdx.x == 0) atomicAdd(blocks, 1ull);
}

struct work_case {
  std::string name;
  int launches;        ///< host launches per run
  unsigned int blocks; ///< blocks per host launch (spin), or 1 (the CDP parent)
  double us;           ///< each thread's wait (fixed work: thousands of FMAs per thread)
  int children;        ///< > 0: the parent launches this many children from the device
  int kernels = 1;     ///< distinct functions the host launches cycle through (1 or 5)
  /// What goes before each host launch, inside the timed window (host API calls where CUPTI's
  /// callbacks may cost):
  enum class before {
    nothing,
    /// what the library's algorithms do around theirs: a stream-ordered scratch of 2^18 words
    /// allocated, zeroed, scanned by CUB (its temporary storage allocated too) and freed;
    scratch,
    /// a round trip, as the tessellation's sizing is: an 8-byte device-to-host copy and a wait
    /// for the stream (the host then submits the launch on an idle GPU);
    round_trip,
    /// a 1 MiB memset of a buffer allocated once (no allocation);
    memset,
    /// the scratch's parts apart: its three stream-ordered allocations and frees, no work;
    allocations,
    /// or CUB's scan (its size query, then the scan) into storage allocated once.
    cub_scan,
  };
  before before_each = before::nothing;
  bool fixed_work = false;  ///< launches fixed_work_blocks instead of a spin
  /// Blocks one run executes.
  [[nodiscard]] std::uint64_t expected_blocks() const {
    return static_cast<std::uint64_t>(launches) * (children > 0 ? 1u + static_cast<unsigned>(children) : blocks);
  }
};

/// Two CUDA events, destroyed with the scope.
struct event_pair {
  cudaEvent_t start = nullptr, stop = nullptr;
  event_pair() {
    CDPKIT_CUDA_TRY(cudaEventCreate(&start));
    if (const cudaError_t e = cudaEventCreate(&stop); e != cudaSuccess) {
      (void)cudaEventDestroy(start);
      CDPKIT_CUDA_TRY(e);
    }
  }
  ~event_pair() {
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
};

const char* const modes[] = {"plain", "activity", "activity_held", "range", "range_held", "range_cold",
                             "pm", "pm_held", "pm_cold"};

/// The scratch work of a work_case with before::scratch, on `stream` (stream-ordered; nothing waits).
void scratch_work(cudaStream_t stream) {
  constexpr std::size_t words = 1u << 18;
  cdpkit::detail::device_buffer<std::uint32_t> in(words, stream), out(words, stream);
  CDPKIT_CUDA_TRY(cudaMemsetAsync(in.data(), 0, words * sizeof(std::uint32_t), stream));
  std::size_t temp_bytes = 0;
  CDPKIT_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, in.data(), out.data(), words, stream));
  cdpkit::detail::device_buffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1), stream);
  CDPKIT_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, in.data(), out.data(), words, stream));
}

/// Launches host launch `k` of a spin run: one function, or five cycled.
void launch_spin(int k, int kernels, unsigned int blocks, unsigned long long ns, unsigned long long* d_blocks,
                 cudaStream_t stream) {
  switch (kernels == 1 ? 0 : k % 5) {
    case 0: spin_blocks<0><<<blocks, 128, 0, stream>>>(ns, d_blocks); break;
    case 1: spin_blocks<1><<<blocks, 128, 0, stream>>>(ns, d_blocks); break;
    case 2: spin_blocks<2><<<blocks, 128, 0, stream>>>(ns, d_blocks); break;
    case 3: spin_blocks<3><<<blocks, 128, 0, stream>>>(ns, d_blocks); break;
    default: spin_blocks<4><<<blocks, 128, 0, stream>>>(ns, d_blocks); break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"collector_overhead_bench: what CUPTI's activity API, range profiler and PM sampling "
               "cost a run, on the GPU's timeline"};
  int reps = 5;
  std::string json_path;
  std::vector<std::string> only;
  app.add_option("--case", only, "run only the work rows whose name contains one of these (comma-separated)")
      ->delimiter(',');
  app.add_option("--reps", reps, "timed repetitions per mode")->capture_default_str()->check(CLI::Range(1, 100));
  app.add_option("--json", json_path, "write the rows (cdpkit-bench/1) here")
      ->check(cdpkit::harness::output_file("a JSON document", '{'));
  return cdpkit::harness::run_program("collector_overhead_bench", app, argc, argv, [&] {
    cdpkit::require_cuda_device();
    namespace prof = cdpkit::profiling;
    int device = 0, sms = 0;
    CDPKIT_CUDA_TRY(cudaGetDevice(&device));
    CDPKIT_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const auto full = static_cast<unsigned int>(sms);
    std::vector<work_case> cases = {{"1 launch x 100 us", 1, full, 100, 0},
                                          {"1 launch x 1000 us", 1, full, 1000, 0},
                                          {"10 launches x 10 us", 10, full, 10, 0},
                                          {"10 launches of 5 functions x 10 us", 10, full, 10, 0, 5},
                                          {"10 launches x 10 us, each with scratch + a CUB scan", 10, full, 10, 0, 1,
                                           work_case::before::scratch},
                                          {"10 launches x 10 us, each after a read-back and a wait", 10, full, 10, 0, 1,
                                           work_case::before::round_trip},
                                          {"10 launches x 10 us, each after a 1 MiB memset", 10, full, 10, 0, 1,
                                           work_case::before::memset},
                                          {"10 launches x 10 us, each after 3 stream-ordered allocations and frees", 10,
                                           full, 10, 0, 1, work_case::before::allocations},
                                          {"10 launches x 10 us, each after a CUB scan into kept storage", 10, full, 10,
                                           0, 1, work_case::before::cub_scan},
                                          {"100 launches x 10 us", 100, full, 10, 0},
                                          {"1000 launches x 1 us, 1 block", 1000, 1, 1, 0},
                                          {"1 parent, 64 device-launched children x 100 us", 1, 1, 100, 64}};
    work_case fixed{"1 launch of fixed work (500,000 FMAs per thread)", 1, full, 500, 0};
    fixed.fixed_work = true;
    cases.push_back(fixed);
    for (const std::string& part : only)
      if (std::none_of(cases.begin(), cases.end(), [&](const work_case& c) { return c.name.find(part) != std::string::npos; }))
        throw cdpkit::input_error("--case '" + part + "' names no work row");
    cdpkit::detail::unique_stream owned_stream;
    {
      cudaStream_t s = nullptr;
      CDPKIT_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      owned_stream.reset(s);
    }
    cudaStream_t stream = owned_stream.get();
    cdpkit::detail::unique_device_ptr<unsigned long long> owned_blocks;
    CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(owned_blocks), sizeof(unsigned long long)));
    unsigned long long* const d_blocks = owned_blocks.get();
    cdpkit::detail::unique_device_ptr<unsigned long long> owned_clock;  // fixed work: SM cycles, ns
    CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(owned_clock), 2 * sizeof(unsigned long long)));
    unsigned long long* const d_clock = owned_clock.get();
    constexpr std::size_t scratch_bytes = std::size_t{1} << 20;
    cdpkit::detail::unique_device_ptr<unsigned char> owned_scratch;
    CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(owned_scratch), scratch_bytes));
    unsigned char* const d_scratch = owned_scratch.get();
    // the cub_scan row's input, output and storage, allocated once (scratch_work's sizes)
    constexpr std::size_t scan_words = std::size_t{1} << 18;
    std::size_t scan_temp_bytes = 0;
    cdpkit::detail::unique_device_ptr<std::uint32_t> owned_scan;
    CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(owned_scan), 2 * scan_words * sizeof(std::uint32_t)));
    std::uint32_t* const scan_in = owned_scan.get();
    std::uint32_t* const scan_out = scan_in + scan_words;
    CDPKIT_CUDA_TRY(cudaMemset(scan_in, 0, scan_words * sizeof(std::uint32_t)));
    CDPKIT_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_temp_bytes, scan_in, scan_out, scan_words));
    scan_temp_bytes = std::max<std::size_t>(scan_temp_bytes, 1);
    cdpkit::detail::unique_device_ptr<unsigned char> owned_scan_temp;
    CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(owned_scan_temp), scan_temp_bytes));
    unsigned char* const d_scan_temp = owned_scan_temp.get();
    const event_pair events;
    cudaEvent_t start = events.start, stop = events.stop;

    // which CUPTI parts can run here (standing aside under another profiler, as the samples do)
    std::map<std::string, std::string> refused;
    if (const auto other = prof::foreign_profiler()) {
      for (const char* m : modes)
        if (std::string(m) != "plain") refused[m] = *other + " holds CUPTI";
    }

    auto doc = cdpkit::harness::bench_document(prof::device_json());
    cdpkit::harness::text_table table({"work", "plain ms", "activity", "activity held", "range", "range held",
                                       "range cold", "pm", "pm held", "pm cold", "check"});
    bool ok = true;
    std::map<std::string, double> clock_mhz;  // the fixed-work row's SM clock per mode (median)
    for (const work_case& c : cases) {
      if (!only.empty() && std::none_of(only.begin(), only.end(), [&](const std::string& part) {
            return c.name.find(part) != std::string::npos;
          }))
        continue;
      const auto ns = static_cast<unsigned long long>(c.us * 1000.0);
      double last_mhz = 0;  // the fixed-work row's SM clock in the last run
      std::uint64_t mismatches = 0;
      // one run: the block count reset, then events around the work, its time; the blocks it ran
      // checked
      const auto reset = [&] {
        CDPKIT_CUDA_TRY(cudaMemsetAsync(d_blocks, 0, sizeof(unsigned long long), stream));
        CDPKIT_CUDA_TRY(cudaStreamSynchronize(stream));
      };
      const auto timed = [&]() -> double {
        CDPKIT_CUDA_TRY(cudaEventRecord(start, stream));
        for (int k = 0; k < c.launches; ++k) {
          switch (c.before_each) {
            case work_case::before::nothing: break;
            case work_case::before::scratch: scratch_work(stream); break;
            case work_case::before::memset:
              CDPKIT_CUDA_TRY(cudaMemsetAsync(d_scratch, 0, scratch_bytes, stream));
              break;
            case work_case::before::allocations: {
              cdpkit::detail::device_buffer<std::uint32_t> a(scan_words, stream), b(scan_words, stream);
              cdpkit::detail::device_buffer<unsigned char> t(scan_temp_bytes, stream);
              break;
            }
            case work_case::before::cub_scan: {
              std::size_t temp_bytes = 0;
              CDPKIT_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, scan_in, scan_out, scan_words, stream));
              CDPKIT_CUDA_TRY(
                  cub::DeviceScan::ExclusiveSum(d_scan_temp, temp_bytes, scan_in, scan_out, scan_words, stream));
              break;
            }
            case work_case::before::round_trip: {
              unsigned long long seen = 0;
              CDPKIT_CUDA_TRY(cudaMemcpyAsync(&seen, d_blocks, sizeof seen, cudaMemcpyDeviceToHost, stream));
              cdpkit::wait_for_stream(stream, "collector_overhead_bench: read-back", nullptr, __FILE__, __LINE__);
              break;
            }
          }
          if (c.children > 0) spin_parent<<<1, 64, 0, stream>>>(c.children, ns, d_blocks);
          else if (c.fixed_work) fixed_work_blocks<<<c.blocks, 128, 0, stream>>>(ns, d_blocks, d_clock);
          else launch_spin(k, c.kernels, c.blocks, ns, d_blocks, stream);
        }
        CDPKIT_CUDA_TRY(cudaGetLastError());
        CDPKIT_CUDA_TRY(cudaEventRecord(stop, stream));
        cdpkit::wait_for_event(stop, "collector_overhead_bench: run", nullptr, __FILE__, __LINE__);
        float ms = 0;
        CDPKIT_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
        unsigned long long blocks = 0;
        CDPKIT_CUDA_TRY(cudaMemcpy(&blocks, d_blocks, sizeof blocks, cudaMemcpyDeviceToHost));
        if (blocks != c.expected_blocks()) ++mismatches;
        if (c.fixed_work) {
          unsigned long long clock[2] = {0, 0};
          CDPKIT_CUDA_TRY(cudaMemcpy(clock, d_clock, sizeof clock, cudaMemcpyDeviceToHost));
          if (clock[1] > 0) last_mhz = 1000.0 * static_cast<double>(clock[0]) / static_cast<double>(clock[1]);
        }
        return ms;
      };
      const auto run = [&]() -> double {
        reset();
        return timed();
      };
      (void)run();  // loads the kernels; not timed
      std::map<std::string, cdpkit::harness::timing> times;
      for (const char* mode_name : modes) {
        const std::string mode = mode_name;
        if (refused.count(mode) != 0) continue;
        std::vector<double> samples, mhz;
        std::optional<prof::host_activity> held;
        const auto ends_with = [&](const char* tail) {
          const std::string t = tail;
          return mode.size() > t.size() && mode.compare(mode.size() - t.size(), t.size(), t) == 0;
        };
        if (ends_with("_held") || ends_with("_cold")) {
          held.emplace();
          held->start();
          if (!held->available()) {
            refused[mode] = held->unavailable_reason();
            continue;
          }
          (void)run();  // the first operations after enabling pay CUPTI's set-up
          (void)held->take();
        }
        for (int r = 0; r < reps && refused.count(mode) == 0; ++r) {
          double ms = 0;
          if (mode == "plain" || mode == "activity_held") {
            ms = run();
          } else if (mode == "activity") {
            prof::host_activity a;
            (void)a.record([&] { ms = run(); });
            if (!a.available()) refused[mode] = a.unavailable_reason();
          } else if (mode.compare(0, 5, "range") == 0) {
            const bool cold = mode == "range_cold";
            if (cold) reset();
            prof::range_profiler rp(prof::default_range_metrics(), 1);
            rp.measure("collector_overhead_bench", [&] { ms = cold ? timed() : run(); });
            if (!rp.available()) refused[mode] = rp.unavailable_reason();
            else (void)rp.results();
          } else {  // pm, pm_held, pm_cold
            const bool cold = mode == "pm_cold";
            if (cold) reset();
            prof::pm_sampler pm;
            (void)pm.sample([&] { ms = cold ? timed() : run(); });
            if (!pm.available()) refused[mode] = pm.unavailable_reason();
          }
          if (held) (void)held->take();
          samples.push_back(ms);
          if (c.fixed_work) mhz.push_back(last_mhz);
        }
        if (refused.count(mode) != 0) continue;
        times[mode] = cdpkit::harness::timing_of(samples);
        if (c.fixed_work) clock_mhz[mode] = cdpkit::harness::median(mhz);
      }
      const double plain = times.at("plain").median_ms;
      std::vector<std::string> cells = {c.name, format("%.3f", plain)};
      for (const char* mode_name : modes) {
        const std::string mode = mode_name;
        if (mode == "plain") continue;
        const auto it = times.find(mode);
        cells.push_back(it == times.end() ? std::string("-")
                                          : format("%.3f", it->second.median_ms) + " (" +
                                                format("%+.0f", (it->second.median_ms - plain) * 1000.0) + " us)");
      }
      cells.push_back(mismatches == 0 ? "ok" : "FAIL " + std::to_string(mismatches));
      table.add_row(cells);
      ok = ok && mismatches == 0;
      for (const auto& [mode, t] : times) {
        cdpkit::harness::bench_row row;
        row.family = "collector";
        row.input = c.name;
        row.variant = mode;
        row.baseline = "plain";
        row.params = {{"host_launches", c.launches},
                      {"blocks_per_launch", c.blocks},
                      {"wait_us", c.fixed_work ? 0.0 : c.us},
                      {"fma_per_thread", c.fixed_work ? static_cast<std::uint64_t>(ns) : std::uint64_t{0}},
                      {"device_children", c.children},
                      {"functions", c.kernels}};
        if (c.fixed_work) row.params["sm_clock_mhz"] = clock_mhz.at(mode);
        row.n = static_cast<std::uint64_t>(c.launches);
        row.work = c.expected_blocks();
        row.work_unit = "blocks";
        row.throughput_unit = "Mblocks/s";
        row.m.time = t;
        row.m.checked = true;
        row.m.mismatches = mismatches;
        doc["rows"].push_back(cdpkit::harness::bench_row_json(row));
      }
    }
    std::cout << "CUDA events around each run (median of " << reps << "); +us: over plain. held: the activity API "
              << "kept on across the runs after one untimed run.\n";
    table.print(std::cout);
    if (!clock_mhz.empty()) {
      std::cout << "SM clock during the fixed-work row (block 0's cycles over %globaltimer, MHz, median):";
      for (const char* m : modes)
        if (clock_mhz.count(m) != 0) std::cout << " " << m << " " << format("%.0f", clock_mhz.at(m));
      std::cout << "\n";
    }
    for (const auto& [mode, why] : refused) std::cout << mode << ": not measured: " << why << "\n";
    if (!json_path.empty()) cdpkit::harness::write_json_file(doc, json_path);
    return ok;
  });
}
