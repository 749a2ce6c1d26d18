#pragma once
// Parsing enum names, with an error that lists the choices.

#include <cdpkit/error.hpp>

#include <string>

namespace cdpkit::detail {

/// The element of `all` whose to_string() is `name`; throws cdpkit::input_error naming `what`,
/// the bad value and every choice.
template <class Enum, std::size_t N>
Enum parse_enum_name(const std::string& name, const char* what, const Enum (&all)[N]) {
  std::string choices;
  for (Enum e : all) {
    if (name == to_string(e)) return e;
    choices += choices.empty() ? "" : ", ";
    choices += to_string(e);
  }
  throw input_error(std::string("unknown ") + what + " " + quoted_input(name) + " (choose one of: " + choices +
                    ")");
}

}  // namespace cdpkit::detail
