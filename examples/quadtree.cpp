// Example: a quadtree over 2-D points built with child grids (cdpkit/quadtree_build.hpp),
// checked against the CPU reference build.
//
// A node splits in four while it holds more than min_points points and is above max_depth; the
// build returns the leaves (depth, cell, the range of their points) in Morton order and the point
// ids in leaf order.

#include <cdpkit/quadtree.hpp>
#include <cdpkit/quadtree_build.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }

  // 1. 2^18 points in Gaussian blobs (or cdpkit::read_points("mesh.obj")).
  const auto points = cdpkit::make_points(1u << 18, cdpkit::point_distribution::clustered);
  cdpkit::quadtree_params params;
  params.max_depth = 12;
  params.min_points = 16;

  // 2. The expected tree, built on the CPU by the definition.
  const cdpkit::quadtree expected = cdpkit::quadtree_reference(points, params);

  // 3. Copy the points once; build with a CDP variant and with the Morton yardstick.
  const cdpkit::device_points d_points(points);
  int failures = 0;
  for (const auto variant : {cdpkit::quadtree_variant::thresholded, cdpkit::quadtree_variant::morton}) {
    cdpkit::quadtree_options options;
    options.variant = variant;
    options.params = params;
    const cdpkit::quadtree got = cdpkit::quadtree_gpu(d_points, options);
    std::string difference;
    const bool ok = cdpkit::compare_quadtrees(expected, got, &difference) == 0;
    std::printf("%-12s %zu leaves, height %u: %s\n", cdpkit::to_string(variant), got.leaves.size(), got.height,
                ok ? "matches quadtree_reference" : ("WRONG: " + difference).c_str());
    failures += ok ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}
