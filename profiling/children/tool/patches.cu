// The children collector's device half: the functions the Compute Sanitizer API calls from the
// patched code of every kernel (block entry, block exit, every call, every return). Compiled as a
// tools patch (nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch) and loaded by
// collector.cpp with sanitizerAddPatchesFromFile. buffer.h describes the memory they fill.
//
// Per block: one thread (0, 0, 0) claims or finds its grid's row and updates it with two atomics.
// Per launch call: the calling thread appends one row; with serialization on, it first takes the
// launch lock, which the launch entry's own return releases, so the tickets follow the order in
// which the device runtime numbered the grids (grids.hpp). A lock that cannot be had within
// lock_wait_ns is given up (the call's ticket is then ~0): the patches never hang a program.

#include "buffer.h"

#include <sanitizer_patching.h>

#include <cstdint>

namespace {

__device__ __forceinline__ unsigned long long gridid() {
  unsigned long long v;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(v));
  return v;
}
__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long v;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  return v;
}
__device__ __forceinline__ void read_dims(unsigned (&nctaid)[3], unsigned (&ntid)[3]) {
  asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(nctaid[0]));
  asm volatile("mov.u32 %0, %%nctaid.y;" : "=r"(nctaid[1]));
  asm volatile("mov.u32 %0, %%nctaid.z;" : "=r"(nctaid[2]));
  asm volatile("mov.u32 %0, %%ntid.x;" : "=r"(ntid[0]));
  asm volatile("mov.u32 %0, %%ntid.y;" : "=r"(ntid[1]));
  asm volatile("mov.u32 %0, %%ntid.z;" : "=r"(ntid[2]));
}
__device__ __forceinline__ bool first_thread_of_block() {
  unsigned x, y, z;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(x));
  asm volatile("mov.u32 %0, %%tid.y;" : "=r"(y));
  asm volatile("mov.u32 %0, %%tid.z;" : "=r"(z));
  return (x | y | z) == 0;
}
/// A tag for this thread: the lock's holder.
__device__ __forceinline__ unsigned long long thread_tag() {
  unsigned tx, ty, tz, bx, by, bz;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tx));
  asm volatile("mov.u32 %0, %%tid.y;" : "=r"(ty));
  asm volatile("mov.u32 %0, %%tid.z;" : "=r"(tz));
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(bx));
  asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(by));
  asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(bz));
  unsigned long long h = gridid() * 0x9e3779b97f4a7c15ull;
  h ^= (static_cast<unsigned long long>(bx) << 32 | by) + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
  h ^= (static_cast<unsigned long long>(bz) << 40 | static_cast<unsigned long long>(tz) << 20 | ty << 10 | tx) +
       0x94d049bb133111ebull + (h << 6) + (h >> 2);
  return h | 1;  // never 0 (a free lock)
}

__device__ __forceinline__ unsigned long long mix(unsigned long long k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  return k ^ (k >> 33);
}

/// The row of this thread's grid: found, or claimed and filled. Null when the rows ran out.
__device__ children_grid* grid_row(children_buffer* b, unsigned long long pc) {
  const unsigned long long id = gridid();
  const unsigned long long key = id + 1;
  auto* base = reinterpret_cast<char*>(b);
  auto* keys = reinterpret_cast<unsigned long long*>(base + children_keys_offset());
  auto* index = reinterpret_cast<unsigned*>(base + children_index_offset(b->slots));
  auto* rows = reinterpret_cast<children_grid*>(base + children_grids_offset(b->slots));
  const unsigned long long mask = b->slots - 1;
  unsigned long long h = mix(key) & mask;
  for (unsigned long long probe = 0; probe <= mask; ++probe, h = (h + 1) & mask) {
    const unsigned long long seen = atomicCAS(&keys[h], 0ull, key);
    if (seen == 0) {  // claimed: take a row, fill it, publish it
      const unsigned long long row = atomicAdd(&b->grid_count, 1ull);
      if (row >= b->grid_capacity) {
        atomicExch(&index[h], children_lost);
        return nullptr;
      }
      children_grid& g = rows[row];
      g.gridid = id;
      g.first_ns = ~0ull;
      g.last_ns = 0;
      g.pc = pc;
      g.block_entries = 0;
      g.block_exits = 0;
      read_dims(g.nctaid, g.ntid);
      __threadfence();
      atomicExch(&index[h], static_cast<unsigned>(row));
      return &g;
    }
    if (seen == key) {  // another block claimed it: wait until it is filled
      unsigned row;
      const unsigned long long since = now_ns();
      while ((row = *static_cast<volatile unsigned*>(&index[h])) == children_pending) {
        if (now_ns() - since > 100000000ull) return nullptr;  // 100 ms: never hang
      }
      __threadfence();
      return row == children_lost ? nullptr : &rows[row];
    }
  }
  return nullptr;  // the table is full: counted as lost by the host (grid_count against the rows)
}

__device__ bool is_launch_entry(const children_buffer* b, unsigned long long target) {
  for (unsigned long long k = 0; k < b->entries && k < children_max_entries; ++k)
    if (target == b->entry_pc[k]) return true;
  return false;
}

__device__ bool in_launch_entry(const children_buffer* b, unsigned long long pc) {
  for (unsigned long long k = 0; k < b->entries && k < children_max_entries; ++k)
    if (pc >= b->entry_pc[k] && pc < b->entry_end[k]) return true;
  return false;
}

}  // namespace

extern "C" __device__ __noinline__ SanitizerPatchResult cdpkit_children_block_enter(void* userdata, uint64_t pc) {
  if (userdata == nullptr || !first_thread_of_block()) return SANITIZER_PATCH_SUCCESS;
  auto* b = static_cast<children_buffer*>(userdata);
  if (children_grid* g = grid_row(b, pc)) {
    atomicMin(&g->first_ns, now_ns());
    atomicAdd(&g->block_entries, 1u);
  }
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult cdpkit_children_block_exit(void* userdata, uint64_t pc) {
  if (userdata == nullptr || !first_thread_of_block()) return SANITIZER_PATCH_SUCCESS;
  auto* b = static_cast<children_buffer*>(userdata);
  if (children_grid* g = grid_row(b, pc)) {
    atomicMax(&g->last_ns, now_ns());
    atomicAdd(&g->block_exits, 1u);
  }
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult cdpkit_children_call(void* userdata, uint64_t pc, uint64_t target_pc,
                                                                       uint32_t /*flags*/) {
  if (userdata == nullptr) return SANITIZER_PATCH_SUCCESS;
  auto* b = static_cast<children_buffer*>(userdata);
  if (!is_launch_entry(b, target_pc)) return SANITIZER_PATCH_SUCCESS;
  unsigned long long ticket = ~0ull;
  if (b->serialize != 0) {
    const unsigned long long tag = thread_tag();
    const unsigned long long since = now_ns();
    bool held = false;
    while (!(held = atomicCAS(&b->lock, 0ull, tag) == 0ull)) {
      if (now_ns() - since > b->lock_wait_ns) break;
    }
    if (held) {
      __threadfence();
      ticket = atomicAdd(&b->ticket, 1ull);
      atomicAdd(&b->lock_waited_ns, now_ns() - since);
    } else {  // the lock is not freed (a launch entry that never returned through its own code):
      atomicAdd(&b->lock_timeouts, 1ull);  // serialization ends for the rest of the stretch
      atomicExch(&b->serialize, 0ull);
    }
  }
  const unsigned long long row = atomicAdd(&b->call_count, 1ull);
  if (row < b->call_capacity) {
    auto* calls = reinterpret_cast<children_call*>(reinterpret_cast<char*>(b) +
                                                   children_calls_offset(b->slots, b->grid_capacity));
    calls[row] = children_call{gridid(), pc, now_ns(), ticket};
  }
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult cdpkit_children_ret(void* userdata, uint64_t pc) {
  if (userdata == nullptr) return SANITIZER_PATCH_SUCCESS;
  auto* b = static_cast<children_buffer*>(userdata);
  if (b->serialize == 0 || !in_launch_entry(b, pc)) return SANITIZER_PATCH_SUCCESS;
  __threadfence();
  atomicCAS(&b->lock, thread_tag(), 0ull);  // only the holder frees it
  return SANITIZER_PATCH_SUCCESS;
}
