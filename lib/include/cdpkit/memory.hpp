#pragma once
// cdpkit/memory.hpp — checks of a requested size against the memory that is really there, made
// *before* allocating, so that an absurd size from a file header, a generator spec or a command
// line becomes a cdpkit::input_error naming what asked for it, never std::bad_alloc or an
// out-of-memory kill.

#include <cstdint>
#include <string>

namespace cdpkit {

/// Bytes of host memory this process may still take: the smallest of MemAvailable
/// (/proc/meminfo), the cgroup's memory.max less its current use, RLIMIT_AS / RLIMIT_DATA, and
/// the environment variable CDPKIT_HOST_MEMORY_LIMIT (bytes) when set and not empty.
/// 0 when none of them can be read (then the checks below do not refuse anything). An invalid
/// CDPKIT_HOST_MEMORY_LIMIT (anything but decimal digits making a number from 1 to 2^64 - 1) is
/// left out here, and makes require_host_memory throw.
[[nodiscard]] std::uint64_t available_host_memory() noexcept;

/// Throws cdpkit::input_error ("<what> needs N bytes of host memory, only M are available")
/// when `bytes` exceeds available_host_memory() (when that is known), and, whatever `bytes`, when
/// CDPKIT_HOST_MEMORY_LIMIT is set to something other than a number of bytes (naming the variable,
/// its value and what it accepts).
void require_host_memory(std::uint64_t bytes, const std::string& what);

/// Throws cdpkit::input_error when `bytes` exceeds the current device's free memory
/// (cudaMemGetInfo); cdpkit::cuda_error when the device cannot be asked.
void require_device_memory(std::uint64_t bytes, const std::string& what);

/// a * b, or UINT64_MAX when the product does not fit 64 bits (sizes that can only be refused).
[[nodiscard]] constexpr std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) noexcept {
  return (a != 0 && b > UINT64_MAX / a) ? UINT64_MAX : a * b;
}

/// a + b, or UINT64_MAX when the sum does not fit 64 bits.
[[nodiscard]] constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) noexcept {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/// Human-readable byte count, e.g. "1.50 GiB".
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

}  // namespace cdpkit
