// Trees on the host: construction from a parent array (and every way a parent array is not a
// tree), the generators, the path-list and parent-array readers (with their malformed inputs),
// tree specs, and the CPU references of the traversals, on constructed trees and on a listing
// of a real directory.

#include <doctest/doctest.h>

#include "support/temp_dir.hpp"

#include <cdpkit/error.hpp>
#include <cdpkit/tree.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace {

using cdpkit::tree;
using cdpkit::tree_no_parent;
using cdpkit_test::host_memory_cap;
using cdpkit_test::input_error_of;
using cdpkit_test::temp_dir;


/// The invariants every tree keeps: children sorted, each child's parent its lister, every node
/// but the root listed once, values one per node.
void check_shape(const tree& t) {
  const std::uint32_t n = t.num_nodes();
  REQUIRE(t.child_offsets.size() == std::size_t{n} + 1);
  REQUIRE(t.children.size() == std::size_t{n} - 1);
  REQUIRE(t.value.size() == n);
  CHECK(t.parent[t.root] == tree_no_parent);
  std::vector<int> listed(n, 0);
  for (std::uint32_t v = 0; v < n; ++v)
    for (std::uint32_t e = t.child_offsets[v]; e < t.child_offsets[v + 1]; ++e) {
      const std::uint32_t c = t.children[e];
      CHECK(t.parent[c] == v);
      if (e > t.child_offsets[v]) CHECK(t.children[e - 1] < c);
      ++listed[c];
    }
  for (std::uint32_t v = 0; v < n; ++v) CHECK(listed[v] == (v == t.root ? 0 : 1));
}

std::uint32_t height(const tree& t) { return static_cast<std::uint32_t>(cdpkit::tree_level_sizes(t).size() - 1); }

}  // namespace

TEST_CASE("a parent array becomes a tree with sorted children lists under its one root") {
  // 2 is the root, with children 0, 3 and 4; 1 is the child of 0
  const tree t = cdpkit::tree_from_parents({2, 0, tree_no_parent, 2, 2}, {5, 6, 7, 8, 9}, "t");
  check_shape(t);
  CHECK(t.root == 2);
  CHECK(t.num_children(2) == 3);
  CHECK(std::vector<std::uint32_t>(t.children.begin() + t.child_offsets[2], t.children.begin() + t.child_offsets[3]) ==
        std::vector<std::uint32_t>{0, 3, 4});
  CHECK(t.max_children() == 3);
  CHECK(t.leaves() == 3);
  CHECK(t.path_of(1) == "#1");

  const auto td = cdpkit::tree_top_down_reference(t);
  CHECK(td.depth == std::vector<std::uint32_t>{1, 2, 0, 1, 1});
  CHECK(td.path_sum == std::vector<std::uint64_t>{12, 18, 7, 15, 16});
  const auto bu = cdpkit::tree_bottom_up_reference(t);
  CHECK(bu.size == std::vector<std::uint32_t>{2, 1, 5, 1, 1});
  CHECK(bu.sum == std::vector<std::uint64_t>{11, 6, 35, 8, 9});
  CHECK(cdpkit::tree_level_sizes(t) == std::vector<std::uint64_t>{1, 3, 1});

  SUBCASE("without values every node weighs 1") {
    const tree u = cdpkit::tree_from_parents({tree_no_parent, 0}, {}, "u");
    CHECK(u.value == std::vector<std::uint64_t>{1, 1});
  }
}

TEST_CASE("a parent array that is not a tree is an input_error naming the node") {
  using P = std::vector<std::uint32_t>;
  const auto error = [](P parent) { return input_error_of([&] { return cdpkit::tree_from_parents(parent, {}, "t"); }); };
  CHECK(error({}) == "t: the tree has no nodes");
  CHECK(error({tree_no_parent, 0, tree_no_parent}) ==
        "t: node 2 is a second root: node 0 has no parent either; a tree has one root");
  CHECK(error({tree_no_parent, 7}) == "t: node 1: parent 7 is out of range (the tree has 2 nodes, ids 0 to 1)");
  CHECK(error({tree_no_parent, 1}) == "t: node 1 is its own parent");
  CHECK(error({1, 0}) == "t: no root: every node has a parent, so the parents form a cycle");
  // 0 is the root; 1 -> 2 -> 3 -> 1 is a cycle, 4 hangs below it
  const std::string cycle = error({tree_no_parent, 3, 1, 2, 2});
  CHECK_MESSAGE(cycle.find(" is on a cycle of parents (") != std::string::npos, cycle);
  CHECK_MESSAGE(cycle.find("4 of the 5 nodes cannot be reached from the root 0") != std::string::npos, cycle);
  CHECK(input_error_of([] { return cdpkit::tree_from_parents({tree_no_parent, 0}, {1}, "t"); }) ==
        "t: 1 values for 2 nodes");
}

TEST_CASE("the CPU references refuse a tree that was never built instead of reading past it") {
  const cdpkit::tree empty{};
  CHECK(input_error_of([&] { return cdpkit::tree_top_down_reference(empty); }) ==
        "tree_top_down_reference: the tree has no nodes, or is not built (tree_from_parents)");
  CHECK(input_error_of([&] { return cdpkit::tree_bottom_up_reference(empty); }) ==
        "tree_bottom_up_reference: the tree has no nodes, or is not built (tree_from_parents)");
}

TEST_CASE("the generators make trees of exactly the nodes asked, breadth first, the same per seed") {
  SUBCASE("random trees of each fan-out law") {
    for (const auto kind : {cdpkit::fanout_kind::uniform, cdpkit::fanout_kind::geometric, cdpkit::fanout_kind::power_law}) {
      CAPTURE(std::string(cdpkit::to_string(kind)));
      const tree t = cdpkit::make_random_tree(20000, kind, 4.0, 7);
      check_shape(t);
      CHECK(t.num_nodes() == 20000);
      CHECK(t.root == 0);
      for (std::uint32_t v = 1; v < t.num_nodes(); ++v) CHECK(t.parent[v] < v);  // breadth-first ids
      for (auto x : t.value) CHECK((x >= 1 && x <= 100));
      const tree again = cdpkit::make_random_tree(20000, kind, 4.0, 7);
      CHECK(again.parent == t.parent);
      CHECK(again.value == t.value);
      CHECK(cdpkit::make_random_tree(20000, kind, 4.0, 8).parent != t.parent);
    }
  }
  SUBCASE("power-law fan-out: most nodes leaves or single children, a few very wide") {
    const tree t = cdpkit::make_random_tree(1u << 18, cdpkit::fanout_kind::power_law);
    std::uint64_t at_most_one = 0;
    for (std::uint32_t v = 0; v < t.num_nodes(); ++v) at_most_one += t.num_children(v) <= 1;
    const double internal = static_cast<double>(t.num_nodes() - t.leaves());
    CHECK(static_cast<double>(at_most_one) > 0.5 * internal);  // of the nodes that were drawn
    CHECK(t.max_children() > 1000);
    CHECK(height(t) < 64);
  }
  SUBCASE("a uniform law that would die out still reaches the node count") {
    const tree t = cdpkit::make_random_tree(5000, cdpkit::fanout_kind::uniform, 1.0, 3);
    CHECK(t.num_nodes() == 5000);
    check_shape(t);
  }
  SUBCASE("complete k-ary trees, paths and caterpillars") {
    const tree k3 = cdpkit::make_kary_tree(3, 4);
    check_shape(k3);
    CHECK(k3.num_nodes() == 1 + 3 + 9 + 27 + 81);
    CHECK(cdpkit::tree_level_sizes(k3) == std::vector<std::uint64_t>{1, 3, 9, 27, 81});
    CHECK(cdpkit::make_kary_tree(1, 9).num_nodes() == 10);
    CHECK(cdpkit::make_kary_tree(5, 0).num_nodes() == 1);

    const tree path = cdpkit::make_path_tree(100000);
    check_shape(path);
    CHECK(height(path) == 99999);
    const auto bu = cdpkit::tree_bottom_up_reference(path);
    CHECK(bu.size[0] == 100000);
    CHECK(bu.size[99999] == 1);

    for (std::uint64_t n : {1u, 2u, 3u, 4u, 5u, 1001u}) {
      CAPTURE(n);
      const tree c = cdpkit::make_caterpillar_tree(n);
      check_shape(c);
      CHECK(c.num_nodes() == n);
      CHECK(height(c) == n / 2);
      CHECK(c.max_children() <= 2);
    }
  }
  SUBCASE("bad arguments") {
    CHECK(input_error_of([] { return cdpkit::make_path_tree(0); }) == "make_path_tree(0): a tree needs at least one node");
    CHECK(input_error_of([] { return cdpkit::make_kary_tree(0, 3); }) == "make_kary_tree(0, 3): k must be at least 1");
    CHECK(input_error_of([] { return cdpkit::make_kary_tree(2, 40); }) ==
          "make_kary_tree(2, 40): more than the 4294967294 nodes a tree may have (32-bit node ids)");
    CHECK_CONTAINS(input_error_of([] { return cdpkit::make_random_tree(10, cdpkit::fanout_kind::uniform, 0.5); }),
               "the mean fan-out must be in [1, 1024]");
    CHECK_CONTAINS(input_error_of([] { return cdpkit::make_random_tree(1ull << 33, cdpkit::fanout_kind::uniform); }),
               "more than the 4294967294 a tree may have (32-bit node ids)");
  }
  SUBCASE("too little host memory is refused before allocating") {
    const host_memory_cap cap(1u << 20);
    CHECK_CONTAINS(input_error_of([] { return cdpkit::make_path_tree(1u << 20); }),
               "make_path_tree(1048576) needs");
  }
}

TEST_CASE("a path list becomes the tree of its prefixes, with names, path lengths and sizes") {
  SUBCASE("absolute paths as find prints them") {
    const tree t = cdpkit::parse_path_list("/usr\n/usr/bin\n/usr/bin/ls\n/usr/lib/\n/usr/bin/cat\n/etc/passwd\n", "l");
    check_shape(t);
    CHECK(t.num_nodes() == 8);  // / usr bin ls lib cat etc passwd
    CHECK(t.names[t.root] == "/");
    std::map<std::string, std::uint32_t> id;
    for (std::uint32_t v = 0; v < t.num_nodes(); ++v) id[t.path_of(v)] = v;
    CHECK(id.count("/usr/bin/ls") == 1);
    CHECK(id.count("/etc") == 1);  // a prefix never listed is a node too
    const auto td = cdpkit::tree_top_down_reference(t);
    for (const auto& [path, v] : id) {
      CAPTURE(path);
      CHECK(td.path_sum[v] == (path == "/" ? 0 : path.size()));  // the length of the path in bytes
    }
    const auto bu = cdpkit::tree_bottom_up_reference(t);
    CHECK(bu.size[id["/usr"]] == 5);
    CHECK(bu.size[t.root] == 8);
  }
  SUBCASE("relative paths, ./ prefixes, duplicates, CRLF, comments and blank lines") {
    const tree t = cdpkit::parse_path_list("# listing\n./a/b\r\n\na/b/c\na/b\n.\nd\n", "l");
    check_shape(t);
    CHECK(t.num_nodes() == 5);  // . a b c d
    CHECK(t.names[t.root] == ".");
    std::vector<std::string> paths;
    for (std::uint32_t v = 0; v < t.num_nodes(); ++v) paths.push_back(t.path_of(v));
    std::sort(paths.begin(), paths.end());
    CHECK(paths == std::vector<std::string>{".", "a", "a/b", "a/b/c", "d"});
  }
  SUBCASE("sizes before the paths: a node's value is its size, a directory's subtree sum its bytes") {
    const tree t = cdpkit::parse_path_list("4096\t/d\n100\t/d/x\n20\t/d/e/y\n3\t/z\n", "l");
    std::map<std::string, std::uint32_t> id;
    for (std::uint32_t v = 0; v < t.num_nodes(); ++v) id[t.path_of(v)] = v;
    CHECK(t.value[id["/d/e"]] == 0);  // never listed
    const auto bu = cdpkit::tree_bottom_up_reference(t);
    CHECK(bu.sum[id["/d"]] == 4096 + 100 + 20);
    CHECK(bu.sum[t.root] == 4096 + 100 + 20 + 3);
  }
}

TEST_CASE("a malformed path list is an input_error naming the line") {
  const auto error = [](const std::string& text) {
    return input_error_of([&] { return cdpkit::parse_path_list(text, "l"); });
  };
  CHECK(error("") == "l: no paths (the list is empty, or only blank lines and comments)");
  CHECK(error("# only\n\n") == "l: no paths (the list is empty, or only blank lines and comments)");
  CHECK(error("a/b\na//c\n") == "l:2: an empty component in 'a//c' (two slashes in a row)");
  CHECK(error("/a/b//\n") == "l:1: an empty component in '/a/b//' (two slashes in a row)");
  CHECK(error("a/../b\n") == "l:1: a '..' component in 'a/../b': paths are read as listed, without resolving them");
  CHECK(error("a/./b\n") == "l:1: a '.' component in 'a/./b': paths are read as listed, without resolving them");
  CHECK(error("/a\nb\n") == "l:2: a relative path 'b' among absolute ones (line 1): a list names paths of one kind");
  CHECK(error("1\t/a\n/b\n") ==
        "l:2: no size before the path, but line 1 (the first path) has one: give every line a size or none");
  CHECK(error("/a\n1\t/b\n") ==
        "l:2: a size before the path, but line 1 (the first path) has none: give every line a size or none");
  CHECK(error("99999999999999999999\t/a\n") ==
        "l:1: size 99999999999999999999 is larger than 18446744073709551615");
  CHECK(error("5\t\n") == "l:1: an empty path");
  cdpkit::tree_read_options small;
  small.max_nodes = 3;
  CHECK(input_error_of([&] { return cdpkit::parse_path_list("/a\n/b\n/c/d\n", "l", small); }) ==
        "l:3: more than the 3 nodes a tree may have (tree_read_options::max_nodes)");
}

TEST_CASE("a parent-array file becomes a tree, and its errors name the line") {
  const tree t = cdpkit::parse_parent_array("# parents\n-1 10\n0 20\n\n0 30\n1 40\n", "p");
  check_shape(t);
  CHECK(t.num_nodes() == 4);
  CHECK(t.value == std::vector<std::uint64_t>{10, 20, 30, 40});
  CHECK(cdpkit::tree_bottom_up_reference(t).sum[0] == 100);

  const auto error = [](const std::string& text) {
    return input_error_of([&] { return cdpkit::parse_parent_array(text, "p"); });
  };
  CHECK(error("") == "p: no nodes (the file is empty, or only blank lines and comments)");
  CHECK(error("-1\n0\n-1\n") == "p:3: node 2 is a second root: node 0 (line 1) has no parent either; a tree has one root");
  CHECK(error("-1\n5\n") == "p:2: node 1: parent 5 is out of range (the tree has 2 nodes, ids 0 to 1)");
  CHECK(error("-1\nx\n") == "p:2: parent id 'x' is not a non-negative integer");
  CHECK(error("-1\n0 1 2\n") == "p:2: more than two fields (expected 'PARENT' or 'PARENT VALUE')");
  CHECK(error("-1 1\n0\n") ==
        "p:2: no value after the parent, but line 1 (the first node) has one: give every node a value or none");
  CHECK(error("1\n0\n") == "p: no root: every node has a parent, so the parents form a cycle");
  CHECK_CONTAINS(error("-1\n2\n1\n"), "p:3: node 2 is on a cycle of parents (2 -> 1 -> 2)");
  CHECK(error("-1\n1\n") == "p:2: node 1 is its own parent");
}

TEST_CASE("tree specs name each generator and file kind, and bad specs say why") {
  CHECK(cdpkit::load_tree("random:1000").num_nodes() == 1000);
  CHECK(cdpkit::load_tree("random:2^10:uniform").num_nodes() == 1024);
  CHECK(cdpkit::load_tree("random:500:geometric:2.5").num_nodes() == 500);
  CHECK(cdpkit::load_tree("kary:2:3").num_nodes() == 15);
  CHECK(cdpkit::load_tree("path:7").num_nodes() == 7);
  CHECK(cdpkit::load_tree("caterpillar:9").num_nodes() == 9);
  CHECK(cdpkit::load_tree("random:1000", 3).parent != cdpkit::load_tree("random:1000", 4).parent);

  const temp_dir dir;
  CHECK(cdpkit::load_tree("paths:" + dir.file("l.txt", "a/b\na/c\n")).num_nodes() == 4);
  CHECK(cdpkit::load_tree("parents:" + dir.file("p.txt", "-1\n0\n0\n")).num_nodes() == 3);
  CHECK(input_error_of([&] { return cdpkit::load_tree("parents:" + dir.file("bad.txt", "-1\n9\n")); }) ==
        (dir.path() / "bad.txt").string() + ":2: node 1: parent 9 is out of range (the tree has 2 nodes, ids 0 to 1)");
  CHECK_CONTAINS(input_error_of([&] { return cdpkit::load_tree("paths:" + dir.path().string()); }),
             "is a directory, not a regular file; trees are read from regular files only");
  CHECK_CONTAINS(input_error_of([] { return cdpkit::load_tree("paths:/nonexistent/list"); }), "cannot open");

  CHECK_CONTAINS(input_error_of([] { return cdpkit::load_tree("forest:3"); }), "tree spec 'forest:3': unknown kind 'forest'");
  CHECK(input_error_of([] { return cdpkit::load_tree("random:12x"); }) ==
        "tree spec 'random:12x': node count '12x' is not a non-negative integer (or 2^K)");
  CHECK(input_error_of([] { return cdpkit::load_tree("random:1180591620717411303424"); }) ==
        "tree spec 'random:1180591620717411303424': node count 1180591620717411303424 is far too large (more than 19 "
        "digits)");
  CHECK(input_error_of([] { return cdpkit::load_tree("random:10:zipf"); }) ==
        "tree spec 'random:10:zipf': fan-out 'zipf' is not uniform, geometric or powerlaw");
  CHECK(input_error_of([] { return cdpkit::load_tree("path:0"); }) ==
        "tree spec 'path:0': make_path_tree(0): a tree needs at least one node");
  CHECK(input_error_of([] { return cdpkit::load_tree("kary:2"); }) == "tree spec 'kary:2': expected kary:K:DEPTH");
  CHECK(input_error_of([] { return cdpkit::load_tree("paths:"); }) == "tree spec 'paths:': expected paths:FILE");
  CHECK_CONTAINS(input_error_of([] { return cdpkit::load_tree("random:2^64"); }), "is not 2^K with K in [0, 63]");
}

TEST_CASE("a listing of a real directory gives the file and byte counts the file system has") {
  // The test sources themselves, listed as find -printf '%s\t%p\n' would.
  const std::filesystem::path root = std::filesystem::path(__FILE__).parent_path().parent_path();  // tests/
  std::string listing;
  std::map<std::string, std::uint64_t> files_under, bytes_under;  // per directory, itself included
  std::uint64_t entries = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    const bool file = e.is_regular_file();
    if (!file && !e.is_directory()) continue;
    const std::uint64_t size = file ? e.file_size() : 0;
    listing += std::to_string(size) + "\t" + e.path().string() + "\n";
    ++entries;
    for (auto p = e.path(); ; p = p.parent_path()) {
      ++files_under[p.string()];
      bytes_under[p.string()] += size;
      if (p == root || p == p.parent_path()) break;
    }
  }
  REQUIRE(entries > 10);
  const tree t = cdpkit::parse_path_list(listing, "listing of " + root.string());
  check_shape(t);
  const auto bu = cdpkit::tree_bottom_up_reference(t);
  std::uint64_t compared = 0;
  for (std::uint32_t v = 0; v < t.num_nodes(); ++v) {
    const auto it = files_under.find(t.path_of(v));
    if (it == files_under.end()) continue;  // the prefixes above the listed root
    CAPTURE(it->first);
    // the listed root's count includes itself only when listed: it is not (the iterator skips it)
    const std::uint64_t self = it->first == root.string() ? 1 : 0;
    CHECK(bu.size[v] == it->second + self);
    CHECK(bu.sum[v] == bytes_under[it->first]);
    ++compared;
  }
  CHECK(compared == entries + 1);
}
