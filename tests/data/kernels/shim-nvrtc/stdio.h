// warpscope corpus shim for NVRTC (hw/make-corpus.sh): NVRTC compiles device code only and ships no C library
// headers. The corpus kernels include <stdio.h> for host code that was left out (and device printf, which
// NVRTC declares itself), so an empty header is enough.
#pragma once
