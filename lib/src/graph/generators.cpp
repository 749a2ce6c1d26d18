// Graph generators: Graph500 RMAT, 2-D grid, uniform random. Deterministic per seed, whatever
// the number of threads (edges are drawn in fixed chunks, each with its own seeded stream).

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>

#include <algorithm>
#include <string>
#include <thread>

namespace cdpkit {

namespace {

/// The splitmix64 finalizer: a bijective 64-bit mix.
std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// splitmix64: a small, fast, well-mixed generator; one state per chunk.
struct splitmix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

constexpr std::uint64_t chunk_edges = 1ull << 20;

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
  const std::uint64_t n = 1ull << scale;
  edge_list list;
  list.num_vertices = n;
  list.edges.resize(n * static_cast<std::uint64_t>(edge_factor));
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
  if (side == 0 || static_cast<std::uint64_t>(side) * side > 0xffffffffull)
    throw input_error("make_grid: side must be in [1, 65535], got " + std::to_string(side));
  edge_list list;
  list.num_vertices = static_cast<std::uint64_t>(side) * side;
  list.edges.reserve(2 * list.num_vertices);
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
  if (num_edges > 0xffffffffull)
    throw input_error("make_uniform_random: more than 4294967295 edges requested");
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

}  // namespace cdpkit
