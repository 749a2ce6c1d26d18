#pragma once
// cdpkit/spmv.hpp — sparse matrix-vector products y = A x on the GPU, each CSR row a segment of
// loop-to-child (cdpkit/loop_to_child.hpp): "find the row's start, then process its nonzeros one by
// one". Every loop-to-child policy, and two yardsticks without child grids: flat_balanced (one
// grid over all nonzeros, scan + search) and cuSPARSE's cusparseSpMV.
//
// Through for_each_segment, every nonzero is one item of a segment_sum (cdpkit/loop_to_child.cuh):
// the term of (r, k) is values[k] * x[col[k]]; a thread that walks a row alone adds its terms in
// a register and makes one atomic add into y[r]; in a child grid (whose threads first add
// eight terms each), a cooperative loop or the flat grid, the lanes of a warp holding terms of
// one row add them by shuffles and one lane makes the atomic add (the policies decide which thread or child grid does what; y starts at zero). So the
// sums' grouping, and with it the last bits of y, varies from policy to policy (and with the
// launch layer's fallbacks, from run to run): results are checked against the double-precision
// reference with spmv_mismatches' relative tolerance (cdpkit/sparse_matrix.hpp). bench/spmv_bench
// measures every policy against cuSPARSE.
//
// Launch sites: loop-to-child's own (loop_to_child.<policy>), since these are its launches.

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/sparse_matrix.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit {

namespace detail {
struct spmv_yardstick;  // the cusparse variant's state, in the cdpkit::cusparse part
}  // namespace detail

/// How y = A x is computed: a loop-to-child policy over the rows, or cuSPARSE.
enum class spmv_variant : std::uint8_t {
  serial_loop,       ///< a thread per row loops over its nonzeros
  child_per_thread,  ///< a thread per row launches a child grid over them
  thresholded,       ///< a child grid for a row longer than T, a loop otherwise
  warp_aggregated,   ///< one child grid per warp over its rows' concatenated nonzeros
  block_aggregated,  ///< one child grid per block over its rows' concatenated nonzeros
  flat_balanced,     ///< no CDP: one grid over every nonzero (scan + search)
  cusparse,          ///< no CDP: cusparseSpMV (CSR, float, the library's default algorithm); needs the
                     ///< cdpkit::cusparse part linked (spmv_engine::run throws otherwise)
};

/// "serial_loop", ..., "flat_balanced" (the loop-to-child names), "cusparse".
const char* to_string(spmv_variant v) noexcept;
/// The variant of a name (as to_string writes it). Throws cdpkit::input_error naming the value and
/// the choices.
spmv_variant parse_spmv_variant(const std::string& name);
/// Every variant, in the order of the story.
const std::vector<spmv_variant>& all_spmv_variants();
/// True for the variants that launch child grids.
[[nodiscard]] constexpr bool uses_cdp(spmv_variant v) noexcept {
  return v != spmv_variant::serial_loop && v != spmv_variant::flat_balanced && v != spmv_variant::cusparse;
}

struct spmv_options {
  spmv_variant variant = spmv_variant::block_aggregated;
  /// Launch threshold of thresholded / warp_aggregated / block_aggregated (nonzeros of a row or of
  /// a warp's / block's rows). Unset: picked on the device from the row lengths (loop_policy).
  std::optional<std::uint32_t> threshold;
  stream_kind stream = stream_kind::fire_and_forget;
  /// Threads per block of the child grids (a multiple of 32 in [32, 1024]).
  std::uint32_t child_block_threads = 256;
  /// The loop-to-child policy of a for_each_segment variant (cusparse: serial_loop, unused).
  [[nodiscard]] loop_policy policy() const;
};

/// What a run did besides y.
struct spmv_stats {
  /// The threshold the run launched by (loop-to-child's segment_result: unset for the variants
  /// without child grids, and for a matrix without nonzeros, where nothing is launched).
  std::optional<std::uint32_t> threshold;
  bool threshold_auto = false;
};

/// A CSR matrix in device memory. Move-only RAII (defaulted moves).
class device_csr_matrix {
 public:
  /// Copies `a` to the current device. Throws cdpkit::input_error when `a` breaks csr_matrix's
  /// invariants (check_csr_matrix: a bad offset or column would be an out-of-bounds read on the
  /// device) or the device has not enough free memory (8 bytes per nonzero + 4 per row),
  /// cdpkit::cuda_error when a CUDA call fails. Engines keep a pointer to it: it must not be moved
  /// or destroyed while an engine uses it.
  explicit device_csr_matrix(const csr_matrix& a);

  [[nodiscard]] std::uint32_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::uint32_t cols() const noexcept { return cols_; }
  [[nodiscard]] std::uint64_t nnz() const noexcept { return nnz_; }
  [[nodiscard]] const std::uint32_t* d_row_offsets() const noexcept { return d_offsets_.get(); }
  [[nodiscard]] const std::uint32_t* d_col_indices() const noexcept { return d_cols_.get(); }
  [[nodiscard]] const float* d_values() const noexcept { return d_values_.get(); }

 private:
  std::uint32_t rows_ = 0;
  std::uint32_t cols_ = 0;
  std::uint64_t nnz_ = 0;
  detail::unique_device_ptr<std::uint32_t[]> d_offsets_;
  detail::unique_device_ptr<std::uint32_t[]> d_cols_;
  detail::unique_device_ptr<float[]> d_values_;
};

/// x and y for products with one device matrix, reused across runs, and cuSPARSE's state (made
/// at the first cusparse run). Move-only RAII.
class spmv_engine {
 public:
  /// Throws cdpkit::input_error when the device has not enough free memory (4 bytes per row and
  /// column), cdpkit::cuda_error on allocation failure. `a` must outlive the engine and stay where
  /// it is (not moved from). A moved-from engine may only be destroyed or assigned to.
  explicit spmv_engine(const device_csr_matrix& a);
  ~spmv_engine();
  spmv_engine(spmv_engine&&) noexcept;
  spmv_engine& operator=(spmv_engine&&) noexcept;
  spmv_engine(const spmv_engine&) = delete;
  spmv_engine& operator=(const spmv_engine&) = delete;

  /// The vector x of the next runs. Throws cdpkit::input_error when x.size() != a.cols().
  void set_x(const std::vector<float>& x);

  /// y = A x with the last x given, and wait for it (under the watchdog). Preconditions: set_x was
  /// called. Throws cdpkit::input_error without an x, for a child_block_threads that is not a
  /// multiple of 32 in [32, 1024], or for the cusparse variant in a program that does not link
  /// cdpkit::cusparse; cdpkit::cuda_error on CUDA, cuSPARSE or device-side errors.
  spmv_stats run(const spmv_options& options, launch_runtime& runtime = default_runtime(),
                 cudaStream_t stream = nullptr);

  /// y of the last run, copied to the host (empty before the first successful run).
  [[nodiscard]] std::vector<float> y() const;

  /// Set every entry of y to NaN (stream-ordered, not waited for): a check hook for tests and
  /// benchmarks, so that a run which writes nothing (or misses rows) fails its check instead of
  /// passing on what an earlier run left. Throws cdpkit::cuda_error when the memset fails.
  void poison_y(cudaStream_t stream = nullptr);

 private:
  const device_csr_matrix* a_;
  detail::unique_device_ptr<float[]> d_x_;
  detail::unique_device_ptr<float[]> d_y_;
  std::unique_ptr<detail::spmv_yardstick> cusparse_;  // the cusparse variant's state
  bool have_x_ = false;
  bool ran_ = false;
};

/// One product with a temporary engine: y = A x.
std::vector<float> spmv_gpu(const device_csr_matrix& a, const std::vector<float>& x, const spmv_options& options,
                            launch_runtime& runtime = default_runtime());

}  // namespace cdpkit
