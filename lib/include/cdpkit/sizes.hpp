#pragma once
// cdpkit/sizes.hpp — how a size is written, in every program option and generator spec: a
// decimal number, or 2^K with K in [0, 63] ("--n 2^24", "random:2^20").

#include <cstdint>
#include <string>
#include <string_view>

namespace cdpkit {

/// The value of a size written as decimal digits or 2^K (K in [0, 63]). Throws cdpkit::input_error
/// "<context><what> '<text>' is not ..." otherwise (the text quoted as cdpkit::quoted_input
/// quotes it; e.g. context "tree spec 'random:x': ", what "node count"). Limits of the caller's
/// own (a maximum) are the caller's to check.
std::uint64_t parse_size(std::string_view text, const std::string& context, const char* what);

}  // namespace cdpkit
