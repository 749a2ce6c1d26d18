#pragma once
// Test helper: a current profile document turned into an older version's shape.

#include <nlohmann/json.hpp>

namespace cdpkit_test {

/// `doc` (cdpkit-profile/4) as a cdpkit-profile/3 document: the collector's members removed.
inline nlohmann::json as_profile_v3(nlohmann::json doc) {
  doc["schema"] = "cdpkit-profile/3";
  for (auto& run : doc["runs"]) {
    run.erase("hardware");
    run.erase("timeline");
    run.erase("collect");
  }
  doc.erase("collector");
  doc.erase("host_activity");
  return doc;
}

}  // namespace cdpkit_test
