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
// tessellation before and after (sm_90): 71 QSPC and 126 generic ATOMs, then none. The trace's
// atomics whose result is unused go through red_add & co. below instead: a REDG in either build.

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

/// Fire-and-forget reductions (PTX red.relaxed.gpu.global): for atomics whose result is unused.
/// In a relocatable-device-code build (CDP's), ptxas keeps an atomicAdd whose result is unused as
/// an ATOMG that still fetches the old value (into RZ); it makes a REDG of it in whole-program
/// builds only. Same memory semantics as atomicAdd & co. (relaxed, device scope); before sm_70
/// (no .relaxed.gpu qualifiers) they are those atomics.
/// Precondition: p addresses global memory, as for in_global.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
#define CDPKIT_DETAIL_RED(op, ptx_type, constraint, fallback)                                  \
  asm volatile("red.relaxed.gpu.global." op "." ptx_type " [%0], %1;" ::"l"(p), constraint(v) \
               : "memory")
#else
#define CDPKIT_DETAIL_RED(op, ptx_type, constraint, fallback) (void)fallback(in_global(p), v)
#endif
__device__ __forceinline__ void red_add(unsigned int* p, unsigned int v) { CDPKIT_DETAIL_RED("add", "u32", "r", atomicAdd); }
__device__ __forceinline__ void red_add(unsigned long long* p, unsigned long long v) {
  CDPKIT_DETAIL_RED("add", "u64", "l", atomicAdd);
}
__device__ __forceinline__ void red_add(double* p, double v) { CDPKIT_DETAIL_RED("add", "f64", "d", atomicAdd); }
__device__ __forceinline__ void red_max(unsigned int* p, unsigned int v) { CDPKIT_DETAIL_RED("max", "u32", "r", atomicMax); }
__device__ __forceinline__ void red_max(unsigned long long* p, unsigned long long v) {
  CDPKIT_DETAIL_RED("max", "u64", "l", atomicMax);
}
__device__ __forceinline__ void red_min(unsigned long long* p, unsigned long long v) {
  CDPKIT_DETAIL_RED("min", "u64", "l", atomicMin);
}
__device__ __forceinline__ void red_or(unsigned int* p, unsigned int v) { CDPKIT_DETAIL_RED("or", "b32", "r", atomicOr); }
#undef CDPKIT_DETAIL_RED

}  // namespace cdpkit::detail
