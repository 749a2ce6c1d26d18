// The doctest main of the cdpkit suites: detects the GPU once. GPU cases carry
// `* CDPKIT_GPU_CASE` and are reported as skipped (by doctest, and by CTest through its skip
// expression) on a machine without a GPU.
//
// Two rules keep a run from looking green when it tested nothing:
// - a run whose filters match no test case at all fails (exit 1);
// - with CDPKIT_REQUIRE_GPU=1 (set it on GPU machines), a run on a machine without a usable GPU
//   fails instead of skipping its GPU cases.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "gpu.hpp"

#ifndef CDPKIT_NO_CUDA
#include <cuda_runtime_api.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace cdpkit_test {

#ifdef CDPKIT_NO_CUDA
bool gpu_available() { return false; }  // built without CUDA (CDPKIT_WITH_CUDA=OFF): host cases only
#else
bool gpu_available() {
  static const bool available = [] {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) (void)cudaGetLastError();
    return err == cudaSuccess && count > 0;
  }();
  return available;
}
#endif

bool requirement_met(bool met, const std::string& why) {
  static std::set<std::string> said;  // (cases register and run on one thread)
  if (!met && said.insert(why).second) std::fprintf(stderr, "cdpkit tests: %s\n", why.c_str());
  return met;
}

bool input_present(const std::filesystem::path& path, const std::string& how) {
  std::error_code ec;  // an unreadable folder counts as absent, never as an exception at registration
  const bool present = std::filesystem::exists(path, ec) && !ec;
  return requirement_met(present, path.string() + " is absent: the cases needing it are skipped" +
                                      (how.empty() ? std::string() : " (" + how + ")"));
}

bool real_meshes_present(const std::vector<std::string>& names) {
  bool all = true;
  for (const auto& name : names)
    all = input_present(std::filesystem::path(CDPKIT_REAL_POINTS_DIR) / name,
                        "scripts/real-points fetches it") && all;
  return all;
}

}  // namespace cdpkit_test

namespace {

/// True when an argument is one of doctest's query options (listing, counting, help, version):
/// the whole option name, with or without "dt-", up to any "=".
bool is_query_run(int argc, char** argv) {
  static const char* const queries[] = {"ltc", "list-test-cases", "lts",   "list-test-suites",
                                        "lr",  "list-reporters",  "h",     "help",
                                        "?",   "c",               "count", "v",
                                        "version"};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.empty() || arg[0] != '-') continue;
    arg.erase(0, arg.find_first_not_of('-'));
    if (arg.rfind("dt-", 0) == 0) arg.erase(0, 3);
    arg = arg.substr(0, arg.find('='));
    for (const char* q : queries)
      if (arg == q) return true;
  }
  return false;
}

/// How many test cases the command line's filters select, GPU cases included whether or not
/// they would be skipped here (doctest's count mode, output captured).
unsigned matching_cases(int argc, char** argv) {
  // (Context::setOption does not take "count"; options given as arguments do.)
  std::vector<const char*> args(argv, argv + argc);
  args.push_back("--count");
  args.push_back("--no-skip");
  doctest::Context counter;
  counter.applyCommandLine(static_cast<int>(args.size()), args.data());
  std::ostringstream out;
  counter.setCout(&out);
  counter.run();
  const std::string text = out.str();
  const std::string key = "unskipped test cases passing the current filters: ";
  const auto at = text.find(key);
  if (at == std::string::npos) return 1;  // unknown: do not refuse the run
  return static_cast<unsigned>(std::strtoul(text.c_str() + at + key.size(), nullptr, 10));
}

}  // namespace

int main(int argc, char** argv) {
  const bool listing = is_query_run(argc, argv);
  if (!listing) {
    const char* require = std::getenv("CDPKIT_REQUIRE_GPU");
    if (require != nullptr && std::strcmp(require, "1") == 0 && !cdpkit_test::gpu_available()) {
      std::printf("cdpkit tests: CDPKIT_REQUIRE_GPU=1 but there is no usable CUDA GPU: FAILED\n");
      return 1;
    }
    if (matching_cases(argc, argv) == 0) {
      std::printf("cdpkit tests: no test case matches the filters: FAILED (a run that tests "
                  "nothing is not a pass)\n");
      return 1;
    }
  }
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  // CTest registers every case, GPU cases included, so that it can report them as skipped.
  if (listing) context.setOption("no-skip", true);
  if (!listing && !cdpkit_test::gpu_available())
    std::printf("cdpkit tests: no usable CUDA GPU; GPU cases are skipped\n");
  return context.run();
}
