// The profile format end to end: a trace -> the profiler's profile writer -> a JSON file -> the
// reports' model, checked field by field against the trace. Once with a trace built on the host
// (every field given a value of its own), once with a real device trace (skipped without a GPU).

#include <doctest/doctest.h>

#include "support/gpu.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch.hpp>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/profile.hpp>

#include <cuda_runtime_api.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace rep = cdpkit::report;

/// Write `trace` through profile_document to a file, read it back with the reports' reader.
rep::profile through_a_file(const cdpkit::trace_snapshot& trace, const std::string& file, std::size_t max_records) {
  cdpkit::profiling::profile_document doc("roundtrip_test", {{"name", "H200 \xff"}, {"cc", "9.0"}, {"sms", 132},
                                                             {"max_threads_per_sm", 2048}, {"memory_bytes", 1ull << 37},
                                                             {"driver", 13000}, {"runtime", 13010}});
  cdpkit::profiling::run_info base;
  base.algorithm = "family";
  base.variant = "plain";
  base.input = "input:7";
  base.baseline = "plain";
  base.ms = 4.0;
  base.work = 1000;
  base.work_unit = "items";
  base.checked = base.verified = true;
  doc.add_run(base);
  cdpkit::profiling::run_info run = base;
  run.variant = "traced";
  run.params = {{"threshold", 31}};
  run.ms = 2.0;
  run.checked = true;
  run.verified = false;
  run.mismatches = 3;
  doc.add_run(run, trace, max_records);
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_roundtrip_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / file).string();
  doc.write(path);
  rep::profile p = rep::load_profile(path);
  std::filesystem::remove_all(dir);
  REQUIRE(p.runs.size() == 2u);
  CHECK(p.program == "roundtrip_test");
  CHECK(p.device.name == "H200 \xef\xbf\xbd");
  CHECK(p.device.sms == 132u);
  CHECK(p.device.memory_bytes == 1ull << 37);
  CHECK(p.device.runtime == 13010);
  CHECK(p.build.contains("cuda_architectures"));
  const rep::run_profile& r = p.runs[1];
  CHECK(r.id == 1u);
  CHECK(r.algorithm == "family");
  CHECK(r.variant == "traced");
  CHECK(r.input == "input:7");
  CHECK(r.baseline == "plain");
  CHECK(r.params == nlohmann::json{{"threshold", 31}});
  CHECK(r.ms == 2.0);
  CHECK(r.work == 1000u);
  CHECK(r.work_unit == "items");
  CHECK(r.checked);
  CHECK_FALSE(r.verified);
  CHECK(r.mismatches == 3u);
  CHECK_FALSE(p.runs[0].trace.has_value());
  REQUIRE(rep::baseline_of(p, 1).has_value());
  CHECK(*rep::baseline_of(p, 1) == 0u);
  return p;
}

/// Every field of the reports' trace against the snapshot it was written from.
void check_trace(const rep::trace_profile& t, const cdpkit::trace_snapshot& snap, std::size_t max_records) {
  CHECK(t.pending_limit == static_cast<std::uint64_t>(snap.pending_launch_limit));
  CHECK(t.pending_budget == static_cast<std::uint64_t>(snap.pending_budget));
  CHECK(t.pending_high_water == snap.totals.pending_high_water);
  CHECK(t.max_depth_limit == static_cast<std::uint64_t>(snap.max_depth));
  CHECK(t.tiny_grid_work == cdpkit::tiny_grid_work);
  CHECK(t.records_requested == snap.totals.records_requested);
  CHECK(t.records_stored == snap.records.size());
  CHECK(t.records_dropped == snap.records_dropped);
  CHECK(t.refusals_recorded == snap.refusals_recorded);
  std::size_t active = 0;
  for (std::size_t id = 0; id < snap.sites.size(); ++id) {
    const cdpkit::site_counters& c = snap.sites[id];
    const rep::site_profile* s = t.site(static_cast<int>(id));
    CAPTURE(id);
    if (c.requests == 0 && c.probe_steps == 0) {
      CHECK(s == nullptr);
      continue;
    }
    ++active;
    REQUIRE(s != nullptr);
    CHECK(s->name == cdpkit::sites::site_name(static_cast<std::uint16_t>(id)));
    CHECK(s->requests == c.requests);
    CHECK(s->launched == c.outcomes[0]);
    CHECK(s->fallback_budget == c.outcomes[1]);
    CHECK(s->fallback_depth == c.outcomes[2]);
    CHECK(s->fallback_error == c.outcomes[3]);
    std::size_t errors = 0;
    for (int k = 0; k < cdpkit::trace_limits::error_slots; ++k) {
      if (c.error_code[k] == 0) continue;
      REQUIRE(errors < s->failed_by_error.size());
      CHECK(s->failed_by_error[errors].code == c.error_code[k]);
      CHECK(s->failed_by_error[errors].name == cudaGetErrorName(static_cast<cudaError_t>(c.error_code[k])));
      CHECK(s->failed_by_error[errors].count == c.error_count[k]);
      ++errors;
    }
    CHECK(s->failed_by_error.size() == errors);
    CHECK(s->failed_other_codes == c.error_overflow);
    CHECK(s->inline_items == c.inline_items);
    CHECK(s->child_threads == c.child_threads);
    CHECK(s->child_blocks == c.child_blocks);
    CHECK(s->work_items == c.work_items);
    CHECK(s->tiny_launches == c.tiny_launches);
    for (int k = 0; k < cdpkit::stream_kind_count; ++k) CHECK(s->stream_launches[k] == c.stream_launches[k]);
    for (int b = 0; b < cdpkit::trace_limits::log2_buckets; ++b) {
      CHECK(s->threads_log2[b] == c.threads_log2[b]);
      CHECK(s->blocks_log2[b] == c.blocks_log2[b]);
      CHECK(s->work_log2[b] == c.work_log2[b]);
    }
    REQUIRE(s->depth_hist.size() == static_cast<std::size_t>(cdpkit::trace_limits::depth_buckets));
    for (int d = 0; d < cdpkit::trace_limits::depth_buckets; ++d) CHECK(s->depth_hist[d] == c.depth_hist[d]);
    CHECK(s->max_depth == c.max_depth);
    CHECK(s->probe.steps == c.probe_steps);
    CHECK(s->probe.active_lanes == c.probe_active_lanes);
    CHECK(s->probe.warps == c.probe_warps);
    for (int k = 1; k < cdpkit::trace_limits::lane_buckets; ++k) CHECK(s->probe.lanes_hist[k - 1] == c.lanes_hist[k]);
    for (int k = 0; k < cdpkit::trace_limits::efficiency_buckets; ++k)
      CHECK(s->probe.efficiency_hist[k] == c.efficiency_hist[k]);
    CHECK(s->probe.efficiency_sum == doctest::Approx(c.efficiency_sum));
    CHECK(s->probe.step_efficiency.has_value() == (c.probe_steps > 0));
    CHECK(s->probe.mean_warp_efficiency.has_value() == (c.probe_warps > 0));
  }
  CHECK(t.sites.size() == active);
  const std::size_t kept = std::min(max_records, snap.records.size());
  REQUIRE(t.records.size() == kept);
  std::size_t launched = 0, timed = 0;
  for (std::size_t k = 0; k < kept; ++k) {
    const cdpkit::launch_record &a = t.records[k], &b = snap.records[k];
    CAPTURE(k);
    CHECK(a.t_ns == b.t_ns);
    CHECK(a.id == b.id);
    CHECK(a.parent == b.parent);
    CHECK(a.blocks == b.blocks);
    CHECK(a.child_block_threads == b.child_block_threads);
    CHECK(a.work == b.work);
    CHECK(a.site == b.site);
    CHECK(a.depth == b.depth);
    CHECK(a.stream == b.stream);
    CHECK(a.outcome == b.outcome);
    CHECK(a.error == b.error);
    REQUIRE(cdpkit::has_execution_time(a) == cdpkit::has_execution_time(b));
    if (b.outcome == static_cast<std::uint8_t>(cdpkit::launch_outcome::launched)) ++launched;
    if (cdpkit::has_execution_time(b)) ++timed;
    if (cdpkit::has_execution_time(b)) {
      CHECK(a.start_ns == b.start_ns);
      CHECK(a.end_ns == b.end_ns);
    }
  }
  CHECK(timed == launched);  // every launched child's window, and only theirs
  // the summary the reports use is the profiler's
  const cdpkit::profiling::trace_summary expected = cdpkit::profiling::summarize(snap);
  CHECK(t.summary.launch_requests == expected.launch_requests);
  CHECK(t.summary.child_launches == expected.child_launches);
  CHECK(t.summary.fallbacks == expected.fallbacks);
  CHECK(t.summary.failed_launches == expected.failed_launches);
  CHECK(t.summary.tiny_launches == expected.tiny_launches);
  CHECK(t.summary.tiny_grid_share == doctest::Approx(expected.tiny_grid_share));
  CHECK(t.summary.max_depth == expected.max_depth);
  CHECK(t.summary.pending_high_water == expected.pending_high_water);
  CHECK(t.summary.warp_efficiency == doctest::Approx(expected.warp_efficiency));
  CHECK(t.summary.mean_warp_efficiency == doctest::Approx(expected.mean_warp_efficiency));
}

/// The root grid's thread 0 requests one child per size in `works` from the test site.
__global__ void roundtrip_root_kernel(cdpkit::launch_context ctx, const std::uint32_t* works, int count,
                                      unsigned int* d_out) {
  if (threadIdx.x != 0) return;
  for (int k = 0; k < count; ++k)
    cdpkit::launch_items_or_inline(ctx, cdpkit::sites::first_user_site, works[k], 64,
                                   k % 2 ? cdpkit::stream_kind::named_per_thread : cdpkit::stream_kind::fire_and_forget,
                                   [=] __device__(const cdpkit::launch_context&, std::uint64_t) { atomicAdd(d_out, 1u); });
}

}  // namespace

TEST_CASE("a trace built on the host goes through the profile writer and the reports' reader intact") {
  cdpkit::trace_snapshot s;
  s.sites.resize(cdpkit::trace_limits::max_sites);
  auto& c = s.sites[cdpkit::sites::l2c_thresholded];
  c.requests = 17;
  c.outcomes[0] = 10;
  c.outcomes[1] = 3;
  c.outcomes[2] = 2;
  c.outcomes[3] = 2;
  c.child_threads = 10 * 256 + 5;
  c.child_blocks = 11;
  c.work_items = 999;
  c.tiny_launches = 4;
  c.inline_items = 77;
  c.stream_launches[0] = 5;
  c.stream_launches[1] = 2;
  c.stream_launches[2] = 2;
  c.stream_launches[3] = 1;
  for (int b = 0; b < cdpkit::trace_limits::log2_buckets; ++b) {
    c.threads_log2[b] = static_cast<unsigned>(b);
    c.blocks_log2[b] = static_cast<unsigned>(2 * b);
    c.work_log2[b] = static_cast<unsigned>(3 * b);
  }
  for (int d = 0; d < cdpkit::trace_limits::depth_buckets; ++d) c.depth_hist[d] = static_cast<unsigned>(d % 5);
  c.max_depth = 62;
  c.error_code[0] = 69;
  c.error_count[0] = 1;
  c.error_code[3] = 2;
  c.error_count[3] = 1;
  c.error_overflow = 5;
  auto& p = s.sites[cdpkit::sites::l2c_child_items];
  p.probe_steps = 200;
  p.probe_active_lanes = 1600;
  p.probe_warps = 8;
  p.efficiency_sum = 2.0;
  for (int k = 1; k < cdpkit::trace_limits::lane_buckets; ++k) p.lanes_hist[k] = static_cast<unsigned long long>(k);
  for (int k = 0; k < cdpkit::trace_limits::efficiency_buckets; ++k) p.efficiency_hist[k] = static_cast<unsigned>(k + 1);
  s.totals.records_requested = 4;
  s.totals.pending_high_water = 1999;
  s.records_dropped = 1;
  s.refusals_recorded = true;  // record 1 was refused over the budget
  s.pending_launch_limit = 4096;
  s.pending_budget = 2048;
  s.max_depth = 24;
  s.records.push_back({123456789012345ull, 0, cdpkit::no_record, 4, 1024, 4096, 2, 1, 1, 0, 0,
                       123456789012400ull, 123456789019400ull});
  s.records.push_back({123456789012999ull, 1, 0, 1, 32, 7, 2, 2, 3, 1, 0, cdpkit::no_time_start, cdpkit::no_time_end});
  s.records.push_back({123456789013999ull, 2, 1, 0, 256, 300, 2, 3, 0, 3, 69, cdpkit::no_time_start, cdpkit::no_time_end});
  SUBCASE("every record") {
    const rep::profile prof = through_a_file(s, "host.json", 16384);
    check_trace(*prof.runs[1].trace, s, 16384);
    const auto& roles = prof.runs[1].trace->sites;
    CHECK(prof.runs[1].trace->site(cdpkit::sites::l2c_child_items)->role == rep::site_role::child_probe);
    CHECK(prof.runs[1].trace->site(cdpkit::sites::l2c_thresholded)->role == rep::site_role::launch);
    CHECK(roles.size() == 2u);
  }
  SUBCASE("the first two records") { check_trace(*through_a_file(s, "two.json", 2).runs[1].trace, s, 2); }
  SUBCASE("a snapshot holding a refused record is written as recording refusals, whatever its flag") {
    cdpkit::trace_snapshot unflagged = s;
    unflagged.refusals_recorded = false;
    CHECK(through_a_file(unflagged, "unflagged.json", 16384).runs[1].trace->refusals_recorded);
    unflagged.records.erase(unflagged.records.begin() + 1);  // launched and failed records only
    unflagged.records[1].id = 1;
    unflagged.records[1].parent = 0;
    CHECK_FALSE(through_a_file(unflagged, "launched.json", 16384).runs[1].trace->refusals_recorded);
  }
}

TEST_CASE("a real device trace goes through the profile writer and the reports' reader intact" * CDPKIT_GPU_CASE) {
  cdpkit::launch_runtime rt;
  const std::vector<std::uint32_t> works = {1, 31, 32, 100, 1000, 5000, 7, 64};
  std::uint32_t* d_works = nullptr;
  unsigned int* d_out = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d_works, works.size() * sizeof(std::uint32_t)));
  CDPKIT_CUDA_TRY(cudaMalloc(&d_out, sizeof(unsigned int)));
  CDPKIT_CUDA_TRY(cudaMemcpy(d_works, works.data(), works.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  CDPKIT_CUDA_TRY(cudaMemset(d_out, 0, sizeof(unsigned int)));
  cdpkit::trace_snapshot snap;
  {
    cdpkit::profiling::trace_session session(rt);
    roundtrip_root_kernel<<<1, 32>>>(rt.root_context(), d_works, static_cast<int>(works.size()), d_out);
    CDPKIT_CUDA_TRY(cudaGetLastError());
    CDPKIT_CHECK_DEVICE_ERRORS(rt);
    snap = session.collect();
  }
  unsigned int done = 0;
  CDPKIT_CUDA_TRY(cudaMemcpy(&done, d_out, sizeof done, cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaFree(d_works));
  CDPKIT_CUDA_TRY(cudaFree(d_out));
  std::uint64_t total = 0;
  for (auto w : works) total += w;
  CHECK(done == total);  // every item once, launched or inline
  REQUIRE(snap.records.size() == works.size());
  const rep::profile prof = through_a_file(snap, "device.json", 16384);
  check_trace(*prof.runs[1].trace, snap, 16384);
  const rep::site_profile* site = prof.runs[1].trace->site(cdpkit::sites::first_user_site);
  REQUIRE(site != nullptr);
  CHECK(site->requests == works.size());
  CHECK(prof.runs[1].trace->records[3].work == 100u);
  CHECK(prof.runs[1].trace->records[3].child_block_threads == 64u);
}
