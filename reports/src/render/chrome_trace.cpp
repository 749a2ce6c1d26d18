// The Chrome trace-event export of the launch records (opens in Perfetto / chrome://tracing).

#include <cdpkit/report/html.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace cdpkit::report {

std::string render_chrome_trace(const std::vector<profile>& profiles) {
  nlohmann::json events = nlohmann::json::array();
  int pid = 0;
  for (const auto& p : profiles) {
    for (const auto& r : p.runs) {
      ++pid;
      if (!r.trace || r.trace->records.empty()) continue;
      const trace_profile& t = *r.trace;
      events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid},
                        {"args", {{"name", r.variant + " on " + r.input + " (" + p.path + ")"}}}});
      std::uint64_t t0 = t.records.front().t_ns;
      for (const auto& rec : t.records) t0 = std::min(t0, rec.t_ns);
      std::map<std::uint32_t, const launch_record*> by_id;
      for (const auto& rec : t.records) by_id[rec.id] = &rec;
      for (const auto& rec : t.records) {
        const double ts = static_cast<double>(rec.t_ns - t0) / 1000.0;
        const char* outcome = schema::name(static_cast<launch_outcome>(rec.outcome));
        events.push_back({{"name", t.site_name(rec.site)},
                          {"cat", outcome}, {"ph", "X"}, {"ts", ts}, {"dur", 1}, {"pid", pid},
                          {"tid", rec.depth},
                          {"args", {{"id", rec.id}, {"blocks", rec.blocks}, {"child_block_threads", rec.child_block_threads},
                                    {"work", rec.work}, {"stream", schema::name(static_cast<stream_kind>(rec.stream))},
                                    {"outcome", outcome}, {"error", rec.error}}}});
        if (rec.parent != no_record) {
          const auto it = by_id.find(rec.parent);
          if (it != by_id.end()) {
            const double pts = static_cast<double>(it->second->t_ns - t0) / 1000.0;
            events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "s"}, {"id", rec.id}, {"ts", pts},
                              {"pid", pid}, {"tid", it->second->depth}});
            events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "f"}, {"bp", "e"}, {"id", rec.id},
                              {"ts", ts}, {"pid", pid}, {"tid", rec.depth}});
          }
        }
      }
      std::set<int> depths;
      for (const auto& rec : t.records) depths.insert(rec.depth);
      for (int d : depths)
        events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", d},
                          {"args", {{"name", "depth " + std::to_string(d)}}}});
    }
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace cdpkit::report
