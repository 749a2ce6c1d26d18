// CUPTI's range profiler in auto-range mode with kernel replay (auto_range.hpp).
//
// The sequence (CUPTI 13): cuptiProfilerInitialize (counted, cupti_support) ->
// cuptiDeviceGetChipName -> cuptiProfilerGetCounterAvailability -> cuptiProfilerHost
// {Initialize, ConfigAddMetrics, GetConfigImage, GetNumOfPasses} -> cuptiRangeProfiler {Enable,
// GetCounterDataSize, CounterDataImageInitialize, SetConfig (CUPTI_AutoRange,
// CUPTI_KernelReplay)}; then {Start, the program's kernels, Stop, DecodeData, per range
// CounterDataGetRangeInfo and cuptiProfilerHostEvaluateToGpuValues, CounterDataImageInitialize}
// as often as the image fills; Disable and Host Deinitialize at the end. (The same calls as
// range_profiler.cpp's user-range session, in the other mode: see auto_range.hpp.)

#include "auto_range.hpp"

#include "cupti_support.hpp"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdint>
#include <optional>
#include <utility>

namespace cdpkit::profiling::inject {

using detail::check;
using detail::cupti_failure;
using detail::params;

struct auto_range_session::cupti_objects {
  std::optional<detail::profiler_init> init;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  std::vector<std::uint8_t> availability, config, counter_data;
};

auto_range_session::auto_range_session(CUcontext context, int device, std::vector<std::string> metrics,
                                       std::size_t capacity)
    : metrics_(std::move(metrics)), capacity_(capacity == 0 ? 1 : capacity), o_(std::make_unique<cupti_objects>()) {
  for (const auto& m : metrics_) names_.push_back(m.c_str());
  try {
    o_->init.emplace();

    auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<std::size_t>(device);
    check(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");

    auto avail = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    avail.ctx = context;
    check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
    o_->availability.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = o_->availability.data();
    check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");

    detail::host_config hc = detail::make_host_config(CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip.pChipName, o_->availability, names_);
    o_->host = hc.host;
    o_->config = std::move(hc.image);
    passes_ = hc.passes;

    auto enable = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = context;
    check(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable");
    o_->profiler = enable.pRangeProfilerObject;

    auto cds = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    cds.pRangeProfilerObject = o_->profiler;
    cds.pMetricNames = names_.data();
    cds.numMetrics = names_.size();
    cds.maxNumOfRanges = capacity_;
    cds.maxNumRangeTreeNodes = static_cast<std::uint32_t>(capacity_);
    check(cuptiRangeProfilerGetCounterDataSize(&cds), "cuptiRangeProfilerGetCounterDataSize");
    o_->counter_data.resize(cds.counterDataSize);
    auto cdi = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    cdi.pRangeProfilerObject = o_->profiler;
    cdi.counterDataSize = o_->counter_data.size();
    cdi.pCounterData = o_->counter_data.data();
    check(cuptiRangeProfilerCounterDataImageInitialize(&cdi), "cuptiRangeProfilerCounterDataImageInitialize");

    auto set = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    set.pRangeProfilerObject = o_->profiler;
    set.configSize = o_->config.size();
    set.pConfig = o_->config.data();
    set.counterDataImageSize = o_->counter_data.size();
    set.pCounterDataImage = o_->counter_data.data();
    set.range = CUPTI_AutoRange;
    set.replayMode = CUPTI_KernelReplay;
    set.maxRangesPerPass = capacity_;
    set.numNestingLevels = 1;  // CUPTI: 1 in auto-range mode
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    check(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig");
  } catch (...) {
    teardown();
    throw;
  }
}

auto_range_session::~auto_range_session() { teardown(); }

void auto_range_session::teardown() noexcept {
  if (!o_) return;
  if (o_->profiler != nullptr) {
    if (started_) {
      auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      stop.pRangeProfilerObject = o_->profiler;
      (void)cuptiRangeProfilerStop(&stop);
      started_ = false;
    }
    auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = o_->profiler;
    (void)cuptiRangeProfilerDisable(&p);
    o_->profiler = nullptr;
  }
  detail::release_host(o_->host);
  o_->init.reset();
}

void auto_range_session::start() {
  if (started_) return;
  auto start = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = o_->profiler;
  check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
  started_ = true;
}

std::vector<range_metrics> auto_range_session::stop_and_decode() {
  if (started_) {
    auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = o_->profiler;
    started_ = false;
    check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
  }
  auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = o_->profiler;
  check(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
  dropped_ += decode.numOfRangeDropped;

  std::vector<range_metrics> out;
  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = o_->counter_data.data();
  info.counterDataImageSize = o_->counter_data.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  std::vector<double> values(names_.size());
  for (std::size_t k = 0; k < info.numTotalRanges; ++k) {
    auto ri = params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
    ri.pCounterDataImage = o_->counter_data.data();
    ri.counterDataImageSize = o_->counter_data.size();
    ri.rangeIndex = k;
    ri.rangeDelimiter = "/";
    check(cuptiRangeProfilerCounterDataGetRangeInfo(&ri), "cuptiRangeProfilerCounterDataGetRangeInfo");
    auto ev = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    ev.pHostObject = o_->host;
    ev.pCounterDataImage = o_->counter_data.data();
    ev.counterDataImageSize = o_->counter_data.size();
    ev.rangeIndex = k;
    ev.ppMetricNames = names_.data();
    ev.numMetrics = names_.size();
    ev.pMetricValues = values.data();
    check(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
    range_metrics r;
    r.name = ri.rangeName != nullptr ? ri.rangeName : "";
    for (std::size_t m = 0; m < metrics_.size(); ++m) r.values.push_back({metrics_[m], values[m]});
    out.push_back(std::move(r));
  }

  auto cdi = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  cdi.pRangeProfilerObject = o_->profiler;
  cdi.counterDataSize = o_->counter_data.size();
  cdi.pCounterData = o_->counter_data.data();
  check(cuptiRangeProfilerCounterDataImageInitialize(&cdi), "cuptiRangeProfilerCounterDataImageInitialize");
  return out;
}

}  // namespace cdpkit::profiling::inject
