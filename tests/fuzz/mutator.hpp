#pragma once
// tests/fuzz/mutator.hpp — the deterministic byte mutator of the fuzz pass.
//
// 1. A fixed PRNG (splitmix64) and our own bounded draws: the same seed gives the same inputs on
//    every machine and standard library (std::uniform_int_distribution does not promise that).
// 2. Mutations are the ones that find parser bugs: bit flips, byte sets, inserts, deletes,
//    splices of tokens that parsers get wrong (huge numbers, 1e999, brackets, quotes, newlines,
//    headers), number-for-number replacements (which keep the text well formed, so the
//    validation and rendering behind the syntax get exercised too), duplicated chunks and
//    lines, truncation and crossover with another input.
// 3. Each mutant gets one to four stacked mutations and is capped in length, so a pass stays
//    fast under the sanitizers.

#include <cdpkit/schema/profile.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cdpkit::fuzz {

/// splitmix64: tiny, fast and fully specified.
class rng {
 public:
  explicit rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform enough in [0, n) for n > 0 (the modulo bias is irrelevant here).
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  bool chance(unsigned percent) { return below(100) < percent; }

 private:
  std::uint64_t state_;
};

/// `text` in JSON quotes.
inline std::string quoted(const std::string& text) { return "\"" + text + "\""; }

/// The profile's schema, and the first version of its format (refused as no longer read).
inline std::string first_profile_schema() {
  const std::string current = cdpkit::schema::profile_schema;
  return current.substr(0, current.rfind('/') + 1) + "1";
}

/// Tokens that parsers of numbers, JSON and line formats tend to get wrong.
inline const std::vector<std::string>& dictionary() {
  static const std::vector<std::string> tokens = {
      // numbers at and past every limit the parsers have
      "0", "1", "-1", "-0", "00", "2", "31", "32", "33", "64", "65", "255", "256", "65535", "65536",
      "2147483647", "2147483648", "-2147483649", "4294967294", "4294967295", "4294967296", "4000000000",
      "999999999", "1000000000000", "281474976710655", "281474976710656", "9223372036854775807",
      "9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
      "99999999999999999999999999999999", "1e999", "-1e999", "1e-999", "1e308", "1.7976931348623157e308",
      "4.9e-324", "1.5", "0.5", "1e3", "1E+2", "-0.0", "NaN", "Infinity", "0x10", "+1", ".5", "1.", "1e",
      // JSON structure and strings
      "[", "]", "{", "}", "[[[[[[[[", "]]]]", "{\"a\":", "\"", "\\", "\\\"", "\\u0000", "\\uD800", "\\uDC00",
      "\\uFFFF", "\\x", ",", ":", ",,", "null", "true", "false", "[]", "{}", "\"\"", "\"schema\"",
      quoted(cdpkit::schema::profile_schema), quoted(first_profile_schema()), "\"runs\"", "\"trace\"", "\"records\"", "\"rows\"", "\"sites\"",
      "\"params\"", "\"depth_hist\"", "\"threads_log2\"",
      // line formats
      "\n", "\r\n", "\r", "\n\n\n", " ", "\t", "  \t ", "%", "%%", "#", "% comment\n", "# comment\n",
      "%%MatrixMarket matrix coordinate pattern general\n", "%%MatrixMarket matrix coordinate real symmetric\n",
      "%%MatrixMarket matrix array real general\n", "%%matrixmarket MATRIX COORDINATE INTEGER SYMMETRIC\n",
      "1 1\n", "0 0\n", "1 2 3\n",
      // bytes that are not text
      std::string(1, '\0'), "\xff", "\xfe\xff", "\xc3", "\xc3\x28", "\xe2\x82", "\xf0\x9f\x98", "\xef\xbb\xbf",
      "\x7f", "\x01",
  };
  return tokens;
}

class mutator {
 public:
  mutator(std::uint64_t seed, std::size_t max_len) : rng_(seed), max_len_(max_len) {}

  rng& random() { return rng_; }

  /// A mutant of `input`; `other` is a second input for crossover.
  std::string mutate(const std::string& input, const std::string& other) {
    std::string s = input;
    const std::size_t rounds = 1 + rng_.below(4);
    for (std::size_t r = 0; r < rounds; ++r) apply(s, other);
    if (s.size() > max_len_) s.resize(max_len_);
    return s;
  }

 private:
  std::size_t pos(const std::string& s) { return rng_.below(s.size() + 1); }
  const std::string& token() { return dictionary()[rng_.below(dictionary().size())]; }

  /// [begin, end) of a run of number characters around a random digit, or begin == end.
  std::pair<std::size_t, std::size_t> number_at(const std::string& s) {
    if (s.empty()) return {0, 0};
    const auto is_num = [](char c) { return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'; };
    std::size_t start = rng_.below(s.size());
    for (std::size_t k = 0; k < s.size(); ++k) {  // the first digit at or after a random place
      const std::size_t i = (start + k) % s.size();
      if (s[i] >= '0' && s[i] <= '9') {
        std::size_t b = i, e = i;
        while (b > 0 && is_num(s[b - 1])) --b;
        while (e < s.size() && is_num(s[e])) ++e;
        return {b, e};
      }
    }
    return {0, 0};
  }

  void apply(std::string& s, const std::string& other) {
    switch (rng_.below(12)) {
      case 0:  // flip one bit
        if (!s.empty()) s[rng_.below(s.size())] ^= static_cast<char>(1u << rng_.below(8));
        break;
      case 1: {  // set one byte to a random or structural value
        if (s.empty()) break;
        static const char structural[] = "{}[]\":,\\\n\r\t %#-.e0123456789";
        s[rng_.below(s.size())] = rng_.chance(50) ? static_cast<char>(rng_.next())
                                                  : structural[rng_.below(sizeof structural - 1)];
        break;
      }
      case 2: {  // insert random bytes
        std::string bytes(1 + rng_.below(8), '\0');
        for (auto& b : bytes) b = static_cast<char>(rng_.next());
        s.insert(pos(s), bytes);
        break;
      }
      case 3: {  // delete a range
        if (s.empty()) break;
        const std::size_t at = rng_.below(s.size());
        const std::size_t n = 1 + rng_.below(rng_.chance(80) ? 16 : s.size() / 4 + 1);
        s.erase(at, n);
        break;
      }
      case 4:
      case 5:  // splice a dictionary token (twice as likely: it finds the most)
        s.insert(pos(s), token());
        break;
      case 6: {  // replace a number with another (keeps JSON and line formats well formed)
        const auto [b, e] = number_at(s);
        if (b == e) {
          s.insert(pos(s), token());
          break;
        }
        static const char* const numbers[] = {"0", "1", "2", "33", "64", "4294967295", "4294967296",
                                              "18446744073709551615", "18446744073709551616", "1e999",
                                              "-1", "9223372036854775808", "1000000000000", "0.5", "1e308",
                                              "65536", "2147483648", "100000", "999999999", "4000000000"};
        const std::string replacement = rng_.chance(70) ? numbers[rng_.below(sizeof numbers / sizeof *numbers)]
                                                        : std::to_string(rng_.next() >> rng_.below(64));
        s.replace(b, e - b, replacement);
        break;
      }
      case 7: {  // duplicate a chunk somewhere else
        if (s.empty()) break;
        const std::size_t at = rng_.below(s.size());
        const std::string chunk = s.substr(at, 1 + rng_.below(64));
        s.insert(pos(s), rng_.chance(20) ? chunk + chunk + chunk : chunk);
        break;
      }
      case 8: {  // duplicate or drop a whole line
        const std::size_t at = rng_.below(s.size() + 1);
        const std::size_t b = s.rfind('\n', at == 0 ? 0 : at - 1);
        const std::size_t begin = b == std::string::npos || at == 0 ? 0 : b + 1;
        std::size_t end = s.find('\n', begin);
        end = end == std::string::npos ? s.size() : end + 1;
        const std::string line = s.substr(begin, end - begin);
        if (rng_.chance(70)) s.insert(end, line);
        else s.erase(begin, end - begin);
        break;
      }
      case 9:  // truncate
        s.resize(rng_.below(s.size() + 1));
        break;
      case 10: {  // crossover: this input's head, the other's tail
        const std::size_t head = pos(s), tail = rng_.below(other.size() + 1);
        s = s.substr(0, head) + other.substr(tail);
        break;
      }
      default: {  // overwrite a range with one repeated structural byte
        static const char repeated[] = "[{\"0\n 9%";
        const std::size_t at = pos(s);
        s.insert(at, std::string(1 + rng_.below(rng_.chance(10) ? 4096 : 32), repeated[rng_.below(sizeof repeated - 1)]));
        break;
      }
    }
  }

  rng rng_;
  std::size_t max_len_;
};

}  // namespace cdpkit::fuzz
