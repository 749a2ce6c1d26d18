// The Bézier tessellation's host engine (cdpkit/tessellation.hpp): options, device_curves, and
// tessellation_engine, which runs the curves' point counts, their scan (CUB, 64-bit, in place, in
// storage the engine keeps), then every curve's points as a loop-to-child segment read from the
// scan clamped to the points' buffer; the total is read back, and only a run whose points outgrew
// the buffer makes them again after growing it. The device code is cdpkit/bezier/agents/ and
// cdpkit/bezier/kernels.cuh.

#include <cdpkit/bezier/kernels.cuh>
#include <cdpkit/detail/device_buffer.hpp>
#include <cdpkit/detail/enum_names.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/loop_to_child.cuh>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/tessellation.hpp>
#include <cdpkit/wait.hpp>

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <string>

namespace cdpkit {

namespace {

constexpr unsigned int count_threads = 256;

using bezier::clamped_curves;
using bezier::point_op;

unsigned int blocks_for(std::uint64_t n, unsigned int threads) {
  return static_cast<unsigned int>((n + threads - 1) / threads);
}

}  // namespace

// ---- options -------------------------------------------------------------------------------------

loop_policy tessellation_options::policy() const {
  loop_policy p = loop_policy::of(variant, threshold, stream);
  p.child_block_threads = child_block_threads;
  return p;
}

// ---- device_curves -------------------------------------------------------------------------------

device_curves::device_curves(const curve_set& set) {
  CDPKIT_NVTX_SCOPE("bezier::upload");
  check_curves(set);
  if (set.curves.size() > max_bezier_curves)
    throw input_error("device_curves: " + std::to_string(set.curves.size()) + " curves; at most 2^32 - 1");
  size_ = static_cast<std::uint32_t>(set.curves.size());
  require_device_memory(std::uint64_t{size_} * sizeof(bezier_curve) + 64,
                        "device_curves (" + std::to_string(size_) + " curves)");
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_curves_), sizeof(bezier_curve) * std::max<std::uint32_t>(size_, 1)));
  if (size_ > 0)
    CDPKIT_CUDA_TRY(cudaMemcpy(d_curves_.get(), set.curves.data(), sizeof(bezier_curve) * size_, cudaMemcpyHostToDevice));
}

// ---- tessellation_engine -------------------------------------------------------------------------

tessellation_engine::tessellation_engine(const device_curves& curves) : curves_(&curves) {
  const std::uint64_t entries = std::uint64_t{curves.size()} + 1;
  require_device_memory(entries * 8 + 64, "tessellation_engine (" + std::to_string(curves.size()) + " curves)");
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_counts_), sizeof(unsigned long long) * entries));
  CDPKIT_CUDA_TRY(cudaMallocHost(detail::out_ptr(h_total_), sizeof(unsigned long long)));
  // the scan's temporary storage, kept: a run makes no allocation of its own but the points'
  std::size_t temp_bytes = 0;
  CDPKIT_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, d_counts_.get(), d_counts_.get(),
                                                static_cast<std::int64_t>(entries)));
  require_device_memory(temp_bytes + 64, "tessellation_engine's scan storage");
  temp_bytes_ = std::max<std::size_t>(temp_bytes, 1);
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_scan_temp_), temp_bytes_));
}

tessellation_stats tessellation_engine::run(const tessellation_options& options, launch_runtime& runtime,
                                            cudaStream_t stream) {
  CDPKIT_NVTX_SCOPE_PAYLOAD("bezier::tessellate", static_cast<std::uint32_t>(options.variant));
  if (!(std::isfinite(options.tolerance) && options.tolerance > 0.0f))
    throw input_error("tessellation_options::tolerance must be finite and positive, got " +
                      std::to_string(options.tolerance));
  if (options.cap < 2 || options.cap > max_point_cap)
    throw input_error("tessellation_options::cap must be in [2, " + std::to_string(max_point_cap) + "], got " +
                      std::to_string(options.cap));
  detail::check_child_block_threads(options.child_block_threads, "tessellation_options::child_block_threads");
  const std::uint32_t n = curves_->size();
  tessellation_stats stats;
  ran_ = false;

  // 1. the counts and their scan (64-bit: n curves of up to 2^20 points each may pass 2^32), the
  //    total's read-back enqueued behind them
  const std::uint64_t entries = std::uint64_t{n} + 1;
  {
    CDPKIT_NVTX_SCOPE("bezier::count and scan");
    bezier::count_points_kernel<<<blocks_for(entries, count_threads), count_threads, 0, stream>>>(
        curves_->d_curves(), n, options.tolerance, options.cap, d_counts_.get());
    CDPKIT_CUDA_TRY(cudaGetLastError());
    std::size_t temp_bytes = temp_bytes_;  // in place (CUB scans in place when input and output are one)
    CDPKIT_CUDA_TRY(cub::DeviceScan::ExclusiveSum(d_scan_temp_.get(), temp_bytes, d_counts_.get(), d_counts_.get(),
                                                  static_cast<std::int64_t>(entries), stream));
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_total_.get(), d_counts_.get() + n, sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost, stream));
  }
  // 2. the points, a curve a segment, into the buffer as it is (curves past it cut short: then 3.)
  const auto points = [&](std::uint64_t capacity) {
    const clamped_curves segments{d_counts_.get(), n, static_cast<std::uint32_t>(capacity)};
    const segment_result r = for_each_segment(segments, loop_to_child::no_pre_op{},
                                              point_op{curves_->d_curves(), d_counts_.get(), d_points_.get()},
                                              options.policy(), runtime, stream);
    stats.threshold = r.threshold;
    stats.threshold_auto = r.threshold_auto;
  };
  if (capacity_ > 0 && n > 0) points(capacity_);
  CDPKIT_WAIT_STREAM(stream, runtime, "bezier::tessellate");  // the total has arrived (idle when points ran)
  const std::uint64_t total = *h_total_;
  // 3. a total past the buffer: refused past 2^32 - 1, otherwise the buffer grows and the points
  //    are made (the first run, or more points than the buffer holds)
  if (total > capacity_) {
    if (total > max_tessellation_points)
      throw input_error("tessellation: " + std::to_string(total) + " points; at most 2^32 - 1 (raise the tolerance "
                        "or lower the cap)");
    {
      CDPKIT_NVTX_SCOPE("bezier::grow points");
      require_device_memory(total * sizeof(vec2), "the tessellation's " + std::to_string(total) + " points");
      capacity_ = 0;  // (no buffer until the new one is in: a failed allocation leaves none)
      d_points_.reset();
      CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_points_), sizeof(vec2) * total));
      capacity_ = total;
    }
    points(capacity_);
  }
  stats.points = total;
  points_ = total;
  ran_ = true;
  return stats;
}

std::vector<vec2> tessellation_engine::points() const {
  std::vector<vec2> out;
  if (!ran_) return out;
  wait_for_device("tessellation_engine::points", nullptr, __FILE__, __LINE__);
  out.resize(points_);
  if (points_ > 0)
    CDPKIT_CUDA_TRY(cudaMemcpy(out.data(), d_points_.get(), sizeof(vec2) * points_, cudaMemcpyDeviceToHost));
  return out;
}

std::vector<std::uint32_t> tessellation_engine::offsets() const {
  std::vector<std::uint32_t> out;
  if (!ran_) return out;
  wait_for_device("tessellation_engine::offsets", nullptr, __FILE__, __LINE__);
  std::vector<unsigned long long> scan(std::size_t{curves_->size()} + 1);
  CDPKIT_CUDA_TRY(cudaMemcpy(scan.data(), d_counts_.get(), sizeof(unsigned long long) * scan.size(),
                             cudaMemcpyDeviceToHost));
  // (a run that returned made at most max_tessellation_points < 2^32 points: every offset fits)
  out.assign(scan.begin(), scan.end());
  return out;
}

void tessellation_engine::poison_points(cudaStream_t stream) {
  if (capacity_ > 0)  // every byte 0xff: every coordinate a NaN
    CDPKIT_CUDA_TRY(cudaMemsetAsync(d_points_.get(), 0xff, sizeof(vec2) * capacity_, stream));
}

std::vector<vec2> tessellate_gpu(const device_curves& curves, const tessellation_options& options,
                                 launch_runtime& runtime) {
  tessellation_engine engine(curves);
  (void)engine.run(options, runtime);
  return engine.points();
}

}  // namespace cdpkit
