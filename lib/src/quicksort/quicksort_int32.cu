// The library's quicksort instantiations for int32 keys (cdpkit/quicksort.hpp lists them): one
// translation unit per key type, so that builds compile them in parallel.

#include "instantiate.cuh"

namespace cdpkit {
CDPKIT_QUICKSORT_INSTANTIATE(std::int32_t, less<std::int32_t>)
CDPKIT_QUICKSORT_INSTANTIATE(std::int32_t, greater<std::int32_t>)
}  // namespace cdpkit
