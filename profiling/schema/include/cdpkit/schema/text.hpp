#pragma once
// cdpkit/schema/text.hpp — the few text helpers every writer of cdpkit output needs, defined once:
// number formatting for tables and reports, UTF-8 repair, and atomic file writing.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cdpkit::schema {

/// printf-style formatting of one value, e.g. format("%.2f", 1.234) == "1.23".
/// Precondition: `fmt` is a printf format with exactly one double conversion; the result is cut
/// at 63 characters.
std::string format(const char* fmt, double value);

/// `value` with `digits` digits after the point ("%.*f"): fixed(1.25, 1) == "1.2".
/// Precondition: 0 <= digits <= 30.
std::string fixed(double value, int digits);

/// `value` with thousands separators: grouped(1234567) == "1,234,567".
std::string grouped(std::uint64_t value);

/// The current UTC time as ISO 8601 (`2026-12-06T02:17:47Z`): when a profile or benchmark was made.
std::string utc_now_iso8601();

/// A share in [0, 1] as a percentage: no decimals, one below 10 % (0.91 -> "91%",
/// 0.034 -> "3.4%", 0 -> "0%").
std::string percent(double share);

/// `text` with every byte sequence that is not valid UTF-8 replaced by U+FFFD, so that it can be
/// printed into JSON and HTML. Valid UTF-8 comes back unchanged.
std::string utf8_replaced(std::string_view text);

/// A file that could not be written; the message starts with the path.
class write_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Write `text` to `path` whole or not at all: it goes to a new temporary file in the same folder
/// (`path`.XXXXXX.tmp, a name no other file has: an existing file is never opened), is flushed to
/// disk (fsync) and renamed into place, with mode 0666 less the umask. Only a regular file is
/// replaced: a symbolic link to one that the caller owns keeps the link and replaces the file it
/// points to (another user's link is refused); a path that is a directory, a device
/// (/dev/full), a FIFO or a socket, a link to nothing or a loop of links, is
/// refused before anything is created ("PATH: exists and is a directory, not a regular file;
/// nothing written"). On any failure (create, write, fsync, rename, an exception) the temporary
/// file this call created is removed, and nothing else; `path` is as it was, and write_error is
/// thrown naming `path`.
/// Precondition: none; an empty path is a write_error ("empty output path").
void write_file_atomically(const std::string& path, std::string_view text);

/// The file write_file_atomically(path, ...) would replace or create: `path`, or the target of
/// the caller's own symbolic link to a regular file. Throws write_error for what it would refuse,
/// so that a program can check an output path before its work (harness::output_file).
std::string output_target(const std::string& path);

/// Why `path` may not take the output of a writer of `kind` (empty: it may). Refused: what
/// write_file_atomically would refuse (output_target: not a regular file, a dangling or another
/// user's link), a folder that does not exist or cannot be written in, and an existing file that
/// cannot be read or does not hold `kind`, i.e. holds more than white space and does not start
/// (after white space) with `first` ('{' for JSON, '<' for HTML or SVG). So a misdirected output never replaces
/// a graph or a text. `kind` names the content in the message ("an HTML report"); an empty path
/// passes (no output). Checked before the work, so that a bad output costs nothing.
std::string output_refusal(const std::string& path, const std::string& kind, char first);

/// `doc` printed (one-space indent, a final newline; strings that are not valid UTF-8 are
/// written with U+FFFD in place of the bad bytes) and written with write_file_atomically.
/// Throws write_error naming `path`.
void write_json_file(const nlohmann::json& doc, const std::string& path);

}  // namespace cdpkit::schema
