// warpscope test corpus: NOT upstream. Explicit instantiations for NVRTC (tests/data/published/make.sh),
// which compiles only device code: the verbatim upstream file below is included unchanged, and the
// template kernels its host code (or the repo's runner) launches are instantiated here with the
// arguments that host code uses (see tests/data/published/README.md).
// The kernel names WARPSIZE, which 10_kernel_warptiling.cuh defines: upstream src/kernels.cuh includes
// kernels/10_kernel_warptiling.cuh before this file, as here.
#include "10_kernel_warptiling.cuh"
#include "12_kernel_double_buffering.cuh"

// src/runner.cu runSgemmDoubleBuffering2: BM=128, BN=128, BK=16, WM=64, WN=64, WNITER=4, TM=8, TN=4, NUM_THREADS=128
template __global__ void runSgemmDoubleBuffering2<128, 128, 16, 64, 64, 4, 8, 4, 128>(int, int, int, float, float *, float *, float, float *);
