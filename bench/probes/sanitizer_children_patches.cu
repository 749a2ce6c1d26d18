// sanitizer_children_patches — the device side of the Compute Sanitizer probe
// (sanitizer_children_tool.cpp): the functions the patched kernels call at block entry, at block
// exit and at every function call. Compiled as a tools patch (nvcc --fatbin --keep-device-functions
// -Xptxas --compile-as-tools-patch), loaded by the tool with sanitizerAddPatchesFromFile.
//
// Each records one event (thread 0 of a block for block entry and exit; every calling thread for
// a call; with CDP_PROBE_RECORD=runtime, every global access made inside the device runtime's
// functions, with the data a store writes) into the buffer its userdata points at, with what the patched grid's special registers
// say: %gridid, %ctaid.x, %nctaid.x, %ntid.x, %smid, %globaltimer. A patch that finds no userdata
// (the question the probe asks for device-launched grids) counts the event in this module's own
// counters instead; the first patch with a buffer afterwards copies those counters into it.

#include "sanitizer_children_events.h"

#include <sanitizer_patching.h>

#include <cstdint>

namespace {

__device__ unsigned long long orphan_counts[probe_kinds];  // events without userdata, by kind
__device__ unsigned long long orphan_last_gridid;

__device__ __forceinline__ std::uint64_t read_gridid() {
  std::uint64_t v;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(v));
  return v;
}
__device__ __forceinline__ std::uint64_t read_globaltimer() {
  std::uint64_t v;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  return v;
}
__device__ __forceinline__ std::uint32_t read_smid() {
  std::uint32_t v;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(v));
  return v;
}
__device__ __forceinline__ std::uint32_t read_u32(int which) {
  std::uint32_t v = 0;
  switch (which) {
    case 0: asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(v)); break;
    case 1: asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(v)); break;
    case 2: asm volatile("mov.u32 %0, %%ntid.x;" : "=r"(v)); break;
    default: asm volatile("mov.u32 %0, %%tid.x;" : "=r"(v)); break;
  }
  return v;
}

__device__ bool first_thread_of_block() {
  std::uint32_t y, z;
  asm volatile("mov.u32 %0, %%tid.y;" : "=r"(y));
  asm volatile("mov.u32 %0, %%tid.z;" : "=r"(z));
  return read_u32(3) == 0 && y == 0 && z == 0;
}

/// The event's slot in the buffer; null when it is full (or keeps nothing).
__device__ probe_event* claim(probe_buffer* buffer) {
  for (int k = 0; k < probe_kinds; ++k)  // carry the orphans' counts into a buffer the host reads
    atomicMax(&buffer->orphans[k], *static_cast<volatile unsigned long long*>(&orphan_counts[k]));
  atomicMax(&buffer->orphan_last_gridid, *static_cast<volatile unsigned long long*>(&orphan_last_gridid));
  const unsigned long long slot = atomicAdd(&buffer->count, 1ull);
  return slot < buffer->capacity ? &probe_events(buffer)[slot] : nullptr;
}

__device__ void record(void* userdata, std::uint32_t kind, std::uint64_t pc, std::uint64_t target) {
  const std::uint64_t gridid = read_gridid();
  if (userdata == nullptr) {
    atomicAdd(&orphan_counts[kind], 1ull);
    atomicExch(&orphan_last_gridid, static_cast<unsigned long long>(gridid));
    return;
  }
  auto* buffer = static_cast<probe_buffer*>(userdata);
  if (buffer->record == probe_record_nothing) return;
  if (buffer->record == probe_record_count) {
    atomicAdd(&buffer->count, 1ull);
    return;
  }
  probe_event* slot = claim(buffer);
  if (slot == nullptr) return;
  probe_event& e = *slot;
  e.gridid = gridid;
  e.timer_ns = read_globaltimer();
  e.pc = pc;
  e.target = target;
  e.kind = kind;
  e.smid = read_smid();
  e.ctaid_x = read_u32(0);
  e.nctaid_x = read_u32(1);
  e.ntid_x = read_u32(2);
  e.tid_x = read_u32(3);
}

}  // namespace

extern "C" __device__ __noinline__ SanitizerPatchResult probe_block_enter(void* userdata, uint64_t pc) {
  if (first_thread_of_block()) record(userdata, probe_kind_block_enter, pc, 0);
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult probe_block_exit(void* userdata, uint64_t pc) {
  if (first_thread_of_block()) record(userdata, probe_kind_block_exit, pc, 0);
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult probe_call(void* userdata, uint64_t pc, uint64_t target_pc,
                                                                    uint32_t /*flags*/) {
  record(userdata, probe_kind_call, pc, target_pc);
  return SANITIZER_PATCH_SUCCESS;
}

/// With probe_record_runtime: a global access made by code inside one of the buffer's ranges (the
/// device runtime's functions), kept with its address, flags, size and the data a store writes.
extern "C" __device__ __noinline__ SanitizerPatchResult probe_memory(void* userdata, uint64_t pc, void* ptr,
                                                                      uint32_t size, uint32_t flags, const void* data) {
  if (userdata == nullptr) return SANITIZER_PATCH_SUCCESS;
  auto* buffer = static_cast<probe_buffer*>(userdata);
  if (buffer->record != probe_record_runtime) return SANITIZER_PATCH_SUCCESS;
  bool inside = false;
  for (unsigned long long r = 0; r < buffer->ranges && r < probe_max_ranges; ++r)
    inside |= pc >= buffer->range_begin[r] && pc < buffer->range_end[r];
  if (!inside) return SANITIZER_PATCH_SUCCESS;
  probe_event* slot = claim(buffer);
  if (slot == nullptr) return SANITIZER_PATCH_SUCCESS;
  std::uint64_t value = 0;
  if (data != nullptr && (flags & SANITIZER_MEMORY_DEVICE_FLAG_WRITE) != 0) {  // a load's data is a byte mask
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (uint32_t i = 0; i < size && i < 8; ++i) value |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  }
  probe_event& e = *slot;
  e.gridid = read_gridid();
  e.timer_ns = read_globaltimer();
  e.pc = pc;
  e.target = reinterpret_cast<std::uint64_t>(ptr);
  e.kind = probe_kind_memory;
  e.smid = (flags & 0xffffu) | (size << 16);
  e.ctaid_x = read_u32(0);
  e.nctaid_x = static_cast<std::uint32_t>(value);
  e.ntid_x = static_cast<std::uint32_t>(value >> 32);
  e.tid_x = read_u32(3);
  return SANITIZER_PATCH_SUCCESS;
}
