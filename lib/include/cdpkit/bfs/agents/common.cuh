#pragma once
// cdpkit/bfs/agents/common.cuh — what every BFS variant shares on the device: the frontier as
// loop-to-child segments, the visit of one neighbour (the neighbour expansion's item operation,
// whatever strategy runs it) and the start of a run (init_agent).
//
// Namespace cdpkit::bfs_device: cdpkit::bfs is the function that runs a BFS (cdpkit/bfs.hpp).
//
// The counters (bfs_engine's d_counters, eight words): [0] and [1] the sizes of frontiers 0 and 1;
// [2..5] the device driver's status (agents/device_driver.cuh); [6] the automatic threshold of
// the level being expanded (picked there by loop-to-child, read back by the host's level loop).

#include <cdpkit/bfs.hpp>
#include <cdpkit/loop_to_child/frontier.cuh>

#include <cstdint>

namespace cdpkit::bfs_device {
namespace {

/// Segment i of a frontier: the neighbour list of frontier vertex i.
using frontier_segments = loop_to_child::id_list_segments;

/// Visit neighbour j: claim its vertex for the next level and append it to the next frontier
/// (one atomicAdd per warp for the appends).
///
/// The item operation of one level's expansion (item_op(i, j) of loop-to-child, over
/// frontier_segments): any thread may call it, for any neighbour j, any number of times at once;
/// a vertex is claimed by exactly one call (atomicCAS on its level), which appends it once.
/// Preconditions: d_levels holds bfs_unreached for every vertex not reached yet; *d_next_count
/// counts the next frontier's vertices (zeroed before the level), d_next has room for every
/// vertex.
struct visit_op {
  const std::uint32_t* d_neighbors;
  std::uint32_t* d_levels;
  std::uint32_t next_level;
  std::uint32_t* d_next;
  std::uint32_t* d_next_count;
  __device__ void operator()(std::uint32_t, std::uint32_t j) const {
    const std::uint32_t v = d_neighbors[j];
    if (d_levels[v] != bfs_unreached ||
        atomicCAS(&d_levels[v], bfs_unreached, next_level) != bfs_unreached)
      return;
    loop_to_child::append_to_frontier(d_next, d_next_count, v);
  }
};

/// The start of a run: vertex v = blockIdx.x * blockDim.x + threadIdx.x gets level 0 if it is
/// the source, bfs_unreached otherwise; thread 0 makes frontier 0 the source alone and zeroes the
/// other counters (frontier 1 and the driver's status).
///
/// Preconditions: source < n; a 1-D grid of at least n threads, each of which calls it (threads
/// past n set no level); d_levels has n entries, d_frontier at least one, d_counters at least
/// six.
__device__ __forceinline__ void init_agent(std::uint32_t* d_levels, std::uint32_t n, std::uint32_t source,
                                           std::uint32_t* d_frontier, std::uint32_t* d_counters) {
  const std::uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) d_levels[v] = v == source ? 0u : bfs_unreached;
  if (v == 0) {
    d_frontier[0] = source;
    d_counters[0] = 1;  // frontier 0 holds the source
    d_counters[1] = 0;
    d_counters[2] = 0;  // driver: levels driven on the device
    d_counters[3] = 0;  // driver: 1 = handed back to the host
    d_counters[4] = 0;  // driver: level to resume at
    d_counters[5] = 0;  // driver: frontier buffer to resume from
  }
}

}  // namespace
}  // namespace cdpkit::bfs_device
