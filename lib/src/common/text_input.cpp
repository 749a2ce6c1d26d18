// The readers' shared text input (text_input.hpp).

#include "text_input.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/memory.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cdpkit::detail {

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// A run of digits as a message shows it: as it is (a number, no quotes) up to 40 digits, its first
/// 40 digits then "... (N digits)" beyond, so that a 1 MB number makes a short message.
std::string digits_for_message(std::string_view digits) {
  if (digits.size() <= 40) return std::string(digits);
  return std::string(digits.substr(0, 40)) + "... (" + std::to_string(digits.size()) + " digits)";
}

/// Closes a file descriptor on every path out.
struct fd_guard {
  int fd;
  ~fd_guard() { (void)::close(fd); }
};

}  // namespace

void fail_at(const std::string& name, std::uint64_t line, const std::string& reason) {
  throw input_error(name + ":" + std::to_string(line) + ": " + reason);
}


std::string_view next_token(std::string_view& s) noexcept {
  skip_blanks(s);
  std::size_t n = 0;
  while (n < s.size() && !is_blank(s[n])) ++n;
  const std::string_view token = s.substr(0, n);
  s.remove_prefix(n);
  return token;
}

std::uint64_t parse_unsigned(std::string_view token, std::uint64_t max, const char* what,
                             const std::string& name, std::uint64_t line) {
  if (token.empty()) fail_at(name, line, std::string("missing ") + what);
  if (!all_digits(token))
    fail_at(name, line, std::string(what) + " " + quoted_input(token) + " is not a non-negative integer");
  std::uint64_t value = 0;
  for (char c : token) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (digit > max || value > (max - digit) / 10)
      fail_at(name, line, std::string(what) + " " + digits_for_message(token) + " is larger than " +
                              std::to_string(max) + (max == 0xfffffffeull ? " (32-bit vertex ids)" : ""));
    value = value * 10 + digit;
  }
  return value;
}

std::uint64_t parse_spec_count(std::string_view token, const std::string& context, const char* what) {
  if (token.size() > 2 && token.substr(0, 2) == "2^") {
    const std::string_view e = token.substr(2);
    if (!all_digits(e) || e.size() > 2 || std::stoi(std::string(e)) > 63)
      throw input_error(context + what + " " + quoted_input(token) + " is not 2^K with K in [0, 63]");
    return 1ull << std::stoi(std::string(e));
  }
  if (!all_digits(token))
    throw input_error(context + what + " " + quoted_input(token) + " is not a non-negative integer (or 2^K)");
  if (token.size() > 19)  // (every 19-digit number fits 64 bits; the callers' own limits are lower)
    throw input_error(context + what + " " + digits_for_message(token) + " is far too large (more than 19 digits)");
  return std::stoull(std::string(token));
}

std::string read_text_file(const std::string& path, std::uint64_t max_bytes, bool default_cap,
                           const file_kind_words& words) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused right after); it does
  // not change reads from a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw input_error(path + ": cannot open: " + std::strerror(errno));
  const fd_guard guard{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw input_error(path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw input_error(path + ": is " + file_kind(st.st_mode) + ", not a regular file; " +
                      (words.plural != nullptr ? std::string(words.plural) : std::string(words.noun) + "s") +
                      " are read from regular files only");
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);  // plain blocking reads again
  const auto describe = [](std::uint64_t bytes) {
    return bytes < 1024 ? format_bytes(bytes)
                        : format_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
  };
  const auto too_large = [&](std::uint64_t size) {
    return input_error(path + ": the file is " + describe(size) + ", more than the " + describe(max_bytes) +
                       " a " + words.noun + " file may have (" +
                       (default_cap ? "by default a quarter of the available host memory, at most "
                                      "64 GiB; "
                                    : "") +
                       words.option + ")");
  };
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) throw too_large(size);

  std::string text;
  text.reserve(static_cast<std::size_t>(size));
  char buf[1 << 16];
  while (true) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw input_error(path + ": read error: " + std::strerror(errno));
    }
    if (got == 0) break;
    // a file that grows while it is read stops at the cap all the same
    const std::uint64_t total = text.size() + static_cast<std::uint64_t>(got);
    if (total > max_bytes) throw too_large(total);
    text.append(buf, static_cast<std::size_t>(got));
  }
  return text;
}

std::uint64_t default_max_file_bytes() noexcept { return max_graph_file_bytes_for(available_host_memory()); }

}  // namespace cdpkit::detail
