// launch_runtime::read_device_clock's kernel: one thread writes %globaltimer, the clock of the
// device trace, to mapped host memory.

#include <cdpkit/launch.hpp>

#include <cuda_runtime.h>

extern "C" __global__ void cdpkit_device_clock(unsigned long long* out) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  *reinterpret_cast<volatile unsigned long long*>(out) = t;
}

namespace cdpkit::detail {

cudaError_t launch_device_clock(unsigned long long* out, cudaStream_t stream) noexcept {
  cdpkit_device_clock<<<1, 1, 0, stream>>>(out);
  return cudaGetLastError();
}

}  // namespace cdpkit::detail
