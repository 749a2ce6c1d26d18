#pragma once
// CDPKIT_HOST_DEVICE: `__host__ __device__` where nvcc compiles, nothing elsewhere. For the
// functions the host and the device share (the trace format's rules, the algorithms' pure
// helpers), so that their headers also compile without CUDA. It lives in the trace format's layer,
// the lowest one, which every target that needs it already links (cdpkit::trace_format).

#ifndef CDPKIT_HOST_DEVICE
#if defined(__CUDACC__)
#define CDPKIT_HOST_DEVICE __host__ __device__
#else
#define CDPKIT_HOST_DEVICE
#endif
#endif
