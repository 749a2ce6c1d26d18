// libcdpkit_inject's CUPTI callbacks: a context created or destroyed, and the driver calls (every
// one until the set-up, to catch the first work on the profiled context; then the kernel launches
// alone, for the metrics).

#include "state.hpp"

#include <cupti_result.h>

#include <cstring>
#include <exception>
#include <mutex>
#include <string>

namespace cdpkit::profiling::inject {

namespace {

bool is_kernel_launch(CUpti_CallbackId cbid) noexcept {
  for (const auto id : kernel_launch_cbids)
    if (id == cbid) return true;
  return false;
}

/// A driver call that puts work on the device (the set-up waits for the first one).
bool is_work_call(const char* function) noexcept {
  if (function == nullptr) return false;
  for (const char* prefix : {"cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch"})
    if (std::strncmp(function, prefix, std::strlen(prefix)) == 0) return true;
  return false;
}

void on_resource(state& s, CUpti_CallbackId cbid, const CUpti_ResourceData& r) {
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.contexts_created;
    if (s.context == nullptr && !s.finalized) s.context = r.context;
    return;
  }
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    bool ours = false;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      ours = r.context != nullptr && r.context == s.context && !s.finalized;
    }
    if (ours) finalize(s, "the profiled CUDA context was destroyed (e.g. cudaDeviceReset) before exit");
  }
}

void on_driver(state& s, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  if (s.finalized) return;
  const bool launch = is_kernel_launch(cbid);
  if (!s.setup_done) {
    if (cb.callbackSite != CUPTI_API_ENTER || cb.context == nullptr) return;
    if (!launch && !is_work_call(cb.functionName)) return;
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.setup_done || s.finalized) {
      // set up meanwhile by another thread: fall through below
    } else if (s.context != nullptr && cb.context != s.context) {
      note_once(s, "other context", "collector",
                "work on a CUDA context other than the first one created is not profiled");
      return;
    } else {
      if (s.context == nullptr) s.context = cb.context;  // no creation callback came
      setup(s);
    }
  }
  if (!launch || !s.metrics_on) return;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.finalized || !s.metrics_on) return;
  if (cb.context != s.context) {
    note_once(s, "other context launch", "metrics",
              "kernels launched on a CUDA context other than the first one created are not measured");
    return;
  }
  if (cb.callbackSite == CUPTI_API_ENTER) on_launch_enter(s, cb);
  else on_launch_exit(s, cb);
}

}  // namespace

void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept {
  if (in_cdpkit || data == nullptr) return;
  reentry_guard guard;
  try {
    state& s = the_state();
    if (domain == CUPTI_CB_DOMAIN_RESOURCE)
      on_resource(s, cbid, *static_cast<const CUpti_ResourceData*>(data));
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
      on_driver(s, cbid, *static_cast<const CUpti_CallbackData*>(data));
  } catch (const std::exception& e) {
    say(std::string("in a CUPTI callback: ") + e.what());
  } catch (...) {
    say("in a CUPTI callback: unknown error");
  }
}

}  // namespace cdpkit::profiling::inject
