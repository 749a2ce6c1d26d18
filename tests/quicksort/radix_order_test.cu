// The radix path of quicksort's tile sort: the shipped comparators' radix keys order like the
// comparators and map back bit for bit; any other comparator keeps the merge sort. A CUDA
// translation unit for the CUB block radix sort that cdpkit/quicksort/agents/radix_tile.cuh
// includes; it runs on the host.

#include <doctest/doctest.h>

#include "sort_checks.hpp"

#include <cdpkit/quicksort.hpp>
#include <cdpkit/quicksort/agents/radix_tile.cuh>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

using cdpkit_test::bits;

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
