// The launch layer's trace: exact counts and depth histograms of constructed recursions on every
// stream kind, records linked to their parents and timed by their blocks, refused requests counted
// without records by default, a full record buffer's drops, tracing off, the device counters taken
// once per warp under divergent lanes, a site id out of range, and the device clock the trace reads.

#include <doctest/doctest.h>

#include "recursion.cuh"
#include "support/gpu.hpp"

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/trace_session.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

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
