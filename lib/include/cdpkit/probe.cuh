#pragma once
// cdpkit/probe.cuh — per-warp divergence probes that work inside child grids, where CUPTI and
// Nsight cannot see.
//
// A warp_probe lives in each thread of a loop. At every probed step (one call of step() per
// thread per iteration), the warp's lowest active lane adds one to the site's histogram bucket
// for the number of active lanes (1..32) and remembers the step and its active lanes. At
// commit(), called where the warp has reconverged, the lanes' tallies are summed: the warp's
// efficiency = active lanes / (32 * steps), which goes into the site's per-warp efficiency
// distribution. Every warp step has exactly one leader, so the tallies are exact whatever the
// divergence pattern.
//
//   cdpkit::warp_probe probe(ctx, my_site);
//   for (auto j = begin; j < end; ++j) { probe.step(); work(j); }
//   probe.commit();
//
// The probe counts the lanes active where it stands in the compiled code: if the compiler unrolls
// the loop, the steps of one unrolled iteration share one mask (that is what the hardware ran).
// With tracing off, step() and commit() are one branch each. With tracing on, a leader keeps a run
// of equal steps (same number of active lanes) in registers and adds it to the histogram when the
// number changes or at commit(): one atomic per run, not per step (a uniform loop costs one per
// warp instead of one per iteration; a lane that is leader for a while flushes its own runs).

#include <cdpkit/launch/state.hpp>
#include <cdpkit/launch/types.hpp>

#include <cstdint>

namespace cdpkit {

class warp_probe {
 public:
  /// Construct where the lanes that will commit are together (e.g. at the top of the kernel).
  /// Precondition: site < trace_limits::max_sites (otherwise the probe is off and the device
  /// error flag device_error_bad_site is raised).
  __device__ warp_probe(const launch_context& ctx, std::uint16_t site)
      : state_(ctx.tracing ? ctx.state : nullptr), mask_(__activemask()), site_(site) {
    if (state_ != nullptr && site >= trace_limits::max_sites) {
      atomicOr(&state_->error_flags, static_cast<std::uint32_t>(device_error_bad_site));
      state_ = nullptr;
    }
  }

  /// One probed step of the calling thread (call it once per loop iteration).
  __device__ void step() {
    if (state_ == nullptr) return;
    const unsigned int mask = __activemask();
    if (lane_id() == static_cast<unsigned int>(__ffs(mask) - 1)) {
      const unsigned int active = static_cast<unsigned int>(__popc(mask));
      ++leader_steps_;
      leader_active_ += active;
      if (active != run_active_) {
        flush_run();
        run_active_ = active;
      }
      ++run_length_;
    }
  }

  /// Fold this warp's steps into the per-warp efficiency distribution. Every thread that
  /// constructed the probe must call commit() once (after the probed loop): commit reconverges
  /// exactly those lanes (threads that left the loop early do not wait for the others otherwise).
  __device__ void commit() {
    if (state_ == nullptr) return;
    flush_run();
    __syncwarp(mask_);
    const unsigned int steps = __reduce_add_sync(mask_, leader_steps_);
    const unsigned int active = __reduce_add_sync(mask_, leader_active_);
    leader_steps_ = leader_active_ = 0;
    if (steps == 0 || lane_id() != static_cast<unsigned int>(__ffs(mask_) - 1)) return;
    site_counters& c = state_->sites[site_];
    const double efficiency = static_cast<double>(active) / (32.0 * steps);
    int bucket = static_cast<int>(efficiency * trace_limits::efficiency_buckets);
    if (bucket >= trace_limits::efficiency_buckets) bucket = trace_limits::efficiency_buckets - 1;
    atomicAdd(&c.efficiency_hist[bucket], 1u);
    atomicAdd(&c.efficiency_sum, efficiency);
    atomicAdd(&c.probe_warps, 1ull);
    atomicAdd(&c.probe_steps, static_cast<unsigned long long>(steps));
    atomicAdd(&c.probe_active_lanes, static_cast<unsigned long long>(active));
  }

 private:
  /// Add this lane's run of equal leader steps to the histogram.
  __device__ void flush_run() {
    if (run_length_ == 0) return;
    atomicAdd(&state_->sites[site_].lanes_hist[run_active_], static_cast<unsigned long long>(run_length_));
    run_length_ = 0;
  }

  __device__ static unsigned int lane_id() {
    unsigned int lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
  }

  launch_state* state_;
  unsigned int mask_;  ///< the lanes that constructed the probe: they all commit
  std::uint16_t site_;
  unsigned int leader_steps_ = 0;
  unsigned int leader_active_ = 0;
  unsigned int run_active_ = 0;  ///< active lanes of the run of leader steps not yet added
  unsigned int run_length_ = 0;  ///< its steps
};

}  // namespace cdpkit
