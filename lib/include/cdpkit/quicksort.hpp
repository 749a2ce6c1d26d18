#pragma once
// cdpkit/quicksort.hpp — recursive CDP quicksort, host API: every variant of the story and the
// Thrust yardsticks, for keys and key-value pairs, sorted in place on the device.
//
//   simple        the lecture's recursion (NVIDIA's cdpSimpleQuicksort): one thread partitions
//                 its range around the middle key and launches a one-thread child grid per side;
//                 a selection sort below 32 keys. Slow by design: one thread does each pass.
//   two_stream    NVIDIA's cdpAdvancedQuicksort: a grid partitions each range (2-way, warp
//                 ballots, one atomic per warp), its last block launches the two sides as children
//                 in two named streams; a block sorts ranges of a tile or less in shared memory.
//   fast          (default) samplesort-style recursion: up to 127 splitters from a random sample
//                 per range (a multi-way split: fewer passes over memory), three-way by
//                 construction (keys equal to a splitter form a bucket that is never sorted again:
//                 duplicates never deepen the recursion), counts in shared memory with one atomic
//                 per block and bucket, and aggregation: the small buckets are queued, and once
//                 the last partition is done ONE child grid sorts them all (a block each: its own
//                 partition in shared memory, then CUB block merge sorts), so thousands of small
//                 ranges are not thousands of pending launches.
//   radix         most-significant-digit radix sort by the same recursion: each range is split
//                 by 8 bits of its keys (no sample, no comparisons) into up to 256 buckets, a
//                 range whose keys share the digit skips to the highest bit in which they differ
//                 (no pass moves it), large buckets become child grids, small ones go to a
//                 queue that one drain grid sorts by digit passes inside a block each (fast's
//                 aggregation, without samples). For the orders that map keys to unsigned integers
//                 (less, greater, total_order_less on the shipped key types); others are refused.
//   host_driven   the same partition steps as fast, driven level by level from the host (no
//                 CDP): what the recursion on the device buys.
//   thrust_radix  thrust::sort (its ascending radix sort: less only)
//   thrust_merge  thrust::sort with a comparator functor (merge sort)
//
// Every CDP launch goes through the launch layer (cdpkit/launch.cuh): the depth cap, the pending
// budget and launch errors make a child "not launched", and the range is sorted without it (by
// its launcher; in fast, by a block of the drain grid). The result is always sorted and a
// permutation of the input: never wrong or partial.
//
// Comparators. Any strict weak order on the key type, as a functor callable on the device
// (`__host__ __device__ bool operator()(const T&, const T&) const`). The library ships
// instantiations for cdpkit::less, cdpkit::greater and (float, double) cdpkit::total_order_less
// for int32, uint32, int64, uint64, float and double keys (by key: uint32 values). Other
// comparators or value types: include cdpkit/quicksort.cuh in a .cu file built with
// cdpkit_enable_cdp, which defines the templates.
//
// Floating point. With less, -0.0 and +0.0 are equivalent (either order is sorted) and the
// infinities sort at the ends. NaN is not ordered by less: a NaN key breaks the strict weak
// order, so keys holding NaNs sorted by less (or greater) violate the precondition and the result
// is undefined, as with std::sort — measured on an H200, merge-based sorts (thrust_merge and the
// tile sorts inside every variant) then lose or duplicate keys, and Thrust's merge sort can even
// fault. Sort such keys with total_order_less: IEEE 754 totalOrder, -NaN < -inf < ... < -0.0 <
// +0.0 < ... < +inf < +NaN, a strict weak order on every bit pattern.
//
// Stability: no variant is stable (equal keys, and the values of equal keys, may be reordered).

#include <cdpkit/launch.hpp>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/quicksort/tuning.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <cdpkit/host_device.hpp>

namespace cdpkit {

/// a < b (the default order).
template <class T>
struct less {
  CDPKIT_HOST_DEVICE bool operator()(const T& a, const T& b) const { return a < b; }
};

/// b < a (descending order).
template <class T>
struct greater {
  CDPKIT_HOST_DEVICE bool operator()(const T& a, const T& b) const { return b < a; }
};

/// IEEE 754 totalOrder for float and double (NaNs sorted by sign, after the infinities; -0.0
/// before +0.0); plain `<` for the integer types.
template <class T>
struct total_order_less {
  CDPKIT_HOST_DEVICE bool operator()(const T& a, const T& b) const { return a < b; }
};
template <>
struct total_order_less<float> {
  CDPKIT_HOST_DEVICE static std::int32_t key(float v) {
    std::int32_t i;
    std::memcpy(&i, &v, sizeof i);
    return i ^ static_cast<std::int32_t>(static_cast<std::uint32_t>(i >> 31) >> 1);
  }
  CDPKIT_HOST_DEVICE bool operator()(float a, float b) const { return key(a) < key(b); }
};
template <>
struct total_order_less<double> {
  CDPKIT_HOST_DEVICE static std::int64_t key(double v) {
    std::int64_t i;
    std::memcpy(&i, &v, sizeof i);
    return i ^ static_cast<std::int64_t>(static_cast<std::uint64_t>(i >> 63) >> 1);
  }
  CDPKIT_HOST_DEVICE bool operator()(double a, double b) const { return key(a) < key(b); }
};

enum class quicksort_variant : std::uint8_t {
  simple,
  two_stream,
  fast,
  radix,
  host_driven,
  thrust_radix,
  thrust_merge,
};

/// "simple", "two_stream", "fast", "radix", "host_driven", "thrust_radix", "thrust_merge".
const char* to_string(quicksort_variant v) noexcept;
/// Parse a variant name; throws cdpkit::input_error naming the bad value and the choices.
quicksort_variant parse_quicksort_variant(const std::string& name);
/// Every variant, in the order of the story (the yardsticks last).
const std::vector<quicksort_variant>& all_quicksort_variants();
/// True for the variants that launch child grids (simple, two_stream, fast, radix).
constexpr bool uses_cdp(quicksort_variant v) noexcept {
  return v == quicksort_variant::simple || v == quicksort_variant::two_stream ||
         v == quicksort_variant::fast || v == quicksort_variant::radix;
}

/// Most keys one call sorts: 2^32 - 1 (ranges are indexed with 32 bits on the device).
inline constexpr std::uint64_t quicksort_max_keys = 0xffffffffull;

struct quicksort_options {
  quicksort_variant variant = quicksort_variant::fast;
  /// The launch layer's runtime (depth cap, pending budget, trace). Null: default_runtime().
  launch_runtime* runtime = nullptr;
  /// Caller-provided device scratch (at least quicksort_scratch_bytes(...) bytes, any alignment
  /// of 256 bytes or more), used instead of a stream-ordered allocation per call. It must not be
  /// used by anything else until the sort is done.
  void* scratch = nullptr;
  std::size_t scratch_bytes = 0;
  /// Seed of the splitter samples (fast, host_driven): equal seeds give equal runs.
  std::uint64_t seed = 0x9e3779b97f4a7c15ull;
};

/// What a call did.
struct quicksort_result {
  quicksort_variant variant = quicksort_variant::fast;
  std::uint64_t n = 0;
  /// Scratch bytes the call used: the caller's, or what the library allocated (0 when n <= 1,
  /// and for the Thrust variants without caller scratch, where Thrust allocates its own,
  /// stream-ordered).
  std::size_t scratch_bytes = 0;
  /// host_driven: partition levels the host drove (one round trip each); 0 for the others.
  std::uint32_t host_levels = 0;
};

/// Device scratch a call needs: about n * (key + value) bytes for the partitioning variants
/// (fast, radix, host_driven, two_stream) plus a task pool (radix: up to n * 1.2 bytes more, for
/// its deeper recursion of 256-bucket tasks), what Thrust asks for its sorts, nothing for
/// simple (in place). Throws cdpkit::input_error for n > quicksort_max_keys.
std::size_t quicksort_scratch_bytes(quicksort_variant variant, std::uint64_t n,
                                    std::size_t key_bytes, std::size_t value_bytes = 0);

/// Sort `d_keys[0, n)` (device memory) by `comp` and wait for it (under the watchdog).
/// Preconditions: d_keys is device memory holding n keys (may be null when n == 0); comp is a
/// strict weak order; nothing else uses d_keys meanwhile. thrust_radix takes less only; radix
/// takes less, greater and total_order_less on arithmetic keys of 4 or 8 bytes. Throws
/// cdpkit::input_error (n > quicksort_max_keys, null keys for n > 0, scratch too small or not
/// 256-byte aligned, a comparator thrust_radix or radix cannot take), cdpkit::cuda_error
/// (CUDA errors, device error flags, the watchdog).
template <class T, class Compare = less<T>>
quicksort_result quicksort(T* d_keys, std::uint64_t n, Compare comp = {},
                           const quicksort_options& options = {});

/// Enqueue the same sort on `stream` and return without waiting (host_driven waits on the stream
/// once per level). Scratch the library allocates is freed stream-ordered. Device error flags
/// raised by the sort are reported by the runtime's next check (launch_runtime::check_device_errors,
/// which the synchronous calls make).
template <class T, class Compare = less<T>>
quicksort_result quicksort_async(T* d_keys, std::uint64_t n, Compare comp,
                                 const quicksort_options& options, cudaStream_t stream);

/// Sort `d_keys[0, n)` by `comp` and permute `d_values[0, n)` with them (value k follows key k);
/// not stable. Same preconditions and errors as quicksort; d_values holds n values.
template <class T, class V, class Compare = less<T>>
quicksort_result quicksort_by_key(T* d_keys, V* d_values, std::uint64_t n, Compare comp = {},
                                  const quicksort_options& options = {});

template <class T, class V, class Compare = less<T>>
quicksort_result quicksort_by_key_async(T* d_keys, V* d_values, std::uint64_t n, Compare comp,
                                        const quicksort_options& options, cudaStream_t stream);

namespace quicksort_detail {
/// Where a call's scratch holds what (byte offsets). Throws cdpkit::input_error for
/// n > quicksort_max_keys.
scratch_layout make_scratch_layout(quicksort_variant variant, std::uint64_t n,
                                   std::size_t key_bytes, std::size_t value_bytes);
}  // namespace quicksort_detail

// The instantiations compiled into the library (lib/src/quicksort/*.cu). Other comparators and
// value types: cdpkit/quicksort.cuh.
#define CDPKIT_QUICKSORT_DECLARE(T, C)                                                         \
  extern template quicksort_result quicksort<T, C>(T*, std::uint64_t, C,                       \
                                                   const quicksort_options&);                  \
  extern template quicksort_result quicksort_async<T, C>(T*, std::uint64_t, C,                 \
                                                         const quicksort_options&, cudaStream_t); \
  extern template quicksort_result quicksort_by_key<T, std::uint32_t, C>(                     \
      T*, std::uint32_t*, std::uint64_t, C, const quicksort_options&);                         \
  extern template quicksort_result quicksort_by_key_async<T, std::uint32_t, C>(               \
      T*, std::uint32_t*, std::uint64_t, C, const quicksort_options&, cudaStream_t);
#define CDPKIT_QUICKSORT_DECLARE_TYPE(T) \
  CDPKIT_QUICKSORT_DECLARE(T, less<T>)   \
  CDPKIT_QUICKSORT_DECLARE(T, greater<T>)
CDPKIT_QUICKSORT_DECLARE_TYPE(std::int32_t)
CDPKIT_QUICKSORT_DECLARE_TYPE(std::uint32_t)
CDPKIT_QUICKSORT_DECLARE_TYPE(std::int64_t)
CDPKIT_QUICKSORT_DECLARE_TYPE(std::uint64_t)
CDPKIT_QUICKSORT_DECLARE_TYPE(float)
CDPKIT_QUICKSORT_DECLARE_TYPE(double)
CDPKIT_QUICKSORT_DECLARE(float, total_order_less<float>)
CDPKIT_QUICKSORT_DECLARE(double, total_order_less<double>)
#undef CDPKIT_QUICKSORT_DECLARE_TYPE
#undef CDPKIT_QUICKSORT_DECLARE

}  // namespace cdpkit
