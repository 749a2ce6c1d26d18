// The fuzz targets:
//
// 1. matrix_market: parse_matrix_market(text) with sparse ids allowed, then with the default
//    options; an accepted list must keep its ids below its vertex count, and (default options)
//    its vertex count within dense_vertex_bound. Then, when the vertex count is small enough to
//    build in a moment, build_csr, symmetrized and not, checked against a reference built here
//    from a std::set of edges.
// 2. edge_list: the same for parse_edge_list.
// 2b. matrix_market_matrix: parse_matrix_market_matrix(text) with sparse dimensions allowed (up to
//    2^22), then with the default options; an accepted matrix must keep csr_matrix's invariants
//    and, when small, equal a reference read here naively (the text is valid: a std::map of the
//    entries, mirrored and summed by the documented rules), and a float SpMV of it must stay finite
//    (each row's sum of |values| within max_matrix_row_magnitude) and pass spmv_mismatches against
//    spmv_reference.
// 3. path_list / parent_array: parse_path_list / parse_parent_array(text); an accepted tree must
//    be a tree (children sorted and listed once under their parent, one root, every node
//    reachable), and the CPU references must agree with each other (the root's subtree is the
//    whole tree, a node's depth is its parent's + 1).
// 4. points: parse_points(text); accepted points must be finite.
// 5. profile: cdpkit::report::parse_profile(text) (the current profile version); on success the
//    findings, the HTML report and the Chrome trace (which must be valid JSON). A format_error
//    must name the file.
//
// A failed check throws check_failure, which the driver reports like a crash.

#include "targets.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/quadtree.hpp>
#include <cdpkit/sparse_matrix.hpp>
#include <cdpkit/tree.hpp>
#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/html.hpp>
#include <cdpkit/report/profile.hpp>

#include <nlohmann/json.hpp>

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit::fuzz {

namespace {

/// A broken invariant: reported as a failure, like a crash.
class check_failure : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

void check(bool ok, const std::string& what) {
  if (!ok) throw check_failure(what);
}

/// Graphs up to this many vertices are built after a successful parse (bigger ones are legal but
/// would make a pass slow: a small text can name vertex 1,000,000).
constexpr std::uint64_t build_vertex_limit = 1u << 16;

/// build_csr against a reference: every non-loop edge (and its reverse when symmetrizing), once.
void check_csr(const edge_list& list, bool symmetrize) {
  if (list.num_vertices > build_vertex_limit || list.edges.size() > (1u << 20)) return;
  csr_options options;
  options.symmetrize = symmetrize;
  const csr_graph g = build_csr(list, options);
  std::set<std::pair<std::uint32_t, std::uint32_t>> expected;
  for (const auto& [u, v] : list.edges) {
    if (u == v) continue;
    expected.insert({u, v});
    if (symmetrize || list.symmetric) expected.insert({v, u});
  }
  check(g.num_vertices == list.num_vertices, "build_csr: vertex count changed");
  check(g.offsets.size() == static_cast<std::size_t>(g.num_vertices) + 1, "build_csr: offsets size");
  check(g.offsets.front() == 0 && g.offsets.back() == g.neighbors.size(), "build_csr: offsets ends");
  check(g.neighbors.size() == expected.size(), "build_csr: edge count differs from the reference");
  auto it = expected.begin();
  for (std::uint32_t v = 0; v < g.num_vertices; ++v) {
    check(g.offsets[v] <= g.offsets[v + 1], "build_csr: offsets not monotone");
    for (std::uint32_t k = g.offsets[v]; k < g.offsets[v + 1]; ++k, ++it)
      check(it != expected.end() && it->first == v && it->second == g.neighbors[k],
            "build_csr: neighbours differ from the reference at vertex " + std::to_string(v));
  }
}

/// `strict`: read with the default options, so the vertex count obeys dense_vertex_bound.
void check_graph(const edge_list& list, bool strict) {
  check(list.num_vertices <= max_csr_vertices, "reader: more vertices than 32-bit ids hold");
  if (strict)
    check(list.num_vertices <= dense_vertex_bound(list.edges.size()),
          "reader: a vertex count above dense_vertex_bound without allow_sparse_ids");
  for (const auto& [u, v] : list.edges)
    check(u < list.num_vertices && v < list.num_vertices, "reader: edge id >= its own vertex count");
  check_csr(list, true);
  check_csr(list, false);
}

bool run_matrix_market(const std::string& text) {
  graph_read_options sparse;  // first with sparse ids allowed: other paths, larger vertex counts
  sparse.allow_sparse_ids = true;
  try {
    check_graph(parse_matrix_market(text, "fuzz.mtx", sparse), false);
  } catch (const input_error&) {
  }
  check_graph(parse_matrix_market(text, "fuzz.mtx"), true);
  return true;
}

bool run_edge_list(const std::string& text) {
  graph_read_options sparse;
  sparse.allow_sparse_ids = true;
  try {
    check_graph(parse_edge_list(text, "fuzz.txt", sparse), false);
  } catch (const input_error&) {
  }
  check_graph(parse_edge_list(text, "fuzz.txt"), true);
  return true;
}

/// The matrix an accepted (so valid) text stands for, read naively: the size line, then per line
/// "i j [v]", mirrored (negated for skew) and summed; pattern entries counted, valued later.
void check_matrix_reference(const std::string& text, const csr_matrix& m, std::uint64_t pattern_seed) {
  std::istringstream in(text);
  std::string line, banner, word[5];
  std::getline(in, banner);
  for (char& c : banner) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::istringstream(banner) >> word[0] >> word[1] >> word[2] >> word[3] >> word[4];
  const bool pattern = word[3] == "pattern", skew = word[4] == "skew-symmetric";
  const bool mirrored = skew || word[4] == "symmetric";
  bool have_size = false;
  struct sum {
    double value = 0, magnitude = 0;  // the sum, and the sum of the magnitudes of its terms
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, sum> expected;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string a, b, v;
    if (!(fields >> a) || a.front() == '%') continue;
    if (!have_size) {
      have_size = true;
      continue;
    }
    fields >> b >> v;
    const auto i = static_cast<std::uint32_t>(std::stoull(a) - 1), j = static_cast<std::uint32_t>(std::stoull(b) - 1);
    const double value = pattern ? 1.0 : std::strtod(v.c_str(), nullptr);
    const auto add = [&](std::uint32_t r, std::uint32_t c, double term) {
      expected[{r, c}].value += term;
      expected[{r, c}].magnitude += std::fabs(term);
    };
    add(i, j, value);
    if (mirrored && i != j) add(j, i, skew ? -value : value);
  }
  check(expected.size() == m.nnz(), "matrix reader: entry count differs from the naive reference");
  auto it = expected.begin();
  for (std::uint32_t r = 0; r < m.rows; ++r)
    for (std::uint32_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k, ++it) {
      check(it != expected.end() && it->first.first == r && it->first.second == m.col_indices[k],
            "matrix reader: entries differ from the naive reference at row " + std::to_string(r));
      // Duplicates may be summed in another order (cancelling terms: a different double), then
      // rounded to float: equal within a float rounding of the terms' magnitude.
      const double want = pattern ? matrix_pattern_value(r, m.col_indices[k], pattern_seed) : it->second.value;
      const double slack = pattern ? 0.0 : 1e-6 * it->second.magnitude + 1e-44;
      check(std::fabs(static_cast<double>(m.values[k]) - want) <= slack,
            "matrix reader: a value differs from the naive reference at row " + std::to_string(r));
    }
}

void check_matrix(const std::string& text, const csr_matrix& m, std::uint64_t pattern_seed) {
  check_csr_matrix(m);  // throws input_error on a broken invariant: a failure here, not a refusal
  if (m.rows > (1u << 16) || m.cols > (1u << 16) || m.nnz() > (1u << 20)) return;
  check_matrix_reference(text, m, pattern_seed);
  const std::vector<float> x = make_spmv_vector(m.cols, 3);
  const std::vector<double> y = spmv_reference(m, x);
  std::vector<float> got(m.rows);
  for (std::uint32_t r = 0; r < m.rows; ++r) {
    double values = 0;  // the row's sum of |a_rj|: the reader bounds it, so that the float sum stays finite
    float sum = 0;
    for (std::uint32_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      values += std::fabs(static_cast<double>(m.values[k]));
      sum += m.values[k] * x[m.col_indices[k]];
    }
    check(values <= max_matrix_row_magnitude, "matrix reader: accepted row " + std::to_string(r) +
                                                  " whose sum of |values| passes max_matrix_row_magnitude");
    check(std::isfinite(sum), "a float SpMV of an accepted matrix overflows at row " + std::to_string(r));
    got[r] = sum;
  }
  check(spmv_mismatches(m, x, got, y) == 0, "spmv_mismatches: a float SpMV of an accepted matrix fails the checker");
}

bool run_matrix_market_matrix(const std::string& text) {
  matrix_read_options sparse;  // first with sparse dimensions allowed, up to 2^22 rows (48 MiB)
  sparse.allow_sparse_dimensions = true;
  sparse.max_dimension = 1u << 22;
  sparse.pattern_seed = 5;
  try {
    check_matrix(text, parse_matrix_market_matrix(text, "fuzz.mtx", sparse), sparse.pattern_seed);
  } catch (const input_error& e) {
    check(std::string(e.what()).rfind("fuzz.mtx", 0) == 0, std::string("an input_error that does not name the file: ") + e.what());
  }
  const csr_matrix m = parse_matrix_market_matrix(text, "fuzz.mtx");
  // the declared entries (at most a quarter of the text) bound the dimensions
  check(std::max(m.rows, m.cols) <= dense_vertex_bound(text.size() / 4 + 1),
        "matrix reader: dimensions above dense_vertex_bound without allow_sparse_dimensions");
  check_matrix(text, m, 1);
  return true;
}

/// An accepted tree is a tree, and its references agree.
void check_tree(const tree& t) {
  const std::uint64_t n = t.num_nodes();
  check(n >= 1 && t.parent.size() == n && t.value.size() == n, "tree: array sizes");
  check(t.child_offsets.size() == n + 1 && t.child_offsets.front() == 0 && t.child_offsets.back() == n - 1,
        "tree: offsets ends");
  check(t.root < n && t.parent[t.root] == tree_no_parent, "tree: root");
  std::vector<std::uint8_t> listed(n, 0);
  for (std::uint32_t v = 0; v < n; ++v) {
    check(t.child_offsets[v] <= t.child_offsets[v + 1], "tree: offsets not monotone");
    for (std::uint32_t e = t.child_offsets[v]; e < t.child_offsets[v + 1]; ++e) {
      const std::uint32_t c = t.children[e];
      check(c < n && t.parent[c] == v && !listed[c], "tree: a child not listed once under its parent");
      check(e == t.child_offsets[v] || t.children[e - 1] < c, "tree: children not sorted");
      listed[c] = 1;
    }
  }
  const tree_top_down td = tree_top_down_reference(t);
  const tree_bottom_up bu = tree_bottom_up_reference(t);
  check(bu.size[t.root] == n, "tree: the root's subtree is not the whole tree (a node unreachable)");
  for (std::uint32_t v = 0; v < n; ++v)
    if (v != t.root) check(td.depth[v] == td.depth[t.parent[v]] + 1, "tree: depth is not the parent's + 1");
}

bool run_path_list(const std::string& text) {
  tree_read_options small;
  small.max_nodes = 1u << 16;
  check_tree(parse_path_list(text, "fuzz.paths", small));
  return true;
}

bool run_parent_array(const std::string& text) {
  check_tree(parse_parent_array(text, "fuzz.parents"));
  return true;
}

std::vector<named_input> path_regressions() {
  std::string deep = "/";
  for (int k = 0; k < 20000; ++k) deep += "d/";
  return {
      {"a 20,000-deep path", deep + "\n"},
      {"a 1 MB component", "/" + std::string(1 << 20, 'x') + "\n"},
      {"a size past 64 bits", "18446744073709551616\t/a\n"},
      {"only slashes", "//\n"},
      {"a lone tab", "\t\n"},
  };
}

std::vector<named_input> path_seeds() {
  return {
      {"find /usr", "/usr\n/usr/bin\n/usr/bin/ls\n/usr/lib/x86_64-linux-gnu/libc.so.6\n/usr/share/doc/\n"},
      {"sizes, relative, CRLF", "4096\t./a\r\n12\t./a/b.txt\r\n# c\r\n7\t./c\r\n"},
  };
}

std::vector<named_input> parent_regressions() {
  std::string path = "-1\n", loop = "-1\n";
  for (int k = 0; k < 100000; ++k) path += std::to_string(k) + "\n";
  for (int k = 1; k < 1000; ++k) loop += std::to_string(k + 1) + "\n";
  loop += "1\n";
  return {
      {"a 100,000-deep path", path},
      {"a 1,000-node cycle under a root", loop},
      {"parent 4294967293 (the largest id)", "-1\n4294967293\n"},
      {"parent 4294967294 (one past)", "-1\n4294967294\n"},
      {"-1 twice", "-1\n-1\n"},
  };
}

std::vector<named_input> parent_seeds() {
  return {
      {"a small tree with values", "# p\n-1 10\n0 20\n0 30\n1 40\n"},
      {"no values, blank lines", "2\n\n2\n-1\n0\n"},
  };
}

bool run_points(const std::string& text) {
  const std::vector<point2> points = parse_points(text, "fuzz.xyz");
  check(!points.empty(), "points: accepted without points");
  for (const auto& p : points) check(std::isfinite(p.x) && std::isfinite(p.y), "points: a coordinate not finite");
  if (points.size() <= (1u << 12)) {  // and a small build follows the definition's first rule
    const quadtree q = quadtree_reference(points, {});
    std::uint64_t covered = 0;
    for (const auto& l : q.leaves) covered += l.end - l.begin;
    check(covered == points.size(), "points: the reference quadtree's leaves do not cover every point once");
  }
  return true;
}

std::vector<named_input> point_regressions() {
  return {
      {"a 1 MB number", std::string(1 << 20, '7') + " 1\n"},
      {"1e38 and -1e38", "1e38 -1e38\n-1e38 1e38\n"},
      {"denormals", "1e-45 1e-45\n0 0\n"},
      {"an OBJ with only faces", "o x\nf 1 2 3\n"},
  };
}

std::vector<named_input> point_seeds() {
  return {
      {"xy and xyz", "# p\n0 1\n2.5 -3 7\n1e3\t4\r\n"},
      {"an OBJ mesh", "mtllib m.mtl\no cube\nv 1 2 3\nvn 0 0 1\nv -1 0.5 2\nf 1 2 3\n"},
  };
}

bool run_profile(const std::string& text) {
  report::profile p;
  try {
    p = report::parse_profile(text, "fuzz.json");
  } catch (const report::format_error& e) {
    check(std::string(e.what()).rfind("fuzz.json: ", 0) == 0,
          std::string("a format_error that does not name the file: ") + e.what());
    throw;
  }
  (void)report::findings(p);
  (void)report::render_html({p});
  const std::string trace = report::render_chrome_trace({p});
  check(nlohmann::json::accept(trace), "render_chrome_trace: not valid JSON");
  return true;
}

// --- seeds and regressions -------------------------------------------------------------------

const char* const mm_header = "%%MatrixMarket matrix coordinate pattern general\n";

std::vector<named_input> mm_regressions() {
  return {
      {"4294967295 x 4294967295 with no entries", std::string(mm_header) + "4294967295 4294967295 0\n"},
      {"a header claiming 1000000000000 entries", std::string(mm_header) + "3 3 1000000000000\n1 1\n"},
      {"a header claiming 281474976710655 entries, none given", std::string(mm_header) + "2 2 281474976710655\n"},
      {"1000000 x 1000000 with one entry", std::string(mm_header) + "1000000 1000000 1\n1 1\n"},
      {"an index past 32 bits", std::string(mm_header) + "3 3 1\n4294967296 1\n"},
      {"index 0", std::string(mm_header) + "3 3 1\n0 1\n"},
      {"a 1 MB line of digits", std::string(mm_header) + std::string(1 << 20, '7') + "\n"},
      {"only the header", mm_header},
  };
}

std::vector<named_input> mm_seeds() {
  return {
      {"pattern general", std::string(mm_header) + "% a comment\n4 4 5\n1 2\n2 3\n3 4\n4 1\n1 3\n"},
      {"real symmetric", "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1.5\n2 1 -2e3\n3 2 7\n3 1 0.25\n"},
      {"integer general, CRLF", "%%MatrixMarket matrix coordinate integer general\r\n%\r\n2 3 2\r\n1 3 4\r\n2 1 -1\r\n"},
  };
}

std::vector<named_input> mmm_regressions() {
  const std::string real = "%%MatrixMarket matrix coordinate real general\n";
  return {
      {"4294967295 x 4294967295 with no entries", real + "4294967295 4294967295 0\n"},
      {"4000000 x 4000000 with one entry (sparse allowed)", real + "4000000 4000000 1\n4000000 1 1\n"},
      {"a header claiming 1000000000000 entries", real + "3 3 1000000000000\n1 1 1\n"},
      {"a 1 MB value", real + "1 1 1\n1 1 " + std::string(1 << 20, '7') + "\n"},
      {"a 1 MB line of digits", real + std::string(1 << 20, '7') + "\n"},
      {"nan, inf and 1e39", real + "2 2 3\n1 1 nan\n1 2 inf\n2 2 1e39\n"},
      {"duplicates summing past the float range", real + "1 1 2\n1 1 3e38\n1 1 3e38\n"},
      {"denormals and -0", real + "2 2 3\n1 1 1e-45\n1 2 -0\n2 1 1e-400\n"},
      {"both triangles of a symmetric file", "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 1\n"},
      {"a diagonal entry of a skew-symmetric file", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n"},
      {"a pattern skew-symmetric file", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n"},
      {"an array file", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"},
  };
}

std::vector<named_input> mmm_seeds() {
  return {
      {"real general, duplicates", "%%MatrixMarket matrix coordinate real general\n% c\n3 4 5\n1 4 0.5\n3 1 -2e1\n1 4 .25\n2 2 0\n3 3 1.5E-3\n"},
      {"integer skew-symmetric, CRLF", "%%MatrixMarket matrix coordinate integer skew-symmetric\r\n3 3 2\r\n2 1 -4\r\n3 2 +7\r\n"},
      {"pattern symmetric", "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 4\n1 1\n2 1\n4 3\n4 1\n"},
  };
}

std::vector<named_input> el_regressions() {
  std::string many;
  for (int k = 0; k < 20000; ++k) many += std::to_string(k) + " " + std::to_string((k * 7919) % 20000) + "\n";
  return {
      {"vertex 4000000000", "0 4000000000\n"},
      {"vertex 999999999", "0 999999999\n"},
      {"vertex 4294967294 (the largest id)", "4294967294 4294967294\n"},
      {"vertex 4294967295 (one past)", "0 4294967295\n"},
      {"a 1 MB id", "0 " + std::string(1 << 20, '9') + "\n"},
      {"20,000 edges", many},
      {"a 1 MB comment without a newline", "#" + std::string(1 << 20, 'x')},
  };
}

std::vector<named_input> el_seeds() {
  return {
      {"SNAP with comments", "# Directed graph\n# Nodes: 4 Edges: 5\n0 1\n1 2\n2 0\n2 3\n3 3\n"},
      {"tabs, CRLF, extra columns", "0\t1\r\n1\t2\t0.5\r\n% c\r\n  3 2 extra\r\n\r\n"},
  };
}

/// A small valid profile: a baseline run and a traced run with one site and four records.
nlohmann::json small_profile() {
  using json = nlohmann::json;
  const auto zeros = [](std::size_t n) { return json(std::vector<std::uint64_t>(n, 0)); };
  json work = zeros(33), threads = zeros(33), blocks = zeros(33), depth = zeros(64), lanes = zeros(32),
       eff = zeros(32);
  work[0] = 5;
  work[6] = 3;
  threads[8] = 8;
  blocks[0] = 8;
  depth[1] = 6;
  depth[2] = 2;
  lanes[3] = 100;
  eff[4] = 10;
  json site = {{"id", 16}, {"name", "bfs.neighbors"}, {"role", "launch"}, {"requests", 10},
               {"outcomes", {{"launched", 8}, {"fallback_budget", 1}, {"fallback_depth", 0}, {"fallback_error", 1}}},
               {"failed_by_error", json::array({{{"code", 69}, {"name", "cudaErrorLaunchPendingCountExceeded"}, {"count", 1}}})},
               {"failed_other_codes", 0}, {"inline_items", 40}, {"child_threads", 2048}, {"child_blocks", 8},
               {"work_items", 300}, {"tiny_launches", 5},
               {"streams", {{"fire_and_forget", 8}, {"named_per_thread", 0}, {"null_stream", 0}, {"tail", 0}}},
               {"threads_log2", threads}, {"blocks_log2", blocks}, {"work_log2", work}, {"depth_hist", depth},
               {"max_depth", 2},
               {"probe", {{"steps", 100}, {"active_lanes", 400}, {"lanes_hist", lanes}, {"warps", 10},
                          {"efficiency_hist", eff}, {"efficiency_sum", 1.4}, {"step_efficiency", 0.125},
                          {"mean_warp_efficiency", 0.14}}}};
  json rows = json::array();
  for (int k = 0; k < 4; ++k)
    rows.push_back({k, k == 0 ? json(nullptr) : json(k - 1), 1000 + 10 * k, 16, k == 0 ? 1 : 2, 1, 256,
                    k % 2 ? 4 : 600, "fire_and_forget", "launched", 0, nullptr, nullptr});
  json fields = json::array();
  for (const auto& f : schema::record_fields) fields.push_back(f.name);
  json trace = {{"pending", {{"limit", 2048}, {"budget", 2048}, {"high_water", 2048}}}, {"max_depth_limit", 24},
                {"tiny_grid_work", 32}, {"summary", json::object()}, {"sites", json::array({site})},
                {"records", {{"requested", 4}, {"stored", 4}, {"dropped", 0}, {"in_profile", 4}, {"refusals", true},
                             {"fields", fields}, {"rows", rows}}}};
  json run = {{"id", 0}, {"algorithm", "bfs"}, {"variant", "serial_loop"}, {"input", "rmat:10"},
              {"baseline", nullptr}, {"params", {{"threshold", 32}}}, {"ms", 10.0}, {"work", 1000000},
              {"work_unit", "edges"}, {"checked", true}, {"verified", true}, {"mismatches", 0}, {"trace", nullptr},
              {"hardware", nullptr}, {"timeline", nullptr},
              {"collect", {{"traced_ms", nullptr}, {"metrics_ms", nullptr}, {"timeline_ms", nullptr},
                           {"baseline_ms", nullptr}, {"baseline_runs_ms", json::array()},
                           {"traced_runs_ms", json::array()}}}};
  json traced = run;
  traced["id"] = 1;
  traced["variant"] = "child_per_thread";
  traced["baseline"] = "serial_loop";
  traced["ms"] = 40.0;
  traced["trace"] = trace;
  return json{{"schema", schema::profile_schema}, {"program", "fuzz"}, {"created", "2026-11-29T00:00:00Z"},
              {"device", {{"name", "NVIDIA H200"}, {"cc", "9.0"}, {"sms", 132}, {"driver", 13000}, {"runtime", 13000}}},
              {"build", {{"version", "0.1.0"}}}, {"runs", json::array({run, traced})}, {"collector", nullptr},
              {"host_activity", nullptr}};
}

std::string replace_once(std::string text, const std::string& what, const std::string& with) {
  const auto at = text.find(what);
  if (at != std::string::npos) text.replace(at, what.size(), with);
  return text;
}

std::vector<named_input> profile_regressions() {
  // markers in a valid profile, replaced by text that nlohmann would not print
  auto marked = small_profile();
  marked["runs"][1]["ms"] = 12345.5;
  marked["runs"][1]["params"] = "DEEP";
  marked["device"]["name"] = "DEVICE";
  marked["runs"][1]["trace"]["records"]["rows"][2][0] = 424242;
  const std::string base = marked.dump(1);
  const std::size_t levels = 200000;
  std::string brackets, objects;
  brackets.reserve(2 * levels);
  brackets.append(levels, '[').append(levels, ']');
  for (std::size_t k = 0; k < levels; ++k) objects += "{\"a\":";
  objects += "0";
  objects.append(levels, '}');
  return {
      {"ms = 1e999", replace_once(base, "12345.5", "1e999")},
      {"ms = -1e999", replace_once(base, "12345.5", "-1e999")},
      {"200,000-deep arrays in params", replace_once(base, "\"DEEP\"", brackets)},
      {"200,000-deep objects in params", replace_once(base, "\"DEEP\"", objects)},
      {"200,000 unclosed brackets", std::string(levels, '[')},
      {"200,000 unclosed objects", objects.substr(0, objects.size() - levels)},
      {"200,000 closing brackets", std::string(levels, ']')},
      {"truncated in the middle", base.substr(0, base.size() / 2)},
      {"invalid UTF-8 in a string", replace_once(base, "DEVICE", "NVIDIA \xff\xfe")},
      {"record id past 32 bits", replace_once(base, "424242", "4294967296")},
      {"a number past 64 bits", replace_once(base, "424242", "18446744073709551616")},
      {"empty", ""},
  };
}

std::vector<named_input> profile_seeds() {
  // the same profile as the schema layer writes it (its summaries filled in)
  schema::profile p = schema::parse_profile(small_profile().dump(), "seed.json");
  const std::string current = schema::profile_json(p).dump(1);
  // and with execution windows on its launched records (the Chrome trace's lanes, the timeline)
  for (auto& run : p.runs) {
    if (!run.trace) continue;
    std::uint64_t start = 5000;
    for (auto& r : run.trace->records) {
      if (r.outcome != static_cast<std::uint8_t>(cdpkit::launch_outcome::launched)) continue;
      r.start_ns = start;
      r.end_ns = start + 3000;
      start += 1000;
    }
  }
  const std::string timed = schema::profile_json(p).dump(1);
  return {{"small profile", small_profile().dump(1)},
          {"small profile as the schema layer writes it", current},
          {"small profile with execution windows", timed}};
}

}  // namespace

const std::vector<target>& targets() {
  static const std::vector<target> all = {
      {"matrix_market", run_matrix_market, mm_regressions, mm_seeds, 4096},
      {"matrix_market_matrix", run_matrix_market_matrix, mmm_regressions, mmm_seeds, 4096},
      {"edge_list", run_edge_list, el_regressions, el_seeds, 4096},
      {"path_list", run_path_list, path_regressions, path_seeds, 4096},
      {"parent_array", run_parent_array, parent_regressions, parent_seeds, 4096},
      {"points", run_points, point_regressions, point_seeds, 4096},
      {"profile", run_profile, profile_regressions, profile_seeds, 32768},
  };
  return all;
}

}  // namespace cdpkit::fuzz
