// plain_recursion — a CDP recursion over a power-law tree written without cdpkit: a one-block grid
// (per 256 children) per node with children, launched by the thread that visits the node. The
// reproducer of the open tree stall (docs/design.md, "Launches from divergent lanes"): does the
// device runtime itself stall, and under which options? A standalone CUDA program.
//
//   plain_recursion NODES [option ...]       prints one line; a stall shows as a hang (use timeout)
//
// Options (key=value):
//   budget=B     the recursion's own pending budget: an atomic count of grids launched and not yet
//                past their last block; a thread refused by it walks its node's subtree itself
//                (preorder, no stack) and asks again at every node with children (0: no budget;
//                a launch that fails is walked the same way)
//   walk=lane    each refused lane walks in a loop of its own and launches where its walk is
//   walk=warp    the warp's lanes step their walks together and launch at one convergent point
//   walk=serial  each refused lane walks its node's subtree in a loop of its own and asks for no
//                launch on the way (launches only from the kernel body's one point)
//   walk=queue   a refused node is appended to a queue; when the recursion is done the host
//                launches a grid over the queue (each thread asks again for its node: launched, or
//                queued for the next round), until the queue is empty; nothing is walked
//   limit=L      cudaLimitDevRuntimePendingLaunchCount (default 65536)
//   seed=S       the tree's generator seed (default 1)
//   barrier=0|1  a block barrier after the body, as cdpkit's child grids have (default 1)
//   bottom_up=0|1  leaves add their subtree sizes up with atomics (default 1); the root's size is
//                then checked against NODES
//   one_lane=0|1 (walk=warp) the lanes that ask together take the budget, then enter the launch
//                one at a time, the others at a __syncwarp (default 0: each lane as its request
//                is decided, refused lanes leaving at once)
//   stall_s=S    the host reads the recursion's progress (launches, refusals, block ends) while it
//                runs; S seconds without any is a stall: one line with the counts, exit 4 (default 5)
// Prints one line: launches, refusals, wall time and the check (exit 0), or the stall (exit 4).
// The tree: node v's fan-out is a Pareto draw with tail exponent 1.2 less one (P(0) = 0.56), nodes
// numbered breadth first, as cdpkit's make_random_tree(..., power_law) makes them.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr unsigned int no_parent = 0xffffffffu;
constexpr unsigned int block_threads = 256;

struct tree_args {
  const unsigned int* off;
  const unsigned int* children;
  const unsigned int* parent;
  const unsigned int* entry;  ///< entry[u]: u's index in children[] (its place among its siblings)
  unsigned int* pending;  ///< children not yet combined (bottom_up)
  unsigned int* size;     ///< subtree sizes (bottom_up)
  int* in_flight;         ///< the recursion's own budget count
  unsigned int* blocks_done;  ///< per node: blocks of its grid past the body
  unsigned int* launches;
  unsigned int* refusals;
  unsigned int* block_ends;  ///< blocks past their body, all grids (the host's progress reading)
  unsigned int* queue;        ///< walk=queue: this round's refused nodes
  unsigned int* queued;       ///< walk=queue: their count
  int budget;
  int mode;  ///< 0 lane, 1 warp, 2 serial, 3 queue
  bool warp_walk, barrier, bottom_up, one_lane;
  __device__ unsigned int count(unsigned int v) const { return off[v + 1] - off[v]; }
};

__device__ void combine_up(const tree_args& t, unsigned int v) {
  while (true) {
    const unsigned int p = t.parent[v];
    if (p == no_parent) return;
    atomicAdd(&t.size[p], __ldcg(&t.size[v]));
    __threadfence();
    if (atomicSub(&t.pending[p], 1u) != 1u) return;
    __threadfence();
    v = p;
  }
}

__device__ void arrive(const tree_args& t, unsigned int v) {
  if (t.bottom_up && t.count(v) == 0) combine_up(t, v);
}

__global__ void node_kernel(tree_args t, unsigned int v);

/// Take a unit of the recursion's budget (true when there is none); a refusal is counted.
__device__ bool take_budget(const tree_args& t) {
  if (t.budget <= 0) return true;
  bool refused = *reinterpret_cast<volatile int*>(t.in_flight) >= t.budget;  // no atomic over budget
  if (!refused && atomicAdd(t.in_flight, 1) >= t.budget) {
    atomicSub(t.in_flight, 1);
    refused = true;
  }
  if (refused) atomicAdd(t.refusals, 1u);
  return !refused;
}

/// Launch node u's grid, its budget taken; a failed launch gives the budget back and is counted as
/// a refusal.
__device__ bool launch_taken(const tree_args& t, unsigned int u) {
  node_kernel<<<(t.count(u) + block_threads - 1) / block_threads, block_threads, 0, cudaStreamFireAndForget>>>(t, u);
  if (cudaGetLastError() != cudaSuccess) {
    if (t.budget > 0) atomicSub(t.in_flight, 1);
    atomicAdd(t.refusals, 1u);
    return false;
  }
  atomicAdd(t.launches, 1u);
  return true;
}

__device__ bool try_launch(const tree_args& t, unsigned int u) { return take_budget(t) && launch_taken(t, u); }

/// one_lane=1: called by every lane of the warp, converged; the lanes that `want` a grid for their
/// node u take the budget first, then enter the launch one at a time (the others at __syncwarp).
__device__ bool launch_one_lane_at_a_time(const tree_args& t, bool want, unsigned int u) {
  const bool ok = want && take_budget(t);
  unsigned int lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  bool launched = false;
  unsigned int todo = __ballot_sync(0xffffffffu, ok);
  while (todo != 0u) {
    if (lane == static_cast<unsigned int>(__ffs(static_cast<int>(todo)) - 1)) launched = launch_taken(t, u);
    todo &= todo - 1u;
    __syncwarp();
  }
  return launched;
}

/// From u, the next node of the preorder walk of s's subtree after u's subtree: a next sibling of u
/// or of an ancestor below s (false: the walk is over).
__device__ bool next_across(const tree_args& t, unsigned int s, unsigned int& u) {
  while (u != s) {
    const unsigned int p = t.parent[u];
    const unsigned int e = t.entry[u];  // O(1): a search among the siblings is quadratic in the fan-out
    if (e + 1 < t.off[p + 1]) {
      u = t.children[e + 1];
      arrive(t, u);
      return true;
    }
    u = p;
  }
  return false;
}

/// walk=lane: this lane's own loop, launching where it is.
__device__ void walk_lane(const tree_args& t, unsigned int s) {
  unsigned int u = s;
  while (true) {
    bool down = t.count(u) > 0;
    if (down && u != s && try_launch(t, u)) down = false;
    if (down) {
      u = t.children[t.off[u]];
      arrive(t, u);
      continue;
    }
    if (!next_across(t, s, u)) return;
  }
}

/// walk=serial: this lane's own loop over s's subtree, asking for no launch.
__device__ void walk_serial(const tree_args& t, unsigned int s) {
  unsigned int u = s;
  while (true) {
    if (t.count(u) > 0) {
      u = t.children[t.off[u]];
      arrive(t, u);
      continue;
    }
    if (!next_across(t, s, u)) return;
  }
}

/// walk=warp: every lane of the warp steps together; the step's launches from converged lanes.
__device__ void walk_warp(const tree_args& t, unsigned int s, bool active) {
  unsigned int u = s;
  while (__any_sync(0xffffffffu, active)) {
    const bool down = active && t.count(u) > 0;
    const bool ask = down && u != s;
    __syncwarp();
    const bool launched = t.one_lane ? launch_one_lane_at_a_time(t, ask, u) : ask && try_launch(t, u);
    __syncwarp();
    if (!active) continue;
    if (down && !launched) {
      u = t.children[t.off[u]];
      arrive(t, u);
    } else {
      active = next_across(t, s, u);
    }
  }
}

__global__ void node_kernel(tree_args t, unsigned int v) {
  const unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
  bool walk = false;
  unsigned int u = 0;
  if (t.one_lane) {  // every lane of the warp decides, then the launches one lane at a time
    const bool mine = k < t.count(v);
    if (mine) {
      u = t.children[t.off[v] + k];
      arrive(t, u);
    }
    const bool want = mine && t.count(u) > 0;
    __syncwarp();
    const bool launched = launch_one_lane_at_a_time(t, want, u);  // every lane calls it (its warp votes)
    walk = want && !launched;
  } else if (k < t.count(v)) {
    u = t.children[t.off[v] + k];
    arrive(t, u);
    walk = t.count(u) > 0 && !try_launch(t, u);
  }
  if (t.mode == 3) {
    if (walk) t.queue[atomicAdd(t.queued, 1u)] = u;
  } else if (t.mode == 2) {
    if (walk) walk_serial(t, u);
  } else if (t.warp_walk) walk_warp(t, u, walk);
  else if (walk) walk_lane(t, u);
  if (t.barrier) __syncthreads();
  if (threadIdx.x == 0) atomicAdd(t.block_ends, 1u);
  if (t.budget > 0 && threadIdx.x == 0) {  // the grid's last block gives its budget back
    __threadfence();
    if (atomicAdd(&t.blocks_done[v], 1u) == gridDim.x - 1 && t.parent[v] != no_parent) atomicSub(t.in_flight, 1);
  }
}

/// walk=queue: a round over the refused nodes `from` (count `n`): each thread asks again for its
/// node's grid; refused again, into the next round's queue (t.queue).
__global__ void round_kernel(tree_args t, const unsigned int* from, unsigned int n) {
  const unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) {
    const unsigned int u = from[k];
    if (!try_launch(t, u)) t.queue[atomicAdd(t.queued, 1u)] = u;
  }
}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "plain_recursion: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

int usage(const std::string& why) {
  std::fprintf(stderr,
               "plain_recursion: %s\nusage: plain_recursion NODES [budget=B] [walk=lane|warp|serial|queue] [limit=L] [seed=S] "
               "[barrier=0|1] [bottom_up=0|1] [stall_s=S] [one_lane=0|1]\n",
               why.c_str());
  return 2;
}

bool parse_long(const char* text, long lo, long hi, long& out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

template <class T>
bool upload(T** d, const std::vector<T>& h) {
  return check(cudaMalloc(d, sizeof(T) * std::max<std::size_t>(h.size(), 1)), "cudaMalloc") &&
         (h.empty() || check(cudaMemcpy(*d, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice), "cudaMemcpy"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("expected NODES");
  long nodes = 0, budget = 2048, limit = 65536, seed = 1, barrier = 1, bottom_up = 1, stall_s = 5, one_lane = 0;
  if (!parse_long(argv[1], 2, 1L << 26, nodes)) return usage("NODES must be an integer in [2, 2^26]");
  bool warp_walk = false;
  int mode = 0;
  for (int a = 2; a < argc; ++a) {
    const std::string arg = argv[a];
    const auto eq = arg.find('=');
    if (eq == std::string::npos) return usage("expected key=value, got '" + arg + "'");
    const std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
    bool ok = true;
    if (key == "walk") {
      ok = value == "lane" || value == "warp" || value == "serial" || value == "queue";
      warp_walk = value == "warp";
      mode = value == "lane" ? 0 : value == "warp" ? 1 : value == "serial" ? 2 : 3;
    } else if (key == "budget") ok = parse_long(value.c_str(), 0, 1L << 24, budget);
    else if (key == "limit") ok = parse_long(value.c_str(), 1, 1L << 24, limit);
    else if (key == "seed") ok = parse_long(value.c_str(), 0, 1L << 62, seed);
    else if (key == "barrier") ok = parse_long(value.c_str(), 0, 1, barrier);
    else if (key == "bottom_up") ok = parse_long(value.c_str(), 0, 1, bottom_up);
    else if (key == "stall_s") ok = parse_long(value.c_str(), 1, 3600, stall_s);
    else if (key == "one_lane") ok = parse_long(value.c_str(), 0, 1, one_lane);
    else return usage("unknown option '" + key + "'");
    if (!ok) return usage("bad value in '" + arg + "'");
  }
  if (one_lane != 0 && mode == 0) return usage("one_lane=1 needs walk=warp, serial or queue (the warp's lanes step together)");
  const char* const walk_names[] = {"lane", "warp", "serial", "queue"};
  // the tree, breadth first: node v's fan-out a Pareto draw (tail exponent 1.2) less one
  const auto n = static_cast<unsigned int>(nodes);
  std::vector<unsigned int> parent(n);
  parent[0] = no_parent;
  std::uint64_t state = 0x9e3779b97f4a7c15ull ^ static_cast<std::uint64_t>(seed);
  const auto uniform_open0 = [&] {  // xorshift64*, in (0, 1]
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return (static_cast<double>((state * 0x2545f4914f6cdd1dull) >> 11) + 1.0) / 9007199254740992.0;
  };
  unsigned int next = 1;
  for (unsigned int v = 0; next < n; ++v) {
    const double x = std::pow(uniform_open0(), -1.0 / 1.2);
    unsigned long long k = x >= 65537.0 ? 65536ull : static_cast<unsigned long long>(x) - 1;
    if (k == 0 && v + 1 == next) k = 1;  // the last open node: the tree goes on growing
    k = std::min<unsigned long long>(k, n - next);
    for (unsigned long long j = 0; j < k; ++j) parent[next++] = v;
  }
  std::vector<unsigned int> off(n + 1, 0), children(n - 1), pending(n), size(n, 1);
  for (unsigned int v = 1; v < n; ++v) ++off[parent[v] + 1];
  for (unsigned int v = 0; v < n; ++v) off[v + 1] += off[v];
  std::vector<unsigned int> fill(off.begin(), off.end() - 1), entry(n, 0);
  for (unsigned int v = 1; v < n; ++v) {
    entry[v] = fill[parent[v]];
    children[fill[parent[v]]++] = v;
  }
  unsigned int height = 0, max_fanout = 0;
  std::vector<unsigned int> depth(n, 0);
  for (unsigned int v = 0; v < n; ++v) {
    pending[v] = off[v + 1] - off[v];
    max_fanout = std::max(max_fanout, pending[v]);
    if (v > 0) height = std::max(height, depth[v] = depth[parent[v]] + 1);
  }

  int count = 0;
  if (!check(cudaGetDeviceCount(&count), "no CUDA device") || count == 0) return 3;
  if (!check(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, static_cast<std::size_t>(limit)),
             "cudaDeviceSetLimit"))
    return 1;
  tree_args t{};
  unsigned int *d_off = nullptr, *d_children = nullptr, *d_parent = nullptr, *d_entry = nullptr, *d_pending = nullptr,
               *d_size = nullptr, *d_counters = nullptr, *d_queue = nullptr, *d_queued = nullptr;
  // counters: [0, n) blocks done per node's grid; n launches; n+1 refusals; n+2 in flight; n+3 block ends
  if (!upload(&d_off, off) || !upload(&d_children, children) || !upload(&d_parent, parent) ||
      !upload(&d_entry, entry) || !upload(&d_pending, pending) || !upload(&d_size, size) ||
      !check(cudaMalloc(&d_counters, sizeof(unsigned int) * (n + 4)), "cudaMalloc") ||
      !check(cudaMemset(d_counters, 0, sizeof(unsigned int) * (n + 4)), "cudaMemset") ||
      !check(cudaMalloc(&d_queue, sizeof(unsigned int) * 2 * n), "cudaMalloc") ||
      !check(cudaMalloc(&d_queued, sizeof(unsigned int) * 2), "cudaMalloc") ||
      !check(cudaMemset(d_queued, 0, sizeof(unsigned int) * 2), "cudaMemset"))
    return 1;
  t = tree_args{d_off, d_children, d_parent, d_entry, d_pending, d_size, reinterpret_cast<int*>(d_counters + n + 2),
                d_counters, d_counters + n, d_counters + n + 1, d_counters + n + 3, d_queue, d_queued,
                static_cast<int>(budget), mode, warp_walk, barrier != 0, bottom_up != 0, one_lane != 0};
  // The recursion on a stream of its own; the host reads its progress (launches, refusals, block
  // ends) on another while it runs: slow is told from stopped. No progress for `stall_s` seconds
  // is a stall (exit 4), with what was counted.
  cudaStream_t work = nullptr, watch = nullptr;
  unsigned int* h_progress = nullptr;
  if (!check(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking), "cudaStreamCreate") ||
      !check(cudaStreamCreateWithFlags(&watch, cudaStreamNonBlocking), "cudaStreamCreate") ||
      !check(cudaMallocHost(&h_progress, sizeof(unsigned int) * 4), "cudaMallocHost"))
    return 1;
  const auto t0 = std::chrono::steady_clock::now();
  unsigned int last[3] = {0, 0, 0};
  auto last_change = std::chrono::steady_clock::now();
  const auto wait_watched = [&] {  // false: a CUDA error (printed); a stall exits 4
    while (true) {
      const cudaError_t q = cudaStreamQuery(work);
      if (q == cudaSuccess) return true;
      if (q != cudaErrorNotReady) return check(q, "the recursion");
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (!check(cudaMemcpyAsync(h_progress, d_counters + n, sizeof(unsigned int) * 4, cudaMemcpyDeviceToHost, watch),
                 "progress copy") ||
          !check(cudaStreamSynchronize(watch), "progress copy"))
        return false;
      const unsigned int now[3] = {h_progress[0], h_progress[1], h_progress[3]};
      const auto clock = std::chrono::steady_clock::now();
      if (now[0] != last[0] || now[1] != last[1] || now[2] != last[2]) {
        std::copy(now, now + 3, last);
        last_change = clock;
      } else if (std::chrono::duration<double>(clock - last_change).count() >= static_cast<double>(stall_s)) {
        std::printf("plain_recursion %u nodes, walk=%s budget=%ld limit=%ld one_lane=%ld: STALL: no launch, refusal or "
                    "block end for %ld s (launches %u, refusals %u, block ends %u, in flight %d)\n",
                    n, walk_names[mode], budget, limit, one_lane, stall_s, now[0], now[1], now[2],
                    static_cast<int>(h_progress[2]));
        std::fflush(stdout);
        std::_Exit(4);  // the device is stuck: no clean-up can finish
      }
    }
  };
  node_kernel<<<(pending[0] + block_threads - 1) / block_threads, block_threads, 0, work>>>(t, 0);
  if (!check(cudaGetLastError(), "launch") || !wait_watched()) return 1;
  unsigned int rounds = 0;
  for (unsigned int cur = 0; mode == 3; cur ^= 1u) {  // walk=queue: rounds over the refused nodes
    unsigned int queued = 0;
    if (!check(cudaMemcpy(&queued, d_queued + cur, sizeof(queued), cudaMemcpyDeviceToHost), "cudaMemcpy")) return 1;
    if (queued == 0) break;
    ++rounds;
    t.queue = d_queue + static_cast<std::size_t>(cur ^ 1u) * n;
    t.queued = d_queued + (cur ^ 1u);
    if (!check(cudaMemsetAsync(t.queued, 0, sizeof(unsigned int), work), "cudaMemset")) return 1;
    round_kernel<<<(queued + block_threads - 1) / block_threads, block_threads, 0, work>>>(
        t, d_queue + static_cast<std::size_t>(cur) * n, queued);
    if (!check(cudaGetLastError(), "launch") || !wait_watched()) return 1;
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  unsigned int counters[2] = {0, 0}, root_size = 0;
  if (!check(cudaMemcpy(counters, d_counters + n, sizeof(counters), cudaMemcpyDeviceToHost), "cudaMemcpy") ||
      !check(cudaMemcpy(&root_size, d_size, sizeof(root_size), cudaMemcpyDeviceToHost), "cudaMemcpy"))
    return 1;
  std::printf("plain_recursion %u nodes (height %u, widest %u), walk=%s budget=%ld limit=%ld barrier=%ld bottom_up=%ld "
              "one_lane=%ld: %u launches, %u refused, %u host rounds, %.1f ms; %s\n",
              n, height, max_fanout, walk_names[mode], budget, limit, barrier, bottom_up, one_lane, counters[0],
              counters[1], rounds, ms, bottom_up == 0 ? "not checked" : root_size == n ? "subtree sizes right" : "WRONG root size");
  for (auto* p : {d_off, d_children, d_parent, d_entry, d_pending, d_size, d_counters, d_queue, d_queued}) (void)cudaFree(p);
  (void)cudaFreeHost(h_progress);
  (void)cudaStreamDestroy(work);
  (void)cudaStreamDestroy(watch);
  return bottom_up != 0 && root_size != n ? 1 : 0;
}
