#pragma once
// cdpkit/loop_to_child.cuh — for_each_segment over your own operators (compile with nvcc,
// relocatable device code, --extended-lambda for __device__ lambdas).
//
//   cdpkit::segments_view segs{d_begin, d_end, n};
//   cdpkit::for_each_segment(segs,
//       [=] __device__ (std::uint32_t i) { some_data[i] = do_some_work(i); },
//       [=] __device__ (std::uint32_t i, std::uint32_t j) { more_data[j] = do_more_work(i, j); },
//       cdpkit::loop_policy::thresholded());   // returns a segment_result: the T it used
//
// Semantics, whatever the policy: pre_op(i) runs exactly once for every i < num_segments;
// item_op(i, j) (or item_op(j)) runs exactly once for every j in [d_begin[i], d_end[i]), after
// pre_op(i) and with its writes visible. No order among different i or j is promised.
//
// A segmented sum instead of an item operation (cdpkit::segment_sum, agents/common.cuh):
//
//   cdpkit::for_each_segment(segs, cdpkit::loop_to_child::no_pre_op{},
//       cdpkit::segment_sum<Term, Combine>{term, combine}, policy);
//
// term(i, j) is item j's value; the agents add the values a thread walks alone, or that a warp's
// lanes hold for one segment (a child grid's threads sum several items each first), and call
// combine(i, partial) once per such group (combine adds atomically: partials arrive in no set
// order). SpMV's rows are one (cdpkit/spmv/agents/row_sum.cuh).
//
// Layers (as CUB's): this header is the entry point and dispatches on the policy; the thin
// __global__ wrappers are cdpkit/loop_to_child/kernels.cuh; the strategies themselves, one file
// each, are the agents of cdpkit/loop_to_child/agents.cuh, which other algorithms use directly.

#include <cdpkit/detail/device_buffer.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/loop_to_child/kernels.cuh>
#include <cdpkit/nvtx.hpp>

#include <cub/device/device_scan.cuh>

namespace cdpkit {

namespace loop_to_child::detail {

/// The part of a scratch block at `offset` bytes from `base`, as a T array.
template <class T>
T* scratch_part(unsigned char* base, std::size_t offset) {
  return reinterpret_cast<T*>(base + offset);
}

/// for_each_segment_async with the destination of an automatic threshold given: when
/// policy.auto_threshold(), the threshold is picked on the device into *d_picked (4 bytes of
/// device memory that live until the work is done; required then) and the returned handle does
/// not own it. With d_picked == nullptr, the handle owns a buffer of its own, or with
/// `use_workspace` the threshold goes to the runtime's workspace.
///
/// The call's scratch (the threshold pick's histograms, the aggregated policies' scan, the flat
/// grid's lengths, scan, total and CUB storage) is one block: with `use_workspace`, the
/// runtime's (launch_runtime::workspace: the caller waits for the work before another call
/// reuses it, and abandons the workspace if it cannot); otherwise a stream-ordered buffer of the
/// call's own, freed after the work (and the picked threshold's 4 bytes, which the handle owns).
template <class Segments, class PreOp, class ItemOp>
segment_async_result enqueue_for_each_segment(const Segments& segments, PreOp pre_op,
                                              ItemOp item_op, const loop_policy& policy,
                                              launch_runtime& runtime, cudaStream_t stream,
                                              std::uint32_t* d_picked, bool use_workspace = false) {
  CDPKIT_NVTX_RANGE(to_string(policy.kind));
  segment_result known;
  known.kind = policy.kind;
  known.threshold_auto = policy.auto_threshold();
  if (policy.uses_cdp() && !known.threshold_auto) known.threshold = policy.threshold;
  const std::uint32_t n = segments.num_segments;
  if (n == 0) return segment_async_result(known, nullptr);
  if (n > max_segments)
    throw input_error("for_each_segment: " + std::to_string(n) +
                      " segments; at most " + std::to_string(max_segments) +
                      " (2^32 - 256) are supported (32-bit thread indices)");
  ::cdpkit::detail::check_child_block_threads(policy.child_block_threads, "loop_policy::child_block_threads");
  const launch_context ctx = runtime.root_context();
  const auto grid = static_cast<unsigned int>((std::uint64_t{n} + block_threads - 1) / block_threads);
  const bool aggregated = policy.kind == loop_policy_kind::warp_aggregated ||
                          policy.kind == loop_policy_kind::block_aggregated;
  const bool flat = policy.kind == loop_policy_kind::flat_balanced;

  // The scratch, laid out as parts of one block (256-byte aligned).
  std::size_t bytes = 0;
  const auto part = [&bytes](std::size_t size) {
    const std::size_t at = bytes;
    bytes += (size + 255) / 256 * 256;
    return at;
  };
  const std::size_t at_histograms = known.threshold_auto ? part(sizeof(length_histograms)) : 0;
  const bool picked_in_scratch = known.threshold_auto && d_picked == nullptr && use_workspace;
  const std::size_t at_picked = picked_in_scratch ? part(sizeof(std::uint32_t)) : 0;
  const std::size_t at_scan = aggregated ? part(sizeof(std::uint32_t) * n)
                              : flat     ? part(sizeof(std::uint32_t) * (std::size_t{n} + 1))
                                         : 0;
  const std::size_t at_lengths = flat ? part(sizeof(std::uint32_t) * (std::size_t{n} + 1)) : 0;
  const std::size_t at_total = flat ? part(sizeof(unsigned long long)) : 0;
  std::size_t temp_bytes = 0;
  if (flat)
    CDPKIT_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, static_cast<std::uint32_t*>(nullptr),
                                                  static_cast<std::uint32_t*>(nullptr), n + 1, stream));
  const std::size_t at_temp = flat ? part(temp_bytes) : 0;
  ::cdpkit::detail::device_buffer<unsigned char> own;  // (freed stream-ordered, after the work)
  unsigned char* scratch = nullptr;
  if (bytes > 0) {
    if (use_workspace) {
      scratch = static_cast<unsigned char*>(runtime.workspace(bytes));
    } else {
      own = ::cdpkit::detail::device_buffer<unsigned char>(bytes, stream);
      scratch = own.data();
    }
  }

  // The threshold: given, or picked on the device from the length distribution (no round trip).
  threshold_arg threshold{policy.threshold.value_or(0u), nullptr};
  ::cdpkit::detail::device_buffer<std::uint32_t> picked;
  if (known.threshold_auto) {
    CDPKIT_NVTX_SCOPE("loop_to_child::pick_threshold");
    length_histograms* const histograms = scratch_part<length_histograms>(scratch, at_histograms);
    if (picked_in_scratch) {
      d_picked = scratch_part<std::uint32_t>(scratch, at_picked);
    } else if (d_picked == nullptr) {
      picked = ::cdpkit::detail::device_buffer<std::uint32_t>(1, stream);
      d_picked = picked.data();
    }
    CDPKIT_CUDA_TRY(cudaMemsetAsync(histograms, 0, sizeof(length_histograms), stream));
    const int which = policy.kind == loop_policy_kind::warp_aggregated    ? 1
                      : policy.kind == loop_policy_kind::block_aggregated ? 2
                                                                          : 0;
    const auto max_launches = static_cast<std::uint32_t>(
        policy.cost_model.budget_share * static_cast<double>(runtime.pending_budget()));
    pick_threshold_kernel<<<grid, block_threads, 0, stream>>>(
        ctx, segments, histograms, which, policy.cost_model.serial_item_ns / policy.loop_lanes(),
        policy.cost_model.launch_ns[static_cast<int>(policy.stream)], max_launches, d_picked);
    threshold.d_picked = d_picked;
  }

  std::uint32_t* const scan = scratch_part<std::uint32_t>(scratch, at_scan);
  switch (policy.kind) {
    case loop_policy_kind::serial_loop:
      serial_loop_kernel<<<grid, block_threads, 0, stream>>>(ctx, segments, pre_op, item_op);
      break;
    case loop_policy_kind::child_per_thread:
    case loop_policy_kind::thresholded: {
      const std::uint16_t site = policy.launch_site.value_or(
          policy.kind == loop_policy_kind::child_per_thread
              ? static_cast<std::uint16_t>(sites::l2c_child_per_thread)
              : static_cast<std::uint16_t>(sites::l2c_thresholded));
      thresholded_kernel<<<grid, block_threads, 0, stream>>>(ctx, segments, pre_op, item_op,
                                                             threshold, policy.stream, site,
                                                             policy.child_block_threads);
      break;
    }
    case loop_policy_kind::warp_aggregated:
      warp_aggregated_kernel<<<grid, block_threads, 0, stream>>>(
          ctx, segments, pre_op, item_op, threshold, policy.stream, scan, policy.child_block_threads,
          policy.launch_site.value_or(static_cast<std::uint16_t>(sites::l2c_warp_aggregated)));
      break;
    case loop_policy_kind::block_aggregated:
      block_aggregated_kernel<<<grid, block_threads, 0, stream>>>(
          ctx, segments, pre_op, item_op, threshold, policy.stream, scan, policy.child_block_threads,
          policy.launch_site.value_or(static_cast<std::uint16_t>(sites::l2c_block_aggregated)));
      break;
    case loop_policy_kind::flat_balanced: {
      std::uint32_t* const lengths = scratch_part<std::uint32_t>(scratch, at_lengths);
      unsigned long long* const total = scratch_part<unsigned long long>(scratch, at_total);
      {
        CDPKIT_NVTX_SCOPE("flat_balanced::prepare");
        CDPKIT_CUDA_TRY(cudaMemsetAsync(total, 0, sizeof(unsigned long long), stream));
        const auto grid1 = static_cast<unsigned int>((std::uint64_t{n} + block_threads) / block_threads);
        flat_prepare_kernel<<<grid1, block_threads, 0, stream>>>(ctx, segments, pre_op, lengths, total);
      }
      {
        CDPKIT_NVTX_SCOPE("flat_balanced::scan");
        CDPKIT_CUDA_TRY(cub::DeviceScan::ExclusiveSum(scratch_part<unsigned char>(scratch, at_temp), temp_bytes,
                                                      lengths, scan, n + 1, stream));
      }
      {
        CDPKIT_NVTX_SCOPE("flat_balanced::items");
        int device = 0, sms = 0;
        CDPKIT_CUDA_TRY(cudaGetDevice(&device));
        CDPKIT_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        const unsigned int items_grid = static_cast<unsigned int>(sms) * 8u;  // 2048 thr/SM
        flat_items_kernel<<<items_grid, block_threads, 0, stream>>>(ctx, segments, scan, total, item_op);
      }
      break;
    }
  }
  CDPKIT_CUDA_TRY(cudaGetLastError());
  return segment_async_result(known, threshold.d_picked, std::move(picked));
}

}  // namespace loop_to_child::detail

/// Asynchronous for_each_segment: enqueues the work on `stream` and returns a handle whose
/// result() tells, once the caller has synchronized `stream`, what the run did (the threshold it
/// used: given, or picked on the device). Device-side errors (a segment with end < start)
/// surface at the next CDPKIT_CHECK_DEVICE_ERRORS(runtime).
///
/// Segments: cdpkit::segments_view, or any trivially copyable type with `num_segments` and
/// `__device__ std::uint32_t begin(i)` / `end(i)`.
/// Preconditions: the segments' bounds are device-readable; num_segments <= max_segments
/// (checked: cdpkit::input_error); policy.child_block_threads is a multiple of 32 in [32, 1024]
/// (checked: cdpkit::input_error); flat_balanced needs fewer than 2^32 items in all (checked on
/// the device: device_error_item_overflow; pre_op has run by then, no item_op has); the other
/// policies take any total; pre_op and item_op are trivially copyable device callables, and item_op
/// must not assume any order. `runtime` outlives the work.
template <class Segments, class PreOp, class ItemOp>
segment_async_result for_each_segment_async(const Segments& segments, PreOp pre_op,
                                            ItemOp item_op, const loop_policy& policy,
                                            launch_runtime& runtime, cudaStream_t stream) {
  return loop_to_child::detail::enqueue_for_each_segment(segments, pre_op, item_op, policy,
                                                         runtime, stream, nullptr);
}

/// for_each_segment: as for_each_segment_async, with its scratch in the runtime's workspace
/// (launch_runtime::workspace: no allocation once it is large enough), then waits for `stream`
/// under the watchdog (cdpkit/wait.hpp) and throws cdpkit::cuda_error if the device flagged an
/// error (e.g. a segment with end < start) or did not finish within the deadline. Returns what
/// the run did: the policy and the threshold it used (an automatic one is read back: a 4-byte
/// copy), traced or not.
template <class Segments, class PreOp, class ItemOp>
segment_result for_each_segment(const Segments& segments, PreOp pre_op, ItemOp item_op,
                                const loop_policy& policy,
                                launch_runtime& runtime = default_runtime(),
                                cudaStream_t stream = nullptr) {
  CDPKIT_NVTX_SCOPE("loop_to_child::for_each_segment");
  // The scratch is the runtime's workspace: this call waits for its work before it returns, so
  // the next call may reuse it. After an error the work may still run: the workspace is kept
  // only where the work is seen to finish, and abandoned otherwise (e.g. after a missed deadline).
  segment_async_result pending;
  try {
    pending = loop_to_child::detail::enqueue_for_each_segment(segments, pre_op, item_op, policy, runtime, stream,
                                                              nullptr, /*use_workspace=*/true);
    CDPKIT_WAIT_STREAM(stream, runtime, "loop_to_child::for_each_segment");
  } catch (const input_error&) {
    throw;  // refused before anything was enqueued: the workspace is as it was
  } catch (...) {
    bool finished = false;
    if (!device_unresponsive()) {
      try {
        CDPKIT_WAIT_STREAM(stream, runtime, "loop_to_child::for_each_segment (after an error)");
        finished = true;
      } catch (...) {  // (the first error is the one to report)
      }
    }
    if (!finished) runtime.abandon_workspace();
    throw;
  }
  CDPKIT_CHECK_DEVICE_ERRORS(runtime);
  return pending.result();
}

}  // namespace cdpkit
