#pragma once
// tests/fuzz/targets.hpp — what the fuzz pass feeds: one target per parser of untrusted text,
// its built-in seeds and its regression inputs (run first, every time).

#include <string>
#include <vector>

namespace cdpkit::fuzz {

/// An input with a name for the log ("regression: 200,000-deep params", "corpus: seed.mtx").
struct named_input {
  std::string name;
  std::string text;
};

struct target {
  const char* name;
  /// Parse (and on success build / render and check) `text`. Throwing cdpkit::input_error or
  /// cdpkit::report::format_error is an expected outcome; any other exception is a failure.
  /// Returns true when the text was accepted.
  bool (*run)(const std::string& text);
  /// Inputs that once crashed or hung a parser, generated in code (large ones are not committed).
  std::vector<named_input> (*regressions)();
  /// Small valid inputs to mutate.
  std::vector<named_input> (*seeds)();
  /// Mutants are cut to this many bytes.
  std::size_t max_len;
};

/// The targets: "matrix_market", "matrix_market_matrix", "edge_list", "path_list", "parent_array", "points", "profile".
const std::vector<target>& targets();

}  // namespace cdpkit::fuzz
