// Names of launch and probe sites, for the profile JSON and the reports: the library's from its
// one table (cdpkit/launch/site_ids.hpp), the users' from set_site_name.

#include <cdpkit/error.hpp>
#include <cdpkit/launch/sites.hpp>

#include <array>
#include <cstddef>
#include <mutex>
#include <string>
#include <utility>

namespace cdpkit::sites {

namespace {

/// The library's row for `id`, or nullptr when the library has no site of that id.
const library_site* library_site_of(std::uint16_t id) {
  for (const library_site& s : library_sites)
    if (s.id == id) return &s;
  return nullptr;
}

constexpr std::size_t user_site_count = trace_limits::max_sites - first_user_site;

/// The names users gave their sites, indexed by id - first_user_site ("" where none was given).
struct user_names {
  std::mutex mutex;
  std::array<std::string, user_site_count> names;
};

user_names& users() {
  static user_names u;
  return u;
}

}  // namespace

std::string site_name(std::uint16_t id) {
  if (const library_site* s = library_site_of(id)) return s->name;
  if (id >= first_user_site && id < trace_limits::max_sites) {
    auto& u = users();
    std::lock_guard<std::mutex> lock(u.mutex);
    const std::string& name = u.names[id - first_user_site];
    if (!name.empty()) return name;
  }
  return "site." + std::to_string(id);
}

void set_site_name(std::uint16_t id, std::string name) {
  if (id < first_user_site || id >= trace_limits::max_sites)
    throw input_error("set_site_name: user site ids are in [" + std::to_string(first_user_site) +
                      ", " + std::to_string(trace_limits::max_sites) + "), got " +
                      std::to_string(id));
  if (name.empty()) throw input_error("set_site_name: empty name for site " + std::to_string(id));
  auto& u = users();
  std::lock_guard<std::mutex> lock(u.mutex);
  u.names[id - first_user_site] = std::move(name);
}

bool is_child_probe_site(std::uint16_t id) {
  const library_site* s = library_site_of(id);
  return s != nullptr && s->child_probe;
}

}  // namespace cdpkit::sites
