// The readers' shared text input (text_input.hpp).

#include "text_input.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/sizes.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef CDPKIT_HAVE_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

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

/// Whether `data` starts as a gzip stream does (RFC 1952: 0x1f 0x8b).
bool is_gzip(const std::string& data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b;
}

/// The bytes a gzip file holds (every member, as gunzip gives them), at most `max_bytes` of them:
/// past that `too_large(max_bytes + 1)` is thrown (a gzip bomb is refused before it fills the
/// memory), a corrupt or truncated stream is an input_error naming `path`. Without zlib
/// (CDPKIT_HAVE_ZLIB) every gzip file is refused with a message that says how to read it.
std::string gunzipped(const std::string& path, const std::string& packed, std::uint64_t max_bytes,
                      const std::function<input_error(std::uint64_t)>& too_large) {
#ifdef CDPKIT_HAVE_ZLIB
  z_stream z{};
  if (::inflateInit2(&z, 15 + 16) != Z_OK) throw input_error(path + ": cannot start zlib to read a gzip file");
  struct inflate_guard {
    z_stream* z;
    ~inflate_guard() { (void)::inflateEnd(z); }
  } guard{&z};
  std::string out;
  char buf[1 << 16];
  std::size_t fed = 0;  // bytes of `packed` given to zlib so far
  while (true) {
    if (z.avail_in == 0 && fed < packed.size()) {  // zlib takes at most 4 GiB at once
      const std::size_t chunk = std::min<std::size_t>(packed.size() - fed, 1u << 30);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data() + fed));
      z.avail_in = static_cast<uInt>(chunk);
      fed += chunk;
    }
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    const int rc = ::inflate(&z, Z_NO_FLUSH);
    const std::size_t produced = sizeof buf - z.avail_out;
    if (out.size() + produced > max_bytes) throw too_large(max_bytes + 1);
    out.append(buf, produced);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0 && fed == packed.size()) return out;
      // zero padding after the last member (tape blocks, some writers): the end, as for gunzip
      const std::size_t consumed = fed - z.avail_in;
      if (std::all_of(packed.begin() + static_cast<std::ptrdiff_t>(consumed), packed.end(),
                      [](char b) { return b == '\0'; }))
        return out;
      if (::inflateReset(&z) != Z_OK) throw input_error(path + ": not a valid gzip file");  // another member
      continue;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && fed == packed.size())
      throw input_error(path + ": a gzip file that ends before its compressed data does (truncated?)");
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      throw input_error(path + ": not a valid gzip file (" + (z.msg != nullptr ? std::string(z.msg) : "zlib error " + std::to_string(rc)) + ")");
  }
#else
  (void)packed;
  (void)max_bytes;
  (void)too_large;
  throw input_error(path + ": a gzip-compressed file, and this cdpkit was built without zlib: decompress it "
                           "first (gunzip -k), or install zlib (Debian: zlib1g-dev) and rebuild");
#endif
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

}  // namespace cdpkit::detail

namespace cdpkit {

std::uint64_t parse_size(std::string_view token, const std::string& context, const char* what) {
  using detail::all_digits;
  using detail::digits_for_message;
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

}  // namespace cdpkit

namespace cdpkit::detail {

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
  if (!is_gzip(text)) return text;
  // gzip (SNAP and SuiteSparse ship .gz): the text it holds, under the same cap
  const auto unpacked_too_large = [&](std::uint64_t bytes) {
    return input_error(path + ": gzip-compressed, and it unpacks to more than " + describe(bytes - 1) + ", past the " +
                       describe(max_bytes) + " a " + words.noun + " file may have (" +
                       (default_cap ? "by default a quarter of the available host memory, at most 64 GiB; " : "") +
                       words.option + ")");
  };
  return gunzipped(path, text, max_bytes, unpacked_too_large);
}

std::uint64_t default_max_file_bytes() noexcept { return max_graph_file_bytes_for(available_host_memory()); }

}  // namespace cdpkit::detail
