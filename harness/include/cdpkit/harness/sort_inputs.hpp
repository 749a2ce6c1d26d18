#pragma once
// cdpkit/harness/sort_inputs.hpp — the key distributions the quicksort tests, sample and
// benchmark sort (host-generated, deterministic for a seed), and the key types they name.

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace cdpkit::harness {

enum class sort_distribution : std::uint8_t {
  uniform,        ///< uniform over the key type's whole range (floats: finite, both signs)
  sorted,         ///< already ascending (distinct where the type allows)
  reverse,        ///< descending
  all_equal,      ///< one value n times
  two_values,     ///< two values, shuffled
  sixteen_values, ///< 16 distinct values, shuffled
  organ_pipe,     ///< ascending to the middle, then descending
  sawtooth,       ///< ascending runs of 1024 keys, repeated
  staircase,      ///< runs of 32 equal keys (32-aligned), run values ascending
  zipf,           ///< Zipf(s = 1.1) ranks over 2^20 values: a few values very frequent
  gaussian,       ///< normal around the middle of the range (integers: rounded)
  pivot_copies,   ///< half the keys equal the median value, the others uniform
  median3_killer, ///< Musser's median-of-3 killer sequence (quadratic for median-of-3 pivots)
  // adversaries of radix sorts
  shared_prefix,  ///< keys that agree on all but the lowest 12 bits of their ordered index
  powers_of_two,  ///< powers of two (integers: 2^0 .. 2^(bits-2); floats: +-2^e, every normal e)
  one_different,  ///< one value n - 1 times and one other key, at a random place
  alternating_extremes,  ///< the type's lowest and highest (finite) values, alternating
};

/// "uniform", "sorted", ... (the names of the sample's --dist and the benchmark rows).
const char* to_string(sort_distribution d) noexcept;
/// Parse a distribution name; throws cdpkit::input_error naming the bad value and the choices.
sort_distribution parse_sort_distribution(const std::string& name);
/// Every distribution, in the order above.
const std::vector<sort_distribution>& all_sort_distributions();

/// The key types of the quicksort sample and benchmark.
enum class sort_key_type : std::uint8_t { i32, u32, i64, u64, f32, f64 };
/// "i32", "u32", "i64", "u64", "f32", "f64".
const char* to_string(sort_key_type t) noexcept;
/// Parse a key type name (also "int32", "uint32", "int64", "uint64", "float", "double");
/// throws cdpkit::input_error naming the bad value and the choices.
sort_key_type parse_sort_key_type(const std::string& name);
const std::vector<sort_key_type>& all_sort_key_types();

/// The sort_key_type of T (int32_t, uint32_t, int64_t, uint64_t, float or double).
template <class T>
constexpr sort_key_type sort_key_type_of() noexcept {
  if constexpr (std::is_same_v<T, std::int32_t>) return sort_key_type::i32;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return sort_key_type::u32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return sort_key_type::i64;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return sort_key_type::u64;
  else if constexpr (std::is_same_v<T, float>) return sort_key_type::f32;
  else {
    static_assert(std::is_same_v<T, double>, "a quicksort key type");
    return sort_key_type::f64;
  }
}

/// n keys of distribution `d`, deterministic for (d, n, seed). T is one of int32_t, uint32_t,
/// int64_t, uint64_t, float, double. Throws cdpkit::input_error when n keys do not fit the host's
/// memory (cdpkit/memory.hpp).
template <class T>
std::vector<T> make_sort_input(sort_distribution d, std::uint64_t n, std::uint64_t seed);

}  // namespace cdpkit::harness
