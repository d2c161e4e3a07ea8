// warpscope test corpus: NOT upstream. Explicit instantiations for NVRTC (tests/data/published/make.sh),
// which compiles only device code: the verbatim upstream file below is included unchanged, and the
// template kernels its host code (or the repo's runner) launches are instantiated here with the
// arguments that host code uses (see tests/data/published/README.md).
#include "matmul_backward_bias.cu"

// matmul_backward_bias8 / matmul_backward_bias9: <floatX, false> writes dbias directly, <float, true> the float dbias_buffer
template __global__ void matmul_backward_bias_kernel8<floatX, false>(floatX *, const floatX *, int, int, int, std::bool_constant<false>);
template __global__ void matmul_backward_bias_kernel8<float, true>(float *, const floatX *, int, int, int, std::bool_constant<true>);
template __global__ void matmul_backward_bias_kernel9<floatX, false>(floatX *, const floatX *, int, int, int, std::bool_constant<false>);
template __global__ void matmul_backward_bias_kernel9<float, true>(float *, const floatX *, int, int, int, std::bool_constant<true>);
