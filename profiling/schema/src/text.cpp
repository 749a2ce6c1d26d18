// Number formatting, UTF-8 repair and atomic file writing (cdpkit/schema/text.hpp).

#include <cdpkit/schema/text.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cdpkit::schema {

std::string format(const char* fmt, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, value);
  return buf;
}

std::string fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

std::string grouped(std::uint64_t value) {
  std::string s = std::to_string(value);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string percent(double share) { return fixed(100.0 * share, share < 0.1 && share > 0 ? 1 : 0) + "%"; }

std::string utf8_replaced(std::string_view text) {
  const std::string dumped =
      nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(dumped).get<std::string>();
}

namespace {

/// The temporary file, removed unless disarmed (after the rename), whatever happened before.
struct remove_on_failure {
  const std::string& file;
  bool armed = false;
  ~remove_on_failure() {
    if (armed) std::remove(file.c_str());
  }
};

/// write(2) all of `text` to `fd`; false on any error.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view text) {
  if (path.empty()) throw write_error("empty output path");
  const std::string tmp = path + ".tmp";
  remove_on_failure guard{tmp};
  // 1. The temporary file in the same folder (so that the rename stays on one file system).
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);  // less the umask, as ofstream
  if (fd < 0) throw write_error(path + ": cannot open '" + tmp + "' for writing: " + std::strerror(errno));
  guard.armed = true;
  // 2. Its contents, on disk before the rename: a crash leaves the old file or the new one.
  const bool written = write_all(fd, text) && ::fsync(fd) == 0;
  const int write_errno = errno;
  if (::close(fd) != 0 || !written)
    throw write_error(path + ": write failed (disk full?): " + std::strerror(written ? errno : write_errno));
  // 3. The rename into place; only it disarms the guard.
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw write_error(path + ": cannot move the finished file into place: " + std::strerror(errno));
  guard.armed = false;
}

void write_json_file(const nlohmann::json& doc, const std::string& path) {
  if (path.empty()) throw write_error("empty output path");
  std::string text;
  try {
    text = doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception& e) {
    throw write_error(path + ": " + e.what());
  }
  text += '\n';
  write_file_atomically(path, text);
}

}  // namespace cdpkit::schema
