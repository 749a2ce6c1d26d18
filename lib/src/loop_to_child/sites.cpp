// The names of loop-to-child's sites (cdpkit/loop_to_child/sites.hpp).

#include <cdpkit/loop_to_child/sites.hpp>

namespace cdpkit::loop_to_child {

namespace {
constexpr sites::site_name_entry site_names[] = {
    {sites::l2c_child_per_thread, "loop_to_child.child_per_thread"},
    {sites::l2c_thresholded, "loop_to_child.thresholded"},
    {sites::l2c_warp_aggregated, "loop_to_child.warp_aggregated"},
    {sites::l2c_block_aggregated, "loop_to_child.block_aggregated"},
    {sites::l2c_serial_items, "loop_to_child.serial_items"},
    {sites::l2c_inline_items, "loop_to_child.inline_items"},
    {sites::l2c_child_items, "loop_to_child.child_items", /*child_probe=*/true},
    {sites::l2c_cooperative_items, "loop_to_child.cooperative_items"},
    {sites::l2c_flat_items, "loop_to_child.flat_items"},
};

// Registered at start-up, once this area is linked in (for_each_segment_async references this file).
const sites::site_table table(site_names);
}  // namespace

void register_site_names() { table.ensure(); }

}  // namespace cdpkit::loop_to_child
