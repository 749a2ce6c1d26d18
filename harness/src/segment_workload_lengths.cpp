// The loop-to-child benchmark workload (cdpkit/harness/segment_workload.hpp), its segment
// lengths: distribution names and the deterministic segment-length generators
// (make_segment_offsets), pure C++. The reference workload over them is segment_workload.cu.

#include <cdpkit/detail/enum_names.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/harness/segment_workload.hpp>
#include <cdpkit/memory.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace cdpkit::harness {

namespace {
constexpr segment_dist dists[] = {segment_dist::uniform, segment_dist::power_law,
                                  segment_dist::giant, segment_dist::empty, segment_dist::equal};
}  // namespace

const char* to_string(segment_dist d) noexcept {
  switch (d) {
    case segment_dist::uniform: return "uniform";
    case segment_dist::power_law: return "power_law";
    case segment_dist::giant: return "giant";
    case segment_dist::empty: return "empty";
    case segment_dist::equal: return "equal";
  }
  return "unknown";
}

segment_dist parse_segment_dist(const std::string& name) {
  return cdpkit::detail::parse_enum_name(name, "segment distribution", dists);
}

const std::vector<segment_dist>& all_segment_dists() {
  static const std::vector<segment_dist> all(std::begin(dists), std::end(dists));
  return all;
}

std::vector<std::uint32_t> make_segment_offsets(const segment_params& p) {
  // lengths and offsets, refused before allocating when the host cannot hold them
  require_host_memory(saturating_mul(8, std::uint64_t{p.num_segments} + 1),
                      "make_segment_offsets: " + std::to_string(p.num_segments) + " segments");
  std::mt19937_64 rng(p.seed);
  std::vector<std::uint32_t> lengths(p.num_segments, 0);
  switch (p.dist) {
    case segment_dist::uniform: {
      if (2ull * p.mean_len > 0xffffffffull)
        throw input_error("segment_params::mean_len " + std::to_string(p.mean_len) +
                          " is too large for uniform lengths in [0, 2 * mean_len] (at most " +
                          std::to_string(0xffffffffull / 2) + ")");
      std::uniform_int_distribution<std::uint64_t> pick(0, 2ull * p.mean_len);
      for (auto& len : lengths) len = static_cast<std::uint32_t>(pick(rng));
      break;
    }
    case segment_dist::power_law: {
      if (!(p.alpha > 1.0) || !std::isfinite(p.alpha))
        throw input_error("segment_params::alpha must be a finite number > 1 for power_law");
      if (p.max_len == 0) throw input_error("segment_params::max_len must be >= 1 for power_law");
      // Inverse-CDF sampling of the discrete Zipf law on [1, max_len]: an exact cumulative table
      // up to table_len, and past it (max_len up to 2^32 - 1) the continuous law's tail, whose
      // mass is the integral of x^-alpha over [table_len + 0.5, max_len + 0.5].
      constexpr std::uint32_t table_cap = 1u << 20;
      const std::uint32_t table_len = std::min(p.max_len, table_cap);
      std::vector<double> cdf(table_len);
      double sum = 0.0;
      for (std::uint32_t k = 1; k <= table_len; ++k) {
        sum += std::pow(static_cast<double>(k), -p.alpha);
        cdf[k - 1] = sum;
      }
      const double a = static_cast<double>(table_len) + 0.5;
      const double b = static_cast<double>(p.max_len) + 0.5;
      const double e = 1.0 - p.alpha;  // < 0
      const double tail = p.max_len > table_len ? (std::pow(b, e) - std::pow(a, e)) / e : 0.0;
      std::uniform_real_distribution<double> u(0.0, sum + tail);
      for (auto& len : lengths) {
        const double r = u(rng);
        if (r < sum || tail <= 0.0) {
          const auto it = std::upper_bound(cdf.begin(), cdf.end(), r);
          len = static_cast<std::uint32_t>(
              std::min<std::ptrdiff_t>(it - cdf.begin(), table_len - 1) + 1);
        } else {
          const double x = std::pow(std::pow(a, e) + (r - sum) * e, 1.0 / e);
          const double k = std::floor(x + 0.5);
          len = static_cast<std::uint32_t>(
              std::clamp(k, static_cast<double>(table_len) + 1, static_cast<double>(p.max_len)));
        }
      }
      break;
    }
    case segment_dist::giant: {
      std::uniform_int_distribution<std::uint32_t> pick(0, 3);
      for (auto& len : lengths) len = pick(rng);
      if (!lengths.empty()) lengths[lengths.size() / 2] = p.giant_len;
      break;
    }
    case segment_dist::empty: break;
    case segment_dist::equal: std::fill(lengths.begin(), lengths.end(), p.equal_len); break;
  }
  std::vector<std::uint32_t> offsets(lengths.size() + 1, 0);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    total += lengths[i];
    if (total > 0xffffffffull)
      throw input_error("make_segment_offsets: " + std::string(to_string(p.dist)) + " workload of " +
                        std::to_string(p.num_segments) +
                        " segments has more than 2^32-1 items; use fewer or shorter segments");
    offsets[i + 1] = static_cast<std::uint32_t>(total);
  }
  return offsets;
}

}  // namespace cdpkit::harness
