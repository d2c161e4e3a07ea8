#!/usr/bin/env bash
# Calibrate on your GPU: runs every warpscope probe kernel once under Nsight Compute, writes the counts to
# tests/data/hardware/<gpu>.json, and compares them with the engine's prediction for the GPU's CC.
#
#   bash hw/calibrate.sh            # file name from the GPU's name, e.g. nvidia-h200
#   bash hw/calibrate.sh my-gpu     # tests/data/hardware/my-gpu.json
#
# Needs: an NVIDIA GPU and driver, the CUDA toolkit (nvcc, ncu, cuobjdump), cargo (the README's setup
# installs it), python3 for the machine-code check, and permission to read GPU performance counters (root,
# or the driver option NVreg_RestrictProfilingToAdminUsers=0). Environment: WS_ARCH overrides nvcc's
# -arch (default: native). CUDA 13 no longer builds for Volta (CC 7.0) or older: measure those with CUDA 12.
set -euo pipefail
cd "$(dirname "$0")/.."
need() { command -v "$1" >/dev/null || { echo "calibrate: $1 not found: $2" >&2; exit 2; }; }
need nvcc "install the CUDA toolkit"
need ncu "Nsight Compute comes with the CUDA toolkit (or install nsight-compute)"
need nvidia-smi "no NVIDIA driver"
need cargo "run bash .ci/setup.sh first"

build=hw/build
mkdir -p "$build" tests/data/hardware
cargo build --release --quiet
ws() { cargo run --release --quiet -- "$@"; }
# CUDA's device 0 and nvidia-smi's GPU 0 are then the same card.
export CUDA_DEVICE_ORDER=PCI_BUS_ID

echo "== emit"
ws calibrate emit --out "$build"

echo "== build (nvcc -arch=${WS_ARCH:-native})"
nvcc -O3 -std=c++17 -arch="${WS_ARCH:-native}" -o "$build/probes" "$build/probes.cu"

echo "== machine code: one memory instruction per kernel"
if command -v cuobjdump >/dev/null && command -v python3 >/dev/null; then
  cuobjdump -sass "$build/probes" > "$build/probes.sass"
  if out=$(python3 hw/check_sass.py "$build/probes.txt" "$build/probes.sass"); then
    tail -1 <<<"$out"
  else
    grep -v ': [A-Z][A-Z0-9.]*$' <<<"$out"
    echo "calibrate: a probe kernel does not issue exactly its one memory instruction (see above)" >&2
    exit 1
  fi
else
  echo "cuobjdump or python3 missing: skipped"
fi

echo "== profile"
# Keep the metrics this Nsight Compute knows for this GPU (older versions lack some instruction counters).
# If the query's format is not understood (no sector metric in it), ask for all of them and let ncu decide.
known=$(ncu --query-metrics 2>/dev/null | awk '{print $1}' || true)
metrics=()
for m in $(ws calibrate metrics | tr ',' ' '); do
  if ! grep -qx l1tex__t_sectors_pipe_lsu_mem_global_op_ld <<<"$known" || grep -qx "${m%.sum}" <<<"$known"; then
    metrics+=("$m")
  else
    echo "not on this GPU: $m"
  fi
done
# LC_ALL=C: numbers without a locale's separators. A failed probe is in device.json; ingest reports it.
(IFS=,; LC_ALL=C ncu --csv --print-units base --clock-control none --kernel-name "regex:^ws_" \
  --metrics "${metrics[*]}" --log-file "$build/ncu.csv" "$build/probes" "$build/device.json") \
  || echo "calibrate: ncu exited with $?; ingesting what was measured" >&2

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1)
name=${1:-$(tr 'A-Z' 'a-z' <<<"$gpu" | tr -cs 'a-z0-9' '-' | sed 's/^-*//; s/-*$//')}
out="tests/data/hardware/$name.json"
echo "== ingest -> $out"
ws calibrate ingest --device "$build/device.json" --ncu "$build/ncu.csv" \
  --driver "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 | head -1)" \
  --ncu-version "$(ncu --version | tail -1)" -o "$out"

echo "== compare"
ws calibrate compare "$out" --svg "$build/agreement.svg"
