#!/usr/bin/env bash
# Checks the probe program without a GPU: clang checks the host side against CUDA's runtime headers and compiles probes.cu's device side to PTX, ptxas
# assembles it for every architecture from Maxwell to Hopper, nvdisasm disassembles Turing to Hopper, and
# check_sass.py requires each kernel to issue exactly its probe's one memory instruction (kind and width). A probe whose
# load the compiler moved, split, widened or dropped would measure something else on a GPU.
#
# Installs what is missing: clang-15 (Debian), and ptxas, nvdisasm and the runtime headers from NVIDIA's PyPI
# wheels into .tools/cuda. Run from anywhere; .ci/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=$PWD/.tools/cuda
say() { printf '[check-offline] %s\n' "$*"; }

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

build=target/hw-check
mkdir -p "$build"
cargo run --quiet --release -- calibrate emit --out "$build" >/dev/null
# clang wants a whole CUDA installation (bin, include, lib64, nvvm/libdevice and a version) to pick the current launch
# ABI; the device side then needs none of its headers: -nocudainc -nocudalib and the shim declare what the
# kernels use.
echo "CUDA Version 12.9.0" > "$tools/version.txt"
mkdir -p "$tools/lib64"   # looked for, not used
status=0
# The host side (main, the probe table, launches through kernel pointers) against CUDA 12.9's runtime headers.
# clang 15 and those headers disagree about some math declarations, so only errors in probes.cu itself count.
host=$(clang++-15 -x cuda --cuda-path="$tools" --cuda-gpu-arch=sm_70 --cuda-host-only -nocudainc -D__CUDACC__ \
  -Wno-unknown-cuda-version -I"$tools/include" -include __clang_cuda_builtin_vars.h -include cuda_runtime.h \
  -fsyntax-only -ferror-limit=0 "$build/probes.cu" 2>&1 || true)
if grep -q "^$build/probes.cu:[0-9]*:[0-9]*: error" <<<"$host"; then
  grep -A3 "^$build/probes.cu:[0-9]*:[0-9]*: error" <<<"$host"
  status=1
else
  echo "host: main and the probe table compile against the CUDA 12.9 runtime headers"
fi
# PTX for Maxwell/Pascal (the trap path): assembled only, since nvdisasm from CUDA 13 reads Turing on.
clang++-15 -x cuda --cuda-path="$tools" --cuda-gpu-arch=sm_52 --cuda-device-only -nocudainc -nocudalib \
  -Wno-unknown-cuda-version -include hw/device-shim.h -O3 -S -o "$build/probes-sm_52.ptx" "$build/probes.cu"
for arch in sm_52 sm_60 sm_61; do
  "$tools/bin/ptxas" -arch="$arch" -O3 -o "$build/probes-$arch.cubin" "$build/probes-sm_52.ptx"
  echo "$arch: assembled"
done
# PTX for Volta on (the nanosleep path; PTX ISA 6.4, which nanosleep needs): assembled for Volta, and from
# Turing on disassembled and checked.
clang++-15 -x cuda --cuda-path="$tools" --cuda-gpu-arch=sm_70 --cuda-device-only -nocudainc -nocudalib \
  -Xclang -target-feature -Xclang +ptx64 \
  -Wno-unknown-cuda-version -include hw/device-shim.h -O3 -S -o "$build/probes-sm_70.ptx" "$build/probes.cu"
"$tools/bin/ptxas" -arch=sm_70 -O3 -o "$build/probes-sm_70.cubin" "$build/probes-sm_70.ptx"
echo "sm_70: assembled"
for arch in sm_75 sm_80 sm_86 sm_89 sm_90; do
  "$tools/bin/ptxas" -arch="$arch" -O3 -o "$build/probes-$arch.cubin" "$build/probes-sm_70.ptx"
  "$tools/bin/nvdisasm" -c "$build/probes-$arch.cubin" 2>/dev/null > "$build/probes-$arch.sass"
  if out=$(python3 hw/check_sass.py "$build/probes.txt" "$build/probes-$arch.sass"); then
    printf '%s: %s\n' "$arch" "$(tail -1 <<<"$out")"
  else
    grep -v ': [A-Z][A-Z0-9.]*$' <<<"$out" | sed "s/^/$arch: /"
    status=1
  fi
done
exit $status
