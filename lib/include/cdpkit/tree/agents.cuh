#pragma once
// cdpkit/tree/agents.cuh — the tree traversals' device building blocks, one file per job, in
// namespace cdpkit::tree_device (the thin __global__ wrappers over them: cdpkit/tree/kernels.cuh;
// the host engine: lib/src/tree/engine.cu).
//
// Tree traversals on the GPU (cdpkit/tree_traversal.hpp): the level loop on the host
// (level_sync) or on the device (device_driver) around loop-to-child expansions of each level's
// children lists, and the recursions (naive, thresholded, warp- and block-aggregated) over child
// grids of the launch layer, with iterative walks where a launch is not made.
//
//   agents/common.cuh         tree_view, tree_out, visit, combine_up, init_agent, the counters
//   agents/recursion.cuh      the recursions: generation_body (a child grid over a group of
//                             nodes), expand_and_walk (per node, per warp or per block: naive,
//                             threshold, warp and block expansions), walk (subtrees not launched)
//   agents/level_sync.cuh     the level loops' steps: level_segments, level_visit_op, add_level
//   agents/device_driver.cuh  device_driver: driver_body, driver_level_body, driver_add_body
//
// Launch sites: tree.children, tree.level, tree.driver, tree.combine; probes: tree.walk,
// tree.child_nodes (cdpkit/launch/site_ids.hpp).
//
// Every entity of the agents and kernels has internal linkage (an unnamed namespace inside
// cdpkit::tree_device): each translation unit that includes them under relocatable device code
// has its own copy (nothing for the device link to find twice), and the compiler may treat them
// as private to that unit. The kernels' PTX is then the one lib/src/tree/traversal.cu gave at
// commit b7c74cd (nvcc 13.0, sm_90); with external linkage (inline functions, named types) ptxas
// gave the device driver's grids more registers (driver_body's 52 instead of 40) and the
// block-aggregated expansion's shared storage became a module-wide symbol instead of the kernel's.

#include <cdpkit/tree/agents/common.cuh>
#include <cdpkit/tree/agents/device_driver.cuh>
#include <cdpkit/tree/agents/level_sync.cuh>
#include <cdpkit/tree/agents/recursion.cuh>
