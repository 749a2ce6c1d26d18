// A launch runtime's configuration is checked as the runtime is made: invalid values, and a
// budget without headroom below an explicit pending-launch limit, are refused with the reason.

#include <doctest/doctest.h>

#include <cdpkit/error.hpp>
#include <cdpkit/launch.hpp>

TEST_CASE("a runtime rejects an invalid configuration with a clear error") {
  cdpkit::launch_config config;
  config.max_depth = -1;
  CHECK_THROWS_AS(cdpkit::launch_runtime{config}, cdpkit::input_error);
  config.max_depth = 4;
  config.pending_budget = -5;
  CHECK_THROWS_WITH_AS(cdpkit::launch_runtime{config},
                       doctest::Contains("pending_budget must be >= 0"), cdpkit::input_error);
}

TEST_CASE("a budget without headroom below an explicit limit is refused unless asked for") {
  cdpkit::launch_config config;
  config.pending_launch_limit = 2048;
  config.pending_budget = 2048;
  CHECK_THROWS_WITH_AS(cdpkit::launch_runtime{config}, doctest::Contains("leaves no headroom"),
                       cdpkit::input_error);
}
