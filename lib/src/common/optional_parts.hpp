#pragma once
// The optional parts of cdpkit: code whose dependency stays out of the core library's interface.
//   cdpkit::cusparse  the cusparse variant of SpMV (cuSPARSE, the yardstick),
//   cdpkit::fonts     font:PATH curve inputs of the Bézier family (FreeType).
// Each part is its own static library whose one object registers itself here when it is linked:
// the part's target carries a linker option (--undefined=<anchor>) that makes the linker take
// that object, and its static initializer calls the register function. Without the part, the
// core says so in the error of the call that needs it.

#include <cdpkit/bezier.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

namespace cdpkit {

class device_csr_matrix;

namespace detail {

/// y = A x by a library other than cdpkit (cuSPARSE), for one matrix and the engine's x and y.
struct spmv_yardstick {
  virtual ~spmv_yardstick() = default;
  /// Enqueue y = A x on `stream` (not waited for). Throws cdpkit::cuda_error on failure.
  virtual void multiply(cudaStream_t stream) = 0;
};
/// Makes the yardstick for `a` with x in d_x (a.cols() floats) and y in d_y (a.rows() floats).
using spmv_yardstick_factory = std::unique_ptr<spmv_yardstick> (*)(const device_csr_matrix& a, float* d_x,
                                                                     float* d_y);
void register_spmv_yardstick(spmv_yardstick_factory factory) noexcept;
[[nodiscard]] spmv_yardstick_factory registered_spmv_yardstick() noexcept;

/// read_font_curves of the fonts part.
using font_reader = curve_set (*)(const std::string& path, std::uint32_t pixels);
void register_font_reader(font_reader reader) noexcept;
[[nodiscard]] font_reader registered_font_reader() noexcept;

}  // namespace detail
}  // namespace cdpkit
