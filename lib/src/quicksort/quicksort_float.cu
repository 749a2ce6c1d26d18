// The library's quicksort instantiations for float keys (cdpkit/quicksort.hpp lists them): one
// translation unit per key type, so that builds compile them in parallel.

#include "instantiate.cuh"

namespace cdpkit {
CDPKIT_QUICKSORT_INSTANTIATE(float, less<float>)
CDPKIT_QUICKSORT_INSTANTIATE(float, greater<float>)
CDPKIT_QUICKSORT_INSTANTIATE(float, total_order_less<float>)
}  // namespace cdpkit
