// Host side of BFS: variant names, the CPU reference, Graph500-style validation, TEPS counting,
// the graph-wide default threshold.

#include <cdpkit/bfs.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/loop_to_child/threshold_rule.hpp>

#include "../common/text_input.hpp"

#include <algorithm>
#include <string>

namespace cdpkit {

namespace {
constexpr bfs_variant variants[] = {
    bfs_variant::serial_loop,      bfs_variant::child_per_thread, bfs_variant::thresholded,
    bfs_variant::warp_aggregated,  bfs_variant::block_aggregated, bfs_variant::device_driver,
    bfs_variant::flat_balanced};
}  // namespace

const char* to_string(bfs_variant v) noexcept {
  switch (v) {
    case bfs_variant::serial_loop: return "serial_loop";
    case bfs_variant::child_per_thread: return "child_per_thread";
    case bfs_variant::thresholded: return "thresholded";
    case bfs_variant::warp_aggregated: return "warp_aggregated";
    case bfs_variant::block_aggregated: return "block_aggregated";
    case bfs_variant::device_driver: return "device_driver";
    case bfs_variant::flat_balanced: return "flat_balanced";
  }
  return "unknown";
}

std::string to_string(const bfs_variant_choice& choice) {
  std::string name = to_string(choice.variant);
  if (choice.stream) name += std::string("+") + to_string(*choice.stream);
  return name;
}

bfs_variant_choice parse_bfs_variant(const std::string& name) {
  const auto plus = name.find('+');
  std::string choices;
  for (bfs_variant v : variants) {
    if (name.substr(0, plus) == to_string(v)) {
      if (plus == std::string::npos) return {v, std::nullopt};
      if (v == bfs_variant::serial_loop || v == bfs_variant::flat_balanced)
        throw input_error("BFS variant " + quoted_input(name) + ": " + to_string(v) +
                          " launches no child grids, so it takes no +STREAM");
      try {
        return {v, parse_stream_kind(name.substr(plus + 1))};
      } catch (const input_error& e) {
        throw input_error("BFS variant " + quoted_input(name) + ": " + e.what());
      }
    }
    choices += choices.empty() ? "" : ", ";
    choices += to_string(v);
  }
  throw input_error("unknown BFS variant " + quoted_input(name) + " (choose one of: " + choices +
                    ", optionally +STREAM, e.g. child_per_thread+named_per_thread)");
}

const std::vector<bfs_variant_choice>& all_bfs_variants() {
  static const std::vector<bfs_variant_choice> all = {
      {bfs_variant::serial_loop, std::nullopt},
      {bfs_variant::child_per_thread, std::nullopt},
      {bfs_variant::child_per_thread, stream_kind::named_per_thread},
      {bfs_variant::thresholded, std::nullopt},
      {bfs_variant::warp_aggregated, std::nullopt},
      {bfs_variant::block_aggregated, std::nullopt},
      {bfs_variant::device_driver, std::nullopt},
      {bfs_variant::flat_balanced, std::nullopt}};
  return all;
}

stream_kind bfs_options::effective_stream() const noexcept {
  if (stream) return *stream;
  return variant == bfs_variant::child_per_thread ? stream_kind::null_stream
                                                  : stream_kind::fire_and_forget;
}

std::uint32_t bfs_options::effective_child_block_threads() const noexcept {
  if (child_block_threads) return *child_block_threads;
  return variant == bfs_variant::child_per_thread ? 1024u : 256u;
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
  if (level.size() != g.num_vertices)
    throw input_error("bfs_traversed_edges: levels has " + std::to_string(level.size()) + " entries for " +
                      std::to_string(g.num_vertices) + " vertices");
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
                            options.cost_model.launch_ns[static_cast<int>(options.effective_stream())],
                            max_launches);
}

}  // namespace cdpkit
