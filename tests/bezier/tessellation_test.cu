// Bézier tessellation on the GPU: every loop-to-child variant computes the CPU reference's points
// (within reference_tolerance; the same inline code, so in practice bit for bit) at the host's
// offsets, on random curves with a power-law tail of point counts, straight and extreme curves,
// at caps that bite and a set without curves; the points' buffer is poisoned with NaN before
// every checked run; bad options are refused.

#include <doctest/doctest.h>

#include "support/gpu.hpp"

#include <cdpkit/bezier.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/tessellation.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace {

using cdpkit::loop_policy_kind;

void check_all_variants(const cdpkit::curve_set& set, float tolerance, std::uint32_t cap) {
  const auto expected = cdpkit::tessellate_reference(set, tolerance, cap);
  const auto offsets = cdpkit::tessellation_offsets(set, tolerance, cap);
  const float abs_tol = cdpkit::reference_tolerance(set);
  const cdpkit::device_curves dc(set);
  cdpkit::tessellation_engine engine(dc);
  cdpkit::tessellation_options o;
  o.tolerance = tolerance;
  o.cap = cap;
  (void)engine.run(o);  // sizes the points' buffer, so that every checked run starts from NaN
  for (const loop_policy_kind v : cdpkit::all_loop_policy_kinds()) {
    CAPTURE(set.name);
    CAPTURE(cap);
    CAPTURE(std::string(cdpkit::to_string(v)));
    o.variant = v;
    engine.poison_points();
    const auto stats = engine.run(o);
    CHECK(stats.points == expected.size());
    CHECK(engine.offsets() == offsets);
    std::string first;
    CHECK_MESSAGE(cdpkit::tessellation_mismatches(engine.points(), expected, abs_tol, &first) == 0u, first);
  }
}

}  // namespace

TEST_CASE("every tessellation variant computes the reference's points at the host's offsets" * CDPKIT_GPU_CASE) {
  check_all_variants(cdpkit::make_random_curves(20000, 3), cdpkit::default_tolerance, cdpkit::default_point_cap);
  check_all_variants(cdpkit::make_random_curves(20000, 3), cdpkit::default_tolerance, 16);  // the cap bites
  check_all_variants(cdpkit::make_straight_curves(5000, 4), cdpkit::default_tolerance, cdpkit::default_point_cap);
  check_all_variants(cdpkit::make_extreme_curves(64, 5), cdpkit::default_tolerance, cdpkit::default_point_cap);
  check_all_variants(cdpkit::curve_set{{}, "no curves", {}}, cdpkit::default_tolerance, cdpkit::default_point_cap);
}

TEST_CASE("a tessellation engine refuses a bad tolerance, cap or block size, and a set past 2^32 points" *
          CDPKIT_GPU_CASE) {
  const cdpkit::device_curves dc(cdpkit::make_random_curves(100, 1));
  cdpkit::tessellation_engine engine(dc);
  cdpkit::tessellation_options o;
  o.tolerance = 0.0f;
  CHECK_THROWS_WITH_AS(engine.run(o), doctest::Contains("tolerance must be finite and positive"), cdpkit::input_error);
  o.tolerance = 0.1f;
  o.cap = 1;
  CHECK_THROWS_WITH_AS(engine.run(o), doctest::Contains("cap must be in [2,"), cdpkit::input_error);
  o.cap = 64;
  o.child_block_threads = 48;
  CHECK_THROWS_AS(engine.run(o), cdpkit::input_error);
  CHECK(engine.points().empty());  // no run has succeeded
  // 5,000 extreme curves at the largest cap: 5,000 * 2^20 points, past 2^32
  const cdpkit::device_curves big(cdpkit::make_extreme_curves(5000, 2));
  cdpkit::tessellation_engine big_engine(big);
  cdpkit::tessellation_options huge;
  huge.tolerance = 1e-6f;
  huge.cap = cdpkit::max_point_cap;
  CHECK_THROWS_WITH_AS(big_engine.run(huge), doctest::Contains("at most 2^32 - 1"), cdpkit::input_error);
  // the same past a sized buffer (a run whose total is read back after its points), then a run that fits
  cdpkit::tessellation_options small;
  small.cap = 16;
  CHECK_NOTHROW(big_engine.run(small));
  CHECK_THROWS_WITH_AS(big_engine.run(huge), doctest::Contains("at most 2^32 - 1"), cdpkit::input_error);
  CHECK(big_engine.points().empty());  // the last run failed
  CHECK(big_engine.run(small).points == cdpkit::tessellate_reference(cdpkit::make_extreme_curves(5000, 2),
                                                                      small.tolerance, small.cap)
                                           .size());
}

TEST_CASE("an engine whose points outgrow its buffer grows it and stays exact, and fewer points reuse it" *
          CDPKIT_GPU_CASE) {
  const cdpkit::curve_set set = cdpkit::make_random_curves(20000, 7);
  const cdpkit::device_curves dc(set);
  const float abs_tol = cdpkit::reference_tolerance(set);
  for (const loop_policy_kind v : {loop_policy_kind::thresholded, loop_policy_kind::block_aggregated}) {
    cdpkit::tessellation_engine engine(dc);  // (each variant's own: each takes the growing run)
    // few points (a coarse tolerance), many (the default: the buffer grows), few again (it fits)
    for (const float tolerance : {2.0f, cdpkit::default_tolerance, 2.0f}) {
      CAPTURE(tolerance);
      CAPTURE(std::string(cdpkit::to_string(v)));
      cdpkit::tessellation_options o;
      o.tolerance = tolerance;
      o.variant = v;
      engine.poison_points();
      const auto stats = engine.run(o);
      const auto expected = cdpkit::tessellate_reference(set, tolerance, o.cap);
      CHECK(stats.points == expected.size());
      CHECK(engine.offsets() == cdpkit::tessellation_offsets(set, tolerance, o.cap));
      std::string first;
      CHECK_MESSAGE(cdpkit::tessellation_mismatches(engine.points(), expected, abs_tol, &first) == 0u, first);
    }
  }
}

TEST_CASE("tessellation options give the loop-to-child policy of their variant") {
  cdpkit::tessellation_options o;
  CHECK(o.policy().kind == loop_policy_kind::block_aggregated);
  CHECK(o.policy().auto_threshold());
  o.variant = loop_policy_kind::warp_aggregated;
  o.threshold = 100;
  o.child_block_threads = 128;
  CHECK(o.policy().kind == loop_policy_kind::warp_aggregated);
  CHECK(o.policy().threshold == 100u);
  CHECK(o.policy().child_block_threads == 128u);
  o.variant = loop_policy_kind::flat_balanced;
  CHECK_FALSE(o.policy().uses_cdp());
}

// Skipped without a GPU, without cdpkit::fonts (FreeType) or without the font (one decorator: a second skip would
// override the first).
TEST_CASE("every tessellation variant computes the reference's points on every glyph of DejaVu Sans" *
          doctest::skip(!cdpkit_test::gpu_available() ||
                        !cdpkit_test::requirement_met(cdpkit::font_reader_available(),
                                                      "the program does not link cdpkit::fonts (FreeType): the font cases are skipped") ||
                        !cdpkit_test::input_present("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                                                    "fonts-dejavu-core"))) {
  const auto set = cdpkit::load_curves("font:/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:64");
  REQUIRE(set.curves.size() > 10000u);
  check_all_variants(set, cdpkit::default_tolerance, cdpkit::default_point_cap);
}
