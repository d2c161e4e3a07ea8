//! Branches and guards whose condition depends on loaded data, in CUDA, PTX and SASS. warpscope follows
//! addresses, not data: where what a condition decides only computes values, both sides run as the hardware
//! runs them for any data and the values they set are unknown; where it decides memory accesses, the result
//! rests on a stated assumption the user chooses (`runs`: the guarded code runs and a loop does not repeat,
//! the default; `true`; `false`; a lane mask). An address that depends on data stays an error.
#![cfg(not(target_arch = "wasm32"))]

use warpscope::analysis::ProgramResult;
use warpscope::lang::Lang;
use warpscope::program::DataBranches;

mod common;

fn run(lang: Lang, text: &str, db: DataBranches) -> Result<ProgramResult, String> {
    let mut sc = common::scenario(lang, text, "32", None);
    sc.data_branches = db;
    sc.run().map_err(|e| e.to_string())
}

fn note<'a>(r: &'a ProgramResult, id: &str) -> Option<&'a str> {
    r.notes.iter().find(|n| n.id == id).map(|n| n.text.as_str())
}

/// Each memory instruction as (line, warp issues, sectors).
fn issues(r: &ProgramResult) -> Vec<(usize, u64, u64)> {
    r.instructions.iter().map(|i| (i.line, i.warps, i.memory.as_ref().map_or(0, |m| m.sectors))).collect()
}

/// A running maximum that reads the element again under its condition, as llm.c's softmax_forward_kernel1
/// does: four passes of one warp. Each pass's load of 32 consecutive floats is 128 bytes, 4 sectors (CUDA Best
/// Practices Guide 9.2.1.1); the store at the end is one more issue of 4 sectors.
const MAX: &str = "__global__ void k(const float *x, float *y) {
    float m = -INFINITY;
    for (int j = 0; j < 4; j++) {
        if (x[j * 32 + threadIdx.x] > m)
            m = x[j * 32 + threadIdx.x];
    }
    y[threadIdx.x] = m;
}
";

#[test]
fn a_condition_on_data_that_guards_a_load_rests_on_the_chosen_assumption() {
    // The default: the guarded load runs in every pass, in every lane.
    let r = run(Lang::Cuda, MAX, DataBranches::Runs).expect("runs");
    assert_eq!(issues(&r), [(4, 4, 16), (5, 4, 16), (7, 1, 4)]);
    let n = note(&r, "data-branch-assumed").expect("the assumption is stated");
    assert!(n.starts_with("The condition of the `if` on line 4 depends on data loaded from memory at 4:13"), "{n}");
    assert!(
        n.contains("warpscope assumed the code it guards runs and a loop does not repeat (--data-branches runs"),
        "{n}"
    );
    // Held everywhere: the same counts, said differently.
    let r = run(Lang::Cuda, MAX, DataBranches::Holds).expect("true");
    assert_eq!(issues(&r), [(4, 4, 16), (5, 4, 16), (7, 1, 4)]);
    assert!(note(&r, "data-branch-assumed").expect("note").contains("its condition holds in every lane"));
    // Held nowhere: the guarded load never issues.
    let r = run(Lang::Cuda, MAX, DataBranches::Fails).expect("false");
    assert_eq!(issues(&r), [(4, 4, 16), (7, 1, 4)]);
    // Held in lanes 0-15: the guarded load issues with half the warp, 64 bytes, 2 sectors per pass.
    let r = run(Lang::Cuda, MAX, DataBranches::Lanes(0x0000_ffff)).expect("lanes");
    assert_eq!(issues(&r), [(4, 4, 16), (5, 4, 8), (7, 1, 4)]);
    assert!(note(&r, "data-branch-assumed").expect("note").contains("holds in lanes 0-15 and fails in the others"));
}

#[test]
fn a_condition_on_data_that_only_computes_values_runs_both_ways_without_an_assumption() {
    let text = "__global__ void k(const float *x, float *y) {
    float v = x[threadIdx.x];
    if (v > 0.0f)
        v = 2.0f * v;
    y[threadIdx.x] = v;
}
";
    for db in [DataBranches::Runs, DataBranches::Fails] {
        let r = run(Lang::Cuda, text, db).expect("runs");
        // One load and one store of 32 consecutive floats, 4 sectors each, whatever the setting.
        assert_eq!(issues(&r), [(2, 1, 4), (5, 1, 4)]);
        let n = note(&r, "data-branch-both-ways").expect("said");
        assert!(n.starts_with("The condition of the `if` on line 3 depends on data loaded from memory at 2:15"), "{n}");
        assert!(note(&r, "data-branch-assumed").is_none());
    }
}

#[test]
fn an_address_that_depends_on_data_is_still_an_error() {
    let text = "__global__ void k(const int *idx, float *y) {\n    y[idx[threadIdx.x]] = 1.0f;\n}\n";
    let e = run(Lang::Cuda, text, DataBranches::Holds).expect_err("refused");
    assert!(e.starts_with("pattern 2:7: the index depends on data loaded from memory at 2:7"), "{e}");
}

/// A loop tested at the top on data (the textbook CSR kernel's `for (j = rowptr[row]; j < rowptr[row + 1]; j++)`
/// shape, here with addresses that do not depend on data): `runs` enters the loop and runs its body once. The
/// store of lane i at out + 4i is 32 consecutive floats, 128 bytes, 4 sectors (CUDA Best Practices Guide
/// 9.2.1.1); the load of `n[0]` is one 4-byte address in every lane, 1 sector, issued at each test of the loop
/// (twice: on entry, and after the one pass). It once skipped the body: the store went uncounted while the note
/// said the code it guards ran.
#[test]
fn a_loop_on_data_tested_at_the_top_runs_its_body_once() {
    let text = "__global__ void k(const int *n, float *out) {
    for (int i = 0; i < n[0]; i++)
        out[threadIdx.x + 32 * i] = 0.0f;
}
";
    let r = run(Lang::Cuda, text, DataBranches::Runs).expect("runs");
    assert_eq!(issues(&r), [(2, 2, 2), (3, 1, 4)]);
    let n = note(&r, "data-branch-assumed").expect("the assumption is stated");
    assert!(n.contains("a loop does not repeat"), "{n}");
    // The textbook CSR kernel: its loop's loads index by the loaded `rowptr[row]`, and are refused (not dropped).
    let e = run(Lang::Cuda, common::CSR, DataBranches::Runs).expect_err("refused");
    assert!(e.starts_with("pattern 6:24: the index depends on data loaded from memory at 5:22"), "{e}");
}

/// The same shape in PTX: a store guarded by a branch on a loaded value. The store of lane i writes
/// y + 128 + 4i: 32 lanes, 128 bytes, 4 sectors; 8 lanes (mask 0xff), 32 bytes, 1 sector.
const PTX: &str = ".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
    .reg .pred %p<2>;
    .reg .f32 %f<2>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [k_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    setp.gt.f32 %p1, %f1, 0f00000000;
    @!%p1 bra DONE;
    st.global.f32 [%rd4+128], %f1;
DONE:
    ret;
}
";

#[test]
fn ptx_branches_on_data_follow_the_same_assumption() {
    let store = |r: &ProgramResult| issues(r).into_iter().find(|i| i.0 == 18);
    // `runs`: the code the branch guards (it jumps over the store) runs.
    let r = run(Lang::Ptx, PTX, DataBranches::Runs).expect("runs");
    assert_eq!(issues(&r), [(15, 1, 4), (18, 1, 4)]);
    let n = note(&r, "data-branch-assumed").expect("note");
    assert!(
        n.starts_with(
            "The guard of the branch on line 17 depends on the floating-point comparison setp.gt.f32 at line 16"
        ),
        "{n}"
    );
    // In PTX the condition is the branch's own: `true` takes it in every lane (the store never issues),
    // `false` in none, and a mask of lanes 0-7 leaves lanes 8-31 to store: 96 bytes, 3 sectors.
    assert_eq!(store(&run(Lang::Ptx, PTX, DataBranches::Holds).expect("true")), None);
    assert_eq!(store(&run(Lang::Ptx, PTX, DataBranches::Fails).expect("false")), Some((18, 1, 4)));
    assert_eq!(store(&run(Lang::Ptx, PTX, DataBranches::Lanes(0xff)).expect("lanes")), Some((18, 1, 3)));
}

/// And in SASS, where the guard is the store's own predicate.
const SASS: &str = "        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x160] ;
        /*0020*/                   LDG.E R4, [R2.64] ;
        /*0030*/                   FSETP.GT.AND P0, PT, R4, RZ, PT ;
        /*0040*/              @P0  STG.E [R2.64+0x80], R4 ;
        /*0050*/                   EXIT ;
";

#[test]
fn sass_guards_on_data_follow_the_same_assumption() {
    let mut sc = common::scenario(Lang::Sass, SASS, "32", None);
    // The pointer parameter, a 64-bit value in two constant-bank words.
    sc.sets = vec!["c[0x0][0x160]=0x10000".into(), "c[0x0][0x164]=0".into()];
    let r = sc.run().expect("runs");
    assert_eq!(issues(&r), [(3, 1, 4), (5, 1, 4)]);
    let n = note(&r, "data-branch-assumed").expect("note");
    assert!(n.starts_with("The guard of the memory instruction on line 5 depends on P0"), "{n}");
    sc.data_branches = DataBranches::Lanes(0xff);
    assert_eq!(issues(&sc.run().expect("lanes")), [(3, 1, 4), (5, 1, 1)]);
    sc.data_branches = DataBranches::Fails;
    assert_eq!(issues(&sc.run().expect("false")), [(3, 1, 4)]);
}
