// warpscope test corpus: NOT upstream. Explicit instantiations for NVRTC (tests/data/published/make.sh),
// which compiles only device code: the verbatim upstream file below is included unchanged, and the
// template kernels its host code (or the repo's runner) launches are instantiated here with the
// arguments that host code uses (see tests/data/published/README.md).
// The kernel names WARPSIZE, which 10_kernel_warptiling.cuh defines: upstream src/kernels.cuh includes
// kernels/10_kernel_warptiling.cuh before this file, as here.
#include "10_kernel_warptiling.cuh"
#include "11_kernel_double_buffering.cuh"

// src/runner.cu runSgemmDoubleBuffering: BM=128, BN=256, BK=16, WM=128, WN=32, WNITER=1, TM=8, TN=8, NUM_THREADS=256
template __global__ void sgemmDoubleBuffering<128, 256, 16, 128, 32, 1, 8, 8, 256>(const int, const int, const int, const float, float *, float *, float, float *);
