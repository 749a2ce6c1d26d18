#pragma once
// cdpkit/launch/types.hpp — plain data shared by the host and the device side of the launch layer.
// The trace format (stream_kind, launch_outcome, trace_limits, launch_record, site_counters,
// trace_totals, trace_snapshot, tiny_grid_work, no_record) is defined once, in the schema layer
// that the profile writer and the reports share: cdpkit/trace_format.hpp.

#include <cdpkit/trace_format.hpp>

#include <cstdint>

namespace cdpkit {

/// Bits of the device error flag word; the host API turns any set bit into cdpkit::cuda_error.
enum device_error_bits : std::uint32_t {
  device_error_none = 0,
  device_error_bad_segment = 1u << 0,      ///< a segment with end < start was found
  device_error_bad_site = 1u << 1,         ///< a launch or probe used a site id >= max_sites
  device_error_pending_underflow = 1u << 2, ///< the pending budget went negative (library bug)
  /// the completion-slot probe found no free slot although the budget had room (library bug;
  /// the request fell back and its work was done inline)
  device_error_slot_probe_exhausted = 1u << 3,
  /// the segments hold 2^32 or more items in all, more than a 32-bit scan can index
  /// (flat_balanced refused the items: pre_op has run, no item_op has)
  device_error_item_overflow = 1u << 4,
  /// a library's device-side work queue was full although it is sized for the worst case
  /// (library bug; the queued work was lost and the result is wrong)
  device_error_queue_overflow = 1u << 5,
  /// a warp_probe::steps_two_valued call whose lanes' trip counts took three values or more (a
  /// broken precondition: that loop's steps were not counted)
  device_error_probe_values = 1u << 6,
};

}  // namespace cdpkit
