// loop_to_child host logic: policy and stream names, the cost model, run results.

#include <cdpkit/detail/enum_names.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/loop_to_child.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace cdpkit {

std::uint32_t launch_cost_model::threshold(stream_kind stream, std::uint32_t lanes) const {
  const double launch = launch_ns[static_cast<int>(stream)];
  if (!(serial_item_ns > 0.0) || !(launch >= 0.0) || lanes == 0)
    throw input_error("launch_cost_model: serial_item_ns must be > 0, launch_ns >= 0, lanes >= 1");
  const double t = std::ceil(lanes * launch / serial_item_ns);
  return t >= 4294967295.0 ? 0xffffffffu : static_cast<std::uint32_t>(t);
}

std::uint32_t loop_policy::loop_lanes() const noexcept {
  switch (kind) {
    case loop_policy_kind::warp_aggregated: return 32;
    case loop_policy_kind::block_aggregated: return 256;
    default: return 1;
  }
}

std::uint32_t loop_policy::cost_model_threshold() const {
  if (!uses_cdp() || kind == loop_policy_kind::child_per_thread) return 0;
  return cost_model.threshold(stream, loop_lanes());
}

segment_result segment_async_result::result() const {
  segment_result r = known_;
  if (d_threshold_ != nullptr) {
    std::uint32_t t = 0;
    CDPKIT_CUDA_TRY(cudaMemcpy(&t, d_threshold_, sizeof t, cudaMemcpyDeviceToHost));
    r.threshold = t;
  }
  return r;
}

namespace {
constexpr loop_policy_kind policy_kinds[] = {
    loop_policy_kind::serial_loop,     loop_policy_kind::child_per_thread,
    loop_policy_kind::thresholded,     loop_policy_kind::warp_aggregated,
    loop_policy_kind::block_aggregated, loop_policy_kind::flat_balanced};
}  // namespace

const char* to_string(loop_policy_kind kind) noexcept {
  switch (kind) {
    case loop_policy_kind::serial_loop: return "serial_loop";
    case loop_policy_kind::child_per_thread: return "child_per_thread";
    case loop_policy_kind::thresholded: return "thresholded";
    case loop_policy_kind::warp_aggregated: return "warp_aggregated";
    case loop_policy_kind::block_aggregated: return "block_aggregated";
    case loop_policy_kind::flat_balanced: return "flat_balanced";
  }
  return "unknown";
}

loop_policy_kind parse_loop_policy_kind(const std::string& name) {
  return detail::parse_enum_name(name, "loop policy", policy_kinds);
}

const std::vector<loop_policy_kind>& all_loop_policy_kinds() {
  static const std::vector<loop_policy_kind> all(std::begin(policy_kinds), std::end(policy_kinds));
  return all;
}
}  // namespace cdpkit
