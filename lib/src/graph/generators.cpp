// Graph generators (Graph500 RMAT, 2-D grid, uniform random) and graph specifications
// (load_graph: a generator spec or a file). Deterministic per seed, whatever the number of
// threads (edges are drawn in fixed chunks, each with its own seeded stream). Pure C++.
//
// Every size is checked before anything is allocated: the edge count against the CSR's 32-bit
// offsets, and the bytes of the edge list (and, for a spec, of build_csr) against the available
// host memory.

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>

#include "../common/random.hpp"
#include "../common/text_input.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <thread>

namespace cdpkit {

namespace {

using detail::mix64;
using detail::splitmix64;

constexpr std::uint64_t chunk_edges = 1ull << 20;

using edge_pair = std::pair<std::uint32_t, std::uint32_t>;

/// Host bytes make_rmat allocates: the edge list and the label permutation.
std::uint64_t rmat_bytes(std::uint64_t num_vertices, std::uint64_t num_edges) {
  const std::uint64_t edges = saturating_mul(num_edges, sizeof(edge_pair));
  const std::uint64_t perm = saturating_mul(num_vertices, sizeof(std::uint32_t));
  return saturating_add(edges, perm);
}

/// Edges of a side x side 4-neighbour grid: side - 1 per row and per column.
std::uint64_t grid_edges(std::uint64_t side) { return side == 0 ? 0 : 2 * side * (side - 1); }

/// Fill edges[k] for every k by gen(rng, k), chunk by chunk across threads.
template <class Gen>
void generate_chunks(std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges,
                     std::uint64_t seed, Gen gen) {
  const std::uint64_t chunks = (edges.size() + chunk_edges - 1) / chunk_edges;
  const unsigned int workers =
      std::max(1u, std::min(std::thread::hardware_concurrency(), static_cast<unsigned int>(16)));
  std::vector<std::thread> pool;
  for (unsigned int w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      for (std::uint64_t c = w; c < chunks; c += workers) {
        // Chunk streams start at hashed points of the generator's cycle: seeds in arithmetic
        // progression of its own increment would make neighbouring chunks the same stream.
        splitmix64 rng{mix64(mix64(seed) ^ mix64(c + 0x632be59bd9b4e019ull))};
        const std::uint64_t end = std::min<std::uint64_t>(edges.size(), (c + 1) * chunk_edges);
        for (std::uint64_t k = c * chunk_edges; k < end; ++k) edges[k] = gen(rng);
      }
    });
  }
  for (auto& t : pool) t.join();
}

}  // namespace

edge_list make_rmat(int scale, int edge_factor, std::uint64_t seed, double a, double b, double c) {
  if (scale < 1 || scale > 31)
    throw input_error("make_rmat: scale must be in [1, 31], got " + std::to_string(scale));
  if (edge_factor < 1 || edge_factor > 1024)
    throw input_error("make_rmat: edge factor must be in [1, 1024], got " +
                      std::to_string(edge_factor));
  if (a < 0 || b < 0 || c < 0 || a + b + c > 1.0)
    throw input_error("make_rmat: probabilities a, b, c must be >= 0 with a + b + c <= 1");
  const std::uint64_t n = 1ull << scale, m = n * static_cast<std::uint64_t>(edge_factor);
  const std::string what = "make_rmat(scale " + std::to_string(scale) + ", edge factor " +
                           std::to_string(edge_factor) + ")";
  if (m > max_csr_edges)
    throw input_error(what + ": " + std::to_string(m) + " edges; at most 4294967295");
  require_host_memory(rmat_bytes(n, m), what);
  edge_list list;
  list.num_vertices = n;
  list.edges.resize(m);
  // thresholds on a 32-bit uniform
  const auto ta = static_cast<std::uint64_t>(a * 4294967296.0);
  const auto tab = static_cast<std::uint64_t>((a + b) * 4294967296.0);
  const auto tabc = static_cast<std::uint64_t>((a + b + c) * 4294967296.0);
  generate_chunks(list.edges, seed, [&](splitmix64& rng) {
    std::uint32_t u = 0, v = 0;
    std::uint64_t bits = 0;
    for (int level = 0; level < scale; ++level) {
      if (level % 2 == 0) bits = rng.next();
      const std::uint64_t r = (level % 2 == 0) ? (bits & 0xffffffffull) : (bits >> 32);
      // quadrants: a = (0,0) below ta, b = (0,1) below tab, c = (1,0) below tabc, d = (1,1)
      u = (u << 1) | (r >= tab ? 1u : 0u);
      v = (v << 1) | ((r >= ta && r < tab) || r >= tabc ? 1u : 0u);
    }
    return std::pair<std::uint32_t, std::uint32_t>{u, v};
  });
  // Graph500 permutes the vertex labels so that degree does not follow the id.
  std::vector<std::uint32_t> perm(n);
  for (std::uint64_t v = 0; v < n; ++v) perm[v] = static_cast<std::uint32_t>(v);
  splitmix64 rng{seed ^ 0x5851f42d4c957f2dull};
  for (std::uint64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.next() % (i + 1)]);
  for (auto& [u, v] : list.edges) {
    u = perm[u];
    v = perm[v];
  }
  return list;
}

edge_list make_grid(std::uint32_t side) {
  const std::uint64_t m = grid_edges(side);
  if (side == 0 || m > max_csr_edges)
    throw input_error("make_grid: side must be in [1, 46341] (at most 4294967295 edges), got " +
                      std::to_string(side) + (side == 0 ? "" : " (" + std::to_string(m) + " edges)"));
  require_host_memory(saturating_mul(m, sizeof(edge_pair)),
                      "make_grid(" + std::to_string(side) + ")");
  edge_list list;
  list.num_vertices = static_cast<std::uint64_t>(side) * side;
  list.edges.reserve(m);
  for (std::uint32_t r = 0; r < side; ++r)
    for (std::uint32_t c = 0; c < side; ++c) {
      const std::uint32_t v = r * side + c;
      if (c + 1 < side) list.edges.emplace_back(v, v + 1);
      if (r + 1 < side) list.edges.emplace_back(v, v + side);
    }
  return list;
}

edge_list make_uniform_random(std::uint32_t num_vertices, std::uint64_t num_edges,
                              std::uint64_t seed) {
  if (num_vertices == 0 && num_edges > 0)
    throw input_error("make_uniform_random: edges need at least one vertex");
  if (num_edges > max_csr_edges)
    throw input_error("make_uniform_random: more than 4294967295 edges requested");
  require_host_memory(saturating_mul(num_edges, sizeof(edge_pair)),
                      "make_uniform_random(" + std::to_string(num_vertices) + ", " +
                          std::to_string(num_edges) + ")");
  edge_list list;
  list.num_vertices = num_vertices;
  list.edges.resize(num_edges);
  generate_chunks(list.edges, seed, [&](splitmix64& rng) {
    const std::uint64_t r = rng.next();
    return std::pair<std::uint32_t, std::uint32_t>{
        static_cast<std::uint32_t>((r & 0xffffffffull) % num_vertices),
        static_cast<std::uint32_t>((r >> 32) % num_vertices)};
  });
  return list;
}

// --- graph specifications --------------------------------------------------------------------

namespace {

[[noreturn]] void spec_fail(const std::string& spec, const std::string& reason) {
  throw input_error("graph spec " + quoted_spec(spec) + ": " + reason);
}

std::uint64_t parse_spec_number(std::string_view token, const std::string& spec) {
  if (token.empty()) spec_fail(spec, "missing number");
  std::uint64_t v = 0;
  for (char c : token) {
    if (c < '0' || c > '9' || v > 0xffffffffull)
      spec_fail(spec, quoted_input(token) + " is not a number in range");
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

/// Refuse a generated graph whose directed edges (before deduplication) do not fit a CSR, or
/// whose edge list (`generator_bytes`) plus build_csr would not fit the host memory: checked
/// before anything is allocated.
void check_generated_size(const std::string& spec, std::uint64_t num_vertices,
                          std::uint64_t num_edges, std::uint64_t generator_bytes,
                          const csr_options& options) {
  const std::uint64_t directed = saturating_mul(num_edges, options.symmetrize ? 2 : 1);
  if (directed > max_csr_edges)
    spec_fail(spec, std::to_string(num_edges) + " edges" +
                        (options.symmetrize ? " are " + std::to_string(directed) +
                                                  " directed edges after symmetrization"
                                            : std::string()) +
                        "; a CSR holds at most 4294967295 directed edges (32-bit offsets)");
  const std::uint64_t csr_bytes = build_csr_host_bytes(num_vertices, num_edges, options.symmetrize);
  require_host_memory(saturating_add(generator_bytes, csr_bytes),
                      "graph spec " + quoted_spec(spec) + " (" + std::to_string(num_vertices) + " vertices, " +
                          std::to_string(num_edges) + " edges)");
}

/// Generator and build_csr errors, prefixed with the spec or path they came from.
template <class Fn>
csr_graph with_context(const std::string& context, Fn fn) {
  try {
    return fn();
  } catch (const input_error& e) {
    throw input_error(context + ": " + e.what());
  }
}


}  // namespace

csr_graph load_graph(const std::string& spec, const csr_options& options, std::uint64_t seed,
                     const graph_read_options& read) {
  CDPKIT_NVTX_SCOPE("graph::load");
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  std::vector<std::string_view> args;
  if (colon != std::string::npos) {
    std::string_view rest(spec);
    rest.remove_prefix(colon + 1);
    while (true) {
      const auto c = rest.find(':');
      args.push_back(rest.substr(0, c));
      if (c == std::string_view::npos) break;
      rest.remove_prefix(c + 1);
    }
  }
  const std::string context = "graph spec " + quoted_spec(spec);
  if (kind == "rmat") {
    if (args.empty() || args.size() > 2)
      spec_fail(spec, "expected rmat:SCALE or rmat:SCALE:EDGE_FACTOR");
    const auto scale = parse_spec_number(args[0], spec);
    const auto ef = args.size() == 2 ? parse_spec_number(args[1], spec) : 16;
    if (scale < 1 || scale > 31) spec_fail(spec, "scale must be in [1, 31], got " + std::to_string(scale));
    if (ef < 1 || ef > 1024) spec_fail(spec, "edge factor must be in [1, 1024], got " + std::to_string(ef));
    const std::uint64_t n = 1ull << scale, m = n * ef;
    check_generated_size(spec, n, m, rmat_bytes(n, m), options);
    return with_context(context, [&] {
      return build_csr(make_rmat(static_cast<int>(scale), static_cast<int>(ef), seed), options);
    });
  }
  if (kind == "grid") {
    if (args.size() != 1) spec_fail(spec, "expected grid:SIDE");
    const auto side = parse_spec_number(args[0], spec);
    if (side < 1 || side > 65535)
      spec_fail(spec, "side must be in [1, 65535] (side^2 32-bit vertex ids), got " + std::to_string(side));
    const std::uint64_t m = grid_edges(side);
    check_generated_size(spec, side * side, m, saturating_mul(m, sizeof(edge_pair)), options);
    return with_context(context, [&] {
      return build_csr(make_grid(static_cast<std::uint32_t>(side)), options);
    });
  }
  if (kind == "uniform") {
    if (args.size() != 2) spec_fail(spec, "expected uniform:VERTICES:EDGES");
    const auto n = parse_spec_number(args[0], spec);
    const auto m = parse_spec_number(args[1], spec);
    if (n > max_csr_vertices)
      spec_fail(spec, std::to_string(n) + " vertices do not fit 32-bit ids (at most 4294967295)");
    if (n == 0 && m > 0) spec_fail(spec, "edges need at least one vertex");
    check_generated_size(spec, n, m, saturating_mul(m, sizeof(edge_pair)), options);
    return with_context(context, [&] {
      return build_csr(make_uniform_random(static_cast<std::uint32_t>(n), m, seed), options);
    });
  }
  const edge_list list = detail::is_matrix_market_path(spec) ? read_matrix_market(spec, read) : read_edge_list(spec, read);
  return with_context(spec, [&] { return build_csr(list, options); });
}

}  // namespace cdpkit
