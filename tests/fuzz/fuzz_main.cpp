// cdpkit_fuzz — a bounded, deterministic mutation fuzzer for the parsers of untrusted text,
// built with AddressSanitizer and UndefinedBehaviorSanitizer (no libFuzzer: g++ has none).
//
//   cdpkit_fuzz --target profile [--iterations 4000] [--seed 1] [--corpus DIR] [--out DIR]
//   cdpkit_fuzz --target edge_list --replay FILE...        (run saved inputs once each)
//
// One pass:
// 1. The regression inputs, generated in code (targets.cpp) and the files under
//    <corpus>/<target>/ (committed seeds and regress_* files), each run once, unmutated.
// 2. --iterations mutants: a seed from the pool (the seeds, plus mutants the target accepted,
//    which pushes the search past the syntax into validation and rendering), one to four
//    stacked mutations (mutator.hpp). Same seed, same inputs, same order.
// 3. Outcomes: accepted, or refused with cdpkit::input_error / report::format_error (expected).
//    Anything else is a failure: another exception, a failed check, a sanitizer report, a crash,
//    or an input running longer than --timeout seconds. A failure prints the input C-escaped
//    and writes it whole to <out>/fuzz-<target>-failure.bin; the exit code is then 1.

#include "mutator.hpp"
#include "targets.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/report/profile.hpp>

#include <fcntl.h>
#include <csignal>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

extern "C" void __sanitizer_set_death_callback(void (*callback)(void));

namespace {

using cdpkit::fuzz::named_input;
using cdpkit::fuzz::target;

// --- failure reporting (async-signal-safe: used from the sanitizer's death callback and from
//     the SIGALRM handler, so only write(2) and fixed buffers) ---------------------------------

struct current_run {
  const char* target = "";
  const char* label = "";
  const std::string* input = nullptr;
  char failure_path[4096] = {};
} current;

void put(const char* s, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}
void put(const char* s) { put(s, std::strlen(s)); }
void put_number(std::size_t v) {
  char buf[24];
  int k = 23;
  buf[k] = '\0';
  do {
    buf[--k] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && k > 0);
  put(buf + k);
}

/// The input as a C string literal body: printable ASCII as is, the rest \n \r \t \\ \" \xNN.
void put_escaped(const std::string& s, std::size_t cap) {
  static const char hex[] = "0123456789abcdef";
  char buf[256];
  std::size_t n = 0;
  const auto flush = [&] {
    put(buf, n);
    n = 0;
  };
  for (std::size_t k = 0; k < s.size() && k < cap; ++k) {
    if (n + 4 > sizeof buf) flush();
    const auto c = static_cast<unsigned char>(s[k]);
    if (c == '\n') buf[n++] = '\\', buf[n++] = 'n';
    else if (c == '\r') buf[n++] = '\\', buf[n++] = 'r';
    else if (c == '\t') buf[n++] = '\\', buf[n++] = 't';
    else if (c == '\\' || c == '"') buf[n++] = '\\', buf[n++] = static_cast<char>(c);
    else if (c >= 0x20 && c < 0x7f) buf[n++] = static_cast<char>(c);
    else buf[n++] = '\\', buf[n++] = 'x', buf[n++] = hex[c >> 4], buf[n++] = hex[c & 15];
  }
  flush();
}

void report_failure(const char* why) {
  put("\ncdpkit_fuzz: FAILURE in target ");
  put(current.target);
  put(" on ");
  put(current.label);
  put(": ");
  put(why);
  put("\n");
  if (current.input == nullptr) return;
  const std::string& in = *current.input;
  put("input (");
  put_number(in.size());
  put(" bytes");
  if (in.size() > 4096) put(", the first 4096 shown");
  put("), C-escaped:\n\"");
  put_escaped(in, 4096);
  put("\"\n");
  const int fd = ::open(current.failure_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    std::size_t done = 0;
    while (done < in.size()) {
      const ssize_t w = ::write(fd, in.data() + done, in.size() - done);
      if (w <= 0) break;
      done += static_cast<std::size_t>(w);
    }
    ::close(fd);
    put("the input is saved in ");
    put(current.failure_path);
    put("\nreplay: cdpkit_fuzz --target ");
    put(current.target);
    put(" --replay ");
    put(current.failure_path);
    put("\n");
  }
}

void on_sanitizer_death() { report_failure("sanitizer report (above)"); }

void on_alarm(int) {
  report_failure("timeout: the input ran longer than the per-input limit");
  ::_exit(1);
}

// --- running one input ------------------------------------------------------------------------

enum class outcome { accepted, refused };

struct stats {
  std::size_t runs = 0, accepted = 0, refused = 0;
};

outcome run_one(const target& t, const std::string& input, const std::string& label, unsigned timeout_s,
                stats& s) {
  current.label = label.c_str();
  current.input = &input;
  ++s.runs;
  ::alarm(timeout_s);
  outcome result = outcome::refused;
  try {
    t.run(input);
    result = outcome::accepted;
  } catch (const cdpkit::input_error&) {
  } catch (const cdpkit::report::format_error&) {
  } catch (const std::exception& e) {
    ::alarm(0);
    const std::string why = std::string("unexpected exception: ") + e.what();
    report_failure(why.c_str());
    std::_Exit(1);  // no leak check: the failure is the report
  } catch (...) {
    ::alarm(0);
    report_failure("unexpected exception of unknown type");
    std::_Exit(1);
  }
  ::alarm(0);
  (result == outcome::accepted ? s.accepted : s.refused)++;
  current.input = nullptr;
  return result;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Files under <corpus>/<target>/, regress_* first, each group in name order.
std::vector<named_input> corpus_files(const std::string& corpus, const std::string& target_name) {
  std::vector<std::filesystem::path> paths;
  const auto dir = std::filesystem::path(corpus) / target_name;
  std::error_code ec;
  if (!corpus.empty() && std::filesystem::is_directory(dir, ec))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.is_regular_file()) paths.push_back(e.path());
  std::sort(paths.begin(), paths.end(), [](const auto& a, const auto& b) {
    const bool ra = a.filename().string().rfind("regress_", 0) == 0;
    const bool rb = b.filename().string().rfind("regress_", 0) == 0;
    return ra != rb ? ra : a.filename() < b.filename();
  });
  std::vector<named_input> out;
  for (const auto& p : paths) out.push_back({"corpus file " + p.filename().string(), read_file(p)});
  return out;
}

int usage(const char* why) {
  std::cerr << "cdpkit_fuzz: " << why << "\n"
            << "usage: cdpkit_fuzz --target NAME [--iterations N] [--seed S] [--corpus DIR] [--out DIR]\n"
               "                   [--timeout SECONDS] [--replay FILE...]\n"
               "targets:";
  for (const auto& t : cdpkit::fuzz::targets()) std::cerr << " " << t.name;
  std::cerr << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string target_name, corpus, out_dir = ".";
  std::uint64_t iterations = 4000, seed = 1;
  unsigned timeout_s = 30;
  std::vector<std::string> replay;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    const auto value = [&]() -> std::string {
      if (k + 1 >= argc) {
        std::exit(usage(("missing value after " + arg).c_str()));
      }
      return argv[++k];
    };
    try {
      if (arg == "--target") target_name = value();
      else if (arg == "--iterations") iterations = std::stoull(value());
      else if (arg == "--seed") seed = std::stoull(value(), nullptr, 0);
      else if (arg == "--corpus") corpus = value();
      else if (arg == "--out") out_dir = value();
      else if (arg == "--timeout") timeout_s = static_cast<unsigned>(std::stoul(value()));
      else if (arg == "--replay") while (k + 1 < argc) replay.push_back(argv[++k]);
      else return usage(("unknown argument " + arg).c_str());
    } catch (const std::exception&) {
      return usage(("bad number after " + arg).c_str());
    }
  }
  const target* t = nullptr;
  for (const auto& candidate : cdpkit::fuzz::targets())
    if (target_name == candidate.name) t = &candidate;
  if (t == nullptr) return usage(target_name.empty() ? "--target is required" : "unknown target");

  current.target = t->name;
  const std::string failure_path = (std::filesystem::path(out_dir) / ("fuzz-" + target_name + "-failure.bin")).string();
  std::snprintf(current.failure_path, sizeof current.failure_path, "%s", failure_path.c_str());
  __sanitizer_set_death_callback(on_sanitizer_death);
  std::signal(SIGALRM, on_alarm);

  stats s;
  const auto start = std::chrono::steady_clock::now();
  if (!replay.empty()) {
    for (const auto& path : replay) {
      const std::string text = read_file(path);
      const auto result = run_one(*t, text, "replay " + path, timeout_s, s);
      std::cout << path << ": " << (result == outcome::accepted ? "accepted" : "refused (expected error)") << "\n";
    }
    return 0;
  }

  // 1. regressions and corpus files, unmutated, every time
  std::vector<named_input> fixed = t->regressions();
  for (auto& f : fixed) f.name = "regression: " + f.name;
  for (auto& f : corpus_files(corpus, target_name)) fixed.push_back(std::move(f));
  std::vector<std::string> pool;
  for (const auto& f : fixed) {
    if (run_one(*t, f.text, f.name, timeout_s, s) == outcome::accepted && f.text.size() <= t->max_len)
      pool.push_back(f.text);
  }
  for (const auto& f : t->seeds()) {
    run_one(*t, f.text, "seed: " + f.name, timeout_s, s);
    pool.push_back(f.text);
  }
  const std::size_t fixed_runs = s.runs;

  // 2. mutants: the seed is mixed with the target's name so that targets draw different inputs
  std::uint64_t mixed = seed;
  for (const char* c = t->name; *c != '\0'; ++c) mixed = mixed * 1099511628211ull ^ static_cast<unsigned char>(*c);
  cdpkit::fuzz::mutator m(mixed, t->max_len);
  constexpr std::size_t pool_limit = 256;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const std::string& base = pool[m.random().below(pool.size())];
    const std::string& other = pool[m.random().below(pool.size())];
    const std::string mutant = m.mutate(base, other);
    const std::string label = "mutant " + std::to_string(i) + " (seed " + std::to_string(seed) + ")";
    if (run_one(*t, mutant, label, timeout_s, s) == outcome::accepted && pool.size() < pool_limit && mutant != base)
      pool.push_back(mutant);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "cdpkit_fuzz " << t->name << ": " << s.runs << " inputs (" << fixed_runs << " regressions, corpus and seeds, "
            << iterations << " mutants of seed " << seed << "): " << s.accepted << " accepted, " << s.refused
            << " refused with the expected error, 0 failures, pool " << pool.size() << ", " << seconds << " s\n";
  return 0;
}
