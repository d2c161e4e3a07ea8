//! Whole CUDA files as written: the verbatim cuda-samples kernels of the corpus (tests/data/kernels/, see its
//! README) analysed from their `.cu` text agree with the PTX and SASS real compilers made from them, memory
//! instruction by memory instruction; and the constructs of CUDA files (templates, `__device__` functions,
//! cooperative groups, the preprocessor, host launches, fragments) run. Each expected number is derived in
//! the comment above it.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use warpscope::arch::Cc;
use warpscope::launch::Dim3;
use warpscope::pattern::Lang;
use warpscope::scenario::Scenario;
use warpscope::trace::ProgramResult;

mod common;
use common::{corpus, KERNELS};

fn scenario(lang: Lang, text: &str, block: &str, kernel: Option<&str>, cc: &str) -> Scenario {
    Scenario {
        lang,
        text: text.to_string(),
        op: String::new(),
        block: Dim3::parse(block, "block").expect("block"),
        kernel: kernel.map(str::to_string),
        cc: Cc::parse(cc).expect("cc"),
        ..Scenario::default()
    }
}

fn ok(sc: &Scenario) -> ProgramResult {
    sc.run().unwrap_or_else(|e| panic!("{e}"))
}

/// Every memory instruction's space, warp issues and Nsight Compute metrics, sorted.
fn metrics(r: &ProgramResult) -> Vec<String> {
    let mut v: Vec<String> = r.instructions.iter().map(|i| format!("{:?} {} {:?}", i.space, i.warps, i.ncu)).collect();
    v.sort();
    v
}

fn totals(r: &ProgramResult) -> BTreeMap<String, u64> {
    let mut t = BTreeMap::new();
    for i in &r.instructions {
        for (k, v) in &i.ncu {
            *t.entry(k.clone()).or_insert(0) += v;
        }
    }
    t
}

/// The `.cu` file of each corpus folder.
fn source(dir: &str) -> String {
    let file = match dir {
        "reduction" => "reduction_kernel.cu",
        other => return corpus(other, &format!("{other}.cu")),
    };
    corpus(dir, file)
}

/// The compiler outputs of the corpus: (compute capability, PTX, the SASS ptxas made from that PTX).
const BUILDS: [(&str, &str, &str); 6] = [
    ("7.5", "sm_75.ptx", "sm_75.sass"),
    ("8.0", "sm_80.ptx", "sm_80.sass"),
    ("9.0", "sm_80.ptx", "sm_90.sass"),
    ("7.5", "nvrtc_sm_75.ptx", "nvrtc_sm_75.sass"),
    ("8.0", "nvrtc_sm_80.ptx", "nvrtc_sm_80.sass"),
    ("9.0", "nvrtc_sm_90.ptx", "nvrtc_sm_90.sass"),
];

/// How many static memory instructions the compilers make of each CUDA one, where they unroll a loop: the
/// listed exceptions to "one CUDA access, one instruction". Unrolling copies an access, it does not change
/// what the copies cost, so every total still agrees.
fn unrolled(dir: &str, name: &str, cuda: usize) -> usize {
    match (dir, name) {
        // `for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)` runs TILE_DIM / BLOCK_ROWS = 32 / 16 = 2 times:
        // both compilers unroll it, so each access in it is 2 instructions of half the issues.
        ("transpose", _) => 2 * cuda,
        // `#pragma unroll` over k < BLOCK_SIZE = 32: `As[ty][k]` and `Bs[k][tx]` become 32 loads each; the
        // other 5 accesses (2 global loads, 2 shared stores, 1 global store) stay one each: 5 + 2 x 32 = 69.
        ("matrixMul", _) => {
            assert_eq!(cuda, 7);
            69
        }
        _ => cuda,
    }
}

#[test]
fn each_corpus_kernel_costs_the_same_from_cuda_ptx_and_sass() {
    // The verbatim .cu file, with no --set: the same requests, sectors, wavefronts and conflicts as the PTX
    // clang and NVRTC made from it and the SASS ptxas made from that, for every kernel and architecture.
    let mut checked = 0;
    for (dir, block, names) in KERNELS {
        let cu = source(dir);
        for (cc, ptx_file, sass_file) in BUILDS {
            let ptx = corpus(dir, ptx_file);
            let sass = corpus(dir, sass_file);
            for name in names {
                let c = ok(&scenario(Lang::Cuda, &cu, block, Some(name), cc));
                let p = ok(&scenario(Lang::Ptx, &ptx, block, Some(name), cc));
                let s = ok(&scenario(Lang::Sass, &sass, block, Some(name), cc));
                let what = format!("{dir}/{name} {cc} {ptx_file}");
                assert!(!c.instructions.is_empty(), "{what}: no memory instruction ran");
                assert_eq!(totals(&c), totals(&p), "{what}: CUDA and PTX totals");
                assert_eq!(unrolled(dir, name, c.instructions.len()), p.instructions.len(), "{what}: instructions");
                if dir != "transpose" && dir != "matrixMul" {
                    assert_eq!(metrics(&c), metrics(&p), "{what}: instruction by instruction");
                }
                let (mut tc, mut ts) = (totals(&c), totals(&s));
                if dir == "matrixMul" {
                    // The one listed difference with the SASS: ptxas merges four consecutive `As[ty][k]`
                    // reads into one LDS.128 (tests/ptx.rs derives it): 24,576 fewer shared load issues for
                    // the same wavefronts.
                    let inst = "smsp__inst_executed_op_shared_ld.sum";
                    assert_eq!(tc[inst] - ts[inst], 24_576, "{what}");
                    tc.remove(inst);
                    ts.remove(inst);
                }
                assert_eq!(tc, ts, "{what}: CUDA and SASS totals");
                checked += 1;
            }
        }
    }
    // 17 kernels (1 + 7 + 8 + 1), 6 builds each.
    assert_eq!(checked, 17 * 6);
}

#[test]
fn the_naive_transpose_from_its_file_shows_the_documented_costs() {
    // transposeNaive, block 32x16, from the .cu file: each warp reads one row of 32 floats (4 sectors) and
    // writes a column, 32 floats `height` apart (32 sectors), for TILE_DIM / BLOCK_ROWS = 2 rows per thread.
    // 16 warps x 2 = 32 issues each; 32 x 4 = 128 sectors read and 32 x 32 = 1,024 written.
    let c = ok(&scenario(Lang::Cuda, &source("transpose"), "32x16", Some("transposeNaive"), "8.0"));
    let t = totals(&c);
    assert_eq!(t["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"], 128);
    assert_eq!(t["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"], 1_024);
    assert_eq!(c.kernel.as_deref(), Some("transposeNaive"));
}
