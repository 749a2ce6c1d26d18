#pragma once
// cdpkit/detail/unique_device_ptr.hpp — the one owning-pointer helper of cdpkit's RAII owners
// (device_graph, bfs_engine, the launch runtime's storage, device_buffer): std::unique_ptr with
// CUDA deleters, so owners get defaulted, correct moves and no hand-written release code.
//
// The watchdog's rule lives in the deleters: after a host wait ran past its deadline
// (device_unresponsive(), cdpkit/wait.hpp) a blocking free (cudaFree, cudaFreeHost,
// cudaStreamDestroy) could block on the stuck work, so it is skipped and the memory is left to
// the process exit.
//
//   detail::unique_device_ptr<std::uint32_t[]> d_levels;
//   CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_levels), bytes));

#include <cdpkit/wait.hpp>

#include <cuda_runtime_api.h>

#include <memory>
#include <type_traits>

namespace cdpkit::detail {

/// cudaFree, unless the device is unresponsive.
struct device_free {
  void operator()(void* p) const noexcept {
    if (p != nullptr && !device_unresponsive()) (void)cudaFree(p);
  }
};

/// cudaFreeHost (pinned host memory from cudaMallocHost / cudaHostAlloc), unless the device is
/// unresponsive.
struct pinned_free {
  void operator()(void* p) const noexcept {
    if (p != nullptr && !device_unresponsive()) (void)cudaFreeHost(p);
  }
};

/// cudaStreamDestroy, unless the device is unresponsive.
struct stream_destroy {
  void operator()(cudaStream_t s) const noexcept {
    if (s != nullptr && !device_unresponsive()) (void)cudaStreamDestroy(s);
  }
};

/// Device memory (T may be an array type, T[]).
template <class T>
using unique_device_ptr = std::unique_ptr<T, device_free>;
/// Pinned host memory (T may be an array type, T[]).
template <class T>
using unique_pinned_ptr = std::unique_ptr<T, pinned_free>;
/// A CUDA stream (cudaStream_t is a pointer to CUstream_st).
using unique_stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, stream_destroy>;

/// Adaptor for the CUDA allocation calls that return through a `void**` (cudaMalloc,
/// cudaMallocHost, cudaHostAlloc): the owner takes the pointer at the end of the full expression,
/// before CDPKIT_CUDA_TRY checks the call (a failed call leaves the owner empty).
template <class Owner>
class out_ptr_t {
 public:
  explicit out_ptr_t(Owner& owner) noexcept : owner_(owner) {}
  out_ptr_t(const out_ptr_t&) = delete;
  out_ptr_t& operator=(const out_ptr_t&) = delete;
  ~out_ptr_t() { owner_.reset(static_cast<typename Owner::pointer>(raw_)); }
  operator void**() noexcept { return &raw_; }  // NOLINT: implicit by design

 private:
  Owner& owner_;
  void* raw_ = nullptr;
};

template <class Owner>
out_ptr_t<Owner> out_ptr(Owner& owner) noexcept {
  return out_ptr_t<Owner>(owner);
}

}  // namespace cdpkit::detail
