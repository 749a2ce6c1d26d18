// The names of the quadtree build's sites (cdpkit/quadtree/sites.hpp).

#include <cdpkit/quadtree/sites.hpp>

namespace cdpkit::quadtree_sites {

namespace {
constexpr sites::site_name_entry site_names[] = {
    {sites::quadtree_nodes, "quadtree.nodes"},
    {sites::quadtree_wide, "quadtree.wide"},
    {sites::quadtree_wide_scatter, "quadtree.wide_scatter"},
    {sites::quadtree_level, "quadtree.level"},
};

// Registered at start-up, once this area is linked in (quadtree_engine references this file).
const sites::site_table table(site_names);
}  // namespace

void register_site_names() { table.ensure(); }

}  // namespace cdpkit::quadtree_sites
