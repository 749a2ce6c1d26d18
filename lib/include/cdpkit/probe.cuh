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
// Two cheaper forms count the same where they apply (tests/launch/probe_test.cu checks that they do):
// - a loop whose trip count each lane knows at its start: probe.steps(n) once before the loop
//   instead of step() inside it (nothing is done per iteration; a few warp reductions where the
//   lanes' n take one or two values, as in a uniform or a strided loop, else the lanes ranked by
//   n with a ballot per bit on which their n differ, in a function out of line, so that kernels
//   whose loops never need it do not carry its registers). The strided loops of the library's
//   agents count this way (with a step() per item, the Bezier sample's cooperative and flat loops
//   ran 1.28-1.35x traced); where the lanes' n cannot take three values (a strided loop over
//   consecutive positions), probe.steps_two_valued(n) leaves the ranking out of the kernel;
// - one step with nothing after it (a child grid's thread running one item):
//   probe_single_step(ctx, site), one atomic per warp into a striped table the host folds in.
// Measured on the H200 before these forms: tracing cost serial_loop 1.29x and block_aggregated
// (whose child threads each probed one step and committed five atomics per warp) 1.83x.
//
// step() counts the lanes active where it stands in the compiled code: if the compiler unrolls
// the loop, the steps of one unrolled iteration share one mask (that is what the hardware ran).
// steps(n) counts the source loop instead, as a warp whose lanes stay together would run it;
// an unrolled or diverging compiled loop is not what it sees (the hardware metrics are).
// With tracing off, step() and commit() are one branch each. With tracing on, a leader keeps a run
// of equal steps (same number of active lanes) in registers and adds it to the histogram when the
// number changes or at commit(): one atomic per run, not per step (a uniform loop costs one per
// warp instead of one per iteration; a lane that is leader for a while flushes its own runs).
// The atomics go to one of probe_stripes copies of the site's counters, chosen by SM
// (launch_state::probes; the host sums them): a grid's warps do not all add into one address.

#include <cdpkit/detail/global.cuh>
#include <cdpkit/detail/lane.cuh>
#include <cdpkit/launch/state.hpp>
#include <cdpkit/launch/device_state.cuh>
#include <cdpkit/launch/types.hpp>

#include <cstdint>

namespace cdpkit {

/// The trip count of a strided loop `for (k = first; k < end; k += stride)`: what a thread hands
/// warp_probe::steps before such a loop. Precondition: stride > 0.
__host__ __device__ constexpr unsigned long long strided_trip_count(unsigned long long first,
                                                                    unsigned long long end,
                                                                    unsigned long long stride) {
  return first < end ? (end - 1 - first) / stride + 1 : 0;
}

/// The items of thread t in a walk of `total` positions in blocked rounds: each round covers
/// threads * items positions, thread t the `items` of them from t * items. Precondition:
/// threads > 0, items > 0.
__host__ __device__ constexpr unsigned long long blocked_trip_count(unsigned long long t, unsigned long long total,
                                                                    unsigned long long threads,
                                                                    unsigned long long items) {
  const unsigned long long round = threads * items, rest = total % round, from = t * items;
  return total / round * items + (rest > from ? (rest - from < items ? rest - from : items) : 0);
}

class warp_probe {
 public:
  /// Construct where the lanes that will commit are together (e.g. at the top of the kernel):
  /// they are the lanes __activemask() reads here.
  /// Precondition: site < trace_limits::max_sites (otherwise the probe is off and the device
  /// error flag device_error_bad_site is raised).
  __device__ warp_probe(const launch_context& ctx, std::uint16_t site)
      : warp_probe(ctx, site, __activemask(), false) {}

  /// Construct for the lanes `lanes` of the warp, which the program's order guarantees (e.g.
  /// 0xffffffff where every lane of a full warp runs the probed code): steps(n) and commit()
  /// then synchronize exactly those lanes, whatever __activemask() would read. Prefer it wherever
  /// the lanes are known: __activemask() reads the lanes that happen to run together, which
  /// after divergent code (a loop of atomics, a device launch) may be fewer than will commit.
  /// Preconditions: every lane of `lanes` constructs the probe with the same `lanes` and calls
  /// steps() (when used) and commit() at the same points; site as above.
  __device__ warp_probe(const launch_context& ctx, std::uint16_t site, unsigned int lanes)
      : warp_probe(ctx, site, lanes, true) {}

  /// One probed step of the calling thread (call it once per loop iteration).
  __device__ void step() {
    if (state_ == nullptr) return;
    const unsigned int mask = __activemask();
    if (detail::lane_id() == static_cast<unsigned int>(__ffs(mask) - 1))
      add_leader_run(static_cast<unsigned int>(__popc(mask)), 1);
  }

  /// The calling thread is about to run `n` steps of a probed loop that starts here: counts all of
  /// them at once, as n calls of step() would in a warp whose lanes run their steps together
  /// (the lanes active here, converged, each going round its own n times). Step t of the warp
  /// then has the lanes with n > t active. Where the lanes' n take one or two values (a uniform or
  /// a strided loop), the warp's steps go into the leader lane's run (added at the next change of
  /// active lanes or at commit(), under the leader's site); otherwise the lanes are ranked by n
  /// (a ballot per bit on which their n differ, out of line) and each adds its share of the
  /// histogram (one atomic per distinct n). Nothing per iteration.
  /// Call it once per loop, where the loop's lanes are together, instead of step() inside the
  /// loop; every lane's probe names the same site.
  __device__ void steps(unsigned int n) { count_steps<true>(n); }

  /// steps(n) for loops whose lanes' n take at most two values: a strided loop
  /// `for (k = first; k < end; k += stride)` whose lanes start at consecutive positions (lane by
  /// lane, as threadIdx.x gives them) with stride >= 32, e.g. strided_trip_count(lo +
  /// threadIdx.x, hi, block_threads). The kernel then carries no ranking code at all (its
  /// registers stay those of the loop). Precondition: the lanes' n take at most two values;
  /// otherwise the loop is not counted and the device error flag device_error_probe_values is
  /// raised (the host throws). Same call rules as steps().
  __device__ void steps_two_valued(unsigned int n) { count_steps<false>(n); }

  /// Fold this warp's steps into the per-warp efficiency distribution. Every thread that
  /// constructed the probe must call commit() once (after the probed loop): commit reconverges
  /// exactly those lanes (threads that left the loop early do not wait for the others otherwise).
  __device__ void commit() {
    if (state_ == nullptr) return;
    flush_run();
    __syncwarp(mask_);
    unsigned long long steps = 0, active = 0;
    // The lanes holding steps: usually one (the lanes' leader, which every steps() and step() of
    // converged lanes names), whose totals the others just read.
    const unsigned int holders = __ballot_sync(mask_, leader_steps_ != 0);
    if ((holders & (holders - 1u)) == 0u) {
      if (holders == 0u) return;  // no steps: nothing to commit
      const int holder = __ffs(static_cast<int>(holders)) - 1;
      steps = __shfl_sync(mask_, leader_steps_, holder);
      active = __shfl_sync(mask_, leader_active_, holder);
    } else if (mask_ == 0xffffffffu) {  // a full warp: a butterfly, 5 rounds
      steps = leader_steps_;
      active = leader_active_;
      for (int d = 16; d >= 1; d /= 2) {
        steps += __shfl_xor_sync(mask_, steps, d);
        active += __shfl_xor_sync(mask_, active, d);
      }
    } else {
      for (unsigned int rest = mask_; rest != 0; rest &= rest - 1) {
        const int other = __ffs(rest) - 1;
        steps += __shfl_sync(mask_, leader_steps_, other);
        active += __shfl_sync(mask_, leader_active_, other);
      }
    }
    leader_steps_ = leader_active_ = 0;
    if (steps == 0 || detail::lane_id() != static_cast<unsigned int>(__ffs(mask_) - 1)) return;
    probe_counters& c = *counters();
    const double efficiency = static_cast<double>(active) / (32.0 * steps);
    int bucket = static_cast<int>(efficiency * trace_limits::efficiency_buckets);
    if (bucket >= trace_limits::efficiency_buckets) bucket = trace_limits::efficiency_buckets - 1;
    detail::red_add(&c.efficiency_hist[bucket], 1u);
    detail::red_add(&c.efficiency_sum, efficiency);
    detail::red_add(&c.probe_warps, 1ull);
    detail::red_add(&c.probe_steps, steps);
    detail::red_add(&c.probe_active_lanes, active);
  }

 private:
  __device__ warp_probe(const launch_context& ctx, std::uint16_t site, unsigned int lanes, bool fixed)
      : state_(ctx.tracing ? ctx.state : nullptr), mask_(lanes), site_(site), fixed_(fixed) {
    if (state_ != nullptr && site >= trace_limits::max_sites) {
      detail::raise_device_error(state_, device_error_bad_site);
      state_ = nullptr;
    }
  }

  /// This site's stripe of the probe counters for the calling thread's SM (striped so that a
  /// kernel's warps do not all add into one address; the host sums the stripes).
  __device__ probe_counters* counters() const { return detail::striped_counters(state_, site_); }

  /// steps(n) (AnyValues) or steps_two_valued(n).
  template <bool AnyValues>
  __device__ void count_steps(unsigned int n) {
    if (state_ == nullptr) return;
    if (fixed_) __syncwarp(mask_);
    const unsigned int mask = fixed_ ? mask_ : __activemask();
    const unsigned int lane = detail::lane_id();
    const bool leader = lane == static_cast<unsigned int>(__ffs(static_cast<int>(mask)) - 1);
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    // The common shapes first: every lane the same n (a uniform loop), or two values (a strided
    // loop's last round, e.g. n and n + 1): steps 0 .. lo - 1 have every lane active, steps
    // lo .. hi - 1 the lanes with hi. A few warp reductions, no atomic (the leader's run).
    const unsigned int lo = __reduce_min_sync(mask, n), hi = __reduce_max_sync(mask, n);
    const unsigned int at_hi = static_cast<unsigned int>(__popc(__ballot_sync(mask, n == hi)));
    if (__all_sync(mask, n == lo || n == hi)) {
      if (leader) {
        add_leader_run(static_cast<unsigned int>(__popc(mask)), lo);
        add_leader_run(at_hi, hi - lo);
      }
      return;
    }
    if constexpr (AnyValues) {
      const unsigned long long total = count_ranked(state_, site_, mask, n);
      if (leader) {
        leader_steps_ += hi;
        leader_active_ += total;
      }
    } else if (leader) {
      detail::raise_device_error(state_, device_error_probe_values);
    }
#else
    // (before sm_80, without warp reductions: the lanes ranked with a shuffle per lane)
    unsigned int rank = 0;  // lanes before this one in the order: n descending, then lane ascending
    unsigned int next = 0;  // the largest n of the lanes after this one
    unsigned int most = 0, least = 0xffffffffu;
    unsigned long long total = 0;
    for (unsigned int rest = mask; rest != 0; rest &= rest - 1) {
      const int other = __ffs(rest) - 1;
      const unsigned int v = __shfl_sync(mask, n, other);
      most = v > most ? v : most;
      least = v < least ? v : least;
      total += v;
      if (v > n || (v == n && static_cast<unsigned int>(other) < lane)) ++rank;
      else if (static_cast<unsigned int>(other) != lane && v > next) next = v;
    }
    if constexpr (!AnyValues) {
      if (!__all_sync(mask, n == most || n == least)) {  // a third value: the precondition is broken
        if (leader) detail::raise_device_error(state_, device_error_probe_values);
        return;
      }
    }
    // steps next .. n - 1 of the warp have exactly rank + 1 lanes active
    if (n > next) detail::red_add(&counters()->lanes_hist[rank + 1], static_cast<unsigned long long>(n - next));
    if (leader) {
      leader_steps_ += most;
      leader_active_ += total;
    }
#endif
  }

  /// `count` leader steps with `active` lanes each, into this lane's run (flushed when the number
  /// of lanes changes).
  __device__ void add_leader_run(unsigned int active, unsigned int count) {
    if (count == 0) return;
    leader_steps_ += count;
    leader_active_ += 1ull * active * count;
    if (active != run_active_) {
      flush_run();
      run_active_ = active;
    }
    run_length_ += count;
  }

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  /// steps() where the lanes' n take three values or more: the lanes ranked by ballots, each
  /// adding its share of `site`'s histogram; returns the sum of the lanes' n. Out of line, and
  /// static (a member function would take the probe's address, which moves the probe out of
  /// registers into a stack frame): the code most probed loops never run (a uniform or strided
  /// loop takes the fast path) stays out of their kernels' registers.
  static __device__ __noinline__ unsigned long long count_ranked(launch_state* state, std::uint16_t site,
                                                                 unsigned int mask, unsigned int n) {
    const unsigned int lane = detail::lane_id();
    // Rank the lanes by n descending, then lane ascending, with a ballot per bit of n on which
    // the lanes differ, from the top: `above` gathers the lanes whose n is larger, `same` keeps
    // those whose n equals this lane's so far (the bits every lane shares order nothing).
    unsigned int above = 0, same = mask;
    for (unsigned int differ = __reduce_or_sync(mask, n) & ~__reduce_and_sync(mask, n); differ != 0u;) {
      const int b = 31 - __clz(static_cast<int>(differ));
      differ &= ~(1u << b);
      const bool one = ((n >> b) & 1u) != 0u;
      const unsigned int ones = __ballot_sync(mask, one);
      if (one) {
        same &= ones;
      } else {
        above |= same & ones;
        same &= ~ones;
      }
    }
    const unsigned int below_lane = (1u << lane) - 1u;
    const unsigned int rank = static_cast<unsigned int>(__popc(above) + __popc(same & below_lane));
    // the next lane in that order: the one whose rank is rank + 1 (none after the last), found
    // by a ballot per bit of the ranks
    unsigned int after = mask;
    const unsigned int target = rank + 1;
    for (int p = 0; p < 5; ++p) {
      const unsigned int set = __ballot_sync(mask, ((rank >> p) & 1u) != 0u);
      after &= ((target >> p) & 1u) != 0u ? set : ~set;
    }
    if (target >= static_cast<unsigned int>(__popc(mask))) after = 0u;  // (the last: ranks are 0 .. 31)
    const unsigned int next_n =
        __shfl_sync(mask, n, after != 0u ? __ffs(static_cast<int>(after)) - 1 : static_cast<int>(lane));
    const unsigned int next = after != 0u ? next_n : 0u;
    // steps next .. n - 1 of the warp have exactly rank + 1 lanes active (none when the next
    // lane's n is the same)
    if (n > next) {
      detail::red_add(&detail::striped_counters(state, site)->lanes_hist[rank + 1],
                      static_cast<unsigned long long>(n - next));
    }
    // (two 16-bit halves: neither sum over 32 lanes reaches 2^32)
    return __reduce_add_sync(mask, n & 0xffffu) +
           (static_cast<unsigned long long>(__reduce_add_sync(mask, n >> 16)) << 16);
  }
#endif

  /// Add this lane's run of equal leader steps to the histogram.
  __device__ void flush_run() {
    if (run_length_ == 0) return;
    detail::red_add(&counters()->lanes_hist[run_active_], run_length_);
    run_length_ = 0;
  }

  launch_state* state_;
  unsigned int mask_;  ///< the lanes that constructed the probe: they all commit
  std::uint16_t site_;
  bool fixed_;  ///< mask_ given by the program (steps() uses it too), not read by __activemask()
  unsigned long long leader_steps_ = 0;
  unsigned long long leader_active_ = 0;
  unsigned int run_active_ = 0;  ///< active lanes of the run of leader steps not yet added
  unsigned long long run_length_ = 0;  ///< its steps
};

/// One probed step of every calling thread, for code with nothing to commit after it (a child
/// grid's thread running one item): the warp counts as a probe of one step with the lanes active
/// here. One atomic per warp, into a stripe chosen by SM (launch_state::single_steps, folded
/// into the site's probe counters when the host takes a snapshot). With tracing off, one branch.
/// Precondition: site < trace_limits::max_sites (otherwise nothing is counted and the device
/// error flag device_error_bad_site is raised).
__device__ inline void probe_single_step(const launch_context& ctx, std::uint16_t site) {
  if (!ctx.tracing || ctx.state == nullptr) return;
  if (site >= trace_limits::max_sites) {
    detail::raise_device_error(ctx.state, device_error_bad_site);
    return;
  }
  const unsigned int mask = __activemask();
  if (detail::lane_id() != static_cast<unsigned int>(__ffs(mask) - 1)) return;
  const unsigned int stripe = detail::sm_id() % single_step_stripes;
  detail::red_add(&ctx.state->single_steps[(site * single_step_stripes + stripe) * trace_limits::lane_buckets +
                                           static_cast<unsigned int>(__popc(mask))],
                  1ull);
}

}  // namespace cdpkit
