// sanitizer_children_cupti — the CUPTI side of the Compute Sanitizer probe (CDP_PROBE_CUPTI=1,
// sanitizer_children_tool.cpp): CUPTI's driver callbacks for cuLaunchKernel and its kernel activity
// records in the same process as the Sanitizer API, as cdpkit's injection library would have them.
// A translation unit of its own: cupti.h and sanitizer.h both declare placeholder CUDA types.

#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

std::atomic<unsigned long long> launch_callbacks{0}, kernel_records{0};

bool ok(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  std::fprintf(stderr, "probe: %s failed: %s (%d)\n", what, text != nullptr ? text : "?", static_cast<int>(r));
  return false;
}

void CUPTIAPI cupti_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto* api = static_cast<const CUpti_CallbackData*>(data);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel &&
      api->callbackSite == CUPTI_API_ENTER)
    ++launch_callbacks;
}

void CUPTIAPI cupti_buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *size = 1 << 20;
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI cupti_buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++kernel_records;
  std::free(buffer);
}

}  // namespace

/// CUPTI's driver callbacks and kernel activity records, beside the Sanitizer API: do both work in
/// one process?
void probe_start_cupti() {
  CUpti_SubscriberHandle subscriber{};
  if (!ok(cuptiSubscribe(&subscriber, cupti_callback, nullptr), "cuptiSubscribe")) return;
  ok(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
     "cuptiEnableCallback(cuLaunchKernel)");
  ok(cuptiActivityRegisterCallbacks(cupti_buffer_requested, cupti_buffer_completed), "cuptiActivityRegisterCallbacks");
  ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable(CONCURRENT_KERNEL)");
}

void probe_report_cupti(int report) {
  ok(cuptiActivityFlushAll(0), "cuptiActivityFlushAll");
  std::printf("probe report %d: CUPTI: %llu cuLaunchKernel callbacks, %llu kernel activity records\n", report,
              launch_callbacks.load(), kernel_records.load());
}
