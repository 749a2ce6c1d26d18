// runtime_entries — what the CDP2 device runtime counts against cudaLimitDevRuntimePendingLaunchCount,
// and for how long. A standalone CUDA program (no cdpkit): the probe behind the rows of
// docs/design.md ("The device runtime") about pending-launch entries.
//
//   runtime_entries MODE LIMIT N [K]     prints one line; exit 0 (2 for a bad command line)
//   runtime_entries memory LIMIT
//
// Modes (one thread of a host-launched parent does the launching; children are one-thread grids):
//   seq      N children one after the other, each seen finished (a flag) before the next: do
//            finished children give their entries back while their parent runs? (all N run)
//   middle   the same through a middle grid per child (parent -> middle -> child)
//   running  N children that each wait for a release flag (200 ms cap): how many run at once, and
//            where a launch fails (entries are held while a child is pending or running)
//   tail     N tail launches (they run after the parent): where a launch fails
//   sleep    the parent launches L (which waits for "go"), then K children, waits until they have
//            all run, sets go and exits: its blocks are done, it is not complete until L is. L
//            launches N children one after the other. Do the parent's K finished children keep
//            their entries until it completes? (L fails near LIMIT - K if they do)
//   active   as sleep, but the parent waits for L to finish (it is running all along)
//   memory   what the limit costs: the device's free memory before cudaDeviceSetLimit(LIMIT),
//            after it, and after a first device-side launch (the runtime may reserve lazily); N unused
// A launch that spins instead of failing shows as a hang: run it under `timeout`.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Wait for *flag != 0, at most `ns`; false on timeout.
__device__ bool wait_flag(volatile int* flag, unsigned long long ns) {
  const unsigned long long t0 = now_ns();
  while (*flag == 0)
    if (now_ns() - t0 > ns) return false;
  return true;
}

constexpr unsigned long long child_wait_ns = 50000000ull;  // 50 ms: a child that never runs

enum class mode { seq, middle, running, tail, sleep, active };

/// What the launching thread saw: launches made, the first error, how it ended, children seen
/// running at once (running), the parent's own children (sleep / active).
struct outcome {
  int launched;
  int error;
  int status;  ///< 0 all launched and ran, 1 a launch failed, 2 a child never ran, 3 no go
  int running_at_once;
  int parent_children;
  int done;  ///< L finished (sleep / active)
};

__global__ void child(volatile int* done, int i) { done[i] = 1; }

__global__ void waiting_child(volatile int* done, volatile int* release, int i) {
  done[i] = 1;
  const unsigned long long t0 = now_ns();
  while (*release == 0 && now_ns() - t0 < 200000000ull) {
  }
}

__global__ void middle(volatile int* done, int i) { child<<<1, 1, 0, cudaStreamFireAndForget>>>(done, i); }

/// N children one after the other, each finished before the next (seq; L of sleep / active).
__device__ void launch_in_turn(volatile int* done, int base, int n, outcome* out) {
  out->status = 0;
  for (int i = 0; i < n; ++i) {
    child<<<1, 1, 0, cudaStreamFireAndForget>>>(done, base + i);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      out->error = static_cast<int>(e);
      out->status = 1;
      return;
    }
    out->launched = i + 1;
    if (!wait_flag(done + base + i, child_wait_ns)) {
      out->status = 2;
      return;
    }
  }
}

__global__ void launcher(volatile int* done, volatile int* go, int base, int n, outcome* out) {
  if (wait_flag(go, 2000000000ull)) launch_in_turn(done, base, n, out);
  else out->status = 3;
  __threadfence_system();
  reinterpret_cast<volatile int*>(&out->done)[0] = 1;
}

__global__ void parent(mode m, volatile int* done, volatile int* release, int n, int k, outcome* out) {
  if (m == mode::seq) {
    launch_in_turn(done, 0, n, out);
    return;
  }
  if (m == mode::sleep || m == mode::active) {
    launcher<<<1, 1, 0, cudaStreamFireAndForget>>>(done, release, k, n, out);
    if (cudaGetLastError() != cudaSuccess) {
      out->status = 1;
      return;
    }
    int made = 0;
    for (int i = 0; i < k; ++i) {
      child<<<1, 1, 0, cudaStreamFireAndForget>>>(done, i);
      if (cudaGetLastError() != cudaSuccess) break;
      ++made;
    }
    for (int i = 0; i < made; ++i) (void)wait_flag(done + i, child_wait_ns);
    out->parent_children = made;
    __threadfence();
    *release = 1;  // go
    if (m == mode::active) (void)wait_flag(reinterpret_cast<volatile int*>(&out->done), 4000000000ull);
    return;
  }
  out->status = 0;
  for (int i = 0; i < n; ++i) {
    if (m == mode::middle) middle<<<1, 1, 0, cudaStreamFireAndForget>>>(done, i);
    else if (m == mode::running) waiting_child<<<1, 1, 0, cudaStreamFireAndForget>>>(done, release, i);
    else child<<<1, 1, 0, cudaStreamTailLaunch>>>(done, i);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      out->error = static_cast<int>(e);
      out->status = 1;
      break;
    }
    out->launched = i + 1;
    if (m == mode::middle && !wait_flag(done + i, child_wait_ns)) {
      out->status = 2;
      break;
    }
  }
  if (m == mode::running) {  // give them 20 ms to start, count, release
    const unsigned long long t0 = now_ns();
    while (now_ns() - t0 < 20000000ull) {
    }
    int started = 0;
    for (int i = 0; i < out->launched; ++i) started += done[i];
    out->running_at_once = started;
    *release = 1;
  }
}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "runtime_entries: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "runtime_entries: %s\nusage: runtime_entries seq|middle|running|tail|sleep|active|memory LIMIT N [K]\n"
               "  LIMIT: cudaLimitDevRuntimePendingLaunchCount (1..2^24), N: children (1..2^20), K: the "
               "parent's own children in sleep / active (0..2^20, default LIMIT - 56)\n",
               why);
  return 2;
}

bool parse_int(const char* text, long lo, long hi, int& out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) return false;
  out = static_cast<int>(v);
  return true;
}

/// memory: free device memory before and after the limit is set, and after a first device launch.
int memory_cost(const char* limit_text) {
  int limit = 0;
  if (!parse_int(limit_text, 1, 1 << 24, limit)) return usage("LIMIT must be an integer in [1, 2^24]");
  int count = 0;
  if (!check(cudaGetDeviceCount(&count), "no CUDA device") || count == 0) return 3;
  std::size_t free0 = 0, free1 = 0, free2 = 0, total = 0, before = 0;
  int* done = nullptr;
  outcome* out = nullptr;
  if (!check(cudaFree(nullptr), "context") || !check(cudaMemGetInfo(&free0, &total), "cudaMemGetInfo") ||
      !check(cudaDeviceGetLimit(&before, cudaLimitDevRuntimePendingLaunchCount), "cudaDeviceGetLimit") ||
      !check(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, static_cast<std::size_t>(limit)),
             "cudaDeviceSetLimit") ||
      !check(cudaMemGetInfo(&free1, &total), "cudaMemGetInfo") || !check(cudaMalloc(&done, sizeof(int)), "cudaMalloc") ||
      !check(cudaMallocManaged(&out, sizeof(outcome)), "cudaMallocManaged"))
    return 1;
  *out = outcome{0, 0, 0, -1, -1, 0};
  parent<<<1, 1>>>(mode::seq, done, nullptr, 1, 0, out);  // one device-side launch
  if (!check(cudaGetLastError(), "launch") || !check(cudaDeviceSynchronize(), "the run") ||
      !check(cudaMemGetInfo(&free2, &total), "cudaMemGetInfo"))
    return 1;
  const auto mib = [](std::size_t a, std::size_t b) { return (static_cast<double>(a) - static_cast<double>(b)) / 1048576.0; };
  std::printf("memory  limit %d (was %zu): free %.1f MiB less after the limit, %.1f MiB less after a device launch "
              "(the probe's own buffers included, a few KiB)\n",
              limit, before, mib(free0, free1), mib(free0, free2));
  (void)cudaFree(done);
  (void)cudaFree(out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "memory") == 0) return memory_cost(argv[2]);
  if (argc != 4 && argc != 5) return usage("expected MODE LIMIT N [K] (memory LIMIT)");
  const char* names[] = {"seq", "middle", "running", "tail", "sleep", "active", "memory"};
  int which = -1;
  for (int m = 0; m < 7; ++m)
    if (std::strcmp(argv[1], names[m]) == 0) which = m;
  if (which < 0) return usage((std::string("unknown mode '") + argv[1] + "'").c_str());
  if (which == 6) return memory_cost(argv[2]);
  const auto m = static_cast<mode>(which);
  int limit = 0, n = 0, k = 0;
  if (!parse_int(argv[2], 1, 1 << 24, limit)) return usage("LIMIT must be an integer in [1, 2^24]");
  if (!parse_int(argv[3], 1, 1 << 20, n)) return usage("N must be an integer in [1, 2^20]");
  k = limit > 56 ? limit - 56 : 0;
  if (argc == 5 && !parse_int(argv[4], 0, 1 << 20, k)) return usage("K must be an integer in [0, 2^20]");
  if (m != mode::sleep && m != mode::active) k = 0;

  int count = 0;
  if (!check(cudaGetDeviceCount(&count), "no CUDA device") || count == 0) return 3;
  int *done = nullptr, *release = nullptr;
  outcome* out = nullptr;
  if (!check(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, static_cast<std::size_t>(limit)),
             "cudaDeviceSetLimit") ||
      !check(cudaMalloc(&done, sizeof(int) * (static_cast<std::size_t>(n) + k)), "cudaMalloc") ||
      !check(cudaMalloc(&release, sizeof(int)), "cudaMalloc") ||
      !check(cudaMallocManaged(&out, sizeof(outcome)), "cudaMallocManaged") ||
      !check(cudaMemset(done, 0, sizeof(int) * (static_cast<std::size_t>(n) + k)), "cudaMemset") ||
      !check(cudaMemset(release, 0, sizeof(int)), "cudaMemset"))
    return 1;
  *out = outcome{0, 0, 0, -1, -1, 0};
  parent<<<1, 1>>>(m, done, release, n, k, out);
  if (!check(cudaGetLastError(), "launch") || !check(cudaDeviceSynchronize(), "the run")) return 1;
  const char* status[] = {"ok", "LAUNCH FAILED", "A CHILD NEVER RAN", "L never started"};
  std::printf("%-7s limit %7d, N %7d", argv[1], limit, n);
  if (m == mode::sleep || m == mode::active) std::printf(", parent's children %d", out->parent_children);
  std::printf(": launched %d, %s", out->launched, status[out->status]);
  if (out->status == 1) std::printf(" (error %d: %s)", out->error, cudaGetErrorName(static_cast<cudaError_t>(out->error)));
  if (m == mode::running) std::printf(", running at once %d", out->running_at_once);
  std::printf("\n");
  (void)cudaFree(done);
  (void)cudaFree(release);
  (void)cudaFree(out);
  return 0;
}
