// warpscope corpus shim for NVRTC (tests/data/published/make.sh): an empty stand-in for a host header.
// NVRTC ships no C/C++ library, cuBLAS, torch or cuda-samples helper headers; the corpus files include them
// for host code, which NVRTC's copy of the file blanks out (make.sh, nvrtc-host-lines.txt). The few
// declarations device code takes from the C library (fixed-width integers, FLT_MAX, INFINITY, M_PI, uint)
// come from prelude.h, which make.sh pre-includes.
#pragma once
