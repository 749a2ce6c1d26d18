// cdp_workloads — CUDA Dynamic Parallelism workloads that know nothing of cdpkit (the CUDA runtime
// and cudadevrt only) and count, on their own, every grid they launch from the device: the counts
// a profiler of unmodified CDP programs must reproduce exactly.
//
//   cdp_workloads <workload> [size]
//     quicksort [n]      n random u32 keys (default 2^20): a block partitions its segment and
//                        launches both halves as child grids, each in a cudaStreamNonBlocking stream
//                        made on the device; at most 1024 keys: bitonic sort; past depth 24: heap sort
//     bezier [n]         n Bezier lines (default 4096): a thread per line mallocs its vertices on the
//                        device and launches a child grid to fill them; a host launch checks and frees
//     quadtree [n]       n random points (default 2^16): a node of more than 32 points splits, one
//                        one-block child grid per non-empty quadrant; every point in exactly one leaf
//     tail_chain [n]     a chain of n grids (default 1000), the first launched by the host, each
//                        tail-launching the next; a refused launch hands the rest back to the host
//     pending_limit [n]  cudaLimitDevRuntimePendingLaunchCount = 256, then one thread launches n
//                        children (default 8192) that hold their entries: launches past it fail
//     flat [n]           n blocks (default 2^16) of 256 threads, each thread 1024 steps of a
//                        generator: a program without device launches, for what a tool costs per block
//
// Every device launch is checked with cudaGetLastError() right after its <<<>>> and counted
// atomically: grids launched, launches failed (their work then done by the launching thread),
// blocks launched, grids by depth (host-launched grid 0, its children 1, ...; a tail-launched grid
// is its launcher's child too). Independently, thread 0 of every block of a device-launched grid
// counts the block when it starts, and of block 0 the grid. Host launches are counted on the host.
// CDP_WORKLOADS_TRUTH=<file>: the quicksort's and the quadtree's device-launched grids, each with
// its %gridid, its parent's and its depth, one JSON object a line (the program's own account of
// who launched whom, against which a profiler's pairing of grids and launches is studied).
// One line reports a run:
//   cdp_workloads: <workload> size=N host_grids=H device_grids=G failed_launches=F device_blocks=B
//   depths=D grids_started=S blocks_started=T verified=yes|no ms=M
// (one line; D is depth:grids for each depth with a launched grid, ascending, comma-separated, or
// "none"; M the milliseconds of the host launches, each from its <<<>>> to the synchronization
// after it: what a tool attached to the program costs shows there). Exit codes: 0 output verified and every count agrees; 1 wrong output, counts that
// disagree or a CUDA error (stderr names it); 2 bad command line; 77 no usable CUDA device (the
// line "cdp_workloads: no usable CUDA device" says so).

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using u32 = std::uint32_t;
using u64 = unsigned long long;

constexpr int depth_slots = 1 << 14;  // the depth histogram: the longest tail chain's depths
constexpr u32 rng_seed = 20240611u;
constexpr std::size_t tree_pending_limit = 1 << 18;  // quicksort's and quadtree's: above every grid of the largest sizes

constexpr int qs_threads = 256, qs_max_depth = 24;
constexpr u32 qs_cutoff = 1024;  // a segment of at most this many keys is sorted in shared memory

constexpr int bz_parent_threads = 64, bz_child_threads = 32, bz_min_vertices = 4, bz_max_vertices = 256;
constexpr float bz_vertices_per_curvature = 128.0f;

constexpr int qt_threads = 128, qt_max_depth = 16;
constexpr u32 qt_min_points = 32;  // a node of at most this many points is a leaf

constexpr int chain_blocks = 2, chain_threads = 32;
constexpr u32 chain_none = 0xffffffffu;

constexpr std::size_t pl_limit = 256;  // the pending-launch limit pending_limit sets
constexpr int pl_child_threads = 32;
constexpr u64 pl_hold_ns = 100000000ull;

}  // namespace

// Kernels and the types of their parameters are at global scope, so that their names are plain.

/// What the device counts. Launches at the launch sites; starts in the launched grids.
struct launch_counts {
  u64 grids;           ///< device launches that returned cudaSuccess
  u64 failed;          ///< device launches that returned an error
  u64 failed_pending;  ///< of them, cudaErrorLaunchPendingCountExceeded
  u64 blocks;          ///< blocks of the grids launched
  u64 grids_started;   ///< device-launched grids whose block 0 started
  u64 blocks_started;  ///< blocks of device-launched grids that started
  u64 device_errors;   ///< device-side malloc or stream creation failures
  u64 wrong;           ///< wrong values a workload found on the device
  u64 depth[depth_slots];
};

__device__ launch_counts g_counts;

/// Who launched whom, as the program knows it: each device-launched grid of the quicksort and the
/// quadtree (their launches overlap in time) logs its own %gridid, its parent's (passed to it) and
/// its depth, for studying how a profiler pairs grids with launches (CDP_WORKLOADS_TRUTH).
struct truth_entry {
  u64 grid, parent;
  u64 depth;
};
constexpr u32 truth_capacity = 1u << 20;
__device__ truth_entry g_truth[truth_capacity];
__device__ u64 g_truth_count;

static __device__ u64 own_gridid() {
  u64 id;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(id));
  return id;
}

/// Block 0's thread 0 of a device-launched grid logs it.
static __device__ void log_truth(u64 parent, int depth) {
  if (depth == 0 || threadIdx.x != 0 || blockIdx.x != 0) return;
  const u64 k = atomicAdd(&g_truth_count, 1ull);
  if (k < truth_capacity) g_truth[k] = truth_entry{own_gridid(), parent, static_cast<u64>(depth)};
}

/// Thread 0 of each block of a device-launched grid (depth > 0) counts the block, block 0 the grid.
static __device__ void note_started(int depth) {
  if (depth == 0 || threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0) return;
  atomicAdd(&g_counts.blocks_started, 1ull);
  if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) atomicAdd(&g_counts.grids_started, 1ull);
}

/// Called right after a device <<<>>> of `blocks` blocks at `child_depth`: counts the outcome;
/// true when the grid was launched.
static __device__ bool launch_counted(int child_depth, u64 blocks) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    atomicAdd(&g_counts.failed, 1ull);
    if (e == cudaErrorLaunchPendingCountExceeded) atomicAdd(&g_counts.failed_pending, 1ull);
    return false;
  }
  atomicAdd(&g_counts.grids, 1ull);
  atomicAdd(&g_counts.blocks, blocks);
  atomicAdd(&g_counts.depth[min(child_depth, depth_slots - 1)], 1ull);
  return true;
}

// ---- quicksort --------------------------------------------------------------------------------

static __device__ void swap_keys(u32& a, u32& b) {
  const u32 t = a;
  a = b;
  b = t;
}

/// The block sorts keys[0, size) (size <= qs_cutoff) in shared memory; every thread calls it.
static __device__ void bitonic_sort_block(u32* keys, u32 size, u32* tile) {
  u32 padded = 2;
  while (padded < size) padded <<= 1;
  for (u32 i = threadIdx.x; i < padded; i += blockDim.x) tile[i] = i < size ? keys[i] : 0xffffffffu;
  __syncthreads();
  for (u32 k = 2; k <= padded; k <<= 1) {
    for (u32 j = k >> 1; j > 0; j >>= 1) {
      for (u32 i = threadIdx.x; i < padded; i += blockDim.x) {
        const u32 partner = i ^ j;
        if (partner > i && (tile[i] > tile[partner]) == ((i & k) == 0)) swap_keys(tile[i], tile[partner]);
      }
      __syncthreads();
    }
  }
  for (u32 i = threadIdx.x; i < size; i += blockDim.x) keys[i] = tile[i];
  __syncthreads();
}

/// One thread sorts keys[0, size), 2 <= size: past the depth limit, or a large half not launched.
static __device__ void heap_sort(u32* keys, u32 size) {
  auto sift_down = [keys](u32 root, u32 end) {
    for (u32 child = 2 * root + 1; child < end; child = 2 * root + 1) {
      if (child + 1 < end && keys[child + 1] > keys[child]) ++child;
      if (keys[root] >= keys[child]) return;
      swap_keys(keys[root], keys[child]);
      root = child;
    }
  };
  for (u32 i = size / 2; i-- > 0;) sift_down(i, size);
  for (u32 end = size - 1; end > 0; --end) {
    swap_keys(keys[0], keys[end]);
    sift_down(0, end);
  }
}

/// The block sorts keys[0, size) without launching: bitonic when it fits, else one thread.
static __device__ void sort_inline(u32* keys, u32 size, u32* tile) {
  if (size <= qs_cutoff) bitonic_sort_block(keys, size, tile);
  else if (threadIdx.x == 0) heap_sort(keys, size);
}

static __device__ u32 median3(u32 a, u32 b, u32 c) { return max(min(a, b), min(max(a, b), c)); }

/// Sorts keys[lo, hi). One block: it partitions around a median of three (less, equal, greater;
/// the placement is deterministic, so the grids launched are too) and launches each half of two
/// or more keys as a child grid in its own non-blocking stream.
__global__ void qs_segment(u32* keys, u32* scratch, u32 lo, u32 hi, int depth, u64 parent) {
  __shared__ u32 tile[qs_cutoff];
  __shared__ u32 warp_count[qs_threads / 32];  // a warp's keys of a tile: less | greater << 16
  __shared__ int not_launched[2];
  note_started(depth);
  log_truth(parent, depth);
  const u32 size = hi - lo;
  if (size <= qs_cutoff || depth >= qs_max_depth) return sort_inline(keys + lo, size, tile);
  const u32 pivot = median3(keys[lo], keys[lo + size / 2], keys[hi - 1]);
  const u32 lane = threadIdx.x % 32, warp = threadIdx.x / 32, below = (1u << lane) - 1;
  u32 n_lt = 0, n_gt = 0;  // placed so far, the same in every thread
  for (u32 start = lo; start < hi; start += blockDim.x) {
    const u32 i = start + threadIdx.x;
    const u32 k = i < hi ? keys[i] : pivot;
    const u32 lt = __ballot_sync(0xffffffffu, k < pivot), gt = __ballot_sync(0xffffffffu, k > pivot);
    if (lane == 0) warp_count[warp] = __popc(lt) | (__popc(gt) << 16);
    __syncthreads();
    u32 before = 0, tile_count = 0;  // the tile's keys in the warps before this one, in all of them
    for (u32 w = 0; w < blockDim.x / 32; ++w) {
      tile_count += warp_count[w];
      if (w < warp) before += warp_count[w];
    }
    if (k < pivot) scratch[lo + n_lt + (before & 0xffff) + __popc(lt & below)] = k;
    if (k > pivot) scratch[hi - 1 - (n_gt + (before >> 16) + __popc(gt & below))] = k;
    n_lt += tile_count & 0xffff;
    n_gt += tile_count >> 16;
    __syncthreads();  // warp_count read by all before the next tile writes it
  }
  for (u32 i = lo + threadIdx.x; i < hi; i += blockDim.x)
    keys[i] = i < lo + n_lt || i >= hi - n_gt ? scratch[i] : pivot;
  __threadfence();
  __syncthreads();
  const u32 half_lo[2] = {lo, hi - n_gt}, half_size[2] = {n_lt, n_gt};
  if (threadIdx.x == 0) {
    for (int h = 0; h < 2; ++h) {
      not_launched[h] = 0;
      if (half_size[h] < 2) continue;
      cudaStream_t s;
      if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        (void)cudaGetLastError();  // not a launch's error: the next launch's check must not see it
        atomicAdd(&g_counts.device_errors, 1ull);
        not_launched[h] = 1;
        continue;
      }
      qs_segment<<<1, qs_threads, 0, s>>>(keys, scratch, half_lo[h], half_lo[h] + half_size[h], depth + 1,
                                          own_gridid());
      not_launched[h] = !launch_counted(depth + 1, 1);
      if (cudaStreamDestroy(s) != cudaSuccess) {
        (void)cudaGetLastError();
        atomicAdd(&g_counts.device_errors, 1ull);
      }
    }
  }
  __syncthreads();
  for (int h = 0; h < 2; ++h)
    if (not_launched[h]) sort_inline(keys + half_lo[h], half_size[h], tile);
}

// ---- bezier -----------------------------------------------------------------------------------

struct bezier_line {
  float2 cp[3];
  float2* vertices = nullptr;  ///< malloc'ed on the device by the line's parent thread
  int n_vertices = 0;
};

/// Vertex i of n: u = i / (n - 1) exactly 0 and 1 at the ends, so the ends are p0 and p2 exactly.
static __device__ void bezier_vertex(float2 p0, float2 p1, float2 p2, float2* out, int n, int i) {
  const float u = static_cast<float>(i) / static_cast<float>(n - 1);
  const float a = (1.0f - u) * (1.0f - u), b = 2.0f * u * (1.0f - u), c = u * u;
  out[i] = make_float2(a * p0.x + b * p1.x + c * p2.x, a * p0.y + b * p1.y + c * p2.y);
}

/// Fills a line's n vertices, a thread each.
__global__ void bezier_fill(float2 p0, float2 p1, float2 p2, float2* out, int n, int depth) {
  note_started(depth);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) bezier_vertex(p0, p1, p2, out, n, i);
}

/// A thread per line: the tessellation from the curvature, the vertices malloc'ed, a child grid.
__global__ void bezier_lines(bezier_line* lines, int n, int depth) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float2 p0 = lines[i].cp[0], p1 = lines[i].cp[1], p2 = lines[i].cp[2];
  const float mid = hypotf(p1.x - 0.5f * (p0.x + p2.x), p1.y - 0.5f * (p0.y + p2.y));
  const float curvature = mid / fmaxf(hypotf(p2.x - p0.x, p2.y - p0.y), 1e-6f);
  const float extra = fminf(curvature * bz_vertices_per_curvature, static_cast<float>(bz_max_vertices));
  const int n_vertices = min(bz_max_vertices, bz_min_vertices + static_cast<int>(extra));
  float2* out = static_cast<float2*>(malloc(n_vertices * sizeof(float2)));
  lines[i].vertices = out;
  lines[i].n_vertices = out ? n_vertices : 0;
  if (!out) {
    atomicAdd(&g_counts.device_errors, 1ull);
    return;
  }
  const int blocks = (n_vertices + bz_child_threads - 1) / bz_child_threads;
  bezier_fill<<<blocks, bz_child_threads>>>(p0, p1, p2, out, n_vertices, depth + 1);
  if (!launch_counted(depth + 1, blocks))
    for (int k = 0; k < n_vertices; ++k) bezier_vertex(p0, p1, p2, out, n_vertices, k);
}

/// A thread per line: the ends are the end control points, every vertex lies in the unit square
/// (as the control points do, and a Bezier curve lies in their convex hull); then frees them.
__global__ void bezier_check_and_free(bezier_line* lines, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || lines[i].vertices == nullptr) return;
  const bezier_line l = lines[i];
  const float2* v = l.vertices;
  u64 bad = v[0].x != l.cp[0].x || v[0].y != l.cp[0].y || v[l.n_vertices - 1].x != l.cp[2].x ||
            v[l.n_vertices - 1].y != l.cp[2].y;
  for (int k = 0; k < l.n_vertices; ++k) bad += !(v[k].x >= 0.0f && v[k].x <= 1.0f && v[k].y >= 0.0f && v[k].y <= 1.0f);
  if (bad != 0) atomicAdd(&g_counts.wrong, bad);
  free(l.vertices);
}

// ---- quadtree ---------------------------------------------------------------------------------

struct box {
  float x0, y0, x1, y1;  ///< [x0, x1) x [y0, y1)
};

/// A leaf: each of its points counted once in hits, and checked to lie in the leaf's box.
static __device__ void quadtree_leaf(const float2* points, const u32* ids, u32 begin, u32 end, box b, u32* hits) {
  for (u32 i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const u32 id = ids[i];
    const float2 p = points[id];
    atomicAdd(&hits[id], 1u);
    if (!(p.x >= b.x0 && p.x < b.x1 && p.y >= b.y0 && p.y < b.y1)) atomicAdd(&g_counts.wrong, 1ull);
  }
}

static __device__ int quadrant_of(float2 p, float mx, float my) { return (p.x >= mx ? 1 : 0) | (p.y >= my ? 2 : 0); }

/// One block per node over ids_in[begin, end): a leaf, or the points' ids scattered to ids_out by
/// quadrant and one child grid per non-empty quadrant (ids_out and ids_in swap roles there). A
/// quadrant whose launch fails becomes a leaf of this node.
__global__ void quadtree_node(const float2* points, u32* ids_in, u32* ids_out, u32 begin, u32 end, box b,
                              int depth, u32* hits, u64 parent) {
  __shared__ u32 count[4], offset[4], cursor[4];
  __shared__ int not_launched[4];
  note_started(depth);
  log_truth(parent, depth);
  if (end - begin <= qt_min_points || depth >= qt_max_depth)
    return quadtree_leaf(points, ids_in, begin, end, b, hits);
  const float mx = 0.5f * (b.x0 + b.x1), my = 0.5f * (b.y0 + b.y1);
  if (threadIdx.x < 4) count[threadIdx.x] = 0;
  __syncthreads();
  for (u32 i = begin + threadIdx.x; i < end; i += blockDim.x)
    atomicAdd(&count[quadrant_of(points[ids_in[i]], mx, my)], 1u);
  __syncthreads();
  if (threadIdx.x == 0)
    for (int q = 0; q < 4; ++q) cursor[q] = offset[q] = q == 0 ? begin : offset[q - 1] + count[q - 1];
  __syncthreads();
  for (u32 i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const u32 id = ids_in[i];
    ids_out[atomicAdd(&cursor[quadrant_of(points[id], mx, my)], 1u)] = id;
  }
  __threadfence();
  __syncthreads();
  box qb[4];
  for (int q = 0; q < 4; ++q)
    qb[q] = {q & 1 ? mx : b.x0, q & 2 ? my : b.y0, q & 1 ? b.x1 : mx, q & 2 ? b.y1 : my};
  if (threadIdx.x == 0) {
    for (int q = 0; q < 4; ++q) {
      not_launched[q] = 0;
      if (count[q] == 0) continue;
      quadtree_node<<<1, qt_threads, 0, cudaStreamFireAndForget>>>(points, ids_out, ids_in, offset[q],
                                                                    offset[q] + count[q], qb[q], depth + 1, hits,
                                                                    own_gridid());
      not_launched[q] = !launch_counted(depth + 1, 1);
    }
  }
  __syncthreads();
  for (int q = 0; q < 4; ++q)
    if (not_launched[q]) quadtree_leaf(points, ids_out, offset[q], offset[q] + count[q], qb[q], hits);
}

// ---- tail_chain -------------------------------------------------------------------------------

struct chain_state {
  u32 visits;  ///< grids of the chain that ran
  u32 marker;  ///< n, written by the last grid
  u32 resume;  ///< the step whose launch failed (chain_none: none)
};

/// Step `step` of n: tail-launches step + 1, or writes the marker.
__global__ void chain_step(u32 step, u32 n, int depth, chain_state* st) {
  note_started(depth);
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  atomicAdd(&st->visits, 1u);
  if (step + 1 == n) {
    st->marker = n;
    return;
  }
  chain_step<<<chain_blocks, chain_threads, 0, cudaStreamTailLaunch>>>(step + 1, n, depth + 1, st);
  if (!launch_counted(depth + 1, chain_blocks)) st->resume = step + 1;
}

// ---- pending_limit ----------------------------------------------------------------------------

static __host__ __device__ u32 pending_mark(u32 i) { return i * 2654435761u + 1u; }

/// Writes its mark, then holds its pending-launch entry until released (pl_hold_ns at most).
__global__ void held_child(u32* out, u32 i, const volatile int* release, int depth) {
  note_started(depth);
  if (threadIdx.x != 0) return;
  out[i] = pending_mark(i);
  u64 t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while (*release == 0 && t - t0 < pl_hold_ns);
}

/// One thread launches n children without waiting; a child not launched is done here.
__global__ void pending_parent(u32* out, u32 n, volatile int* release, int depth) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  for (u32 i = 0; i < n; ++i) {
    held_child<<<1, pl_child_threads, 0, cudaStreamFireAndForget>>>(out, i, release, depth + 1);
    if (!launch_counted(depth + 1, 1)) out[i] = pending_mark(i);
  }
  __threadfence();
  *release = 1;
}

// ---- flat -------------------------------------------------------------------------------------

constexpr int flat_threads = 256;
constexpr unsigned flat_rounds = 1024;

/// Every thread steps a linear congruential generator flat_rounds times from its global index;
/// thread 0 of each block writes its value. No device launches: a program without CDP.
__global__ void flat_blocks(unsigned* out) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  for (unsigned k = 0; k < flat_rounds; ++k) x = x * 1664525u + 1013904223u;
  if (threadIdx.x == 0) out[blockIdx.x] = x;
}

// ---- host -------------------------------------------------------------------------------------

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

void raise_limit(cudaLimit limit, std::size_t want, const char* what) {
  std::size_t now = 0;
  check(cudaDeviceGetLimit(&now, limit), "cudaDeviceGetLimit");
  if (now < want) check(cudaDeviceSetLimit(limit, want), what);
}

template <class T>
T* to_device(const std::vector<T>& v) {
  T* p = nullptr;
  check(cudaMalloc(&p, v.size() * sizeof(T)), "cudaMalloc");
  check(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  return p;
}

template <class T>
void to_host_and_free(std::vector<T>& v, T* p) {
  check(cudaMemcpy(v.data(), p, v.size() * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
  check(cudaFree(p), "cudaFree");
}

/// What a workload reports besides the device's counts.
struct outcome {
  u64 host_grids = 0;
  bool verified = false;
  std::string wrong;            ///< what is wrong when not verified
  long long attempts = -1;      ///< device launches it must have tried (succeeded + failed); -1: any
  bool must_fail_some = false;  ///< some launch must have failed with the pending-launch error
};

/// A host launch: checked, counted, and waited for.
/// The time the host's launches took, each from just before its <<<>>> to the end of the
/// synchronization after it (what a tool attached to the program adds to its run shows here).
double g_launch_ms = 0.0;
std::chrono::steady_clock::time_point g_launch_start;

/// Called just before each host <<<>>>.
void launch_begins() { g_launch_start = std::chrono::steady_clock::now(); }

void host_launch(outcome& r, const char* what) {
  check(cudaGetLastError(), what);
  ++r.host_grids;
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  g_launch_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_launch_start).count();
}

float unit_float(std::mt19937& rng) { return static_cast<float>(rng() >> 8) * (1.0f / 16777216.0f); }

float2 unit_point(std::mt19937& rng) {  // x drawn before y
  const float x = unit_float(rng);
  return make_float2(x, unit_float(rng));
}

outcome run_quicksort(u32 n) {
  outcome r;
  raise_limit(cudaLimitDevRuntimePendingLaunchCount, tree_pending_limit, "cudaDeviceSetLimit(pending launches)");
  std::mt19937 rng(rng_seed);
  std::vector<u32> keys(n), sorted(n);
  for (u32& k : keys) k = static_cast<u32>(rng());
  u32* d_keys = to_device(keys);
  u32* d_scratch = to_device(keys);
  launch_begins();
  qs_segment<<<1, qs_threads>>>(d_keys, d_scratch, 0, n, 0, 0);
  host_launch(r, "qs_segment launch");
  to_host_and_free(sorted, d_keys);
  check(cudaFree(d_scratch), "cudaFree");
  std::sort(keys.begin(), keys.end());
  const auto first_wrong = std::mismatch(keys.begin(), keys.end(), sorted.begin()).first - keys.begin();
  r.verified = first_wrong == static_cast<std::ptrdiff_t>(n);
  if (!r.verified) r.wrong = "the keys differ from std::sort's from index " + std::to_string(first_wrong);
  return r;
}

outcome run_bezier(u32 n) {
  outcome r;
  // twice the children at most in flight: launches near the full limit may stall instead of failing
  raise_limit(cudaLimitDevRuntimePendingLaunchCount, 2 * std::size_t{n} + 1024, "cudaDeviceSetLimit(pending launches)");
  raise_limit(cudaLimitMallocHeapSize, std::size_t{n} * (bz_max_vertices * sizeof(float2) + 256) + (16u << 20),
              "cudaDeviceSetLimit(malloc heap)");
  std::mt19937 rng(rng_seed);
  std::vector<bezier_line> lines(n);
  for (bezier_line& l : lines)
    for (float2& p : l.cp) p = unit_point(rng);
  bezier_line* d_lines = to_device(lines);
  const u32 blocks = (n + bz_parent_threads - 1) / bz_parent_threads;
  launch_begins();
  bezier_lines<<<blocks, bz_parent_threads>>>(d_lines, static_cast<int>(n), 0);
  host_launch(r, "bezier_lines launch");
  launch_begins();
  bezier_check_and_free<<<blocks, bz_parent_threads>>>(d_lines, static_cast<int>(n));
  host_launch(r, "bezier_check_and_free launch");
  to_host_and_free(lines, d_lines);
  const auto untessellated = std::count_if(lines.begin(), lines.end(), [](const bezier_line& l) {
    return l.n_vertices < bz_min_vertices || l.n_vertices > bz_max_vertices;
  });
  r.verified = untessellated == 0;  // wrong vertices are counted on the device
  if (!r.verified) r.wrong = std::to_string(untessellated) + " lines without a tessellation";
  r.attempts = n;
  return r;
}

outcome run_quadtree(u32 n) {
  outcome r;
  raise_limit(cudaLimitDevRuntimePendingLaunchCount, tree_pending_limit, "cudaDeviceSetLimit(pending launches)");
  std::mt19937 rng(rng_seed);
  std::vector<float2> points(n);
  for (float2& p : points) p = unit_point(rng);
  std::vector<u32> ids(2 * std::size_t{n}), hits(n, 0);
  std::iota(ids.begin(), ids.begin() + n, 0u);
  float2* d_points = to_device(points);
  u32* d_ids = to_device(ids);
  u32* d_hits = to_device(hits);
  launch_begins();
  quadtree_node<<<1, qt_threads>>>(d_points, d_ids, d_ids + n, 0, n, box{0.0f, 0.0f, 1.0f, 1.0f}, 0, d_hits, 0);
  host_launch(r, "quadtree_node launch");
  to_host_and_free(hits, d_hits);
  check(cudaFree(d_points), "cudaFree");
  check(cudaFree(d_ids), "cudaFree");
  const auto not_once = std::count_if(hits.begin(), hits.end(), [](u32 h) { return h != 1; });
  r.verified = not_once == 0;  // points outside their leaf's box are counted on the device
  if (!r.verified) r.wrong = std::to_string(not_once) + " points not in exactly one leaf";
  return r;
}

outcome run_tail_chain(u32 n) {
  outcome r;
  std::vector<chain_state> st{{0, 0, chain_none}};
  chain_state* d_state = to_device(st);
  for (u32 start = 0;; start = st[0].resume) {  // a refused launch hands the rest of the chain back here
    launch_begins();
    chain_step<<<chain_blocks, chain_threads>>>(start, n, 0, d_state);
    host_launch(r, "chain_step launch");
    check(cudaMemcpy(st.data(), d_state, sizeof(chain_state), cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
    if (st[0].resume == chain_none) break;  // else resume > start: the chain moved on
    check(cudaMemcpy(&d_state->resume, &chain_none, sizeof(u32), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  }
  to_host_and_free(st, d_state);
  r.verified = st[0].visits == n && st[0].marker == n;
  if (!r.verified)
    r.wrong = "the chain ran " + std::to_string(st[0].visits) + " grids, marker " + std::to_string(st[0].marker);
  r.attempts = n - 1;  // every grid but the first is a device launch, or a failed one and a host launch
  return r;
}

outcome run_pending_limit(u32 n) {
  outcome r;
  check(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pl_limit), "cudaDeviceSetLimit(pending launches)");
  std::vector<u32> out(n, 0);
  std::vector<int> release{0};
  u32* d_out = to_device(out);
  int* d_release = to_device(release);
  launch_begins();
  pending_parent<<<1, 1>>>(d_out, n, d_release, 0);
  host_launch(r, "pending_parent launch");
  to_host_and_free(out, d_out);
  check(cudaFree(d_release), "cudaFree");
  u32 wrong = 0;
  for (u32 i = 0; i < n; ++i) wrong += out[i] != pending_mark(i);
  r.verified = wrong == 0;
  if (!r.verified) r.wrong = std::to_string(wrong) + " children's values missing or wrong";
  r.attempts = n;
  r.must_fail_some = n > 2 * pl_limit;
  return r;
}

outcome run_flat(u32 n) {
  outcome r;
  std::vector<u32> out(n, 0);
  u32* d_out = to_device(out);
  launch_begins();
  flat_blocks<<<n, flat_threads>>>(d_out);
  host_launch(r, "flat_blocks launch");
  to_host_and_free(out, d_out);
  u32 wrong = 0;
  for (u32 b = 0; b < n; ++b) {
    u32 x = b * flat_threads;
    for (unsigned k = 0; k < flat_rounds; ++k) x = x * 1664525u + 1013904223u;
    wrong += out[b] != x;
  }
  r.verified = wrong == 0;
  if (!r.verified) r.wrong = std::to_string(wrong) + " blocks' values wrong";
  r.attempts = 0;
  return r;
}

struct workload {
  const char* name;
  outcome (*run)(u32);
  u32 default_size, max_size;
};

constexpr workload workloads[] = {
    {"quicksort", run_quicksort, 1u << 20, 1u << 26},  {"bezier", run_bezier, 4096, 1u << 16},
    {"quadtree", run_quadtree, 1u << 16, 1u << 24},    {"tail_chain", run_tail_chain, 1000, depth_slots},
    {"pending_limit", run_pending_limit, 8192, 1u << 20}, {"flat", run_flat, 1u << 16, 1u << 24},
};

int usage(const std::string& problem) {
  std::fprintf(stderr, "cdp_workloads: %s\nusage: cdp_workloads <workload> [size]\n", problem.c_str());
  for (const workload& w : workloads)
    std::fprintf(stderr, "  %-14s size 1..%u (default %u)\n", w.name, w.max_size, w.default_size);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) return usage("expected a workload and an optional size");
  const workload* w = nullptr;
  for (const workload& c : workloads)
    if (std::strcmp(argv[1], c.name) == 0) w = &c;
  if (w == nullptr) return usage(std::string("unknown workload '") + argv[1] + "'");
  u32 size = w->default_size;
  if (argc == 3) {
    const char* s = argv[2];
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0') return usage(std::string("size '") + s + "' is not a number");
    if (errno == ERANGE || v == 0 || v > w->max_size)
      return usage(std::string("size ") + s + " is out of range for " + w->name + " (1.." +
                   std::to_string(w->max_size) + ")");
    size = static_cast<u32>(v);
  }
  int devices = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    std::printf("cdp_workloads: no usable CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return 77;
  }
  auto counts = std::make_unique<launch_counts>();  // zeroed
  outcome r;
  try {
    check(cudaMemcpyToSymbol(g_counts, counts.get(), sizeof(launch_counts)), "cudaMemcpyToSymbol");
    r = w->run(size);
    check(cudaMemcpyFromSymbol(counts.get(), g_counts, sizeof(launch_counts)), "cudaMemcpyFromSymbol");
  } catch (const std::runtime_error& f) {
    std::fprintf(stderr, "cdp_workloads: %s: %s\n", w->name, f.what());
    return 1;
  }
  if (const char* truth = std::getenv("CDP_WORKLOADS_TRUTH"); truth != nullptr && *truth != '\0') {
    u64 n = 0;
    check(cudaMemcpyFromSymbol(&n, g_truth_count, sizeof n), "cudaMemcpyFromSymbol");
    std::vector<truth_entry> log(std::min<u64>(n, truth_capacity));
    if (!log.empty())
      check(cudaMemcpyFromSymbol(log.data(), g_truth, log.size() * sizeof(truth_entry)), "cudaMemcpyFromSymbol");
    FILE* f = std::fopen(truth, "w");
    if (f == nullptr) {
      std::fprintf(stderr, "cdp_workloads: CDP_WORKLOADS_TRUTH=%s cannot be written\n", truth);
      return 2;
    }
    for (const truth_entry& e : log)
      std::fprintf(f, "{\"grid\": %llu, \"parent\": %llu, \"depth\": %llu}\n", e.grid, e.parent, e.depth);
    std::fclose(f);
  }
  const launch_counts& c = *counts;
  if (c.wrong != 0) {
    r.wrong += (r.verified ? "" : "; ") + std::to_string(c.wrong) + " wrong values found on the device";
    r.verified = false;
  }
  std::string depths;
  for (int d = 1; d < depth_slots; ++d)
    if (c.depth[d] != 0) depths += (depths.empty() ? "" : ",") + std::to_string(d) + ":" + std::to_string(c.depth[d]);
  std::printf("cdp_workloads: %s size=%u host_grids=%llu device_grids=%llu failed_launches=%llu device_blocks=%llu "
              "depths=%s grids_started=%llu blocks_started=%llu verified=%s ms=%.3f\n",
              w->name, size, r.host_grids, c.grids, c.failed, c.blocks, depths.empty() ? "none" : depths.c_str(),
              c.grids_started, c.blocks_started, r.verified ? "yes" : "no", g_launch_ms);
  std::fflush(stdout);
  std::vector<std::string> problems;
  if (!r.verified) problems.push_back("wrong output: " + r.wrong);
  if (c.grids_started != c.grids || c.blocks_started != c.blocks)
    problems.push_back("counts disagree: " + std::to_string(c.grids_started) + " grids and " +
                       std::to_string(c.blocks_started) + " blocks started, " + std::to_string(c.grids) + " and " +
                       std::to_string(c.blocks) + " launched");
  if (r.attempts >= 0 && static_cast<u64>(r.attempts) != c.grids + c.failed)
    problems.push_back("counts disagree: " + std::to_string(c.grids + c.failed) + " device launches made, " +
                       std::to_string(r.attempts) + " expected");
  if (r.must_fail_some && c.failed_pending == 0)
    problems.push_back("no launch failed with cudaErrorLaunchPendingCountExceeded past a limit of " +
                       std::to_string(pl_limit));
  if (c.device_errors != 0)
    problems.push_back(std::to_string(c.device_errors) + " device-side malloc or cudaStreamCreateWithFlags failed");
  for (const std::string& p : problems) std::fprintf(stderr, "cdp_workloads: %s: %s\n", w->name, p.c_str());
  return problems.empty() ? 0 : 1;
}
