// The reference loop-to-child workload: its device buffers, its operators, the dispatch of
// every policy over them, and the Thrust reference it is checked against.

#include <cdpkit/error.hpp>
#include <cdpkit/loop_to_child.cuh>
#include <cdpkit/harness/segment_workload.hpp>
#include <cdpkit/loop_to_child.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/wait.hpp>
#include <cdpkit/nvtx.hpp>

#include <thrust/binary_search.h>
#include <thrust/count.h>
#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/transform.h>
#include <thrust/inner_product.h>

#include <string>
#include <utility>

namespace cdpkit::harness {

namespace {

/// A 32-bit mixer (lowbias32); bijective, so every bit of the input matters.
__host__ __device__ __forceinline__ std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

__host__ __device__ __forceinline__ std::uint32_t item_value(std::uint32_t in, std::uint32_t i,
                                                             std::uint32_t rounds) {
  std::uint32_t x = in ^ (i * 0x9e3779b9u);
  for (std::uint32_t r = 0; r < rounds; ++r) x = mix32(x + r);
  return x;
}

/// "doSomeWork": the parent's own result.
struct pre_op {
  std::uint32_t* d_parent_out;
  __device__ void operator()(std::uint32_t i) const { d_parent_out[i] = mix32(i ^ 0xa5a5a5a5u); }
};

/// "doMoreWork": one item.
struct item_op {
  const std::uint32_t* d_in;
  std::uint32_t* d_out;
  std::uint32_t rounds;
  __device__ void operator()(std::uint32_t i, std::uint32_t j) const {
    d_out[j] = item_value(d_in[j], i, rounds);
  }
};

struct reference_item {
  const std::uint32_t* d_in;
  std::uint32_t rounds;
  __device__ std::uint32_t operator()(std::uint32_t j, std::uint32_t segment) const {
    return item_value(d_in[j], segment, rounds);
  }
};

struct reference_parent {
  __device__ std::uint32_t operator()(std::uint32_t i) const { return mix32(i ^ 0xa5a5a5a5u); }
};

struct input_fill {
  std::uint64_t seed;
  __device__ std::uint32_t operator()(std::uint32_t j) const {
    return mix32(j ^ static_cast<std::uint32_t>(seed) ^ static_cast<std::uint32_t>(seed >> 32));
  }
};

}  // namespace

segment_workload::segment_workload(const std::vector<std::uint32_t>& offsets, std::uint32_t rounds,
                                   std::uint64_t seed)
    : rounds_(rounds) {
  if (offsets.empty() || offsets.front() != 0)
    throw input_error("segment_workload: offsets must start with 0 (got " +
                      (offsets.empty() ? std::string("no offsets") : std::to_string(offsets[0])) +
                      ")");
  for (std::size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1])
      throw input_error("segment_workload: offsets decrease at segment " + std::to_string(i - 1) +
                        " (" + std::to_string(offsets[i - 1]) + " > " +
                        std::to_string(offsets[i]) + ")");
    max_len_ = std::max(max_len_, offsets[i] - offsets[i - 1]);
  }
  if (offsets.size() - 1 > max_segments)
    throw input_error("segment_workload: " + std::to_string(offsets.size() - 1) +
                      " segments; at most " + std::to_string(max_segments) + " are supported");
  num_segments_ = static_cast<std::uint32_t>(offsets.size() - 1);
  num_items_ = offsets.back();
  // offsets, inputs, outputs, parent outputs, and the reference's copies (computed on the first
  // check): refuse before allocating what the device cannot hold.
  require_device_memory(sizeof(std::uint32_t) * (2 * offsets.size() + 4 * (num_items_ + 1)),
                        "segment_workload of " + std::to_string(num_segments_) + " segments and " +
                            std::to_string(num_items_) + " items");
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_offsets_), sizeof(std::uint32_t) * offsets.size()));
  CDPKIT_CUDA_TRY(cudaMemcpy(d_offsets_.get(), offsets.data(), sizeof(std::uint32_t) * offsets.size(),
                             cudaMemcpyHostToDevice));
  const std::size_t items = num_items_ > 0 ? num_items_ : 1;
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_item_in_), sizeof(std::uint32_t) * items));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_item_out_), sizeof(std::uint32_t) * items));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_parent_out_),
                             sizeof(std::uint32_t) * (std::size_t{num_segments_} + 1)));
  thrust::transform(thrust::device, thrust::counting_iterator<std::uint32_t>(0),
                    thrust::counting_iterator<std::uint32_t>(static_cast<std::uint32_t>(items)),
                    thrust::device_pointer_cast(d_item_in_.get()), input_fill{seed});
  wait_for_device("segment_workload: input fill", nullptr, __FILE__, __LINE__);
  clear_outputs();
}

void segment_workload::clear_outputs(cudaStream_t stream) {
  const std::size_t items = num_items_ > 0 ? num_items_ : 1;
  CDPKIT_CUDA_TRY(cudaMemsetAsync(d_item_out_.get(), 0, sizeof(std::uint32_t) * items, stream));
  CDPKIT_CUDA_TRY(
      cudaMemsetAsync(d_parent_out_.get(), 0, sizeof(std::uint32_t) * (std::size_t{num_segments_} + 1), stream));
}

segment_async_result segment_workload::run_async(const loop_policy& policy,
                                                 launch_runtime& runtime, cudaStream_t stream) {
  const segments_view segments{d_offsets_.get(), d_offsets_.get() + 1, num_segments_};
  return for_each_segment_async(segments, pre_op{d_parent_out_.get()},
                                item_op{d_item_in_.get(), d_item_out_.get(), rounds_}, policy,
                                runtime, stream);
}

segment_result segment_workload::run(const loop_policy& policy, launch_runtime& runtime,
                                     cudaStream_t stream) {
  CDPKIT_NVTX_SCOPE("segment_workload::run");
  const segment_async_result pending = run_async(policy, runtime, stream);
  CDPKIT_WAIT_STREAM(stream, runtime, "segment_workload::run");
  CDPKIT_CHECK_DEVICE_ERRORS(runtime);
  return pending.result();
}

std::uint64_t segment_workload::count_mismatches() const {
  CDPKIT_NVTX_SCOPE("segment_workload::count_mismatches");
  const std::size_t items = num_items_;
  if (!d_ref_item_) {
    // The reference, independent of every policy: each item's segment by a Thrust vectorized
    // upper_bound over the offsets, then a plain transform.
    CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_ref_item_), sizeof(std::uint32_t) * (items > 0 ? items : 1)));
    CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_ref_parent_),
                               sizeof(std::uint32_t) * (std::size_t{num_segments_} + 1)));
    thrust::device_vector<std::uint32_t> segment_of(items);
    auto offsets = thrust::device_pointer_cast(d_offsets_.get());
    thrust::upper_bound(thrust::device, offsets + 1, offsets + 1 + num_segments_,
                        thrust::counting_iterator<std::uint32_t>(0),
                        thrust::counting_iterator<std::uint32_t>(static_cast<std::uint32_t>(items)),
                        segment_of.begin());
    thrust::transform(thrust::device, thrust::counting_iterator<std::uint32_t>(0),
                      thrust::counting_iterator<std::uint32_t>(static_cast<std::uint32_t>(items)),
                      segment_of.begin(), thrust::device_pointer_cast(d_ref_item_.get()),
                      reference_item{d_item_in_.get(), rounds_});
    thrust::transform(thrust::device, thrust::counting_iterator<std::uint32_t>(0),
                      thrust::counting_iterator<std::uint32_t>(num_segments_),
                      thrust::device_pointer_cast(d_ref_parent_.get()), reference_parent{});
  }
  const auto item_mismatches = thrust::inner_product(
      thrust::device, thrust::device_pointer_cast(d_item_out_.get()),
      thrust::device_pointer_cast(d_item_out_.get()) + items, thrust::device_pointer_cast(d_ref_item_.get()),
      std::uint64_t{0}, thrust::plus<std::uint64_t>(), thrust::not_equal_to<std::uint32_t>());
  const auto parent_mismatches = thrust::inner_product(
      thrust::device, thrust::device_pointer_cast(d_parent_out_.get()),
      thrust::device_pointer_cast(d_parent_out_.get()) + num_segments_,
      thrust::device_pointer_cast(d_ref_parent_.get()), std::uint64_t{0}, thrust::plus<std::uint64_t>(),
      thrust::not_equal_to<std::uint32_t>());
  wait_for_device("segment_workload::count_mismatches", nullptr, __FILE__, __LINE__);
  return item_mismatches + parent_mismatches;
}

}  // namespace cdpkit::harness
