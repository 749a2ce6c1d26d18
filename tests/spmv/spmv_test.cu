// SpMV on the GPU: every variant (the loop-to-child policies over the rows and cuSPARSE) equals the
// double-precision CPU reference within spmv_mismatches' tolerance, on power-law, banded, graph and
// Matrix Market matrices, on rows far longer than a block and on empty rows, and counts every
// nonzero exactly once (values and x of 1: exact sums); y is poisoned with NaN before every run;
// thresholds as given; bad arguments refused.

#include <doctest/doctest.h>

#include "support/gpu.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/profiling/trace_session.hpp>
#include <cdpkit/sparse_matrix.hpp>
#include <cdpkit/spmv.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace {

using cdpkit::spmv_variant;

/// Every variant equals the reference on `a` (x generated), run twice on one engine.
void check_all_variants(const cdpkit::csr_matrix& a, const std::string& name) {
  const std::vector<float> x = cdpkit::make_spmv_vector(a.cols, 7);
  const std::vector<double> expected = cdpkit::spmv_reference(a, x);
  const cdpkit::device_csr_matrix da(a);
  cdpkit::spmv_engine engine(da);
  engine.set_x(x);
  for (const spmv_variant v : cdpkit::all_spmv_variants()) {
    for (int rep = 0; rep < 2; ++rep) {  // y starts from zero at every run
      CAPTURE(name);
      CAPTURE(std::string(cdpkit::to_string(v)));
      CAPTURE(rep);
      cdpkit::spmv_options o;
      o.variant = v;
      engine.poison_y();  // NaN: a run that writes nothing, or misses a row, fails
      const cdpkit::spmv_stats stats = engine.run(o);
      std::string first;
      CHECK_MESSAGE(cdpkit::spmv_mismatches(a, x, engine.y(), expected, cdpkit::spmv_default_rel_tol, &first) == 0u,
                    first);
      CHECK(stats.threshold.has_value() == (cdpkit::uses_cdp(v) && a.nnz() > 0));  // no nonzeros: no run
    }
  }
}

/// Every variant computes y exactly on `a` with every value 1 and x = 1: every partial sum is an
/// integer below 2^24, exact in float in any order, so y[r] must be row r's length, bit for bit
/// (a lost or repeated product anywhere, even in a row of 2^20, is caught).
void check_all_variants_exactly(cdpkit::csr_matrix a, const std::string& name) {
  REQUIRE(a.max_row_length() < (1u << 24));
  a.values.assign(a.values.size(), 1.0f);
  const std::vector<float> x(a.cols, 1.0f);
  std::vector<float> expected(a.rows);
  for (std::uint32_t r = 0; r < a.rows; ++r) expected[r] = static_cast<float>(a.row_length(r));
  const cdpkit::device_csr_matrix da(a);
  cdpkit::spmv_engine engine(da);
  engine.set_x(x);
  for (const spmv_variant v : cdpkit::all_spmv_variants()) {
    CAPTURE(name);
    CAPTURE(std::string(cdpkit::to_string(v)));
    cdpkit::spmv_options o;
    o.variant = v;
    engine.poison_y();
    (void)engine.run(o);
    const std::vector<float> y = engine.y();
    std::uint64_t bad = 0;
    std::uint32_t first = a.rows;
    for (std::uint32_t r = 0; r < a.rows; ++r)
      if (!(y[r] == expected[r])) {
        ++bad;
        if (first == a.rows) first = r;
      }
    CHECK_MESSAGE(bad == 0u, "first wrong row " << first << ": " << (first < a.rows ? y[first] : 0.0f) << " for "
                                                 << (first < a.rows ? expected[first] : 0.0f));
  }
}

/// One row of `len` nonzeros among `rows` rows of one nonzero each (a hub row).
cdpkit::csr_matrix hub_matrix(std::uint32_t rows, std::uint32_t len) {
  cdpkit::csr_matrix a;
  a.rows = rows;
  a.cols = len;
  a.name = "hub";
  a.row_offsets.assign(1, 0);
  for (std::uint32_t r = 0; r < rows; ++r) {
    const std::uint32_t n = r == rows / 2 ? len : 1u;
    for (std::uint32_t k = 0; k < n; ++k) {
      a.col_indices.push_back(n == 1 ? r % len : k);
      a.values.push_back(cdpkit::matrix_pattern_value(r, k, 3));
    }
    a.row_offsets.push_back(static_cast<std::uint32_t>(a.col_indices.size()));
  }
  return a;
}

const std::filesystem::path shared_graphs = CDPKIT_SHARED_DATA_DIR "/graphs";

}  // namespace

TEST_CASE("every SpMV variant equals the double-precision reference on generated matrices" * CDPKIT_GPU_CASE) {
  check_all_variants(cdpkit::load_matrix("rmat:14"), "rmat:14");
  check_all_variants(cdpkit::load_matrix("rmat:12:64"), "rmat:12:64");
  check_all_variants(cdpkit::load_matrix("banded:20000:7"), "banded:20000:7");
  // a few rows far longer than a block's share: the child grids' case
  check_all_variants(cdpkit::load_matrix("giant:50000:3:40000"), "giant:50000:3:40000");
  check_all_variants(cdpkit::load_matrix("graph:grid:64"), "graph:grid:64");
}

TEST_CASE("every SpMV variant counts every nonzero exactly once, on a hub row of 2^20 nonzeros and a power-law "
          "matrix" * CDPKIT_GPU_CASE) {
  check_all_variants_exactly(hub_matrix(5000, 1u << 20), "a hub row of 2^20 nonzeros");
  check_all_variants_exactly(cdpkit::load_matrix("rmat:16"), "rmat:16");
}

TEST_CASE("every SpMV variant equals the reference on a hub row of 2^20 nonzeros, on empty rows and on no rows" *
          CDPKIT_GPU_CASE) {
  check_all_variants(hub_matrix(5000, 1u << 20), "a hub row of 2^20 nonzeros");
  cdpkit::csr_matrix empty_rows;
  empty_rows.rows = 1000;
  empty_rows.cols = 10;
  empty_rows.row_offsets.assign(1001, 0);
  empty_rows.name = "1000 empty rows";
  check_all_variants(empty_rows, "1000 empty rows");
  cdpkit::csr_matrix nothing;
  nothing.name = "no rows";
  check_all_variants(nothing, "no rows");
}

TEST_CASE("every SpMV variant equals the reference on a Matrix Market file, symmetric and expanded" *
          CDPKIT_GPU_CASE) {
  const std::string text =
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "% a small symmetric matrix with a dense last row\n"
      "5 5 9\n"
      "1 1 2.5\n2 1 -1\n3 2 0.25\n4 3 4\n5 1 1\n5 2 1\n5 3 1\n5 4 1\n5 5 -3.5\n";
  check_all_variants(cdpkit::parse_matrix_market_matrix(text, "inline.mtx"), "inline.mtx");
}

// Skipped without a GPU or without the shared data (one decorator: a second skip would override).
TEST_CASE("every SpMV variant equals the reference on the shared real graphs as pattern matrices" *
          doctest::skip(!cdpkit_test::gpu_available() ||
                        !cdpkit_test::input_present(shared_graphs / "facebook_combined.txt"))) {
  for (const char* file : {"facebook_combined.txt", "p2p-Gnutella08.txt"})
    check_all_variants(cdpkit::load_matrix("graph:" + (shared_graphs / file).string()), file);
}

TEST_CASE("an SpMV threshold given is the threshold used, and T = 2^31 launches nothing" * CDPKIT_GPU_CASE) {
  const cdpkit::csr_matrix a = cdpkit::load_matrix("rmat:13");
  const std::vector<float> x = cdpkit::make_spmv_vector(a.cols, 1);
  const auto expected = cdpkit::spmv_reference(a, x);
  const cdpkit::device_csr_matrix da(a);
  cdpkit::spmv_engine engine(da);
  engine.set_x(x);
  auto& rt = cdpkit::default_runtime();
  for (const spmv_variant v : {spmv_variant::thresholded, spmv_variant::warp_aggregated, spmv_variant::block_aggregated}) {
    for (const std::uint32_t t : {0u, 64u, 1u << 31}) {
      CAPTURE(std::string(cdpkit::to_string(v)));
      CAPTURE(t);
      cdpkit::profiling::trace_session session(rt);
      cdpkit::spmv_options o;
      o.variant = v;
      o.threshold = t;
      const auto stats = engine.run(o, rt);
      CHECK(stats.threshold == t);
      CHECK_FALSE(stats.threshold_auto);
      CHECK(cdpkit::spmv_mismatches(a, x, engine.y(), expected) == 0u);
      const auto trace = session.collect();
      std::uint64_t launched = 0;
      for (const auto& site : trace.sites) launched += site.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)];
      if (t == (1u << 31)) CHECK(launched == 0u);
      if (t == 0u) CHECK(launched > 0u);
    }
  }
}

TEST_CASE("an SpMV engine refuses an x of the wrong size, a run without x, a bad block size and a broken matrix" *
          CDPKIT_GPU_CASE) {
  const cdpkit::csr_matrix a = cdpkit::load_matrix("banded:100:2");
  const cdpkit::device_csr_matrix da(a);
  cdpkit::spmv_engine engine(da);
  CHECK_THROWS_WITH_AS(engine.run({}), doctest::Contains("no x given"), cdpkit::input_error);
  CHECK_THROWS_WITH_AS(engine.set_x(std::vector<float>(99)), doctest::Contains("x has 99 entries, the matrix 100"),
                       cdpkit::input_error);
  CHECK(engine.y().empty());
  cdpkit::spmv_options o;
  o.variant = spmv_variant::warp_aggregated;
  o.child_block_threads = 100;
  engine.set_x(std::vector<float>(100, 1.0f));
  CHECK_THROWS_AS(engine.run(o), cdpkit::input_error);
  o.variant = spmv_variant::cusparse;  // checked whatever the variant
  CHECK_THROWS_AS(engine.run(o), cdpkit::input_error);
  CHECK(engine.y().empty());  // no run has succeeded
  cdpkit::csr_matrix broken = a;
  broken.col_indices[3] = 100;  // a column past the last
  CHECK_THROWS_AS(cdpkit::device_csr_matrix{broken}, cdpkit::input_error);
}

TEST_CASE("SpMV variants are named, parsed and refused by name") {
  for (const spmv_variant v : cdpkit::all_spmv_variants())
    CHECK(cdpkit::parse_spmv_variant(cdpkit::to_string(v)) == v);
  CHECK(cdpkit::all_spmv_variants().size() == 7u);
  CHECK_THROWS_WITH_AS(cdpkit::parse_spmv_variant("csr_vector"),
                       doctest::Contains("unknown SpMV variant 'csr_vector' (choose one of: serial_loop"),
                       cdpkit::input_error);
  CHECK_FALSE(cdpkit::uses_cdp(spmv_variant::cusparse));
  CHECK_FALSE(cdpkit::uses_cdp(spmv_variant::flat_balanced));
  CHECK(cdpkit::uses_cdp(spmv_variant::block_aggregated));
  cdpkit::spmv_options o;
  o.variant = spmv_variant::thresholded;
  o.threshold = 5;
  CHECK(o.policy().kind == cdpkit::loop_policy_kind::thresholded);
  CHECK(o.policy().threshold == 5u);
}
