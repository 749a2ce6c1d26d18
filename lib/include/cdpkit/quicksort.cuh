#pragma once
// cdpkit/quicksort.cuh — the definitions of cdpkit::quicksort and friends (cdpkit/quicksort.hpp),
// for your own comparators and value types. Include it in a .cu file compiled with relocatable
// device code (cdpkit_enable_cdp in CMake). The instantiations the library ships (see
// quicksort.hpp) are not compiled again here.
//
// Host dispatch per variant:
//   simple       one thread at the root (simple_root_kernel), children through the layer
//   two_stream   the root's task record, then its partition grid
//   fast         one block for up to a medium range (the small-range kernel with one job);
//                else the root's task record, its count grid (the children's count body with
//                256-thread blocks, launched from the host: the partition recursion happens on
//                the device, in 1024-thread grids), and the drain grid over the queued small
//                ranges, next on the stream
//   radix        as fast: one block for up to a medium range; else the root's task record (its
//                highest digit), its count grid from the host, and the drain grid
//   (two_stream launches its root with the kernel of its children: one copy of the device code)
//   host_driven  fast's steps, level by level: count, scan and scatter grids over all of a
//                level's tasks, one copy of the bucket starts to the host, the drain kernel over
//                the level's small buckets, and the next level's tasks
//   thrust_*     thrust::sort on the stream (its temporary storage from the scratch when given)

#include <cdpkit/detail/device_buffer.hpp>
#include <cdpkit/detail/resident_blocks.cuh>
#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/quicksort.hpp>
#include <cdpkit/quicksort/agents/common.cuh>
#include <cdpkit/quicksort/agents/fast.cuh>
#include <cdpkit/quicksort/agents/radix.cuh>
#include <cdpkit/quicksort/agents/simple.cuh>
#include <cdpkit/quicksort/agents/two_stream.cuh>
#include <cdpkit/wait.hpp>

#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace cdpkit {

namespace quicksort_detail {

// ---- host_driven's kernels: fast's steps over all tasks of a level -----------------------------

/// Task of a level's grid block: the last task whose first block is <= blockIdx.x.
__device__ __forceinline__ std::uint32_t task_of_block(const std::uint32_t* first_block,
                                                       std::uint32_t tasks, std::uint32_t block) {
  std::uint32_t lo = 0, hi = tasks;  // first_block[lo] <= block < first_block[hi]
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (first_block[mid] <= block) lo = mid;
    else hi = mid;
  }
  return lo;
}

template <class T, class V, class Compare>
__global__ void __launch_bounds__(block_threads, fast_agent<T, V, Compare>::pass_min_blocks)
    level_count_kernel(launch_context ctx, fast_args<T, V, Compare> a,
                       const std::uint32_t* first_block, std::uint32_t tasks) {
  const std::uint32_t t = task_of_block(first_block, tasks, blockIdx.x);
  fast_agent<T, V, Compare>::template count_block<false>(ctx, a, a.tasks + t,
                                                        blockIdx.x - first_block[t]);
}

template <class T, class V, class Compare>
__global__ void __launch_bounds__(block_threads)
    level_scan_kernel(fast_args<T, V, Compare> a) {
  fast_agent<T, V, Compare>::scan_counts(a.tasks + blockIdx.x);
}

template <class T, class V, class Compare>
__global__ void __launch_bounds__(block_threads, fast_agent<T, V, Compare>::pass_min_blocks)
    level_scatter_kernel(launch_context ctx, fast_args<T, V, Compare> a,
                         const std::uint32_t* first_block, std::uint32_t tasks) {
  const std::uint32_t t = task_of_block(first_block, tasks, blockIdx.x);
  fast_agent<T, V, Compare>::template scatter_block<false>(ctx, a, a.tasks + t,
                                                          blockIdx.x - first_block[t]);
}

// ---- the Thrust yardsticks ----------------------------------------------------------------------

/// Thrust's temporary storage: bump-allocated from the caller's scratch when given, else
/// stream-ordered allocations.
class thrust_allocator {
 public:
  using value_type = char;
  thrust_allocator(char* base, std::size_t bytes, cudaStream_t stream)
      : base_(base), bytes_(bytes), stream_(stream) {}
  char* allocate(std::ptrdiff_t n) {
    const std::size_t want = (static_cast<std::size_t>(n) + 255) / 256 * 256;
    if (base_ != nullptr) {
      if (used_ + want > bytes_)
        throw input_error("quicksort: the scratch given (" + std::to_string(bytes_) +
                          " bytes) is too small for Thrust's temporary storage");
      char* p = base_ + used_;
      used_ += want;
      return p;
    }
    void* p = nullptr;
    CDPKIT_CUDA_TRY(cudaMallocAsync(&p, want, stream_));
    return static_cast<char*>(p);
  }
  void deallocate(char* p, std::size_t) {
    if (base_ == nullptr) (void)cudaFreeAsync(p, stream_);
  }

 private:
  char* base_;
  std::size_t bytes_;
  std::size_t used_ = 0;
  cudaStream_t stream_;
};

/// A comparator Thrust does not recognize, so that thrust::sort merge-sorts.
template <class Compare>
struct opaque_compare {
  Compare comp;
  template <class A, class B>
  __host__ __device__ bool operator()(const A& a, const B& b) const {
    return comp(a, b);
  }
};

template <class T, class Compare>
inline constexpr bool is_less_v = std::is_same_v<Compare, less<T>>;

/// thrust_radix is thrust::sort itself: Thrust's ascending radix sort.
inline constexpr const char* thrust_radix_refusal =
    "quicksort: thrust_radix is thrust::sort's ascending radix sort and takes cdpkit::less only "
    "(use thrust_merge, thrust::sort with a comparator, for any other order)";

template <class T, class V, class Compare>
void thrust_sort(T* keys, V* values, std::uint64_t n, Compare comp, quicksort_variant variant,
                 char* scratch, std::size_t scratch_bytes, cudaStream_t stream) {
  thrust_allocator alloc(scratch, scratch_bytes, stream);
  auto policy = thrust::cuda::par_nosync(alloc).on(stream);
  const auto count = static_cast<std::ptrdiff_t>(n);
  if (variant == quicksort_variant::thrust_radix) {
    if constexpr (is_less_v<T, Compare>) {
      if constexpr (has_values<V>) thrust::sort_by_key(policy, keys, keys + count, values);
      else thrust::sort(policy, keys, keys + count);
    } else {
      throw input_error(thrust_radix_refusal);
    }
  } else {
    const opaque_compare<Compare> order{comp};
    if constexpr (has_values<V>) thrust::sort_by_key(policy, keys, keys + count, values, order);
    else thrust::sort(policy, keys, keys + count, order);
  }
  CDPKIT_CUDA_TRY(cudaGetLastError());
}

// ---- the call ----------------------------------------------------------------------------------

template <class T, class V, class Compare>
void run_host_driven(const fast_args<T, V, Compare>& a, std::uint64_t n, const scratch_layout& l,
                     char* scratch, launch_runtime& runtime, cudaStream_t stream,
                     quicksort_result& result) {
  using task_t = fast_task<key_storage_t<T>>;
  auto* d_first_block =
      reinterpret_cast<std::uint32_t*>(scratch + l.jobs + sizeof(small_job) * l.job_capacity);
  struct range {
    std::uint32_t begin, size, which;
  };
  std::vector<range> level{{0, static_cast<std::uint32_t>(n), 0}};
  std::vector<task_t> records;
  std::vector<std::uint32_t> first_block;
  std::vector<small_job> jobs;
  const launch_context ctx = runtime.root_context();
  std::uint32_t id = 0;
  while (!level.empty()) {
    CDPKIT_NVTX_SCOPE_PAYLOAD("quicksort::host_driven level", result.host_levels);
    const std::string name = "quicksort level " + std::to_string(result.host_levels);
    if (level.size() > l.task_capacity)
      throw cuda_error(cudaErrorUnknown, "quicksort host_driven: task pool exceeded (library bug)",
                       __FILE__, __LINE__);
    // 1. the level's task records (counts zero) and the block -> task map
    records.assign(level.size(), task_t{});
    first_block.assign(1, 0);
    std::uint64_t arena = 0;
    for (std::size_t k = 0; k < level.size(); ++k) {
      task_t& t = records[k];
      t.begin = level[k].begin;
      t.size = level[k].size;
      t.grid = partition_grid(t.size);
      t.wanted = static_cast<std::uint16_t>(partition_buckets(t.size, grid_bucket_target));
      t.levels = static_cast<std::uint8_t>(tree_levels(t.wanted));
      t.which = static_cast<std::uint8_t>(level[k].which);
      t.arena = static_cast<std::uint32_t>(arena);
      t.id = id++;
      arena += std::uint64_t{t.grid} * max_buckets;
      first_block.push_back(first_block.back() + t.grid);
    }
    if (arena > l.arena_capacity)
      throw cuda_error(cudaErrorUnknown, "quicksort host_driven: offsets arena exceeded (library bug)",
                       __FILE__, __LINE__);
    const auto tasks = static_cast<std::uint32_t>(level.size());
    const std::uint32_t blocks = first_block.back();
    // (copies from and to pageable memory wait for the stream's earlier work without a
    // deadline: the watchdog's wait comes first, so that they find nothing to wait for)
    CDPKIT_WAIT_STREAM(stream, runtime, name.c_str());
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(a.tasks, records.data(), sizeof(task_t) * tasks,
                                    cudaMemcpyHostToDevice, stream));
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(d_first_block, first_block.data(),
                                    sizeof(std::uint32_t) * (tasks + 1), cudaMemcpyHostToDevice,
                                    stream));
    // 2. count, scan, scatter: three grids over every task of the level
    level_count_kernel<<<blocks, block_threads, 0, stream>>>(ctx, a, d_first_block, tasks);
    level_scan_kernel<<<tasks, block_threads, 0, stream>>>(a);
    level_scatter_kernel<<<blocks, block_threads, 0, stream>>>(ctx, a, d_first_block, tasks);
    CDPKIT_CUDA_TRY(cudaGetLastError());
    // 3. one round trip: the bucket starts of every task
    CDPKIT_WAIT_STREAM(stream, runtime, name.c_str());
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(records.data(), a.tasks, sizeof(task_t) * tasks,
                                    cudaMemcpyDeviceToHost, stream));
    ++result.host_levels;
    // 4. the next level: small buckets to one grid, large ones to the next level's tasks, large
    //    runs of equal keys copied home
    std::vector<range> next;
    std::vector<small_job> copies;
    jobs.clear();
    for (std::uint32_t k = 0; k < tasks; ++k) {
      const task_t& t = records[k];
      const std::uint32_t to = 1 - t.which;
      const unsigned int buckets = 2 * ((1u << t.levels) - 1) + 1;
      for (unsigned int b = 0; b < buckets; ++b) {
        const std::uint32_t begin = t.begin + t.start[b], size = t.start[b + 1] - t.start[b];
        switch (action_of(b, size, to)) {
          case bucket_action::small_sort:
          case bucket_action::small_copy:
            jobs.push_back({begin, size, to | (b % 2 == 1 ? 2u : 0u)});
            break;
          case bucket_action::child_task: next.push_back({begin, size, to}); break;
          case bucket_action::copy_grid: copies.push_back({begin, size, to}); break;
          default: break;
        }
      }
    }
    if (!jobs.empty()) {
      if (jobs.size() > l.job_capacity)
        throw cuda_error(cudaErrorUnknown, "quicksort host_driven: job queue exceeded (library bug)",
                         __FILE__, __LINE__);
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(a.jobs, jobs.data(), sizeof(small_job) * jobs.size(),
                                      cudaMemcpyHostToDevice, stream));
      using drain = typename fast_agent<T, V, Compare>::drain_body;
      bounded_child_entry_kernel<drain>
          <<<static_cast<unsigned int>(jobs.size()), block_threads, 0, stream>>>(
              ctx, drain{a, {}, false});
      CDPKIT_CUDA_TRY(cudaGetLastError());
    }
    // (after the pageable upload above, so that it found nothing to wait for)
    for (const small_job& c : copies) {
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(a.buf.keys[0] + c.begin, a.buf.keys[1] + c.begin,
                                      sizeof(T) * c.size, cudaMemcpyDeviceToDevice, stream));
      if constexpr (has_values<V>)
        CDPKIT_CUDA_TRY(cudaMemcpyAsync(a.buf.values[0] + c.begin, a.buf.values[1] + c.begin,
                                        sizeof(V) * c.size, cudaMemcpyDeviceToDevice, stream));
    }
    level = std::move(next);
  }
}

inline constexpr const char* radix_refusal =
    "quicksort: radix sorts by the order bits of less, greater and total_order_less on 4- and "
    "8-byte arithmetic keys (use fast for any other comparator)";

/// The arguments of a grid recursion (Task: fast_task or radix_task) over the scratch laid out as
/// `l`.
template <class Task, class T, class V, class Compare>
partition_args<T, V, Compare, Task> args_in_scratch(const sort_buffers<T, V>& buf, const scratch_layout& l,
                                                    char* scratch, std::uint64_t seed, Compare comp) {
  return {buf,
          reinterpret_cast<Task*>(scratch + l.tasks),
          l.task_capacity,
          reinterpret_cast<std::uint32_t*>(scratch + l.arena),
          l.arena_capacity,
          reinterpret_cast<scratch_counters*>(scratch + l.counters),
          reinterpret_cast<small_job*>(scratch + l.jobs),
          l.job_capacity,
          seed,
          comp};
}

/// A grid recursion's launches (fast, radix): one block sorts up to a medium range; else the
/// root's task record (`init`), its count grid from the host (256-thread blocks, six per SM; the
/// grids the device launches have child_pass_threads), and next on the stream the drain grid, so
/// that it starts once the root grid and every descendant are done: as many blocks as fit at
/// once, each taking jobs until none is left.
template <class Agent, class Task, class T, class V, class Compare, class Init>
void run_grid_recursion(const partition_args<T, V, Compare, Task>& a, std::uint64_t n, Init init,
                        const launch_context& root, cudaStream_t stream) {
  const auto n32 = static_cast<std::uint32_t>(n);
  if (n <= medium_keys) {
    using drain = typename Agent::drain_body;
    bounded_child_entry_kernel<drain><<<1, block_threads, 0, stream>>>(root, drain{a, small_job{0, n32, 0}, true});
    return;
  }
  init<<<1, block_threads, 0, stream>>>(a, n32);
  using count = typename Agent::template count_body<block_threads>;
  bounded_child_entry_kernel<count><<<partition_grid(n), block_threads, 0, stream>>>(root, count{a, a.tasks});
  CDPKIT_CUDA_TRY(cudaGetLastError());
  const auto drain = drain_kernel<Agent, partition_args<T, V, Compare, Task>>;
  drain<<<cdpkit::detail::resident_blocks(drain, block_threads), block_threads, 0, stream>>>(root, a);
}

template <class T, class V, class Compare>
quicksort_result sort_impl(T* keys, V* values, std::uint64_t n, Compare comp,
                           const quicksort_options& o, cudaStream_t stream, bool wait) {
  const std::string range = std::string("quicksort::") + to_string(o.variant);
  CDPKIT_NVTX_RANGE(range.c_str());
  constexpr std::size_t value_bytes = has_values<V> ? sizeof(V) : 0;
  const scratch_layout l = make_scratch_layout(o.variant, n, sizeof(T), value_bytes);
  if (n > 0 && keys == nullptr) throw input_error("quicksort: null keys for " + std::to_string(n) + " keys");
  if constexpr (has_values<V>) {
    if (n > 0 && values == nullptr)
      throw input_error("quicksort_by_key: null values for " + std::to_string(n) + " keys");
  }
  quicksort_result result;
  result.variant = o.variant;
  result.n = n;
  if (o.scratch != nullptr) {
    if (o.scratch_bytes < l.total)
      throw input_error("quicksort: the scratch given holds " + std::to_string(o.scratch_bytes) +
                        " bytes; " + to_string(o.variant) + " of " + std::to_string(n) +
                        " keys needs " + std::to_string(l.total) +
                        " (quicksort_scratch_bytes)");
    if (reinterpret_cast<std::uintptr_t>(o.scratch) % 256 != 0)
      throw input_error("quicksort: the scratch given is not 256-byte aligned");
  }
  if (o.variant == quicksort_variant::thrust_radix && !is_less_v<T, Compare>)
    throw input_error(thrust_radix_refusal);
  if (o.variant == quicksort_variant::radix && !radix_order<T, Compare>::enabled)
    throw input_error(radix_refusal);
  launch_runtime& runtime = o.runtime != nullptr ? *o.runtime : default_runtime();
  if (n <= 1) return result;

  // The scratch: the caller's, or a stream-ordered allocation freed (stream-ordered) on return.
  detail::device_buffer<char> own;
  char* scratch = static_cast<char*>(o.scratch);
  const bool thrust = o.variant == quicksort_variant::thrust_radix ||
                      o.variant == quicksort_variant::thrust_merge;
  // (the Thrust variants without caller scratch allocate what Thrust asks, stream-ordered)
  if (scratch == nullptr && l.total > 0 && !thrust) {
    own = detail::device_buffer<char>(l.total, stream);
    scratch = own.data();
  }
  result.scratch_bytes = o.scratch != nullptr ? o.scratch_bytes : (thrust ? 0 : l.total);
  sort_buffers<T, V> buf{};
  buf.keys[0] = keys;
  buf.keys[1] = reinterpret_cast<T*>(scratch + l.keys);
  if constexpr (has_values<V>) {
    buf.values[0] = values;
    buf.values[1] = reinterpret_cast<V*>(scratch + l.values);
  }
  auto* counters = reinterpret_cast<scratch_counters*>(scratch + l.counters);
  const auto n32 = static_cast<std::uint32_t>(n);
  const launch_context root = runtime.root_context();

  switch (o.variant) {
    case quicksort_variant::thrust_radix:
    case quicksort_variant::thrust_merge:
      thrust_sort(keys, values, n, comp, o.variant, o.scratch != nullptr ? scratch : nullptr,
                  o.scratch_bytes, stream);
      break;
    case quicksort_variant::simple: {
      typename simple_agent<T, V, Compare>::range r{keys, values, 0, n32, comp};
      simple_root_kernel<T, V, Compare><<<1, 1, 0, stream>>>(root, r);
      break;
    }
    case quicksort_variant::two_stream: {
      CDPKIT_CUDA_TRY(cudaMemsetAsync(counters, 0, sizeof(scratch_counters), stream));
      two_stream_args<T, V, Compare> a{
          buf,
          reinterpret_cast<decltype(two_stream_args<T, V, Compare>::tasks)>(scratch + l.tasks),
          l.task_capacity, counters, o.seed, comp};
      two_stream_init_kernel<<<1, 32, 0, stream>>>(a, n32);
      using partition = typename two_stream_agent<T, V, Compare>::partition_body;
      child_entry_kernel<partition><<<two_stream_agent<T, V, Compare>::grid_of(n32), block_threads,
                                      0, stream>>>(root, partition{a, a.tasks});
      break;
    }
    case quicksort_variant::radix:
      if constexpr (radix_order<T, Compare>::enabled) {
        using task_t = radix_task<radix_bits_t<T>>;
        run_grid_recursion<radix_agent<T, V, Compare>>(args_in_scratch<task_t>(buf, l, scratch, o.seed, comp),
                                                       n, radix_init_kernel<T, V, Compare>, root, stream);
      }
      break;
    case quicksort_variant::fast:
    case quicksort_variant::host_driven: {
      using task_t = fast_task<key_storage_t<T>>;
      const fast_args<T, V, Compare> a = args_in_scratch<task_t>(buf, l, scratch, o.seed, comp);
      if (o.variant == quicksort_variant::host_driven && n > medium_keys)
        run_host_driven(a, n, l, scratch, runtime, stream, result);
      else
        run_grid_recursion<fast_agent<T, V, Compare>>(a, n, fast_init_kernel<T, V, Compare>, root, stream);
      break;
    }
  }
  CDPKIT_CUDA_TRY(cudaGetLastError());
  if (wait) {
    CDPKIT_WAIT_STREAM(stream, runtime, range.c_str());
    if (uses_cdp(o.variant) || o.variant == quicksort_variant::host_driven)
      CDPKIT_CHECK_DEVICE_ERRORS(runtime);
  }
  return result;
}

}  // namespace quicksort_detail

template <class T, class Compare>
quicksort_result quicksort(T* d_keys, std::uint64_t n, Compare comp,
                           const quicksort_options& options) {
  return quicksort_detail::sort_impl<T, quicksort_detail::no_values>(d_keys, nullptr, n, comp,
                                                                     options, nullptr, true);
}

template <class T, class Compare>
quicksort_result quicksort_async(T* d_keys, std::uint64_t n, Compare comp,
                                 const quicksort_options& options, cudaStream_t stream) {
  return quicksort_detail::sort_impl<T, quicksort_detail::no_values>(d_keys, nullptr, n, comp,
                                                                     options, stream, false);
}

template <class T, class V, class Compare>
quicksort_result quicksort_by_key(T* d_keys, V* d_values, std::uint64_t n, Compare comp,
                                  const quicksort_options& options) {
  return quicksort_detail::sort_impl<T, V>(d_keys, d_values, n, comp, options, nullptr, true);
}

template <class T, class V, class Compare>
quicksort_result quicksort_by_key_async(T* d_keys, V* d_values, std::uint64_t n, Compare comp,
                                        const quicksort_options& options, cudaStream_t stream) {
  return quicksort_detail::sort_impl<T, V>(d_keys, d_values, n, comp, options, stream, false);
}

}  // namespace cdpkit
