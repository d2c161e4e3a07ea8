//! Whole launches. The sums over a grid come from running one block per class of provably equivalent blocks
//! (the proof obligation is in `src/program/affine.rs`); here they are checked against running every block
//! (`Blocks::Each`, the CLI's `--every-block`) on random small launches, and against counts derived by hand.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use warpscope::analysis::ProgramResult;
use warpscope::lang::Lang;
use warpscope::program::launch::Dim3;
use warpscope::scenario::Scenario;
use warpscope::Cc;

fn dim(s: &str) -> Dim3 {
    Dim3::parse(s, "test").expect("test dimension")
}

fn scenario(lang: Lang, text: &str, block: &str, grid: &str, sets: &[String]) -> Scenario {
    Scenario {
        lang,
        text: text.to_string(),
        block: dim(block),
        grid: dim(grid),
        sets: sets.to_vec(),
        ..Scenario::default()
    }
}

fn ok(sc: &Scenario) -> ProgramResult {
    sc.run().unwrap_or_else(|e| panic!("{}:{}: {}\n{}", e.error.line, e.error.column, e.error.message, sc.text))
}

/// Every instruction's sums and lists as the JSON output has them: the shortcut must agree on all of it.
fn sums(r: &ProgramResult) -> serde_json::Value {
    serde_json::to_value(&r.instructions).expect("results serialize")
}

/// Runs `sc` with the equivalence shortcut and by brute force; both must agree. Returns the shortcut's run.
fn both(sc: &Scenario) -> ProgramResult {
    let fast = ok(sc);
    let brute = ok(&Scenario { every_block: true, ..sc.clone() });
    assert_eq!(brute.blocks.executed, sc.grid.volume(), "brute force runs every block");
    assert_eq!(fast.blocks.total, sc.grid.volume());
    assert_eq!(sums(&fast), sums(&brute), "shortcut and brute force differ for\n{}\n{:?}", sc.text, fast.blocks);
    fast
}

#[test]
fn translated_blocks_are_counted_once_and_multiplied() {
    // vectorAdd's access c[i], i = blockIdx.x * blockDim.x + threadIdx.x, with 256 threads: block b reads
    // 1 KB starting at b KB, a translation by a multiple of 128 bytes. One block runs; 64 blocks x 8 warps =
    // 512 warp issues of 4 sectors each (CUDA Best Practices Guide 9.2.1).
    let k = "__global__ void k(const float *a) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    float x = a[i];\n}\n";
    let r = both(&scenario(Lang::Cuda, k, "256", "64", &[]));
    assert_eq!((r.blocks.executed, r.blocks.classes), (1, 1));
    assert_eq!((r.instructions[0].warps, r.instructions[0].memory.as_ref().map(|m| m.sectors)), (512, Some(2048)));

    // A bounds check that only the last block fails: n = 64 * 256 - 100. The first 63 blocks are one class.
    // The last block keeps its first 156 threads: warps 0-3 whole, warp 4 with 28 lanes (112 bytes from a line
    // start, still 4 sectors), and warps 5-7 issue nothing: 63 * 8 + 5 warp issues of 4 sectors.
    let n = 64 * 256 - 100;
    let k = "__global__ void k(const float *a, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) { float x = a[i]; }\n}\n";
    let r = both(&scenario(Lang::Cuda, k, "256", "64", &[format!("n={n}")]));
    assert_eq!(r.instructions[0].warps, 63 * 8 + 5);
    assert_eq!(r.instructions[0].active_lanes, n as u64);
    assert_eq!(r.instructions[0].memory.as_ref().map(|m| m.sectors), Some(63 * 8 * 4 + 5 * 4));
    assert!(r.blocks.executed <= 3, "{:?}", r.blocks);
}

#[test]
fn a_1024_thread_block_on_a_1024_block_grid_counts_every_block() {
    // 1024 blocks x 32 warps = 32,768 warp issues of every instruction.
    let k = "__global__ void k(const float *a, float *c) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    c[i] = 2.0f * a[i];\n}\n";
    let r = ok(&scenario(Lang::Cuda, k, "1024", "1024", &[]));
    let warps: Vec<u64> = r.instructions.iter().map(|i| i.warps).collect();
    assert_eq!(warps, [32_768, 32_768]);
    assert_eq!(r.blocks.total, 1024);
    assert_eq!(r.blocks.executed, 1);
    // Nsight Compute's names carry the grid totals (one request and 4 sectors per warp issue).
    let ncu = &r.instructions[0].ncu;
    assert_eq!(ncu.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), Some(&(32_768 * 4)));
    assert_eq!(ncu.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), Some(&32_768));
    assert_eq!(r.instructions[0].ncu_per_request.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), Some(&4.0));
}

#[test]
fn one_block_by_index_is_the_old_behaviour() {
    // --block-idx 5: the block alone. Block 5 of a bounds-checked launch with n = 5 * 64 + 40 keeps warp 0
    // (32 lanes) and 8 lanes of warp 1.
    let k = "__global__ void k(const float *a, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) { float x = a[i]; }\n}\n";
    let mut sc = scenario(Lang::Cuda, k, "64", "16", &["n=360".to_string()]);
    sc.block_idx = Some(Dim3 { x: 5, y: 0, z: 0 });
    let r = ok(&sc);
    assert_eq!(r.blocks.total, 1);
    assert_eq!(r.instructions[0].active_lanes, 40);
    assert_eq!(r.instructions[0].warps, 2);
}

#[test]
fn real_matrixmul_sass_grid_agrees_with_brute_force() {
    // cuda-samples' MatrixMulCUDA<32> as ptxas emits it for sm_80 (tests/data/kernels/matrixMul), on a 4x2 grid
    // of 32x32 blocks with wA = wB = 128: the address halves go through 64-bit arithmetic split into 32-bit
    // registers, and the shortcut still proves every block equivalent to the first.
    let path = format!("{}/tests/data/kernels/matrixMul/sm_80.sass", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).expect("corpus listing");
    // Parameters: C, A, B, wA, wB at c[0x0][0x160..0x17c].
    let sets: Vec<String> = [
        "c[0x0][0x160]=0x700020000000",
        "c[0x0][0x168]=0x700000000000",
        "c[0x0][0x170]=0x700010000000",
        "c[0x0][0x178]=128",
        "c[0x0][0x17c]=128",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let r = both(&scenario(Lang::Sass, &text, "32x32", "4x2", &sets));
    assert_eq!(r.blocks.executed, 1, "{:?}", r.blocks);
    // Every block issues the A and B tile loads wA / 32 = 4 times per warp: 8 blocks x 32 warps x 4.
    assert_eq!(r.instructions[0].warps, 8 * 32 * 4);
}

// ------------------------------------------------------------------------------------------------------
// Random launches
// ------------------------------------------------------------------------------------------------------

/// A kernel with accesses whose block dependence is affine with various strides (multiples of 128 bytes and
/// not), guarded by conditions on `blockIdx` or not, and shared accesses that move with the block.
#[derive(Clone, Debug)]
struct Kernel {
    bx: i64,
    by: i64,
    bz: i64,
    stride: i64,
    offset: i64,
    n: Option<i64>,
    guard_x: Option<i64>,
    shared_stride: i64,
    shared_block: i64,
    wide: bool,
    modulo: Option<i64>,
}

impl Kernel {
    fn text(&self) -> String {
        let ty = if self.wide { "double" } else { "float" };
        let mut s = format!("__global__ void k(const {ty} *a, float *b, int n) {{\n");
        s += "    __shared__ float s[512];\n";
        s += &format!(
            "    int i = blockIdx.x * {} + blockIdx.y * {} + blockIdx.z * {} + threadIdx.x * {} + {};\n",
            self.bx, self.by, self.bz, self.stride, self.offset
        );
        if let Some(m) = self.modulo {
            s += &format!("    i = i % {m};\n");
        }
        match self.n {
            Some(_) => s += &format!("    if (i < n) {{ {ty} x = a[i]; }}\n"),
            None => s += &format!("    {ty} x = a[i];\n"),
        }
        if let Some(g) = self.guard_x {
            s += &format!("    if (blockIdx.x != {g}) ");
        } else {
            s += "    ";
        }
        s += &format!("s[(threadIdx.x * {} + blockIdx.x * {}) % 512] = 1.0f;\n", self.shared_stride, self.shared_block);
        s += "    b[blockIdx.y * 4096 + blockIdx.x * 32 + threadIdx.x % 32] = 0;\n";
        s += "}\n";
        s
    }
}

fn kernel() -> impl Strategy<Value = Kernel> {
    (
        (
            prop::sample::select(vec![0i64, 1, 8, 32, 64, 96, 256]),
            prop::sample::select(vec![0i64, 3, 32, 100, 1024]),
            prop::sample::select(vec![0i64, 32, 7]),
            1i64..4,
            0i64..6,
        ),
        (
            prop::option::of(100i64..3000),
            prop::option::of(0i64..3),
            prop::sample::select(vec![1i64, 2, 33]),
            prop::sample::select(vec![0i64, 1, 32]),
            any::<bool>(),
            prop::option::weighted(0.2, prop::sample::select(vec![64i64, 200, 1000])),
        ),
    )
        .prop_map(|((bx, by, bz, stride, offset), (n, guard_x, shared_stride, shared_block, wide, modulo))| {
            Kernel { bx, by, bz, stride, offset, n, guard_x, shared_stride, shared_block, wide, modulo }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Grid sums with the equivalence shortcut equal running every block, on every CC family.
    #[test]
    fn grid_sums_equal_brute_force(
        k in kernel(),
        gx in 1u32..6, gy in 1u32..4, gz in 1u32..3,
        block in prop::sample::select(vec![32u32, 48, 64]),
        cc in prop::sample::select(vec!["3.5", "5.2", "7.0", "8.0", "9.0"]),
    ) {
        let n = k.n.unwrap_or(1 << 20);
        let mut sc = scenario(Lang::Cuda, &k.text(), &block.to_string(), &format!("{gx}x{gy}x{gz}"), &[format!("n={n}")]);
        sc.cc = Cc::parse(cc).expect("cc");
        both(&sc);
    }
}

#[test]
fn a_generic_load_that_stays_global_in_every_block_is_translated() {
    // On 3.5 a plain pointer's load is the generic LD.E (the Kepler instruction table: LDG is the non-coherent
    // load). Block b reads 1 KB from b KB past the pointer's default base, far from the shared and local
    // windows in all 64 blocks: one block runs, as for 5.2 and later, and the sums are those of every block.
    let k = "__global__ void k(const float *a) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    float x = a[i];\n}\n";
    let sc = Scenario { cc: Cc::new(3, 5), ..scenario(Lang::Cuda, k, "256", "64", &[]) };
    let r = both(&sc);
    assert_eq!((r.blocks.executed, r.blocks.classes), (1, 1), "{:?}", r.blocks);
    assert_eq!(r.instructions[0].memory.as_ref().map(|m| m.sectors), Some(64 * 8 * 4));
    // 32 KB below the shared window (0x7F00_0000_0000): blocks 32 to 63 read shared memory through the same
    // generic load, so no block stands for another.
    let sc = Scenario { sets: vec!["a=0x7EFFFFFF8000".into()], ..sc };
    let r = both(&sc);
    assert_eq!(r.blocks.executed, 64);
    let why = r.blocks.why_executed.as_deref().unwrap_or_default();
    assert!(why.contains("reaches the shared or local window"), "{why}");
}

#[test]
fn nvrtcs_warp_tiled_sgemm_ptx_is_one_class() {
    // siboehm's SGEMM_CUDA kernel 10 (MIT), as NVRTC writes its PTX for sm_80: the epilogue joins the block's
    // column offset, blockIdx.x * 128, to a thread's column within the tile with `or.b32` (bits the offset never
    // sets). That is an addition, so the 2x2 grid is one class and its sums are those of every block.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/published/siboehm__SGEMM_CUDA/10_kernel_warptiling");
    let text = std::fs::read_to_string(format!("{dir}/nvrtc_sm_80.ptx")).expect("the PTX");
    let p = "_Z15sgemmWarptilingILi128ELi128ELi16ELi64ELi64ELi4ELi8ELi4ELi128EEviiifPfS0_fS0_";
    let sets: Vec<String> =
        [("0", 256), ("1", 256), ("2", 32)].iter().map(|(k, v)| format!("{p}_param_{k}={v}")).collect();
    let r = both(&scenario(Lang::Ptx, &text, "128", "2x2", &sets));
    assert_eq!((r.blocks.executed, r.blocks.classes), (1, 1), "{:?}", r.blocks);
}
