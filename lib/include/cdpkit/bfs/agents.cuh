#pragma once
// cdpkit/bfs/agents.cuh — BFS's device building blocks, one file per job, in namespace
// cdpkit::bfs_device (cdpkit::bfs is the function that runs a BFS; the thin __global__ wrappers
// over the agents: cdpkit/bfs/kernels.cuh; the host engine: lib/src/bfs/engine.cu).
//
// BFS on the GPU (cdpkit/bfs.hpp): the level loop on the host around a loop-to-child neighbour
// expansion of each frontier (for_each_segment, every loop policy), or on the device
// (device_driver: loop-to-child's thresholded agent inside the driver's level grids).
//
//   agents/common.cuh         frontier_segments, visit_op (the expansion's item operation),
//                             init_agent (the start of a run), the layout of the counters
//   agents/device_driver.cuh  device_driver: driver_args, level_body, driver_body
//
// Launch sites: bfs.neighbors, bfs.level, bfs.driver (cdpkit/launch/site_ids.hpp); the
// expansion's probes are loop-to-child's.
//
// Every entity of the agents and kernels has internal linkage (an unnamed namespace inside
// cdpkit::bfs_device): each translation unit that includes them under relocatable device code has
// its own copy (nothing for the device link to find twice), and the compiler may treat them as
// private to that unit. The kernels' PTX is then the one lib/src/bfs/bfs.cu gave at commit b7c74cd
// (nvcc 13.0, sm_90); with external linkage (inline functions, named types) ptxas gave the device
// driver's grids 50 registers instead of 40 (the launch's dim3 values became module-wide constants
// read from memory instead of immediates).

#include <cdpkit/bfs/agents/common.cuh>
#include <cdpkit/bfs/agents/device_driver.cuh>
