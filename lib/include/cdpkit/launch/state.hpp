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

/// Stripes of launch_state::single_steps (by SM id).
inline constexpr int single_step_stripes = 16;
/// Entries of launch_state::single_steps.
inline constexpr int single_step_entries = trace_limits::max_sites * single_step_stripes * trace_limits::lane_buckets;

/// The striped part of one site's counters, of which launch_state::probes holds probe_stripes
/// copies per site: the warp probes' fields (the divergence fields of site_counters), and the
/// counters every traced launch request adds to (its outcome, the items done inline after a
/// refusal): a storm of refused requests (a million over the budget) would otherwise queue one
/// atomic per warp on each of a few addresses. A request counts its outcome only: the host folds
/// the site's requests, and the trace's records requested, from the outcomes (fold_probes).
struct probe_counters {
  unsigned long long lanes_hist[trace_limits::lane_buckets];
  unsigned long long probe_steps;
  unsigned long long probe_active_lanes;
  unsigned long long probe_warps;
  unsigned int efficiency_hist[trace_limits::efficiency_buckets];
  double efficiency_sum;
  // --- the requests' counters (site_counters' fields of the same names) ---
  unsigned long long outcomes[launch_outcome_count];
  unsigned long long inline_items;
};
/// Stripes of launch_state::probes (by SM id): a kernel's warps count into 16 copies of a site's
/// striped counters instead of one address each.
inline constexpr int probe_stripes = 16;
/// Entries of launch_state::probes.
inline constexpr int probe_entries = trace_limits::max_sites * probe_stripes;

/// Lives in device memory, owned by a cdpkit::launch_runtime. Kernels reach it only through
/// launch_context::state.
struct launch_state {
  int pending;                   ///< children acquired and not yet complete (atomic; see slots)
  int pending_budget;            ///< acquire fails at this many in-flight children
  int max_depth;                 ///< children deeper than this are not launched
  std::uint32_t error_flags;     ///< device_error_bits raised during a run (atomicOr)
  std::uint32_t slot_count;      ///< == pending_budget: one completion slot per in-flight child
  std::uint32_t record_capacity; ///< size of records
  std::uint32_t serialize_warp_launches;  ///< launch_config::serialize_warp_launches (0 or 1)
  std::uint32_t record_refusals;          ///< launch_config::record_refusals (0 or 1)
  unsigned long long refused_sites;       ///< launch_config::refused_sites (bit per site)
  /// Per in-flight child: its blocks still running plus the grids it owns that are not complete
  /// (0 = free). CDP2 completes a grid only after everything it launched has completed, and the
  /// device runtime holds the grid's pending-launch entry until then: a slot is freed (and the
  /// budget given back) at that point, not at the end of the grid's own blocks.
  std::uint32_t* slots;
  /// Per slot: the slot of the grid that owns it (the launching grid's; for a tail launch, the
  /// launching grid's owner), or no_slot for a grid owned by the host-launched grid.
  std::uint32_t* slot_owner;
  /// trace_limits::max_sites entries; their requests, outcomes and inline_items stay zero on the
  /// device: the outcomes and inline items are counted in `probes`, and the host folds them in
  /// (the requests are the outcomes' sum)
  site_counters* sites;
  /// Warps whose probe was one step (probe_single_step), by site, stripe and active lanes:
  /// [site * single_step_stripes + stripe] * trace_limits::lane_buckets + lanes. The host folds
  /// them into `sites` (launch_runtime::snapshot); striped so that a child grid's warps do not
  /// all count into one address.
  unsigned long long* single_steps;
  /// The striped counters (the warp probes' and the requests' outcomes and inline items),
  /// [site * probe_stripes + stripe], stripe = SM id % probe_stripes; the host folds them into
  /// `sites` and `totals` (launch_runtime::snapshot and diagnose).
  probe_counters* probes;
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

namespace detail {
/// Fold launch_state::single_steps (`single`, single_step_entries values) into the sites'
/// probe counters (`sites`, trace_limits::max_sites entries), as if every such warp had committed
/// a warp_probe of one step: its lanes histogram, steps, active lanes, warps, efficiency bucket
/// and efficiency sum. Host code (launch_runtime::snapshot).
inline void fold_single_steps(const unsigned long long* single, site_counters* sites) noexcept {
  for (int site = 0; site < trace_limits::max_sites; ++site) {
    site_counters& c = sites[site];
    for (int lanes = 1; lanes < trace_limits::lane_buckets; ++lanes) {
      unsigned long long warps = 0;
      for (int stripe = 0; stripe < single_step_stripes; ++stripe)
        warps += single[(site * single_step_stripes + stripe) * trace_limits::lane_buckets + lanes];
      if (warps == 0) continue;
      c.lanes_hist[lanes] += warps;
      c.probe_steps += warps;
      c.probe_active_lanes += warps * static_cast<unsigned long long>(lanes);
      c.probe_warps += warps;
      const int bucket = lanes * trace_limits::efficiency_buckets / 32;
      c.efficiency_hist[bucket < trace_limits::efficiency_buckets ? bucket : trace_limits::efficiency_buckets - 1] +=
          static_cast<unsigned int>(warps);
      c.efficiency_sum += static_cast<double>(warps) * lanes / 32.0;
    }
  }
}

/// Fold launch_state::probes (`probes`, probe_entries values) into the sites' counters (`sites`,
/// trace_limits::max_sites entries): every field is a sum over the stripes, and a site's requests
/// grow by its outcomes' sum (each traced request counts exactly one outcome). When `totals` is
/// given, totals->records_requested, which holds the ids the device took, becomes the count of
/// every traced request that takes a record: the stripes' launched and failed requests summed
/// over all sites, and their refusals (fallback_budget, fallback_depth) too when
/// `refusals_recorded` (launch_config::record_refusals); or the ids taken, should that be more (a
/// snapshot of a run still in flight, as diagnose() reads, may hold requests that took an id and
/// have not counted their outcome yet). Host code.
inline void fold_probes(const probe_counters* probes, site_counters* sites,
                        trace_totals* totals = nullptr, bool refusals_recorded = false) noexcept {
  unsigned long long traced = 0;
  for (int site = 0; site < trace_limits::max_sites; ++site) {
    site_counters& c = sites[site];
    for (int stripe = 0; stripe < probe_stripes; ++stripe) {
      const probe_counters& p = probes[site * probe_stripes + stripe];
      for (int k = 0; k < launch_outcome_count; ++k) {
        c.outcomes[k] += p.outcomes[k];
        c.requests += p.outcomes[k];
        if (refusals_recorded || takes_record(static_cast<launch_outcome>(k))) traced += p.outcomes[k];
      }
      c.inline_items += p.inline_items;
      for (int b = 0; b < trace_limits::lane_buckets; ++b) c.lanes_hist[b] += p.lanes_hist[b];
      c.probe_steps += p.probe_steps;
      c.probe_active_lanes += p.probe_active_lanes;
      c.probe_warps += p.probe_warps;
      for (int b = 0; b < trace_limits::efficiency_buckets; ++b) c.efficiency_hist[b] += p.efficiency_hist[b];
      c.efficiency_sum += p.efficiency_sum;
    }
  }
  if (totals != nullptr && traced > totals->records_requested) totals->records_requested = traced;
}
}  // namespace detail

}  // namespace cdpkit
