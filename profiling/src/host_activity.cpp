// CUPTI's activity API on the host timeline (cdpkit/profiling/host_activity.hpp).
//
// Construction: detail::require_current_device() (first, so that without a GPU the reason is
// "no CUDA device to profile (...)"). start(): claim the process-wide registry (one started
// collector at a time), cuptiActivityRegisterCallbacks (once per process), reset CUPTI's
// dropped-record count, cuptiActivityEnable for CONCURRENT_KERNEL, MEMCPY and MEMSET, and a
// 4-byte memset of its own that takes part of CUPTI's set-up cost (absorb_enable_cost). CUPTI then
// asks for buffers (on_buffer_requested: at most max_outstanding_buffers of buffer_bytes, null
// once the cap is reached, so CUPTI drops records and counts them) and hands them back filled
// (on_buffer_completed, often on CUPTI's own thread: parsed into the started collector's log and
// freed at once). stop(): cuptiActivityFlushAll(FORCED), cuptiActivityDisable for each kind, a
// second forced flush for what came in between, cuptiActivityGetNumDroppedRecords, release the
// registry. Every CUPTI failure is caught and turns the collector unavailable with the call's
// name and CUPTI's message.
//
// Record layouts: the latest versions the CUDA 13 headers define for the three kinds
// (CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4); CUPTI fills the version
// of the headers the library shipped with.

#include <cdpkit/profiling/host_activity.hpp>

#include "cupti_support.hpp"

#include <cdpkit/error.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_activity.h>
#include <cupti_result.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

namespace cdpkit::profiling {

using detail::check;
using detail::cupti_failure;

namespace {

/// Bytes of one activity buffer handed to CUPTI.
constexpr std::size_t buffer_bytes = std::size_t{4} << 20;
/// Buffers handed to CUPTI and not yet handed back, at most; beyond, CUPTI gets none (and drops).
constexpr std::size_t max_outstanding_buffers = 64;
/// CUPTI's activity records are 8-byte aligned in their buffer.
constexpr std::size_t buffer_alignment = 8;

/// The kinds recorded, with the call names a failure reports.
struct recorded_kind {
  CUpti_ActivityKind kind;
  const char* enable_call;
  const char* disable_call;
};
constexpr recorded_kind recorded_kinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)",
     "cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY)",
     "cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY)"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET)",
     "cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET)"},
};

/// Frees a buffer from allocate_buffer().
struct buffer_free {
  void operator()(std::uint8_t* p) const noexcept {
    ::operator delete(p, std::align_val_t{buffer_alignment});
  }
};
using buffer_ptr = std::unique_ptr<std::uint8_t[], buffer_free>;

/// A buffer of buffer_bytes, aligned for CUPTI; null when memory is short.
buffer_ptr allocate_buffer() noexcept {
  return buffer_ptr(static_cast<std::uint8_t*>(
      ::operator new(buffer_bytes, std::align_val_t{buffer_alignment}, std::nothrow)));
}

/// Where a started collector's records go (inside its impl; guarded by the registry's mutex).
struct sink {
  std::size_t max_records = 0;
  host_activity_log log;

  [[nodiscard]] bool full() const noexcept {
    return log.kernels.size() + log.transfers.size() >= max_records;
  }
};

/// The process-wide state CUPTI's buffer callbacks reach: the started collector's sink and the
/// buffers CUPTI holds.
struct registry {
  std::mutex mutex;
  sink* active = nullptr;  ///< the started collector's, or none
  std::unordered_map<std::uint8_t*, buffer_ptr> outstanding;
};

/// The registry, never destroyed: CUPTI may hand a buffer back while the process exits, after
/// static destructors have run. (Buffers CUPTI still holds then are the only ones not freed.)
registry& the_registry() {
  static registry* const r = new registry();
  return *r;
}

/// cuptiActivityRegisterCallbacks, once per process (a failed attempt is retried next start()).
std::mutex registration_mutex;
bool callbacks_registered = false;

const char* copy_kind_name(std::uint8_t kind) noexcept {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "other";
  }
}

/// Keep `record` in `s` unless it is full (then count it dropped; also when memory is short).
template <class Record, class Vector>
void keep(sink& s, Vector& into, Record&& record) noexcept {
  if (s.full()) {
    ++s.log.dropped;
    return;
  }
  try {
    into.push_back(std::forward<Record>(record));
  } catch (...) {
    ++s.log.dropped;
  }
}

/// The records of one completed buffer, into `s`. Records of device graph launches
/// (isDeviceLaunched) are not the host's and are left out.
void parse(std::uint8_t* buffer, std::size_t valid, sink& s) noexcept {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    try {
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
          if (k->isDeviceLaunched != 0) break;
          host_kernel h;
          h.name = k->name != nullptr ? k->name : "(unnamed)";
          h.start_ns = k->start;
          h.end_ns = k->end;
          h.blocks = static_cast<std::uint64_t>(k->gridX) * static_cast<std::uint64_t>(k->gridY) *
                     static_cast<std::uint64_t>(k->gridZ);
          h.block_threads = static_cast<std::uint32_t>(k->blockX) *
                            static_cast<std::uint32_t>(k->blockY) *
                            static_cast<std::uint32_t>(k->blockZ);
          h.stream = k->streamId;
          h.correlation = k->correlationId;
          keep(s, s.log.kernels, std::move(h));
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
          if (m->isDeviceLaunched != 0) break;
          keep(s, s.log.transfers,
               host_transfer{copy_kind_name(m->copyKind), m->start, m->end, m->bytes, m->streamId});
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
          if (m->isDeviceLaunched != 0) break;
          keep(s, s.log.transfers, host_transfer{"memset", m->start, m->end, m->bytes, m->streamId});
          break;
        }
        default: break;
      }
    } catch (...) {  // a name that could not be copied: memory is short
      ++s.log.dropped;
    }
  }
}

/// CUPTI asks for a buffer: a new one while fewer than max_outstanding_buffers are out, else none
/// (CUPTI then drops records and counts them).
void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                  std::size_t* max_num_records) noexcept {
  *buffer = nullptr;
  *size = 0;
  *max_num_records = 0;  // as many as fit
  registry& r = the_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.outstanding.size() >= max_outstanding_buffers) return;
  buffer_ptr b = allocate_buffer();
  if (!b) return;
  std::uint8_t* raw = b.get();
  try {
    r.outstanding.emplace(raw, std::move(b));
  } catch (...) {  // the map could not grow: no buffer (b still owns it and frees it)
    return;
  }
  *buffer = raw;
  *size = buffer_bytes;
}

/// CUPTI hands a buffer back: its records go to the started collector (none: they are dropped
/// with it), and it is freed.
void CUPTIAPI on_buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                                  std::size_t valid) noexcept {
  if (buffer == nullptr) return;
  registry& r = the_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  buffer_ptr owned;  // frees the buffer on return
  const auto it = r.outstanding.find(buffer);
  if (it != r.outstanding.end()) {
    owned = std::move(it->second);
    r.outstanding.erase(it);
  }
  if (r.active != nullptr) parse(buffer, valid, *r.active);
}

/// Reset CUPTI's dropped-record counts (take_dropped's queues), ignoring CUPTI's answers.
void forget_dropped(CUcontext context) noexcept {
  std::size_t ignored = 0;
  (void)cuptiActivityGetNumDroppedRecords(nullptr, 0, &ignored);
  if (context != nullptr) (void)cuptiActivityGetNumDroppedRecords(context, 0, &ignored);
}

void register_callbacks_once() {
  std::lock_guard<std::mutex> lock(registration_mutex);
  if (callbacks_registered) return;
  check(cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed),
        "cuptiActivityRegisterCallbacks");
  callbacks_registered = true;
}

/// Pay CUPTI's set-up of the activity kinds just enabled, and wait for it. Measured on the H200:
/// the first memset or kernel after cuptiActivityEnable runs 0.3 to 0.9 ms late (on the GPU's
/// timeline, not the host's); a device or event synchronization does not take that cost, a
/// 4-byte memset on the work's stream does. On a stream of its own (the work's is not known
/// here) it takes part of it (docs/design.md, "The CUPTI collector"). It runs on memory from
/// the stream-ordered allocator (neither allocation nor free synchronizes the device, so work the
/// caller has in flight is not waited for). Best effort: any CUDA failure just skips it (the
/// first recorded operation is then late, as without it).
void absorb_enable_cost() noexcept {
  if (cudaPeekAtLastError() != cudaSuccess) return;  // the caller's error: not ours to clear
  int device = 0, pools = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device) != cudaSuccess || pools == 0) {
    (void)cudaGetLastError();
    return;
  }
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  void* word = nullptr;
  if (cudaMallocAsync(&word, 4, stream) == cudaSuccess) {
    (void)cudaMemsetAsync(word, 0, 4, stream);
    (void)cudaFreeAsync(word, stream);
  }
  (void)cudaStreamSynchronize(stream);
  (void)cudaStreamDestroy(stream);
  (void)cudaGetLastError();  // a failure here is not the caller's error
}

/// CUPTI's count of dropped records since the last call (which resets it): the global queue's
/// (context null, stream 0), plus the context's where CUPTI keeps one.
std::uint64_t take_dropped(CUcontext context) {
  std::size_t global = 0;
  check(cuptiActivityGetNumDroppedRecords(nullptr, 0, &global), "cuptiActivityGetNumDroppedRecords");
  std::uint64_t total = global;
  if (context != nullptr) {
    std::size_t in_context = 0;
    if (cuptiActivityGetNumDroppedRecords(context, 0, &in_context) == CUPTI_SUCCESS)
      total += in_context;
  }
  return total;
}

}  // namespace

struct host_activity::impl {
  std::string reason;
  CUcontext context = nullptr;
  bool started = false;
  std::size_t enabled = 0;  ///< recorded_kinds[0, enabled) are enabled
  bool warm_up = true;      ///< start() runs absorb_enable_cost()
  sink records;             ///< while started: guarded by the registry's mutex

  void fail(const std::string& why) {
    if (reason.empty()) reason = why;
  }

  /// Disable the enabled kinds, ignoring CUPTI's answers (a failure path).
  void disable_all() noexcept {
    while (enabled > 0) (void)cuptiActivityDisable(recorded_kinds[--enabled].kind);
  }

  /// Leave the registry, taking the log recorded; the collector is no longer started.
  host_activity_log release() noexcept {
    registry& r = the_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.active == &records) r.active = nullptr;
    started = false;
    return move_log_out();
  }

  /// The log recorded so far, leaving an empty one. Precondition: the registry's mutex is held.
  host_activity_log move_log_out() noexcept {
    host_activity_log out = std::move(records.log);
    records.log = host_activity_log{};
    return out;
  }

  /// move_log_out() under the registry's mutex (the collection stays started).
  host_activity_log take_log() noexcept {
    std::lock_guard<std::mutex> lock(the_registry().mutex);
    return move_log_out();
  }

  /// End a started collection: flush, disable, flush again, read CUPTI's dropped count. A CUPTI
  /// failure makes the collector unavailable and the log empty.
  host_activity_log finish() noexcept {
    std::uint64_t cupti_dropped = 0;
    std::string failed;
    try {
      check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
      while (enabled > 0) {
        const recorded_kind& k = recorded_kinds[enabled - 1];
        check(cuptiActivityDisable(k.kind), k.disable_call);
        --enabled;
      }
      // What CUPTI recorded between the first flush and the disabling.
      check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
      cupti_dropped = take_dropped(context);
    } catch (const cupti_failure& e) {
      failed = e.what();
    } catch (...) {
      failed = "host_activity: out of memory while stopping";
    }
    disable_all();
    host_activity_log out = release();
    if (!failed.empty()) {
      fail(failed);
      return host_activity_log{};
    }
    out.dropped += cupti_dropped;
    sort_by_start(out);
    return out;
  }

  /// The records so far, leaving the collection started: flush, move the log out, read CUPTI's
  /// dropped count. A CUPTI failure ends the collection (finish()) and makes it unavailable.
  host_activity_log take_so_far() noexcept {
    std::uint64_t cupti_dropped = 0;
    try {
      check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
      cupti_dropped = take_dropped(context);
    } catch (const cupti_failure& e) {
      (void)finish();
      fail(e.what());
      return host_activity_log{};
    } catch (...) {
      (void)finish();
      fail("host_activity: out of memory while taking the records");
      return host_activity_log{};
    }
    host_activity_log out = take_log();
    out.dropped += cupti_dropped;
    sort_by_start(out);
    return out;
  }

  static void sort_by_start(host_activity_log& log) {
    const auto by_start = [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; };
    std::stable_sort(log.kernels.begin(), log.kernels.end(), by_start);
    std::stable_sort(log.transfers.begin(), log.transfers.end(), by_start);
  }

  [[nodiscard]] bool available() const noexcept { return reason.empty(); }
};

host_activity::host_activity(std::size_t max_records, bool warm_up) : impl_(std::make_unique<impl>()) {
  if (max_records == 0) throw input_error("host_activity: max_records must be at least 1");
  impl_->records.max_records = max_records;
  impl_->warm_up = warm_up;
  try {
    impl_->context = detail::require_current_device().context;
  } catch (const cupti_failure& e) {
    impl_->fail(e.what());
  }
}

host_activity::~host_activity() {
  if (impl_ && impl_->started) (void)impl_->finish();
}

host_activity::host_activity(host_activity&&) noexcept = default;
host_activity& host_activity::operator=(host_activity&& other) noexcept {
  if (this != &other) {
    if (impl_ && impl_->started) (void)impl_->finish();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

bool host_activity::available() const noexcept { return impl_ && impl_->available(); }

const std::string& host_activity::unavailable_reason() const noexcept {
  static const std::string moved = "host_activity: moved from";
  return impl_ ? impl_->reason : moved;
}

void host_activity::start() {
  if (!available() || impl_->started) return;
  impl& s = *impl_;
  {
    registry& r = the_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.active != nullptr) {
      s.fail("host_activity: another host_activity is started in this process (CUPTI's activity "
             "buffers are process-wide: one collector at a time)");
      return;
    }
    s.records.log = host_activity_log{};
    r.active = &s.records;
    s.started = true;
  }
  try {
    register_callbacks_once();
    forget_dropped(s.context);  // drops from before this collection are not its own
    for (const recorded_kind& k : recorded_kinds) {
      check(cuptiActivityEnable(k.kind), k.enable_call);
      ++s.enabled;
    }
    if (s.warm_up) {
      absorb_enable_cost();
      // the warm-up's own records are not the collection's
      check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
      (void)s.take_log();
      forget_dropped(s.context);
    }
  } catch (const cupti_failure& e) {
    s.disable_all();
    (void)s.release();
    s.fail(e.what());
  }
}

host_activity_log host_activity::stop() {
  if (!impl_ || !impl_->started) return host_activity_log{};
  return impl_->finish();
}

host_activity_log host_activity::take() {
  if (!impl_ || !impl_->started) return host_activity_log{};
  return impl_->take_so_far();
}

host_activity_log host_activity::record(const std::function<void()>& work) {
  start();
  try {
    work();
  } catch (...) {  // stop recording, then let the caller's exception through
    (void)stop();
    throw;
  }
  return stop();
}

}  // namespace cdpkit::profiling
