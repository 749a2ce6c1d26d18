#pragma once
// What the quicksort cases share: the sizes they sort, keys compared bit for bit (a difference
// named by its first index), keys sorted on the device by one variant (sorted_by) or by every
// variant that takes the comparator (check_every_variant, check_by_key), and keys with signed
// zeros, infinities and NaNs (with_specials). Host code only: the cases call the instantiations
// the library ships (cdpkit/quicksort.hpp).

#include <doctest/doctest.h>

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/harness/sort_inputs.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/quicksort.hpp>
#include <cdpkit/quicksort/tuning.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

/// The key types every typed case runs on.
#define CDPKIT_SORT_KEY_TYPES std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double

namespace cdpkit_test {

using cdpkit::quicksort_options;
using cdpkit::quicksort_variant;
using cdpkit::harness::make_sort_input;
using cdpkit::harness::sort_distribution;

constexpr std::uint64_t mid_n = (1u << 20) + 7;
constexpr std::uint64_t large_n = 1u << 24;
constexpr std::uint64_t small_sizes[] = {0, 1, 2, 31, 32, 33, 1000};
/// Keys that fast's root splits into buckets of one block each, on average (2^22 with 128
/// buckets of 32768): past twice this, its root asks for range grids one level down.
constexpr std::uint64_t fast_one_level_keys =
    (std::uint64_t{1} << cdpkit::quicksort_detail::max_levels) *
    cdpkit::quicksort_detail::medium_keys;


template <class C>
struct comparator_name;
template <class T>
struct comparator_name<cdpkit::less<T>> {
  static constexpr const char* value = "less";
};
template <class T>
struct comparator_name<cdpkit::greater<T>> {
  static constexpr const char* value = "greater";
};
template <class T>
struct comparator_name<cdpkit::total_order_less<T>> {
  static constexpr const char* value = "total_order_less";
};

/// thrust_radix (thrust::sort's ascending radix sort) takes less only.
template <class T, class C>
bool takes(quicksort_variant v) {
  return v != quicksort_variant::thrust_radix || std::is_same_v<C, cdpkit::less<T>>;
}

/// Whether `simple` is given n keys of distribution d. It is one thread per range by design
/// (NVIDIA's cdpSimpleQuicksort takes 1.3 s for 2^20 keys), its pivot is the middle key and a
/// side it cannot launch is heap-sorted by one thread: so it runs every distribution up to 1000
/// keys, and at 2^20+7 keys only uniform keys of two types (not the whole matrix: seconds each).
template <class T>
bool simple_runs(sort_distribution d, std::uint64_t n) {
  if (n <= 1000) return true;
  return n <= mid_n && d == sort_distribution::uniform &&
         (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, double>);
}

template <class T>
auto bits(T x) {
  std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t> b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

template <class T>
std::string text(T x) {
  char buf[64];
  if constexpr (std::is_floating_point_v<T>)
    std::snprintf(buf, sizeof buf, "%.17g (bits %llx)", static_cast<double>(x),
                  static_cast<unsigned long long>(bits(x)));
  else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x));
  return buf;
}

/// "same" when `got` holds the bits of `want` at every index; else how many keys differ and the
/// first difference.
template <class T>
std::string differences(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size())
    return "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  std::uint64_t count = 0, first = 0;
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (bits(got[k]) != bits(want[k])) {
      if (count++ == 0) first = k;
    }
  }
  if (count == 0) return "same";
  return std::to_string(count) + " keys differ, the first at " + std::to_string(first) + ": " +
         text(got[first]) + " instead of " + text(want[first]);
}

/// The keys' bit patterns, sorted: equal for two permutations of one multiset.
template <class T>
auto sorted_bits(const std::vector<T>& v) {
  std::vector<decltype(bits(T{}))> b(v.size());
  std::transform(v.begin(), v.end(), b.begin(), [](T x) { return bits(x); });
  std::sort(b.begin(), b.end());
  return b;
}

template <class T, class C>
std::vector<T> host_sorted(std::vector<T> v, C comp) {
  std::sort(v.begin(), v.end(), comp);
  return v;
}

/// Device memory holding a copy of host keys (cudaMalloc / cudaMemcpy); null when empty.
template <class T>
class device_array {
 public:
  explicit device_array(const std::vector<T>& host) : n_(host.size()) {
    if (n_ == 0) return;
    CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(d_), n_ * sizeof(T)));
    CDPKIT_CUDA_TRY(cudaMemcpy(d_.get(), host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  [[nodiscard]] T* get() const noexcept { return d_.get(); }
  [[nodiscard]] std::vector<T> to_host() const {
    std::vector<T> host(n_);
    if (n_ > 0)
      CDPKIT_CUDA_TRY(cudaMemcpy(host.data(), d_.get(), n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  cdpkit::detail::unique_device_ptr<T[]> d_;
  std::size_t n_;
};

/// `keys` sorted on the device by variant v.
template <class T, class C>
std::vector<T> sorted_by(quicksort_variant v, const std::vector<T>& keys, C comp,
                         quicksort_options o = {}) {
  o.variant = v;
  device_array<T> d(keys);
  const auto r = cdpkit::quicksort(d.get(), keys.size(), comp, o);
  CHECK(r.variant == v);
  CHECK(r.n == keys.size());
  return d.to_host();
}

/// Every variant that takes C, but those in `skip` (and simple where !simple_runs), against
/// `want`.
template <class T, class C>
void check_every_variant(sort_distribution d, const std::vector<T>& keys,
                         const std::vector<T>& want, C comp,
                         const std::vector<quicksort_variant>& skip = {}) {
  const std::string dist = cdpkit::harness::to_string(d);
  const std::string type = cdpkit::harness::to_string(cdpkit::harness::sort_key_type_of<T>());
  const std::string order = comparator_name<C>::value;
  const std::uint64_t n = keys.size();
  for (const auto v : cdpkit::all_quicksort_variants()) {
    if (!takes<T, C>(v) || std::find(skip.begin(), skip.end(), v) != skip.end()) continue;
    if (v == quicksort_variant::simple && !simple_runs<T>(d, n)) continue;
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    CAPTURE(type);
    CAPTURE(dist);
    CAPTURE(n);
    CAPTURE(order);
    CHECK(differences(sorted_by(v, keys, comp), want) == "same");
  }
}

/// Values 0 .. n-1.
inline std::vector<std::uint32_t> indices(std::uint64_t n) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

/// "kept" when every value 0..n-1 appears once and value i sits next to key i of the input.
template <class T>
std::string pairs_kept(const std::vector<T>& input, const std::vector<T>& keys,
                       const std::vector<std::uint32_t>& values) {
  if (values.size() != input.size() || keys.size() != input.size()) return "sizes differ";
  std::vector<char> seen(input.size(), 0);
  std::uint64_t bad = 0;
  for (std::size_t k = 0; k < values.size(); ++k) {
    const std::uint32_t i = values[k];
    if (i >= input.size() || seen[i]) {
      ++bad;
      continue;
    }
    seen[i] = 1;
    bad += bits(input[i]) != bits(keys[k]);
  }
  return bad == 0 ? "kept" : std::to_string(bad) + " values lost or separated from their keys";
}

template <class T, class C>
void check_by_key(sort_distribution d, std::uint64_t n, C comp) {
  const auto keys = make_sort_input<T>(d, n, 9);
  const auto values = indices(n);
  const auto want = host_sorted(keys, comp);
  const std::string dist = cdpkit::harness::to_string(d);
  const std::string type = cdpkit::harness::to_string(cdpkit::harness::sort_key_type_of<T>());
  const std::string order = comparator_name<C>::value;
  for (const auto v : cdpkit::all_quicksort_variants()) {
    if (!takes<T, C>(v) || (v == quicksort_variant::simple && !simple_runs<T>(d, n))) continue;
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    CAPTURE(type);
    CAPTURE(dist);
    CAPTURE(n);
    CAPTURE(order);
    device_array<T> dk(keys);
    device_array<std::uint32_t> dv(values);
    quicksort_options o;
    o.variant = v;
    cdpkit::quicksort_by_key(dk.get(), dv.get(), n, comp, o);
    const auto got = dk.to_host();
    CHECK(differences(got, want) == "same");
    CHECK(pairs_kept(keys, got, dv.to_host()) == "kept");
  }
}

template <class T>
T from_bits(decltype(bits(T{})) b) {
  T x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

/// Uniform keys and special ones: signed zeros, infinities, the extremes, subnormals,
/// and (with nans) quiet and signalling NaNs of both signs with several payloads.
template <class T>
std::vector<T> with_specials(std::uint64_t n, bool nans) {
  using L = std::numeric_limits<T>;
  std::vector<T> specials = {T(-0.0),        T(0.0),          L::infinity(), -L::infinity(),
                             L::max(),       L::lowest(),     L::min(),      -L::min(),
                             L::denorm_min(), -L::denorm_min(), T(1),         T(-1)};
  if (nans) {
    if constexpr (sizeof(T) == 4) {
      for (const std::uint32_t b : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u,
                                    0x7fffffffu, 0xffffffffu, 0x7fc12345u})
        specials.push_back(from_bits<T>(b));
    } else {
      for (const std::uint64_t b :
           {0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000001ull,
            0xfff0000000000001ull, 0x7fffffffffffffffull, 0xffffffffffffffffull,
            0x7ff8000000012345ull})
        specials.push_back(from_bits<T>(b));
    }
  }
  // every special twice at the front (so that 33 keys hold them all), then every 5th key
  auto keys = make_sort_input<T>(sort_distribution::uniform, n, 3);
  const std::uint64_t front = std::min<std::uint64_t>(n, 2 * specials.size());
  for (std::uint64_t k = 0; k < front; ++k) keys[k] = specials[k % specials.size()];
  for (std::uint64_t k = front; k < n; k += 5) keys[k] = specials[(k / 5) % specials.size()];
  return keys;
}

/// less or greater on specials without NaNs: every key equivalent to std::sort's under comp (the
/// order of -0.0 and +0.0 is free) and the same bit patterns in all (no zero changes its sign).
template <class T, class C>
void check_equivalent(const std::vector<T>& keys, C comp) {
  const auto want = host_sorted(keys, comp);
  const auto keys_bits = sorted_bits(keys);
  const std::string type = cdpkit::harness::to_string(cdpkit::harness::sort_key_type_of<T>());
  const std::string order = comparator_name<C>::value;
  const std::uint64_t n = keys.size();
  for (const auto v : cdpkit::all_quicksort_variants()) {
    if (!takes<T, C>(v) || (v == quicksort_variant::simple && n > 1000)) continue;
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    CAPTURE(type);
    CAPTURE(n);
    CAPTURE(order);
    const auto got = sorted_by(v, keys, comp);
    REQUIRE(got.size() == want.size());
    std::uint64_t out_of_order = 0;
    for (std::size_t k = 0; k < got.size(); ++k)
      out_of_order += comp(got[k], want[k]) || comp(want[k], got[k]);
    CHECK(out_of_order == 0u);
    CHECK(sorted_bits(got) == keys_bits);
  }
}

template <class T>
std::size_t count_zeros(const std::vector<T>& v, bool negative) {
  return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [&](T x) {
    return x == T(0) && std::signbit(x) == negative;
  }));
}

/// The device sorts the launch layer traced, for checks of where they happened.
struct traced_run {
  cdpkit::trace_snapshot trace;
  cdpkit::profiling::trace_summary summary;
};

}  // namespace cdpkit_test
