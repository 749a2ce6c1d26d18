// The launched child grids of a trace: the launch tree by depth and site, and the measured child
// grids over time (child_timeline).

#include "detail.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace cdpkit::report {

using detail::add_window;
using detail::union_ns;
using detail::window;

launch_tree build_launch_tree(const trace_profile& trace) {
  launch_tree t;
  t.from_sample = trace.records.size() < trace.records_requested;
  std::map<std::uint32_t, const launch_record*> by_id;
  for (const auto& r : trace.records) by_id[r.id] = &r;
  std::map<std::pair<int, int>, std::pair<std::uint64_t, double>> nodes;  // (depth, site) -> (n, work)
  std::map<std::pair<int, int>, std::vector<window>> windows;
  std::map<std::tuple<int, int, int>, std::uint64_t> edges;              // (depth, parent, child)
  for (const auto& r : trace.records) {
    if (r.outcome != static_cast<std::uint8_t>(launch_outcome::launched)) continue;
    auto& n = nodes[{r.depth, r.site}];
    ++n.first;
    n.second += r.work > 0 ? r.work : 1.0 * r.blocks * r.child_block_threads;
    if (has_execution_time(r)) windows[{r.depth, r.site}].push_back({r.start_ns, r.end_ns});
    int parent_site = -1;
    if (r.parent != no_record) {
      const auto it = by_id.find(r.parent);
      parent_site = it != by_id.end() ? it->second->site : -2;  // -2: parent record not kept
    }
    ++edges[{r.depth, parent_site, r.site}];
  }
  for (const auto& [key, value] : nodes) {
    tree_node n;
    n.depth = key.first;
    n.site = key.second;
    n.site_name = trace.site_name(key.second);
    n.launches = value.first;
    n.mean_work = value.second / static_cast<double>(value.first);
    const auto w = windows.find(key);
    if (w != windows.end()) {
      n.timed = w->second.size();
      for (const auto& [a, b] : w->second) {
        n.exec_ns_sum = b - a > ~0ull - n.exec_ns_sum ? ~0ull : n.exec_ns_sum + (b - a);  // saturating
        n.exec_ns_max = std::max(n.exec_ns_max, b - a);
      }
      n.busy_ns = union_ns(w->second);
    }
    t.nodes.push_back(std::move(n));
  }
  for (const auto& [key, count] : edges)
    t.edges.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), count});
  return t;
}

std::optional<child_timeline> build_child_timeline(const trace_profile& trace, int bins) {
  child_timeline tl;
  std::uint64_t t0 = ~0ull, t1 = 0;
  std::vector<window> windows;
  for (const auto& r : trace.records) {
    t0 = std::min(t0, r.t_ns);
    if (!has_execution_time(r)) continue;
    t0 = std::min(t0, r.start_ns);
    t1 = std::max(t1, r.end_ns);
    windows.push_back({r.start_ns, r.end_ns});
  }
  if (windows.empty() || t1 <= t0) return std::nullopt;
  tl.t0_ns = t0;
  tl.span_ns = t1 - t0;
  tl.timed_grids = windows.size();
  const auto n = static_cast<std::size_t>(std::max(1, bins));
  tl.grids.assign(n, 0.0);
  tl.blocks.assign(n, 0.0);
  const double width = static_cast<double>(tl.span_ns) / static_cast<double>(n);
  // each window adds its overlap with every bin it touches, weighted by the bin's width
  for (const auto& r : trace.records) {
    if (!has_execution_time(r)) continue;
    const double a = static_cast<double>(r.start_ns - t0), b = static_cast<double>(r.end_ns - t0);
    add_window(tl.grids, a, b, width, 1.0);
    add_window(tl.blocks, a, b, width, static_cast<double>(r.blocks));
  }
  for (double v : tl.blocks) tl.mean_blocks += v / static_cast<double>(n);
  tl.busy_share = static_cast<double>(union_ns(windows)) / static_cast<double>(tl.span_ns);
  return tl;
}

}  // namespace cdpkit::report
