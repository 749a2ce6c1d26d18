#pragma once
// cdpkit/tessellation.hpp — Bézier tessellation on the GPU: each curve's points (how many, its
// flatness bound says: cdpkit/bezier.hpp) as a segment of loop-to-child, under every policy and
// the flat yardstick. NVIDIA's cdpBezierTessellation calls device-side malloc once per line and
// caps a line at 32 points; here the counts are computed first and scanned, so one output buffer
// holds every curve's points at the offsets tessellation_offsets gives on the host, and a curve
// may have up to its cap (default 4,096) points.
//
// Point j of curve i is evaluate(curve, tessellation_parameter(j, count)), the same inline code as
// the CPU reference (tessellate_reference): a run is checked against it with
// reference_tolerance (which also admits a build with approximate division).
//
// Launch sites: loop-to-child's own (loop_to_child.<policy>), since these are its launches.

#include <cdpkit/bezier.hpp>
#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/loop_to_child.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit {

struct tessellation_options {
  /// The loop-to-child policy over the curves (cdpkit/loop_to_child.hpp: serial_loop,
  /// child_per_thread, thresholded, warp_aggregated, block_aggregated, or flat_balanced, the
  /// yardstick without child grids); names from to_string / parse_loop_policy_kind.
  loop_policy_kind variant = loop_policy_kind::block_aggregated;
  /// Flatness tolerance and point cap of points_for_curve (checked: tolerance finite and > 0,
  /// cap in [2, max_point_cap]).
  float tolerance = default_tolerance;
  std::uint32_t cap = default_point_cap;
  /// Launch threshold (points of a curve, or of a warp's / block's curves). Unset: picked on the
  /// device from the point counts (loop_policy).
  std::optional<std::uint32_t> threshold;
  stream_kind stream = stream_kind::fire_and_forget;
  /// Threads per block of the child grids (a multiple of 32 in [32, 1024]).
  std::uint32_t child_block_threads = 256;
  /// The loop-to-child policy: variant with threshold, stream and child_block_threads.
  [[nodiscard]] loop_policy policy() const;
};

/// What a run did besides the points.
struct tessellation_stats {
  std::uint64_t points = 0;                ///< points computed (the scan's total)
  std::optional<std::uint32_t> threshold;  ///< the threshold launched by (unset without child grids)
  bool threshold_auto = false;
};

/// A curve set in device memory (36 bytes per curve). Move-only RAII (defaulted moves); engines
/// keep a pointer to it: it must not be moved or destroyed while an engine uses it.
class device_curves {
 public:
  /// Copies `set`'s curves to the current device. Throws cdpkit::input_error for what
  /// check_curves refuses and when the device has not enough free memory, cdpkit::cuda_error when
  /// a CUDA call fails.
  explicit device_curves(const curve_set& set);
  [[nodiscard]] std::uint32_t size() const noexcept { return size_; }
  [[nodiscard]] const bezier_curve* d_curves() const noexcept { return d_curves_.get(); }

 private:
  std::uint32_t size_ = 0;
  detail::unique_device_ptr<bezier_curve[]> d_curves_;
};

/// The counts, offsets and points of tessellations of one device curve set, reused across runs
/// (the points' buffer grows as needed). Move-only RAII (defaulted moves).
class tessellation_engine {
 public:
  /// Allocates the counts and their scan (8 bytes per curve), the scan's storage and 8 bytes of
  /// pinned host memory (the total's read-back), kept across runs. Throws cdpkit::input_error when the device has not enough free memory,
  /// cdpkit::cuda_error on allocation failure.
  explicit tessellation_engine(const device_curves& curves);

  /// Count every curve's points, scan the counts, then compute the points, and wait (under the
  /// watchdog). The points go to the buffer the earlier runs sized: a run whose points fit it
  /// makes no host round trip before its points (the total is read back at the end). The first
  /// run reads the total before making its points; a later run whose points outgrow the buffer
  /// finds out at the end, having made the points that fit it (curves past it cut short), then
  /// grows the buffer and makes them all (a traced run then records that first pass too). Throws cdpkit::input_error for a tolerance, cap or child_block_threads out of
  /// range, for more than max_tessellation_points points (raise the tolerance or lower the cap)
  /// and when the points do not fit the device's free memory; cdpkit::cuda_error on CUDA or
  /// device-side errors.
  tessellation_stats run(const tessellation_options& options, launch_runtime& runtime = default_runtime(),
                         cudaStream_t stream = nullptr);

  /// The last run's points (in curve order) and offsets (size() + 1 entries), copied to the host;
  /// empty before the first successful run.
  [[nodiscard]] std::vector<vec2> points() const;
  [[nodiscard]] std::vector<std::uint32_t> offsets() const;

  /// Set every point's coordinates to NaN (stream-ordered): a check hook for tests and benchmarks,
  /// so that a run that leaves points unwritten fails its check.
  void poison_points(cudaStream_t stream = nullptr);

 private:
  const device_curves* curves_;
  detail::unique_device_ptr<unsigned long long[]> d_counts_;  ///< size() + 1: counts, then their scan (the offsets)
  detail::unique_device_ptr<unsigned char[]> d_scan_temp_;    ///< CUB's scan storage, temp_bytes_
  std::size_t temp_bytes_ = 0;
  detail::unique_device_ptr<vec2[]> d_points_;
  detail::unique_pinned_ptr<unsigned long long> h_total_;  ///< the scan's total, read back (pinned)
  std::uint64_t capacity_ = 0;  ///< points d_points_ holds
  std::uint64_t points_ = 0;    ///< points of the last run
  bool ran_ = false;
};

/// One tessellation with a temporary engine: the points, in curve order.
std::vector<vec2> tessellate_gpu(const device_curves& curves, const tessellation_options& options,
                                 launch_runtime& runtime = default_runtime());

}  // namespace cdpkit
