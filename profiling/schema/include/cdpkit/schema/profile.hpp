#pragma once
// cdpkit/schema/profile.hpp — the profile document, defined once: its types, its version, the
// table of launch-record fields, the JSON writer and the validating reader, and the trace summary.
// The profiler writes it (cdpkit::profiling::profile_document), the reports read it
// (cdpkit::report); profiling/README.md documents every field.
//
// The current version (profile_schema): device, build, runs, collector, host activity, pictures.

#include <cdpkit/trace_format.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit::schema {

/// The document's "schema": the one version this code writes and reads. Every mention of the
/// version (help texts, messages) is made from it.
inline constexpr const char* profile_schema = "cdpkit-profile/4";

/// A profile that cannot be read: the message names the file and where
/// (e.g. "run.json: /runs/2/trace/sites/0/threads_log2: expected an array of 33 numbers").
class format_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int log2_buckets = trace_limits::log2_buckets;
/// The deepest nesting of arrays and objects a profile may have. A real profile nests 8 levels
/// (runs/k/trace/sites/k/probe/lanes_hist); `params` and `build` are free-form, so the cap leaves
/// room, but a document nested deeper is refused before any value is built: copying, printing
/// or destroying a deep value recurses once per level and would overflow the stack.
inline constexpr int max_nesting_depth = 64;
/// Largest profile file load_profile reads (1 GiB; a million launch records take about 60 MB).
inline constexpr std::uint64_t max_profile_bytes = 1ull << 30;

// --- the launch-record columns ----------------------------------------------------------------

/// How a record column is written: a number, a record id or null, a name, a signed code, a time
/// or null (the getter gives ~0 for null; the setter takes ~0 for null).
enum class record_column {
  unsigned_number,
  record_id_or_null,
  stream_name,
  outcome_name,
  signed_number,
  time_or_null
};

/// One column of a record row: its name, its kind, the range of its values, and how it is taken
/// from / put into a launch_record.
struct record_field {
  const char* name;
  record_column column;
  std::int64_t min;   ///< signed_number only
  std::uint64_t max;  ///< unsigned_number, record_id_or_null, signed_number
  std::uint64_t (*get)(const launch_record&);  ///< signed values as two's complement
  void (*set)(launch_record&, std::uint64_t);
};

/// The columns of records.rows, in order: id, parent, t_ns, site, depth, blocks,
/// child_block_threads, work, stream, outcome, error, start_ns, end_ns. Writer and reader both
/// use this table.
extern const std::array<record_field, 13> record_fields;

// --- the document -----------------------------------------------------------------------------

/// What a site is, for the findings: a launch site, a probe in the code that launches (or loops
/// instead), or a probe inside child grids.
enum class site_role { launch, probe, child_probe };
/// "launch", "probe", "child_probe".
const char* name(site_role role) noexcept;

struct error_count {
  int code = 0;
  std::string name;
  std::uint64_t count = 0;
};

struct probe_profile {
  std::uint64_t steps = 0, active_lanes = 0, warps = 0;
  std::array<std::uint64_t, 32> lanes_hist{};       ///< [i]: steps with i + 1 active lanes
  std::array<std::uint64_t, 32> efficiency_hist{};  ///< [b]: warps with efficiency in [b/32, (b+1)/32)
  std::optional<double> step_efficiency, mean_warp_efficiency;
  double efficiency_sum = 0;                        ///< sum of the per-warp efficiencies
};

struct site_profile {
  int id = 0;
  std::string name;
  site_role role = site_role::launch;
  std::uint64_t requests = 0;
  std::uint64_t launched = 0, fallback_budget = 0, fallback_depth = 0, fallback_error = 0;
  std::vector<error_count> failed_by_error;
  std::uint64_t failed_other_codes = 0;  ///< failures whose codes did not fit the error slots
  std::uint64_t inline_items = 0, child_threads = 0, child_blocks = 0, work_items = 0,
                tiny_launches = 0;
  std::array<std::uint64_t, stream_kind_count> stream_launches{};  ///< launched grids by stream_kind
  std::array<std::uint64_t, log2_buckets> threads_log2{}, blocks_log2{}, work_log2{};
  std::vector<std::uint64_t> depth_hist;  ///< trace_limits::depth_buckets entries
  std::uint32_t max_depth = 0;
  probe_profile probe;
  [[nodiscard]] std::uint64_t fallbacks() const { return fallback_budget + fallback_depth + fallback_error; }
};

/// The headline figures of a trace: what sample tables, benchmark rows, the profile's "summary"
/// and the reports show. Computed by summarize() only.
struct trace_summary {
  std::uint64_t launch_requests = 0;  ///< device launch requests (all outcomes)
  std::uint64_t child_launches = 0;   ///< requests that launched a child grid
  std::uint64_t fallbacks = 0;        ///< requests whose work was done inline instead
  std::uint64_t fallback_budget = 0;  ///< ... because the pending budget was spent
  std::uint64_t fallback_depth = 0;   ///< ... because of the depth cap
  std::uint64_t failed_launches = 0;  ///< ... because the launch returned an error
  std::uint64_t tiny_launches = 0;    ///< launched grids with fewer than tiny_grid_work items
  double tiny_grid_share = 0.0;       ///< tiny_launches / child_launches (0 without launches)
  std::uint32_t max_depth = 0;        ///< deepest child grid launched
  std::uint32_t pending_high_water = 0;
  std::uint64_t probe_steps = 0;      ///< probed warp steps over every site
  std::uint64_t probe_active_lanes = 0;
  /// Active lanes / (32 * steps) over every probed warp step of every site (1 = no divergence);
  /// negative when nothing was probed.
  double warp_efficiency = -1.0;
  /// Mean of the per-warp efficiencies over every probed warp; negative when none.
  double mean_warp_efficiency = -1.0;
};

struct trace_profile {
  std::uint64_t pending_limit = 0, pending_budget = 0, pending_high_water = 0;
  std::uint64_t max_depth_limit = 0, tiny_grid_work = cdpkit::tiny_grid_work;
  std::uint64_t records_requested = 0;  ///< traced requests that take a record (kept or dropped)
  std::uint64_t records_stored = 0;     ///< records the device buffer kept
  std::uint64_t records_dropped = 0;
  /// Refused requests took records too (launch_config::record_refusals); else only the grids
  /// launched and the failed launches did.
  bool refusals_recorded = true;
  std::vector<site_profile> sites;      ///< sites with activity only, by id
  std::vector<launch_record> records;   ///< the records in the profile (the first ones stored)
  trace_summary summary;                ///< summarize() of the above (the reader computes it too)
  /// The site with `id`, or null.
  [[nodiscard]] const site_profile* site(int id) const;
  /// The site's name, or "site.<id>" when the trace has no such site.
  [[nodiscard]] std::string site_name(int id) const;
};

/// One algorithm run as its program describes it (profiling::run_info is this type).
struct run_description {
  std::string algorithm;  ///< family: "loop_to_child", "bfs", ...
  std::string variant;    ///< the library's variant name: "thresholded", ...
  std::string input;      ///< e.g. "power_law:1048576"
  /// The variant this run is compared to among the runs of the same algorithm and input (e.g.
  /// "serial_loop"); empty: the first run of that input.
  std::string baseline;
  nlohmann::json params = nlohmann::json::object();  ///< variant parameters (threshold, stream...)
  double ms = 0;             ///< wall time of the run (CUDA events)
  std::uint64_t work = 0;    ///< items / edges / keys processed
  std::string work_unit;     ///< "items", "edges", "keys"
  bool checked = false;      ///< the output was checked at all
  bool verified = false;     ///< the output was checked against the reference and matched
  std::uint64_t mismatches = 0;
};

/// The CTA accounting of one measured run: the CTAs (and threads) the hardware ran against the
/// blocks the host launched (activity API) and the child blocks the trace says were launched.
struct cta_accounting {
  std::uint64_t hardware_ctas = 0;     ///< sm__ctas_launched.sum over the run
  std::uint64_t hardware_threads = 0;  ///< sm__threads_launched.sum over the run
  std::uint64_t host_grids = 0, host_blocks = 0, host_threads = 0;     ///< host-launched kernels
  std::uint64_t child_grids = 0, child_blocks = 0, child_threads = 0;  ///< launched child grids (trace)
  std::uint64_t transfers = 0;  ///< copies and memsets in the run (the driver runs kernels for some)
  /// hardware - host - child CTAs: those no launch of the program accounts for (negative: traced
  /// child blocks the hardware never ran).
  [[nodiscard]] std::int64_t unaccounted() const noexcept;
  /// The same for threads.
  [[nodiscard]] std::int64_t unaccounted_threads() const noexcept;
};

/// How the accounting reads (classify()). Measured on an H200 (CUDA 13.0, docs/design.md): the
/// CUDA device runtime runs CTAs of its own beside a program's device launches, each of one
/// thread or one warp (e.g. a parent block launching 64 one-block grids: 6 more CTAs, 1 of one
/// thread and 5 of 32); without device launches there are none; the first launches of a process
/// add 4; copies and memsets may run the driver's own kernels.
enum class accounting_status {
  exact,             ///< every CTA and thread is a host block or a traced child block
  device_runtime,    ///< more CTAs, each of 1 to 32 threads: the device runtime's own
  driver_transfers,  ///< more CTAs, and the run made copies or memsets (their kernels' sizes unknown)
  missing_ctas,      ///< fewer CTAs or threads than the launches: traced child grids that never ran
  extra_ctas         ///< more CTAs than the launches account for, not the device runtime's kind
};
accounting_status classify(const cta_accounting& a) noexcept;
/// "exact", "device_runtime", "driver_transfers", "missing_ctas", "extra_ctas".
const char* name(accounting_status s) noexcept;

/// Hardware warp efficiency from a range's counters: thread instructions / (32 * warp
/// instructions) (smsp__thread_inst_executed.sum, smsp__inst_executed.sum); unset without both
/// or with no warp instructions.
std::optional<double> hardware_warp_efficiency(std::optional<double> warp_instructions,
                                               std::optional<double> thread_instructions);

/// What CUPTI's range profiler measured over one more run of a variant (its own range).
struct hardware_profile {
  std::string range;  ///< the range's name
  double ms = 0;      ///< the measured run's time (CUDA events inside the range)
  std::uint64_t passes = 1;
  std::vector<std::pair<std::string, double>> metrics;  ///< as measured; read back by name order
  std::optional<cta_accounting> accounting;              ///< when host kernels were recorded
  /// The value of `metric`, unset when not measured.
  [[nodiscard]] std::optional<double> value(const std::string& metric) const;
  /// smsp__thread_inst_executed.sum / (32 * smsp__inst_executed.sum), unset without both.
  [[nodiscard]] std::optional<double> warp_efficiency() const;
};

/// One PM sample: its window (ns, CUPTI's clock; see clock_offset_ns) and a value per timeline
/// metric.
struct timeline_sample {
  std::uint64_t start_ns = 0, end_ns = 0;
  std::vector<double> values;
};

/// The PM samples taken while the traced run ran.
struct timeline_profile {
  std::uint64_t interval_ns = 0;
  double ms = 0;  ///< the sampled run's time
  std::vector<std::string> metrics;
  bool overflow = false;
  std::uint64_t dropped = 0;
  std::vector<timeline_sample> samples;  ///< by start time
  /// The device trace's clock (%globaltimer) minus CUPTI's, measured in the sampled run; that
  /// run's trace times were moved onto CUPTI's clock by it. Unset: not measured (trace times as
  /// recorded).
  std::optional<std::int64_t> clock_offset_ns;
  [[nodiscard]] std::optional<std::size_t> index_of(const std::string& metric) const;
  /// The time-weighted mean of `metric` over the samples (equal weights when every window is
  /// empty); unset when not sampled or without samples.
  [[nodiscard]] std::optional<double> mean(const std::string& metric) const;
};

/// The times of the collection runs of a variant (ms; unset: not made). `baseline_ms`: the fastest
/// of untraced runs made as the collection runs are (the preparation waited for, the GPU idle,
/// then the run between two events), so that a collection run's time over it is what collecting
/// cost; unset: not made, and the overheads are taken over the timed median.
/// `baseline_runs_ms`, `traced_runs_ms`: every one of those untraced runs and of the traced runs
/// (whose fastest are baseline_ms and traced_ms), in the order made: so that a reader sees their
/// spread, not only the floors compared (empty: not made).
struct collect_times {
  std::optional<double> traced_ms, metrics_ms, timeline_ms, baseline_ms;
  std::vector<double> baseline_runs_ms, traced_runs_ms;
};

/// A run in the profile: its description, its index in the document, and its trace (if traced).
struct run_profile : run_description {
  std::uint64_t id = 0;
  std::optional<trace_profile> trace;
  std::optional<hardware_profile> hardware;  ///< unset: not measured
  std::optional<timeline_profile> timeline;  ///< unset: not sampled
  collect_times collect;
};

/// A host-launched kernel or a transfer, as CUPTI's activity API saw it (ns, CUPTI's clock, that
/// of the PM samples; the trace of a sampled run is moved onto it). `run`: the run it belongs to,
/// unset when none.
struct activity_kernel {
  std::optional<std::uint64_t> run;
  std::string name;
  std::uint64_t start_ns = 0, end_ns = 0, blocks = 0, block_threads = 0;
};
struct activity_transfer {
  std::optional<std::uint64_t> run;
  std::string kind;  ///< "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "memset", "other"
  std::uint64_t start_ns = 0, end_ns = 0, bytes = 0;
};
struct host_activity_profile {
  std::vector<activity_kernel> kernels;
  std::vector<activity_transfer> transfers;
  std::uint64_t dropped = 0;
};

/// What the collector was asked for and why any part of it stood aside.
struct collector_profile {
  std::vector<std::string> requested;  ///< "trace", "metrics", "timeline"
  std::vector<std::string> notes;      ///< e.g. "metrics: CUPTI: ...: another profiler holds CUPTI"
  /// Set when the profile holds only part of the program: why the collection stopped before the
  /// program's end (e.g. "the program was stopped by signal 11 (SIGSEGV)"). The JSON's optional
  /// "incomplete" (absent: the profile covers the program to its exit).
  std::optional<std::string> incomplete;
};

/// A picture a program made of its input or output (e.g. the Bézier sample's tessellated curves),
/// shown by the report as an image: a title and a standalone SVG document of at most
/// max_picture_bytes. The document's "pictures" is optional (absent: none).
struct picture {
  std::string title;
  std::string svg;
};
inline constexpr std::size_t max_picture_bytes = 8u << 20;

struct device_profile {
  std::string name, cc;
  std::uint64_t sms = 0, memory_bytes = 0;
  std::uint64_t max_threads_per_sm = 2048;  ///< optional in the profile; 2048 on sm_90
  std::int64_t driver = 0, runtime = 0;
};

struct profile {
  std::string path;  ///< the name given to the reader, invalid UTF-8 replaced by U+FFFD (display only)
  std::string program, created;
  device_profile device;
  nlohmann::json build = nlohmann::json::object();
  std::vector<run_profile> runs;
  std::optional<collector_profile> collector;          ///< unset: no collector ran
  std::optional<host_activity_profile> host_activity;  ///< unset: not recorded
  std::vector<picture> pictures;
};

// --- the summary ------------------------------------------------------------------------------

/// The trace summary, computed here and nowhere else: totals over the sites, the tiny share, the
/// fallbacks by cause, the deepest launch, and the step and warp efficiencies of the probes.
trace_summary summarize(const trace_profile& trace);
/// The same for a trace as the device left it (the profiler and the benchmark harness call this).
trace_summary summarize(const trace_snapshot& snapshot);

// --- from a device trace ----------------------------------------------------------------------

/// How make_trace names what the device recorded as numbers. Empty functions give "site.<id>",
/// default_site_role, and "error <code>".
struct trace_naming {
  std::function<std::string(std::uint16_t)> site_name;
  std::function<schema::site_role(std::uint16_t, const site_counters&)> role;
  std::function<std::string(int)> error_name;
};

/// A launch site when it had requests, else a probe.
site_role default_site_role(const site_counters& counters) noexcept;

/// The document's form of a device trace: the sites with requests or probe steps, the first
/// `max_records` records, and its summary. Precondition: snapshot.sites.size() <=
/// trace_limits::max_sites (site ids are indexes).
trace_profile make_trace(const trace_snapshot& snapshot, const trace_naming& naming = {},
                         std::size_t max_records = 65536);

// --- JSON -------------------------------------------------------------------------------------

/// The summary's JSON (the trace's "summary" object).
nlohmann::json summary_json(const trace_summary& summary);
/// The trace's JSON, in the current version (its summary recomputed with summarize()).
nlohmann::json trace_json(const trace_profile& trace);
/// One run's JSON, in the current version.
nlohmann::json run_json(const run_profile& run);
/// The whole document's JSON, in the current version.
nlohmann::json profile_json(const profile& p);

/// The hardware part of a run, the timeline and the host activity in the document's form.
nlohmann::json hardware_json(const hardware_profile& h);
nlohmann::json timeline_json(const timeline_profile& t);
nlohmann::json host_activity_json(const host_activity_profile& a);
nlohmann::json collector_json(const collector_profile& c);
/// A picture's JSON. Throws format_error for an SVG that picture_problem refuses.
nlohmann::json picture_json(const picture& p);
/// Why a picture is not one the report can show (empty when it is): an SVG document is expected
/// ("<svg" or "<?xml" first, after blanks), of at most max_picture_bytes, valid UTF-8.
std::string picture_problem(const picture& p);

/// Parse and validate one profile of the current version (profile_schema); `name` is used in
/// error messages. Throws format_error for anything the text can hold: invalid JSON, numbers out
/// of range (1e999), nesting deeper than max_nesting_depth, a missing or mistyped field, another
/// version (an older one of this format: "<its schema> is no longer read; re-run the program to
/// write <profile_schema>"). The message names `name` and where: the byte offset, line and column
/// for the JSON syntax, the JSON pointer for a field. Each trace's summary is computed with
/// summarize().
profile parse_profile(const std::string& text, const std::string& name);

/// Read, parse and validate a profile file. Throws format_error (also for unreadable files,
/// directories, files that are not regular, and files over max_profile_bytes).
profile load_profile(const std::string& path);

}  // namespace cdpkit::schema
