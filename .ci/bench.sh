#!/usr/bin/env bash
# The performance measurements behind the table in docs/performance.md. Not part of the test command: benchmarks record
# numbers, tests assert behaviour. Sets up what is missing like the test command, then:
#   1. engine throughput natively (criterion): 1,048,576 threads against one plain pass over the addresses;
#   2. the same workload in wasm in headless Chromium;
#   3. the page: time to interactive, keystroke to repaint on 1024-thread blocks, animation frame times;
#   4. the CLI on 1024-thread blocks, end to end;
#   5. the tiled SGEMM block against benches/sgemm_limit.c (gcc -O2), same run, counts checked equal;
#   6. whole grids: SGEMM 32x32 blocks (and brute force), and --grid 1024 on a 1024-thread block;
#   7. the cache model over the whole tiled SGEMM grid at N = 4096, against sgemm_limit in the same run;
#   8. the Python package: 1,000 small analyses, and a sweep of a template kernel's padding.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source .ci/setup.sh
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo), $(chromium --version 2>/dev/null | head -1)"

echo; echo "=== 1. engine, native (cargo bench --bench engine)"
cargo bench --locked --bench engine 2>&1 | grep -E "^(grid|8,192|sgemm)|time:" | grep -v "%"

echo; echo "=== 2. engine, wasm in headless Chromium (same workload)"
CHROMEDRIVER=$(command -v chromedriver) cargo test --locked --release --target wasm32-unknown-unknown --test wasm_bench -- --nocapture 2>&1 | grep "wasm-bench"
echo "(native SGEMM block: the sgemm/block N=1024 line of step 1; the analysis worker builds with the same release profile)"

echo; echo "=== 3. the page (trunk build --release, node .ci/perf.mjs)"
trunk build --release >/dev/null
for wasm in dist/*.wasm; do printf 'wasm %s: %s bytes gzipped\n' "$(basename "$wasm")" "$(gzip -9 -c "$wasm" | wc -c)"; done
node .ci/perf.mjs

echo; echo "=== 4. the CLI, end to end (release build, mean of 20 runs)"
cargo build --locked --release --bin warpscope >/dev/null 2>&1
for args in "--addr 4*tid --op LDG.E.32 --block 1024" "--preset transpose-naive --block 32x32" "--preset lea-double-index --block 1024"; do
  start=$(date +%s%N)
  for _ in $(seq 20); do target/release/warpscope analyze $args --format json >/dev/null; done
  end=$(date +%s%N)
  awk -v a="$args" -v s="$start" -v e="$end" 'BEGIN { printf "warpscope analyze %s: %.1f ms\n", a, (e - s) / 20000000 }'
done

echo; echo "=== 5. the tiled SGEMM block against its native limit (same run, whole process, mean of 10 runs)"
# benches/sgemm_limit.c computes the same per-instruction counts in plain C; both are timed as processes.
gcc -O2 -o target/sgemm_limit benches/sgemm_limit.c
mean_ms() { # mean wall time of 10 runs of the command, in ms
  local start end
  start=$(date +%s%N)
  for _ in $(seq 10); do "$@" >/dev/null; done
  end=$(date +%s%N)
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", (e - s) / 10000000 }'
}
for n in 1024 4096; do
  ws=(target/release/warpscope analyze --cuda benches/sgemm.cu --block 32x32 --set "N=$n" --format json)
  # The counts must agree before the times mean anything.
  "${ws[@]}" > target/sgemm-ws.json
  target/sgemm_limit "$n" > target/sgemm-limit.txt
  node -e '
    const ws = JSON.parse(require("fs").readFileSync("target/sgemm-ws.json", "utf8")).instructions;
    const lim = require("fs").readFileSync("target/sgemm-limit.txt", "utf8").split("\n").filter((l) => l.startsWith("instr"))
      .map((l) => l.match(/issues (\d+) sectors (\d+) wavefronts (\d+)/).slice(1).map(Number));
    const got = ws.map((i) => [i.warps, i.sectors ?? 0, i.wavefronts ?? 0]);
    if (JSON.stringify(got) !== JSON.stringify(lim)) { console.error("counts differ:", JSON.stringify(got), JSON.stringify(lim)); process.exit(1); }'
  limit=$(mean_ms target/sgemm_limit "$n")
  ours=$(mean_ms "${ws[@]}")
  awk -v n="$n" -v a="$ours" -v b="$limit" 'BEGIN { printf "SGEMM N=%s block 32x32: warpscope analyze --format json %.1f ms, sgemm_limit %.1f ms: %.1fx (counts agree)\n", n, a, b, a / b }'
done

echo; echo "=== 6. whole grids"
t0=$(date +%s%N)
target/release/warpscope analyze --cuda benches/sgemm.cu --block 32x32 --grid 32x32 --set N=1024 --format json > target/sgemm-grid.json
t1=$(date +%s%N)
target/release/warpscope analyze --cuda benches/sgemm.cu --block 32x32 --grid 32x32 --set N=1024 --format json --every-block > target/sgemm-grid-each.json
t2=$(date +%s%N)
node -e '
  const [a, b] = ["target/sgemm-grid.json", "target/sgemm-grid-each.json"].map((f) => JSON.parse(require("fs").readFileSync(f, "utf8")));
  if (JSON.stringify(a.instructions) !== JSON.stringify(b.instructions)) { console.error("grid totals differ from brute force"); process.exit(1); }
  console.log(`SGEMM N=1024 grid 32x32: blocks ${JSON.stringify(a.blocks)}; LDS warp issues ${a.instructions[4].warps}; identical to running every block`);'
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "  whole grid %.2f s; --every-block (brute force) %.2f s\n", (b - a) / 1e9, (c - b) / 1e9 }'
printf '__global__ void k(const float *a, float *c) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    c[i] = 2.0f * a[i];\n}\n' > target/vadd.cu
t0=$(date +%s%N)
target/release/warpscope analyze --cuda target/vadd.cu --block 1024 --grid 1024 --format json > target/vadd.json
t1=$(date +%s%N)
node -e '
  const v = JSON.parse(require("fs").readFileSync("target/vadd.json", "utf8"));
  console.log(`--grid 1024 on a 1024-thread block: warp issues per instruction ${v.instructions.map((i) => i.warps).join(", ")}; blocks ${JSON.stringify(v.blocks)}`);'
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "  %.1f ms\n", (b - a) / 1e6 }'

echo; echo "=== 7. the cache model (docs/model.md#the-memory-system) over a whole grid: tiled SGEMM N=4096, 16,384 blocks of 32x32"
# Same-run native baseline: benches/sgemm_limit.c (gcc -O2) at N=4096, the project's native-limit program.
# The cache run is one process: the main run and its schedule check (another R) on two threads.
t0=$(date +%s%N)
target/release/warpscope analyze --cuda benches/sgemm.cu --block 32x32 --grid 128x128 --set N=4096 --caches --format json > target/sgemm-caches.json
t1=$(date +%s%N)
limit=$(mean_ms target/sgemm_limit 4096)
node -e '
  const c = JSON.parse(require("fs").readFileSync("target/sgemm-caches.json", "utf8")).caches;
  const sum = (lvl, op) => lvl.reduce((a, s) => a + s[op].requests, 0);
  console.log(`global warp issues ${sum(c.totals.l1, 0) + sum(c.totals.l1, 1)}; L2 load hit rate ${(100 * c.totals.l2[0][0].hits / c.totals.l2[0][0].sectors).toFixed(4)} %; DRAM read ${c.totals.dram_read_bytes} bytes`);'
awk -v a="$t0" -v b="$t1" -v l="$limit" 'BEGIN { printf "  cache model, whole grid: %.2f s (sgemm_limit 4096 in the same run: %.1f ms)\n", (b - a) / 1e9, l }'

echo; echo "=== 8. the Python package: 1,000 small analyses, and a sweep of a template kernel's padding"
# The wheel the test command builds, in its own virtual environment (built here when missing).
if [ ! -x target/py-bench/bin/python ] || ! ls dist/warpscope-*.whl >/dev/null 2>&1; then
  .tools/maturin/bin/maturin build --release --locked --target-dir target/python --out dist
  python3 -m venv target/py-bench
fi
target/py-bench/bin/pip install --quiet --disable-pip-version-check --force-reinstall dist/warpscope-*.whl
(cd target/py-bench && bin/python - "$OLDPWD/tests/python/transpose.cu" <<'PY'
import statistics, sys, time, warpscope
src = open(sys.argv[1]).read()
runs = []
for _ in range(5):
    t = time.perf_counter()
    for s in range(1000):
        warpscope.analyze(addr=f"{4 * (s % 33)}*lane", op="LDG.E.32")
    runs.append(time.perf_counter() - t)
print(f"  1,000 analyses of an expression: median {statistics.median(runs):.3f} s (min {min(runs):.3f}, max {max(runs):.3f}, 5 runs)")
t = time.perf_counter()
for pad in range(32):
    warpscope.analyze(cuda=src, kernel=f"transpose<32, {pad}>", block="32x32", set={"n": 1024})
print(f"  32 analyses of transpose<32, PAD> (block 32x32, 4 memory instructions): {time.perf_counter() - t:.3f} s")
PY
)
