// libcdpkit_inject's metrics: the host kernel launches on the profiled context, each in a range
// of the auto-range session, and the decoded ranges paired with their launches.

#include "state.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cdpkit::profiling::inject {

namespace {

/// The metrics part stands aside: the session is disabled, its waiting launches unmeasured.
/// Caller holds mu.
void metrics_fail(state& s, const std::string& why) {
  note(s, "metrics", why);
  s.session.reset();
  s.metrics_on = false;
  s.not_measured += s.pending.size();
  s.pending.clear();
}

/// The number a range's name is, when it is one: CUPTI names auto ranges by their index since
/// the profiler was enabled ("0", "1", ...; measured on the H200, CUDA 13.0).
std::optional<std::uint64_t> range_number(const std::string& name) {
  if (name.empty() || name.size() > 18 || name.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(name);
}

/// Pair decoded ranges with the launches waiting for them: in order when the counts agree (one
/// range per launch, in launch order), else each range with the waiting launch its name numbers,
/// or with the next waiting launch of its kernel's name.
void pair_ranges(state& s, std::vector<prof::range_metrics>& ranges) {
  if (ranges.size() == s.pending.size()) {
    for (std::size_t k = 0; k < ranges.size(); ++k) s.measured.push_back({s.pending[k], std::move(ranges[k])});
    s.pending.clear();
    return;
  }
  note_once(s, "range count", "metrics",
            "CUPTI returned " + std::to_string(ranges.size()) + " ranges for " + std::to_string(s.pending.size()) +
                " kernel launches (at one decode); ranges were paired with launches by range number or kernel name");
  std::vector<bool> used(s.pending.size(), false);
  std::size_t from = 0;
  for (auto& r : ranges) {
    std::optional<std::size_t> hit;
    if (const auto n = range_number(r.name))
      for (std::size_t k = 0; k < s.pending.size() && !hit; ++k)
        if (!used[k] && s.pending[k].index == *n) hit = k;
    for (std::size_t k = from; k < s.pending.size() && !hit; ++k)
      if (!used[k] && (s.pending[k].kernel == r.name || demangled(s.pending[k].kernel) == r.name)) hit = k;
    if (hit) {
      used[*hit] = true;
      from = *hit + 1;
      s.measured.push_back({s.pending[*hit], std::move(r)});
    } else {
      pending_launch unknown;
      unknown.kernel = "(a kernel of CUPTI range " + r.name + ")";
      s.measured.push_back({unknown, std::move(r)});
    }
  }
  for (std::size_t k = 0; k < s.pending.size(); ++k) s.not_measured += used[k] ? 0 : 1;
  s.pending.clear();
}

}  // namespace

void flush_ranges(state& s) {
  if (!s.session) return;
  try {
    auto ranges = s.session->stop_and_decode();
    pair_ranges(s, ranges);
  } catch (const cupti_failure& e) {
    metrics_fail(s, e.what());
  }
}

void on_launch_enter(state& s, const CUpti_CallbackData& cb) {
  if (s.capped) {  // counted, not measured
    ++s.launches;
    ++s.not_measured;
    return;
  }
  if (!s.session) return;
  if (s.measured.size() + s.pending.size() >= s.max_ranges) {
    s.capped = true;
    ++s.launches;
    ++s.not_measured;
    flush_ranges(s);
    s.session.reset();  // the later kernels run without the profiler
    note(s, "metrics",
         "the first " + std::to_string(s.max_ranges) +
             " kernel launches were measured (CDPKIT_INJECT_MAX_RANGES); later ones run unmeasured");
    return;
  }
  if (s.pending.size() >= s.session->capacity()) flush_ranges(s);  // the image is full
  if (!s.session) return;
  try {
    s.session->start();
  } catch (const cupti_failure& e) {
    metrics_fail(s, e.what());
    return;
  }
  s.pending.push_back({cb.symbolName != nullptr ? cb.symbolName : "(unnamed)", cb.correlationId, s.launches});
  ++s.launches;
}

void on_launch_exit(state& s, const CUpti_CallbackData& cb) {
  if (cb.functionReturnValue == nullptr || *static_cast<const CUresult*>(cb.functionReturnValue) == CUDA_SUCCESS)
    return;
  for (auto it = s.pending.rbegin(); it != s.pending.rend(); ++it)
    if (it->correlation == cb.correlationId) {
      s.pending.erase(std::next(it).base());
      break;
    }
}

}  // namespace cdpkit::profiling::inject
