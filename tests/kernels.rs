//! Real compiler output in, with no `--set`: the corpus listings (cuda-samples kernels, ptxas 12.9 for sm_75,
//! sm_80 and sm_90; see tests/data/kernels/README.md), kernel choice, parameter defaults, and the SASS
//! instructions compilers emit for address arithmetic and control flow. Each expected number is derived in the
//! comment above it.
#![cfg(not(target_arch = "wasm32"))]

use warpscope::analysis::ProgramResult;
use warpscope::lang::Lang;
use warpscope::program::launch::Dim3;
use warpscope::scenario::Scenario;

const ARCHS: [&str; 3] = ["sm_75", "sm_80", "sm_90"];

mod common;
use common::{corpus, KERNELS};

fn listing(kernel: &str, arch: &str) -> String {
    corpus(kernel, &format!("{arch}.sass"))
}

fn sass(text: &str, block: &str, kernel: Option<&str>, sets: &[&str]) -> Scenario {
    Scenario {
        lang: Lang::Sass,
        text: text.to_string(),
        op: String::new(),
        block: Dim3::parse(block, "block").expect("block"),
        kernel: kernel.map(str::to_string),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..Scenario::default()
    }
}

fn ok(sc: &Scenario) -> ProgramResult {
    sc.run().unwrap_or_else(|e| panic!("{e}"))
}

/// (space, warp issues, sectors or wavefronts) per memory instruction, sorted: the compilers for different
/// architectures order and name instructions differently, but must cost the same accesses.
fn costs(r: &ProgramResult) -> Vec<(String, u64, u64)> {
    let mut v: Vec<(String, u64, u64)> = r
        .instructions
        .iter()
        .map(|i| {
            let n = match (&i.memory, &i.banks) {
                (Some(m), None) => m.sectors,
                (None, Some(b)) => b.wavefronts,
                _ => u64::MAX,
            };
            (format!("{:?}", i.space), i.warps, n)
        })
        .collect();
    v.sort();
    v
}

fn sum_shared(r: &ProgramResult) -> (u64, u64) {
    r.instructions
        .iter()
        .filter_map(|i| i.banks.as_ref().map(|b| (i.warps, b.wavefronts)))
        .fold((0, 0), |(a, b), (w, f)| (a + w, b + f))
}

#[test]
fn every_corpus_kernel_runs_without_values_and_the_architectures_agree() {
    for (dir, block, names) in KERNELS {
        for name in names {
            let results: Vec<_> = ARCHS.iter().map(|a| ok(&sass(&listing(dir, a), block, Some(name), &[]))).collect();
            assert!(!results[0].instructions.is_empty(), "{dir}/{name}: no memory instruction ran");
            for (a, r) in ARCHS.iter().zip(&results) {
                assert_eq!(costs(r), costs(&results[0]), "{dir}/{name}: {a} differs from sm_75");
                assert!(r.kernel.as_deref().is_some_and(|k| k.starts_with(name.split('<').next().unwrap_or(""))));
            }
        }
    }
}

#[test]
fn reductions_cost_what_their_loops_imply() {
    for arch in ARCHS {
        let text = listing("reduction", arch);
        // reduce0, block 256: `if (tid % (2*s) == 0)` for s = 1..128. Every warp takes part while 2s <= 32
        // (5 steps x 8 warps), then 4, 2 and 1 warps: 47 issues of each of the two loads and the store, each
        // lane reading its own bank (1 wavefront per issue). Plus the first STS (8 warps) and the final LDS (1).
        let r = ok(&sass(&text, "256", Some("reduce0"), &[]));
        assert_eq!(sum_shared(&r), (8 + 3 * 47 + 1, 8 + 3 * 47 + 1), "{arch} reduce0");
        // reduce1: index = 2*s*tid < 256: 4, 2, 1, 1, 1, 1, 1, 1 warps (12 issues); a stride of 2s words puts
        // min(2s, 32 / active lanes...) lanes on a bank: 2, 4, 8, 8, 8, 4, 2, 1 wavefronts per warp for
        // s = 1..128 (4x2 + 2x4 + 8 + 8 + 8 + 4 + 2 + 1 = 47).
        let r = ok(&sass(&text, "256", Some("reduce1"), &[]));
        assert_eq!(sum_shared(&r), (8 + 3 * 12 + 1, 8 + 3 * 47 + 1), "{arch} reduce1");
        // reduce4: the loop runs s = 128, 64 (4 + 2 warps, one load and one store each), then warp 0 adds
        // sdata[tid + 32] once and reduces with shuffles (no shared access): 8 + 6 + 6 + 1.
        let r = ok(&sass(&text, "256", Some("reduce4<int, 256>"), &[]));
        assert_eq!(sum_shared(&r), (8 + 6 + 6 + 1, 8 + 6 + 6 + 1), "{arch} reduce4");
        assert_eq!(r.kernel.as_deref(), Some("reduce4<int, (unsigned int)256>"));
    }
}

#[test]
fn the_listing_says_which_kernel_ran_and_which_parameters_took_defaults() {
    // ptxas puts kernel parameters at c[0x0][0x160] on sm_75/sm_80 and c[0x0][0x210] on sm_90 (the
    // EIATTR_PARAM_CBANK attribute of the corpus cubins). reduce1(int *g_idata, int *g_odata, unsigned int n).
    for (arch, n_at) in [("sm_80", "c[0x0][0x170]"), ("sm_90", "c[0x0][0x220]")] {
        let r = ok(&sass(&listing("reduction", arch), "256", Some("reduce1"), &[]));
        let kernels = r.notes.iter().find(|n| n.id == "sass-kernel").expect("kernel note");
        assert!(kernels.text.contains("This listing has 7 kernels"), "{}", kernels.text);
        assert!(kernels.text.contains("this is reduce1<int>"), "{}", kernels.text);
        let defaults = r.notes.iter().find(|n| n.id == "sass-param-defaults").expect("defaults note");
        assert!(defaults.text.contains(&format!("{n_at} (2, unsigned int) = 256")), "{}", defaults.text);
        assert!(defaults.text.contains("(0, int*) = 0x700000000000"), "{}", defaults.text);
    }
    // The first kernel runs when none is named.
    let r = ok(&sass(&listing("reduction", "sm_80"), "256", None, &[]));
    assert_eq!(r.kernel.as_deref(), Some("reduce6<int, (unsigned int)256, true>"));
    // An unknown name lists the kernels.
    let e = sass(&listing("reduction", "sm_80"), "256", Some("reduce9"), &[]).run().expect_err("no reduce9");
    assert!(e.error.message.starts_with("no kernel `reduce9` in this listing (its kernels: reduce6<int,"), "{e}");
    // A value given by the user replaces the default: n = 64 leaves only warps 0 and 1 loading (reduce2 reads
    // `i < n ? g_idata[i] : 0`).
    let r = ok(&sass(&listing("reduction", "sm_80"), "256", Some("reduce2"), &["c[0x0][0x170]=64"]));
    let ldg = r.instructions.iter().find(|i| i.op.starts_with("LDG")).expect("LDG");
    assert_eq!(ldg.warps, 2);
}

/// One SASS instruction sequence, a warp of 32, one memory instruction: (active lanes, sectors).
fn one(text: &str, sets: &[&str]) -> (u64, u64) {
    let r = ok(&sass(text, "32", None, sets));
    let i = r.instructions.first().expect("one memory instruction");
    (i.active_lanes, i.memory.as_ref().expect("global").sectors)
}

#[test]
fn a_64_bit_compare_chains_its_high_words() {
    // `tid < n` for a 64-bit n, as ptxas writes it: the low words compare unsigned, the .EX compare decides on
    // the high words and takes the low outcome when they are equal.
    let text = "S2R R0, SR_TID.X ;
        ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x160], PT ;
        ISETP.GE.U32.AND.EX P0, PT, RZ, c[0x0][0x164], PT, P0 ;
        @P0 EXIT ;
        IMAD.WIDE.U32 R2, R0, 0x4, RZ ;
        LDG.E R4, [R2.64] ;";
    // n = 2^32: the high word 1 > 0, so no lane exits; 32 lanes x 4 B = 4 sectors.
    assert_eq!(one(text, &["c[0x0][0x160]=0x100000000"]), (32, 4));
    // n = 16: high words equal, the low compare decides: lanes 16-31 exit; 16 lanes x 4 B = 2 sectors.
    assert_eq!(one(text, &["c[0x0][0x160]=16", "c[0x0][0x164]=0"]), (16, 2));
}

#[test]
fn predicate_outputs_of_lop3_and_plop3() {
    // P1 = (tid & 1) != 0: odd lanes exit, 16 remain; 16 lanes 8 B apart = 128 B = 4 sectors.
    let text = "S2R R0, SR_TID.X ;
        LOP3.LUT P1, RZ, R0, 0x1, RZ, 0xc0, !PT ;
        @P1 EXIT ;
        IMAD.WIDE.U32 R2, R0, 0x4, RZ ;
        LDG.E R4, [R2.64] ;";
    assert_eq!(one(text, &[]), (16, 4));
    // PLOP3 0x80 = a & b & c: P2 = P0 & P1 & PT = (tid >= 8) & (tid < 24): 16 lanes stay after @!P2 EXIT.
    let text = "S2R R0, SR_TID.X ;
        ISETP.GE.U32.AND P0, PT, R0, 0x8, PT ;
        ISETP.LT.U32.AND P1, PT, R0, 0x18, PT ;
        PLOP3.LUT P2, PT, P0, P1, PT, 0x80, 0x0 ;
        @!P2 EXIT ;
        IMAD.WIDE.U32 R2, R0, 0x4, RZ ;
        LDG.E R4, [R2.64] ;";
    assert_eq!(one(text, &[]), (16, 2));
}

#[test]
fn shuffles_move_values_between_lanes() {
    let run = |shfl: &str| {
        let text = format!(
            "S2R R0, SR_LANEID ;
            {shfl} ;
            IMAD.WIDE.U32 R2, R1, 0x80, RZ ;
            LDG.E R4, [R2.64] ;"
        );
        one(&text, &[])
    };
    // DOWN by 1 (clamp 0x1f): lane l reads lane l+1, lane 31 keeps its own 31: lines 1..31 = 31 sectors.
    assert_eq!(run("SHFL.DOWN PT, R1, R0, 0x1, 0x1f"), (32, 31));
    // IDX 0: every lane reads lane 0: one line.
    assert_eq!(run("SHFL.IDX PT, R1, R0, RZ, 0x1f"), (32, 1));
    // BFLY 1: a permutation: 32 lines.
    assert_eq!(run("SHFL.BFLY PT, R1, R0, 0x1, 0x1f"), (32, 32));
    // UP by 2 with segment clamp 0 (PTX's c = 0 for up): lanes 0 and 1 keep their own: values 0,1,0,1,...,29.
    assert_eq!(run("SHFL.UP PT, R1, R0, 0x2, RZ"), (32, 30));
}

#[test]
fn the_compilers_unsigned_remainder_is_exact() {
    // ptxas's `tid % d` for a d known only at run time (from the corpus transpose listing): a reciprocal in
    // f32 (I2F.U32.RP, MUFU.RCP, F2I.U32.TRUNC), a multiply-high, and two corrections. Lines tid % d * 128:
    // min(d, 32) distinct lines, one sector each.
    let text = "S2R R0, SR_TID.X ;
        I2F.U32.RP R6, c[0x0][0x160] ;
        ISETP.NE.U32.AND P1, PT, RZ, c[0x0][0x160], PT ;
        MUFU.RCP R6, R6 ;
        IADD3 R4, R6, 0xffffffe, RZ ;
        F2I.FTZ.U32.TRUNC.NTZ R5, R4 ;
        HFMA2.MMA R4, -RZ, RZ, 0, 0 ;
        IMAD.MOV R3, RZ, RZ, -R5 ;
        IMAD R3, R3, c[0x0][0x160], RZ ;
        IMAD.HI.U32 R8, R5, R3, R4 ;
        IMAD.HI.U32 R8, R8, R0, RZ ;
        IMAD.MOV R8, RZ, RZ, -R8 ;
        IMAD R3, R8, c[0x0][0x160], R0 ;
        ISETP.GE.U32.AND P0, PT, R3, c[0x0][0x160], PT ;
        @P0 IADD3 R3, R3, -c[0x0][0x160], RZ ;
        ISETP.GE.U32.AND P0, PT, R3, c[0x0][0x160], PT ;
        @P0 IADD3 R3, R3, -c[0x0][0x160], RZ ;
        @!P1 LOP3.LUT R3, RZ, c[0x0][0x160], RZ, 0x33, !PT ;
        IMAD.WIDE.U32 R4, R3, 0x80, RZ ;
        LDG.E R6, [R4.64] ;";
    for d in [1u64, 2, 3, 5, 7, 10, 17, 31, 32, 33, 1000, 65_537] {
        let set = format!("c[0x0][0x160]={d}");
        assert_eq!(one(text, &[&set]), (32, d.min(32)), "d = {d}");
    }
    // Without `.TRUNC`, F2I rounds to nearest, which is not followed: an error naming it, never a guess.
    let rounded = text.replace("F2I.FTZ.U32.TRUNC.NTZ", "F2I.FTZ.U32");
    let e = sass(&rounded, "32", None, &["c[0x0][0x160]=3"]).run().expect_err("F2I without .TRUNC");
    assert!(e.error.message.contains("written by F2I at line 6, which warpscope does not model"), "{e}");
}

#[test]
fn integer_helpers_min_max_abs_popc_flo_prmt() {
    let run = |op: &str| {
        let text = format!(
            "S2R R0, SR_TID.X ;
            {op} ;
            IMAD.WIDE.U32 R2, R1, 0x80, RZ ;
            LDG.E R4, [R2.64] ;"
        );
        one(&text, &[])
    };
    // min(tid, 16): 0..16, 17 lines.
    assert_eq!(run("IMNMX.U32 R1, R0, 0x10, PT"), (32, 17));
    // max(tid, 16): 16..31, 16 lines.
    assert_eq!(run("IMNMX.U32 R1, R0, 0x10, !PT"), (32, 16));
    // popcount of 0..31: 0..5, 6 lines.
    assert_eq!(run("POPC R1, R0"), (32, 6));
    // highest set bit of 0..31: none (0xffffffff, its own line), 0..4: 6 lines.
    assert_eq!(run("FLO.U32 R1, R0"), (32, 6));
    // PRMT selector 0x3210 copies Ra: tid again, 32 lines; 0x0000 replicates byte 0: tid * 0x01010101 —
    // every lane its own line.
    assert_eq!(run("PRMT R1, R0, 0x3210, RZ"), (32, 32));
    assert_eq!(run("PRMT R1, R0, 0x4444, RZ"), (32, 1));
    // |tid - 16|: 0..16, 17 lines.
    let text = "S2R R0, SR_TID.X ;
        IADD3 R5, R0, -0x10, RZ ;
        IABS R1, R5 ;
        IMAD.WIDE.U32 R2, R1, 0x80, RZ ;
        LDG.E R4, [R2.64] ;";
    assert_eq!(one(text, &[]), (32, 17));
}

#[test]
fn calls_run_their_subroutine_and_return() {
    // The subroutine computes tid * 8 words; the caller loads there: 32 lanes 32 B apart, 32 sectors.
    let text = "        .type sub,@function
        S2R R0, SR_TID.X ;
        MOV R2, 0x30 ;
        CALL.REL.NOINC `(sub) ;
        IMAD.WIDE.U32 R4, R5, 0x4, RZ ;
        LDG.E R6, [R4.64] ;
        EXIT ;
sub:
        IMAD.SHL.U32 R5, R0, 0x8, RZ ;
        RET.REL.NODEC R2 `(k) ;";
    assert_eq!(one(text, &[]), (32, 32));
    // A call whose target is not in the listing stops with a message when reached.
    let text = "S2R R0, SR_TID.X ;
        CALL.REL.NOINC `(elsewhere) ;
        LDG.E R6, [R4.64] ;";
    let e = sass(text, "32", None, &[]).run().expect_err("unknown target");
    assert!(e.error.message.contains("its target is not a function of this listing"), "{e}");
}

#[test]
fn sm_90_shared_addresses_and_constant_reads_through_rz() {
    // sm_90 forms shared addresses from the block's rank in its cluster (0 here) and a 1 KB reserved base;
    // blockDim.x comes from `LDC R, c[0x0][RZ]`. tid * 4 + 0x400 over a 64-thread block: 2 warps, conflict-free.
    let text = "S2UR UR5, SR_CgaCtaId ;
        UMOV UR4, 0x400 ;
        S2R R0, SR_TID.X ;
        LDC R7, c[0x0][RZ] ;
        ULEA UR4, UR5, UR4, 0x18 ;
        ISETP.GE.U32.AND P0, PT, R0, R7, PT ;
        @P0 EXIT ;
        LEA R3, R0, UR4, 0x2 ;
        STS [R3], R0 ;";
    let r = ok(&sass(text, "64", None, &[]));
    let i = &r.instructions[0];
    assert_eq!((i.warps, i.banks.as_ref().map(|b| b.wavefronts)), (2, Some(2)));
}

#[test]
fn cuda_integer_parameters_default_to_the_thread_count() {
    // vectorAdd's `if (i < numElements)`: numElements = 256 threads, so all 8 warps load A and B and store C,
    // 4 sectors each (the SASS of the same kernel says the same).
    let path = format!("{}/tests/data/kernels/vectorAdd/vectorAdd.cu", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).expect("vectorAdd.cu");
    let sc = Scenario { lang: Lang::Cuda, text, op: String::new(), block: Dim3::linear(256), ..Scenario::default() };
    let r = ok(&sc);
    assert_eq!(costs(&r), [("Global".into(), 8, 32), ("Global".into(), 8, 32), ("Global".into(), 8, 32)]);
    let note = r.notes.iter().find(|n| n.id == "cuda-param-defaults").expect("note");
    assert!(note.text.contains("numElements = 256"), "{}", note.text);
    let s = ok(&sass(&listing("vectorAdd", "sm_90"), "256", None, &[]));
    assert_eq!(costs(&s), costs(&r));
}

#[test]
fn a_negated_uniform_register_is_negated() {
    // ptxas's unsigned remainder by a uniform divisor (reduce0's `tid % (2*s)`, in the SASS of NVIDIA's PTX for
    // sm_90) starts with `IADD3 R9, RZ, -UR6, RZ`: -UR6 must be negated, or every remainder is wrong. Here
    // UR6 = 2 and each lane reads at 128 * (tid % 2).
    let text = "S2R R6, SR_TID.X ;
        UMOV UR6, 0x2 ;
        IADD3 R9, RZ, -UR6, RZ ;
        ISETP.NE.U32.AND P2, PT, RZ, UR6, PT ;
        I2F.U32.RP R4, UR6 ;
        MUFU.RCP R4, R4 ;
        VIADD R2, R4, 0xffffffe ;
        F2I.FTZ.U32.TRUNC.NTZ R3, R2 ;
        IMAD.MOV.U32 R2, RZ, RZ, RZ ;
        IMAD R9, R9, R3, RZ ;
        IMAD.HI.U32 R3, R3, R9, R2 ;
        IMAD.HI.U32 R3, R3, R6, RZ ;
        IADD3 R3, -R3, RZ, RZ ;
        IMAD R3, R3, UR6, R6 ;
        ISETP.GE.U32.AND P1, PT, R3, UR6, PT ;
        @P1 VIADD R3, R3, -UR6 ;
        ISETP.GE.U32.AND P1, PT, R3, UR6, PT ;
        @P1 IADD3 R3, R3, -UR6, RZ ;
        @!P2 LOP3.LUT R3, RZ, UR6, RZ, 0x33, !PT ;
        IMAD.WIDE.U32 R10, R3, 0x80, RZ ;
        LDG.E R0, [R10.64] ;";
    let r = ok(&sass(text, "32", None, &[]));
    // tid % 2 is 0 or 1: two lines, one sector each (every lane reads the first word of its line).
    assert_eq!(r.instructions[0].memory.as_ref().expect("global").lines, 2);
    assert_eq!(r.instructions[0].memory.as_ref().expect("global").sectors, 2);
    // The whole kernel: reduce0's 47 shared issues of each of the loop's accesses (derived in
    // `reductions_cost_what_their_loops_imply`), from NVIDIA's compiler this time.
    let text = corpus("reduction", "nvrtc_sm_90.sass");
    let r = ok(&sass(&text, "256", Some("reduce0"), &[]));
    assert_eq!(sum_shared(&r), (8 + 3 * 47 + 1, 8 + 3 * 47 + 1));
}

#[test]
fn a_cuda_file_runs_one_kernel_and_lists_the_others() {
    // Two kernels in one file: only the chosen one runs (before, both bodies ran as one program: 4 memory
    // instructions instead of 2).
    let text = "#define TILE_DIM 32
__global__ void copy(float *odata, float *idata, int width, int height) {
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  odata[x] = idata[x];
}
__global__ void other(float *o, float *i) {
  o[threadIdx.x * 2] = i[threadIdx.x];
}
";
    let cuda = |kernel: Option<&str>| Scenario {
        lang: Lang::Cuda,
        text: text.to_string(),
        op: String::new(),
        kernel: kernel.map(str::to_string),
        ..Scenario::default()
    };
    let r = ok(&cuda(None));
    assert_eq!((r.kernel.as_deref(), r.instructions.len()), (Some("copy"), 2));
    let names: Vec<&str> = r.kernels.iter().map(|k| k.symbol.as_str()).collect();
    assert_eq!(names, ["copy", "other"]);
    assert!(r.notes.iter().any(|n| n.id == "cuda-kernel" && n.text.contains("this is copy")));
    // `other` stores 4 bytes at 8*lane: 256 bytes, 8 sectors.
    let r = ok(&cuda(Some("other")));
    assert_eq!(r.kernel.as_deref(), Some("other"));
    let st = r.instructions.iter().find(|i| i.op.starts_with("STG")).expect("store");
    assert_eq!(st.memory.as_ref().expect("global").sectors, 8);
    let e = cuda(Some("nope")).run().expect_err("no such kernel");
    assert_eq!(e.error.message, "no kernel `nope` in this file (its kernels: copy, other)");
}

#[test]
fn nvdisasm_line_information_names_the_cuda_line() {
    // `nvdisasm -g` on a cubin built with -lineinfo puts `//## File "NAME", line N` before the instructions of
    // line N (with -gi, ` inlined at ...` follows: the first line is the instruction's own). A new function
    // starts with no line until its first comment.
    let text = "\t.text.k:\nk:\n\t//## File \"/src/k.cu\", line 12\n\
        S2R R0, SR_TID.X ;\n\
        IMAD.WIDE.U32 R2, R0, 0x4, RZ ;\n\
        \t//## File \"/src/h.h\", line 5 inlined at \"/src/k.cu\", line 14\n\
        LDG.E R4, [R2.64] ;\n\
        \t//## File \"/src/k.cu\", line 15\n\
        STG.E [R2.64+0x80], R4 ;\n\
        EXIT ;";
    let r = ok(&sass(text, "32", None, &[]));
    let from: Vec<Option<String>> = r.instructions.iter().map(|i| i.source_label()).collect();
    assert_eq!(from, vec![Some("h.h:5".to_string()), Some("k.cu:15".to_string())]);
    // The corpus: ptxas's SASS for vectorAdd from clang's PTX, both with line information, puts the two LDGs
    // and the STG of `C[i] = A[i] + B[i] + 0.0f;` on vectorAdd.cu's line 63 (tests/data/kernels/vectorAdd).
    let r = ok(&sass(&listing("vectorAdd", "sm_90"), "256", None, &[]));
    let from: Vec<Option<String>> = r.instructions.iter().map(|i| i.source_label()).collect();
    assert_eq!(from, vec![Some("vectorAdd.cu:63".to_string()); 3]);
}
