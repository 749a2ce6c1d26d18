#pragma once
// Test harness helpers: GPU detection (once per process) and the decorator for GPU cases.

namespace cdpkit_test {

/// True when a CUDA device is usable; computed once, on first call.
bool gpu_available();

}  // namespace cdpkit_test

/// Decorator for test cases that need a GPU: without one they are reported as skipped.
#define CDPKIT_GPU_CASE doctest::skip(!::cdpkit_test::gpu_available())
