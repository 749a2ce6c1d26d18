// The device launch layer: exact trace counts on constructed launches, depth cap, pending budget,
// launch failures caught and fallen back from, record buffer overflow, divergence probes.

#include <doctest/doctest.h>

#include "gpu.hpp"

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch.hpp>
#include <cdpkit/probe.cuh>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/wait.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr std::uint16_t test_site = cdpkit::sites::first_user_site;
constexpr std::uint16_t probe_site = cdpkit::sites::first_user_site + 1;

/// A recursion `levels` deep with `fanout` children per grid; every grid counts its run at its
/// depth, and the work of a child that is not launched is counted as done inline.
struct recurse_body {
  int levels;
  int fanout;
  cdpkit::stream_kind stream;
  unsigned int* d_runs;    // grids that ran, by depth
  unsigned int* d_inline;  // children done inline, by the depth they would have had
  __device__ void operator()(const cdpkit::launch_context& self) const {
    if (threadIdx.x != 0) return;
    atomicAdd(&d_runs[self.depth], 1u);
    if (self.depth >= levels) return;
    for (int f = 0; f < fanout; ++f) {
      if (!cdpkit::launch_child(self, test_site, dim3(1), dim3(32), stream, *this)) {
        atomicAdd(&d_inline[self.depth + 1], 1u);
      }
    }
  }
};

__global__ void recurse_root_kernel(cdpkit::launch_context ctx, recurse_body body) { body(ctx); }

struct recursion_result {
  std::vector<unsigned int> runs, inlined;
  cdpkit::trace_snapshot trace;
};

recursion_result run_recursion(cdpkit::launch_runtime& rt, int levels, int fanout,
                               cdpkit::stream_kind stream) {
  constexpr int slots = 16;
  unsigned int* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, 2 * slots * sizeof(unsigned int)));
  CDPKIT_CUDA_TRY(cudaMemset(d, 0, 2 * slots * sizeof(unsigned int)));
  cdpkit::profiling::trace_session session(rt);
  recurse_root_kernel<<<1, 32>>>(rt.root_context(), recurse_body{levels, fanout, stream, d, d + slots});
  CDPKIT_CUDA_TRY(cudaGetLastError());
  CDPKIT_CHECK_DEVICE_ERRORS(rt);
  recursion_result r{std::vector<unsigned int>(slots), std::vector<unsigned int>(slots),
                     session.collect()};
  CDPKIT_CUDA_TRY(cudaMemcpy(r.runs.data(), d, slots * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaMemcpy(r.inlined.data(), d + slots, slots * sizeof(unsigned int),
                             cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaFree(d));
  return r;
}

unsigned int power(unsigned int b, int e) {
  unsigned int r = 1;
  while (e-- > 0) r *= b;
  return r;
}

}  // namespace

TEST_CASE("the depth histogram of a recursion equals the recursion it made" * CDPKIT_GPU_CASE) {
  cdpkit::launch_runtime rt;
  for (auto stream : {cdpkit::stream_kind::fire_and_forget, cdpkit::stream_kind::named_per_thread,
                      cdpkit::stream_kind::null_stream, cdpkit::stream_kind::tail}) {
    CAPTURE(std::string(cdpkit::to_string(stream)));
    const int levels = 4, fanout = 3;
    const auto r = run_recursion(rt, levels, fanout, stream);
    const auto& site = r.trace.sites[test_site];
    unsigned int total = 0;
    for (int d = 1; d <= levels; ++d) {
      CAPTURE(d);
      CHECK(site.depth_hist[d] == power(fanout, d));
      CHECK(r.runs[d] == power(fanout, d));  // every launched child really ran
      total += power(fanout, d);
    }
    CHECK(site.depth_hist[0] == 0);
    CHECK(site.depth_hist[levels + 1] == 0);
    CHECK(site.max_depth == static_cast<unsigned int>(levels));
    CHECK(site.requests == total);
    CHECK(site.outcomes[0] == total);
    CHECK(site.stream_launches[static_cast<int>(stream)] == total);
    CHECK(site.threads_log2[5] == total);  // 32-thread grids
    CHECK(site.blocks_log2[0] == total);   // one block each
    CHECK(r.trace.records.size() == total);
    CHECK(r.trace.records_dropped == 0);
    CHECK(r.trace.totals.pending_high_water >= 1);
    CHECK(r.trace.totals.pending_high_water <= total);
  }
}

TEST_CASE("launch records link every child to the record of its parent" * CDPKIT_GPU_CASE) {
  cdpkit::launch_runtime rt;
  const auto r = run_recursion(rt, 3, 2, cdpkit::stream_kind::fire_and_forget);
  REQUIRE(r.trace.records.size() == 2u + 4u + 8u);
  for (const auto& rec : r.trace.records) {
    CAPTURE(rec.id);
    if (rec.depth == 1) {
      CHECK(rec.parent == cdpkit::no_record);
    } else {
      REQUIRE(rec.parent < r.trace.records.size());
      const auto& parent = r.trace.records[rec.parent];
      CHECK(parent.depth + 1 == rec.depth);
      CHECK(parent.t_ns <= rec.t_ns);
    }
  }
}

namespace {

/// Every block spins spin_ns on %globaltimer; thread 0 of block 0 launches `fanout` children of
/// `blocks` blocks while depth < levels.
struct timed_body {
  int levels;
  int fanout;
  unsigned int blocks;
  unsigned long long spin_ns;
  cdpkit::stream_kind stream;
  __device__ void operator()(const cdpkit::launch_context& self) const {
    if (threadIdx.x == 0 && blockIdx.x == 0 && self.depth < levels)
      for (int f = 0; f < fanout; ++f)
        (void)cdpkit::launch_child(self, test_site, dim3(blocks), dim3(64), stream, *this);
    const std::uint64_t t0 = cdpkit::detail::global_timer_ns();
    while (cdpkit::detail::global_timer_ns() - t0 < spin_ns) {
    }
  }
};

cdpkit::trace_snapshot run_timed(cdpkit::launch_runtime& rt, const timed_body& body) {
  cdpkit::profiling::trace_session session(rt);
  cdpkit::child_entry_kernel<timed_body><<<2, 64>>>(rt.root_context(), body);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  CDPKIT_WAIT_STREAM(nullptr, rt, "timed recursion");
  CDPKIT_CHECK_DEVICE_ERRORS(rt);
  return session.collect();
}

}  // namespace

TEST_CASE("every launched child records when its first block started and its last block "
          "finished, and a refused one records neither" * CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.max_depth = 2;  // depth 3 is refused
  config.record_refusals = true;
  cdpkit::launch_runtime rt(config);
  const unsigned long long spin = 20000;  // 20 us per block
  const auto t = run_timed(rt, timed_body{3, 2, 4, spin, cdpkit::stream_kind::fire_and_forget});
  CHECK(t.refusals_recorded);
  REQUIRE(t.records.size() == 2u + 4u + 8u);
  std::size_t timed = 0;
  for (const auto& rec : t.records) {
    CAPTURE(rec.id);
    CAPTURE(rec.depth);
    const bool launched = rec.outcome == static_cast<std::uint8_t>(cdpkit::launch_outcome::launched);
    CHECK(launched == (rec.depth <= 2));
    CHECK(cdpkit::has_execution_time(rec) == launched);
    if (launched) {
      ++timed;
      CHECK(rec.start_ns >= rec.t_ns);               // it ran after it was asked for
      CHECK(rec.end_ns - rec.start_ns >= spin);      // its blocks spun at least 20 us
      CHECK(rec.end_ns - rec.start_ns < 1000000000ull);
    } else {
      CHECK(rec.start_ns == cdpkit::no_time_start);
      CHECK(rec.end_ns == cdpkit::no_time_end);
    }
    if (rec.parent != cdpkit::no_record) {  // asked while its parent ran
      REQUIRE(rec.parent < t.records.size());
      const auto& parent = t.records[rec.parent];
      CHECK(parent.start_ns <= rec.t_ns);
      CHECK(rec.t_ns <= parent.end_ns);
    }
  }
  CHECK(timed == 6u);
}

TEST_CASE("by default a refused request is counted and takes no record: the records are the grids "
          "that ran" * CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.max_depth = 2;  // depth 3 is refused: 8 requests
  cdpkit::launch_runtime rt(config);
  const auto t = run_timed(rt, timed_body{3, 2, 4, 1000, cdpkit::stream_kind::fire_and_forget});
  CHECK(t.refusals_recorded == false);
  REQUIRE(t.records.size() == 2u + 4u);
  for (const auto& rec : t.records) {
    CAPTURE(rec.id);
    CHECK(rec.outcome == static_cast<std::uint8_t>(cdpkit::launch_outcome::launched));
    CHECK(cdpkit::has_execution_time(rec));
    CHECK(rec.depth <= 2u);
    if (rec.parent != cdpkit::no_record) CHECK(rec.parent < t.records.size());
  }
  CHECK(t.totals.records_requested == 6u);
  CHECK(t.records_dropped == 0u);
  std::uint64_t refused = 0, requests = 0;
  for (const auto& site : t.sites) {
    refused += site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_depth)];
    requests += site.requests;
  }
  CHECK(refused == 8u);
  CHECK(requests == 2u + 4u + 8u);
}

TEST_CASE("a tail-launched child starts after its parent's last block finished" * CDPKIT_GPU_CASE) {
  cdpkit::launch_runtime rt;
  const auto t = run_timed(rt, timed_body{2, 2, 3, 10000, cdpkit::stream_kind::tail});
  REQUIRE(t.records.size() == 2u + 4u);
  for (const auto& rec : t.records) {
    CAPTURE(rec.id);
    REQUIRE(cdpkit::has_execution_time(rec));
    if (rec.parent == cdpkit::no_record) continue;
    const auto& parent = t.records[rec.parent];
    CHECK(rec.start_ns >= parent.end_ns);
  }
}

TEST_CASE("the depth cap stops the recursion and counts the children done inline" *
          CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.max_depth = 2;
  cdpkit::launch_runtime rt(config);
  const auto r = run_recursion(rt, 4, 3, cdpkit::stream_kind::fire_and_forget);
  const auto& site = r.trace.sites[test_site];
  CHECK(site.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)] == 3u + 9u);
  CHECK(site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_depth)] == 27u);
  CHECK(r.inlined[3] == 27u);
  CHECK(site.max_depth == 2u);
  CHECK(cdpkit::profiling::summarize(r.trace).fallbacks == 27u);
}

TEST_CASE("a refused site's requests fall back as over the budget, and other sites still launch" *
          CDPKIT_GPU_CASE) {
  {
    cdpkit::launch_config config;
    config.refused_sites = 1ull << test_site;
    cdpkit::launch_runtime rt(config);
    const auto r = run_recursion(rt, 3, 4, cdpkit::stream_kind::fire_and_forget);
    const auto& site = r.trace.sites[test_site];
    CHECK(site.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)] == 0u);
    CHECK(site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_budget)] == 4u);
    CHECK(r.inlined[1] == 4u);  // the root's four children, done inline
    CHECK(r.runs[1] == 0u);
  }
  {
    cdpkit::launch_config config;
    config.refused_sites = 1ull << probe_site;  // another site: this recursion is not touched
    cdpkit::launch_runtime rt(config);
    const auto r = run_recursion(rt, 3, 4, cdpkit::stream_kind::fire_and_forget);
    CHECK(r.trace.sites[test_site].outcomes[static_cast<int>(cdpkit::launch_outcome::launched)] == 4u + 16u + 64u);
    CHECK(r.runs[3] == 64u);
  }
}

TEST_CASE("over the pending budget a launch falls back and no work is lost" * CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.pending_budget = 4;
  cdpkit::launch_runtime rt(config);
  const int levels = 3, fanout = 8;
  const auto r = run_recursion(rt, levels, fanout, cdpkit::stream_kind::fire_and_forget);
  const auto& site = r.trace.sites[test_site];
  const auto launched = site.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)];
  const auto budget = site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_budget)];
  CHECK(budget > 0);
  CHECK(r.trace.totals.pending_high_water <= 4u);
  // every request was either launched (and its grid ran) or done inline
  unsigned int ran = 0, inlined = 0;
  for (int d = 1; d <= levels; ++d) {
    ran += r.runs[d];
    inlined += r.inlined[d];
  }
  CHECK(ran == launched);
  CHECK(inlined == budget);
  CHECK(site.requests == launched + budget);
}

namespace {

/// Every lane of every grid asks for a one-warp child at once, `levels` deep: with launch_child
/// after a __syncwarp (every lane wants one), or with launch_child_warp (the even lanes want one).
struct lane_requests_body {
  int levels;
  bool warp_call;          // launch_child_warp, else launch_child
  unsigned int* d_runs;    // grids that ran, by depth
  unsigned int* d_inline;  // children done inline, by the depth they would have had
  unsigned int* d_wrong;   // lanes that wanted nothing and were told "launched"
  __device__ void operator()(const cdpkit::launch_context& self) const {
    if (threadIdx.x == 0) atomicAdd(&d_runs[self.depth], 1u);
    if (self.depth >= levels) {  // uniform: every lane of the grid is at the same depth
      // a leaf holds its budget for 200 us, so that the requests made meanwhile are refused
      const auto t0 = cdpkit::detail::global_timer_ns();
      while (cdpkit::detail::global_timer_ns() - t0 < 200000ull) {
      }
      return;
    }
    const bool want = !warp_call || threadIdx.x % 2 == 0;
    cdpkit::launch_result r{};
    if (warp_call) {
      r = cdpkit::launch_child_warp(self, want, test_site, dim3(1), dim3(32), cdpkit::stream_kind::fire_and_forget,
                                    *this);
    } else {
      __syncwarp();
      r = cdpkit::launch_child(self, test_site, dim3(1), dim3(32), cdpkit::stream_kind::fire_and_forget, *this);
    }
    if (want && !r) atomicAdd(&d_inline[self.depth + 1], 1u);
    if (!want && r) atomicAdd(d_wrong, 1u);
  }
};

__global__ void lane_requests_root_kernel(cdpkit::launch_context ctx, lane_requests_body body) { body(ctx); }

/// Runs lane_requests_body two levels deep from one host-launched warp under `config` at budgets
/// 2048 (no refusal) and 100 (a warp's requests refused and launched mixed), and checks that every
/// request was launched (and its grid ran) or refused and done inline, `per_grid` requests a grid.
void check_lane_requests(cdpkit::launch_config config, bool warp_call, unsigned int per_grid) {
  for (const int budget : {2048, 100}) {
    CAPTURE(budget);
    config.pending_budget = budget;
    cdpkit::launch_runtime rt(config);
    constexpr int slots = 4, levels = 2;
    unsigned int* d = nullptr;
    CDPKIT_CUDA_TRY(cudaMalloc(&d, (2 * slots + 1) * sizeof(unsigned int)));
    CDPKIT_CUDA_TRY(cudaMemset(d, 0, (2 * slots + 1) * sizeof(unsigned int)));
    cdpkit::profiling::trace_session session(rt);
    lane_requests_root_kernel<<<1, 32>>>(rt.root_context(),
                                         lane_requests_body{levels, warp_call, d, d + slots, d + 2 * slots});
    CDPKIT_CUDA_TRY(cudaGetLastError());
    CDPKIT_CHECK_DEVICE_ERRORS(rt);  // balanced books: every slot freed, nothing pending
    const auto trace = session.collect();
    std::vector<unsigned int> counts(2 * slots + 1);
    CDPKIT_CUDA_TRY(cudaMemcpy(counts.data(), d, counts.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    CDPKIT_CUDA_TRY(cudaFree(d));
    const unsigned int* runs = counts.data();
    const unsigned int* inlined = counts.data() + slots;
    const auto& site = trace.sites[test_site];
    const auto launched = site.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)];
    const auto refused = site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_budget)];
    CHECK(counts[2 * slots] == 0u);        // no lane that wanted nothing was told "launched"
    CHECK(runs[1] + runs[2] == launched);  // every launched child ran
    CHECK(inlined[1] + inlined[2] == refused);
    CHECK(site.requests == per_grid + per_grid * runs[1]);  // the root's requests, then each depth-1 grid's
    CHECK(site.requests == launched + refused);
    CHECK(trace.totals.pending_high_water <= static_cast<unsigned int>(budget));
    if (budget == 2048) {
      CHECK(refused == 0u);
      CHECK(launched == per_grid + per_grid * per_grid);
    } else {
      CHECK(refused > 0u);
      CHECK(launched >= 100u);  // the first refusal comes at 100 in flight (depth-1 grids and leaves)
    }
    // the records are the grids launched, each once, although refusals came in the same warps
    // (launch_config::record_refusals is off)
    CHECK(trace.totals.records_requested == launched);
    REQUIRE(trace.records.size() == launched);
    std::vector<bool> seen(trace.records.size(), false);
    for (const auto& rec : trace.records) {
      CHECK(rec.outcome == static_cast<std::uint8_t>(cdpkit::launch_outcome::launched));
      REQUIRE(rec.id < seen.size());
      CHECK_FALSE(seen[rec.id]);
      seen[rec.id] = true;
    }
  }
}

}  // namespace

TEST_CASE("with serialized warp launches, lanes asking at once launch one at a time and no work "
          "is lost" * CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.serialize_warp_launches = true;
  check_lane_requests(config, false, 32u);
}

TEST_CASE("launch_child_warp: the lanes that want a grid launch one at a time, the others count "
          "nothing, and no work is lost" * CDPKIT_GPU_CASE) {
  check_lane_requests(cdpkit::launch_config{}, true, 16u);
}

TEST_CASE("launches over the device's pending limit fail and are caught with their error code" *
          CDPKIT_GPU_CASE) {
  // The budget is set far above the hardware limit so that the hardware refuses launches: the
  // layer must see cudaErrorLaunchPendingCountExceeded and fall back.
  cdpkit::launch_config config;
  config.pending_launch_limit = 16;
  config.pending_budget = 1 << 16;
  config.allow_unsafe_budget = true;
  cdpkit::launch_runtime rt(config);
  CHECK(rt.pending_launch_limit() >= 16);
  const int levels = 2, fanout = 256;
  const auto r = run_recursion(rt, levels, fanout, cdpkit::stream_kind::fire_and_forget);
  const auto& site = r.trace.sites[test_site];
  const auto launched = site.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)];
  const auto failed = site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_error)];
  unsigned int ran = 0, inlined = 0;
  for (int d = 1; d <= levels; ++d) {
    ran += r.runs[d];
    inlined += r.inlined[d];
  }
  CHECK(ran == launched);
  CHECK(inlined == failed);
  CHECK(launched + failed == site.requests);
  if (rt.pending_launch_limit() < fanout) {
    CHECK(failed > 0);
    bool saw_69 = false;
    for (int k = 0; k < cdpkit::trace_limits::error_slots; ++k)
      if (site.error_code[k] == cudaErrorLaunchPendingCountExceeded && site.error_count[k] > 0)
        saw_69 = true;
    CHECK(saw_69);
  }
}

TEST_CASE("a full record buffer counts the dropped records" * CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.trace_record_capacity = 8;
  cdpkit::launch_runtime rt(config);
  const auto r = run_recursion(rt, 4, 3, cdpkit::stream_kind::fire_and_forget);
  CHECK(r.trace.records.size() == 8u);
  CHECK(r.trace.totals.records_requested == 120u);
  CHECK(r.trace.records_dropped == 112u);
  CHECK(r.trace.sites[test_site].requests == 120u);
}

TEST_CASE("with tracing off the trace stays empty and children still run" * CDPKIT_GPU_CASE) {
  cdpkit::launch_runtime rt;
  rt.reset_trace();
  unsigned int* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, 32 * sizeof(unsigned int)));
  CDPKIT_CUDA_TRY(cudaMemset(d, 0, 32 * sizeof(unsigned int)));
  recurse_root_kernel<<<1, 32>>>(rt.root_context(),
                                 recurse_body{2, 4, cdpkit::stream_kind::fire_and_forget, d, d + 16});
  CDPKIT_CHECK_DEVICE_ERRORS(rt);
  unsigned int runs[3] = {};
  CDPKIT_CUDA_TRY(cudaMemcpy(runs, d, sizeof runs, cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaFree(d));
  CHECK(runs[1] == 4u);
  CHECK(runs[2] == 16u);
  const auto snap = rt.snapshot();
  CHECK(snap.totals.records_requested == 0u);
  CHECK(snap.sites[test_site].requests == 0u);
}

namespace {
__global__ void bad_site_kernel(cdpkit::launch_context ctx) {
  if (threadIdx.x == 0) {
    cdpkit::launch_child(ctx, 200, dim3(1), dim3(32), cdpkit::stream_kind::fire_and_forget,
                         [](const cdpkit::launch_context&) {});
  }
}
}  // namespace

namespace {
/// The value thread t adds to the counter every lane names (aggregation_kernel): both 16-bit
/// halves in use, and past 2^32 for some lanes.
__host__ __device__ constexpr unsigned long long uniform_value(unsigned int t) {
  return (t & 3u) * 0x80010001ull + (t % 97u == 0u ? (1ull << 33) + t : 0ull);
}

/// First every lane adds to one counter (counters[7]) and counts into another (counters[8]): the
/// lanes name the same counter. Then lanes take branches by their index: some count into one of
/// five counters, some add their index into one of two, the rest reserve a record id; a few
/// reserve another after reconverging. Each set of lanes that runs together aggregates its own
/// atomics.
__global__ void aggregation_kernel(cdpkit::launch_state* s, unsigned long long* counters, std::uint32_t* ids,
                                   std::uint32_t* more_ids) {
  const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
  cdpkit::detail::add_aggregated(&counters[7], uniform_value(t));
  cdpkit::detail::count_aggregated(&counters[8]);
  if (t % 3 == 0) {
    cdpkit::detail::count_aggregated(&counters[t % 5]);
  } else if (t % 7 == 1) {
    cdpkit::detail::add_aggregated(&counters[5 + t % 2], t);
  } else {
    ids[t] = cdpkit::detail::reserve_record(s);
  }
  if (t % 11 == 0) more_ids[t] = cdpkit::detail::reserve_record(s);
}

/// Every thread asks for a record id.
__global__ void reserve_all_kernel(cdpkit::launch_state* s, std::uint32_t* ids) {
  ids[blockIdx.x * blockDim.x + threadIdx.x] = cdpkit::detail::reserve_record(s);
}
/// A launch_state built by hand on the device (no runtime): totals and probe stripes zeroed,
/// `capacity` record ids. For tests of the device-side counters alone.
class hand_built_state {
 public:
  explicit hand_built_state(std::uint32_t capacity) {
    CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(state_), sizeof(cdpkit::launch_state)));
    CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(totals_), sizeof(cdpkit::trace_totals)));
    CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(probes_), cdpkit::probe_entries * sizeof(cdpkit::probe_counters)));
    cdpkit::launch_state h{};
    h.totals = totals_.get();
    h.probes = probes_.get();
    h.record_capacity = capacity;
    CDPKIT_CUDA_TRY(cudaMemcpy(state_.get(), &h, sizeof h, cudaMemcpyHostToDevice));
    CDPKIT_CUDA_TRY(cudaMemset(totals_.get(), 0, sizeof(cdpkit::trace_totals)));
    CDPKIT_CUDA_TRY(cudaMemset(probes_.get(), 0, cdpkit::probe_entries * sizeof(cdpkit::probe_counters)));
  }
  cdpkit::launch_state* get() const { return state_.get(); }
  /// The totals as the device left them (after the work on the legacy stream).
  cdpkit::trace_totals totals() const {
    cdpkit::trace_totals t{};
    CDPKIT_CUDA_TRY(cudaMemcpy(&t, totals_.get(), sizeof t, cudaMemcpyDeviceToHost));
    return t;
  }
  /// Every site's probe stripes as the device left them.
  std::vector<cdpkit::probe_counters> probes() const {
    std::vector<cdpkit::probe_counters> p(cdpkit::probe_entries);
    CDPKIT_CUDA_TRY(cudaMemcpy(p.data(), probes_.get(), p.size() * sizeof(cdpkit::probe_counters), cudaMemcpyDeviceToHost));
    return p;
  }

 private:
  cdpkit::detail::unique_device_ptr<cdpkit::launch_state> state_;
  cdpkit::detail::unique_device_ptr<cdpkit::trace_totals> totals_;
  cdpkit::detail::unique_device_ptr<cdpkit::probe_counters[]> probes_;
};
}  // namespace

TEST_CASE("trace counters and record ids taken once per warp are exact under divergent lanes" * CDPKIT_GPU_CASE) {
  constexpr unsigned int n = 8192, none = 0xffffffffu, slots = 9;
  hand_built_state state(2 * n);  // room for every id: each request takes one
  cdpkit::detail::unique_device_ptr<unsigned long long[]> d_counters;
  cdpkit::detail::unique_device_ptr<std::uint32_t[]> d_ids;
  CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(d_counters), slots * sizeof(unsigned long long)));
  CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(d_ids), 2 * n * sizeof(std::uint32_t)));
  CDPKIT_CUDA_TRY(cudaMemset(d_counters.get(), 0, slots * sizeof(unsigned long long)));
  CDPKIT_CUDA_TRY(cudaMemset(d_ids.get(), 0xff, 2 * n * sizeof(std::uint32_t)));
  aggregation_kernel<<<n / 128, 128>>>(state.get(), d_counters.get(), d_ids.get(), d_ids.get() + n);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  std::vector<unsigned long long> counters(slots);
  std::vector<std::uint32_t> ids(2 * n);
  CDPKIT_CUDA_TRY(cudaMemcpy(counters.data(), d_counters.get(), slots * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaMemcpy(ids.data(), d_ids.get(), 2 * n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  const cdpkit::trace_totals totals = state.totals();
  std::vector<unsigned long long> expected(slots, 0);
  std::vector<bool> seen;
  std::uint64_t reserved = 0;
  for (unsigned int t = 0; t < n; ++t) {
    expected[7] += uniform_value(t);
    ++expected[8];
    if (t % 3 == 0) ++expected[t % 5];
    else if (t % 7 == 1) expected[5 + t % 2] += t;
    else ++reserved;
    if (t % 11 == 0) ++reserved;
  }
  CHECK(counters == expected);
  CHECK(totals.records_requested == reserved);
  // every id below the count, none twice: the ids are 0 .. reserved - 1
  seen.assign(reserved, false);
  bool unique = true;
  std::uint64_t taken = 0;
  for (const std::uint32_t id : ids) {
    if (id == none) continue;
    ++taken;
    unique = unique && id < reserved && !seen[id];
    if (id < reserved) seen[id] = true;
  }
  CHECK(unique);
  CHECK(taken == reserved);
}

TEST_CASE("requests past a full record buffer take no id and leave every device counter as it was" * CDPKIT_GPU_CASE) {
  constexpr unsigned int n = 65536, capacity = 1000;
  hand_built_state state(capacity);
  cdpkit::detail::unique_device_ptr<std::uint32_t[]> d_ids;
  CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(d_ids), 2 * n * sizeof(std::uint32_t)));
  // two launches: the first fills the buffer (how many of its requests go past it before they
  // read it full is a race), the second finds it full from its first request
  reserve_all_kernel<<<n / 256, 256>>>(state.get(), d_ids.get());
  CDPKIT_CUDA_TRY(cudaGetLastError());
  const cdpkit::trace_totals after_first = state.totals();
  reserve_all_kernel<<<n / 256, 256>>>(state.get(), d_ids.get() + n);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  std::vector<std::uint32_t> ids(2 * n);
  CDPKIT_CUDA_TRY(cudaMemcpy(ids.data(), d_ids.get(), 2 * n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  const std::vector<cdpkit::probe_counters> probes = state.probes();
  const cdpkit::trace_totals totals = state.totals();
  CHECK(after_first.records_requested >= capacity);  // a warp stops taking ids only once it reads the buffer full
  CHECK(totals.records_requested == after_first.records_requested);  // the second launch took none
  // the ids below the capacity each once; every other request read record_capacity
  std::vector<std::uint64_t> seen(capacity + 1, 0);
  bool in_range = true;
  for (const std::uint32_t id : ids) {
    in_range = in_range && id <= capacity;
    if (id <= capacity) ++seen[id];
  }
  CHECK(in_range);
  CHECK(std::count(seen.begin(), seen.begin() + capacity, 1u) == static_cast<std::ptrdiff_t>(capacity));
  CHECK(seen[capacity] == 2u * n - capacity);
  CHECK(std::all_of(ids.begin() + n, ids.end(), [](std::uint32_t id) { return id == capacity; }));
  // reserving counts nothing in the stripes (the request's outcome does, in trace_request, and
  // the host folds the records requested from the outcomes: "a full record buffer counts the
  // dropped records")
  // (the stripes were zeroed with a memset: every byte is still zero)
  const auto* bytes = reinterpret_cast<const unsigned char*>(probes.data());
  CHECK(std::all_of(bytes, bytes + probes.size() * sizeof(cdpkit::probe_counters),
                    [](unsigned char b) { return b == 0; }));
}

TEST_CASE("a site id out of range raises a device error that the host throws" * CDPKIT_GPU_CASE) {
  cdpkit::launch_runtime rt;
  bad_site_kernel<<<1, 32>>>(rt.root_context());
  CHECK_THROWS_AS(CDPKIT_CHECK_DEVICE_ERRORS(rt), cdpkit::cuda_error);
  CHECK_NOTHROW(CDPKIT_CHECK_DEVICE_ERRORS(rt));  // the flag was cleared
}

namespace {
/// How probe_kernel counts its loop.
enum class probe_mode { per_iteration, at_entry, at_entry_partial, at_entry_whole_warp, at_entry_two_valued, single_step };

__device__ unsigned int probe_scratch;

/// Thread t loops lengths[t] times with a probe step per iteration (per_iteration), or counts
/// its lengths[t] steps at the loop's start (at_entry; at_entry_two_valued: with
/// steps_two_valued); single_step: threads with lengths[t] > 0
/// make one single-step probe. Not unrolled: the probe counts the lanes active where it stands,
/// so an unrolled loop would group the steps.
template <probe_mode Mode>
__global__ void probe_kernel(cdpkit::launch_context ctx, const std::uint32_t* d_len) {
  const std::uint32_t n = d_len[blockIdx.x * blockDim.x + threadIdx.x];
  if constexpr (Mode == probe_mode::single_step) {
    if (n > 0) cdpkit::probe_single_step(ctx, probe_site);
  } else if constexpr (Mode == probe_mode::at_entry_whole_warp) {
    // the probe's lanes given by the program (every lane of the warp), after a divergent branch
    if (n % 3 == 0) atomicAdd(&probe_scratch, n);
    cdpkit::warp_probe probe(ctx, probe_site, 0xffffffffu);
    probe.steps(n);
    probe.commit();
  } else {
    cdpkit::warp_probe probe(ctx, probe_site);
    if constexpr (Mode == probe_mode::at_entry) {
      probe.steps(n);
    } else if constexpr (Mode == probe_mode::at_entry_two_valued) {
      probe.steps_two_valued(n);
    } else if constexpr (Mode == probe_mode::at_entry_partial) {
      if (n != 0) probe.steps(n);  // lanes without steps stay out: a partial mask
    } else {
#pragma unroll 1
      for (std::uint32_t k = 0; k < n; ++k) probe.step();
    }
    probe.commit();
  }
}

/// probe_kernel's lengths on the device.
cdpkit::detail::unique_device_ptr<std::uint32_t[]> device_lengths(const std::vector<std::uint32_t>& lengths) {
  cdpkit::detail::unique_device_ptr<std::uint32_t[]> d;
  CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(d), lengths.size() * sizeof(std::uint32_t)));
  CDPKIT_CUDA_TRY(cudaMemcpy(d.get(), lengths.data(), lengths.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  return d;
}

cdpkit::site_counters run_probe(const std::vector<std::uint32_t>& lengths,
                                probe_mode mode = probe_mode::per_iteration) {
  cdpkit::launch_runtime rt;
  cdpkit::profiling::trace_session session(rt);
  const auto owned = device_lengths(lengths);
  const std::uint32_t* d = owned.get();
  const auto blocks = static_cast<unsigned int>(lengths.size() / 128);
  switch (mode) {
    case probe_mode::per_iteration: probe_kernel<probe_mode::per_iteration><<<blocks, 128>>>(rt.root_context(), d); break;
    case probe_mode::at_entry: probe_kernel<probe_mode::at_entry><<<blocks, 128>>>(rt.root_context(), d); break;
    case probe_mode::at_entry_partial:
      probe_kernel<probe_mode::at_entry_partial><<<blocks, 128>>>(rt.root_context(), d);
      break;
    case probe_mode::at_entry_whole_warp:
      probe_kernel<probe_mode::at_entry_whole_warp><<<blocks, 128>>>(rt.root_context(), d);
      break;
    case probe_mode::at_entry_two_valued:
      probe_kernel<probe_mode::at_entry_two_valued><<<blocks, 128>>>(rt.root_context(), d);
      break;
    case probe_mode::single_step: probe_kernel<probe_mode::single_step><<<blocks, 128>>>(rt.root_context(), d); break;
  }
  CDPKIT_CHECK_DEVICE_ERRORS(rt);
  return session.collect().sites[probe_site];
}

/// The probed warps, steps, active lanes and lanes histogram of two counters are the same.
void check_same_step_counts(const cdpkit::site_counters& a, const cdpkit::site_counters& b) {
  CHECK(a.probe_warps == b.probe_warps);
  CHECK(a.probe_steps == b.probe_steps);
  CHECK(a.probe_active_lanes == b.probe_active_lanes);
  for (int k = 1; k < cdpkit::trace_limits::lane_buckets; ++k) {
    CAPTURE(k);
    CHECK(a.lanes_hist[k] == b.lanes_hist[k]);
  }
}

/// The probe counters of two runs are the same.
void check_same_probe_counts(const cdpkit::site_counters& a, const cdpkit::site_counters& b) {
  check_same_step_counts(a, b);
  for (int k = 0; k < cdpkit::trace_limits::efficiency_buckets; ++k) {
    CAPTURE(k);
    CHECK(a.efficiency_hist[k] == b.efficiency_hist[k]);
  }
  CHECK(a.efficiency_sum == doctest::Approx(b.efficiency_sum));
}
}  // namespace

TEST_CASE("a loop counted at its start (warp_probe::steps) has the counts of one probe step per "
          "iteration" * CDPKIT_GPU_CASE) {
  std::vector<std::uint32_t> lengths(7168);
  std::uint64_t x = 12345;
  for (std::size_t t = 0; t < lengths.size(); ++t) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const auto r = static_cast<std::uint32_t>(x >> 33);
    const auto warp = static_cast<std::uint32_t>(t / 32), lane = static_cast<std::uint32_t>(t % 32);
    // zeros, ties, a staircase and long tails; then the shapes steps() counts without ranking the
    // lanes: one value per warp (0 included), and two (a strided loop's n + 1 and n; 0 and n);
    // last, large counts whose lanes differ in many bits (from bit 0 to bit 17)
    lengths[t] = t < 1024   ? r % 4
                 : t < 2048 ? lane
                 : t < 4096 ? r % 300
                 : t < 5120 ? warp % 7 * 13
                 : t < 6144 ? (warp % 2 == 0 ? warp % 5 + (lane < warp % 32 ? 1u : 0u)
                                             : (lane % 3 == 0 ? warp % 9 : 0u))
                            : (lane % 4 == 0 ? 65536u : 0u) + r % 70000;
  }
  const auto per_iteration = run_probe(lengths, probe_mode::per_iteration);
  const auto at_entry = run_probe(lengths, probe_mode::at_entry);
  CHECK(per_iteration.probe_steps > 0);
  check_same_probe_counts(per_iteration, at_entry);
  // lanes with no steps not calling it (a partial mask) count the same
  check_same_probe_counts(per_iteration, run_probe(lengths, probe_mode::at_entry_partial));
  // a probe built for the whole warp after divergent code (lanes given, not read) counts the same
  check_same_probe_counts(per_iteration, run_probe(lengths, probe_mode::at_entry_whole_warp));
}

TEST_CASE("a loop counted at its start counts trip counts up to 2^32 - 1 exactly, the warp's sum past 2^32" *
          CDPKIT_GPU_CASE) {
  // counts whose lanes differ in every bit, near 2^32 and 2^31, at 16-bit boundaries, ties and
  // zeros (the lanes with 0 stay out of at_entry_partial's probe: a partial mask); per warp, the
  // expected counts from the lanes sorted on the host (a loop per step would take hours)
  const std::uint32_t pool[] = {0xffffffffu, 0xfffffffeu, 0x80000000u, 0x80000001u, 0x7fffffffu,
                                0xffffu,     0x10000u,    0x1ffffu,    0u,          1u};
  std::vector<std::uint32_t> lengths(1024);
  std::uint64_t x = 99;
  for (auto& n : lengths) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    n = (x >> 60) < 10 ? pool[x >> 60] : static_cast<std::uint32_t>(x >> 20);
  }
  cdpkit::site_counters expected{};
  for (std::size_t w = 0; w < lengths.size() / 32; ++w) {
    std::vector<std::uint64_t> lanes(lengths.begin() + 32 * w, lengths.begin() + 32 * (w + 1));
    std::sort(lanes.rbegin(), lanes.rend());
    lanes.push_back(0);
    for (std::size_t k = 0; k < 32; ++k) expected.lanes_hist[k + 1] += lanes[k] - lanes[k + 1];
    expected.probe_steps += lanes[0];
    for (std::size_t k = 0; k < 32; ++k) expected.probe_active_lanes += lanes[k];
    expected.probe_warps += lanes[0] > 0 ? 1u : 0u;
  }
  CHECK(expected.probe_active_lanes > (1ull << 36));  // warps whose sums pass 2^32
  check_same_step_counts(run_probe(lengths, probe_mode::at_entry), expected);
  check_same_step_counts(run_probe(lengths, probe_mode::at_entry_partial), expected);
}

TEST_CASE("a loop of at most two trip counts per warp (warp_probe::steps_two_valued) has the counts of "
          "one probe step per iteration" * CDPKIT_GPU_CASE) {
  // strided loops over consecutive positions (stride 128 and 32), one value per warp, 0 and n
  std::vector<std::uint32_t> lengths(4096);
  for (std::size_t t = 0; t < lengths.size(); ++t) {
    const auto warp = static_cast<std::uint32_t>(t / 32), lane = static_cast<std::uint32_t>(t % 32);
    lengths[t] = t < 1024   ? static_cast<std::uint32_t>(cdpkit::strided_trip_count(t % 128, 1000 + warp, 128))
                 : t < 2048 ? static_cast<std::uint32_t>(cdpkit::strided_trip_count(lane, warp * 7, 32))
                 : t < 3072 ? warp % 11
                            : (lane < warp % 32 ? warp % 5 : 0u);
  }
  const auto per_iteration = run_probe(lengths, probe_mode::per_iteration);
  const auto two_valued = run_probe(lengths, probe_mode::at_entry_two_valued);
  CHECK(per_iteration.probe_steps > 0);
  check_same_probe_counts(per_iteration, two_valued);
}

TEST_CASE("steps_two_valued over three trip counts in a warp counts nothing and raises a device error "
          "that the host throws" * CDPKIT_GPU_CASE) {
  std::vector<std::uint32_t> lengths(128);
  for (std::size_t t = 0; t < lengths.size(); ++t) lengths[t] = static_cast<std::uint32_t>(t % 3);  // 0, 1, 2
  cdpkit::launch_runtime rt;
  cdpkit::profiling::trace_session session(rt);
  const auto d = device_lengths(lengths);
  probe_kernel<probe_mode::at_entry_two_valued><<<1, 128>>>(rt.root_context(), d.get());
  CDPKIT_CUDA_TRY(cudaGetLastError());
  try {
    CDPKIT_CHECK_DEVICE_ERRORS(rt);
    FAIL("no device error was raised");
  } catch (const cdpkit::cuda_error& e) {
    CHECK(std::string(e.what()).find("probe_values") != std::string::npos);
  }
  CHECK_NOTHROW(CDPKIT_CHECK_DEVICE_ERRORS(rt));  // the flag was cleared
  const auto c = session.collect().sites[probe_site];
  CHECK(c.probe_warps == 0u);
  CHECK(c.probe_steps == 0u);
}

TEST_CASE("single-step probes count each warp once with its active lanes" * CDPKIT_GPU_CASE) {
  // 0 or 1 step per thread: one step per iteration and a single-step probe must agree
  std::vector<std::uint32_t> lengths(8192);
  std::uint64_t x = 777;
  for (std::size_t t = 0; t < lengths.size(); ++t) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    lengths[t] = t < 4096 ? 1u : static_cast<std::uint32_t>((x >> 40) % 3 != 0);
  }
  const auto per_iteration = run_probe(lengths, probe_mode::per_iteration);
  const auto single = run_probe(lengths, probe_mode::single_step);
  CHECK(single.lanes_hist[32] >= 128u);  // the first 4096 threads: 128 full warps
  check_same_probe_counts(per_iteration, single);
}

TEST_CASE("the host folds striped single-step counts into the site's probe counters") {
  std::vector<unsigned long long> single(cdpkit::single_step_entries, 0);
  const auto at = [&](int site, int stripe, int lanes) -> unsigned long long& {
    return single[(site * cdpkit::single_step_stripes + stripe) * cdpkit::trace_limits::lane_buckets + lanes];
  };
  at(3, 0, 32) = 5;
  at(3, 15, 32) = 2;
  at(3, 7, 16) = 4;
  std::vector<cdpkit::site_counters> sites(cdpkit::trace_limits::max_sites);
  sites[3].probe_warps = 1;  // a committed probe of one step with 8 lanes
  sites[3].probe_steps = 1;
  sites[3].probe_active_lanes = 8;
  sites[3].lanes_hist[8] = 1;
  sites[3].efficiency_hist[8] = 1;
  sites[3].efficiency_sum = 0.25;
  cdpkit::detail::fold_single_steps(single.data(), sites.data());
  const auto& c = sites[3];
  CHECK(c.probe_warps == 12u);
  CHECK(c.probe_steps == 12u);
  CHECK(c.probe_active_lanes == 8u + 7u * 32u + 4u * 16u);
  CHECK(c.lanes_hist[32] == 7u);
  CHECK(c.lanes_hist[16] == 4u);
  CHECK(c.lanes_hist[8] == 1u);
  CHECK(c.efficiency_hist[31] == 7u);  // efficiency 1 is in the last bucket
  CHECK(c.efficiency_hist[16] == 4u);
  CHECK(c.efficiency_sum == doctest::Approx(0.25 + 7.0 + 2.0));
  CHECK(sites[2].probe_warps == 0u);
  CHECK(sites[4].probe_warps == 0u);
}

TEST_CASE("a strided loop's trip count is the number of its positions below the end") {
  const auto brute = [](unsigned long long first, unsigned long long end, unsigned long long stride) {
    unsigned long long n = 0;
    for (unsigned long long k = first; k < end; k += stride) ++n;
    return n;
  };
  for (const unsigned long long stride : {1ull, 32ull, 256ull})
    for (unsigned long long first = 0; first < 300; first += 7)
      for (unsigned long long end = 0; end < 2100; end += 13) {
        CAPTURE(stride);
        CAPTURE(first);
        CAPTURE(end);
        REQUIRE(cdpkit::strided_trip_count(first, end, stride) == brute(first, end, stride));
      }
  CHECK(cdpkit::strided_trip_count(5, 0xffffffffffffffffull, 1ull << 62) == 4u);
}

TEST_CASE("a blocked walk's trip count is the number of the thread's positions below the end") {
  // rounds of threads * items positions, thread t holding the `items` from t * items of each
  const auto brute = [](unsigned long long t, unsigned long long total, unsigned long long threads,
                        unsigned long long items) {
    unsigned long long n = 0;
    for (unsigned long long base = 0; base < total; base += threads * items)
      for (unsigned long long r = 0; r < items; ++r) n += base + t * items + r < total;
    return n;
  };
  for (const unsigned long long threads : {32ull, 256ull})
    for (const unsigned long long items : {1ull, 4ull, 8ull})
      for (unsigned long long t = 0; t < threads; t += 5)
        for (unsigned long long total = 0; total < 5000; total += 37) {
          CAPTURE(threads);
          CAPTURE(items);
          CAPTURE(t);
          CAPTURE(total);
          REQUIRE(cdpkit::blocked_trip_count(t, total, threads, items) == brute(t, total, threads, items));
        }
  // every position is some thread's: the counts add up to the total
  unsigned long long sum = 0;
  for (unsigned long long t = 0; t < 256; ++t) sum += cdpkit::blocked_trip_count(t, 123457, 256, 4);
  CHECK(sum == 123457u);
}

TEST_CASE("the host sums the warp probes' SM stripes into the site's probe counters") {
  std::vector<cdpkit::probe_counters> probes(cdpkit::probe_entries, cdpkit::probe_counters{});
  const auto at = [&](int site, int stripe) -> cdpkit::probe_counters& {
    return probes[site * cdpkit::probe_stripes + stripe];
  };
  at(5, 0).lanes_hist[32] = 10;  // stripe 0: two warps of 5 full steps
  at(5, 0).probe_steps = 10;
  at(5, 0).probe_active_lanes = 320;
  at(5, 0).probe_warps = 2;
  at(5, 0).efficiency_hist[31] = 2;
  at(5, 0).efficiency_sum = 2.0;
  at(5, 15).lanes_hist[8] = 3;  // the last stripe: a warp of 3 steps with 8 lanes
  at(5, 15).probe_steps = 3;
  at(5, 15).probe_active_lanes = 24;
  at(5, 15).probe_warps = 1;
  at(5, 15).efficiency_hist[8] = 1;
  at(5, 15).efficiency_sum = 0.25;
  at(6, 3).probe_warps = 7;  // another site's stripe stays there
  std::vector<cdpkit::site_counters> sites(cdpkit::trace_limits::max_sites);
  sites[5].probe_warps = 1;  // what the site held before (e.g. folded single steps)
  sites[5].probe_steps = 1;
  sites[5].lanes_hist[32] = 1;
  cdpkit::detail::fold_probes(probes.data(), sites.data());
  const auto& c = sites[5];
  CHECK(c.probe_warps == 4u);
  CHECK(c.probe_steps == 14u);
  CHECK(c.probe_active_lanes == 344u);
  CHECK(c.lanes_hist[32] == 11u);
  CHECK(c.lanes_hist[8] == 3u);
  CHECK(c.efficiency_hist[31] == 2u);
  CHECK(c.efficiency_hist[8] == 1u);
  CHECK(c.efficiency_sum == doctest::Approx(2.25));
  CHECK(sites[6].probe_warps == 7u);
  CHECK(sites[4].probe_warps == 0u);
}

TEST_CASE("the host sums the requests' SM stripes into the site's counters and folds the requests and the records requested from the outcomes") {
  std::vector<cdpkit::probe_counters> probes(cdpkit::probe_entries, cdpkit::probe_counters{});
  const auto at = [&](int site, int stripe) -> cdpkit::probe_counters& {
    return probes[site * cdpkit::probe_stripes + stripe];
  };
  constexpr int budget = static_cast<int>(cdpkit::launch_outcome::fallback_budget);
  constexpr int error = static_cast<int>(cdpkit::launch_outcome::fallback_error);
  at(5, 0).outcomes[budget] = 40;  // stripe 0: 40 requests refused over the budget, 900 items done inline
  at(5, 0).inline_items = 900;
  at(5, 15).outcomes[0] = 2;  // the last stripe: 2 launched
  at(7, 3).outcomes[error] = 5;  // another site: 5 failed launches
  std::vector<cdpkit::site_counters> sites(cdpkit::trace_limits::max_sites);
  sites[5].requests = 1;  // what the site held before
  sites[5].outcomes[0] = 1;
  cdpkit::trace_totals totals{};
  totals.records_requested = 13;  // the ids the device took
  cdpkit::detail::fold_probes(probes.data(), sites.data(), &totals, /*refusals_recorded=*/true);
  CHECK(sites[5].requests == 43u);
  CHECK(sites[5].outcomes[0] == 3u);
  CHECK(sites[5].outcomes[budget] == 40u);
  CHECK(sites[5].inline_items == 900u);
  CHECK(sites[7].requests == 5u);
  CHECK(sites[7].outcomes[error] == 5u);
  CHECK(sites[6].requests == 0u);
  CHECK(totals.records_requested == 40u + 2u + 5u);  // every traced request of the stripes, with an id or not
  // by default a refusal takes no record: the records requested are the grids launched or failed
  cdpkit::trace_totals launched_only{};
  launched_only.records_requested = 4;  // the ids the device took: a buffer of 4, full
  std::vector<cdpkit::site_counters> by_default(cdpkit::trace_limits::max_sites);
  cdpkit::detail::fold_probes(probes.data(), by_default.data(), &launched_only);
  CHECK(by_default[5].requests == 42u);  // the site still counts every request
  CHECK(launched_only.records_requested == 2u + 5u);
  std::vector<cdpkit::site_counters> again(cdpkit::trace_limits::max_sites);
  cdpkit::detail::fold_probes(probes.data(), again.data());  // without totals: the sites alone
  CHECK(again[5].requests == 42u);
  // a snapshot of a run in flight: ids taken by requests whose outcomes are not counted yet
  cdpkit::trace_totals in_flight{};
  in_flight.records_requested = 60;
  std::vector<cdpkit::site_counters> third(cdpkit::trace_limits::max_sites);
  cdpkit::detail::fold_probes(probes.data(), third.data(), &in_flight);
  CHECK(in_flight.records_requested == 60u);  // never fewer than the ids taken
}

TEST_CASE("probes measure efficiency 1 when every lane has the same trip count" * CDPKIT_GPU_CASE) {
  const std::vector<std::uint32_t> lengths(1024, 17);  // 32 warps
  const auto c = run_probe(lengths);
  CHECK(c.probe_warps == 32u);
  CHECK(c.probe_steps == 32u * 17u);
  CHECK(c.lanes_hist[32] == 32u * 17u);
  CHECK(c.efficiency_hist[31] == 32u);
  CHECK(c.efficiency_sum / c.probe_warps == doctest::Approx(1.0));
}

TEST_CASE("probes measure the exact efficiency of a staircase divergence pattern" *
          CDPKIT_GPU_CASE) {
  // Lane l loops l + 1 times: a warp makes 32 steps with 32, 31, ..., 1 active lanes, so its
  // efficiency is (1 + ... + 32) / (32 * 32) = 528 / 1024.
  std::vector<std::uint32_t> lengths(256);
  for (std::size_t t = 0; t < lengths.size(); ++t) lengths[t] = static_cast<std::uint32_t>(t % 32 + 1);
  const auto c = run_probe(lengths);
  const unsigned warps = 8;
  CHECK(c.probe_warps == warps);
  CHECK(c.probe_steps == warps * 32u);
  CHECK(c.probe_active_lanes == warps * 528u);
  for (int a = 1; a <= 32; ++a) {
    CAPTURE(a);
    CHECK(c.lanes_hist[a] == warps);
  }
  CHECK(c.efficiency_sum / c.probe_warps == doctest::Approx(528.0 / 1024.0));
  CHECK(c.efficiency_hist[16] == warps);  // 0.515625 is in [16/32, 17/32)
}

TEST_CASE("the device clock reads the trace's clock: a traced recursion's times lie between two "
          "readings" * CDPKIT_GPU_CASE) {
  cdpkit::launch_runtime rt;
  cudaStream_t stream = nullptr;
  CDPKIT_CUDA_TRY(cudaStreamCreate(&stream));
  const std::uint64_t before = rt.read_device_clock(stream);
  const auto r = run_recursion(rt, 2, 2, cdpkit::stream_kind::fire_and_forget);  // synchronized
  const std::uint64_t after = rt.read_device_clock(stream);
  CHECK(before > 0u);
  CHECK(after > before);
  CHECK(after - before < 10000000000ull);  // a small recursion: far less than 10 s
  REQUIRE(r.trace.records.size() == 2u + 4u);
  for (const auto& rec : r.trace.records) {
    CHECK(rec.t_ns >= before);
    CHECK(rec.t_ns <= after);
    if (cdpkit::has_execution_time(rec)) {
      CHECK(rec.start_ns >= before);
      CHECK(rec.end_ns <= after);
    }
  }
  CDPKIT_CUDA_TRY(cudaStreamDestroy(stream));
}

TEST_CASE("a runtime rejects an invalid configuration with a clear error") {
  cdpkit::launch_config config;
  config.max_depth = -1;
  CHECK_THROWS_AS(cdpkit::launch_runtime{config}, cdpkit::input_error);
  config.max_depth = 4;
  config.pending_budget = -5;
  CHECK_THROWS_WITH_AS(cdpkit::launch_runtime{config},
                       doctest::Contains("pending_budget must be >= 0"), cdpkit::input_error);
}

// ---- reliability: the watchdog, the slot check, stale errors, the budget's headroom ----------

namespace {

/// A child that spins until the host sets *flag (mapped host memory) to non-zero.
struct spin_until_released {
  volatile unsigned int* flag;
  __device__ void operator()(const cdpkit::launch_context&) const {
    if (threadIdx.x != 0) return;
    while (*flag == 0) __nanosleep(1000);
  }
};

__global__ void launch_one_spinner(cdpkit::launch_context ctx, spin_until_released body,
                                   unsigned int* d_launched) {
  if (threadIdx.x != 0) return;
  *d_launched = cdpkit::launch_child(ctx, test_site, dim3(1), dim3(32),
                                     cdpkit::stream_kind::fire_and_forget, body)
                    ? 1u
                    : 0u;
}

/// A child that launches the spinner as its own child, then finishes its blocks.
struct launch_spinner_below {
  spin_until_released spinner;
  unsigned int* d_launched;
  __device__ void operator()(const cdpkit::launch_context& self) const {
    if (threadIdx.x != 0) return;
    if (cdpkit::launch_child(self, test_site, dim3(1), dim3(32), cdpkit::stream_kind::fire_and_forget, spinner))
      atomicAdd(d_launched, 1u);
  }
};

__global__ void launch_spinner_two_below(cdpkit::launch_context ctx, launch_spinner_below body) {
  if (threadIdx.x != 0) return;
  if (cdpkit::launch_child(ctx, test_site, dim3(1), dim3(32), cdpkit::stream_kind::fire_and_forget, body))
    atomicAdd(body.d_launched, 1u);
}

/// Restores the process's wait deadline at scope exit.
struct deadline_guard {
  std::chrono::milliseconds saved = cdpkit::wait_deadline();
  ~deadline_guard() { cdpkit::set_wait_deadline(saved); }
};

/// What the spinner tests share: a release flag in mapped host memory (0 until release()), a
/// launch counter on the device (0) and a non-blocking stream; freed at scope end.
struct spinner_setup {
  unsigned int* flag = nullptr;
  unsigned int* d_flag = nullptr;
  unsigned int* d_launched = nullptr;
  cudaStream_t stream = nullptr;
  spinner_setup() {
    CDPKIT_CUDA_TRY(cudaHostAlloc(&flag, sizeof(unsigned int), cudaHostAllocMapped));
    *reinterpret_cast<volatile unsigned int*>(flag) = 0;
    CDPKIT_CUDA_TRY(cudaHostGetDevicePointer(&d_flag, flag, 0));
    CDPKIT_CUDA_TRY(cudaMalloc(&d_launched, sizeof(unsigned int)));
    CDPKIT_CUDA_TRY(cudaMemset(d_launched, 0, sizeof(unsigned int)));
    CDPKIT_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  ~spinner_setup() {
    release();  // a check that failed half-way leaves no child spinning on freed memory
    (void)cudaStreamSynchronize(stream);
    (void)cudaStreamDestroy(stream);
    (void)cudaFree(d_launched);
    (void)cudaFreeHost(flag);
  }
  spinner_setup(const spinner_setup&) = delete;
  spinner_setup& operator=(const spinner_setup&) = delete;
  void release() const { __atomic_store_n(flag, 1u, __ATOMIC_SEQ_CST); }
  unsigned int launched() const {
    unsigned int n = 0;
    CDPKIT_CUDA_TRY(cudaMemcpy(&n, d_launched, sizeof n, cudaMemcpyDeviceToHost));
    return n;
  }
};

}  // namespace

TEST_CASE("the watchdog turns a stuck child into an error that shows the launch state, and the "
          "work completes once the child is released" * CDPKIT_GPU_CASE) {
  cdpkit::launch_runtime rt;
  cdpkit::profiling::trace_session session(rt);
  const spinner_setup spin;
  const cudaStream_t stream = spin.stream;

  deadline_guard guard;
  cdpkit::set_wait_deadline(std::chrono::milliseconds(1500));
  launch_one_spinner<<<1, 32, 0, stream>>>(rt.root_context(), spin_until_released{spin.d_flag},
                                           spin.d_launched);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  cudaError_t code = cudaSuccess;
  try {
    CDPKIT_WAIT_STREAM(stream, rt, "waiting for the spinning child");
  } catch (const cdpkit::cuda_error& e) {
    message = e.what();
    code = e.code();
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CAPTURE(message);
  CHECK(code == cudaErrorTimeout);
  CHECK(waited >= 1.4);
  CHECK(waited < 10.0);  // the deadline plus the diagnosis, not the child's lifetime
  CHECK(cdpkit::device_unresponsive());
  CHECK(message.find("waiting for the spinning child") != std::string::npos);
  CHECK(message.find("did not finish within") != std::string::npos);
  CHECK(message.find("pending 1 of budget") != std::string::npos);
  CHECK(message.find("occupied completion slots 1 ") != std::string::npos);
  CHECK(message.find(": 1 block]") != std::string::npos);  // the spinning child's one block
  CHECK(message.find("children launched so far 1") != std::string::npos);  // from the mirror
  CHECK(message.find("site.32: requests 1, launched 1") != std::string::npos);

  // Release the child: the same wait now succeeds and the layer's books balance.
  spin.release();
  cdpkit::set_wait_deadline(std::chrono::milliseconds(30000));
  CHECK_NOTHROW(CDPKIT_WAIT_STREAM(stream, rt, "after the release"));
  CHECK_FALSE(cdpkit::device_unresponsive());
  CHECK_NOTHROW(CDPKIT_CHECK_DEVICE_ERRORS(rt));
  CHECK(spin.launched() == 1u);
}

namespace {

/// A kernel that spins until *flag (mapped host memory) is non-zero, then writes `mark` to *done.
__global__ void spin_then_mark(volatile unsigned int* flag, unsigned int* done, unsigned int mark) {
  if (threadIdx.x != 0) return;
  while (*flag == 0) __nanosleep(1000);
  *done = mark;
}

}  // namespace

TEST_CASE("wait_for_device waits for work on a non-blocking stream, turns a stuck one into a timeout, and "
          "answers again, many times over, once it is released" * CDPKIT_GPU_CASE) {
  const spinner_setup spin;
  deadline_guard guard;
  cdpkit::set_wait_deadline(std::chrono::milliseconds(1000));
  spin_then_mark<<<1, 32, 0, spin.stream>>>(spin.d_flag, spin.d_launched, 1u);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  // stuck: the device-wide wait times out (the stream is non-blocking: no legacy-stream event sees it)
  cudaError_t code = cudaSuccess;
  try {
    cdpkit::wait_for_device("waiting for the spinner", nullptr, __FILE__, __LINE__);
  } catch (const cdpkit::cuda_error& e) {
    code = e.code();
  }
  CHECK(code == cudaErrorTimeout);
  CHECK(cdpkit::device_unresponsive());
  // more work queued behind the stuck synchronization: a later wait must see it done too (not be
  // answered by the synchronization that started before it was queued)
  spin_then_mark<<<1, 32, 0, spin.stream>>>(spin.d_flag, spin.d_launched, 2u);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  // released: the next wait returns with both kernels done (the last write visible to a copy after it)
  spin.release();
  cdpkit::set_wait_deadline(std::chrono::milliseconds(30000));
  CHECK_NOTHROW(cdpkit::wait_for_device("after the release", nullptr, __FILE__, __LINE__));
  CHECK_FALSE(cdpkit::device_unresponsive());
  CHECK(spin.launched() == 2u);
  // one synchronizing thread serves every later wait, in order
  for (unsigned int k = 3; k < 203; ++k) {  // (each run marks its own number: a stale mark shows)
    spin_then_mark<<<1, 32, 0, spin.stream>>>(spin.d_flag, spin.d_launched, k);
    CDPKIT_CUDA_TRY(cudaGetLastError());
    cdpkit::wait_for_device("a short wait", nullptr, __FILE__, __LINE__);
    REQUIRE(spin.launched() == k);
  }
}

TEST_CASE("a child whose blocks are done keeps its budget until the grids it launched complete" * CDPKIT_GPU_CASE) {
  // CDP2 completes a grid only after its children, and the device runtime keeps a grid's state
  // until then: the layer counts the grid until then too (docs/design.md: the tree recursions
  // stalled the runtime while the layer counted 3-46 of 2048).
  cdpkit::launch_runtime rt;
  const spinner_setup spin;
  const cudaStream_t stream = spin.stream;

  deadline_guard guard;
  cdpkit::set_wait_deadline(std::chrono::milliseconds(1500));
  launch_spinner_two_below<<<1, 32, 0, stream>>>(
      rt.root_context(), launch_spinner_below{spin_until_released{spin.d_flag}, spin.d_launched});
  CDPKIT_CUDA_TRY(cudaGetLastError());
  std::string message;
  try {
    CDPKIT_WAIT_STREAM(stream, rt, "waiting for the spinning grandchild");
  } catch (const cdpkit::cuda_error& e) {
    message = e.what();
  }
  CAPTURE(message);
  // the middle grid's blocks are long done, but it is not complete: both are counted
  CHECK(message.find("pending 2 of budget") != std::string::npos);
  CHECK(message.find("occupied completion slots 2 ") != std::string::npos);

  spin.release();
  cdpkit::set_wait_deadline(std::chrono::milliseconds(30000));
  CHECK_NOTHROW(CDPKIT_WAIT_STREAM(stream, rt, "after the release"));
  CHECK_NOTHROW(CDPKIT_CHECK_DEVICE_ERRORS(rt));  // the books balance: both slots freed
  CHECK(spin.launched() == 2u);
}

namespace {
/// Simulates a leaked launch: occupies completion slot 3 and counts one child as pending.
__global__ void leak_a_slot(cdpkit::launch_context ctx) {
  if (threadIdx.x == 0) {
    ctx.state->slots[3] = 5;
    atomicAdd(&ctx.state->pending, 1);
  }
}
__global__ void leak_only_a_slot(cdpkit::launch_context ctx) {
  if (threadIdx.x == 0) ctx.state->slots[7] = 2;
}
}  // namespace

TEST_CASE("after a synchronization an occupied slot or a pending count is a device error, and "
          "the books are cleared for the next run" * CDPKIT_GPU_CASE) {
  cdpkit::launch_runtime rt;
  leak_a_slot<<<1, 32>>>(rt.root_context());
  CDPKIT_CUDA_TRY(cudaGetLastError());
  CHECK_THROWS_WITH_AS(CDPKIT_CHECK_DEVICE_ERRORS(rt),
                       doctest::Contains("1 children were still counted as pending and 1 "
                                         "completion slots were occupied (slot 3 waits for 5"),
                       cdpkit::cuda_error);
  CHECK_NOTHROW(CDPKIT_CHECK_DEVICE_ERRORS(rt));
  leak_only_a_slot<<<1, 32>>>(rt.root_context());  // a slot alone (pending balanced) is caught too
  CHECK_THROWS_WITH_AS(CDPKIT_CHECK_DEVICE_ERRORS(rt), doctest::Contains("slot 7 waits for 2"),
                       cdpkit::cuda_error);
  CHECK_NOTHROW(CDPKIT_CHECK_DEVICE_ERRORS(rt));
}

namespace {
__global__ void empty_child_kernel() {}

/// Leaves an error in the thread's device runtime state (a 0-block launch), then asks the layer
/// for a child that counts its runs.
struct count_runs {
  unsigned int* d_runs;
  __device__ void operator()(const cdpkit::launch_context&) const {
    if (threadIdx.x == 0) atomicAdd(d_runs, 1u);
  }
};
__global__ void stale_error_then_launch(cdpkit::launch_context ctx, unsigned int* d_runs,
                                        int* d_outcome) {
  if (threadIdx.x != 0) return;
  empty_child_kernel<<<0, 32>>>();  // cudaErrorInvalidConfiguration, left unread
  const cdpkit::launch_result r = cdpkit::launch_child(
      ctx, test_site, dim3(1), dim3(32), cdpkit::stream_kind::fire_and_forget, count_runs{d_runs});
  *d_outcome = static_cast<int>(r.outcome);
  if (!r) count_runs{d_runs}(ctx);  // the fallback does the work inline
}
}  // namespace

TEST_CASE("an older error of the launching thread does not make a successful launch look failed" *
          CDPKIT_GPU_CASE) {
  cdpkit::launch_runtime rt;
  cdpkit::profiling::trace_session session(rt);
  unsigned int* d_runs = nullptr;
  int* d_outcome = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d_runs, sizeof(unsigned int)));
  CDPKIT_CUDA_TRY(cudaMalloc(&d_outcome, sizeof(int)));
  CDPKIT_CUDA_TRY(cudaMemset(d_runs, 0, sizeof(unsigned int)));
  stale_error_then_launch<<<1, 32>>>(rt.root_context(), d_runs, d_outcome);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  CDPKIT_CHECK_DEVICE_ERRORS(rt);  // also: every slot free, nothing pending
  unsigned int runs = 0;
  int outcome = -1;
  CDPKIT_CUDA_TRY(cudaMemcpy(&runs, d_runs, sizeof runs, cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaMemcpy(&outcome, d_outcome, sizeof outcome, cudaMemcpyDeviceToHost));
  CHECK(outcome == static_cast<int>(cdpkit::launch_outcome::launched));
  CHECK(runs == 1u);  // ran exactly once: not launched *and* done inline
  const auto snap = session.collect();
  CHECK(snap.sites[test_site].outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_error)] ==
        0u);
  CDPKIT_CUDA_TRY(cudaFree(d_runs));
  CDPKIT_CUDA_TRY(cudaFree(d_outcome));
}

TEST_CASE("the pending budget keeps headroom below the device's pending-launch limit" *
          CDPKIT_GPU_CASE) {
  {
    cdpkit::launch_runtime rt;  // defaults: budget 2048, the device limit raised to fit
    CHECK(rt.pending_budget() == cdpkit::default_pending_budget);
    CHECK(rt.pending_launch_limit() >=
          static_cast<int>(rt.pending_budget() / cdpkit::safe_pending_fraction));
  }
  {
    cdpkit::launch_config config;
    config.pending_launch_limit = 1000;
    cdpkit::launch_runtime rt(config);
    CHECK(rt.pending_launch_limit() >= 1000);  // the driver may round the limit up
    CHECK(rt.pending_budget() == 500);
  }
  {
    cdpkit::launch_config config;
    config.pending_budget = 3000;
    cdpkit::launch_runtime rt(config);
    CHECK(rt.pending_budget() == 3000);
    CHECK(rt.pending_launch_limit() >= 6000);
    {
      cdpkit::launch_runtime inner;  // a second runtime does not lower the first one's limit
      CHECK(inner.pending_launch_limit() >= 6000);
    }
    std::size_t limit = 0;
    CDPKIT_CUDA_TRY(cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount));
    CHECK(limit >= 6000u);
  }
}

TEST_CASE("a budget without headroom below an explicit limit is refused unless asked for") {
  cdpkit::launch_config config;
  config.pending_launch_limit = 2048;
  config.pending_budget = 2048;
  CHECK_THROWS_WITH_AS(cdpkit::launch_runtime{config}, doctest::Contains("leaves no headroom"),
                       cdpkit::input_error);
}
