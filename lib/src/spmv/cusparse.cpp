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

/// cuSPARSE's handle, the matrix and vector descriptors and the work buffer of cusparseSpMV.
class cusparse_yardstick final : public detail::spmv_yardstick {
 public:
  cusparse_yardstick(const device_csr_matrix& a, float* d_x, float* d_y) {
    CDPKIT_NVTX_SCOPE("spmv::cusparse setup");
    CDPKIT_CUSPARSE_TRY(cusparseCreate(&handle_));
    // cuSPARSE takes non-const pointers; it does not write the matrix or x
    CDPKIT_CUSPARSE_TRY(cusparseCreateCsr(&a_, a.rows(), a.cols(), static_cast<std::int64_t>(a.nnz()),
                                          const_cast<std::uint32_t*>(a.d_row_offsets()),
                                          const_cast<std::uint32_t*>(a.d_col_indices()),
                                          const_cast<float*>(a.d_values()), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CDPKIT_CUSPARSE_TRY(cusparseCreateDnVec(&x_, a.cols(), d_x, CUDA_R_32F));
    CDPKIT_CUSPARSE_TRY(cusparseCreateDnVec(&y_, a.rows(), d_y, CUDA_R_32F));
    const float alpha = 1.0f, beta = 0.0f;
    std::size_t bytes = 0;
    CDPKIT_CUSPARSE_TRY(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a_, x_, &beta, y_,
                                                CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    if (bytes > 0) {
      require_device_memory(bytes, "cusparseSpMV's work buffer");
      CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(buffer_), bytes));
    }
  }
  ~cusparse_yardstick() override {  // (destroy calls do not fail on valid objects; nothing to report)
    if (y_ != nullptr) (void)cusparseDestroyDnVec(y_);
    if (x_ != nullptr) (void)cusparseDestroyDnVec(x_);
    if (a_ != nullptr) (void)cusparseDestroySpMat(a_);
    if (handle_ != nullptr) (void)cusparseDestroy(handle_);
  }
  cusparse_yardstick(const cusparse_yardstick&) = delete;
  cusparse_yardstick& operator=(const cusparse_yardstick&) = delete;

  void multiply(cudaStream_t stream) override {
    const float alpha = 1.0f, beta = 0.0f;
    CDPKIT_CUSPARSE_TRY(cusparseSetStream(handle_, stream));
    CDPKIT_CUSPARSE_TRY(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a_, x_, &beta, y_, CUDA_R_32F,
                                     CUSPARSE_SPMV_ALG_DEFAULT, buffer_.get()));
  }

 private:
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t a_ = nullptr;
  cusparseDnVecDescr_t x_ = nullptr;
  cusparseDnVecDescr_t y_ = nullptr;
  detail::unique_device_ptr<unsigned char[]> buffer_;
};

std::unique_ptr<detail::spmv_yardstick> make_cusparse_yardstick(const device_csr_matrix& a, float* d_x, float* d_y) {
  return std::make_unique<cusparse_yardstick>(a, d_x, d_y);
}

}  // namespace
}  // namespace cdpkit

/// The part's anchor (optional_parts.hpp), named by the cdpkit::cusparse target in --undefined.
extern "C" cdpkit::detail::spmv_yardstick_factory cdpkit_cusparse_part() { return &cdpkit::make_cusparse_yardstick; }
