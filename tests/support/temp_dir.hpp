#pragma once
// Test helpers on the host: a scratch directory, the message of the input_error a call throws,
// and a cap on the host memory cdpkit sees.

#include <cdpkit/error.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace cdpkit_test {

/// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class temp_dir {
 public:
  temp_dir()
      : path_(std::filesystem::temp_directory_path() /
              ("cdpkit_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++))) {
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  /// Write `text` to a file `name` in the directory; its path.
  [[nodiscard]] std::string file(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path path_;
};

/// CHECK that `text` contains `part`, showing the text when it does not (a doctest macro: the
/// including file includes doctest first).
#define CHECK_CONTAINS(text, part)                                                \
  do {                                                                            \
    const std::string checked_text_ = (text);                                     \
    CHECK_MESSAGE(checked_text_.find(part) != std::string::npos, checked_text_);  \
  } while (0)

/// The message of the input_error fn throws ("no error" when it throws none).
template <class Fn>
std::string input_error_of(Fn fn) {
  try {
    (void)fn();
  } catch (const cdpkit::input_error& e) {
    return e.what();
  }
  return "no error";
}

/// Sets an environment variable for a scope; at its end the old value comes back, or the
/// variable is unset again.
class environment_variable {
 public:
  environment_variable(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~environment_variable() {
    if (saved_) ::setenv(name_, saved_->c_str(), 1);
    else ::unsetenv(name_);
  }
  environment_variable(const environment_variable&) = delete;
  environment_variable& operator=(const environment_variable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

/// Caps the host memory cdpkit sees (CDPKIT_HOST_MEMORY_LIMIT) for a scope, so that a refusal
/// for memory is exercised on any host, however much memory it has.
class host_memory_cap {
 public:
  explicit host_memory_cap(std::uint64_t bytes) : cap_("CDPKIT_HOST_MEMORY_LIMIT", std::to_string(bytes)) {}

 private:
  environment_variable cap_;
};

}  // namespace cdpkit_test
