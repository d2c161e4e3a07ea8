//! Engine throughput on a whole grid (1,048,576 threads = 32,768 warp-instructions of mixed patterns),
//! against one plain pass over the same addresses (the physical floor). Target: the fast path within 10x of
//! the floor. The detailed path (with animation steps, notes and warnings) is measured for comparison.
//!
//! `cargo bench --bench engine`; results are recorded in the README.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
criterion::criterion_main!(native::benches);

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use criterion::{criterion_group, Criterion, Throughput};
    use std::hint::black_box;
    use warpscope::workload::{engine, floor, grid, WARPS};
    use warpscope::{analyze, Cc, Config};

    fn bench(c: &mut Criterion) {
        let w = grid();
        let cc = Cc::new(8, 0);
        let mut g = c.benchmark_group("grid of 1,048,576 threads");
        g.throughput(Throughput::Elements(WARPS as u64));
        g.sample_size(30);
        g.bench_function("floor: one pass over the addresses", |b| b.iter(|| floor(black_box(&w))));
        g.bench_function("engine: count, all warps", |b| b.iter(|| engine(cc, black_box(&w))));
        g.bench_function("engine: analyze with steps, all warps", |b| {
            b.iter(|| {
                let cfg = Config::default();
                let mut n = 0usize;
                for (k, warp) in &w.warps {
                    n += analyze(cc, &w.instrs[*k as usize], black_box(warp), &cfg).active_lanes as usize;
                }
                n
            })
        });
        g.finish();

        // Each pattern alone (8,192 warps each), to see where the time goes.
        let mut k = c.benchmark_group("8,192 warps of one pattern");
        k.sample_size(30);
        for (kind, name) in
            [(0u8, "coalesced LDG.E.32"), (1, "strided LDG.E.64"), (2, "random LDG.E.32"), (3, "LDS.32, 1- to 32-way")]
        {
            let warps: Vec<_> = w.warps.iter().filter(|(k, _)| *k == kind).cloned().collect();
            let instr = w.instrs[kind as usize].clone();
            k.bench_function(name, |b| {
                b.iter(|| {
                    let cfg = Config::default();
                    let mut t = 0u64;
                    for (_, warp) in &warps {
                        let c = warpscope::model::count::count(cc, &instr, black_box(warp), None, &cfg).sums();
                        t += u64::from(c.sectors + c.wavefronts);
                    }
                    t
                })
            });
        }
        k.finish();
    }

    /// The executor end to end on the tiled SGEMM block (lowering, running 32 warps, costing every issue):
    /// compared with the same run in the browser (`tests/wasm_bench.rs`).
    fn sgemm(c: &mut Criterion) {
        let mut g = c.benchmark_group("sgemm");
        g.sample_size(20);
        g.bench_function("block N=1024", |b| b.iter(|| warpscope::workload::run_sgemm(black_box(1024), 1)));
        g.finish();
    }

    criterion_group!(benches, bench, sgemm);
}
