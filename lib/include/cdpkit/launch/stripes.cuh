#pragma once
// cdpkit/launch/stripes.cuh — the SM stripe of a site's striped trace counters
// (launch_state::probes), where the launch layer counts its requests and the warp probes their
// steps; the host sums the stripes (detail::fold_probes).

#include <cdpkit/detail/lane.cuh>
#include <cdpkit/launch/state.hpp>

#include <cstdint>

namespace cdpkit::detail {

/// The calling SM's stripe of `site`'s striped counters: a kernel's warps spread their atomics
/// over probe_stripes copies instead of queueing on one address.
__device__ __forceinline__ probe_counters* striped_counters(launch_state* s, std::uint16_t site) {
  return &s->probes[site * probe_stripes + sm_id() % probe_stripes];
}

}  // namespace cdpkit::detail
