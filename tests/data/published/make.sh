#!/usr/bin/env bash
# Compiles the published-kernel corpus (tests/data/published/, see README.md there) to PTX with NVRTC 12.9 and
# to SASS with ptxas 12.9 + nvdisasm 13.5. No GPU needed. Idempotent.
#
#   tests/data/published/make.sh           rewrite every <repo>/<stem>/nvrtc_sm_XX.ptx and .sass
#   tests/data/published/make.sh --check   regenerate into a temporary folder and fail if anything differs
#
# Toolchain: the one hw/make-corpus.sh installs into .tools/cuda (NVRTC 12.9, ptxas 12.9, nvdisasm 13.5, the
# CUDA 12.9 runtime headers: cuda_fp16.h, cuda_bf16.h, mma.h, cooperative_groups). When it is missing this
# script runs `hw/make-corpus.sh --check`, which installs it and writes nothing else outside a temp dir.
# One kernel (siboehm's 12_kernel_double_buffering.cuh) includes <cuda/barrier>, which is libcu++ (CCCL): it
# comes from the nvidia-cuda-cccl-cu12==12.9.27 wheel, unpacked into $WARPSCOPE_CCCL (default .tools/cuda-cccl).
#
# Per build (the list below): NVRTC compiles the file for compute_XX with -lineinfo (hw/nvrtc-ptx.py adds
# -default-device --std=c++17) -> nvrtc_sm_XX.ptx; ptxas -arch=sm_XX -O3 -lineinfo -> cubin;
# nvdisasm -c -g -> nvrtc_sm_XX.sass.
#
# NVRTC compiles device code only and has no C/C++ library, so it does not read the corpus files as they are:
#  * it reads a copy of each repo folder (a "view", in a temp dir) in which the host-only lines listed in
#    nvrtc-host-lines.txt (host functions: main, launchers, CPU references; host-only globals) are replaced by
#    empty lines. Preprocessor lines inside those ranges are kept, so #if nesting and macros are unchanged.
#    Every other line is byte for byte the corpus file, and the line numbers are the same, so the PTX's .loc
#    lines are the corpus file's lines;
#  * shim-nvrtc/ stands in for host headers (empty files) and <type_traits> (std::bool_constant), and
#    shim-nvrtc/prelude.h, pre-included, gives the few C library names device code uses (uint32_t, FLT_MAX,
#    INFINITY, M_PI, uint). tests/data/kernels/shim-nvrtc (nv/target) is on the include path too;
#  * template kernels nothing in the device code instantiates are compiled through <stem>.inst.cu, which
#    includes the verbatim file and instantiates them with the host code's arguments.
# File names in the output are relative to the repository (tests/data/published/..., .tools/cuda/include/...),
# as in hw/make-corpus.sh's output: NVRTC runs in a stand-in for the repository root (see $tree below).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tools=$root/.tools/cuda
cccl=${WARPSCOPE_CCCL:-$root/.tools/cuda-cccl}
say() { printf '[published] %s\n' "$*"; }

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

if [ ! -f "$tools/lib/libnvrtc.so.12" ] || [ ! -x "$tools/bin/ptxas" ] || [ ! -x "$tools/bin/nvdisasm" ] \
  || [ ! -f "$tools/include/cuda_fp16.h" ]; then
  say "installing the toolchain with hw/make-corpus.sh --check"
  bash "$root/hw/make-corpus.sh" --check >/dev/null
fi
if [ ! -f "$cccl/include/cuda/barrier" ]; then
  say "fetching libcu++ (nvidia-cuda-cccl-cu12==12.9.27) into $cccl"
  mkdir -p "$cccl/wheels"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$cccl/wheels" nvidia-cuda-cccl-cu12==12.9.27
  python3 - "$cccl" <<'PY'
import glob, os, sys, zipfile
cccl = sys.argv[1]
for whl in glob.glob(f"{cccl}/wheels/nvidia_cuda_cccl*.whl"):
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if "/cuda_cccl/include/" not in name or name.endswith("/"):
                continue
            dest = f"{cccl}/include/" + name.split("/cuda_cccl/include/", 1)[1]
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(z.read(name))
PY
  rm -rf "$cccl/wheels"
fi

# SOURCE (relative to this folder)   ARCHS (sm_XX, comma-separated)
# sm_80 and up only: cp.async, ldmatrix, mma.sync.m16n8k16 and cuda::memcpy_async's hardware path.
builds=(
  "siboehm__SGEMM_CUDA/1_naive.cuh                              75,80,90"
  "siboehm__SGEMM_CUDA/2_kernel_global_mem_coalesce.inst.cu     75,80,90"
  "siboehm__SGEMM_CUDA/3_kernel_shared_mem_blocking.inst.cu     75,80,90"
  "siboehm__SGEMM_CUDA/4_kernel_1D_blocktiling.inst.cu          75,80,90"
  "siboehm__SGEMM_CUDA/5_kernel_2D_blocktiling.inst.cu          75,80,90"
  "siboehm__SGEMM_CUDA/6_kernel_vectorize.inst.cu               75,80,90"
  "siboehm__SGEMM_CUDA/7_kernel_resolve_bank_conflicts.inst.cu  75,80,90"
  "siboehm__SGEMM_CUDA/8_kernel_bank_extra_col.inst.cu          75,80,90"
  "siboehm__SGEMM_CUDA/9_kernel_autotuned.inst.cu               75,80,90"
  "siboehm__SGEMM_CUDA/10_kernel_warptiling.inst.cu             75,80,90"
  "siboehm__SGEMM_CUDA/11_kernel_double_buffering.inst.cu       75,80,90"
  "siboehm__SGEMM_CUDA/12_kernel_double_buffering.inst.cu       75,80,90"
  "karpathy__llm.c/layernorm_forward.cu                         75,80,90"
  "karpathy__llm.c/softmax_forward.cu                           75,80,90"
  "karpathy__llm.c/attention_forward.cu                         75,80,90"
  "karpathy__llm.c/encoder_forward.cu                           75,80,90"
  "karpathy__llm.c/gelu_forward.cu                              75,80,90"
  "karpathy__llm.c/adamw.cu                                     75,80,90"
  "karpathy__llm.c/matmul_backward_bias.inst.cu                 75,80,90"
  "NVIDIA__cuda-samples/histogram64.cu                          75,80,90"
  "NVIDIA__cuda-samples/histogram256.cu                         75,80,90"
  "NVIDIA__cuda-samples/scan.cu                                 75,80,90"
  "NVIDIA__cuda-samples/convolutionSeparable.cu                 75,80,90"
  "NVIDIA__cuda-samples/FDTD3dGPUKernel.cuh                     75,80,90"
  "tspeterkim__flash-attention-minimal/flash.cu                 75,80,90"
  "Bruce-Lee-LY__cuda_hgemm/mma_permuted.cu                     80,90"
  "Bruce-Lee-LY__cuda_hgemm/mma_async_stage3.cu                 80,90"
  "Bruce-Lee-LY__cuda_hgemm/wmma_padding.cu                     75,80,90"
  "KnowingNothing__MatmulTutorial/matmul-v07.cu                 80,90"
  "KnowingNothing__MatmulTutorial/matmul-v15.cu                 80,90"
  "Liu-xiandong__How_to_optimize_in_GPU/reduce_v0_baseline.cu   75,80,90"
  "Liu-xiandong__How_to_optimize_in_GPU/reduce_v2_no_bank_conflict.cu 75,80,90"
  "Liu-xiandong__How_to_optimize_in_GPU/reduce_v5_completely_unroll.inst.cu 75,80,90"
  "Liu-xiandong__How_to_optimize_in_GPU/reduce_v7_shuffle.inst.cu 75,80,90"
  "Liu-xiandong__How_to_optimize_in_GPU/elementwise_add.cu      75,80,90"
  "Liu-xiandong__How_to_optimize_in_GPU/sgemm_v1.inst.cu        75,80,90"
  "Liu-xiandong__How_to_optimize_in_GPU/Sgemv_v0.cu             75,80,90"
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$here
[ "$check" = 1 ] && out=$work/out
# NVRTC runs in $tree, a stand-in for the repository root: the views sit at tests/data/published/<repo>, and
# links give the shims and the toolchain their repository paths. Every path NVRTC sees is then relative and the
# same as in the repository, so the file names it writes (.file lines, and __FILE__ strings that asserts put
# in the PTX) do not depend on where the repository or the temp dir is.
tree=$work/tree
view=$tree/tests/data/published
mkdir -p "$view" "$tree/tests/data/kernels" "$tree/.tools"
ln -s "$here/shim-nvrtc" "$view/shim-nvrtc"
ln -s "$root/tests/data/kernels/shim-nvrtc" "$tree/tests/data/kernels/shim-nvrtc"
ln -s "$tools" "$tree/.tools/cuda"
ln -s "$cccl" "$tree/.tools/cuda-cccl"

# The views: each repo folder copied, with nvrtc-host-lines.txt's ranges blanked (preprocessor lines kept).
python3 - "$here" "$view" <<'PY'
import os, shutil, sys
here, view = sys.argv[1], sys.argv[2]
spec = {}
for line in open(f"{here}/nvrtc-host-lines.txt"):
    line = line.split("#", 1)[0].split()
    if not line:
        continue
    ranges = []
    for r in line[1:]:
        a, _, b = r.partition("-")
        ranges.append((int(a), int(b or a)))
    spec[line[0]] = ranges
for d in sorted(os.listdir(here)):
    if "__" not in d or not os.path.isdir(f"{here}/{d}"):
        continue
    os.makedirs(f"{view}/{d}", exist_ok=True)
    for f in os.listdir(f"{here}/{d}"):
        src = f"{here}/{d}/{f}"
        if not os.path.isfile(src):
            continue
        ranges = spec.pop(f"{d}/{f}", None)
        if ranges is None:
            shutil.copyfile(src, f"{view}/{d}/{f}")
            continue
        lines = open(src, "rb").read().split(b"\n")
        blank = set()
        for a, b in ranges:
            assert 1 <= a <= b <= len(lines), (d, f, a, b)
            blank.update(range(a, b + 1))
        cont = False  # inside a preprocessor line continued with a backslash
        for i, l in enumerate(lines, 1):
            directive = cont or l.lstrip().startswith(b"#")
            cont = directive and l.rstrip().endswith(b"\\")
            if i in blank and not directive:
                lines[i - 1] = b""
        with open(f"{view}/{d}/{f}", "wb") as fh:
            fh.write(b"\n".join(lines))
if spec:
    sys.exit(f"nvrtc-host-lines.txt names files that are not here: {sorted(spec)}")
PY

failed=()
for b in "${builds[@]}"; do
  read -r src archs <<<"$b"
  dir=$(dirname "$src"); file=$(basename "$src")
  stem=${file%.inst.cu}; stem=${stem%.cu}; stem=${stem%.cuh}
  mkdir -p "$out/$dir/$stem"
  for a in ${archs//,/ }; do
    arch=sm_$a
    if ! (cd "$tree" && LD_LIBRARY_PATH="$tools/lib" python3 "$root/hw/nvrtc-ptx.py" "$tools/lib/libnvrtc.so.12" \
        "tests/data/published/$src" "$a" -I"tests/data/published/$dir" -Itests/data/published/shim-nvrtc \
        -Itests/data/kernels/shim-nvrtc -I.tools/cuda/include -I.tools/cuda-cccl/include \
        -D_CG_LIMIT_INCLUDED_DEPENDENCIES -include prelude.h -lineinfo) > "$work/nvrtc.ptx" 2> "$work/nvrtc.log"; then
      say "FAILED: NVRTC $src for $arch:"; grep -m5 -E 'error' "$work/nvrtc.log" >&2 || true
      failed+=("$src:$arch"); continue
    fi
    # NVRTC's .file names start with the working directory ($tree): cut it, as hw/make-corpus.sh does.
    sed "s|\"$tree/|\"|" "$work/nvrtc.ptx" > "$out/$dir/$stem/nvrtc_$arch.ptx"
    if ! "$tools/bin/ptxas" -arch="$arch" -O3 -lineinfo -o "$work/k.cubin" "$out/$dir/$stem/nvrtc_$arch.ptx" \
        2> "$work/ptxas.log"; then
      say "FAILED: ptxas $dir/$stem/nvrtc_$arch.ptx:"; head -5 "$work/ptxas.log" >&2
      failed+=("$src:$arch"); continue
    fi
    # nvdisasm warns on stderr that it falls back to the "Old" ELF format; the listing is complete.
    "$tools/bin/nvdisasm" -c -g "$work/k.cubin" 2>/dev/null > "$out/$dir/$stem/nvrtc_$arch.sass"
    [ -s "$out/$dir/$stem/nvrtc_$arch.sass" ] || { say "FAILED: nvdisasm $dir/$stem/nvrtc_$arch.sass is empty"; failed+=("$src:$arch"); }
  done
  say "$dir/$stem: nvrtc_sm_{${archs}}.{ptx,sass}"
done

status=0
if [ "${#failed[@]}" -gt 0 ]; then
  say "failed builds: ${failed[*]}"; status=1
fi
if [ "$check" = 1 ]; then
  # NVRTC names internal-linkage symbols with a hash that changes at every compilation (see
  # hw/make-corpus.sh); the comparison masks it and the .b8 rows of .debug_str that spell the same names.
  mask() { sed -E -e 's/_ZN[0-9]+_INTERNAL_[0-9]+_[0-9]+_[A-Za-z0-9_]+_cu_[0-9a-f]{8}_[0-9]+/_INTERNAL_/g' -e '/^\.b8 /d' "$1"; }
  while IFS= read -r f; do
    rel=${f#"$out/"}
    if ! cmp -s <(mask "$f") <(mask "$here/$rel"); then
      say "differs: tests/data/published/$rel"; status=1
    fi
  done < <(find "$out" -name 'nvrtc_sm_*' | sort)
  [ "$status" = 0 ] && say "all generated files match"
fi
exit $status
