#pragma once
// A move-only, stream-ordered device allocation (cudaMallocAsync / cudaFreeAsync). The free is
// stream-ordered and never blocks, so it is done even when the device is unresponsive.

#include <cdpkit/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

namespace cdpkit::detail {

template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  /// Allocate `count` elements on `stream` (uninitialized). count == 0 holds nothing.
  device_buffer(std::size_t count, cudaStream_t stream)
      : data_(nullptr, stream_free{stream}), count_(count) {
    if (count > 0) {
      void* p = nullptr;
      CDPKIT_CUDA_TRY(cudaMallocAsync(&p, count * sizeof(T), stream));
      data_.reset(static_cast<T*>(p));
    }
  }

  [[nodiscard]] T* data() const noexcept { return data_.get(); }
  /// Elements held (0 for an empty or moved-from buffer).
  [[nodiscard]] std::size_t size() const noexcept { return data_ ? count_ : 0; }

 private:
  /// Frees on the stream the buffer was allocated on.
  struct stream_free {
    cudaStream_t stream = nullptr;
    void operator()(T* p) const noexcept { (void)cudaFreeAsync(p, stream); }
  };
  std::unique_ptr<T, stream_free> data_;
  std::size_t count_ = 0;
};

}  // namespace cdpkit::detail
