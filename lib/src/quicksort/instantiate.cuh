#pragma once
// The explicit instantiations of the library's quicksort entry points for one key type and
// comparator (lib/src/quicksort/quicksort_<type>.cu): keys only and by key with uint32 values,
// each synchronous and asynchronous.

#include <cdpkit/quicksort.cuh>

#define CDPKIT_QUICKSORT_INSTANTIATE(T, C)                                                    \
  template quicksort_result quicksort<T, C>(T*, std::uint64_t, C, const quicksort_options&); \
  template quicksort_result quicksort_async<T, C>(T*, std::uint64_t, C,                      \
                                                  const quicksort_options&, cudaStream_t);   \
  template quicksort_result quicksort_by_key<T, std::uint32_t, C>(                          \
      T*, std::uint32_t*, std::uint64_t, C, const quicksort_options&);                      \
  template quicksort_result quicksort_by_key_async<T, std::uint32_t, C>(                    \
      T*, std::uint32_t*, std::uint64_t, C, const quicksort_options&, cudaStream_t);
