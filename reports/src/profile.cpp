// Reading a profile: every field is checked for presence and type, and a problem names the file
// and the JSON pointer of the field.

#include <cdpkit/report/profile.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace cdpkit::report {

namespace {

using json = nlohmann::json;

/// A position in the document: the file's name and the JSON pointer of the current value.
struct cursor {
  const std::string& file;
  std::string pointer;
  [[noreturn]] void fail(const std::string& what) const {
    throw format_error(file + ": " + (pointer.empty() ? "/" : pointer) + ": " + what);
  }
  cursor at(const std::string& key) const { return {file, pointer + "/" + key}; }
  cursor at(std::size_t index) const { return {file, pointer + "/" + std::to_string(index)}; }
};

const json& member(const json& j, const char* key, const cursor& c) {
  if (!j.is_object()) c.fail("expected an object");
  const auto it = j.find(key);
  if (it == j.end()) c.at(key).fail("missing");
  return *it;
}

std::uint64_t get_uint(const json& j, const char* key, const cursor& c) {
  const json& v = member(j, key, c);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    c.at(key).fail("expected a non-negative integer");
  return v.get<std::uint64_t>();
}

std::int64_t get_int(const json& j, const char* key, const cursor& c) {
  const json& v = member(j, key, c);
  if (!v.is_number_integer()) c.at(key).fail("expected an integer");
  return v.get<std::int64_t>();
}

double get_number(const json& j, const char* key, const cursor& c) {
  const json& v = member(j, key, c);
  if (!v.is_number()) c.at(key).fail("expected a number");
  return v.get<double>();
}

std::optional<double> get_optional_number(const json& j, const char* key, const cursor& c) {
  const json& v = member(j, key, c);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number()) c.at(key).fail("expected a number or null");
  return v.get<double>();
}

std::string get_string(const json& j, const char* key, const cursor& c) {
  const json& v = member(j, key, c);
  if (!v.is_string()) c.at(key).fail("expected a string");
  return v.get<std::string>();
}

bool get_bool(const json& j, const char* key, const cursor& c) {
  const json& v = member(j, key, c);
  if (!v.is_boolean()) c.at(key).fail("expected true or false");
  return v.get<bool>();
}

template <std::size_t N>
std::array<std::uint64_t, N> get_counts(const json& j, const char* key, const cursor& c) {
  const json& v = member(j, key, c);
  if (!v.is_array() || v.size() != N)
    c.at(key).fail("expected an array of " + std::to_string(N) + " numbers");
  std::array<std::uint64_t, N> out{};
  for (std::size_t k = 0; k < N; ++k) {
    if (!v[k].is_number_unsigned() && !(v[k].is_number_integer() && v[k].get<std::int64_t>() >= 0))
      c.at(key).at(k).fail("expected a non-negative integer");
    out[k] = v[k].get<std::uint64_t>();
  }
  return out;
}

const json& get_array(const json& j, const char* key, const cursor& c) {
  const json& v = member(j, key, c);
  if (!v.is_array()) c.at(key).fail("expected an array");
  return v;
}

site_profile read_site(const json& j, const cursor& c) {
  site_profile s;
  s.id = static_cast<int>(get_uint(j, "id", c));
  s.name = get_string(j, "name", c);
  s.requests = get_uint(j, "requests", c);
  const json& o = member(j, "outcomes", c);
  const cursor oc = c.at("outcomes");
  s.launched = get_uint(o, "launched", oc);
  s.fallback_budget = get_uint(o, "fallback_budget", oc);
  s.fallback_depth = get_uint(o, "fallback_depth", oc);
  s.fallback_error = get_uint(o, "fallback_error", oc);
  const json& errors = get_array(j, "failed_by_error", c);
  for (std::size_t k = 0; k < errors.size(); ++k) {
    const cursor ec = c.at("failed_by_error").at(k);
    s.failed_by_error.push_back({static_cast<int>(get_int(errors[k], "code", ec)),
                                 get_string(errors[k], "name", ec), get_uint(errors[k], "count", ec)});
  }
  s.inline_items = get_uint(j, "inline_items", c);
  s.child_threads = get_uint(j, "child_threads", c);
  s.child_blocks = get_uint(j, "child_blocks", c);
  s.work_items = get_uint(j, "work_items", c);
  s.tiny_launches = get_uint(j, "tiny_launches", c);
  s.threads_log2 = get_counts<log2_buckets>(j, "threads_log2", c);
  s.blocks_log2 = get_counts<log2_buckets>(j, "blocks_log2", c);
  s.work_log2 = get_counts<log2_buckets>(j, "work_log2", c);
  const auto depth = get_counts<64>(j, "depth_hist", c);
  s.depth_hist.assign(depth.begin(), depth.end());
  s.max_depth = static_cast<std::uint32_t>(get_uint(j, "max_depth", c));
  const json& p = member(j, "probe", c);
  const cursor pc = c.at("probe");
  s.probe.steps = get_uint(p, "steps", pc);
  s.probe.active_lanes = get_uint(p, "active_lanes", pc);
  s.probe.warps = get_uint(p, "warps", pc);
  s.probe.lanes_hist = get_counts<32>(p, "lanes_hist", pc);
  s.probe.efficiency_hist = get_counts<32>(p, "efficiency_hist", pc);
  s.probe.step_efficiency = get_optional_number(p, "step_efficiency", pc);
  s.probe.mean_warp_efficiency = get_optional_number(p, "mean_warp_efficiency", pc);
  return s;
}

launch_rec read_record(const json& row, const cursor& c) {
  if (!row.is_array() || row.size() != 11) c.fail("expected a record row of 11 fields");
  const auto uint_at = [&](std::size_t k) {
    if (!row[k].is_number_unsigned() && !(row[k].is_number_integer() && row[k].get<std::int64_t>() >= 0))
      c.at(k).fail("expected a non-negative integer");
    return row[k].get<std::uint64_t>();
  };
  launch_rec r;
  r.id = static_cast<std::uint32_t>(uint_at(0));
  if (!row[1].is_null()) r.parent = static_cast<std::uint32_t>(uint_at(1));
  r.t_ns = uint_at(2);
  r.site = static_cast<int>(uint_at(3));
  r.depth = static_cast<int>(uint_at(4));
  r.blocks = static_cast<std::uint32_t>(uint_at(5));
  r.block_threads = static_cast<std::uint32_t>(uint_at(6));
  r.work = static_cast<std::uint32_t>(uint_at(7));
  if (!row[8].is_string()) c.at(8).fail("expected the stream name");
  if (!row[9].is_string()) c.at(9).fail("expected the outcome name");
  if (!row[10].is_number_integer()) c.at(10).fail("expected an error code");
  r.stream = row[8].get<std::string>();
  r.outcome = row[9].get<std::string>();
  r.error = row[10].get<int>();
  return r;
}

trace_profile read_trace(const json& j, const cursor& c) {
  trace_profile t;
  const json& pending = member(j, "pending", c);
  t.pending_limit = get_uint(pending, "limit", c.at("pending"));
  t.pending_budget = get_uint(pending, "budget", c.at("pending"));
  t.pending_high_water = get_uint(pending, "high_water", c.at("pending"));
  t.max_depth_limit = get_uint(j, "max_depth_limit", c);
  t.tiny_grid_work = get_uint(j, "tiny_grid_work", c);
  const json& sites = get_array(j, "sites", c);
  for (std::size_t k = 0; k < sites.size(); ++k) t.sites.push_back(read_site(sites[k], c.at("sites").at(k)));
  const json& records = member(j, "records", c);
  const cursor rc = c.at("records");
  t.records_requested = get_uint(records, "requested", rc);
  t.records_stored = get_uint(records, "stored", rc);
  t.records_dropped = get_uint(records, "dropped", rc);
  const json& rows = get_array(records, "rows", rc);
  t.records.reserve(rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) t.records.push_back(read_record(rows[k], rc.at("rows").at(k)));
  return t;
}

}  // namespace

const site_profile* trace_profile::site(int id) const {
  for (const auto& s : sites)
    if (s.id == id) return &s;
  return nullptr;
}

profile parse_profile(const std::string& text, const std::string& name) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw format_error(name + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  const cursor root{name, ""};
  if (!doc.is_object()) root.fail("expected a JSON object");
  const json& schema = member(doc, "schema", root);
  if (!schema.is_string()) root.at("schema").fail("expected a string");
  if (schema.get<std::string>() != supported_schema)
    root.at("schema").fail("unsupported schema '" + schema.get<std::string>() + "' (this tool reads " +
                           supported_schema + ")");
  profile p;
  p.path = name;
  p.program = get_string(doc, "program", root);
  p.created = get_string(doc, "created", root);
  const json& device = member(doc, "device", root);
  const cursor dc = root.at("device");
  p.device.name = get_string(device, "name", dc);
  p.device.cc = get_string(device, "cc", dc);
  p.device.sms = get_uint(device, "sms", dc);
  p.device.driver = get_int(device, "driver", dc);
  p.device.runtime = get_int(device, "runtime", dc);
  if (device.contains("memory_bytes")) p.device.memory_bytes = get_uint(device, "memory_bytes", dc);
  if (device.contains("max_threads_per_sm"))
    p.device.max_threads_per_sm = get_uint(device, "max_threads_per_sm", dc);
  p.build = member(doc, "build", root);
  if (!p.build.is_object()) root.at("build").fail("expected an object");
  const json& runs = get_array(doc, "runs", root);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const json& r = runs[k];
    const cursor c = root.at("runs").at(k);
    run_profile run;
    run.id = get_uint(r, "id", c);
    run.algorithm = get_string(r, "algorithm", c);
    run.variant = get_string(r, "variant", c);
    run.input = get_string(r, "input", c);
    run.params = member(r, "params", c);
    run.ms = get_number(r, "ms", c);
    run.work = get_uint(r, "work", c);
    run.work_unit = get_string(r, "work_unit", c);
    run.checked = get_bool(r, "checked", c);
    run.verified = get_bool(r, "verified", c);
    run.mismatches = get_uint(r, "mismatches", c);
    const json& trace = member(r, "trace", c);
    if (!trace.is_null()) run.trace = read_trace(trace, c.at("trace"));
    p.runs.push_back(std::move(run));
  }
  return p;
}

profile load_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw format_error(path + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw format_error(path + ": read error");
  return parse_profile(text.str(), path);
}

}  // namespace cdpkit::report
