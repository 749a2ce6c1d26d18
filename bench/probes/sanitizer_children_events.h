#pragma once
// The record the Compute Sanitizer probe's patches (sanitizer_children_patches.cu) write and its
// tool (sanitizer_children_tool.cpp) reads: one device buffer, a header and the events after it.

#include <cstdint>

inline constexpr std::uint32_t probe_kind_block_enter = 0;
inline constexpr std::uint32_t probe_kind_block_exit = 1;
inline constexpr std::uint32_t probe_kind_call = 2;
inline constexpr std::uint32_t probe_kind_memory = 3;  ///< a global access inside a device-runtime function
inline constexpr int probe_kinds = 4;

inline constexpr unsigned long long probe_record_events = 0;   ///< count and keep every event
inline constexpr unsigned long long probe_record_count = 1;    ///< count events only (one atomic)
inline constexpr unsigned long long probe_record_nothing = 2;  ///< return at once: the patch's own cost
inline constexpr unsigned long long probe_record_runtime = 3;  ///< events, and the device runtime's global accesses

/// Code ranges (the device runtime's functions) whose global accesses probe_record_runtime keeps.
inline constexpr int probe_max_ranges = 16;

/// One patched point reached: what the grid's special registers said there. A memory event
/// (probe_kind_memory) keeps the access instead of the grid's sizes: `target` is the address,
/// `smid` the access flags (Sanitizer_DeviceMemoryFlags) | the access size << 16, `nctaid_x` and
/// `ntid_x` the low and high halves of the first 8 bytes stored (0 for loads and atomics: a load's
/// data pointer holds a mask of the bytes read, an atomic's is null).
struct probe_event {
  std::uint64_t gridid;    ///< %gridid
  std::uint64_t timer_ns;  ///< %globaltimer
  std::uint64_t pc;        ///< the patched instruction's (block entry: the function's entry)
  std::uint64_t target;    ///< a call's target PC; a memory event's address; 0 for the others
  std::uint32_t kind;      ///< probe_kind_*
  std::uint32_t smid;      ///< %smid
  std::uint32_t ctaid_x, nctaid_x, ntid_x;
  std::uint32_t tid_x;     ///< %tid.x of the thread that reached it
};

/// The buffer's header; `capacity` events follow it.
struct probe_buffer {
  unsigned long long count;     ///< events reached (may exceed capacity: those past it are lost)
  unsigned long long capacity;
  unsigned long long orphans[probe_kinds];  ///< events of patches that had no userdata, by kind
  unsigned long long orphan_last_gridid;    ///< the %gridid of the last of them
  unsigned long long record;                ///< probe_record_*: what a patch with this buffer does
  unsigned long long ranges;                ///< probe_record_runtime: the code ranges set below
  unsigned long long range_begin[probe_max_ranges], range_end[probe_max_ranges];
};

#if defined(__CUDACC__)
#define PROBE_HOST_DEVICE __host__ __device__
#else
#define PROBE_HOST_DEVICE
#endif

/// The events after the header.
PROBE_HOST_DEVICE inline probe_event* probe_events(probe_buffer* b) { return reinterpret_cast<probe_event*>(b + 1); }
