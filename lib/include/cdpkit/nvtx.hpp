#pragma once
// cdpkit/nvtx.hpp — NVTX ranges in the library's own "cdpkit" domain. Every public call opens
// one with CDPKIT_NVTX_RANGE("area::function"), and each phase inside it another, so that a
// Nsight Systems timeline shows what the library was doing. Compiled away when the build sets
// CDPKIT_ENABLE_NVTX=0.

#ifndef CDPKIT_ENABLE_NVTX
#define CDPKIT_ENABLE_NVTX 1
#endif

#if CDPKIT_ENABLE_NVTX
#include <nvtx3/nvtx3.hpp>

namespace cdpkit {
/// The NVTX domain of all cdpkit ranges.
struct nvtx_domain {
  static constexpr const char* name{"cdpkit"};
};
}  // namespace cdpkit

#define CDPKIT_NVTX_CONCAT_IMPL(a, b) a##b
#define CDPKIT_NVTX_CONCAT(a, b) CDPKIT_NVTX_CONCAT_IMPL(a, b)
/// Open a range named `name` (a string literal or a std::string that outlives the scope) until
/// the end of the enclosing scope.
#define CDPKIT_NVTX_RANGE(name) \
  ::nvtx3::scoped_range_in<::cdpkit::nvtx_domain> CDPKIT_NVTX_CONCAT(cdpkit_nvtx_range_, __LINE__) { name }
#else
#define CDPKIT_NVTX_RANGE(name) static_cast<void>(0)
#endif
