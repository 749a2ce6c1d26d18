#pragma once
// cdpkit/error.hpp — the library's one error path.
//
// Every CUDA runtime call made by cdpkit goes through CDPKIT_CUDA_TRY, which turns a failure into
// a cdpkit::cuda_error carrying the file, the line, the call and the CUDA error name. Errors that
// the device detects (a malformed segment, a broken invariant of the launch layer) are raised as
// flags in device memory and turned into the same exception by the host API after each algorithm.
// Bad user input found on the host (arguments, files) is a cdpkit::input_error.

#include <cuda_runtime_api.h>

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

/// How every message quotes text it echoes from its input (a token, a field, a spec, a name): in
/// single quotes, with every byte that could break the message or the terminal escaped, and cut
/// short, so that a message stays one short line of printable ASCII whatever the input holds.
///   - printable ASCII (0x20..0x7e) is kept, except the backslash and the single quote: "\\" and
///     "\'";
///   - every other byte is escaped: "\r", "\n", "\t" and "\0" for those four, "\xHH" (two
///     lowercase hex digits) for the rest, ESC (0x1b) and every byte >= 0x80 included (UTF-8
///     text shows as its bytes);
///   - when the escaped text is longer than `max_chars` characters, it is cut after at most
///     `max_chars` of them (never inside an escape) and "..." follows, inside the quotes.
/// Preconditions: none; `text` may hold any bytes, NUL included. The result has at most
/// max_chars + 5 characters. Examples (C++ literals on the left, the result on the right):
///   quoted_input("abc")                          'abc'
///   quoted_input("it's a\\b")                    'it\'s a\\b'
///   quoted_input("x\x1b[31m\r\n")                'x\x1b[31m\r\n'
///   quoted_input(std::string_view("a\0b", 3))    'a\0b'
///   quoted_input("caf\xc3\xa9")                  'caf\xc3\xa9'
///   quoted_input("abcdef", 4)                    'abcd...'
///   quoted_input("ab\x01", 4)                    'ab...'  (the escape \x01 would not fit whole)
///   quoted_input(a 40 MB token)                  '7777...7777...'  (its first 80 characters, then ...)
/// (Named apart from std::quoted of <iomanip>, which argument-dependent lookup would also find.)
[[nodiscard]] std::string quoted_input(std::string_view text, std::size_t max_chars = 80);

/// The max_chars for quoted_input() of a spec or a set's name, which may hold a file path: as long as a
/// path may be (PATH_MAX), so that a message names the path whole.
inline constexpr std::size_t quoted_spec_chars = 4096;

/// quoted_input(spec, quoted_spec_chars): a spec ("rmat:20", "mtx:PATH") or a set's name as messages
/// quote it ("graph spec 'rmat:x': ...").
[[nodiscard]] inline std::string quoted_spec(std::string_view spec) {
  return quoted_input(spec, quoted_spec_chars);
}

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
