// The quicksort workloads (cdpkit/harness/sort_inputs.hpp), host only: names, determinism, and the
// shape each distribution promises, for every key type. These run everywhere, CI included.

#include <doctest/doctest.h>

#include <cdpkit/error.hpp>
#include <cdpkit/harness/sort_inputs.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using cdpkit::harness::make_sort_input;
using cdpkit::harness::sort_distribution;

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <class T>
std::size_t distinct(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return static_cast<std::size_t>(std::unique(v.begin(), v.end()) - v.begin());
}

/// The largest number of equal keys.
template <class T>
std::size_t mode_count(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  std::size_t best = 0;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j < v.size() && v[j] == v[i]) ++j;
    best = std::max(best, j - i);
    i = j;
  }
  return best;
}

/// A key as a double measured from the middle of its type's range (floats: as they are).
template <class T>
double from_middle(T x) {
  if constexpr (std::is_unsigned_v<T>) return static_cast<double>(x) - std::ldexp(1.0, 8 * sizeof(T) - 1);
  else return static_cast<double>(x);
}

/// The keys of distribution `d` that use the seed.
bool seeded(sort_distribution d) {
  switch (d) {
    case sort_distribution::uniform:
    case sort_distribution::all_equal:
    case sort_distribution::two_values:
    case sort_distribution::sixteen_values:
    case sort_distribution::zipf:
    case sort_distribution::gaussian:
    case sort_distribution::pivot_copies:
    case sort_distribution::shared_prefix:
    case sort_distribution::powers_of_two:
    case sort_distribution::one_different: return true;
    default: return false;  // sorted, reverse, organ_pipe, sawtooth, staircase, median3_killer,
                            // alternating_extremes
  }
}

/// 1-based ranks of `keys` among their sorted values (keys distinct).
template <class T>
std::vector<std::uint64_t> ranks_of(const std::vector<T>& keys) {
  std::vector<T> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint64_t> out;
  for (const T k : keys)
    out.push_back(static_cast<std::uint64_t>(std::lower_bound(sorted.begin(), sorted.end(), k) -
                                              sorted.begin()) + 1);
  return out;
}

}  // namespace

#define CDPKIT_SORT_KEY_TYPES std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double

TEST_CASE("sort input distribution and key type names round-trip and bad names list the choices") {
  const auto& all = cdpkit::harness::all_sort_distributions();
  CHECK(all.size() == 17u);
  std::set<std::string> names;
  for (const auto d : all) {
    const std::string name = cdpkit::harness::to_string(d);
    CAPTURE(name);
    CHECK(cdpkit::harness::parse_sort_distribution(cdpkit::harness::to_string(d)) == d);
    names.insert(cdpkit::harness::to_string(d));
  }
  CHECK(names.size() == all.size());
  CHECK(all.front() == sort_distribution::uniform);
  CHECK(all.back() == sort_distribution::alternating_extremes);
  CHECK_THROWS_WITH_AS(cdpkit::harness::parse_sort_distribution("zipfian"),
                       doctest::Contains("'zipfian'"), cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::harness::parse_sort_distribution(""),
                       doctest::Contains("uniform, sorted, reverse"), cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::harness::parse_sort_distribution("Uniform"),
                       doctest::Contains("median3_killer"), cdpkit::input_error);

  using cdpkit::harness::sort_key_type;
  const auto& types = cdpkit::harness::all_sort_key_types();
  REQUIRE(types.size() == 6u);
  const char* long_names[] = {"int32", "uint32", "int64", "uint64", "float", "double"};
  for (std::size_t k = 0; k < types.size(); ++k) {
    const std::string name = cdpkit::harness::to_string(types[k]);
    CAPTURE(name);
    CHECK(cdpkit::harness::parse_sort_key_type(cdpkit::harness::to_string(types[k])) == types[k]);
    CHECK(cdpkit::harness::parse_sort_key_type(long_names[k]) == types[k]);
  }
  CHECK(std::string(cdpkit::harness::to_string(sort_key_type::f64)) == "f64");
  CHECK_THROWS_WITH_AS(cdpkit::harness::parse_sort_key_type("int128"),
                       doctest::Contains("'int128'"), cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::harness::parse_sort_key_type("u16"),
                       doctest::Contains("i32, u32, i64, u64, f32, f64"), cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::harness::parse_sort_key_type("F32"), doctest::Contains("double"),
                       cdpkit::input_error);
}

TEST_CASE_TEMPLATE("every sort input distribution gives n keys, the same for a seed, others for another",
                   T, CDPKIT_SORT_KEY_TYPES) {
  // 70001 crosses the generator's chunks of 2^16 keys
  for (const auto d : cdpkit::harness::all_sort_distributions()) {
    for (const std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 33ull, 1000ull, 70001ull}) {
      const std::string dist = cdpkit::harness::to_string(d);
      CAPTURE(dist);
      CAPTURE(n);
      const auto a = make_sort_input<T>(d, n, 7);
      const auto b = make_sort_input<T>(d, n, 7);
      REQUIRE(a.size() == n);
      CHECK(same_bits(a, b));
      if constexpr (std::is_floating_point_v<T>)
        CHECK(std::all_of(a.begin(), a.end(), [](T x) { return std::isfinite(x); }));
      if (n == 1000 && seeded(d)) CHECK_FALSE(same_bits(a, make_sort_input<T>(d, n, 8)));
    }
  }
}

TEST_CASE_TEMPLATE("sort inputs have the documented shapes", T, CDPKIT_SORT_KEY_TYPES) {
  constexpr std::uint64_t n = 100003;  // odd, more than one chunk
  const auto input = [](sort_distribution d) { return make_sort_input<T>(d, n, 42); };

  SUBCASE("uniform spreads over both halves of the range (floats: finite, both signs, wide)") {
    const auto k = input(sort_distribution::uniform);
    CHECK(distinct(k) > n * 99 / 100);
    const auto [lo, hi] = std::minmax_element(k.begin(), k.end());
    if constexpr (std::is_floating_point_v<T>) {
      CHECK(*lo < T(-1e30));
      CHECK(*hi > T(1e30));
      T smallest = std::numeric_limits<T>::max();
      for (const T x : k) smallest = std::min(smallest, std::fabs(x));
      CHECK(smallest < T(1e-30));
      CHECK(smallest >= std::numeric_limits<T>::min());  // normal numbers, no zero
    } else {
      const double half = std::ldexp(1.0, 8 * sizeof(T) - 1);
      CHECK(from_middle(*lo) < -half / 2);
      CHECK(from_middle(*hi) > half / 2);
    }
  }
  SUBCASE("sorted ascends and reverse descends, strictly") {
    const auto s = input(sort_distribution::sorted);
    CHECK(std::adjacent_find(s.begin(), s.end(), std::greater_equal<T>()) == s.end());
    const auto r = input(sort_distribution::reverse);
    CHECK(std::adjacent_find(r.begin(), r.end(), std::less_equal<T>()) == r.end());
    CHECK(std::equal(s.begin(), s.end(), r.rbegin()));
    // distinct where the type allows, even for many keys
    const auto big = make_sort_input<T>(sort_distribution::sorted, 3u << 20, 1);
    CHECK(std::adjacent_find(big.begin(), big.end(), std::greater_equal<T>()) == big.end());
  }
  SUBCASE("all_equal holds one value, two_values two, sixteen_values sixteen") {
    CHECK(distinct(input(sort_distribution::all_equal)) == 1u);
    CHECK(distinct(input(sort_distribution::two_values)) == 2u);
    CHECK(distinct(input(sort_distribution::sixteen_values)) == 16u);
    CHECK(distinct(make_sort_input<T>(sort_distribution::sixteen_values, 5, 3)) <= 5u);
    // shuffled: neither half is one value
    const auto two = input(sort_distribution::two_values);
    CHECK(mode_count(std::vector<T>(two.begin(), two.begin() + n / 2)) < n / 2 * 6 / 10);
  }
  SUBCASE("organ_pipe rises to the middle, then falls") {
    const auto k = input(sort_distribution::organ_pipe);
    const std::size_t mid = n / 2;  // n odd: the single peak
    CHECK(std::adjacent_find(k.begin(), k.begin() + mid + 1, std::greater_equal<T>()) ==
          k.begin() + mid + 1);
    CHECK(std::adjacent_find(k.begin() + mid, k.end(), std::less_equal<T>()) == k.end());
    CHECK(k.front() == k.back());
    const auto even = make_sort_input<T>(sort_distribution::organ_pipe, 10, 1);
    CHECK(std::is_sorted(even.begin(), even.begin() + 5));
    CHECK(std::is_sorted(even.rbegin(), even.rbegin() + 5));
    CHECK(even[4] == even[5]);
  }
  SUBCASE("sawtooth repeats ascending runs of 1024") {
    const auto k = input(sort_distribution::sawtooth);
    std::size_t bad = 0;
    for (std::size_t i = 1; i < k.size(); ++i)
      bad += i % 1024 == 0 ? !(k[i] < k[i - 1] && k[i] == k[0]) : !(k[i - 1] < k[i]);
    CHECK(bad == 0u);
  }
  SUBCASE("staircase runs of 32 equal keys start at multiples of 32 and ascend") {
    const auto k = input(sort_distribution::staircase);
    std::size_t bad = 0;
    for (std::size_t i = 1; i < k.size(); ++i)
      bad += i % 32 == 0 ? !(k[i - 1] < k[i]) : !(k[i - 1] == k[i]);
    CHECK(bad == 0u);
  }
  SUBCASE("zipf's most frequent value holds about 1/8 of the keys") {
    const auto k = input(sort_distribution::zipf);
    const double top = static_cast<double>(mode_count(k)) / n;
    CHECK(top > 0.11);  // 1 / H(2^20, 1.1) = 0.124
    CHECK(top < 0.14);
    CHECK(distinct(k) > 5000u);
    CHECK(distinct(k) <= (1u << 20));
    // the rank-2 value: 2^-1.1 of the top one
    std::vector<T> rest;
    std::vector<T> sorted = k;
    std::sort(sorted.begin(), sorted.end());
    T mode{};
    std::size_t best = 0;
    for (std::size_t i = 0; i < sorted.size();) {
      std::size_t j = i;
      while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
      if (j - i > best) best = j - i, mode = sorted[i];
      i = j;
    }
    for (const T x : k)
      if (!(x == mode)) rest.push_back(x);
    const double second = static_cast<double>(mode_count(rest)) / n;
    CHECK(second / top == doctest::Approx(std::pow(2.0, -1.1)).epsilon(0.08));
  }
  SUBCASE("gaussian centres on the middle of the range (sigma: range / 16; floats 1)") {
    const auto k = input(sort_distribution::gaussian);
    const double sigma = std::is_floating_point_v<T> ? 1.0 : std::ldexp(1.0, 8 * sizeof(T) - 4);
    double sum = 0, sq = 0;
    std::size_t within = 0;
    for (const T x : k) {
      const double z = from_middle(x) / sigma;
      sum += z;
      sq += z * z;
      within += std::fabs(z) < 1.0;
    }
    const double mean = sum / n;
    CHECK(std::fabs(mean) < 0.02);
    CHECK(std::sqrt(sq / n - mean * mean) == doctest::Approx(1.0).epsilon(0.02));
    CHECK(static_cast<double>(within) / n == doctest::Approx(0.6827).epsilon(0.02));
  }
  SUBCASE("pivot_copies holds at least n/2 copies of the middle value, the rest uniform") {
    const auto k = input(sort_distribution::pivot_copies);
    const T middle = std::is_unsigned_v<T> ? static_cast<T>(std::ldexp(1.0, 8 * sizeof(T) - 1))
                                           : T(0);
    const auto copies = static_cast<std::size_t>(std::count(k.begin(), k.end(), middle));
    CHECK(copies == (n + 1) / 2);
    CHECK(mode_count(k) == copies);
    CHECK(distinct(k) > n * 45 / 100);
    if constexpr (std::is_floating_point_v<T>)
      CHECK_FALSE(std::signbit(*std::find(k.begin(), k.end(), middle)));  // +0.0
    // copies sit at random places: about half of them at even indices, and no two blocks of 64
    // keys alike
    std::size_t even = 0;
    for (std::size_t i = 0; i < k.size(); i += 2) even += k[i] == middle;
    CHECK(static_cast<double>(even) / copies == doctest::Approx(0.5).epsilon(0.01));
    std::set<std::uint64_t> patterns;
    for (std::size_t b = 0; b + 64 <= 64 * 100; b += 64) {
      std::uint64_t mask = 0;
      for (std::size_t j = 0; j < 64; ++j) mask |= std::uint64_t{k[b + j] == middle} << j;
      patterns.insert(mask);
    }
    CHECK(patterns.size() == 100u);
    CHECK(make_sort_input<T>(sort_distribution::pivot_copies, 1, 3)[0] == middle);
  }
  SUBCASE("shared_prefix keys differ only in their lowest 12 bits, and use most of them") {
    const auto k = input(sort_distribution::shared_prefix);
    const auto [lo, hi] = std::minmax_element(k.begin(), k.end());
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      const auto bits = [](T x) { U u; std::memcpy(&u, &x, sizeof u); return u; };
      const U mask = static_cast<U>(~U{0xfff});
      CHECK(std::all_of(k.begin(), k.end(), [&](T x) { return (bits(x) & mask) == (bits(k[0]) & mask); }));
      CHECK(bits(*hi) - bits(*lo) > 4000u);
    } else {
      CHECK(std::isfinite(*lo));
      CHECK(std::isfinite(*hi));
    }
    CHECK(distinct(k) > 4000u);
    CHECK(distinct(k) <= 4096u);
  }
  SUBCASE("powers_of_two are powers of two (floats: of both signs)") {
    const auto k = input(sort_distribution::powers_of_two);
    for (const T x : k) {
      if constexpr (std::is_integral_v<T>) {
        REQUIRE(x > 0);
        CHECK((x & (x - 1)) == 0);
      } else {
        int e = 0;
        CHECK(std::fabs(std::frexp(x, &e)) == 0.5);
      }
    }
    CHECK(distinct(k) >= 8 * sizeof(T) - 1);
  }
  SUBCASE("one_different holds one value n - 1 times and one other") {
    const auto k = input(sort_distribution::one_different);
    CHECK(mode_count(k) == n - 1);
    CHECK(distinct(k) == 2u);
  }
  SUBCASE("alternating_extremes alternates the lowest and the highest finite values") {
    const auto k = input(sort_distribution::alternating_extremes);
    CHECK(k[0] == std::numeric_limits<T>::lowest());
    CHECK(k[1] == std::numeric_limits<T>::max());
    for (std::uint64_t i = 2; i < n; ++i) CHECK(k[i] == k[i - 2]);
  }
  SUBCASE("median3_killer is Musser's permutation of the sorted keys") {
    const auto k = input(sort_distribution::median3_killer);
    auto sorted = k;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == input(sort_distribution::sorted));  // a permutation of distinct keys
    // the median of first, middle and last is the second smallest key
    const auto m4 = make_sort_input<T>(sort_distribution::median3_killer, 1000, 0);
    std::vector<T> three4 = {m4.front(), m4[500], m4.back()};
    std::sort(three4.begin(), three4.end());
    auto s4 = m4;
    std::sort(s4.begin(), s4.end());
    CHECK(three4[1] == s4[1]);
    // the sequence itself: k = n/2 even: 1, k+1, 3, k+3, ..., then 2, 4, ..., 2k; the keys past
    // the largest multiple of 4 follow in order
    using ranks = std::vector<std::uint64_t>;
    CHECK(ranks_of(make_sort_input<T>(sort_distribution::median3_killer, 8, 0)) ==
          ranks{1, 5, 3, 7, 2, 4, 6, 8});
    CHECK(ranks_of(make_sort_input<T>(sort_distribution::median3_killer, 12, 0)) ==
          ranks{1, 7, 3, 9, 5, 11, 2, 4, 6, 8, 10, 12});
    CHECK(ranks_of(make_sort_input<T>(sort_distribution::median3_killer, 11, 0)) ==
          ranks{1, 5, 3, 7, 2, 4, 6, 8, 9, 10, 11});
    CHECK(ranks_of(make_sort_input<T>(sort_distribution::median3_killer, 3, 0)) ==
          ranks{1, 2, 3});
  }
}

TEST_CASE("sort inputs of more keys than the host can hold are refused before allocating") {
  CHECK_THROWS_WITH_AS(make_sort_input<std::uint64_t>(sort_distribution::uniform, 1ull << 62, 1),
                       doctest::Contains("make_sort_input: 4611686018427387904 u64 keys"),
                       cdpkit::input_error);
  CHECK_THROWS_AS(make_sort_input<float>(sort_distribution::zipf, ~0ull, 1), cdpkit::input_error);
}
