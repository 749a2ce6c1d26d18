#pragma once
// cdpkit/quadtree/agents.cuh — the quadtree build's device building blocks, one file per job, in
// namespace cdpkit::quadtree_device (the thin __global__ wrappers over them:
// cdpkit/quadtree/kernels.cuh; the host engine: lib/src/quadtree/engine.cu).
//
// The quadtree built on the GPU (cdpkit/quadtree_build.hpp): the Morton yardstick (radix sort of
// the cell codes, then one grid per depth finding the leaves among the runs of equal cells) and
// the recursions, where a block refines a node and its quadrants that must split get child grids
// or go on the block's own stack; device_driver runs the levels as count and scatter grids.
//
//   agents/common.cuh          launch parameters, quad_node, device_leaf, wide_task, quad_args,
//                              append_leaf, the partition's block steps (count_quadrant,
//                              add_block_counts, quadrant_position, load_chunk, scatter_chunk)
//   agents/refine.cuh          the recursion's block: refine_block (its own stack) and the child
//                              grids' body refine_body (child_per_node, aggregated, thresholded)
//   agents/wide_partition.cuh  a node too wide for one block: launch_wide, the count grid
//                              (wide_count_block), the scatter step (wide_scatter_block), and
//                              place_quadrants (leaf, wide node or child grid per quadrant)
//   agents/device_driver.cuh   device_driver: the level loop on the device (level_pass_block,
//                              place_level_node, launch_level_pass)
//   agents/morton.cuh          the Morton yardstick: cells_agent, morton_level_agent
//   agents/radix.cuh           radix: the digit passes' grids (radix_count_block,
//                              radix_scatter_block), place_digit, the drain queue and its
//                              blocks (radix_drain, radix_block_pass, radix_finish_tile)
//
// Launch sites: quadtree.nodes, quadtree.wide, quadtree.wide_scatter, quadtree.level,
// quadtree.radix, quadtree.radix_scatter (cdpkit/launch/site_ids.hpp).
//
// Every entity of the agents and kernels has internal linkage (an unnamed namespace inside
// cdpkit::quadtree_device): each translation unit that includes them under relocatable device
// code has its own copy (nothing for the device link to find twice), and the compiler may treat
// them as private to that unit. The kernels' PTX is then the one lib/src/quadtree/build.cu gave at
// commit b7c74cd (nvcc 13.0, sm_90); with external linkage (inline functions, templates over these
// types) it differed: the blocks' __shared__ variables stayed module-wide symbols instead of the
// kernel's own, and the launches' dim3 arguments became global constants.

#include <cdpkit/quadtree/agents/common.cuh>
#include <cdpkit/quadtree/agents/device_driver.cuh>
#include <cdpkit/quadtree/agents/morton.cuh>
#include <cdpkit/quadtree/agents/radix.cuh>
#include <cdpkit/quadtree/agents/refine.cuh>
#include <cdpkit/quadtree/agents/wide_partition.cuh>
