// warpscope corpus shim for NVRTC (tests/data/published/make.sh): stands in for the cuBLAS header, which
// NVRTC cannot use (host API). It keeps the one thing device code gets from it: cuBLAS 12's cublas_api.h
// includes <cuda_fp16.h> and <cuda_bf16.h>, and llm.c's common.h names __nv_bfloat16 through it.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
