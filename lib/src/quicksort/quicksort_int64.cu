// The library's quicksort instantiations for int64 keys (cdpkit/quicksort.hpp lists them): one
// translation unit per key type, so that builds compile them in parallel.

#include "instantiate.cuh"

namespace cdpkit {
CDPKIT_QUICKSORT_INSTANTIATE(std::int64_t, less<std::int64_t>)
CDPKIT_QUICKSORT_INSTANTIATE(std::int64_t, greater<std::int64_t>)
}  // namespace cdpkit
