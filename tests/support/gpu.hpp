#pragma once
// Test harness helpers: GPU detection (once per process), the inputs a case needs, and the
// decorator for GPU cases.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace cdpkit_test {

/// True when a CUDA device is usable; computed once, on first call.
bool gpu_available();

/// `met`; when false, `why` goes to stderr once (the first call with that text), so that a case
/// skipped for it says why. For skip decorators, which run as the cases register:
/// `* doctest::skip(!cdpkit_test::requirement_met(have_x, "x is absent: the cases on x are skipped"))`.
/// (A case that returns early instead would be reported as passed, having checked nothing.)
bool requirement_met(bool met, const std::string& why);

/// requirement_met(exists(path), ...): says that `path` is absent, that the cases needing it
/// are skipped, and `how` to get it (may be empty).
bool input_present(const std::filesystem::path& path, const std::string& how = "");

/// The real meshes' folder (CDPKIT_REAL_POINTS_DIR) holds every mesh of `names`. Each absent
/// one is named (not only the first), with how to fetch it (scripts/real-points).
bool real_meshes_present(const std::vector<std::string>& names);

/// Held by every test case that profiles with CUPTI (range profiler, PM sampling, activity): the
/// GPU's profiling hardware serves one process at a time (CUPTI_ERROR_HARDWARE_BUSY otherwise,
/// measured on the H200), and ctest runs test processes in parallel. An exclusive flock on a
/// file in /tmp, released at scope end; the injection test's script takes the same lock.
class cupti_lock {
 public:
  cupti_lock() : fd_(::open("/tmp/cdpkit-cupti-tests.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0666)) {
    if (fd_ >= 0) (void)::flock(fd_, LOCK_EX);
  }
  ~cupti_lock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  cupti_lock(const cupti_lock&) = delete;
  cupti_lock& operator=(const cupti_lock&) = delete;

 private:
  int fd_;
};

}  // namespace cdpkit_test

/// Decorator for test cases that need a GPU: without one they are reported as skipped.
#define CDPKIT_GPU_CASE doctest::skip(!::cdpkit_test::gpu_available())
