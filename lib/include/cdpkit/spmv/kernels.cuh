#pragma once
// cdpkit/spmv/kernels.cuh — the kernels of SpMV. There is no __global__ function of SpMV's own:
// a product under a loop-to-child policy runs loop-to-child's thin wrappers
// (cdpkit/loop_to_child/kernels.cuh, launched by for_each_segment) over the rows, with the
// segmented sum of cdpkit/spmv/agents.cuh as the item operation; the cusparse variant runs
// cuSPARSE's cusparseSpMV (lib/src/spmv/cusparse.cpp, the cdpkit::cusparse part). This header
// brings the loop-to-child kernels in for the host engine (lib/src/spmv/engine.cu).

#include <cdpkit/loop_to_child/kernels.cuh>
#include <cdpkit/spmv/agents.cuh>
