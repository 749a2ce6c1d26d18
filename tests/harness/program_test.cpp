// The programs' one error path, seen from outside: exit codes and one-line messages that name the
// program. Host cases: they run the sample executables with arguments that fail before any GPU
// work (and, on a machine without a GPU, the "no CUDA device" line).

#include <cdpkit/harness/program.hpp>

#include <doctest/doctest.h>

#ifndef CDPKIT_NO_SAMPLES  // built without the samples (CDPKIT_BUILD_SAMPLES=OFF): nothing to run

#include "support/gpu.hpp"
#include "support/temp_dir.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

namespace {

struct program_result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

program_result run(const std::string& command) {
  program_result r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, got);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::size_t lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

const std::string l2c = CDPKIT_SAMPLE_LOOP_TO_CHILD;
const std::string bfs = CDPKIT_SAMPLE_BFS;
const std::string tree = CDPKIT_SAMPLE_TREE;
const std::string quadtree = CDPKIT_SAMPLE_QUADTREE;
const std::string spmv = CDPKIT_SAMPLE_SPMV;
const std::string bezier = CDPKIT_SAMPLE_BEZIER;
const std::string quicksort = CDPKIT_SAMPLE_QUICKSORT;

}  // namespace

TEST_CASE("a bad command line is one line naming the program and exit 2") {
  for (const std::string& args : {std::string("--bogus"), std::string("--reps 0"),
                                  std::string("--timeout -1"), std::string("--segments x")}) {
    CAPTURE(args);
    const auto r = run(l2c + " " + args);
    CHECK(r.exit_code == 2);
    CHECK(r.output.rfind("loop_to_child: ", 0) == 0);
    CHECK(lines(r.output) == 1u);
  }
  const auto r = run(bfs + " --pending-budget -3");
  CHECK(r.exit_code == 2);
  CHECK(r.output.rfind("bfs: --pending-budget", 0) == 0);
}

TEST_CASE("--help prints the options and exits 0") {
  const auto r = run(l2c + " --help");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("--timeout") != std::string::npos);
  CHECK(r.output.find("--pending-budget") != std::string::npos);
  CHECK(r.output.find("--serialize-warp-launches") != std::string::npos);
  CHECK(r.output.find("--record-refusals") != std::string::npos);
}

TEST_CASE("a bad input value is one line naming the program and exit 2, before any GPU work") {
  const auto r = run(l2c + " --dist nonsense");
  CHECK(r.exit_code == 2);
  CHECK(r.output.rfind("loop_to_child: ", 0) == 0);
  CHECK(r.output.find("nonsense") != std::string::npos);
  const auto b = run(bfs + " --variant nonsense");
  CHECK(b.exit_code == 2);
  CHECK(b.output.rfind("bfs: ", 0) == 0);
}

TEST_CASE("a bad tree or point spec, or a file that is not one, is one line naming the program and exit 2") {
  for (const auto& [command, message] :
       {std::pair{tree + " --tree random:12x", std::string("tree: tree spec 'random:12x': node count '12x' is not a "
                                                           "non-negative integer (or 2^K)")},
        std::pair{tree + " --tree parents:/nonexistent", std::string("tree: /nonexistent: cannot open")},
        std::pair{tree + " --op sideways", std::string("tree: unknown tree operation 'sideways'")},
        std::pair{quadtree + " --points gauss:10", std::string("quadtree: point spec 'gauss:10': unknown kind 'gauss'")},
        std::pair{quadtree + " --points file:/", std::string("quadtree: /: is a directory, not a regular file")}}) {
    CAPTURE(command);
    const auto r = run(command);
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.output.find(message) != std::string::npos, r.output);
    CHECK(r.output.find(".cpp:") == std::string::npos);
  }
}

TEST_CASE("a bad matrix spec, or a file that is not a Matrix Market matrix, is one line naming the program and "
          "exit 2") {
  const cdpkit_test::temp_dir dir;
  const std::string bad_mtx =  // row 4 of a 3 x 3 matrix
      dir.file("bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n4 1 2.0\n");
  for (const auto& [command, needle] :
       {std::pair{spmv + " --matrix rmat:99", std::string("rmat:99")},
        std::pair{spmv + " --matrix mesh:10", std::string("mesh:10")},
        std::pair{spmv + " --matrix mtx:/nonexistent.mtx", std::string("/nonexistent.mtx")},
        std::pair{spmv + " --matrix " + bad_mtx, bad_mtx + ":4:"},
        std::pair{spmv + " --variant all,csr_vector", std::string("'csr_vector'")}}) {
    CAPTURE(command);
    const auto r = run(command);
    CHECK(r.exit_code == 2);
    CHECK(r.output.rfind("spmv: ", 0) == 0);
    CHECK_MESSAGE(r.output.find(needle) != std::string::npos, r.output);
    CHECK(lines(r.output) == 1u);
    CHECK(r.output.find(".cpp:") == std::string::npos);
  }
}

TEST_CASE("a bad curve spec, font, window or tolerance is one line naming the program and exit 2, and no picture "
          "is written") {
  const cdpkit_test::temp_dir dir;
  const std::string not_a_font = dir.file("notes.ttf", "these are notes, not glyphs\n");
  const std::string svg = (dir.path() / "picture.svg").string();
  for (const auto& [command, needle] :
       {std::pair{bezier + " --curves random:x", std::string("random:x")},
        std::pair{bezier + " --curves spiral:10", std::string("spiral:10")},
        std::pair{bezier + " --curves font:/nonexistent.ttf", std::string("/nonexistent.ttf")},
        std::pair{bezier + " --curves font:" + not_a_font, not_a_font},
        std::pair{bezier + " --variant all,malloc_per_line", std::string("'malloc_per_line'")},
        std::pair{bezier + " --tolerance 0", std::string("--tolerance")},
        std::pair{bezier + " --tolerance nan", std::string("--tolerance")},
        std::pair{bezier + " --window 10,10,5,20", std::string("--window")},
        std::pair{bezier + " --window 1,2,3", std::string("--window")}}) {
    CAPTURE(command);
    const auto r = run(command + " --svg " + svg);
    CHECK(r.exit_code == 2);
    CHECK(r.output.rfind("bezier: ", 0) == 0);
    CHECK_MESSAGE(r.output.find(needle) != std::string::npos, r.output);
    CHECK(lines(r.output) == 1u);
    CHECK(r.output.find(".cpp:") == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(svg));
  }
  // an unwritable picture path fails before any GPU work, with or without a GPU
  const auto r = run(bezier + " --curves random:100 --svg " + (dir.path() / "missing" / "p.svg").string());
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.output.rfind("bezier: --svg: ", 0) == 0, r.output);
  CHECK(lines(r.output) == 1u);
}

TEST_CASE("bad graphs, numbers and output paths are exit 2 before the GPU is asked for, and no file is replaced") {
  const cdpkit_test::temp_dir dir;
  const std::string graph = dir.file("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n");
  for (const auto& [command, needle] :
       {std::pair{bfs + " --graph /nonexistent/g.txt", std::string("/nonexistent/g.txt")},
        std::pair{bfs + " --graph rmat:abc", std::string("rmat:abc")},
        std::pair{bfs + " --graph rmat:10 --source 5000", std::string("--source 5000")},
        std::pair{l2c + " --alpha nan", std::string("--alpha: 'nan' is not a finite number > 1")},
        std::pair{l2c + " --alpha 0.5", std::string("--alpha: '0.5' is not a finite number > 1")},
        std::pair{l2c + " --max-len 0", std::string("--max-len")},
        std::pair{l2c + " --item-ns nan", std::string("--item-ns: 'nan' is not a finite number in (0, 1e+09]")},
        std::pair{l2c + " --pm-interval-us nan", std::string("--pm-interval-us: 'nan' is not a finite number")},
        std::pair{tree + " --tree path:10 --timeout nan", std::string("--timeout: 'nan' is not a finite number")},
        std::pair{spmv + " --profile /nonexistent/p.json", std::string("the folder '/nonexistent' does not exist")},
        std::pair{spmv + " --matrix " + graph + " --profile " + graph,
                  std::string("exists and does not hold a JSON document: refusing to replace it")},
        std::pair{bezier + " --svg " + graph, std::string("exists and does not hold an SVG picture")},
        // numbers CLI11 alone would wrap, saturate or read as 0
        std::pair{bfs + " --graph rmat:10 --seed -1", std::string("--seed: '-1' is not a whole number in [0, ")},
        std::pair{tree + " --seed 18446744073709551616", std::string("'18446744073709551616' is not a whole number")},
        std::pair{bfs + " --graph rmat:10 --sweep 1,,2", std::string("--sweep: '' is not a whole number")},
        std::pair{bfs + " --graph rmat:10 --sweep ''", std::string("--sweep: '' is not a whole number")},
        // checks that need no GPU come before the GPU is asked for
        std::pair{l2c + " --pending-limit 1024 --pending-budget 1024", std::string("leaves no headroom below")},
        std::pair{"CDPKIT_HOST_MEMORY_LIMIT=1000000 " + quicksort + " --n 1048576",
                  std::string("of host memory; only")}}) {
    CAPTURE(command);
    const auto r = run(command);
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.output.find(needle) != std::string::npos, r.output);
    CHECK(lines(r.output) == 1u);
    CHECK(r.output.find("no CUDA device") == std::string::npos);
  }
  std::ifstream in(graph);
  std::string first;
  std::getline(in, first);
  CHECK(first == "%%MatrixMarket matrix coordinate pattern general");  // untouched
}

TEST_CASE("every program answers --version with its name and the cdpkit version, exit 0") {
  for (const auto& [program, name] : {std::pair{l2c, std::string("loop_to_child (cdpkit ")},
                                      std::pair{bfs, std::string("bfs (cdpkit ")},
                                      std::pair{tree, std::string("tree (cdpkit ")},
                                      std::pair{quadtree, std::string("quadtree (cdpkit ")},
                                      std::pair{spmv, std::string("spmv (cdpkit ")},
                                      std::pair{bezier, std::string("bezier (cdpkit ")}}) {
    const auto r = run(program + " --version");
    CHECK(r.exit_code == 0);
    CHECK(r.output.rfind(name, 0) == 0);
    CHECK(lines(r.output) == 1u);
  }
  const auto r = run(std::string(CDPKIT_REPORT_EXE) + " --version");
  CHECK(r.exit_code == 0);
  CHECK(r.output.rfind("cdpkit-report (cdpkit ", 0) == 0);
}

TEST_CASE("a benchmark's --thresholds takes whole numbers, and none or an empty value for no sweep") {
  const auto parse = [](std::vector<std::string> args) {
    std::vector<std::uint32_t> thresholds = {16, 128};
    CLI::App app{"t"};
    cdpkit::harness::add_thresholds_option(app, thresholds, "the sweep");
    args.insert(args.begin(), "t");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    app.parse(static_cast<int>(argv.size()), argv.data());
    return thresholds;
  };
  CHECK(parse({}) == std::vector<std::uint32_t>{16, 128});  // the default
  CHECK(parse({"--thresholds", "0,4,4294967295"}) == std::vector<std::uint32_t>{0, 4, 4294967295u});
  CHECK(parse({"--thresholds", ""}).empty());
  CHECK(parse({"--thresholds", "none"}).empty());
  for (const char* bad : {"4294967296", "-1", "x", "1e3", "12345678901"}) {
    CAPTURE(bad);
    const std::string expected = std::string("'") + bad + "' is not a threshold";
    CHECK_THROWS_WITH_AS(parse({"--thresholds", std::string("8,") + bad}), doctest::Contains(expected.c_str()),
                         CLI::ValidationError);
  }
}

TEST_CASE("--variant takes a comma-separated list and names the bad entry") {
  const auto r = run(l2c + " --variant serial_loop,fastest");
  CHECK(r.exit_code == 2);
  CHECK(r.output.rfind("loop_to_child: unknown loop policy 'fastest'", 0) == 0);
  const auto b = run(bfs + " --variant all,nonsense");
  CHECK(b.exit_code == 2);
  CHECK(b.output.find("'nonsense'") != std::string::npos);
  for (const std::string& program : {tree, quadtree, spmv, bezier}) {
    const auto t = run(program + " --variant all,nonsense");
    CHECK(t.exit_code == 2);
    CHECK(t.output.find("'nonsense'") != std::string::npos);
  }
}

TEST_CASE("without a GPU a program says so in one line and exits 3" *
          doctest::skip(cdpkit_test::gpu_available())) {
  for (const std::string& program :
       {l2c, bfs, tree + " --tree kary:2:3", quadtree + " --points uniform:100", spmv + " --matrix banded:100:2",
        bezier + " --curves random:100 --svg \"\""}) {
    CAPTURE(program);
    const auto r = run(program + " --reps 1");
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("no CUDA device found") != std::string::npos);
    CHECK(r.output.find(".cpp:") == std::string::npos);  // no source path for the user
    CHECK(lines(r.output) == 1u);
  }
}

#endif  // CDPKIT_NO_SAMPLES
