// Names of launch and probe sites, for the profile JSON and the reports.

#include <cdpkit/error.hpp>
#include <cdpkit/launch/sites.hpp>

#include <array>
#include <mutex>
#include <string>

namespace cdpkit::sites {

namespace {
struct registry {
  std::mutex mutex;
  std::array<std::string, trace_limits::max_sites> names;
};

registry& user_names() {
  static registry r;
  return r;
}

const char* builtin_name(std::uint16_t id) {
  switch (id) {
    case root: return "root";
    case l2c_child_per_thread: return "loop_to_child.child_per_thread";
    case l2c_thresholded: return "loop_to_child.thresholded";
    case l2c_warp_aggregated: return "loop_to_child.warp_aggregated";
    case l2c_block_aggregated: return "loop_to_child.block_aggregated";
    case l2c_serial_items: return "loop_to_child.serial_items";
    case l2c_inline_items: return "loop_to_child.inline_items";
    case l2c_child_items: return "loop_to_child.child_items";
    case l2c_cooperative_items: return "loop_to_child.cooperative_items";
    case l2c_flat_items: return "loop_to_child.flat_items";
    case bfs_neighbors: return "bfs.neighbors";
    case bfs_level: return "bfs.level";
    case bfs_driver: return "bfs.driver";
    default: return nullptr;
  }
}
}  // namespace

std::string site_name(std::uint16_t id) {
  if (const char* name = builtin_name(id)) return name;
  if (id < trace_limits::max_sites) {
    auto& r = user_names();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.names[id].empty()) return r.names[id];
  }
  return "site." + std::to_string(id);
}

void set_site_name(std::uint16_t id, std::string name) {
  if (id < first_user_site || id >= trace_limits::max_sites)
    throw input_error("set_site_name: user site ids are in [" + std::to_string(first_user_site) +
                      ", " + std::to_string(trace_limits::max_sites) + "), got " +
                      std::to_string(id));
  if (name.empty()) throw input_error("set_site_name: empty name for site " + std::to_string(id));
  auto& r = user_names();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.names[id] = std::move(name);
}

}  // namespace cdpkit::sites
