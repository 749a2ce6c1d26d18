// Graphs on the host: CSR construction, generators, Matrix Market and edge-list readers
// (including every kind of malformed input), and the shared real graphs.

#include <doctest/doctest.h>

#include "support/gpu.hpp"
#include "support/temp_dir.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/bfs.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/memory.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <cstdlib>
#include <string>

namespace {

bool sorted_unique_no_loops(const cdpkit::csr_graph& g) {
  for (std::uint32_t v = 0; v < g.num_vertices; ++v) {
    for (auto k = g.offsets[v]; k < g.offsets[v + 1]; ++k) {
      if (g.neighbors[k] == v) return false;
      if (k > g.offsets[v] && g.neighbors[k - 1] >= g.neighbors[k]) return false;
    }
  }
  return true;
}

bool symmetric(const cdpkit::csr_graph& g) {
  for (std::uint32_t v = 0; v < g.num_vertices; ++v)
    for (auto k = g.offsets[v]; k < g.offsets[v + 1]; ++k) {
      const auto u = g.neighbors[k];
      if (!std::binary_search(g.neighbors.begin() + g.offsets[u], g.neighbors.begin() + g.offsets[u + 1], v))
        return false;
    }
  return true;
}

std::string mm_error(const std::string& text) {
  try {
    (void)cdpkit::parse_matrix_market(text, "t.mtx");
  } catch (const cdpkit::input_error& e) {
    return e.what();
  }
  return "no error";
}

std::string el_error(const std::string& text) {
  try {
    (void)cdpkit::parse_edge_list(text, "t.txt");
  } catch (const cdpkit::input_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("build_csr drops self loops and duplicates and sorts and symmetrizes") {
  cdpkit::edge_list list;
  list.num_vertices = 5;
  list.edges = {{0, 3}, {0, 1}, {0, 3}, {2, 2}, {1, 0}, {4, 1}};
  const auto g = cdpkit::build_csr(list);
  CHECK(g.num_vertices == 5u);
  CHECK(g.offsets == std::vector<std::uint32_t>{0, 2, 4, 4, 5, 6});
  CHECK(g.neighbors == std::vector<std::uint32_t>{1, 3, 0, 4, 0, 1});
  CHECK(sorted_unique_no_loops(g));
  CHECK(symmetric(g));
  cdpkit::csr_options directed;
  directed.symmetrize = false;
  const auto d = cdpkit::build_csr(list, directed);
  CHECK(d.neighbors == std::vector<std::uint32_t>{1, 3, 0, 1});
  CHECK(cdpkit::build_csr(cdpkit::edge_list{}).num_edges() == 0u);
}

TEST_CASE("build_csr names an edge whose id is out of range") {
  cdpkit::edge_list list;
  list.num_vertices = 3;
  list.edges = {{0, 1}, {1, 7}};
  CHECK_THROWS_WITH_AS(cdpkit::build_csr(list), doctest::Contains("edge 1 (1, 7)"), cdpkit::input_error);
  list.num_vertices = 1ull << 33;
  CHECK_THROWS_WITH_AS(cdpkit::build_csr(list), doctest::Contains("32-bit"), cdpkit::input_error);
}

TEST_CASE("generators make the graphs they promise and repeat per seed") {
  SUBCASE("rmat") {
    const auto a = cdpkit::make_rmat(10, 16, 5);
    CHECK(a.num_vertices == 1024u);
    CHECK(a.edges.size() == 16384u);
    CHECK(a.edges == cdpkit::make_rmat(10, 16, 5).edges);
    CHECK(a.edges != cdpkit::make_rmat(10, 16, 6).edges);
    const auto g = cdpkit::build_csr(a);
    CHECK(sorted_unique_no_loops(g));
    CHECK(symmetric(g));
    CHECK(g.max_degree() > 10 * g.num_edges() / g.num_vertices);  // skewed
    CHECK_THROWS_AS(cdpkit::make_rmat(0), cdpkit::input_error);
    CHECK_THROWS_AS(cdpkit::make_rmat(10, 16, 1, 0.6, 0.3, 0.3), cdpkit::input_error);
  }
  SUBCASE("grid") {
    const auto g = cdpkit::build_csr(cdpkit::make_grid(4));
    CHECK(g.num_vertices == 16u);
    CHECK(g.num_edges() == 2u * 24u);
    CHECK(g.degree(0) == 2u);
    CHECK(g.degree(5) == 4u);
    CHECK_THROWS_AS(cdpkit::make_grid(0), cdpkit::input_error);
  }
  SUBCASE("uniform") {
    const auto list = cdpkit::make_uniform_random(1000, 5000, 3);
    CHECK(list.edges.size() == 5000u);
    for (const auto& [u, v] : list.edges) CHECK((u < 1000 && v < 1000));
  }
}

TEST_CASE("Matrix Market files parse with pattern real and integer fields") {
  const auto pattern = cdpkit::parse_matrix_market(
      "%%MatrixMarket matrix coordinate pattern symmetric\n% comment\n\n3 3 2\n2 1\r\n3 2\n", "p.mtx");
  CHECK(pattern.num_vertices == 3u);
  CHECK(pattern.symmetric);
  CHECK(pattern.edges == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{1, 0}, {2, 1}});
  const auto real = cdpkit::parse_matrix_market(
      "%%MatrixMarket matrix coordinate real general\n2 4 1\n1 4 0.5\n", "r.mtx");
  CHECK(real.num_vertices == 4u);
  CHECK_FALSE(real.symmetric);
  const auto g = cdpkit::build_csr(cdpkit::parse_matrix_market(
      "%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 7\n2 3 -1\n", "i.mtx"));
  CHECK(g.num_edges() == 4u);
}

TEST_CASE("malformed Matrix Market files are rejected with file line and reason") {
  CHECK(mm_error("") == "t.mtx:1: empty file (expected a %%MatrixMarket header)");
  CHECK(mm_error("%%MatrixMarkt matrix coordinate pattern general\n1 1 0\n") ==
        "t.mtx:1: missing '%%MatrixMarket' header");
  CHECK(mm_error("%%MatrixMarket matrix array real general\n1 1\n") ==
        "t.mtx:1: format 'array' is not supported (coordinate only)");
  CHECK(mm_error("%%MatrixMarket matrix coordinate complex general\n1 1 0\n") ==
        "t.mtx:1: field 'complex' is not supported (pattern, real or integer)");
  CHECK(mm_error("%%MatrixMarket matrix coordinate pattern hermitian\n1 1 0\n") ==
        "t.mtx:1: symmetry 'hermitian' is not supported (general or symmetric)");
  CHECK(mm_error("%%MatrixMarket matrix coordinate pattern general\n% only comments\n") ==
        "t.mtx:3: missing size line 'rows cols entries'");
  CHECK(mm_error("%%MatrixMarket matrix coordinate pattern general\n3 x 2\n") ==
        "t.mtx:2: column count 'x' is not a non-negative integer");
  const std::string head = "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n";
  CHECK(mm_error(head + "1 2\n") == "t.mtx:3: truncated: the size line declares 2 entries, the file has 1");
  CHECK(mm_error(head + "1 2\n2 3\n3 1\n") == "t.mtx:5: more entries than the 2 the size line declares");
  CHECK(mm_error(head + "0 2\n1 1\n") == "t.mtx:3: index 0 in a 1-based Matrix Market file");
  CHECK(mm_error(head + "1 2\n4 1\n") == "t.mtx:4: row index 4 > row count 3");
  CHECK(mm_error(head + "1 2\n1 -3\n") == "t.mtx:4: column index '-3' is not a non-negative integer");
  CHECK(mm_error(head + "1 2\n1\n") == "t.mtx:4: missing column index");
  CHECK(mm_error("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2\n") ==
        "t.mtx:3: missing value (field is real)");
  CHECK(mm_error("%%MatrixMarket matrix coordinate pattern general\n99999999999 3 1\n1 2\n") ==
        "t.mtx:2: row count 99999999999 is larger than 4294967295");
}

TEST_CASE("edge lists parse comments tabs and CRLF and reject malformed lines") {
  const auto list = cdpkit::parse_edge_list("# a comment\r\n0\t1\r\n\r\n  2 5 1.5\n", "e.txt");
  CHECK(list.num_vertices == 6u);
  CHECK(list.edges == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0, 1}, {2, 5}});
  CHECK(cdpkit::parse_edge_list("# nothing\n", "e.txt").num_vertices == 0u);
  CHECK(el_error("0 1\n1 two\n") == "t.txt:2: target vertex id 'two' is not a non-negative integer");
  CHECK(el_error("0 1\n7\n") == "t.txt:2: missing target vertex id");
  CHECK(el_error("4294967295 1\n") ==
        "t.txt:1: source vertex id 4294967295 is larger than 4294967294 (32-bit vertex ids)");
  CHECK(el_error("-1 2\n") == "t.txt:1: source vertex id '-1' is not a non-negative integer");
}

TEST_CASE("quoted_input() keeps printable ASCII, escapes every other byte, the backslash and the quote, and cuts long text") {
  CHECK(cdpkit::quoted_input("abc") == "'abc'");
  CHECK(cdpkit::quoted_input("") == "''");
  CHECK(cdpkit::quoted_input(" ~ rmat:20 ") == "' ~ rmat:20 '");
  CHECK(cdpkit::quoted_input("it's a\\b") == "'it\\'s a\\\\b'");
  CHECK(cdpkit::quoted_input(std::string_view("\r\n\t\0", 4)) == "'\\r\\n\\t\\0'");
  CHECK(cdpkit::quoted_input("\x1b[31mred") == "'\\x1b[31mred'");
  CHECK(cdpkit::quoted_input("\x01\x7f\x80\xff") == "'\\x01\\x7f\\x80\\xff'");
  CHECK(cdpkit::quoted_input("caf\xc3\xa9") == "'caf\\xc3\\xa9'");  // UTF-8 shows as its bytes
  // every byte alone: printable ASCII only in the result, and a printable byte stays as it is
  for (int b = 0; b < 256; ++b) {
    CAPTURE(b);
    const std::string q = cdpkit::quoted_input(std::string(1, static_cast<char>(b)));
    CHECK(std::all_of(q.begin(), q.end(), [](char c) { return c >= 0x20 && c <= 0x7e; }));
    if (b >= 0x20 && b <= 0x7e && b != '\\' && b != '\'') CHECK(q == std::string{'\'', static_cast<char>(b), '\''});
    else CHECK((q.size() == 4 || q.size() == 6));  // '\r' or '\x01'
  }
  // cut after at most max_chars characters of the escaped text, never inside an escape
  CHECK(cdpkit::quoted_input("abcdef", 4) == "'abcd...'");
  CHECK(cdpkit::quoted_input("abcd", 4) == "'abcd'");
  CHECK(cdpkit::quoted_input("ab\x01", 4) == "'ab...'");
  CHECK(cdpkit::quoted_input("ab\\", 4) == "'ab\\\\'");
  CHECK(cdpkit::quoted_input("abc\\", 4) == "'abc...'");
  CHECK(cdpkit::quoted_input("x", 0) == "'...'");
  CHECK(cdpkit::quoted_input(std::string(80, 'a')) == "'" + std::string(80, 'a') + "'");
  CHECK(cdpkit::quoted_input(std::string(81, 'a')) == "'" + std::string(80, 'a') + "...'");
  CHECK(cdpkit::quoted_input(std::string(40 << 20, '7')) == "'" + std::string(80, '7') + "...'");  // a 40 MB token
}

TEST_CASE("an edge list line with control bytes and a 1 MB token gives a short message with the bytes escaped") {
  // ESC (a terminal's "clear screen"), CR and NUL inside the target id, then 1 MB of letters
  std::string text = "0 1\n0 7\x1b[2J\r";
  text += '\0';
  text += std::string(1 << 20, 'z') + "\n";
  const std::string what = el_error(text);
  CHECK(what ==
        "t.txt:2: target vertex id '7\\x1b[2J\\r\\0" + std::string(68, 'z') + "...' is not a non-negative integer");
  CHECK(what.size() < 300);
  CHECK(std::all_of(what.begin(), what.end(), [](char c) { return c >= 0x20 && c <= 0x7e; }));  // no raw control byte
  // a 1 MB number is shown by its first digits and its length
  const std::string digits = el_error("0 " + std::string(1 << 20, '9') + "\n");
  CHECK(digits == "t.txt:1: target vertex id " + std::string(40, '9') +
                      "... (1048576 digits) is larger than 4294967294 (32-bit vertex ids)");
  // a Matrix Market banner's words the same way
  CHECK(mm_error("%%MatrixMarket matrix coordinate pattern gen\x1b[0meral\n1 1 0\n") ==
        "t.mtx:1: symmetry 'gen\\x1b[0meral' is not supported (general or symmetric)");
}

TEST_CASE("graph specs and unreadable files give clear errors") {
  CHECK(cdpkit::load_graph("grid:3").num_vertices == 9u);
  CHECK(cdpkit::load_graph("rmat:8").num_vertices == 256u);
  CHECK(cdpkit::load_graph("uniform:100:300").num_vertices == 100u);
  CHECK_THROWS_WITH_AS(cdpkit::load_graph("rmat:abc"), doctest::Contains("'abc' is not a number"),
                       cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::load_graph("grid:"), doctest::Contains("missing number"), cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::load_graph("/no/such/file.mtx"), doctest::Contains("/no/such/file.mtx: cannot open"),
                       cdpkit::input_error);
  const auto path = std::filesystem::temp_directory_path() / "cdpkit_truncated.mtx";
  {
    std::ofstream out(path);
    out << "%%MatrixMarket matrix coordinate pattern general\n4 4 3\n1 2\n";
  }
  CHECK_THROWS_WITH_AS(cdpkit::load_graph(path.string()), doctest::Contains("truncated"), cdpkit::input_error);
  std::filesystem::remove(path);
}

namespace {

using cdpkit_test::environment_variable;
using cdpkit_test::host_memory_cap;
using cdpkit_test::input_error_of;
using cdpkit_test::temp_dir;

const std::string mm_head = "%%MatrixMarket matrix coordinate pattern general\n";

/// doctest::Contains over a std::string built at run time.
doctest::Contains contains(const std::string& s) { return doctest::Contains(s.c_str()); }

}  // namespace

TEST_CASE("the vertex bound and the build_csr memory estimate follow their documented rules") {
  CHECK(cdpkit::dense_vertex_bound(0) == (1u << 20));
  CHECK(cdpkit::dense_vertex_bound(1) == (1u << 20));
  CHECK(cdpkit::dense_vertex_bound(1u << 16) == (1u << 20));
  CHECK(cdpkit::dense_vertex_bound(100000) == 1600000u);
  CHECK(cdpkit::dense_vertex_bound(UINT64_MAX) == UINT64_MAX);
  // 16 bytes per vertex (+1) and 8 per directed edge
  CHECK(cdpkit::build_csr_host_bytes(10, 5, true) == 16u * 11 + 8u * 10);
  CHECK(cdpkit::build_csr_host_bytes(10, 5, false) == 16u * 11 + 8u * 5);
  CHECK(cdpkit::build_csr_host_bytes(UINT64_MAX, 1, true) == UINT64_MAX);
  CHECK(cdpkit::build_csr_host_bytes(1, UINT64_MAX / 4, true) == UINT64_MAX);
  // the file size limit: a quarter of the available memory, in [16 MiB, 64 GiB], 64 GiB unknown
  CHECK(cdpkit::max_graph_file_bytes_for(0) == 64ull << 30);
  CHECK(cdpkit::max_graph_file_bytes_for(1) == 16ull << 20);
  CHECK(cdpkit::max_graph_file_bytes_for(64ull << 20) == 16ull << 20);
  CHECK(cdpkit::max_graph_file_bytes_for(400ull << 20) == 100ull << 20);
  CHECK(cdpkit::max_graph_file_bytes_for(256ull << 30) == 64ull << 30);
  CHECK(cdpkit::max_graph_file_bytes_for(UINT64_MAX) == 64ull << 30);
  // the default applies it to the memory available when called (which other processes move:
  // only the rule's range is checked against it)
  const std::uint64_t cap = cdpkit::default_max_graph_file_bytes();
  CHECK(cap >= 16ull << 20);
  CHECK(cap <= 64ull << 30);
}

TEST_CASE("an edge list naming a vertex far beyond its edge count is refused unless sparse ids are allowed") {
  // The user's files: 13 bytes that asked for 4 billion (std::bad_alloc) or 1 billion (8 GB) vertices.
  CHECK(el_error("0 4000000000\n") ==
        "t.txt:1: vertex id 4000000000 makes 4000000001 vertices for 1 edge, more than the 1048576 a "
        "graph file may have (max(2^20, 16 x edges)); ids this sparse are accepted only with "
        "graph_read_options::allow_sparse_ids");
  CHECK(el_error("0 999999999\n").rfind("t.txt:1: vertex id 999999999 makes 1000000000 vertices for 1 edge", 0) == 0);
  // the line named is the one with the largest id
  CHECK(el_error("0 1\n# c\n2 5000000\n3 4\n").rfind("t.txt:3: vertex id 5000000 makes 5000001 vertices for 3 edges", 0) == 0);
  // the bound itself: 2^20 vertices for a small file, 16 per edge for a large one
  CHECK(cdpkit::parse_edge_list("0 1048575\n", "e.txt").num_vertices == 1u << 20);
  CHECK(el_error("0 1048576\n").find("1048577 vertices for 1 edge") != std::string::npos);

  SUBCASE("through load_graph on a file") {
    temp_dir dir;
    const std::string path = dir.file("huge_id.txt", "0 4000000000\n");
    CHECK(std::filesystem::file_size(path) == 13u);
    CHECK_THROWS_WITH_AS(cdpkit::load_graph(path),
                         contains(path + ":1: vertex id 4000000000 makes 4000000001 vertices"),
                         cdpkit::input_error);
    CHECK_THROWS_WITH_AS(cdpkit::load_graph(dir.file("big_id.txt", "0 999999999\n")),
                         doctest::Contains("allow_sparse_ids"), cdpkit::input_error);
  }
  SUBCASE("allowed: isolated vertices up to the id, within max_vertices") {
    cdpkit::graph_read_options sparse;
    sparse.allow_sparse_ids = true;
    const auto list = cdpkit::parse_edge_list("0 5000000\n", "e.txt", sparse);
    CHECK(list.num_vertices == 5000001u);
    const auto g = cdpkit::build_csr(list);
    CHECK(g.num_vertices == 5000001u);
    CHECK(g.degree(0) == 1u);
    CHECK(g.degree(5000000) == 1u);
    CHECK(g.num_edges() == 2u);
    temp_dir dir;
    CHECK(cdpkit::load_graph(dir.file("sparse.txt", "0 5000000\n"), {}, 1, sparse).num_vertices == 5000001u);
    sparse.max_vertices = 1000;
    CHECK(input_error_of([&] { return cdpkit::parse_edge_list("0 1\n1 1000\n", "e.txt", sparse); }) ==
          "e.txt:2: vertex id 1000 makes 1001 vertices, more than the 1000 allowed "
          "(graph_read_options::max_vertices)");
  }
  SUBCASE("allowed: the host memory check still applies") {
    cdpkit::graph_read_options sparse;
    sparse.allow_sparse_ids = true;
    const auto list = cdpkit::parse_edge_list("0 4294967294\n", "e.txt", sparse);
    CHECK(list.num_vertices == 4294967295u);
    const host_memory_cap cap(1ull << 30);
    CHECK_THROWS_WITH_AS(cdpkit::build_csr(list),
                         doctest::Contains("build_csr (4294967295 vertices, 1 edges, symmetrized) needs"),
                         cdpkit::input_error);
  }
}

TEST_CASE("a Matrix Market size line with more vertices than its entries can use is refused unless sparse ids are allowed") {
  CHECK(mm_error(mm_head + "4294967295 4294967295 0\n") ==
        "t.mtx:2: the size line declares 4294967295 vertices (max of rows and columns) for 0 entries, "
        "more than the 1048576 a graph file may have (max(2^20, 16 x entries)); ids this sparse are "
        "accepted only with graph_read_options::allow_sparse_ids");
  // a rectangular matrix is as large as its larger side; the line number skips comments
  CHECK(mm_error(mm_head + "% c\n% c\n3 2000000 1\n1 2\n")
            .rfind("t.mtx:4: the size line declares 2000000 vertices (max of rows and columns) for 1 entry", 0) == 0);
  CHECK(cdpkit::parse_matrix_market(mm_head + "1048576 1048576 0\n", "m.mtx").num_vertices == 1u << 20);

  temp_dir dir;
  const std::string path = dir.file("huge.mtx", mm_head + "4294967295 4294967295 0\n");
  CHECK_THROWS_WITH_AS(cdpkit::load_graph(path), contains(path + ":2: the size line declares 4294967295 vertices"),
                       cdpkit::input_error);

  cdpkit::graph_read_options sparse;
  sparse.allow_sparse_ids = true;
  const auto list = cdpkit::parse_matrix_market(mm_head + "3000000 3000000 1\n1 2\n", "m.mtx", sparse);
  CHECK(list.num_vertices == 3000000u);
  CHECK(list.edges.size() == 1u);
  sparse.max_vertices = 2999999;
  CHECK(input_error_of([&] { return cdpkit::parse_matrix_market(mm_head + "3000000 3000000 1\n1 2\n", "m.mtx", sparse); }) ==
        "m.mtx:2: the size line declares 3000000 vertices (max of rows and columns), more than the "
        "2999999 allowed (graph_read_options::max_vertices)");
}

TEST_CASE("a Matrix Market entry count larger than the file can hold is refused before reserving") {
  // 10^12 entries declared in a 75-byte file: refused at the size line, nothing reserved.
  const std::string text = mm_head + "3 3 1000000000000\n1 2\n2 3\n";
  REQUIRE(text.size() == 75u);
  CHECK(mm_error(text) ==
        "t.mtx:2: the size line declares 1000000000000 entries; a file of 75 bytes holds at most 19 "
        "(an entry line takes at least 4 bytes, \"1 1\\n\")");
  // a 64-byte file holds at most 16 entries: 16 is a truncated file, reported at its end; 17 is
  // refused at the size line
  CHECK(mm_error(mm_head + "3 3 16\n1 2\n2 3\n") == "t.mtx:4: truncated: the size line declares 16 entries, the file has 2");
  CHECK(mm_error(mm_head + "3 3 17\n1 2\n2 3\n") ==
        "t.mtx:2: the size line declares 17 entries; a file of 64 bytes holds at most 16 "
        "(an entry line takes at least 4 bytes, \"1 1\\n\")");
  // the biggest count the size line may name at all is still a clear error
  CHECK(mm_error(mm_head + "3 3 281474976710655\n").find("t.mtx:2: the size line declares 281474976710655 entries") == 0);

  temp_dir dir;
  const std::string path = dir.file("lying.mtx", text);
  CHECK_THROWS_WITH_AS(cdpkit::load_graph(path), contains(path + ":2: the size line declares 1000000000000 entries"),
                       cdpkit::input_error);
}

TEST_CASE("graph files that are not regular files are refused without reading them") {
  SUBCASE("/dev/zero, which never ends") {
    REQUIRE(std::filesystem::exists("/dev/zero"));  // (Linux: always there)
    CHECK_THROWS_WITH_AS(cdpkit::load_graph("/dev/zero"),
                         doctest::Contains("/dev/zero: is a character device, not a regular file"),
                         cdpkit::input_error);
    CHECK_THROWS_WITH_AS(cdpkit::read_matrix_market("/dev/zero"), doctest::Contains("not a regular file"),
                         cdpkit::input_error);
  }
  SUBCASE("a directory") {
    temp_dir dir;
    CHECK(input_error_of([&] { return cdpkit::read_edge_list(dir.path().string()); }) ==
          dir.path().string() + ": is a directory, not a regular file; graphs are read from regular files only");
  }
  SUBCASE("a FIFO, which would block without a writer") {
    temp_dir dir;
    const std::string fifo = (dir.path() / "graph.mtx").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_WITH_AS(cdpkit::load_graph(fifo), contains(fifo + ": is a FIFO, not a regular file"),
                         cdpkit::input_error);
  }
}

TEST_CASE("graph files larger than the size limit are refused") {
  temp_dir dir;
  const std::string path = dir.file("ten_edges.txt", "0 1\n1 2\n2 3\n3 4\n4 5\n5 6\n6 7\n7 8\n8 9\n9 0\n");
  cdpkit::graph_read_options small;
  small.max_file_bytes = 39;
  CHECK(input_error_of([&] { return cdpkit::read_edge_list(path, small); }) ==
        path + ": the file is 40 bytes, more than the 39 bytes a graph file may have "
               "(graph_read_options::max_file_bytes)");
  CHECK_THROWS_WITH_AS(cdpkit::load_graph(path, {}, 1, small), doctest::Contains("more than the 39 bytes"),
                       cdpkit::input_error);
  small.max_file_bytes = 40;
  CHECK(cdpkit::read_edge_list(path, small).edges.size() == 10u);
  CHECK(cdpkit::load_graph(path).num_vertices == 10u);  // far below the default limit
}

TEST_CASE("generator specs beyond the CSR's 32-bit edge offsets are refused before generating") {
  CHECK(input_error_of([] { return cdpkit::load_graph("rmat:31:1024"); }) ==
        "graph spec 'rmat:31:1024': 2199023255552 edges are 4398046511104 directed edges after "
        "symmetrization; a CSR holds at most 4294967295 directed edges (32-bit offsets)");
  CHECK(input_error_of([] { return cdpkit::load_graph("rmat:26:32"); })
            .find("graph spec 'rmat:26:32': 2147483648 edges are 4294967296 directed edges") == 0);
  CHECK(input_error_of([] { return cdpkit::load_graph("grid:65535"); }) ==
        "graph spec 'grid:65535': 8589541380 edges are 17179082760 directed edges after "
        "symmetrization; a CSR holds at most 4294967295 directed edges (32-bit offsets)");
  // grid:32768 has 4294705152 directed edges, grid:32769 one row too many
  CHECK(input_error_of([] { return cdpkit::load_graph("grid:32769"); }).find("4295098368 directed edges") !=
        std::string::npos);
  CHECK(input_error_of([] { return cdpkit::load_graph("grid:65536"); }) ==
        "graph spec 'grid:65536': side must be in [1, 65535] (side^2 32-bit vertex ids), got 65536");
  CHECK(input_error_of([] { return cdpkit::load_graph("uniform:10:4294967295"); })
            .find("graph spec 'uniform:10:4294967295': 4294967295 edges are 8589934590 directed edges") == 0);
  CHECK(input_error_of([] { return cdpkit::load_graph("uniform:4294967296:1"); }) ==
        "graph spec 'uniform:4294967296:1': 4294967296 vertices do not fit 32-bit ids (at most 4294967295)");
  CHECK(input_error_of([] { return cdpkit::load_graph("uniform:0:5"); }) ==
        "graph spec 'uniform:0:5': edges need at least one vertex");
  CHECK(input_error_of([] { return cdpkit::load_graph("rmat:0"); }) == "graph spec 'rmat:0': scale must be in [1, 31], got 0");
  CHECK(input_error_of([] { return cdpkit::load_graph("rmat:10:0"); }) ==
        "graph spec 'rmat:10:0': edge factor must be in [1, 1024], got 0");
  // without symmetrization the limit is on the edges themselves
  cdpkit::csr_options directed;
  directed.symmetrize = false;
  CHECK(input_error_of([&] { return cdpkit::load_graph("rmat:31:4", directed); })
            .find("graph spec 'rmat:31:4': 8589934592 edges; a CSR holds at most 4294967295") == 0);
  // the generators themselves
  CHECK(input_error_of([] { return cdpkit::make_rmat(31, 4); }) ==
        "make_rmat(scale 31, edge factor 4): 8589934592 edges; at most 4294967295");
  CHECK(input_error_of([] { return cdpkit::make_grid(65535); }) ==
        "make_grid: side must be in [1, 46341] (at most 4294967295 edges), got 65535 (8589541380 edges)");
  CHECK(input_error_of([] { return cdpkit::make_grid(46342); }).find("got 46342") != std::string::npos);
  CHECK(input_error_of([] { return cdpkit::make_uniform_random(10, 1ull << 32); }) ==
        "make_uniform_random: more than 4294967295 edges requested");
}

TEST_CASE("generator specs whose graph does not fit the host memory are refused before allocating") {
  // 2^32 - 1 vertices and 2^31 - 1 edges: 16 GiB of edges + 64 GiB of vertex arrays + 32 GiB of
  // directed edges in build_csr.
  const std::uint64_t n = 4294967295u, m = 2147483647u;
  const host_memory_cap cap(1ull << 30);  // 1 GiB, whatever the host has
  CHECK(8 * m + cdpkit::build_csr_host_bytes(n, m, true) > (1ull << 30));
  CHECK_THROWS_WITH_AS(cdpkit::load_graph("uniform:4294967295:2147483647"),
                       doctest::Contains("graph spec 'uniform:4294967295:2147483647' (4294967295 vertices, "
                                         "2147483647 edges) needs"),
                       cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::make_uniform_random(10, 4294967295u),
                       doctest::Contains("make_uniform_random(10, 4294967295) needs"), cdpkit::input_error);
}

TEST_CASE("an invalid CDPKIT_HOST_MEMORY_LIMIT is an input_error naming the variable, its value and what it accepts") {
  struct bad {
    const char* value;
    const char* shown;
  };
  for (const bad b : {bad{"12abc", "'12abc'"}, bad{"-1", "'-1'"}, bad{"0", "'0'"}, bad{" 5", "' 5'"},
                      bad{"1G", "'1G'"}, bad{"18446744073709551616", "'18446744073709551616'"},
                      bad{"\x1b[31m1", "'\\x1b[31m1'"}}) {
    CAPTURE(b.shown);
    const environment_variable env("CDPKIT_HOST_MEMORY_LIMIT", b.value);
    CHECK(input_error_of([] { cdpkit::require_host_memory(1, "one byte"); }) ==
          std::string("the environment variable CDPKIT_HOST_MEMORY_LIMIT=") + b.shown +
              " is not a host memory limit: expected a number of bytes, decimal digits only, from 1 to "
              "18446744073709551615 (e.g. 1073741824 for 1 GiB), or the variable unset");
    // every reader and generator checks its memory through require_host_memory: refused there too
    CHECK_THROWS_WITH_AS(cdpkit::load_graph("grid:3"), doctest::Contains("CDPKIT_HOST_MEMORY_LIMIT="),
                         cdpkit::input_error);
    CHECK_NOTHROW((void)cdpkit::available_host_memory());  // noexcept: it leaves the value out
  }
  {
    const environment_variable env("CDPKIT_HOST_MEMORY_LIMIT", "1073741824");
    CHECK_NOTHROW(cdpkit::require_host_memory(1, "one byte"));
    CHECK(cdpkit::available_host_memory() <= (1ull << 30));
    CHECK(input_error_of([] { cdpkit::require_host_memory(2ull << 30, "two GiB"); })
              .rfind("two GiB needs 2.00 GiB", 0) == 0);
  }
  {
    const environment_variable env("CDPKIT_HOST_MEMORY_LIMIT", "");  // empty: as if unset
    CHECK_NOTHROW(cdpkit::require_host_memory(1, "one byte"));
  }
}

namespace {
const std::filesystem::path shared_graphs = CDPKIT_SHARED_DATA_DIR "/graphs";
}  // namespace

TEST_CASE("the shared real graphs load with their documented sizes" *
          doctest::skip(!cdpkit_test::input_present(shared_graphs / "facebook_combined.txt"))) {
  struct expected {
    const char* file;
    std::uint32_t vertices;        // max id + 1
    std::uint64_t directed_edges;  // after dropping self loops and duplicates, symmetrized
  };
  // Counts from shared/data/graphs/README.md: facebook 88,234 undirected edges; ca-GrQc 14,484
  // undirected edges (+12 self loops) with ids up to 26,196; USpowerGrid 6,594 edges with 1-based
  // ids (vertex 0 isolated); Gnutella 20,777 directed edges, none reciprocal.
  for (const auto& e : {expected{"facebook_combined.txt", 4039, 2 * 88234ull},
                        expected{"ca-GrQc.txt", 26197, 2 * 14484ull},
                        expected{"USpowerGrid.txt", 4942, 2 * 6594ull},
                        expected{"p2p-Gnutella08.txt", 6301, 2 * 20777ull}}) {
    CAPTURE(e.file);
    const auto g = cdpkit::load_graph((shared_graphs / e.file).string());
    CHECK(g.num_vertices == e.vertices);
    CHECK(g.num_edges() == e.directed_edges);
    CHECK(sorted_unique_no_loops(g));
  }
  const auto fb = cdpkit::load_graph((shared_graphs / "facebook_combined.txt").string());
  CHECK(fb.max_degree() == 1045u);
}

TEST_CASE("the CPU reference BFS and the Graph500 validation agree and catch corruption") {
  const auto g = cdpkit::build_csr([] {
    cdpkit::edge_list l;
    l.num_vertices = 6;
    l.edges = {{0, 1}, {1, 2}, {2, 3}, {0, 3}, {4, 5}};
    return l;
  }());
  const auto levels = cdpkit::bfs_reference(g, 0);
  CHECK(levels == std::vector<std::uint32_t>{0, 1, 2, 1, cdpkit::bfs_unreached, cdpkit::bfs_unreached});
  CHECK(cdpkit::validate_bfs_levels(g, 0, levels).errors == 0u);
  CHECK(cdpkit::bfs_traversed_edges(g, levels) == 4u);
  CHECK_THROWS_WITH_AS(cdpkit::bfs_traversed_edges(g, std::vector<std::uint32_t>(5, 0)),
                       "bfs_traversed_edges: levels has 5 entries for 6 vertices", cdpkit::input_error);
  auto bad = levels;
  bad[2] = 3;  // no neighbour at level 2, and the edge (2, 3) spans levels 3 and 1
  const auto v = cdpkit::validate_bfs_levels(g, 0, bad);
  CHECK(v.errors >= 2u);
  bad = levels;
  bad[4] = 1;  // reached next to an unreached vertex
  CHECK(cdpkit::validate_bfs_levels(g, 0, bad).first_error.find("joins a reached and an unreached") !=
        std::string::npos);
  CHECK_THROWS_AS(cdpkit::bfs_reference(g, 6), cdpkit::input_error);
  CHECK(cdpkit::parse_bfs_variant("device_driver").variant == cdpkit::bfs_variant::device_driver);
  CHECK_THROWS_WITH_AS(cdpkit::parse_bfs_variant("magic"), doctest::Contains("unknown BFS variant 'magic'"),
                       cdpkit::input_error);
}

TEST_CASE("BFS variants carry the loop policy names and names of no variant are refused, naming the choices") {
  using cdpkit::bfs_variant;
  using cdpkit::bfs_variant_choice;
  using cdpkit::stream_kind;
  for (const char* name : {"vertex_loop", "cdp_naive", "cdp_streams", "cdp_threshold", "cdp_aggregated_warp",
                           "cdp_aggregated_block", "edge_balanced"}) {
    CAPTURE(name);
    CHECK_THROWS_WITH_AS(cdpkit::parse_bfs_variant(name),
                         ("unknown BFS variant '" + std::string(name) +
                          "' (choose one of: serial_loop, child_per_thread, thresholded, warp_aggregated, "
                          "block_aggregated, device_driver, flat_balanced, optionally +STREAM, e.g. "
                          "child_per_thread+named_per_thread)")
                             .c_str(),
                         cdpkit::input_error);
  }
  // every variant's name is its loop policy's (device_driver has none), and names round-trip
  for (const auto& v : cdpkit::all_bfs_variants()) {
    CAPTURE(std::string(cdpkit::to_string(v)));
    CHECK(cdpkit::parse_bfs_variant(cdpkit::to_string(v)) == v);
    if (v.variant != bfs_variant::device_driver)
      CHECK(std::string(cdpkit::to_string(v.variant)) ==
            cdpkit::to_string(cdpkit::parse_loop_policy_kind(cdpkit::to_string(v.variant))));
  }
  CHECK(cdpkit::to_string(cdpkit::parse_bfs_variant("child_per_thread+named_per_thread")) ==
        "child_per_thread+named_per_thread");
  CHECK(cdpkit::parse_bfs_variant("thresholded+null_stream") ==
        bfs_variant_choice{bfs_variant::thresholded, stream_kind::null_stream});
  CHECK_THROWS_WITH_AS(cdpkit::parse_bfs_variant("thresholded+river"),
                       doctest::Contains("river"), cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::parse_bfs_variant("flat_balanced+tail"),
                       doctest::Contains("launches no child grids"), cdpkit::input_error);
  // the stream and child block size default per variant as before the options existed
  cdpkit::bfs_options o = cdpkit::bfs_options::of(cdpkit::parse_bfs_variant("child_per_thread"));
  CHECK(o.effective_stream() == stream_kind::null_stream);
  CHECK(o.effective_child_block_threads() == 1024u);
  o = cdpkit::bfs_options::of(cdpkit::parse_bfs_variant("child_per_thread+named_per_thread"));
  CHECK(o.effective_stream() == stream_kind::named_per_thread);
  CHECK(o.effective_child_block_threads() == 1024u);
  o = cdpkit::bfs_options::of(cdpkit::parse_bfs_variant("thresholded"));
  CHECK(o.effective_stream() == stream_kind::fire_and_forget);
  CHECK(o.effective_child_block_threads() == 256u);
  CHECK(cdpkit::all_bfs_variants().size() == 8u);  // the story: child_per_thread twice
}

TEST_CASE("the graph-wide BFS threshold keeps the vertices above it within half the budget") {
  const auto g = cdpkit::build_csr(cdpkit::make_rmat(14, 16, 4));
  cdpkit::bfs_options o;
  const auto t = cdpkit::default_bfs_threshold(g, o, 2048);
  std::uint64_t above = 0;
  for (std::uint32_t v = 0; v < g.num_vertices; ++v) above += g.degree(v) > t;
  CHECK(above <= 1024u);
  CHECK(t >= o.cost_model.threshold(cdpkit::stream_kind::fire_and_forget));
}

TEST_CASE("RMAT edges are not repeated across generator chunks") {
  // 2^21 edges span two generation chunks; with independent streams, duplicates are only those
  // the skewed distribution makes, far fewer than half.
  const auto list = cdpkit::make_rmat(20, 2, 11);
  auto edges = list.edges;
  std::sort(edges.begin(), edges.end());
  const auto unique = std::unique(edges.begin(), edges.end()) - edges.begin();
  CHECK(static_cast<double>(unique) > 0.9 * static_cast<double>(edges.size()));
}

TEST_CASE("a gzip-compressed graph or matrix reads as its text, and a bomb, a truncated one or one without zlib is refused") {
  const temp_dir dir;
  const std::string mtx = dir.file("g.mtx", mm_head + "4 4 3\n1 2\n2 3\n3 4\n");
  const std::string edges = dir.file("e.txt", "# SNAP\n0 1\n1 2\n2 0\n");
  REQUIRE(std::system(("gzip -k -f " + mtx + " " + edges).c_str()) == 0);
  const std::string gz = mtx + ".gz";
  std::string error;
  try {
    (void)cdpkit::load_graph(gz);
  } catch (const cdpkit::input_error& e) {
    error = e.what();
  }
  if (error.find("built without zlib") != std::string::npos) {  // this build: refused, with the way out
    CHECK(error.find("gunzip") != std::string::npos);
    MESSAGE("built without zlib: gzip inputs are refused (checked), not read");
    return;
  }
  REQUIRE_MESSAGE(error.empty(), error);
  const auto plain = cdpkit::load_graph(mtx), packed = cdpkit::load_graph(gz);  // .mtx.gz is Matrix Market
  CHECK(packed.num_vertices == plain.num_vertices);
  CHECK(packed.neighbors == plain.neighbors);
  CHECK(cdpkit::load_graph(edges + ".gz").neighbors == cdpkit::load_graph(edges).neighbors);
  // a gzip bomb: 8 MiB of text in a file of a few KiB, past a cap of 1 MiB of text
  const std::string bomb = (dir.path() / "bomb.txt").string();
  {
    std::ofstream out(bomb);
    const std::string line(1023, '#');
    for (int k = 0; k < 8192; ++k) out << line << '\n';
  }
  REQUIRE(std::system(("gzip -f " + bomb).c_str()) == 0);
  cdpkit::graph_read_options capped;
  capped.max_file_bytes = 1 << 20;
  CHECK(std::filesystem::file_size(bomb + ".gz") < capped.max_file_bytes);
  CHECK_THROWS_WITH_AS(cdpkit::read_edge_list(bomb + ".gz", capped), contains("unpacks to more than"), cdpkit::input_error);
  // truncated and corrupt: refused, naming the file, and no raw gzip bytes in the message
  std::string bytes;
  {
    std::ifstream in(gz, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string cut = dir.file("cut.mtx.gz", bytes.substr(0, bytes.size() / 2));
  std::string bad = bytes;
  bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x55);
  bad[bad.size() - 5] = static_cast<char>(bad[bad.size() - 5] ^ 0x55);  // the length check too
  const std::string corrupt = dir.file("bad.mtx.gz", bad);
  for (const std::string& path : {cut, corrupt}) {
    CAPTURE(path);
    const std::string what = input_error_of([&] { (void)cdpkit::load_graph(path); });
    CHECK(what.rfind(path + ": ", 0) == 0);
    CHECK(what.find("gzip") != std::string::npos);
    CHECK(what.find('\x1f') == std::string::npos);
    CHECK(what.find('\x8b') == std::string::npos);
  }
}
