#pragma once
// A move-only, stream-ordered device allocation (cudaMallocAsync / cudaFreeAsync).

#include <cdpkit/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace cdpkit::detail {

template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  /// Allocate `count` elements on `stream` (uninitialized). count == 0 holds nothing.
  device_buffer(std::size_t count, cudaStream_t stream) : count_(count), stream_(stream) {
    if (count > 0) {
      void* p = nullptr;
      CDPKIT_CUDA_TRY(cudaMallocAsync(&p, count * sizeof(T), stream));
      data_ = static_cast<T*>(p);
    }
  }
  ~device_buffer() {
    if (data_ != nullptr) (void)cudaFreeAsync(data_, stream_);
  }
  device_buffer(device_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)),
        stream_(o.stream_) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      if (data_ != nullptr) (void)cudaFreeAsync(data_, stream_);
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
      stream_ = o.stream_;
    }
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  [[nodiscard]] T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace cdpkit::detail
