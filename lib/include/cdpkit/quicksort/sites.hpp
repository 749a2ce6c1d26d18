#pragma once
// cdpkit/quicksort/sites.hpp — the launch and probe sites of quicksort. The ids are part of the
// profiles: never renumber them. Names: "quicksort.<what>", registered by
// lib/src/quicksort/sites.cpp (see cdpkit/launch/sites.hpp).

#include <cdpkit/launch/sites.hpp>

#include <cstdint>

namespace cdpkit::sites {

enum : std::uint16_t {
  // launches
  qs_simple_side = 20,   ///< "quicksort.simple_side": simple's one-thread child per side
  qs_two_stream_side = 21, ///< "quicksort.two_stream_side": two_stream's partition grid per side
  qs_two_stream_leaf = 22, ///< "quicksort.two_stream_leaf": two_stream's one-block sort of a small side
  qs_fast_range = 23,    ///< "quicksort.fast_range": fast's partition grid for a large bucket
  qs_fast_scatter = 24,  ///< "quicksort.fast_scatter": the scatter step after a range's counts
  /// "quicksort.fast_small": fast's small ranges. No longer a launch site: the drain grid is
  /// launched by the host after the recursion (ids are never reused: older profiles name it)
  qs_fast_small = 25,
  qs_fast_copy = 26,     ///< "quicksort.fast_copy": a grid copying a large run of equal keys
  // probes
  qs_partition_probe = 28, ///< "quicksort.partition": the classification loop of a partition
  qs_serial_probe = 29,    ///< "quicksort.serial_partition": simple's one-thread partition loop
};

}  // namespace cdpkit::sites

namespace cdpkit::quicksort_sites {

/// Register the names of the sites above (idempotent). Done at start-up, and again by every
/// quicksort call, so that the names are known wherever quicksort runs.
void register_site_names();

}  // namespace cdpkit::quicksort_sites
