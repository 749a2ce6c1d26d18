// Reading a profile of the current version (profile_schema; any other is refused): every field is
// checked for presence, type and range, and a problem names the file and where it is.
//
// 1. The nesting pre-scan counts brackets outside strings in one pass over the bytes: a document
//    nested deeper than max_nesting_depth is refused, with its byte offset, before any value is
//    built (a deep value would overflow the stack when copied, printed or compared).
// 2. The SAX parse builds the document with an explicit stack (nlohmann's parser does not
//    recurse), keeps the depth cap as a second guard, and receives every syntax error, number
//    overflow (1e999) and ill-formed UTF-8 with its byte position instead of an exception. It
//    also keeps an account of the memory the document takes and stops, with a message, before
//    it passes half of what the process can still allocate: a document is several times larger
//    than its text (a number in an array takes 2 bytes of text and 32 of document), and running
//    out of memory inside the parse would end in std::terminate, because destroying a partly
//    built document allocates too.
// 3. Validation walks the document field by field with a cursor holding the JSON pointer;
//    free-form values (params, build) are moved out of the document, never deep-copied. Record
//    rows are read column by column through record_fields, the table the writer uses.

#include <cdpkit/quoted_input.hpp>
#include <cdpkit/schema/profile.hpp>
#include <cdpkit/schema/text.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <new>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

namespace cdpkit::schema {

namespace {

using json = nlohmann::json;

/// Bytes this process can still allocate, as far as the system says: the address-space limit
/// (RLIMIT_AS, `ulimit -v`) less the address space in use (/proc/self/statm), the memory its
/// cgroup may still use (a container's limit: memory.max less memory.current, or cgroup v1's
/// limit_in_bytes less usage_in_bytes) and the memory the system has available (MemAvailable in
/// /proc/meminfo), whichever is smallest; SIZE_MAX where none is known.
std::size_t allocatable_bytes() {
  std::size_t bytes = std::numeric_limits<std::size_t>::max();
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    std::size_t used = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
      unsigned long pages = 0;
      if (std::fscanf(f, "%lu", &pages) == 1) used = pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      std::fclose(f);
    }
    bytes = limit.rlim_cur > used ? static_cast<std::size_t>(limit.rlim_cur - used) : 0;
  }
  // A container's memory limit (cgroup v2, else v1): what is left under it.
  const auto read_number = [](const char* path, std::uint64_t& out) {
    std::FILE* f = std::fopen(path, "r");
    if (f == nullptr) return false;
    unsigned long long v = 0;
    const bool ok = std::fscanf(f, "%llu", &v) == 1;  // "max" (no limit) reads as no number
    std::fclose(f);
    if (ok) out = v;
    return ok;
  };
  std::uint64_t limit_bytes = 0, used_bytes = 0;
  if ((read_number("/sys/fs/cgroup/memory.max", limit_bytes) &&
       read_number("/sys/fs/cgroup/memory.current", used_bytes)) ||
      (read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes", limit_bytes) &&
       read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes", used_bytes)))
    bytes = std::min<std::size_t>(bytes, limit_bytes > used_bytes ? limit_bytes - used_bytes : 0);
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      unsigned long long kib = 0;
      if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
        bytes = std::min<std::size_t>(bytes, static_cast<std::size_t>(kib) * 1024);
        break;
      }
    }
    std::fclose(f);
  }
  return bytes;
}

/// "byte 12 (line 1, column 13)": a 0-based byte offset and the 1-based line and column.
std::string where(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t k = 0; k < offset; ++k)
    if (text[k] == '\n') {
      ++line;
      line_start = k + 1;
    }
  return "byte " + std::to_string(offset) + " (line " + std::to_string(line) + ", column " +
         std::to_string(offset - line_start + 1) + ")";
}

/// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string plain_message(const char* what) {
  std::string m(what);
  if (m.rfind("[json.exception.", 0) == 0) {
    const auto close = m.find("] ");
    if (close != std::string::npos) m.erase(0, close + 2);
  }
  return m;
}

/// Step 1: refuse nesting deeper than max_nesting_depth, naming the byte of the first bracket
/// past the cap. Brackets inside strings do not count; unbalanced brackets are left to the parser.
void check_nesting(const std::string& text, const std::string& name) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t k = 0; k < text.size(); ++k) {
    const char ch = text[k];
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > max_nesting_depth)
        throw format_error(name + ": " + where(text, k) + ": arrays and objects nested deeper than " +
                           std::to_string(max_nesting_depth) + " levels");
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
}

/// Step 2: a SAX handler that builds the document. Containers are held through a stack of
/// pointers; an element's address is stable while it is open, because its parent receives no
/// new element until it is closed.
class document_builder {
 public:
  /// `budget`: the bytes the document may take (an estimate, document_bytes below).
  document_builder(json& root, std::size_t budget) : root_(root), budget_(budget) {}

  bool null() { return add(json(nullptr)); }
  bool boolean(bool v) { return add(json(v)); }
  bool number_integer(json::number_integer_t v) { return add(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return add(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return add(json(v)); }
  bool string(json::string_t& v) { return charge(heap_bytes(v)) && add(json(std::move(v))); }
  bool binary(json::binary_t& v) { return charge(v.size()) && add(json::binary(std::move(v))); }
  bool start_object(std::size_t /*elements*/) { return charge(container_bytes) && open(json::object()); }
  bool start_array(std::size_t /*elements*/) { return charge(container_bytes) && open(json::array()); }
  bool key(json::string_t& k) {
    if (!charge(member_bytes + heap_bytes(k))) return false;
    slot_ = &(*open_.back())[std::move(k)];  // a repeated key: the last value wins, as in json::parse
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string& last_token, const json::exception& e) {
    position_ = position;
    last_token_ = last_token;
    number_overflow_ = e.id == 406;
    message_ = plain_message(e.what());
    // A syntax error's message starts "parse error at line L, column C: "; that position is
    // reported once, by where(), so it is cut here rather than printed twice.
    if (message_.rfind("parse error", 0) == 0) {
      const auto colon = message_.find(": ");
      if (colon != std::string::npos) message_.erase(0, colon + 2);
    }
    return false;
  }

  /// Whether the parse stopped because the document passed its budget, and the budget.
  [[nodiscard]] bool over_budget() const noexcept { return over_budget_; }
  [[nodiscard]] std::size_t budget() const noexcept { return budget_; }

  /// The error, located: the byte the parser stopped at, or the first byte of a number too large
  /// for a double.
  [[nodiscard]] std::string error(const std::string& text) const {
    if (too_deep_) return "arrays and objects nested deeper than " + std::to_string(max_nesting_depth) + " levels";
    // nlohmann's position counts the bytes read, the offending one included (the end of the input
    // counts as one more), so the byte it stopped at is position - 1: the same byte as the line
    // and column of its own message. Its last_token is the text read since the last string or
    // number began, not the offending token (after `{"a":1} {` it is `1} {`), so it cannot
    // locate a syntax error; it is exact only for an overflowing number, read as one token.
    std::size_t offset = std::min(position_ > 0 ? position_ - 1 : 0, text.size());
    if (number_overflow_ && !last_token_.empty() && last_token_.size() <= position_ && position_ <= text.size() &&
        text.compare(position_ - last_token_.size(), last_token_.size(), last_token_) == 0)
      offset = position_ - last_token_.size();
    return where(text, offset) + ": " + message_;
  }

 private:
  // What the document's values cost, roughly, beyond the text: an array element or a member's
  // value is a json (16 bytes) in a vector that grows by doubling; a member is a node of a
  // std::map (its key, its value and the tree's links); a string longer than the small-string
  // buffer has a heap block; every heap block has the allocator's header.
  static constexpr std::size_t block_bytes = 16;
  static constexpr std::size_t element_bytes = 2 * sizeof(json);
  static constexpr std::size_t member_bytes = sizeof(std::pair<const std::string, json>) + 4 * sizeof(void*) + block_bytes;
  static constexpr std::size_t container_bytes = sizeof(std::map<std::string, json>) + block_bytes;
  static std::size_t heap_bytes(const std::string& s) { return s.size() > 15 ? s.size() + 1 + block_bytes : 0; }

  /// Adds `bytes` to the account; false (the parse stops) past the budget.
  bool charge(std::size_t bytes) {
    used_ += bytes;
    if (used_ <= budget_) return true;
    over_budget_ = true;
    return false;
  }

  bool add(json&& v) {
    if (!charge(element_bytes)) return false;
    if (open_.empty()) {
      root_ = std::move(v);
      last_ = &root_;
    } else if (open_.back()->is_array()) {
      open_.back()->push_back(std::move(v));
      last_ = &open_.back()->back();
    } else {
      *slot_ = std::move(v);
      last_ = slot_;
    }
    return true;
  }
  bool open(json&& container) {
    if (open_.size() >= static_cast<std::size_t>(max_nesting_depth)) {
      too_deep_ = true;  // the pre-scan refuses this first; kept so the builder is safe on its own
      return false;
    }
    if (!add(std::move(container))) return false;  // past the budget: nothing was added
    open_.push_back(last_);
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  json& root_;
  std::size_t budget_, used_ = 0;
  bool over_budget_ = false;
  std::vector<json*> open_;
  json* slot_ = nullptr;
  json* last_ = nullptr;
  bool too_deep_ = false;
  bool number_overflow_ = false;
  std::size_t position_ = 0;
  std::string last_token_, message_;
};

json parse_document(const std::string& text, const std::string& name) {
  check_nesting(text, name);
  json doc;
  document_builder builder(doc, allocatable_bytes() / 2);
  bool ok = false;
  try {
    ok = json::sax_parse(text, &builder);
  } catch (const json::exception& e) {  // the parser reports through parse_error; never expected
    throw format_error(name + ": not valid JSON: " + plain_message(e.what()));
  } catch (const std::bad_alloc&) {  // the budget is an estimate: a backstop
    throw format_error(name + ": out of memory while parsing (" + std::to_string(text.size() >> 20) +
                       " MiB of text)");
  }
  if (!ok || builder.over_budget()) {
    if (builder.over_budget())
      throw format_error(name + ": " + std::to_string(text.size() >> 20) + " MiB of JSON would take more than " +
                         std::to_string(builder.budget() >> 20) +
                         " MiB of memory to read, half of what this process can still allocate");
    throw format_error(name + ": not valid JSON at " + builder.error(text));
  }
  return doc;
}

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

constexpr std::uint64_t u32_max = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t int_max = static_cast<std::uint64_t>(INT_MAX);

bool is_uint(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

/// A non-negative integer no larger than `max`. `at()` gives the cursor to fail at; it is only
/// called on failure (a million records must not build a million pointer strings).
template <class At>
std::uint64_t as_uint(const json& v, std::uint64_t max, const At& at) {
  if (!is_uint(v)) at().fail("expected a non-negative integer");
  const auto value = v.get<std::uint64_t>();
  if (value > max) at().fail("expected a non-negative integer up to " + std::to_string(max));
  return value;
}

/// An integer in [min, max]; `what` describes the expected value when it is no integer at all.
template <class At>
std::int64_t as_int(const json& v, std::int64_t min, std::int64_t max, const char* what, const At& at) {
  if (!v.is_number_integer()) at().fail(what);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
    at().fail("integer out of range");
  const auto value = v.get<std::int64_t>();
  if (value < min || value > max) at().fail("integer out of range");
  return value;
}

/// The member `key` of the object `j` (const or not: params and build are moved out).
template <class Json>
Json& member(Json& j, const char* key, const cursor& c) {
  if (!j.is_object()) c.fail("expected an object");
  const auto it = j.find(key);
  if (it == j.end()) c.at(key).fail("missing");
  return *it;
}

std::uint64_t get_uint(const json& j, const char* key, const cursor& c,
                       std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  return as_uint(member(j, key, c), max, [&] { return c.at(key); });
}

std::int64_t get_int(const json& j, const char* key, const cursor& c,
                     std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                     std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  return as_int(member(j, key, c), min, max, "expected an integer", [&] { return c.at(key); });
}

double get_number(const json& j, const char* key, const cursor& c) {
  const json& v = member(j, key, c);
  if (!v.is_number()) c.at(key).fail("expected a number");
  return v.get<double>();
}

/// A time or another quantity that cannot be negative: a finite number >= 0 (0 is allowed; the
/// report divides only by positive times). NaN fails both tests.
double get_nonnegative(const json& j, const char* key, const cursor& c) {
  const double v = get_number(j, key, c);
  if (!(v >= 0) || !std::isfinite(v)) c.at(key).fail("expected a non-negative number");
  return v;
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
  for (std::size_t k = 0; k < N; ++k)
    out[k] = as_uint(v[k], std::numeric_limits<std::uint64_t>::max(), [&] { return c.at(key).at(k); });
  return out;
}

template <class Json>
Json& get_array(Json& j, const char* key, const cursor& c) {
  Json& v = member(j, key, c);
  if (!v.is_array()) c.at(key).fail("expected an array");
  return v;
}

std::optional<double> get_optional_nonnegative(const json& j, const char* key, const cursor& c) {
  const auto v = get_optional_number(j, key, c);
  if (v && !(*v >= 0)) c.at(key).fail("expected a non-negative number or null");
  return v;
}

std::vector<double> get_nonnegative_numbers(const json& j, const char* key, const cursor& c) {
  const json& v = get_array(j, key, c);
  std::vector<double> out;
  out.reserve(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (!v[k].is_number() || !(v[k].get<double>() >= 0)) c.at(key).at(k).fail("expected a non-negative number");
    out.push_back(v[k].get<double>());
  }
  return out;
}

std::vector<std::string> get_strings(const json& j, const char* key, const cursor& c) {
  const json& v = get_array(j, key, c);
  std::vector<std::string> out;
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (!v[k].is_string()) c.at(key).at(k).fail("expected a string");
    out.push_back(v[k].get<std::string>());
  }
  return out;
}

hardware_profile read_hardware(const json& j, const cursor& c) {
  hardware_profile h;
  h.range = get_string(j, "range", c);
  h.ms = get_nonnegative(j, "ms", c);
  h.passes = get_uint(j, "passes", c, 1u << 20);
  const json& metrics = member(j, "metrics", c);
  if (!metrics.is_object()) c.at("metrics").fail("expected an object of metric values");
  for (const auto& [metric, value] : metrics.items()) {
    if (!value.is_number()) c.at("metrics").at(metric).fail("expected a number");
    h.metrics.emplace_back(metric, value.get<double>());
  }
  const json& a = member(j, "accounting", c);
  if (!a.is_null()) {
    const cursor ac = c.at("accounting");
    cta_accounting acc;
    // counts far below 2^62, so the differences fit a signed 64-bit integer
    constexpr std::uint64_t cap = 1ull << 62;
    acc.hardware_ctas = get_uint(a, "hardware_ctas", ac, cap);
    acc.hardware_threads = get_uint(a, "hardware_threads", ac, cap);
    acc.host_grids = get_uint(a, "host_grids", ac, cap);
    acc.host_blocks = get_uint(a, "host_blocks", ac, cap);
    acc.host_threads = get_uint(a, "host_threads", ac, cap);
    acc.child_grids = get_uint(a, "child_grids", ac, cap);
    acc.child_blocks = get_uint(a, "child_blocks", ac, cap);
    acc.child_threads = get_uint(a, "child_threads", ac, cap);
    acc.transfers = get_uint(a, "transfers", ac, cap);
    (void)get_string(a, "status", ac);  // recomputed by classify()
    h.accounting = acc;
  }
  return h;
}

timeline_profile read_timeline(const json& j, const cursor& c) {
  timeline_profile t;
  t.interval_ns = get_uint(j, "interval_ns", c);
  if (t.interval_ns == 0) c.at("interval_ns").fail("expected a positive interval");
  t.ms = get_nonnegative(j, "ms", c);
  t.metrics = get_strings(j, "metrics", c);
  t.overflow = get_bool(j, "overflow", c);
  t.dropped = get_uint(j, "dropped", c);
  if (!member(j, "clock_offset_ns", c).is_null())  // null: not measured
    t.clock_offset_ns = get_int(j, "clock_offset_ns", c, std::numeric_limits<std::int64_t>::min() / 2,
                                std::numeric_limits<std::int64_t>::max() / 2);
  const json& samples = get_array(j, "samples", c);
  const std::size_t width = 2 + t.metrics.size();
  t.samples.reserve(samples.size());
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const json& row = samples[k];
    const auto at = [&] { return c.at("samples").at(k); };
    if (!row.is_array() || row.size() != width)
      at().fail("expected [start_ns, end_ns] and " + std::to_string(t.metrics.size()) + " values");
    timeline_sample s;
    s.start_ns = as_uint(row[0], std::numeric_limits<std::uint64_t>::max(), [&] { return at().at(0); });
    s.end_ns = as_uint(row[1], std::numeric_limits<std::uint64_t>::max(), [&] { return at().at(1); });
    if (s.end_ns < s.start_ns) at().fail("the sample ends before it starts");
    if (!t.samples.empty() && s.start_ns < t.samples.back().start_ns)
      at().fail("samples must be in time order");
    for (std::size_t m = 0; m < t.metrics.size(); ++m) {
      if (!row[2 + m].is_number()) at().at(2 + m).fail("expected a number");
      s.values.push_back(row[2 + m].get<double>());
    }
    t.samples.push_back(std::move(s));
  }
  return t;
}

/// A run reference in the host activity: null, or the id of a run of the document.
template <class At>
std::optional<std::uint64_t> read_run_ref(const json& v, const std::unordered_set<std::uint64_t>& ids, const At& at) {
  if (v.is_null()) return std::nullopt;
  const std::uint64_t id = as_uint(v, std::numeric_limits<std::uint64_t>::max(), at);
  if (ids.count(id) == 0) at().fail("no run has id " + std::to_string(id));
  return id;
}

host_activity_profile read_host_activity(const json& j, const std::vector<run_profile>& runs, const cursor& c) {
  constexpr std::uint64_t any = std::numeric_limits<std::uint64_t>::max();
  std::unordered_set<std::uint64_t> ids;
  for (const auto& r : runs) ids.insert(r.id);
  host_activity_profile a;
  const auto names = get_strings(j, "kernel_names", c);
  const json& kernels = get_array(j, "kernels", c);
  a.kernels.reserve(kernels.size());
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const json& row = kernels[k];
    // cursors are built on failure only (a million rows must not build a million strings)
    const auto at = [&] { return c.at("kernels").at(k); };
    if (!row.is_array() || row.size() != 6)
      at().fail("expected [run, name index, start_ns, end_ns, blocks, block_threads]");
    activity_kernel kernel;
    kernel.run = read_run_ref(row[0], ids, [&] { return at().at(0); });
    if (names.empty()) at().at(1).fail("a kernel names an entry of kernel_names, which is empty");
    kernel.name = names[as_uint(row[1], names.size() - 1, [&] { return at().at(1); })];
    kernel.start_ns = as_uint(row[2], any, [&] { return at().at(2); });
    kernel.end_ns = as_uint(row[3], any, [&] { return at().at(3); });
    if (kernel.end_ns < kernel.start_ns) at().fail("the kernel ends before it starts");
    kernel.blocks = as_uint(row[4], 1ull << 62, [&] { return at().at(4); });
    kernel.block_threads = as_uint(row[5], 1024, [&] { return at().at(5); });
    a.kernels.push_back(std::move(kernel));
  }
  const json& transfers = get_array(j, "transfers", c);
  a.transfers.reserve(transfers.size());
  for (std::size_t k = 0; k < transfers.size(); ++k) {
    const json& row = transfers[k];
    const auto at = [&] { return c.at("transfers").at(k); };
    if (!row.is_array() || row.size() != 5) at().fail("expected [run, kind, start_ns, end_ns, bytes]");
    activity_transfer t;
    t.run = read_run_ref(row[0], ids, [&] { return at().at(0); });
    if (!row[1].is_string()) at().at(1).fail("expected a transfer kind");
    t.kind = row[1].get<std::string>();
    t.start_ns = as_uint(row[2], any, [&] { return at().at(2); });
    t.end_ns = as_uint(row[3], any, [&] { return at().at(3); });
    if (t.end_ns < t.start_ns) at().fail("the transfer ends before it starts");
    t.bytes = as_uint(row[4], any, [&] { return at().at(4); });
    a.transfers.push_back(std::move(t));
  }
  a.dropped = get_uint(j, "dropped", c);
  return a;
}

site_profile read_site(const json& j, const cursor& c) {
  site_profile s;
  s.id = static_cast<int>(get_uint(j, "id", c, int_max));
  s.name = get_string(j, "name", c);
  s.requests = get_uint(j, "requests", c);
  const json& o = member(j, "outcomes", c);
  const cursor oc = c.at("outcomes");
  s.launched = get_uint(o, name(launch_outcome::launched), oc);
  s.fallback_budget = get_uint(o, name(launch_outcome::fallback_budget), oc);
  s.fallback_depth = get_uint(o, name(launch_outcome::fallback_depth), oc);
  s.fallback_error = get_uint(o, name(launch_outcome::fallback_error), oc);
  const json& errors = get_array(j, "failed_by_error", c);
  for (std::size_t k = 0; k < errors.size(); ++k) {
    const cursor ec = c.at("failed_by_error").at(k);
    s.failed_by_error.push_back({static_cast<int>(get_int(errors[k], "code", ec, INT_MIN, INT_MAX)),
                                 get_string(errors[k], "name", ec), get_uint(errors[k], "count", ec)});
  }
  s.failed_other_codes = get_uint(j, "failed_other_codes", c);
  const json& streams = member(j, "streams", c);
  const cursor sc = c.at("streams");
  if (!streams.is_object()) sc.fail("expected an object");
  for (int k = 0; k < stream_kind_count; ++k) {
    const auto kind = static_cast<stream_kind>(k);
    // "not_observed" (grids of an unmodified program) is optional: absent, none were launched
    if (kind == stream_kind::not_observed && !streams.contains(name(kind))) continue;
    s.stream_launches[static_cast<std::size_t>(k)] = get_uint(streams, name(kind), sc);
  }
  s.inline_items = get_uint(j, "inline_items", c);
  s.child_threads = get_uint(j, "child_threads", c);
  s.child_blocks = get_uint(j, "child_blocks", c);
  s.work_items = get_uint(j, "work_items", c);
  s.tiny_launches = get_uint(j, "tiny_launches", c);
  s.threads_log2 = get_counts<log2_buckets>(j, "threads_log2", c);
  s.blocks_log2 = get_counts<log2_buckets>(j, "blocks_log2", c);
  s.work_log2 = get_counts<log2_buckets>(j, "work_log2", c);
  const auto depth = get_counts<trace_limits::depth_buckets>(j, "depth_hist", c);
  s.depth_hist.assign(depth.begin(), depth.end());
  s.max_depth = static_cast<std::uint32_t>(get_uint(j, "max_depth", c, u32_max));
  const json& p = member(j, "probe", c);
  const cursor pc = c.at("probe");
  s.probe.steps = get_uint(p, "steps", pc);
  s.probe.active_lanes = get_uint(p, "active_lanes", pc);
  s.probe.warps = get_uint(p, "warps", pc);
  s.probe.lanes_hist = get_counts<32>(p, "lanes_hist", pc);
  s.probe.efficiency_hist = get_counts<32>(p, "efficiency_hist", pc);
  s.probe.step_efficiency = get_optional_number(p, "step_efficiency", pc);
  s.probe.mean_warp_efficiency = get_optional_number(p, "mean_warp_efficiency", pc);
  s.probe.efficiency_sum = get_number(p, "efficiency_sum", pc);
  const std::string role = get_string(j, "role", c);
  bool known = false;
  for (const site_role r : {site_role::launch, site_role::probe, site_role::child_probe})
    if (role == name(r)) {
      s.role = r;
      known = true;
    }
  if (!known) c.at("role").fail("unknown site role " + quoted_input(role) + " (launch, probe or child_probe)");
  return s;
}

/// One row of records.rows, column by column as record_fields says.
launch_record read_record(const json& row, const cursor& c) {
  const std::size_t columns = record_fields.size();
  if (!row.is_array() || row.size() != columns)
    c.fail("expected a record row of " + std::to_string(columns) + " fields");
  launch_record r{};
  r.start_ns = no_time_start;
  r.end_ns = no_time_end;
  for (std::size_t k = 0; k < columns; ++k) {
    const record_field& f = record_fields[k];
    const json& v = row[k];
    const auto at = [&] { return c.at(k); };
    switch (f.column) {
      case record_column::unsigned_number: f.set(r, as_uint(v, f.max, at)); break;
      case record_column::record_id_or_null: f.set(r, v.is_null() ? no_record : as_uint(v, f.max, at)); break;
      case record_column::stream_name: {
        if (!v.is_string()) at().fail("expected the stream name");
        const auto kind = stream_kind_named(v.get_ref<const std::string&>());
        if (!kind) at().fail("unknown stream name " + quoted_input(v.get<std::string>()));
        f.set(r, static_cast<std::uint64_t>(*kind));
        break;
      }
      case record_column::outcome_name: {
        if (!v.is_string()) at().fail("expected the outcome name");
        const auto outcome = launch_outcome_named(v.get_ref<const std::string&>());
        if (!outcome) at().fail("unknown outcome name " + quoted_input(v.get<std::string>()));
        f.set(r, static_cast<std::uint64_t>(*outcome));
        break;
      }
      case record_column::signed_number:
        f.set(r, static_cast<std::uint64_t>(as_int(v, f.min, static_cast<std::int64_t>(f.max), "expected an error code", at)));
        break;
      case record_column::time_or_null: f.set(r, v.is_null() ? ~0ull : as_uint(v, f.max, at)); break;
    }
  }
  // the execution window (the last two columns): both null, or start <= end
  const bool start_null = row[columns - 2].is_null(), end_null = row[columns - 1].is_null();
  if (start_null != end_null)
    c.at(start_null ? columns - 1 : columns - 2)
        .fail("expected null: start_ns and end_ns are null together (a child not measured)");
  if (!start_null && r.start_ns > r.end_ns)
    c.at(columns - 1).fail("expected end_ns >= start_ns (" + std::to_string(r.start_ns) + ")");
  if (!start_null && r.end_ns == no_time_end)
    c.at(columns - 1).fail("expected end_ns > 0 (0 is not a %globaltimer time)");
  if (!start_null && r.outcome != static_cast<std::uint8_t>(launch_outcome::launched))
    c.at(columns - 2).fail("expected null: a request that was not launched has no execution window");
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
  for (std::size_t k = 0; k < sites.size(); ++k)
    t.sites.push_back(read_site(sites[k], c.at("sites").at(k)));
  const json& records = member(j, "records", c);
  const cursor rc = c.at("records");
  t.records_requested = get_uint(records, "requested", rc);
  t.records_stored = get_uint(records, "stored", rc);
  t.records_dropped = get_uint(records, "dropped", rc);
  t.refusals_recorded = get_bool(records, "refusals", rc);
  // the columns are the ones this reader takes them to be
  const json& fields = get_array(records, "fields", rc);
  bool same = fields.size() == record_fields.size();
  for (std::size_t k = 0; same && k < fields.size(); ++k)
    same = fields[k].is_string() && fields[k].get_ref<const std::string&>() == record_fields[k].name;
  if (!same) {
    std::string names;
    for (const record_field& f : record_fields) names += (names.empty() ? "" : ", ") + std::string(f.name);
    rc.at("fields").fail("expected the record fields " + names);
  }
  const json& rows = get_array(records, "rows", rc);
  t.records.reserve(rows.size());
  // (the outcome's column: the one record_column::outcome_name)
  std::size_t outcome_at = 0;
  while (record_fields[outcome_at].column != record_column::outcome_name) ++outcome_at;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const launch_record r = read_record(rows[k], rc.at("rows").at(k));
    if (!t.refusals_recorded && !takes_record(static_cast<launch_outcome>(r.outcome)))
      rc.at("rows").at(k).at(outcome_at).fail(
          "expected a launched or failed request: records.refusals is false, so a refused request has no record");
    t.records.push_back(r);
  }
  t.summary = summarize(t);
  return t;
}

/// The document's "schema" must be profile_schema. An older version of the same format (its
/// prefix, then a smaller version number) is named as no longer read; anything else is unknown.
void check_schema(const json& doc, const cursor& root) {
  const json& schema = member(doc, "schema", root);
  if (!schema.is_string()) root.at("schema").fail("expected a string");
  const std::string& given = schema.get_ref<const std::string&>();
  const std::string current = profile_schema;
  if (given == current) return;
  const std::size_t slash = current.rfind('/') + 1;
  const std::string current_number = current.substr(slash);
  if (given.size() > slash && given.compare(0, slash, current, 0, slash) == 0) {
    const std::string number = given.substr(slash);
    const bool digits = std::all_of(number.begin(), number.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    const bool older = digits && number[0] != '0' &&
                       (number.size() < current_number.size() ||
                        (number.size() == current_number.size() && number < current_number));
    if (older) root.at("schema").fail(given + " is no longer read; re-run the program to write " + current);
  }
  root.at("schema").fail("unsupported schema " + quoted_input(given) + " (this tool reads " + current + ")");
}

}  // namespace

profile parse_profile(const std::string& text, const std::string& name) {
  json doc = parse_document(text, name);
  try {
    const cursor root{name, ""};
    if (!doc.is_object()) root.fail("expected a JSON object");
    check_schema(doc, root);
    profile p;
    p.path = utf8_replaced(name);
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
    json& build = member(doc, "build", root);
    if (!build.is_object()) root.at("build").fail("expected an object");
    p.build = std::move(build);
    json& runs = get_array(doc, "runs", root);
    p.runs.reserve(runs.size());
    for (std::size_t k = 0; k < runs.size(); ++k) {
      json& r = runs[k];
      const cursor c = root.at("runs").at(k);
      run_profile run;
      run.id = get_uint(r, "id", c);
      run.algorithm = get_string(r, "algorithm", c);
      run.variant = get_string(r, "variant", c);
      run.input = get_string(r, "input", c);
      const json& baseline = member(r, "baseline", c);
      if (!baseline.is_null() && !baseline.is_string()) c.at("baseline").fail("expected a variant name or null");
      if (baseline.is_string()) run.baseline = baseline.get<std::string>();
      run.params = std::move(member(r, "params", c));
      run.ms = get_nonnegative(r, "ms", c);
      run.work = get_uint(r, "work", c);
      run.work_unit = get_string(r, "work_unit", c);
      run.checked = get_bool(r, "checked", c);
      run.verified = get_bool(r, "verified", c);
      run.mismatches = get_uint(r, "mismatches", c);
      const json& trace = member(r, "trace", c);
      if (!trace.is_null()) run.trace = read_trace(trace, c.at("trace"));
      const json& hardware = member(r, "hardware", c);
      if (!hardware.is_null()) run.hardware = read_hardware(hardware, c.at("hardware"));
      const json& timeline = member(r, "timeline", c);
      if (!timeline.is_null()) run.timeline = read_timeline(timeline, c.at("timeline"));
      const json& collect = member(r, "collect", c);
      const cursor cc = c.at("collect");
      run.collect.traced_ms = get_optional_nonnegative(collect, "traced_ms", cc);
      run.collect.metrics_ms = get_optional_nonnegative(collect, "metrics_ms", cc);
      run.collect.timeline_ms = get_optional_nonnegative(collect, "timeline_ms", cc);
      run.collect.baseline_ms = get_optional_nonnegative(collect, "baseline_ms", cc);
      run.collect.baseline_runs_ms = get_nonnegative_numbers(collect, "baseline_runs_ms", cc);
      run.collect.traced_runs_ms = get_nonnegative_numbers(collect, "traced_runs_ms", cc);
      p.runs.push_back(std::move(run));
    }
    const json& collector = member(doc, "collector", root);
    if (!collector.is_null()) {
      collector_profile cp;
      cp.requested = get_strings(collector, "requested", root.at("collector"));
      cp.notes = get_strings(collector, "notes", root.at("collector"));
      if (collector.contains("incomplete"))  // optional: absent when the program ran to its exit
        cp.incomplete = get_string(collector, "incomplete", root.at("collector"));
      p.collector = std::move(cp);
    }
    const json& activity = member(doc, "host_activity", root);
    if (!activity.is_null()) p.host_activity = read_host_activity(activity, p.runs, root.at("host_activity"));
    if (doc.contains("pictures")) {  // optional: a program without pictures writes none
      json& pictures = get_array(doc, "pictures", root);
      for (std::size_t k = 0; k < pictures.size(); ++k) {
        const cursor pc = root.at("pictures").at(k);
        if (!pictures[k].is_object()) pc.fail("expected an object with a title and an svg");
        picture pic{get_string(pictures[k], "title", pc), get_string(pictures[k], "svg", pc)};
        if (const std::string problem = picture_problem(pic); !problem.empty()) pc.at("svg").fail(problem);
        p.pictures.push_back(std::move(pic));
      }
    }
    return p;
  } catch (const json::exception& e) {  // every access above is checked first; a backstop
    throw format_error(name + ": unexpected JSON content: " + plain_message(e.what()));
  }
}

profile load_profile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw format_error(path + ": is a directory, not a profile");
  // Only regular files, and not absurdly large ones: /dev/zero or a FIFO would be read without
  // end (or block), and a profile of a million launch records is about 60 MB.
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw format_error(path + ": not a regular file; profiles are read from regular files only");
  if (!ec && std::filesystem::is_regular_file(status)) {
    const auto bytes = std::filesystem::file_size(path, ec);
    if (!ec && bytes > max_profile_bytes)
      throw format_error(path + ": " + std::to_string(bytes) + " bytes, more than a profile may have (" +
                         std::to_string(max_profile_bytes) + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw format_error(path + ": cannot open");
  // The text is read into one string of the file's size (checked first against what the process
  // can still allocate); the document's own budget is checked while it is parsed.
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0 || !in) throw format_error(path + ": read error");
  const auto bytes = static_cast<std::uint64_t>(size);
  if (bytes > max_profile_bytes) throw format_error(path + ": more than a profile may have");
  if (const std::size_t can = allocatable_bytes(); bytes > can / 2)
    throw format_error(path + ": " + std::to_string(bytes >> 20) + " MiB, more than half of the " +
                       std::to_string(can >> 20) + " MiB this process can still allocate");
  std::string text;
  try {
    text.resize(static_cast<std::size_t>(bytes));
  } catch (const std::bad_alloc&) {
    throw format_error(path + ": out of memory reading " + std::to_string(bytes >> 20) + " MiB");
  }
  if (bytes > 0 && !in.read(text.data(), static_cast<std::streamsize>(bytes))) throw format_error(path + ": read error");
  return parse_profile(text, path);
}

}  // namespace cdpkit::schema
