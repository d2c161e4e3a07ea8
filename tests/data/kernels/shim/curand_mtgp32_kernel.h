// warpscope corpus shim: clang 15's __clang_cuda_runtime_wrapper.h includes this cuRAND header
// unconditionally; the PyPI wheels hw/check-offline.sh installs don't ship cuRAND, and no corpus kernel uses it.
#pragma once
