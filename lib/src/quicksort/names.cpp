// quicksort: variant names and the scratch layout (host only).

#include <cdpkit/error.hpp>
#include <cdpkit/quicksort.hpp>

#include "../common/text_input.hpp"

#include <string>

namespace cdpkit {

namespace {
struct variant_name {
  quicksort_variant variant;
  const char* name;
};
constexpr variant_name variant_names[] = {
    {quicksort_variant::simple, "simple"},
    {quicksort_variant::two_stream, "two_stream"},
    {quicksort_variant::fast, "fast"},
    {quicksort_variant::radix, "radix"},
    {quicksort_variant::host_driven, "host_driven"},
    {quicksort_variant::thrust_radix, "thrust_radix"},
    {quicksort_variant::thrust_merge, "thrust_merge"},
};
}  // namespace

const char* to_string(quicksort_variant v) noexcept {
  for (const auto& e : variant_names)
    if (e.variant == v) return e.name;
  return "unknown";
}

quicksort_variant parse_quicksort_variant(const std::string& name) {
  for (const auto& e : variant_names)
    if (name == e.name) return e.variant;
  std::string choices;
  for (const auto& e : variant_names) choices += std::string(choices.empty() ? "" : ", ") + e.name;
  throw input_error("unknown quicksort variant " + quoted_input(name) + " (choices: " + choices + ")");
}

const std::vector<quicksort_variant>& all_quicksort_variants() {
  static const std::vector<quicksort_variant> all = [] {
    std::vector<quicksort_variant> v;
    for (const auto& e : variant_names) v.push_back(e.variant);
    return v;
  }();
  return all;
}

namespace quicksort_detail {

namespace {
constexpr std::size_t align_up(std::size_t v) { return (v + 255) / 256 * 256; }

std::size_t task_bytes(quicksort_variant variant, std::size_t key_bytes) {
  const bool wide = key_bytes > 4;
  if (variant == quicksort_variant::two_stream)
    return wide ? sizeof(two_stream_task<std::uint64_t>) : sizeof(two_stream_task<std::uint32_t>);
  if (variant == quicksort_variant::radix)
    return wide ? sizeof(radix_task<std::uint64_t>) : sizeof(radix_task<std::uint32_t>);
  return wide ? sizeof(fast_task<std::uint64_t>) : sizeof(fast_task<std::uint32_t>);
}
}  // namespace

scratch_layout make_scratch_layout(quicksort_variant variant, std::uint64_t n,
                                   std::size_t key_bytes, std::size_t value_bytes) {
  if (n > quicksort_max_keys)
    throw input_error("quicksort: " + std::to_string(n) + " keys; at most " +
                      std::to_string(quicksort_max_keys) + " (2^32 - 1) per call");
  if (key_bytes != 4 && key_bytes != 8)
    throw input_error("quicksort: keys of " + std::to_string(key_bytes) +
                      " bytes; 4- and 8-byte keys are supported");
  scratch_layout l;
  std::size_t at = 0;
  const auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at = align_up(at + bytes);
    return here;
  };
  switch (variant) {
    case quicksort_variant::simple: break;  // in place
    case quicksort_variant::thrust_radix:
    case quicksort_variant::thrust_merge:
      // Thrust's own temporary storage: a double buffer and its tables (taken from the
      // caller's scratch by a bump allocator when one is given).
      l.keys = take(n * (key_bytes + value_bytes) + (std::size_t{32} << 20));
      break;
    case quicksort_variant::two_stream:
      l.keys = take(n * key_bytes);
      l.values = take(n * value_bytes);
      l.counters = take(sizeof(scratch_counters));
      l.task_capacity = static_cast<std::uint32_t>(2 * (n / tile_keys) + 64);
      l.task_bytes = task_bytes(variant, key_bytes);
      l.tasks = take(std::size_t{l.task_capacity} * l.task_bytes);
      break;
    case quicksort_variant::fast:
    case quicksort_variant::host_driven: {
      l.keys = take(n * key_bytes);
      l.values = take(n * value_bytes);
      l.counters = take(sizeof(scratch_counters));
      l.task_capacity = static_cast<std::uint32_t>(n / medium_keys + 64);
      l.task_bytes = task_bytes(variant, key_bytes);
      l.tasks = take(std::size_t{l.task_capacity} * l.task_bytes);
      // per-block bucket offsets: three levels of grids over all keys, plus every task's
      // rounded-up last block
      const std::uint64_t words =
          (3 * (n / grid_keys_per_block) + l.task_capacity) * std::uint64_t{max_buckets};
      l.arena_capacity = static_cast<std::uint32_t>(words);
      l.arena = take(words * sizeof(std::uint32_t));
      // the small-range queue: every bucket of every task at most; host_driven adds the block ->
      // task map of a level's grids
      l.job_capacity = l.task_capacity * max_buckets;
      l.jobs = take(std::size_t{l.job_capacity} * sizeof(small_job) +
                    (variant == quicksort_variant::host_driven
                         ? (std::size_t{l.task_capacity} + 1) * sizeof(std::uint32_t)
                         : 0));
      break;
    }
    case quicksort_variant::radix: {
      l.keys = take(n * key_bytes);
      l.values = take(n * value_bytes);
      l.counters = take(sizeof(scratch_counters));
      // a digit (8 bits) per level: a range is a task at most once per digit of its keys, and
      // the tasks of one level (each above radix_block_keys but the root) are disjoint; a full
      // pool makes a range a job of the drain, never an error
      const std::uint64_t digits = key_bytes;
      l.task_capacity = static_cast<std::uint32_t>(digits * (n / radix_block_keys) + 64);
      l.task_bytes = task_bytes(variant, key_bytes);
      l.tasks = take(std::size_t{l.task_capacity} * l.task_bytes);
      // per-block bucket offsets: a level's grids cover its keys once, plus each task's
      // rounded-up last block (a count run again one digit down reuses its task's words)
      const std::uint64_t words =
          (digits * (n / grid_keys_per_block) + l.task_capacity) * std::uint64_t{radix_buckets};
      l.arena_capacity = static_cast<std::uint32_t>(words);
      l.arena = take(words * sizeof(std::uint32_t));
      // the small-range queue: a job per bucket or per task (a range not scattered, a run of
      // equal keys) at most, and the jobs' ranges are disjoint: n at most
      const std::uint64_t jobs = std::uint64_t{l.task_capacity} * (radix_buckets + 1);
      l.job_capacity = static_cast<std::uint32_t>(jobs < n ? jobs : n);
      l.jobs = take(std::size_t{l.job_capacity} * sizeof(small_job));
      break;
    }
  }
  l.total = at;
  return l;
}

}  // namespace quicksort_detail

std::size_t quicksort_scratch_bytes(quicksort_variant variant, std::uint64_t n,
                                    std::size_t key_bytes, std::size_t value_bytes) {
  return quicksort_detail::make_scratch_layout(variant, n, key_bytes, value_bytes).total;
}

}  // namespace cdpkit
