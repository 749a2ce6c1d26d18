// libcdpkit_children.so — every grid of an unmodified CUDA program, device-launched ones included,
// through the Compute Sanitizer API (the public instrumentation API of the CUDA Toolkit:
// compute-sanitizer/include/sanitizer*.h, libsanitizer-public.so). An injection library
// (CUDA_INJECTION64_PATH): `cdpkit profile --collect children` runs a program with it.
//
// What it does:
//   - at each module load, patches every function of the module: block entry and block exit
//     (patches.cu: one grid row per %gridid, its first entry, last exit, blocks and size) and
//     every call (a call of the device runtime's launch entry is appended with its grid, PC and
//     time); reads the cubin (cdpkit/children/cubin.hpp) for its functions and for the kernel
//     each launch call launches;
//   - at each host launch, remembers the grid id (the launch callback's gridId is the grid's
//     %gridid) and the kernel;
//   - when the device is idle (the program synchronized its context, the context is being
//     destroyed, the program exits), copies the rows back and clears the table;
//   - at exit, links the grids to their calls and writes one profile (cdpkit/children/grids.hpp)
//     to $CDPKIT_PROFILE_OUT ("%p": the process id; default cdpkit-children-profile.json).
//
// Settings: CDPKIT_CHILDREN_GRIDS (rows for grids and for launch calls between two idle points,
// default 2^20; about 120 bytes of device memory per row), CDPKIT_CHILDREN_PATCHES (the patches'
// fatbin; default cdpkit_children_patches.fatbin beside this library), CDPKIT_CHILDREN_RAW (a file
// that also receives every grid and launch call as read back, one JSON object a line, for studying
// the linkage), CDPKIT_INJECT_QUIET=1 (no line when the profile is written).
//
// A program stopped by a signal (Ctrl-C, SIGTERM, a crash) still writes what was read back until
// then, marked incomplete (profiling/inject/signal_watch.hpp; CDPKIT_INJECT_SIGNALS=0 leaves the
// program's signals alone).
//
// Limits: the rows are read back when the program synchronizes its whole context (or destroys
// it, or exits); a program that only ever synchronizes streams or events fills the table, whose
// grids past it are counted as lost. A program whose threads launch while another thread's
// context synchronization is being answered may have grids of the next stretch read back half
// done. Modules unloaded and loaded again at the same addresses may name the old functions.
//
// Never breaks the program: a failing Sanitizer or driver call becomes a note in the profile and
// one line on stderr ("cdpkit children: ..."). CUPTI and the Sanitizer API do not collect in one
// process (measured: with CUPTI subscribed first, no Sanitizer callback arrives; probes README):
// this library is never loaded beside libcdpkit_inject.so.

#include "buffer.h"
#include "process_names.hpp"
#include "signal_watch.hpp"

#include <cdpkit/children/cubin.hpp>
#include <cdpkit/children/grids.hpp>
#include <cdpkit/schema/profile.hpp>
#include <cdpkit/schema/text.hpp>
#include <cdpkit/version.hpp>

#include <cuda.h>
#include <sanitizer.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

namespace ch = cdpkit::children;
namespace detail = cdpkit::profiling::detail;

/// A function's code as loaded: its PC range and the launches its code makes.
struct code_range {
  std::string name;
  std::uint64_t pc = 0, end = 0;
  bool kernel = false;
  std::map<std::uint64_t, ch::cubin_launch> launches;  ///< call offset -> what the cubin says of the call there
};

struct context_buffer {
  children_buffer* device = nullptr;
  children_buffer header{};  ///< the host's copy of what it set (capacities, entries)
};

struct tool_state {
  std::recursive_mutex mu;  // Sanitizer calls made under it call back (resource callbacks)
  Sanitizer_SubscriberHandle subscriber{};
  std::string patches;
  unsigned long long rows = 1ull << 20;
  bool quiet = false;
  std::string raw_path;  ///< CDPKIT_CHILDREN_RAW
  FILE* raw = nullptr;
  std::set<CUcontext> patched_contexts;
  std::map<CUcontext, context_buffer> buffers;
  std::vector<code_range> code;  ///< sorted by pc after each module load
  std::mutex host_mu;  ///< host_grids alone: host launches never wait for a read-back
  std::unordered_map<std::uint64_t, std::string> host_grids;  ///< launch callback gridId -> kernel
  ch::collection collected;
  std::set<std::string> said;
  bool device_known = false;
  cdpkit::schema::device_profile device;
  std::atomic<bool> written{false};
};

tool_state& state() {
  static tool_state* s = new tool_state();  // never destroyed: callbacks may come after exit
  return *s;
}

void note(tool_state& s, const std::string& why) {
  if (!s.said.insert(why).second) return;
  s.collected.notes.push_back("children: " + why);
  std::fprintf(stderr, "cdpkit children: %s\n", why.c_str());
}

bool ok(tool_state& s, SanitizerResult r, const char* what) {
  if (r == SANITIZER_SUCCESS) return true;
  const char* text = nullptr;
  sanitizerGetResultString(r, &text);
  note(s, std::string(what) + " failed: " + (text != nullptr ? text : "?"));
  return false;
}

std::string beside_this_library(const char* file) {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&state), &self) == 0 || self.dli_fname == nullptr) return file;
  std::string dir = self.dli_fname;
  const auto slash = dir.find_last_of('/');
  return slash == std::string::npos ? std::string(file) : dir.substr(0, slash + 1) + file;
}

const code_range* code_at(const tool_state& s, std::uint64_t pc) {
  auto it = std::upper_bound(s.code.begin(), s.code.end(), pc, [](std::uint64_t v, const code_range& r) { return v < r.pc; });
  if (it == s.code.begin()) return nullptr;
  --it;
  return pc < it->end ? &*it : nullptr;
}

void learn_device(tool_state& s, CUdevice dev) {
  if (s.device_known) return;
  s.device_known = true;
  char name[256] = {};
  if (cuDeviceGetName(name, sizeof name, dev) == CUDA_SUCCESS) s.device.name = name;
  int major = 0, minor = 0, sms = 0, threads = 0, driver = 0;
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  cuDeviceGetAttribute(&threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev);
  cuDriverGetVersion(&driver);
  std::size_t bytes = 0;
  cuDeviceTotalMem(&bytes, dev);
  s.device.cc = std::to_string(major) + "." + std::to_string(minor);
  s.device.sms = static_cast<std::uint64_t>(sms);
  s.device.max_threads_per_sm = threads > 0 ? static_cast<std::uint64_t>(threads) : 2048;
  s.device.memory_bytes = bytes;
  s.device.driver = driver;
}

context_buffer* buffer_for(tool_state& s, CUcontext ctx) {
  if (const auto it = s.buffers.find(ctx); it != s.buffers.end()) return it->second.device ? &it->second : nullptr;
  context_buffer& b = s.buffers[ctx];
  unsigned long long slots = 1;
  while (slots < 2 * s.rows) slots <<= 1;
  b.header.grid_capacity = s.rows;
  b.header.call_capacity = s.rows;
  b.header.slots = slots;
  const unsigned long long bytes = children_bytes(slots, s.rows, s.rows);
  void* p = nullptr;
  if (!ok(s, sanitizerAlloc(ctx, &p, bytes), "sanitizerAlloc (the grid table; a smaller CDPKIT_CHILDREN_GRIDS needs less)"))
    return nullptr;
  b.device = static_cast<children_buffer*>(p);
  auto* base = static_cast<char*>(p);
  ok(s, sanitizerMemset(base, 0, children_index_offset(slots), nullptr), "sanitizerMemset");
  ok(s, sanitizerMemset(base + children_index_offset(slots), 0xff, slots * 4, nullptr), "sanitizerMemset");
  ok(s, sanitizerMemcpyHostToDeviceAsync(b.device, &b.header, sizeof b.header, nullptr), "sanitizerMemcpyHostToDeviceAsync");
  ok(s, sanitizerStreamSynchronize(nullptr), "sanitizerStreamSynchronize");
  return &b;
}

void module_loaded(tool_state& s, const Sanitizer_ResourceModuleData& m) {
  if (s.patched_contexts.insert(m.context).second &&
      !ok(s, sanitizerAddPatchesFromFile(s.patches.c_str(), m.context), ("sanitizerAddPatchesFromFile(" + s.patches + ")").c_str()))
    return;
  ok(s, sanitizerPatchInstructions(SANITIZER_INSTRUCTION_BLOCK_ENTER, m.module, "cdpkit_children_block_enter"), "patching block entries");
  ok(s, sanitizerPatchInstructions(SANITIZER_INSTRUCTION_BLOCK_EXIT, m.module, "cdpkit_children_block_exit"), "patching block exits");
  ok(s, sanitizerPatchInstructions(SANITIZER_INSTRUCTION_CALL, m.module, "cdpkit_children_call"), "patching calls");
  ok(s, sanitizerPatchModule(m.module), "sanitizerPatchModule");

  context_buffer* b = buffer_for(s, m.context);
  const ch::cubin_info info = ch::read_cubin(m.pCubin, m.cubinSize);
  if (!info.problem.empty()) note(s, "a module's cubin could not be read whole (" + info.problem + "): its launches may name no kernel");
  bool entries_changed = false;
  for (const auto& f : info.functions) {
    code_range r;
    r.name = f.name;
    r.kernel = f.kernel;
    std::uint64_t pc = 0, size = 0;
    if (sanitizerGetFunctionPcAndSize(m.module, f.name.c_str(), &pc, &size) != SANITIZER_SUCCESS || size == 0) continue;
    r.pc = pc;
    r.end = pc + size;
    for (const auto& l : info.launches)
      if (l.caller == f.name) r.launches[l.offset] = l;
    if (ch::is_launch_entry(f.name) && b != nullptr) {
      if (b->header.entries < children_max_entries) {
        b->header.entry_pc[b->header.entries] = pc;
        ++b->header.entries;
        entries_changed = true;
      } else {
        note(s, "more modules with device launches than the collector follows (" + std::to_string(children_max_entries) + ")");
      }
    }
    s.code.push_back(std::move(r));
  }
  std::sort(s.code.begin(), s.code.end(), [](const code_range& x, const code_range& y) { return x.pc < y.pc; });
  if (b != nullptr) {
    // every kernel's grids carry the buffer (device-launched ones too: probes README)
    unsigned count = 0;
    if (cuModuleGetFunctionCount(&count, m.module) == CUDA_SUCCESS && count > 0) {
      std::vector<CUfunction> fns(count);
      if (cuModuleEnumerateFunctions(fns.data(), count, m.module) == CUDA_SUCCESS)
        for (CUfunction f : fns) ok(s, sanitizerSetCallbackData(f, b->device), "sanitizerSetCallbackData");
    }
    if (entries_changed) {
      // the entry table only (offsetof is not constexpr for this layout's users: copy the prefix)
      ok(s, sanitizerMemcpyHostToDeviceAsync(&b->device->entries, &b->header.entries,
                                             sizeof(unsigned long long) * (1 + children_max_entries), nullptr),
         "sanitizerMemcpyHostToDeviceAsync");
      ok(s, sanitizerStreamSynchronize(nullptr), "sanitizerStreamSynchronize");
    }
  }
}

void drain_rows(tool_state& s, CUcontext ctx);

/// Copy what the patches gathered since the last drain and clear the table, timed (the
/// collection's own cost). The device is idle.
void drain(tool_state& s, CUcontext ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  drain_rows(s, ctx);
  s.collected.readback_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ++s.collected.readbacks;
}

/// drain's work: the rows copied into the collection, the table cleared.
void drain_rows(tool_state& s, CUcontext ctx) {
  const auto it = s.buffers.find(ctx);
  if (it == s.buffers.end() || it->second.device == nullptr) return;
  context_buffer& b = it->second;
  children_buffer h{};
  if (!ok(s, sanitizerMemcpyDeviceToHost(&h, b.device, sizeof h, nullptr), "sanitizerMemcpyDeviceToHost")) return;
  // the sizes the host set, never the device's copy of them
  h.grid_capacity = b.header.grid_capacity;
  h.call_capacity = b.header.call_capacity;
  h.slots = b.header.slots;
  const unsigned long long ng = std::min(h.grid_count, h.grid_capacity), nc = std::min(h.call_count, h.call_capacity);
  auto* base = reinterpret_cast<char*>(b.device);
  std::vector<children_grid> grids(ng);
  std::vector<children_call> calls(nc);
  if (ng > 0 && !ok(s, sanitizerMemcpyDeviceToHost(grids.data(), base + children_grids_offset(h.slots), ng * sizeof(children_grid), nullptr),
                    "sanitizerMemcpyDeviceToHost(grids)"))
    return;
  if (nc > 0 && !ok(s, sanitizerMemcpyDeviceToHost(calls.data(), base + children_calls_offset(h.slots, h.grid_capacity),
                                                   nc * sizeof(children_call), nullptr),
                    "sanitizerMemcpyDeviceToHost(calls)"))
    return;
  s.collected.grids_lost += h.grid_count - ng + h.table_misses;
  s.collected.calls_lost += h.call_count - nc;
  std::unique_lock<std::mutex> host_lock(s.host_mu);
  for (const auto& g : grids) {
    ch::grid_seen o;
    o.gridid = g.gridid;
    const auto host = s.host_grids.find(g.gridid);
    o.host_launched = host != s.host_grids.end();
    if (o.host_launched) {
      o.kernel = host->second;
      s.host_grids.erase(host);  // a grid is read back once
    }
    else if (const code_range* r = code_at(s, g.pc)) o.kernel = r->name;
    o.blocks = std::uint64_t{g.nctaid[0]} * g.nctaid[1] * g.nctaid[2];
    o.block_threads = std::uint64_t{g.ntid[0]} * g.ntid[1] * g.ntid[2];
    o.block_entries = g.block_entries;
    o.block_exits = g.block_exits;
    o.first_ns = g.first_ns;
    o.last_ns = g.last_ns;
    if (s.raw != nullptr)
      std::fprintf(s.raw, "{\"grid\": %llu, \"kernel\": \"%s\", \"host\": %s, \"blocks\": %llu, \"first_ns\": %llu, \"last_ns\": %llu}\n",
                   static_cast<unsigned long long>(o.gridid), o.kernel.c_str(), o.host_launched ? "true" : "false",
                   static_cast<unsigned long long>(o.blocks), static_cast<unsigned long long>(o.first_ns),
                   static_cast<unsigned long long>(o.last_ns));
    s.collected.grids.push_back(std::move(o));
  }
  host_lock.unlock();
  for (const auto& c : calls) {
    ch::launch_call o;
    o.caller_gridid = c.caller_gridid;
    o.t_ns = c.t_ns;
    if (const code_range* r = code_at(s, c.pc)) {
      o.caller = r->name;
      o.offset = c.pc - r->pc;
      if (const auto l = r->launches.find(o.offset); l != r->launches.end()) {
        o.child = l->second.child;
        o.file = l->second.file;
        o.line = l->second.line;
      }
    }
    if (s.raw != nullptr)
      std::fprintf(s.raw,
                   "{\"call_from\": %llu, \"caller\": \"%s\", \"offset\": %llu, \"child\": \"%s\", \"t_ns\": %llu, \"sm\": %llu}\n",
                   static_cast<unsigned long long>(o.caller_gridid), o.caller.c_str(),
                   static_cast<unsigned long long>(o.offset), o.child.c_str(), static_cast<unsigned long long>(o.t_ns),
                   c.smid);
    s.collected.calls.push_back(std::move(o));
  }
  // the next stretch starts empty
  const bool used = h.grid_count > 0 || h.table_misses > 0;
  h.grid_count = 0;
  h.call_count = 0;
  h.table_misses = 0;
  if (used) {
    ok(s, sanitizerMemset(base + children_keys_offset(), 0, h.slots * 8, nullptr), "sanitizerMemset");
    ok(s, sanitizerMemset(base + children_index_offset(h.slots), 0xff, h.slots * 4, nullptr), "sanitizerMemset");
  }
  ok(s, sanitizerMemcpyHostToDeviceAsync(b.device, &h, sizeof h, nullptr), "sanitizerMemcpyHostToDeviceAsync");
  ok(s, sanitizerStreamSynchronize(nullptr), "sanitizerStreamSynchronize");
  size_t limit = 0;
  if (cuCtxGetLimit(&limit, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT) == CUDA_SUCCESS) s.collected.pending_limit = limit;
}

void write_profile(tool_state& s) {
  if (s.written.exchange(true)) return;
  const std::string path = detail::profile_path("CDPKIT_PROFILE_OUT", "cdpkit-children-profile.json");
  try {
    nlohmann::json build = {{"version", cdpkit::version::string},
                            {"commit", cdpkit::version::commit},
                            {"collector", "libcdpkit_children (Compute Sanitizer API)"}};
    if (!s.device_known) s.device.name = "unknown", s.device.cc = "0.0";
    if (s.collected.grids.empty() && s.buffers.empty()) note(s, "the program loaded no CUDA module: nothing was collected");
    const cdpkit::schema::profile p =
        ch::children_profile(s.collected, detail::program_name(), detail::command_line(), s.device, build);
    const nlohmann::json j = cdpkit::schema::profile_json(p);
    cdpkit::schema::write_json_file(j, path);
    if (s.raw != nullptr) std::fflush(s.raw);
    if (!s.quiet)
      std::fprintf(stderr, "cdpkit children: wrote %s (%zu grids, %zu launch calls)\n", path.c_str(), s.collected.grids.size(),
                   s.collected.calls.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdpkit children: cannot write the profile %s: %s\n", path.c_str(), e.what());
  }
}

/// A program stopped by a signal (signal_watch.hpp, as libcdpkit_inject uses it): what was read
/// back so far is written, marked incomplete, without touching the device (a kernel may never
/// finish). A thread that holds the state's lock (a crash inside a callback) is waited for 5 s.
void at_signal(const std::string& why) noexcept {
  tool_state& s = state();
  std::unique_lock<std::recursive_mutex> lock(s.mu, std::defer_lock);
  for (int k = 0; k < 500 && !lock.try_lock(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!lock.owns_lock()) {
    std::fprintf(stderr, "cdpkit children: %s; the collector was busy: no profile is written\n", why.c_str());
    return;
  }
  try {
    s.collected.incomplete = why;
    std::fprintf(stderr, "cdpkit children: %s: writing what was collected\n", why.c_str());
    write_profile(s);
  } catch (...) {
  }
}

void at_exit() noexcept {
  tool_state& s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (s.written) {  // a signal's profile was written (or is being): end as the signal would have
    cdpkit::profiling::inject::end_by_caught_signal();
    return;
  }
  try {
    for (auto& [ctx, b] : s.buffers) {
      if (b.device == nullptr) continue;
      if (cuCtxPushCurrent(ctx) != CUDA_SUCCESS) continue;
      if (cuCtxSynchronize() == CUDA_SUCCESS) drain(s, ctx);
      else note(s, "the device could not be synchronized at exit: grids since the last synchronization are missing");
      CUcontext popped = nullptr;
      cuCtxPopCurrent(&popped);
    }
  } catch (const std::exception& e) {  // never std::terminate in the program's exit
    note(s, std::string("reading the last rows back failed at exit: ") + e.what());
  }
  write_profile(s);
}

void SANITIZERAPI callback(void*, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data) {
  tool_state& s = state();
  if (domain == SANITIZER_CB_DOMAIN_LAUNCH) {  // every host launch: its own small lock, never the state's
    if (cbid != SANITIZER_CBID_LAUNCH_BEGIN) return;
    const auto& l = *static_cast<const Sanitizer_LaunchData*>(data);
    try {
      std::lock_guard<std::mutex> host_lock(s.host_mu);
      s.host_grids[l.gridId] = l.functionName != nullptr ? l.functionName : "";
    } catch (...) {  // out of memory: this grid is named by its code instead
    }
    return;
  }
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  try {
    if (domain == SANITIZER_CB_DOMAIN_RESOURCE && cbid == SANITIZER_CBID_RESOURCE_MODULE_LOADED) {
      module_loaded(s, *static_cast<const Sanitizer_ResourceModuleData*>(data));
    } else if (domain == SANITIZER_CB_DOMAIN_RESOURCE && cbid == SANITIZER_CBID_RESOURCE_CONTEXT_CREATION_FINISHED) {
      learn_device(s, static_cast<const Sanitizer_ResourceContextData*>(data)->device);
    } else if (domain == SANITIZER_CB_DOMAIN_RESOURCE && cbid == SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      const CUcontext ctx = static_cast<const Sanitizer_ResourceContextData*>(data)->context;
      drain(s, ctx);
      s.buffers.erase(ctx);  // its memory goes with the context; a new context (same handle or not) gets its own
      s.patched_contexts.erase(ctx);
    } else if (domain == SANITIZER_CB_DOMAIN_SYNCHRONIZE && cbid == SANITIZER_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED) {
      drain(s, static_cast<const Sanitizer_SynchronizeData*>(data)->context);
    }
  } catch (const std::exception& e) {
    note(s, std::string("a callback failed: ") + e.what());
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  static std::atomic<bool> once{false};
  if (once.exchange(true)) return 1;
  tool_state& s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (const char* r = std::getenv("CDPKIT_CHILDREN_GRIDS"); r != nullptr && *r != '\0') {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(r, &end, 10);
    if (end == r || *end != '\0' || n < 1024 || n > (1ull << 28)) note(s, std::string("CDPKIT_CHILDREN_GRIDS=") + r + " is not a number in [1024, 2^28]: using 2^20");
    else s.rows = n;
  }
  if (const char* r = std::getenv("CDPKIT_CHILDREN_RAW"); r != nullptr && *r != '\0') {
    s.raw_path = detail::profile_path("CDPKIT_CHILDREN_RAW", r);
    s.raw = std::fopen(s.raw_path.c_str(), "w");
    if (s.raw == nullptr) note(s, "CDPKIT_CHILDREN_RAW=" + s.raw_path + " cannot be written: no raw rows");
  }
  if (const char* q = std::getenv("CDPKIT_INJECT_QUIET"); q != nullptr && std::strcmp(q, "0") != 0 && *q != '\0') s.quiet = true;
  const char* p = std::getenv("CDPKIT_CHILDREN_PATCHES");
  s.patches = p != nullptr && *p != '\0' ? p : beside_this_library("cdpkit_children_patches.fatbin");
  if (std::atexit(at_exit) != 0) note(s, "atexit failed: no profile will be written");
  if (const char* w = std::getenv("CDPKIT_INJECT_SIGNALS"); (w == nullptr || std::strcmp(w, "0") != 0) &&
                                                            !cdpkit::profiling::inject::watch_signals(at_signal))
    note(s, "the signal watch could not start: a program stopped by a signal will write no profile");
  if (!ok(s, sanitizerSubscribe(&s.subscriber, callback, nullptr), "sanitizerSubscribe")) return 1;
  ok(s, sanitizerEnableDomain(1, s.subscriber, SANITIZER_CB_DOMAIN_RESOURCE), "sanitizerEnableDomain(RESOURCE)");
  ok(s, sanitizerEnableDomain(1, s.subscriber, SANITIZER_CB_DOMAIN_LAUNCH), "sanitizerEnableDomain(LAUNCH)");
  ok(s, sanitizerEnableDomain(1, s.subscriber, SANITIZER_CB_DOMAIN_SYNCHRONIZE), "sanitizerEnableDomain(SYNCHRONIZE)");
  return 1;
}
