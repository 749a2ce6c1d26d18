// The library's quicksort instantiations for uint32 keys (cdpkit/quicksort.hpp lists them): one
// translation unit per key type, so that builds compile them in parallel.

#include "instantiate.cuh"

namespace cdpkit {
CDPKIT_QUICKSORT_INSTANTIATE(std::uint32_t, less<std::uint32_t>)
CDPKIT_QUICKSORT_INSTANTIATE(std::uint32_t, greater<std::uint32_t>)
}  // namespace cdpkit
