#!/usr/bin/env bash
# Regenerates the compiler output in tests/data/kernels/ (PTX and nvdisasm SASS) from the verbatim
# NVIDIA/cuda-samples kernels next to it (see tests/data/kernels/README.md). No GPU needed.
#
#   hw/make-corpus.sh           rewrite every <kernel>/sm_XX.ptx and <kernel>/sm_XX.sass
#   hw/make-corpus.sh --check   regenerate into a temporary folder and fail if anything differs
#
# Toolchain: the same as hw/check-offline.sh, installed the same way if missing (clang-15 from Debian; ptxas
# 12.9, nvdisasm 13.5 and the CUDA 12.9 runtime headers from NVIDIA's PyPI wheels, into .tools/cuda).
#
# Per kernel file K.cu and architecture A in sm_75 sm_80 (clang) and sm_75 sm_80 sm_90 (NVRTC):
#   clang++-15 (device only, CUDA 12.9 headers through clang's own CUDA wrapper) -> A.ptx
#   ptxas -arch=A -O3 -lineinfo A.ptx -> cubin;  nvdisasm -c -g cubin -> A.sass
# Every step keeps line information (clang -gline-tables-only, NVRTC -lineinfo, ptxas -lineinfo, nvdisasm -g:
# `.loc` directives in the PTX, `//## File "K.cu", line N` comments in the SASS), which is how the tests match
# each PTX and SASS memory instruction to the CUDA line it came from. File names are written relative to the
# repository (clang -fdebug-prefix-map; NVRTC's, which start with the working directory, are cut the same way)
# so the output does not depend on where the repository is checked out.
# sm_90: clang 15 (LLVM 15) has no sm_90 target, so there is no sm_90.ptx; sm_90.sass is ptxas -arch=sm_90
# run on sm_80.ptx (PTX is forward compatible; this is what the driver's JIT would do).
#   NVRTC 12.9 (NVIDIA's CUDA C++ compiler, the device half of nvcc, from its PyPI wheel) -> nvrtc_A.ptx
#   ptxas -arch=A -O3 nvrtc_A.ptx -> cubin;  nvdisasm -c cubin -> nvrtc_A.sass
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tools=$root/.tools/cuda
corpus=$root/tests/data/kernels
say() { printf '[make-corpus] %s\n' "$*"; }

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# --- toolchain: identical to the install part of hw/check-offline.sh ---
if ! command -v clang++-15 >/dev/null; then
  say "installing clang-15"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-15 >/dev/null \
    || { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-15 >/dev/null; }
fi
if [ ! -x "$tools/bin/ptxas" ] || [ ! -x "$tools/bin/nvdisasm" ] || [ ! -f "$tools/include/cuda_runtime.h" ] \
  || [ ! -f "$tools/nvvm/libdevice/libdevice.10.bc" ]; then
  say "fetching ptxas and the runtime headers (CUDA 12.9) and nvdisasm (CUDA 13.5) wheels"
  rm -rf "$tools" && mkdir -p "$tools/bin" "$tools/include" "$tools/wheels"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$tools/wheels" \
    nvidia-cuda-nvcc-cu12==12.9.86 nvidia-cuda-runtime-cu12==12.9.79 nvidia-cuda-nvdisasm==13.5.37
  python3 - "$tools" <<'PY'
import os, sys, zipfile, glob
tools = sys.argv[1]
for whl in glob.glob(f"{tools}/wheels/*.whl"):
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if name.endswith(("/bin/ptxas", "/bin/nvdisasm")):
                dest = f"{tools}/bin/{os.path.basename(name)}"
            elif "/cuda_runtime/include/" in name or "/cuda_nvcc/include/" in name:
                dest = f"{tools}/include/" + name.split("/include/", 1)[1]
            elif name.endswith("/libdevice.10.bc"):
                dest = f"{tools}/nvvm/libdevice/libdevice.10.bc"
            else:
                continue
            if name.endswith("/"):
                continue
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(z.read(name))
            if "/bin/" in name:
                os.chmod(dest, 0o755)
PY
  rm -rf "$tools/wheels"
fi
if [ ! -f "$tools/lib/libnvrtc.so.12" ] || [ ! -f "$tools/lib/libnvrtc-builtins.so.12.9" ]; then
  say "fetching NVRTC (CUDA 12.9) from its wheel"
  mkdir -p "$tools/lib" "$tools/wheels"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$tools/wheels" nvidia-cuda-nvrtc-cu12==12.9.86
  python3 - "$tools" <<'PY'
import glob, os, sys, zipfile
tools = sys.argv[1]
for whl in glob.glob(f"{tools}/wheels/nvidia_cuda_nvrtc*.whl"):
    with zipfile.ZipFile(whl) as z:
        for name in ("nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.9"):
            with open(f"{tools}/lib/{os.path.basename(name)}", "wb") as f:
                f.write(z.read(name))
PY
  rm -rf "$tools/wheels"
fi
# clang wants a whole CUDA installation (a version file and lib64 among it), as in hw/check-offline.sh.
echo "CUDA Version 12.9.0" > "$tools/version.txt"
mkdir -p "$tools/lib64"

resource=$(clang++-15 -print-resource-dir)
# -nocudainc stops clang adding its CUDA include setup, which is then spelled out so that shim/pre.h can come
# first: clang's cuda_wrappers, the shim folder, the CUDA 12.9 headers, pre.h, clang's runtime wrapper, post.h.
# _CG_LIMIT_INCLUDED_DEPENDENCIES (a cooperative_groups option) keeps cooperative_groups off libcu++ (cuda/std),
# which the wheels don't ship. The shims are described in tests/data/kernels/README.md.
cuda_flags=(
  -x cuda --cuda-path="$tools" --cuda-device-only -nocudainc -nocudalib -Wno-unknown-cuda-version
  -isystem "$resource/include/cuda_wrappers" -I"$corpus/shim" -I"$tools/include"
  -D_CG_LIMIT_INCLUDED_DEPENDENCIES
  -include pre.h -include __clang_cuda_runtime_wrapper.h -include post.h
  -O3 -S -gline-tables-only -fdebug-prefix-map="$root/="
)

kernels=(reduction/reduction_kernel.cu transpose/transpose.cu matrixMul/matrixMul.cu vectorAdd/vectorAdd.cu)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$corpus
[ "$check" = 1 ] && out=$work/out

for k in "${kernels[@]}"; do
  dir=$(dirname "$k")
  mkdir -p "$out/$dir"
  for arch in sm_75 sm_80; do
    clang++-15 "${cuda_flags[@]}" --cuda-gpu-arch="$arch" -o "$out/$dir/$arch.ptx" "$corpus/$k"
  done
  for arch in sm_75 sm_80 sm_90; do
    ptx=$arch; [ "$arch" = sm_90 ] && ptx=sm_80
    "$tools/bin/ptxas" -arch="$arch" -O3 -lineinfo -o "$work/$arch.cubin" "$out/$dir/$ptx.ptx"
    # nvdisasm warns on stderr that it falls back to the "Old" ELF format for these cubins; the listing is
    # complete all the same (hw/check-offline.sh discards the same warning).
    "$tools/bin/nvdisasm" -c -g "$work/$arch.cubin" 2>/dev/null > "$out/$dir/$arch.sass"
    [ -s "$out/$dir/$arch.sass" ] || { say "$dir/$arch.sass: nvdisasm produced nothing"; exit 1; }
  done
  # NVIDIA's compiler: NVRTC needs only the CUDA headers (cooperative_groups) and the NVRTC shims.
  for arch in sm_75 sm_80 sm_90; do
    LD_LIBRARY_PATH="$tools/lib" python3 "$root/hw/nvrtc-ptx.py" "$tools/lib/libnvrtc.so.12" "$corpus/$k" "${arch#sm_}" \
      -I"$corpus/shim-nvrtc" -I"$tools/include" -D_CG_LIMIT_INCLUDED_DEPENDENCIES -lineinfo \
      | sed "s|\"$root/|\"|" > "$out/$dir/nvrtc_$arch.ptx"
    "$tools/bin/ptxas" -arch="$arch" -O3 -lineinfo -o "$work/nvrtc_$arch.cubin" "$out/$dir/nvrtc_$arch.ptx"
    "$tools/bin/nvdisasm" -c -g "$work/nvrtc_$arch.cubin" 2>/dev/null > "$out/$dir/nvrtc_$arch.sass"
    [ -s "$out/$dir/nvrtc_$arch.sass" ] || { say "$dir/nvrtc_$arch.sass: nvdisasm produced nothing"; exit 1; }
  done
  say "$dir: sm_75.ptx sm_80.ptx sm_75.sass sm_80.sass sm_90.sass, nvrtc_sm_{75,80,90}.{ptx,sass}"
done

if [ "$check" = 1 ]; then
  status=0
  for k in "${kernels[@]}"; do
    dir=$(dirname "$k")
    for f in sm_75.ptx sm_80.ptx sm_75.sass sm_80.sass sm_90.sass nvrtc_sm_75.ptx nvrtc_sm_80.ptx nvrtc_sm_90.ptx \
      nvrtc_sm_75.sass nvrtc_sm_80.sass nvrtc_sm_90.sass; do
      # NVRTC names internal-linkage symbols (cooperative_groups' constants) with a hash that changes
      # from one compilation to the next: `_ZN54_INTERNAL_00000000_19_reduction_kernel_cu_0f47cdcc_92818...`.
      # The comparison masks that hash, and the `.b8` rows of NVRTC's `.debug_str` section, where the same
      # names are spelled as bytes; everything else must be identical.
      mask() { sed -E -e 's/_ZN[0-9]+_INTERNAL_[0-9]+_[0-9]+_[A-Za-z0-9_]+_cu_[0-9a-f]{8}_[0-9]+/_INTERNAL_/g' -e '/^\.b8 /d' "$1"; }
      if ! cmp -s <(mask "$out/$dir/$f") <(mask "$corpus/$dir/$f"); then
        say "differs: tests/data/kernels/$dir/$f"
        diff -u "$corpus/$dir/$f" "$out/$dir/$f" | head -20 || true
        status=1
      fi
    done
  done
  [ "$status" = 0 ] && say "all generated files match"
  exit $status
fi
