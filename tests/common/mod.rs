//! The kernel corpus (tests/data/kernels/, see its README), shared by the tests that run it.
#![allow(dead_code)]

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
