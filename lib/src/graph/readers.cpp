// Graph file readers (Matrix Market coordinate, SNAP edge lists) and graph specifications.
// The whole file is read at once and scanned in place: no iostream per token.

#include <cdpkit/error.hpp>
#include <cdpkit/graph.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace cdpkit {

namespace {

[[noreturn]] void fail(const std::string& name, std::uint64_t line, const std::string& reason) {
  throw input_error(name + ":" + std::to_string(line) + ": " + reason);
}

/// Lines of a text, with their 1-based numbers; '\r' before '\n' is dropped.
class line_scanner {
 public:
  explicit line_scanner(std::string_view text) : rest_(text) {}
  bool next(std::string_view& line) {
    if (rest_.empty()) return false;
    const std::size_t nl = rest_.find('\n');
    line = rest_.substr(0, nl);
    rest_ = nl == std::string_view::npos ? std::string_view{} : rest_.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number_;
    return true;
  }
  [[nodiscard]] std::uint64_t number() const noexcept { return number_; }

 private:
  std::string_view rest_;
  std::uint64_t number_ = 0;
};

bool is_blank(char c) { return c == ' ' || c == '\t'; }

void skip_blanks(std::string_view& s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
}

bool blank_line(std::string_view s) {
  skip_blanks(s);
  return s.empty();
}

/// Next whitespace-separated token (empty at end of line).
std::string_view next_token(std::string_view& s) {
  skip_blanks(s);
  std::size_t n = 0;
  while (n < s.size() && !is_blank(s[n])) ++n;
  const std::string_view token = s.substr(0, n);
  s.remove_prefix(n);
  return token;
}

/// Parse an unsigned decimal token no larger than `max`; describe the problem otherwise.
std::uint64_t parse_id(std::string_view token, std::uint64_t max, const char* what,
                       const std::string& name, std::uint64_t line) {
  if (token.empty()) fail(name, line, std::string("missing ") + what);
  std::uint64_t value = 0;
  for (char c : token) {
    if (c < '0' || c > '9')
      fail(name, line, std::string(what) + " '" + std::string(token) + "' is not a non-negative integer");
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > max)
      fail(name, line, std::string(what) + " " + std::string(token) + " is larger than " +
                           std::to_string(max) + (max == 0xfffffffeull ? " (32-bit vertex ids)" : ""));
  }
  return value;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr)
    throw input_error(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
  const bool error = std::ferror(f) != 0;
  std::fclose(f);
  if (error) throw input_error(path + ": read error");
  return text;
}

std::uint64_t parse_spec_number(std::string_view token, const std::string& spec) {
  if (token.empty()) throw input_error("graph spec '" + spec + "': missing number");
  std::uint64_t v = 0;
  for (char c : token) {
    if (c < '0' || c > '9' || v > 0xffffffffull)
      throw input_error("graph spec '" + spec + "': '" + std::string(token) + "' is not a number in range");
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

edge_list parse_matrix_market(const std::string& text, const std::string& name) {
  line_scanner lines(text);
  std::string_view line;
  if (!lines.next(line)) fail(name, 1, "empty file (expected a %%MatrixMarket header)");
  std::string_view header = line;
  if (lower(next_token(header)) != "%%matrixmarket")
    fail(name, 1, "missing '%%MatrixMarket' header");
  const std::string object = lower(next_token(header)), format = lower(next_token(header)),
                    field = lower(next_token(header)), symmetry = lower(next_token(header));
  if (object != "matrix") fail(name, 1, "object '" + object + "' is not supported (matrix only)");
  if (format != "coordinate")
    fail(name, 1, "format '" + format + "' is not supported (coordinate only)");
  if (field != "pattern" && field != "real" && field != "integer" && field != "double")
    fail(name, 1, "field '" + field + "' is not supported (pattern, real or integer)");
  if (symmetry != "general" && symmetry != "symmetric")
    fail(name, 1, "symmetry '" + symmetry + "' is not supported (general or symmetric)");
  const bool has_value = field != "pattern";

  // size line, after comments
  bool have_size = false;
  std::uint64_t rows = 0, cols = 0, nnz = 0;
  while (lines.next(line)) {
    if (blank_line(line) || line.front() == '%') continue;
    std::string_view s = line;
    rows = parse_id(next_token(s), 0xffffffffull, "row count", name, lines.number());
    cols = parse_id(next_token(s), 0xffffffffull, "column count", name, lines.number());
    nnz = parse_id(next_token(s), 0xffffffffffffull, "entry count", name, lines.number());
    if (!next_token(s).empty()) fail(name, lines.number(), "size line has more than 3 numbers");
    have_size = true;
    break;
  }
  if (!have_size) fail(name, lines.number() + 1, "missing size line 'rows cols entries'");

  edge_list list;
  list.num_vertices = std::max(rows, cols);
  list.symmetric = symmetry == "symmetric";
  list.edges.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(nnz, 1ull << 28)));
  while (lines.next(line)) {
    if (blank_line(line) || line.front() == '%') continue;
    if (list.edges.size() == nnz)
      fail(name, lines.number(), "more entries than the " + std::to_string(nnz) + " the size line declares");
    std::string_view s = line;
    const std::uint64_t i = parse_id(next_token(s), 0xffffffffull, "row index", name, lines.number());
    const std::uint64_t j = parse_id(next_token(s), 0xffffffffull, "column index", name, lines.number());
    if (i == 0 || j == 0) fail(name, lines.number(), "index 0 in a 1-based Matrix Market file");
    if (i > rows) fail(name, lines.number(), "row index " + std::to_string(i) + " > row count " + std::to_string(rows));
    if (j > cols)
      fail(name, lines.number(), "column index " + std::to_string(j) + " > column count " + std::to_string(cols));
    if (has_value && next_token(s).empty())
      fail(name, lines.number(), "missing value (field is " + field + ")");
    list.edges.emplace_back(static_cast<std::uint32_t>(i - 1), static_cast<std::uint32_t>(j - 1));
  }
  if (list.edges.size() != nnz)
    fail(name, lines.number(), "truncated: the size line declares " + std::to_string(nnz) +
                                   " entries, the file has " + std::to_string(list.edges.size()));
  return list;
}

edge_list parse_edge_list(const std::string& text, const std::string& name) {
  line_scanner lines(text);
  std::string_view line;
  edge_list list;
  std::uint64_t max_id = 0;
  while (lines.next(line)) {
    std::string_view s = line;
    skip_blanks(s);
    if (s.empty() || s.front() == '#' || s.front() == '%') continue;
    const std::uint64_t u = parse_id(next_token(s), 0xfffffffeull, "source vertex id", name, lines.number());
    const std::uint64_t v = parse_id(next_token(s), 0xfffffffeull, "target vertex id", name, lines.number());
    max_id = std::max({max_id, u, v});
    list.edges.emplace_back(static_cast<std::uint32_t>(u), static_cast<std::uint32_t>(v));
  }
  list.num_vertices = list.edges.empty() ? 0 : max_id + 1;
  return list;
}

edge_list read_matrix_market(const std::string& path) {
  return parse_matrix_market(read_file(path), path);
}

edge_list read_edge_list(const std::string& path) { return parse_edge_list(read_file(path), path); }

csr_graph load_graph(const std::string& spec, const csr_options& options, std::uint64_t seed) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  std::vector<std::string_view> args;
  if (colon != std::string::npos) {
    std::string_view rest(spec);
    rest.remove_prefix(colon + 1);
    while (true) {
      const auto c = rest.find(':');
      args.push_back(rest.substr(0, c));
      if (c == std::string_view::npos) break;
      rest.remove_prefix(c + 1);
    }
  }
  if (kind == "rmat") {
    if (args.empty() || args.size() > 2)
      throw input_error("graph spec '" + spec + "': expected rmat:SCALE or rmat:SCALE:EDGE_FACTOR");
    const auto scale = parse_spec_number(args[0], spec);
    const auto ef = args.size() == 2 ? parse_spec_number(args[1], spec) : 16;
    if (scale > 31 || ef > 1024) throw input_error("graph spec '" + spec + "': scale or edge factor out of range");
    return build_csr(make_rmat(static_cast<int>(scale), static_cast<int>(ef), seed), options);
  }
  if (kind == "grid") {
    if (args.size() != 1) throw input_error("graph spec '" + spec + "': expected grid:SIDE");
    return build_csr(make_grid(static_cast<std::uint32_t>(
                         std::min<std::uint64_t>(parse_spec_number(args[0], spec), 0xffffffffull))),
                     options);
  }
  if (kind == "uniform") {
    if (args.size() != 2) throw input_error("graph spec '" + spec + "': expected uniform:VERTICES:EDGES");
    const auto n = parse_spec_number(args[0], spec);
    if (n > 0xffffffffull) throw input_error("graph spec '" + spec + "': too many vertices");
    return build_csr(make_uniform_random(static_cast<std::uint32_t>(n), parse_spec_number(args[1], spec), seed),
                     options);
  }
  const bool mtx = spec.size() > 4 && lower(spec.substr(spec.size() - 4)) == ".mtx";
  return build_csr(mtx ? read_matrix_market(spec) : read_edge_list(spec), options);
}

}  // namespace cdpkit
