// The Chrome trace-event export of the launch records (opens in Perfetto / chrome://tracing).
//
// A process per run. A child grid whose execution was measured (cdpkit-profile/3: its first
// block's start and its last block's end) is a slice of its real duration; the slices of one
// depth are packed onto lanes ("depth d, lane k") so that no two slices of a track overlap, and a
// flow goes from the parent's slice, at the moment it asked, to the child's. Every request is
// also an instant on its depth's "requests" track (refused ones included: their outcome says
// why). A profile without execution windows (cdpkit-profile/2 or /1) gets the older picture: a
// 1 µs slice per request on a track per depth, flows between them.

#include <cdpkit/report/html.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace cdpkit::report {

namespace {

using json = nlohmann::json;

double micros(std::uint64_t ns, std::uint64_t t0) { return static_cast<double>(ns - t0) / 1000.0; }

json record_args(const launch_record& rec) {
  const char* outcome = schema::name(static_cast<launch_outcome>(rec.outcome));
  json args = {{"id", rec.id},
               {"blocks", rec.blocks},
               {"child_block_threads", rec.child_block_threads},
               {"work", rec.work},
               {"stream", schema::name(static_cast<stream_kind>(rec.stream))},
               {"outcome", outcome},
               {"error", rec.error}};
  if (has_execution_time(rec)) args["duration_ns"] = rec.end_ns - rec.start_ns;
  return args;
}

void thread_meta(json& events, int pid, int tid, const std::string& name, int order) {
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid},
                    {"args", {{"name", name}}}});
  events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", tid},
                    {"args", {{"sort_index", order}}}});
}

/// cdpkit-profile/2 and /1: a 1 µs slice per request, a track per depth.
void legacy_run(json& events, int pid, const trace_profile& t) {
  std::uint64_t t0 = t.records.front().t_ns;
  for (const auto& rec : t.records) t0 = std::min(t0, rec.t_ns);
  std::map<std::uint32_t, const launch_record*> by_id;
  for (const auto& rec : t.records) by_id[rec.id] = &rec;
  for (const auto& rec : t.records) {
    const double ts = micros(rec.t_ns, t0);
    events.push_back({{"name", t.site_name(rec.site)},
                      {"cat", schema::name(static_cast<launch_outcome>(rec.outcome))},
                      {"ph", "X"}, {"ts", ts}, {"dur", 1}, {"pid", pid}, {"tid", rec.depth},
                      {"args", record_args(rec)}});
    if (rec.parent == no_record) continue;
    const auto it = by_id.find(rec.parent);
    if (it == by_id.end()) continue;
    events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "s"}, {"id", rec.id},
                      {"ts", micros(it->second->t_ns, t0)}, {"pid", pid}, {"tid", it->second->depth}});
    events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "f"}, {"bp", "e"}, {"id", rec.id},
                      {"ts", ts}, {"pid", pid}, {"tid", rec.depth}});
  }
  std::set<int> depths;
  for (const auto& rec : t.records) depths.insert(rec.depth);
  for (int d : depths) thread_meta(events, pid, d, "depth " + std::to_string(d), d);
}

/// cdpkit-profile/3: measured child grids as slices on non-overlapping lanes.
void timed_run(json& events, int pid, const trace_profile& t) {
  std::uint64_t t0 = t.records.front().t_ns;
  for (const auto& rec : t.records) {
    t0 = std::min(t0, rec.t_ns);
    if (has_execution_time(rec)) t0 = std::min(t0, rec.start_ns);
  }
  // tracks: "depth d requests" first, then its lanes; tids are assigned in that order
  std::set<int> depths;
  for (const auto& rec : t.records) depths.insert(rec.depth);
  // lanes per depth: measured records by start, each to the first lane free by then
  std::map<int, std::vector<const launch_record*>> measured;
  for (const auto& rec : t.records)
    if (has_execution_time(rec)) measured[rec.depth].push_back(&rec);
  std::map<std::uint32_t, std::pair<int, int>> lane_of;  // record id -> (depth, lane)
  std::map<int, int> lanes_at;                           // depth -> lanes used
  for (auto& [depth, recs] : measured) {
    std::stable_sort(recs.begin(), recs.end(), [](const launch_record* a, const launch_record* b) {
      return a->start_ns < b->start_ns;
    });
    std::vector<std::uint64_t> free_at;  // per lane: the end of its last slice
    for (const launch_record* r : recs) {
      std::size_t lane = 0;
      while (lane < free_at.size() && free_at[lane] > r->start_ns) ++lane;
      if (lane == free_at.size()) free_at.push_back(0);
      free_at[lane] = r->end_ns;
      lane_of[r->id] = {depth, static_cast<int>(lane)};
    }
    lanes_at[depth] = static_cast<int>(free_at.size());
  }
  std::map<std::pair<int, int>, int> tid_of;  // (depth, lane) -> tid; lane -1: the requests
  int next_tid = 0;
  for (int d : depths) {
    tid_of[{d, -1}] = next_tid;
    thread_meta(events, pid, next_tid, "depth " + std::to_string(d) + " requests", next_tid);
    ++next_tid;
    for (int lane = 0; lane < lanes_at[d]; ++lane) {
      tid_of[{d, lane}] = next_tid;
      thread_meta(events, pid, next_tid,
                  "depth " + std::to_string(d) + ", lane " + std::to_string(lane), next_tid);
      ++next_tid;
    }
  }
  std::map<std::uint32_t, const launch_record*> by_id;
  for (const auto& rec : t.records) by_id[rec.id] = &rec;
  for (const auto& rec : t.records) {
    const char* outcome = schema::name(static_cast<launch_outcome>(rec.outcome));
    const std::string site = t.site_name(rec.site);
    events.push_back({{"name", "request " + site}, {"cat", outcome}, {"ph", "i"}, {"s", "t"},
                      {"ts", micros(rec.t_ns, t0)}, {"pid", pid},
                      {"tid", tid_of.at({rec.depth, -1})}, {"args", record_args(rec)}});
    if (!has_execution_time(rec)) continue;
    const int tid = tid_of.at(lane_of.at(rec.id));
    const double ts = micros(rec.start_ns, t0);
    events.push_back({{"name", site}, {"cat", outcome}, {"ph", "X"}, {"ts", ts},
                      {"dur", static_cast<double>(rec.end_ns - rec.start_ns) / 1000.0},
                      {"pid", pid}, {"tid", tid}, {"args", record_args(rec)}});
    // parent -> child: from the parent's slice when it asked, to the child's start
    if (rec.parent == no_record) continue;
    const auto it = by_id.find(rec.parent);
    if (it == by_id.end() || !has_execution_time(*it->second)) continue;
    events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "s"}, {"id", rec.id},
                      {"ts", micros(rec.t_ns, t0)}, {"pid", pid},
                      {"tid", tid_of.at(lane_of.at(rec.parent))}});
    events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "f"}, {"bp", "e"},
                      {"id", rec.id}, {"ts", ts}, {"pid", pid}, {"tid", tid}});
  }
}

}  // namespace

std::string render_chrome_trace(const std::vector<profile>& profiles) {
  json events = json::array();
  int pid = 0;
  for (const auto& p : profiles) {
    for (const auto& r : p.runs) {
      ++pid;
      if (!r.trace || r.trace->records.empty()) continue;
      const trace_profile& t = *r.trace;
      events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid},
                        {"args", {{"name", r.variant + " on " + r.input + " (" + p.path + ")"}}}});
      const bool timed = std::any_of(t.records.begin(), t.records.end(),
                                     [](const launch_record& rec) { return has_execution_time(rec); });
      if (timed) timed_run(events, pid, t);
      else legacy_run(events, pid, t);
    }
  }
  return json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}
             .dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n";
}

}  // namespace cdpkit::report
