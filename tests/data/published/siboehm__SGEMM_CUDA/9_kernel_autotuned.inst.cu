// warpscope test corpus: NOT upstream. Explicit instantiations for NVRTC (tests/data/published/make.sh),
// which compiles only device code: the verbatim upstream file below is included unchanged, and the
// template kernels its host code (or the repo's runner) launches are instantiated here with the
// arguments that host code uses (see tests/data/published/README.md).
#include "9_kernel_autotuned.cuh"

// src/runner.cu runSgemmAutotuned: K9_BM=128, K9_BN=128, K9_BK=16, K9_TM=8, K9_TN=8
template __global__ void sgemmAutotuned<128, 128, 16, 8, 8>(int, int, int, float, float *, float *, float, float *);
