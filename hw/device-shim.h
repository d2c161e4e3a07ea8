// Just enough of CUDA's device-side declarations for clang to compile probes.cu's kernels without the CUDA
// toolkit's headers (hw/check-sass.sh). nvcc never reads this file.
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __forceinline__ __attribute__((always_inline))
#define __constant__ __attribute__((constant))
#define __shared__ __attribute__((shared))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
#include <__clang_cuda_builtin_vars.h>
