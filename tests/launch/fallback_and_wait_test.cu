// The launch layer when a launch cannot or should not happen, and when the device does not
// answer: the depth cap, refused sites, the pending budget (whole warps asking at once included)
// and launches the device refuses all fall back with no work lost; an older error of the launching
// thread does not make a good launch look failed; the budget keeps headroom below the device's
// pending-launch limit; after a synchronization the books must balance; the watchdog turns a stuck
// wait into an error that shows the launch state.

#include <doctest/doctest.h>

#include "recursion.cuh"
#include "support/gpu.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/wait.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

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
  CHECK(message.find("site." + std::to_string(test_site) + ": requests 1, launched 1") != std::string::npos);

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
