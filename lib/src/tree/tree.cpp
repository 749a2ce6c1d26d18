// The tree itself: construction from a parent array (every check that makes it a tree), its
// accessors and the CPU references of the traversals. Pure C++.

#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/tree.hpp>

#include "tree_build.hpp"

#include <algorithm>
#include <string>

namespace cdpkit {

namespace detail {

std::uint64_t tree_host_bytes(std::uint64_t n) noexcept {
  // parent 4 + offsets 4 + children 4 + value 8 + breadth-first order 4 + reached flag 4
  return saturating_mul(n, 28);
}

namespace {

/// The breadth-first order of the nodes reachable from the root (the root first).
std::vector<std::uint32_t> breadth_first(const tree& t) {
  std::vector<std::uint32_t> order;
  order.reserve(t.parent.size());
  order.push_back(t.root);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::uint32_t v = order[i];
    for (std::uint32_t e = t.child_offsets[v]; e < t.child_offsets[v + 1]; ++e) order.push_back(t.children[e]);
  }
  return order;
}

}  // namespace

tree tree_from_parents_at(std::vector<std::uint32_t> parent, std::vector<std::uint64_t> value,
                          std::vector<std::string> names, const std::string& what,
                          const std::vector<std::uint64_t>& lines) {
  CDPKIT_NVTX_SCOPE("tree::from_parents");
  const std::uint64_t n = parent.size();
  const auto at = [&](std::uint32_t v) {
    return lines.empty() ? what + ": node " + std::to_string(v)
                         : what + ":" + std::to_string(lines[v]) + ": node " + std::to_string(v);
  };
  if (n == 0) throw input_error(what + ": the tree has no nodes");
  if (n > max_tree_nodes)
    throw input_error(what + ": " + std::to_string(n) + " nodes, more than the " + std::to_string(max_tree_nodes) +
                      " a tree may have (32-bit node ids)");
  if (!value.empty() && value.size() != n)
    throw input_error(what + ": " + std::to_string(value.size()) + " values for " + std::to_string(n) + " nodes");
  if (!names.empty() && names.size() != n)
    throw input_error(what + ": " + std::to_string(names.size()) + " names for " + std::to_string(n) + " nodes");
  if (!lines.empty() && lines.size() != n)
    throw input_error(what + ": " + std::to_string(lines.size()) + " source lines for " + std::to_string(n) + " nodes");
  require_host_memory(tree_host_bytes(n), what + ": the tree");

  tree t;
  std::uint32_t root = tree_no_parent;
  for (std::uint32_t v = 0; v < n; ++v) {
    const std::uint32_t p = parent[v];
    if (p == tree_no_parent) {
      if (root != tree_no_parent)
        throw input_error(at(v) + " is a second root: node " + std::to_string(root) +
                          (lines.empty() ? "" : " (line " + std::to_string(lines[root]) + ")") +
                          " has no parent either; a tree has one root");
      root = v;
    } else if (p >= n) {
      throw input_error(at(v) + ": parent " + std::to_string(p) + " is out of range (the tree has " +
                        std::to_string(n) + " nodes, ids 0 to " + std::to_string(n - 1) + ")");
    } else if (p == v) {
      throw input_error(at(v) + " is its own parent");
    }
  }
  if (root == tree_no_parent)
    throw input_error(what + ": no root: every node has a parent, so the parents form a cycle");

  t.root = root;
  t.child_offsets.assign(n + 1, 0);
  for (std::uint32_t v = 0; v < n; ++v)
    if (v != root) ++t.child_offsets[parent[v] + 1];
  for (std::uint64_t v = 0; v < n; ++v) t.child_offsets[v + 1] += t.child_offsets[v];
  t.children.resize(n - 1);
  {
    std::vector<std::uint32_t> fill(t.child_offsets.begin(), t.child_offsets.end() - 1);
    for (std::uint32_t v = 0; v < n; ++v)
      if (v != root) t.children[fill[parent[v]]++] = v;  // ascending v: each list sorted
  }
  t.parent = std::move(parent);
  t.value = value.empty() ? std::vector<std::uint64_t>(n, 1) : std::move(value);
  t.names = std::move(names);

  // Every node reachable from the root, or some are on a cycle (or below one).
  const std::vector<std::uint32_t> order = breadth_first(t);
  if (order.size() != n) {
    std::vector<char> reached(n, 0);
    for (std::uint32_t v : order) reached[v] = 1;
    std::uint32_t v = 0;
    while (reached[v]) ++v;
    // v's ancestors never reach the root: after n steps up, the walk is on the cycle
    for (std::uint64_t step = 0; step < n; ++step) v = t.parent[v];
    std::string cycle = std::to_string(v);
    std::uint32_t u = t.parent[v];
    for (int shown = 0; u != v && shown < 8; ++shown, u = t.parent[u]) cycle += " -> " + std::to_string(u);
    cycle += u == v ? " -> " + std::to_string(v) : " -> ...";
    throw input_error(at(v) + " is on a cycle of parents (" + cycle + "): " + std::to_string(n - order.size()) +
                      " of the " + std::to_string(n) + " nodes cannot be reached from the root " +
                      std::to_string(root));
  }
  return t;
}

}  // namespace detail

tree tree_from_parents(std::vector<std::uint32_t> parent, std::vector<std::uint64_t> value,
                       const std::string& what, std::vector<std::string> names) {
  return detail::tree_from_parents_at(std::move(parent), std::move(value), std::move(names), what, {});
}

std::uint32_t tree::max_children() const {
  std::uint32_t best = 0;
  for (std::size_t v = 0; v + 1 < child_offsets.size(); ++v)
    best = std::max(best, child_offsets[v + 1] - child_offsets[v]);
  return best;
}

std::uint64_t tree::leaves() const {
  std::uint64_t count = 0;
  for (std::size_t v = 0; v + 1 < child_offsets.size(); ++v) count += child_offsets[v + 1] == child_offsets[v];
  return count;
}

std::string tree::path_of(std::uint32_t v) const {
  if (names.empty()) return "#" + std::to_string(v);
  if (v == root) return names[root];
  std::vector<std::uint32_t> up;  // v and its ancestors below the root
  for (std::uint32_t u = v; u != root; u = parent[u]) up.push_back(u);
  std::string out = names[root] == "/" ? "/" : "";  // relative paths leave their root "." out
  for (auto it = up.rbegin(); it != up.rend(); ++it) {
    if (it != up.rbegin()) out += '/';
    out += names[*it];
  }
  return out;
}

namespace {
void require_nodes(const tree& t, const char* what) {
  if (t.parent.empty() || t.root >= t.parent.size() || t.child_offsets.size() != t.parent.size() + 1)
    throw input_error(std::string(what) + ": the tree has no nodes, or is not built (tree_from_parents)");
}
}  // namespace

tree_top_down tree_top_down_reference(const tree& t) {
  CDPKIT_NVTX_SCOPE("tree::top_down_reference");
  require_nodes(t, "tree_top_down_reference");
  const std::vector<std::uint32_t> order = detail::breadth_first(t);
  tree_top_down r;
  r.depth.assign(t.num_nodes(), 0);
  r.path_sum.assign(t.num_nodes(), 0);
  r.path_sum[t.root] = t.value[t.root];
  for (std::uint32_t v : order)
    for (std::uint32_t e = t.child_offsets[v]; e < t.child_offsets[v + 1]; ++e) {
      const std::uint32_t c = t.children[e];
      r.depth[c] = r.depth[v] + 1;
      r.path_sum[c] = r.path_sum[v] + t.value[c];
    }
  return r;
}

tree_bottom_up tree_bottom_up_reference(const tree& t) {
  CDPKIT_NVTX_SCOPE("tree::bottom_up_reference");
  require_nodes(t, "tree_bottom_up_reference");
  const std::vector<std::uint32_t> order = detail::breadth_first(t);
  tree_bottom_up r;
  r.size.assign(t.num_nodes(), 1);
  r.sum.assign(t.value.begin(), t.value.end());
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const std::uint32_t v = *it;
    if (v == t.root) continue;
    r.size[t.parent[v]] += r.size[v];
    r.sum[t.parent[v]] += r.sum[v];
  }
  return r;
}

std::vector<std::uint64_t> tree_level_sizes(const tree& t) {
  const tree_top_down td = tree_top_down_reference(t);
  std::vector<std::uint64_t> levels;
  for (std::uint32_t d : td.depth) {
    if (d >= levels.size()) levels.resize(d + 1, 0);
    ++levels[d];
  }
  return levels;
}

}  // namespace cdpkit
