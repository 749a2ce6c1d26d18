#pragma once
// Internal (lib/src): the generators' random numbers — splitmix64, small, fast and the same on
// every platform (the standard distributions are not), so a seed makes the same input everywhere.

#include <cstdint>

namespace cdpkit::detail {

/// The splitmix64 finalizer: a bijective 64-bit mix.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// splitmix64: one state per stream.
struct splitmix64 {
  std::uint64_t state;
  std::uint64_t next() noexcept { return mix64(state += 0x9e3779b97f4a7c15ull); }
  /// Uniform in [0, 1), 53 bits.
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in (0, 1]: safe under a logarithm or a negative power.
  double uniform_open0() noexcept { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }
  /// Uniform in [0, n) (n > 0; the modulo bias is below n / 2^64).
  std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }
};

}  // namespace cdpkit::detail
