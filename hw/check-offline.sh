#!/usr/bin/env bash
# Checks the probe kernels' machine code without a GPU: clang compiles probes.cu's device side to PTX, ptxas
# assembles it for every architecture from Maxwell to Hopper, nvdisasm disassembles Turing to Hopper, and
# check_sass.py requires each kernel to issue exactly its probe's one memory instruction (kind and width). A probe whose
# load the compiler moved, split, widened or dropped would measure something else on a GPU.
#
# Installs what is missing: clang-15 (Debian), and ptxas and nvdisasm from NVIDIA's PyPI wheels into
# .tools/cuda. Run from anywhere; .ci/test.sh runs it.
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
if [ ! -x "$tools/bin/ptxas" ] || [ ! -x "$tools/bin/nvdisasm" ]; then
  say "fetching ptxas (CUDA 12.9) and nvdisasm (CUDA 13.5) wheels"
  rm -rf "$tools" && mkdir -p "$tools/bin" "$tools/wheels"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$tools/wheels" \
    nvidia-cuda-nvcc-cu12==12.9.86 nvidia-cuda-nvdisasm==13.5.37
  python3 - "$tools" <<'PY'
import os, sys, zipfile, glob
tools = sys.argv[1]
for whl in glob.glob(f"{tools}/wheels/*.whl"):
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if name.endswith(("/bin/ptxas", "/bin/nvdisasm")):
                dest = f"{tools}/bin/{os.path.basename(name)}"
                with open(dest, "wb") as f:
                    f.write(z.read(name))
                os.chmod(dest, 0o755)
PY
  rm -rf "$tools/wheels"
fi

build=target/hw-check
mkdir -p "$build"
cargo run --quiet --release -- calibrate emit --out "$build" >/dev/null
# clang needs a CUDA path with a version file and libdevice-free device code: -nocudainc -nocudalib and the
# shim declare what the kernels use.
mkdir -p "$build/cuda/bin"
echo "CUDA Version 12.9.0" > "$build/cuda/version.txt"
ln -sf "$tools/bin/ptxas" "$build/cuda/bin/ptxas"
status=0
# PTX for Maxwell/Pascal (the trap path): assembled only, since nvdisasm from CUDA 13 reads Turing on.
clang++-15 -x cuda --cuda-path="$build/cuda" --cuda-gpu-arch=sm_52 --cuda-device-only -nocudainc -nocudalib \
  -Wno-unknown-cuda-version -include hw/device-shim.h -O3 -S -o "$build/probes-sm_52.ptx" "$build/probes.cu"
for arch in sm_52 sm_60 sm_61; do
  "$tools/bin/ptxas" -arch="$arch" -O3 -o "$build/probes-$arch.cubin" "$build/probes-sm_52.ptx"
  echo "$arch: assembled"
done
# PTX for Volta on (the nanosleep path; PTX ISA 6.4, which nanosleep needs): assembled for Volta, and from
# Turing on disassembled and checked.
clang++-15 -x cuda --cuda-path="$build/cuda" --cuda-gpu-arch=sm_70 --cuda-device-only -nocudainc -nocudalib \
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
