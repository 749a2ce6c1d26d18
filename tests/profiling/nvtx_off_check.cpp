// Compiled with CDPKIT_NVTX=0 (what -DCDPKIT_NVTX=OFF sets): every cdpkit NVTX macro
// compiles to nothing and no NVTX header is included. Built with the tests; nothing to run.

#include <cdpkit/nvtx.hpp>

#include <cstdint>

#if CDPKIT_NVTX || defined(NVTX3_CPP_VERSION_MAJOR)
#error "cdpkit/nvtx.hpp with CDPKIT_NVTX=0 must not include NVTX"
#endif

namespace cdpkit_nvtx_off_check {

std::uint64_t every_macro(std::uint64_t level) {
  CDPKIT_NVTX_SCOPE("check::scope");
  CDPKIT_NVTX_SCOPE_PAYLOAD("check::payload", level);
  CDPKIT_NVTX_RANGE("check::range");
  return level + 1;
}

}  // namespace cdpkit_nvtx_off_check
