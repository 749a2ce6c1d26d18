// The names of the tree traversals' sites (cdpkit/tree/sites.hpp).

#include <cdpkit/tree/sites.hpp>

namespace cdpkit::tree_sites {

namespace {
constexpr sites::site_name_entry site_names[] = {
    {sites::tree_children, "tree.children"},
    {sites::tree_level, "tree.level"},
    {sites::tree_driver, "tree.driver"},
    {sites::tree_walk, "tree.walk"},
    {sites::tree_child_nodes, "tree.child_nodes", true},
    {sites::tree_combine, "tree.combine"},
};

// Registered at start-up, once this area is linked in (tree_engine references this file).
const sites::site_table table(site_names);
}  // namespace

void register_site_names() { table.ensure(); }

}  // namespace cdpkit::tree_sites
