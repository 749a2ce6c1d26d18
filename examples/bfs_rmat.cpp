// Example: BFS with child grids on a generated RMAT graph (cdpkit/bfs.hpp), checked against the
// CPU reference.
//
// Every variant returns the BFS level of every vertex. The CDP variants expand a frontier vertex's
// neighbours in a child grid when its degree is above a threshold (chosen on the device from the
// frontier's degrees when none is given); flat_balanced is the non-CDP yardstick.

#include <cdpkit/bfs.hpp>
#include <cdpkit/graph.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }

  // 1. A Graph500-style RMAT graph: 2^16 vertices, 16 edges per vertex, symmetrized (undirected).
  const cdpkit::csr_graph graph = cdpkit::build_csr(cdpkit::make_rmat(16));
  const std::uint32_t source = graph.highest_degree_vertex();  // inside the big component

  // 2. The expected levels, from a plain CPU queue.
  const std::vector<std::uint32_t> expected = cdpkit::bfs_reference(graph, source);

  // 3. Copy the graph to the GPU once, and run a few variants on it.
  const cdpkit::device_graph d_graph(graph);
  int failures = 0;
  for (const auto variant : {cdpkit::bfs_variant::thresholded,
                             cdpkit::bfs_variant::block_aggregated,
                             cdpkit::bfs_variant::flat_balanced}) {
    cdpkit::bfs_options options;
    options.variant = variant;  // threshold unset: picked per level on the device
    const std::vector<std::uint32_t> levels = cdpkit::bfs(d_graph, source, options);
    const bool ok = levels == expected;
    std::printf("%-22s %s\n", cdpkit::to_string(variant), ok ? "matches bfs_reference" : "WRONG");
    failures += ok ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}
