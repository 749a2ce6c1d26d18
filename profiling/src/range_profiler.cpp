// CUPTI's range profiler per measured range (cdpkit/profiling/range_profiler.hpp).
//
// The sequence (CUPTI 13): cuptiProfilerInitialize -> cuptiDeviceGetChipName ->
// cuptiProfilerGetCounterAvailability -> cuptiProfilerHost {Initialize, ConfigAddMetrics,
// GetConfigImage, GetNumOfPasses} -> cuptiRangeProfiler {Enable, GetCounterDataSize,
// CounterDataImageInitialize, SetConfig}; per range {Start, PushRange, work, PopRange, Stop}
// until every pass is submitted, then DecodeData; results: GetCounterDataInfo, per range
// CounterDataGetRangeInfo and cuptiProfilerHostEvaluateToGpuValues. Every failure is caught and
// turns the profiler unavailable with the call's name and CUPTI's message.

#include <cdpkit/profiling/range_profiler.hpp>

#include "cupti_support.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/schema/profile.hpp>

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <cstdint>
#include <optional>
#include <utility>

namespace cdpkit::profiling {

using detail::check;
using detail::cupti_failure;
using detail::params;

std::optional<double> range_metrics::value(const std::string& metric) const {
  for (const auto& v : values)
    if (v.metric == metric) return v.value;
  return std::nullopt;
}

const std::vector<std::string>& default_range_metrics() {
  static const std::vector<std::string> metrics = {
      "smsp__inst_executed.sum",
      "smsp__thread_inst_executed.sum",
      "sm__ctas_launched.sum",
      "sm__threads_launched.sum",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "sm__cycles_active.avg",
      "gpu__time_duration.sum"};
  return metrics;
}

std::optional<double> hardware_warp_efficiency(const range_metrics& r) {
  return schema::hardware_warp_efficiency(r.value("smsp__inst_executed.sum"), r.value("smsp__thread_inst_executed.sum"));
}

struct range_profiler::impl {
  std::vector<std::string> metrics;
  std::vector<const char*> names;  // into metrics
  std::size_t max_ranges = 0;
  std::size_t ranges = 0;
  std::size_t passes = 0;
  std::string reason;
  std::optional<detail::profiler_init> init;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  std::vector<std::uint8_t> availability, config, counter_data;

  ~impl() { teardown(); }

  void fail(const std::string& why) {
    if (reason.empty()) reason = why;
    teardown();
  }

  void setup() {
    const detail::current_device dev = detail::require_current_device();
    CUcontext ctx = dev.context;
    init.emplace();

    auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<std::size_t>(dev.index);
    check(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");

    auto avail = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    avail.ctx = ctx;
    check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
    availability.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability.data();
    check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");

    detail::host_config hc = detail::make_host_config(CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip.pChipName, availability, names);
    host = hc.host;
    config = std::move(hc.image);
    passes = hc.passes;

    auto enable = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = ctx;
    check(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable");
    profiler = enable.pRangeProfilerObject;

    auto cds = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    cds.pRangeProfilerObject = profiler;
    cds.pMetricNames = names.data();
    cds.numMetrics = names.size();
    cds.maxNumOfRanges = max_ranges;
    cds.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges);
    check(cuptiRangeProfilerGetCounterDataSize(&cds), "cuptiRangeProfilerGetCounterDataSize");
    counter_data.resize(cds.counterDataSize);
    auto cdi = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    cdi.pRangeProfilerObject = profiler;
    cdi.counterDataSize = counter_data.size();
    cdi.pCounterData = counter_data.data();
    check(cuptiRangeProfilerCounterDataImageInitialize(&cdi),
          "cuptiRangeProfilerCounterDataImageInitialize");

    auto set = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    set.pRangeProfilerObject = profiler;
    set.configSize = config.size();
    set.pConfig = config.data();
    set.counterDataImageSize = counter_data.size();
    set.pCounterDataImage = counter_data.data();
    set.range = CUPTI_UserRange;
    set.replayMode = CUPTI_UserReplay;
    set.maxRangesPerPass = max_ranges;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    check(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig");
  }

  void teardown() noexcept {
    if (profiler != nullptr) {
      auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = profiler;
      (void)cuptiRangeProfilerDisable(&p);
      profiler = nullptr;
    }
    detail::release_host(host);
    init.reset();
    passes = 0;
  }

  [[nodiscard]] bool available() const noexcept { return profiler != nullptr && reason.empty(); }
};

range_profiler::range_profiler(std::vector<std::string> metrics, std::size_t max_ranges)
    : impl_(std::make_unique<impl>()) {
  if (metrics.empty()) throw input_error("range_profiler: no metrics to measure");
  if (max_ranges == 0) throw input_error("range_profiler: max_ranges must be at least 1");
  impl_->metrics = std::move(metrics);
  for (const auto& m : impl_->metrics) impl_->names.push_back(m.c_str());
  impl_->max_ranges = max_ranges;
  try {
    detail::retry_while_busy([&] { impl_->setup(); }, [&] { impl_->teardown(); });
  } catch (const cupti_failure& e) {
    impl_->fail(e.what());
  }
}

// impl's destructor takes the session down (also when a move assignment replaces it)
range_profiler::~range_profiler() = default;
range_profiler::range_profiler(range_profiler&&) noexcept = default;
range_profiler& range_profiler::operator=(range_profiler&&) noexcept = default;

bool range_profiler::available() const noexcept { return impl_ && impl_->available(); }

const std::string& range_profiler::unavailable_reason() const noexcept {
  static const std::string moved = "range_profiler: moved from";
  return impl_ ? impl_->reason : moved;
}

std::size_t range_profiler::passes() const noexcept { return available() ? impl_->passes : 0; }

void range_profiler::measure(const std::string& name, const std::function<void()>& work) {
  measure(name, work, {});
}

void range_profiler::measure(const std::string& name, const std::function<void()>& work,
                             const std::function<void()>& warm_up) {
  const std::size_t needed = warm_up ? 2 : 1;
  if (!available() || impl_->ranges + needed > impl_->max_ranges) {
    if (warm_up) warm_up();
    work();
    return;
  }
  const std::string warm_up_range = warm_up_name(name);
  impl& s = *impl_;
  const auto pop_range = [&] {
    auto pop = params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = s.profiler;
    return cuptiRangeProfilerPopRange(&pop);
  };
  // (all_submitted: CUPTI's answer, whether every pass of the range is in)
  const auto stop_session = [&](bool& all_submitted) {
    auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = s.profiler;
    const CUptiResult r = cuptiRangeProfilerStop(&stop);
    all_submitted = stop.isAllPassSubmitted != 0;
    return r;
  };
  bool ran = false;  // the work ran at least once
  try {
    bool all_submitted = false;
    for (std::size_t pass = 0; !all_submitted && pass < s.passes + 1; ++pass) {
      detail::retry_while_busy(
          [&] {
            auto start = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
            start.pRangeProfilerObject = s.profiler;
            check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
          },
          [] {});
      // one range: push, run, pop (an exception from the run closes the range, gives the session
      // up, then goes through to the caller)
      const auto in_range = [&](const std::string& range, const std::function<void()>& f) {
        auto push = params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
        push.pRangeProfilerObject = s.profiler;
        push.pRangeName = range.c_str();
        check(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange");
        try {
          f();
        } catch (...) {
          bool ignored = false;
          (void)pop_range();
          (void)stop_session(ignored);
          s.fail("range_profiler: the work of range '" + range + "' threw: the range was abandoned");
          throw;
        }
        check(pop_range(), "cuptiRangeProfilerPopRange");
      };
      if (warm_up) in_range(warm_up_range, warm_up);
      in_range(name, [&] {
        work();
        ran = true;
      });
      check(stop_session(all_submitted), "cuptiRangeProfilerStop");
    }
    if (!all_submitted) throw cupti_failure("CUPTI: the passes of range '" + name + "' were not all submitted");
    auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    decode.pRangeProfilerObject = s.profiler;
    check(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
    s.ranges += needed;
  } catch (const cupti_failure& e) {
    s.fail(e.what());
  }
  if (!ran) work();  // CUPTI failed before the work ran: it runs unmeasured (outside the try)
}

std::vector<range_metrics> range_profiler::results() {
  std::vector<range_metrics> out;
  if (!available()) return out;
  impl& s = *impl_;
  try {
    auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = s.counter_data.data();
    info.counterDataImageSize = s.counter_data.size();
    check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
    std::vector<double> values(s.names.size());
    for (std::size_t k = 0; k < info.numTotalRanges; ++k) {
      auto ri = params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
      ri.pCounterDataImage = s.counter_data.data();
      ri.counterDataImageSize = s.counter_data.size();
      ri.rangeIndex = k;
      ri.rangeDelimiter = "/";
      check(cuptiRangeProfilerCounterDataGetRangeInfo(&ri), "cuptiRangeProfilerCounterDataGetRangeInfo");
      auto ev = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      ev.pHostObject = s.host;
      ev.pCounterDataImage = s.counter_data.data();
      ev.counterDataImageSize = s.counter_data.size();
      ev.rangeIndex = k;
      ev.ppMetricNames = s.names.data();
      ev.numMetrics = s.names.size();
      ev.pMetricValues = values.data();
      check(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
      range_metrics r;
      r.name = ri.rangeName != nullptr ? ri.rangeName : "range " + std::to_string(k);
      for (std::size_t m = 0; m < s.metrics.size(); ++m) r.values.push_back({s.metrics[m], values[m]});
      out.push_back(std::move(r));
    }
  } catch (const cupti_failure& e) {
    s.fail(e.what());
    out.clear();
  }
  return out;
}

}  // namespace cdpkit::profiling
