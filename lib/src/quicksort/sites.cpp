// The names of quicksort's sites (cdpkit/quicksort/sites.hpp).

#include <cdpkit/quicksort/sites.hpp>

namespace cdpkit::quicksort_sites {

namespace {
constexpr sites::site_name_entry site_names[] = {
    {sites::qs_simple_side, "quicksort.simple_side"},
    {sites::qs_two_stream_side, "quicksort.two_stream_side"},
    {sites::qs_two_stream_leaf, "quicksort.two_stream_leaf"},
    {sites::qs_fast_range, "quicksort.fast_range"},
    {sites::qs_fast_scatter, "quicksort.fast_scatter"},
    {sites::qs_fast_small, "quicksort.fast_small"},
    {sites::qs_fast_copy, "quicksort.fast_copy"},
    {sites::qs_partition_probe, "quicksort.partition", true},
    {sites::qs_serial_probe, "quicksort.serial_partition", true},
};

// Registered at start-up, once this area is linked in (every quicksort call references this file).
const sites::site_table table(site_names);
}  // namespace

void register_site_names() { table.ensure(); }

}  // namespace cdpkit::quicksort_sites
