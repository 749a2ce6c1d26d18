#pragma once
// cdpkit/launch/sites.hpp — launch and probe sites, and their names. A site is a place in the code
// that launches children or probes divergence; the trace aggregates per site.
//
// Ids below first_user_site belong to the library: cdpkit/launch/site_ids.hpp lists every one
// with its name and role, in one table that site_name answers from (the numeric values are part
// of the profiles and never change). Users number their own sites from first_user_site and name
// them with set_site_name.

#include <cdpkit/launch/site_ids.hpp>
#include <cdpkit/launch/types.hpp>

#include <cstdint>
#include <string>

namespace cdpkit::sites {

/// Name of a site for reports: a library site's from library_sites (e.g.
/// "loop_to_child.thresholded"), a user site's as set_site_name gave it; any other id (a user site
/// not named, an id no one uses) is called "site.<id>". Safe to call from any thread.
std::string site_name(std::uint16_t id);

/// Give a user site (first_user_site <= id < trace_limits::max_sites) a name for the profile; a
/// later call for the same id replaces it. Throws cdpkit::input_error when the id is out of that
/// range or the name is empty. Safe to call from any thread.
void set_site_name(std::uint16_t id, std::string name);

/// True when `id` is a library site that probes inside the child grids its area launches
/// (library_site::child_probe); false for every other id, user sites included.
bool is_child_probe_site(std::uint16_t id);

}  // namespace cdpkit::sites
