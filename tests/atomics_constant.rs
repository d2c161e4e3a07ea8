//! Atomics and reductions (docs/model.md#atomics) and constant memory (docs/model.md#constant-memory): each case's numbers come from the line
//! of docs/model.md its comment quotes, through every input path that can express it (an instruction with an
//! address expression, CUDA, PTX, SASS).
#![cfg(not(target_arch = "wasm32"))]

use warpscope::analysis::{InstrResult, ProgramResult};
use warpscope::lang::Lang;
use warpscope::model::access::{Instr, LaneSet, WarpAddrs};
use warpscope::model::cost::{analyze, Config};
use warpscope::model::count::{count, AtomicCounts, ConstCounts};
use warpscope::model::report::{Cost, SpaceTag};
use warpscope::program::launch::Dim3;
use warpscope::scenario::Scenario;
use warpscope::Cc;

const A100: Cc = Cc::new(8, 0);

fn run(lang: Lang, text: &str, block: &str, sets: &[&str], kernel: Option<&str>) -> ProgramResult {
    let sc = Scenario {
        cc: A100,
        lang,
        text: text.into(),
        block: Dim3::parse(block, "block").expect("block"),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        kernel: kernel.map(str::to_string),
        ..Scenario::default()
    };
    sc.run().unwrap_or_else(|e| panic!("{}:{}: {}", e.error.line, e.error.column, e.error.message))
}

fn only<'a>(r: &'a ProgramResult, op_starts: &str) -> &'a InstrResult {
    let mut found = r.instructions.iter().filter(|i| i.op.starts_with(op_starts));
    let i = found.next().unwrap_or_else(|| panic!("no {op_starts} in {:?}", r.instructions));
    assert!(found.next().is_none(), "more than one {op_starts}");
    i
}

fn warp(f: impl Fn(u64) -> u64) -> WarpAddrs {
    WarpAddrs::from_fn(LaneSet::ALL, |l| f(l as u64))
}

/// docs/model.md#atomics: "`atomicAdd(&total, 1)` by 256 threads, as compiled (aggregated): 8 requests,
/// 8 sectors, 8 ops; not aggregated: 8 requests, 8 sectors, 256 ops, serial 32."
#[test]
fn a_counter_by_256_threads_aggregated_in_cuda_and_sass_not_in_ptx() {
    const CUDA: &str = "__global__ void count(int *total) {\n    atomicAdd(total, 1);\n}\n";
    let cuda = run(Lang::Cuda, CUDA, "256", &[], None);
    let i = only(&cuda, "RED.E.ADD");
    let m = i.memory.as_ref().expect("global totals");
    assert_eq!((m.requests, m.sectors), (8, 8));
    let a = i.atomic.expect("atomic totals");
    assert_eq!((a.ops, a.max_serial), (8, 1));
    assert!(i.notes.iter().any(|n| n.id == "cuda-atomic-aggregation"));
    // The result is unused, so it is a reduction under Nsight's op_red names.
    assert_eq!(i.ncu["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"], 8);
    assert_eq!(i.ncu["l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"], 8);

    // NVRTC 12.9's PTX for it (compute_80) keeps one atom per lane: the not-aggregated figures.
    const PTX: &str = "
.version 8.8
.target sm_80
.address_size 64
.visible .entry count(.param .u64 count_param_0)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [count_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    atom.global.add.u32 %r1, [%rd2], 1;
    ret;
}
";
    let ptx = run(Lang::Ptx, PTX, "256", &[], None);
    let i = only(&ptx, "ATOMG.E.ADD");
    let m = i.memory.as_ref().expect("global totals");
    assert_eq!((m.requests, m.sectors), (8, 8));
    let a = i.atomic.expect("atomic totals");
    assert_eq!((a.ops, a.max_serial, a.serial), (256, 32, 256));
    assert_eq!(i.ncu["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"], 8);

    // ptxas 12.9 -O3 for sm_80 elects a leader (VOTEU.ANY, UFLO, ISETP.EQ) that adds the popcount: 8 ops.
    const SASS: &str = "
        .text._Z5countPi:
_Z5countPi:
        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_LANEID ;
        /*0020*/                   VOTEU.ANY UR4, UPT, PT ;
        /*0030*/                   MOV R2, c[0x0][0x160] ;
        /*0040*/                   UFLO.U32 UR5, UR4 ;
        /*0050*/                   POPC R5, UR4 ;
        /*0060*/                   IMAD.MOV.U32 R3, RZ, RZ, c[0x0][0x164] ;
        /*0070*/                   ISETP.EQ.U32.AND P0, PT, R0, UR5, PT ;
        /*0080*/                   ULDC.64 UR4, c[0x0][0x118] ;
        /*0090*/               @P0 RED.E.ADD.STRONG.GPU [R2.64], R5 ;
        /*00a0*/                   EXIT ;
";
    let sass = run(Lang::Sass, SASS, "256", &[], None);
    let i = only(&sass, "RED.E.ADD");
    let a = i.atomic.expect("atomic totals");
    assert_eq!((a.ops, a.max_serial), (8, 1));
    assert_eq!(i.memory.as_ref().map(|m| (m.requests, m.sectors)), Some((8, 8)));
}

/// docs/model.md#atomics: "256-bin global histogram ... all-zero input: 1 sector, serial 32"; the rule
/// (line 363): "L1 sectors = the distinct sectors its lanes touch ... `ops` = active lanes and `serial` = the
/// most active lanes on one address".
#[test]
fn global_atomic_rule_distinct_sectors_ops_and_serial() {
    let red = Instr::parse("RED.E.ADD.STRONG.GPU").unwrap();
    let cfg = Config::default();
    // Every lane on bin 0 (all-zero input).
    let c = count(A100, &red, &warp(|_| 0x1000), None, &cfg);
    assert_eq!(c.atomic, Some(AtomicCounts { ops: 32, serial: 32 }));
    assert_eq!(c.sums().sectors, 1);
    assert_eq!(c.sums().requests, 1);
    // Lanes on 4 words of one sector, 8 on each.
    let c = count(A100, &red, &warp(|l| 0x1000 + 4 * (l % 4)), None, &cfg);
    assert_eq!(c.atomic, Some(AtomicCounts { ops: 32, serial: 8 }));
    assert_eq!(c.sums().sectors, 1);
    // 32 bins 128 bytes apart: 32 sectors, nothing in series.
    let c = count(A100, &red, &warp(|l| 0x1000 + 128 * l), None, &cfg);
    assert_eq!(c.atomic, Some(AtomicCounts { ops: 32, serial: 1 }));
    assert_eq!(c.sums().sectors, 32);
    // The detailed report says the same, with the note about Nsight's undocumented lane counting.
    let r = analyze(A100, &red, &warp(|_| 0x1000), &cfg);
    assert_eq!(r.atomic, Some(AtomicCounts { ops: 32, serial: 32 }));
    assert!(r.notes.iter().any(|n| n.id == "atomic-l2"));
    assert!(r.summary().ends_with("32 operations, 32 serial on one address"), "{}", r.summary());
}

/// docs/model.md#atomics: "Shared histogram, 32 lanes on 32 distinct banks: 1 wavefront; 32 lanes on one bin:
/// 1 (`POPC.INC`), 32 (`ADD`)."
#[test]
fn shared_atomics_serialize_lanes_on_a_word_unless_popc_inc() {
    let cfg = Config::default();
    let add = Instr::parse("ATOMS.ADD").unwrap();
    let inc = Instr::parse("ATOMS.POPC.INC.32").unwrap();
    let banks = |i: &Instr, w: &WarpAddrs| match analyze(A100, i, w, &cfg).cost {
        Cost::Banks(b) => (b.wavefronts, b.bank_conflicts),
        other => panic!("not a shared cost: {other:?}"),
    };
    assert_eq!(banks(&add, &warp(|l| 4 * l)), (1, 0));
    assert_eq!(banks(&inc, &warp(|l| 4 * l)), (1, 0));
    assert_eq!(banks(&add, &warp(|_| 0)), (32, 31));
    assert_eq!(banks(&inc, &warp(|_| 0)), (1, 0));
    // Two lanes on each word of banks 0-15: 2 read-modify-writes in each bank (the section B rule would
    // broadcast them: 1).
    assert_eq!(banks(&add, &warp(|l| 4 * (l % 16))), (2, 1));
    let r = analyze(A100, &add, &warp(|_| 0), &cfg);
    assert!(r.notes.iter().any(|n| n.id == "atomic-shared-unmeasured"), "labelled a model, unmeasured");
    // Maxwell is the first with native shared atomics (line 361: Kepler locks and retries).
    assert_eq!(add.base.first_cc(), Some(Cc::new(5, 0)));
}

/// docs/model.md#atomics, through CUDA: a shared `atomicAdd(&s[i], 1)` whose result is unused is
/// ATOMS.POPC.INC; another uniform add is aggregated (ptxas 12.9's SASS for `atomicAdd(&s[5], 2)` is one
/// lane's `ATOMS.ADD RZ, [0x14], R4`); a histogram whose bin is data is listed and not counted.
#[test]
fn cuda_histograms_in_shared_and_global_memory() {
    const K: &str = "__global__ void hist(unsigned int *bins, const unsigned char *in) {
    __shared__ unsigned int s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&s[threadIdx.x % 32], 1);
    atomicAdd(&s[0], 1);
    atomicAdd(&s[5], 2);
    atomicAdd(&bins[in[i]], 1);
}";
    let r = run(Lang::Cuda, K, "256", &[], None);
    let at = |line: usize| r.instructions.iter().find(|i| i.line == line && i.op.starts_with("ATOM")).expect("line");
    let banks = |i: &InstrResult| i.banks.as_ref().map(|b| b.wavefronts);
    assert_eq!(at(4).op, "ATOMS.POPC.INC.32");
    assert_eq!(banks(at(4)), Some(8));
    assert_eq!(at(5).op, "ATOMS.POPC.INC.32");
    assert_eq!(banks(at(5)), Some(8));
    assert_eq!(at(5).atomic.map(|a| a.max_serial), Some(32));
    assert_eq!(at(6).op, "ATOMS.ADD");
    assert_eq!(banks(at(6)), Some(8), "one lane per warp after aggregation");
    assert_eq!(at(6).atomic.map(|a| a.ops), Some(8));
    let hist = r.instructions.iter().find(|i| i.op.starts_with("RED")).expect("the global histogram");
    assert_eq!(hist.warps, 0);
    assert!(hist.notes.iter().any(|n| n.id == "atomic-address-data"));
    let said = r.assumptions().expect("the figure's footnote says what was left out");
    assert!(said.contains("atomics whose address is data not counted (line 7)"), "{said}");
}

/// docs/model.md#constant-memory: "`c[lane % 8]` (floats) 8 passes (64-byte lines: 1); `c[lane]` 32 (2);
/// `c[16 * lane]` 32 (32); `c[0]` 1."
#[test]
fn constant_passes_per_distinct_address() {
    let ldc = Instr::parse("LDC").unwrap();
    let cfg = Config::default();
    let k = |f: &dyn Fn(u64) -> u64| count(A100, &ldc, &warp(f), None, &cfg).constant;
    assert_eq!(k(&|l| 4 * (l % 8)), Some(ConstCounts { passes: 8, lines_64: 1, active_lanes: 32 }));
    assert_eq!(k(&|l| 4 * l), Some(ConstCounts { passes: 32, lines_64: 2, active_lanes: 32 }));
    assert_eq!(k(&|l| 64 * l), Some(ConstCounts { passes: 32, lines_64: 32, active_lanes: 32 }));
    assert_eq!(k(&|_| 0), Some(ConstCounts { passes: 1, lines_64: 1, active_lanes: 32 }));
    // Not L1/TEX traffic: no requests or sectors.
    assert_eq!(count(A100, &ldc, &warp(|l| 4 * l), None, &cfg).sums().requests, 0);
    let r = analyze(A100, &ldc, &warp(|l| 4 * (l % 8)), &cfg);
    assert_eq!(r.space, SpaceTag::Constant);
    assert!(r.notes.iter().any(|n| n.id == "constant-passes"));
    assert!(r.summary().starts_with("8 passes"), "{}", r.summary());
}

/// docs/model.md#constant-memory: "`LDC Rd, c[bank][Ra + imm]` (PTX `ld.const`, CUDA `__constant__` arrays
/// indexed per thread) costs one pass per distinct address"; the same kernel through CUDA, NVRTC 12.9's PTX
/// and ptxas 12.9's SASS (sm_80). `k` follows a 12-byte array, so `k[i]` spans three 64-byte lines.
#[test]
fn constant_arrays_in_cuda_ptx_and_sass_agree() {
    const CUDA: &str = "__constant__ float pad[3];
__constant__ float k[17];
__global__ void perlane(float *out) {
    int i = threadIdx.x;
    out[i] = k[i % 8] + k[i];
}";
    const PTX: &str = "
.version 8.8
.target sm_80
.address_size 64
.const .align 4 .b8 pad[12];
.const .align 4 .b8 k[68];
.visible .entry perlane(.param .u64 perlane_param_0)
{
    .reg .b32 %r<4>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<9>;
    ld.param.u64 %rd1, [perlane_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 7;
    mul.wide.u32 %rd3, %r2, 4;
    mov.u64 %rd4, k;
    add.s64 %rd5, %rd4, %rd3;
    ld.const.f32 %f1, [%rd5];
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd4, %rd6;
    ld.const.f32 %f2, [%rd7];
    add.f32 %f3, %f1, %f2;
    add.s64 %rd8, %rd2, %rd6;
    st.global.f32 [%rd8], %f3;
    ret;
}
";
    const SASS: &str = "
        .text._Z7perlanePf:
_Z7perlanePf:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   IMAD.MOV.U32 R3, RZ, RZ, 0x4 ;
        /*0030*/                   ULDC.64 UR4, c[0x0][0x118] ;
        /*0040*/                   SHF.L.U32 R4, R0, 0x2, RZ ;
        /*0050*/                   LOP3.LUT R2, R0, 0x7, RZ, 0xc0, !PT ;
        /*0060*/                   LDC R5, c[0x3][R4+0xc] ;
        /*0070*/                   IMAD.SHL.U32 R2, R2, 0x4, RZ ;
        /*0080*/                   IADD3 R0, R2, c[0x2][0x0], RZ ;
        /*0090*/                   IMAD.WIDE.U32 R2, R0, R3, c[0x0][0x160] ;
        /*00a0*/                   LDC R0, c[0x3][R0] ;
        /*00b0*/                   FADD R5, R0, R5 ;
        /*00c0*/                   STG.E [R2.64], R5 ;
        /*00d0*/                   EXIT ;
";
    let passes = |r: &ProgramResult| {
        let mut v: Vec<(u64, u64)> =
            r.instructions.iter().filter_map(|i| i.constant.map(|k| (k.passes, k.lines_64))).collect();
        v.sort_unstable();
        v
    };
    let want = vec![(8, 1), (32, 3)];
    assert_eq!(passes(&run(Lang::Cuda, CUDA, "32", &[], None)), want);
    assert_eq!(passes(&run(Lang::Ptx, PTX, "32", &[], None)), want);
    // `k`'s offset is a relocation in constant bank 2 the listing does not show: given here, as the error
    // without it asks.
    assert_eq!(passes(&run(Lang::Sass, SASS, "32", &["c[0x2][0x0]=12"], None)), want);
    let no_offset = Scenario {
        cc: A100,
        lang: Lang::Sass,
        text: SASS.into(),
        block: Dim3::parse("32", "block").unwrap(),
        ..Scenario::default()
    };
    let e = no_offset.run().expect_err("the offset is not in the listing");
    assert!(e.error.message.contains("c[0x2][0x0]"), "{}", e.error.message);
}

/// docs/model.md#constant-memory: "Warn when a block's distinct constant bytes exceed the 8 KB working set per SM";
/// line 392, 64 KB in all.
#[test]
fn constant_working_set_and_size() {
    const BIG: &str = "__constant__ float table[4096];
__global__ void look(float *out) {
    float s = 0;
    for (int j = 0; j < 96; j++)
        s += table[j * 32 + threadIdx.x];
    out[threadIdx.x] = s;
}";
    // 96 x 32 distinct floats = 12,288 bytes > 8 KB.
    let r = run(Lang::Cuda, BIG, "32", &[], None);
    let n = r.notes.iter().find(|n| n.id == "constant-working-set").expect("the 8 KB warning");
    assert!(n.text.contains("12288 distinct bytes"), "{}", n.text);
    let small = BIG.replace("j < 96", "j < 64");
    assert!(!run(Lang::Cuda, &small, "32", &[], None).notes.iter().any(|n| n.id == "constant-working-set"));
    let too_big = "__constant__ float t[16385];\n__global__ void f(float *o) { o[threadIdx.x] = t[threadIdx.x]; }";
    let sc = Scenario {
        cc: A100,
        lang: Lang::Cuda,
        text: too_big.into(),
        block: Dim3::parse("32", "block").unwrap(),
        ..Scenario::default()
    };
    let e = sc.run().expect_err("more than 64 KB");
    assert!(e.error.message.contains("64 KB"), "{}", e.error.message);
}

/// docs/model.md#the-read-only-path: texture and surface instructions "are out of scope ... refuse them and say why".
#[test]
fn texture_and_surface_reads_are_refused_with_the_reason() {
    let cuda = "__global__ void t(cudaTextureObject_t tex, float *out) { out[threadIdx.x] = tex1Dfetch<float>(tex, threadIdx.x); }";
    let sc = Scenario {
        cc: A100,
        lang: Lang::Cuda,
        text: cuda.into(),
        block: Dim3::parse("32", "block").unwrap(),
        ..Scenario::default()
    };
    let e = sc.run().expect_err("texture");
    assert!(e.error.message.contains("texture or surface path"), "{}", e.error.message);
    let sass = "        /*0000*/                   TEX.SCR.LL R0, R2, R0, 0x0, 2D, 0x1 ;\n        /*0010*/                   EXIT ;\n";
    let sc = Scenario {
        cc: A100,
        lang: Lang::Sass,
        text: sass.into(),
        block: Dim3::parse("32", "block").unwrap(),
        ..Scenario::default()
    };
    let e = sc.run().expect_err("TEX");
    assert!(e.error.message.contains("texture or surface access"), "{}", e.error.message);
}

/// docs/model.md#constant-memory: "an immediate operand `c[bank][offset]` and `ULDC`/`LDCU` into a uniform register are
/// one address by construction (1 pass)": in SASS, operands in the bank of `__constant__` variables (bank 3).
#[test]
fn immediate_constant_operands_are_one_pass_each() {
    const SASS: &str = "
        .text._Z1kPf:
_Z1kPf:
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   FMUL R5, R0, c[0x3][0x10] ;
        /*0020*/                   ULDC UR4, c[0x3][0x14] ;
        /*0030*/                   FFMA R5, R5, c[0x3][0x18], R5 ;
        /*0040*/                   EXIT ;
";
    let r = run(Lang::Sass, SASS, "64", &[], None);
    let k: Vec<(usize, u64, u64)> =
        r.instructions.iter().filter_map(|i| i.constant.map(|k| (i.line, i.warps, k.passes))).collect();
    // Two warps, one pass each per operand.
    assert_eq!(k, vec![(5, 2, 2), (6, 2, 2), (7, 2, 2)]);
    // Parameters (bank 0) are not constant-cache reads warpscope lists.
    assert!(r.instructions.iter().all(|i| !i.access.contains("c[0x0]")));
}
