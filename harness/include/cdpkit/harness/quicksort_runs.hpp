#pragma once
// The quicksort runs shared by the sample and the benchmark: a sort case (keys of one type and
// distribution, generated on the host), every variant run on it with the measurement protocol and
// checked element by element against a reference sorted once by the library's thrust_merge, the
// table with ratios to the Thrust yardsticks, and the benchmark rows.

#include <cdpkit/launch.hpp>
#include <cdpkit/quicksort.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/harness/sort_inputs.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace cdpkit::harness {

/// Host keys of one of the six key types (sort_key_type).
using sort_keys = std::variant<std::vector<std::int32_t>, std::vector<std::uint32_t>,
                               std::vector<std::int64_t>, std::vector<std::uint64_t>,
                               std::vector<float>, std::vector<double>>;

/// Bytes of one key of `type`.
std::size_t key_bytes(sort_key_type type) noexcept;

/// One input to sort: n keys of `type` drawn from `dist`, sorted ascending (cdpkit::less) alone
/// or, by key, with uint32 values (the values are 0..n-1 before every run).
struct sort_case {
  std::string input;  ///< "uniform:16777216", ":u64" for other key types, ":by_key" by key
  sort_key_type type = sort_key_type::u32;
  sort_distribution dist = sort_distribution::uniform;
  std::uint64_t n = 0;
  std::uint64_t seed = 0;
  bool by_key = false;
  sort_keys keys;  ///< the input, on the host (never modified by the runs)
};

/// "uniform:16777216", "uniform:16777216:u64", "uniform:1048576:by_key" (the rows' input).
std::string sort_input_label(sort_key_type type, sort_distribution dist, std::uint64_t n,
                             bool by_key);

/// Generate the case's keys (harness::make_sort_input). Throws cdpkit::input_error for
/// n > quicksort_max_keys or keys that do not fit the host's memory.
sort_case make_sort_case(sort_key_type type, sort_distribution dist, std::uint64_t n,
                         std::uint64_t seed, bool by_key);

/// Device bytes a sort_runner for this case allocates to run `variants`: the keys, a pristine
/// copy of the input, the values and their pristine copy (by key), and scratch for the largest
/// of the variants and the thrust_merge reference. Saturates instead of wrapping.
std::uint64_t sort_device_bytes(sort_key_type type, std::uint64_t n, bool by_key,
                                const std::vector<quicksort_variant>& variants);

/// Host bytes a sort_runner allocates beside the case's keys: the reference, the copy of each
/// run's output and, by key, the values and a permutation bitmap.
std::uint64_t sort_host_bytes(sort_key_type type, std::uint64_t n, bool by_key);

/// Throws cdpkit::input_error when n is above quicksort_max_keys or the case's host side
/// (sort_host_bytes) would not fit the host's available memory (cdpkit/memory.hpp). Needs no GPU:
/// a program checks this before the device.
void require_sort_host_memory(sort_key_type type, std::uint64_t n, bool by_key);

/// Throws cdpkit::input_error ("<what> needs N bytes of device memory, ...") when a sort_runner
/// for this case would not fit the host's available memory (require_sort_host_memory, checked
/// first) or the device's free memory. The benchmark calls it to skip what does not fit.
void require_sort_memory(sort_key_type type, std::uint64_t n, bool by_key,
                         const std::vector<quicksort_variant>& variants);

/// One variant's result on a case: its times (and what was collected), the last run's result,
/// and the first mismatch its checks found.
struct quicksort_run {
  quicksort_variant variant = quicksort_variant::fast;
  measurement m;
  quicksort_result result;  ///< what the last (traced) run did
  std::string first_mismatch;  ///< the first wrong key a check found ("" when none)
};

/// The device side of one case: the device keys (values), the input's pristine device copy, the
/// scratch, and the reference (the input sorted once by thrust_merge, kept on the host). Each run
/// (quicksort_options::runtime = the runtime given, scratch = the runner's) sorts in place;
/// `prepare` copies the input back onto the keys (and 0..n-1 onto the values) untimed before
/// every run. Checks copy the keys (values) back and compare them with the reference:
///   keys alone: equal bit for bit (floats: +0.0 and -0.0 may trade places, their counts must
///               match);
///   by key:     the keys as above, keys[k] == input[values[k]] bit for bit, values a permutation.
/// Move-only; the case must outlive the runner.
class sort_runner {
 public:
  /// Checks the memory (require_sort_memory), allocates, and sorts the reference. `variants`:
  /// those that will run (the scratch is sized for them). Throws cdpkit::input_error (sizes,
  /// memory), cdpkit::cuda_error.
  sort_runner(const sort_case& c, launch_runtime& runtime,
              const std::vector<quicksort_variant>& variants);
  ~sort_runner();
  sort_runner(sort_runner&&) noexcept;
  sort_runner& operator=(sort_runner&&) noexcept;
  sort_runner(const sort_runner&) = delete;
  sort_runner& operator=(const sort_runner&) = delete;

  /// Time `v` `reps` times with tracing off, trace one more run, check both outputs; with a
  /// `collector`, collect what it says (harness::measure; the range "quicksort::<variant>").
  /// Throws cdpkit::input_error when `v` needs more scratch than the runner was sized for.
  quicksort_run run(quicksort_variant v, int reps, profiling::collector* collector = nullptr);

  /// Keys of the reference that are out of order (a broken reference; 0 expected). They are
  /// counted as mismatches of every run.
  [[nodiscard]] std::uint64_t reference_defects() const noexcept;

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

/// Run each variant on the case (one runner, so one reference).
std::vector<quicksort_run> run_quicksort_variants(const sort_case& c, launch_runtime& runtime,
                                                  const std::vector<quicksort_variant>& variants,
                                                  int reps, profiling::collector* collector = nullptr);

/// The table: ms, Mkeys/s, ratios to thrust_radix and thrust_merge (when they ran; >1 =
/// faster), child launches, tiny-grid %, max depth, fallbacks, warp efficiency, check.
void print_quicksort_results(std::ostream& out, const sort_case& c,
                             const std::vector<quicksort_run>& runs);

/// The run's params (type, dist, seed, by_key, n, scratch, host levels).
nlohmann::json quicksort_params(const sort_case& c, const quicksort_run& r);

/// Family "quicksort", baseline "thrust_merge", work = n keys, Gkeys/s.
bench_row to_bench_row(const sort_case& c, const quicksort_run& r);

}  // namespace cdpkit::harness
