// The children collector's host half (profiling/children): the cubin reader on a device-linked
// cubin of CDP kernels, the linkage of grids to launch calls, and the launch layer's records and
// profile made from them.

#include <doctest/doctest.h>

#include <cdpkit/children/cubin.hpp>
#include <cdpkit/children/grids.hpp>
#include <cdpkit/schema/profile.hpp>

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace ch = cdpkit::children;

namespace {

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const ch::cubin_function* function_named(const ch::cubin_info& info, const std::string& name) {
  const auto it = std::find_if(info.functions.begin(), info.functions.end(),
                               [&](const ch::cubin_function& f) { return f.name == name; });
  return it == info.functions.end() ? nullptr : &*it;
}

std::vector<std::string> children_of(const ch::cubin_info& info, const std::string& caller) {
  std::vector<std::string> out;
  for (const auto& l : info.launches)
    if (l.caller == caller) out.push_back(l.child);
  return out;
}

ch::grid_seen grid(std::uint64_t id, const std::string& kernel, std::uint64_t blocks, std::uint64_t threads,
                   std::uint64_t first, std::uint64_t last, bool host = false) {
  ch::grid_seen g;
  g.gridid = id;
  g.kernel = kernel;
  g.blocks = blocks;
  g.block_threads = threads;
  g.block_entries = blocks;
  g.block_exits = blocks;
  g.first_ns = first;
  g.last_ns = last;
  g.host_launched = host;
  return g;
}

ch::launch_call call(std::uint64_t caller_id, const std::string& caller, std::uint64_t offset, const std::string& child,
                     std::uint64_t t) {
  ch::launch_call c;
  c.caller_gridid = caller_id;
  c.caller = caller;
  c.offset = offset;
  c.child = child;
  c.t_ns = t;
  return c;
}

/// %gridid of the k-th grid the device runtime numbered (-5, -6, ... as unsigned).
constexpr std::uint64_t device_id(int k) { return ~std::uint64_t{0} - 4 - static_cast<std::uint64_t>(k); }

}  // namespace

TEST_CASE("the cubin reader names the kernel each device launch call launches") {
  const std::vector<char> image = read_file(CDPKIT_CHILDREN_CUBIN);
  REQUIRE(!image.empty());
  const ch::cubin_info info = ch::read_cubin(image.data(), image.size());
  CHECK(info.problem.empty());
  for (const char* k : {"_Z4leafPii", "_Z3midPii", "_Z4rootPii", "_Z4selfi"}) {
    const auto* f = function_named(info, k);
    REQUIRE_MESSAGE(f != nullptr, k);
    CHECK(f->kernel);
  }
  const auto* entry = function_named(info, "__cudaCDP2LaunchDeviceV2");
  REQUIRE(entry != nullptr);
  CHECK_FALSE(entry->kernel);
  CHECK(ch::is_launch_entry(entry->name));
  // in code order: root launches mid, then leaf (tail), then mid (fire and forget)
  CHECK(children_of(info, "_Z4rootPii") == std::vector<std::string>{"_Z3midPii", "_Z4leafPii", "_Z3midPii"});
  CHECK(children_of(info, "_Z3midPii") == std::vector<std::string>{"_Z4leafPii"});
  CHECK(children_of(info, "_Z4selfi") == std::vector<std::string>{"_Z4selfi"});
  CHECK(children_of(info, "_Z4leafPii").empty());
  for (const auto& l : info.launches) CHECK(l.offset % 16 == 0);  // an instruction's offset
}

TEST_CASE("the cubin reader gives each device launch call the source line it was written on") {
  // children_launches.cu is built with -lineinfo: its launches are on lines 10, 15, 16, 18 and 22
  const std::vector<char> image = read_file(CDPKIT_CHILDREN_CUBIN);
  REQUIRE(!image.empty());
  const ch::cubin_info info = ch::read_cubin(image.data(), image.size());
  CHECK(info.problem.empty());
  std::vector<std::pair<std::string, std::uint32_t>> lines;
  for (const auto& l : info.launches) {
    CHECK_MESSAGE(l.file.size() >= 20, l.caller);
    CHECK(l.file.substr(l.file.size() - std::min<std::size_t>(l.file.size(), 20)) == "children_launches.cu");
    lines.emplace_back(l.caller, l.line);
  }
  CHECK(lines == std::vector<std::pair<std::string, std::uint32_t>>{
                     {"_Z3midPii", 10}, {"_Z4rootPii", 15}, {"_Z4rootPii", 16}, {"_Z4rootPii", 18}, {"_Z4selfi", 22}});

  // the same image without its line table (the section renamed): the kernels and children as
  // before, no file and no line
  std::vector<char> stripped = image;
  const std::string name = ".debug_line";
  const auto at = std::search(stripped.begin(), stripped.end(), name.begin(), name.end());
  REQUIRE(at != stripped.end());
  *(at + 1) = 'x';
  const ch::cubin_info without = ch::read_cubin(stripped.data(), stripped.size());
  CHECK(without.problem.empty());
  REQUIRE(without.launches.size() == info.launches.size());
  for (std::size_t k = 0; k < info.launches.size(); ++k) {
    CHECK(without.launches[k].child == info.launches[k].child);
    CHECK(without.launches[k].file.empty());
    CHECK(without.launches[k].line == 0);
  }
}

TEST_CASE("the cubin reader reads cut-short, corrupt and foreign images without failing") {
  const std::vector<char> image = read_file(CDPKIT_CHILDREN_CUBIN);
  REQUIRE(!image.empty());
  CHECK(ch::read_cubin(nullptr, 0).problem == "not a 64-bit ELF image");
  const std::string text = "not an ELF file at all";
  CHECK_FALSE(ch::read_cubin(text.data(), text.size()).problem.empty());
  for (std::size_t cut = 0; cut < image.size(); cut += 1 + cut / 3) {
    const ch::cubin_info info = ch::read_cubin(image.data(), cut);
    CHECK_MESSAGE(info.launches.size() <= 5, cut);
  }
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<char> bad = image;
    for (int k = 0; k < 16; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    (void)ch::read_cubin(bad.data(), bad.size());  // anything but a crash or a throw
  }
  // the line table alone, corrupted: its rows may go, the kernels and children stay
  Elf64_Ehdr eh{};
  std::memcpy(&eh, image.data(), sizeof eh);
  std::size_t begin = 0, size = 0;
  for (std::size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{}, names{};
    std::memcpy(&sh, image.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    std::memcpy(&names, image.data() + eh.e_shoff + eh.e_shstrndx * sizeof sh, sizeof names);
    if (std::string(image.data() + names.sh_offset + sh.sh_name) == ".debug_line") begin = sh.sh_offset, size = sh.sh_size;
  }
  REQUIRE(size > 0);
  const ch::cubin_info whole = ch::read_cubin(image.data(), image.size());
  for (int round = 0; round < 500; ++round) {
    std::vector<char> bad = image;
    for (int k = 0; k < 1 + round % 8; ++k) bad[begin + rng() % size] = static_cast<char>(rng());
    const ch::cubin_info info = ch::read_cubin(bad.data(), bad.size());
    REQUIRE(info.launches.size() == whole.launches.size());
    for (std::size_t l = 0; l < info.launches.size(); ++l) CHECK(info.launches[l].child == whole.launches[l].child);
  }
}

TEST_CASE("each device grid is linked to a call of its kernel, with parent and depth") {
  // the host's root grid launches mid and leaf; mid launches leaf
  const std::vector<ch::grid_seen> grids = {
      grid(1, "root", 1, 32, 100, 900, true),
      grid(device_id(0), "mid", 1, 32, 210, 400),
      grid(device_id(1), "leaf", 2, 64, 950, 990),  // a tail launch: after root ends
      grid(device_id(2), "leaf", 3, 32, 320, 380),
  };
  const std::vector<ch::launch_call> calls = {
      call(1, "root", 0x1f0, "mid", 200),
      call(1, "root", 0x3a0, "leaf", 205),
      call(device_id(0), "mid", 0x200, "leaf", 300),
  };
  const ch::linkage link = ch::link_grids(grids, calls);
  CHECK(link.device_grids == 3);
  CHECK(link.unexplained_grids == 0);
  CHECK(link.failed_calls == 0);
  CHECK(link.before_call == 0);
  CHECK(link.call_of[1] == std::optional<std::size_t>(0));
  CHECK(link.call_of[2] == std::optional<std::size_t>(1));
  CHECK(link.call_of[3] == std::optional<std::size_t>(2));
  CHECK(link.parent_of[1] == std::optional<std::size_t>(0));
  CHECK(link.parent_of[3] == std::optional<std::size_t>(1));
  CHECK(link.depth == std::vector<std::uint32_t>{0, 1, 1, 2});
}

TEST_CASE("the grids of a kernel by id pair with its calls by time, and a grid before its call is counted") {
  const std::vector<ch::grid_seen> grids = {grid(1, "root", 2, 32, 0, 100, true), grid(device_id(0), "leaf", 7, 32, 50, 60),
                                            grid(device_id(1), "leaf", 9, 32, 45, 61)};
  const std::vector<ch::launch_call> calls = {call(1, "root", 0x200, "leaf", 41), call(1, "root", 0x100, "leaf", 40)};
  const ch::linkage link = ch::link_grids(grids, calls);
  CHECK(link.grid_of[1] == std::optional<std::size_t>(1));  // the first call by time, the first grid by id
  CHECK(link.grid_of[0] == std::optional<std::size_t>(2));
  CHECK(link.before_call == 0);
  std::vector<ch::grid_seen> early = grids;
  early[1].first_ns = 30;  // the first grid by id started before the first call: a wrong pair, counted
  CHECK(ch::link_grids(early, calls).before_call == 1);
}

TEST_CASE("a pair the clock forces replaces the id order's, and certain depths are counted") {
  // the host's grid launches A (call at 100); A launches B (call at 300). The runtime gave B the
  // higher id: the id order pairs A with A's own call. A started at 150, when only the host's call
  // had been made, so that call is A's; B started at 350, when A's call was the only one left.
  const std::vector<ch::grid_seen> grids = {grid(1, "root", 1, 32, 0, 1000, true), grid(device_id(1), "k", 1, 32, 150, 900),
                                            grid(device_id(0), "k", 1, 32, 350, 400)};
  const std::vector<ch::launch_call> calls = {call(1, "root", 0x100, "k", 100), call(device_id(1), "k", 0x100, "k", 300)};
  const ch::linkage link = ch::link_grids(grids, calls);
  CHECK(link.call_of[1] == std::optional<std::size_t>(0));
  CHECK(link.call_of[2] == std::optional<std::size_t>(1));
  CHECK(link.forced_pairs == 2);
  CHECK(link.before_call == 0);
  CHECK(link.depth == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(link.certain_depths == 2);

  // two calls from different grids before a grid's start: its parent is not proved, nor the depths below it
  const std::vector<ch::grid_seen> two = {grid(1, "root", 1, 32, 0, 1000, true), grid(device_id(0), "k", 1, 32, 150, 900),
                                          grid(device_id(1), "k", 1, 32, 500, 600), grid(device_id(2), "k", 1, 32, 510, 600)};
  const std::vector<ch::launch_call> two_calls = {call(1, "root", 0x100, "k", 100), call(device_id(0), "k", 0x100, "k", 300),
                                                  call(1, "root", 0x100, "k", 310)};
  const ch::linkage open = ch::link_grids(two, two_calls);
  CHECK(open.forced_pairs == 1);  // the first grid
  CHECK(open.parent_certain == std::vector<bool>{false, true, false, false});
  CHECK(open.certain_depths == 1);

  // two calls from one grid before each start: the parent is proved though the call is not
  const std::vector<ch::launch_call> same = {call(1, "root", 0x100, "k", 100), call(device_id(0), "k", 0x100, "k", 300),
                                             call(device_id(0), "k", 0x100, "k", 310)};
  const ch::linkage one = ch::link_grids(two, same);
  CHECK(one.parent_certain == std::vector<bool>{false, true, true, true});
  CHECK(one.certain_depths == 3);
  CHECK(one.depth == std::vector<std::uint32_t>{0, 1, 2, 2});

  // a call whose kernel the code does not name could have made any grid: nothing is proved
  std::vector<ch::launch_call> unnamed = calls;
  unnamed.push_back(call(1, "root", 0x200, "", 120));
  CHECK(ch::link_grids(grids, unnamed).certain_depths == 0);
}

TEST_CASE("nothing is proved where a grid's call may be missing") {
  const std::vector<ch::grid_seen> grids = {grid(1, "root", 1, 32, 0, 1000, true), grid(device_id(1), "k", 1, 32, 150, 900),
                                            grid(device_id(0), "k", 1, 32, 350, 400)};
  const std::vector<ch::launch_call> calls = {call(1, "root", 0x100, "k", 100), call(device_id(1), "k", 0x100, "k", 300)};
  REQUIRE(ch::link_grids(grids, calls).certain_depths == 2);
  // rows lost in the collection
  CHECK(ch::link_grids(grids, calls, false).certain_depths == 0);
  CHECK(ch::link_grids(grids, calls, false).forced_pairs == 0);
  // the first call not recorded: the first grid has no candidate
  const std::vector<ch::launch_call> second_only = {calls[1]};
  CHECK(ch::link_grids(grids, second_only).certain_depths == 0);
  // a grid id read twice (a grid read back half done, then whole)
  std::vector<ch::grid_seen> twice = grids;
  twice.push_back(twice[2]);
  CHECK(ch::link_grids(twice, calls).certain_depths == 0);
}

TEST_CASE("a hundred thousand grids launched by one grid all have a proved parent") {
  // the child-per-thread pattern: every call of the kernel from one grid, the grids starting
  // while more calls come (each grid's candidates are many, all from that grid)
  constexpr std::uint64_t n = 100000;
  std::vector<ch::grid_seen> grids = {grid(1, "root", 1, 32, 0, 10 * n, true)};
  std::vector<ch::launch_call> calls;
  for (std::uint64_t k = 0; k < n; ++k) {
    calls.push_back(call(1, "root", 0x100, "leaf", 10 + k));
    grids.push_back(grid(device_id(static_cast<int>(k)), "leaf", 1, 32, 20 + 2 * k, 30 + 2 * k));
  }
  const ch::linkage link = ch::link_grids(grids, calls);
  CHECK(link.certain_depths == n);
  CHECK(link.unexplained_grids == 0);
  CHECK(link.failed_calls == 0);
}

TEST_CASE("a kernel with fewer grids than launch calls had failed launches, counted exactly") {
  std::vector<ch::grid_seen> grids = {grid(1, "root", 1, 32, 0, 100, true)};
  std::vector<ch::launch_call> calls;
  for (int k = 0; k < 5; ++k) calls.push_back(call(1, "root", 0x100, "leaf", 10 + static_cast<std::uint64_t>(k)));
  for (int k = 0; k < 3; ++k) grids.push_back(grid(device_id(k), "leaf", 1, 32, 200, 300));
  const ch::linkage link = ch::link_grids(grids, calls);
  CHECK(link.failed_calls == 2);
  CHECK_FALSE(link.grid_of[3].has_value());
  CHECK_FALSE(link.grid_of[4].has_value());
  std::vector<ch::call_site> sites;
  const cdpkit::trace_snapshot snap = ch::children_snapshot(grids, calls, link, sites);
  REQUIRE(sites.size() == 1);
  CHECK(snap.sites[0].requests == 5);
  CHECK(snap.sites[0].outcomes[static_cast<int>(cdpkit::launch_outcome::launched)] == 3);
  CHECK(snap.sites[0].outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_error)] == 2);
}

TEST_CASE("an unmodified program's grids make the launch layer's records and a profile the reader takes") {
  const std::vector<ch::grid_seen> grids = {
      grid(1, "_Z4rootPii", 1, 32, 100, 900, true),
      grid(device_id(0), "_Z3midPii", 1, 32, 210, 400),
      grid(device_id(1), "_Z4leafPii", 1, 16, 320, 380),  // 16 threads: a tiny grid
      grid(device_id(2), "_Z4leafPii", 4, 128, 330, 390),
  };
  const std::vector<ch::launch_call> calls = {
      call(1, "_Z4rootPii", 0x1f0, "_Z3midPii", 200),
      call(device_id(0), "_Z3midPii", 0x200, "_Z4leafPii", 300),
      call(device_id(0), "_Z3midPii", 0x200, "_Z4leafPii", 301),
  };
  ch::collection c;
  c.grids = grids;
  c.calls = calls;
  c.pending_limit = 2048;
  cdpkit::schema::device_profile dev;
  dev.name = "test device";
  dev.cc = "9.0";
  dev.sms = 132;
  const cdpkit::schema::profile p = ch::children_profile(c, "app", "./app 3", dev, {{"version", "test"}});
  const nlohmann::json j = cdpkit::schema::profile_json(p);
  const cdpkit::schema::profile back = cdpkit::schema::parse_profile(j.dump(), "children.json");
  REQUIRE(back.runs.size() == 1);
  REQUIRE(back.runs[0].trace.has_value());
  const auto& t = *back.runs[0].trace;
  CHECK(back.runs[0].algorithm == "injected");
  CHECK(back.runs[0].variant == "children");
  CHECK(t.summary.child_launches == 3);
  CHECK(t.summary.failed_launches == 0);
  CHECK(t.summary.max_depth == 2);
  CHECK(t.summary.tiny_launches == 1);
  REQUIRE(t.sites.size() == 2);
  CHECK(t.sites[0].name == "mid(int*, int) \u2192 leaf(int*, int) (+0x200)");  // no line information
  ch::call_site with_line{"_Z3midPii", "_Z4leafPii", 0x200, "/src/app/children_launches.cu", 10};
  CHECK(ch::site_name(with_line) == "mid(int*, int) \u2192 leaf(int*, int) (children_launches.cu:10, +0x200)");
  CHECK(t.sites[0].launched == 2);
  CHECK(t.sites[0].depth_hist[2] == 2);
  CHECK(t.sites[0].child_blocks == 5);
  CHECK(t.sites[0].stream_launches[static_cast<int>(cdpkit::stream_kind::not_observed)] == 2);
  CHECK(t.sites[1].depth_hist[1] == 1);
  REQUIRE(t.records.size() == 3);
  CHECK(t.records[0].parent == cdpkit::no_record);  // launched by the host's grid
  CHECK(t.records[1].parent == 0);
  CHECK(t.records[2].parent == 0);
  CHECK(t.records[1].start_ns == 320);
  CHECK(t.records[1].end_ns == 380);
  CHECK(t.pending_limit == 2048);
  REQUIRE(back.host_activity.has_value());
  REQUIRE(back.host_activity->kernels.size() == 1);
  CHECK(back.host_activity->kernels[0].name == "_Z4rootPii");
  REQUIRE(back.collector.has_value());
  CHECK(back.collector->requested == std::vector<std::string>{"children"});
}

TEST_CASE("launch sites beyond the trace's 64 pool into one named for them") {
  std::vector<ch::grid_seen> grids = {grid(1, "root", 1, 32, 0, 100, true)};
  std::vector<ch::launch_call> calls;
  for (int k = 0; k < 70; ++k) {
    calls.push_back(call(1, "root", 0x100 + 0x10 * static_cast<std::uint64_t>(k), "leaf", 10 + static_cast<std::uint64_t>(k)));
    grids.push_back(grid(device_id(k), "leaf", 1, 32, 200, 300));
  }
  const ch::linkage link = ch::link_grids(grids, calls);
  std::vector<ch::call_site> sites;
  const cdpkit::trace_snapshot snap = ch::children_snapshot(grids, calls, link, sites);
  REQUIRE(sites.size() == cdpkit::trace_limits::max_sites);
  CHECK(ch::site_name(sites.back()) == "other launch sites");
  CHECK(snap.sites[cdpkit::trace_limits::max_sites - 1].requests == 70 - (cdpkit::trace_limits::max_sites - 1));
  CHECK(snap.records.size() == 70);
}

TEST_CASE("a chain of a hundred thousand tail launches gets its depths, each grid's once") {
  constexpr int n = 100000;
  std::vector<ch::grid_seen> grids = {grid(1, "step", 1, 32, 0, 10, true)};
  std::vector<ch::launch_call> calls;
  for (int k = 0; k < n; ++k) {
    const std::uint64_t caller = k == 0 ? 1 : device_id(k - 1);
    calls.push_back(call(caller, "step", 0x100, "step", 10 + 10 * static_cast<std::uint64_t>(k)));
    grids.push_back(grid(device_id(k), "step", 1, 32, 15 + 10 * static_cast<std::uint64_t>(k), 20 + 10 * static_cast<std::uint64_t>(k)));
  }
  const ch::linkage link = ch::link_grids(grids, calls);
  CHECK(link.depth[1] == 1);
  CHECK(link.depth[n] == static_cast<std::uint32_t>(n));
  CHECK(link.before_call == 0);
}

TEST_CASE("a host grid whose exit was not seen still makes a profile the reader takes") {
  ch::collection c;
  c.grids = {grid(1, "_Z4rootPii", 2, 32, 500, 0, true)};
  c.grids[0].block_exits = 0;
  cdpkit::schema::device_profile dev;
  dev.name = "test device";
  dev.cc = "9.0";
  const nlohmann::json j = cdpkit::schema::profile_json(ch::children_profile(c, "app", "./app", dev, {}));
  const cdpkit::schema::profile back = cdpkit::schema::parse_profile(j.dump(), "children.json");
  REQUIRE(back.host_activity.has_value());
  REQUIRE(back.host_activity->kernels.size() == 1);
  CHECK(back.host_activity->kernels[0].start_ns == 500);
  CHECK(back.host_activity->kernels[0].end_ns == 500);
}
