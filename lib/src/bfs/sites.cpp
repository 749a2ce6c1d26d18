// The names of BFS's sites (cdpkit/bfs/sites.hpp).

#include <cdpkit/bfs/sites.hpp>

namespace cdpkit::bfs_sites {

namespace {
constexpr sites::site_name_entry site_names[] = {
    {sites::bfs_neighbors, "bfs.neighbors"},
    {sites::bfs_level, "bfs.level"},
    {sites::bfs_driver, "bfs.driver"},
};

// Registered at start-up, once this area is linked in (bfs_engine references this file).
const sites::site_table table(site_names);
}  // namespace

void register_site_names() { table.ensure(); }

}  // namespace cdpkit::bfs_sites
