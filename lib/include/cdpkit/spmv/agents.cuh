#pragma once
// cdpkit/spmv/agents.cuh — SpMV's device building blocks, in namespace cdpkit::spmv (the kernels
// they run in: cdpkit/spmv/kernels.cuh; the host engine: lib/src/spmv/engine.cu).
//
// SpMV on the GPU (cdpkit/spmv.hpp) is for_each_segment over the rows of a CSR matrix, each row
// a segmented sum of its nonzeros' terms, under every loop-to-child policy:
//
//   agents/row_sum.cuh   row_term, row_combine: a row as a cdpkit::segment_sum
//
// Launch sites and probes: loop-to-child's own (cdpkit/launch/site_ids.hpp).
//
// The agents have internal linkage (an unnamed namespace inside cdpkit::spmv), as BFS's, the
// trees' and the quadtree's (cdpkit/bfs/agents.cuh says why): the kernels over them are
// instantiated privately in each translation unit, and their PTX is the one
// lib/src/spmv/spmv.cu gave at commit b7c74cd (nvcc 13.0, sm_90).

#include <cdpkit/spmv/agents/row_sum.cuh>
