#!/usr/bin/env bash
# The performance measurements behind the README's table. Not part of the test command: benchmarks record
# numbers, tests assert behaviour. Sets up what is missing like the test command, then:
#   1. engine throughput natively (criterion): 1,048,576 threads against one plain pass over the addresses;
#   2. the same workload in wasm in headless Chromium;
#   3. the page: time to interactive, keystroke to repaint on 1024-thread blocks, animation frame times;
#   4. the CLI on 1024-thread blocks, end to end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source .ci/setup.sh
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo), $(chromium --version 2>/dev/null | head -1)"

echo; echo "=== 1. engine, native (cargo bench --bench engine)"
cargo bench --locked --bench engine 2>&1 | grep -E "^(grid|8,192)|time:" | grep -v "%"

echo; echo "=== 2. engine, wasm in headless Chromium (same workload)"
CHROMEDRIVER=$(command -v chromedriver) cargo test --locked --release --target wasm32-unknown-unknown --test wasm_bench -- --nocapture 2>&1 | grep "wasm-bench"

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
