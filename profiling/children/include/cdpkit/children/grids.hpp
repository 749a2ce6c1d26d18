#pragma once
// cdpkit/children/grids.hpp — from what the children collector's patches saw (every grid's blocks,
// every device-side launch call) to the launch tree: which call made which grid, its parent and
// depth, and the profile records the launch layer writes (so the report's launch tree, child-grid
// histograms, tiny-grid findings and Perfetto export read an unmodified program's grids as they
// read cdpkit's own). Host C++ only: the device half is profiling/children/tool.
//
// The link between a launch call and the grid it made: the patches see the call (its grid, its
// code offset, the time) and, separately, the new grid (its %gridid, kernel, size, blocks, times),
// but nothing that names both. The code names the kernel each call launches (cubin.hpp), and the
// device runtime numbers the grids it launches downward (%gridid -5, -6, ...:
// bench/probes/results); so the grids of one kernel, in the order of their ids, are paired with
// the calls that launch that kernel, in the order of their times. The counts per kernel are
// exact, and so are those per call site but for failed launches of a kernel launched from several
// sites, and each grid's blocks and times; a grid's parent and depth are
// exact only where the launches of one kernel do not overlap in time (measured against
// self-counting workloads: docs/profiling.md). A kernel with fewer grids than calls had failed
// launches: the calls left over are taken as the failed ones (the count is exact; which call
// failed is not seen).
//
// What is proved: a grid starts after the call that made it. Walking a kernel's grids by start,
// where the calls made before a grid started that no earlier grid surely took are one call, that
// pair is forced (it replaces the id order's); where they all come from one grid, that grid is
// surely the parent. A depth is certain where every parent up to a host grid is; the profile says
// how many are.

#include <cdpkit/schema/profile.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cdpkit::children {

/// A grid as the block-entry and block-exit patches saw it.
struct grid_seen {
  std::uint64_t gridid = 0;          ///< %gridid
  std::string kernel;                ///< the kernel (mangled); empty: not known
  std::uint64_t blocks = 0;          ///< %nctaid.x * .y * .z
  std::uint64_t block_threads = 0;   ///< %ntid.x * .y * .z
  std::uint64_t block_entries = 0;   ///< blocks seen entering (thread 0 of each)
  std::uint64_t block_exits = 0;     ///< blocks seen leaving
  std::uint64_t first_ns = ~0ull;    ///< %globaltimer at the first block entry; ~0: no entry seen
  std::uint64_t last_ns = 0;         ///< %globaltimer at the last block exit; 0: no exit seen
  bool host_launched = false;        ///< the launch callback saw a host launch with this grid id
};

/// A call of the device runtime's launch entry, as the call patch saw it.
struct launch_call {
  std::uint64_t caller_gridid = 0;  ///< the calling grid's %gridid
  std::string caller;               ///< the calling function (mangled)
  std::uint64_t offset = 0;         ///< the call instruction's offset in the caller
  std::string child;                ///< the kernel the code launches there (cubin.hpp); empty: not known
  std::string file;                 ///< the call's source file (cubin.hpp); empty: the cubin has no line information
  std::uint32_t line = 0;           ///< its line there
  std::uint64_t t_ns = 0;           ///< %globaltimer at the call
};

/// Which call made which grid.
struct linkage {
  std::vector<std::optional<std::size_t>> call_of;    ///< per grid: the call that made it (device grids)
  std::vector<std::optional<std::size_t>> grid_of;    ///< per call: the grid it made; unset: failed
  std::vector<std::optional<std::size_t>> parent_of;  ///< per grid: the grid that launched it
  std::vector<std::uint32_t> depth;                   ///< per grid: 0 for the host's, parent's + 1
  std::uint64_t device_grids = 0;      ///< grids the host did not launch
  std::uint64_t unexplained_grids = 0; ///< device grids no call of their kernel explains
  std::uint64_t failed_calls = 0;      ///< calls no grid answers (failed launches)
  std::uint64_t before_call = 0;       ///< grids paired with a call made after they started (wrong pairs)
  std::uint64_t unknown_parent = 0;    ///< calls from a grid that was never seen
  std::vector<bool> parent_certain;    ///< per grid: its parent is proved by the clock (below)
  std::vector<bool> depth_certain;     ///< per grid: every parent up to a host grid is
  std::uint64_t forced_pairs = 0;      ///< grids whose call the clock proves (the only one possible)
  std::uint64_t certain_depths = 0;    ///< device grids whose depth_certain is set
};

/// Link every device-launched grid to the call that made it (see the header's comment).
/// `complete`: no grid or call row was lost; where some were, nothing is claimed as proved.
linkage link_grids(const std::vector<grid_seen>& grids, const std::vector<launch_call>& calls, bool complete = true);

/// A launch site of the profile: one call instruction of one function.
struct call_site {
  std::string caller, child;
  std::uint64_t offset = 0;
  std::string file;        ///< the call's source file; empty: not known
  std::uint32_t line = 0;
};

/// The launch trace in the launch layer's form: one record per launch call (a grid launched, or
/// a failed launch), ordered by time; its site the call instruction (at most
/// trace_limits::max_sites - 1 of them by calls, the rest pooled in the last); stream
/// not_observed; work not given (0); a grid with fewer threads than a warp has lanes counts as
/// tiny. `sites` receives the sites by id.
trace_snapshot children_snapshot(const std::vector<grid_seen>& grids, const std::vector<launch_call>& calls,
                                 const linkage& link, std::vector<call_site>& sites);

/// Everything one program's collection gathered.
struct collection {
  std::vector<grid_seen> grids;
  std::vector<launch_call> calls;
  std::vector<std::string> notes;     ///< the collector's own ("children: ...")
  std::uint64_t grids_lost = 0;       ///< grids past the buffer's rows (not in `grids`)
  std::uint64_t calls_lost = 0;       ///< launch calls past the buffer's rows
  std::uint64_t pending_limit = 0;    ///< cudaLimitDevRuntimePendingLaunchCount (0: not read)
  double readback_ms = 0;             ///< the host's time reading the rows back and clearing them
  std::uint64_t readbacks = 0;        ///< how often it did
  std::optional<std::string> incomplete;  ///< why the collection ended before the program did
};

/// The profile of a collection: one run (algorithm "injected", variant "children", input the
/// command line, ms the span from the first grid's start to the last grid's end) whose trace is
/// children_snapshot's, the host-launched grids as the host activity (times on %globaltimer, the
/// trace's clock), and the collector's notes: what the linkage could not explain, what the
/// collection lost and what it cost the program where this run measured it (the read-backs).
/// `build` is the collector's build description.
schema::profile children_profile(const collection& c, const std::string& program, const std::string& input,
                                 const schema::device_profile& device, const nlohmann::json& build);

/// The site's name in the profile: "caller → child (file.cu:10, +0x1e0)", demangled (the file's
/// name and line where the cubin has line information, else the offset alone); "other launch sites"
/// for the pooled one (an empty caller).
std::string site_name(const call_site& site);

}  // namespace cdpkit::children
