// From the patches' observations to the launch tree and the launch layer's records
// (cdpkit/children/grids.hpp).

#include <cdpkit/children/grids.hpp>

#include <cdpkit/schema/text.hpp>

#include "process_names.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>
#include <unordered_map>

namespace cdpkit::children {

namespace {

std::string demangle(const std::string& mangled) {
  return mangled.empty() ? "(unknown kernel)" : profiling::detail::demangled(mangled);
}

/// floor(log2 v), 0 for v = 0, capped at the last bucket.
std::size_t log2_bucket(std::uint64_t v) {
  std::size_t b = 0;
  while (v > 1) {
    v >>= 1;
    ++b;
  }
  return std::min<std::size_t>(b, trace_limits::log2_buckets - 1);
}

}  // namespace

linkage link_grids(const std::vector<grid_seen>& grids, const std::vector<launch_call>& calls, bool complete) {
  linkage out;
  out.call_of.assign(grids.size(), std::nullopt);
  out.grid_of.assign(calls.size(), std::nullopt);
  out.parent_of.assign(grids.size(), std::nullopt);
  out.depth.assign(grids.size(), 0);

  // the device-launched grids of each kernel in the order of their ids (the device runtime counts
  // them downward: -5, -6, ...), and the calls that launch each kernel by their time
  std::map<std::string, std::vector<std::size_t>> grids_of_kernel, calls_of_kernel;
  for (std::size_t g = 0; g < grids.size(); ++g)
    if (!grids[g].host_launched) {
      ++out.device_grids;
      grids_of_kernel[grids[g].kernel].push_back(g);
    }
  const auto in_id_order = [&](std::size_t a, std::size_t b) { return grids[a].gridid > grids[b].gridid; };
  for (auto& [kernel, list] : grids_of_kernel) std::sort(list.begin(), list.end(), in_id_order);
  for (std::size_t c = 0; c < calls.size(); ++c) calls_of_kernel[calls[c].child].push_back(c);
  for (auto& [kernel, list] : calls_of_kernel)
    std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
      const auto& x = calls[a];
      const auto& y = calls[b];
      return std::tie(x.t_ns, x.caller_gridid, x.offset) < std::tie(y.t_ns, y.caller_gridid, y.offset);
    });
  // one to one in those orders; calls left over are failed launches, grids left over go to the
  // calls whose kernel the code does not name
  std::vector<std::size_t> spare_grids;
  const auto pair_up = [&](const std::vector<std::size_t>& grid_list, const std::vector<std::size_t>* call_list) {
    const std::size_t n = call_list == nullptr ? 0 : call_list->size();
    for (std::size_t k = 0; k < grid_list.size(); ++k) {
      if (k >= n) {
        spare_grids.push_back(grid_list[k]);
        continue;
      }
      out.call_of[grid_list[k]] = (*call_list)[k];
      out.grid_of[(*call_list)[k]] = grid_list[k];
    }
  };
  for (auto& [kernel, list] : grids_of_kernel) {
    const auto calls_it = calls_of_kernel.find(kernel);
    pair_up(list, kernel.empty() || calls_it == calls_of_kernel.end() ? nullptr : &calls_it->second);
  }
  if (const auto unnamed = calls_of_kernel.find(std::string()); unnamed != calls_of_kernel.end()) {
    std::vector<std::size_t> left = std::move(spare_grids);
    spare_grids.clear();
    std::sort(left.begin(), left.end(), in_id_order);
    pair_up(left, &unnamed->second);
  }
  // What the clock proves, whatever the ids say: a grid comes from a call made before it started
  // (<=: %globaltimer ticks in steps). Walking a kernel's grids by their start, the calls made
  // before a grid started that no earlier grid surely took hold its call; where that is one call,
  // the pair is forced (the id order's pair is swapped for it); where they all come from one grid,
  // that grid is surely the parent. The proof needs every grid's call among the calls: no claim
  // where rows were lost (`complete`), a %gridid was read twice, a call names no kernel (it could
  // have made any grid), and none for a kernel with more grids than calls or a grid that started
  // before any candidate call (some call is missing there).
  out.parent_certain.assign(grids.size(), false);
  std::vector<std::optional<std::uint64_t>> one_caller(grids.size());
  bool provable = complete && calls_of_kernel.count(std::string()) == 0;
  {
    std::unordered_map<std::uint64_t, int> seen_ids;
    for (const auto& g : grids)
      if (++seen_ids[g.gridid] > 1) provable = false;
  }
  if (provable) {
    for (auto& [kernel, list] : grids_of_kernel) {
      const auto calls_it = calls_of_kernel.find(kernel);
      if (calls_it == calls_of_kernel.end() || list.size() > calls_it->second.size()) continue;
      const std::vector<std::size_t>& cs = calls_it->second;  // by time
      std::vector<std::size_t> by_start;
      for (std::size_t g : list)
        if (grids[g].first_ns != ~0ull) by_start.push_back(g);
      std::stable_sort(by_start.begin(), by_start.end(),
                       [&](std::size_t a, std::size_t b) { return grids[a].first_ns < grids[b].first_ns; });
      // the candidates: their number and whether they all come from one grid (kept as they grow)
      std::vector<std::size_t> open;
      bool mixed = false;
      std::size_t next = 0;
      std::vector<std::pair<std::size_t, std::size_t>> forced_here;  // (grid, its only candidate call)
      std::vector<std::pair<std::size_t, std::uint64_t>> one_caller_here;  // (grid, the grid every candidate came from)
      bool consistent = true;
      for (std::size_t g : by_start) {
        while (next < cs.size() && calls[cs[next]].t_ns <= grids[g].first_ns) {
          const std::size_t c = cs[next++];
          mixed = mixed || (!open.empty() && calls[c].caller_gridid != calls[open.front()].caller_gridid);
          open.push_back(c);
        }
        if (open.empty()) {  // a grid before any candidate: its call is missing; prove nothing here
          consistent = false;
          break;
        }
        if (open.size() == 1) {
          forced_here.push_back({g, open.front()});
          open.clear();
          mixed = false;
        } else if (!mixed) {
          one_caller_here.push_back({g, calls[open.front()].caller_gridid});
        }
      }
      if (!consistent) continue;
      for (const auto& [g, c] : forced_here) {  // the id order's pairs give way to the forced ones
        const auto old_call = out.call_of[g];
        const auto old_grid = out.grid_of[c];
        out.call_of[g] = c;
        out.grid_of[c] = g;
        if (old_grid && *old_grid != g) out.call_of[*old_grid] = old_call;  // the displaced grid takes g's old call
        if (old_call && *old_call != c) out.grid_of[*old_call] = old_grid != g ? old_grid : std::nullopt;
        out.parent_certain[g] = true;
      }
      out.forced_pairs += forced_here.size();
      for (const auto& [g, caller] : one_caller_here) one_caller[g] = caller;
    }
  }
  for (std::size_t g = 0; g < grids.size(); ++g)
    if (one_caller[g] && out.call_of[g] && calls[*out.call_of[g]].caller_gridid == *one_caller[g]) out.parent_certain[g] = true;

  for (std::size_t g = 0; g < grids.size(); ++g)
    if (!grids[g].host_launched && !out.call_of[g]) ++out.unexplained_grids;
  for (std::size_t c = 0; c < calls.size(); ++c)
    if (!out.grid_of[c]) ++out.failed_calls;
    else if (grids[*out.grid_of[c]].first_ns != ~0ull && grids[*out.grid_of[c]].first_ns < calls[c].t_ns) ++out.before_call;

  // parents and depths: a grid's parent is the grid that made its call
  std::unordered_map<std::uint64_t, std::size_t> by_id;
  for (std::size_t g = 0; g < grids.size(); ++g) by_id.emplace(grids[g].gridid, g);
  for (std::size_t g = 0; g < grids.size(); ++g) {
    if (!out.call_of[g]) continue;
    const auto it = by_id.find(calls[*out.call_of[g]].caller_gridid);
    if (it != by_id.end() && it->second != g) out.parent_of[g] = it->second;
  }
  for (std::size_t c = 0; c < calls.size(); ++c)
    if (by_id.find(calls[c].caller_gridid) == by_id.end()) ++out.unknown_parent;
  // depth: the parent's + 1, each grid's computed once (a chain of a million tail launches is
  // walked once, not once per grid); a chain that loops ends at the grid count
  constexpr std::uint32_t unknown = 0;
  std::vector<std::size_t> chain;
  for (std::size_t g = 0; g < grids.size(); ++g) {
    if (grids[g].host_launched || out.depth[g] != unknown) continue;
    chain.clear();
    std::size_t at = g;
    std::uint32_t base = 0;  // the depth of the first grid above the chain whose depth is known
    while (true) {
      chain.push_back(at);
      const auto p = out.parent_of[at];
      if (!p || grids[*p].host_launched) break;
      if (out.depth[*p] != unknown) {
        base = out.depth[*p];
        break;
      }
      if (chain.size() > grids.size()) break;  // a loop: malformed ids
      at = *p;
    }
    for (std::size_t k = chain.size(); k-- > 0;) out.depth[chain[k]] = base + static_cast<std::uint32_t>(chain.size() - k);
  }
  // a depth is certain where every parent up to a host grid is
  out.depth_certain.assign(grids.size(), false);
  std::vector<std::size_t> by_depth;
  for (std::size_t g = 0; g < grids.size(); ++g)
    if (!grids[g].host_launched) by_depth.push_back(g);
  std::stable_sort(by_depth.begin(), by_depth.end(), [&](std::size_t a, std::size_t b) { return out.depth[a] < out.depth[b]; });
  for (std::size_t g : by_depth) {
    const auto p = out.parent_of[g];
    out.depth_certain[g] = out.parent_certain[g] && p &&
                           (grids[*p].host_launched || (out.depth[*p] < out.depth[g] && out.depth_certain[*p]));
    out.certain_depths += out.depth_certain[g];
  }
  return out;
}

std::string site_name(const call_site& site) {
  if (site.caller.empty() && site.child.empty() && site.offset == 0) return "other launch sites";
  char offset[32];
  std::snprintf(offset, sizeof offset, "+0x%llx", static_cast<unsigned long long>(site.offset));
  std::string where = offset;
  if (!site.file.empty() && site.line > 0) {
    const auto slash = site.file.find_last_of('/');
    where = (slash == std::string::npos ? site.file : site.file.substr(slash + 1)) + ":" + std::to_string(site.line) + ", " + where;
  }
  return demangle(site.caller) + " \u2192 " + demangle(site.child) + " (" + where + ")";
}

trace_snapshot children_snapshot(const std::vector<grid_seen>& grids, const std::vector<launch_call>& calls,
                                 const linkage& link, std::vector<call_site>& sites) {
  trace_snapshot snap;
  snap.sites.assign(trace_limits::max_sites, site_counters{});
  sites.clear();

  // sites: the call instructions, the busiest first; beyond max_sites - 1 pooled in the last
  std::map<std::tuple<std::string, std::uint64_t, std::string>, std::pair<std::uint64_t, const launch_call*>> per_site;
  for (const auto& c : calls) {
    auto& [n, first] = per_site[{c.caller, c.offset, c.child}];
    if (n++ == 0) first = &c;
  }
  std::vector<std::pair<std::uint64_t, call_site>> ordered;
  for (const auto& [key, seen] : per_site)
    ordered.push_back({seen.first, {std::get<0>(key), std::get<2>(key), std::get<1>(key), seen.second->file, seen.second->line}});
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const std::size_t own = ordered.size() <= trace_limits::max_sites ? ordered.size() : trace_limits::max_sites - 1;
  std::map<std::tuple<std::string, std::uint64_t, std::string>, std::uint16_t> site_id;
  for (std::size_t k = 0; k < ordered.size(); ++k) {
    const auto& s = ordered[k].second;
    site_id[{s.caller, s.offset, s.child}] = static_cast<std::uint16_t>(std::min(k, own));
    if (k < own) sites.push_back(s);
  }
  if (own < ordered.size()) sites.push_back(call_site{});

  // records in time order; a record's parent is the record of the call that made the calling grid
  std::vector<std::size_t> order(calls.size());
  for (std::size_t c = 0; c < calls.size(); ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return calls[a].t_ns < calls[b].t_ns; });
  std::vector<std::uint32_t> record_of_call(calls.size(), no_record);
  for (std::size_t k = 0; k < order.size(); ++k) record_of_call[order[k]] = static_cast<std::uint32_t>(k);
  std::unordered_map<std::uint64_t, std::size_t> by_id;
  for (std::size_t g = 0; g < grids.size(); ++g) by_id.emplace(grids[g].gridid, g);

  for (const std::size_t c : order) {
    const launch_call& call = calls[c];
    const std::uint16_t site = site_id[{call.caller, call.offset, call.child}];
    site_counters& sc = snap.sites[site];
    launch_record r{};
    r.t_ns = call.t_ns;
    r.id = record_of_call[c];
    r.parent = no_record;
    r.site = site;
    std::uint32_t caller_depth = 0;
    if (const auto p = by_id.find(call.caller_gridid); p != by_id.end()) {
      caller_depth = link.depth[p->second];
      if (link.call_of[p->second]) r.parent = record_of_call[*link.call_of[p->second]];
    }
    r.depth = static_cast<std::uint16_t>(std::min<std::uint32_t>(caller_depth + 1, 0xffff));
    r.stream = static_cast<std::uint8_t>(stream_kind::not_observed);
    r.work = 0;
    r.error = 0;
    r.start_ns = no_time_start;
    r.end_ns = no_time_end;
    ++sc.requests;
    if (const auto g = link.grid_of[c]) {
      const grid_seen& grid = grids[*g];
      r.outcome = static_cast<std::uint8_t>(launch_outcome::launched);
      r.blocks = static_cast<std::uint32_t>(std::min<std::uint64_t>(grid.blocks, 0xffffffffu));
      r.child_block_threads = static_cast<std::uint32_t>(std::min<std::uint64_t>(grid.block_threads, 0xffffffffu));
      if (grid.first_ns != ~0ull && grid.last_ns != 0 && grid.first_ns <= grid.last_ns) {
        r.start_ns = grid.first_ns;
        r.end_ns = grid.last_ns;
      }
      const std::uint64_t threads = grid.blocks * grid.block_threads;
      ++sc.outcomes[static_cast<int>(launch_outcome::launched)];
      sc.child_threads += threads;
      sc.child_blocks += grid.blocks;
      if (threads < tiny_grid_work) ++sc.tiny_launches;
      ++sc.stream_launches[static_cast<int>(stream_kind::not_observed)];
      ++sc.threads_log2[log2_bucket(threads)];
      ++sc.blocks_log2[log2_bucket(grid.blocks)];
      ++sc.depth_hist[std::min<std::uint32_t>(r.depth, trace_limits::depth_buckets - 1)];
      sc.max_depth = std::max<unsigned>(sc.max_depth, r.depth);
    } else {
      r.outcome = static_cast<std::uint8_t>(launch_outcome::fallback_error);  // the code is not seen
      ++sc.outcomes[static_cast<int>(launch_outcome::fallback_error)];
      ++sc.error_overflow;
    }
    snap.records.push_back(r);
  }
  snap.totals.records_requested = snap.records.size();
  snap.refusals_recorded = false;
  return snap;
}

schema::profile children_profile(const collection& c, const std::string& program, const std::string& input,
                                 const schema::device_profile& device, const nlohmann::json& build) {
  schema::profile p;
  p.program = program;
  p.created = schema::utc_now_iso8601();
  p.device = device;
  p.build = build.is_object() ? build : nlohmann::json::object();

  const linkage link = link_grids(c.grids, c.calls, c.grids_lost == 0 && c.calls_lost == 0);
  std::vector<call_site> sites;
  trace_snapshot snap = children_snapshot(c.grids, c.calls, link, sites);
  snap.pending_launch_limit = static_cast<int>(std::min<std::uint64_t>(c.pending_limit, 0x7fffffff));
  schema::trace_naming naming;
  naming.site_name = [&](std::uint16_t id) { return id < sites.size() ? site_name(sites[id]) : "site." + std::to_string(id); };
  naming.role = [](std::uint16_t, const site_counters&) { return schema::site_role::launch; };
  naming.error_name = [](int code) { return "error " + std::to_string(code); };

  schema::run_profile run;
  run.id = 0;
  run.algorithm = "injected";
  run.variant = "children";
  run.input = input;
  run.checked = false;
  run.verified = false;
  std::uint64_t first = ~0ull, last = 0;
  for (const auto& g : c.grids) {
    if (g.first_ns != ~0ull) first = std::min(first, g.first_ns);
    last = std::max(last, g.last_ns);
  }
  run.ms = first != ~0ull && last > first ? static_cast<double>(last - first) / 1e6 : 0.0;
  run.params = {{"grids", c.grids.size()},
                {"device_grids", link.device_grids},
                {"launch_calls", c.calls.size()},
                {"certain_depths", link.certain_depths},
                {"readback_ms", c.readback_ms}};
  run.trace = schema::make_trace(snap, naming, snap.records.size());
  p.runs.push_back(std::move(run));

  schema::host_activity_profile host;
  for (const auto& g : c.grids)
    if (g.host_launched)
      // a grid without a seen exit (or whose times are out of order) gets a zero-length window at its start
      if (g.first_ns != ~0ull || g.last_ns != 0) {
        const std::uint64_t start = g.first_ns != ~0ull ? g.first_ns : g.last_ns;
        host.kernels.push_back({0, g.kernel, start, std::max(start, g.last_ns), g.blocks, g.block_threads});
      }
  std::sort(host.kernels.begin(), host.kernels.end(),
            [](const schema::activity_kernel& a, const schema::activity_kernel& b) { return a.start_ns < b.start_ns; });
  p.host_activity = std::move(host);

  schema::collector_profile col;
  col.requested = {"children"};
  col.notes = c.notes;
  const auto say = [&](const std::string& why) { col.notes.push_back("children: " + why); };
  say("every grid seen through the Compute Sanitizer API's block-entry and block-exit patches, every device "
      "launch through its call patch; counts per kernel and call site are exact; a grid's parent and depth are "
      "those of the call of its kernel in the same place by time as the grid by %gridid, exact where launches of "
      "one kernel do not overlap in time; host grids' times are on %globaltimer, the records' clock");
  if (link.failed_calls > 0)
    say(std::to_string(link.failed_calls) + " launch calls made no grid (failed launches; the last calls of the "
        "kernel they launch are taken as the failed ones, their error code is not seen)");
  if (link.unexplained_grids > 0)
    say(std::to_string(link.unexplained_grids) + " device-launched grids match no launch call: they are not in the trace");
  if (link.before_call > 0)
    say(std::to_string(link.before_call) + " grids started before the call they were linked to: those links are wrong");
  if (link.device_grids > 0)
    say("depths certain for " + std::to_string(link.certain_depths) + " of " + std::to_string(link.device_grids) +
        " device-launched grids (each parent up to a host grid proved by the clock: the only call made before the grid "
        "started that no other grid surely took, or all such calls made by one grid); the others are the pairing's "
        "best estimate");
  if (link.unknown_parent > 0)
    say(std::to_string(link.unknown_parent) + " launch calls came from grids whose blocks were not seen");
  std::uint64_t blocks = 0;
  for (const auto& g : c.grids) blocks += g.blocks;
  say("what the collection cost the program: " + std::to_string(blocks) + " blocks each entered and left a patch, " +
      std::to_string(c.calls.size()) + " launch calls were recorded, and the rows were read back " +
      std::to_string(c.readbacks) + " times in " + schema::fixed(c.readback_ms, 3) +
      " ms (bench/children_overhead_bench measures the whole cost against plain runs)");
  if (c.grids_lost > 0) say(std::to_string(c.grids_lost) + " grids did not fit the device buffer (CDPKIT_CHILDREN_GRIDS)");
  if (c.calls_lost > 0) say(std::to_string(c.calls_lost) + " launch calls did not fit the device buffer (CDPKIT_CHILDREN_GRIDS)");
  col.incomplete = c.incomplete;
  p.collector = std::move(col);
  return p;
}

}  // namespace cdpkit::children
