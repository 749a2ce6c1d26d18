#pragma once
// cdpkit/quadtree_build.hpp — the quadtree (cdpkit/quadtree.hpp) built on the GPU, with child
// grids where the data is busy, and the non-CDP yardstick.
//
// Every variant starts from each point's cell at max_depth (quadtree_cell, one kernel), and
// returns the same tree as quadtree_reference (same leaves, same points per leaf).
//
//   morton            no CDP: sort the points by cell code (CUB radix sort), then one grid per
//                     depth over the sorted points finds the runs of equal cells that are leaves
//                     at that depth (Karras' level-parallel build, from the host).
//   child_per_node    the textbook recursion (NVIDIA's cdpQuadtree shape): a block partitions a
//                     node's points into its four quadrants, and each quadrant that must split
//                     gets a child grid of its own, one block.
//   aggregated        the same, with one child grid per node for all its quadrants that split
//                     (a block each).
//   thresholded{T}    aggregated, launching only quadrants of more than T points; smaller ones are
//                     refined by the block itself.
//
//   device_driver     the level loop on the device (no host round trip per level): each level is
//                     two grids over the points of its nodes that split, packed, whatever the
//                     nodes' sizes (a count pass, then a scatter pass whose last block launches
//                     the next level's count pass); each node is placed by the lane that scatters
//                     its last points. A refused launch hands the rest of the loop to the host.
//   radix             one most-significant-digit radix recursion over the cell codes that sorts
//                     the points and builds the tree at once: a pass splits a node by its cells
//                     up to 4 levels down (8 bits, 256 buckets), and the counts give those levels'
//                     leaves and nodes; wide nodes get count and scatter grids, the others are
//                     queued for one drain grid whose blocks run the passes in shared memory and
//                     queue the larger nodes they find for each other. No point is sorted below
//                     its leaf.
//
// In the recursive variants a node of more than 2^15 points is partitioned by grids of its own (a
// count grid, then a scatter step, a block per 4,096 points) rather than by one block.
//
// A refused launch (depth cap, pending budget) or a quadrant below the threshold goes on the
// block's own stack (in shared memory): the block refines it iteratively, so the build reaches
// max_depth whatever the launch layer allows. Points that are all equal refine to max_depth and
// stop there.

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/quadtree.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit {

enum class quadtree_variant : std::uint8_t { morton, child_per_node, aggregated, thresholded, device_driver, radix };

/// "morton", "child_per_node", "aggregated", "thresholded", "device_driver", "radix".
const char* to_string(quadtree_variant v) noexcept;
/// The variant of a name. Throws cdpkit::input_error naming the value and the choices.
quadtree_variant parse_quadtree_variant(const std::string& name);
/// Every variant, in the order of the story (the CDP variants, then morton).
const std::vector<quadtree_variant>& all_quadtree_variants();

struct quadtree_options {
  quadtree_variant variant = quadtree_variant::thresholded;
  quadtree_params params;
  /// thresholded: quadrants of more points than this get a child grid. Unset: 4096 (a block of
  /// 256 threads partitions that many points in about the time a launch takes).
  std::optional<std::uint32_t> threshold;
};

/// What a run did besides the tree.
struct quadtree_stats {
  std::uint64_t nodes = 0;        ///< nodes (split and leaves)
  std::uint64_t leaves = 0;
  std::uint32_t levels = 0;       ///< morton: depth grids launched (max_depth + 1); device_driver: levels split; radix: 0
  bool driver_handed_back = false; ///< device_driver: a launch was refused and the host went on
};

/// Points in device memory, with their root square (bounds_of, computed on the host when the
/// points are uploaded). Move-only RAII.
class device_points {
 public:
  /// Copies `points` to the current device. Throws cdpkit::input_error for no points or more than
  /// max_quadtree_points, or when the device has not enough free memory (8 bytes per point);
  /// cdpkit::cuda_error when a CUDA call fails.
  explicit device_points(const std::vector<point2>& points);
  [[nodiscard]] std::uint32_t size() const noexcept { return n_; }
  [[nodiscard]] const quadtree_bounds& bounds() const noexcept { return bounds_; }
  [[nodiscard]] const point2* data() const noexcept { return d_points_.get(); }

 private:
  std::uint32_t n_ = 0;
  quadtree_bounds bounds_;
  detail::unique_device_ptr<point2[]> d_points_;
};

/// Buffers for builds over one set of device points, reused across runs. Move-only RAII.
class quadtree_engine {
 public:
  /// Throws cdpkit::input_error for more than 2^31 - 1 points or when the device has not enough
  /// free memory (about 56 bytes per point), cdpkit::cuda_error on allocation failure. `points`
  /// must outlive the engine.
  explicit quadtree_engine(const device_points& points);
  ~quadtree_engine();
  quadtree_engine(quadtree_engine&&) noexcept;
  quadtree_engine& operator=(quadtree_engine&&) noexcept;

  /// Build and wait for it (under the watchdog). Throws cdpkit::input_error for a max_depth above
  /// max_quadtree_depth, or (device_driver) when the device has not enough free memory for its
  /// level nodes (about 2 x 56 bytes per (min_points + 1) points) or a level could hold more than
  /// 2^26 nodes, or (radix) when it has not enough for its queue and tasks (about 32 bytes per
  /// (min_points + 1) points, plus 3 KiB per 2^15 points and level); cdpkit::cuda_error on CUDA
  /// or device-side errors.
  quadtree_stats run(const quadtree_options& options, launch_runtime& runtime = default_runtime(),
                     cudaStream_t stream = nullptr);

  /// The last build, copied to the host: leaves in Morton order and the points in leaf order.
  /// Empty before the first run.
  [[nodiscard]] quadtree result() const;

 private:
  struct buffers;
  const device_points* points_;
  std::unique_ptr<buffers> b_;
  quadtree_options last_;
  bool ran_ = false;
};

/// One build with a temporary engine.
quadtree quadtree_gpu(const device_points& points, const quadtree_options& options,
                      launch_runtime& runtime = default_runtime());

}  // namespace cdpkit
