#!/usr/bin/env bash
# Regenerates the compiler output next to async_copy.cu with the toolchain of hw/make-corpus.sh (clang-15, and
# ptxas, nvdisasm and NVRTC from NVIDIA's PyPI wheels in .tools/cuda; run hw/make-corpus.sh once to install
# them). No GPU needed. Line information is kept (clang -gline-tables-only, NVRTC/ptxas -lineinfo, nvdisasm -g).
#   sm_80.ptx (clang) -> ptxas sm_80 -> sm_80.sass; the same PTX -> ptxas sm_90 -> sm_90.sass
#   nvrtc_sm_90.ptx (NVRTC) -> ptxas sm_90 -> nvrtc_sm_90.sass
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
tools=${TOOLS:-$root/.tools/cuda}
dir=tests/data/async
corpus=$root/tests/data/kernels
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
resource=$(clang++-15 -print-resource-dir)
clang++-15 -x cuda --cuda-path="$tools" --cuda-device-only -nocudainc -nocudalib -Wno-unknown-cuda-version \
  -isystem "$resource/include/cuda_wrappers" -I"$corpus/shim" -I"$tools/include" -D_CG_LIMIT_INCLUDED_DEPENDENCIES \
  -include pre.h -include __clang_cuda_runtime_wrapper.h -include post.h \
  -O3 -S -gline-tables-only -fdebug-prefix-map="$root/=" --cuda-gpu-arch=sm_80 -o "$dir/sm_80.ptx" "$dir/async_copy.cu"
for arch in sm_80 sm_90; do
  "$tools/bin/ptxas" -arch=$arch -O3 -lineinfo -o "$work/$arch.cubin" "$dir/sm_80.ptx"
  "$tools/bin/nvdisasm" -c -g "$work/$arch.cubin" 2>/dev/null > "$dir/$arch.sass"
done
LD_LIBRARY_PATH="$tools/lib" python3 hw/nvrtc-ptx.py "$tools/lib/libnvrtc.so.12" "$dir/async_copy.cu" 90 \
  -I"$corpus/shim-nvrtc" -I"$tools/include" -lineinfo | sed "s|\"$root/|\"|" > "$dir/nvrtc_sm_90.ptx"
"$tools/bin/ptxas" -arch=sm_90 -O3 -lineinfo -o "$work/nvrtc.cubin" "$dir/nvrtc_sm_90.ptx"
"$tools/bin/nvdisasm" -c -g "$work/nvrtc.cubin" 2>/dev/null > "$dir/nvrtc_sm_90.sass"
