// warpscope test corpus: NOT upstream. Explicit instantiations for NVRTC (tests/data/published/make.sh),
// which compiles only device code: the verbatim upstream file below is included unchanged, and the
// template kernels its host code (or the repo's runner) launches are instantiated here with the
// arguments that host code uses (see tests/data/published/README.md).
#include "sgemm_v1.cu"

// main(): Sgemm<BLOCK_SIZE_M=128, BLOCK_SIZE_K=8, BLOCK_SIZE_N=128, THREAD_SIZE_Y=8, THREAD_SIZE_X=8, ENABLE_DOUBLE_BUFFER=false>
template __global__ void Sgemm<128, 8, 128, 8, 8, false>(float *__restrict__, float *__restrict__, float *__restrict__, const int, const int, const int);
