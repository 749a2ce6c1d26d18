#pragma once
// cdpkit/report/profile.hpp — the profile the reports read: the schema layer's document
// (cdpkit/schema/profile.hpp), read and validated field by field there. The report tool knows
// nothing of CUDA: it reads only this JSON, so reports can be made on a machine without a GPU.

#include <cdpkit/schema/profile.hpp>

namespace cdpkit::report {

using schema::format_error;
using schema::log2_buckets;
using schema::max_nesting_depth;
using schema::max_profile_bytes;

using schema::device_profile;
using schema::error_count;
using schema::probe_profile;
using schema::profile;
using schema::run_profile;
using schema::site_profile;
using schema::site_role;
using schema::trace_profile;
using schema::trace_summary;

using schema::load_profile;
using schema::parse_profile;

}  // namespace cdpkit::report
