// SpMV matrices on the host: the generators, matrix specs, the shared real graphs as pattern
// matrices, and the double-precision reference with its checker. No GPU needed.

#include <doctest/doctest.h>

#include "csr_value.hpp"
#include "support/gpu.hpp"
#include "support/temp_dir.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/sparse_matrix.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace {

using cdpkit_test::at;
using cdpkit_test::host_memory_cap;
using cdpkit_test::input_error_of;
using cdpkit_test::temp_dir;

using floats = std::vector<float>;

/// A float y = A x, each row summed in the order `order` gives (a permutation of the row's entries).
floats float_spmv(const cdpkit::csr_matrix& a, const floats& x,
                  const std::function<float(const std::vector<float>&)>& sum) {
  floats y(a.rows);
  for (std::uint32_t r = 0; r < a.rows; ++r) {
    std::vector<float> products;
    for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) products.push_back(a.values[k] * x[a.col_indices[k]]);
    y[r] = sum(products);
  }
  return y;
}

float forward_sum(const std::vector<float>& p) {
  float s = 0;
  for (float v : p) s += v;
  return s;
}
float backward_sum(const std::vector<float>& p) {
  float s = 0;
  for (auto it = p.rbegin(); it != p.rend(); ++it) s += *it;
  return s;
}
float pairwise_sum(const float* p, std::size_t n) {  // a tree, as a warp or block reduction adds
  if (n == 0) return 0;
  if (n == 1) return p[0];
  return pairwise_sum(p, n / 2) + pairwise_sum(p + n / 2, n - n / 2);
}
float strided_sum(const std::vector<float>& p) {  // 32 lanes, each a strided partial sum, then a tree
  float lanes[32] = {};
  for (std::size_t k = 0; k < p.size(); ++k) lanes[k % 32] += p[k];
  return pairwise_sum(lanes, 32);
}

}  // namespace

// --- generators ------------------------------------------------------------------------------

TEST_CASE("the power-law matrix has the row-length tail of its RMAT graph") {
  const auto m = cdpkit::make_power_law_matrix(12, 16, 7);
  CHECK(m.name == "rmat:12:16");
  CHECK(m.rows == 4096u);
  CHECK(m.cols == 4096u);
  CHECK_NOTHROW(cdpkit::check_csr_matrix(m));
  cdpkit::csr_options directed;
  directed.symmetrize = false;
  const auto g = cdpkit::build_csr(cdpkit::make_rmat(12, 16, 7), directed);
  REQUIRE(g.num_vertices == m.rows);
  CHECK(m.row_offsets == g.offsets);
  CHECK(m.col_indices == g.neighbors);
  const double mean = static_cast<double>(m.nnz()) / m.rows;
  CHECK(mean > 8.0);  // most of the 16 drawn per row survive the merge of repeats
  CHECK(mean <= 16.0);
  CHECK(m.max_row_length() > 10 * mean);  // the tail
  std::uint32_t empty = 0;
  for (std::uint32_t r = 0; r < m.rows; ++r) empty += m.row_length(r) == 0;
  CHECK(empty > m.rows / 10);  // and the many empty rows of RMAT
  CHECK(cdpkit::make_power_law_matrix(12, 16, 7).values == m.values);
  CHECK(cdpkit::make_power_law_matrix(12, 16, 8).col_indices != m.col_indices);
  CHECK(input_error_of([] { return cdpkit::make_power_law_matrix(0); }) ==
        "make_power_law_matrix(log2_rows 0, 16 per row): log2_rows must be in [1, 31]");
  CHECK(input_error_of([] { return cdpkit::make_power_law_matrix(10, 2000); }) ==
        "make_power_law_matrix(log2_rows 10, 2000 per row): the entries per row must be in [1, 1024]");
  CHECK(input_error_of([] { return cdpkit::make_power_law_matrix(31, 4); }) ==
        "make_power_law_matrix(log2_rows 31, 4 per row): 8589934592 entries drawn; at most 4294967295");
  const host_memory_cap cap(1ull << 30);
  CHECK_THROWS_WITH_AS(cdpkit::make_power_law_matrix(26, 16), doctest::Contains("make_power_law_matrix(log2_rows 26, 16 per row) needs"),
                       cdpkit::input_error);
}

TEST_CASE("the banded matrix holds every entry within the half bandwidth of the diagonal") {
  struct shape {
    std::uint32_t rows, half;
  };
  for (const auto s : {shape{0, 3}, shape{1, 0}, shape{1, 5}, shape{7, 2}, shape{7, 6}, shape{7, 100}, shape{100003, 3}}) {
    CAPTURE(s.rows);
    CAPTURE(s.half);
    const auto m = cdpkit::make_banded_matrix(s.rows, s.half, 3);
    CHECK_NOTHROW(cdpkit::check_csr_matrix(m));
    CHECK(m.name == "banded:" + std::to_string(s.rows) + ":" + std::to_string(s.half));
    std::uint64_t expected_nnz = 0;
    bool rows_ok = true;
    for (std::uint32_t r = 0; r < s.rows; ++r) {
      const std::uint32_t first = r > s.half ? r - s.half : 0;
      const auto last = static_cast<std::uint32_t>(std::min<std::uint64_t>(s.rows - 1, std::uint64_t{r} + s.half));
      expected_nnz += last - first + 1;
      rows_ok = rows_ok && m.row_length(r) == last - first + 1 && m.col_indices[m.row_offsets[r]] == first &&
                m.values[m.row_offsets[r]] == cdpkit::matrix_pattern_value(r, first, 3);
    }
    CHECK(rows_ok);
    CHECK(m.nnz() == expected_nnz);
  }
  CHECK(cdpkit::make_banded_matrix(100, 1).max_row_length() == 3u);
  CHECK(input_error_of([] { return cdpkit::make_banded_matrix(4294967295u, 4294967295u); }) ==
        "make_banded_matrix(4294967295 rows, half bandwidth 4294967295): 18446744065119617025 entries; a CSR holds "
        "at most 4294967295 (32-bit offsets)");
  CHECK(input_error_of([] { return cdpkit::make_banded_matrix(2000000000u, 1); })
            .find("5999999998 entries; a CSR holds at most") != std::string::npos);
  const host_memory_cap cap(1ull << 20);
  CHECK_THROWS_WITH_AS(cdpkit::make_banded_matrix(1000000, 10), doctest::Contains("needs"), cdpkit::input_error);
}

TEST_CASE("the giant-rows matrix holds a few long rows among short ones, each row's columns sorted and distinct") {
  struct shape {
    std::uint32_t rows, giants, len, base;
  };
  for (const auto s : {shape{0, 0, 0, 0}, shape{1, 1, 1, 0}, shape{10, 0, 0, 3}, shape{10, 3, 10, 2},
                       shape{1000, 7, 999, 4}, shape{1000, 1000, 5, 4}, shape{100003, 16, 65536, 4}}) {
    CAPTURE(s.rows);
    CAPTURE(s.giants);
    CAPTURE(s.len);
    const auto m = cdpkit::make_giant_rows_matrix(s.rows, s.giants, s.len, s.base, 5);
    CHECK_NOTHROW(cdpkit::check_csr_matrix(m));  // sorted, distinct, in range
    CHECK(m.name == "giant:" + std::to_string(s.rows) + ":" + std::to_string(s.giants) + ":" + std::to_string(s.len) +
                        ":" + std::to_string(s.base));
    std::uint32_t giant_rows = 0;
    bool lengths_ok = true, values_ok = true;
    for (std::uint32_t r = 0; r < s.rows; ++r) {
      const bool giant = s.giants > 0 && r % (s.rows / s.giants) == 0 && r / (s.rows / s.giants) < s.giants;
      giant_rows += giant;
      lengths_ok = lengths_ok && m.row_length(r) == (giant ? s.len : s.base);
      for (std::uint32_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
        values_ok = values_ok && m.values[k] == cdpkit::matrix_pattern_value(r, m.col_indices[k], 5);
    }
    CHECK(giant_rows == s.giants);
    CHECK(lengths_ok);
    CHECK(values_ok);
    CHECK(m.nnz() == std::uint64_t{s.rows - s.giants} * s.base + std::uint64_t{s.giants} * s.len);
  }
  CHECK(cdpkit::make_giant_rows_matrix(1000, 2, 600).max_row_length() == 600u);
  CHECK(cdpkit::load_matrix("giant:2^10:2:512").nnz() == 1022u * 4 + 2u * 512);
  CHECK(cdpkit::load_matrix("giant:2^10:2:512:1", 3).col_indices ==
        cdpkit::make_giant_rows_matrix(1024, 2, 512, 1, 3).col_indices);
  CHECK(input_error_of([] { return cdpkit::make_giant_rows_matrix(10, 11, 1); }) ==
        "make_giant_rows_matrix(10 rows, 11 giant rows of 1, the others 4): more giant rows than rows");
  CHECK(input_error_of([] { return cdpkit::make_giant_rows_matrix(10, 1, 11); }) ==
        "make_giant_rows_matrix(10 rows, 1 giant rows of 11, the others 4): a row holds at most 10 entries (one per "
        "column)");
  CHECK(input_error_of([] { return cdpkit::make_giant_rows_matrix(3000000000u, 1, 1, 2); })
            .find("5999999999 entries; a CSR holds at most") != std::string::npos);
  CHECK(input_error_of([] { return cdpkit::load_matrix("giant:10:1"); }) ==
        "matrix spec 'giant:10:1': expected giant:ROWS:GIANTS:LEN or giant:ROWS:GIANTS:LEN:BASE");
  CHECK(input_error_of([] { return cdpkit::load_matrix("giant:10:x:1"); }) ==
        "matrix spec 'giant:10:x:1': giant row count 'x' is not a non-negative integer (or 2^K)");
  CHECK(input_error_of([] { return cdpkit::load_matrix("giant:10:2:20"); }) ==
        "matrix spec 'giant:10:2:20': make_giant_rows_matrix(10 rows, 2 giant rows of 20, the others 4): a row holds "
        "at most 10 entries (one per column)");
  const host_memory_cap cap(1ull << 20);
  CHECK_THROWS_WITH_AS(cdpkit::make_giant_rows_matrix(1000000, 1, 10), doctest::Contains("needs"), cdpkit::input_error);
}

TEST_CASE("a graph becomes a pattern matrix with symmetric generated values") {
  const auto g = cdpkit::load_graph("grid:5");
  const auto m = cdpkit::matrix_from_graph(g, 9);
  CHECK(m.rows == 25u);
  CHECK(m.row_offsets == g.offsets);
  CHECK(m.col_indices == g.neighbors);
  CHECK_NOTHROW(cdpkit::check_csr_matrix(m));
  for (std::uint32_t r = 0; r < m.rows; ++r)
    for (auto k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) CHECK(m.values[k] == at(m, m.col_indices[k], r));
  CHECK(cdpkit::matrix_from_graph(cdpkit::csr_graph{}).rows == 0u);
}

TEST_CASE("the generated vector and values are exact floats in their ranges and repeat per seed") {
  for (const std::uint32_t n : {0u, 1u, 1000u, 100003u}) {
    CAPTURE(n);
    const auto x = cdpkit::make_spmv_vector(n, 4);
    REQUIRE(x.size() == n);
    bool ok = true;
    for (float v : x) ok = ok && v >= -1.0f && v < 1.0f && std::ldexp(v, 23) == std::nearbyint(std::ldexp(v, 23));
    CHECK(ok);
    CHECK(cdpkit::make_spmv_vector(n, 4) == x);
    if (n > 1) CHECK(cdpkit::make_spmv_vector(n, 5) != x);
  }
  const auto prefix = cdpkit::make_spmv_vector(10, 4), longer = cdpkit::make_spmv_vector(20, 4);
  CHECK(std::equal(prefix.begin(), prefix.end(), longer.begin()));
  for (std::uint32_t r : {0u, 1u, 77u, 4294967295u})
    for (std::uint32_t c : {0u, 3u, 4294967294u}) {
      const float v = cdpkit::matrix_pattern_value(r, c, 11);
      CHECK(v >= 0.5f);
      CHECK(v < 1.5f);
      CHECK(v == cdpkit::matrix_pattern_value(c, r, 11));
    }
  CHECK(cdpkit::matrix_pattern_value(1, 2, 11) != cdpkit::matrix_pattern_value(1, 2, 12));
}

// --- matrix specs ----------------------------------------------------------------------------

TEST_CASE("matrix specs load generators graphs and files and name the spec in their errors") {
  CHECK(cdpkit::load_matrix("rmat:8").name == "rmat:8");
  CHECK(cdpkit::load_matrix("rmat:8:4", 3).col_indices == cdpkit::make_power_law_matrix(8, 4, 3).col_indices);
  CHECK(cdpkit::load_matrix("banded:2^10:2").rows == 1024u);
  const auto g = cdpkit::load_matrix("graph:grid:3", 2);
  CHECK(g.name == "graph:grid:3");
  CHECK(g.values == cdpkit::matrix_from_graph(cdpkit::load_graph("grid:3"), 2).values);
  temp_dir dir;
  const std::string path = dir.file("a.MTX", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n");
  CHECK(cdpkit::load_matrix(path).name == path);
  CHECK(cdpkit::load_matrix("mtx:" + path).nnz() == 1u);
  CHECK(cdpkit::load_matrix("graph:" + dir.file("e.txt", "0 1\n1 2\n")).nnz() == 4u);

  struct bad {
    const char* spec;
    const char* error;
  };
  for (const auto& b : {
           bad{"rmat:abc", "matrix spec 'rmat:abc': log2 of the rows 'abc' is not a non-negative integer (or 2^K)"},
           bad{"rmat", "matrix spec 'rmat': expected rmat:LOG2_ROWS or rmat:LOG2_ROWS:AVG"},
           bad{"rmat:40", "matrix spec 'rmat:40': log2 of the rows 40 is larger than 31"},
           bad{"rmat:0", "matrix spec 'rmat:0': make_power_law_matrix(log2_rows 0, 16 per row): log2_rows must be in "
                         "[1, 31]"},
           bad{"rmat:10:0", "matrix spec 'rmat:10:0': make_power_law_matrix(log2_rows 10, 0 per row): the entries per "
                            "row must be in [1, 1024]"},
           bad{"banded:10", "matrix spec 'banded:10': expected banded:ROWS:HALF_BANDWIDTH"},
           bad{"banded:2^32:1", "matrix spec 'banded:2^32:1': row count 4294967296 is larger than 4294967295"},
           bad{"banded:4294967295:4294967295",
               "matrix spec 'banded:4294967295:4294967295': make_banded_matrix(4294967295 rows, half bandwidth "
               "4294967295): 18446744065119617025 entries; a CSR holds at most 4294967295 (32-bit offsets)"},
           bad{"graph:", "matrix spec 'graph:': expected graph:GRAPH_SPEC (a graph spec or file, see load_graph)"},
           bad{"graph:rmat:x", "matrix spec 'graph:rmat:x': graph spec 'rmat:x': 'x' is not a number in range"},
           bad{"mtx:", "matrix spec 'mtx:': expected mtx:PATH"},
           bad{"dense:4", "matrix spec 'dense:4': unknown kind 'dense' (expected rmat:LOG2_ROWS[:AVG], "
                          "banded:ROWS:HALF_BANDWIDTH, giant:ROWS:GIANTS:LEN[:BASE], graph:GRAPH_SPEC, mtx:PATH or a path "
                          "ending in .mtx)"},
           bad{"matrix.txt", "matrix spec 'matrix.txt': unknown kind 'matrix.txt' (expected rmat:LOG2_ROWS[:AVG], "
                             "banded:ROWS:HALF_BANDWIDTH, giant:ROWS:GIANTS:LEN[:BASE], graph:GRAPH_SPEC, mtx:PATH or a path "
                          "ending in .mtx)"},
       }) {
    CAPTURE(b.spec);
    CHECK(input_error_of([&] { return cdpkit::load_matrix(b.spec); }) == b.error);
  }
  CHECK_THROWS_WITH_AS(cdpkit::load_matrix("mtx:/no/such/file"), doctest::Contains("/no/such/file: cannot open"),
                       cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::load_matrix("graph:/no/such/graph.txt"),
                       doctest::Contains("matrix spec 'graph:/no/such/graph.txt': /no/such/graph.txt: cannot open"),
                       cdpkit::input_error);
}

// --- the CPU reference and its checker -------------------------------------------------------

TEST_CASE("the CPU reference equals a hand-computed product") {
  // [ 1  0  2  ]   [ 1 ]   [ -7 ]
  // [ 0  0  0  ] x [ 2 ] = [  0 ]
  // [-1  3  .5 ]   [-4 ]   [  3 ]
  cdpkit::csr_matrix a;
  a.rows = a.cols = 3;
  a.row_offsets = {0, 2, 2, 5};
  a.col_indices = {0, 2, 0, 1, 2};
  a.values = {1, 2, -1, 3, 0.5f};
  a.name = "hand";
  CHECK_NOTHROW(cdpkit::check_csr_matrix(a));
  CHECK(cdpkit::spmv_reference(a, {1, 2, -4}) == std::vector<double>{-7, 0, 3});
  CHECK(input_error_of([&] { return cdpkit::spmv_reference(a, {1, 2}); }) ==
        "spmv_reference: x has 2 entries, the matrix 3 columns");
  // a rectangular one, through the reader
  const auto r = cdpkit::parse_matrix_market_matrix("%%MatrixMarket matrix coordinate real general\n2 4 3\n1 4 2\n2 1 0.25\n2 3 -1\n",
                                                    "r.mtx");
  CHECK(cdpkit::spmv_reference(r, {4, 100, 8, 0.5f}) == std::vector<double>{1, -7});
  // the products are exact in double: 24-bit values times 24-bit inputs
  const auto big = cdpkit::make_banded_matrix(5, 1, 2);
  const auto x = cdpkit::make_spmv_vector(5, 2);
  const auto y = cdpkit::spmv_reference(big, x);
  CHECK(y[0] == static_cast<double>(big.values[0]) * x[0] + static_cast<double>(big.values[1]) * x[1]);
}

TEST_CASE("the checker flags a row off by more than the tolerance and accepts reordered float sums") {
  SUBCASE("the tolerance is relative to the row's magnitude, at least 1") {
    cdpkit::csr_matrix a;
    a.rows = 2;
    a.cols = 3;
    a.row_offsets = {0, 3, 3};  // row 1 is empty
    a.col_indices = {0, 1, 2};
    a.values = {1, 1, 1};
    const floats x{1, -1, 3};  // y0 = 3, magnitude 5: tolerance 5e-4
    const std::vector<double> expected = cdpkit::spmv_reference(a, x);
    CHECK(cdpkit::spmv_mismatches(a, x, {3.0f, 0.0f}, expected) == 0u);
    CHECK(cdpkit::spmv_mismatches(a, x, {3.0004f, 0.0f}, expected) == 0u);
    CHECK(cdpkit::spmv_mismatches(a, x, {3.0006f, 0.0f}, expected) == 1u);
    CHECK(cdpkit::spmv_mismatches(a, x, {3.0f, 0.00009f}, expected) == 0u);  // an empty row: tolerance 1e-4
    std::string first;
    CHECK(cdpkit::spmv_mismatches(a, x, {2.9f, 0.0002f}, expected, 1e-4, &first) == 2u);
    CHECK(first.rfind("row 0 (3 entries): got 2.9", 0) == 0);
    CHECK(first.find("expected 3, off by") != std::string::npos);
    CHECK(first.find("> tolerance 0.0005 (0.0001 x max(1, sum |a x| = 5))") != std::string::npos);
    CHECK(cdpkit::spmv_mismatches(a, x, {std::nanf(""), 0.0f}, expected) == 1u);
    CHECK(cdpkit::spmv_mismatches(a, x, {INFINITY, 0.0f}, expected) == 1u);
    CHECK(cdpkit::spmv_mismatches(a, x, {3.0006f, 0.0f}, expected, 1e-3) == 0u);
    CHECK(input_error_of([&] { return cdpkit::spmv_mismatches(a, x, {3.0f}, expected); }) ==
          "spmv_mismatches: got has 1 entries, the matrix 2 rows");
    CHECK(input_error_of([&] { return cdpkit::spmv_mismatches(a, {1, 2}, {3.0f, 0.0f}, expected); }) ==
          "spmv_mismatches: x has 2 entries, the matrix 3 columns");
  }
  SUBCASE("float sums in any order pass; a dropped product fails") {
    for (const char* spec : {"rmat:14:16", "banded:10000:40"}) {
      CAPTURE(spec);
      const auto a = cdpkit::load_matrix(spec, 5);
      const auto x = cdpkit::make_spmv_vector(a.cols, 6);
      const auto expected = cdpkit::spmv_reference(a, x);
      CHECK(cdpkit::spmv_mismatches(a, x, float_spmv(a, x, forward_sum), expected) == 0u);
      CHECK(cdpkit::spmv_mismatches(a, x, float_spmv(a, x, backward_sum), expected) == 0u);
      CHECK(cdpkit::spmv_mismatches(a, x, float_spmv(a, x, [](const auto& p) { return pairwise_sum(p.data(), p.size()); }),
                                    expected) == 0u);
      CHECK(cdpkit::spmv_mismatches(a, x, float_spmv(a, x, strided_sum), expected) == 0u);
      // Drop the largest product of one row of ordinary length: the row, and only it, fails.
      auto y = float_spmv(a, x, forward_sum);
      std::uint32_t row = 0;
      while (a.row_length(row) < 4 || a.row_length(row) > 200) ++row;
      float largest = 0;
      for (auto k = a.row_offsets[row]; k < a.row_offsets[row + 1]; ++k)
        largest = std::max(largest, std::fabs(a.values[k] * x[a.col_indices[k]]));
      REQUIRE(largest > 0.01f);
      y[row] -= std::copysign(largest, 1.0f);  // as if the product was missing, or its sign wrong
      std::string first;
      CHECK(cdpkit::spmv_mismatches(a, x, y, expected, cdpkit::spmv_default_rel_tol, &first) == 1u);
      CHECK(first.rfind("row " + std::to_string(row) + " ", 0) == 0);
    }
  }
}

TEST_CASE("check_csr_matrix names the broken invariant") {
  const auto good = [] {
    cdpkit::csr_matrix m;
    m.rows = 2;
    m.cols = 3;
    m.row_offsets = {0, 2, 3};
    m.col_indices = {0, 2, 1};
    m.values = {1, 2, 3};
    m.name = "m";
    return m;
  };
  CHECK_NOTHROW(cdpkit::check_csr_matrix(good()));
  CHECK_NOTHROW(cdpkit::check_csr_matrix(cdpkit::csr_matrix{}));
  struct broken {
    std::function<void(cdpkit::csr_matrix&)> edit;
    const char* error;
  };
  for (const auto& b : std::vector<broken>{
           {[](auto& m) { m.row_offsets.pop_back(); }, "m: 2 row offsets for 2 rows (rows + 1 expected)"},
           {[](auto& m) { m.values.pop_back(); }, "m: 2 values for 3 column indices"},
           {[](auto& m) { m.row_offsets[0] = 1; }, "m: the first row offset is not 0"},
           {[](auto& m) { m.row_offsets[2] = 2; }, "m: the last row offset 2 is not the 3 stored entries"},
           {[](auto& m) { m.row_offsets[1] = 4; }, "m: row 1: its offsets decrease (4 then 3)"},
           {[](auto& m) { m.col_indices[1] = 3; }, "m: row 0: column 3 >= the column count 3"},
           {[](auto& m) { m.col_indices[1] = 0; }, "m: row 0: columns not strictly increasing (0 then 0)"},
           {[](auto& m) { m.values[2] = INFINITY; }, "m: row 1: a value that is not finite at column 1"},
           {[](auto& m) { m.name.clear(), m.values[0] = std::nanf(""); }, "csr_matrix: row 0: a value that is not finite at column 0"},
       }) {
    auto m = good();
    b.edit(m);
    CHECK(input_error_of([&] {
            cdpkit::check_csr_matrix(m);
            return 0;
          }) == b.error);
  }
}

// --- the shared real graphs as pattern matrices ------------------------------------------------

namespace {
const std::filesystem::path shared_graphs = CDPKIT_SHARED_DATA_DIR "/graphs";
}  // namespace

TEST_CASE("the shared real graphs read in place as pattern matrices" * doctest::skip(!cdpkit_test::input_present(shared_graphs / "facebook_combined.txt"))) {
  struct expected {
    const char* file;
    std::uint32_t rows;  // max id + 1
    std::uint64_t nnz;   // symmetrized, without self loops and duplicates (graph_test's counts)
  };
  for (const auto& e : {expected{"facebook_combined.txt", 4039, 2 * 88234ull}, expected{"ca-GrQc.txt", 26197, 2 * 14484ull},
                        expected{"USpowerGrid.txt", 4942, 2 * 6594ull}, expected{"p2p-Gnutella08.txt", 6301, 2 * 20777ull}}) {
    CAPTURE(e.file);
    const std::string spec = "graph:" + (shared_graphs / e.file).string();
    const auto a = cdpkit::load_matrix(spec);
    CHECK(a.name == spec);
    CHECK(a.rows == e.rows);
    CHECK(a.cols == e.rows);
    CHECK(a.nnz() == e.nnz);
    CHECK_NOTHROW(cdpkit::check_csr_matrix(a));
    const auto x = cdpkit::make_spmv_vector(a.cols);
    const auto expected_y = cdpkit::spmv_reference(a, x);
    CHECK(cdpkit::spmv_mismatches(a, x, float_spmv(a, x, strided_sum), expected_y) == 0u);
  }
  const auto fb = cdpkit::load_matrix("graph:" + (shared_graphs / "facebook_combined.txt").string());
  CHECK(fb.max_row_length() == 1045u);
}
