#pragma once
// cdpkit/report/analysis.hpp — the arithmetic behind the report: underutilized bands of child
// grid sizes, the launch tree aggregated by depth and site, baselines, and the findings.

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
/// the GPU holds at full occupancy (sms * max_threads_per_sm).
std::vector<band> underutilized_bands(const site_profile& site, const trace_profile& trace,
                                      std::uint64_t sms, std::uint64_t max_threads_per_sm = 2048);

/// One cell of the launch tree: the launches of `site` at `depth`.
struct tree_node {
  int depth = 0;
  int site = 0;
  std::string site_name;
  std::uint64_t launches = 0;
  double mean_work = 0;  ///< mean work items (threads where no work was given) per launch
};
/// parent (site at depth - 1, or -1 for the host-launched grid) -> child site at depth.
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

/// Index of the run that is the baseline for `run` (same algorithm and input): serial_loop for
/// loop_to_child, vertex_loop for bfs, else the first run of that input; unset when none.
std::optional<std::size_t> baseline_of(const profile& p, std::size_t run);

enum class severity { info, warning, problem };
struct finding {
  severity level = severity::info;
  std::string text;
};
/// Plain sentences with numbers and advice, most important first.
std::vector<finding> findings(const profile& p);

}  // namespace cdpkit::report
