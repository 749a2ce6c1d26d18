// The collector's table that the programs print after a run with --collect (cdpkit/harness/
// collect.hpp): probe and hardware warp efficiency side by side, the CTA accounting in words, SM
// activity, and each collection's overhead over the untraced runs.

#include <doctest/doctest.h>

#include <cdpkit/harness/collect.hpp>
#include <cdpkit/profiling/collector.hpp>
#include <cdpkit/profiling/pm_sampler.hpp>
#include <cdpkit/schema/profile.hpp>

#include <cstdlib>
#include <sstream>
#include <string>

TEST_CASE("the collector table shows probe and hardware efficiency, the accounting in words and the overheads") {
  namespace schema = cdpkit::schema;
  using cdpkit::harness::accounting_text;
  CHECK(accounting_text({100, 3200, 1, 100, 3200, 0, 0, 0, 0}) == "exact");
  CHECK(accounting_text({71, 2337, 1, 1, 128, 64, 64, 2048, 0}) == "+6 runtime");
  CHECK(accounting_text({71, 2337, 1, 1, 128, 64, 64, 2048, 2}) == "+6 copies");
  CHECK(accounting_text({60, 2000, 1, 1, 128, 64, 64, 2048, 0}) == "-5 missing!");
  CHECK(accounting_text({65, 2000, 1, 1, 128, 64, 64, 2048, 0}) == "-176 threads missing!");
  CHECK(accounting_text({80, 80 * 512, 1, 1, 128, 64, 64, 2048, 0}) == "+15 unaccounted!");

  cdpkit::harness::measurement m;
  m.time.median_ms = 2.0;
  m.summary.warp_efficiency = 0.5;
  schema::hardware_profile h;
  h.metrics = {{"smsp__inst_executed.sum", 100.0}, {"smsp__thread_inst_executed.sum", 1600.0}};
  h.accounting = schema::cta_accounting{71, 2337, 1, 1, 128, 64, 64, 2048, 0};
  m.collected.hardware = h;
  schema::timeline_profile t;
  t.interval_ns = 20000;
  t.metrics = cdpkit::profiling::default_pm_metrics();
  t.samples = {{0, 20000, {50.0, 10.0, 1.0}}, {20000, 40000, {0.0, 0.0, 0.0}}};
  m.collected.timeline = t;
  m.collected.times.traced_ms = 2.1;  // no baseline: over the timed median
  m.collected.times.metrics_ms = 3.0;
  setenv("CUDA_INJECTION64_PATH", "/x/libToolsInjection64.so", 1);  // metrics and timeline stand aside
  cdpkit::profiling::collector c(cdpkit::profiling::parse_collect("all"), /*quiet=*/true);
  unsetenv("CUDA_INJECTION64_PATH");
  std::ostringstream out;
  cdpkit::harness::print_collected(out, {{"thresholded", &m}}, c);
  const std::string text = out.str();
  CAPTURE(text);
  CHECK(text.find("Collected (CUPTI):") != std::string::npos);
  CHECK(text.find("thresholded") != std::string::npos);
  CHECK(text.find("0.500") != std::string::npos);       // probes
  CHECK(text.find("+6 runtime") != std::string::npos);  // accounting
  CHECK(text.find("25.0") != std::string::npos);        // SM active: (50 + 0) / 2
  CHECK(text.find("1.05x") != std::string::npos);       // traced run 2.1 ms over 2.0
  CHECK(text.find("1.50x") != std::string::npos);       // measured run 3.0 ms over 2.0
  CHECK(text.find("collector: metrics and timeline: Nsight Systems or Nsight Compute") != std::string::npos);
  // with a baseline (untraced runs made as the collection runs are), over it
  m.collected.times.baseline_ms = 2.5;
  std::ostringstream based;
  cdpkit::harness::print_collected(based, {{"thresholded", &m}}, c);
  CAPTURE(based.str());
  CHECK(based.str().find("0.84x") != std::string::npos);  // 2.1 over 2.5
  CHECK(based.str().find("1.20x") != std::string::npos);  // 3.0 over 2.5
  CHECK(based.str().find("\nwhole sample") == std::string::npos);  // one variant: no sum row
  // two variants: the whole sample's row sums each part's runs over the same runs' baselines
  cdpkit::harness::measurement slow = m;
  slow.collected.times = {};  // traced only, 10.5 ms over 10
  slow.collected.times.traced_ms = 10.5;
  slow.collected.times.baseline_ms = 10.0;
  std::ostringstream both;
  cdpkit::harness::print_collected(both, {{"thresholded", &m}, {"serial_loop", &slow}}, c);
  CAPTURE(both.str());
  const auto sum_row = both.str().find("\nwhole sample");
  REQUIRE(sum_row != std::string::npos);
  const std::string row = both.str().substr(sum_row + 1, both.str().find('\n', sum_row + 1) - sum_row - 1);
  CHECK(row.find("1.01x") != std::string::npos);  // traced: (2.1 + 10.5) / (2.5 + 10)
  CHECK(row.find("1.20x") != std::string::npos);  // measured: 3.0 over 2.5, the one run with it
}
