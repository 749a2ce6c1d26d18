#pragma once
// cdpkit/error.hpp — the library's one error path.
//
// Every CUDA runtime call made by cdpkit goes through CDPKIT_CUDA_TRY, which turns a failure into
// a cdpkit::cuda_error carrying the file, the line, the call and the CUDA error name. Errors that
// the device detects (a malformed segment, a broken invariant of the launch layer) are raised as
// flags in device memory and turned into the same exception by the host API after each algorithm.
// Bad user input found on the host (arguments, files) is a cdpkit::input_error.

#include <cuda_runtime_api.h>

#include <cdpkit/quoted_input.hpp>

#include <stdexcept>
#include <cstddef>
#include <string>
#include <string_view>

namespace cdpkit {

/// A CUDA runtime call failed, or the device raised an error flag during an algorithm.
/// `file` is kept as given (file()): pass a string that outlives the exception, such as __FILE__
/// (the CDPKIT_CUDA_TRY macros do).
class cuda_error : public std::runtime_error {
 public:
  /// The CUDA runtime call `call` returned `code` at file:line.
  cuda_error(cudaError_t code, const char* call, const char* file, int line)
      : std::runtime_error(format(code, call, file, line)), code_(code), file_(file), line_(line) {}

  /// A device-side error flag (see cdpkit::device_error_bits), reported with the CUDA-style message.
  cuda_error(const std::string& what, const char* file, int line)
      : cuda_error(cudaErrorUnknown, what, file, line) {}

  /// An error with its own message and a CUDA code (e.g. cudaErrorTimeout from the watchdog).
  cuda_error(cudaError_t code, const std::string& what, const char* file, int line)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what),
        code_(code), file_(file), line_(line) {}

  /// The CUDA error code (cudaErrorUnknown for device-side flags).
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }
  /// The CUDA error's symbolic name, e.g. "cudaErrorLaunchPendingCountExceeded".
  [[nodiscard]] const char* name() const noexcept { return cudaGetErrorName(code_); }
  [[nodiscard]] const char* file() const noexcept { return file_; }
  [[nodiscard]] int line() const noexcept { return line_; }

 private:
  static std::string format(cudaError_t code, const char* call, const char* file, int line) {
    return std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
           cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")";
  }
  cudaError_t code_;
  const char* file_;
  int line_;
};

/// There is no usable CUDA device (no GPU, no driver, or a driver too old for this build). The
/// message is one line without a source location, meant for the end user.
class no_device_error : public cuda_error {
 public:
  no_device_error(cudaError_t code, const std::string& what)
      : cuda_error(code, what, "", 0), message_(what) {}
  [[nodiscard]] const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

/// Bad input: an argument out of range, a malformed file, an impossible size. The message names
/// what was wrong and where.
class input_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {
inline void cuda_try(cudaError_t code, const char* call, const char* file, int line) {
  if (code != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    throw cuda_error(code, call, file, line);
  }
}
}  // namespace detail

}  // namespace cdpkit

/// Evaluate a CUDA runtime call; throw cdpkit::cuda_error (file, line, error name) if it failed.
#define CDPKIT_CUDA_TRY(call) ::cdpkit::detail::cuda_try((call), #call, __FILE__, __LINE__)
