#pragma once
// cdpkit/harness/collect.hpp — the samples' --collect option and what they print and write of
// the collector's measurements (cdpkit/profiling/collector.hpp).

#include <cdpkit/harness/measure.hpp>
#include <cdpkit/profiling/collector.hpp>
#include <cdpkit/profiling/profile.hpp>

#include <CLI/CLI.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace cdpkit::harness {

/// The command-line form of the collector's options.
struct collect_spec {
  std::string parts = "trace";  ///< --collect
  double interval_us = 20.0;    ///< --pm-interval-us
  /// The options (throws cdpkit::input_error for a bad --collect).
  [[nodiscard]] profiling::collect_options options() const;
};

/// Add --collect none|trace|metrics|timeline|all (comma lists too) and --pm-interval-us.
void add_collect_options(CLI::App& app, collect_spec& spec);

/// One variant's measurement as the collector table shows it.
struct collected_row {
  std::string variant;
  const measurement* m = nullptr;
};

/// When anything beyond the trace was collected: per variant the probes' warp efficiency beside
/// the hardware's, the CTA accounting, the mean SM activity of the timeline, and each collection
/// run's time over the timed median (the overheads); then the collector's notes.
void print_collected(std::ostream& out, const std::vector<collected_row>& rows,
                     const profiling::collector& collector);

/// The accounting in words: "exact", "+6 device runtime", "-5 missing!", "+40 unaccounted!".
std::string accounting_text(const schema::cta_accounting& a);

}  // namespace cdpkit::harness
