// Example: the device launch layer from your own kernel (cdpkit/launch.cuh).
//
// Launch child grids through cdpkit::launch_items_or_inline instead of a bare <<<>>>: the layer
// keeps a pending budget (children in flight), checks every launch, and when a child cannot be
// launched (over budget, too deep, or refused by the device) the calling thread does the work
// itself. On the device, a launch past the hardware's pending limit fails while the host sees no
// error and the child never runs; through the layer, no work is lost.
//
// Here: each thread of a user kernel owns a row of items and hands it to a child grid. The budget
// is tiny (4 children in flight), so many rows fall back to an inline loop; every item must still
// be visited exactly once.

#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

// A site names a place in your code that launches children; the trace counts per site.
// Ids from first_user_site on are yours.
constexpr std::uint16_t rows_site = cdpkit::sites::first_user_site;

// The user kernel: it receives the launch_context of the root grid (runtime.root_context()).
__global__ void visit_rows_kernel(cdpkit::launch_context ctx, std::uint32_t num_rows,
                                  std::uint32_t row_len, unsigned int* visits) {
  const std::uint32_t row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= num_rows) return;
  unsigned int* row_visits = visits + std::uint64_t{row} * row_len;
  // A child of ceil(row_len / 128) blocks, thread k visiting item k; inline if not launched.
  cdpkit::launch_items_or_inline(ctx, rows_site, row_len, 128, cdpkit::stream_kind::fire_and_forget,
                                 [=] __device__(const cdpkit::launch_context&, std::uint64_t k) {
                                   atomicAdd(&row_visits[k], 1u);
                                 });
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }
  cdpkit::sites::set_site_name(rows_site, "example.rows");  // the name profiles and reports show

  // 1. A runtime with a tiny pending budget, tracing on so that we can count the outcomes.
  cdpkit::launch_config config;
  config.pending_budget = 4;
  cdpkit::launch_runtime runtime(config);
  runtime.set_tracing(true);

  // 2. Launch the user kernel with the runtime's root context.
  const std::uint32_t num_rows = 4096, row_len = 300;
  const std::size_t n = std::size_t{num_rows} * row_len;
  unsigned int* d_visits = nullptr;
  CDPKIT_CUDA_TRY(cudaMalloc(&d_visits, n * sizeof(unsigned int)));
  CDPKIT_CUDA_TRY(cudaMemset(d_visits, 0, n * sizeof(unsigned int)));
  visit_rows_kernel<<<(num_rows + 255) / 256, 256>>>(runtime.root_context(), num_rows, row_len,
                                                      d_visits);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  // Waits (under the watchdog), then checks the layer's books: no child left pending, no error.
  CDPKIT_CHECK_DEVICE_ERRORS(runtime);

  // 3. Every item visited exactly once, and every row either launched or done inline.
  std::vector<unsigned int> visits(n);
  CDPKIT_CUDA_TRY(cudaMemcpy(visits.data(), d_visits, n * sizeof(unsigned int),
                             cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaFree(d_visits));
  std::size_t wrong = 0;
  for (unsigned int v : visits) wrong += v == 1 ? 0 : 1;
  const cdpkit::site_counters site = runtime.snapshot().sites[rows_site];
  const auto launched = site.outcomes[static_cast<int>(cdpkit::launch_outcome::launched)];
  const auto over_budget = site.outcomes[static_cast<int>(cdpkit::launch_outcome::fallback_budget)];
  std::printf("%s: %llu requests, %llu children launched, %llu rows done inline (budget), "
              "%zu items visited other than once\n",
              cdpkit::sites::site_name(rows_site).c_str(), site.requests, launched, over_budget,
              wrong);
  return wrong == 0 && site.requests == num_rows ? 0 : 1;
}
