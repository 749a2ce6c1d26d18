#pragma once
// The rule behind automatic launch thresholds, on the host and on the device.
//
// Launches go through one device-wide launch path (~1.1 us per child on an H200, docs/design.md) while
// the loops left inline run in parallel, each on its own thread. So a level (or a whole run) with
// threshold T takes about the longer of (1) all its launches one after another and (2) its
// longest inline loop. Given the log2 histogram of lengths, try every T = 2^b - 1 and keep the
// one with the smallest such makespan whose launches fit `max_launches`.

#include <cstdint>

#include <cdpkit/host_device.hpp>

namespace cdpkit {

/// hist[b] = lengths with floor(log2 len) == b (len >= 1), b < buckets (<= 33).
/// item_ns: one loop's cost per item (a thread's, or a warp's / block's per lane);
/// launch_ns: one launch on the launch path. Returns T (launch when len > T).
template <class Count>
CDPKIT_HOST_DEVICE std::uint32_t balanced_threshold(const Count* hist, int buckets, double item_ns,
                                                    double launch_ns,
                                                    unsigned long long max_launches) {
  unsigned long long launches = 0;  // lengths in buckets >= b
  for (int k = 0; k < buckets; ++k) launches += hist[k];
  int best_b = buckets;
  double best_cost = -1.0;
  // b from 0 (launch everything) to buckets (launch nothing)
  unsigned long long at_or_above = launches;
  int highest_below = -1;  // highest non-empty bucket < b
  for (int b = 0; b <= buckets; ++b) {
    if (b > 0) {
      at_or_above -= hist[b - 1];
      if (hist[b - 1] > 0) highest_below = b - 1;
    }
    if (at_or_above > max_launches) continue;
    const double longest_inline =
        highest_below < 0 ? 0.0 : static_cast<double>((2ull << highest_below) - 1ull);
    const double launch_time = static_cast<double>(at_or_above) * launch_ns;
    const double loop_time = longest_inline * item_ns;
    const double cost = launch_time > loop_time ? launch_time : loop_time;
    if (best_cost < 0.0 || cost <= best_cost) {  // ties: fewer launches
      best_cost = cost;
      best_b = b;
    }
  }
  if (best_b == 0) return 0u;
  if (best_b >= 32) return 0xffffffffu;
  return (1u << best_b) - 1u;
}

}  // namespace cdpkit
