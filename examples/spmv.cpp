// Example: sparse matrix-vector products y = A x with child grids (cdpkit/spmv.hpp), checked
// against the double-precision CPU reference.
//
// A matrix is generated (here RMAT rows: a power-law matrix whose longest rows hold thousands of
// nonzeros while most hold a few; or read with cdpkit::read_matrix_market_matrix), copied to the
// GPU once, and multiplied by loop-to-child policies over its rows and by cuSPARSE.

#include <cdpkit/sparse_matrix.hpp>
#include <cdpkit/spmv.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }

  // 1. A power-law matrix of 2^16 rows and an input vector.
  const cdpkit::csr_matrix a = cdpkit::make_power_law_matrix(16);
  const std::vector<float> x = cdpkit::make_spmv_vector(a.cols);

  // 2. The expected product, in double precision on the CPU.
  const std::vector<double> expected = cdpkit::spmv_reference(a, x);

  // 3. Copy the matrix to the GPU once; multiply with a few variants. The sums' order differs from
  //    the CPU's (and from run to run), so rows are compared within a relative tolerance.
  const cdpkit::device_csr_matrix d_a(a);
  int failures = 0;
  for (const auto variant : {cdpkit::spmv_variant::block_aggregated, cdpkit::spmv_variant::thresholded,
                             cdpkit::spmv_variant::flat_balanced, cdpkit::spmv_variant::cusparse}) {
    cdpkit::spmv_options options;
    options.variant = variant;  // threshold unset: picked on the device from the row lengths
    const std::vector<float> y = cdpkit::spmv_gpu(d_a, x, options);
    std::string first;
    const auto bad = cdpkit::spmv_mismatches(a, x, y, expected, cdpkit::spmv_default_rel_tol, &first);
    std::printf("%-18s %s\n", cdpkit::to_string(variant), bad == 0 ? "matches the CPU reference" : first.c_str());
    failures += bad == 0 ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}
