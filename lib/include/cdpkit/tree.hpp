#pragma once
// cdpkit/tree.hpp — rooted trees for the tree family: the tree in CSR form (the children of every
// node) with its parent array, generators, readers of real trees (a list of paths, a parent-array
// file), and the CPU references of the traversals.
//
// The traversals (tree_engine, cdpkit/tree_traversal.hpp) compute, for every node:
//   top-down   its depth and the sum of the node values along its root path (for a path tree
//              read without sizes: the length in bytes of the node's path);
//   bottom-up  its subtree size and the sum of the node values in its subtree (for a path tree
//              read with sizes: the files and bytes under each directory).
//
// Node ids are 32-bit (tree_no_parent is not an id), so a tree holds at most 2^32 - 2 nodes.
// Trees are untrusted input like graphs: every malformed file or spec is a cdpkit::input_error
// naming the file and line (or the spec) and the reason, and no size a file or spec states is
// allocated before it has been checked against the host memory that is available.

#include <cstdint>
#include <string>
#include <vector>

namespace cdpkit {

/// The parent of the root.
inline constexpr std::uint32_t tree_no_parent = 0xffffffffu;
/// The most nodes a tree holds (ids are 32-bit; tree_no_parent is not one).
inline constexpr std::uint64_t max_tree_nodes = 0xfffffffeull;

/// A rooted tree: the children of node v are children[child_offsets[v], child_offsets[v + 1]),
/// in increasing id order; parent[root] == tree_no_parent. Every node has a value (the per-node
/// quantity the path and subtree sums add up) and, for trees read from a path list, a name.
struct tree {
  std::uint32_t root = 0;
  std::vector<std::uint32_t> parent;          ///< one per node
  std::vector<std::uint32_t> child_offsets{0};///< num_nodes() + 1
  std::vector<std::uint32_t> children;        ///< num_nodes() - 1 entries (every node but the root)
  std::vector<std::uint64_t> value;           ///< one per node
  std::vector<std::string> names;             ///< empty, or one per node (path trees: the component)

  [[nodiscard]] std::uint32_t num_nodes() const noexcept { return static_cast<std::uint32_t>(parent.size()); }
  /// Precondition: v < num_nodes().
  [[nodiscard]] std::uint32_t num_children(std::uint32_t v) const { return child_offsets[v + 1] - child_offsets[v]; }
  /// The largest number of children of one node (0 for a one-node tree).
  [[nodiscard]] std::uint32_t max_children() const;
  /// Nodes without children.
  [[nodiscard]] std::uint64_t leaves() const;
  /// The full path of node v for a path tree ("/usr/bin/ls", or "a/b" for relative paths), its
  /// id ("#v") for a tree without names. Precondition: v < num_nodes().
  [[nodiscard]] std::string path_of(std::uint32_t v) const;
};

/// Build a tree from its parent array: parent[v] is v's parent, tree_no_parent for the root;
/// `value` is empty (every value 1) or one per node; `names` empty or one per node. `what` names
/// the source in errors (a file, a generator). Throws cdpkit::input_error naming the node for an
/// empty array, more than max_tree_nodes nodes, a parent out of range, a node that is its own
/// parent, no root, two roots (naming both), a node on a cycle (not reachable from the root), or
/// a value / name count that does not match; and for too little host memory.
tree tree_from_parents(std::vector<std::uint32_t> parent, std::vector<std::uint64_t> value,
                       const std::string& what, std::vector<std::string> names = {});

// --- generators (deterministic for a given seed) ---------------------------------------------
// Node ids are in breadth-first order from the root (0); values are drawn in [1, 100]. Each
// checks its arguments and the host memory (about 24 bytes per node) before allocating, and
// throws cdpkit::input_error naming the generator and its arguments otherwise.

/// How many children a node of a random tree gets.
enum class fanout_kind : std::uint8_t {
  uniform,    ///< uniform in [0, 2 * mean]
  geometric,  ///< geometric with the given mean
  power_law,  ///< P(k children) ~ (k + 1)^-2.2 (Zipf), capped at 2^16: most nodes have 0 or 1
              ///< child, a few have thousands (the shape of file systems and call trees)
};
/// "uniform", "geometric", "powerlaw".
const char* to_string(fanout_kind k) noexcept;

/// A random tree of exactly num_nodes nodes, grown breadth first: each node draws its number of
/// children from `kind` (mean `mean_fanout` for uniform and geometric; power_law ignores it);
/// when every open node drew none before the tree is complete, the last one gets a child, so
/// the tree always reaches num_nodes. Throws cdpkit::input_error for 0 or more than
/// max_tree_nodes nodes, a mean outside [1, 1024], or too little host memory.
tree make_random_tree(std::uint64_t num_nodes, fanout_kind kind, double mean_fanout = 4.0,
                      std::uint64_t seed = 1);
/// The complete k-ary tree of the given depth (levels 0 .. depth, (k^(depth+1) - 1) / (k - 1)
/// nodes; depth + 1 nodes for k = 1). Throws cdpkit::input_error for k = 0, more than
/// max_tree_nodes nodes or too little host memory.
tree make_kary_tree(std::uint32_t k, std::uint32_t depth);
/// A path of num_nodes nodes: depth num_nodes - 1, the deepest recursion there is. Throws
/// cdpkit::input_error for 0 or more than max_tree_nodes nodes or too little host memory (as
/// make_caterpillar_tree).
tree make_path_tree(std::uint64_t num_nodes);
/// A caterpillar: a spine of num_nodes / 2 + 1 nodes, each spine node but the last with one leaf
/// besides its spine child (depth num_nodes / 2, fan-out 2 along the spine).
tree make_caterpillar_tree(std::uint64_t num_nodes);

// --- readers -------------------------------------------------------------------------------
// Errors are cdpkit::input_error "NAME:LINE: reason" (file-level problems: "PATH: reason").

struct tree_read_options {
  /// The largest file read, in bytes; 0: a quarter of the available host memory, at least
  /// 16 MiB, at most 64 GiB.
  std::uint64_t max_file_bytes = 0;
  /// The most nodes a file may make (at most max_tree_nodes).
  std::uint64_t max_nodes = max_tree_nodes;
};

/// A list of paths, one per line: "usr/bin/ls", "/usr/bin/ls", "./a/b", a trailing '/' allowed
/// (the output of `find`, of `tar -t`, a package's file list). Every path prefix is a node; the
/// root is "/" for absolute paths and "." for relative ones (a list may not mix them). A line may
/// start with a size and a tab, "4096<TAB>/usr/bin" (`find DIR -printf '%s\t%p\n'`): then every
/// line must, and a node's value is the size on its own line (0 for a prefix never listed, the
/// sum of the sizes when a path is listed twice): the subtree sum is then the bytes under a
/// directory. Without sizes a node's value is its name's length + 1 (its slash; the root's is
/// 0): the path sum is then the length in bytes of "/" + the path. Names are kept (tree::names).
/// Blank lines and lines starting with '#' are skipped. Throws cdpkit::input_error for an empty
/// list, an empty component ("a//b"), a "." or ".." component past the start, a mix of absolute
/// and relative paths, a line with a size among lines without (or the other way round), a size
/// that is not a number or does not fit 64 bits, or more than options.max_nodes nodes.
tree parse_path_list(const std::string& text, const std::string& name, const tree_read_options& options = {});

/// A parent-array file: line k (blank lines and '#' comments not counted) holds the parent of
/// node k, or -1 for the root, optionally followed by the node's value (an unsigned 64-bit
/// number; 1 when absent, all lines alike). Throws cdpkit::input_error for an empty file, a
/// malformed line, a parent id out of range, no root, two roots, a cycle (all naming the line),
/// values on some lines only, or more than options.max_nodes nodes.
tree parse_parent_array(const std::string& text, const std::string& name, const tree_read_options& options = {});

/// parse_path_list / parse_parent_array over the file at `path`. Throws cdpkit::input_error
/// (naming the path) when it cannot be opened or read, is not a regular file or is larger than
/// options.max_file_bytes, and for everything the parser throws.
tree read_path_list(const std::string& path, const tree_read_options& options = {});
tree read_parent_array(const std::string& path, const tree_read_options& options = {});

/// A tree by specification: "random:N[:uniform|geometric|powerlaw[:MEAN]]" (default powerlaw),
/// "kary:K:D", "path:N", "caterpillar:N", "paths:FILE", "parents:FILE". Throws
/// cdpkit::input_error naming the spec and the reason (or the file and line).
tree load_tree(const std::string& spec, std::uint64_t seed = 1, const tree_read_options& options = {});

// --- CPU references --------------------------------------------------------------------------

/// Top-down: the depth of every node (root 0) and the sum of the values along its root path,
/// the node's own value included.
struct tree_top_down {
  std::vector<std::uint32_t> depth;
  std::vector<std::uint64_t> path_sum;
};
/// Bottom-up: the number of nodes in every node's subtree (itself included) and the sum of their
/// values (sums wrap modulo 2^64, on the host and on the device alike).
struct tree_bottom_up {
  std::vector<std::uint32_t> size;
  std::vector<std::uint64_t> sum;
};
/// The CPU references of the two traversals, which every device variant is checked against.
/// Precondition: `t` is a tree as tree_from_parents and the readers build it (one root, every
/// node reachable from it); throws cdpkit::input_error for a tree without nodes (e.g. `tree{}`).
tree_top_down tree_top_down_reference(const tree& t);
tree_bottom_up tree_bottom_up_reference(const tree& t);

/// Nodes per depth (entry d: the nodes at depth d); its size is the height + 1.
std::vector<std::uint64_t> tree_level_sizes(const tree& t);

}  // namespace cdpkit
