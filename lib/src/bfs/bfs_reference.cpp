// Host side of BFS: variant names, the CPU reference, Graph500-style validation, TEPS counting,
// the graph-wide default threshold.

#include <cdpkit/bfs.hpp>
#include <cdpkit/detail/enum_names.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/loop_to_child/threshold_rule.hpp>

#include <algorithm>
#include <string>

namespace cdpkit {

namespace {
constexpr bfs_variant variants[] = {
    bfs_variant::vertex_loop,         bfs_variant::cdp_naive,
    bfs_variant::cdp_streams,         bfs_variant::cdp_threshold,
    bfs_variant::cdp_aggregated_warp, bfs_variant::cdp_aggregated_block,
    bfs_variant::device_driver,       bfs_variant::edge_balanced};
}  // namespace

const char* to_string(bfs_variant v) noexcept {
  switch (v) {
    case bfs_variant::vertex_loop: return "vertex_loop";
    case bfs_variant::cdp_naive: return "cdp_naive";
    case bfs_variant::cdp_streams: return "cdp_streams";
    case bfs_variant::cdp_threshold: return "cdp_threshold";
    case bfs_variant::cdp_aggregated_warp: return "cdp_aggregated_warp";
    case bfs_variant::cdp_aggregated_block: return "cdp_aggregated_block";
    case bfs_variant::device_driver: return "device_driver";
    case bfs_variant::edge_balanced: return "edge_balanced";
  }
  return "unknown";
}

bfs_variant parse_bfs_variant(const std::string& name) {
  return detail::parse_enum_name(name, "BFS variant", variants);
}

const std::vector<bfs_variant>& all_bfs_variants() {
  static const std::vector<bfs_variant> all(std::begin(variants), std::end(variants));
  return all;
}

std::vector<std::uint32_t> bfs_reference(const csr_graph& g, std::uint32_t source) {
  if (source >= g.num_vertices)
    throw input_error("bfs: source " + std::to_string(source) + " is not a vertex (the graph has " +
                      std::to_string(g.num_vertices) + ")");
  std::vector<std::uint32_t> level(g.num_vertices, bfs_unreached);
  std::vector<std::uint32_t> queue;
  queue.reserve(g.num_vertices);
  level[source] = 0;
  queue.push_back(source);
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const std::uint32_t u = queue[head];
    for (auto k = g.offsets[u]; k < g.offsets[u + 1]; ++k) {
      const std::uint32_t v = g.neighbors[k];
      if (level[v] == bfs_unreached) {
        level[v] = level[u] + 1;
        queue.push_back(v);
      }
    }
  }
  return level;
}

bfs_validation validate_bfs_levels(const csr_graph& g, std::uint32_t source,
                                   const std::vector<std::uint32_t>& level) {
  bfs_validation r;
  const auto report = [&](const std::string& what) {
    if (r.errors++ == 0) r.first_error = what;
  };
  if (level.size() != g.num_vertices) {
    report("levels has " + std::to_string(level.size()) + " entries for " +
           std::to_string(g.num_vertices) + " vertices");
    return r;
  }
  if (source >= g.num_vertices || level[source] != 0) report("the source does not have level 0");
  for (std::uint32_t u = 0; u < g.num_vertices; ++u) {
    bool has_parent = false;
    for (auto k = g.offsets[u]; k < g.offsets[u + 1]; ++k) {
      const std::uint32_t v = g.neighbors[k];
      const bool ru = level[u] != bfs_unreached, rv = level[v] != bfs_unreached;
      if (ru != rv) {
        report("edge (" + std::to_string(u) + ", " + std::to_string(v) + ") joins a reached and an unreached vertex");
      } else if (ru && (level[u] > level[v] + 1 || level[v] > level[u] + 1)) {
        report("edge (" + std::to_string(u) + ", " + std::to_string(v) + ") spans levels " +
               std::to_string(level[u]) + " and " + std::to_string(level[v]));
      }
      if (ru && rv && level[v] + 1 == level[u]) has_parent = true;
    }
    if (u != source && level[u] != bfs_unreached && !has_parent)
      report("vertex " + std::to_string(u) + " at level " + std::to_string(level[u]) +
             " has no neighbour one level up");
  }
  return r;
}

std::uint64_t bfs_traversed_edges(const csr_graph& g, const std::vector<std::uint32_t>& level) {
  std::uint64_t directed = 0;
  for (std::uint32_t v = 0; v < g.num_vertices; ++v)
    if (level[v] != bfs_unreached) directed += g.degree(v);
  return directed / 2;
}

std::uint32_t default_bfs_threshold(const csr_graph& g, const bfs_options& options,
                                    int pending_budget) {
  std::uint64_t hist[33] = {};
  for (std::uint32_t v = 0; v < g.num_vertices; ++v) {
    const std::uint32_t d = g.degree(v);
    if (d > 0) ++hist[31 - static_cast<unsigned>(__builtin_clz(d))];
  }
  const auto max_launches =
      static_cast<unsigned long long>(options.cost_model.budget_share * std::max(pending_budget, 1));
  return balanced_threshold(hist, 33, options.cost_model.serial_item_ns,
                            options.cost_model.launch_ns[static_cast<int>(stream_kind::fire_and_forget)],
                            max_launches);
}

}  // namespace cdpkit
