#pragma once
// Internal (lib/src/tree): tree_from_parents with the source lines of the nodes, so that the
// parent-array reader's errors name the line of the node at fault.

#include <cdpkit/tree.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace cdpkit::detail {

/// tree_from_parents; `lines` is empty or the source line of every node: a node at fault is then
/// named "what:LINE: node v ..." instead of "what: node v ...".
tree tree_from_parents_at(std::vector<std::uint32_t> parent, std::vector<std::uint64_t> value,
                          std::vector<std::string> names, const std::string& what,
                          const std::vector<std::uint64_t>& lines);

/// Host bytes of a tree of n nodes with values (parent, offsets, children, value) plus the
/// breadth-first scratch of its construction (n ids): 28 bytes per node, saturating.
[[nodiscard]] std::uint64_t tree_host_bytes(std::uint64_t n) noexcept;

}  // namespace cdpkit::detail
