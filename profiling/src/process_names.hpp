#pragma once
// The names a profile gives the process it was taken in: its command line, its executable, its
// kernels (demangled) and the profile's path. Shared by the injection libraries
// (profiling/inject, profiling/children), compiled into each. Host C++ only.

#include <string>

namespace cdpkit::profiling::detail {

/// The command line from /proc/self/cmdline, its words joined by spaces (those with a space or
/// tab quoted); empty when it cannot be read.
std::string command_line();

/// The executable's name: /proc/self/exe, else the first word of the command line.
std::string program_name();

/// `mangled` demangled (abi::__cxa_demangle), or as it is when it is not a C++ name.
std::string demangled(const std::string& mangled);

/// The value of `variable` (e.g. CDPKIT_PROFILE_OUT), else `fallback`, with "%p" replaced by the
/// process id.
std::string profile_path(const char* variable, const char* fallback);

}  // namespace cdpkit::profiling::detail
