#pragma once
// cdpkit/quoted_input.hpp — how every cdpkit message quotes text it echoes from its input (a
// token of a file, a spec, a name): one short line of printable ASCII whatever the input holds.
// Header-only and free of CUDA, shared by the library's readers, the profile reader and the
// programs (cdpkit/error.hpp includes it).

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace cdpkit {

/// How every message quotes text it echoes from its input (a token, a field, a spec, a name): in
/// single quotes, with every byte that could break the message or the terminal escaped, and cut
/// short, so that a message stays one short line of printable ASCII whatever the input holds.
///   - printable ASCII (0x20..0x7e) is kept, except the backslash and the single quote: "\\" and
///     "\'";
///   - every other byte is escaped: "\r", "\n", "\t" and "\0" for those four, "\xHH" (two
///     lowercase hex digits) for the rest, ESC (0x1b) and every byte >= 0x80 included (UTF-8
///     text shows as its bytes);
///   - when the escaped text is longer than `max_chars` characters, it is cut after at most
///     `max_chars` of them (never inside an escape) and "..." follows, inside the quotes.
/// Preconditions: none; `text` may hold any bytes, NUL included. The result has at most
/// max_chars + 5 characters. Examples (C++ literals on the left, the result on the right):
///   quoted_input("abc")                          'abc'
///   quoted_input("it's a\\b")                    'it\'s a\\b'
///   quoted_input("x\x1b[31m\r\n")                'x\x1b[31m\r\n'
///   quoted_input(std::string_view("a\0b", 3))    'a\0b'
///   quoted_input("caf\xc3\xa9")                  'caf\xc3\xa9'
///   quoted_input("abcdef", 4)                    'abcd...'
///   quoted_input("ab\x01", 4)                    'ab...'  (the escape \x01 would not fit whole)
///   quoted_input(a 40 MB token)                  '7777...7777...'  (80 characters, then ...)
/// (Named apart from std::quoted of <iomanip>, which argument-dependent lookup would also find.)
[[nodiscard]] inline std::string quoted_input(std::string_view text, std::size_t max_chars = 80) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(text.size() * 4, max_chars) + 5);
  out += '\'';
  std::size_t kept = 0;  // characters of the escaped text so far
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    // 1. the byte's form in the message: itself, or an escape of 2 or 4 characters
    char piece[4];
    std::size_t size = 2;
    piece[0] = '\\';
    switch (c) {
      case '\\': piece[1] = '\\'; break;
      case '\'': piece[1] = '\''; break;
      case '\r': piece[1] = 'r'; break;
      case '\n': piece[1] = 'n'; break;
      case '\t': piece[1] = 't'; break;
      case '\0': piece[1] = '0'; break;
      default:
        if (c >= 0x20 && c <= 0x7e) {
          piece[0] = ch;
          size = 1;
        } else {
          piece[1] = 'x';
          piece[2] = hex[c >> 4];
          piece[3] = hex[c & 15];
          size = 4;
        }
    }
    // 2. cut before the first piece that would pass max_chars (an escape is never split)
    if (kept + size > max_chars) {
      out += "...";
      break;
    }
    out.append(piece, size);
    kept += size;
  }
  out += '\'';
  return out;
}

/// The max_chars for quoted_input() of a spec or a set's name, which may hold a file path: as
/// long as a path may be (PATH_MAX), so that a message names the path whole.
inline constexpr std::size_t quoted_spec_chars = 4096;

/// quoted_input(spec, quoted_spec_chars): a spec ("rmat:20", "mtx:PATH") or a set's name as
/// messages quote it ("graph spec 'rmat:x': ...").
[[nodiscard]] inline std::string quoted_spec(std::string_view spec) {
  return quoted_input(spec, quoted_spec_chars);
}

}  // namespace cdpkit
