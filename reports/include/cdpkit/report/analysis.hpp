#pragma once
// cdpkit/report/analysis.hpp — every number the report shows, computed once per profile:
// underutilized bands of child grid sizes (and whether they are a problem), the launch tree
// aggregated by depth and site, baselines and ratios, the hardware's view (warp
// efficiency ranked against the probes', the CTA accounting, SM activity over time, the cost of
// collecting), the comparison of several profiles, and the findings. The renderers
// (cdpkit/report/html.hpp) only render what analyze() and compare() return.

#include <cdpkit/report/profile.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
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
  /// A problem: launches in the band, and nothing shows the launched work filled the GPU
  /// (judge_bands()). An unflagged band is informational: shown, but no advice and no finding.
  bool flagged = true;
  std::string reason;  ///< why it is flagged or not, a phrase for the report
};

/// Last log2 bucket b whose whole range [2^b, 2^(b+1)) lies below `limit` (-1 if none).
int last_bucket_below(std::uint64_t limit);

/// The three bands of a launch site: grids with fewer work items than a warp has lanes (threads
/// when the site gives no work counts), fewer blocks than the GPU has SMs, and fewer threads than
/// the GPU holds at full occupancy (sms * max_threads_per_sm). Precondition: `site` is one of
/// `trace`'s sites.
std::vector<band> underutilized_bands(const site_profile& site, const trace_profile& trace,
                                      std::uint64_t sms, std::uint64_t max_threads_per_sm = 2048);

/// What a run shows of filling the GPU, for judge_bands().
struct fill_evidence {
  std::uint64_t sms = 1;
  /// Child blocks in flight, time-averaged over the child timeline (child_timeline::mean_blocks);
  /// unset without measured child grids.
  std::optional<double> mean_blocks;
  std::optional<double> mean_sm_active;  ///< the PM timeline's mean SM active % (sm_activity)
  bool fastest = false;                  ///< the fastest verified run of its algorithm and input
};
/// A run's fill counts as shown when its child blocks in flight averaged at least one per SM or
/// its SMs were active at least this share of the time (%).
inline constexpr double filled_sm_active_pct = 60.0;

/// Set each band's `flagged` and `reason`. A band without launches is not flagged. With timing
/// (measured child grids or a PM timeline) a band is flagged only where the run did not fill the
/// GPU: informational when the time-averaged child blocks in flight reached the SM count or the
/// mean SM active % reached filled_sm_active_pct. Without timing every band with launches is
/// flagged, except in the fastest run of its input.
void judge_bands(std::vector<band>& bands, const fill_evidence& evidence);

/// One cell of the launch tree: the launches of `site` at `depth`.
struct tree_node {
  int depth = 0;
  int site = 0;
  std::string site_name;
  std::uint64_t launches = 0;
  double mean_work = 0;  ///< mean work items (threads where no work was given) per launch
  /// Launches whose execution was measured, their summed and longest
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
  double mean_blocks = 0;         ///< blocks in flight, time-averaged over the span
  double busy_share = 0;          ///< share of the span with at least one child grid running
};
/// Unset when the trace holds no measured child grid (nothing launched, or no window recorded).
/// Precondition: bins >= 1.
std::optional<child_timeline> build_child_timeline(const trace_profile& trace, int bins = 240);

// --- the hardware's view ---------------------------------------------------------------------

/// The PM timeline metrics the report reads: the share of the SMs' cycles they were active, and
/// the share of the warp slots occupied (both % of peak, 0-100).
inline constexpr const char* sm_active_metric = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* warps_active_metric = "sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed";
/// SM active % below which a stretch of the run counts as idle.
inline constexpr double idle_sm_active_pct = 25.0;
/// Mean SM active % while child grids ran below which a CDP run's GPU was mostly idle (a finding).
inline constexpr double mostly_idle_sm_active_pct = 30.0;

/// One variant's warp efficiency by the probes and by the hardware, and its rank by each (1 =
/// most efficient, among the variants of its input with that value; ties share a rank).
struct efficiency_row {
  std::size_t run = 0;                  ///< index in profile::runs
  std::optional<double> probes;         ///< the trace summary's warp_efficiency
  std::optional<double> hardware;       ///< hardware_profile::warp_efficiency()
  std::optional<int> probe_rank, hardware_rank;
};
/// Two warp efficiencies (0-1) closer than this are a near-tie when the probes' and the
/// hardware's orders are compared pair by pair. The two measure different scopes (the probed
/// loops; every instruction of the run), so variants that differ by less than this in one of
/// them may fall either way in the other (e.g. BFS's child_per_thread, thresholded and
/// device_driver within 0.02 of each other by the hardware, 0.12 to 0.30 by the probes).
inline constexpr double rank_tie_tolerance = 0.05;

/// The variants of one algorithm and input, ranked by both warp efficiencies.
struct efficiency_ranking {
  std::string algorithm, input;
  std::vector<efficiency_row> rows;  ///< in the profile's order
  std::size_t compared = 0;          ///< variants with both values
  bool agree = true;                 ///< the compared variants rank in the same order by both
  /// Pairs of compared variants that both efficiencies separate by rank_tie_tolerance or more,
  /// in opposite orders: 0 means the orders differ, if at all, only among near-ties.
  std::size_t discordant = 0;
  std::optional<double> spearman;    ///< rank correlation over the compared (unset: fewer than 2, or all tied)
  std::string verdict;               ///< a sentence: "same order", "same order but for near-ties" or where they differ
};
/// The rankings for every algorithm and input where some run has hardware metrics (none when no
/// run has any).
std::vector<efficiency_ranking> rank_efficiencies(const profile& p);

/// The CTA accounting of one run, read: its status and the verdict in words.
struct accounting_analysis {
  schema::cta_accounting counts;
  schema::accounting_status status = schema::accounting_status::exact;
  std::int64_t difference = 0;         ///< counts.unaccounted(): CTAs
  std::int64_t thread_difference = 0;  ///< counts.unaccounted_threads()
  std::string verdict;                 ///< e.g. "every child grid accounted for"
  [[nodiscard]] bool problem() const noexcept;  ///< missing or extra CTAs
};
/// The accounting's status (schema::classify()) and its verdict: exact "every child grid
/// accounted for"; device_runtime the same and "N more CTAs are the CUDA device runtime's own (T
/// threads, 1 to 32 per CTA)"; driver_transfers the same and "N more CTAs beside the run's X
/// copies and memsets (the driver's kernels for some)"; missing_ctas "N child blocks the trace
/// counts never ran on the GPU"; extra_ctas "N CTAs that no launch accounts for" (threads where
/// the CTAs balance; singular for one).
accounting_analysis analyze_accounting(const schema::cta_accounting& counts);

/// Windows (start, end in ns) drawn as a strip under a time chart: packed into rows where few
/// enough, else binned into the grids in flight over time.
struct window_strip {
  struct bar {
    double start_ms = 0, end_ms = 0;  ///< from the chart's origin
    int row = 0;
  };
  std::uint64_t windows = 0;   ///< windows overlapping the chart's span
  std::vector<bar> bars;       ///< each window, when packed
  int rows = 0;
  std::vector<double> density; ///< windows in flight per equal bin, when too many to draw
};
/// At most this many rows and bars; past either, the strip is binned.
inline constexpr int max_strip_rows = 8;
inline constexpr std::size_t max_strip_bars = 2000;
/// The windows clipped to [t0, t0 + span): packed into rows (the lowest row free at each start)
/// when they fit max_strip_rows and max_strip_bars, else `bins` bins of windows in flight.
/// Precondition: bins >= 1.
window_strip pack_windows(std::vector<std::pair<std::uint64_t, std::uint64_t>> windows, std::uint64_t t0,
                          std::uint64_t span, int bins = 240);

/// One point of the SM activity series: a window (ms from the first sample) and its values (%).
struct activity_point {
  double start_ms = 0, end_ms = 0;
  double sm_active = 0;
  std::optional<double> warps_active;
};
/// The PM timeline of a run, read: the means, the idle share, and what ran when.
struct sm_activity {
  std::uint64_t t0_ns = 0;    ///< the first sample's start
  std::uint64_t span_ns = 0;  ///< to the last sample's end
  std::size_t samples = 0;
  /// The samples, or past max_activity_points their time-weighted means over that many equal bins.
  std::vector<activity_point> series;
  double mean_sm_active = 0;              ///< time-weighted over the samples, %
  std::optional<double> mean_warps_active;
  double idle_share = 0;                  ///< share of the sampled time with SM active < idle_sm_active_pct
  /// Mean SM active % over the time at least one child grid ran; unset without measured children.
  std::optional<double> in_flight_sm_active;
  window_strip children;                  ///< the run's measured child grids
  window_strip host_kernels;              ///< the run's host-launched kernels in the window
};
inline constexpr std::size_t max_activity_points = 600;
/// Unset without a timeline holding sm_active_metric and at least one sample. `host`: the
/// profile's host activity (null when none); its kernels with run == run.id are drawn.
std::optional<sm_activity> build_sm_activity(const run_profile& run, const schema::host_activity_profile* host);

/// A collection run's time over the untraced runs made the same way (run.collect.baseline_ms; the
/// timed median run.ms for profiles without it): 1.02 = 2% slower; unset when not made.
struct collect_overhead {
  std::optional<double> traced, metrics, timeline;
  [[nodiscard]] bool any() const noexcept { return traced || metrics || timeline; }
};
/// The run's collection times over its baseline (all unset when that is not positive).
collect_overhead collection_overhead(const run_profile& run);

/// A whole profile's (one sample program's) collection overhead: per part, the sum of its
/// collection runs' times over the sum of the same runs' baselines (as collection_overhead takes
/// them); the runs without that part, or without a positive baseline, are in neither sum. Runs of
/// a fraction of a millisecond show a part's fixed cost per run (its setup and copies) as a large
/// ratio of their own; the sums weigh each run by its time, as the sample's user waits for it.
struct sample_overhead {
  struct part {
    double ms = 0;           ///< the collection runs' times, summed
    double baseline_ms = 0;  ///< the same runs' baselines, summed
    std::size_t runs = 0;
    /// ms / baseline_ms; unset without runs.
    [[nodiscard]] std::optional<double> ratio() const {
      return runs > 0 && baseline_ms > 0 ? std::optional<double>(ms / baseline_ms) : std::nullopt;
    }
  };
  part traced, metrics, timeline;
  [[nodiscard]] bool any() const noexcept { return traced.runs + metrics.runs + timeline.runs > 0; }
};
sample_overhead sample_collection_overhead(const profile& p);

/// Index of the run that is the baseline for `run`: among the runs of the same algorithm and
/// input, the one whose variant is the run's `baseline` (unset when there is none), or the first
/// of them when the run names no baseline. O(n log n) in the runs (analyze() finds every run's at
/// once). Throws std::out_of_range when run >= p.runs.size().
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
  std::optional<accounting_analysis> accounting;  ///< when the hardware counted the CTAs
  std::optional<sm_activity> activity;  ///< when the run has a PM timeline
  collect_overhead overhead;
};

/// The analysis of one profile: per run, then the findings.
struct profile_analysis {
  const profile* source = nullptr;  ///< the profile analysed (it must outlive the analysis)
  std::vector<run_analysis> runs;   ///< one per p.runs entry
  std::vector<efficiency_ranking> efficiency;  ///< rank_efficiencies()
  sample_overhead overhead;                    ///< sample_collection_overhead()
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
