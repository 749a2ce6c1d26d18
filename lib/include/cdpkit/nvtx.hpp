#pragma once
// cdpkit/nvtx.hpp — NVTX ranges in the library's own "cdpkit" domain, so that a Nsight Systems
// timeline shows what the library was doing: every public call and each phase inside it, and the
// programs' loading, building, uploading, checking and writing.
//
//   CDPKIT_NVTX_SCOPE("bfs::run");                        // a fixed name, registered once
//   CDPKIT_NVTX_SCOPE_PAYLOAD("bfs::level", level);      // one name per phase, the level as payload
//   CDPKIT_NVTX_RANGE(name.c_str());                      // a name made at run time
//
// Each opens a range until the end of the enclosing scope (use them as statements of a block,
// never as the body of an unbraced if). The fixed names are registered strings: registered with
// the domain the first time the line runs, then passed as a handle. Payloads are unsigned 64-bit
// integers. Compiled away entirely (no NVTX header included) when the build sets CDPKIT_NVTX=0,
// i.e. configures with -DCDPKIT_NVTX=OFF.

#ifndef CDPKIT_NVTX
#define CDPKIT_NVTX 1
#endif

#if CDPKIT_NVTX
#include <nvtx3/nvtx3.hpp>

#include <cstdint>

namespace cdpkit {
/// The NVTX domain of all cdpkit ranges.
struct nvtx_domain {
  static constexpr const char* name{"cdpkit"};
};
using nvtx_registered_string = ::nvtx3::registered_string_in<nvtx_domain>;
using nvtx_scoped_range = ::nvtx3::scoped_range_in<nvtx_domain>;
}  // namespace cdpkit

#define CDPKIT_NVTX_CONCAT_IMPL(a, b) a##b
#define CDPKIT_NVTX_CONCAT(a, b) CDPKIT_NVTX_CONCAT_IMPL(a, b)
/// Open a range named `name` (a string literal or a std::string's c_str() that outlives the
/// scope) until the end of the enclosing scope.
#define CDPKIT_NVTX_RANGE(name) \
  ::cdpkit::nvtx_scoped_range CDPKIT_NVTX_CONCAT(cdpkit_nvtx_range_, __LINE__) { name }
/// Open a range with a fixed name (a string literal), registered once per line.
#define CDPKIT_NVTX_SCOPE(literal)                                                             \
  static const ::cdpkit::nvtx_registered_string CDPKIT_NVTX_CONCAT(cdpkit_nvtx_name_, __LINE__){ \
      literal};                                                                                \
  ::cdpkit::nvtx_scoped_range CDPKIT_NVTX_CONCAT(cdpkit_nvtx_range_, __LINE__) {               \
    CDPKIT_NVTX_CONCAT(cdpkit_nvtx_name_, __LINE__)                                             \
  }
/// The same, with an unsigned integer payload (a level, a pass, a size).
#define CDPKIT_NVTX_SCOPE_PAYLOAD(literal, value)                                              \
  static const ::cdpkit::nvtx_registered_string CDPKIT_NVTX_CONCAT(cdpkit_nvtx_name_, __LINE__){ \
      literal};                                                                                \
  ::cdpkit::nvtx_scoped_range CDPKIT_NVTX_CONCAT(cdpkit_nvtx_range_, __LINE__) {               \
    ::nvtx3::event_attributes {                                                                \
      CDPKIT_NVTX_CONCAT(cdpkit_nvtx_name_, __LINE__),                                          \
          ::nvtx3::payload { static_cast<std::uint64_t>(value) }                                \
    }                                                                                          \
  }
#else
#define CDPKIT_NVTX_RANGE(name) static_cast<void>(0)
#define CDPKIT_NVTX_SCOPE(literal) static_cast<void>(0)
#define CDPKIT_NVTX_SCOPE_PAYLOAD(literal, value) static_cast<void>(0)
#endif
