//! The kernel corpus (tests/data/kernels/, see its README), and the helpers the tests that run kernels share.
#![allow(dead_code)]

use std::collections::BTreeMap;
use warpscope::analysis::ProgramResult;
use warpscope::lang::Lang;
use warpscope::program::launch::Dim3;
use warpscope::scenario::Scenario;

/// Each corpus folder, the block its kernels are launched with in the CUDA samples, and its kernels in file
/// order (as the compilers list them).
pub const KERNELS: [(&str, &str, &[&str]); 4] = [
    ("vectorAdd", "256", &["vectorAdd"]),
    ("reduction", "256", &["reduce0", "reduce1", "reduce2", "reduce3", "reduce4", "reduce5", "reduce6"]),
    (
        "transpose",
        "32x16",
        &[
            "copy",
            "copySharedMem",
            "transposeNaive",
            "transposeCoalesced",
            "transposeNoBankConflicts",
            "transposeDiagonal",
            "transposeFineGrained",
            "transposeCoarseGrained",
        ],
    ),
    ("matrixMul", "32x32", &["MatrixMulCUDA<32>"]),
];

/// A corpus file's text: `corpus("transpose", "sm_80.sass")`.
pub fn corpus(kernel: &str, file: &str) -> String {
    let path = format!("{}/tests/data/kernels/{kernel}/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A scenario for `text` in `lang` with block `block` (`32x16`) and, when given, the kernel to run; the other
/// settings are the defaults (callers change `cc` or `sets` with struct update syntax).
pub fn scenario(lang: Lang, text: &str, block: &str, kernel: Option<&str>) -> Scenario {
    Scenario {
        lang,
        text: text.to_string(),
        op: String::new(),
        block: Dim3::parse(block, "block").expect("block"),
        kernel: kernel.map(str::to_string),
        ..Scenario::default()
    }
}

/// Runs a scenario that must succeed.
pub fn ok(sc: &Scenario) -> ProgramResult {
    sc.run().unwrap_or_else(|e| panic!("{e}"))
}

/// Every memory instruction's space, warp issues and Nsight Compute metrics, sorted: languages order and
/// number instructions differently, but the accesses must cost the same.
pub fn metrics(r: &ProgramResult) -> Vec<String> {
    let mut v: Vec<String> = r.instructions.iter().map(|i| format!("{:?} {} {:?}", i.space, i.warps, i.ncu)).collect();
    v.sort();
    v
}

/// Each metric summed over the kernel's instructions.
pub fn totals(r: &ProgramResult) -> BTreeMap<String, u64> {
    let mut t = BTreeMap::new();
    for i in &r.instructions {
        for (k, v) in &i.ncu {
            *t.entry(k.clone()).or_insert(0) += v;
        }
    }
    t
}

/// The textbook CSR SpMV, one thread per row (tests of data-dependent loops and of kernels on data).
pub const CSR: &str = "__global__ void spmv_csr(int rows, const int *rowptr, const int *col, const float *val, const float *x, float *y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float sum = 0.0f;
        for (int j = rowptr[row]; j < rowptr[row + 1]; j++)
            sum += val[j] * x[col[j]];
        y[row] = sum;
    }
}
";
