//! The engine benchmark's workload in the browser: the same 32,768 warp-instructions as `cargo bench --bench
//! engine`, timed with performance.now() (median of 15 runs after 20 warm-up runs) and printed; nothing is asserted (speed is a
//! benchmark, not a test). Run by `.ci/bench.sh`:
//!   cargo test --release --target wasm32-unknown-unknown --test wasm_bench -- --nocapture
#![cfg(target_arch = "wasm32")]

use warpscope::workload::{engine, floor, grid};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[wasm_bindgen_test]
fn grid_workload_in_the_browser() {
    let w = grid();
    let cc = warpscope::Cc::new(8, 0);
    let mut check = 0u64;
    // Warm up first: V8 starts wasm on its baseline compiler and moves hot code to the optimising one.
    for _ in 0..20 {
        check = check.wrapping_add(engine(cc, &w)).wrapping_add(floor(&w));
    }
    let (mut f, mut e) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        let t0 = now();
        check = check.wrapping_add(floor(&w));
        let t1 = now();
        check = check.wrapping_add(engine(cc, &w));
        let t2 = now();
        f.push(t1 - t0);
        e.push(t2 - t1);
    }
    let msg = format!(
        "wasm-bench floor_ms={:.3} engine_ms={:.3} ratio={:.2} (checksum {check})",
        median(f.clone()),
        median(e.clone()),
        median(e) / median(f)
    );
    wasm_bindgen_test::console_log!("{msg}");
}

/// The executor on the tiled SGEMM block (N = 1024, block 32x32), as the page's analysis worker runs it:
/// median of 15 runs after 10 warm-up runs. Compared with `cargo bench --bench engine -- sgemm` natively.
#[wasm_bindgen_test]
fn sgemm_block_in_the_browser() {
    let mut check = 0u64;
    for _ in 0..10 {
        check = check.wrapping_add(warpscope::workload::run_sgemm(1024, 1).unwrap_or(0));
    }
    let mut t = Vec::new();
    for _ in 0..15 {
        let t0 = now();
        check = check.wrapping_add(warpscope::workload::run_sgemm(1024, 1).unwrap_or(0));
        t.push(now() - t0);
    }
    let min = t.iter().copied().fold(f64::INFINITY, f64::min);
    wasm_bindgen_test::console_log!("wasm-bench sgemm_block_ms={:.2} min {min:.2} (checksum {check})", median(t));
}
