#pragma once
// cdpkit/profiling/json_file.hpp — writing a JSON document to a file whole.

#include <nlohmann/json.hpp>

#include <string>

namespace cdpkit::profiling {

/// Write `doc` to `path` whole (temporary file renamed into place). Strings that are not valid
/// UTF-8 are written with U+FFFD in place of the bad bytes. Throws cdpkit::input_error naming
/// `path` on any failure; `path`.tmp is then gone and `path` is as it was.
void write_json_file(const nlohmann::json& doc, const std::string& path);

}  // namespace cdpkit::profiling
