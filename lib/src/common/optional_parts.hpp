#pragma once
// The optional parts of cdpkit: code whose dependency stays out of the core library's interface.
//   cdpkit::cusparse  the cusparse variant of SpMV (cuSPARSE, the yardstick),
//   cdpkit::fonts     font:PATH curve inputs of the Bézier family (FreeType).
// Each part is its own static library with one C function, its anchor, that hands the core what
// the part does. The core refers to the anchor weakly: without the part it is null, and the core
// says so in the error of the call that needs it. The part's target carries a linker option
// (--undefined=<anchor>) so that a program that links the part takes that object (a weak
// reference alone would not). No static initializer is involved: the part is there from the
// first instruction on, whatever order the program's static objects are built in.

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
/// The cusparse part's factory, nullptr when the program does not link cdpkit::cusparse.
[[nodiscard]] spmv_yardstick_factory linked_spmv_yardstick() noexcept;

/// read_font_curves of the fonts part.
using font_reader = curve_set (*)(const std::string& path, std::uint32_t pixels);
/// The fonts part's reader, nullptr when the program does not link cdpkit::fonts.
[[nodiscard]] font_reader linked_font_reader() noexcept;

}  // namespace detail
}  // namespace cdpkit

// The anchors, defined by the parts (lib/src/spmv/cusparse.cpp, lib/src/bezier/font.cpp).
extern "C" cdpkit::detail::spmv_yardstick_factory cdpkit_cusparse_part();
extern "C" cdpkit::detail::font_reader cdpkit_fonts_part();
