// The names of BFS's sites (cdpkit/bfs/sites.hpp).

#include <cdpkit/bfs/sites.hpp>

namespace cdpkit::bfs_sites {

namespace {
constexpr sites::site_name_entry site_names[] = {
    {sites::bfs_neighbors, "bfs.neighbors"},
    {sites::bfs_level, "bfs.level"},
    {sites::bfs_driver, "bfs.driver"},
};

// At start-up, once this area is linked in (bfs_engine references this file).
const bool registered_at_startup = (sites::register_library_sites(site_names), true);
}  // namespace

void register_site_names() {
  static const bool once = (sites::register_library_sites(site_names), true);
  (void)once;
  (void)registered_at_startup;
}

}  // namespace cdpkit::bfs_sites
