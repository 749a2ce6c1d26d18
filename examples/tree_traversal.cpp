// Example: traversals of a rooted tree with child grids (cdpkit/tree_traversal.hpp), checked
// against the CPU references.
//
// A tree is built from a parent array (here a small random one with power-law fan-out; or read
// with cdpkit::read_path_list / read_parent_array), copied to the GPU once, and traversed
// top-down (depth and root-path sums) and bottom-up (subtree sizes and sums) by a recursive CDP
// variant and by the level loop without CDP.

#include <cdpkit/tree.hpp>
#include <cdpkit/tree_traversal.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }

  // 1. A random tree of 2^16 nodes: most nodes have 0 or 1 child, a few have thousands.
  const cdpkit::tree t = cdpkit::make_random_tree(1u << 16, cdpkit::fanout_kind::power_law);

  // 2. The expected values, from plain CPU loops.
  const cdpkit::tree_top_down depth = cdpkit::tree_top_down_reference(t);
  const cdpkit::tree_bottom_up subtree = cdpkit::tree_bottom_up_reference(t);

  // 3. Copy the tree to the GPU once; traverse it both ways with a few variants.
  const cdpkit::device_tree d_tree(t);
  int failures = 0;
  for (const auto variant : {cdpkit::tree_variant::recursive_block, cdpkit::tree_variant::device_driver,
                             cdpkit::tree_variant::level_sync}) {
    cdpkit::tree_options options;
    options.variant = variant;  // threshold unset: the variant's default
    const auto top = cdpkit::tree_top_down_gpu(d_tree, options);
    const auto bottom = cdpkit::tree_bottom_up_gpu(d_tree, options);
    const bool ok = top.depth == depth.depth && top.path_sum == depth.path_sum && bottom.size == subtree.size &&
                    bottom.sum == subtree.sum;
    std::printf("%-20s %s\n", cdpkit::to_string(variant), ok ? "matches the CPU references" : "WRONG");
    failures += ok ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}
