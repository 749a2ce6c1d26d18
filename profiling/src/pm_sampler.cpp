// CUPTI's PM sampling around a piece of work (cdpkit/profiling/pm_sampler.hpp).
//
// Set up once: cuptiProfilerInitialize (counted) -> cuptiDeviceGetChipName ->
// cuptiPmSamplingGetCounterAvailability -> cuptiProfilerHost {Initialize (PM sampling),
// ConfigAddMetrics, GetConfigImage, GetNumOfPasses (must be 1)}. Per sample(): cuptiPmSampling
// {Enable, SetConfig, GetCounterDataSize, CounterDataImageInitialize, Start}, the work, Stop, then
// DecodeData into the counter-data image until the hardware buffer is drained (the image is read
// and re-initialized whenever it fills), each sample's window from CounterDataGetSampleInfo and
// its values from cuptiProfilerHostEvaluateToGpuValues; Disable.

#include <cdpkit/profiling/pm_sampler.hpp>

#include "cupti_support.hpp"

#include <cdpkit/error.hpp>

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

namespace cdpkit::profiling {

using detail::check;
using detail::cupti_failure;
using detail::params;

std::optional<std::size_t> pm_timeline::index_of(const std::string& metric) const {
  for (std::size_t k = 0; k < metrics.size(); ++k)
    if (metrics[k] == metric) return k;
  return std::nullopt;
}

const std::vector<std::string>& default_pm_metrics() {
  static const std::vector<std::string> metrics = {
      "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
      "sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed",
      "sm__inst_executed_realtime.sum"};
  return metrics;
}

namespace {
/// Bytes of the hardware buffer the samples go to while the work runs (GPU memory, CUPTI's).
constexpr std::size_t hardware_buffer_bytes = std::size_t{256} << 20;
/// Samples per counter-data image; the image is read and re-initialized when it fills.
constexpr std::uint32_t samples_per_image = 8192;
/// How long after cuptiPmSamplingStart the samples begin (measured: about 0.5 ms), with margin.
constexpr std::chrono::microseconds start_latency{2000};
/// The longest that wait may be (long intervals).
constexpr std::chrono::milliseconds max_start_wait{20};
/// Decode calls after the work before giving up on draining the buffer.
constexpr int max_decode_rounds = 100000;
}  // namespace

struct pm_sampler::impl {
  std::vector<std::string> metrics;
  std::vector<const char*> names;  // into metrics
  std::uint64_t interval_ns = 0;
  std::size_t max_samples = 0;
  std::string reason;
  std::size_t device = 0;
  std::optional<detail::profiler_init> init;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<std::uint8_t> availability, config, counter_data;
  CUpti_PmSampling_Object* object = nullptr;  ///< while started
  bool running = false;                       ///< between Start and Stop
  pm_timeline pending;                        ///< the samples of the current start()

  ~impl() { teardown(); }

  void fail(const std::string& why) {
    if (reason.empty()) reason = why;
    teardown();
  }

  void setup() {
    const detail::current_device dev = detail::require_current_device();
    device = static_cast<std::size_t>(dev.index);
    init.emplace();

    auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = device;
    check(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");

    auto avail = params<CUpti_PmSampling_GetCounterAvailability_Params>(
        CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
    avail.deviceIndex = device;
    check(cuptiPmSamplingGetCounterAvailability(&avail), "cuptiPmSamplingGetCounterAvailability");
    availability.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability.data();
    check(cuptiPmSamplingGetCounterAvailability(&avail), "cuptiPmSamplingGetCounterAvailability");

    detail::host_config hc = detail::make_host_config(CUPTI_PROFILER_TYPE_PM_SAMPLING, chip.pChipName, availability, names);
    host = hc.host;
    config = std::move(hc.image);
    if (hc.passes != 1)
      throw cupti_failure("PM sampling: the metrics need " + std::to_string(hc.passes) +
                          " passes and sampling takes one: sample fewer metrics");
  }

  void stop_and_disable() noexcept {
    if (object == nullptr) return;
    if (running) {
      auto p = params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
      p.pPmSamplingObject = object;
      (void)cuptiPmSamplingStop(&p);
      running = false;
    }
    auto p = params<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
    p.pPmSamplingObject = object;
    (void)cuptiPmSamplingDisable(&p);
    object = nullptr;
  }

  void teardown() noexcept {
    stop_and_disable();
    detail::release_host(host);
    init.reset();
  }

  [[nodiscard]] bool available() const noexcept { return host != nullptr && reason.empty(); }

  std::size_t read_index = 0;  ///< completed samples of the current image already read

  void reset_image() {
    read_index = 0;
    auto p = params<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
        CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    p.pPmSamplingObject = object;
    p.counterDataSize = counter_data.size();
    p.pCounterData = counter_data.data();
    check(cuptiPmSamplingCounterDataImageInitialize(&p), "cuptiPmSamplingCounterDataImageInitialize");
  }

  /// Move the image's completed samples not read yet into `out`.
  void read_image(pm_timeline& out) {
    auto info = params<CUpti_PmSampling_GetCounterDataInfo_Params>(CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    check(cuptiPmSamplingGetCounterDataInfo(&info), "cuptiPmSamplingGetCounterDataInfo");
    for (std::size_t k = read_index; k < info.numCompletedSamples; ++k) {
      read_index = k + 1;
      if (out.samples.size() >= max_samples) {
        ++out.dropped;
        continue;
      }
      auto si = params<CUpti_PmSampling_CounterData_GetSampleInfo_Params>(
          CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE);
      si.pPmSamplingObject = object;
      si.pCounterDataImage = counter_data.data();
      si.counterDataImageSize = counter_data.size();
      si.sampleIndex = k;
      check(cuptiPmSamplingCounterDataGetSampleInfo(&si), "cuptiPmSamplingCounterDataGetSampleInfo");
      pm_sample s;
      s.start_ns = si.startTimestamp;
      s.end_ns = si.endTimestamp;
      s.values.assign(names.size(), 0.0);
      auto ev = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      ev.pHostObject = host;
      ev.pCounterDataImage = counter_data.data();
      ev.counterDataImageSize = counter_data.size();
      ev.rangeIndex = k;
      ev.ppMetricNames = names.data();
      ev.numMetrics = names.size();
      ev.pMetricValues = s.values.data();
      check(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
      out.samples.push_back(std::move(s));
    }
  }

  /// Decode what the hardware buffer holds now into `pending`; true at its end.
  bool decode_once() {
    auto d = params<CUpti_PmSampling_DecodeData_Params>(CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
    d.pPmSamplingObject = object;
    d.pCounterDataImage = counter_data.data();
    d.counterDataImageSize = counter_data.size();
    check(cuptiPmSamplingDecodeData(&d), "cuptiPmSamplingDecodeData");
    if (d.overflow != 0) pending.overflow = true;
    read_image(pending);
    // a full image is read whole: start it afresh; otherwise samples populated but not yet
    // completed stay in it for the next decode
    if (d.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) reset_image();
    return d.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
  }

  /// Decode everything left in the hardware buffer (sampling stopped).
  void drain() {
    for (int round = 0; round < max_decode_rounds; ++round)
      if (decode_once()) return;
    throw cupti_failure("PM sampling: the hardware buffer did not drain");
  }
};

pm_sampler::pm_sampler(std::vector<std::string> metrics, std::uint64_t interval_ns,
                       std::size_t max_samples)
    : impl_(std::make_unique<impl>()) {
  if (metrics.empty()) throw input_error("pm_sampler: no metrics to sample");
  if (interval_ns < 1000 || interval_ns > 1000000000)
    throw input_error("pm_sampler: the interval must be between 1 us and 1 s, got " +
                      std::to_string(interval_ns) + " ns");
  if (max_samples == 0) throw input_error("pm_sampler: max_samples must be at least 1");
  impl_->metrics = std::move(metrics);
  for (const auto& m : impl_->metrics) impl_->names.push_back(m.c_str());
  impl_->interval_ns = interval_ns;
  impl_->max_samples = max_samples;
  try {
    detail::retry_while_busy([&] { impl_->setup(); }, [&] { impl_->teardown(); });
  } catch (const cupti_failure& e) {
    impl_->fail(e.what());
  }
}

// impl's destructor takes the session down (also when a move assignment replaces it)
pm_sampler::~pm_sampler() = default;
pm_sampler::pm_sampler(pm_sampler&&) noexcept = default;
pm_sampler& pm_sampler::operator=(pm_sampler&&) noexcept = default;

bool pm_sampler::available() const noexcept { return impl_ && impl_->available(); }

const std::string& pm_sampler::unavailable_reason() const noexcept {
  static const std::string moved = "pm_sampler: moved from";
  return impl_ ? impl_->reason : moved;
}

std::uint64_t pm_sampler::interval_ns() const noexcept { return impl_ ? impl_->interval_ns : 0; }

bool pm_sampler::started() const noexcept { return impl_ && impl_->object != nullptr; }

void pm_sampler::start() {
  if (!available() || started()) return;
  impl& s = *impl_;
  s.pending = pm_timeline{};
  s.pending.metrics = s.metrics;
  s.pending.interval_ns = s.interval_ns;
  try {
    detail::retry_while_busy(
        [&] {
          auto enable = params<CUpti_PmSampling_Enable_Params>(CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
          enable.deviceIndex = s.device;
          check(cuptiPmSamplingEnable(&enable), "cuptiPmSamplingEnable");
          s.object = enable.pPmSamplingObject;
          auto set = params<CUpti_PmSampling_SetConfig_Params>(CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
          set.pPmSamplingObject = s.object;
          set.configSize = s.config.size();
          set.pConfig = s.config.data();
          set.hardwareBufferSize = hardware_buffer_bytes;
          set.samplingInterval = s.interval_ns;
          set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
          set.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
          check(cuptiPmSamplingSetConfig(&set), "cuptiPmSamplingSetConfig");
        },
        [&] { s.stop_and_disable(); });

    auto cds = params<CUpti_PmSampling_GetCounterDataSize_Params>(CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
    cds.pPmSamplingObject = s.object;
    cds.pMetricNames = s.names.data();
    cds.numMetrics = s.names.size();
    cds.maxSamples = samples_per_image;
    check(cuptiPmSamplingGetCounterDataSize(&cds), "cuptiPmSamplingGetCounterDataSize");
    s.counter_data.assign(cds.counterDataSize, 0);
    s.reset_image();

    auto start = params<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
    start.pPmSamplingObject = s.object;
    check(cuptiPmSamplingStart(&start), "cuptiPmSamplingStart");
    s.running = true;
    // Measured on the H200: the first regular sample begins about 0.5 ms after the start (the
    // one before spans the set-up); wait so that work started now is sampled from its beginning.
    std::this_thread::sleep_for(
        std::min<std::chrono::nanoseconds>(start_latency + std::chrono::nanoseconds(10 * s.interval_ns), max_start_wait));
  } catch (const cupti_failure& e) {
    s.stop_and_disable();
    s.fail(e.what());
  }
}

void pm_sampler::poll() {
  if (!started()) return;
  impl& s = *impl_;
  try {
    s.decode_once();
  } catch (const cupti_failure& e) {
    s.stop_and_disable();
    s.fail(e.what());
  }
}

pm_timeline pm_sampler::stop() {
  if (!started()) return {};
  impl& s = *impl_;
  pm_timeline out;
  try {
    auto p = params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
    p.pPmSamplingObject = s.object;
    s.running = false;
    check(cuptiPmSamplingStop(&p), "cuptiPmSamplingStop");
    s.drain();
    out = std::move(s.pending);
    s.stop_and_disable();
  } catch (const cupti_failure& e) {
    s.stop_and_disable();
    s.fail(e.what());
    return {};
  }
  std::sort(out.samples.begin(), out.samples.end(),
            [](const pm_sample& a, const pm_sample& b) { return a.start_ns < b.start_ns; });
  return out;
}

pm_timeline pm_sampler::sample(const std::function<void()>& work) {
  if (!available()) {
    work();
    return {};
  }
  start();
  try {
    work();
  } catch (...) {  // stop sampling, then let the caller's exception through
    (void)stop();
    throw;
  }
  return stop();
}

}  // namespace cdpkit::profiling
