#pragma once
// cdpkit/tree_traversal.hpp — traversals of a rooted tree (cdpkit/tree.hpp) on the GPU, with child
// grids: every variant of the lecture's story (PMPP ch. 21) and the non-CDP yardstick. Each computes, for every
// node, what the CPU references compute:
//   top_down    depth and root-path sum (tree_top_down_reference)
//   bottom_up   subtree size and subtree sum (tree_bottom_up_reference)
//
// Variants:
//   level_sync            no CDP: the host loops over the levels; each level is one grid over
//                         its frontier, whose children lists are expanded edge-balanced
//                         (loop-to-child's flat_balanced). bottom_up then adds each level into
//                         its parents, deepest level first (one grid per level again).
//   recursive_naive       a child grid per node with children (the textbook recursion): the
//                         thread of node v launches a grid over v's children, whose threads
//                         launch grids over theirs, and so on.
//   recursive_threshold{T} a child grid only for a node with more than T children; the others'
//                         subtrees are walked by the thread itself (iteratively, without a
//                         stack), launching for any node with more than T children it meets.
//   recursive_warp{T} / recursive_block{T}   one child grid per warp / block over the
//                         concatenated children of its nodes when they are more than T (KLAP's
//                         aggregation); fewer are walked by the lanes themselves.
//   device_driver{T}      the level loop on the device: each level's grid expands the frontier
//                         with loop-to-child's block-aggregated agent (a block's nodes' children
//                         expanded by the block itself, or, when more than T, by one child grid
//                         over their concatenation) and tail-launches the next level; no host
//                         round trip per level. bottom_up then adds the levels into their
//                         parents as level_sync does, deepest first, a grid per level, each
//                         tail-launching the next. A refused launch hands the rest to the host:
//                         a level's grid or the next step (the host finishes the levels with the
//                         same expansion, then adds them all), or an addition (the host adds
//                         that level and those above); tree_stats says which.
//
// Past the launch layer's depth cap (launch_config::max_depth) or pending budget, a recursive
// variant's refused launch is walked by the thread that asked, iteratively: the work is done
// either way, to any depth (a path of 10^6 nodes), and the trace's depth histogram and fallback
// counts show where the recursion stopped.
//
// bottom_up in the recursions: CDP2 has no device-side wait, so a subtree's sums cannot be
// combined by a parent waiting for its children. A node is combined when its last child is done
// (a per-node count of children not yet done, decremented by each child after adding its sums
// into the parent): the thread that finishes the last child combines the parent and goes on up.
// Nothing depends on the order in which grids (or tail launches of nested grids) complete.

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/tree.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit {

enum class tree_variant : std::uint8_t {
  level_sync,
  recursive_naive,
  recursive_threshold,
  recursive_warp,
  recursive_block,
  device_driver,
};

/// "level_sync", "recursive_naive", ...
const char* to_string(tree_variant v) noexcept;
/// The variant of a name (as to_string writes it). Throws cdpkit::input_error naming the value and
/// the choices.
tree_variant parse_tree_variant(const std::string& name);
/// Every variant, in the order of the story.
const std::vector<tree_variant>& all_tree_variants();
/// True for the variants that launch child grids (all but level_sync).
[[nodiscard]] constexpr bool uses_cdp(tree_variant v) noexcept { return v != tree_variant::level_sync; }

enum class tree_op : std::uint8_t { top_down, bottom_up };
/// "depth" (top_down) and "subtree" (bottom_up), as the samples name them.
const char* to_string(tree_op op) noexcept;
/// "depth" / "top_down" and "subtree" / "bottom_up". Throws cdpkit::input_error otherwise.
tree_op parse_tree_op(const std::string& name);

struct tree_options {
  tree_variant variant = tree_variant::recursive_block;
  tree_op op = tree_op::top_down;
  /// Launch threshold: children of a node (recursive_threshold) or of a warp / block
  /// (recursive_warp / recursive_block, device_driver) above which a child grid is launched. Unset:
  /// default_tree_threshold(variant). Ignored by level_sync and recursive_naive (0).
  std::optional<std::uint32_t> threshold;
  /// Threads per block of the child grids (a multiple of 32 in [32, 1024]).
  std::uint32_t child_block_threads = 256;

  /// The threshold the variant uses (the option or the default; 0 for recursive_naive).
  [[nodiscard]] std::uint32_t effective_threshold() const noexcept;
};

/// The default launch threshold of a variant, from a threshold sweep (tree_bench --thresholds; H200, power-law trees of
/// 2^18 and 2^20 nodes, docs/design.md "Trees"): a node that gets no grid has its whole subtree
/// walked by one thread, a chain of dependent loads of about a microsecond per node, so the
/// recursions launch early: 16 children per node (recursive_threshold), 64 per warp
/// (recursive_warp: below, its lanes' launches spend the pending budget and the refused subtrees
/// are walked) and 4 per block (recursive_block). device_driver's blocks expand their nodes'
/// children cooperatively, 256 threads at a time, and walk nothing: 4096 (16 children a thread).
/// level_sync and recursive_naive: 0.
[[nodiscard]] std::uint32_t default_tree_threshold(tree_variant v) noexcept;

/// What a run did besides the values.
struct tree_stats {
  std::uint32_t levels = 0;            ///< level_sync and device_driver: levels expanded (height + 1)
  std::uint32_t device_levels = 0;     ///< device_driver: levels driven from the device
  bool driver_handed_back = false;     ///< device_driver could not launch and the host finished
  /// device_driver, bottom_up: levels whose addition into their parents the host launched, the
  /// device's launch having been refused (all but the root's after a hand-back; 0 when the
  /// device added them all)
  std::uint32_t host_added_levels = 0;
  std::uint64_t pool_refusals = 0;     ///< aggregated launches walked because the group pool was full
};

/// The tree in device memory, with what the traversals read: child offsets, children, parents,
/// each node's position among its siblings' entries (for the iterative walks) and the values.
/// Move-only RAII (defaulted moves).
class device_tree {
 public:
  /// Copies `t` to the current device. Throws cdpkit::input_error when the device has not enough
  /// free memory for it (about 24 bytes per node), cdpkit::cuda_error when a CUDA call fails.
  explicit device_tree(const tree& t);

  [[nodiscard]] std::uint32_t num_nodes() const noexcept { return num_nodes_; }
  [[nodiscard]] std::uint32_t root() const noexcept { return root_; }
  /// The root's children: their first index in children[] and their number.
  [[nodiscard]] std::uint32_t root_first_child() const noexcept { return root_first_child_; }
  [[nodiscard]] std::uint32_t root_children() const noexcept { return root_children_; }
  [[nodiscard]] const std::uint32_t* d_child_offsets() const noexcept { return d_offsets_.get(); }
  [[nodiscard]] const std::uint32_t* d_children() const noexcept { return d_children_.get(); }
  [[nodiscard]] const std::uint32_t* d_parent() const noexcept { return d_parent_.get(); }
  /// slot[v]: the index of v in children[] (its entry under its parent); the root's is 0.
  [[nodiscard]] const std::uint32_t* d_slot() const noexcept { return d_slot_.get(); }
  [[nodiscard]] const std::uint64_t* d_value() const noexcept { return d_value_.get(); }

 private:
  std::uint32_t num_nodes_ = 0;
  std::uint32_t root_ = 0;
  std::uint32_t root_first_child_ = 0;
  std::uint32_t root_children_ = 0;
  detail::unique_device_ptr<std::uint32_t[]> d_offsets_;
  detail::unique_device_ptr<std::uint32_t[]> d_children_;
  detail::unique_device_ptr<std::uint32_t[]> d_parent_;
  detail::unique_device_ptr<std::uint32_t[]> d_slot_;
  detail::unique_device_ptr<std::uint64_t[]> d_value_;
};

/// Buffers for traversals of one device tree, reused across runs. Move-only RAII (defaulted moves).
class tree_engine {
 public:
  /// Throws cdpkit::input_error when the device has not enough free memory (about 36 bytes per
  /// node), cdpkit::cuda_error on allocation failure. `t` must outlive the engine.
  explicit tree_engine(const device_tree& t);

  /// Run one traversal and wait for it (under the watchdog). Throws cdpkit::input_error for a
  /// child_block_threads that is not a multiple of 32 in [32, 1024], cdpkit::cuda_error on CUDA
  /// or device-side errors.
  tree_stats run(const tree_options& options, launch_runtime& runtime = default_runtime(),
                 cudaStream_t stream = nullptr);

  /// The results of the last run, copied to the host: depth and path sums after a top_down run,
  /// subtree sizes and sums after a bottom_up run (the other pair is empty).
  [[nodiscard]] tree_top_down top_down() const;
  [[nodiscard]] tree_bottom_up bottom_up() const;

 private:
  const device_tree* tree_;
  detail::unique_device_ptr<std::uint32_t[]> d_u32_a_;   ///< depth (top_down) / subtree size (bottom_up)
  detail::unique_device_ptr<std::uint64_t[]> d_u64_;     ///< path sum / subtree sum
  detail::unique_device_ptr<std::uint32_t[]> d_pending_; ///< bottom_up: children not yet combined (read by the recursions)
  detail::unique_device_ptr<std::uint32_t[]> d_order_;   ///< level_sync / driver: nodes by level
  detail::unique_device_ptr<std::uint32_t[]> d_pool_;    ///< aggregated groups' scans and begins; driver: level begins
  detail::unique_device_ptr<std::uint32_t[]> d_scan_;    ///< driver: a level's block scans
  std::uint64_t pool_entries_ = 0;
  detail::unique_device_ptr<std::uint32_t[]> d_counters_;
  detail::unique_pinned_ptr<std::uint32_t[]> h_counters_;
  tree_op last_op_ = tree_op::top_down;
  bool ran_ = false;
};

/// One traversal with a temporary engine.
tree_top_down tree_top_down_gpu(const device_tree& t, const tree_options& options,
                                launch_runtime& runtime = default_runtime());
tree_bottom_up tree_bottom_up_gpu(const device_tree& t, const tree_options& options,
                                  launch_runtime& runtime = default_runtime());

}  // namespace cdpkit
