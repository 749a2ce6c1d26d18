// Host side of the device launch layer: allocation of the device state, configuration of the
// device runtime's pending launch limit (with headroom above the budget), trace reset and
// snapshot, device error flags, and the diagnosis the watchdog prints.

#include <cdpkit/detail/enum_names.hpp>
#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/wait.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <chrono>
#include <thread>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit {

namespace {

std::string describe_device_errors(std::uint32_t flags) {
  std::string what = "device error flags raised:";
  if (flags & device_error_bad_segment) what += " bad_segment (a segment has end < start);";
  if (flags & device_error_bad_site) what += " bad_site (a site id >= trace_limits::max_sites);";
  if (flags & device_error_pending_underflow)
    what += " pending_underflow (the pending budget went negative: a launch layer bug);";
  if (flags & device_error_slot_probe_exhausted)
    what += " slot_probe_exhausted (no free completion slot although the budget had room: a"
            " launch layer bug; the work was done inline);";
  if (flags & device_error_item_overflow)
    what += " item_overflow (the segments hold 2^32 or more items in all; flat_balanced indexes"
            " items in 32 bits and refused the items; pre_op had run);";
  if (flags & device_error_queue_overflow)
    what += " queue_overflow (a device work queue sized for the worst case was full: a library"
            " bug; the result is wrong);";
  if (flags & device_error_probe_values)
    what += " probe_values (warp_probe::steps_two_valued saw three trip counts or more among lanes that called together:"
            " that loop was not counted; use steps());";
  const std::uint32_t known = device_error_bad_segment | device_error_bad_site |
                              device_error_pending_underflow | device_error_slot_probe_exhausted |
                              device_error_item_overflow | device_error_queue_overflow |
                              device_error_probe_values;
  if (flags & ~known) what += " unknown bits 0x" + std::to_string(flags & ~known) + ";";
  return what;
}

constexpr stream_kind stream_kinds[] = {stream_kind::fire_and_forget,
                                        stream_kind::named_per_thread, stream_kind::null_stream,
                                        stream_kind::tail};

/// The device-wide pending launch limit is shared by every runtime of the process: each runtime
/// registers what it needs (a minimum, or an exact value it was configured with), and the device
/// gets the latest exact value if any, else the largest minimum (never below the device's value
/// before the first runtime). When the last runtime goes, the original value comes back.
class limit_registry {
 public:
  static limit_registry& instance() {
    // Never destroyed: runtimes held in statics (default_runtime) release their need at exit,
    // after function-local statics made later would already be gone.
    static limit_registry* r = new limit_registry;
    return *r;
  }
  /// Register a need; returns its id. Applies the resulting limit to the device.
  int acquire(int value, bool exact) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.empty()) {
      std::size_t current = 0;
      CDPKIT_CUDA_TRY(cudaDeviceGetLimit(&current, cudaLimitDevRuntimePendingLaunchCount));
      original_ = static_cast<int>(current);
    }
    entries_.push_back({next_id_, value, exact});
    try {
      apply();
    } catch (...) {
      entries_.pop_back();
      throw;
    }
    return next_id_++;
  }
  /// Forget a need; with apply_now, set the device's limit to what the others need (not after
  /// a watchdog timeout: the call could block on the stuck work).
  void release(int id, bool apply_now) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [id](const entry& e) { return e.id == id; }),
                   entries_.end());
    if (!apply_now) return;
    try {
      apply();
    } catch (...) {
      // a destructor cannot report; the limit stays as it is
    }
  }

 private:
  struct entry {
    int id;
    int value;
    bool exact;
  };
  void apply() {
    int target = original_;
    bool have_exact = false;
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
      if (it->exact) {
        target = it->value;
        have_exact = true;
        break;
      }
    if (!have_exact)
      for (const entry& e : entries_) target = std::max(target, e.value);
    std::size_t current = 0;
    CDPKIT_CUDA_TRY(cudaDeviceGetLimit(&current, cudaLimitDevRuntimePendingLaunchCount));
    if (static_cast<int>(current) != target)
      CDPKIT_CUDA_TRY(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                         static_cast<std::size_t>(target)));
  }
  std::mutex mutex_;
  std::vector<entry> entries_;
  int original_ = 0;
  int next_id_ = 1;
};

}  // namespace

void require_cuda_device() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw no_device_error(e, std::string("no CUDA device found (") + cudaGetErrorName(e) + ": " +
                                 cudaGetErrorString(e) + ")");
  }
  if (count == 0) throw no_device_error(cudaErrorNoDevice, "no CUDA device found");
}

namespace detail {

/// Launch device_clock_kernel on `stream`, writing %globaltimer to `*out` (device_clock.cu).
cudaError_t launch_device_clock(unsigned long long* out, cudaStream_t stream) noexcept;

/// The runtime's entry in the device-wide limit registry, given back when the runtime goes (the
/// device's limit is not touched after a watchdog timeout: the call could block on the stuck work).
struct limit_lease {
  int id = 0;
  limit_lease() = default;
  limit_lease(const limit_lease&) = delete;
  limit_lease& operator=(const limit_lease&) = delete;
  ~limit_lease() {
    if (id != 0) limit_registry::instance().release(id, !device_unresponsive());
  }
};

/// Where the completion slots begin in the books' block (after the state, 256-byte aligned).
inline constexpr std::size_t books_slots_at = (sizeof(launch_state) + 255) / 256 * 256;

/// Everything a runtime owns on the device and the host, each in an owning pointer
/// (cdpkit/detail/unique_device_ptr.hpp): freed when the runtime goes, except after a watchdog
/// timeout, when frees would block on the stuck work and the memory is left to the process exit.
/// Members are destroyed bottom-up: the limit is given back first, then the device memory, the
/// stream and the pinned memory.
struct runtime_storage {
  // The mirror the device writes at its rare events (mapped pinned memory): readable while the
  // device is stuck, when even a copy on another stream may not complete.
  unique_pinned_ptr<std::uint32_t[]> h_mirror_slots;
  unique_pinned_ptr<launch_mirror> h_mirror;
  unique_pinned_ptr<unsigned long long> h_clock;  ///< read_device_clock's word (mapped)
  // The watchdog's window on the state: a non-blocking stream and pinned host copies.
  unique_pinned_ptr<trace_totals> h_totals;
  unique_pinned_ptr<site_counters[]> h_sites;
  unique_pinned_ptr<probe_counters[]> h_probes;  ///< the striped counters, for diagnose()
  unique_pinned_ptr<launch_state> h_state;
  // check_device_errors' copy of the books (state, then slots, laid out as in d_books): pinned,
  // read back in one copy.
  unique_pinned_ptr<unsigned char[]> h_books;
  unique_stream diag_stream;
  // The device state. The books are one block: the state, then (at books_slots_at) the
  // completion slots.
  unique_device_ptr<unsigned char[]> d_books;
  launch_state* d_state = nullptr;
  std::uint32_t* d_slots = nullptr;
  unique_device_ptr<std::uint32_t[]> d_slot_owner;
  unique_device_ptr<site_counters[]> d_sites;
  unique_device_ptr<unsigned long long[]> d_single_steps;
  unique_device_ptr<probe_counters[]> d_probes;
  unique_device_ptr<trace_totals> d_totals;
  unique_device_ptr<launch_record[]> d_records;
  limit_lease limit;
  // The synchronous algorithm calls' scratch (launch_runtime::workspace): grows, never shrinks.
  unique_device_ptr<unsigned char[]> workspace;
  std::size_t workspace_bytes = 0;
};

}  // namespace detail

// The names are the profile's (cdpkit/trace_format.hpp): defined once, there.
const char* to_string(stream_kind kind) noexcept { return schema::name(kind); }

const char* to_string(launch_outcome outcome) noexcept { return schema::name(outcome); }

stream_kind parse_stream_kind(const std::string& name) {
  return detail::parse_enum_name(name, "stream kind", stream_kinds);
}

namespace {

/// The budget a configuration asks for before the device is asked anything: the given one, or
/// the default (safe_pending_fraction of an explicit limit, else default_pending_budget).
int requested_budget(const launch_config& config) {
  if (config.pending_budget > 0) return config.pending_budget;
  if (config.pending_launch_limit > 0)
    return safe_pending_budget(config.pending_launch_limit);
  return default_pending_budget;
}

}  // namespace

void check_launch_config(const launch_config& config) {
  if (config.pending_launch_limit < 0)
    throw input_error("launch_config::pending_launch_limit must be >= 0, got " +
                      std::to_string(config.pending_launch_limit));
  if (config.pending_budget < 0)
    throw input_error("launch_config::pending_budget must be >= 0, got " +
                      std::to_string(config.pending_budget));
  if (config.max_depth < 0 || config.max_depth > 65535)
    throw input_error("launch_config::max_depth must be in [0, 65535], got " +
                      std::to_string(config.max_depth));
  // The budget and the device limit it needs (see safe_pending_fraction).
  const int budget = requested_budget(config);
  if (config.pending_launch_limit > 0) {
    const int safe = safe_pending_budget(config.pending_launch_limit);
    if (budget > safe && !config.allow_unsafe_budget)
      throw input_error("launch_config::pending_budget " + std::to_string(budget) +
                        " leaves no headroom below pending_launch_limit " +
                        std::to_string(config.pending_launch_limit) + " (at most " +
                        std::to_string(safe) +
                        ": the device runtime can stall at its limit; leave the limit at 0 to"
                        " have it raised, or set allow_unsafe_budget)");
  } else if (std::ceil(budget / safe_pending_fraction) > 1e8) {
    throw input_error("launch_config::pending_budget " + std::to_string(budget) +
                      " is too large (the device limit it needs would exceed 10^8)");
  }
}

launch_runtime::launch_runtime(launch_config config) : config_(config) {
  check_launch_config(config);
  pending_budget_ = requested_budget(config);
  const double needed = std::ceil(pending_budget_ / safe_pending_fraction);

  require_cuda_device();
  auto storage = std::make_unique<detail::runtime_storage>();
  storage->limit.id =
      config.pending_launch_limit > 0
          ? limit_registry::instance().acquire(config.pending_launch_limit, /*exact=*/true)
          : limit_registry::instance().acquire(static_cast<int>(needed), /*exact=*/false);
  std::size_t limit = 0;
  CDPKIT_CUDA_TRY(cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount));
  pending_launch_limit_ = static_cast<int>(limit);
  if (config.pending_launch_limit == 0 && pending_launch_limit_ < needed) {
    // Another live runtime set an exact (lower) limit: keep the headroom by lowering the budget.
    pending_budget_ = safe_pending_budget(pending_launch_limit_);
  }

  // The algorithms take their scratch from the device's default stream-ordered pool. With its
  // default release threshold (0) every synchronization hands freed memory back to the driver and
  // the next level of a BFS pays to map it again; keep it for reuse instead.
  int device = 0;
  CDPKIT_CUDA_TRY(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  CDPKIT_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t keep = ~0ull;
  CDPKIT_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));

  detail::runtime_storage& st = *storage;
  const auto slots = static_cast<std::size_t>(pending_budget_);
  const std::size_t books_bytes = detail::books_slots_at + sizeof(std::uint32_t) * slots;
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(st.d_books), books_bytes));
  st.d_state = reinterpret_cast<launch_state*>(st.d_books.get());
  st.d_slots = reinterpret_cast<std::uint32_t*>(st.d_books.get() + detail::books_slots_at);
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(st.d_slot_owner), sizeof(std::uint32_t) * slots));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(st.d_sites), sizeof(site_counters) * trace_limits::max_sites));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(st.d_single_steps), sizeof(unsigned long long) * single_step_entries));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(st.d_probes), sizeof(probe_counters) * probe_entries));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(st.d_totals), sizeof(trace_totals)));
  if (config.trace_record_capacity > 0)
    CDPKIT_CUDA_TRY(
        cudaMalloc(detail::out_ptr(st.d_records), sizeof(launch_record) * config.trace_record_capacity));
  {
    cudaStream_t diag = nullptr;
    CDPKIT_CUDA_TRY(cudaStreamCreateWithFlags(&diag, cudaStreamNonBlocking));
    st.diag_stream.reset(diag);
  }
  CDPKIT_CUDA_TRY(cudaMallocHost(detail::out_ptr(st.h_state), sizeof(launch_state)));
  CDPKIT_CUDA_TRY(cudaMallocHost(detail::out_ptr(st.h_books), books_bytes));
  CDPKIT_CUDA_TRY(cudaMallocHost(detail::out_ptr(st.h_sites), sizeof(site_counters) * trace_limits::max_sites));
  CDPKIT_CUDA_TRY(cudaMallocHost(detail::out_ptr(st.h_totals), sizeof(trace_totals)));
  CDPKIT_CUDA_TRY(cudaMallocHost(detail::out_ptr(st.h_probes), sizeof(probe_counters) * probe_entries));
  CDPKIT_CUDA_TRY(cudaHostAlloc(detail::out_ptr(st.h_mirror), sizeof(launch_mirror), cudaHostAllocMapped));
  CDPKIT_CUDA_TRY(
      cudaHostAlloc(detail::out_ptr(st.h_mirror_slots), sizeof(std::uint32_t) * slots, cudaHostAllocMapped));
  CDPKIT_CUDA_TRY(cudaHostAlloc(detail::out_ptr(st.h_clock), sizeof(unsigned long long), cudaHostAllocMapped));
  *st.h_clock = 0;
  std::memset(st.h_mirror.get(), 0, sizeof(launch_mirror));
  std::memset(st.h_mirror_slots.get(), 0, sizeof(std::uint32_t) * slots);
  launch_mirror* d_mirror = nullptr;
  std::uint32_t* d_mirror_slots = nullptr;
  CDPKIT_CUDA_TRY(cudaHostGetDevicePointer(&d_mirror, st.h_mirror.get(), 0));
  CDPKIT_CUDA_TRY(cudaHostGetDevicePointer(&d_mirror_slots, st.h_mirror_slots.get(), 0));
  launch_state h{};
  h.pending = 0;
  h.pending_budget = pending_budget_;
  h.max_depth = config.max_depth;
  h.error_flags = 0;
  h.slot_count = static_cast<std::uint32_t>(pending_budget_);
  h.record_capacity = config.trace_record_capacity;
  h.serialize_warp_launches = config.serialize_warp_launches ? 1u : 0u;
  h.record_refusals = config.record_refusals ? 1u : 0u;
  static_assert(trace_limits::max_sites <= 64, "launch_config::refused_sites holds one bit per site");
  h.refused_sites = config.refused_sites;
  h.slots = st.d_slots;
  h.slot_owner = st.d_slot_owner.get();  // written at each launch before use
  h.sites = st.d_sites.get();
  h.single_steps = st.d_single_steps.get();
  h.probes = st.d_probes.get();
  h.totals = st.d_totals.get();
  h.records = st.d_records.get();
  h.launches = 0;
  h.mirror = d_mirror;
  h.mirror_slots = d_mirror_slots;
  CDPKIT_CUDA_TRY(cudaMemcpy(st.d_state, &h, sizeof(h), cudaMemcpyHostToDevice));
  CDPKIT_CUDA_TRY(cudaMemset(st.d_slots, 0, sizeof(std::uint32_t) * slots));
  storage_ = std::move(storage);
  reset_trace();
}

void* launch_runtime::workspace(std::size_t bytes) {
  detail::runtime_storage& st = *storage_;
  if (bytes > st.workspace_bytes) {
    // Rare (the sizes follow the inputs): a whole MiB more than asked, so that slightly larger
    // inputs do not grow it again. cudaFree synchronizes the device: a watched wait goes first
    // (every host wait has a deadline), and a device that did not answer keeps the old block.
    constexpr std::size_t mib = std::size_t{1} << 20;
    if (bytes > std::numeric_limits<std::size_t>::max() - mib)
      throw input_error("launch_runtime::workspace: " + std::to_string(bytes) + " bytes asked for");
    const std::size_t grown = (bytes / mib + 1) * mib;
    if (st.workspace) {
      wait_for_device("launch_runtime::workspace (growing)", this, __FILE__, __LINE__);
      st.workspace.reset();
      st.workspace_bytes = 0;
    }
    require_device_memory(grown, "launch_runtime::workspace (" + std::to_string(grown) + " bytes)");
    CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(st.workspace), grown));
    st.workspace_bytes = grown;
  }
  return st.workspace.get();
}

std::size_t launch_runtime::workspace_bytes() const noexcept { return storage_->workspace_bytes; }

void launch_runtime::abandon_workspace() noexcept {
  detail::runtime_storage& st = *storage_;
  (void)st.workspace.release();  // (never freed: work that may still use it did not finish)
  st.workspace_bytes = 0;
}

launch_runtime::~launch_runtime() = default;
launch_runtime::launch_runtime(launch_runtime&& other) noexcept = default;
launch_runtime& launch_runtime::operator=(launch_runtime&& other) noexcept = default;

launch_context launch_runtime::root_context() const noexcept {
  return launch_context{storage_ ? storage_->d_state : nullptr, no_record, no_slot, 0, sites::root,
                        static_cast<std::uint8_t>(tracing_ ? 1 : 0), {0, 0, 0}};
}

void launch_runtime::reset_trace() {
  wait_for_device("launch_runtime::reset_trace", this, __FILE__, __LINE__);
  detail::runtime_storage& st = *storage_;
  int pending = 0;
  CDPKIT_CUDA_TRY(cudaMemcpy(&pending, &st.d_state->pending, sizeof(int), cudaMemcpyDeviceToHost));
  if (pending != 0)
    throw input_error("launch_runtime::reset_trace: " + std::to_string(pending) +
                      " children still counted as pending; reset only between runs");
  CDPKIT_CUDA_TRY(cudaMemset(st.d_sites.get(), 0, sizeof(site_counters) * trace_limits::max_sites));
  CDPKIT_CUDA_TRY(cudaMemset(st.d_single_steps.get(), 0, sizeof(unsigned long long) * single_step_entries));
  CDPKIT_CUDA_TRY(cudaMemset(st.d_probes.get(), 0, sizeof(probe_counters) * probe_entries));
  CDPKIT_CUDA_TRY(cudaMemset(st.d_totals.get(), 0, sizeof(trace_totals)));
  CDPKIT_CUDA_TRY(cudaMemset(&st.d_state->error_flags, 0, sizeof(std::uint32_t)));
}

void launch_runtime::check_device_errors(const char* file, int line) {
  wait_for_device("launch_runtime::check_device_errors", this, file, line);
  detail::runtime_storage& st = *storage_;
  const auto slots = static_cast<std::size_t>(pending_budget_);
  // the state and the slots in one copy (each host API call costs more under CUPTI, inside every
  // synchronous call's timed window)
  CDPKIT_CUDA_TRY(cudaMemcpy(st.h_books.get(), st.d_books.get(), detail::books_slots_at + sizeof(std::uint32_t) * slots,
                             cudaMemcpyDeviceToHost));
  launch_state h{};
  std::memcpy(&h, st.h_books.get(), sizeof(h));
  const std::uint32_t* const h_slots = reinterpret_cast<const std::uint32_t*>(st.h_books.get() + detail::books_slots_at);
  std::size_t occupied = 0, first_occupied = 0;
  for (std::size_t k = slots; k-- > 0;)
    if (h_slots[k] != 0) {
      ++occupied;
      first_occupied = k;
    }
  const bool unbalanced = h.pending != 0 || occupied != 0;
  if (h.error_flags != 0 || unbalanced) {
    // Clear everything first, so that the next run starts from balanced books either way.
    CDPKIT_CUDA_TRY(cudaMemset(&st.d_state->error_flags, 0, sizeof(std::uint32_t)));
    CDPKIT_CUDA_TRY(cudaMemset(&st.d_state->pending, 0, sizeof(int)));
    CDPKIT_CUDA_TRY(cudaMemset(st.d_slots, 0, sizeof(std::uint32_t) * slots));
    std::memset(st.h_mirror_slots.get(), 0, sizeof(std::uint32_t) * slots);
    st.h_mirror->pending = 0;
    std::string what;
    if (h.error_flags != 0) what = describe_device_errors(h.error_flags);
    if (unbalanced) {
      if (!what.empty()) what += " ";
      what += "launch layer: after the device synchronized, " + std::to_string(h.pending) +
              " children were still counted as pending and " + std::to_string(occupied) +
              " completion slots were occupied";
      if (occupied > 0)
        what += " (slot " + std::to_string(first_occupied) + " waits for " +
                std::to_string(h_slots[first_occupied]) +
                " units: its blocks and the grids it launched)";
      what += ": a child grid did not run to completion or a launch was miscounted; both were"
              " cleared";
    }
    throw cuda_error(what, file, line);
  }
  // Balanced: bring the host-visible mirror back to the exact books (its posted writes from
  // different SMs may have landed out of order).
  std::memset(st.h_mirror_slots.get(), 0, sizeof(std::uint32_t) * slots);
  st.h_mirror->pending = 0;
  st.h_mirror->launches = h.launches;
}

std::uint64_t launch_runtime::read_device_clock(cudaStream_t stream) const {
  const detail::runtime_storage& st = *storage_;
  unsigned long long* d_clock = nullptr;
  CDPKIT_CUDA_TRY(cudaHostGetDevicePointer(&d_clock, st.h_clock.get(), 0));
  *st.h_clock = 0;
  CDPKIT_CUDA_TRY(detail::launch_device_clock(d_clock, stream));
  wait_for_stream(stream, "launch_runtime::read_device_clock", this, __FILE__, __LINE__);
  return *static_cast<volatile unsigned long long*>(st.h_clock.get());
}

trace_snapshot launch_runtime::snapshot() const {
  wait_for_device("launch_runtime::snapshot", this, __FILE__, __LINE__);
  const detail::runtime_storage& st = *storage_;
  trace_snapshot snap;
  snap.sites.resize(trace_limits::max_sites);
  CDPKIT_CUDA_TRY(cudaMemcpy(snap.sites.data(), st.d_sites.get(),
                             sizeof(site_counters) * trace_limits::max_sites,
                             cudaMemcpyDeviceToHost));
  {
    std::vector<unsigned long long> single(single_step_entries);
    CDPKIT_CUDA_TRY(cudaMemcpy(single.data(), st.d_single_steps.get(), sizeof(unsigned long long) * single.size(),
                               cudaMemcpyDeviceToHost));
    detail::fold_single_steps(single.data(), snap.sites.data());
  }
  CDPKIT_CUDA_TRY(
      cudaMemcpy(&snap.totals, st.d_totals.get(), sizeof(trace_totals), cudaMemcpyDeviceToHost));
  const std::uint64_t reserved = snap.totals.records_requested;  // ids taken: records [0, reserved)
  {
    std::vector<probe_counters> probes(probe_entries);
    CDPKIT_CUDA_TRY(cudaMemcpy(probes.data(), st.d_probes.get(), sizeof(probe_counters) * probes.size(),
                               cudaMemcpyDeviceToHost));
    detail::fold_probes(probes.data(), snap.sites.data(), &snap.totals, config_.record_refusals);
  }
  const std::uint64_t stored = std::min<std::uint64_t>(reserved, config_.trace_record_capacity);
  snap.records.resize(stored);
  if (stored > 0)
    CDPKIT_CUDA_TRY(cudaMemcpy(snap.records.data(), st.d_records.get(), sizeof(launch_record) * stored,
                               cudaMemcpyDeviceToHost));
  snap.records_dropped = snap.totals.records_requested - stored;
  snap.refusals_recorded = config_.record_refusals;
  snap.pending_launch_limit = pending_launch_limit_;
  snap.pending_budget = pending_budget_;
  snap.max_depth = config_.max_depth;
  return snap;
}

std::string launch_runtime::diagnose() const noexcept {
  try {
    if (!storage_) return "Launch state: none (a moved-from runtime).";
    const detail::runtime_storage& st = *storage_;
    const auto slots = static_cast<std::size_t>(pending_budget_);
    // 1. The host-visible mirror: always readable.
    const auto* mirror = static_cast<const volatile launch_mirror*>(st.h_mirror.get());
    const auto* mirror_slots = static_cast<const volatile std::uint32_t*>(st.h_mirror_slots.get());
    std::string out = "Launch state (host-visible mirror): pending " +
                      std::to_string(mirror->pending) + " of budget " +
                      std::to_string(pending_budget_) + " (device pending-launch limit " +
                      std::to_string(pending_launch_limit_) + "); ";
    std::size_t occupied = 0;
    std::uint64_t blocks_left = 0;
    std::string examples;
    int shown = 0;
    for (std::size_t k = 0; k < slots; ++k) {
      const std::uint32_t b = mirror_slots[k];
      if (b == 0) continue;
      ++occupied;
      blocks_left += b;
      if (shown < 8) {
        examples += (shown ? ", " : "") + std::string("slot ") + std::to_string(k) + ": " +
                    std::to_string(b) + (b == 1 ? " block" : " blocks");
        ++shown;
      }
    }
    out += "occupied completion slots " + std::to_string(occupied) +
           " (children launched and not complete: their own blocks, or grids they launched, still"
           " running; " + std::to_string(blocks_left) + " blocks launched between them)";
    if (occupied > 0) out += " [" + examples + (occupied > 8 ? ", ..." : "") + "]";
    out += "; children launched so far " + std::to_string(mirror->launches);
    const unsigned long long last = mirror->last_event_ns;
    const auto now_ns = static_cast<unsigned long long>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count());
    // %globaltimer runs on the host's clock on current drivers; say so only when plausible.
    if (last > 0 && now_ns >= last && now_ns - last < 86400ull * 1000000000ull) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "; the last launch or child end was %.1f s ago",
                    static_cast<double>(now_ns - last) / 1e9);
      out += buf;
    }
    out += ". ";

    // 2. The device's own counters, over a separate stream, if the device answers.
    bool ok = cudaMemcpyAsync(st.h_state.get(), st.d_state, sizeof(launch_state),
                              cudaMemcpyDeviceToHost, st.diag_stream.get()) == cudaSuccess;
    ok = ok && cudaMemcpyAsync(st.h_sites.get(), st.d_sites.get(),
                               sizeof(site_counters) * trace_limits::max_sites,
                               cudaMemcpyDeviceToHost, st.diag_stream.get()) == cudaSuccess;
    ok = ok && cudaMemcpyAsync(st.h_totals.get(), st.d_totals.get(), sizeof(trace_totals),
                               cudaMemcpyDeviceToHost, st.diag_stream.get()) == cudaSuccess;
    ok = ok && cudaMemcpyAsync(st.h_probes.get(), st.d_probes.get(), sizeof(probe_counters) * probe_entries,
                               cudaMemcpyDeviceToHost, st.diag_stream.get()) == cudaSuccess;
    if (!ok) {
      const cudaError_t e = cudaGetLastError();
      return out + "Device counters: unreadable (" + cudaGetErrorName(e) + ").";
    }
    const auto start = std::chrono::steady_clock::now();
    cudaError_t q;
    while ((q = cudaStreamQuery(st.diag_stream.get())) == cudaErrorNotReady) {
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(2))
        return out + "Device counters: unreadable (a copy on another stream did not finish "
                     "within 2 s: the device itself is stuck, not only this work).";
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (q != cudaSuccess) {
      (void)cudaGetLastError();
      return out + "Device counters: unreadable (" + cudaGetErrorName(q) + ").";
    }
    const launch_state& h = *st.h_state.get();
    // the requests' counts are striped by SM (launch_state::probes): summed here
    trace_totals totals = *st.h_totals;
    std::vector<site_counters> sites(st.h_sites.get(), st.h_sites.get() + trace_limits::max_sites);
    detail::fold_probes(st.h_probes.get(), sites.data(), &totals, config_.record_refusals);
    char flags[16];
    std::snprintf(flags, sizeof flags, "0x%x", h.error_flags);
    out += "Device counters: pending " + std::to_string(h.pending) + ", launched " +
           std::to_string(h.launches) + ", error flags " + flags + "; trace " +
           (tracing_ ? "on" : "off") + ", records requested " +
           std::to_string(totals.records_requested) + ", pending high water " +
           std::to_string(totals.pending_high_water);
    std::string sites_text;
    for (int id = 0; id < trace_limits::max_sites; ++id) {
      const site_counters& c = sites[static_cast<std::size_t>(id)];
      if (c.requests == 0 && c.probe_steps == 0) continue;
      sites_text += "; " + sites::site_name(static_cast<std::uint16_t>(id)) + ": requests " +
                    std::to_string(c.requests) + ", launched " + std::to_string(c.outcomes[0]) +
                    ", fallback budget/depth/error " + std::to_string(c.outcomes[1]) + "/" +
                    std::to_string(c.outcomes[2]) + "/" + std::to_string(c.outcomes[3]);
    }
    out += sites_text.empty() ? std::string("; no per-site counts") +
                                    (tracing_ ? "" : " (the trace is off in this run)")
                              : sites_text;
    out += ".";
    return out;
  } catch (...) {
    return "Launch state: unreadable (an exception while formatting).";
  }
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
