// The Matrix Market reader on the host: every field and symmetry, every kind of malformed input
// named by its line, a matrix declaring more than its text or the host can hold refused before
// allocating, and only regular files under the size limit read. No GPU needed.

#include <doctest/doctest.h>

#include "csr_value.hpp"
#include "support/temp_dir.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/sparse_matrix.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using cdpkit_test::at;
using cdpkit_test::host_memory_cap;
using cdpkit_test::input_error_of;
using cdpkit_test::temp_dir;

using u32s = std::vector<std::uint32_t>;
using floats = std::vector<float>;

std::string mm_error(const std::string& text, const cdpkit::matrix_read_options& options = {}) {
  return input_error_of([&] { return cdpkit::parse_matrix_market_matrix(text, "t.mtx", options); });
}

/// doctest::Contains over a std::string built at run time.
doctest::Contains contains(const std::string& s) { return doctest::Contains(s.c_str()); }

}  // namespace

// --- the Matrix Market reader ----------------------------------------------------------------

TEST_CASE("a general Matrix Market file becomes sorted rows with duplicates summed and zeros kept") {
  const auto m = cdpkit::parse_matrix_market_matrix("%%MatrixMarket matrix coordinate real general\r\n"
                                                    "% a comment\r\n\r\n"
                                                    "3 4 6\r\n"
                                                    "1 4 0.5\r\n"
                                                    "1 2 -2e1\r\n"
                                                    "% between entries\r\n"
                                                    "3 1 0\r\n"
                                                    "1 4\t+0.25\r\n"
                                                    "3 3 1.5\r\n"
                                                    "1 2 1",
                                                    "g.mtx");
  CHECK(m.name == "g.mtx");
  CHECK(m.rows == 3u);
  CHECK(m.cols == 4u);
  CHECK(m.row_offsets == u32s{0, 2, 2, 4});
  CHECK(m.col_indices == u32s{1, 3, 0, 2});
  CHECK(m.values == floats{-19.0f, 0.75f, 0.0f, 1.5f});  // (1,2) and (1,4) summed; the explicit 0 kept
  CHECK(m.row_length(1) == 0u);
  CHECK(m.max_row_length() == 2u);
  CHECK_NOTHROW(cdpkit::check_csr_matrix(m));

  SUBCASE("integer values, and the double field as real") {
    const auto i = cdpkit::parse_matrix_market_matrix(
        "%%MatrixMarket matrix coordinate integer general\n2 2 3\n2 1 -7\n1 1 +3\n2 1 16777217\n", "i.mtx");
    CHECK(i.col_indices == u32s{0, 0});
    CHECK(i.values == floats{3.0f, 16777210.0f});  // -7 + 16777217, exact in float
    const auto d = cdpkit::parse_matrix_market_matrix(
        "%%MATRIXMARKET Matrix Coordinate Double General\n1 1 1\n1 1 2.5\n", "d.mtx");
    CHECK(d.values == floats{2.5f});
  }
  SUBCASE("no entries, and no rows") {
    const auto e = cdpkit::parse_matrix_market_matrix("%%MatrixMarket matrix coordinate real general\n5 3 0\n", "e.mtx");
    CHECK(e.rows == 5u);
    CHECK(e.nnz() == 0u);
    CHECK(e.row_offsets == u32s(6, 0));
    const auto z = cdpkit::parse_matrix_market_matrix("%%MatrixMarket matrix coordinate real general\n0 0 0\n", "z.mtx");
    CHECK(z.rows == 0u);
    CHECK(z.row_offsets == u32s{0});
    CHECK(z.max_row_length() == 0u);
  }
}

TEST_CASE("a symmetric Matrix Market file is expanded into both triangles") {
  // lower triangle, the diagonal once
  const auto m = cdpkit::parse_matrix_market_matrix("%%MatrixMarket matrix coordinate real symmetric\n"
                                                    "3 3 4\n1 1 2\n2 1 -1\n3 2 4\n3 1 0.5\n",
                                                    "s.mtx");
  CHECK(m.row_offsets == u32s{0, 3, 5, 7});
  CHECK(m.col_indices == u32s{0, 1, 2, 0, 2, 0, 1});
  CHECK(m.values == floats{2, -1, 0.5f, -1, 4, 0.5f, 4});
  for (std::uint32_t r = 0; r < 3; ++r)
    for (std::uint32_t c = 0; c < 3; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      if (r != c) CHECK(((std::isnan(at(m, r, c)) && std::isnan(at(m, c, r))) || at(m, r, c) == at(m, c, r)));
    }
  // the upper triangle alone is as good, and duplicates in it are summed before mirroring
  const auto u = cdpkit::parse_matrix_market_matrix("%%MatrixMarket matrix coordinate real symmetric\n"
                                                    "3 3 4\n1 2 -1\n2 3 4\n1 3 1\n1 3 -0.5e0\n",
                                                    "u.mtx");
  CHECK(u.nnz() == 6u);
  CHECK(at(u, 2, 0) == doctest::Approx(0.5));
  CHECK(at(u, 0, 2) == doctest::Approx(0.5));
  CHECK(at(u, 2, 1) == 4.0f);
}

TEST_CASE("a skew-symmetric Matrix Market file is expanded with its mirrors negated") {
  const auto m = cdpkit::parse_matrix_market_matrix("%%MatrixMarket matrix coordinate real skew-symmetric\n"
                                                    "3 3 2\n2 1 3\n3 2 -1.5\n",
                                                    "k.mtx");
  CHECK(m.row_offsets == u32s{0, 1, 3, 4});
  CHECK(m.col_indices == u32s{1, 0, 2, 1});
  CHECK(m.values == floats{-3, 3, 1.5f, -1.5f});
}

TEST_CASE("a pattern Matrix Market file gets deterministic generated values") {
  const std::string text = "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 4\n2 1\n4 1\n3 3\n2 1\n";
  const auto m = cdpkit::parse_matrix_market_matrix(text, "p.mtx");
  CHECK(m.row_offsets == u32s{0, 2, 3, 4, 5});  // (2,1) twice is one entry
  CHECK(m.col_indices == u32s{1, 3, 0, 2, 0});
  for (std::uint32_t r = 0; r < m.rows; ++r)
    for (auto k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      CHECK(m.values[k] == cdpkit::matrix_pattern_value(r, m.col_indices[k], 1));
      CHECK(m.values[k] >= 0.5f);
      CHECK(m.values[k] < 1.5f);
    }
  CHECK(at(m, 0, 1) == at(m, 1, 0));  // a symmetric pattern makes a symmetric matrix
  CHECK(cdpkit::parse_matrix_market_matrix(text, "p.mtx").values == m.values);
  cdpkit::matrix_read_options other;
  other.pattern_seed = 2;
  CHECK(cdpkit::parse_matrix_market_matrix(text, "p.mtx", other).values != m.values);
  const auto g = cdpkit::parse_matrix_market_matrix("%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 2\n",
                                                    "g.mtx");
  CHECK(g.col_indices == u32s{2, 1});
  CHECK(g.values == floats{cdpkit::matrix_pattern_value(0, 2, 1), cdpkit::matrix_pattern_value(1, 1, 1)});
}

TEST_CASE("every malformed Matrix Market matrix is an input_error naming the line") {
  struct bad {
    const char* text;
    const char* error;
  };
  const std::string real = "%%MatrixMarket matrix coordinate real general\n";
  const bad cases[] = {
      {"", "t.mtx:1: empty file (expected a %%MatrixMarket header)"},
      {"%%MatrixMarkt matrix coordinate real general\n1 1 0\n", "t.mtx:1: missing '%%MatrixMarket' header"},
      {"3 3 1\n1 1 1\n", "t.mtx:1: missing '%%MatrixMarket' header"},
      {"%%MatrixMarket vector coordinate real general\n1 1 0\n", "t.mtx:1: object 'vector' is not supported (matrix only)"},
      {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
       "t.mtx:1: format 'array' is not supported (coordinate only)"},
      {"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
       "t.mtx:1: field 'complex' is not supported (real, integer or pattern: the values are single-precision reals)"},
      {"%%MatrixMarket matrix coordinate quaternion general\n1 1 0\n",
       "t.mtx:1: field 'quaternion' is not supported (real, integer or pattern)"},
      {"%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n",
       "t.mtx:1: symmetry 'hermitian' is not supported (general, symmetric or skew-symmetric; hermitian matrices are "
       "complex)"},
      {"%%MatrixMarket matrix coordinate real\n1 1 0\n",
       "t.mtx:1: symmetry '' is not supported (general, symmetric or skew-symmetric)"},
      {"%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n",
       "t.mtx:1: a pattern matrix cannot be skew-symmetric (the format has no values to negate)"},
      {"%%MatrixMarket matrix coordinate real general\n% only comments\n", "t.mtx:3: missing size line 'rows cols entries'"},
      {"%%MatrixMarket matrix coordinate real general\n3 x 2\n", "t.mtx:2: column count 'x' is not a non-negative integer"},
      {"%%MatrixMarket matrix coordinate real general\n%\n3 3\n", "t.mtx:3: missing entry count"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1 4\n1 1 1\n", "t.mtx:2: size line has more than 3 numbers"},
      {"%%MatrixMarket matrix coordinate real general\n4294967296 3 0\n",
       "t.mtx:2: row count 4294967296 is larger than 4294967295"},
      {"%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n",
       "t.mtx:2: a symmetric matrix must be square; the size line declares 3 x 4"},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n4 3 0\n",
       "t.mtx:2: a skew-symmetric matrix must be square; the size line declares 4 x 3"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n",
       "t.mtx:3: truncated: the size line declares 2 entries, the file has 1"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 1\n% c\n2 3 1\n",
       "t.mtx:5: more entries than the 1 the size line declares"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n0 2 1\n", "t.mtx:4: index 0 in a 1-based Matrix Market file"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n", "t.mtx:3: row index 4 > row count 3"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 5 1\n", "t.mtx:3: column index 5 > column count 3"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 -3 1\n",
       "t.mtx:3: column index '-3' is not a non-negative integer"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n2\n", "t.mtx:3: missing column index"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 99999999999 1\n",
       "t.mtx:3: column index 99999999999 is larger than 4294967295"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2\n", "t.mtx:3: missing value (field is real)"},
      {"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2\n", "t.mtx:3: missing value (field is integer)"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 abc\n", "t.mtx:3: value 'abc' is not a number"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 1.5.2\n", "t.mtx:3: value '1.5.2' is not a number"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 1e\n", "t.mtx:3: value '1e' is not a number"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 0x1p3\n", "t.mtx:3: value '0x1p3' is not a number"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 1,5\n", "t.mtx:3: value '1,5' is not a number"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 nan\n",
       "t.mtx:3: value 'nan' is not finite (NaN and infinity are refused)"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 -Infinity\n",
       "t.mtx:3: value '-Infinity' is not finite (NaN and infinity are refused)"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 inf\n",
       "t.mtx:3: value 'inf' is not finite (NaN and infinity are refused)"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 1e39\n",
       "t.mtx:3: value '1e39' is outside the float range (|v| <= 3.40282347e38)"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 -1e999\n",
       "t.mtx:3: value '-1e999' is outside the float range (|v| <= 3.40282347e38)"},
      {"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 1.5\n",
       "t.mtx:3: value '1.5' is not an integer (field is integer)"},
      {"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 -\n",
       "t.mtx:3: value '-' is not an integer (field is integer)"},
      {"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 1e3\n",
       "t.mtx:3: value '1e3' is not an integer (field is integer)"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 1.0 2.0\n",
       "t.mtx:3: extra field '2.0' after the value (field is real)"},
      {"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2 1.0\n",
       "t.mtx:3: extra field '1.0' after the column index (field is pattern)"},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n",
       "t.mtx:4: diagonal entry (2, 2) in a skew-symmetric file (its diagonal is zero)"},
      {"%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n2 1 1\n3 3 1\n1 3 1\n",
       "t.mtx:5: entry (1, 3) is above the diagonal, line 3's is below it: a symmetric file stores one triangle only"},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n1 2 1\n% c\n3 1 1\n",
       "t.mtx:5: entry (3, 1) is below the diagonal, line 3's is above it: a skew-symmetric file stores one triangle "
       "only"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 3e38\n1 1 3e38\n",
       "t.mtx: the duplicate entries at (1, 1) sum to 6e+38, outside the float range"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK(mm_error(c.text) == c.error);
  }
  CHECK(mm_error(real + "2 2 1\n1 1 1\n") == "no error");  // the table's own head is valid
}

TEST_CASE("a Matrix Market file whose row sum would overflow single precision is refused, naming the row") {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n";
  // every value is within the float range, but row 2's |values| sum to about 6e38: with |x_j| up
  // to 1, y = A x could overflow in float
  CHECK(mm_error(head + "3 3 3\n1 1 1\n2 1 3e38\n2 3 -3e38\n") ==
        "t.mtx: row 2: the sum of |values| (6.00000001e+38) would overflow single precision (at most "
        "1.70141183e+38, half the float range: y = A x sums it in float, with |x_j| <= 1)");
  // the fuzz target's input (regress_row_sum_overflow.mtx): its float SpMV overflowed to infinity
  CHECK(mm_error(head + "1 3 2\n1 2 3e38\n1 3 3e38\n")
            .rfind("t.mtx: row 1: the sum of |values| (6.00000001e+38) would", 0) == 0);
  // a mirrored entry counts in its row: row 1 gets (1, 2) and (1, 3) from the lower triangle
  CHECK(mm_error("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1e38\n3 1 1e38\n")
            .rfind("t.mtx: row 1: the sum of |values| (1.99999994e+38) would", 0) == 0);
  // a file names its path
  temp_dir dir;
  const std::string path = dir.file("big.mtx", head + "2 2 2\n2 1 2e38\n2 2 2e38\n");
  CHECK(input_error_of([&] { return cdpkit::load_matrix(path); }).rfind(path + ": row 2: the sum of |values|", 0) == 0);

  // up to the bound (2^127) a row is accepted, and its float product stays finite
  CHECK(cdpkit::max_matrix_row_magnitude == 0x1p127);
  const auto m =
      cdpkit::parse_matrix_market_matrix(head + "2 3 4\n1 1 8.5e37\n1 3 -8.5e37\n2 2 1.7e38\n2 3 1\n", "m.mtx");
  CHECK(m.values == floats{8.5e37f, -8.5e37f, 1.7e38f, 1.0f});
  const std::vector<float> x = cdpkit::make_spmv_vector(m.cols);
  for (std::uint32_t r = 0; r < m.rows; ++r) {
    CAPTURE(r);
    float y = 0;
    for (auto k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) y += m.values[k] * x[m.col_indices[k]];
    CHECK(std::isfinite(y));
  }
  // and just past it, refused
  CHECK(mm_error(head + "1 2 2\n1 1 1.7e38\n1 2 1e37\n")
            .rfind("t.mtx: row 1: the sum of |values| (1.79999998e+38) would", 0) == 0);
}

TEST_CASE("a Matrix Market matrix declaring more than its text or the host can hold is refused before allocating") {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n";
  SUBCASE("an entry count larger than the file") {
    CHECK(mm_error(head + "3 3 1000000000000\n1 2 1\n") ==
          "t.mtx:2: the size line declares 1000000000000 entries; a file of 70 bytes holds at most 17 (an entry "
          "line takes at least 4 bytes, \"1 1\\n\")");
  }
  SUBCASE("dimensions far beyond the entry count, unless allowed") {
    CHECK(mm_error(head + "4294967295 4294967295 0\n") ==
          "t.mtx:2: the size line declares 4294967295 x 4294967295 for 0 entries, more rows or columns than the "
          "1048576 a matrix file may have (max(2^20, 16 x entries)); dimensions this sparse are accepted only with "
          "matrix_read_options::allow_sparse_dimensions");
    CHECK(mm_error(head + "% c\n3 2000000 1\n1 2 1\n").rfind("t.mtx:3: the size line declares 3 x 2000000 for 1 entry,", 0) ==
          0);
    CHECK(cdpkit::parse_matrix_market_matrix(head + "1048576 2 0\n", "m.mtx").rows == 1u << 20);
    cdpkit::matrix_read_options sparse;
    sparse.allow_sparse_dimensions = true;
    const auto m = cdpkit::parse_matrix_market_matrix(head + "3000000 4 1\n2999999 4 1\n", "m.mtx", sparse);
    CHECK(m.rows == 3000000u);
    CHECK(m.row_length(2999998) == 1u);
    sparse.max_dimension = 2999999;
    CHECK(mm_error(head + "3000000 4 1\n1 1 1\n", sparse) ==
          "t.mtx:2: the size line declares 3000000 x 4, more than the 2999999 rows or columns allowed "
          "(matrix_read_options::max_dimension)");
  }
  SUBCASE("too little host memory for the entries and the CSR") {
    cdpkit::matrix_read_options sparse;
    sparse.allow_sparse_dimensions = true;
    const host_memory_cap cap(1ull << 30);
    CHECK(cdpkit::matrix_market_host_bytes(4000000000u, 2) > (1ull << 30));
    CHECK(mm_error(head + "4000000000 4000000000 1\n1 1 1\n", sparse)
              .rfind("t.mtx (4000000000 x 4000000000, 1 entries) needs", 0) == 0);
  }
  CHECK(cdpkit::matrix_market_host_bytes(10, 5) == 32u * 5 + 12u * 11);
  CHECK(cdpkit::matrix_market_host_bytes(UINT64_MAX, 1) == UINT64_MAX);
}

TEST_CASE("Matrix Market matrix files are read from regular files under the size limit only") {
  temp_dir dir;
  const std::string path = dir.file("m.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 2 4\n");
  const auto m = cdpkit::read_matrix_market_matrix(path);
  CHECK(m.name == path);
  CHECK(m.values == floats{4});
  cdpkit::matrix_read_options small;
  small.max_file_bytes = 50;
  CHECK(input_error_of([&] { return cdpkit::read_matrix_market_matrix(path, small); }) ==
        path + ": the file is 58 bytes, more than the 50 bytes a matrix file may have "
               "(matrix_read_options::max_file_bytes)");
  CHECK(input_error_of([&] { return cdpkit::read_matrix_market_matrix(dir.path().string()); }) ==
        dir.path().string() + ": is a directory, not a regular file; matrices are read from regular files only");
  const std::string fifo = (dir.path() / "fifo.mtx").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(cdpkit::load_matrix(fifo), contains(fifo + ": is a FIFO, not a regular file"), cdpkit::input_error);
  CHECK_THROWS_WITH_AS(cdpkit::read_matrix_market_matrix("/no/such.mtx"), doctest::Contains("/no/such.mtx: cannot open"),
                       cdpkit::input_error);
  const std::string bad = dir.file("bad.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 2 x\n");
  CHECK(input_error_of([&] { return cdpkit::load_matrix(bad); }) == bad + ":3: value 'x' is not a number");
}
