//! The CUDA that published kernels are written in (tests/published.rs runs the kernels themselves): each
//! construct here in a few lines, with the accesses it must give. One warp of 32 threads throughout: a warp's
//! 32 consecutive floats are 128 bytes, one request of 4 sectors (CUDA Best Practices Guide 9.2.1.1), and 16
//! bytes a lane are 512 bytes, 16 sectors.
#![cfg(not(target_arch = "wasm32"))]

use warpscope::analysis::ProgramResult;
use warpscope::lang::{Header, Lang};
use warpscope::scenario::Scenario;

mod common;

fn cuda(text: &str) -> Scenario {
    common::scenario(Lang::Cuda, text, "32", None)
}

fn run(text: &str) -> ProgramResult {
    common::ok(&cuda(text))
}

/// Each memory instruction as (line, SASS-style op, warp issues, sectors).
fn accesses(r: &ProgramResult) -> Vec<(usize, String, u64, u64)> {
    r.instructions.iter().map(|i| (i.line, i.op.clone(), i.warps, i.memory.as_ref().map_or(0, |m| m.sectors))).collect()
}

fn note<'a>(r: &'a ProgramResult, id: &str) -> &'a str {
    r.notes.iter().find(|n| n.id == id).map_or("", |n| n.text.as_str())
}

fn acc(line: usize, op: &str, warps: u64, sectors: u64) -> (usize, String, u64, u64) {
    (line, op.to_string(), warps, sectors)
}

#[test]
fn lexing_as_nvcc_does_uint_digit_separators_line_splices_variadic_macros_and_the_math_library() {
    let r = run("#define LOAD(...) __VA_ARGS__
#define LIMIT 1'024
__global__ void k(const float *x, float *y) {
    uint i = blockIdx.x * blockDim.x + \\
             threadIdx.x;
    float v = LOAD(x[i]);
    y[i] = rsqrtf(v) + __expf(v) + __fdividef(v, 2.0f) + (i < LIMIT ? 0.0f : INFINITY);
}
");
    assert_eq!(accesses(&r), [acc(6, "LDG.E.32", 1, 4), acc(7, "STG.E.32", 1, 4)]);
}

#[test]
fn cache_hint_intrinsics_are_the_loads_and_stores_their_ptx_names() {
    // __ldcs is ld.global.cs (LDG.E.CS), __stcg st.global.cg (STG.E.CG): CUDA C++ Programming Guide, "Load
    // Functions Using Cache Hints" and "Store Functions Using Cache Hints"; docs/model.md#the-memory-system.
    let r = run("__global__ void k(const float *x, float *y) {
    unsigned i = threadIdx.x;
    float v = __ldcs(&x[i]);
    __stcs(&y[i], v);
    __stcg(&y[i + 32], __ldcg(&x[i + 32]));
}
");
    assert_eq!(
        accesses(&r),
        [
            acc(3, "LDG.E.CS.32", 1, 4),
            acc(4, "STG.E.CS.32", 1, 4),
            acc(5, "LDG.E.CG.32", 1, 4),
            acc(5, "STG.E.CG.32", 1, 4)
        ]
    );
}

#[test]
fn arrays_indexed_by_constants_stay_in_registers_and_the_others_are_local_memory() {
    let r = run("__global__ void k(const float *x, float *y, int n) {
    float acc[4];
    for (int j = 0; j < 4; j++)
        acc[j] = x[j * 32 + threadIdx.x];
    float s = 0;
    for (int j = 0; j < 4; j++)
        s += acc[j];
    float spill[4];
    spill[threadIdx.x % 4] = s;
    y[threadIdx.x] = spill[n % 4];
}
");
    // `acc`: every index a constant once the loops are unrolled, so no memory; `spill`: indexed by run-time
    // values, so one local store and one local load. Local memory interleaves the threads' words (element e
    // of lane l at 4 * (32 * e + l): CUDA C++ Programming Guide, "Local Memory"): the store's element tid % 4
    // puts the lanes in 4 rows of 128 bytes, in 16 different sectors; the load's element n % 4 (n = 32, the
    // launch's thread count, given as the note says) is one row, 4 sectors.
    assert_eq!(
        accesses(&r),
        [acc(4, "LDG.E.32", 4, 16), acc(9, "STL.32", 1, 16), acc(10, "LDL.32", 1, 4), acc(10, "STG.E.32", 1, 4)]
    );
    let n = note(&r, "cuda-local-arrays");
    assert!(n.starts_with("Local arrays: `acc` (line 2) in registers; `spill` (line 8) in local memory"), "{n}");
}

#[test]
fn constant_memory_is_counted_in_passes() {
    let r = run("__constant__ float c_Kernel[16];
__global__ void k(const float *x, float *y) {
    y[threadIdx.x] = c_Kernel[threadIdx.x % 16] * x[threadIdx.x];
}
");
    // The constant read is no L1/TEX traffic (no sectors); docs/model.md#constant-memory: one pass per distinct address, 16 here,
    // all in one 64-byte line (c_Kernel is the first __constant__ variable, at offset 0).
    assert_eq!(accesses(&r), [acc(3, "LDC.32", 1, 0), acc(3, "LDG.E.32", 1, 4), acc(3, "STG.E.32", 1, 4)]);
    assert_eq!(r.instructions[0].constant.map(|k| (k.passes, k.lines_64)), Some((16, 1)));
    assert_eq!(note(&r, "cuda-not-costed"), "");
}

#[test]
fn a_struct_aligned_to_its_size_is_copied_in_one_vector_access() {
    // nvcc copies a 16-byte struct declared alignas(16) with ld.global.v4 / st.global.v4 (LDG.E.128).
    let r = run("struct alignas(16) Packed { float v[4]; };
__global__ void k(const Packed *x, Packed *y) {
    y[threadIdx.x] = x[threadIdx.x];
}
");
    assert_eq!(accesses(&r), [acc(3, "LDG.E.128", 1, 16), acc(3, "STG.E.128", 1, 16)]);
    // Without the alignment it is four 4-byte fields, as nvcc copies a struct field by field.
    let r = run("struct Loose { float v[4]; };
__global__ void k(const Loose *x, Loose *y) {
    y[threadIdx.x] = x[threadIdx.x];
}
");
    assert_eq!(r.instructions.len(), 8);
    assert!(r.instructions.iter().all(|i| i.op.ends_with(".32")));
}

#[test]
fn an_included_header_runs_and_its_lines_are_named_as_compilers_name_them() {
    let text = "#include \"common.h\"
__global__ void k(const float *x, float *y) {
    y[threadIdx.x] = get(x, threadIdx.x + W);
}
";
    let header = Header {
        name: "common.h".into(),
        text: "#define W 32\n__device__ float get(const float *p, int i) {\n    return p[i];\n}\n".into(),
    };
    let mut sc = cuda(text);
    sc.headers = vec![header];
    let r = common::ok(&sc);
    // Listed in the order of the text: the file's statement, then the header's function it calls.
    assert_eq!(accesses(&r), [acc(3, "STG.E.32", 1, 4), acc(3, "LDG.E.32", 1, 4)]);
    // The load is on line 3 of common.h, as PTX's .loc names it; the file's line is the call's.
    let src = r.instructions[1].source.as_ref().expect("the header's line");
    assert_eq!((src.file.as_str(), src.line), ("common.h", 3));
    assert!(r.instructions[0].source.is_none());
    // Without the header: the unknown name, and which file to add.
    let e = cuda(text).run().expect_err("refused").to_string();
    assert!(
        e.ends_with(
            "The file includes `common.h`, which was not given: paste it above the kernel, or give it with --include"
        ) || e.contains(
            "The file includes `common.h`, which was not given: paste it above the kernel, or give it with --include\n"
        ),
        "{e}"
    );
}

#[test]
fn cooperative_groups_reduce_takes_a_function_and_a_brace_initialiser_takes_the_parameters_type() {
    let r = run("#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
struct __align__(8) SumMax { float maxval; float sum; };
__device__ SumMax op(SumMax a, SumMax b) {
    SumMax r;
    r.maxval = fmaxf(a.maxval, b.maxval);
    r.sum = a.sum + b.sum;
    return r;
}
__global__ void k(const float *x, float *y) {
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    SumMax p;
    p.maxval = -INFINITY;
    p.sum = 0.0f;
    p = op(p, { x[threadIdx.x], 1.0f });
    SumMax t = cg::reduce(warp, p, op);
    y[threadIdx.x] = t.sum;
}
");
    assert_eq!(accesses(&r), [acc(16, "LDG.E.32", 1, 4), acc(18, "STG.E.32", 1, 4)]);
}

#[test]
fn an_access_that_spans_lines_is_on_the_line_nvcc_names() {
    // NVRTC 12.9's .loc for these (compiled from the same text): a load where its expression ends, a store
    // on the line of its `=`.
    let r = run("__global__ void k(const float *A, float *B, int n) {
    int i = threadIdx.x;
    B[i] =
      A[i +
        n];
}
");
    assert_eq!(accesses(&r), [acc(5, "LDG.E.32", 1, 4), acc(3, "STG.E.32", 1, 4)]);
}

#[test]
fn ptx_mbarrier_operations_are_listed_as_not_counted() {
    let ptx = ".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
    .reg .b32 %r<2>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<6>;
    .shared .align 8 .b64 bar;
    mov.u32 %r1, bar;
    mbarrier.init.shared.b64 [%r1], 32;
    mbarrier.arrive.shared.b64 %rd5, [%r1];
    ld.param.u64 %rd1, [k_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    ld.global.f32 %f1, [%rd2];
    ret;
}
";
    let r = common::ok(&common::scenario(Lang::Ptx, ptx, "32", None));
    assert_eq!(r.instructions.len(), 1);
    assert_eq!(
        note(&r, "ptx-not-costed"),
        "These instructions move memory but warpscope does not count them, so the totals leave them out: mbarrier.init.shared.b64 (line 11), mbarrier.arrive.shared.b64 (line 12)."
    );
}

#[test]
fn sass_lea_hi_x_sx32_sign_extends_a_negative_index() {
    // i = tid - 32 is negative; LEA.HI.X.SX32 fills the high word with i's sign, so the address is
    // base + 4 * i: lane 0 reads 0x10000 - 128 = 0xff80 (a wrong +1 in the high word made it 0x1_0000_ff80).
    let sass = "        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   IADD3 R0, R0, -0x20, RZ ;
        /*0020*/                   LEA R2, P0, R0, c[0x0][0x160], 0x2 ;
        /*0030*/                   LEA.HI.X.SX32 R3, R0, c[0x0][0x164], 0x2, P0 ;
        /*0040*/                   LDG.E R4, [R2.64] ;
        /*0050*/                   EXIT ;
";
    let mut sc = common::scenario(Lang::Sass, sass, "32", None);
    sc.sets = vec!["c[0x0][0x160]=0x10000".into(), "c[0x0][0x164]=0".into()];
    let a = sc.analysis().expect("analysis");
    let got = a.capture(0, 0, 0, &mut warpscope::program::grid::Unlimited).expect("runs").expect("lane addresses");
    assert_eq!(got.addrs.0[0], Some(0xff80));
    assert_eq!(got.addrs.0[31], Some(0xfffc));
}

#[test]
fn every_unknown_name_and_function_of_a_kernel_is_reported_at_once() {
    let e = cuda(
        "__global__ void k(float *x) {
    x[threadIdx.x] = foo(3) + WIDTH;
    x[threadIdx.x + 32] = bar(x[threadIdx.x]);
}
",
    )
    .run()
    .expect_err("refused")
    .to_string();
    let first = e.lines().next().unwrap_or("");
    assert!(
        first.starts_with("pattern 2:22: unknown function `foo` (define it as a __device__ function in the file"),
        "{e}"
    );
    assert!(
        first.ends_with("; also in this kernel: unknown name `WIDTH` at 2:31; unknown function `bar` at 3:27"),
        "{e}"
    );
}

#[test]
fn a_brace_initialiser_of_one_value_of_the_type_copies_it() {
    // leimao/CUDA-GEMM-Optimization's `int4 C_vals{*reinterpret_cast<int4 const*>(&C[...])};`: one 16-byte
    // load, the value then changed in registers and stored whole.
    let r = run("__global__ void k(const float *C, float *D) {
    int4 C_vals{*reinterpret_cast<int4 const*>(&C[threadIdx.x * 4])};
    for (size_t i{0U}; i < 4; ++i)
        reinterpret_cast<float*>(&C_vals)[i] = 2.0f * reinterpret_cast<float*>(&C_vals)[i];
    *reinterpret_cast<int4*>(&D[threadIdx.x * 4]) = C_vals;
}
");
    assert_eq!(accesses(&r), [acc(2, "LDG.E.128", 1, 16), acc(5, "STG.E.128", 1, 16)]);
}

#[test]
fn sass_calls_through_constant_bank_4_are_external_functions_listed_as_not_counted() {
    // ptxas loads an external function's address (vprintf for a device printf) from constant bank 4 and calls
    // it through a register; nvdisasm names it only where the cubin's relocations are read (xlite-dev/LeetCUDA's
    // mma_simple_swizzle on sm_80). The load after it counts: 32 consecutive floats, 4 sectors.
    let sass = "        /*0000*/                   MOV R2, 0x0 ;
        /*0010*/                   LDC.64 R2, c[0x4][R2] ;
        /*0020*/                   CALL.ABS.NOINC R2 ;
        /*0030*/                   S2R R0, SR_TID.X ;
        /*0040*/                   IMAD.WIDE.U32 R4, R0, 0x4, c[0x0][0x160] ;
        /*0050*/                   LDG.E R6, [R4.64] ;
        /*0060*/                   EXIT ;
";
    let mut sc = common::scenario(Lang::Sass, sass, "32", None);
    sc.sets = vec!["c[0x0][0x160]=0x10000".into(), "c[0x0][0x164]=0".into()];
    let r = common::ok(&sc);
    // The LDC of the function's address is a constant load at a per-thread offset (all lanes 0: 1 pass).
    assert_eq!(accesses(&r), [acc(2, "LDC.64", 1, 0), acc(6, "LDG.E", 1, 4)]);
    assert_eq!(r.instructions[0].constant.map(|k| k.passes), Some(1));
    assert_eq!(
        note(&r, "sass-not-costed"),
        "These instructions move memory but warpscope does not count them, so the totals leave them out: CALL.ABS.NOINC R2 (line 3)."
    );
}

#[test]
fn a_variable_indexed_at_run_time_through_a_pointer_to_it_is_local_memory() {
    // leimao/CUDA-GEMM-Optimization's masked vector load: `int4 v{0, 0, 0, 0}`, filled by a 16-byte load,
    // masked through `float *p{reinterpret_cast<float *>(&v)}` with a run-time index, then stored. nvcc puts
    // `v` in local memory (its PTX has st.local.v4 and ld.local.v4 for it): the initialiser and the fill are
    // STL.128, the read before the store an LDL.128; 16 bytes a lane interleaved, 512 bytes, 16 sectors each.
    let r = run("__global__ void k(const float *A, float *D, int k) {
    int4 v{0, 0, 0, 0};
    v = *reinterpret_cast<int4 const *>(&A[threadIdx.x * 4]);
    float *p{reinterpret_cast<float *>(&v)};
    for (int i = 0; i < k - 30; ++i)
        p[3 - i] = 0.0f;
    *reinterpret_cast<int4 *>(&D[threadIdx.x * 4]) = v;
}
");
    // k is the launch's thread count, 32: the masking loop runs twice, two 4-byte local stores.
    assert_eq!(
        accesses(&r),
        [
            acc(2, "STL.128", 1, 16),
            acc(3, "LDG.E.128", 1, 16),
            acc(3, "STL.128", 1, 16),
            acc(6, "STL.32", 2, 8),
            acc(7, "LDL.128", 1, 16),
            acc(7, "STG.E.128", 1, 16)
        ]
    );
    let n = note(&r, "cuda-local-arrays");
    assert!(
        n.contains("`v` (line 2) in local memory: an element of it is indexed at run time through a pointer (6:11)"),
        "{n}"
    );
}

#[test]
fn arrays_passed_to_a_template_function_with_the_kernels_constants_stay_in_registers() {
    // leimao's gemm_v06: `constexpr size_t N{...}` locals as the callee's template arguments, arrays passed
    // whole to parameters `T const a[NY][4]`; the callee indexes them with its unrolled counters only, so nvcc
    // keeps them in registers (its PTX has no local memory). One load per element of A_vals row 0 (4 issues of
    // 32 floats, 4 sectors each) and the final store: nothing local.
    let r = run("template <typename T, size_t NX, size_t NY>
__device__ void compute(T const A_vals[NY][4], T C[NY][NX]) {
#pragma unroll
    for (size_t i{0U}; i < NY; ++i)
        for (size_t j{0U}; j < NX; ++j)
            C[i][j] += A_vals[i][0] * A_vals[i][1];
}
template <typename T>
__global__ void k(const T *x, T *y) {
    constexpr size_t ROWS{8 / 4};
    T A_vals[ROWS][4] = {static_cast<T>(0)};
    T C[ROWS][3] = {static_cast<T>(0)};
    for (int q = 0; q < 4; ++q)
        A_vals[0][q] = x[threadIdx.x + 32 * q];
    compute<T, 3, ROWS>(A_vals, C);
    y[threadIdx.x] = C[1][2];
}
template __global__ void k<float>(const float *, float *);
");
    assert_eq!(accesses(&r), [acc(14, "LDG.E.32", 4, 16), acc(16, "STG.E.32", 1, 4)]);
    assert!(note(&r, "cuda-local-arrays")
        .starts_with("Local arrays: `A_vals` (line 11) in registers; `C` (line 12) in registers."));
}

#[test]
fn an_array_passed_on_through_two_functions_stays_in_registers() {
    // leimao's gemm_v06_vectorized_double_buffered: the kernel passes its accumulators to a function that
    // passes them on to the one that indexes them, with constants once unrolled; nvcc inlines both and keeps
    // the array in registers.
    let r = run("__device__ void add(float acc[4], const float *x) {
    for (int i = 0; i < 4; ++i)
        acc[i] += x[threadIdx.x + 32 * i];
}
__device__ void step(float acc[4], const float *x) {
    add(acc, x);
}
__global__ void k(const float *x, float *y) {
    float acc[4] = {0.0f};
    step(acc, x);
    y[threadIdx.x] = acc[3];
}
");
    assert_eq!(accesses(&r), [acc(3, "LDG.E.32", 4, 16), acc(11, "STG.E.32", 1, 4)]);
    assert!(note(&r, "cuda-local-arrays").starts_with("Local arrays: `acc` (line 9) in registers."));
}

#[test]
fn printf_is_listed_as_not_counted() {
    // nvcc writes printf's arguments to a local buffer (st.local, packed into v2/v4 stores as it chooses) and
    // calls vprintf; the argument's own load counts.
    let r = run("__global__ void k(const float *x) {
    if (threadIdx.x == 0)
        printf(\"%f\\n\", x[threadIdx.x]);
}
");
    // One lane reads 4 bytes: one sector.
    assert_eq!(accesses(&r), [acc(3, "LDG.E.32", 1, 1)]);
    assert_eq!(
        note(&r, "cuda-not-costed"),
        "These operations move memory but warpscope does not count them, so the totals leave them out: printf → its arguments' local buffer (STL) and vprintf (line 3)."
    );
}
