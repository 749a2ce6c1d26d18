// What the CUPTI-based collectors share (cupti_support.hpp).

#include "cupti_support.hpp"

#include <cuda_runtime_api.h>
#include <cupti_profiler_target.h>

#include <chrono>
#include <mutex>
#include <thread>

namespace cdpkit::profiling::detail {

std::string advice_for(CUptiResult r) {
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return " (profiling needs permission: run as root, or load the NVIDIA driver with "
             "NVreg_RestrictProfilingToAdminUsers=0)";
    case CUPTI_ERROR_HARDWARE_BUSY:
      return " (the GPU's profiling hardware is in use, e.g. by another process profiling it; cdpkit "
             "retried for 5 s)";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return " (another profiler, e.g. Nsight Systems or Nsight Compute, holds CUPTI: cdpkit "
             "stands aside)";
    default: return "";
  }
}

void check(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown error";
  throw cupti_failure(std::string("CUPTI: ") + call + ": " + text + advice_for(r), r);
}

void retry_while_busy(const std::function<void()>& setup, const std::function<void()>& undo) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    try {
      setup();
      return;
    } catch (const cupti_failure& e) {
      if (e.result != CUPTI_ERROR_HARDWARE_BUSY || std::chrono::steady_clock::now() >= deadline) throw;
    }
    undo();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

current_device require_current_device() {
  current_device d;
  cudaError_t e = cudaGetDevice(&d.index);
  if (e == cudaSuccess) e = cudaFree(nullptr);  // the runtime's primary context, current
  if (e != cudaSuccess)
    throw cupti_failure(std::string("no CUDA device to profile (") + cudaGetErrorString(e) + ")");
  using get_current_fn = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess || fn == nullptr ||
      reinterpret_cast<get_current_fn>(fn)(&d.context) != CUDA_SUCCESS || d.context == nullptr)
    throw cupti_failure("no current CUDA context to profile");
  return d;
}

host_config make_host_config(CUpti_ProfilerType type, const char* chip,
                             const std::vector<std::uint8_t>& availability,
                             const std::vector<const char*>& metrics) {
  host_config c;
  auto init = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  init.profilerType = type;
  init.pChipName = chip;
  init.pCounterAvailabilityImage = availability.data();
  check(cuptiProfilerHostInitialize(&init), "cuptiProfilerHostInitialize");
  c.host = init.pHostObject;
  try {
    auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = c.host;
    add.ppMetricNames = const_cast<const char**>(metrics.data());
    add.numMetrics = metrics.size();
    check(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");

    auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = c.host;
    check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
    c.image.resize(size.configImageSize);
    auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = c.host;
    image.configImageSize = c.image.size();
    image.pConfigImage = c.image.data();
    check(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");

    auto np = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    np.configImageSize = c.image.size();
    np.pConfigImage = c.image.data();
    check(cuptiProfilerHostGetNumOfPasses(&np), "cuptiProfilerHostGetNumOfPasses");
    c.passes = np.numOfPasses;
  } catch (...) {
    release_host(c.host);
    throw;
  }
  return c;
}

void release_host(CUpti_Profiler_Host_Object*& host) noexcept {
  if (host == nullptr) return;
  auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = host;
  (void)cuptiProfilerHostDeinitialize(&p);
  host = nullptr;
}

namespace {
std::mutex init_mutex;
int init_holders = 0;
}  // namespace

profiler_init::profiler_init() {
  std::lock_guard<std::mutex> lock(init_mutex);
  if (init_holders == 0) {
    auto p = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    check(cuptiProfilerInitialize(&p), "cuptiProfilerInitialize");
  }
  ++init_holders;
  held_ = true;
}

profiler_init::~profiler_init() {
  if (!held_) return;
  std::lock_guard<std::mutex> lock(init_mutex);
  if (--init_holders == 0) {
    auto p = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    (void)cuptiProfilerDeInitialize(&p);
  }
}

first_operation_absorber::first_operation_absorber() noexcept {
  if (cudaPeekAtLastError() != cudaSuccess) return;  // the program's error: not ours to clear
  if (cudaMalloc(&word_, bytes) != cudaSuccess) {
    word_ = nullptr;
    (void)cudaGetLastError();  // our failed allocation's error
  }
}

first_operation_absorber::~first_operation_absorber() {
  if (word_ != nullptr) (void)cudaFree(word_);
}

bool first_operation_absorber::absorb() noexcept {
  if (word_ == nullptr || cudaPeekAtLastError() != cudaSuccess) return false;
  if (cudaMemset(word_, 0, bytes) != cudaSuccess) return false;
  (void)cudaDeviceSynchronize();
  return true;
}

}  // namespace cdpkit::profiling::detail
