// sanitizer_children_tool — a feasibility probe: can the Compute Sanitizer API (the public
// instrumentation API of the CUDA Toolkit, compute-sanitizer/include/sanitizer*.h) see every grid
// a CDP2 program launches from the device, in a program not rebuilt for it? An injection library
// (CUDA_INJECTION64_PATH) that patches every loaded module at block entry, block exit and every
// function call (sanitizer_children_patches.cu), and at each context synchronization prints what
// the patches recorded (probes/README.md says how to run it and what it answered on the H200):
//   - per kernel: grids seen, how many of them the host launched (the launch callbacks), blocks
//     entered and exited, the grid and block sizes the patched code read (%nctaid.x, %ntid.x), the
//     SMs (%smid) and the time from a grid's first block entry to its last exit (%globaltimer);
//   - %gridid against the launch callback's gridId for the host's launches;
//   - calls by caller and target, the targets named from the cubin's symbol table (the device
//     runtime's entry points among them: cudaGetParameterBufferV2, cudaLaunchDeviceV2, ...);
//   - events of patches that had no userdata (orphans): device-launched grids, when the userdata
//     a host launch gets is not passed on.
//
// Settings: CDP_PROBE_USERDATA = function (default: sanitizerSetCallbackData on every kernel of a
// module when it loads), launch (sanitizerSetLaunchCallbackData on each host launch) or none;
// CDP_PROBE_RECORD = events (default: every event kept), count (each patch one atomic add),
// nothing (each patch returns at once: the cost of the patches themselves) or runtime (events, and
// every global access made inside the module's functions that are not kernels, the device
// runtime's among them, with the data each store writes: does a launch write down the id of the
// grid it makes?); CDP_PROBE_CAPACITY
// (events kept, default 2^25, 48 bytes each); CDP_PROBE_PATCHES (the patches'
// fatbin; default sanitizer_children_patches.fatbin beside this library); CDP_PROBE_CUPTI=1 also
// subscribes CUPTI (driver callbacks for cuLaunchKernel and kernel activity records) before the
// Sanitizer API, as cdpkit's injection library would, and reports what each saw. Each problem is one line
// "probe: ..." on stderr; the report lines start with "probe report".

#include "sanitizer_children_events.h"

#include <cuda.h>
#include <sanitizer.h>

#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

// sanitizer_children_cupti.cpp (its own translation unit: cupti.h and sanitizer.h both declare
// placeholder CUDA types and cannot be included together).
void probe_start_cupti();
void probe_report_cupti(int report);

namespace {

struct code_range {
  std::string name;
  std::uint64_t pc = 0, size = 0;
  bool kernel = true;  ///< false: another function of the module
};

struct tool_state {
  std::recursive_mutex mu;  // the Sanitizer calls made under it call back (resource callbacks)
  Sanitizer_SubscriberHandle subscriber{};
  std::string mode = "function";
  std::string record = "events";  ///< CDP_PROBE_RECORD: events, count, nothing or runtime
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runtime_ranges;  ///< record=runtime: PC ranges watched
  unsigned long long capacity = 1ull << 25;
  std::string patches;
  std::set<CUcontext> patched_contexts;
  std::map<CUcontext, probe_buffer*> buffers;
  std::vector<code_range> code;
  std::map<std::uint64_t, std::string> host_grids;  ///< the launch callback's gridId -> kernel
  std::map<std::string, unsigned long long> launch_callbacks;  ///< LAUNCH_BEGIN by kernel name
  int reports = 0;
  bool cupti = false;  ///< CDP_PROBE_CUPTI=1: CUPTI in the same process (sanitizer_children_cupti.cpp)
};

tool_state& state() {
  static tool_state* s = new tool_state();
  return *s;
}

bool ok(SanitizerResult r, const char* what) {
  if (r == SANITIZER_SUCCESS) return true;
  const char* text = nullptr;
  sanitizerGetResultString(r, &text);
  std::fprintf(stderr, "probe: %s failed: %s (%d)\n", what, text != nullptr ? text : "?", static_cast<int>(r));
  return false;
}

bool ok(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return true;
  const char* text = nullptr;
  cuGetErrorString(r, &text);
  std::fprintf(stderr, "probe: %s failed: %s (%d)\n", what, text != nullptr ? text : "?", static_cast<int>(r));
  return false;
}

std::string beside_this_library(const char* file) {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&state), &self) == 0 || self.dli_fname == nullptr) return file;
  std::string dir = self.dli_fname;
  const auto slash = dir.find_last_of('/');
  return slash == std::string::npos ? std::string(file) : dir.substr(0, slash + 1) + file;
}

/// The names of the function symbols (STT_FUNC) of a cubin's symbol table; empty where the image
/// is not a 64-bit ELF or is cut short.
std::vector<std::string> function_symbols(const void* image, std::size_t size) {
  std::vector<std::string> names;
  const auto* bytes = static_cast<const char*>(image);
  Elf64_Ehdr eh{};
  if (bytes == nullptr || size < sizeof eh) return names;
  std::memcpy(&eh, bytes, sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
      (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
    return names;
  const auto section = [&](std::size_t i) {
    Elf64_Shdr sh{};
    std::memcpy(&sh, bytes + eh.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
  };
  for (std::size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum || sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
      continue;
    const Elf64_Shdr strings = section(sh.sh_link);
    if (strings.sh_offset > size || strings.sh_size > size - strings.sh_offset) continue;
    for (std::size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym{};
      std::memcpy(&sym, bytes + sh.sh_offset + k * sizeof sym, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_name >= strings.sh_size) continue;
      const char* name = bytes + strings.sh_offset + sym.st_name;
      names.emplace_back(name, strnlen(name, strings.sh_size - sym.st_name));
    }
  }
  return names;
}

probe_buffer* buffer_for(tool_state& s, CUcontext ctx) {
  if (const auto it = s.buffers.find(ctx); it != s.buffers.end()) return it->second;
  const std::size_t bytes = sizeof(probe_buffer) + s.capacity * sizeof(probe_event);
  void* p = nullptr;
  if (!ok(sanitizerAlloc(ctx, &p, bytes), "sanitizerAlloc")) return s.buffers[ctx] = nullptr;
  probe_buffer header{};
  header.capacity = s.capacity;
  header.record = s.record == "count"     ? probe_record_count
                  : s.record == "nothing" ? probe_record_nothing
                  : s.record == "runtime" ? probe_record_runtime
                                          : probe_record_events;
  ok(sanitizerMemset(p, 0, sizeof(probe_buffer), nullptr), "sanitizerMemset");
  ok(sanitizerMemcpyHostToDeviceAsync(p, &header, sizeof header, nullptr), "sanitizerMemcpyHostToDeviceAsync");
  return s.buffers[ctx] = static_cast<probe_buffer*>(p);
}

void module_loaded(tool_state& s, const Sanitizer_ResourceModuleData& m) {
  if (s.patched_contexts.insert(m.context).second &&
      !ok(sanitizerAddPatchesFromFile(s.patches.c_str(), m.context), "sanitizerAddPatchesFromFile")) {
    std::fprintf(stderr, "probe: (patches looked for at %s)\n", s.patches.c_str());
    return;
  }
  ok(sanitizerPatchInstructions(SANITIZER_INSTRUCTION_BLOCK_ENTER, m.module, "probe_block_enter"),
     "sanitizerPatchInstructions(BLOCK_ENTER)");
  ok(sanitizerPatchInstructions(SANITIZER_INSTRUCTION_BLOCK_EXIT, m.module, "probe_block_exit"),
     "sanitizerPatchInstructions(BLOCK_EXIT)");
  ok(sanitizerPatchInstructions(SANITIZER_INSTRUCTION_CALL, m.module, "probe_call"), "sanitizerPatchInstructions(CALL)");
  if (s.record == "runtime")
    ok(sanitizerPatchInstructions(SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, m.module, "probe_memory"),
       "sanitizerPatchInstructions(GLOBAL_MEMORY_ACCESS)");
  ok(sanitizerPatchModule(m.module), "sanitizerPatchModule");

  probe_buffer* buffer = buffer_for(s, m.context);
  unsigned count = 0;
  if (!ok(cuModuleGetFunctionCount(&count, m.module), "cuModuleGetFunctionCount")) return;
  std::vector<CUfunction> functions(count);
  if (count > 0 && !ok(cuModuleEnumerateFunctions(functions.data(), count, m.module), "cuModuleEnumerateFunctions"))
    return;
  for (CUfunction f : functions) {
    const char* name = nullptr;
    if (!ok(cuFuncGetName(&name, f), "cuFuncGetName") || name == nullptr) continue;
    code_range r{name, 0, 0, true};
    if (ok(sanitizerGetFunctionPcAndSize(m.module, name, &r.pc, &r.size), "sanitizerGetFunctionPcAndSize"))
      s.code.push_back(r);
    if (s.mode == "function" && buffer != nullptr) ok(sanitizerSetCallbackData(f, buffer), "sanitizerSetCallbackData");
  }
  // The module's other functions (the device runtime's entry points among them), named from the
  // cubin's symbol table: call targets are then named too.
  std::string runtime_entries;
  unsigned others = 0;
  for (const std::string& name : function_symbols(m.pCubin, m.cubinSize)) {
    if (std::any_of(s.code.begin(), s.code.end(), [&](const code_range& r) { return r.name == name; })) continue;
    code_range r{name, 0, 0, false};
    if (sanitizerGetFunctionPcAndSize(m.module, name.c_str(), &r.pc, &r.size) != SANITIZER_SUCCESS) continue;
    s.code.push_back(r);
    ++others;
    const bool runtime = name.find("CDP") != std::string::npos || name.find("LaunchDevice") != std::string::npos ||
                         name.find("ParameterBuffer") != std::string::npos;
    if (s.record == "runtime") {  // the device runtime's functions first: the ranges are few
      if (s.runtime_ranges.size() < static_cast<std::size_t>(probe_max_ranges))
        s.runtime_ranges.emplace(runtime ? s.runtime_ranges.begin() : s.runtime_ranges.end(), r.pc, r.pc + r.size);
      else if (runtime)
        s.runtime_ranges.back() = {r.pc, r.pc + r.size};
      else
        std::fprintf(stderr, "probe: more than %d functions to watch: %s is not watched\n", probe_max_ranges, name.c_str());
    }
    if (runtime) runtime_entries += (runtime_entries.empty() ? "" : ", ") + name;
  }
  if (s.record == "runtime" && buffer != nullptr) {  // the ranges whose accesses probe_memory keeps
    probe_buffer header{};
    header.ranges = s.runtime_ranges.size();
    for (std::size_t r = 0; r < s.runtime_ranges.size(); ++r) {
      header.range_begin[r] = s.runtime_ranges[r].first;
      header.range_end[r] = s.runtime_ranges[r].second;
    }
    const std::size_t at = offsetof(probe_buffer, ranges);
    ok(sanitizerMemcpyHostToDeviceAsync(reinterpret_cast<char*>(buffer) + at, reinterpret_cast<char*>(&header) + at,
                                        sizeof header - at, nullptr),
       "sanitizerMemcpyHostToDeviceAsync(ranges)");
    ok(sanitizerStreamSynchronize(nullptr), "sanitizerStreamSynchronize");
  }
  std::fprintf(stderr, "probe: module loaded: %u kernels, %u other functions with a PC (device runtime: %s)\n", count,
               others, runtime_entries.empty() ? "none named" : runtime_entries.c_str());
}

std::string name_at(const tool_state& s, std::uint64_t pc) {
  for (const auto& r : s.code)
    if (pc >= r.pc && pc < r.pc + r.size) return r.kernel ? r.name : "device function " + r.name;
  char text[32];
  std::snprintf(text, sizeof text, "pc 0x%" PRIx64, pc);
  return text;
}

struct grid_seen;
void report_runtime(const tool_state& s, const std::vector<probe_event>& events,
                    const std::map<std::uint64_t, grid_seen>& grids);

struct grid_seen {
  std::string kernel;
  unsigned long long enters = 0, exits = 0;
  std::uint32_t nctaid = 0, ntid = 0;
  std::set<std::uint32_t> sms;
  std::uint64_t first_ns = ~0ull, last_ns = 0;
};

void report(tool_state& s, CUcontext ctx, Sanitizer_StreamHandle stream) {
  const auto it = s.buffers.find(ctx);
  if (it == s.buffers.end() || it->second == nullptr) return;
  probe_buffer header{};
  if (!ok(sanitizerMemcpyDeviceToHost(&header, it->second, sizeof header, stream), "sanitizerMemcpyDeviceToHost"))
    return;
  const bool kept = s.record == "events" || s.record == "runtime";
  const unsigned long long n = kept ? std::min(header.count, header.capacity) : 0;  // else none kept
  std::vector<probe_event> events(n);
  if (n > 0 && !ok(sanitizerMemcpyDeviceToHost(events.data(), probe_events(it->second), n * sizeof(probe_event), stream),
                   "sanitizerMemcpyDeviceToHost(events)"))
    return;
  ++s.reports;
  std::printf("probe report %d (userdata: %s, record: %s): %llu events reached, %llu kept; orphans (no userdata): "
              "%llu block entries, %llu block exits, %llu calls; last orphan gridid %llu\n",
              s.reports, s.mode.c_str(), s.record.c_str(), header.count, n, header.orphans[probe_kind_block_enter],
              header.orphans[probe_kind_block_exit], header.orphans[probe_kind_call], header.orphan_last_gridid);

  std::map<std::uint64_t, grid_seen> grids;
  std::map<std::pair<std::string, std::string>, unsigned long long> calls;
  for (const auto& e : events) {
    if (e.kind == probe_kind_memory) continue;
    grid_seen& g = grids[e.gridid];
    if (e.kind == probe_kind_block_enter) {
      ++g.enters;
      if (g.kernel.empty()) g.kernel = name_at(s, e.pc);
    } else if (e.kind == probe_kind_block_exit) {
      ++g.exits;
    } else {
      ++calls[{name_at(s, e.pc), name_at(s, e.target)}];
    }
    g.nctaid = e.nctaid_x;
    g.ntid = e.ntid_x;
    g.sms.insert(e.smid);
    g.first_ns = std::min(g.first_ns, e.timer_ns);
    g.last_ns = std::max(g.last_ns, e.timer_ns);
  }
  struct by_kernel {
    unsigned long long grids = 0, host_grids = 0, enters = 0, exits = 0, wrong_counts = 0;
    std::set<std::uint32_t> nctaid, ntid, sms;
    double span_us = 0;
  };
  std::map<std::string, by_kernel> kernels;
  unsigned long long host_matched = 0;
  for (const auto& [id, g] : grids) {
    const auto host = s.host_grids.find(id);
    const std::string name = host != s.host_grids.end() ? host->second : g.kernel.empty() ? "(no block entry)" : g.kernel;
    by_kernel& k = kernels[name];
    ++k.grids;
    if (host != s.host_grids.end()) {
      ++k.host_grids;
      ++host_matched;
    }
    k.enters += g.enters;
    k.exits += g.exits;
    k.wrong_counts += g.enters != g.nctaid || g.exits != g.nctaid;
    k.nctaid.insert(g.nctaid);
    k.ntid.insert(g.ntid);
    k.sms.insert(g.sms.begin(), g.sms.end());
    if (g.last_ns >= g.first_ns) k.span_us += static_cast<double>(g.last_ns - g.first_ns) / 1e3;
  }
  const auto list = [](const std::set<std::uint32_t>& v) {
    std::string out;
    for (auto x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
    return v.size() > 6 ? std::to_string(v.size()) + " values" : out;
  };
  for (const auto& [name, k] : kernels)
    std::printf("probe report %d: kernel %s: %llu grids (%llu host-launched), %llu block entries, %llu block exits, "
                "%llu grids whose entries or exits differ from %%nctaid.x; %%nctaid.x {%s} %%ntid.x {%s}; %zu SMs; "
                "mean span %.1f us\n",
                s.reports, name.c_str(), k.grids, k.host_grids, k.enters, k.exits, k.wrong_counts, list(k.nctaid).c_str(),
                list(k.ntid).c_str(), k.sms.size(), k.grids > 0 ? k.span_us / static_cast<double>(k.grids) : 0.0);
  std::printf("probe report %d: %llu of %zu host launches seen by the launch callback have a grid with that %%gridid\n",
              s.reports, host_matched, s.host_grids.size());
  if (s.cupti) probe_report_cupti(s.reports);
  for (const auto& [name, count] : s.launch_callbacks)
    std::printf("probe report %d: launch callback: %s %llu times\n", s.reports, name.c_str(), count);
  for (const auto& [pair, count] : calls)
    std::printf("probe report %d: calls from %s to %s: %llu\n", s.reports, pair.first.c_str(), pair.second.c_str(),
                count);
  if (s.record == "runtime") report_runtime(s, events, grids);
  // The first events in time, for a small report: how do launch calls and %gridid relate (can a
  // grid's launcher be told from them)?
  if (grids.size() <= 64) {
    std::vector<const probe_event*> order;
    for (const auto& e : events)
      if (e.kind == probe_kind_call || (e.kind == probe_kind_block_enter && e.ctaid_x == 0)) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const probe_event* a, const probe_event* b) { return a->timer_ns < b->timer_ns; });
    const std::uint64_t t0 = order.empty() ? 0 : order.front()->timer_ns;
    for (std::size_t i = 0; i < order.size() && i < 200; ++i) {
      const probe_event& e = *order[i];
      if (e.kind == probe_kind_call)
        std::printf("probe report %d: t=%.3f us call in grid %llu block %u from %s to %s\n", s.reports,
                    static_cast<double>(e.timer_ns - t0) / 1e3, static_cast<unsigned long long>(e.gridid), e.ctaid_x,
                    name_at(s, e.pc).c_str(), name_at(s, e.target).c_str());
      else
        std::printf("probe report %d: t=%.3f us grid %llu starts (%s, %u blocks)\n", s.reports,
                    static_cast<double>(e.timer_ns - t0) / 1e3, static_cast<unsigned long long>(e.gridid),
                    name_at(s, e.pc).c_str(), e.nctaid_x);
    }
  }
  std::fflush(stdout);
}

/// CDP_PROBE_RECORD=runtime: the device runtime's global accesses, thread by thread in time order
/// with the launch calls around them, and which grid ids (of grids whose blocks were seen) turn up
/// in the data those accesses store, as 64 bits or as their low 32.
void report_runtime(const tool_state& s, const std::vector<probe_event>& events,
                    const std::map<std::uint64_t, grid_seen>& grids) {
  std::set<std::uint64_t> device_grids;
  for (const auto& [id, g] : grids)
    if (s.host_grids.count(id) == 0 && g.enters > 0) device_grids.insert(id);
  std::map<std::uint64_t, unsigned long long> found64, found32;
  std::map<std::uint32_t, std::uint64_t> low_ids;  // a grid id's low 32 bits -> the id
  for (std::uint64_t id : device_grids) low_ids.emplace(static_cast<std::uint32_t>(id), id);
  unsigned long long memory = 0, stores = 0;
  for (const auto& e : events) {
    if (e.kind != probe_kind_memory) continue;
    ++memory;
    const std::uint64_t value = e.nctaid_x | (static_cast<std::uint64_t>(e.ntid_x) << 32);
    if ((e.smid & 0x2u) != 0) ++stores;
    if (device_grids.count(value) != 0) ++found64[value];
    else if (const auto low = low_ids.find(e.nctaid_x); low != low_ids.end()) ++found32[low->second];
  }
  std::printf("probe report %d: runtime: %llu global accesses inside non-kernel functions (%llu stores); %zu "
              "device-launched grids, %zu of them with their %%gridid among the stored data as 64 bits, %zu more as "
              "its low 32 bits\n",
              s.reports, memory, stores, device_grids.size(), found64.size(), found32.size());
  // thread by thread: calls and accesses in time order
  std::map<std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>, std::vector<const probe_event*>> by_thread;
  for (const auto& e : events)
    if (e.kind == probe_kind_memory || e.kind == probe_kind_call) by_thread[{e.gridid, e.ctaid_x, e.tid_x}].push_back(&e);
  int threads = 0;
  for (auto& [who, list] : by_thread) {
    if (++threads > 24) break;
    std::stable_sort(list.begin(), list.end(), [](const probe_event* a, const probe_event* b) { return a->timer_ns < b->timer_ns; });
    std::printf("probe report %d: runtime: thread grid %llu block %u thread %u:\n", s.reports,
                static_cast<unsigned long long>(std::get<0>(who)), std::get<1>(who), std::get<2>(who));
    const std::uint64_t t0 = list.front()->timer_ns;
    for (const probe_event* e : list) {
      const double t = static_cast<double>(e->timer_ns - t0) / 1e3;
      if (e->kind == probe_kind_call) {
        std::printf("  t=%.3f us call %s -> %s\n", t, name_at(s, e->pc).c_str(), name_at(s, e->target).c_str());
        continue;
      }
      const std::uint64_t value = e->nctaid_x | (static_cast<std::uint64_t>(e->ntid_x) << 32);
      const unsigned flags = e->smid & 0xffffu, size = e->smid >> 16;
      const bool is_grid = device_grids.count(value) != 0;
      std::printf("  t=%.3f us %s+0x%llx %s%s size %u at 0x%llx value 0x%llx%s\n", t, name_at(s, e->pc).c_str(),
                  static_cast<unsigned long long>(e->pc - [&] {
                    for (const auto& r : s.code)
                      if (e->pc >= r.pc && e->pc < r.pc + r.size) return r.pc;
                    return e->pc;
                  }()),
                  (flags & 0x2u) != 0 ? "store" : (flags & 0x1u) != 0 ? "load" : "access",
                  (flags & 0x4u) != 0 ? " (atomic, system)" : "", size, static_cast<unsigned long long>(e->target),
                  static_cast<unsigned long long>(value), is_grid ? "  <- a device-launched grid's %gridid" : "");
    }
  }
}

void SANITIZERAPI callback(void*, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data) {
  tool_state& s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (domain == SANITIZER_CB_DOMAIN_RESOURCE && cbid == SANITIZER_CBID_RESOURCE_MODULE_LOADED) {
    module_loaded(s, *static_cast<const Sanitizer_ResourceModuleData*>(data));
  } else if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_BEGIN) {
    const auto& l = *static_cast<const Sanitizer_LaunchData*>(data);
    const std::string name = l.functionName != nullptr ? l.functionName : "?";
    s.host_grids[l.gridId] = name;
    ++s.launch_callbacks[name];
    if (s.mode == "launch")
      if (probe_buffer* b = buffer_for(s, l.context))
        ok(sanitizerSetLaunchCallbackData(l.hLaunch, l.function, l.hStream, b), "sanitizerSetLaunchCallbackData");
  } else if (domain == SANITIZER_CB_DOMAIN_SYNCHRONIZE && cbid == SANITIZER_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED) {
    const auto& sync = *static_cast<const Sanitizer_SynchronizeData*>(data);
    report(s, sync.context, sync.hStream);
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  tool_state& s = state();
  if (const char* m = std::getenv("CDP_PROBE_USERDATA"); m != nullptr && *m != '\0') s.mode = m;
  if (s.mode != "function" && s.mode != "launch" && s.mode != "none") {
    std::fprintf(stderr, "probe: CDP_PROBE_USERDATA=%s is not function, launch or none\n", s.mode.c_str());
    return 0;
  }
  if (const char* r = std::getenv("CDP_PROBE_RECORD"); r != nullptr && *r != '\0') s.record = r;
  if (s.record != "events" && s.record != "count" && s.record != "nothing" && s.record != "runtime") {
    std::fprintf(stderr, "probe: CDP_PROBE_RECORD=%s is not events, count, nothing or runtime\n", s.record.c_str());
    return 0;
  }
  if (const char* c = std::getenv("CDP_PROBE_CAPACITY"); c != nullptr && *c != '\0')
    s.capacity = std::max(1ull, std::strtoull(c, nullptr, 10));
  const char* p = std::getenv("CDP_PROBE_PATCHES");
  s.patches = p != nullptr && *p != '\0' ? p : beside_this_library("sanitizer_children_patches.fatbin");
  if (const char* c = std::getenv("CDP_PROBE_CUPTI"); c != nullptr && std::strcmp(c, "1") == 0) {
    s.cupti = true;
    probe_start_cupti();  // first, as cdpkit's injection library would have done
  }
  if (!ok(sanitizerSubscribe(&s.subscriber, callback, nullptr), "sanitizerSubscribe")) return 0;
  ok(sanitizerEnableDomain(1, s.subscriber, SANITIZER_CB_DOMAIN_RESOURCE), "sanitizerEnableDomain(RESOURCE)");
  ok(sanitizerEnableDomain(1, s.subscriber, SANITIZER_CB_DOMAIN_LAUNCH), "sanitizerEnableDomain(LAUNCH)");
  ok(sanitizerEnableDomain(1, s.subscriber, SANITIZER_CB_DOMAIN_SYNCHRONIZE), "sanitizerEnableDomain(SYNCHRONIZE)");
  std::fprintf(stderr, "probe: subscribed (userdata: %s, capacity %llu events, patches %s, CUPTI %s)\n",
               s.mode.c_str(), s.capacity, s.patches.c_str(), s.cupti ? "too" : "not");
  return 1;
}
