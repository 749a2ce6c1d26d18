// The text helpers every profile writer shares (no CUDA): numbers formatted one way for tables
// and reports, invalid UTF-8 replaced, and files written whole through a temporary of their own,
// over a regular file or a link to one only.

#include <doctest/doctest.h>

#include <cdpkit/schema/profile.hpp>
#include <cdpkit/schema/text.hpp>

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using nlohmann::json;
namespace schema = cdpkit::schema;

}  // namespace

TEST_CASE("numbers are formatted one way for tables and reports") {
  CHECK(schema::grouped(0) == "0");
  CHECK(schema::grouped(999) == "999");
  CHECK(schema::grouped(1000) == "1,000");
  CHECK(schema::grouped(1234567) == "1,234,567");
  CHECK(schema::grouped(18446744073709551615ull) == "18,446,744,073,709,551,615");
  CHECK(schema::fixed(1.25, 1) == "1.2");
  CHECK(schema::fixed(3.0, 3) == "3.000");
  CHECK(schema::percent(0.91) == "91%");
  CHECK(schema::percent(0.034) == "3.4%");
  CHECK(schema::percent(0.0) == "0%");
  CHECK(schema::percent(1.0) == "100%");
  CHECK(schema::format("%.2fx", 23.04) == "23.04x");
  CHECK(schema::utf8_replaced("ok \xc3\xa9") == "ok \xc3\xa9");
  CHECK(schema::utf8_replaced("bad \xff") == "bad \xef\xbf\xbd");
}

TEST_CASE("files are written whole through a temporary file that never stays behind") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_schema_test_files";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "taken" / "inside");
  const auto count_tmp = [&] {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) n += e.path().extension() == ".tmp";
    return n;
  };
  const std::string ok = (dir / "ok.txt").string();
  schema::write_file_atomically(ok, "first");
  schema::write_file_atomically(ok, "second");
  std::ifstream in(ok);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "second");
  CHECK_THROWS_WITH_AS(schema::write_file_atomically("", "x"), "empty output path", schema::write_error);
  const std::string taken = (dir / "taken").string();
  CHECK_THROWS_WITH_AS(schema::write_file_atomically(taken, "x"),
                       (taken + ": exists and is a directory, not a regular file; nothing written").c_str(),
                       schema::write_error);
  CHECK(std::filesystem::is_directory(taken));
  const std::string missing = (dir / "missing" / "f.json").string();
  CHECK_THROWS_WITH_AS(schema::write_json_file(json::object(), missing), doctest::Contains(missing.c_str()),
                       schema::write_error);
  const std::string doc = (dir / "doc.json").string();
  schema::write_json_file(json{{"name", "GPU \xff"}}, doc);
  CHECK(json::parse(std::ifstream(doc))["name"] == "GPU \xef\xbf\xbd");
  CHECK(count_tmp() == 0u);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a file is written through a new temporary of its own, over a regular file or a link to one only") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_schema_test_kinds";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "keep");
  const auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const auto files_in_dir = [&] {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
    return n;
  };
  // a file named as the old fixed temporary, PATH.tmp, is neither truncated nor removed
  std::ofstream(dir / "a.json.tmp") << "input";
  schema::write_file_atomically((dir / "a.json").string(), "output");
  CHECK(read(dir / "a.json.tmp") == "input");
  CHECK(read(dir / "a.json") == "output");
  // the new file has the usual permissions: 0666 less the umask, as a plain open would give it
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((std::filesystem::status(dir / "a.json").permissions() & std::filesystem::perms::all) ==
        static_cast<std::filesystem::perms>(0666 & ~mask));
  // a directory, a FIFO and a link to nothing are refused before anything is created
  std::ofstream(dir / "keep.tmp") << "mine";
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  std::filesystem::create_symlink(dir / "nowhere", dir / "dangling");
  std::filesystem::create_symlink("loop_b", dir / "loop_a");  // a loop of links is not a new file
  std::filesystem::create_symlink("loop_a", dir / "loop_b");
  const std::size_t before = files_in_dir();
  for (const auto& [name, what] : {std::pair<std::string, std::string>{"keep", "exists and is a directory"},
                                   {"fifo", "exists and is a FIFO"},
                                   {"dangling", "a symbolic link to a file that does not exist"},
                                   {"loop_a", "Too many levels of symbolic links"}}) {
    const std::string path = (dir / name).string();
    CAPTURE(path);
    CHECK_THROWS_WITH_AS(schema::write_file_atomically(path, "x"), doctest::Contains((path + ": " + what).c_str()),
                         schema::write_error);
    CHECK(files_in_dir() == before);
  }
  CHECK(read(dir / "keep.tmp") == "mine");
  CHECK(std::filesystem::is_fifo(dir / "fifo"));
  CHECK_FALSE(std::filesystem::exists(dir / "nowhere"));
  // a link to a regular file stays a link; the file it points to gets the text
  std::ofstream(dir / "target.txt") << "old";
  std::filesystem::create_symlink("target.txt", dir / "link.txt");  // relative, as links often are
  schema::write_file_atomically((dir / "link.txt").string(), "new");
  CHECK(std::filesystem::is_symlink(dir / "link.txt"));
  CHECK(read(dir / "target.txt") == "new");
  // another user's link is not followed (in a shared folder it could steer the write onto any
  // file of ours): made here as root, by handing the link to nobody
  if (::geteuid() == 0) {
    std::filesystem::create_symlink("target.txt", dir / "foreign.txt");
    REQUIRE(::lchown((dir / "foreign.txt").c_str(), 65534, 65534) == 0);
    CHECK_THROWS_WITH_AS(schema::write_file_atomically((dir / "foreign.txt").string(), "steered"),
                         doctest::Contains("a symbolic link owned by another user; nothing written"), schema::write_error);
    CHECK(read(dir / "target.txt") == "new");
  }
  // a name near the file system's limit (255 bytes) still gets a temporary: a short one of its own
  const std::string long_name = std::string(250, 'x') + ".html";
  schema::write_file_atomically((dir / long_name).string(), "long");
  CHECK(read(dir / long_name) == "long");
  // no temporary stays behind; the user's files named *.tmp do
  CHECK_THROWS_AS(schema::write_file_atomically((dir / "missing" / "f.txt").string(), "x"), schema::write_error);
  std::size_t temporaries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) temporaries += e.path().extension() == ".tmp";
  CHECK(temporaries == 2u);  // a.json.tmp and keep.tmp
  std::filesystem::remove_all(dir);
}

TEST_CASE("a write past the file-size limit fails with a message and leaves no temporary file") {
  const auto dir = std::filesystem::temp_directory_path() / "cdpkit_schema_fsize";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  // In a child process: a 4 KiB file-size limit (what `ulimit -f 4` sets), then 64 KiB to write.
  // Exit 0: write_error thrown and caught; anything else (SIGXFSZ's default ends the process)
  // fails the case.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    rlimit limit{4096, 4096};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(3);
    try {
      schema::write_file_atomically(path, std::string(65536, 'x'));
    } catch (const schema::write_error& e) {
      ::_exit(std::string(e.what()).rfind(path + ": write failed", 0) == 0 ? 0 : 4);
    }
    ::_exit(5);  // written whole: the limit did not hold
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  bool tmp_left = false;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) tmp_left |= entry.path().extension() == ".tmp";
  CHECK_FALSE(tmp_left);
  CHECK_FALSE(std::filesystem::exists(path));
  std::filesystem::remove_all(dir);
}
