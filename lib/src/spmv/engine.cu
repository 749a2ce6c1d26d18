// SpMV's host engine (cdpkit/spmv.hpp): variant names and options, device_csr_matrix, and
// spmv_engine, which runs for_each_segment over the rows as a segment_sum (one atomic add per row,
// or per warp's share of a long row) under every loop-to-child policy, or the cusparse variant
// through the cdpkit::cusparse part (cusparse.cpp). The device code is
// cdpkit/spmv/agents/row_sum.cuh (cdpkit/spmv/kernels.cuh).

#include <cdpkit/detail/enum_names.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/loop_to_child.cuh>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/spmv.hpp>
#include <cdpkit/spmv/kernels.cuh>
#include <cdpkit/wait.hpp>

#include "../common/optional_parts.hpp"

#include <algorithm>
#include <string>

namespace cdpkit {

namespace {

constexpr spmv_variant variant_order[] = {spmv_variant::serial_loop,     spmv_variant::child_per_thread,
                                          spmv_variant::thresholded,     spmv_variant::warp_aggregated,
                                          spmv_variant::block_aggregated, spmv_variant::flat_balanced,
                                          spmv_variant::cusparse};

}  // namespace

// ---- names and options ---------------------------------------------------------------------------

const char* to_string(spmv_variant v) noexcept {
  switch (v) {
    case spmv_variant::serial_loop: return "serial_loop";
    case spmv_variant::child_per_thread: return "child_per_thread";
    case spmv_variant::thresholded: return "thresholded";
    case spmv_variant::warp_aggregated: return "warp_aggregated";
    case spmv_variant::block_aggregated: return "block_aggregated";
    case spmv_variant::flat_balanced: return "flat_balanced";
    case spmv_variant::cusparse: return "cusparse";
  }
  return "?";
}

const std::vector<spmv_variant>& all_spmv_variants() {
  static const std::vector<spmv_variant> all(std::begin(variant_order), std::end(variant_order));
  return all;
}

spmv_variant parse_spmv_variant(const std::string& name) {
  return detail::parse_enum_name(name, "SpMV variant", variant_order);
}

loop_policy spmv_options::policy() const {
  loop_policy_kind kind = loop_policy_kind::serial_loop;  // (cusparse runs no loop-to-child policy)
  switch (variant) {
    case spmv_variant::child_per_thread: kind = loop_policy_kind::child_per_thread; break;
    case spmv_variant::thresholded: kind = loop_policy_kind::thresholded; break;
    case spmv_variant::warp_aggregated: kind = loop_policy_kind::warp_aggregated; break;
    case spmv_variant::block_aggregated: kind = loop_policy_kind::block_aggregated; break;
    case spmv_variant::flat_balanced: kind = loop_policy_kind::flat_balanced; break;
    default: break;
  }
  loop_policy p = loop_policy::of(kind, threshold, stream);
  p.child_block_threads = child_block_threads;
  return p;
}

// ---- device_csr_matrix ------------------------------------------------------------------------

device_csr_matrix::device_csr_matrix(const csr_matrix& a) : rows_(a.rows), cols_(a.cols), nnz_(a.nnz()) {
  CDPKIT_NVTX_SCOPE("spmv::upload");
  check_csr_matrix(a);
  require_device_memory(nnz_ * 8 + (std::uint64_t{rows_} + 1) * 4 + 64,
                        "device_csr_matrix (" + std::to_string(rows_) + " rows, " + std::to_string(nnz_) +
                            " nonzeros)");
  const auto upload = [](auto& owner, const auto& host) {
    using T = std::remove_const_t<std::remove_reference_t<decltype(host[0])>>;
    CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(owner), sizeof(T) * std::max<std::size_t>(host.size(), 1)));
    if (!host.empty())
      CDPKIT_CUDA_TRY(cudaMemcpy(owner.get(), host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice));
  };
  upload(d_offsets_, a.row_offsets);
  upload(d_cols_, a.col_indices);
  upload(d_values_, a.values);
}

// ---- spmv_engine ------------------------------------------------------------------------------

spmv_engine::spmv_engine(const device_csr_matrix& a) : a_(&a) {
  require_device_memory((std::uint64_t{a.rows()} + a.cols()) * 4 + 64,
                        "spmv_engine (" + std::to_string(a.rows()) + " rows, " + std::to_string(a.cols()) + " columns)");
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_x_), sizeof(float) * std::max<std::uint32_t>(a.cols(), 1)));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_y_), sizeof(float) * std::max<std::uint32_t>(a.rows(), 1)));
}

spmv_engine::~spmv_engine() = default;
spmv_engine::spmv_engine(spmv_engine&&) noexcept = default;
spmv_engine& spmv_engine::operator=(spmv_engine&&) noexcept = default;

void spmv_engine::set_x(const std::vector<float>& x) {
  if (x.size() != a_->cols())
    throw input_error("spmv_engine::set_x: x has " + std::to_string(x.size()) + " entries, the matrix " +
                      std::to_string(a_->cols()) + " columns");
  if (!x.empty()) CDPKIT_CUDA_TRY(cudaMemcpy(d_x_.get(), x.data(), sizeof(float) * x.size(), cudaMemcpyHostToDevice));
  have_x_ = true;
}

spmv_stats spmv_engine::run(const spmv_options& options, launch_runtime& runtime, cudaStream_t stream) {
  CDPKIT_NVTX_SCOPE_PAYLOAD("spmv::run", static_cast<std::uint32_t>(options.variant));
  if (!have_x_) throw input_error("spmv_engine::run: no x given (call set_x first)");
  detail::check_child_block_threads(options.child_block_threads, "spmv_options::child_block_threads");
  const device_csr_matrix& a = *a_;
  spmv_stats stats;
  if (a.rows() == 0) {
    ran_ = true;
    return stats;
  }
  if (a.nnz() == 0) {  // y = 0, whatever the variant (no cuSPARSE call on an empty pattern)
    CDPKIT_CUDA_TRY(cudaMemsetAsync(d_y_.get(), 0, sizeof(float) * a.rows(), stream));
    CDPKIT_WAIT_STREAM(stream, runtime, "spmv (no nonzeros)");
    ran_ = true;
    return stats;
  }
  if (options.variant == spmv_variant::cusparse) {
    if (a.nnz() > 0x7fffffffull || a.rows() > 0x7fffffffu || a.cols() > 0x7fffffffu)
      throw input_error("spmv: the cusparse variant takes at most 2^31 - 1 rows, columns and nonzeros (its "
                        "32-bit indices are signed); this matrix has " + std::to_string(a.rows()) + " rows, " +
                        std::to_string(a.cols()) + " columns, " + std::to_string(a.nnz()) + " nonzeros");
    if (!cusparse_) {
      const detail::spmv_yardstick_factory make = detail::linked_spmv_yardstick();
      if (make == nullptr)
        throw input_error("spmv: the cusparse variant is in the cdpkit::cusparse part, which this program does "
                          "not link (target_link_libraries(<target> PRIVATE cdpkit::cusparse); "
                          "find_package(cdpkit COMPONENTS cusparse))");
      cusparse_ = make(a, d_x_.get(), d_y_.get());
    }
    cusparse_->multiply(stream);
    CDPKIT_WAIT_STREAM(stream, runtime, "spmv::cusparse");
    ran_ = true;
    return stats;
  }
  CDPKIT_CUDA_TRY(cudaMemsetAsync(d_y_.get(), 0, sizeof(float) * a.rows(), stream));
  const segments_view rows{a.d_row_offsets(), a.d_row_offsets() + 1, a.rows()};
  const segment_result r =
      for_each_segment(rows, loop_to_child::no_pre_op{},
                       segment_sum<spmv::row_term, spmv::row_combine>{{a.d_col_indices(), a.d_values(), d_x_.get()},
                                                                      {d_y_.get()}},
                       options.policy(), runtime, stream);
  stats.threshold = r.threshold;
  stats.threshold_auto = r.threshold_auto;
  ran_ = true;
  return stats;
}

void spmv_engine::poison_y(cudaStream_t stream) {
  // every byte 0xff: every float a NaN
  CDPKIT_CUDA_TRY(cudaMemsetAsync(d_y_.get(), 0xff, sizeof(float) * std::max<std::uint32_t>(a_->rows(), 1), stream));
}

std::vector<float> spmv_engine::y() const {
  std::vector<float> y;
  if (!ran_) return y;
  wait_for_device("spmv_engine::y", nullptr, __FILE__, __LINE__);
  y.resize(a_->rows());
  if (!y.empty())
    CDPKIT_CUDA_TRY(cudaMemcpy(y.data(), d_y_.get(), sizeof(float) * y.size(), cudaMemcpyDeviceToHost));
  return y;
}

std::vector<float> spmv_gpu(const device_csr_matrix& a, const std::vector<float>& x, const spmv_options& options,
                            launch_runtime& runtime) {
  spmv_engine engine(a);
  engine.set_x(x);
  (void)engine.run(options, runtime);
  return engine.y();
}

}  // namespace cdpkit
