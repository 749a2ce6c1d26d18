#pragma once
// The device memory the children collector's patches (patches.cu) fill and its injection library
// (collector.cpp) reads: one buffer per context, userdata of every patched function.
//
//   header | keys[slots] | index[slots] | grids[grid_capacity] | calls[call_capacity]
//
// keys/index: an open-addressing table from %gridid (+1: 0 is a free slot) to the grid's row in
// `grids`, claimed by the first block event of the grid; index holds children_pending until the
// row is filled, children_lost when the rows ran out. Each row is updated with atomics (first
// entry: min; last exit: max; counts: add). Launch calls are appended to `calls`. The host reads
// the rows and calls when the device is idle (a context synchronization, the context's end, the
// program's exit) and clears the table for the next stretch.

#include <cstdint>

inline constexpr unsigned children_pending = 0xffffffffu;
inline constexpr unsigned children_lost = 0xfffffffeu;
inline constexpr int children_max_entries = 16;  ///< launch entry points known per context (one per module that has one)
inline constexpr unsigned long long children_max_probes = 64;  ///< slots a block event looks at before it gives up

/// One grid: what its blocks' patches saw.
struct children_grid {
  unsigned long long gridid;
  unsigned long long first_ns;  ///< min %globaltimer at block entry (~0: none)
  unsigned long long last_ns;   ///< max %globaltimer at block exit (0: none)
  unsigned long long pc;        ///< the PC of the event that claimed the row (names the function)
  unsigned int block_entries, block_exits;
  unsigned int nctaid[3], ntid[3];
};
static_assert(sizeof(children_grid) == 64, "children_grid layout");

/// One call of a launch entry point.
struct children_call {
  unsigned long long caller_gridid;
  unsigned long long pc;      ///< the call instruction
  unsigned long long t_ns;    ///< %globaltimer at the call
  unsigned long long smid;    ///< %smid of the calling thread (CDPKIT_CHILDREN_RAW keeps it, for studying the pairing)
};
static_assert(sizeof(children_call) == 32, "children_call layout");

struct children_buffer {
  unsigned long long grid_count;   ///< rows claimed (may pass grid_capacity: those grids are lost)
  unsigned long long call_count;   ///< calls seen (may pass call_capacity)
  unsigned long long grid_capacity, call_capacity, slots;  ///< slots: a power of two
  unsigned long long entries;      ///< launch entry points in entry_pc
  unsigned long long entry_pc[children_max_entries];
  unsigned long long table_misses;  ///< block events that found no slot in max_probes (their grid is lost)
  unsigned long long pad;
};

#if defined(__CUDACC__)
#define CHILDREN_HD __host__ __device__
#else
#define CHILDREN_HD
#endif

/// The parts after the header, at offsets from the buffer's start.
CHILDREN_HD inline unsigned long long children_keys_offset() { return sizeof(children_buffer); }
CHILDREN_HD inline unsigned long long children_index_offset(unsigned long long slots) {
  return children_keys_offset() + slots * 8;
}
CHILDREN_HD inline unsigned long long children_grids_offset(unsigned long long slots) {
  return (children_index_offset(slots) + slots * 4 + 63) / 64 * 64;
}
CHILDREN_HD inline unsigned long long children_calls_offset(unsigned long long slots, unsigned long long grids) {
  return children_grids_offset(slots) + grids * sizeof(children_grid);
}
CHILDREN_HD inline unsigned long long children_bytes(unsigned long long slots, unsigned long long grids,
                                                     unsigned long long calls) {
  return children_calls_offset(slots, grids) + calls * sizeof(children_call);
}
