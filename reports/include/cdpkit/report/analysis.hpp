#pragma once
// cdpkit/report/analysis.hpp — every number the report shows, computed once per profile:
// underutilized bands of child grid sizes, the launch tree aggregated by depth and site,
// baselines and ratios, the comparison of several profiles, and the findings. The renderers
// (cdpkit/report/html.hpp) only render what analyze() and compare() return.

#include <cdpkit/report/profile.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit::report {

/// A band of the child-size histograms in which the GPU is underused.
struct band {
  std::string name;         ///< "smaller than a warp", ...
  std::string histogram;    ///< "work", "threads" or "blocks": which histogram it cuts
  std::uint64_t limit = 0;  ///< values below it are in the band
  int last_bucket = -1;     ///< buckets [0, last_bucket] of that histogram are in the band
  std::uint64_t launches_in = 0, launches_total = 0;
  double launch_share = 0;  ///< launches_in / launches_total (0 without launches)
  /// Share of launched threads in the band, from the launch records in the profile (exact when
  /// it holds all of them, else from that sample); unset without records of the site.
  std::optional<double> thread_share;
  bool thread_share_sampled = false;
};

/// Last log2 bucket b whose whole range [2^b, 2^(b+1)) lies below `limit` (-1 if none).
int last_bucket_below(std::uint64_t limit);

/// The three bands of a launch site: grids with fewer work items than a warp has lanes (threads
/// when the site gives no work counts), fewer blocks than the GPU has SMs, and fewer threads than
/// the GPU holds at full occupancy (sms * max_threads_per_sm). Precondition: `site` is one of
/// `trace`'s sites.
std::vector<band> underutilized_bands(const site_profile& site, const trace_profile& trace,
                                      std::uint64_t sms, std::uint64_t max_threads_per_sm = 2048);

/// One cell of the launch tree: the launches of `site` at `depth`.
struct tree_node {
  int depth = 0;
  int site = 0;
  std::string site_name;
  std::uint64_t launches = 0;
  double mean_work = 0;  ///< mean work items (threads where no work was given) per launch
  /// Launches whose execution was measured (cdpkit-profile/3), their summed and longest
  /// durations, and how long at least one of them ran (the union of their windows), in ns.
  std::uint64_t timed = 0;
  std::uint64_t exec_ns_sum = 0;
  std::uint64_t exec_ns_max = 0;
  std::uint64_t busy_ns = 0;
};
/// parent (site at depth - 1, or -1 for the host-launched grid, -2 when the parent's record is
/// not in the profile) -> child site at depth.
struct tree_edge {
  int depth = 0;
  int parent_site = -1;
  int child_site = 0;
  std::uint64_t launches = 0;
};
struct launch_tree {
  std::vector<tree_node> nodes;  ///< sorted by depth, then site
  std::vector<tree_edge> edges;
  bool from_sample = false;      ///< the profile holds only some records: the tree covers those
};
/// Aggregate the launched records of a trace by depth and site.
launch_tree build_launch_tree(const trace_profile& trace);

/// The measured child grids over time: the run's window (from its first request to the last
/// child's end) cut into `bins` equal bins, and in each the time-averaged number of child grids
/// and of their blocks in flight (a grid counts all its blocks while its window is open: an upper
/// bound on the blocks resident).
struct child_timeline {
  std::uint64_t t0_ns = 0;        ///< the first request (or start) of the run
  std::uint64_t span_ns = 0;      ///< to the last measured end
  std::uint64_t timed_grids = 0;  ///< measured child grids
  std::vector<double> grids;      ///< per bin
  std::vector<double> blocks;     ///< per bin
  double busy_share = 0;          ///< share of the span with at least one child grid running
};
/// Unset when the trace holds no measured child grid (a /2 or /1 profile, or nothing launched).
/// Precondition: bins >= 1.
std::optional<child_timeline> build_child_timeline(const trace_profile& trace, int bins = 240);

/// Index of the run that is the baseline for `run`: among the runs of the same algorithm and
/// input, the one whose variant is the run's `baseline` (unset when there is none), or the first
/// of them when the run names no baseline. Precondition: run < p.runs.size().
std::optional<std::size_t> baseline_of(const profile& p, std::size_t run);

enum class severity { info, warning, problem };
struct finding {
  severity level = severity::info;
  std::string text;
};
/// Plain sentences with numbers and advice, most important first (analyze() computes them once;
/// this is analyze(p).findings).
std::vector<finding> findings(const profile& p);

/// A launch site with requests, and its bands.
struct site_analysis {
  const site_profile* site = nullptr;
  std::vector<band> bands;  ///< underutilized_bands(); empty when nothing was launched
};

/// What the report shows of one run.
struct run_analysis {
  std::optional<std::size_t> baseline;  ///< baseline_of()
  std::optional<double> speedup;        ///< baseline ms / this run's ms (when both are known)
  double throughput = 0;                ///< work / ms / 1e6 (0 without a time)
  std::vector<site_analysis> sites;     ///< the trace's sites with requests, in the trace's order
  std::optional<launch_tree> tree;      ///< when the trace launched child grids
  std::optional<child_timeline> timeline;  ///< when child grids were measured
  std::vector<std::uint64_t> launches_by_depth;  ///< every site's depth_hist summed, to the deepest (>= 1)
  std::uint64_t pending_ceiling = 0;    ///< min(device limit, budget)
};

/// The analysis of one profile: per run, then the findings.
struct profile_analysis {
  const profile* source = nullptr;  ///< the profile analysed (it must outlive the analysis)
  std::vector<run_analysis> runs;   ///< one per p.runs entry
  std::vector<finding> findings;
};
/// Everything the report shows of `p`, computed once. Precondition: `p` outlives the result.
profile_analysis analyze(const profile& p);

/// One row of the comparison of several profiles: a (algorithm, input, variant) and its time in
/// each profile, with the change against the first.
struct comparison_row {
  std::string algorithm, input, variant;
  std::vector<std::optional<double>> ms;     ///< per profile (the last run of the key wins)
  std::vector<std::optional<double>> delta;  ///< (ms - first) / first, per profile; [0] unset
};
/// The rows for every key found in any profile, sorted by key.
std::vector<comparison_row> compare(const std::vector<profile>& profiles);

}  // namespace cdpkit::report
