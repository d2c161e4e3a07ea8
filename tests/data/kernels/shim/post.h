// warpscope corpus shim, force-included AFTER clang's __clang_cuda_runtime_wrapper.h (hw/make-corpus.sh).
// CUDA 12's crt/sm_80_rt.hpp implements the __reduce_*_sync warp intrinsics through nvcc-only builtins, and
// clang 15's own headers don't declare them (clang 17 does, the same way as here: NVVM redux.sync builtins).
// cooperative_groups/details/reduce.h and reduction_kernel.cu's warpReduceSum<int> name them for sm_80 on.
#pragma once
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ inline unsigned __reduce_add_sync(unsigned mask, unsigned value) { return __nvvm_redux_sync_add(value, mask); }
__device__ inline int __reduce_add_sync(unsigned mask, int value) { return __nvvm_redux_sync_add(value, mask); }
__device__ inline unsigned __reduce_min_sync(unsigned mask, unsigned value) { return __nvvm_redux_sync_umin(value, mask); }
__device__ inline int __reduce_min_sync(unsigned mask, int value) { return __nvvm_redux_sync_min(value, mask); }
__device__ inline unsigned __reduce_max_sync(unsigned mask, unsigned value) { return __nvvm_redux_sync_umax(value, mask); }
__device__ inline int __reduce_max_sync(unsigned mask, int value) { return __nvvm_redux_sync_max(value, mask); }
__device__ inline unsigned __reduce_and_sync(unsigned mask, unsigned value) { return __nvvm_redux_sync_and(value, mask); }
__device__ inline unsigned __reduce_or_sync(unsigned mask, unsigned value) { return __nvvm_redux_sync_or(value, mask); }
__device__ inline unsigned __reduce_xor_sync(unsigned mask, unsigned value) { return __nvvm_redux_sync_xor(value, mask); }
#endif
