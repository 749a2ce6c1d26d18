// libcdpkit_inject's shared state (state.hpp): the one instance, the re-entry flag, and the notes.

#include "state.hpp"

#include <cstdio>
#include <string>

namespace cdpkit::profiling::inject {

state& the_state() {
  static state* const s = new state();
  return *s;
}

thread_local bool in_cdpkit = false;

void say(const std::string& line) noexcept { std::fprintf(stderr, "cdpkit inject: %s\n", line.c_str()); }

void note(state& s, const std::string& part, const std::string& why) {
  s.notes.push_back(part + ": " + why);
  say(s.notes.back());
}

void note_once(state& s, const std::string& key, const std::string& part, const std::string& why) {
  if (s.said_once.insert(key).second) note(s, part, why);
}

}  // namespace cdpkit::profiling::inject
