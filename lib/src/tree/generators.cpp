// Tree generators: random trees of three fan-out laws, complete k-ary trees, paths and
// caterpillars. Node ids in breadth-first order; values in [1, 100]; deterministic per seed.
// Every size is checked (32-bit ids, host memory) before anything is allocated. Pure C++.

#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/tree.hpp>

#include "../common/random.hpp"
#include "tree_build.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace cdpkit {

namespace {

/// Throws unless a tree of `n` nodes may be generated: at least one node, 32-bit ids, memory.
void check_nodes(std::uint64_t n, const std::string& what) {
  if (n == 0) throw input_error(what + ": a tree needs at least one node");
  if (n > max_tree_nodes)
    throw input_error(what + ": " + std::to_string(n) + " nodes, more than the " + std::to_string(max_tree_nodes) +
                      " a tree may have (32-bit node ids)");
  require_host_memory(detail::tree_host_bytes(n), what);
}

/// Values in [1, 100], one per node, from `seed`.
std::vector<std::uint64_t> random_values(std::uint64_t n, std::uint64_t seed) {
  detail::splitmix64 rng{detail::mix64(seed ^ 0x2545f4914f6cdd1dull)};
  std::vector<std::uint64_t> value(n);
  for (auto& x : value) x = 1 + rng.below(100);
  return value;
}

/// A tree from a parent array made by a generator.
tree generated(std::vector<std::uint32_t> parent, std::uint64_t seed, const std::string& what) {
  const std::uint64_t n = parent.size();
  return tree_from_parents(std::move(parent), random_values(n, seed), what);
}

constexpr std::uint64_t power_law_cap = 1u << 16;

}  // namespace

const char* to_string(fanout_kind k) noexcept {
  switch (k) {
    case fanout_kind::uniform: return "uniform";
    case fanout_kind::geometric: return "geometric";
    case fanout_kind::power_law: return "powerlaw";
  }
  return "?";
}

tree make_random_tree(std::uint64_t num_nodes, fanout_kind kind, double mean_fanout, std::uint64_t seed) {
  CDPKIT_NVTX_SCOPE("tree::make_random");
  const std::string what = "make_random_tree(" + std::to_string(num_nodes) + ", " + to_string(kind) + ")";
  if (!(mean_fanout >= 1.0 && mean_fanout <= 1024.0))
    throw input_error(what + ": the mean fan-out must be in [1, 1024], got " + std::to_string(mean_fanout));
  check_nodes(num_nodes, what);
  detail::splitmix64 rng{detail::mix64(seed) ^ 0x9e6c63d0676a9a99ull};
  const double geometric_log = std::log(mean_fanout / (mean_fanout + 1.0));  // log(1 - p), p = 1 / (mean + 1)
  const auto draw = [&]() -> std::uint64_t {
    switch (kind) {
      case fanout_kind::uniform:
        return static_cast<std::uint64_t>(rng.uniform() * (2.0 * mean_fanout + 1.0));
      case fanout_kind::geometric:
        return static_cast<std::uint64_t>(std::floor(std::log(rng.uniform_open0()) / geometric_log));
      case fanout_kind::power_law: {
        // Pareto with tail exponent 1.2 (density ~ x^-2.2), less one: P(0) = 1 - 2^-1.2 = 0.56
        const double x = std::pow(rng.uniform_open0(), -1.0 / 1.2);
        return x >= static_cast<double>(power_law_cap + 1) ? power_law_cap : static_cast<std::uint64_t>(x) - 1;
      }
    }
    return 0;
  };
  std::vector<std::uint32_t> parent(num_nodes);
  parent[0] = tree_no_parent;
  std::uint64_t next = 1;  // the next id to hand out; nodes v .. next - 1 are still open
  for (std::uint64_t v = 0; next < num_nodes; ++v) {
    std::uint64_t k = draw();
    if (k == 0 && v + 1 == next) k = 1;  // the last open node: the tree must go on growing
    k = std::min(k, num_nodes - next);
    for (std::uint64_t j = 0; j < k; ++j) parent[next++] = static_cast<std::uint32_t>(v);
  }
  return generated(std::move(parent), seed, what);
}

tree make_kary_tree(std::uint32_t k, std::uint32_t depth) {
  CDPKIT_NVTX_SCOPE("tree::make_kary");
  const std::string what = "make_kary_tree(" + std::to_string(k) + ", " + std::to_string(depth) + ")";
  if (k == 0) throw input_error(what + ": k must be at least 1");
  std::uint64_t n = k == 1 ? std::uint64_t{depth} + 1 : 1, level = 1;
  for (std::uint32_t d = 0; k > 1 && d < depth && n <= max_tree_nodes; ++d) {
    level = saturating_mul(level, k);
    n = saturating_add(n, level);
  }
  if (n > max_tree_nodes)
    throw input_error(what + ": more than the " + std::to_string(max_tree_nodes) +
                      " nodes a tree may have (32-bit node ids)");
  check_nodes(n, what);
  std::vector<std::uint32_t> parent(n);
  parent[0] = tree_no_parent;
  for (std::uint64_t v = 1; v < n; ++v) parent[v] = static_cast<std::uint32_t>((v - 1) / k);
  return generated(std::move(parent), 1, what);
}

tree make_path_tree(std::uint64_t num_nodes) {
  CDPKIT_NVTX_SCOPE("tree::make_path");
  const std::string what = "make_path_tree(" + std::to_string(num_nodes) + ")";
  check_nodes(num_nodes, what);
  std::vector<std::uint32_t> parent(num_nodes);
  parent[0] = tree_no_parent;
  for (std::uint64_t v = 1; v < num_nodes; ++v) parent[v] = static_cast<std::uint32_t>(v - 1);
  return generated(std::move(parent), 1, what);
}

tree make_caterpillar_tree(std::uint64_t num_nodes) {
  CDPKIT_NVTX_SCOPE("tree::make_caterpillar");
  const std::string what = "make_caterpillar_tree(" + std::to_string(num_nodes) + ")";
  check_nodes(num_nodes, what);
  // breadth first: spine node d (d >= 1) is 2d - 1, the leaf of spine node d - 1 is 2d; both
  // hang from spine node d - 1 (0 for d = 1, else 2d - 3)
  std::vector<std::uint32_t> parent(num_nodes);
  parent[0] = tree_no_parent;
  for (std::uint64_t v = 1; v < num_nodes; ++v) {
    const std::uint64_t d = (v + 1) / 2;
    parent[v] = static_cast<std::uint32_t>(d == 1 ? 0 : 2 * d - 3);
  }
  return generated(std::move(parent), 1, what);
}

}  // namespace cdpkit
