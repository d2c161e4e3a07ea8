// warpscope test corpus: NOT upstream. Explicit instantiations for NVRTC (tests/data/published/make.sh),
// which compiles only device code: the verbatim upstream file below is included unchanged, and the
// template kernels its host code (or the repo's runner) launches are instantiated here with the
// arguments that host code uses (see tests/data/published/README.md).
#include "reduce_v7_shuffle.cu"

// main(): reduce7<THREAD_PER_BLOCK, NUM_PER_THREAD>, THREAD_PER_BLOCK = 256, NUM_PER_THREAD = (32*1024*1024 / 1024) / 256 = 128
template __global__ void reduce7<256, 128>(float *, float *, unsigned int);
