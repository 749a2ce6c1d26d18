#pragma once
// cdpkit/spmv/agents/row_sum.cuh — y = A x as a segmented sum: row r of a CSR matrix is a
// loop-to-child segment over its nonzeros k, each a term val[k] * x[col[k]], and the partial sums
// of a row go into y[r] by atomic adds (cdpkit::segment_sum, cdpkit/loop_to_child/agents/common.cuh).
// Whatever loop-to-child policy runs the rows decides which thread or child grid adds which terms.
//
// Usage (lib/src/spmv/engine.cu): y zeroed, then
//
//   for_each_segment(segments_view{row_offsets, row_offsets + 1, rows}, loop_to_child::no_pre_op{},
//                    segment_sum<spmv::row_term, spmv::row_combine>{{col, val, x}, {y}}, policy);

#include <cdpkit/loop_to_child/agents/common.cuh>

#include <cstdint>

namespace cdpkit::spmv {
namespace {

/// Term (r, k): row r's nonzero k times its x.
///
/// Any thread may call it for any nonzero k < nnz; col, val (nnz entries) and x (one entry per
/// column, read through the read-only cache) are device memory that no one writes during the
/// product.
struct row_term {
  const std::uint32_t* col;
  const float* val;
  const float* x;
  __device__ float operator()(std::uint32_t, std::uint32_t k) const { return val[k] * __ldg(&x[col[k]]); }
};

/// A row's partial sum (a whole row where one thread walks it, a warp's share of it in a child
/// grid or the flat grid) into y[r], zeroed before.
///
/// Any number of threads may call it for one row at once (atomicAdd): y (one entry per row) must
/// be zero before the product starts, and the order of the additions, with it the last bits of
/// y[r], is not fixed.
struct row_combine {
  float* y;
  __device__ void operator()(std::uint32_t r, float partial) const { atomicAdd(&y[r], partial); }
};

}  // namespace
}  // namespace cdpkit::spmv
