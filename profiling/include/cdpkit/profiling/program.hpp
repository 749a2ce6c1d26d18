#pragma once
// cdpkit/profiling/program.hpp — the one error path of the sample and benchmark programs.

#include <functional>

namespace cdpkit::profiling {

/// Run a program's body. Exit code: 0 when it returns true (every result check passed), 1 when
/// it returns false, 2 on cdpkit::input_error (bad arguments or input), 3 on cdpkit::cuda_error;
/// the message names the program.
int run_program(const char* name, const std::function<bool()>& body);

}  // namespace cdpkit::profiling
