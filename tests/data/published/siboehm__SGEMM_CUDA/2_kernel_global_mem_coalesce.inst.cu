// warpscope test corpus: NOT upstream. Explicit instantiations for NVRTC (tests/data/published/make.sh),
// which compiles only device code: the verbatim upstream file below is included unchanged, and the
// template kernels its host code (or the repo's runner) launches are instantiated here with the
// arguments that host code uses (see tests/data/published/README.md).
#include "2_kernel_global_mem_coalesce.cuh"

// src/runner.cu run_sgemm_coalesce
template __global__ void sgemm_global_mem_coalesce<32>(int, int, int, float, const float *, const float *, float, float *);
