#pragma once
// cdpkit/quicksort/agents/radix_tile.cuh — the radix path of the tile sort: for the comparators the
// library ships (less, greater, total_order_less) on arithmetic keys, a tile of keys is mapped to
// unsigned integers whose ascending order is the comparator's order, and sorted by a CUB block
// radix sort over only the bits in which the tile's keys differ (after two levels of splitting a
// tile of uniform 32-bit keys spans ~17 bits: 5 passes of 4 bits instead of 8 merge stages).
// Every other comparator keeps the block merge sort.

#include <cdpkit/quicksort.hpp>

#include <cub/block/block_radix_sort.cuh>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace cdpkit::quicksort_detail {

template <class T>
using radix_bits_t = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;

template <class T>
inline constexpr bool radix_key_v = std::is_arithmetic_v<T> && !std::is_same_v<T, bool> &&
                                    (sizeof(T) == 4 || sizeof(T) == 8);

/// Bits of x whose unsigned order is x's ascending order: unsigned integers as they are, signed
/// ones with the sign bit flipped, floating point with the sign bit flipped (positive) or every
/// bit flipped (negative): IEEE totalOrder, which refines `<` (-0.0 before +0.0; NaN, which `<`
/// does not order, by sign after the infinities).
template <class T>
__host__ __device__ __forceinline__ radix_bits_t<T> ascending_bits(T x) {
  using U = radix_bits_t<T>;
  constexpr U sign = U{1} << (8 * sizeof(U) - 1);
  U b;
  std::memcpy(&b, &x, sizeof b);
  if constexpr (std::is_floating_point_v<T>) return (b & sign) != 0 ? ~b : (b ^ sign);
  else if constexpr (std::is_signed_v<T>) return b ^ sign;
  else return b;
}

/// The inverse of ascending_bits.
template <class T>
__host__ __device__ __forceinline__ T from_ascending_bits(radix_bits_t<T> b) {
  using U = radix_bits_t<T>;
  constexpr U sign = U{1} << (8 * sizeof(U) - 1);
  if constexpr (std::is_floating_point_v<T>) b = (b & sign) != 0 ? (b ^ sign) : ~b;
  else if constexpr (std::is_signed_v<T>) b ^= sign;
  T x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

/// Whether keys of type T ordered by Compare can be radix sorted, and how: to_bits maps a key to
/// an unsigned integer whose ascending order is a strict weak order refining Compare's (keys
/// equivalent under Compare may come out in either order, as with any unstable sort).
template <class T, class Compare>
struct radix_order {
  static constexpr bool enabled = false;
};

template <class T, bool Descending>
struct arithmetic_radix_order {
  static constexpr bool enabled = radix_key_v<T>;
  using bits_t = radix_bits_t<T>;
  __host__ __device__ static bits_t to_bits(T x) {
    const bits_t b = ascending_bits(x);
    return Descending ? ~b : b;
  }
  __host__ __device__ static T from_bits(bits_t b) {
    return from_ascending_bits<T>(Descending ? ~b : b);
  }
};

template <class T>
struct radix_order<T, cdpkit::less<T>> : arithmetic_radix_order<T, false> {};
template <class T>
struct radix_order<T, cdpkit::greater<T>> : arithmetic_radix_order<T, true> {};
template <class T>
struct radix_order<T, cdpkit::total_order_less<T>> : arithmetic_radix_order<T, false> {};

}  // namespace cdpkit::quicksort_detail
