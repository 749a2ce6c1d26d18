// Device memory check: a requested size against the current device's free memory.

#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>

#include <cuda_runtime_api.h>

namespace cdpkit {

void require_device_memory(std::uint64_t bytes, const std::string& what) {
  std::size_t free_bytes = 0, total_bytes = 0;
  CDPKIT_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes)
    throw input_error(what + " needs " + format_bytes(bytes) + " of device memory; only " +
                      format_bytes(free_bytes) + " of " + format_bytes(total_bytes) +
                      " are free");
}

}  // namespace cdpkit
