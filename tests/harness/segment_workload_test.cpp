// The segment workloads of loop_to_child's programs and benchmarks (cdpkit/harness/
// segment_workload.hpp), host only: each distribution's shape (power-law lengths past the exact
// table drawn from the law's tail, up to 2^32 - 1), the same offsets for a seed, and bad
// parameters or totals past 2^32 - 1 items refused.

#include <doctest/doctest.h>

#include <cdpkit/error.hpp>
#include <cdpkit/harness/segment_workload.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

std::vector<std::uint32_t> lengths_of(const std::vector<std::uint32_t>& offsets) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) out.push_back(offsets[i + 1] - offsets[i]);
  return out;
}

}  // namespace

TEST_CASE("segment generators are deterministic and have the requested shape") {
  cdpkit::harness::segment_params p;
  p.num_segments = 100000;
  SUBCASE("power law") {
    p.dist = cdpkit::harness::segment_dist::power_law;
    const auto a = cdpkit::harness::make_segment_offsets(p);
    CHECK(a == cdpkit::harness::make_segment_offsets(p));
    const auto len = lengths_of(a);
    REQUIRE(len.size() == p.num_segments);
    std::size_t ones = 0, big = 0;
    for (auto l : len) {
      CHECK(l >= 1);
      CHECK(l <= p.max_len);
      ones += l == 1;
      big += l > 1000;
    }
    // P(1) = 1 / zeta(2) ~ 0.61 for alpha = 2; P(> 1000) ~ 0.0006
    CHECK(ones == doctest::Approx(0.61 * p.num_segments).epsilon(0.02));
    CHECK(big > 10);
    CHECK(big < 200);
    p.seed = 43;
    CHECK(a != cdpkit::harness::make_segment_offsets(p));
  }
  SUBCASE("giant") {
    p.dist = cdpkit::harness::segment_dist::giant;
    p.giant_len = 12345;
    const auto len = lengths_of(cdpkit::harness::make_segment_offsets(p));
    CHECK(len[p.num_segments / 2] == 12345u);
    CHECK(*std::max_element(len.begin(), len.begin() + p.num_segments / 2) <= 3u);
  }
  SUBCASE("empty and equal") {
    p.dist = cdpkit::harness::segment_dist::empty;
    CHECK(cdpkit::harness::make_segment_offsets(p).back() == 0u);
    p.dist = cdpkit::harness::segment_dist::equal;
    p.equal_len = 7;
    CHECK(cdpkit::harness::make_segment_offsets(p).back() == 700000u);
  }
  SUBCASE("uniform") {
    p.dist = cdpkit::harness::segment_dist::uniform;
    p.mean_len = 10;
    const auto offsets = cdpkit::harness::make_segment_offsets(p);
    CHECK(offsets.back() == doctest::Approx(10.0 * p.num_segments).epsilon(0.02));
  }
  SUBCASE("zero segments") {
    p.num_segments = 0;
    CHECK(cdpkit::harness::make_segment_offsets(p) == std::vector<std::uint32_t>{0});
  }
}

TEST_CASE("segment generators reject bad parameters and oversized totals") {
  cdpkit::harness::segment_params p;
  p.alpha = 1.0;
  CHECK_THROWS_WITH_AS(cdpkit::harness::make_segment_offsets(p), doctest::Contains("alpha"),
                       cdpkit::input_error);
  p = {};
  p.dist = cdpkit::harness::segment_dist::equal;
  p.num_segments = 1u << 20;
  p.equal_len = 1u << 13;  // 2^33 items
  CHECK_THROWS_WITH_AS(cdpkit::harness::make_segment_offsets(p), doctest::Contains("2^32-1 items"),
                       cdpkit::input_error);
}

TEST_CASE("power-law lengths past the exact table come from the law's tail, up to 2^32 - 1") {
  // The exact table stops at 2^20; past it lengths come from the continuous tail. alpha 1.05 puts
  // about 15% of the mass in (2^20, 2^26]: with 256 segments, about 39 land there.
  cdpkit::harness::segment_params p;
  p.num_segments = 256;
  p.alpha = 1.05;
  p.max_len = 1u << 26;
  auto offsets = cdpkit::harness::make_segment_offsets(p);
  REQUIRE(offsets.size() == 257u);
  unsigned in_tail = 0;
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
    const std::uint32_t len = offsets[i + 1] - offsets[i];
    CHECK(len >= 1u);
    CHECK(len <= p.max_len);
    in_tail += len > (1u << 20);
  }
  CHECK(in_tail >= 15u);  // binomial(256, 0.15): mean 38.6, sd 5.7
  CHECK(in_tail <= 65u);
  // max_len 2^32 - 1 needs no table of that size (a 32 GiB table before)
  p.num_segments = 4096;
  p.max_len = 0xffffffffu;
  p.alpha = 3.0;  // a light tail, so that the total stays below 2^32
  offsets = cdpkit::harness::make_segment_offsets(p);
  CHECK(offsets.size() == 4097u);
  p.dist = cdpkit::harness::segment_dist::uniform;
  p.mean_len = 0x90000000u;
  CHECK_THROWS_WITH_AS(cdpkit::harness::make_segment_offsets(p), doctest::Contains("mean_len"),
                       cdpkit::input_error);
}
