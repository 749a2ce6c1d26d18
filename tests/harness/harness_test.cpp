// The programs' shared host parts (cdpkit::harness): the benchmark JSON rows and documents
// (docs/bench-format.md), the text tables, and the command-line checks every sample uses.

#include <doctest/doctest.h>

#include <cdpkit/error.hpp>
#include <cdpkit/harness/bench_json.hpp>
#include <cdpkit/harness/measure.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/harness/table.hpp>
#include <cdpkit/harness/tree_runs.hpp>

#include "support/gpu.hpp"
#include "support/temp_dir.hpp"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

cdpkit::harness::bench_row sample_row() {
  cdpkit::harness::bench_row row;
  row.family = "bfs";
  row.input = "rmat:10";
  row.variant = "thresholded";
  row.baseline = "flat_balanced";
  row.params = {{"threshold", 64}};
  row.n = 1024;
  row.work = 8000000;
  row.work_unit = "edges";
  row.throughput_unit = "GTEPS";
  row.m.time.median_ms = 2.0;
  row.m.time.min_ms = 1.5;
  row.m.time.mad_ms = 0.25;
  row.m.time.reps = 5;
  row.m.checked = true;
  return row;
}

/// The message CLI11 gives for `value` under `check`, "" when the value passes.
std::string check_message(const CLI::Validator& check, std::string value) { return check(value); }

}  // namespace

TEST_CASE("a bench row holds every field of docs/bench-format.md, throughput = work / ms / 1e6") {
  const nlohmann::json j = cdpkit::harness::bench_row_json(sample_row());
  for (const char* field : {"family", "input", "variant", "baseline", "params", "n", "work", "work_unit",
                            "ms_median", "ms_min", "ms_mad", "reps", "stop", "throughput",
                            "throughput_unit", "verified"}) {
    CAPTURE(field);
    CHECK(j.contains(field));
  }
  CHECK(j["family"] == "bfs");
  CHECK(j["baseline"] == "flat_balanced");
  CHECK(j["ms_median"].get<double>() == 2.0);
  CHECK(j["ms_min"].get<double>() == 1.5);
  CHECK(j["ms_mad"].get<double>() == 0.25);
  CHECK(j["reps"] == 5);
  CHECK(j["throughput"].get<double>() == doctest::Approx(4.0));  // 8e6 edges / 2 ms / 1e6
  CHECK(j["verified"] == true);
  CHECK_FALSE(j.contains("trace"));  // no traced run: no trace object
  CHECK(j["params"]["threshold"] == 64);
}

TEST_CASE("a bench row says verified false, never omitted, when unchecked or mismatched, and 0 throughput at 0 ms") {
  auto row = sample_row();
  row.m.checked = false;
  CHECK(cdpkit::harness::bench_row_json(row)["verified"] == false);
  row.m.checked = true;
  row.m.mismatches = 3;
  CHECK(cdpkit::harness::bench_row_json(row)["verified"] == false);
  row.m.time.median_ms = 0.0;
  CHECK(cdpkit::harness::bench_row_json(row)["throughput"].get<double>() == 0.0);
}

TEST_CASE("a traced bench row carries the trace's headline figures and says timings are untraced") {
  auto row = sample_row();
  row.m.trace.emplace();
  row.m.summary.child_launches = 12;
  row.m.summary.fallbacks = 3;
  row.m.summary.max_depth = 2;
  row.m.summary.warp_efficiency = -1.0;  // nothing probed: null, not a number
  const nlohmann::json j = cdpkit::harness::bench_row_json(row);
  REQUIRE(j.contains("trace"));
  CHECK(j["trace"]["child_launches"] == 12);
  CHECK(j["trace"]["fallbacks"] == 3);
  CHECK(j["trace"]["max_depth"] == 2);
  CHECK(j["trace"]["warp_efficiency"].is_null());
  CHECK(j["params"]["traced_run"].get<std::string>().find("untraced runs") != std::string::npos);
}

TEST_CASE("a bench document names its schema and collects the rows of every result") {
  nlohmann::json doc = cdpkit::harness::bench_document({{"name", "test"}});
  CHECK(doc["schema"] == cdpkit::harness::bench_schema);
  CHECK(doc["schema"] == "cdpkit-bench/1");
  CHECK(doc["device"]["name"] == "test");
  CHECK(doc.contains("commit"));
  CHECK(doc.contains("build"));
  REQUIRE(doc["rows"].is_array());
  CHECK(doc["rows"].empty());
  struct result {
    cdpkit::harness::measurement m;
  };
  std::vector<result> results(2);
  results[0].m.checked = results[1].m.checked = true;
  const auto row_of = [](const result& r) {
    auto row = sample_row();
    row.m = r.m;
    return row;
  };
  CHECK(cdpkit::harness::add_bench_rows(doc, results, row_of));
  CHECK(doc["rows"].size() == 2u);
  results[1].m.mismatches = 1;
  CHECK_FALSE(cdpkit::harness::add_bench_rows(doc, results, row_of));  // one failed check: false
  CHECK(doc["rows"].size() == 4u);
}

TEST_CASE("a bench document is written whole and read back, an empty path writes nothing, a bad path is an input_error") {
  const cdpkit_test::temp_dir dir;
  nlohmann::json doc = cdpkit::harness::bench_document({{"name", "test"}});
  doc["rows"].push_back(cdpkit::harness::bench_row_json(sample_row()));
  // (A document that has its floor keeps it: nothing is measured, no GPU is needed.)
  doc["timing_floor"] = cdpkit::harness::timing_floor_json(cdpkit::harness::timing_of({0.004, 0.005, 0.006}));
  const std::string path = (dir.path() / "bench.json").string();
  std::ostringstream out;
  cdpkit::harness::write_bench_document(doc, path, out);
  CHECK(out.str().find("rows written to " + path) != std::string::npos);
  std::ifstream in(path);
  CHECK(nlohmann::json::parse(in) == doc);
  std::ostringstream quiet;
  cdpkit::harness::write_bench_document(doc, "", quiet);
  CHECK(quiet.str().empty());
  const std::string bad = (dir.path() / "no" / "such" / "bench.json").string();
  CHECK_THROWS_WITH_AS(cdpkit::harness::write_bench_document(doc, bad, quiet), doctest::Contains(bad.c_str()),
                       cdpkit::input_error);
}

TEST_CASE("a bench document written without a timing floor gets one measured on the GPU" * CDPKIT_GPU_CASE) {
  const cdpkit_test::temp_dir dir;
  const nlohmann::json doc = cdpkit::harness::bench_document({{"name", "test"}});
  const std::string path = (dir.path() / "bench.json").string();
  std::ostringstream out;
  cdpkit::harness::write_bench_document(doc, path, out);
  std::ifstream in(path);
  const nlohmann::json back = nlohmann::json::parse(in);
  REQUIRE(back.contains("timing_floor"));
  const auto& floor = back["timing_floor"];
  CHECK(floor["reps"].get<int>() == 200);
  CHECK(floor["ms_median"].get<double>() > 0.0);
  CHECK(floor["ms_min"].get<double>() <= floor["ms_median"].get<double>());
  CHECK(floor["ms_mad"].get<double>() >= 0.0);
  CHECK_THROWS_AS((void)cdpkit::harness::timing_floor(0), cdpkit::input_error);
}

TEST_CASE("a text table aligns its columns, the first left and the others right, and refuses a short row") {
  cdpkit::harness::text_table t({"variant", "ms"});
  t.add_row({"serial_loop", "1.25"});
  t.add_row({"x", "10.50"});
  std::ostringstream out;
  t.print(out);
  CHECK(out.str() ==
        "variant         ms\n"
        "------------------\n"
        "serial_loop   1.25\n"
        "x            10.50\n");
  CHECK_THROWS_WITH_AS(t.add_row({"only one"}), "text_table: row has 1 cells, header has 2", cdpkit::input_error);
}

TEST_CASE("a ratio is base over time with two decimals, and '-' where either time is not positive") {
  CHECK(cdpkit::harness::ratio_text(2.0, 1.0) == "2.00x");
  CHECK(cdpkit::harness::ratio_text(1.0, 3.0) == "0.33x");
  CHECK(cdpkit::harness::ratio_text(0.0, 1.0) == "-");
  CHECK(cdpkit::harness::ratio_text(1.0, 0.0) == "-");
  CHECK(cdpkit::harness::ratio_text(std::nan(""), 1.0) == "-");
}

TEST_CASE("a real-valued option refuses nan, the infinities and values out of its bounds, naming the value") {
  const auto timeout = cdpkit::harness::finite_number(0.001, 1e7);
  CHECK(check_message(timeout, "2.5").empty());
  CHECK(check_message(timeout, "0.001").empty());
  CHECK(check_message(timeout, "1e7").empty());
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "0", "1e8", "-1", "", "2s", "1e999"}) {
    CAPTURE(bad);
    CHECK(check_message(timeout, bad) == "'" + std::string(bad) + "' is not a finite number in [0.001, 1e+07]");
  }
  const auto alpha = cdpkit::harness::finite_number(1.0, std::numeric_limits<double>::infinity(), /*lo_open=*/true);
  CHECK(check_message(alpha, "1.5").empty());
  CHECK(check_message(alpha, "1e300").empty());
  CHECK(check_message(alpha, "1") == "'1' is not a finite number > 1");
  CHECK(check_message(alpha, "nan") == "'nan' is not a finite number > 1");
  CHECK(check_message(alpha, "inf") == "'inf' is not a finite number > 1");
}

TEST_CASE("the launch options fill the launch configuration, refusals unrecorded unless asked") {
  const auto parsed = [](const std::string& command_line) {
    CLI::App app("t");
    cdpkit::launch_config config;
    cdpkit::harness::add_launch_options(app, config);
    app.parse(command_line);
    return config;
  };
  const cdpkit::launch_config plain = parsed("");
  CHECK_FALSE(plain.record_refusals);
  CHECK_FALSE(plain.serialize_warp_launches);
  CHECK(plain.pending_budget == 0);
  const cdpkit::launch_config asked = parsed("--record-refusals --pending-budget 64");
  CHECK(asked.record_refusals);
  CHECK(asked.pending_budget == 64);
}

TEST_CASE("an output file option refuses a missing folder, a directory, and a file that holds something else") {
  const cdpkit_test::temp_dir dir;
  const auto json = cdpkit::harness::output_file("a JSON document", '{');
  CHECK(check_message(json, "").empty());                                           // no output
  CHECK(check_message(json, (dir.path() / "new.json").string()).empty());           // a new file
  CHECK(check_message(json, dir.file("old.json", "  \n{\"a\": 1}")).empty());       // a profile again
  CHECK(check_message(json, dir.file("empty.json", "")).empty());                   // an empty file
  const std::string graph = dir.file("graph.mtx", "%%MatrixMarket matrix coordinate pattern general\n");
  CHECK(check_message(json, graph) == "'" + graph + "' exists and does not hold a JSON document: refusing to replace it");
  std::ifstream in(graph);
  std::string first;
  std::getline(in, first);
  CHECK(first == "%%MatrixMarket matrix coordinate pattern general");  // untouched
  const std::string missing = (dir.path() / "no" / "p.json").string();
  CHECK(check_message(json, missing) ==
        "'" + missing + "': the folder '" + (dir.path() / "no").string() + "' does not exist");
  const std::string folder = dir.path().string();
  CHECK(check_message(json, folder) == folder + ": exists and is a directory, not a regular file; nothing written");
  const auto dangling = dir.path() / "dangling.json";
  std::filesystem::create_symlink(dir.path() / "nowhere.json", dangling);  // what the writer refuses, refused now
  CHECK(check_message(json, dangling.string()) ==
        dangling.string() + ": a symbolic link to a file that does not exist; nothing written");
  const auto own = dir.path() / "own.json";
  std::filesystem::create_symlink(dir.path() / "old.json", own);  // the caller's link to a profile: fine
  CHECK(check_message(json, own.string()).empty());
  const auto svg = cdpkit::harness::output_file("an SVG picture", '<');
  CHECK(check_message(svg, dir.file("old.svg", "<?xml version=\"1.0\"?><svg/>")).empty());
  CHECK(check_message(svg, (dir.path() / "old.json").string()) ==
        "'" + (dir.path() / "old.json").string() + "' exists and does not hold an SVG picture: refusing to replace it");
  if (::geteuid() != 0) {  // (root reads and writes anywhere)
    const std::string secret = dir.file("secret.txt", "not for you");
    ::chmod(secret.c_str(), 0200);  // writable, not readable: what it holds cannot be checked
    CHECK(check_message(json, secret) == "'" + secret + "' exists and cannot be read: refusing to replace it");
    const auto locked = dir.path() / "locked";
    std::filesystem::create_directory(locked);
    ::chmod(locked.c_str(), 0500);
    CHECK(check_message(json, (locked / "p.json").string()) ==
          "'" + (locked / "p.json").string() + "': cannot write in the folder '" + locked.string() + "'");
    ::chmod(locked.c_str(), 0700);
  }
}

TEST_CASE("the tree programs' budget of 2048 follows a pending limit too small for it, unless a budget was given") {
  using cdpkit::harness::fit_pending_budget;
  cdpkit::launch_config config = cdpkit::harness::tree_launch_config();
  CHECK(config.pending_budget == 2048);
  fit_pending_budget(config, false);
  CHECK(config.pending_budget == 2048);  // no limit given: the budget stays
  config.pending_launch_limit = 1024;
  fit_pending_budget(config, false);
  CHECK(config.pending_budget == 512);  // safe_pending_fraction of the limit, not refused
  config = cdpkit::harness::tree_launch_config();
  config.pending_launch_limit = 1 << 20;
  fit_pending_budget(config, false);
  CHECK(config.pending_budget == 2048);  // a large limit keeps 2048, not half the limit
  config = cdpkit::harness::tree_launch_config();
  config.pending_launch_limit = 1024;
  config.pending_budget = 4096;
  fit_pending_budget(config, true);
  CHECK(config.pending_budget == 4096);  // given: left to check_launch_config, which refuses it
  // through the command line: the preset budget follows --pending-limit, a given one is refused
  CLI::App app("t");
  cdpkit::launch_config preset = cdpkit::harness::tree_launch_config();
  cdpkit::harness::add_launch_options(app, preset);
  CHECK_NOTHROW(app.parse(std::string("--pending-limit 1024")));
  CHECK(preset.pending_budget == 512);
  CLI::App given("t");
  cdpkit::launch_config asked = cdpkit::harness::tree_launch_config();
  cdpkit::harness::add_launch_options(given, asked);
  CHECK_THROWS_AS(given.parse(std::string("--pending-limit 1024 --pending-budget 2048")), CLI::ValidationError);
}

TEST_CASE("a default output path is checked as a given one is, with the option named") {
  const cdpkit_test::temp_dir dir;
  const std::string graph = dir.file("g.mtx", "%%MatrixMarket\n");
  CHECK_THROWS_WITH_AS(cdpkit::harness::check_output_file("--svg", graph, "an SVG picture", '<'),
                       ("--svg: '" + graph + "' exists and does not hold an SVG picture: refusing to replace it").c_str(),
                       cdpkit::input_error);
  CHECK_NOTHROW(cdpkit::harness::check_output_file("--svg", (dir.path() / "new.svg").string(), "an SVG picture", '<'));
}

TEST_CASE("a timing holds the timed runs' median, least and median absolute deviation") {
  const auto t = cdpkit::harness::timing_of({3.0, 1.0, 100.0, 2.0, 10.0});
  CHECK(t.reps == 5);
  CHECK(t.median_ms == 3.0);
  CHECK(t.min_ms == 1.0);
  CHECK(t.mad_ms == 2.0);  // deviations 0, 2, 97, 1, 7: one slow run does not move the spread
  CHECK(t.samples_ms.size() == 5u);
  CHECK(cdpkit::harness::timing_of({4.0}).mad_ms == 0.0);
  CHECK(cdpkit::harness::median_absolute_deviation({1.0, 2.0, 3.0, 4.0}) == 1.0);  // |.| 1.5 .5 .5 1.5
  CHECK_THROWS_AS(cdpkit::harness::timing_of({}), cdpkit::input_error);
}

TEST_CASE("the launch options refuse a budget without headroom below the limit as a command-line error") {
  CLI::App app("t");
  cdpkit::launch_config config;
  cdpkit::harness::add_launch_options(app, config);
  CHECK_THROWS_AS(app.parse(std::string("--pending-limit 1024 --pending-budget 1024")), CLI::ValidationError);
  CLI::App fine("t");
  cdpkit::harness::add_launch_options(fine, config);
  CHECK_NOTHROW(fine.parse(std::string("--pending-limit 1024 --pending-budget 512")));
  CHECK(config.pending_budget == 512);
}

TEST_CASE("a whole-number option refuses signs, empty text, leading zeros and values past its type, naming the text") {
  const auto u64 = cdpkit::harness::whole_number(std::numeric_limits<std::uint64_t>::max());
  CHECK(check_message(u64, "0").empty());
  CHECK(check_message(u64, "18446744073709551615").empty());
  CHECK(check_message(u64, "-1") ==
        "'-1' is not a whole number in [0, 18446744073709551615] (decimal, no leading zero)");
  CHECK(check_message(u64, "18446744073709551616") ==
        "'18446744073709551616' is not a whole number in [0, 18446744073709551615] (decimal, no leading zero)");
  CHECK_FALSE(check_message(u64, "010").empty());  // CLI11 would read it as octal 8
  CHECK_FALSE(check_message(u64, "").empty());
  CHECK_FALSE(check_message(u64, "+5").empty());
  CHECK_FALSE(check_message(u64, "1e3").empty());
  const auto u32 = cdpkit::harness::whole_number(std::numeric_limits<std::uint32_t>::max());
  CHECK(check_message(u32, "4294967295").empty());
  CHECK_FALSE(check_message(u32, "4294967296").empty());
}

TEST_CASE("a size option takes N or 2^K and hands 2^K on as its value, within the option's bounds") {
  const auto parsed = [](const std::string& command_line) {
    CLI::App app("t");
    std::uint64_t n = 0;
    app.add_option("--n", n)->transform(cdpkit::harness::size_number(std::uint64_t{1} << 32));
    app.parse(command_line);
    return n;
  };
  CHECK(parsed("--n 2^24") == 16777216u);
  CHECK(parsed("--n 1000") == 1000u);
  CHECK(parsed("--n 2^0") == 1u);
  CHECK(parsed("--n 2^32") == 4294967296u);
  CHECK_THROWS_AS(parsed("--n 2^33"), CLI::ValidationError);  // past the bound
  CHECK_THROWS_AS(parsed("--n 2^64"), CLI::ValidationError);
  CHECK_THROWS_AS(parsed("--n 2^x"), CLI::ValidationError);
  CHECK_THROWS_AS(parsed("--n -1"), CLI::ValidationError);
  CHECK_THROWS_AS(parsed("--n 1e6"), CLI::ValidationError);
  CHECK(parsed("--n 010") == 10u);  // decimal, never CLI11's octal
}

TEST_CASE("the stopping rule makes exactly --reps runs when off, and more while the spread is above max_noise") {
  using cdpkit::harness::keep_timing;
  using cdpkit::harness::stopping_rule;
  std::string stop;
  const std::vector<double> noisy{10.0, 12.0, 8.0, 11.0, 9.0};  // median 10, MAD 1: 10%
  CHECK(keep_timing({10.0, 10.0}, 3, stopping_rule{}, 0.0, stop));  // fewer than reps: go on
  CHECK_FALSE(keep_timing(noisy, 5, stopping_rule{}, 0.0, stop));   // rule off: reps decide
  CHECK(stop == "reps");
  const stopping_rule rule{0.05, 2.0, 8};
  CHECK(keep_timing(noisy, 5, rule, 0.5, stop));  // 10% > 5%, budget left, 5 < 8 runs
  CHECK_FALSE(keep_timing(noisy, 5, rule, 2.0, stop));
  CHECK(stop == "budget");
  CHECK_FALSE(keep_timing({10.0, 10.1, 9.9, 10.0, 10.0}, 5, rule, 0.5, stop));  // MAD 0: 0%
  CHECK(stop == "noise");
  std::vector<double> eight = noisy;
  eight.insert(eight.end(), {12.0, 8.0, 12.0});
  CHECK_FALSE(keep_timing(eight, 5, rule, 0.5, stop));
  CHECK(stop == "max_reps");
}

TEST_CASE("the timing options set the stopping rule and refuse a negative or non-finite noise, naming the value") {
  struct restore_rule {  // the rule is process-wide: the other cases time under the default again
    ~restore_rule() { cdpkit::harness::set_stopping_rule({}); }
  } restore;
  int reps = 5;
  CLI::App app{"timing"};
  cdpkit::harness::add_timing_options(app, reps, 100);
  CHECK(cdpkit::harness::current_stopping_rule().max_noise == doctest::Approx(0.01));  // the defaults at once
  CHECK(cdpkit::harness::current_stopping_rule().budget_s == doctest::Approx(1.0));
  app.parse(std::string("--reps 3 --max-noise 2.5 --time-budget 0.5"));
  CHECK(reps == 3);
  CHECK(cdpkit::harness::current_stopping_rule().max_noise == doctest::Approx(0.025));
  CHECK(cdpkit::harness::current_stopping_rule().budget_s == doctest::Approx(0.5));
  for (const char* bad : {"-1", "nan", "inf", "101"}) {
    CAPTURE(bad);
    CLI::App again{"timing"};
    cdpkit::harness::add_timing_options(again, reps, 100);
    try {
      again.parse(std::string("--max-noise ") + bad);
      FAIL("accepted --max-noise " << bad);
    } catch (const CLI::ParseError& e) {
      CHECK_CONTAINS(std::string(e.what()), bad);
    }
  }
  CHECK_THROWS_AS(cdpkit::harness::set_stopping_rule({0.01, 0.0, 10}), cdpkit::input_error);  // noise, no budget
}
