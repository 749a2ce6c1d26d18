// CSR construction and the device copy of a graph.

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <thread>
#include <utility>

namespace cdpkit {

namespace {
/// Run fn(begin, end) over [0, n) split across the hardware threads.
template <class Fn>
void parallel_ranges(std::uint64_t n, Fn fn) {
  const unsigned int workers =
      std::max(1u, std::min(std::thread::hardware_concurrency(), static_cast<unsigned int>(16)));
  if (n < 100000 || workers == 1) {
    fn(std::uint64_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  const std::uint64_t chunk = (n + workers - 1) / workers;
  for (unsigned int w = 0; w < workers; ++w) {
    const std::uint64_t b = w * chunk, e = std::min(n, b + chunk);
    if (b < e) pool.emplace_back(fn, b, e);
  }
  for (auto& t : pool) t.join();
}
}  // namespace

std::uint32_t csr_graph::highest_degree_vertex() const {
  std::uint32_t best = 0;
  for (std::uint32_t v = 1; v < num_vertices; ++v)
    if (degree(v) > degree(best)) best = v;
  return best;
}

std::uint32_t csr_graph::max_degree() const {
  return num_vertices == 0 ? 0 : degree(highest_degree_vertex());
}

csr_graph build_csr(const edge_list& list, const csr_options& options) {
  if (list.num_vertices > 0xffffffffull)
    throw input_error("build_csr: " + std::to_string(list.num_vertices) +
                      " vertices do not fit 32-bit vertex ids (at most 4294967295)");
  const auto n = static_cast<std::uint32_t>(list.num_vertices);
  const bool both = options.symmetrize || list.symmetric;

  // 1. count out-degrees (self loops dropped), checking every id
  std::vector<std::uint64_t> start(static_cast<std::size_t>(n) + 1, 0);
  for (std::size_t k = 0; k < list.edges.size(); ++k) {
    const auto [u, v] = list.edges[k];
    if (u >= n || v >= n)
      throw input_error("build_csr: edge " + std::to_string(k) + " (" + std::to_string(u) + ", " +
                        std::to_string(v) + ") has an id >= the vertex count " + std::to_string(n));
    if (u == v) continue;
    ++start[u + 1];
    if (both) ++start[v + 1];
  }
  for (std::uint32_t v = 0; v < n; ++v) start[v + 1] += start[v];

  // 2. scatter
  std::vector<std::uint32_t> raw(start[n]);
  {
    std::vector<std::uint64_t> cursor(start.begin(), start.end() - 1);
    for (const auto& [u, v] : list.edges) {
      if (u == v) continue;
      raw[cursor[u]++] = v;
      if (both) raw[cursor[v]++] = u;
    }
  }

  // 3. sort and deduplicate each list in place, then compact
  std::vector<std::uint32_t> unique_count(n, 0);
  parallel_ranges(n, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t v = b; v < e; ++v) {
      auto first = raw.begin() + static_cast<std::ptrdiff_t>(start[v]);
      auto last = raw.begin() + static_cast<std::ptrdiff_t>(start[v + 1]);
      std::sort(first, last);
      unique_count[v] = static_cast<std::uint32_t>(std::unique(first, last) - first);
    }
  });
  csr_graph g;
  g.num_vertices = n;
  g.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  std::uint64_t total = 0;
  for (std::uint32_t v = 0; v < n; ++v) {
    total += unique_count[v];
    if (total > 0xffffffffull)
      throw input_error("build_csr: more than 4294967295 directed edges after symmetrization");
    g.offsets[v + 1] = static_cast<std::uint32_t>(total);
  }
  g.neighbors.resize(total);
  parallel_ranges(n, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t v = b; v < e; ++v)
      std::copy_n(raw.begin() + static_cast<std::ptrdiff_t>(start[v]), unique_count[v],
                  g.neighbors.begin() + g.offsets[v]);
  });
  return g;
}

device_graph::device_graph(const csr_graph& graph)
    : num_vertices_(graph.num_vertices), num_edges_(graph.num_edges()) {
  try {
    CDPKIT_CUDA_TRY(cudaMalloc(&d_offsets_, sizeof(std::uint32_t) * graph.offsets.size()));
    CDPKIT_CUDA_TRY(cudaMemcpy(d_offsets_, graph.offsets.data(),
                               sizeof(std::uint32_t) * graph.offsets.size(), cudaMemcpyHostToDevice));
    CDPKIT_CUDA_TRY(cudaMalloc(&d_neighbors_, sizeof(std::uint32_t) * std::max<std::size_t>(1, graph.neighbors.size())));
    if (!graph.neighbors.empty())
      CDPKIT_CUDA_TRY(cudaMemcpy(d_neighbors_, graph.neighbors.data(),
                                 sizeof(std::uint32_t) * graph.neighbors.size(),
                                 cudaMemcpyHostToDevice));
  } catch (...) {
    release();
    throw;
  }
}

device_graph::~device_graph() { release(); }

device_graph::device_graph(device_graph&& o) noexcept
    : num_vertices_(o.num_vertices_), num_edges_(o.num_edges_),
      d_offsets_(std::exchange(o.d_offsets_, nullptr)),
      d_neighbors_(std::exchange(o.d_neighbors_, nullptr)) {}

device_graph& device_graph::operator=(device_graph&& o) noexcept {
  if (this != &o) {
    release();
    num_vertices_ = o.num_vertices_;
    num_edges_ = o.num_edges_;
    d_offsets_ = std::exchange(o.d_offsets_, nullptr);
    d_neighbors_ = std::exchange(o.d_neighbors_, nullptr);
  }
  return *this;
}

void device_graph::release() noexcept {
  (void)cudaFree(d_offsets_);
  (void)cudaFree(d_neighbors_);
  d_offsets_ = d_neighbors_ = nullptr;
}

}  // namespace cdpkit
