// The Chrome trace-event export of the launch records (opens in Perfetto / chrome://tracing).
//
// A process per run. A child grid whose execution was measured (its first block's start and
// its last block's end) is a slice of its real duration; the slices of one
// depth are packed onto lanes ("depth d, lane k"; up to 1,024, then one overflow track) so that
// no two slices of a track overlap, and a flow goes from the parent's slice, at the moment it
// asked, to the child's. Every recorded request is also an instant on its depth's "requests"
// track (refused ones too where the run recorded them, launch_config::record_refusals: their
// outcome says why). A run whose records have no execution windows gets the plain picture,
// marked as such (its process name, and a first instant that says so): a 1 µs marker slice per
// launched grid at its request, an instant per request refused or failed, a track per depth,
// flows between them. The export
// adds, on the same time base (the run's earliest event), the PM samples as counter tracks ("SM
// active %", "warps active %") and the run's host-launched kernels as slices on a track of their
// own.

#include <cdpkit/report/analysis.hpp>
#include <cdpkit/report/html.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <utility>
#include <vector>

namespace cdpkit::report {

namespace {

using json = nlohmann::json;

double micros(std::uint64_t ns, std::uint64_t t0) { return static_cast<double>(ns - t0) / 1000.0; }

/// Lanes per depth at most; the slices past them share one "overflow" track, where they may
/// overlap (only a profile with more concurrent grids than that gets one).
constexpr int max_lanes = 1024;

/// The export's events, each serialized as it is made: the trace's memory is its text alone, not
/// a JSON tree of every event (about 13 KB per launch record, and a copy of it at the end: a
/// million records took 12.7 GB). The text is what json::dump wrote for the whole document.
class event_sink {
 public:
  void push_back(const json& event) {
    if (events_++ > 0) text_ += ',';
    text_ += event.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  /// The whole document (its keys in json's order), a newline at the end; the sink is spent.
  [[nodiscard]] std::string document() && {
    text_ += "]}\n";
    return std::move(text_);
  }

 private:
  std::string text_ = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  std::size_t events_ = 0;
};

/// A flow id unique in the whole export: the run's process and the record's index (or id).
std::uint64_t flow_id(int pid, std::size_t index) {
  return (static_cast<std::uint64_t>(pid) << 32) | static_cast<std::uint64_t>(index);
}


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

void thread_meta(event_sink& events, int pid, int tid, const std::string& name, int order) {
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid},
                    {"args", {{"name", name}}}});
  events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", tid},
                    {"args", {{"sort_index", order}}}});
}

/// The timed host-launched kernels of `run` in the profile's host activity;
/// kernels CUPTI did not time (those its range profiler measured: start and end 0) are left out.
std::vector<const schema::activity_kernel*> host_kernels_of(const profile& p, const run_profile& run) {
  std::vector<const schema::activity_kernel*> out;
  if (p.host_activity)
    for (const auto& k : p.host_activity->kernels)
      if (k.run && *k.run == run.id && k.end_ns != 0) out.push_back(&k);
  return out;
}

/// The run's time origin (ns, the trace's clock: CUPTI's when the run has a timeline): the earliest request, child start, PM sample or
/// host kernel start, so that every event of the run has a time at or after 0.
std::uint64_t run_origin(const run_profile& r, const std::vector<const schema::activity_kernel*>& kernels) {
  std::uint64_t t0 = ~0ull;
  if (r.trace)
    for (const auto& rec : r.trace->records) {
      t0 = std::min(t0, rec.t_ns);
      if (has_execution_time(rec)) t0 = std::min(t0, rec.start_ns);
    }
  if (r.timeline && !r.timeline->samples.empty()) t0 = std::min(t0, r.timeline->samples.front().start_ns);
  for (const auto* k : kernels) t0 = std::min(t0, k->start_ns);
  return t0;
}

/// Records without execution windows: a 1 µs marker slice per launched grid at its request, an
/// instant per request refused or failed (it never ran), a track per depth; the first event says
/// that no slice is a duration.
void unmeasured_run(event_sink& events, int pid, const trace_profile& t, std::uint64_t t0) {
  events.push_back({{"name", "no measured child windows: each launched grid is a 1 us marker at its request, "
                             "not its duration"},
                    {"cat", "warning"}, {"ph", "i"}, {"s", "p"}, {"ts", 0}, {"pid", pid}, {"tid", 0}});
  std::map<std::uint32_t, const launch_record*> by_id;
  for (const auto& rec : t.records) by_id[rec.id] = &rec;
  for (const auto& rec : t.records) {
    const double ts = micros(rec.t_ns, t0);
    const bool ran = static_cast<launch_outcome>(rec.outcome) == launch_outcome::launched;
    json event = {{"name", t.site_name(rec.site)},
                  {"cat", schema::name(static_cast<launch_outcome>(rec.outcome))},
                  {"ts", ts}, {"pid", pid}, {"tid", rec.depth}, {"args", record_args(rec)}};
    if (ran) {
      event["ph"] = "X";
      event["dur"] = 1;
    } else {
      event["ph"] = "i";
      event["s"] = "t";
    }
    events.push_back(std::move(event));
    // a flow from the parent's marker to a grid that ran (a refused request is an instant: none)
    if (!ran || rec.parent == no_record) continue;
    const auto it = by_id.find(rec.parent);
    if (it == by_id.end()) continue;
    events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "s"}, {"id", flow_id(pid, rec.id)},
                      {"ts", micros(it->second->t_ns, t0)}, {"pid", pid}, {"tid", it->second->depth}});
    events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "f"}, {"bp", "e"}, {"id", flow_id(pid, rec.id)},
                      {"ts", ts}, {"pid", pid}, {"tid", rec.depth}});
  }
  std::set<int> depths;
  for (const auto& rec : t.records) depths.insert(rec.depth);
  for (int d : depths) thread_meta(events, pid, d, "depth " + std::to_string(d), d);
}

/// Measured child grids as slices on non-overlapping lanes.
void timed_run(event_sink& events, int pid, const trace_profile& t, std::uint64_t t0) {
  const std::size_t n = t.records.size();
  std::set<int> depths;
  for (const auto& rec : t.records) depths.insert(rec.depth);
  // lanes per depth: measured records by start, each to the lowest lane free by then
  // (O(n log n): a heap of busy lanes by end, a heap of free lane numbers)
  std::map<int, std::vector<std::size_t>> measured;  // depth -> record indices
  for (std::size_t k = 0; k < n; ++k)
    if (has_execution_time(t.records[k])) measured[t.records[k].depth].push_back(k);
  std::vector<int> lane_of(n, -1);  // record index -> lane at its depth (max_lanes: overflow)
  std::map<int, int> lanes_at;      // depth -> lanes used
  std::map<int, bool> overflow_at;  // depth -> the overflow track is used
  for (auto& [depth, idx] : measured) {
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      return t.records[a].start_ns < t.records[b].start_ns;
    });
    using busy = std::pair<std::uint64_t, int>;  // (end, lane)
    std::priority_queue<busy, std::vector<busy>, std::greater<>> running;
    std::priority_queue<int, std::vector<int>, std::greater<>> free_lanes;
    int used = 0;
    for (const std::size_t k : idx) {
      const launch_record& r = t.records[k];
      while (!running.empty() && running.top().first <= r.start_ns) {
        free_lanes.push(running.top().second);
        running.pop();
      }
      int lane = max_lanes;
      if (!free_lanes.empty()) {
        lane = free_lanes.top();
        free_lanes.pop();
      } else if (used < max_lanes) {
        lane = used++;
      }
      if (lane < max_lanes) running.push({r.end_ns, lane});
      else overflow_at[depth] = true;
      lane_of[k] = lane;
    }
    lanes_at[depth] = used;
  }
  // tracks: "depth d requests" first, then its lanes (and its overflow track)
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
    if (overflow_at[d]) {
      tid_of[{d, max_lanes}] = next_tid;
      thread_meta(events, pid, next_tid,
                  "depth " + std::to_string(d) + ", overflow (" + std::to_string(max_lanes) +
                      " lanes full: slices may overlap)",
                  next_tid);
      ++next_tid;
    }
  }
  // parents by id: the first record of an id (ids are unique in a real trace)
  std::map<std::uint32_t, std::size_t> index_of;
  for (std::size_t k = 0; k < n; ++k) index_of.emplace(t.records[k].id, k);
  for (std::size_t k = 0; k < n; ++k) {
    const launch_record& rec = t.records[k];
    const char* outcome = schema::name(static_cast<launch_outcome>(rec.outcome));
    const std::string site = t.site_name(rec.site);
    events.push_back({{"name", "request " + site}, {"cat", outcome}, {"ph", "i"}, {"s", "t"},
                      {"ts", micros(rec.t_ns, t0)}, {"pid", pid},
                      {"tid", tid_of.at({rec.depth, -1})}, {"args", record_args(rec)}});
    if (!has_execution_time(rec)) continue;
    const int tid = tid_of.at({rec.depth, lane_of[k]});
    const double ts = micros(rec.start_ns, t0);
    events.push_back({{"name", site}, {"cat", outcome}, {"ph", "X"}, {"ts", ts},
                      {"dur", static_cast<double>(rec.end_ns - rec.start_ns) / 1000.0},
                      {"pid", pid}, {"tid", tid}, {"args", record_args(rec)}});
    // parent -> child: from the parent's slice when it asked, to the child's start
    if (rec.parent == no_record) continue;
    const auto it = index_of.find(rec.parent);
    if (it == index_of.end() || !has_execution_time(t.records[it->second])) continue;
    const launch_record& parent = t.records[it->second];
    events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "s"}, {"id", flow_id(pid, k)},
                      {"ts", micros(rec.t_ns, t0)}, {"pid", pid},
                      {"tid", tid_of.at({parent.depth, lane_of[it->second]})}});
    events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "f"}, {"bp", "e"},
                      {"id", flow_id(pid, k)}, {"ts", ts}, {"pid", pid}, {"tid", tid}});
  }
}

/// The PM samples as counter tracks ("SM active %", and "warps active %" when
/// sampled), a value at each sample's start and 0 after the last one.
void counter_tracks(event_sink& events, int pid, const schema::timeline_profile& tl, std::uint64_t t0) {
  const std::pair<const char*, const char*> counters[] = {{"SM active %", sm_active_metric},
                                                           {"warps active %", warps_active_metric}};
  for (const auto& [name, metric] : counters) {
    const auto index = tl.index_of(metric);
    if (!index) continue;
    const auto counter = [&, name = name](std::uint64_t ns, double value) {
      events.push_back({{"name", name}, {"ph", "C"}, {"ts", micros(ns, t0)}, {"pid", pid}, {"args", {{name, value}}}});
    };
    for (const auto& s : tl.samples) counter(s.start_ns, s.values[*index]);
    counter(tl.samples.back().end_ns, 0.0);
  }
}

/// The run's host-launched kernels as slices on a track of their own.
void host_kernel_track(event_sink& events, int pid, const std::vector<const schema::activity_kernel*>& kernels,
                       std::uint64_t t0) {
  constexpr int tid = 1 << 20;  // past every depth and lane track
  thread_meta(events, pid, tid, "host-launched kernels", -1);
  for (const auto* k : kernels)
    events.push_back({{"name", k->name}, {"cat", "host_kernel"}, {"ph", "X"}, {"ts", micros(k->start_ns, t0)},
                      {"dur", static_cast<double>(k->end_ns - k->start_ns) / 1000.0}, {"pid", pid}, {"tid", tid},
                      {"args", {{"blocks", k->blocks}, {"block_threads", k->block_threads}}}});
}

}  // namespace

std::string render_chrome_trace(const std::vector<profile>& profiles) {
  event_sink events;
  int pid = 0;
  for (const auto& p : profiles) {
    for (const auto& r : p.runs) {
      ++pid;
      const bool records = r.trace && !r.trace->records.empty();
      const bool samples = r.timeline && !r.timeline->samples.empty();
      const auto kernels = host_kernels_of(p, r);
      if (!records && !samples && kernels.empty()) continue;
      const bool timed = records && std::any_of(r.trace->records.begin(), r.trace->records.end(),
                                                [](const launch_record& rec) { return has_execution_time(rec); });
      events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid},
                        {"args", {{"name", r.variant + " on " + r.input + " (" + p.path + ")" +
                                           (records && !timed ? " [no measured child windows]" : "")}}}});
      const std::uint64_t t0 = run_origin(r, kernels);
      if (records) {
        const trace_profile& t = *r.trace;
        if (timed) timed_run(events, pid, t, t0);
        else unmeasured_run(events, pid, t, t0);
      }
      if (samples) counter_tracks(events, pid, *r.timeline, t0);
      if (!kernels.empty()) host_kernel_track(events, pid, kernels, t0);
    }
  }
  return std::move(events).document();
}

}  // namespace cdpkit::report
