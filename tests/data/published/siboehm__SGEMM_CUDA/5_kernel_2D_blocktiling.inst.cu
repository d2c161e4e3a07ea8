// warpscope test corpus: NOT upstream. Explicit instantiations for NVRTC (tests/data/published/make.sh),
// which compiles only device code: the verbatim upstream file below is included unchanged, and the
// template kernels its host code (or the repo's runner) launches are instantiated here with the
// arguments that host code uses (see tests/data/published/README.md).
#include "5_kernel_2D_blocktiling.cuh"

// src/runner.cu runSgemm2DBlocktiling, branch M >= 128 and N >= 128: BM=128, BN=128, BK=8, TM=8, TN=8
template __global__ void sgemm2DBlocktiling<128, 128, 8, 8, 8>(int, int, int, float, const float *, const float *, float, float *);
