#pragma once
// cdpkit/launch/sites.hpp — launch and probe sites, and their names. A site is a place in the code
// that launches children or probes divergence; the trace aggregates per site.
//
// Ids below first_user_site belong to the library. Each library area declares its own ids in its
// own header (cdpkit/loop_to_child/sites.hpp, cdpkit/bfs/sites.hpp; the numeric values are part of
// the profiles and never change) and registers their names here from its own table
// (register_library_sites); the launch layer itself only owns `root`. Users number their own
// sites from first_user_site and name them with set_site_name.

#include <cdpkit/launch/types.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace cdpkit::sites {

enum : std::uint16_t {
  root = 0,              ///< the host-launched grid (named "root")
  first_user_site = 32,  ///< user sites are in [first_user_site, trace_limits::max_sites)
};

/// Name of a site for reports, e.g. "loop_to_child.thresholded"; sites without a registered
/// name (user sites not named through set_site_name) are called "site.<id>".
std::string site_name(std::uint16_t id);

/// Give a user site (first_user_site <= id < trace_limits::max_sites) a name for the profile.
/// Throws cdpkit::input_error when the id is out of that range or the name is empty.
void set_site_name(std::uint16_t id, std::string name);

/// One library site, its name "<area>.<what>", and whether it is a probe inside the child grids
/// the area launches (the reports read such a probe as the children's, not the launcher's).
struct site_name_entry {
  std::uint16_t id;
  const char* name;
  bool child_probe = false;
};

/// True when `id` was registered (register_library_sites) as a probe inside child grids.
bool is_child_probe_site(std::uint16_t id);

/// Register the names of a library area's sites (ids below first_user_site). Idempotent: the same
/// table may be registered any number of times. Throws cdpkit::input_error for an id at or above
/// first_user_site, an empty name, or an id already registered under another name (two areas
/// claiming one id: a library bug).
void register_library_sites(const site_name_entry* entries, std::size_t count);

template <std::size_t N>
void register_library_sites(const site_name_entry (&entries)[N]) {
  register_library_sites(entries, N);
}

/// A library area's site table, registered when the table object is constructed (a namespace-
/// scope object in lib/src/<area>/sites.cpp: at start-up) and by ensure(), which the area's entry
/// points call (the first call registers, later ones cost one atomic load).
class site_table {
 public:
  template <std::size_t N>
  explicit site_table(const site_name_entry (&entries)[N]) : entries_(entries), count_(N) {
    ensure();
  }
  /// Register the table unless done: the area's register_site_names() calls this from its entry
  /// points. Precondition: the table object is constructed (not from another file's static
  /// initializer).
  void ensure() const;

 private:
  const site_name_entry* entries_;
  std::size_t count_;
  mutable std::atomic<bool> registered_{false};
};

}  // namespace cdpkit::sites
