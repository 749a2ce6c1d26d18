// child_occupancy_bench — the same grid launched by the host and by the device: how many of its
// blocks are resident per SM, and what that costs (docs/design.md, "Device-launched grids and
// shared memory").
//
// Every block records when it started and finished (%globaltimer) and on which SM; from those
// records each row reports the mean resident blocks per SM over the grid's span (the sum of the
// block durations / span / SMs used) and the most seen on one SM at once, beside the time of the
// grid (CUDA events; the device rows include the one-thread parent and its launch).
//
//   1. A streaming body (read 32768 keys per block, hash, write elsewhere) with 0 B .. 20 KiB of
//      static shared memory, 256-thread blocks, and 20 KiB with 512- and 1024-thread blocks;
//      launched by the host, and by a one-thread parent through the launch layer (launch_step, a
//      fire-and-forget grid at the parent's depth); each also with the largest shared-memory
//      carveout asked of the kernels (cudaFuncAttributePreferredSharedMemoryCarveout), and from
//      a parent that holds as much shared memory as a child block. Checked against the same
//      hash on the host. The same pass with 6 KiB and 20 KiB of dynamic shared memory instead,
//      host- and device-launched.
//   2. quicksort fast's scatter grid (u32 keys, one range of 2^log2 keys, the real kernel) with
//      256-thread blocks (what fast launched before its device-launched grids got larger blocks)
//      and child_pass_threads (what it launches now), launched by the host and by the device
//      (launch_step, tail launch, and launch_step with the largest carveout); checked as a
//      permutation (sum, xor and a mixed-hash sum of the output equal the input's) whose every
//      key lies in its bucket (from the task record).
//
//   child_occupancy_bench --json child_occupancy.json
//   child_occupancy_bench --log2 24 --reps 3

#include <cdpkit/error.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/table.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/quicksort.cuh>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

namespace qd = cdpkit::quicksort_detail;
using cdpkit::launch_context;
using cdpkit::harness::format;

constexpr std::uint32_t keys_per_block = 32768;
constexpr std::uint16_t site_step = cdpkit::sites::first_user_site;
constexpr std::uint16_t site_tail = cdpkit::sites::first_user_site + 1;

struct block_time {
  unsigned long long t0, t1;
  unsigned int sm, pad;
};

__device__ __forceinline__ unsigned long long now_ns() { return cdpkit::detail::global_timer_ns(); }
__device__ __forceinline__ unsigned int sm_id() {
  unsigned int s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

/// `Inner` with every block's start, end and SM recorded (block_time per block).
template <class Inner>
struct probed {
  static constexpr unsigned int max_block_threads = Inner::max_block_threads;
  static constexpr unsigned int min_blocks_per_sm = Inner::min_blocks_per_sm;
  Inner inner;
  block_time* times;
  __device__ void operator()(const launch_context& self) const {
    const unsigned long long t0 = now_ns();
    inner(self);
    __syncthreads();
    if (threadIdx.x == 0) times[blockIdx.x] = {t0, now_ns(), sm_id(), 0};
  }
};

__host__ __device__ inline std::uint32_t hash32(std::uint32_t v) {
  v ^= v >> 16;
  v *= 0x7feb352du;
  v ^= v >> 15;
  return v;
}

/// The block's keys [lo, lo + keys_per_block) hashed from `in` to `out` through shared memory:
/// each thread round-robins over its own `rounds` slots of `slot` (no two threads share one);
/// volatile, so the slots are really allocated and used.
template <unsigned int Threads>
__device__ __forceinline__ void pass_through_slots(const std::uint32_t* in, std::uint32_t* out,
                                                   std::uint64_t lo, std::uint32_t* slot,
                                                   unsigned int rounds) {
  volatile std::uint32_t* mine = slot + threadIdx.x;
  unsigned int r = 0;
  for (std::uint32_t i = threadIdx.x; i < keys_per_block; i += Threads) {
    mine[r * Threads] = in[lo + i];
    out[lo + i] = hash32(mine[r * Threads]);
    r = r + 1 == rounds ? 0 : r + 1;
  }
}

/// A streaming pass over keys_per_block keys per block with `Bytes` of static shared memory
/// (every thread stores into it and reads it back, so it is not optimized away).
template <unsigned int Threads, unsigned int Bytes>
struct stream_body {
  static constexpr unsigned int max_block_threads = Threads;
  static constexpr unsigned int min_blocks_per_sm = 1;
  const std::uint32_t* in;
  std::uint32_t* out;
  __device__ void operator()(const launch_context&) const {
    const std::uint64_t lo = std::uint64_t{blockIdx.x} * keys_per_block;
    if constexpr (Bytes == 0) {
      for (std::uint32_t i = threadIdx.x; i < keys_per_block; i += Threads)
        out[lo + i] = hash32(in[lo + i]);
    } else {
      static_assert(Bytes / 4 >= Threads, "at least one slot per thread");
      __shared__ std::uint32_t slot[Bytes / 4];
      pass_through_slots<Threads>(in, out, lo, slot, Bytes / 4 / Threads);
    }
  }
};

/// stream_body's shared-memory pass with `bytes` of dynamic shared memory instead (the launch
/// gives them): does the device treat a grid's dynamic shared memory as it does static?
template <unsigned int Threads>
struct stream_dynamic_body {
  static constexpr unsigned int max_block_threads = Threads;
  static constexpr unsigned int min_blocks_per_sm = 1;
  const std::uint32_t* in;
  std::uint32_t* out;
  unsigned int bytes;  ///< the dynamic shared memory of a block: a multiple of 4 * Threads
  __device__ void operator()(const launch_context&) const {
    extern __shared__ std::uint32_t dynamic_slot[];
    pass_through_slots<Threads>(in, out, std::uint64_t{blockIdx.x} * keys_per_block, dynamic_slot,
                                bytes / 4 / Threads);
  }
};

/// Launches the one-thread parents could not make (never expected: the depth cap does not
/// count a step or a continuation, and one launch is far below the budget).
__device__ unsigned int refused_launches;

/// A one-thread parent: launch `body` as a grid of `grid` blocks through the layer, a tail
/// launch or a step; a step's blocks get `shared_bytes` of dynamic shared memory.
template <class Body>
__global__ void one_thread_parent(launch_context ctx, Body body, unsigned int grid, bool tail,
                                  unsigned int shared_bytes) {
  const cdpkit::launch_result r =
      tail ? cdpkit::launch_continuation(ctx, site_tail, dim3(grid),
                                         dim3(Body::max_block_threads), body)
           : cdpkit::launch_step(ctx, site_step, dim3(grid), dim3(Body::max_block_threads), body, 0u,
                                 shared_bytes);
  if (!r) atomicAdd(&refused_launches, 1u);
}

/// Ask for a shared-memory carveout (percent, or cudaSharedmemCarveoutDefault) for the child
/// kernel of body P and for its one-thread parent.
template <class P>
void set_carveout(int percent) {
  CDPKIT_CUDA_TRY(cudaFuncSetAttribute(cdpkit::bounded_child_entry_kernel<P>,
                                       cudaFuncAttributePreferredSharedMemoryCarveout, percent));
  CDPKIT_CUDA_TRY(cudaFuncSetAttribute(one_thread_parent<P>,
                                       cudaFuncAttributePreferredSharedMemoryCarveout, percent));
}

struct occupancy {
  double blocks_mean = 0, blocks_max = 0, span_us = 0, block_us = 0;
  unsigned int sms = 0;
};

occupancy occupancy_of(const std::vector<block_time>& v) {
  unsigned long long lo = ~0ull, hi = 0;
  double busy = 0;
  std::map<unsigned int, std::vector<std::pair<unsigned long long, int>>> events;
  for (const block_time& b : v) {
    lo = std::min(lo, b.t0);
    hi = std::max(hi, b.t1);
    busy += static_cast<double>(b.t1 - b.t0);
    events[b.sm].push_back({b.t0, 1});
    events[b.sm].push_back({b.t1, -1});
  }
  occupancy o;
  for (auto& [sm, e] : events) {
    std::sort(e.begin(), e.end());  // at equal times the end (-1) sorts before a start
    int now = 0;
    for (const auto& x : e) {
      now += x.second;
      o.blocks_max = std::max(o.blocks_max, static_cast<double>(now));
    }
  }
  o.sms = static_cast<unsigned int>(events.size());
  const double span = static_cast<double>(hi - lo);
  o.span_us = span / 1e3;
  o.block_us = v.empty() ? 0 : busy / static_cast<double>(v.size()) / 1e3;
  o.blocks_mean = span > 0 && o.sms > 0 ? busy / span / o.sms : 0;
  return o;
}

/// A CUDA event, destroyed with its scope (also when a check throws).
class cuda_event {
 public:
  cuda_event() { CDPKIT_CUDA_TRY(cudaEventCreate(&e_)); }
  ~cuda_event() { (void)cudaEventDestroy(e_); }
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
  [[nodiscard]] cudaEvent_t get() const noexcept { return e_; }

 private:
  cudaEvent_t e_{};
};

struct result {
  std::string input, variant;
  unsigned int threads, shared_bytes;
  cdpkit::harness::measurement m;
  occupancy occ;
  bool dynamic_shared = false;  ///< shared_bytes given at launch, not declared by the kernel
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"child_occupancy_bench: resident blocks per SM of the same grid launched by the "
               "host and by the device, by static shared memory; quicksort fast's scatter grid"};
  int log2 = 26, reps = 5;
  std::string json_path;
  app.add_option("--log2", log2, "log2 of the keys per grid (one block per 32768 keys)")
      ->capture_default_str()
      ->check(CLI::Range(16, 30));
  app.add_option("--reps", reps, "timed repetitions")->capture_default_str()->check(
      CLI::Range(1, 100));
  app.add_option("--json", json_path, "write the rows (cdpkit-bench/1) here")
      ->check(cdpkit::harness::output_file("a JSON document", '{'));
  return cdpkit::harness::run_program("child_occupancy_bench", app, argc, argv, [&] {
    cdpkit::require_cuda_device();
    const std::uint64_t n = std::uint64_t{1} << log2;
    const auto grid = static_cast<unsigned int>(n / keys_per_block);
    cdpkit::launch_config config;
    config.max_depth = 0;  // the scatter's spawn queues its buckets: no deeper grid runs
    cdpkit::launch_runtime runtime(config);
    const launch_context root = runtime.root_context();
    auto doc = cdpkit::harness::bench_document(cdpkit::profiling::device_json());
    int device = 0, sm_count = 0;
    CDPKIT_CUDA_TRY(cudaGetDevice(&device));
    CDPKIT_CUDA_TRY(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));

    const std::string what = "the 2^" + std::to_string(log2) + " keys of child_occupancy_bench";
    cdpkit::require_host_memory(8 * n, what);
    cdpkit::require_device_memory(
        8 * n + cdpkit::quicksort_scratch_bytes(cdpkit::quicksort_variant::fast, n, 4, 0), what);
    std::vector<std::uint32_t> h_in(n), h_out(n);
    std::uint64_t x = 88172645463325252ull;
    for (auto& k : h_in) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      k = static_cast<std::uint32_t>(x);
    }
    cdpkit::detail::device_buffer<std::uint32_t> in(n, nullptr), out(n, nullptr);
    cdpkit::detail::device_buffer<block_time> times(grid, nullptr);
    CDPKIT_CUDA_TRY(cudaMemcpy(in.data(), h_in.data(), 4 * n, cudaMemcpyHostToDevice));
    std::vector<block_time> h_times(grid);
    std::vector<result> results;

    // time `enqueue` reps times (after one warm-up), keep the last run's block records
    const auto run = [&](const std::function<void()>& prepare,
                         const std::function<void()>& enqueue) {
      const cuda_event start, stop;
      const cudaEvent_t e0 = start.get(), e1 = stop.get();
      cdpkit::harness::measurement m;
      for (int r = -1; r < reps; ++r) {
        if (prepare) prepare();
        CDPKIT_CUDA_TRY(cudaEventRecord(e0));
        enqueue();
        CDPKIT_CUDA_TRY(cudaGetLastError());
        CDPKIT_CUDA_TRY(cudaEventRecord(e1));
        CDPKIT_WAIT_STREAM(nullptr, runtime, "child_occupancy_bench");
        float ms = 0;
        CDPKIT_CUDA_TRY(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0) m.time.samples_ms.push_back(ms);
      }
      CDPKIT_CHECK_DEVICE_ERRORS(runtime);
      m.time = cdpkit::harness::timing_of(std::move(m.time.samples_ms));
      CDPKIT_CUDA_TRY(cudaMemcpy(h_times.data(), times.data(), sizeof(block_time) * grid,
                                 cudaMemcpyDeviceToHost));
      return std::make_pair(m, occupancy_of(h_times));
    };

    // 1. streaming bodies: every key's hash in `out` (mismatches counted), and the output and
    // the block records cleared before each run
    const auto stream_check = [&] {
      CDPKIT_CUDA_TRY(cudaMemcpy(h_out.data(), out.data(), 4 * n, cudaMemcpyDeviceToHost));
      std::uint64_t bad = 0;
      for (std::uint64_t i = 0; i < n; ++i) bad += h_out[i] != hash32(h_in[i]);
      return bad;
    };
    const auto stream_clear = [&] {
      CDPKIT_CUDA_TRY(cudaMemset(out.data(), 0, 4 * n));
      CDPKIT_CUDA_TRY(cudaMemset(times.data(), 0, sizeof(block_time) * grid));
    };
    const auto stream_case = [&](auto body_tag) {
      using B = decltype(body_tag);
      using P = probed<B>;
      const P body{B{in.data(), out.data()}, times.data()};
      cudaFuncAttributes fa{};
      CDPKIT_CUDA_TRY(cudaFuncGetAttributes(&fa, cdpkit::bounded_child_entry_kernel<P>));
      const std::string input = "stream:threads=" + std::to_string(B::max_block_threads) +
                                ":shared=" + std::to_string(fa.sharedSizeBytes);
      // host_launch / device_launch_step: the kernels as they are. The others try what the
      // shared-memory split of the SMs does to a device-launched grid: *_carveout_max ask for
      // the largest shared-memory carveout on the child kernel and the parent (restored after),
      // device_parent_shared launches the one-thread parent with as much dynamic shared memory
      // as a child block uses (as a parent that itself uses the child's shared memory would).
      enum class how { host, device, host_carveout_max, device_carveout_max, device_parent_shared };
      for (const how h : {how::host, how::device, how::host_carveout_max, how::device_carveout_max,
                          how::device_parent_shared}) {
        if (h == how::device_parent_shared && fa.sharedSizeBytes == 0) continue;
        const bool device = h == how::device || h == how::device_carveout_max || h == how::device_parent_shared;
        const bool max_carveout = h == how::host_carveout_max || h == how::device_carveout_max;
        if (max_carveout) set_carveout<P>(cudaSharedmemCarveoutMaxShared);
        const std::size_t parent_shared = h == how::device_parent_shared ? fa.sharedSizeBytes : 0;
        auto [m, occ] = run(stream_clear, [&] {
          if (device) one_thread_parent<P><<<1, 1, parent_shared>>>(root, body, grid, false, 0u);
          else cdpkit::bounded_child_entry_kernel<P><<<grid, B::max_block_threads>>>(root, body);
        });
        if (max_carveout) set_carveout<P>(cudaSharedmemCarveoutDefault);
        m.checked = true;
        m.mismatches = stream_check();
        const char* variant = h == how::host                  ? "host_launch"
                              : h == how::device              ? "device_launch_step"
                              : h == how::host_carveout_max   ? "host_launch_carveout_max"
                              : h == how::device_carveout_max ? "device_launch_step_carveout_max"
                                                              : "device_launch_step_parent_shared";
        results.push_back({input, variant, B::max_block_threads,
                           static_cast<unsigned int>(fa.sharedSizeBytes), m, occ});
      }
    };
    stream_case(stream_body<256, 0>{});
    stream_case(stream_body<256, 2048>{});
    stream_case(stream_body<256, 6144>{});
    stream_case(stream_body<256, 20480>{});
    stream_case(stream_body<512, 20480>{});
    stream_case(stream_body<1024, 20480>{});

    // the same pass with dynamic shared memory (256-thread blocks), host- and device-launched
    for (const unsigned int bytes : {6144u, 20480u}) {
      using B = stream_dynamic_body<256>;
      using P = probed<B>;
      const P body{B{in.data(), out.data(), bytes}, times.data()};
      const std::string input = "stream:threads=256:dynamic_shared=" + std::to_string(bytes);
      for (const bool device : {false, true}) {
        auto [m, occ] = run(stream_clear, [&] {
          if (device) one_thread_parent<P><<<1, 1>>>(root, body, grid, false, bytes);
          else cdpkit::bounded_child_entry_kernel<P><<<grid, 256, bytes>>>(root, body);
        });
        m.checked = true;
        m.mismatches = stream_check();
        results.push_back(
            {input, device ? "device_launch_step" : "host_launch", 256u, bytes, m, occ, true});
      }
    }

    // 2. quicksort fast's scatter grid, u32 keys, one range of n keys
    {
      using T = std::uint32_t;
      using C = cdpkit::less<T>;
      using A = qd::fast_agent<T, qd::no_values, C>;
      const qd::scratch_layout l = qd::make_scratch_layout(cdpkit::quicksort_variant::fast, n, 4, 0);
      cdpkit::detail::device_buffer<char> scratch(l.total, nullptr);
      cdpkit::detail::device_buffer<std::uint32_t> first_block(2, nullptr);
      qd::sort_buffers<T, qd::no_values> buf{};
      buf.keys[0] = in.data();
      buf.keys[1] = reinterpret_cast<T*>(scratch.data() + l.keys);
      const qd::fast_args<T, qd::no_values, C> a{
          buf,
          reinterpret_cast<qd::fast_task<qd::key_storage_t<T>>*>(scratch.data() + l.tasks),
          l.task_capacity,
          reinterpret_cast<std::uint32_t*>(scratch.data() + l.arena),
          l.arena_capacity,
          reinterpret_cast<qd::scratch_counters*>(scratch.data() + l.counters),
          reinterpret_cast<qd::small_job*>(scratch.data() + l.jobs),
          l.job_capacity,
          1,
          C{}};
      const unsigned int pg = qd::partition_grid(n);
      if (pg != grid) throw cdpkit::input_error("child_occupancy_bench: partition grid differs");
      const std::uint32_t fb[2] = {0, pg};
      CDPKIT_CUDA_TRY(
          cudaMemcpy(first_block.data(), fb, sizeof fb, cudaMemcpyHostToDevice));
      // the root task, its count and scan (host_driven's kernels), the output and the block
      // records cleared: untimed, before every run
      const auto prepare = [&] {
        CDPKIT_CUDA_TRY(cudaMemset(buf.keys[1], 0xff, 4 * n));
        CDPKIT_CUDA_TRY(cudaMemset(times.data(), 0, sizeof(block_time) * grid));
        qd::fast_init_kernel<<<1, qd::block_threads>>>(a, static_cast<std::uint32_t>(n));
        qd::level_count_kernel<<<pg, qd::block_threads>>>(root, a, first_block.data(), 1u);
        qd::level_scan_kernel<<<1, qd::block_threads>>>(a);
        CDPKIT_CUDA_TRY(cudaGetLastError());
      };
      std::uint64_t want_sum = 0, want_xor = 0, want_mix = 0;
      for (const T k : h_in) {
        want_sum += k;
        want_xor ^= k;
        want_mix += hash32(k ^ 0x9e3779b9u);
      }
      // buffer 1 is a permutation of the input (sum, xor, mixed-hash sum), and every key lies
      // in its bucket: bucket 2i between splitters i-1 and i, bucket 2i+1 equal to splitter i
      const auto check = [&] {
        CDPKIT_CUDA_TRY(cudaMemcpy(h_out.data(), buf.keys[1], 4 * n, cudaMemcpyDeviceToHost));
        qd::fast_task<T> task{};
        CDPKIT_CUDA_TRY(cudaMemcpy(&task, a.tasks, sizeof task, cudaMemcpyDeviceToHost));
        std::uint64_t sum = 0, xr = 0, mix = 0, misplaced = 0;
        for (const T k : h_out) {
          sum += k;
          xr ^= k;
          mix += hash32(k ^ 0x9e3779b9u);
        }
        const unsigned int m = (1u << task.levels) - 1, buckets = 2 * m + 1;
        if (task.start[buckets] != n) return std::uint64_t{n};
        for (unsigned int b = 0; b < buckets; ++b) {
          const unsigned int i = b / 2;
          for (std::uint32_t j = task.start[b]; j < task.start[b + 1]; ++j) {
            const T k = h_out[j];
            const bool in = b % 2 == 1 ? k == task.sorted[i]
                                       : (i == 0 || task.sorted[i - 1] < k) &&
                                             (i == m || k < task.sorted[i]);
            misplaced += in ? 0 : 1;
          }
        }
        return misplaced + std::uint64_t{sum != want_sum || xr != want_xor || mix != want_mix};
      };
      // fast's scatter step as the host would launch it (256 threads) and as fast's
      // device-launched grids have it (child_pass_threads)
      const auto scatter_case = [&](auto threads) {
        constexpr unsigned int bt = decltype(threads)::value;
        using S = typename A::template scatter_body<bt>;
        using P = probed<S>;
        const P body{S{a, a.tasks}, times.data()};
        cudaFuncAttributes fa{};
        CDPKIT_CUDA_TRY(cudaFuncGetAttributes(&fa, cdpkit::bounded_child_entry_kernel<P>));
        const std::string input = "quicksort_fast_scatter:u32:threads=" + std::to_string(bt) +
                                  ":shared=" + std::to_string(fa.sharedSizeBytes);
        // mode 3: the step again with the largest shared-memory carveout asked of the scatter
        // kernel and its parent (restored after)
        for (int mode = 0; mode < 4; ++mode) {
          if (mode == 3) set_carveout<P>(cudaSharedmemCarveoutMaxShared);
          auto [m, occ] = run(prepare, [&] {
            if (mode == 0)
              cdpkit::bounded_child_entry_kernel<P><<<pg, bt>>>(root, body);
            else
              one_thread_parent<P><<<1, 1>>>(root, body, pg, mode == 2, 0u);
          });
          if (mode == 3) set_carveout<P>(cudaSharedmemCarveoutDefault);
          m.checked = true;
          m.mismatches = check();
          results.push_back({input,
                             mode == 0   ? "host_launch"
                             : mode == 1 ? "device_launch_step"
                             : mode == 2 ? "device_tail_launch"
                                         : "device_launch_step_carveout_max",
                             bt, static_cast<unsigned int>(fa.sharedSizeBytes), m, occ});
        }
      };
      scatter_case(std::integral_constant<unsigned int, qd::block_threads>{});
      scatter_case(std::integral_constant<unsigned int, qd::child_pass_threads>{});
    }

    // the table and the rows
    cdpkit::harness::text_table table({"grid", "launched by", "ms", "vs host", "blocks/SM mean",
                                       "max", "threads/SM", "block us", "check"});
    std::map<std::string, double> host_ms;
    bool ok = true;
    for (const result& r : results) {
      if (r.variant == "host_launch") host_ms[r.input] = r.m.time.median_ms;
      ok = ok && cdpkit::harness::verified(r.m);
      table.add_row({r.input, r.variant, format("%.3f", r.m.time.median_ms),
                     cdpkit::harness::ratio_text(host_ms[r.input], r.m.time.median_ms),
                     format("%.2f", r.occ.blocks_mean), format("%.0f", r.occ.blocks_max),
                     format("%.0f", r.occ.blocks_mean * r.threads), format("%.1f", r.occ.block_us),
                     cdpkit::harness::check_text(r.m)});
      cdpkit::harness::bench_row row;
      row.family = "launch";
      row.input = r.input;
      row.variant = r.variant;
      row.baseline = "host_launch";
      row.params = {{"block_threads", r.threads},
                    {r.dynamic_shared ? "dynamic_shared_bytes" : "static_shared_bytes",
                     r.shared_bytes},
                    {"blocks", grid}};
      row.n = n;
      row.work = n;
      row.work_unit = "keys";
      row.throughput_unit = "Gkeys/s";
      row.m = r.m;
      auto j = cdpkit::harness::bench_row_json(row);
      j["occupancy"] = {{"blocks_per_sm_mean", r.occ.blocks_mean},
                        {"blocks_per_sm_max", r.occ.blocks_max},
                        {"sms", r.occ.sms},
                        {"span_us", r.occ.span_us},
                        {"block_us_mean", r.occ.block_us}};
      doc["rows"].push_back(j);
    }
    unsigned int refused = 0;
    CDPKIT_CUDA_TRY(cudaMemcpyFromSymbol(&refused, refused_launches, sizeof refused));
    if (refused != 0)
      throw cdpkit::cuda_error(cudaErrorLaunchFailure,
                               "child_occupancy_bench: " + std::to_string(refused) +
                                   " device launches were refused",
                               __FILE__, __LINE__);
    std::cout << grid << " blocks of 32768 keys (2^" << log2 << " keys), " << sm_count
              << " SMs; device rows: a one-thread parent launches the grid (its time included)\n";
    table.print(std::cout);
    if (!json_path.empty()) cdpkit::harness::write_json_file(doc, json_path);
    return ok;
  });
}
