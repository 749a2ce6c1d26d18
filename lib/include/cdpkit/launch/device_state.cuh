#pragma once
// cdpkit/launch/device_state.cuh — what the launch layer (launch.cuh) and the warp probes
// (probe.cuh) both do to the layer's device state: raise a device error flag, and find the SM
// stripe of a site's striped trace counters (launch_state::probes, where the layer counts its
// requests and the probes their steps; the host sums the stripes: detail::fold_probes).

#include <cdpkit/detail/global.cuh>
#include <cdpkit/detail/lane.cuh>
#include <cdpkit/launch/state.hpp>

#include <cstdint>

namespace cdpkit::detail {

/// Raise `bits` (device_error_bits) in the state's error flag word; the host API throws.
__device__ __forceinline__ void raise_device_error(launch_state* s, std::uint32_t bits) {
  red_or(&s->error_flags, bits);
}

/// The calling SM's stripe of `site`'s striped counters: a kernel's warps spread their atomics
/// over probe_stripes copies instead of queueing on one address.
__device__ __forceinline__ probe_counters* striped_counters(launch_state* s, std::uint16_t site) {
  return &s->probes[site * probe_stripes + sm_id() % probe_stripes];
}

}  // namespace cdpkit::detail
