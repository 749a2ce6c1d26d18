// The profile document on the writing side: the record-column table, the trace summary, the
// document form of a device trace, and the JSON of the current version (cdpkit/schema/profile.hpp).

#include <cdpkit/schema/profile.hpp>
#include <cdpkit/schema/text.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <type_traits>
#include <unordered_map>

namespace cdpkit::schema {

namespace {

using json = nlohmann::json;

constexpr std::uint64_t u16_max = std::numeric_limits<std::uint16_t>::max();
constexpr std::uint64_t u32_max = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

/// A column of an unsigned member: get/set by a pointer-to-member known at compile time.
template <auto Member>
std::uint64_t get_member(const launch_record& r) {
  return static_cast<std::uint64_t>(r.*Member);
}
template <auto Member>
void set_member(launch_record& r, std::uint64_t v) {
  using T = std::remove_reference_t<decltype(r.*Member)>;
  r.*Member = static_cast<T>(v);
}

std::uint64_t get_error(const launch_record& r) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(r.error)); }
void set_error(launch_record& r, std::uint64_t v) { r.error = static_cast<std::int16_t>(static_cast<std::int64_t>(v)); }

// The execution window: both columns null unless measured (has_execution_time).
std::uint64_t get_start(const launch_record& r) { return has_execution_time(r) ? r.start_ns : ~0ull; }
std::uint64_t get_end(const launch_record& r) { return has_execution_time(r) ? r.end_ns : ~0ull; }
void set_start(launch_record& r, std::uint64_t v) { r.start_ns = v == ~0ull ? no_time_start : v; }
void set_end(launch_record& r, std::uint64_t v) { r.end_ns = v == ~0ull ? no_time_end : v; }

template <std::size_t N>
json array_json(const std::array<std::uint64_t, N>& values) {
  return json(std::vector<std::uint64_t>(values.begin(), values.end()));
}

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(); }

json site_json(const site_profile& s) {
  json outcomes = {{name(launch_outcome::launched), s.launched},
                   {name(launch_outcome::fallback_budget), s.fallback_budget},
                   {name(launch_outcome::fallback_depth), s.fallback_depth},
                   {name(launch_outcome::fallback_error), s.fallback_error}};
  json streams = json::object();
  for (int k = 0; k < stream_kind_count; ++k) {
    const auto kind = static_cast<stream_kind>(k);
    const auto n = s.stream_launches[static_cast<std::size_t>(k)];
    if (kind == stream_kind::not_observed && n == 0) continue;  // only an unmodified program's grids have it
    streams[name(kind)] = n;
  }
  json errors = json::array();
  for (const auto& e : s.failed_by_error) errors.push_back({{"code", e.code}, {"name", e.name}, {"count", e.count}});
  const json probe = {{"steps", s.probe.steps},
                      {"active_lanes", s.probe.active_lanes},
                      {"lanes_hist", array_json(s.probe.lanes_hist)},
                      {"warps", s.probe.warps},
                      {"efficiency_hist", array_json(s.probe.efficiency_hist)},
                      {"efficiency_sum", s.probe.efficiency_sum},
                      {"step_efficiency", optional_json(s.probe.step_efficiency)},
                      {"mean_warp_efficiency", optional_json(s.probe.mean_warp_efficiency)}};
  return {{"id", s.id},
          {"name", s.name},
          {"role", name(s.role)},
          {"requests", s.requests},
          {"outcomes", outcomes},
          {"failed_by_error", errors},
          {"failed_other_codes", s.failed_other_codes},
          {"inline_items", s.inline_items},
          {"child_threads", s.child_threads},
          {"child_blocks", s.child_blocks},
          {"work_items", s.work_items},
          {"tiny_launches", s.tiny_launches},
          {"streams", streams},
          {"threads_log2", array_json(s.threads_log2)},
          {"blocks_log2", array_json(s.blocks_log2)},
          {"work_log2", array_json(s.work_log2)},
          {"depth_hist", s.depth_hist},
          {"max_depth", s.max_depth},
          {"probe", probe}};
}

json record_row(const launch_record& r) {
  json row = json::array();
  for (const record_field& f : record_fields) {
    const std::uint64_t v = f.get(r);
    switch (f.column) {
      case record_column::unsigned_number: row.push_back(v); break;
      case record_column::record_id_or_null: row.push_back(v == no_record ? json() : json(v)); break;
      case record_column::stream_name: row.push_back(name(static_cast<stream_kind>(v))); break;
      case record_column::outcome_name: row.push_back(name(static_cast<launch_outcome>(v))); break;
      case record_column::signed_number: row.push_back(static_cast<std::int64_t>(v)); break;
      case record_column::time_or_null: row.push_back(v == ~0ull ? json() : json(v)); break;
    }
  }
  return row;
}

template <class T, std::size_t N>
void copy_counts(const T (&from)[N], std::array<std::uint64_t, N>& to) {
  std::copy(std::begin(from), std::end(from), to.begin());
}

}  // namespace

const std::array<record_field, 13> record_fields = {{
    {"id", record_column::unsigned_number, 0, u32_max, get_member<&launch_record::id>,
     set_member<&launch_record::id>},
    {"parent", record_column::record_id_or_null, 0, u32_max, get_member<&launch_record::parent>,
     set_member<&launch_record::parent>},
    {"t_ns", record_column::unsigned_number, 0, u64_max, get_member<&launch_record::t_ns>,
     set_member<&launch_record::t_ns>},
    {"site", record_column::unsigned_number, 0, u16_max, get_member<&launch_record::site>,
     set_member<&launch_record::site>},
    {"depth", record_column::unsigned_number, 0, u16_max, get_member<&launch_record::depth>,
     set_member<&launch_record::depth>},
    {"blocks", record_column::unsigned_number, 0, u32_max, get_member<&launch_record::blocks>,
     set_member<&launch_record::blocks>},
    {"child_block_threads", record_column::unsigned_number, 0, u32_max,
     get_member<&launch_record::child_block_threads>, set_member<&launch_record::child_block_threads>},
    {"work", record_column::unsigned_number, 0, u32_max, get_member<&launch_record::work>,
     set_member<&launch_record::work>},
    {"stream", record_column::stream_name, 0, stream_kind_count - 1, get_member<&launch_record::stream>,
     set_member<&launch_record::stream>},
    {"outcome", record_column::outcome_name, 0, launch_outcome_count - 1,
     get_member<&launch_record::outcome>, set_member<&launch_record::outcome>},
    {"error", record_column::signed_number, INT16_MIN, INT16_MAX, get_error, set_error},
    {"start_ns", record_column::time_or_null, 0, u64_max - 1, get_start, set_start},
    {"end_ns", record_column::time_or_null, 0, u64_max - 1, get_end, set_end},
}};

const char* name(site_role role) noexcept {
  switch (role) {
    case site_role::launch: return "launch";
    case site_role::probe: return "probe";
    case site_role::child_probe: return "child_probe";
  }
  return "unknown";
}

const site_profile* trace_profile::site(int id) const {
  for (const auto& s : sites)
    if (s.id == id) return &s;
  return nullptr;
}

std::string trace_profile::site_name(int id) const {
  const site_profile* s = site(id);
  return s != nullptr ? s->name : "site." + std::to_string(id);
}

trace_summary summarize(const trace_profile& trace) {
  trace_summary s;
  std::uint64_t warps = 0;
  double efficiency_sum = 0.0;
  for (const site_profile& c : trace.sites) {
    s.launch_requests += c.requests;
    s.child_launches += c.launched;
    s.fallback_budget += c.fallback_budget;
    s.fallback_depth += c.fallback_depth;
    s.failed_launches += c.fallback_error;
    s.tiny_launches += c.tiny_launches;
    s.max_depth = std::max(s.max_depth, c.max_depth);
    s.probe_steps += c.probe.steps;
    s.probe_active_lanes += c.probe.active_lanes;
    warps += c.probe.warps;
    efficiency_sum += c.probe.efficiency_sum;
  }
  s.fallbacks = s.fallback_budget + s.fallback_depth + s.failed_launches;
  s.tiny_grid_share =
      s.child_launches > 0 ? static_cast<double>(s.tiny_launches) / static_cast<double>(s.child_launches) : 0.0;
  s.pending_high_water = static_cast<std::uint32_t>(std::min<std::uint64_t>(trace.pending_high_water, u32_max));
  if (s.probe_steps > 0)
    s.warp_efficiency = static_cast<double>(s.probe_active_lanes) / (32.0 * static_cast<double>(s.probe_steps));
  if (warps > 0) s.mean_warp_efficiency = efficiency_sum / static_cast<double>(warps);
  return s;
}

trace_summary summarize(const trace_snapshot& snapshot) { return make_trace(snapshot, {}, 0).summary; }

site_role default_site_role(const site_counters& counters) noexcept {
  return counters.requests > 0 ? site_role::launch : site_role::probe;
}

trace_profile make_trace(const trace_snapshot& snapshot, const trace_naming& naming, std::size_t max_records) {
  trace_profile t;
  t.pending_limit = static_cast<std::uint64_t>(std::max(0, snapshot.pending_launch_limit));
  t.pending_budget = static_cast<std::uint64_t>(std::max(0, snapshot.pending_budget));
  t.pending_high_water = snapshot.totals.pending_high_water;
  t.max_depth_limit = static_cast<std::uint64_t>(std::max(0, snapshot.max_depth));
  t.tiny_grid_work = tiny_grid_work;
  t.records_requested = snapshot.totals.records_requested;
  t.records_stored = snapshot.records.size();
  t.records_dropped = snapshot.records_dropped;
  // (a snapshot that holds a refused request's record recorded refusals, whatever its flag says:
  // the reader would refuse the profile otherwise)
  t.refusals_recorded = snapshot.refusals_recorded ||
                        std::any_of(snapshot.records.begin(), snapshot.records.end(), [](const launch_record& r) {
                          return !takes_record(static_cast<launch_outcome>(r.outcome));
                        });
  for (std::size_t id = 0; id < snapshot.sites.size(); ++id) {
    const site_counters& c = snapshot.sites[id];
    if (c.requests == 0 && c.probe_steps == 0) continue;  // sites with activity only
    const auto site_id = static_cast<std::uint16_t>(id);
    site_profile s;
    s.id = static_cast<int>(id);
    s.name = naming.site_name ? naming.site_name(site_id) : "site." + std::to_string(id);
    s.role = naming.role ? naming.role(site_id, c) : default_site_role(c);
    s.requests = c.requests;
    s.launched = c.outcomes[static_cast<int>(launch_outcome::launched)];
    s.fallback_budget = c.outcomes[static_cast<int>(launch_outcome::fallback_budget)];
    s.fallback_depth = c.outcomes[static_cast<int>(launch_outcome::fallback_depth)];
    s.fallback_error = c.outcomes[static_cast<int>(launch_outcome::fallback_error)];
    for (int k = 0; k < trace_limits::error_slots; ++k) {
      if (c.error_code[k] == 0) continue;
      s.failed_by_error.push_back({c.error_code[k],
                                   naming.error_name ? naming.error_name(c.error_code[k])
                                                     : "error " + std::to_string(c.error_code[k]),
                                   c.error_count[k]});
    }
    s.failed_other_codes = c.error_overflow;
    s.inline_items = c.inline_items;
    s.child_threads = c.child_threads;
    s.child_blocks = c.child_blocks;
    s.work_items = c.work_items;
    s.tiny_launches = c.tiny_launches;
    copy_counts(c.stream_launches, s.stream_launches);
    copy_counts(c.threads_log2, s.threads_log2);
    copy_counts(c.blocks_log2, s.blocks_log2);
    copy_counts(c.work_log2, s.work_log2);
    s.depth_hist.assign(std::begin(c.depth_hist), std::end(c.depth_hist));
    s.max_depth = c.max_depth;
    // lanes_hist[0] is never written (a step has at least one active lane): the document keeps 1..32.
    std::copy(std::begin(c.lanes_hist) + 1, std::end(c.lanes_hist), s.probe.lanes_hist.begin());
    copy_counts(c.efficiency_hist, s.probe.efficiency_hist);
    s.probe.steps = c.probe_steps;
    s.probe.active_lanes = c.probe_active_lanes;
    s.probe.warps = c.probe_warps;
    s.probe.efficiency_sum = c.efficiency_sum;
    if (c.probe_steps > 0)
      s.probe.step_efficiency = static_cast<double>(c.probe_active_lanes) / (32.0 * static_cast<double>(c.probe_steps));
    if (c.probe_warps > 0) s.probe.mean_warp_efficiency = c.efficiency_sum / static_cast<double>(c.probe_warps);
    t.sites.push_back(std::move(s));
  }
  const std::size_t kept = std::min(max_records, snapshot.records.size());
  t.records.assign(snapshot.records.begin(), snapshot.records.begin() + static_cast<std::ptrdiff_t>(kept));
  t.summary = summarize(t);
  return t;
}

json summary_json(const trace_summary& s) {
  const auto optional = [](double v) { return v < 0 ? json() : json(v); };
  return {{"launch_requests", s.launch_requests},
          {"child_launches", s.child_launches},
          {"fallbacks", s.fallbacks},
          {"fallback_budget", s.fallback_budget},
          {"fallback_depth", s.fallback_depth},
          {"failed_launches", s.failed_launches},
          {"tiny_launches", s.tiny_launches},
          {"tiny_grid_share", s.tiny_grid_share},
          {"max_depth", s.max_depth},
          {"pending_high_water", s.pending_high_water},
          {"probe_steps", s.probe_steps},
          {"probe_active_lanes", s.probe_active_lanes},
          {"warp_efficiency", optional(s.warp_efficiency)},
          {"mean_warp_efficiency", optional(s.mean_warp_efficiency)}};
}

json trace_json(const trace_profile& t) {
  json sites = json::array();
  for (const auto& s : t.sites) sites.push_back(site_json(s));
  json rows = json::array();
  for (const auto& r : t.records) rows.push_back(record_row(r));
  json fields = json::array();
  for (const record_field& f : record_fields) fields.push_back(f.name);
  return {{"pending", {{"limit", t.pending_limit}, {"budget", t.pending_budget}, {"high_water", t.pending_high_water}}},
          {"max_depth_limit", t.max_depth_limit},
          {"tiny_grid_work", t.tiny_grid_work},
          {"summary", summary_json(summarize(t))},
          {"sites", sites},
          {"records",
           {{"requested", t.records_requested},
            {"stored", t.records_stored},
            {"dropped", t.records_dropped},
            {"refusals", t.refusals_recorded},
            {"in_profile", t.records.size()},
            {"fields", fields},
            {"rows", rows}}}};
}

std::int64_t cta_accounting::unaccounted() const noexcept {
  return static_cast<std::int64_t>(hardware_ctas) - static_cast<std::int64_t>(host_blocks) -
         static_cast<std::int64_t>(child_blocks);
}

std::int64_t cta_accounting::unaccounted_threads() const noexcept {
  return static_cast<std::int64_t>(hardware_threads) - static_cast<std::int64_t>(host_threads) -
         static_cast<std::int64_t>(child_threads);
}

accounting_status classify(const cta_accounting& a) noexcept {
  const std::int64_t d = a.unaccounted(), t = a.unaccounted_threads();
  if (d == 0 && t == 0) return accounting_status::exact;
  if (d < 0 || t < 0) return accounting_status::missing_ctas;
  if (a.transfers > 0) return accounting_status::driver_transfers;
  // the device runtime's own CTAs hold one thread to one warp each
  if (d > 0 && t >= d && (t + 31) / 32 <= d) return accounting_status::device_runtime;  // t <= 32 d
  return accounting_status::extra_ctas;
}

const char* name(accounting_status s) noexcept {
  switch (s) {
    case accounting_status::exact: return "exact";
    case accounting_status::device_runtime: return "device_runtime";
    case accounting_status::driver_transfers: return "driver_transfers";
    case accounting_status::missing_ctas: return "missing_ctas";
    case accounting_status::extra_ctas: return "extra_ctas";
  }
  return "?";
}

std::optional<double> hardware_profile::value(const std::string& metric) const {
  for (const auto& [m, v] : metrics)
    if (m == metric) return v;
  return std::nullopt;
}

std::optional<double> hardware_warp_efficiency(std::optional<double> warp_instructions,
                                               std::optional<double> thread_instructions) {
  if (!warp_instructions || !thread_instructions || *warp_instructions <= 0) return std::nullopt;
  const double efficiency = *thread_instructions / (32.0 * *warp_instructions);
  return std::isfinite(efficiency) ? std::optional<double>(efficiency) : std::nullopt;  // 1e-320 warps: none
}

std::optional<double> hardware_profile::warp_efficiency() const {
  return hardware_warp_efficiency(value("smsp__inst_executed.sum"), value("smsp__thread_inst_executed.sum"));
}

std::optional<std::size_t> timeline_profile::index_of(const std::string& metric) const {
  for (std::size_t k = 0; k < metrics.size(); ++k)
    if (metrics[k] == metric) return k;
  return std::nullopt;
}

std::optional<double> timeline_profile::mean(const std::string& metric) const {
  const auto k = index_of(metric);
  if (!k || samples.empty()) return std::nullopt;
  bool timed = false;
  for (const auto& s : samples) timed = timed || s.end_ns > s.start_ns;
  double sum = 0, weight = 0;
  for (const auto& s : samples) {
    const double w = timed ? static_cast<double>(s.end_ns - s.start_ns) : 1.0;
    sum += w * s.values[*k];
    weight += w;
  }
  return weight > 0 ? std::optional<double>(sum / weight) : std::nullopt;
}

json hardware_json(const hardware_profile& h) {
  json metrics = json::object();
  for (const auto& [m, v] : h.metrics) metrics[m] = v;
  json accounting;
  if (h.accounting) {
    const auto& a = *h.accounting;
    accounting = {{"hardware_ctas", a.hardware_ctas}, {"hardware_threads", a.hardware_threads},
                  {"host_grids", a.host_grids},       {"host_blocks", a.host_blocks},
                  {"host_threads", a.host_threads},   {"child_grids", a.child_grids},
                  {"child_blocks", a.child_blocks},   {"child_threads", a.child_threads},
                  {"transfers", a.transfers},         {"status", name(classify(a))}};
  }
  return {{"range", h.range}, {"ms", h.ms}, {"passes", h.passes}, {"metrics", metrics},
          {"accounting", accounting}};
}

json timeline_json(const timeline_profile& t) {
  json samples = json::array();
  for (const auto& s : t.samples) {
    json row = json::array({s.start_ns, s.end_ns});
    for (double v : s.values) row.push_back(v);
    samples.push_back(std::move(row));
  }
  return {{"interval_ns", t.interval_ns},
          {"ms", t.ms},
          {"metrics", t.metrics},
          {"overflow", t.overflow},
          {"dropped", t.dropped},
          {"clock_offset_ns", t.clock_offset_ns ? json(*t.clock_offset_ns) : json()},
          {"samples", samples}};
}

json host_activity_json(const host_activity_profile& a) {
  // kernels: [run, name index, start, end, blocks, block_threads]; transfers: [run, kind, start,
  // end, bytes]. Kernel names are listed once.
  json names = json::array(), kernels = json::array(), transfers = json::array();
  std::unordered_map<std::string, std::size_t> seen;
  for (const auto& k : a.kernels) {
    const auto [it, added] = seen.emplace(k.name, seen.size());
    if (added) names.push_back(k.name);
    const std::size_t index = it->second;
    kernels.push_back({k.run ? json(*k.run) : json(), index, k.start_ns, k.end_ns, k.blocks, k.block_threads});
  }
  for (const auto& t : a.transfers)
    transfers.push_back({t.run ? json(*t.run) : json(), t.kind, t.start_ns, t.end_ns, t.bytes});
  return {{"kernel_names", names}, {"kernels", kernels}, {"transfers", transfers}, {"dropped", a.dropped}};
}

json collector_json(const collector_profile& c) {
  json j = {{"requested", c.requested}, {"notes", c.notes}};
  if (c.incomplete) j["incomplete"] = *c.incomplete;
  return j;
}

std::string picture_problem(const picture& p) {
  if (p.svg.size() > max_picture_bytes)
    return "an SVG of " + std::to_string(p.svg.size()) + " bytes, more than a picture may have (" +
           std::to_string(max_picture_bytes) + ")";
  const auto first = p.svg.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || (p.svg.compare(first, 4, "<svg") != 0 && p.svg.compare(first, 5, "<?xml") != 0))
    return "not an SVG document (expected '<svg' or '<?xml' first)";
  if (utf8_replaced(p.svg) != p.svg || utf8_replaced(p.title) != p.title) return "not valid UTF-8";
  return {};
}

json picture_json(const picture& p) {
  if (const std::string problem = picture_problem(p); !problem.empty())
    throw format_error("picture '" + utf8_replaced(p.title) + "': " + problem);
  return {{"title", p.title}, {"svg", p.svg}};
}

json run_json(const run_profile& r) {
  const auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(); };
  return {{"id", r.id},
          {"algorithm", r.algorithm},
          {"variant", r.variant},
          {"input", r.input},
          {"baseline", r.baseline.empty() ? json() : json(r.baseline)},
          {"params", r.params},
          {"ms", r.ms},
          {"work", r.work},
          {"work_unit", r.work_unit},
          {"checked", r.checked},
          {"verified", r.verified},
          {"mismatches", r.mismatches},
          {"trace", r.trace ? trace_json(*r.trace) : json()},
          {"hardware", r.hardware ? hardware_json(*r.hardware) : json()},
          {"timeline", r.timeline ? timeline_json(*r.timeline) : json()},
          {"collect",
           {{"traced_ms", opt(r.collect.traced_ms)},
            {"metrics_ms", opt(r.collect.metrics_ms)},
            {"timeline_ms", opt(r.collect.timeline_ms)},
            {"baseline_ms", opt(r.collect.baseline_ms)},
            {"baseline_runs_ms", r.collect.baseline_runs_ms},
            {"traced_runs_ms", r.collect.traced_runs_ms}}}};
}

json profile_json(const profile& p) {
  json runs = json::array();
  for (const auto& r : p.runs) runs.push_back(run_json(r));
  json pictures = json::array();
  for (const auto& pic : p.pictures) pictures.push_back(picture_json(pic));
  return {{"schema", profile_schema},
          {"program", p.program},
          {"created", p.created},
          {"device",
           {{"name", p.device.name},
            {"cc", p.device.cc},
            {"sms", p.device.sms},
            {"max_threads_per_sm", p.device.max_threads_per_sm},
            {"memory_bytes", p.device.memory_bytes},
            {"driver", p.device.driver},
            {"runtime", p.device.runtime}}},
          {"build", p.build},
          {"runs", runs},
          {"collector", p.collector ? collector_json(*p.collector) : json()},
          {"host_activity", p.host_activity ? host_activity_json(*p.host_activity) : json()},
          {"pictures", pictures}};
}

}  // namespace cdpkit::schema
