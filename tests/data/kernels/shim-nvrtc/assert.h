// warpscope corpus shim for NVRTC (hw/make-corpus.sh): NVRTC ships no C library headers. matrixMul.cu includes
// <assert.h> for host code that was left out; no corpus kernel calls assert.
#pragma once
