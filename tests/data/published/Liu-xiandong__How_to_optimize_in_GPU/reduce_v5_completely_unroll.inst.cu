// warpscope test corpus: NOT upstream. Explicit instantiations for NVRTC (tests/data/published/make.sh),
// which compiles only device code: the verbatim upstream file below is included unchanged, and the
// template kernels its host code (or the repo's runner) launches are instantiated here with the
// arguments that host code uses (see tests/data/published/README.md).
#include "reduce_v5_completely_unroll.cu"

// main(): reduce5<THREAD_PER_BLOCK>, THREAD_PER_BLOCK = 256
template __global__ void reduce5<256>(float *, float *);
