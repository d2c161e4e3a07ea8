//! Whole CUDA files as written: the verbatim cuda-samples kernels of the corpus (tests/data/kernels/, see its
//! README) analysed from their `.cu` text agree with the PTX and SASS real compilers made from them, memory
//! instruction by memory instruction; and the constructs of CUDA files (templates, `__device__` functions,
//! cooperative groups, the preprocessor, host launches, fragments) run. Each expected number is derived in
//! the comment above it.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use warpscope::analysis::ProgramResult;
use warpscope::lang::Lang;
use warpscope::model::arch::Cc;
use warpscope::scenario::Scenario;

mod common;
use common::{corpus, ok, totals, KERNELS};

fn scenario(lang: Lang, text: &str, block: &str, kernel: Option<&str>, cc: &str) -> Scenario {
    Scenario { cc: Cc::parse(cc).expect("cc"), ..common::scenario(lang, text, block, kernel) }
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

/// Each memory instruction's Nsight Compute metrics summed per line of the kernel's `.cu` file: the CUDA
/// analysis's own line, and for PTX and SASS the line the compiler's line information (`.loc`, nvdisasm's
/// `//## File`) gives. Every instruction must have one, in the `.cu` file.
fn by_line(r: &ProgramResult, lang: Lang, cu: &str, what: &str) -> BTreeMap<u32, BTreeMap<String, u64>> {
    let mut out: BTreeMap<u32, BTreeMap<String, u64>> = BTreeMap::new();
    for i in &r.instructions {
        let line = match lang {
            Lang::Cuda => i.line as u32,
            _ => {
                let src = i.source.as_ref().unwrap_or_else(|| panic!("{what}: `{}` has no source line", i.text));
                assert!(src.file.rsplit('/').next() == Some(cu), "{what}: `{}` is from {}", i.text, src.file);
                src.line
            }
        };
        let sums = out.entry(line).or_default();
        for (k, v) in &i.ncu {
            *sums.entry(k.clone()).or_insert(0) += v;
        }
    }
    out
}

#[test]
fn each_corpus_kernel_costs_the_same_from_cuda_ptx_and_sass_line_by_line() {
    // The verbatim .cu file, with no --set, against the PTX clang and NVRTC made from it and the SASS ptxas made
    // from that, for every kernel and architecture: for each line of the .cu file, the same requests, sectors,
    // wavefronts and conflicts. Lines are matched by the compilers' own line information (hw/make-corpus.sh
    // builds with -lineinfo), so a compiler that unrolls a loop, hoists or reorders accesses still lines up.
    let mut checked = 0;
    for (dir, block, names) in KERNELS {
        let cu = source(dir);
        let cu_name = match dir {
            "reduction" => "reduction_kernel.cu".to_string(),
            other => format!("{other}.cu"),
        };
        for (cc, ptx_file, sass_file) in BUILDS {
            let ptx = corpus(dir, ptx_file);
            let sass = corpus(dir, sass_file);
            for name in names {
                let c = ok(&scenario(Lang::Cuda, &cu, block, Some(name), cc));
                let p = ok(&scenario(Lang::Ptx, &ptx, block, Some(name), cc));
                let s = ok(&scenario(Lang::Sass, &sass, block, Some(name), cc));
                let what = format!("{dir}/{name} {cc} {ptx_file}");
                assert!(!c.instructions.is_empty(), "{what}: no memory instruction ran");
                assert_eq!(unrolled(dir, name, c.instructions.len()), p.instructions.len(), "{what}: instructions");
                let lc = by_line(&c, Lang::Cuda, &cu_name, &what);
                assert_eq!(lc, by_line(&p, Lang::Ptx, &cu_name, &what), "{what}: CUDA and PTX, line by line");
                let mut ls = by_line(&s, Lang::Sass, &cu_name, &what);
                let mut lc = lc;
                if dir == "matrixMul" {
                    // The one listed difference with the SASS: on the line `Csub += As[ty][k] * Bs[k][tx];`
                    // ptxas merges four consecutive `As[ty][k]` reads into one LDS.128 (tests/ptx.rs derives
                    // it): 24,576 fewer shared load issues. Each warp's row of As is one address across the warp,
                    // a broadcast LDS.128: 2 wavefronts as measured on CC 7.0+ where the phase model (and the
                    // four LDS.32 it replaces) count 4 (docs/model.md#shared-memory-as-measured). Per warp and tile, 8 such loads save 2
                    // each; 32 warps x 32 tiles x 16 = 16,384 wavefronts. With the documented shared model
                    // the wavefronts are equal (checked below).
                    let line =
                        cu.lines().position(|l| l.contains("Csub += As[ty][k] * Bs[k][tx];")).unwrap() as u32 + 1;
                    let inst = "smsp__inst_executed_op_shared_ld.sum";
                    let wav = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
                    let (a, b) = (lc.get_mut(&line).unwrap(), ls.get_mut(&line).unwrap());
                    assert_eq!(a[inst] - b[inst], 24_576, "{what}");
                    assert_eq!(a[wav] - b[wav], 16_384, "{what}");
                    a.remove(inst);
                    b.remove(inst);
                    a.remove(wav);
                    b.remove(wav);
                    let mut doc = scenario(Lang::Sass, &sass, block, Some(name), cc);
                    doc.config.shared_model = warpscope::model::arch::SharedModel::Documented;
                    let d = by_line(&ok(&doc), Lang::Sass, &cu_name, &what);
                    let c_line = by_line(&c, Lang::Cuda, &cu_name, &what);
                    assert_eq!(d[&line][wav], c_line[&line][wav], "{what}: documented model, same wavefronts");
                }
                assert_eq!(lc, ls, "{what}: CUDA and SASS, line by line");
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

fn sectors(r: &ProgramResult) -> Vec<u64> {
    r.instructions
        .iter()
        .map(|i| i.ncu.iter().filter(|(k, _)| k.starts_with("l1tex__t_sectors")).map(|(_, v)| *v).sum())
        .collect()
}

fn note<'a>(r: &'a ProgramResult, id: &str) -> &'a str {
    r.notes.iter().find(|n| n.id == id).map(|n| n.text.as_str()).unwrap_or_else(|| panic!("no note {id}"))
}

#[test]
fn templates_device_functions_groups_macros_and_the_host_launch_run() {
    // tests/data/cuda/features.cu: k<64>, launched by its main with block (32, 2) and grid n / 128 = 8, n = 1024.
    let text = std::fs::read_to_string(format!("{}/tests/data/cuda/features.cu", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let r = ok(&scenario(Lang::Cuda, &text, "32", None, "8.0"));
    assert_eq!(r.kernel.as_deref(), Some("k<64>"), "the kernel the file launches, with its template arguments");
    // 8 blocks x 2 warps = 16 issues of each access; the atomic is thread 0's alone, one warp per block, a
    // reduction (its result is unused: docs/model.md#atomics) of one sector.
    assert_eq!(r.instructions.iter().map(|i| i.warps).collect::<Vec<_>>(), vec![16, 16, 16, 8]);
    let red = &r.instructions[3];
    assert_eq!((red.op.as_str(), red.line), ("RED.E.ADD", 29));
    assert_eq!(red.atomic.map(|a| (a.ops, a.max_serial)), Some((8, 1)));
    // load(in, r * STRIDE): T deduced as float; on CC 8.0 `#if __CUDA_ARCH__ >= 800` makes STRIDE 2, so a
    // warp reads every other float: 256 bytes, 8 sectors; the explicit specialization load<int> reads
    // p[2 * i]: 8 sectors; out[IDX(meta_group_rank, twice(thread_rank), 64)] is out[64 w + 2 lane]: 8 sectors.
    // 16 issues each: 128.
    assert_eq!(sectors(&r), vec![128, 128, 128, 8]);
    assert_eq!(r.instructions[0].line, 15, "the access is on the __device__ function's line");
    assert!(note(&r, "cuda-launch").contains("block 32x2x1 and grid 8x1x1"), "{}", note(&r, "cuda-launch"));
    assert!(note(&r, "cuda-launch").contains("n = 1024"));
    assert!(note(&r, "cuda-not-costed").contains("printf"));
    assert!(!note(&r, "cuda-not-costed").contains("atomicAdd"), "atomics are counted");
    // On CC 7.5 STRIDE is 1: the first load reads 128 contiguous bytes, 4 sectors a warp.
    let r = ok(&scenario(Lang::Cuda, &text, "32", None, "7.5"));
    assert_eq!(sectors(&r), vec![64, 128, 128, 8]);
}

#[test]
fn shuffles_votes_vectors_and_sizeof_move_values_between_lanes() {
    // tests/data/cuda/warp.cu, one warp of 32 threads, `out` an int array (256-byte aligned).
    let text = std::fs::read_to_string(format!("{}/tests/data/cuda/warp.cu", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let r = ok(&scenario(Lang::Cuda, &text, "32", None, "8.0"));
    // 1. __shfl_sync(t * 32, 0): every lane gets lane 0's 0: one int, 1 sector.
    // 2. __shfl_xor_sync(t, 16): a permutation of 0..31: 128 contiguous bytes, 4 sectors.
    // 3. __ballot_sync(t < 8) has 8 bits: out[8 t], 32 bytes apart: 32 sectors.
    // 4. __shfl_down_sync(t, 1, 16): lanes 15 and 31 keep their own value (their source is outside the
    //    16-lane segment), the others get t + 1: 30 distinct values, each out[32 c] in its own sector.
    // 5. A float4 store through reinterpret_cast: 16 bytes a lane, 512 bytes, 16 sectors.
    // 6. sizeof(float4) / 4 = 4: out[4 t], 16 bytes apart: 16 sectors.
    // 7. __activemask() has 32 bits: out[32 + t], 4 sectors.
    assert_eq!(sectors(&r), vec![1, 4, 32, 30, 16, 16, 4]);
    assert_eq!(r.instructions[4].op, "STG.E.128");
}

#[test]
fn a_fragment_runs_with_its_undeclared_names_assumed_and_listed() {
    // No declarations: `idata` is read into a float, `odata` written from one, `n` and `stride` are numbers.
    let text = "int i = blockIdx.x * blockDim.x + threadIdx.x;\nif (i < n) {\n  float v = idata[i];\n  odata[i * stride] = v;\n}\n";
    let r = ok(&scenario(Lang::Cuda, text, "128", None, "8.0"));
    // 128 threads, so n = stride = 128: the reads are contiguous floats (4 sectors a warp, 4 warps); the
    // writes 512 bytes apart (32 sectors a warp).
    assert_eq!(sectors(&r), vec![16, 128]);
    let n = note(&r, "cuda-assumed");
    for part in [
        "`idata` (first used at 3:13) is a global pointer to float",
        "`float *idata;`",
        "`n` (first used at 2:9) is an int parameter = 128",
        "--set stride=VALUE",
    ] {
        assert!(n.contains(part), "{part} in {n}");
    }
    // Nothing tells `a`'s element type: 4-byte int.
    let r = ok(&scenario(Lang::Cuda, "a[threadIdx.x * 2] = 0;", "32", None, "8.0"));
    assert_eq!(r.instructions[0].op, "STG.E.32");
    assert!(note(&r, "cuda-assumed").contains("nothing in the code tells its element type, so 4-byte int"));
    // In a file with a kernel, an undeclared name is a mistake: an error.
    let e = scenario(Lang::Cuda, "__global__ void k(float *o) { o[threadIdx.x] = q[0]; }", "32", None, "8.0")
        .run()
        .unwrap_err();
    assert!(e.to_string().contains("unknown name `q`"), "{e}");
}

#[test]
fn templates_are_chosen_by_their_arguments() {
    let text = "template <class T, int N = 4> __global__ void k(T *p) { p[threadIdx.x * N] = 0; }\n";
    // No instance in the file: an error naming the way to give one (with the default for N).
    let e = scenario(Lang::Cuda, text, "32", None, "8.0").run().unwrap_err().to_string();
    assert!(e.contains("--kernel 'k<int, 4>'"), "{e}");
    // k<double>: 8-byte elements 4 apart, 32 bytes a lane: 32 sectors. k<char, 1>: 32 contiguous bytes, 1 sector.
    let r = ok(&scenario(Lang::Cuda, text, "32", Some("k<double>"), "8.0"));
    assert_eq!((sectors(&r), r.instructions[0].op.as_str()), (vec![32], "STG.E.64"));
    let r = ok(&scenario(Lang::Cuda, text, "32", Some("k<char,1>"), "8.0"));
    assert_eq!((sectors(&r), r.instructions[0].op.as_str()), (vec![1], "STG.E.U8"));
    let e = scenario(Lang::Cuda, text, "32", Some("k<int, 1, 2>"), "8.0").run().unwrap_err().to_string();
    assert!(e.contains("takes 2 template argument(s), given 3"), "{e}");
}

#[test]
fn macro_operators_and_do_while_run() {
    // `a ## b` pastes `my` and `idx` into one name, `#x` is a string for printf; `do … while` runs its body
    // before the test. p[myidx * 4 + i]: 16 bytes apart, 16 sectors an issue; the loop runs twice (i = 0, 1):
    // one warp, 2 issues, 32 sectors.
    let text = "#define CAT(a, b) a ## b\n#define STR(x) #x\n__global__ void k(int *p) {\n  int CAT(my, idx) = threadIdx.x;\n  int i = 0;\n  do { p[myidx * 4 + i] = 0; i++; } while (i < 2);\n  printf(STR(hello));\n}\n";
    let r = ok(&scenario(Lang::Cuda, text, "32", None, "8.0"));
    assert_eq!(sectors(&r), vec![32]);
    assert_eq!(r.instructions[0].warps, 2);
}

#[test]
fn errors_in_files_name_the_construct_and_its_place() {
    let cases = [
        ("#if 1\nint x;\n", "1:1", "this #if has no #endif"),
        (
            "#define F(a, b) a + b\n__global__ void k(int *p) { p[F(1)] = 0; }\n",
            "2:31",
            "macro `F` takes 2 argument(s), found 1",
        ),
        ("#frobnicate\n", "1:1", "unknown preprocessor directive `#frobnicate`"),
        ("#error needs CUDA 13\n", "1:1", "the file stops itself here"),
        (
            "__global__ void k(int *p) { thrust::fill(p, p + 1, 0); }\n",
            "1:29",
            "`thrust::` is a namespace or class warpscope does not know",
        ),
        (
            "__device__ int f(int x) { return f(x); }\n__global__ void k(int *p) { p[f(1)] = 0; }\n",
            "1:34",
            "calls nested more than 16 deep",
        ),
        (
            "__global__ void k(int *p) { int a = 0; int *q = &a; p[*q] = 0; }\n",
            "1:49",
            "warpscope follows the address of a register variable only for floating-point values, vectors and structs",
        ),
        ("__global__ void k(int *p) { p[0] = \"s; }\n", "1:36", "unterminated string"),
        ("__global__ void k(int *p) { auto x; }\n", "1:29", "an `auto` variable needs an initial value"),
        ("__global__ void k(int *p) { p[0] = frob(1); }\n", "1:36", "unknown function `frob`"),
        ("__global__ void k(int *p) { p[0] = atomicFoo(p, 1); }\n", "1:36", "unknown atomic `atomicFoo`"),
    ];
    for (text, at, want) in cases {
        let e = scenario(Lang::Cuda, text, "32", None, "8.0").run().unwrap_err().to_string();
        assert!(e.contains(want), "{text}: {e}");
        assert!(e.contains(&format!(" {at}:")) || e.contains(&format!("{at}: ")), "{text}: expected at {at}: {e}");
    }
}

#[test]
fn host_code_of_any_kind_is_read_past() {
    // Type aliases a kernel uses, an enum, host globals (one of a type warpscope does not know), and host code
    // using another library: only the launch is read (block 64, one block).
    let text = "typedef unsigned int uint;\nusing real = float;\nenum Mode { A, B };\nfloat *d_host;\nthrust::host_vector<int> hv;\n__global__ void k(real *p) { uint i = threadIdx.x; p[i * 2] = 0; }\nint main() { thrust::device_vector<float> v(10); k<<<1, 64>>>(d_host); }\n";
    let r = ok(&scenario(Lang::Cuda, text, "32", None, "8.0"));
    // 2 warps, each writing every other float of 256 bytes: 8 sectors.
    assert_eq!(sectors(&r), vec![16]);
    assert_eq!(r.instructions[0].warps, 2);
    // Without a kernel, the same host global is an error: then it is the code.
    let e = scenario(Lang::Cuda, "thrust::host_vector<int> hv;\n", "32", None, "8.0").run().unwrap_err().to_string();
    assert!(e.contains("1:1"), "{e}");
}

fn data(file: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/cuda/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn public_files_with_their_host_code_run_with_their_own_launches() {
    // cuda-samples' vectorAdd.cu as published: main launches vectorAdd<<<(50000 + 255) / 256, 256>>> with
    // numElements = 50000. 196 blocks of 8 warps; the last block's warps past element 50,000 are idle:
    // 50000 / 32 = 1562.5, so 1,563 warp issues per access, and 50,000 x 4 bytes = 6,250 sectors.
    let r = ok(&scenario(Lang::Cuda, &data("vectorAdd-full.cu"), "32", None, "8.0"));
    assert_eq!((r.launch.block.x, r.launch.grid.x), (256, 196));
    assert!(r.instructions.iter().all(|i| i.warps == 1_563));
    assert_eq!(sectors(&r), vec![6_250, 6_250, 6_250]);
    assert!(note(&r, "cuda-launch").contains("numElements = 50000"));
    // The blog's transpose: dim3 dimGrid(nx/TILE_DIM, ny/TILE_DIM, 1), dimBlock(TILE_DIM, BLOCK_ROWS, 1)
    // with nx = ny = 1024 in main and TILE_DIM = 32, BLOCK_ROWS = 8 file-level constants: grid 32x32, block
    // 32x8. Each thread copies TILE_DIM / BLOCK_ROWS = 4 rows: 1,024 blocks x 8 warps x 4 = 32,768 issues.
    // transposeCoalesced reads tile[threadIdx.x][threadIdx.y + j] from a 32x32 float tile: all 32 lanes in
    // one bank, 32 wavefronts an issue, 31 conflicts: 32,768 x 31 = 1,015,808.
    let blog = data("blog-transpose.cu");
    let r = ok(&scenario(Lang::Cuda, &blog, "32", Some("transposeCoalesced"), "8.0"));
    assert_eq!((r.launch.block.x, r.launch.block.y, r.launch.grid.x, r.launch.grid.y), (32, 8, 32, 32));
    let lds = r.instructions.iter().find(|i| i.op == "LDS.32").expect("the tile read");
    assert_eq!(lds.warps, 32_768);
    assert_eq!(lds.ncu["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], 1_015_808);
    // transposeNoBankConflicts pads the tile to 33 columns: no conflict.
    let r = ok(&scenario(Lang::Cuda, &blog, "32", Some("transposeNoBankConflicts"), "8.0"));
    assert_eq!(totals(&r)["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], 0);
}

/// The only memory instruction's sectors for one warp of `block` threads, or the error.
fn one_sectors(text: &str, block: &str, kernel: Option<&str>) -> Result<u64, String> {
    let r = scenario(Lang::Cuda, text, block, kernel, "8.0").run().map_err(|e| e.to_string())?;
    Ok(sectors(&r).iter().sum())
}

#[test]
fn review_cases_follow_c_and_cuda_semantics() {
    // Macros are text (C11 6.10.3): `tid * W` with `#define W 2 - 1` is `tid * 2 - 1`, lanes -1..61 step 2
    // over floats: 9 sectors (not `tid * 1`, 4).
    let w = "#define W 2 - 1\n__global__ void k(float *a) { a[threadIdx.x * W] = 1.0f; }\n";
    assert_eq!(one_sectors(w, "32", None), Ok(9));
    // A macro's names are looked up where it is used: OFF is the kernel's `i * 2`: 8 sectors.
    let off =
        "const int i = 0;\n#define OFF (i * 2)\n__global__ void k(float *a) { int i = threadIdx.x; a[OFF] = 1.0f; }\n";
    assert_eq!(one_sectors(off, "32", None), Ok(8));
    // The definition in force at the use counts: k uses N = 32 (32 sectors), after `#undef N` k2 uses 1.
    let undef = "#define N 32\n__global__ void k(float *a) { a[threadIdx.x * N] = 1.0f; }\n#undef N\n#define N 1\n__global__ void k2(float *a) { a[threadIdx.x * N] = 1.0f; }\n";
    assert_eq!(one_sectors(undef, "32", Some("k")), Ok(32));
    assert_eq!(one_sectors(undef, "32", Some("k2")), Ok(4));
    // Arguments are expanded before substitution (6.10.3.1): F(F(x)) = x + 2, floats 2..33: 5 sectors.
    let ff = "#define F(x) ((x) + 1)\n__global__ void k(float *a) { a[F(F(threadIdx.x))] = 1.0f; }\n";
    assert_eq!(one_sectors(ff, "32", None), Ok(5));
    // `8u` is unsigned (6.4.4.1): `d < 8u` with d = tid - 16 holds for lanes 16..23 only: 1 sector.
    let lit = "__global__ void k(float *a) { int d = (int)threadIdx.x - 16; if (d < 8u) a[threadIdx.x] = 1.0f; }\n";
    assert_eq!(one_sectors(lit, "32", None), Ok(1));
    // Suffixed literals in `#if` evaluate too: `8u > 4` holds, S = 2, every other float: 8 sectors.
    let ifu = "#if 8u > 4\n#define S 2\n#else\n#define S 1\n#endif\n__global__ void k(float *a) { a[threadIdx.x * S] = 1.0f; }\n";
    assert_eq!(one_sectors(ifu, "32", None), Ok(8));
    // A template value parameter has its declared type: `d < B` with `unsigned int B = 8` is unsigned: 1.
    let tp = "template <unsigned int B> __global__ void k(float *a) { int d = (int)threadIdx.x - 16; if (d < B) a[threadIdx.x] = 1.0f; }\ntemplate __global__ void k<8>(float *);\n";
    assert_eq!(one_sectors(tp, "32", None), Ok(1));
    // A default naming an earlier parameter takes its value: S = N = 32, 32 sectors.
    let def = "const int N = 1;\ntemplate <int N, int S = N> __global__ void k(float *a) { a[threadIdx.x * S] = 1.0f; }\ntemplate __global__ void k<32>(float *);\n";
    assert_eq!(one_sectors(def, "32", None), Ok(32));
    // A pointer returned by a __device__ function keeps its space: a shared store, 32 lanes 128 bytes apart in
    // one bank: 32 wavefronts (not a global store).
    let sh = "__device__ float *row(float *p, int r) { return p + r * 32; }\n__global__ void k(float *a) { __shared__ float s[32 * 32]; float *q = row(s, threadIdx.x); q[0] = 1.0f; }\n";
    let r = ok(&scenario(Lang::Cuda, sh, "32", None, "8.0"));
    assert_eq!(r.instructions[0].op, "STS.32");
    assert_eq!(totals(&r)["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"], 32);
    // T is deduced from the argument that fixes it exactly: double from `double *`, 8-byte stores, 8 sectors.
    let dd = "template <typename T> __device__ void put(T v, T *p) { p[threadIdx.x] = v; }\n__global__ void k(double *s) { put(2.0, s); }\n";
    assert_eq!(one_sectors(dd, "32", None), Ok(8));
    // Host values assigned more than once are not constants (control flow is not followed): the block of
    // `threads += 64` is the settings' 32, not 64.
    let hl = "__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\nint main() { float *d; int threads = 64; threads += 64; k<<<1, threads>>>(d); }\n";
    let r = ok(&scenario(Lang::Cuda, hl, "32", None, "8.0"));
    assert_eq!(r.launch.block.x, 32);
    // Brace arguments in host code are read past, not a panic.
    let braces = "__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\nint main() { float *d; dim3 g = dim3{4, 1, 1}; k<<<1, 32>>>(d); }\n";
    assert_eq!(one_sectors(braces, "32", None), Ok(4));
    // A tile of a tile is refused (its meta_group_rank is relative to the parent tile).
    let tt = "namespace cg = cooperative_groups;\n__global__ void k(float *a) { auto b = cg::this_thread_block(); auto t = cg::tiled_partition<32>(b); auto u = cg::tiled_partition<4>(t); a[u.meta_group_rank()] = 1.0f; }\n";
    assert!(one_sectors(tt, "64", None).unwrap_err().contains("tiled_partition of a tile is not modelled"));
}

#[test]
fn constant_expressions_have_c_types_and_skipped_lines_are_text() {
    // Values as gcc computes them (C11 6.3.1.3 conversions, 6.3.1.8 usual arithmetic conversions, 6.5.5
    // division; 6.10.1: `#if` computes in intmax_t/uintmax_t).
    // In a kernel (the lowering): `a[threadIdx.x * V]` over floats costs 4 sectors per unit of V for V = 1..8.
    let stride = |v: &str| {
        let text = format!("__global__ void k(float *a) {{ a[threadIdx.x * ({v})] = 1.0f; }}\n");
        one_sectors(&text, "32", None)
    };
    // (unsigned char)300 = 44 (300 mod 256); 44 / 11 = 4: 16 sectors (27, 32 sectors, without the cast).
    assert_eq!(stride("(unsigned char)300 / 11"), Ok(16));
    // -1 > 0u compares unsigned: 4294967295 > 0 is 1; + 1 = 2: 8 sectors.
    assert_eq!(stride("(-1 > 0u) + 1"), Ok(8));
    // (unsigned)-1 / 0x40000000 = 4294967295 / 1073741824 = 3: 12 sectors (0 if -1 stayed signed: 1 sector).
    assert_eq!(stride("(unsigned)-1 / 0x40000000"), Ok(12));
    // Division truncates toward zero and the remainder takes the dividend's sign: -3 * -1 = 3: 12 sectors.
    assert_eq!(stride("(-7 / 2) * (-7 % 2)"), Ok(12));
    // In host code (a launch's block size, computed before the kernel runs): the same rules.
    let block = |v: &str| {
        let text = format!(
            "__global__ void k(float *a) {{ a[threadIdx.x] = 1.0f; }}\nint main() {{ float *d; k<<<1, {v}>>>(d); }}\n"
        );
        ok(&scenario(Lang::Cuda, &text, "32", None, "8.0")).launch.block.x
    };
    assert_eq!(block("(unsigned char)300"), 44);
    // The cast names the same types as declarations: `size_t` is 64-bit unsigned, 2^64 - 1 >> 57 = 127;
    // qualifiers do not change the type.
    assert_eq!(block("(size_t)-1 >> 57"), 127);
    assert_eq!(block("(const unsigned char)300"), 44);
    assert_eq!(block("(unsigned)-1 / 0x40000000 * 32"), 96);
    assert_eq!(block("((-1 > 0u) + 1) * 64"), 128);
    assert_eq!(block("(-7 / 2) * (-7 % 2) * 32"), 96);
    // `1 << 40` on an int is no value C gives: not a constant, so the settings' block (32) stays.
    assert_eq!(block("(1 << 40) >> 34"), 32);
    // ... while on a long long it is one: 2^40 >> 34 = 64.
    assert_eq!(block("(1LL << 40) >> 34"), 64);
    // `#if` with an unsigned operand: `-1 > 0u` is true there too (uintmax_t), so S = 2: 8 sectors. Lines
    // skipped by `#if 0` are text: an apostrophe or a stray character there is no error.
    let ifs = "#if 0\n// don't: it's `old`\n#endif\n#if -1 > 0u\n#define S 2\n#else\n#define S 1\n#endif\n__global__ void k(float *a) { a[threadIdx.x * S] = 1.0f; }\n";
    assert_eq!(one_sectors(ifs, "32", None), Ok(8));
    // A shift past intmax_t's width in `#if` is an error at the operator.
    let e = one_sectors("#if 1 << 70\n#endif\n__global__ void k(float *a) { a[0] = 1.0f; }\n", "32", None).unwrap_err();
    assert!(e.contains("1:7") && e.contains("shift by 70: the shift amount must be 0..63 for a 64-bit value"), "{e}");
    // `&&`, `||` and `?:` evaluate only the operand they need (C11 6.5.13-15): no division by zero here.
    let lazy = "#if (0 && 1 / 0) || (1 ? 2 : 1 / 0) == 2\n#define S 2\n#endif\n__global__ void k(float *a) { a[threadIdx.x * S] = 1.0f; }\n";
    assert_eq!(one_sectors(lazy, "32", None), Ok(8));
    // The same text where it is not skipped is an error at its place.
    let live = "// fine\nint x = 'a;\n__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n";
    let e = one_sectors(live, "32", None).unwrap_err();
    assert!(e.contains("2:9") && e.contains("unterminated character literal"), "{e}");
}

#[test]
fn dynamic_shared_memory_starts_after_every_static_array() {
    // nvcc places `extern __shared__` memory after all static shared arrays, wherever they are declared:
    // `s[36]` takes 144 bytes, so `dyn` starts 144 bytes after `s` (a 16-byte boundary already).
    let text = "__global__ void k(float *a) { extern __shared__ float dyn[]; __shared__ float s[36]; s[threadIdx.x] = dyn[threadIdx.x]; }\n";
    let t = scenario(Lang::Cuda, text, "32", None, "8.0").trace(1).expect("runs");
    let lane0 = |k: usize| t.items[k].issues[0].addrs.0[0].expect("lane 0 runs");
    assert_eq!(t.items[0].site.access, "dyn[threadIdx.x]");
    assert_eq!(lane0(0) - lane0(1), 144);
}
