// warpscope corpus shim, force-included BEFORE clang's __clang_cuda_runtime_wrapper.h (hw/make-corpus.sh).
// clang 15's __clang_cuda_texture_intrinsics.h names the texture<T, dim, mode> reference template, which
// CUDA 12 removed from its headers. Only its name is needed (no corpus kernel uses textures); the third
// parameter is int, so cudaReadModeElementType etc. convert to it once the runtime headers have declared them.
#pragma once
template <class T, int texType, int mode> struct texture {};
