#pragma once
// Internal (lib/src): what the readers of untrusted text files share — the whole of a regular
// file read under a size cap, a line scanner, tokens and bounded unsigned integers, each failure a
// cdpkit::input_error "NAME:LINE: reason" (file-level: "PATH: reason"); every message that echoes
// input text quotes it with cdpkit::quoted_input() (cdpkit/quoted_input.hpp). Pure C++ (the fuzz
// targets compile it with the sanitizers).

#include <cdpkit/error.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cdpkit::detail {

/// Throws cdpkit::input_error "name:line: reason".
[[noreturn]] void fail_at(const std::string& name, std::uint64_t line, const std::string& reason);

/// Lines of a text, with their 1-based numbers; '\r' before '\n' is dropped.
class line_scanner {
 public:
  explicit line_scanner(std::string_view text) : rest_(text) {}
  /// The next line (without its end); false at the end of the text.
  bool next(std::string_view& line) {
    if (rest_.empty()) return false;
    const std::size_t nl = rest_.find('\n');
    line = rest_.substr(0, nl);
    rest_ = nl == std::string_view::npos ? std::string_view{} : rest_.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number_;
    return true;
  }
  /// The number of the line last returned (0 before the first).
  [[nodiscard]] std::uint64_t number() const noexcept { return number_; }
  /// Bytes not yet scanned.
  [[nodiscard]] std::size_t remaining() const noexcept { return rest_.size(); }

 private:
  std::string_view rest_;
  std::uint64_t number_ = 0;
};

[[nodiscard]] inline bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

inline void skip_blanks(std::string_view& s) noexcept {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
}

[[nodiscard]] inline bool blank_line(std::string_view s) noexcept {
  skip_blanks(s);
  return s.empty();
}

/// True for a non-empty run of decimal digits.
[[nodiscard]] inline bool all_digits(std::string_view s) noexcept {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

/// The next blank-separated token of `s` (empty at the end of the line), consumed.
std::string_view next_token(std::string_view& s) noexcept;

/// An unsigned decimal token no larger than `max`; throws at `name`:`line` naming `what`
/// otherwise (empty; not a number: the token quoted_input(); too large: its digits, the first 40 of a
/// longer number with its length).
std::uint64_t parse_unsigned(std::string_view token, std::uint64_t max, const char* what,
                             const std::string& name, std::uint64_t line);

/// The fields of a spec between its colons ("rmat:20:16" -> "rmat", "20", "16"; empty fields
/// kept; one field when there is no colon). The views point into `s`.
inline std::vector<std::string_view> split_colons(std::string_view s) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t c = s.find(':');
    parts.push_back(s.substr(0, c));
    if (c == std::string_view::npos) return parts;
    s.remove_prefix(c + 1);
  }
}

/// Whether a path names a Matrix Market file: it ends in .mtx or .mtx.gz (any case).
[[nodiscard]] inline bool is_matrix_market_path(std::string_view path) noexcept {
  const auto ends_with = [&](std::string_view suffix) {
    if (path.size() <= suffix.size()) return false;
    for (std::size_t k = 0; k < suffix.size(); ++k) {
      const char c = path[path.size() - suffix.size() + k];
      if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != suffix[k]) return false;
    }
    return true;
  };
  return ends_with(".mtx") || ends_with(".mtx.gz");
}


/// The limits of read_text_file's messages: what the file is ("a graph file") and the option
/// that sets the cap ("graph_read_options::max_file_bytes").
struct file_kind_words {
  const char* noun;    ///< "graph", "tree", ...
  const char* option;  ///< the option that sets the cap
  const char* plural = nullptr;  ///< "matrices"; null: the noun + "s"
};

/// The whole of the regular file at `path`, at most `max_bytes` bytes (`default_cap`: the cap is
/// the library's default, which the message then explains). A gzip-compressed file (its first
/// bytes 0x1f 0x8b, whatever its name) is unpacked, every member, and what it holds is capped the
/// same way. Throws cdpkit::input_error naming the path when it cannot be opened or read, is not a
/// regular file (a directory, a FIFO, /dev/zero, ...), is larger than the cap (also when it grows
/// past it while read, or unpacks past it), is a corrupt or truncated gzip file, or is gzip in a
/// build without zlib.
std::string read_text_file(const std::string& path, std::uint64_t max_bytes, bool default_cap,
                           const file_kind_words& words);

/// A quarter of the available host memory, at least 16 MiB, at most 64 GiB (64 GiB when the
/// available memory is unknown): the default size cap of the file readers.
[[nodiscard]] std::uint64_t default_max_file_bytes() noexcept;

}  // namespace cdpkit::detail
