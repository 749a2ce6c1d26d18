// Tree readers (a list of paths, a parent-array file) and tree specifications (load_tree). The
// whole file is read at once and scanned in place. Pure C++ (also compiled into the
// sanitizer-built fuzz targets).
//
// Files are untrusted input: only a regular file is read, at most max_file_bytes of it; the node
// count is checked against max_nodes as nodes appear, and the host memory is checked every 2^16
// new nodes of a path list (a node costs about 100 bytes while the list is read).

#include <cdpkit/sizes.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/tree.hpp>

#include "../common/text_input.hpp"
#include "tree_build.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cdpkit {

namespace {

using detail::all_digits;
using detail::fail_at;
using detail::line_scanner;
using detail::next_token;
using detail::parse_unsigned;
using detail::split_colons;

/// A child's key in the path list's index: its parent and its name (a view into the text).
struct child_key {
  std::uint32_t parent;
  std::string_view name;
  friend bool operator==(const child_key& a, const child_key& b) noexcept {
    return a.parent == b.parent && a.name == b.name;
  }
};
struct child_key_hash {
  std::size_t operator()(const child_key& k) const noexcept {
    return std::hash<std::string_view>{}(k.name) ^ (static_cast<std::size_t>(k.parent) * 0x9e3779b97f4a7c15ull);
  }
};

/// Bytes one path-list node costs while the list is read: the tree's arrays, the index entry,
/// the name.
constexpr std::uint64_t path_node_bytes = 100;
constexpr std::uint64_t memory_check_nodes = 1u << 16;

/// "4096\t/usr/bin": the size field before the first tab, when the line has one.
bool has_size_field(std::string_view line) {
  const std::size_t tab = line.find('\t');
  return tab != std::string_view::npos && all_digits(line.substr(0, tab));
}

std::uint64_t cap_of(const tree_read_options& options) { return std::min(options.max_nodes, max_tree_nodes); }

std::string read_file(const std::string& path, const tree_read_options& options) {
  const bool default_cap = options.max_file_bytes == 0;
  return detail::read_text_file(path, default_cap ? detail::default_max_file_bytes() : options.max_file_bytes,
                                default_cap, {"tree", "tree_read_options::max_file_bytes"});
}

}  // namespace

tree parse_path_list(const std::string& text, const std::string& name, const tree_read_options& options) {
  CDPKIT_NVTX_SCOPE("tree::parse_path_list");
  const std::uint64_t cap = cap_of(options);
  line_scanner lines(text);
  std::string_view line;
  std::vector<std::uint32_t> parent;
  std::vector<std::uint64_t> value;
  std::vector<std::string_view> names;
  std::unordered_map<child_key, std::uint32_t, child_key_hash> index;
  int sized = -1;        // -1: not known yet; 0: no sizes; 1: every line has one
  int absolute = -1;     // the same for absolute paths
  std::uint64_t first_line = 0;
  const auto new_node = [&](std::uint32_t p, std::string_view component, std::uint64_t at) {
    if (parent.size() >= cap)
      fail_at(name, at, "more than the " + std::to_string(cap) + " nodes a tree may have (tree_read_options::max_nodes)");
    if (parent.size() % memory_check_nodes == 0)
      require_host_memory(memory_check_nodes * path_node_bytes, name + ": the path tree (" +
                                                                    std::to_string(parent.size()) + " nodes so far)");
    parent.push_back(p);
    value.push_back(0);
    names.push_back(component);
    return static_cast<std::uint32_t>(parent.size() - 1);
  };
  while (lines.next(line)) {
    const std::uint64_t at = lines.number();
    if (detail::blank_line(line) || line.front() == '#') continue;
    std::uint64_t size = 0;
    const bool line_sized = has_size_field(line);
    if (sized < 0) {
      sized = line_sized ? 1 : 0;
      first_line = at;
    } else if (line_sized != (sized == 1)) {
      fail_at(name, at, line_sized ? "a size before the path, but line " + std::to_string(first_line) +
                                         " (the first path) has none: give every line a size or none"
                                   : "no size before the path, but line " + std::to_string(first_line) +
                                         " (the first path) has one: give every line a size or none");
    }
    std::string_view path = line;
    if (line_sized) {
      const std::size_t tab = line.find('\t');
      size = parse_unsigned(line.substr(0, tab), UINT64_MAX, "size", name, at);
      path = line.substr(tab + 1);
    }
    if (path.empty()) fail_at(name, at, "an empty path");
    const bool line_absolute = path.front() == '/';
    if (absolute < 0) {
      absolute = line_absolute ? 1 : 0;
      new_node(tree_no_parent, absolute ? "/" : ".", at);  // the root
    } else if (line_absolute != (absolute == 1)) {
      fail_at(name, at, std::string(line_absolute ? "an absolute" : "a relative") + " path " + quoted_input(path) +
                            " among " + (absolute == 1 ? "absolute" : "relative") + " ones (line " +
                            std::to_string(first_line) + "): a list names paths of one kind");
    }
    std::string_view rest = path;
    if (line_absolute) rest.remove_prefix(1);
    else if (rest == ".") rest = {};
    else if (rest.size() >= 2 && rest.substr(0, 2) == "./") rest.remove_prefix(2);
    if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);  // "usr/bin/": a directory
    std::uint32_t node = 0;  // the root
    while (!rest.empty()) {
      const std::size_t slash = rest.find('/');
      const std::string_view component = rest.substr(0, slash);
      rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
      if (component.empty() || (slash != std::string_view::npos && rest.empty()))
        fail_at(name, at, "an empty component in " + quoted_input(path) + " (two slashes in a row)");
      if (component == "." || component == "..")
        fail_at(name, at, "a " + quoted_input(component) + " component in " + quoted_input(path) +
                              ": paths are read as listed, without resolving them");
      const auto found = index.find({node, component});
      if (found != index.end()) {
        node = found->second;
      } else {
        const std::uint32_t child = new_node(node, component, at);
        index.emplace(child_key{node, component}, child);
        node = child;
      }
    }
    if (line_sized) value[node] += size;  // wraps like the sums
  }
  if (parent.empty()) throw input_error(name + ": no paths (the list is empty, or only blank lines and comments)");
  if (sized == 0)  // a component's bytes and its slash: the path sum is the length of "/" + path
    for (std::size_t v = 1; v < value.size(); ++v) value[v] = names[v].size() + 1;
  std::vector<std::string> owned(names.begin(), names.end());
  index.clear();
  return tree_from_parents(std::move(parent), std::move(value), name, std::move(owned));
}

tree parse_parent_array(const std::string& text, const std::string& name, const tree_read_options& options) {
  CDPKIT_NVTX_SCOPE("tree::parse_parent_array");
  const std::uint64_t cap = cap_of(options);
  line_scanner lines(text);
  std::string_view line;
  std::vector<std::uint32_t> parent;
  std::vector<std::uint64_t> value;
  std::vector<std::uint64_t> at_line;
  int valued = -1;
  std::uint64_t first_line = 0;
  while (lines.next(line)) {
    const std::uint64_t at = lines.number();
    std::string_view s = line;
    detail::skip_blanks(s);
    if (s.empty() || s.front() == '#') continue;
    if (parent.size() >= cap)
      fail_at(name, at, "more than the " + std::to_string(cap) + " nodes a tree may have (tree_read_options::max_nodes)");
    const std::string_view p = next_token(s);
    const std::string_view v = next_token(s);
    if (!next_token(s).empty()) fail_at(name, at, "more than two fields (expected 'PARENT' or 'PARENT VALUE')");
    const bool line_valued = !v.empty();
    if (valued < 0) {
      valued = line_valued ? 1 : 0;
      first_line = at;
    } else if (line_valued != (valued == 1)) {
      fail_at(name, at, std::string(line_valued ? "a value" : "no value") + " after the parent, but line " +
                            std::to_string(first_line) + " (the first node) has " + (valued == 1 ? "one" : "none") +
                            ": give every node a value or none");
    }
    if (p == "-1") parent.push_back(tree_no_parent);
    else parent.push_back(static_cast<std::uint32_t>(parse_unsigned(p, max_tree_nodes - 1, "parent id", name, at)));
    if (line_valued) value.push_back(parse_unsigned(v, UINT64_MAX, "value", name, at));
    at_line.push_back(at);
  }
  if (parent.empty()) throw input_error(name + ": no nodes (the file is empty, or only blank lines and comments)");
  return detail::tree_from_parents_at(std::move(parent), std::move(value), {}, name, at_line);
}

tree read_path_list(const std::string& path, const tree_read_options& options) {
  CDPKIT_NVTX_SCOPE("tree::read_path_list");
  return parse_path_list(read_file(path, options), path, options);
}

tree read_parent_array(const std::string& path, const tree_read_options& options) {
  CDPKIT_NVTX_SCOPE("tree::read_parent_array");
  return parse_parent_array(read_file(path, options), path, options);
}

namespace {

[[noreturn]] void spec_fail(const std::string& spec, const std::string& why) {
  throw input_error("tree spec " + quoted_spec(spec) + ": " + why);
}

/// A count in a spec: decimal, or 2^K.
std::uint64_t spec_number(std::string_view token, const std::string& spec, const char* what) {
  return parse_size(token, "tree spec " + quoted_spec(spec) + ": ", what);
}

}  // namespace

tree load_tree(const std::string& spec, std::uint64_t seed, const tree_read_options& options) {
  CDPKIT_NVTX_SCOPE("tree::load");
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string rest = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
  if (kind == "paths" || kind == "parents") {
    if (rest.empty()) spec_fail(spec, "expected " + kind + ":FILE");
    return kind == "paths" ? read_path_list(rest, options) : read_parent_array(rest, options);
  }
  const std::vector<std::string_view> args = colon == std::string::npos ? std::vector<std::string_view>{}
                                                                        : split_colons(rest);
  const auto wrap = [&](auto make) -> tree {
    try {
      return make();
    } catch (const input_error& e) {
      spec_fail(spec, e.what());
    }
  };
  if (kind == "random") {
    if (args.empty() || args.size() > 3)
      spec_fail(spec, "expected random:N, random:N:uniform|geometric|powerlaw or random:N:KIND:MEAN");
    const std::uint64_t n = spec_number(args[0], spec, "node count");
    fanout_kind fk = fanout_kind::power_law;
    if (args.size() >= 2) {
      if (args[1] == "uniform") fk = fanout_kind::uniform;
      else if (args[1] == "geometric") fk = fanout_kind::geometric;
      else if (args[1] == "powerlaw" || args[1] == "power_law") fk = fanout_kind::power_law;
      else spec_fail(spec, "fan-out " + quoted_input(args[1]) + " is not uniform, geometric or powerlaw");
    }
    double mean = 4.0;
    if (args.size() == 3) {
      const std::string m(args[2]);
      char* end = nullptr;
      mean = std::strtod(m.c_str(), &end);
      if (m.empty() || end != m.c_str() + m.size() || !std::isfinite(mean))
        spec_fail(spec, "mean fan-out " + quoted_input(m) + " is not a number");
    }
    return wrap([&] { return make_random_tree(n, fk, mean, seed); });
  }
  if (kind == "kary") {
    if (args.size() != 2) spec_fail(spec, "expected kary:K:DEPTH");
    const std::uint64_t k = spec_number(args[0], spec, "k"), d = spec_number(args[1], spec, "depth");
    if (k == 0 || k > 0xffffffffull) spec_fail(spec, "k must be in [1, 2^32 - 1], got " + std::to_string(k));
    if (d > max_tree_nodes) spec_fail(spec, "depth " + std::to_string(d) + " makes more nodes than a tree may have");
    return wrap([&] { return make_kary_tree(static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(d)); });
  }
  if (kind == "path" || kind == "caterpillar") {
    if (args.size() != 1) spec_fail(spec, "expected " + kind + ":N");
    const std::uint64_t n = spec_number(args[0], spec, "node count");
    return wrap([&] { return kind == "path" ? make_path_tree(n) : make_caterpillar_tree(n); });
  }
  spec_fail(spec, "unknown kind " + quoted_input(kind) +
                      " (expected random:N[:KIND[:MEAN]], kary:K:DEPTH, path:N, caterpillar:N, paths:FILE or "
                      "parents:FILE)");
}

}  // namespace cdpkit
