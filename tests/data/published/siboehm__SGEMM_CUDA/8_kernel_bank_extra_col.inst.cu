// warpscope test corpus: NOT upstream. Explicit instantiations for NVRTC (tests/data/published/make.sh),
// which compiles only device code: the verbatim upstream file below is included unchanged, and the
// template kernels its host code (or the repo's runner) launches are instantiated here with the
// arguments that host code uses (see tests/data/published/README.md).
#include "8_kernel_bank_extra_col.cuh"

// src/runner.cu runSgemmResolveBankExtraCol, branch M >= 128 and N >= 128: BM=128, BN=128, BK=8, TM=8, TN=8
template __global__ void sgemmResolveBankExtraCol<128, 128, 8, 8, 8>(int, int, int, float, float *, float *, float, float *);
