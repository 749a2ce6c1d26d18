// The cusparse variant of SpMV: cuSPARSE's cusparseSpMV (CSR, float, the library's default
// algorithm), the yardstick the loop-to-child variants are measured against. Its own static
// library, cdpkit::cusparse (optional_parts.hpp says how the core finds it), so that only programs
// which run it link cuSPARSE.

#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/spmv.hpp>

#include "../common/optional_parts.hpp"

#include <cusparse.h>

#include <memory>
#include <string>

namespace cdpkit {
namespace {

/// A cuSPARSE call that fails is a cdpkit::cuda_error naming the call and cuSPARSE's reason.
#define CDPKIT_CUSPARSE_TRY(call)                                                                     \
  do {                                                                                                \
    const cusparseStatus_t cdpkit_status_ = (call);                                                   \
    if (cdpkit_status_ != CUSPARSE_STATUS_SUCCESS)                                                    \
      throw ::cdpkit::cuda_error(cudaErrorUnknown,                                                    \
                                 std::string(#call) + " failed: " + cusparseGetErrorName(cdpkit_status_) + \
                                     " (" + cusparseGetErrorString(cdpkit_status_) + ")",            \
                                 __FILE__, __LINE__);                                                 \
  } while (0)

/// cuSPARSE's handle and the matrix and vector descriptors, destroyed with it: a member, so that a
/// constructor that throws halfway still destroys what it made.
struct cusparse_handles {
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t a = nullptr;
  cusparseDnVecDescr_t x = nullptr;
  cusparseDnVecDescr_t y = nullptr;
  cusparse_handles() = default;
  cusparse_handles(const cusparse_handles&) = delete;
  cusparse_handles& operator=(const cusparse_handles&) = delete;
  ~cusparse_handles() {  // (destroy calls do not fail on valid objects; nothing to report from here)
    if (y != nullptr) (void)cusparseDestroyDnVec(y);
    if (x != nullptr) (void)cusparseDestroyDnVec(x);
    if (a != nullptr) (void)cusparseDestroySpMat(a);
    if (handle != nullptr) (void)cusparseDestroy(handle);
  }
};

/// The handles and the work buffer of cusparseSpMV for one matrix and the engine's x and y.
class cusparse_yardstick final : public detail::spmv_yardstick {
 public:
  cusparse_yardstick(const device_csr_matrix& a, float* d_x, float* d_y) {
    CDPKIT_NVTX_SCOPE("spmv::cusparse setup");
    CDPKIT_CUSPARSE_TRY(cusparseCreate(&h_.handle));
    // cuSPARSE takes non-const pointers; it does not write the matrix or x
    CDPKIT_CUSPARSE_TRY(cusparseCreateCsr(&h_.a, a.rows(), a.cols(), static_cast<std::int64_t>(a.nnz()),
                                          const_cast<std::uint32_t*>(a.d_row_offsets()),
                                          const_cast<std::uint32_t*>(a.d_col_indices()),
                                          const_cast<float*>(a.d_values()), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CDPKIT_CUSPARSE_TRY(cusparseCreateDnVec(&h_.x, a.cols(), d_x, CUDA_R_32F));
    CDPKIT_CUSPARSE_TRY(cusparseCreateDnVec(&h_.y, a.rows(), d_y, CUDA_R_32F));
    const float alpha = 1.0f, beta = 0.0f;
    std::size_t bytes = 0;
    CDPKIT_CUSPARSE_TRY(cusparseSpMV_bufferSize(h_.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, h_.a, h_.x, &beta,
                                                h_.y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    if (bytes > 0) {
      require_device_memory(bytes, "cusparseSpMV's work buffer");
      CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(buffer_), bytes));
    }
  }

  void multiply(cudaStream_t stream) override {
    const float alpha = 1.0f, beta = 0.0f;
    CDPKIT_CUSPARSE_TRY(cusparseSetStream(h_.handle, stream));
    CDPKIT_CUSPARSE_TRY(cusparseSpMV(h_.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, h_.a, h_.x, &beta, h_.y,
                                     CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buffer_.get()));
  }

 private:
  cusparse_handles h_;
  detail::unique_device_ptr<unsigned char[]> buffer_;
};

std::unique_ptr<detail::spmv_yardstick> make_cusparse_yardstick(const device_csr_matrix& a, float* d_x, float* d_y) {
  return std::make_unique<cusparse_yardstick>(a, d_x, d_y);
}

}  // namespace
}  // namespace cdpkit

/// The part's anchor (optional_parts.hpp), named by the cdpkit::cusparse target in --undefined.
extern "C" cdpkit::detail::spmv_yardstick_factory cdpkit_cusparse_part() { return &cdpkit::make_cusparse_yardstick; }
