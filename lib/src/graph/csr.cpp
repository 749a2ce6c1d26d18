// CSR construction (pure C++: also compiled into the sanitizer-built fuzz targets; the device
// copy of a graph is in device_graph.cpp).

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>

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

std::uint64_t build_csr_host_bytes(std::uint64_t num_vertices, std::uint64_t num_edges,
                                   bool symmetrize) noexcept {
  // Alive together at the peak (step 3): start (8 bytes per vertex + 1), unique_count (4),
  // offsets (4 per vertex + 1), raw and neighbors (4 + 4 per directed edge before dedup).
  // The scatter cursor (8 per vertex) of step 2 is freed before unique_count and offsets exist.
  const std::uint64_t directed = saturating_mul(num_edges, symmetrize ? 2 : 1);
  return saturating_add(saturating_mul(saturating_add(num_vertices, 1), 16),
                        saturating_mul(directed, 8));
}

csr_graph build_csr(const edge_list& list, const csr_options& options) {
  CDPKIT_NVTX_SCOPE("graph::build_csr");
  if (list.num_vertices > max_csr_vertices)
    throw input_error("build_csr: " + std::to_string(list.num_vertices) +
                      " vertices do not fit 32-bit vertex ids (at most 4294967295)");
  const auto n = static_cast<std::uint32_t>(list.num_vertices);
  const bool both = options.symmetrize || list.symmetric;
  // 0. everything below, before allocating any of it
  require_host_memory(build_csr_host_bytes(n, list.edges.size(), both),
                      "build_csr (" + std::to_string(n) + " vertices, " +
                          std::to_string(list.edges.size()) + " edges" +
                          (both ? ", symmetrized)" : ")"));

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
    if (total > max_csr_edges)
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

}  // namespace cdpkit
