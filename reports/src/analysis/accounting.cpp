// The hardware's view, CTA accounting: a run's counts classified, and the verdict in words.

#include "detail.hpp"

#include <cstdint>
#include <string>

namespace cdpkit::report {

using detail::number;

bool accounting_analysis::problem() const noexcept {
  return status == schema::accounting_status::missing_ctas || status == schema::accounting_status::extra_ctas;
}

accounting_analysis analyze_accounting(const schema::cta_accounting& counts) {
  accounting_analysis a;
  a.counts = counts;
  a.status = schema::classify(counts);
  a.difference = counts.unaccounted();
  a.thread_difference = counts.unaccounted_threads();
  // "N things", singular for one, from a difference's magnitude
  const auto count = [](std::int64_t d, const char* one, const char* more) {
    const std::uint64_t n = d < 0 ? 0 - static_cast<std::uint64_t>(d) : static_cast<std::uint64_t>(d);
    return number(n) + " " + (n == 1 ? one : more);
  };
  // the unaccounted CTAs, or the threads where the CTAs balance
  const bool ctas = a.difference != 0;
  const std::int64_t d = ctas ? a.difference : a.thread_difference;
  const std::string accounted = "every child grid accounted for; ";
  switch (a.status) {
    case schema::accounting_status::exact: a.verdict = "every child grid accounted for"; break;
    case schema::accounting_status::device_runtime:
      a.verdict = accounted + count(d, "more CTA is", "more CTAs are") + " the CUDA device runtime's own (" +
                  count(a.thread_difference, "thread", "threads") + ", 1 to 32 per CTA)";
      break;
    case schema::accounting_status::driver_transfers:
      a.verdict = accounted + (ctas ? count(d, "more CTA", "more CTAs") : count(d, "more thread", "more threads")) +
                  " beside the run's " + number(counts.transfers) + " copies and memsets (the driver's kernels for some)";
      break;
    case schema::accounting_status::missing_ctas:
      a.verdict = (a.difference < 0 ? count(a.difference, "child block", "child blocks")
                                    : count(a.thread_difference, "child thread", "child threads")) +
                  " the trace counts never ran on the GPU";
      break;
    case schema::accounting_status::extra_ctas:
      a.verdict = (ctas ? count(d, "CTA", "CTAs") : count(d, "thread", "threads")) + " that no launch accounts for";
      break;
  }
  return a;
}

}  // namespace cdpkit::report
