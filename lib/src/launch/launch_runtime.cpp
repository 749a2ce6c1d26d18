// Host side of the device launch layer: allocation of the device state, configuration of the
// device runtime's pending launch limit, trace reset and snapshot, device error flags.

#include <cdpkit/detail/enum_names.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

namespace cdpkit {

namespace {

std::string describe_device_errors(std::uint32_t flags) {
  std::string what = "device error flags raised:";
  if (flags & device_error_bad_segment) what += " bad_segment (a segment has end < start);";
  if (flags & device_error_bad_site) what += " bad_site (a site id >= trace_limits::max_sites);";
  if (flags & device_error_pending_underflow)
    what += " pending_underflow (the pending budget went negative: a launch layer bug);";
  const std::uint32_t known =
      device_error_bad_segment | device_error_bad_site | device_error_pending_underflow;
  if (flags & ~known) what += " unknown bits 0x" + std::to_string(flags & ~known) + ";";
  return what;
}

constexpr stream_kind stream_kinds[] = {stream_kind::fire_and_forget,
                                        stream_kind::named_per_thread, stream_kind::null_stream,
                                        stream_kind::tail};

}  // namespace

const char* to_string(stream_kind kind) noexcept {
  switch (kind) {
    case stream_kind::fire_and_forget: return "fire_and_forget";
    case stream_kind::named_per_thread: return "named_per_thread";
    case stream_kind::null_stream: return "null_stream";
    case stream_kind::tail: return "tail";
  }
  return "unknown";
}

const char* to_string(launch_outcome outcome) noexcept {
  switch (outcome) {
    case launch_outcome::launched: return "launched";
    case launch_outcome::fallback_budget: return "fallback_budget";
    case launch_outcome::fallback_depth: return "fallback_depth";
    case launch_outcome::fallback_error: return "fallback_error";
  }
  return "unknown";
}

stream_kind parse_stream_kind(const std::string& name) {
  return detail::parse_enum_name(name, "stream kind", stream_kinds);
}

launch_runtime::launch_runtime(launch_config config) : config_(config) {
  if (config.pending_launch_limit < 0)
    throw input_error("launch_config::pending_launch_limit must be >= 0, got " +
                      std::to_string(config.pending_launch_limit));
  if (config.pending_budget < 0)
    throw input_error("launch_config::pending_budget must be >= 0, got " +
                      std::to_string(config.pending_budget));
  if (config.max_depth < 0 || config.max_depth > 65535)
    throw input_error("launch_config::max_depth must be in [0, 65535], got " +
                      std::to_string(config.max_depth));
  std::size_t previous = 0;
  CDPKIT_CUDA_TRY(cudaDeviceGetLimit(&previous, cudaLimitDevRuntimePendingLaunchCount));
  previous_launch_limit_ = static_cast<int>(previous);
  if (config.pending_launch_limit > 0) {
    CDPKIT_CUDA_TRY(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                       static_cast<std::size_t>(config.pending_launch_limit)));
  }
  std::size_t limit = 0;
  CDPKIT_CUDA_TRY(cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount));
  pending_launch_limit_ = static_cast<int>(limit);
  pending_budget_ = config.pending_budget > 0 ? config.pending_budget : pending_launch_limit_;
  if (pending_budget_ < 1) pending_budget_ = 1;

  // The algorithms take their scratch from the device's default stream-ordered pool. With its
  // default release threshold (0) every synchronization hands freed memory back to the driver and
  // the next level of a BFS pays to map it again; keep it for reuse instead.
  int device = 0;
  CDPKIT_CUDA_TRY(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  CDPKIT_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t keep = ~0ull;
  CDPKIT_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));

  try {
    CDPKIT_CUDA_TRY(cudaMalloc(&d_state_, sizeof(launch_state)));
    CDPKIT_CUDA_TRY(cudaMalloc(&d_slots_, sizeof(std::uint32_t) * pending_budget_));
    CDPKIT_CUDA_TRY(cudaMalloc(&d_sites_, sizeof(site_counters) * trace_limits::max_sites));
    CDPKIT_CUDA_TRY(cudaMalloc(&d_totals_, sizeof(trace_totals)));
    if (config.trace_record_capacity > 0)
      CDPKIT_CUDA_TRY(
          cudaMalloc(&d_records_, sizeof(launch_record) * config.trace_record_capacity));
    launch_state h{};
    h.pending = 0;
    h.pending_budget = pending_budget_;
    h.max_depth = config.max_depth;
    h.error_flags = 0;
    h.slot_count = static_cast<std::uint32_t>(pending_budget_);
    h.record_capacity = config.trace_record_capacity;
    h.slots = d_slots_;
    h.sites = d_sites_;
    h.totals = d_totals_;
    h.records = d_records_;
    CDPKIT_CUDA_TRY(cudaMemcpy(d_state_, &h, sizeof(h), cudaMemcpyHostToDevice));
    CDPKIT_CUDA_TRY(cudaMemset(d_slots_, 0, sizeof(std::uint32_t) * pending_budget_));
    reset_trace();
  } catch (...) {
    release();
    throw;
  }
}

launch_runtime::~launch_runtime() { release(); }

launch_runtime::launch_runtime(launch_runtime&& other) noexcept
    : config_(other.config_),
      previous_launch_limit_(other.previous_launch_limit_),
      pending_launch_limit_(other.pending_launch_limit_),
      pending_budget_(other.pending_budget_),
      tracing_(other.tracing_),
      d_state_(std::exchange(other.d_state_, nullptr)),
      d_slots_(std::exchange(other.d_slots_, nullptr)),
      d_sites_(std::exchange(other.d_sites_, nullptr)),
      d_totals_(std::exchange(other.d_totals_, nullptr)),
      d_records_(std::exchange(other.d_records_, nullptr)) {}

launch_runtime& launch_runtime::operator=(launch_runtime&& other) noexcept {
  if (this != &other) {
    release();
    config_ = other.config_;
    previous_launch_limit_ = other.previous_launch_limit_;
    pending_launch_limit_ = other.pending_launch_limit_;
    pending_budget_ = other.pending_budget_;
    tracing_ = other.tracing_;
    d_state_ = std::exchange(other.d_state_, nullptr);
    d_slots_ = std::exchange(other.d_slots_, nullptr);
    d_sites_ = std::exchange(other.d_sites_, nullptr);
    d_totals_ = std::exchange(other.d_totals_, nullptr);
    d_records_ = std::exchange(other.d_records_, nullptr);
  }
  return *this;
}

void launch_runtime::release() noexcept {
  if (d_state_ == nullptr) return;  // moved from, or never allocated
  // cudaFree synchronizes; errors here cannot be reported from a destructor.
  (void)cudaFree(d_records_);
  (void)cudaFree(d_totals_);
  (void)cudaFree(d_sites_);
  (void)cudaFree(d_slots_);
  (void)cudaFree(d_state_);
  d_state_ = nullptr;
  d_slots_ = nullptr;
  d_sites_ = nullptr;
  d_totals_ = nullptr;
  d_records_ = nullptr;
  if (config_.pending_launch_limit > 0 && previous_launch_limit_ > 0 &&
      previous_launch_limit_ != pending_launch_limit_) {
    (void)cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                             static_cast<std::size_t>(previous_launch_limit_));
  }
}

launch_context launch_runtime::root_context() const noexcept {
  return launch_context{d_state_, no_record, no_slot, 0, sites::root,
                        static_cast<std::uint8_t>(tracing_ ? 1 : 0), {0, 0, 0}};
}

void launch_runtime::reset_trace() {
  CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  int pending = 0;
  CDPKIT_CUDA_TRY(cudaMemcpy(&pending, &d_state_->pending, sizeof(int), cudaMemcpyDeviceToHost));
  if (pending != 0)
    throw input_error("launch_runtime::reset_trace: " + std::to_string(pending) +
                      " children still counted as pending; reset only between runs");
  CDPKIT_CUDA_TRY(cudaMemset(d_sites_, 0, sizeof(site_counters) * trace_limits::max_sites));
  CDPKIT_CUDA_TRY(cudaMemset(d_totals_, 0, sizeof(trace_totals)));
  CDPKIT_CUDA_TRY(cudaMemset(&d_state_->error_flags, 0, sizeof(std::uint32_t)));
}

void launch_runtime::check_device_errors(const char* file, int line) {
  CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  launch_state h{};
  CDPKIT_CUDA_TRY(cudaMemcpy(&h, d_state_, sizeof(h), cudaMemcpyDeviceToHost));
  if (h.error_flags != 0) {
    CDPKIT_CUDA_TRY(cudaMemset(&d_state_->error_flags, 0, sizeof(std::uint32_t)));
    throw cuda_error(describe_device_errors(h.error_flags), file, line);
  }
  if (h.pending != 0) {
    const int pending = h.pending;
    CDPKIT_CUDA_TRY(cudaMemset(&d_state_->pending, 0, sizeof(int)));
    CDPKIT_CUDA_TRY(cudaMemset(d_slots_, 0, sizeof(std::uint32_t) * pending_budget_));
    throw cuda_error("launch layer: " + std::to_string(pending) +
                         " children still pending after the device synchronized (a child grid"
                         " did not run to completion)",
                     file, line);
  }
}

trace_snapshot launch_runtime::snapshot() const {
  CDPKIT_CUDA_TRY(cudaDeviceSynchronize());
  trace_snapshot snap;
  snap.sites.resize(trace_limits::max_sites);
  CDPKIT_CUDA_TRY(cudaMemcpy(snap.sites.data(), d_sites_,
                             sizeof(site_counters) * trace_limits::max_sites,
                             cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaMemcpy(&snap.totals, d_totals_, sizeof(trace_totals), cudaMemcpyDeviceToHost));
  const std::uint64_t stored =
      std::min<std::uint64_t>(snap.totals.records_requested, config_.trace_record_capacity);
  snap.records.resize(stored);
  if (stored > 0)
    CDPKIT_CUDA_TRY(cudaMemcpy(snap.records.data(), d_records_, sizeof(launch_record) * stored,
                               cudaMemcpyDeviceToHost));
  snap.records_dropped = snap.totals.records_requested - stored;
  snap.pending_launch_limit = pending_launch_limit_;
  snap.pending_budget = pending_budget_;
  snap.max_depth = config_.max_depth;
  return snap;
}

namespace {
std::unique_ptr<launch_runtime>& default_runtime_slot() {
  static std::unique_ptr<launch_runtime> runtime;
  return runtime;
}
}  // namespace

launch_runtime& default_runtime() {
  auto& slot = default_runtime_slot();
  if (!slot) slot = std::make_unique<launch_runtime>();
  return *slot;
}

launch_runtime& reset_default_runtime(launch_config config) {
  auto& slot = default_runtime_slot();
  slot.reset();
  slot = std::make_unique<launch_runtime>(config);
  return *slot;
}

}  // namespace cdpkit
