// Reading a profile, and refusing one with a located error: a valid profile's runs, sites and
// records; malformed, truncated and wrong-version profiles naming the file and the field; numbers
// out of range, nesting past the cap, every truncation and garbage text (inputs that used to crash
// the reader: 1e999, 200,000-deep nesting); syntax errors located once; a path that is not valid
// UTF-8; run times; and the pictures a profile carries.

#include <doctest/doctest.h>

#include "profiles.hpp"
#include "report_checks.hpp"

#include <cdpkit/report/html.hpp>
#include <cdpkit/report/profile.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <random>
#include <string>
#include <utility>

using namespace cdpkit_test;

TEST_CASE("a valid profile is read into its runs sites and records") {
  const auto p = rep::parse_profile(valid_profile().dump(), "p.json");
  REQUIRE(p.runs.size() == 2);
  CHECK(p.device.sms == 132u);
  CHECK_FALSE(p.runs[0].trace.has_value());
  REQUIRE(p.runs[1].trace.has_value());
  const auto& t = *p.runs[1].trace;
  CHECK(t.sites.size() == 2);
  CHECK(t.site(16)->launched == 100u);
  CHECK(t.site(16)->failed_by_error[0].code == 69);
  CHECK(t.records.size() == 3);
  CHECK(t.records[0].parent == cdpkit::no_record);  // no parent: launched from the host grid
  CHECK(t.records[2].parent == 1u);
}

TEST_CASE("malformed truncated and wrong-version profiles name the file and the field") {
  CHECK(parse_error(json::array()) == "p.json: /: expected a JSON object");
  auto doc = valid_profile();
  doc["schema"] = "not-a-profile/1";
  CHECK(parse_error(doc) == std::string("p.json: /schema: unsupported schema 'not-a-profile/1' (this tool reads ") +
                                cdpkit::schema::profile_schema + ")");
  doc = valid_profile();
  doc["runs"][1].erase("ms");
  CHECK(parse_error(doc) == "p.json: /runs/1/ms: missing");
  doc = valid_profile();
  doc["runs"][1]["trace"]["sites"][0]["threads_log2"] = json::array({1, 2});
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/sites/0/threads_log2: expected an array of 33 numbers");
  doc = valid_profile();
  doc["runs"][1]["trace"]["records"]["rows"][2][3] = "x";
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/records/rows/2/3: expected a non-negative integer");
  doc = valid_profile();
  doc["device"]["sms"] = -1;
  CHECK(parse_error(doc) == "p.json: /device/sms: expected a non-negative integer");
  const std::string text = valid_profile().dump();
  try {
    (void)rep::parse_profile(text.substr(0, text.size() / 2), "cut.json");
    FAIL("a truncated profile was accepted");
  } catch (const rep::format_error& e) {
    CHECK(std::string(e.what()).rfind("cut.json: not valid JSON", 0) == 0);
  }
  CHECK_THROWS_WITH_AS(rep::load_profile("/no/such/profile.json"), "/no/such/profile.json: cannot open",
                       rep::format_error);
}

TEST_CASE("a number out of double range is a located format error, not an abort") {
  std::string text = valid_profile().dump();
  const std::string ms = "\"ms\":40.0";
  const auto at = text.find(ms);
  REQUIRE(at != std::string::npos);
  text.replace(at, ms.size(), "\"ms\":1e999");
  const std::string offset = std::to_string(at + 5);  // the number itself, after "ms":
  CAPTURE(text.substr(at, 20));
  const std::string error = text_error(text);
  CHECK(error.rfind("p.json: not valid JSON at byte " + offset + " (line 1, column ", 0) == 0);
  CHECK(contains(error, "number overflow parsing '1e999'"));
  for (const char* huge : {"-1e999", "1e400", "123456789e999999999999", "1E+999"}) {
    CAPTURE(huge);
    std::string t = valid_profile().dump();
    t.replace(t.find(ms), ms.size(), std::string("\"ms\":") + huge);
    CHECK(contains(text_error(t), "p.json: not valid JSON at byte " + offset));
  }
  // the largest finite double is still a number
  auto doc = valid_profile();
  doc["runs"][1]["ms"] = 1.7976931348623157e308;
  CHECK(rep::parse_profile(doc.dump(), "p.json").runs[1].ms == doctest::Approx(1.7976931348623157e308));
  // in free-form params too, on another line: the line and column are counted
  std::string lines = valid_profile().dump(1);
  const auto params = lines.find("\"params\": {");
  REQUIRE(params != std::string::npos);
  lines.insert(params + 11, "\"x\": 1e999,");
  const auto line = 1 + static_cast<std::size_t>(std::count(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(params), '\n'));
  CHECK(contains(text_error(lines), "(line " + std::to_string(line) + ", column "));
}

TEST_CASE("a profile nested 200,000 levels deep is refused before any value is built") {
  const std::size_t levels = 200000;
  auto deep = [&](const std::string& open, const std::string& close) {
    std::string nested;
    nested.reserve(levels * (open.size() + close.size()));
    for (std::size_t k = 0; k < levels; ++k) nested += open;
    for (std::size_t k = 0; k < levels; ++k) nested += close;
    return nested;
  };
  const std::string text = valid_profile().dump();
  const std::string marker = "\"params\":{}";
  const auto at = text.find(marker);
  REQUIRE(at != std::string::npos);
  const auto start = std::chrono::steady_clock::now();
  for (const auto& [open, close] : {std::pair<std::string, std::string>{"[", "]"}, {"{\"a\":", "}"}}) {
    std::string doc = text;
    doc.replace(at, marker.size(), "\"params\":" + deep(open, close));
    CHECK(doc.size() > 400000u);
    const std::string error = text_error(doc);
    CAPTURE(error);
    // params opens level 4 (document, runs, run, params): its 62nd bracket opens level 65
    CHECK(error.rfind("p.json: byte ", 0) == 0);
    CHECK(contains(error, ": arrays and objects nested deeper than 64 levels"));
    const auto byte = std::stoull(error.substr(13));
    CHECK(byte == at + 9 + 61 * open.size());
  }
  // a whole document of brackets, and unbalanced ones
  CHECK(contains(text_error(deep("[", "]")), "nested deeper than 64 levels"));
  CHECK(contains(text_error(std::string(levels, '[')), "nested deeper than 64 levels"));
  CHECK(contains(text_error(std::string(levels, ']')), "p.json: not valid JSON at byte 0"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 5.0);
}

TEST_CASE("nesting up to the cap is read and brackets inside strings do not count") {
  std::string ok, too_deep;
  for (int k = 0; k < rep::max_nesting_depth; ++k) ok += "[";
  for (int k = 0; k < rep::max_nesting_depth; ++k) ok += "]";
  CHECK(text_error(ok) == "p.json: /: expected a JSON object");  // parsed; only the schema fails
  too_deep = "[" + ok + "]";
  CHECK(text_error(too_deep) == "p.json: byte 64 (line 1, column 65): arrays and objects nested deeper than 64 levels");
  auto doc = valid_profile();
  json params = json::object();
  json* inner = &params;
  for (int k = 4; k < rep::max_nesting_depth; ++k) inner = &((*inner)["x"] = json::object());  // depth 64 exactly
  (*inner)["brackets"] = std::string(100000, '[') + "\\\"{{{" + std::string(100000, '{');
  doc["runs"][1]["params"] = params;
  const auto p = rep::parse_profile(doc.dump(), "p.json");
  CHECK(p.runs[1].params.is_object());
  CHECK(p.runs[1].params.contains("x"));
  doc["runs"][1]["params"] = json::object({{"x", params}});  // one level more
  CHECK(contains(parse_error(doc), "nested deeper than 64 levels"));
}

TEST_CASE("every truncation of a profile and garbage text are located format errors") {
  const std::string text = valid_profile().dump();
  std::size_t accepted = 0;
  for (std::size_t n = 0; n < text.size(); ++n) {
    const std::string error = text_error(text.substr(0, n), "cut.json");
    CAPTURE(n);
    CHECK(error.rfind("cut.json: not valid JSON at byte ", 0) == 0);
    accepted += error == "no error";
  }
  CHECK(accepted == 0u);
  CHECK(text_error(text) == "no error");
  for (const std::string& garbage :
       {std::string(), std::string("\0\0\0", 3), std::string("\xff\xfe{}"), std::string("{\"schema\": \"\xc3\x28\"}"),
        std::string("nul"), std::string("{\"a\":}"), std::string("{\"a\" 1}"), std::string("[1,]"),
        std::string("\"\\uD800\""), std::string("{}{}"), std::string("--1"), std::string("1.e5"),
        std::string("{\"a\":\"\x01\"}"), std::string("\xef\xbb\xbf")}) {
    CAPTURE(garbage);
    const std::string error = text_error(garbage, "g.json");
    CHECK(error.rfind("g.json: ", 0) == 0);
    CHECK(error != "no error");
  }
  // a deterministic shower of random bytes and random JSON punctuation
  std::mt19937_64 rng(12345);
  const std::string alphabet = "{}[]\":,0123456789.eE+-tfnul \\\n\x80\xff";
  for (int k = 0; k < 2000; ++k) {
    std::string junk(rng() % 64, ' ');
    for (auto& ch : junk) ch = k % 2 ? static_cast<char>(rng()) : alphabet[rng() % alphabet.size()];
    CAPTURE(junk);
    CHECK(text_error(junk, "r.json").rfind("r.json: ", 0) == 0);
  }
}

TEST_CASE("integers that do not fit their field are refused with the field's pointer") {
  auto doc = valid_profile();
  doc["runs"][1]["trace"]["records"]["rows"][0][0] = 4294967296ull;
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/records/rows/0/0: expected a non-negative integer up to 4294967295");
  doc = valid_profile();
  doc["runs"][1]["trace"]["records"]["rows"][0][10] = 1ll << 40;
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/records/rows/0/10: integer out of range");
  doc = valid_profile();
  doc["runs"][1]["trace"]["sites"][0]["id"] = 1ull << 31;
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/sites/0/id: expected a non-negative integer up to 2147483647");
  doc = valid_profile();
  doc["device"]["driver"] = 18446744073709551615ull;
  CHECK(parse_error(doc) == "p.json: /device/driver: integer out of range");
  doc = valid_profile();
  doc["runs"][1]["trace"]["sites"][0]["failed_by_error"][0]["code"] = -(1ll << 40);
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/sites/0/failed_by_error/0/code: integer out of range");
  doc = valid_profile();
  doc["runs"][1]["trace"]["sites"][0]["work_log2"][3] = 1.5;
  CHECK(parse_error(doc) == "p.json: /runs/1/trace/sites/0/work_log2/3: expected a non-negative integer");
}

TEST_CASE("a profile path that is not valid UTF-8 still renders both outputs") {
  const std::string name = "run\xff\xfe.json";
  const auto p = rep::parse_profile(valid_profile(3).dump(), name);
  CHECK(p.path == "run\xef\xbf\xbd\xef\xbf\xbd.json");  // U+FFFD for each bad byte
  CHECK(contains(rep::render_html({p}), "run\xef\xbf\xbd\xef\xbf\xbd.json"));
  const auto trace = json::parse(rep::render_chrome_trace({p}));
  CHECK(trace["traceEvents"].size() > 3u);
}

TEST_CASE("a JSON syntax error is located once, at the byte where the parser stopped") {
  // a second value after the document: the offending '{' is byte 8, column 9
  CHECK(text_error(R"({"a":1} {"b":2})", "t7.json") ==
        "t7.json: not valid JSON at byte 8 (line 1, column 9): syntax error while parsing value - unexpected '{'; "
        "expected end of input");
  // a broken literal on line 3: the '}' that ends it is byte 20, column 10
  const std::string literal = text_error("{\n \"y\": 1,\n \"x\": tru}", "t8.json");
  CHECK(literal.rfind("t8.json: not valid JSON at byte 20 (line 3, column 10): syntax error while parsing value - "
                      "invalid literal",
                      0) == 0);
  CHECK(text_error("[1,\n  ]") ==
        "p.json: not valid JSON at byte 6 (line 2, column 3): syntax error while parsing value - unexpected ']'; "
        "expected '[', '{', or a literal");
  CHECK(text_error("{\"a\" 1}") ==
        "p.json: not valid JSON at byte 5 (line 1, column 6): syntax error while parsing object separator - "
        "unexpected number literal; expected ':'");
  CHECK(text_error("{\"a\":") ==
        "p.json: not valid JSON at byte 5 (line 1, column 6): syntax error while parsing value - unexpected "
        "end of input; expected '[', '{', or a literal");
  // one position in every message: never nlohmann's own line and column beside ours
  const std::string text = valid_profile().dump(1);
  for (std::size_t n = 0; n < text.size(); n += 7) {
    const std::string error = text_error(text.substr(0, n) + "]", "cut.json");  // never valid: the document is an object
    CAPTURE(error);
    CHECK(error.rfind("cut.json: not valid JSON at byte ", 0) == 0);
    CHECK_FALSE(contains(error, "parse error at"));
  }
}

TEST_CASE("a run's time is a non-negative number and a rate over no time is shown as a dash") {
  auto doc = valid_profile();
  doc["runs"][1]["ms"] = -5;
  CHECK(parse_error(doc) == "p.json: /runs/1/ms: expected a non-negative number");
  doc["runs"][1]["ms"] = -0.001;
  CHECK(parse_error(doc) == "p.json: /runs/1/ms: expected a non-negative number");
  doc["runs"][1]["ms"] = "5";
  CHECK(parse_error(doc) == "p.json: /runs/1/ms: expected a number");
  // 0 (no time) and the smallest subnormal are times; the throughput over them is '-', not 0 or inf
  for (const double ms : {0.0, 5e-324}) {
    CAPTURE(ms);
    doc = valid_profile();
    doc["runs"][0]["ms"] = ms;
    const auto p = rep::parse_profile(doc.dump(), "p.json");
    CHECK(p.runs[0].ms == ms);
    const std::string html = rep::render_html({p});
    const std::string summary = section_of(html, "summary");
    CHECK(contains(summary, ">0.000</td><td>-</td>"));  // run 0's time, then its throughput
    CHECK_FALSE(contains(summary, "inf"));
    CHECK_FALSE(contains(html, "infx"));  // the fastest-variant finding names no ratio over it either
    // compared with a profile whose first time is that one: no "+inf%" change
    auto later = valid_profile();
    const std::string compared = rep::render_html({p, rep::parse_profile(later.dump(), "q.json")});
    CHECK_FALSE(contains(compared, "inf%"));
    CHECK_FALSE(contains(summary, "0.00 Gedges/s"));
    CHECK(contains(summary, "0.03 Gedges/s"));  // the other run: 1e6 edges in 40 ms
  }
}

TEST_CASE("a profile's pictures round-trip, and a picture that is not an SVG document is refused where it is") {
  auto p = collected_profile();
  p.pictures.push_back({"bezier random:64", "<svg xmlns=\"http://www.w3.org/2000/svg\"><circle r=\"1\"/></svg>"});
  const json doc = schema::profile_json(p);
  const schema::profile back = schema::parse_profile(doc.dump(), "p.json");
  REQUIRE(back.pictures.size() == 1u);
  CHECK(back.pictures[0].title == "bezier random:64");
  CHECK(back.pictures[0].svg == p.pictures[0].svg);
  json d = doc;  // written before pictures existed: none
  d.erase("pictures");
  CHECK(schema::parse_profile(d.dump(), "p.json").pictures.empty());
  d = doc;
  d["pictures"][0]["svg"] = "<html><script>alert(1)</script></html>";
  CHECK(parse_error(d) == "p.json: /pictures/0/svg: not an SVG document (expected '<svg' or '<?xml' first)");
  d = doc;
  d["pictures"][0]["svg"] = std::string(schema::max_picture_bytes + 1, ' ');
  CHECK(contains(parse_error(d), "p.json: /pictures/0/svg: an SVG of 8388609 bytes, more than a picture may have"));
  d = doc;
  d["pictures"][0].erase("title");
  CHECK(parse_error(d) == "p.json: /pictures/0/title: missing");
  d = doc;
  d["pictures"] = "picture";
  CHECK(contains(parse_error(d), "p.json: /pictures: "));
  d = doc;
  d["pictures"][0] = 3;
  CHECK(parse_error(d) == "p.json: /pictures/0: expected an object with a title and an svg");
  CHECK_THROWS_AS((void)schema::picture_json({"t", "not svg"}), schema::format_error);
}
