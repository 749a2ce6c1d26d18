#pragma once
// cdpkit/launch.cuh — the device launch layer: the one way cdpkit kernels launch child grids.
//
// Why a layer and not a bare <<<>>> (measured on an H200, CUDA 13, see docs/design.md):
//   1. A device launch over cudaLimitDevRuntimePendingLaunchCount fails with
//      cudaErrorLaunchPendingCountExceeded and the child never runs, while the host sees no error.
//      So every launch here checks its error, and on any failure the caller is told "not launched"
//      and does the work itself: no work is ever lost, and the fallback is counted.
//   2. A pending budget (an atomic count of children acquired and not yet finished; the child's
//      last block gives it back) stops launching before the hardware limit is hit.
//   3. Depth is carried in a launch_context, so a recursion can be capped without guessing.
//   4. When tracing is on, each request updates per-site counters (histograms of child sizes,
//      depth, outcomes, error codes), and each grid launched or failed appends a launch_record to
//      a bounded buffer (a refused request too under launch_config::record_refusals). When
//      tracing is off, the trace costs one predictable branch on launch_context::tracing.
//
// Usage, from a grid that was itself given a launch_context `ctx`:
//
//   auto r = cdpkit::launch_items(ctx, my_site, n, 256, cdpkit::stream_kind::fire_and_forget,
//                                 [=] __device__ (cdpkit::launch_context const&, std::uint64_t k) {
//                                   out[k] = f(in[k]);
//                                 });
//   if (!r) { for (std::uint64_t k = 0; k < n; ++k) out[k] = f(in[k]); }  // or launch_items_or_inline
//
// Algorithms reach the trace only through the layer's operations — launch_child / launch_items /
// launch_continuation (records and per-site counters), record_inline_items (work done inline
// after a refused launch), record_auto_threshold (a threshold chosen on the device) and
// warp_probe (cdpkit/probe.cuh) — never through launch_state's storage.
//
// One rule the layer cannot enforce: the lanes of a warp request launches from one convergent
// point at a time (a subset of lanes at the same call, after a __syncwarp), never from divergent
// branches or from different iterations of their own loops. Measured on an H200: a warp whose
// lanes entered the device runtime's launch from different iterations of a per-lane tree walk
// stopped for good, two lanes spinning inside the runtime's launch path and their warp-mates
// (one of them on its way to a launch) never scheduled again, and the whole recursion with it
// (docs/design.md, "Launches from divergent lanes"). A loop that may launch in its body is
// stepped by the whole warp together (__any_sync) with the requests made after a __syncwarp;
// launches from different branches take turns (one branch, __syncwarp, the other). Where every
// lane of a warp reaches the request, launch_child_warp is the safer form: the lanes that want
// a grid enter the device runtime one at a time, the rest of the warp at a barrier whose mask is
// the whole warp (the program's guarantee, not an __activemask() reading). Warp barriers whose
// lanes do not all arrive (a mask read by __activemask() after divergent code names lanes that
// may be elsewhere) stall a warp for good: a lane waits at the warp barrier while its mates wait
// at the block's.
//
// Compile with relocatable device code (-rdc=true / CUDA_SEPARABLE_COMPILATION) and link cudadevrt.

#include <cdpkit/detail/global.cuh>
#include <cdpkit/detail/lane.cuh>
#include <cdpkit/launch/state.hpp>
#include <cdpkit/launch/device_state.cuh>
#include <cdpkit/launch/types.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace cdpkit {

/// The result of a launch request: launched, or why not (and the CUDA error for launch failures).
struct launch_result {
  launch_outcome outcome;
  cudaError_t error;
  /// True when the child grid was launched and will do the work.
  __device__ explicit operator bool() const noexcept { return outcome == launch_outcome::launched; }
};

namespace detail {

__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// floor(log2(v)) for v >= 1, 0 for v == 0.
__device__ __forceinline__ unsigned int log2_bucket(unsigned long long v) {
  return v == 0 ? 0u : 63u - static_cast<unsigned int>(__clzll(static_cast<long long>(v)));
}

/// Take one unit of the pending budget and a completion slot holding `blocks`. False when the
/// budget is exhausted (nothing is held then).
__device__ inline bool acquire_pending(launch_state* s, std::uint32_t blocks, std::uint32_t* slot,
                                       bool tracing) {
  // A plain read first: over budget, no atomic traffic at all.
  if (*reinterpret_cast<volatile int*>(&s->pending) >= s->pending_budget) return false;
  const int prev = atomicAdd(in_global(&s->pending), 1);
  if (prev >= s->pending_budget) {
    atomicSub(in_global(&s->pending), 1);
    return false;
  }
  // Occupied slots never exceed the in-flight count, which is below slot_count for us here, so a
  // free slot exists at every instant; probing from a spread start finds it in a step or two.
  // The probe is bounded all the same (two passes, at least 1024 tries): a parent must never spin
  // on its children. Missing every free slot for that long would take the free slots moving in
  // lockstep behind the probe; should it happen, the request falls back (the work is done
  // inline) and device_error_slot_probe_exhausted says so.
  std::uint32_t i = static_cast<std::uint32_t>(prev) % s->slot_count;
  const std::uint32_t max_tries = s->slot_count < 512u ? 1024u : 2u * s->slot_count;
  for (std::uint32_t tries = 0; tries < max_tries; ++tries) {
    if (atomicCAS(in_global(&s->slots[i]), 0u, blocks) == 0u) {
      __threadfence();  // the slot is ours before its owner is rewritten (complete_unit)
      if (tracing) red_max(&s->totals->pending_high_water, static_cast<unsigned int>(prev + 1));
      *slot = i;
      launch_mirror* m = s->mirror;
      *reinterpret_cast<volatile std::uint32_t*>(&s->mirror_slots[i]) = blocks;
      *reinterpret_cast<volatile int*>(&m->pending) = prev + 1;
      return true;
    }
    i = (i + 1 == s->slot_count) ? 0u : i + 1;
  }
  // Unreachable while the invariant holds; say so instead of hiding it as a budget fallback.
  raise_device_error(s, device_error_slot_probe_exhausted);
  atomicSub(in_global(&s->pending), 1);
  return false;
}

/// Give back the budget of a child whose launch failed.
__device__ inline void release_pending(launch_state* s, std::uint32_t slot) {
  atomicExch(in_global(&s->slots[slot]), 0u);
  const int now = atomicSub(in_global(&s->pending), 1) - 1;
  launch_mirror* m = s->mirror;
  *reinterpret_cast<volatile std::uint32_t*>(&s->mirror_slots[slot]) = 0u;
  *reinterpret_cast<volatile int*>(&m->pending) = now;
}

/// One unit of `slot` is done (a block of its grid, or a grid it owns that completed). When it
/// was the last, the grid is complete: the slot is freed, the budget given back, and the owner
/// loses one unit in turn (up the chain of owners). A slot's owner is read before the decrement
/// that may free it, and the read is complete before it (a fence): a freed slot is taken, and
/// its owner rewritten, at once. The read bypasses L1 (__ldcg), which may hold an earlier
/// holder's owner. (The mirror's zero for a freed slot may land after a new holder wrote its
/// own value: the mirror is a diagnosis, approximate by design.)
__device__ inline void complete_unit(launch_state* s, std::uint32_t slot) {
  launch_mirror* m = s->mirror;
  while (slot != no_slot) {
    const std::uint32_t owner = __ldcg(&s->slot_owner[slot]);
    __threadfence();
    if (atomicSub(in_global(&s->slots[slot]), 1u) != 1u) return;
    *reinterpret_cast<volatile std::uint32_t*>(&s->mirror_slots[slot]) = 0u;
    const int before = atomicSub(in_global(&s->pending), 1);
    if (before <= 0) raise_device_error(s, device_error_pending_underflow);
    *reinterpret_cast<volatile int*>(&m->pending) = before - 1;
    *reinterpret_cast<volatile unsigned long long*>(&m->last_event_ns) = global_timer_ns();
    slot = owner;
  }
}

/// A child grid was launched: count it (device and mirror).
__device__ inline void note_launch(launch_state* s) {
  const unsigned int n = atomicAdd(in_global(&s->launches), 1u) + 1u;
  launch_mirror* m = s->mirror;
  *reinterpret_cast<volatile unsigned int*>(&m->launches) = n;
  *reinterpret_cast<volatile unsigned long long*>(&m->last_event_ns) = global_timer_ns();
}

/// The stored launch record of a traced child grid, or null (not traced, or past the buffer).
__device__ __forceinline__ launch_record* traced_record(const launch_context& ctx) {
  return ctx.tracing && ctx.record < ctx.state->record_capacity ? ctx.state->records + ctx.record
                                                                : nullptr;
}

__device__ __forceinline__ bool first_thread_of_block() {
  return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
}

/// Called by every block of a child grid before its body: a traced child's record keeps the
/// earliest start of its blocks (one atomic per block, traced runs only).
__device__ inline void child_block_begin(const launch_context& ctx) {
  if (launch_record* r = traced_record(ctx)) {
    if (first_thread_of_block())
      red_min(reinterpret_cast<unsigned long long*>(&r->start_ns),
              static_cast<unsigned long long>(global_timer_ns()));
  }
}

/// Called by every block of a child grid when its body is done: a traced child's record keeps
/// the latest end of its blocks; the last block completes the grid's own part (the budget comes
/// back once the grids it owns have completed too: complete_unit).
__device__ inline void child_block_done(const launch_context& ctx) {
  if (ctx.slot == no_slot && traced_record(ctx) == nullptr) return;
  __syncthreads();
  if (launch_record* r = traced_record(ctx)) {
    if (first_thread_of_block())
      red_max(reinterpret_cast<unsigned long long*>(&r->end_ns),
              static_cast<unsigned long long>(global_timer_ns()));
  }
  if (ctx.slot == no_slot) return;
  if (first_thread_of_block()) complete_unit(ctx.state, ctx.slot);
}

/// (The aggregations below group the lanes __activemask() reads, with *_sync intrinsics over
/// disjoint masks: sm_70 and later, as CDP2 requires anyway.)

/// True when every lane of `active` names the same counter (the common case: one site, one
/// stripe per warp): then one sum over the lanes and one atomic, without __match_any_sync.
__device__ __forceinline__ bool same_counter(unsigned int active, const unsigned long long* counter, int leader) {
  const auto mine = reinterpret_cast<unsigned long long>(counter);
  return __all_sync(active, __shfl_sync(active, mine, leader) == mine);
}

/// Add each calling lane's `v` to *counter with one atomic per set of the lanes that run together
/// here and name the same counter (traced runs: a storm of refused requests, e.g. a million over
/// the pending budget, would otherwise queue up one atomic per request on a few addresses).
/// Precondition: counter addresses global memory (as every trace counter does).
__device__ inline void add_aggregated(unsigned long long* counter, unsigned long long v) {
  const unsigned int active = __activemask();
  const int leader = __ffs(static_cast<int>(active)) - 1;
  const unsigned int same = same_counter(active, counter, leader)
                                ? active
                                : __match_any_sync(active, reinterpret_cast<unsigned long long>(counter));
  unsigned long long sum = 0;
#if __CUDA_ARCH__ >= 800
  // (same == active holds for every lane of active or for none)
  if (same == active && __all_sync(active, (v >> 32) == 0)) {  // 32-bit values: two 16-bit halves, reduced in hardware
    sum = __reduce_add_sync(active, static_cast<unsigned int>(v & 0xffffu)) +
          (static_cast<unsigned long long>(__reduce_add_sync(active, static_cast<unsigned int>(v >> 16))) << 16);
  } else
#endif
  {
    for (unsigned int rest = same; rest != 0u; rest &= rest - 1u)
      sum += __shfl_sync(same, v, __ffs(static_cast<int>(rest)) - 1);
  }
  if (lane_id() == static_cast<unsigned int>(__ffs(static_cast<int>(same)) - 1)) red_add(counter, sum);
}

/// add_aggregated(counter, 1): a popcount instead of the sum. Precondition: as add_aggregated's.
__device__ inline void count_aggregated(unsigned long long* counter) {
  const unsigned int active = __activemask();
  const int leader = __ffs(static_cast<int>(active)) - 1;
  const unsigned int same = same_counter(active, counter, leader)
                                ? active
                                : __match_any_sync(active, reinterpret_cast<unsigned long long>(counter));
  if (lane_id() == static_cast<unsigned int>(__ffs(static_cast<int>(same)) - 1))
    red_add(counter, static_cast<unsigned long long>(__popc(same)));
}

/// Reserve the next trace record id for a request: one atomic for the lanes that run together
/// here, which take consecutive ids in lane order. Once the buffer is full (read plainly: no
/// atomic), the request takes no id and counts nothing: it gets record_capacity, an id past the
/// buffer. Lanes that read the buffer not yet full just before it fills are counted by the atomic
/// and get record_capacity too: not stored. (trace_totals::records_requested, the count of traced
/// requests that take a record, is what the host folds from their outcomes: every traced request
/// counts exactly one; on the device it is the count of ids taken.) Called once the request's
/// outcome is known, for the outcomes that take a record (launch_impl).
__device__ inline std::uint32_t reserve_record(launch_state* s) {
  if (*reinterpret_cast<volatile unsigned long long*>(&s->totals->records_requested) >= s->record_capacity)
    return s->record_capacity;
  const unsigned int active = __activemask();
  const int leader = __ffs(static_cast<int>(active)) - 1;
  const unsigned int lane = lane_id();
  unsigned long long base = 0;
  if (lane == static_cast<unsigned int>(leader))
    base = atomicAdd(in_global(&s->totals->records_requested), static_cast<unsigned long long>(__popc(active)));
  base = __shfl_sync(active, base, leader);
  const unsigned long long id = base + static_cast<unsigned int>(__popc(active & ((1u << lane) - 1u)));
  // (an id past the buffer is never stored: every one reads record_capacity, and none wraps
  // below it after 2^32 requests)
  return id < s->record_capacity ? static_cast<std::uint32_t>(id) : s->record_capacity;
}

__device__ inline void count_error_code(site_counters& c, int code) {
  for (int k = 0; k < trace_limits::error_slots; ++k) {
    const int seen = atomicCAS(in_global(&c.error_code[k]), 0, code);
    if (seen == 0 || seen == code) {
      red_add(&c.error_count[k], 1u);
      return;
    }
  }
  red_add(&c.error_overflow, 1u);
}

/// Append the record (when it fits) and update the site's counters.
__device__ inline void trace_request(const launch_context& parent, std::uint32_t record,
                                     std::uint16_t site, std::uint16_t depth,
                                     std::uint32_t blocks,
                                     std::uint32_t child_block_threads, std::uint32_t work,
                                     stream_kind stream, launch_result result,
                                     std::uint64_t t_request) {
  launch_state* s = parent.state;
  if (record < s->record_capacity) {
    launch_record& r = s->records[record];
    r.t_ns = t_request;
    r.id = record;
    r.parent = parent.record;
    r.blocks = blocks;
    r.child_block_threads = child_block_threads;
    r.work = work;
    r.site = site;
    r.depth = depth;
    r.stream = static_cast<std::uint8_t>(stream);
    r.outcome = static_cast<std::uint8_t>(result.outcome);
    r.error = static_cast<std::int16_t>(result.error);
  }
  site_counters& c = s->sites[site];
  // (the request itself is not counted: the host folds the site's requests from its outcomes)
  count_aggregated(&striped_counters(s, site)->outcomes[static_cast<int>(result.outcome)]);
  if (result.outcome == launch_outcome::launched) {
    const unsigned long long threads = 1ull * blocks * child_block_threads;
    red_add(&c.child_threads, threads);
    red_add(&c.child_blocks, static_cast<unsigned long long>(blocks));
    red_add(&c.work_items, static_cast<unsigned long long>(work));
    if (work < tiny_grid_work) red_add(&c.tiny_launches, 1ull);
    red_add(&c.stream_launches[static_cast<int>(stream)], 1ull);
    // threads reach 2^42 (2^31 - 1 blocks of 1024): the last bucket holds everything >= 2^32
    const unsigned int tb = log2_bucket(threads);
    red_add(&c.threads_log2[tb < trace_limits::log2_buckets ? tb : trace_limits::log2_buckets - 1],
            1u);
    red_add(&c.blocks_log2[log2_bucket(blocks)], 1u);
    red_add(&c.work_log2[log2_bucket(work)], 1u);
    red_add(&c.depth_hist[depth < trace_limits::depth_buckets ? depth
                                                              : trace_limits::depth_buckets - 1],
            1u);
    red_max(&c.max_depth, static_cast<unsigned int>(depth));
  } else if (result.outcome == launch_outcome::fallback_error) {
    count_error_code(c, static_cast<int>(result.error));
  }
}

}  // namespace detail

/// The kernel behind every child grid: run the body, then give back the pending budget.
/// Body: `__device__ void operator()(const launch_context& self) const`.
template <class Body>
__global__ void child_entry_kernel(launch_context self, Body body) {
  detail::child_block_begin(self);
  body(self);
  detail::child_block_done(self);
}

namespace detail {
/// A body may declare the launch bounds of its grids: `static constexpr unsigned int
/// max_block_threads` and `min_blocks_per_sm` (as __launch_bounds__ takes them), e.g. so that a
/// streaming pass keeps enough blocks resident although rare paths of the same body need many
/// registers.
template <class Body, class = void>
struct has_launch_bounds : std::false_type {};
template <class Body>
struct has_launch_bounds<Body, std::void_t<decltype(Body::max_block_threads),
                                           decltype(Body::min_blocks_per_sm)>> : std::true_type {};
}  // namespace detail

/// child_entry_kernel for bodies that declare their launch bounds.
template <class Body>
__global__ void __launch_bounds__(Body::max_block_threads, Body::min_blocks_per_sm)
    bounded_child_entry_kernel(launch_context self, Body body) {
  detail::child_block_begin(self);
  body(self);
  detail::child_block_done(self);
}

namespace detail {
/// One launch request; the child's depth is the parent's plus depth_step (0 for a continuation).
/// `group`: 0 for a request of the calling lane alone; else the lanes of the warp that call
/// together (launch_child_warp: every lane of `group` calls, `want` on those that request).
template <class Body>
__device__ launch_result launch_impl(const launch_context& parent, std::uint16_t site, dim3 grid,
                                     dim3 block, stream_kind stream, const Body& body,
                                     unsigned int shared_bytes, std::uint32_t work,
                                     std::uint16_t depth_step, unsigned int group = 0u,
                                     bool want = true) {
  launch_state* s = parent.state;
  // The lanes whose requests enter the device runtime one at a time: `group`, given by the
  // caller's program order; or, under launch_config::serialize_warp_launches, the lanes that
  // called together as __activemask() sees them (an experiment: that mask is a reading, not a
  // guarantee, and the lanes it names may not all reach the barriers below together).
  const unsigned int callers =
      group != 0u ? group : (s->serialize_warp_launches != 0u ? __activemask() : 0u);
  // A lane that requests nothing (want false: launch_child_warp) only takes part in the group's
  // turns below; its result says not launched and nothing is counted for it.
  launch_result result{launch_outcome::fallback_budget, cudaSuccess};
  bool acquired = false;
  std::uint32_t blocks = 0;
  const auto depth = static_cast<std::uint16_t>(parent.depth + depth_step);
  launch_context child{s, no_record, no_slot, depth, site, parent.tracing, {0, 0, 0}};
  std::uint64_t t_request = 0;
  if (want) {
    if (site >= trace_limits::max_sites) {
      raise_device_error(s, device_error_bad_site);
      site = trace_limits::max_sites - 1;
      child.site = site;
    }
    const std::uint64_t blocks64 = 1ull * grid.x * grid.y * grid.z;
    // A grid whose block count does not fit the completion slot's 32-bit counter, with room for
    // the grids it may own (at most slot_count), is refused (cudaErrorInvalidConfiguration) and
    // done inline, never wrapped.
    blocks = blocks64 > 0xffffffffull - s->slot_count ? 0u : static_cast<std::uint32_t>(blocks64);
    if (blocks == 0) {
      result = {launch_outcome::fallback_error, cudaErrorInvalidConfiguration};
    } else if (depth > s->max_depth) {
      result = {launch_outcome::fallback_depth, cudaSuccess};
    } else if (((s->refused_sites >> site) & 1ull) != 0ull) {
      result = {launch_outcome::fallback_budget, cudaSuccess};  // launch_config::refused_sites
    } else if (!acquire_pending(s, blocks, &child.slot, parent.tracing)) {
      result = {launch_outcome::fallback_budget, cudaSuccess};
    } else {
      result = {launch_outcome::launched, cudaSuccess};
      acquired = true;
    }
    // The record, once the outcome is known: for a grid to launch (should its launch fail, the
    // record says so) and a grid that cannot be launched (fallback_error); for a refusal only
    // under launch_config::record_refusals, so that a storm of refusals takes no ids and no
    // reads of the buffer's fill (commit 46d22d3; bench/trace_cost_bench.cu measures it).
    if (parent.tracing && (takes_record(result.outcome) || s->record_refusals != 0u)) {
      child.record = reserve_record(s);
      if (child.record < s->record_capacity) {
        // the request's time (stored records only), read before the launch: a child never
        // starts before it
        t_request = global_timer_ns();
        // the execution window starts empty before the child can run (it is visible to the
        // child: written before the launch by the launching thread)
        s->records[child.record].start_ns = no_time_start;
        s->records[child.record].end_ns = no_time_end;
      }
    }
  }
  // The launch of an acquired child: its owner gains a unit, the device runtime launches it, and a
  // launch that fails gives everything back.
  const auto launch_acquired = [&]() -> launch_result {
    // This thread's launch check must read only this launch's error: clear anything an earlier
    // device runtime call of the thread left behind (else a launch that succeeded would be
    // counted as failed, its work done twice and its completion slot never freed).
    (void)cudaGetLastError();
    // The new grid's owner, which cannot complete before it: the launching grid, or for a tail
    // launch (which runs after the launching grid is done) the launching grid's own owner. The
    // owner gains a unit before the launch (the child may finish at once) and cannot reach zero
    // meanwhile: the launching thread's block has not finished.
    const std::uint32_t owner = stream == stream_kind::tail && parent.slot != no_slot
                                    ? __ldcg(&s->slot_owner[parent.slot])
                                    : parent.slot;
    __stcg(&s->slot_owner[child.slot], owner);
    if (owner != no_slot) atomicAdd(in_global(&s->slots[owner]), 1u);
    cudaStream_t st = cudaStreamFireAndForget;
    cudaError_t err = cudaSuccess;
    switch (stream) {
      case stream_kind::fire_and_forget: st = cudaStreamFireAndForget; break;
      case stream_kind::tail: st = cudaStreamTailLaunch; break;
      case stream_kind::null_stream: st = 0; break;
      case stream_kind::not_observed: break;  // a profile's word for launches it did not make
      case stream_kind::named_per_thread:
        err = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
        break;
    }
    if (err == cudaSuccess) {
      if constexpr (has_launch_bounds<Body>::value) {
        bounded_child_entry_kernel<Body><<<grid, block, shared_bytes, st>>>(child, body);
      } else {
        child_entry_kernel<Body><<<grid, block, shared_bytes, st>>>(child, body);
      }
      err = cudaGetLastError();
      if (stream == stream_kind::named_per_thread) {
        (void)cudaStreamDestroy(st);
        (void)cudaGetLastError();  // leave no error behind for this thread's next launch check
      }
    } else {
      (void)cudaGetLastError();
    }
    if (err != cudaSuccess) {
      release_pending(s, child.slot);
      complete_unit(s, owner);  // the unit taken for the child (never the owner's last)
      return {launch_outcome::fallback_error, err};
    }
    note_launch(s);
    return {launch_outcome::launched, cudaSuccess};
  };
  if (callers != 0u) {
    // The calling group's acquired lanes enter the device runtime one at a time, in lane order,
    // the others waiting at a barrier of the group (never spinning elsewhere in the layer
    // meanwhile). Under serialize_warp_launches the group is the lanes that arrived together:
    // lanes of the warp that call from elsewhere at the same time (against the rule at the top
    // of this file) make groups of their own, which are not serialized against this one.
    unsigned int todo = __ballot_sync(callers, acquired);
    while (todo != 0u) {
      if (lane_id() == static_cast<unsigned int>(__ffs(static_cast<int>(todo)) - 1)) result = launch_acquired();
      todo &= todo - 1u;
      __syncwarp(callers);
    }
  } else if (acquired) {
    result = launch_acquired();
  }
  if (want && parent.tracing) {
    trace_request(parent, child.record, site, depth, blocks, block.x * block.y * block.z, work,
                  stream, result, t_request);
  }
  return result;
}
}  // namespace detail

/// Request a child grid running `body(child_context)` on every thread of `grid` x `block`.
///
/// Preconditions: called from a grid launched with a launch_context (`parent`); `site` <
/// trace_limits::max_sites; grid has at least one block; the calling lanes of a warp are
/// converged here (no other lane of the warp requests a launch from another point meanwhile:
/// see the rule at the top of this file). `work` (optional) is the number of useful
/// items the child covers; it feeds the child-size histograms.
/// Returns launched, or the reason the caller must now do the work itself (budget, depth, error).
/// Never blocks; never waits for the child (CDP2: a parent cannot wait; use stream_kind::tail for
/// work that must follow).
template <class Body>
__device__ launch_result launch_child(const launch_context& parent, std::uint16_t site, dim3 grid,
                                      dim3 block, stream_kind stream, const Body& body,
                                      unsigned int shared_bytes = 0, std::uint32_t work = 0) {
  return detail::launch_impl(parent, site, grid, block, stream, body, shared_bytes, work, 1);
}

/// launch_child for the lanes of a whole warp at once: every lane of the warp calls it at one
/// point of the program (no lane of the warp elsewhere: e.g. in code that every lane runs, after
/// a __syncwarp()), and each lane with `want` requests its own child grid (the arguments are
/// per lane). The requests take their budget and trace records as launch_child's do, then enter
/// the device runtime one lane at a time in lane order, the rest of the warp waiting meanwhile
/// at a barrier of the whole warp (__syncwarp(0xffffffff)), whose mask the program's order
/// guarantees rather than __activemask() reads: never two lanes of a warp inside the runtime's
/// launch at once (docs/design.md, "Launches from divergent lanes": a CDP recursion whose lanes
/// launched together stalled the device for good; one lane at a time it did not).
/// Returns, on a lane that wanted, what launch_child returns; on a lane that did not, a result
/// that is not launched (fallback_budget, cudaSuccess) and is not counted anywhere.
/// Preconditions: as launch_child's, and all 32 lanes of the warp call (a full warp: the
/// calling grid's block size is a multiple of 32).
template <class Body>
__device__ launch_result launch_child_warp(const launch_context& parent, bool want,
                                           std::uint16_t site, dim3 grid, dim3 block,
                                           stream_kind stream, const Body& body,
                                           unsigned int shared_bytes = 0, std::uint32_t work = 0) {
  return detail::launch_impl(parent, site, grid, block, stream, body, shared_bytes, work, 1,
                             0xffffffffu, want);
}

/// Request the continuation of the calling grid: `body` runs on a tail launch, after the
/// calling grid and everything it launched have finished, at the *same* depth (a continuation
/// is the next step of a loop, not a deeper level). The way to move a host loop onto the device
/// under CDP2, where a parent cannot wait for its children. Same contract as launch_child; when
/// it is not launched, the caller must arrange for the rest of the loop (e.g. hand it back to
/// the host).
template <class Body>
__device__ launch_result launch_continuation(const launch_context& self, std::uint16_t site,
                                             dim3 grid, dim3 block, const Body& body) {
  return detail::launch_impl(self, site, grid, block, stream_kind::tail, body, 0u, 0u, 0);
}

/// Request the next step of the calling grid's work as a fire-and-forget grid at the *same*
/// depth: for a multi-pass step of one recursion level (e.g. quicksort's scatter pass after its
/// count pass), launched by the caller once everything it depends on is done (typically from the
/// calling grid's last block, found with an atomic counter after a __threadfence()). The depth
/// cap counts recursion levels, not the passes of a level. Same contract as launch_child;
/// `shared_bytes` is the step's dynamic shared memory per block.
template <class Body>
__device__ launch_result launch_step(const launch_context& self, std::uint16_t site, dim3 grid,
                                     dim3 block, const Body& body, std::uint32_t work = 0,
                                     unsigned int shared_bytes = 0) {
  return detail::launch_impl(self, site, grid, block, stream_kind::fire_and_forget, body,
                             shared_bytes, work, 0);
}

/// True, in every thread of the calling block, when the block is the last of its grid's `grid`
/// blocks to arrive at `*done` (a counter in global memory, 0 before the grid runs): the block
/// that may go on with what the whole grid did, e.g. launch the next step over it
/// (launch_step). Each block's writes are fenced, by every thread, before it arrives, and the
/// last block fences after. `flag` is the caller's __shared__ bool that carries the answer to
/// the block's threads: it must not be written again before they have all read it (a
/// __syncthreads). Every thread of the block calls it.
__device__ inline bool last_block_to_arrive(std::uint32_t* done, std::uint32_t grid, bool& flag) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    flag = atomicAdd(detail::in_global(done), 1u) == grid - 1;
    if (flag) __threadfence();
  }
  __syncthreads();
  return flag;
}

namespace detail {
/// Body of a 1-D items child: thread k < num_items calls fn(self, k).
template <class ItemFn>
struct items_body {
  std::uint64_t num_items;
  ItemFn fn;
  __device__ void operator()(const launch_context& self) const {
    const std::uint64_t k = 1ull * blockIdx.x * blockDim.x + threadIdx.x;
    if (k < num_items) fn(self, k);
  }
};
}  // namespace detail

/// Request a 1-D child grid of ceil(num_items / child_block_threads) blocks of
/// `child_block_threads` threads in which thread k < num_items calls `fn(child_context, k)`. Same
/// contract as launch_child; a request with num_items == 0 or
/// ceil(num_items / child_block_threads) >= 2^31 is refused (fallback_error,
/// cudaErrorInvalidConfiguration) and must be done by the caller.
template <class ItemFn>
__device__ launch_result launch_items(const launch_context& parent, std::uint16_t site,
                                      std::uint64_t num_items, unsigned int child_block_threads,
                                      stream_kind stream, const ItemFn& fn) {
  // Past the grid's 2^31 - 1 blocks (or with no items) the grid is 0 blocks: the request is
  // refused as cudaErrorInvalidConfiguration and the caller does the work, never a wrapped grid.
  const std::uint64_t blocks64 =
      child_block_threads == 0
          ? 0
          : num_items / child_block_threads + (num_items % child_block_threads != 0);
  const auto blocks = blocks64 > 0x7fffffffull ? 0u : static_cast<unsigned int>(blocks64);
  const auto work =
      num_items > 0xffffffffull ? 0xffffffffu : static_cast<std::uint32_t>(num_items);
  return launch_child(parent, site, dim3(blocks), dim3(child_block_threads), stream,
                      detail::items_body<ItemFn>{num_items, fn}, 0u, work);
}

// ---- the trace's operations for algorithms: kernels never write the layer's storage -----------

/// Count `num_items` work items of `site` as done inline by the caller after a refused launch
/// (the calling SM's stripe, probe_counters::inline_items, which the host folds into
/// site_counters::inline_items). Traced runs only; with tracing off, one branch.
/// Precondition: site < trace_limits::max_sites.
__device__ inline void record_inline_items(const launch_context& ctx, std::uint16_t site,
                                           std::uint64_t num_items) {
  if (ctx.tracing) detail::add_aggregated(&detail::striped_counters(ctx.state, site)->inline_items, num_items);
}

/// Record a launch threshold an algorithm chose on the device (trace_totals::last_auto_threshold,
/// the last value wins). Written whether tracing is on or not; the algorithms also return the
/// threshold to their caller (e.g. for_each_segment's segment_result), which is the way to read it.
__device__ inline void record_auto_threshold(const launch_context& ctx, std::uint32_t threshold) {
  ctx.state->totals->last_auto_threshold = threshold;
}

/// launch_items, and when the child is not launched, the calling thread runs fn(parent, k) for
/// every k itself (counted as inline items of the site). The work is done either way.
template <class ItemFn>
__device__ launch_result launch_items_or_inline(const launch_context& parent, std::uint16_t site,
                                                std::uint64_t num_items,
                                                unsigned int child_block_threads,
                                                stream_kind stream, const ItemFn& fn) {
  const launch_result r = launch_items(parent, site, num_items, child_block_threads, stream, fn);
  if (!r) {
    for (std::uint64_t k = 0; k < num_items; ++k) fn(parent, k);
    record_inline_items(parent, site, num_items);
  }
  return r;
}

/// Raise a device error flag; the host API throws cdpkit::cuda_error after the algorithm.
__device__ inline void raise_device_error(const launch_context& ctx, std::uint32_t bits) {
  detail::raise_device_error(ctx.state, bits);
}

}  // namespace cdpkit
