// The device copy of a CSR graph (the one CUDA part of the graph module; csr.cpp, readers.cpp
// and generators.cpp are pure C++).

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/wait.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <utility>

namespace cdpkit {

device_graph::device_graph(const csr_graph& graph)
    : num_vertices_(graph.num_vertices), num_edges_(graph.num_edges()) {
  CDPKIT_NVTX_SCOPE("graph::upload");
  const std::size_t offsets_bytes = sizeof(std::uint32_t) * graph.offsets.size();
  const std::size_t neighbors_bytes =
      sizeof(std::uint32_t) * std::max<std::size_t>(1, graph.neighbors.size());
  // Check before allocating: a graph too large for the device is bad input, not a cudaMalloc
  // failure half-way through.
  require_device_memory(offsets_bytes + neighbors_bytes,
                        "device_graph (" + std::to_string(num_vertices_) + " vertices, " +
                            std::to_string(num_edges_) + " directed edges)");
  // (on a throw, the members free what was allocated)
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_offsets_), offsets_bytes));
  CDPKIT_CUDA_TRY(
      cudaMemcpy(d_offsets_.get(), graph.offsets.data(), offsets_bytes, cudaMemcpyHostToDevice));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_neighbors_), neighbors_bytes));
  if (!graph.neighbors.empty())
    CDPKIT_CUDA_TRY(cudaMemcpy(d_neighbors_.get(), graph.neighbors.data(),
                               sizeof(std::uint32_t) * graph.neighbors.size(),
                               cudaMemcpyHostToDevice));
}

}  // namespace cdpkit
