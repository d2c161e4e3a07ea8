// warpscope test corpus: NOT upstream. Explicit instantiations for NVRTC (tests/data/published/make.sh),
// which compiles only device code: the verbatim upstream file below is included unchanged, and the
// template kernels its host code (or the repo's runner) launches are instantiated here with the
// arguments that host code uses (see tests/data/published/README.md).
#include "3_kernel_shared_mem_blocking.cuh"

// src/runner.cu run_sgemm_shared_mem_block
template __global__ void sgemm_shared_mem_block<32>(int, int, int, float, const float *, const float *, float, float *);
