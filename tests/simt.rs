//! The SIMT machine: divergence and reconvergence, loops whose trip counts depend on the thread, early exits
//! and branches over loads, in CUDA and in SASS (hand-written in nvdisasm's form, and real compiler output from
//! `tests/data/kernels`). Every count follows from the active lanes: a warp issues an instruction once per pass
//! with at least one active lane (PTX ISA, "SIMT architecture": a warp executes one common instruction at a
//! time, and threads that diverged on a branch are disabled until they converge back), and the sectors of an
//! issue are the 32-byte sectors its active lanes touch (CUDA Best Practices Guide 9.2.1).
#![cfg(not(target_arch = "wasm32"))]

use warpscope::analysis::{InstrResult, ProgramResult};
use warpscope::lang::Lang;
use warpscope::program::launch::Dim3;
use warpscope::scenario::{Limits, Scenario};

fn scenario(lang: Lang, text: &str, block: &str, sets: &[&str]) -> Scenario {
    Scenario {
        lang,
        text: text.to_string(),
        block: Dim3::parse(block, "block").expect("test block"),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..Scenario::default()
    }
}

fn ok(sc: &Scenario) -> ProgramResult {
    sc.run().unwrap_or_else(|e| panic!("{}:{}: {}", e.error.line, e.error.column, e.error.message))
}

/// (op, warp issues, active lanes over all issues, sectors or wavefronts) of each instruction.
fn rows(r: &ProgramResult) -> Vec<(&str, u64, u64, u64)> {
    r.instructions.iter().map(|i: &InstrResult| (i.op.as_str(), i.warps, i.active_lanes, cost(i))).collect()
}

fn cost(i: &InstrResult) -> u64 {
    match (&i.memory, &i.banks) {
        (Some(m), None) => m.sectors,
        (None, Some(b)) => b.wavefronts,
        _ => panic!("instruction {} has no single cost", i.op),
    }
}

/// Active lanes of each issue of one instruction, in issue order (warps, then passes).
fn lanes(i: &InstrResult) -> Vec<u32> {
    i.issues.iter().map(|s| s.active_lanes).collect()
}

// ------------------------------------------------------------------------------------------------------
// CUDA
// ------------------------------------------------------------------------------------------------------

#[test]
fn cuda_if_else_diverges_and_reconverges() {
    // Even lanes read a[t]: 16 lanes, 4-byte loads every 8 bytes over bytes 0..127 = all 4 sectors of one line.
    // Odd lanes read b[2t]: bytes 8, 24, ..., 248 = 2 lines, all 8 sectors. After the if/else the warp is whole
    // again: c[t] is 32 lanes, 4 sectors.
    let k = "__global__ void k(const float *a, const float *b, float *c) {\n    int t = threadIdx.x;\n    float x;\n    if (t % 2 == 0)\n        x = a[t];\n    else\n        x = b[2 * t];\n    c[t] = x;\n}\n";
    let r = ok(&scenario(Lang::Cuda, k, "32", &[]));
    assert_eq!(rows(&r), [("LDG.E.32", 1, 16, 4), ("LDG.E.32", 1, 16, 8), ("STG.E.32", 1, 32, 4)]);
    let lines: Vec<u64> = r.instructions.iter().filter_map(|i| i.memory.as_ref().map(|m| m.lines)).collect();
    assert_eq!(lines, [1, 2, 1]);
}

#[test]
fn cuda_loops_with_thread_dependent_trip_counts() {
    // Lane t runs t % 4 iterations. Pass j has the lanes with t % 4 > j: 24, 16, then 8 lanes; each pass reads
    // within one 128-byte line and every 16-byte group has an active lane, so 4 sectors per pass. The store
    // after the loop has the whole warp back.
    let k = "__global__ void k(const float *a, float *c) {\n    int t = threadIdx.x;\n    float x = 0;\n    for (int j = 0; j < t % 4; j++)\n        x += a[j * 32 + t];\n    c[t] = x;\n}\n";
    let r = ok(&scenario(Lang::Cuda, k, "32", &[]));
    assert_eq!(rows(&r), [("LDG.E.32", 3, 48, 12), ("STG.E.32", 1, 32, 4)]);
    assert_eq!(lanes(&r.instructions[0]), [24, 16, 8]);
    assert_eq!(r.instructions[0].passes, [3]);

    // Warp w of a 128-thread block runs w iterations (the trip count is threadIdx.x / 32, uniform in a warp):
    // 0 + 1 + 2 + 3 = 6 warp issues of 32 lanes, each one line = 4 sectors.
    let k = "__global__ void k(const float *a, float *c) {\n    float x = 0;\n    for (int j = 0; j < threadIdx.x / 32; j++)\n        x += a[j * 128 + threadIdx.x];\n    c[threadIdx.x] = x;\n}\n";
    let r = ok(&scenario(Lang::Cuda, k, "128", &[]));
    assert_eq!(rows(&r), [("LDG.E.32", 6, 192, 24), ("STG.E.32", 4, 128, 16)]);
    assert_eq!(r.instructions[0].passes, [0, 1, 2, 3]);

    // while with break: lanes leave at different iterations. Lane t breaks when j == t / 8, so pass j keeps the
    // lanes with t / 8 > j: 24, 16, 8 lanes (the loads before the break test run one more pass: 32, 24, 16, 8).
    let k = "__global__ void k(const float *a) {\n    int j = 0;\n    while (true) {\n        float x = a[j * 32 + threadIdx.x];\n        if (j == threadIdx.x / 8) break;\n        j++;\n    }\n}\n";
    let r = ok(&scenario(Lang::Cuda, k, "32", &[]));
    assert_eq!(lanes(&r.instructions[0]), [32, 24, 16, 8]);
}

#[test]
fn cuda_early_return_and_guarded_loads() {
    // Threads 20 and up return: 20 lanes = 80 bytes = 3 sectors (CUDA Best Practices Guide 9.2.1).
    let k =
        "__global__ void k(const float *a) {\n    if (threadIdx.x >= 20) return;\n    float x = a[threadIdx.x];\n}\n";
    assert_eq!(rows(&ok(&scenario(Lang::Cuda, k, "32", &[]))), [("LDG.E.32", 1, 20, 3)]);
    // In a 64-thread block the guard t < 8 leaves warp 1 with no active lane: it never issues the load.
    let k = "__global__ void k(const float *a) {\n    if (threadIdx.x < 8) {\n        float x = a[threadIdx.x];\n    }\n}\n";
    let r = ok(&scenario(Lang::Cuda, k, "64", &[]));
    assert_eq!(rows(&r), [("LDG.E.32", 1, 8, 1)]);
    assert_eq!(r.instructions[0].passes, [1, 0]);
}

#[test]
fn cuda_syncthreads_in_a_loop_keeps_every_warp() {
    // The reduction loop of cuda-samples' reduce3 in miniature: at stride s the threads below s read
    // sdata[tid + s]. A 256-thread block runs s = 128, 64, 32, 16, 8, 4, 2, 1: warps issue 4 + 2 + 1 + 1 + 1 +
    // 1 + 1 + 1 = 12 times, with 128 + 64 + 32 + 16 + 8 + 4 + 2 + 1 = 255 active lanes. Each issue reads
    // consecutive words: one wavefront, no bank conflict (CUDA C++ Programming Guide, shared memory banks).
    let k = "__global__ void k(int *g) {\n    __shared__ int sdata[256];\n    unsigned int tid = threadIdx.x;\n    int sum = 0;\n    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {\n        if (tid < s)\n            sum += sdata[tid + s];\n        __syncthreads();\n    }\n}\n";
    let r = ok(&scenario(Lang::Cuda, k, "256", &[]));
    assert_eq!(rows(&r), [("LDS.32", 12, 255, 12)]);
}

// ------------------------------------------------------------------------------------------------------
// SASS
// ------------------------------------------------------------------------------------------------------

const A: &str = "c[0x0][0x160]=0x700000000000";
const B: &str = "c[0x0][0x168]=0x700010000000";
const C: &str = "c[0x0][0x170]=0x700020000000";

#[test]
fn sass_if_else_with_bssy_bsync() {
    // The if/else of `cuda_if_else_diverges_and_reconverges` as nvcc lays it out for sm_80: BSSY names the
    // reconvergence point, the taken side jumps over the other, BSYNC joins them. Same numbers.
    let sass = "        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   LOP3.LUT R1, R0, 0x1, RZ, 0xc0, !PT ;
        /*0020*/                   ISETP.NE.AND P0, PT, R1, RZ, PT ;
        /*0030*/                   BSSY B0, `(.L_x_1) ;
        /*0040*/               @P0 BRA `(.L_x_0) ;
        /*0050*/                   IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x160] ;
        /*0060*/                   LDG.E R4, [R2.64] ;
        /*0070*/                   BRA `(.L_x_2) ;
.L_x_0:
        /*0080*/                   IMAD.WIDE.U32 R2, R0, 0x8, c[0x0][0x168] ;
        /*0090*/                   LDG.E R4, [R2.64] ;
.L_x_2:
        /*00a0*/                   BSYNC B0 ;
.L_x_1:
        /*00b0*/                   IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x170] ;
        /*00c0*/                   STG.E [R2.64], R4 ;
        /*00d0*/                   EXIT ;
";
    let r = ok(&scenario(Lang::Sass, sass, "32", &[A, B, C]));
    assert_eq!(rows(&r), [("LDG.E", 1, 16, 4), ("LDG.E", 1, 16, 8), ("STG.E", 1, 32, 4)]);
}

#[test]
fn sass_if_else_with_ssy_sync_before_volta() {
    // Before Volta, SSY pushes the reconvergence point and each side ends in SYNC (as cuobjdump prints sm_61
    // code). Same if/else, same numbers, on CC 6.1.
    let sass = "S2R R0, SR_TID.X ;
LOP3.LUT R1, R0, 0x1, RZ, 0xc0, !PT ;
ISETP.NE.AND P0, PT, R1, RZ, PT ;
SSY `(.L_x_1) ;
@P0 BRA `(.L_x_0) ;
IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x160] ;
LDG.E R4, [R2.64] ;
SYNC ;
.L_x_0:
IMAD.WIDE.U32 R2, R0, 0x8, c[0x0][0x168] ;
LDG.E R4, [R2.64] ;
SYNC ;
.L_x_1:
IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x170] ;
STG.E [R2.64], R4 ;
EXIT ;
";
    let mut sc = scenario(Lang::Sass, sass, "32", &[A, B, C]);
    sc.cc = warpscope::Cc::parse("6.1").expect("cc");
    let r = ok(&sc);
    assert_eq!(rows(&r), [("LDG.E", 1, 16, 4), ("LDG.E", 1, 16, 8), ("STG.E", 1, 32, 4)]);
}

#[test]
fn sass_loop_with_a_thread_dependent_trip_count() {
    // The loop of `cuda_loops_with_thread_dependent_trip_counts` in SASS: R5 = t & 3 iterations, a backward
    // @!P0 BRA. Passes of 24, 16 and 8 lanes, 4 sectors each.
    let sass = "S2R R0, SR_TID.X ;
LOP3.LUT R5, R0, 0x3, RZ, 0xc0, !PT ;
MOV R6, RZ ;
ISETP.NE.AND P0, PT, R5, RZ, PT ;
@!P0 BRA `(.L_x_1) ;
.L_x_0:
IMAD R7, R6, 0x20, R0 ;
IMAD.WIDE.U32 R2, R7, 0x4, c[0x0][0x160] ;
LDG.E R4, [R2.64] ;
IADD3 R6, R6, 0x1, RZ ;
ISETP.GE.U32.AND P0, PT, R6, R5, PT ;
@!P0 BRA `(.L_x_0) ;
.L_x_1:
EXIT ;
";
    let r = ok(&scenario(Lang::Sass, sass, "32", &[A]));
    assert_eq!(rows(&r), [("LDG.E", 3, 48, 12)]);
    assert_eq!(lanes(&r.instructions[0]), [24, 16, 8]);
}

#[test]
fn sass_branch_over_a_load() {
    // Threads 8 and up jump over the load. Warp 0 issues it with 8 lanes (32 bytes, 1 sector); in warp 1 every
    // lane takes the branch, so the load is not issued at all. The store after the label has every lane.
    let sass = "S2R R0, SR_TID.X ;
ISETP.GE.U32.AND P0, PT, R0, 0x8, PT ;
@P0 BRA `(.L_x_0) ;
IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x160] ;
LDG.E R4, [R2.64] ;
.L_x_0:
IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x168] ;
STG.E [R2.64], R4 ;
EXIT ;
";
    let r = ok(&scenario(Lang::Sass, sass, "64", &[A, B]));
    assert_eq!(rows(&r), [("LDG.E", 1, 8, 1), ("STG.E", 2, 64, 8)]);
    // Branch targets may also be nvdisasm's addresses: the same listing with `BRA 0x50`.
    let by_addr = "/*0000*/ S2R R0, SR_TID.X ;
/*0010*/ ISETP.GE.U32.AND P0, PT, R0, 0x8, PT ;
/*0020*/ @P0 BRA 0x50 ;
/*0030*/ IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x160] ;
/*0040*/ LDG.E R4, [R2.64] ;
/*0050*/ IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x168] ;
/*0060*/ STG.E [R2.64], R4 ;
/*0070*/ EXIT ;
";
    assert_eq!(rows(&ok(&scenario(Lang::Sass, by_addr, "64", &[A, B]))), [("LDG.E", 1, 8, 1), ("STG.E", 2, 64, 8)]);
}

#[test]
fn sass_early_exit_inside_a_loop() {
    // Lane t exits at the top of iteration j == t / 8 (loads run for j < t / 8): passes of 24, 16 and 8 lanes.
    let sass = "S2R R0, SR_TID.X ;
SHF.R.U32.HI R5, RZ, 0x3, R0 ;
MOV R6, RZ ;
.L_x_0:
ISETP.EQ.U32.AND P0, PT, R6, R5, PT ;
@P0 EXIT ;
IMAD R7, R6, 0x20, R0 ;
IMAD.WIDE.U32 R2, R7, 0x4, c[0x0][0x160] ;
LDG.E R4, [R2.64] ;
IADD3 R6, R6, 0x1, RZ ;
BRA `(.L_x_0) ;
";
    let r = ok(&scenario(Lang::Sass, sass, "32", &[A]));
    assert_eq!(lanes(&r.instructions[0]), [24, 16, 8]);
}

/// One kernel's text out of an nvdisasm listing of several.
fn function(listing: &str, mangled: &str) -> String {
    let start = listing.find(&format!(".text.{mangled} ---")).expect("kernel in listing");
    let rest = &listing[start..];
    let end = rest[1..].find("//----").map_or(rest.len(), |e| e + 1);
    rest[..end].to_string()
}

#[test]
fn real_reduce4_runs_its_branches_loops_and_exits() {
    // cuda-samples' reduce4<int, 256> (tests/data/kernels/reduction), as ptxas emits it for sm_80 and sm_75:
    // BSSY/BSYNC around the last warp's shuffle tail, a loop for `s > 32`, an early EXIT for threads other than
    // 0. With 256 threads, n = 2^20 (every i < n) and the pointers 256-byte aligned:
    // - the two loads g_idata[i] and g_idata[i + 256]: 8 warps x 4 sectors each;
    // - sdata[tid] = mySum: 8 issues, 1 wavefront each (consecutive words);
    // - the loop runs s = 128 and s = 64 (blockDim.x / 2 while s > 32): threads tid < s, warps 0-3 then 0-1,
    //   6 issues of the LDS and the STS;
    // - the tail `if (cta.thread_rank() < 32) mySum += sdata[tid + 32]`: warp 0 alone, 1 issue;
    // - g_odata[blockIdx.x] = mySum: thread 0 alone, 1 lane, 1 sector.
    for arch in ["sm_80", "sm_75"] {
        let path = format!("{}/tests/data/kernels/reduction/{arch}.sass", env!("CARGO_MANIFEST_DIR"));
        let listing = std::fs::read_to_string(&path).expect("corpus listing");
        let text = function(&listing, "_Z7reduce4IiLj256EEvPT_S1_j");
        let sets = [A, B, "c[0x0][0x170]=1048576"];
        let r = ok(&scenario(Lang::Sass, &text, "256", &sets));
        let got: Vec<(u64, u64)> = r.instructions.iter().map(|i| (i.warps, cost(i))).collect();
        assert_eq!(got, [(8, 32), (8, 32), (8, 8), (6, 6), (6, 6), (1, 1), (1, 1)], "{arch}");
        // sm_75's ptxas spells the same accesses LDG.E.SYS and LDS.U.
        let ops: Vec<&str> = r.instructions.iter().map(|i| i.op.as_str()).collect();
        let want = match arch {
            "sm_80" => ["LDG.E", "LDG.E", "STS", "LDS", "STS", "LDS", "STG.E"],
            _ => ["LDG.E.SYS", "LDG.E.SYS", "STS", "LDS.U", "STS", "LDS.U", "STG.E.SYS"],
        };
        assert_eq!(ops, want, "{arch}");
        assert_eq!(lanes(&r.instructions[3]), [32, 32, 32, 32, 32, 32], "{arch}");
        assert_eq!(r.instructions[6].active_lanes, 1, "{arch}");
    }
}

// ------------------------------------------------------------------------------------------------------
// Limits
// ------------------------------------------------------------------------------------------------------

#[test]
fn an_endless_loop_stops_at_the_time_limit_and_says_which() {
    let sass = "S2R R0, SR_TID.X ;\n.L_x_0:\nIADD3 R0, R0, 0x1, RZ ;\nBRA `(.L_x_0) ;\n";
    let mut sc = scenario(Lang::Sass, sass, "32", &[]);
    sc.limits = Limits { max_seconds: 0.2, ..Limits::default() };
    let e = sc.run().expect_err("an endless loop must stop");
    assert!(
        e.error.message.starts_with("the analysis stopped at the time limit (0.2 s; the command line's --max-seconds raises it) while warp 0 of block (0,0,0) was here"),
        "{}",
        e.error.message
    );
    // The error points at the loop: the branch that closes it, line 4.
    assert_eq!(e.error.line, 4, "{}", e.error.message);

    let k = "__global__ void k(float *a) {\n    for (int j = 0; j >= 0; j += 0)\n        a[threadIdx.x] = 0;\n}\n";
    let mut sc = scenario(Lang::Cuda, k, "32", &[]);
    sc.limits = Limits { max_seconds: 0.2, ..Limits::default() };
    let e = sc.run().expect_err("an endless loop must stop");
    assert!(e.error.message.contains("is a loop endless?"), "{}", e.error.message);
    assert_eq!(e.error.line, 2, "{}", e.error.message);
}

#[test]
fn an_endless_loop_around_a_barrier_stops_too() {
    // Every pass ends at the barrier, so no warp ever runs long on its own: the limit must still be checked.
    let k = "__global__ void k(float *a) {\n    while (true) {\n        a[threadIdx.x] = 0;\n        __syncthreads();\n    }\n}\n";
    let mut sc = scenario(Lang::Cuda, k, "64", &[]);
    sc.limits = Limits { max_seconds: 0.2, ..Limits::default() };
    let e = sc.run().expect_err("an endless loop must stop");
    assert!(e.error.message.contains("is a loop endless?"), "{}", e.error.message);
    let sass = "S2R R0, SR_TID.X ;\n.L_x_0:\nBAR.SYNC 0x0 ;\nBRA `(.L_x_0) ;\n";
    let mut sc = scenario(Lang::Sass, sass, "64", &[]);
    sc.limits = Limits { max_seconds: 0.2, ..Limits::default() };
    let e = sc.run().expect_err("an endless loop must stop");
    assert!(e.error.message.contains("is a loop endless?"), "{}", e.error.message);
}

#[test]
fn the_memory_limit_names_its_option() {
    // Register state is per thread: a 1024-thread block of a kernel with any registers needs more than a
    // zero-megabyte budget.
    let k = "__global__ void k(float *a) {\n    a[threadIdx.x] = 0;\n}\n";
    let mut sc = scenario(Lang::Cuda, k, "1024", &[]);
    sc.limits = Limits { max_memory_mb: 0, ..Limits::default() };
    let e = sc.run().expect_err("no memory to run in");
    assert!(e.error.message.contains("--max-memory-mb"), "{}", e.error.message);
}
