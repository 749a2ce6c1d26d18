#pragma once
// cdpkit/harness/segment_workload.hpp — the loop-to-child benchmark workload: deterministic
// segment-length distributions and a reference workload over them, used by the loop_to_child
// sample, its benchmark and the tests. Not part of the library's API: the library's algorithm is
// cdpkit::for_each_segment over your own segments and operators (cdpkit/loop_to_child.cuh).

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/loop_to_child.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cdpkit::harness {

/// How a synthetic workload's segment lengths are drawn (segment_params).
enum class segment_dist : std::uint8_t {
  uniform,    ///< lengths uniform in [0, 2 * mean_len]
  power_law,  ///< P(len = k) proportional to k^-alpha on [1, max_len] (Zipf)
  giant,      ///< one segment of giant_len in the middle, the others 0..3 items
  empty,      ///< every segment empty
  equal,      ///< every segment equal_len items
};

/// The distribution's name, as parse_segment_dist reads it ("power_law").
const char* to_string(segment_dist d) noexcept;
/// The distribution named; throws cdpkit::input_error naming the bad name and the choices.
segment_dist parse_segment_dist(const std::string& name);
/// Every distribution, in declaration order.
const std::vector<segment_dist>& all_segment_dists();

/// A synthetic workload: how many segments, how their lengths are drawn, the seed; the
/// parameters of the other distributions are ignored. make_segment_offsets checks them.
struct segment_params {
  std::uint32_t num_segments = 1u << 20;
  segment_dist dist = segment_dist::power_law;
  std::uint64_t seed = 42;
  std::uint32_t mean_len = 32;        ///< uniform
  double alpha = 2.0;                 ///< power_law exponent, > 1
  std::uint32_t max_len = 1u << 16;   ///< power_law cap
  std::uint32_t giant_len = 1u << 22; ///< giant
  std::uint32_t equal_len = 64;       ///< equal
};

/// CSR offsets (num_segments + 1 entries, offsets[0] == 0) of a deterministic workload.
/// Throws cdpkit::input_error for a bad parameter (alpha <= 1, max_len == 0, ...) or when the
/// total number of items does not fit 32 bits.
std::vector<std::uint32_t> make_segment_offsets(const segment_params& params);

// ---------------------------------------------------------------------------------------------
// The reference workload: pre_op(i) writes a hash of i to parent_out[i]; item_op(i, j) hashes
// item_in[j] with i for `rounds` rounds into item_out[j]. Integer-exact, so every policy must
// match the Thrust reference bit for bit.

/// Owns the device buffers of one workload (RAII, defaulted moves). Move-only; a moved-from
/// workload may only be destroyed or assigned to.
class segment_workload {
 public:
  /// Precondition: offsets is non-decreasing, offsets.size() >= 1, offsets[0] == 0 (checked:
  /// cdpkit::input_error). rounds: hash rounds per item, the "doMoreWork" cost knob.
  explicit segment_workload(const std::vector<std::uint32_t>& offsets, std::uint32_t rounds = 8,
                            std::uint64_t seed = 7);

  /// Zero the outputs (not part of a timed run).
  void clear_outputs(cudaStream_t stream = nullptr);
  /// Run for_each_segment with `policy` on `stream` and synchronize; returns what the run used
  /// (its threshold). Throws cdpkit::cuda_error on a CUDA or device-side error.
  segment_result run(const loop_policy& policy, launch_runtime& runtime, cudaStream_t stream = nullptr);
  /// The same without synchronizing or checking device errors (for timing with events); the
  /// handle's result() is valid once the caller has synchronized `stream`.
  segment_async_result run_async(const loop_policy& policy, launch_runtime& runtime, cudaStream_t stream);
  /// Mismatches between the outputs and the Thrust reference (0 = exact). Synchronizes.
  [[nodiscard]] std::uint64_t count_mismatches() const;

  [[nodiscard]] std::uint32_t num_segments() const noexcept { return num_segments_; }
  [[nodiscard]] std::uint64_t num_items() const noexcept { return num_items_; }
  [[nodiscard]] std::uint32_t max_segment_len() const noexcept { return max_len_; }

 private:
  using buffer = detail::unique_device_ptr<std::uint32_t[]>;
  std::uint32_t num_segments_ = 0;
  std::uint64_t num_items_ = 0;
  std::uint32_t max_len_ = 0;
  std::uint32_t rounds_ = 0;
  buffer d_offsets_, d_item_in_, d_item_out_, d_parent_out_;
  mutable buffer d_ref_item_, d_ref_parent_;  // reference, computed on the first check
};

}  // namespace cdpkit::harness
