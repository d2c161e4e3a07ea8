// warpscope corpus shim for NVRTC (hw/make-corpus.sh): NVRTC declares the device runtime itself; the corpus
// kernels include <cuda_runtime.h> for their (omitted) host code.
#pragma once
