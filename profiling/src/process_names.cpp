// The names a profile gives its process (process_names.hpp).

#include "process_names.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cxxabi.h>
#include <fstream>
#include <ios>
#include <iterator>
#include <string>
#include <vector>

namespace cdpkit::profiling::detail {

namespace {

/// The words of /proc/self/cmdline; empty when it cannot be read.
std::vector<std::string> command_line_words() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> words;
  std::string word;
  for (const char c : all) {
    if (c == '\0') {
      words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string command_line() {
  std::string out;
  for (const auto& w : command_line_words()) {
    if (!out.empty()) out += ' ';
    out += w.find_first_of(" \t") == std::string::npos ? w : "'" + w + "'";
  }
  return out;
}

std::string program_name() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return base_name(std::string(buf, static_cast<std::size_t>(n)));
  const auto words = command_line_words();
  return words.empty() ? std::string("(unknown program)") : base_name(words.front());
}

std::string demangled(const std::string& mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) {
    std::free(d);
    return mangled;
  }
  std::string out(d);
  std::free(d);
  return out;
}

std::string profile_path(const char* variable, const char* fallback) {
  const char* v = std::getenv(variable);
  std::string p = v != nullptr && *v != '\0' ? std::string(v) : std::string(fallback);
  const std::string pid = std::to_string(::getpid());
  for (auto at = p.find("%p"); at != std::string::npos; at = p.find("%p", at + pid.size()))
    p.replace(at, 2, pid);
  return p;
}

}  // namespace cdpkit::profiling::detail
