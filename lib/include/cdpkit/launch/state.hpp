#pragma once
// cdpkit/launch/state.hpp — the launch layer's device-resident state and the context every grid
// launched through the layer receives. Plain structs: the host creates them (launch_runtime) and
// passes launch_context by value to the kernels it launches.

#include <cdpkit/launch/types.hpp>

#include <cstdint>

namespace cdpkit {

inline constexpr std::uint32_t no_slot = 0xffffffffu;

/// The launch layer's books as the host can read them while the device is stuck: mapped pinned
/// host memory, written with plain (posted) stores at the layer's rare events (a launch, a
/// failed launch, a child's end), never on the hot fallback path; the host resets it to the
/// exact books after every balanced synchronization. Values written by
/// concurrent threads may arrive out of order: evidence for the watchdog's diagnosis, not
/// exact counts (the exact ones are in device memory).
struct launch_mirror {
  int pending;                     ///< pending count after the latest launch or child end
  unsigned int launches;           ///< children launched so far in this runtime
  unsigned long long last_event_ns;///< %globaltimer of the latest event
};

/// Lives in device memory, owned by a cdpkit::launch_runtime. Kernels reach it only through
/// launch_context::state.
struct launch_state {
  int pending;                   ///< children acquired and not yet finished (atomic)
  int pending_budget;            ///< acquire fails at this many in-flight children
  int max_depth;                 ///< children deeper than this are not launched
  std::uint32_t error_flags;     ///< device_error_bits raised during a run (atomicOr)
  std::uint32_t slot_count;      ///< == pending_budget: one completion slot per in-flight child
  std::uint32_t record_capacity; ///< size of records
  std::uint32_t* slots;          ///< blocks still running per in-flight child (0 = free)
  site_counters* sites;          ///< trace_limits::max_sites entries
  trace_totals* totals;
  launch_record* records;        ///< bounded record buffer
  unsigned int launches;         ///< children launched so far (atomic; mirrored)
  launch_mirror* mirror;         ///< device pointer of the host-visible mirror
  std::uint32_t* mirror_slots;   ///< device pointer of the mirror of `slots` (host memory)
};

/// What every grid launched through the layer knows about itself. Trivially copyable, 24 bytes;
/// the host-launched (root) grid gets one from launch_runtime::root_context().
struct launch_context {
  launch_state* state;     ///< the runtime's device state
  std::uint32_t record;    ///< trace record of the launch that created this grid, or no_record
  std::uint32_t slot;      ///< completion slot of this grid, or no_slot for the root grid
  std::uint16_t depth;     ///< 0 for the host-launched grid, parent depth + 1 for a child
  std::uint16_t site;      ///< the site that launched this grid (0 for the root)
  std::uint8_t tracing;    ///< 1 when the trace is on: the one branch tracing costs when off
  std::uint8_t pad_[3];
};

}  // namespace cdpkit
