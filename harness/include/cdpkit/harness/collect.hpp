#pragma once
// cdpkit/harness/collect.hpp — the samples' --collect option and what they print and write of
// the collector's measurements (cdpkit/profiling/collector.hpp).

#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/profiling/collector.hpp>
#include <cdpkit/profiling/profile.hpp>

#include <CLI/CLI.hpp>

#include <ostream>
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

/// What every sample takes beside its own options: the launch layer's (add_launch_options),
/// --profile and what to collect (add_collect_options).
struct sample_options {
  launch_config launch;
  std::string profile_path;  ///< --profile; empty: no profile
  collect_spec collect;
};

/// Add --pending-limit, --pending-budget, --profile, --collect and --pm-interval-us to `app`,
/// written into `o` when parsed.
void add_sample_options(CLI::App& app, sample_options& o);

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

/// Per result (any type with a `measurement m` member), its row in the collector table, named
/// name_of(result).
template <class Results, class NameOf>
std::vector<collected_row> collected_rows(const Results& results, NameOf name_of) {
  std::vector<collected_row> rows;
  for (const auto& r : results) rows.push_back({name_of(r), &r.m});
  return rows;
}

/// Write the sample's profile (the current profile version) to `path`: the collector's parts and notes, and
/// one run per result, described by row_of(result) (its benchmark row) with the result's trace
/// and collected measurements, and the pictures given (the report shows them); then say where it
/// went on `out`. Throws what
/// profile_document::write throws (an unwritable path: cdpkit::input_error).
template <class Results, class RowOf>
void write_sample_profile(std::ostream& out, const std::string& path, const std::string& sample,
                          const profiling::collector& collector, const Results& results, RowOf row_of,
                          const std::vector<schema::picture>& pictures = {}) {
  profiling::profile_document doc(sample, profiling::device_json());
  doc.set_collector(collector.profile());
  for (const auto& r : results) doc.add_run(to_run_info(row_of(r)), r.m.trace, r.m.collected);
  for (const auto& p : pictures) doc.add_picture(p);
  doc.write(path);
  out << "profile written to " << path << "\n";
}

/// The end of a sample's run, after its own table: the collector's table (rows named by
/// name_of(result)), the launch layer's pending-launch limit, budget and depth cap, and, when
/// --profile was given, the profile (write_sample_profile, with the pictures). Throws what
/// write_sample_profile throws.
template <class Results, class NameOf, class RowOf>
void finish_sample(std::ostream& out, const std::string& sample, const sample_options& opts,
                   const launch_runtime& runtime, const profiling::collector& collector, const Results& results,
                   NameOf name_of, RowOf row_of, const std::vector<schema::picture>& pictures = {}) {
  print_collected(out, collected_rows(results, name_of), collector);
  out << "pending launch limit " << runtime.pending_launch_limit() << ", budget " << runtime.pending_budget()
      << ", depth cap " << runtime.config().max_depth << "\n";
  if (!opts.profile_path.empty()) write_sample_profile(out, opts.profile_path, sample, collector, results, row_of, pictures);
}

/// The accounting in words: "exact", "+6 device runtime", "-5 missing!", "+40 unaccounted!".
std::string accounting_text(const schema::cta_accounting& a);

}  // namespace cdpkit::harness
