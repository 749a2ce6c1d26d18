// The library's quicksort instantiations for double keys (cdpkit/quicksort.hpp lists them): one
// translation unit per key type, so that builds compile them in parallel.

#include "instantiate.cuh"

namespace cdpkit {
CDPKIT_QUICKSORT_INSTANTIATE(double, less<double>)
CDPKIT_QUICKSORT_INSTANTIATE(double, greater<double>)
CDPKIT_QUICKSORT_INSTANTIATE(double, total_order_less<double>)
}  // namespace cdpkit
