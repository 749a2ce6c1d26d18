// launch_runtime::read_device_clock's kernel: one thread writes %globaltimer, the clock of the
// device trace, to mapped host memory.

#include <cdpkit/launch.cuh>

#include <cuda_runtime.h>

extern "C" __global__ void cdpkit_device_clock(unsigned long long* out) {
  *reinterpret_cast<volatile unsigned long long*>(out) = cdpkit::detail::global_timer_ns();
}

namespace cdpkit::detail {

cudaError_t launch_device_clock(unsigned long long* out, cudaStream_t stream) noexcept {
  cdpkit_device_clock<<<1, 1, 0, stream>>>(out);
  return cudaGetLastError();
}

}  // namespace cdpkit::detail
