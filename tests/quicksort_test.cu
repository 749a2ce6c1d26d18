// quicksort: every variant sorts every distribution, size and key type exactly like the reference
// (host std::sort up to 2^20+7 keys; the library's thrust_merge, itself checked against std::sort
// for every type, at 2^24); floats' signed zeros, infinities and NaNs under each comparator; by
// key; asynchronous on a stream; caller-provided scratch; bad input refused before anything is
// touched; exact results and counted fallbacks under a tiny pending limit and a depth cap; the
// recursion as the trace shows it.
//
// This translation unit has no device code: it calls the instantiations the library ships
// (cdpkit/quicksort.hpp), so that it compiles quickly.

#include <doctest/doctest.h>

#include "gpu.hpp"

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/harness/sort_inputs.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/quicksort.hpp>
#include <cdpkit/quicksort/agents/radix_tile.cuh>
#include <cdpkit/quicksort/tuning.hpp>
#include <cdpkit/wait.hpp>

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

namespace {

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
std::vector<std::uint32_t> indices(std::uint64_t n) {
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

}  // namespace

#define CDPKIT_SORT_KEY_TYPES std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double

/// Keys to check an order mapping on: the type's extremes and a spread of values; for floating
/// point also signed zeros, infinities, subnormals and NaNs of both signs with several payloads.
template <class T>
std::vector<T> order_probe_keys() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {L::lowest(), L::max(), L::min(), T(0), T(1), T(2), T(100), T(101)};
  if constexpr (std::is_signed_v<T>) v.insert(v.end(), {T(-1), T(-2), T(-100), T(-101)});
  std::uint64_t x = 0x2545f4914f6cdd1dull;
  for (int k = 0; k < 48; ++k) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    using U = cdpkit::quicksort_detail::radix_bits_t<T>;
    const U b = static_cast<U>(x);
    T t;
    std::memcpy(&t, &b, sizeof t);  // any bit pattern: for floats also NaNs and subnormals
    v.push_back(t);
  }
  if constexpr (std::is_floating_point_v<T>) {
    v.insert(v.end(), {T(-0.0), L::infinity(), -L::infinity(), L::denorm_min(), -L::denorm_min(),
                       -L::min(), T(-1.5), T(1.5), L::quiet_NaN(), -L::quiet_NaN(),
                       L::signaling_NaN(), -L::signaling_NaN()});
  }
  return v;
}

template <class T>
bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
  return false;
}

/// Whether radix_order<T, C> orders the probe keys as C does: a < b by C means bits(a) < bits(b);
/// (with exact = true, also the converse: a total order); every key maps back bit for bit.
template <class T, class C>
void check_radix_order(bool exact) {
  using order = cdpkit::quicksort_detail::radix_order<T, C>;
  static_assert(order::enabled, "the shipped comparators on arithmetic keys take the radix path");
  const auto keys = order_probe_keys<T>();
  const C comp{};
  std::uint64_t wrong = 0, lost = 0;
  for (const T a : keys) {
    lost += bits(order::from_bits(order::to_bits(a))) != bits(a);
    for (const T b : keys) {
      if (!exact && (is_nan(a) || is_nan(b))) continue;  // < does not order NaN
      const bool by_comp = comp(a, b);
      const bool by_bits = order::to_bits(a) < order::to_bits(b);
      wrong += exact ? by_comp != by_bits : (by_comp && !by_bits);
    }
  }
  CHECK(lost == 0u);
  CHECK(wrong == 0u);
}

TEST_CASE_TEMPLATE("the tile sort's radix keys order like less, greater and total_order_less and map back bit for bit",
                   T, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double) {
  // less and greater: a refinement (floats: -0.0 before +0.0, which they call equivalent);
  // integers and total_order_less: exactly the same order
  constexpr bool integral = std::is_integral_v<T>;
  check_radix_order<T, cdpkit::less<T>>(integral);
  check_radix_order<T, cdpkit::greater<T>>(integral);
  check_radix_order<T, cdpkit::total_order_less<T>>(true);
  struct by_magnitude {
    bool operator()(T a, T b) const { return a * a < b * b; }
  };
  static_assert(!cdpkit::quicksort_detail::radix_order<T, by_magnitude>::enabled,
                "any other comparator keeps the merge sort");
}

TEST_CASE("quicksort variant names round-trip and scratch sizes follow the variants") {
  const auto& all = cdpkit::all_quicksort_variants();
  REQUIRE(all.size() == 6u);
  CHECK(all.front() == quicksort_variant::simple);
  CHECK(all[2] == quicksort_variant::fast);
  CHECK(all.back() == quicksort_variant::thrust_merge);
  for (const auto v : all) {
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    CHECK(cdpkit::parse_quicksort_variant(cdpkit::to_string(v)) == v);
    CHECK(cdpkit::uses_cdp(v) == (v == quicksort_variant::simple ||
                                  v == quicksort_variant::two_stream ||
                                  v == quicksort_variant::fast));
    // more keys, more scratch; values need more; 2^32 keys and more are refused
    const auto small = cdpkit::quicksort_scratch_bytes(v, 1000, 4);
    const auto large = cdpkit::quicksort_scratch_bytes(v, 1u << 24, 4);
    CHECK(large >= small);
    CHECK(cdpkit::quicksort_scratch_bytes(v, 1u << 24, 4, 4) >= large);
    CHECK(cdpkit::quicksort_scratch_bytes(v, 1u << 24, 8) >= large);
    if (v == quicksort_variant::simple) CHECK(large == 0u);  // in place
    else CHECK(large >= (std::size_t{1} << 24) * 4);         // a second buffer of keys
    if (v != quicksort_variant::simple)
      CHECK(cdpkit::quicksort_scratch_bytes(v, cdpkit::quicksort_max_keys, 4) >
            std::size_t{cdpkit::quicksort_max_keys} * 4);
    CHECK_THROWS_WITH_AS((void)cdpkit::quicksort_scratch_bytes(v, cdpkit::quicksort_max_keys + 1, 4),
                         doctest::Contains("4294967295"), cdpkit::input_error);
  }
  CHECK(std::string(cdpkit::to_string(quicksort_variant::host_driven)) == "host_driven");
  CHECK_THROWS_WITH_AS(cdpkit::parse_quicksort_variant("quick"), doctest::Contains("'quick'"),
                       cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::parse_quicksort_variant(""), doctest::Contains("thrust_merge"),
                       cdpkit::input_error);
  // the comparators on the host: IEEE 754 totalOrder for floats
  const cdpkit::total_order_less<float> tol;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(tol(-nan, -inf));
  CHECK(tol(-inf, -1.0f));
  CHECK(tol(-0.0f, 0.0f));
  CHECK_FALSE(tol(0.0f, -0.0f));
  CHECK(tol(inf, nan));
  CHECK_FALSE(tol(nan, nan));
  CHECK(cdpkit::total_order_less<double>{}(-0.0, 0.0));
  CHECK(cdpkit::greater<int>{}(2, 1));
}

TEST_CASE_TEMPLATE("every quicksort variant sorts every distribution of 0 to 1000 keys like std::sort" *
                       CDPKIT_GPU_CASE,
                   T, CDPKIT_SORT_KEY_TYPES) {
  for (const auto d : cdpkit::harness::all_sort_distributions()) {
    for (const std::uint64_t n : small_sizes) {
      const auto keys = make_sort_input<T>(d, n, 11 + n);
      check_every_variant(d, keys, host_sorted(keys, cdpkit::less<T>{}), cdpkit::less<T>{});
      check_every_variant(d, keys, host_sorted(keys, cdpkit::greater<T>{}), cdpkit::greater<T>{});
    }
  }
}

TEST_CASE_TEMPLATE("every quicksort variant sorts every distribution of 2^20+7 keys like std::sort" *
                       CDPKIT_GPU_CASE,
                   T, CDPKIT_SORT_KEY_TYPES) {
  // thrust_merge is one of the variants checked against std::sort here, for every type and
  // distribution: the reference of the 2^24-key case is checked in turn
  for (const auto d : cdpkit::harness::all_sort_distributions()) {
    const auto keys = make_sort_input<T>(d, mid_n, 5);
    check_every_variant(d, keys, host_sorted(keys, cdpkit::less<T>{}), cdpkit::less<T>{});
  }
  for (const auto d : {sort_distribution::uniform, sort_distribution::zipf}) {
    const auto keys = make_sort_input<T>(d, mid_n, 6);
    check_every_variant(d, keys, host_sorted(keys, cdpkit::greater<T>{}), cdpkit::greater<T>{},
                        {quicksort_variant::simple});
  }
}

TEST_CASE_TEMPLATE("every quicksort variant sorts 2^24 keys like thrust_merge" * CDPKIT_GPU_CASE, T,
                   CDPKIT_SORT_KEY_TYPES) {
  // simple is left out: one thread per range, seconds per million keys by design
  std::vector<sort_distribution> dists = {sort_distribution::uniform};
  if constexpr (std::is_same_v<T, std::uint32_t>)
    dists = {sort_distribution::uniform, sort_distribution::all_equal,
             sort_distribution::organ_pipe, sort_distribution::zipf,
             sort_distribution::median3_killer};
  const std::vector<quicksort_variant> skip = {quicksort_variant::simple,
                                               quicksort_variant::thrust_merge};
  for (const auto d : dists) {
    const auto keys = make_sort_input<T>(d, large_n, 13);
    const auto want = sorted_by(quicksort_variant::thrust_merge, keys, cdpkit::less<T>{});
    CHECK(std::is_sorted(want.begin(), want.end()));
    check_every_variant(d, keys, want, cdpkit::less<T>{}, skip);
  }
  if constexpr (std::is_same_v<T, std::uint32_t>) {
    const auto keys = make_sort_input<T>(sort_distribution::uniform, large_n, 14);
    const auto want = sorted_by(quicksort_variant::thrust_merge, keys, cdpkit::greater<T>{});
    CHECK(std::is_sorted(want.begin(), want.end(), cdpkit::greater<T>{}));
    check_every_variant(sort_distribution::uniform, keys, want, cdpkit::greater<T>{}, skip);
  }
}

TEST_CASE_TEMPLATE("quicksort orders signed zeros, infinities and NaNs as each comparator says" *
                       CDPKIT_GPU_CASE,
                   T, float, double) {
  for (const std::uint64_t n : {std::uint64_t{33}, std::uint64_t{1000}, mid_n}) {
    CAPTURE(n);
    // total_order_less: one order of every bit pattern, so exactly std::sort's keys (-NaNs
    // first, then -inf, ..., -0.0 before +0.0, ..., +inf, +NaNs)
    const auto all = with_specials<T>(n, true);
    const auto want = host_sorted(all, cdpkit::total_order_less<T>{});
    REQUIRE(std::isnan(want.front()));
    REQUIRE(std::signbit(want.front()));
    REQUIRE(std::isnan(want.back()));
    REQUIRE_FALSE(std::signbit(want.back()));
    const std::vector<quicksort_variant> skip_simple =
        n > 1000 ? std::vector<quicksort_variant>{quicksort_variant::simple}
                 : std::vector<quicksort_variant>{};
    check_every_variant(sort_distribution::uniform, all, want, cdpkit::total_order_less<T>{},
                        skip_simple);
    // less and greater without NaNs: equivalent keys everywhere, every zero keeps its sign
    const auto finite = with_specials<T>(n, false);
    REQUIRE(count_zeros(finite, true) > 0u);
    REQUIRE(count_zeros(finite, false) > 0u);
    check_equivalent(finite, cdpkit::less<T>{});
    check_equivalent(finite, cdpkit::greater<T>{});
    // (less with NaNs is not a strict weak order: the precondition is broken and the result is
    // undefined — on the H200, thrust_merge lost keys and then faulted — so it is not tested)
  }
}

TEST_CASE_TEMPLATE("quicksort_by_key sorts the keys and keeps every value with its key" *
                       CDPKIT_GPU_CASE,
                   T, CDPKIT_SORT_KEY_TYPES) {
  // values are the keys' original indices: each sorted key must sit next to its own index, and
  // every index must appear once (equal keys may swap their values: no variant is stable)
  for (const auto d : {sort_distribution::uniform, sort_distribution::all_equal,
                       sort_distribution::two_values, sort_distribution::zipf,
                       sort_distribution::pivot_copies})
    for (const std::uint64_t n : {2ull, 33ull, 1000ull}) check_by_key<T>(d, n, cdpkit::less<T>{});
  for (const auto d : {sort_distribution::uniform, sort_distribution::all_equal,
                       sort_distribution::zipf})
    check_by_key<T>(d, mid_n, cdpkit::less<T>{});
  check_by_key<T>(sort_distribution::uniform, mid_n, cdpkit::greater<T>{});
  if constexpr (std::is_floating_point_v<T>)
    check_by_key<T>(sort_distribution::gaussian, mid_n, cdpkit::total_order_less<T>{});
}

TEST_CASE("quicksort_async queues sorts on the caller's stream until wait_for_stream" *
          CDPKIT_GPU_CASE) {
  auto& rt = cdpkit::default_runtime();
  cudaStream_t raw = nullptr;
  CDPKIT_CUDA_TRY(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
  const cdpkit::detail::unique_stream stream(raw);
  for (const auto v : cdpkit::all_quicksort_variants()) {
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    const std::uint64_t n = v == quicksort_variant::simple ? 1000 : mid_n;
    const auto a = make_sort_input<std::uint32_t>(sort_distribution::uniform, n, 21);
    const auto b = make_sort_input<double>(sort_distribution::zipf, n, 22);
    const auto c = make_sort_input<std::int64_t>(sort_distribution::pivot_copies, n, 23);
    device_array<std::uint32_t> da(a);
    device_array<double> db(b);
    device_array<std::int64_t> dc(c);
    device_array<std::uint32_t> dv(indices(n));
    quicksort_options o;
    o.variant = v;
    // three sorts queued back to back on one stream, then one wait
    const auto r = cdpkit::quicksort_async(da.get(), n, cdpkit::less<std::uint32_t>{}, o, stream.get());
    CHECK(r.variant == v);
    CHECK(r.n == n);
    // thrust_radix takes less only: its double sort is ascending here, descending elsewhere
    const bool descending = takes<double, cdpkit::greater<double>>(v);
    if (descending)
      cdpkit::quicksort_async(db.get(), n, cdpkit::greater<double>{}, o, stream.get());
    else
      cdpkit::quicksort_async(db.get(), n, cdpkit::less<double>{}, o, stream.get());
    cdpkit::quicksort_by_key_async(dc.get(), dv.get(), n, cdpkit::less<std::int64_t>{}, o,
                                   stream.get());
    cdpkit::wait_for_stream(stream.get(), "quicksort_async test", &rt, __FILE__, __LINE__);
    CDPKIT_CHECK_DEVICE_ERRORS(rt);
    CHECK(differences(da.to_host(), host_sorted(a, cdpkit::less<std::uint32_t>{})) == "same");
    CHECK(differences(db.to_host(), descending ? host_sorted(b, cdpkit::greater<double>{})
                                               : host_sorted(b, cdpkit::less<double>{})) == "same");
    const auto got = dc.to_host();
    CHECK(differences(got, host_sorted(c, cdpkit::less<std::int64_t>{})) == "same");
    CHECK(pairs_kept(c, got, dv.to_host()) == "kept");
  }
}

TEST_CASE("quicksort sorts in caller-provided scratch and refuses scratch that is too small" *
          CDPKIT_GPU_CASE) {
  for (const auto v : cdpkit::all_quicksort_variants()) {
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    const std::uint64_t n = v == quicksort_variant::simple ? 1000 : mid_n;
    const std::size_t need = cdpkit::quicksort_scratch_bytes(v, n, sizeof(std::uint64_t));
    const std::size_t need_kv =
        cdpkit::quicksort_scratch_bytes(v, n, sizeof(std::uint64_t), sizeof(std::uint32_t));
    CHECK(need_kv >= need);
    cdpkit::detail::unique_device_ptr<char[]> scratch;  // cudaMalloc: 256-byte aligned
    CDPKIT_CUDA_TRY(cudaMalloc(cdpkit::detail::out_ptr(scratch), std::max<std::size_t>(need_kv, 256)));
    const auto keys = make_sort_input<std::uint64_t>(sort_distribution::sixteen_values, n, 31);
    const auto want = host_sorted(keys, cdpkit::less<std::uint64_t>{});
    quicksort_options o;
    o.variant = v;
    o.scratch = scratch.get();
    o.scratch_bytes = need;
    {
      device_array<std::uint64_t> d(keys);
      const auto r = cdpkit::quicksort(d.get(), n, cdpkit::less<std::uint64_t>{}, o);
      CHECK(r.scratch_bytes == need);
      CHECK(differences(d.to_host(), want) == "same");
    }
    {
      o.scratch_bytes = need_kv;
      device_array<std::uint64_t> d(keys);
      device_array<std::uint32_t> dv(indices(n));
      cdpkit::quicksort_by_key(d.get(), dv.get(), n, cdpkit::less<std::uint64_t>{}, o);
      const auto got = d.to_host();
      CHECK(differences(got, want) == "same");
      CHECK(pairs_kept(keys, got, dv.to_host()) == "kept");
    }
    if (need == 0) continue;  // simple: in place, no scratch can be too small
    {
      o.scratch_bytes = need - 1;
      device_array<std::uint64_t> d(keys);
      CHECK_THROWS_WITH_AS(cdpkit::quicksort(d.get(), n, cdpkit::less<std::uint64_t>{}, o),
                           doctest::Contains("scratch"), cdpkit::input_error);
      o.scratch_bytes = need_kv - 1;
      device_array<std::uint32_t> dv(indices(n));
      CHECK_THROWS_AS(
          cdpkit::quicksort_by_key(d.get(), dv.get(), n, cdpkit::less<std::uint64_t>{}, o),
          cdpkit::input_error);
      CHECK(differences(d.to_host(), keys) == "same");  // refused before anything ran
    }
  }
}

TEST_CASE("more than quicksort_max_keys keys are refused before any memory is touched" *
          CDPKIT_GPU_CASE) {
  // null pointers: a call that read or wrote them would fault
  for (const auto v : cdpkit::all_quicksort_variants()) {
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    quicksort_options o;
    o.variant = v;
    CHECK_THROWS_WITH_AS(cdpkit::quicksort<std::uint32_t>(nullptr, cdpkit::quicksort_max_keys + 1,
                                                          cdpkit::less<std::uint32_t>{}, o),
                         doctest::Contains("4294967295"), cdpkit::input_error);
    CHECK_THROWS_AS((cdpkit::quicksort_by_key<std::uint64_t, std::uint32_t>(
                        nullptr, nullptr, 1ull << 40, cdpkit::greater<std::uint64_t>{}, o)),
                    cdpkit::input_error);
    CHECK_THROWS_AS(cdpkit::quicksort_async<float>(nullptr, ~0ull, cdpkit::less<float>{}, o, nullptr),
                    cdpkit::input_error);
  }
  CHECK(cudaDeviceSynchronize() == cudaSuccess);  // nothing faulted
}

TEST_CASE("thrust_radix refuses comparators other than less, thrust_merge takes them" *
          CDPKIT_GPU_CASE) {
  const auto keys = make_sort_input<float>(sort_distribution::uniform, 1000, 41);
  device_array<float> d(keys);
  device_array<std::uint32_t> dv(indices(1000));
  quicksort_options o;
  o.variant = quicksort_variant::thrust_radix;
  CHECK_THROWS_WITH_AS(cdpkit::quicksort(d.get(), 1000, cdpkit::total_order_less<float>{}, o),
                       doctest::Contains("thrust_radix"), cdpkit::input_error);
  CHECK_THROWS_AS(cdpkit::quicksort_by_key(d.get(), dv.get(), 1000, cdpkit::total_order_less<float>{}, o),
                  cdpkit::input_error);
  CHECK_THROWS_AS(cdpkit::quicksort_async(d.get(), 1000, cdpkit::total_order_less<float>{}, o, nullptr),
                  cdpkit::input_error);
  CHECK_THROWS_AS(cdpkit::quicksort(d.get(), 1000, cdpkit::greater<float>{}, o),
                  cdpkit::input_error);
  CHECK(differences(d.to_host(), keys) == "same");  // untouched
  const auto want = host_sorted(keys, cdpkit::total_order_less<float>{});
  CHECK(differences(sorted_by(quicksort_variant::thrust_merge, keys, cdpkit::total_order_less<float>{}),
                    want) == "same");
  const auto dkeys = make_sort_input<double>(sort_distribution::uniform, 1000, 42);
  device_array<double> dd(dkeys);
  CHECK_THROWS_AS(cdpkit::quicksort(dd.get(), 1000, cdpkit::total_order_less<double>{}, o),
                  cdpkit::input_error);
}

TEST_CASE("under a pending limit of 16 and a depth cap of 2 quicksort stays exact and counts fallbacks" *
          CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.pending_launch_limit = 16;
  config.pending_budget = 8;
  config.max_depth = 2;
  cdpkit::launch_runtime rt(config);
  REQUIRE(rt.pending_budget() == 8);
  quicksort_options o;
  o.runtime = &rt;  // every call here, so that no other runtime is made while this one lives
  struct input {
    sort_distribution dist;
    std::uint64_t n;
  };
  for (const auto v : {quicksort_variant::fast, quicksort_variant::two_stream,
                       quicksort_variant::simple}) {
    const std::string variant = cdpkit::to_string(v);
    CAPTURE(variant);
    std::vector<input> inputs = {{sort_distribution::uniform, mid_n},
                                 {sort_distribution::all_equal, 1u << 20},
                                 {sort_distribution::zipf, 1u << 20}};
    // fast's buckets of 2^20 keys are all small (one grid, nothing refused): at 2^23 its root
    // asks for ~128 range grids at once against a budget of 8
    if (v == quicksort_variant::fast)
      inputs.push_back({sort_distribution::uniform, 2 * fast_one_level_keys + 5});
    // simple: a few thousand keys (the rest of its recursion is heap-sorted by single threads)
    if (v == quicksort_variant::simple) inputs = {{sort_distribution::uniform, 20000}};
    cdpkit::profiling::trace_session session(rt);
    for (const auto& in : inputs) {
      const std::string dist = cdpkit::harness::to_string(in.dist);
      CAPTURE(dist);
      CAPTURE(in.n);
      const auto keys = make_sort_input<std::uint32_t>(in.dist, in.n, 51);
      CHECK(differences(sorted_by(v, keys, cdpkit::less<std::uint32_t>{}, o),
                        host_sorted(keys, cdpkit::less<std::uint32_t>{})) == "same");
    }
    const auto trace = session.collect();
    const auto summary = cdpkit::profiling::summarize(trace);
    CHECK(summary.fallbacks > 0u);
    CHECK(summary.fallbacks == summary.fallback_budget + summary.fallback_depth +
                                   summary.failed_launches);
    std::uint64_t budget = 0, depth = 0, inline_items = 0;
    for (const auto& site : trace.sites) {
      budget += site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_budget)];
      depth += site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_depth)];
      inline_items += site.inline_items;
    }
    CHECK(budget + depth > 0u);
    if (v == quicksort_variant::fast) {
      // fast: refused range grids become jobs of the drain grid (host-launched: never refused)
      const auto& range = trace.sites[cdpkit::sites::qs_fast_range];
      CHECK(range.requests > range.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)]);
    } else {
      CHECK(inline_items > 0u);  // the refused sides were sorted by their launchers
    }
    CHECK(summary.max_depth <= 2u);
    CHECK(summary.pending_high_water <= 8u);
    if (v != quicksort_variant::fast) CHECK(depth > 0u);  // 2-way recursions are deeper than 2
  }
}

TEST_CASE("with a depth cap of 0 fast still sorts: every large bucket becomes a job of the drain" *
          CDPKIT_GPU_CASE) {
  cdpkit::launch_config config;
  config.max_depth = 0;  // no child grid at all (the scatter is a step, the drain host-launched)
  cdpkit::launch_runtime rt(config);
  quicksort_options o;
  o.runtime = &rt;
  cdpkit::profiling::trace_session session(rt);
  const auto keys =
      make_sort_input<std::uint32_t>(sort_distribution::uniform, 2 * fast_one_level_keys + 5, 52);
  CHECK(differences(sorted_by(quicksort_variant::fast, keys, cdpkit::less<std::uint32_t>{}, o),
                    host_sorted(keys, cdpkit::less<std::uint32_t>{})) == "same");
  const auto trace = session.collect();
  const auto& range = trace.sites[cdpkit::sites::qs_fast_range];
  constexpr int launched = static_cast<int>(cdpkit::launch_outcome::launched);
  CHECK(range.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_depth)] > 0u);
  CHECK(range.outcomes[launched] == 0u);
  // the root's scatter step ran (same depth: the cap does not refuse it)
  CHECK(trace.sites[cdpkit::sites::qs_fast_scatter].outcomes[launched] == 1u);
}

TEST_CASE("the trace shows each variant's recursion: range grids and their scatter steps, sides" *
          CDPKIT_GPU_CASE) {
  auto& rt = cdpkit::default_runtime();
  const auto run = [&](quicksort_variant v, const std::vector<std::uint32_t>& keys,
                       const std::vector<std::uint32_t>& want) {
    traced_run out;
    cdpkit::profiling::trace_session session(rt);
    quicksort_options o;
    o.variant = v;
    o.runtime = &rt;
    device_array<std::uint32_t> d(keys);
    const auto r = cdpkit::quicksort(d.get(), keys.size(), cdpkit::less<std::uint32_t>{}, o);
    out.trace = session.collect();
    out.summary = cdpkit::profiling::summarize(out.trace);
    CHECK(differences(d.to_host(), want) == "same");
    // the library's own scratch; the Thrust variants let Thrust allocate its own
    const bool thrust =
        v == quicksort_variant::thrust_radix || v == quicksort_variant::thrust_merge;
    CHECK(r.scratch_bytes == (thrust ? 0u : cdpkit::quicksort_scratch_bytes(v, keys.size(), 4)));
    return std::make_pair(out, r);
  };
  using cdpkit::sites::qs_fast_range;
  constexpr int launched = static_cast<int>(cdpkit::launch_outcome::launched);
  SUBCASE("fast on 2^24 uniform keys: range grids at depth 1, small buckets aggregated") {
    REQUIRE(large_n >= 2 * fast_one_level_keys);  // the root's buckets need range grids
    const auto keys = make_sort_input<std::uint32_t>(sort_distribution::uniform, large_n, 61);
    const auto want = sorted_by(quicksort_variant::thrust_merge, keys, cdpkit::less<std::uint32_t>{});
    const auto [t, r] = run(quicksort_variant::fast, keys, want);
    const auto& range = t.trace.sites[qs_fast_range];
    const auto& scatter = t.trace.sites[cdpkit::sites::qs_fast_scatter];
    CHECK(range.outcomes[launched] > 0u);
    CHECK(range.depth_hist[1] > 0u);
    CHECK(t.summary.max_depth >= 1u);
    // a scatter step per range grid, and the root's
    CHECK(scatter.outcomes[launched] == range.outcomes[launched] + 1u);
    CHECK(t.trace.sites[cdpkit::sites::qs_partition_probe].probe_warps > 0u);
    // aggregation: the thousands of small buckets cost no launch (one host-launched drain grid):
    // the only child grids are the range grids, their scatter steps and copy grids
    CHECK(t.summary.child_launches == range.outcomes[launched] + scatter.outcomes[launched] +
                                          t.trace.sites[cdpkit::sites::qs_fast_copy].outcomes[launched]);
    CHECK(r.host_levels == 0u);
  }
  SUBCASE("two_stream on 2^20+7 uniform keys: partition grids per side and one-block leaves") {
    const auto keys = make_sort_input<std::uint32_t>(sort_distribution::uniform, mid_n, 62);
    const auto [t, r] = run(quicksort_variant::two_stream, keys,
                            host_sorted(keys, cdpkit::less<std::uint32_t>{}));
    CHECK(t.trace.sites[cdpkit::sites::qs_two_stream_side].outcomes[launched] > 0u);
    CHECK(t.trace.sites[cdpkit::sites::qs_two_stream_leaf].outcomes[launched] > 0u);
    CHECK(t.summary.max_depth >= 2u);
    CHECK(r.host_levels == 0u);
  }
  SUBCASE("simple on 1000 keys: one-thread sides, one active lane per probed step") {
    const auto keys = make_sort_input<std::uint32_t>(sort_distribution::uniform, 1000, 63);
    const auto [t, r] = run(quicksort_variant::simple, keys,
                            host_sorted(keys, cdpkit::less<std::uint32_t>{}));
    const auto& side = t.trace.sites[cdpkit::sites::qs_simple_side];
    CHECK(side.outcomes[launched] > 0u);
    CHECK(side.child_threads == side.outcomes[launched]);  // one thread per child grid
    const auto& probe = t.trace.sites[cdpkit::sites::qs_serial_probe];
    CHECK(probe.probe_steps > 0u);
    CHECK(probe.probe_active_lanes == probe.probe_steps);
    CHECK(t.summary.warp_efficiency == doctest::Approx(1.0 / 32));
    CHECK(r.scratch_bytes == 0u);
  }
  SUBCASE("host_driven and the Thrust yardsticks launch nothing from the device") {
    const auto mid = make_sort_input<std::uint32_t>(sort_distribution::uniform, mid_n, 64);
    const auto mid_want = host_sorted(mid, cdpkit::less<std::uint32_t>{});
    for (const auto v : {quicksort_variant::host_driven, quicksort_variant::thrust_radix,
                         quicksort_variant::thrust_merge}) {
      const std::string variant = cdpkit::to_string(v);
      CAPTURE(variant);
      const auto [t, r] = run(v, mid, mid_want);
      CHECK(t.summary.launch_requests == 0u);
      if (v == quicksort_variant::host_driven) CHECK(r.host_levels >= 1u);
      else CHECK(r.host_levels == 0u);
    }
    // more keys, at least as many levels driven from the host
    const auto large = make_sort_input<std::uint32_t>(sort_distribution::uniform, large_n, 65);
    const auto large_want =
        sorted_by(quicksort_variant::thrust_merge, large, cdpkit::less<std::uint32_t>{});
    const auto [t1, r1] = run(quicksort_variant::host_driven, mid, mid_want);
    const auto [t2, r2] = run(quicksort_variant::host_driven, large, large_want);
    CHECK(r2.host_levels >= r1.host_levels);
    CHECK(r2.host_levels >= 2u);
  }
}
