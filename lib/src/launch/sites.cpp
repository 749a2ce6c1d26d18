// Names of launch and probe sites, for the profile JSON and the reports: a registry that the
// library areas fill from their own tables (lib/src/<area>/sites.cpp) and users through
// set_site_name.

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
  std::array<bool, trace_limits::max_sites> child_probe{};
};

registry& names() {
  static registry r;
  return r;
}
}  // namespace

std::string site_name(std::uint16_t id) {
  if (id == root) return "root";
  if (id < trace_limits::max_sites) {
    auto& r = names();
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
  auto& r = names();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.names[id] = std::move(name);
}

void register_library_sites(const site_name_entry* entries, std::size_t count) {
  auto& r = names();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (std::size_t k = 0; k < count; ++k) {
    const site_name_entry& e = entries[k];
    if (e.id == root || e.id >= first_user_site)
      throw input_error("register_library_sites: library site ids are in [1, " +
                        std::to_string(first_user_site) + "), got " + std::to_string(e.id));
    if (e.name == nullptr || *e.name == '\0')
      throw input_error("register_library_sites: empty name for site " + std::to_string(e.id));
    std::string& slot = r.names[e.id];
    if (!slot.empty() && slot != e.name)
      throw input_error("register_library_sites: site " + std::to_string(e.id) +
                        " is already registered as '" + slot + "', not '" + e.name + "'");
    slot = e.name;
    r.child_probe[e.id] = e.child_probe;
  }
}

void site_table::ensure() const {
  if (registered_.load(std::memory_order_acquire)) return;
  register_library_sites(entries_, count_);  // idempotent: a race registers the same table twice
  registered_.store(true, std::memory_order_release);
}

bool is_child_probe_site(std::uint16_t id) {
  if (id >= trace_limits::max_sites) return false;
  auto& r = names();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.child_probe[id];
}

}  // namespace cdpkit::sites
