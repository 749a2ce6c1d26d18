// The children collector's device half: the functions the Compute Sanitizer API calls from the
// patched code of every kernel (block entry, block exit, every call). Compiled as a tools patch
// (nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch) and loaded by
// collector.cpp with sanitizerAddPatchesFromFile. buffer.h describes the memory they fill.
//
// Per block: one thread (0, 0, 0) finds its grid's row (a plain read once the row exists; a
// compare-and-swap only to claim it) and adds one to the row's entry or exit count; the first
// entries and the last exit by those counts also set the grid's first and last times. Every block
// of a grid meets the same row, so each atomic a block does is one more in a queue all of them
// share: the patches do as few as they can. Per launch call: the calling thread appends one row.

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
__device__ __forceinline__ unsigned smid() {
  unsigned v;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(v));
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
  for (unsigned long long probe = 0; probe <= mask && probe < children_max_probes; ++probe, h = (h + 1) & mask) {
    unsigned long long seen = *static_cast<volatile unsigned long long*>(&keys[h]);
    if (seen == 0) seen = atomicCAS(&keys[h], 0ull, key);  // free: claim it (or learn who did)
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
  atomicAdd(&b->table_misses, 1ull);  // the table is (nearly) full: the host counts the grids lost
  return nullptr;
}

__device__ bool is_launch_entry(const children_buffer* b, unsigned long long target) {
  for (unsigned long long k = 0; k < b->entries && k < children_max_entries; ++k)
    if (target == b->entry_pc[k]) return true;
  return false;
}

}  // namespace

/// Entries after which a grid's first time is settled: the first blocks by the entry count are
/// the first to run within a few nanoseconds (they take the row's atomics in turn), so their
/// times' minimum is the grid's start.
constexpr unsigned first_entries = 32;

extern "C" __device__ __noinline__ SanitizerPatchResult cdpkit_children_block_enter(void* userdata, uint64_t pc) {
  if (userdata == nullptr || !first_thread_of_block()) return SANITIZER_PATCH_SUCCESS;
  auto* b = static_cast<children_buffer*>(userdata);
  if (children_grid* g = grid_row(b, pc)) {
    const unsigned long long t = now_ns();
    if (atomicAdd(&g->block_entries, 1u) < first_entries) atomicMin(&g->first_ns, t);
  }
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult cdpkit_children_block_exit(void* userdata, uint64_t pc) {
  if (userdata == nullptr || !first_thread_of_block()) return SANITIZER_PATCH_SUCCESS;
  auto* b = static_cast<children_buffer*>(userdata);
  if (children_grid* g = grid_row(b, pc)) {
    // the last exit by the count: every other block has left; its time, read now, is the grid's end
    const unsigned blocks = g->nctaid[0] * g->nctaid[1] * g->nctaid[2];
    if (atomicAdd(&g->block_exits, 1u) + 1 >= blocks) atomicMax(&g->last_ns, now_ns());
  }
  return SANITIZER_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ SanitizerPatchResult cdpkit_children_call(void* userdata, uint64_t pc, uint64_t target_pc,
                                                                              uint32_t /*flags*/) {
  if (userdata == nullptr) return SANITIZER_PATCH_SUCCESS;
  auto* b = static_cast<children_buffer*>(userdata);
  if (!is_launch_entry(b, target_pc)) return SANITIZER_PATCH_SUCCESS;
  const unsigned long long row = atomicAdd(&b->call_count, 1ull);
  if (row < b->call_capacity) {
    auto* calls = reinterpret_cast<children_call*>(reinterpret_cast<char*>(b) +
                                                   children_calls_offset(b->slots, b->grid_capacity));
    calls[row] = children_call{gridid(), pc, now_ns(), smid()};
  }
  return SANITIZER_PATCH_SUCCESS;
}
