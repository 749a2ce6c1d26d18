#pragma once
// Internal to libcdpkit_inject: a program stopped by a signal still leaves its profile. POSIX
// only (no CUDA), so it is tested on the host (tests/profiling/signal_watch_test.cpp).
//
// The signals watched: those that end a process by default and that a program meets in practice,
// SIGINT, SIGTERM, SIGHUP and SIGQUIT (sent: Ctrl-C, a job's time limit, a closed terminal) and
// SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (raised by the program itself: a crash, abort(), an
// uncaught exception). SIGKILL cannot be caught: a killed program leaves no profile.
//
// How: a handler that does only async-signal-safe things (write, poll, sigaction, raise) passes
// the signal's number through a pipe to a watcher thread, which runs the work (the profile
// written) outside the handler, then lets the signal have its default effect:
//   - a sent signal: the handler returns at once; the program runs on while the work is done, then
//     the watcher re-raises the signal and the process ends by it, as it would have.
//   - a crash: the crashing thread cannot go on; its handler waits (poll) until the work is done,
//     then takes the default action back and re-raises: the process ends by the same signal (a
//     core dump where the system makes one).
// The work is bounded: after `bound` the process ends by its signal whether the work finished or
// not (a work blocked forever, e.g. by a lock the crashing thread held, cannot hang the program).
// A second watched signal while the work runs ends the process at once by that signal (Ctrl-C
// twice), but for the same sent signal again within a second (a process group's copy beside a
// launcher's forwarded one: the same request), and for a crash in another thread (it waits for
// the work under way, then ends the process).
//
// What is left alone: a signal the program handles or ignores when the watch starts keeps the
// program's handler (a program that installs its own later replaces the watch's); a child that
// the program forks gets the default actions back (the watcher thread does not live in it).

#include "../src/signal_names.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit::profiling::inject {

/// "signal 11 (SIGSEGV)"; "signal N" for one without a usual name.
using cdpkit::profiling::detail::signal_description;

/// Start the watch (once per process; later calls return the first call's list): install the
/// handler for each watched signal whose disposition is the default, and start the watcher
/// thread. `work` runs on that thread, once, with the description of the first signal caught
/// ("the program was stopped by signal 15 (SIGTERM)"); what it throws is swallowed. Returns the
/// signals watched (empty when the program handles all of them itself), or nullopt when the pipe
/// or the thread could not be made (then nothing was changed).
std::optional<std::vector<int>> watch_signals(std::function<void(const std::string& why)> work,
                                              std::chrono::milliseconds bound = std::chrono::seconds(10));

/// The watched signal caught first, 0 before any.
int caught_signal() noexcept;

/// End the process by the signal caught (its default action), e.g. from an exit handler that ran
/// while the work was being done: the program ends as the signal would have ended it. Does
/// nothing when no signal was caught.
void end_by_caught_signal() noexcept;

}  // namespace cdpkit::profiling::inject
