// The library's quicksort instantiations for uint64 keys (cdpkit/quicksort.hpp lists them): one
// translation unit per key type, so that builds compile them in parallel.

#include "instantiate.cuh"

namespace cdpkit {
CDPKIT_QUICKSORT_INSTANTIATE(std::uint64_t, less<std::uint64_t>)
CDPKIT_QUICKSORT_INSTANTIATE(std::uint64_t, greater<std::uint64_t>)
}  // namespace cdpkit
