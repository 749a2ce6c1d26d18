// Example: cdpkit::quicksort and quicksort_by_key (cdpkit/quicksort.hpp), with the library's
// comparators and with your own (cdpkit/quicksort.cuh), checked against std::sort.
//
// The keys are sorted in place in device memory. The default variant, `fast`, is a recursive
// samplesort on the device: each range is split many ways around sampled splitters by a child
// grid, and all the small buckets of a range are sorted by one child grid. Whatever the pending
// launch budget or the depth cap refuse is sorted by the launcher itself: the result is always
// sorted. No variant is stable.
//
// Build: relocatable device code (cdpkit_enable_cdp(<target>) in CMake); the .cu is needed only
// for your own comparator, whose templates cdpkit/quicksort.cuh defines.

#include <cdpkit/error.hpp>
#include <cdpkit/quicksort.cuh>
#include <cdpkit/quicksort.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

namespace {

/// Your own strict weak order: by the low 32 bits, descending (many keys are equivalent).
struct by_low_word_descending {
  __host__ __device__ bool operator()(std::uint64_t a, std::uint64_t b) const {
    return static_cast<std::uint32_t>(a) > static_cast<std::uint32_t>(b);
  }
};

template <class T>
T* to_device(const std::vector<T>& host) {
  T* d = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d, host.size() * sizeof(T)));
  CDPKIT_CUDA_TRY(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> to_host(const T* d, std::size_t n) {
  std::vector<T> host(n);
  CDPKIT_CUDA_TRY(cudaMemcpy(host.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }
  const std::size_t n = std::size_t{1} << 20;
  std::mt19937_64 rng(9);
  int failures = 0;

  // 1. u32 keys, ascending (cdpkit::less, the default), with the default variant (fast).
  std::vector<std::uint32_t> keys(n);
  for (auto& k : keys) k = static_cast<std::uint32_t>(rng());
  std::uint32_t* d_keys = to_device(keys);
  const cdpkit::quicksort_result r = cdpkit::quicksort(d_keys, n);
  std::vector<std::uint32_t> expected = keys;
  std::sort(expected.begin(), expected.end());
  bool ok = to_host(d_keys, n) == expected;
  std::printf("quicksort (%s), %zu u32 keys: %s\n", cdpkit::to_string(r.variant), n,
              ok ? "equals std::sort" : "WRONG");
  failures += ok ? 0 : 1;

  // 2. By key: value k follows key k. Values 0..n-1 name each key's input position.
  std::vector<std::uint32_t> values(n);
  for (std::size_t k = 0; k < n; ++k) values[k] = static_cast<std::uint32_t>(k);
  CDPKIT_CUDA_TRY(cudaMemcpy(d_keys, keys.data(), n * sizeof(std::uint32_t),
                             cudaMemcpyHostToDevice));
  std::uint32_t* d_values = to_device(values);
  cdpkit::quicksort_by_key(d_keys, d_values, n);
  const auto sorted_keys = to_host(d_keys, n);
  const auto sorted_values = to_host(d_values, n);
  std::vector<bool> seen(n, false);
  ok = sorted_keys == expected;
  for (std::size_t k = 0; ok && k < n; ++k) {
    const std::uint32_t v = sorted_values[k];
    ok = v < n && !seen[v] && keys[v] == sorted_keys[k];
    if (ok) seen[v] = true;
  }
  std::printf("quicksort_by_key, %zu u32 keys with u32 values: %s\n", n,
              ok ? "keys sorted, every pair kept" : "WRONG");
  failures += ok ? 0 : 1;

  // 3. float keys under IEEE 754 totalOrder (NaNs included), and the other variants: the
  //    lecture's recursion aside (slow by design), each returns the same keys.
  std::vector<float> fkeys(n);
  std::uniform_real_distribution<float> uniform(-1e6f, 1e6f);
  for (auto& k : fkeys) k = uniform(rng);
  fkeys[7] = -0.0f;
  fkeys[8] = 0.0f;
  fkeys[9] = std::numeric_limits<float>::quiet_NaN();
  fkeys[10] = -std::numeric_limits<float>::infinity();
  std::vector<float> fexpected = fkeys;
  std::sort(fexpected.begin(), fexpected.end(), cdpkit::total_order_less<float>{});
  float* d_fkeys = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d_fkeys, n * sizeof(float)));
  for (const auto v : {cdpkit::quicksort_variant::two_stream, cdpkit::quicksort_variant::fast,
                       cdpkit::quicksort_variant::host_driven,
                       cdpkit::quicksort_variant::thrust_merge}) {
    CDPKIT_CUDA_TRY(cudaMemcpy(d_fkeys, fkeys.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    cdpkit::quicksort_options options;
    options.variant = v;
    cdpkit::quicksort(d_fkeys, n, cdpkit::total_order_less<float>{}, options);
    const auto got = to_host(d_fkeys, n);
    // Bit for bit: totalOrder orders every bit pattern, so the sorted sequence is unique.
    ok = std::equal(got.begin(), got.end(), fexpected.begin(), [](float a, float b) {
      return cdpkit::total_order_less<float>::key(a) == cdpkit::total_order_less<float>::key(b);
    });
    std::printf("quicksort (%s), %zu f32 keys by totalOrder: %s\n", cdpkit::to_string(v), n,
                ok ? "equals std::sort" : "WRONG");
    failures += ok ? 0 : 1;
  }

  // 4. Your own comparator (instantiated here, from cdpkit/quicksort.cuh). Equivalent keys may
  //    come in any order, so the check is: ordered by the comparator, and the same multiset.
  std::vector<std::uint64_t> wkeys(n);
  for (auto& k : wkeys) k = rng() & 0xffff0000ffffull;  // low words repeat
  std::uint64_t* d_wkeys = to_device(wkeys);
  cdpkit::quicksort(d_wkeys, n, by_low_word_descending{});
  auto got = to_host(d_wkeys, n);
  ok = std::is_sorted(got.begin(), got.end(), by_low_word_descending{});
  std::sort(got.begin(), got.end());
  std::sort(wkeys.begin(), wkeys.end());
  ok = ok && got == wkeys;
  std::printf("quicksort with your comparator, %zu u64 keys: %s\n", n,
              ok ? "ordered by it, same keys" : "WRONG");
  failures += ok ? 0 : 1;

  CDPKIT_CUDA_TRY(cudaFree(d_keys));
  CDPKIT_CUDA_TRY(cudaFree(d_values));
  CDPKIT_CUDA_TRY(cudaFree(d_fkeys));
  CDPKIT_CUDA_TRY(cudaFree(d_wkeys));
  return failures == 0 ? 0 : 1;
}
