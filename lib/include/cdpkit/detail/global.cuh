#pragma once
// cdpkit/detail/global.cuh — telling the compiler that a pointer addresses global memory, for the
// atomics of the launch layer and the probes.
//
// An atomic through a generic pointer compiles to a generic atomic (ATOM) that reports whether the
// address turned out to be shared memory, and a branch on that report: the thread waits for the
// round trip to L2 even where it ignores the result. Through a pointer known to be global it is
// an ATOMG with no such branch; where its result is unused, the result goes to no register (RZ)
// and no instruction waits for it. (In whole-program builds ptxas makes a fire-and-forget REDG
// of such an atomic; in relocatable-device-code builds, CDP's, it keeps the ATOMG.) Measured on
// the H200 (Nsight Compute, Bezier's child_per_thread, a million launch requests traced): the
// trace's counters and probes waited on about 600,000 such atomics per run. The SASS of the
// tessellation before and after (sm_90): 71 QSPC and 126 generic ATOMs, then none.

namespace cdpkit::detail {

/// `p`, which the compiler may now take to address global memory, including the addresses
/// computed from it: device memory (cudaMalloc, cudaMallocAsync pools, __device__ variables),
/// managed memory, or pinned host memory (cudaMallocHost, cudaHostAlloc).
/// Precondition: p is not null and addresses global memory (not shared, local or constant
/// memory); otherwise the behaviour is undefined.
template <class T>
__device__ __forceinline__ T* in_global(T* p) {
  __builtin_assume(__isGlobal(p));
  return p;
}

}  // namespace cdpkit::detail
