// Writing a JSON document to a file whole: printed first, then a temporary file renamed into place.

#include <cdpkit/error.hpp>
#include <cdpkit/profiling/json_file.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>

namespace cdpkit::profiling {

void write_json_file(const nlohmann::json& doc, const std::string& path) {
  if (path.empty()) throw input_error("empty output path");
  const std::string tmp = path + ".tmp";
  // 1. Print first, before any file exists: a string that is not valid UTF-8 (an input path,
  //    a device name) is written with U+FFFD in place of the bad bytes instead of throwing.
  std::string text;
  try {
    text = doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += '\n';
  } catch (const std::exception& e) {
    throw input_error("cannot write '" + path + "': " + e.what());
  }
  // 2. Write the temporary file and rename it into place. Once created, the temporary file is
  //    removed on every failure (open, write, flush, rename, exception); the rename disarms that.
  struct remove_on_failure {
    const std::string& file;
    bool armed = false;
    ~remove_on_failure() {
      if (armed) std::remove(file.c_str());
    }
  } guard{tmp};
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw input_error("cannot write '" + path + "': cannot open '" + tmp + "' for writing");
    guard.armed = true;
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw input_error("cannot write '" + path + "': writing '" + tmp + "' failed (disk full?)");
  } catch (const input_error&) {
    throw;
  } catch (const std::exception& e) {
    throw input_error("cannot write '" + path + "': " + e.what());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw input_error("cannot write '" + path + "': cannot move '" + tmp + "' into place: " +
                      std::strerror(errno));
  guard.armed = false;
}

}  // namespace cdpkit::profiling
