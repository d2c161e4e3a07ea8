#!/usr/bin/env python3
# Rebuilds the four .cu files of tests/data/kernels from verbatim line ranges of NVIDIA/cuda-samples at COMMIT.
# Usage: python3 tests/data/kernels/extract-upstream.py PATH-TO-A-CLONE-OF-NVIDIA/cuda-samples
# (any clone holding COMMIT; a bare one is fine). Run once to create the corpus; hw/make-corpus.sh does not need it.
import os, subprocess, sys
REPO = sys.argv[1]
COMMIT = "c94ff366aed18c797b8a85dfaac7817b0228b420"
OUT = os.path.dirname(os.path.abspath(__file__))
def show(path):
    return subprocess.run(["git", "-C", REPO, "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True, text=True).stdout.split("\n")
def blob(path):
    return subprocess.run(["git", "-C", REPO, "rev-parse", f"{COMMIT}:{path}"], check=True,
                          capture_output=True, text=True).stdout.strip()
SPECS = [
    ("reduction/reduction_kernel.cu", "Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu",
     [(1, 445)], {446: "reduce7, cg_reduce_n, cg_reduce, multi_warp_cg_reduce, the host wrapper reduce<T> and its "
                       "instantiations, and the closing #endif of the _REDUCE_KERNEL_H_ guard"},
     ["template __global__ void reduce0<int>(int *, int *, unsigned int);",
      "template __global__ void reduce1<int>(int *, int *, unsigned int);",
      "template __global__ void reduce2<int>(int *, int *, unsigned int);",
      "template __global__ void reduce3<int>(int *, int *, unsigned int);",
      "template __global__ void reduce4<int, 256>(int *, int *, unsigned int);",
      "template __global__ void reduce5<int, 256>(int *, int *, unsigned int);",
      "template __global__ void reduce6<int, 256, true>(int *, int *, unsigned int);",
      "",
      "#endif // closes the upstream _REDUCE_KERNEL_H_ guard opened above"]),
    ("transpose/transpose.cu", "Samples/6_Performance/transpose/transpose.cu",
     [(1, 43), (51, 57), (76, 297)],
     {44: "helper_cuda.h / helper_image.h / helper_string.h includes (cuda-samples Common/, host-only) and the host "
          "global sSDKsample",
      58: "host-only globals MATRIX_SIZE_X/Y, MUL_FACTOR, FLOOR, MAX_TILES and NUM_REPS (none used by the kernels)",
      298: "host code (computeTransposeGold, getParams, showHelp, main)"},
     []),
    ("matrixMul/matrixMul.cu", "Samples/0_Introduction/matrixMul/matrixMul.cu",
     [(1, 44), (54, 126)],
     {45: "cuda_profiler_api.h / cuda_runtime.h / helper_cuda.h / helper_functions.h includes (clang's CUDA wrapper "
          "already provides the runtime declarations; the profiler and helper headers are host-only)",
      127: "host code (ConstantInit, MatrixMultiply, main)"},
     ["template __global__ void MatrixMulCUDA<32>(float *, float *, float *, int, int);"]),
    ("vectorAdd/vectorAdd.cu", "Samples/0_Introduction/vectorAdd/vectorAdd.cu",
     [(1, 39), (41, 54)],
     {40: "helper_cuda.h include (cuda-samples Common/, host-only)",
      55: "host code (main)"},
     []),
]
for out, path, ranges, omitted, inst in SPECS:
    src = show(path)
    n = len(src) - (1 if src[-1] == "" else 0)
    rng = ", ".join(f"{a}-{b}" for a, b in ranges)
    lines = [
        "// ============================================================================================",
        "// warpscope test corpus. NOT part of the upstream file: this header block, the [warpscope]",
        "// omission markers, and the section at the end marked WARPSCOPE-ADDED.",
        "// Origin:  https://github.com/NVIDIA/cuda-samples",
        f"// Path:    {path}",
        f"// Commit:  {COMMIT} (blob {blob(path)}, {n} lines)",
        "// License: BSD-3-Clause (NVIDIA's copyright notice is kept verbatim below; full text in",
        "//          tests/data/kernels/LICENSE-cuda-samples)",
        f"// Content: upstream lines {rng}, copied verbatim; everything else omitted as marked.",
        "// Regenerate the .ptx/.sass next to this file with hw/make-corpus.sh.",
        "// ============================================================================================",
    ]
    for a, b in ranges:
        lines += src[a - 1:b]
        nxt = b + 1
        if nxt in omitted:
            later = [r[0] for r in ranges if r[0] > b]
            end = (later[0] - 1) if later else n
            lines.append(f"// [warpscope] upstream lines {nxt}-{end} omitted: {omitted[nxt]}")
    if inst:
        lines += ["", "// ==== WARPSCOPE-ADDED (not upstream): explicit instantiations so the device compile emits the kernels ===="]
        lines += inst
    with open(f"{OUT}/{out}", "w") as f:
        f.write("\n".join(lines) + "\n")
    print(out, len(lines))
