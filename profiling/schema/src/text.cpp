// Number formatting, UTF-8 repair and atomic file writing (cdpkit/schema/text.hpp).

#include <cdpkit/schema/text.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

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

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
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
/// Armed only once this call has created it: a file it did not create is never removed.
struct remove_on_failure {
  const std::string& file;
  bool armed = false;
  ~remove_on_failure() {
    if (armed) std::remove(file.c_str());
  }
};

/// While alive, a write past the file-size limit (`ulimit -f`) fails with EFBIG instead of
/// ending the process with SIGXFSZ, whose default action would leave the temporary file behind.
/// The disposition is the process's: the one found is restored.
struct file_size_signal_ignored {
  struct sigaction previous {};
  bool saved = false;
  file_size_signal_ignored() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    saved = ::sigaction(SIGXFSZ, &ignore, &previous) == 0;
  }
  ~file_size_signal_ignored() {
    if (saved) ::sigaction(SIGXFSZ, &previous, nullptr);
  }
  file_size_signal_ignored(const file_size_signal_ignored&) = delete;
  file_size_signal_ignored& operator=(const file_size_signal_ignored&) = delete;
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

/// What a file that is not a regular file is, for the message that refuses it.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// Create a new temporary file next to `file` ("FILE.XXXXXX.tmp", XXXXXX random; for a name
/// within 11 bytes of NAME_MAX, ".cdpkit.XXXXXX.tmp" in the same folder), with O_EXCL:
/// it never opens or truncates a file that already exists (another run's temporary, or an input
/// named like one), and never follows a symbolic link. Mode 0666 less the umask, as the final
/// file should have (mkstemp's 0600 would need the umask, which cannot be read without changing
/// it). Returns the descriptor and sets `tmp`; -1 with errno on failure.
int create_temporary(const std::string& file, std::string& tmp) {
  static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  constexpr std::size_t name_max = 255, added = 11;  // NAME_MAX of Linux's file systems; ".XXXXXX.tmp"
  const std::size_t slash = file.find_last_of('/');
  const std::size_t name_bytes = slash == std::string::npos ? file.size() : file.size() - slash - 1;
  const std::string stem = name_bytes + added <= name_max
                               ? file
                               : (slash == std::string::npos ? std::string() : file.substr(0, slash + 1)) + ".cdpkit";
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string suffix(6, ' ');
    for (auto& ch : suffix) ch = alphabet[random() % (sizeof alphabet - 1)];
    tmp = stem + "." + suffix + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

}  // namespace

// The file to replace for `path`: `path` itself, or the file a symbolic link points to (so that
// the link stays). Throws write_error, before anything is created, for anything but a regular
// file or nothing: renaming over a directory fails late, and over a device (/dev/full) or a FIFO
// it would replace the node itself with a regular file. A link is followed only when it is the
// caller's own (as the kernel's protected_symlinks rule has it): another user's link in a shared
// folder must not steer the write onto a file of the caller's.
std::string output_target(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {  // follows links
    const int stat_errno = errno;
    struct stat entry {};
    if (stat_errno == ENOENT && ::lstat(path.c_str(), &entry) == 0 && S_ISLNK(entry.st_mode))
      throw write_error(path + ": a symbolic link to a file that does not exist; nothing written");
    if (stat_errno == ENOENT) return path;  // nothing there: a new file
    // a loop of links (ELOOP), a folder that cannot be searched (EACCES), a name too long...
    throw write_error(path + ": " + std::strerror(stat_errno) + "; nothing written");
  }
  if (!S_ISREG(st.st_mode))
    throw write_error(path + ": exists and is " + kind_of(st.st_mode) + ", not a regular file; nothing written");
  struct stat entry {};
  if (::lstat(path.c_str(), &entry) != 0 || !S_ISLNK(entry.st_mode)) return path;
  if (entry.st_uid != ::geteuid())
    throw write_error(path + ": a symbolic link owned by another user; nothing written");
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) throw write_error(path + ": cannot resolve the symbolic link: " + std::strerror(errno));
  std::string target(resolved);
  std::free(resolved);
  return target;
}

std::string output_refusal(const std::string& path, const std::string& kind, char first) {
  if (path.empty()) return {};
  namespace fs = std::filesystem;
  std::string target;
  try {
    target = output_target(path);  // what the writer would replace, or its refusal
  } catch (const write_error& e) {
    return e.what();
  }
  const fs::path file(target);
  const fs::path folder = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return "'" + path + "': the folder '" + folder.string() + "' does not exist";
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    return "'" + path + "': cannot write in the folder '" + folder.string() + "'";
  if (!fs::exists(file, ec)) return {};  // a new file (output_target refused what could not be read)
  std::ifstream in(file, std::ios::binary);
  if (!in.is_open()) return "'" + path + "' exists and cannot be read: refusing to replace it";
  char c = 0;
  while (in.get(c) && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
  }
  if (in && c != first) return "'" + path + "' exists and does not hold " + kind + ": refusing to replace it";
  return {};
}

void write_file_atomically(const std::string& path, std::string_view text) {
  if (path.empty()) throw write_error("empty output path");
  // 1. What is there: nothing, a regular file, or a link to one (its target is replaced).
  const std::string file = output_target(path);
  // 2. A new temporary file in the same folder (so that the rename stays on one file system).
  std::string tmp;
  remove_on_failure guard{tmp};
  const int fd = create_temporary(file, tmp);
  if (fd < 0) throw write_error(path + ": cannot create '" + tmp + "' for writing: " + std::strerror(errno));
  guard.armed = true;
  // 3. Its contents, on disk before the rename: a crash leaves the old file or the new one.
  bool written = false;
  {
    const file_size_signal_ignored no_sigxfsz;
    written = write_all(fd, text) && ::fsync(fd) == 0;
  }
  const int write_errno = errno;
  if (::close(fd) != 0 || !written)
    throw write_error(path + ": write failed (disk full?): " + std::strerror(written ? errno : write_errno));
  // 4. The rename into place; only it disarms the guard.
  if (std::rename(tmp.c_str(), file.c_str()) != 0)
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
