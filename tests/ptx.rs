//! PTX, the fifth language: the corpus PTX (from the verbatim cuda-samples kernels, by clang 15 for sm_75 and
//! sm_80 and by NVIDIA's NVRTC 12.9 for sm_75, sm_80 and sm_90; tests/data/kernels/README.md) against the SASS
//! ptxas 12.9 made from the same PTX, and the two compilers' PTX against each other; the SASS
//! instruction each PTX memory operation becomes, PTX's integer semantics, calls, and errors with positions.
//! Each expected number is derived in the comment above it.
#![cfg(not(target_arch = "wasm32"))]

use warpscope::analysis::ProgramResult;
use warpscope::lang::Lang;
use warpscope::scenario::Scenario;

mod common;
use common::{corpus, metrics, ok, totals, KERNELS};

fn scenario(lang: Lang, text: &str, block: &str, kernel: Option<&str>, sets: &[&str]) -> Scenario {
    Scenario { sets: sets.iter().map(|s| s.to_string()).collect(), ..common::scenario(lang, text, block, kernel) }
}

/// The corpus's compiler outputs: (PTX file stem, architecture).
const BUILDS: [(&str, &str); 5] = [
    ("sm_75", "sm_75"),
    ("sm_80", "sm_80"),
    ("nvrtc_sm_75", "sm_75"),
    ("nvrtc_sm_80", "sm_80"),
    ("nvrtc_sm_90", "sm_90"),
];

#[test]
fn the_corpus_ptx_costs_what_its_sass_costs() {
    for (dir, block, names) in KERNELS {
        for (stem, arch) in BUILDS {
            let ptx = corpus(dir, &format!("{stem}.ptx"));
            let sass = corpus(dir, &format!("{stem}.sass"));
            for name in names {
                let p = ok(&scenario(Lang::Ptx, &ptx, block, Some(name), &[]));
                let s = ok(&scenario(Lang::Sass, &sass, block, Some(name), &[]));
                assert!(!p.instructions.is_empty(), "{dir}/{name} {stem}: no memory instruction ran");
                assert_eq!(p.kernel, s.kernel, "{dir}/{name} {stem}: the same kernel ran");
                let _ = arch;
                if *name == "MatrixMulCUDA<32>" {
                    // The one legitimate difference: ptxas merges the unrolled `As[ty][k]` reads of four
                    // consecutive k (each a broadcast 4-byte LDS in the PTX) into one LDS.128. The PTX's loop
                    // body has 64 shared loads (32 of As, 32 of Bs); the SASS has 32 LDS (Bs) and 8 LDS.128
                    // (As). Every total agrees but the shared load issues and wavefronts: a 16-byte broadcast
                    // costs 2 wavefronts as measured on CC 7.0+ where four 4-byte ones cost 4 (docs/model.md#shared-memory-as-measured).
                    let count = |r: &ProgramResult, wide: bool| {
                        r.instructions
                            .iter()
                            .filter(|i| i.op.starts_with("LDS") && i.op.ends_with(".128") == wide)
                            .count()
                    };
                    assert_eq!((count(&p, false), count(&p, true)), (64, 0), "{stem}");
                    assert_eq!((count(&s, false), count(&s, true)), (32, 8), "{stem}");
                    let (mut tp, mut ts) = (totals(&p), totals(&s));
                    let inst = "smsp__inst_executed_op_shared_ld.sum";
                    // Each load issues 1,024 times (32 warps x wA / 32 = 32 tiles, wA defaulting to the block's
                    // 1,024 threads): (64 - 40) x 1,024 = 24,576 more shared load issues in the PTX.
                    assert_eq!(tp[inst] - ts[inst], 24_576, "{stem}");
                    // 8 LDS.128 broadcasts x 1,024 issues x (4 - 2) wavefronts = 16,384 fewer in the SASS.
                    let wav = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
                    assert_eq!(tp[wav] - ts[wav], 16_384, "{stem}");
                    for m in [inst, wav] {
                        tp.remove(m);
                        ts.remove(m);
                    }
                    assert_eq!(tp, ts, "{stem}: every other total");
                } else {
                    assert_eq!(metrics(&p), metrics(&s), "{dir}/{name} {stem}");
                }
            }
        }
    }
}

#[test]
fn clang_and_nvidia_ptx_cost_the_same() {
    // Two compilers, one source: every memory instruction costs the same, whatever each compiler named its
    // registers or how it ordered the code.
    for (dir, block, names) in KERNELS {
        for arch in ["sm_75", "sm_80"] {
            let clang = corpus(dir, &format!("{arch}.ptx"));
            let nvrtc = corpus(dir, &format!("nvrtc_{arch}.ptx"));
            for name in names {
                let c = ok(&scenario(Lang::Ptx, &clang, block, Some(name), &[]));
                let n = ok(&scenario(Lang::Ptx, &nvrtc, block, Some(name), &[]));
                assert_eq!(metrics(&c), metrics(&n), "{dir}/{name} {arch}");
            }
        }
    }
}

#[test]
fn memory_operations_report_the_sass_instruction_they_become() {
    // The names nvdisasm prints for what ptxas makes of these (the corpus's SASS: `LDG.E`, `STG.E`, `LDS`,
    // `STS`, `LDS.128`; `LD.E`/`ST.E` for generic), with the LDG instruction reference's modifiers: sizes
    // `.U8 .S8 .U16 .S16 .64 .128`, cache operators, and `.CONSTANT` for the read-only (`.nc`, `ldu`) path.
    let cases = [
        ("ld.global.f32 %f1, [%rd1];", "LDG.E"),
        ("ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];", "LDG.E.128.CONSTANT"),
        ("ld.global.cg.v2.u32 {%r1, %r2}, [%rd1];", "LDG.E.64.CG"),
        ("ld.global.s8 %r1, [%rd1];", "LDG.E.S8"),
        ("ld.global.u16 %r1, [%rd1];", "LDG.E.U16"),
        ("st.global.wt.f64 [%rd1], %fd1;", "STG.E.64.WT"),
        ("st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};", "STG.E.128"),
        ("ld.f32 %f1, [%rd1];", "LD.E"),
        ("st.u8 [%rd1], %r1;", "ST.E.U8"),
        ("ld.shared.v2.f32 {%f1, %f2}, [%rd2];", "LDS.64"),
        ("st.shared::cta.u32 [%rd2], %r1;", "STS"),
        ("ld.local.u32 %r1, [%rd2];", "LDL"),
        ("ldu.global.f32 %f1, [%rd1];", "LDG.E.CONSTANT"),
    ];
    for (line, want) in cases {
        let text = format!(
            ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<5>;\n.reg .f32 %f<5>;\n.reg .f64 %fd<2>;\n.reg .b64 %rd<3>;\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd1, %r1, 16;\nmov.u64 %rd2, %rd1;\n{line}\nret;\n}}\n"
        );
        let r = ok(&scenario(Lang::Ptx, &text, "32", None, &[]));
        assert_eq!(r.instructions.len(), 1, "{line}");
        assert_eq!(r.instructions[0].op, want, "{line}");
        assert_eq!(r.instructions[0].line, 13, "{line}: the line in the PTX text");
    }
}

fn module(body: &str) -> String {
    format!(
        ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k(\n.param .u64 k_param_0,\n.param .u32 k_param_1\n)\n{{\n.reg .pred %p<4>;\n.reg .b16 %rs<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\nld.param.u64 %rd1, [k_param_0];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n{body}\nret;\n}}\n"
    )
}

/// One warp: (active lanes, sectors) of the only memory instruction.
fn one(body: &str) -> (u64, u64) {
    let r = ok(&scenario(Lang::Ptx, &module(body), "32", None, &[]));
    assert_eq!(r.instructions.len(), 1, "{body}");
    let i = &r.instructions[0];
    (i.active_lanes, i.memory.as_ref().expect("global").sectors)
}

#[test]
fn integer_semantics_follow_the_ptx_isa() {
    // The pointer parameter's default base 0x7000_0000_0000 is 128-byte aligned, so lane l reading
    // 4 B at 4*f(l) touches the sectors of the byte offsets.
    let load = "mul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];";
    let f = |compute: &str| one(&format!(".reg .f32 %f1;\n{compute}\n{load}"));
    // r2 = tid: 128 contiguous bytes = 4 sectors.
    assert_eq!(f("mov.u32 %r2, %r1;"), (32, 4));
    // mul.lo.s32 by 8 (a stride of 32 B): one sector per lane.
    assert_eq!(f("mul.lo.s32 %r2, %r1, 8;"), (32, 32));
    // shr.u32 by 3: eight lanes per word, 4 words = 16 B in one sector.
    assert_eq!(f("shr.u32 %r2, %r1, 3;"), (32, 1));
    // and.b32 with 0xF: lanes 0-15 and 16-31 read the same 64 B: 2 sectors.
    assert_eq!(f("and.b32 %r2, %r1, 15;"), (32, 2));
    // 16-bit arithmetic wraps at 16 bits: cvt.u16.u32 then add 0xFFF0 then back: (tid + 0xFFF0) mod 2^16 is
    // 0xFFF0..0xFFFF for lanes 0-15 and 0..15 for lanes 16-31: two runs of 64 B = 4 sectors.
    assert_eq!(f("cvt.u16.u32 %rs1, %r1;\nadd.s16 %rs2, %rs1, 0xFFF0;\ncvt.u32.u16 %r2, %rs2;"), (32, 4));
    // selp with setp's complement: lanes below 16 read word 0, the others word tid: 1 + 16 words in 3 sectors
    // (word 0 in sector 0; words 16-31 in sectors 2 and 3).
    assert_eq!(f("setp.lt.u32 %p1|%p2, %r1, 16;\nselp.b32 %r2, 0, %r1, %p1;"), (32, 3));
    // bfe.u32 %r, tid, 2, 2 = (tid >> 2) & 3: words 0-3 = 1 sector.
    assert_eq!(f("bfe.u32 %r2, %r1, 2, 2;"), (32, 1));
    // prmt with selector 0x3210 is the identity on a: 4 sectors.
    assert_eq!(f("prmt.b32 %r2, %r1, 0, 0x3210;"), (32, 4));
    // lop3 0xF0 is a: tid again.
    assert_eq!(f("lop3.b32 %r2, %r1, 7, 9, 0xF0;"), (32, 4));
    // lop3 0xC0 is a & b: tid & 7: 32 B = 1 sector.
    assert_eq!(f("lop3.b32 %r2, %r1, 7, 9, 0xC0;"), (32, 1));
    // shf.l.wrap: {0:tid} << 3 >> 32 is 0 for every lane: one word.
    assert_eq!(f("shf.l.wrap.b32 %r2, %r1, 0, 3;"), (32, 1));
    // mul.hi.u32 of tid and 2^31 is tid >> 1: 64 B = 2 sectors.
    assert_eq!(f("mul.hi.u32 %r2, %r1, 0x80000000;"), (32, 2));
    // rem.u32 by 4: words 0-3.
    assert_eq!(f("rem.u32 %r2, %r1, 4;"), (32, 1));
    // max.s32 of tid - 16 and 0: lanes 0-16 read word 0, lanes 17-31 words 1-15: 64 B = 2 sectors.
    assert_eq!(f("sub.s32 %r3, %r1, 16;\nmax.s32 %r2, %r3, 0;"), (32, 2));
    // popc(tid) is 0..5: 24 B in 1 sector.
    assert_eq!(f("popc.b32 %r2, %r1;"), (32, 1));
    // %laneid is tid for one warp; %lanemask_lt has popc = lane: tid again.
    assert_eq!(f("mov.u32 %r3, %lanemask_lt;\npopc.b32 %r2, %r3;"), (32, 4));
}

#[test]
fn a_signed_wide_multiply_sign_extends() {
    // mul.wide.s32 of (tid - 16) by 4: lanes 0-15 read the 64 bytes below the (128-byte aligned) base, lanes
    // 16-31 the 64 above it. Sign-extended, that is 128 contiguous bytes in two lines and 4 sectors;
    // zero-extended, lanes 0-15 would land 16 GB away.
    let body = ".reg .f32 %f1;\nsub.s32 %r2, %r1, 16;\nmul.wide.s32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];";
    assert_eq!(one(body), (32, 4));
    let r = ok(&scenario(Lang::Ptx, &module(body), "32", None, &[]));
    assert_eq!(r.instructions[0].memory.as_ref().expect("global").lines, 2);
}

#[test]
fn branches_loops_and_calls_run() {
    // A guarded branch over the load: lanes with tid >= 8 skip it.
    let skip = ".reg .f32 %f1;\nsetp.ge.u32 %p1, %r1, 8;\n@%p1 bra $L_end;\nmul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\n$L_end:";
    assert_eq!(one(skip), (8, 1));
    // A loop whose trip count is the thread's (tid % 4) + 1 iterations: 4 warp issues, with 32, 24, 16 and 8
    // lanes (lanes with tid % 4 >= k run iteration k).
    let text = module(
        ".reg .f32 %f1;\nand.b32 %r2, %r1, 3;\nmov.u32 %r3, 0;\n$L_loop:\nmul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\nadd.s32 %r3, %r3, 1;\nsetp.le.u32 %p1, %r3, %r2;\n@%p1 bra $L_loop;",
    );
    let r = ok(&scenario(Lang::Ptx, &text, "32", None, &[]));
    assert_eq!((r.instructions[0].warps, r.instructions[0].active_lanes), (4, 32 + 24 + 16 + 8));
    // A call: the callee computes the offset 8*x from its parameter and returns it.
    let text = ".version 7.5\n.target sm_80\n.address_size 64\n\
        .func (.param .b64 f_retval0) f(.param .b32 f_param_0)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n\
        ld.param.b32 %r1, [f_param_0];\nmul.wide.u32 %rd1, %r1, 8;\nst.param.b64 [f_retval0+0], %rd1;\nret;\n}\n\
        .visible .entry k(.param .u64 k_param_0)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<6>;\n.reg .f32 %f1;\n\
        ld.param.u64 %rd1, [k_param_0];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n\
        {\n.param .b32 param0;\nst.param.b32 [param0+0], %r1;\n.param .b64 retval0;\n\
        call.uni (retval0), f, (param0);\nld.param.b64 %rd3, [retval0+0];\n}\n\
        add.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\nret;\n}\n";
    // 32 lanes 8 B apart: 256 B = 8 sectors.
    let r = ok(&scenario(Lang::Ptx, text, "32", None, &[]));
    assert_eq!(r.instructions[0].memory.as_ref().expect("global").sectors, 8);
}

#[test]
fn shuffles_votes_and_barriers() {
    // shfl.sync.idx from lane 0 with a 0x1f clamp: every lane reads tid 0: one sector.
    assert_eq!(one(".reg .f32 %f1;\nshfl.sync.idx.b32 %r2, %r1, 0, 31, -1;\nmul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];"), (32, 1));
    // vote.sync.ballot of (tid < 8) is 0xFF in every lane; popc 8: one word.
    assert_eq!(one(".reg .f32 %f1;\nsetp.lt.u32 %p1, %r1, 8;\nvote.sync.ballot.b32 %r3, %p1, -1;\npopc.b32 %r2, %r3;\nmul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];"), (32, 1));
    // A barrier for part of the block is refused, by name.
    let e = scenario(Lang::Ptx, &module("bar.sync 1, 64;"), "128", None, &[]).run().expect_err("partial barrier");
    assert!(e.error.message.contains("a barrier for part of the block"), "{e}");
    // The whole block's count is the plain barrier.
    ok(&scenario(Lang::Ptx, &module("bar.sync 0, 128;\n.reg .f32 %f1;\nld.global.f32 %f1, [%rd2];"), "128", None, &[]));
}

#[test]
fn parameters_take_defaults_and_values_by_name() {
    // k(u64 k_param_0, u32 k_param_1): the u64 is a pointer (cvta.to.global converts it), the u32 an integer.
    let body = ".reg .f32 %f1;\nld.param.u32 %r2, [k_param_1];\nsetp.ge.u32 %p1, %r1, %r2;\n@%p1 bra $L_end;\nmul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\n$L_end:";
    let r = ok(&scenario(Lang::Ptx, &module(body), "64", None, &[]));
    let note = r.notes.iter().find(|n| n.id == "ptx-param-defaults").expect("defaults note");
    assert!(note.text.contains("param_0 (pointer) = 0x700000000000; param_1 (integer) = 64"), "{}", note.text);
    // n defaults to the 64 threads: both warps load.
    assert_eq!(r.instructions[0].warps, 2);
    // By full name, short name and constant-bank word (sm_80 puts parameters at c[0x0][0x160]; the u32 follows
    // the u64 at +8): n = 40 leaves warp 0 whole and 8 lanes of warp 1.
    for set in ["k_param_1=40", "param_1=40", "c[0x0][0x168]=40"] {
        let r = ok(&scenario(Lang::Ptx, &module(body), "64", None, &[set]));
        assert_eq!(r.instructions[0].active_lanes, 40, "{set}");
    }
}

#[test]
fn errors_name_the_problem_and_its_place() {
    let err = |text: &str| scenario(Lang::Ptx, text, "32", None, &[]).run().expect_err("an error").error;
    // A register past its declaration: line 16 is the first body line of `module`.
    let e = err(&module("add.s32 %r20, %r1, 1;"));
    assert_eq!((e.line, e.column), (16, 9));
    assert!(e.message.contains("`%r20` is past the declared registers `%r<16>`"), "{}", e.message);
    // A floating-point value reaching an address names the instruction and its line.
    let e = err(&module(".reg .f32 %f<3>;\nld.global.f32 %f1, [%rd2];\ncvt.rn.f32.u32 %f2, %r1;\nmul.f32 %f2, %f2, %f1;\ncvt.rzi.u32.f32 %r2, %f2;\nmul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];"));
    assert!(e.message.contains("floating-point result of mul.f32 at line 19"), "{}", e.message);
    // A name that is not a PTX instruction is refused where it is, not taken as an unknown value.
    let e = err(&module("mvo.u32 %r2, %r1;"));
    assert_eq!((e.line, e.column, e.message.as_str()), (16, 1, "`mvo` is not a PTX instruction (did you mean `mov`?)"));
    // A missing semicolon.
    let e = err(&module("mov.u32 %r2, %r1\nret"));
    assert!(e.message.starts_with("expected `;` at the end of the instruction"), "{}", e.message);
    // An unknown kernel lists the kernels.
    let e = scenario(Lang::Ptx, &module(""), "32", Some("nope"), &[]).run().expect_err("no kernel").error;
    assert_eq!(e.message, "no kernel `nope` in this PTX (its kernels: k)");
    // A cp.async reading part of its copy (src-size 8 of 16) is refused, not counted as 16 or as 0 (a src-size of 0
    // or 16 is costed per lane: tests/async_matrix.rs).
    let e = err(&module("cp.async.cg.shared.global [%rd2], [%rd2], 16, 8;"));
    assert!(e.message.starts_with("a cp.async that reads part of its copy"), "{}", e.message);
    // A bulk copy (TMA) moves memory: refused when it runs, not skipped, and pointed at `warpscope tma` (ldmatrix
    // and cp.async are modelled: tests/async_matrix.rs). The tensor form's `[map, {x, y}]` operand parses.
    let e = err(&module("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%rd2], [%rd2, {%r1, %r1}], [%rd2];"));
    assert!(e.message.contains("a bulk or tensor (TMA) copy"), "{}", e.message);
    let e =
        err(&module("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd2], [%rd2], 16, [%rd2];"));
    assert!(
        e.message.contains("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes: a bulk or tensor (TMA) copy moves a whole box")
            && e.message.ends_with("cost the box with `warpscope tma --box WxH --elem-bytes N --pitch BYTES --swizzle MODE`"),
        "{}",
        e.message
    );
    // Text that is not PTX.
    let e = err("LDG.E R0, [R2.64] ;");
    assert!(e.message.contains("at the top level of a PTX module"), "{}", e.message);
    assert_eq!((e.line, e.column), (1, 1));
    // An unsized 64-bit parameter of an extern "C" kernel never used as a pointer has no default.
    let text = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{\n.reg .b64 %rd<4>;\n.reg .b32 %r<2>;\n.reg .pred %p1;\nld.param.u64 %rd1, [k_param_0];\nmov.u32 %r1, %tid.x;\ncvt.u64.u32 %rd2, %r1;\nsetp.ge.u64 %p1, %rd2, %rd1;\n@%p1 ret;\n}\n";
    let e = err(text);
    assert!(e.message.contains("cannot tell a pointer from an integer"), "{}", e.message);
}

#[test]
fn atomics_are_counted_as_written() {
    let r = ok(&scenario(
        Lang::Ptx,
        &module(".reg .f32 %f1;\natom.global.add.u32 %r2, [%rd2], 1;\nld.global.f32 %f1, [%rd2];"),
        "32",
        None,
        &[],
    ));
    // docs/model.md#atomics: a global atomic is one request of its distinct sectors; the PTX's atom is one per lane.
    assert_eq!(r.instructions.len(), 2);
    let a = &r.instructions[0];
    assert_eq!((a.line, a.op.as_str()), (17, "ATOMG.E.ADD"));
    assert_eq!(a.atomic.map(|t| t.ops), Some(32));
    assert!(a.notes.iter().any(|n| n.id == "ptx-atomic-as-written"));
    assert!(!r.notes.iter().any(|n| n.id == "ptx-not-costed"));
}

#[test]
fn a_module_lists_its_kernels_and_any_can_be_chosen_by_symbol() {
    let ptx = corpus("transpose", "nvrtc_sm_80.ptx");
    let r = ok(&scenario(Lang::Ptx, &ptx, "32x16", None, &[]));
    // The eight kernels of transpose.cu in file order, by symbol (what the page's menu passes) and name.
    let names: Vec<&str> = r.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, KERNELS[2].2);
    assert_eq!(r.kernels[2].symbol, "_Z14transposeNaivePfS_ii");
    let naive = ok(&scenario(Lang::Ptx, &ptx, "32x16", Some("_Z14transposeNaivePfS_ii"), &[]));
    assert_eq!(naive.kernel.as_deref(), Some("transposeNaive"));
    // A module with one kernel lists none: there is nothing to choose.
    let one = ok(&scenario(Lang::Ptx, &corpus("vectorAdd", "sm_80.ptx"), "256", None, &[]));
    assert!(one.kernels.is_empty());
    // The same for a SASS listing.
    let sass = ok(&scenario(Lang::Sass, &corpus("transpose", "sm_80.sass"), "32x16", None, &[]));
    assert_eq!(sass.kernels.len(), 8);
}

/// Each lane's value of `%r9` after `body` (one warp): the module loads from `base + %r9` with a 64-bit add,
/// so the traced address minus the pointer's default base 0x7000_0000_0000 is the value, zero-extended.
fn values(body: &str, sets: &[&str]) -> Vec<u64> {
    let text = module(&format!(
        "{body}\n.reg .b16 %h9;\n.reg .b64 %rd9;\ncvt.u64.u32 %rd9, %r9;\nadd.s64 %rd9, %rd2, %rd9;\nld.global.u8 %h9, [%rd9];"
    ));
    let sc = scenario(Lang::Ptx, &text, "32", None, sets);
    let t = sc.trace(1).unwrap_or_else(|e| panic!("{e}"));
    let issue = &t.items[0].issues[0];
    issue.addrs.0.iter().map(|a| a.expect("every lane") - 0x7000_0000_0000).collect()
}

#[test]
fn signed_values_and_edge_forms_follow_the_ptx_isa() {
    // abs.s32 of tid - 2: lanes 0 and 1 are negative, |-2| = 2 and |-1| = 1 (PTX ISA abs).
    let v = values("sub.s32 %r2, %r1, 2;\nabs.s32 %r9, %r2;", &[]);
    assert_eq!(&v[..4], &[2, 1, 0, 1]);
    // sad.s32 d = c + |a - b|: a = tid - 2, b = 1: |-3| = 3 for lane 0.
    let v = values("sub.s32 %r2, %r1, 2;\nsad.s32 %r9, %r2, 1, 0;", &[]);
    assert_eq!(&v[..4], &[3, 2, 1, 0]);
    // A signed 8-bit parameter read into a 16-bit register sign-extends (ISA: operand size exceeding the
    // instruction type), so cvt.s32.s16 keeps -1; & 0xFFF keeps it an address offset: 0xFFF.
    let v = values(
        ".reg .b16 %h1;\nld.param.s8 %h1, [k_param_1];\ncvt.s32.s16 %r2, %h1;\nand.b32 %r9, %r2, 4095;",
        &["k_param_1=-1"],
    );
    assert_eq!(v[0], 0xFFF);
    // cvt.s16.s32 into a 32-bit register sign-extends the 16-bit result: -2 stays 0xFFFFFFFE; & 0xFFFF0 = 0xFFFF0.
    let v = values("sub.s32 %r2, %r1, 2;\ncvt.s16.s32 %r3, %r2;\nand.b32 %r9, %r3, 0xFFFF0;", &[]);
    assert_eq!(v[0], 0xFFFF0);
    // max.relu.s32 clamps a negative result to 0: max(tid - 5, -9) for lane 0 is -5 -> 0.
    let v = values("sub.s32 %r2, %r1, 5;\nmax.relu.s32 %r9, %r2, -9;", &[]);
    assert_eq!(&v[..7], &[0, 0, 0, 0, 0, 0, 1]);
    // A decimal float immediate at .f32 is the f32 1.5, so cvt.rzi gives 1 (the f64 bits' low word would give 0).
    let v = values(".reg .f32 %f<2>;\nmov.f32 %f1, 1.5;\ncvt.rzi.s32.f32 %r9, %f1;", &[]);
    assert_eq!(v[0], 1);
    // cvt.rp.f32.s32 rounds towards +infinity: -16777219 is not an f32; the next f32 up is -16777218
    // (0xCB800001), not -16777220.
    let v = values(".reg .f32 %f<2>;\ncvt.rp.f32.s32 %f1, -16777219;\nmov.b32 %r9, %f1;", &[]);
    assert_eq!(v[0], 0xCB80_0001);
    // Call storage written as two 32-bit halves and read as one 64-bit value is not guessed: unknown, and an
    // address that depends on it is an error naming the parameter.
    let text = ".version 7.5\n.target sm_80\n.address_size 64\n\
        .func (.param .b64 f_ret) f(.param .b64 f_p)\n{\n.reg .b64 %rd<2>;\nld.param.b64 %rd1, [f_p];\nst.param.b64 [f_ret], %rd1;\nret;\n}\n\
        .visible .entry k(.param .u64 k_param_0)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<6>;\n.reg .f32 %f1;\n\
        ld.param.u64 %rd1, [k_param_0];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n\
        {\n.param .b64 a0;\nst.param.b32 [a0], %r1;\nst.param.b32 [a0+4], 0;\n.param .b64 rv;\n\
        call.uni (rv), f, (a0);\nld.param.b64 %rd3, [rv];\n}\n\
        add.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\nret;\n}\n";
    let e = scenario(Lang::Ptx, text, "32", None, &[]).run().expect_err("pieces");
    assert!(e.error.message.contains("written in other pieces"), "{}", e.error.message);
    // Packed 16x2 arithmetic is not taken as one 32-bit value.
    let e = scenario(Lang::Ptx, &module("max.u16x2 %r2, %r1, 3;\nmul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\n.reg .f32 %f1;\nld.global.f32 %f1, [%rd4];"), "32", None, &[])
        .run()
        .expect_err("packed");
    assert!(e.error.message.contains("packed 16x2"), "{}", e.error.message);
    // 128-bit arithmetic is not computed at 64 bits.
    let e = scenario(Lang::Ptx, &module(".reg .b128 %q1;\nshl.b128 %q1, %q1, 4;\nmov.b128 {%rd3, %rd4}, %q1;\nadd.s64 %rd5, %rd2, %rd3;\n.reg .f32 %f1;\nld.global.f32 %f1, [%rd5];"), "32", None, &[])
        .run()
        .expect_err("b128");
    assert!(e.error.message.contains("128-bit result of shl.b128"), "{}", e.error.message);
    // %warpid is not the warp's index in the block (PTX ISA): an address that depends on it is an error.
    let e = scenario(Lang::Ptx, &module("mov.u32 %r2, %warpid;\nmul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\n.reg .f32 %f1;\nld.global.f32 %f1, [%rd4];"), "32", None, &[])
        .run()
        .expect_err("warpid");
    assert!(e.error.message.contains("%warpid (a value of the machine"), "{}", e.error.message);
    // Forms the ISA does not have are refused where they are.
    let e = scenario(Lang::Ptx, &module("mul.wide.u64 %rd3, %rd2, 4;"), "32", None, &[]).run().expect_err("wide u64");
    assert!(e.error.message.contains(".wide takes 16- or 32-bit operands"), "{}", e.error.message);
    let e = scenario(Lang::Ptx, &module("setp.lt.b32 %p1, %r1, 4;"), "32", None, &[]).run().expect_err("lt.b32");
    assert!(e.error.message.contains("compare only with eq and ne"), "{}", e.error.message);
}

#[test]
fn line_information_names_the_cuda_line() {
    // `.loc FILE LINE COLUMN` before an instruction names its CUDA line (PTX ISA, "Debugging Directives");
    // clang writes the `.file` table at the end of the module, after its use; `, inlined_at` follows the
    // instruction's own line (the first one is kept); line 0 means "no source line".
    let body = ".loc 1 7 3\nmul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\n.reg .f32 %f<3>;\n\
        .loc 2 40 5, function_name $L__info_string0, inlined_at 1 9 2\nld.global.f32 %f1, [%rd4];\n\
        .loc 1 11 1\nld.global.f32 %f2, [%rd4+128];\n.loc 1 0 3\nld.global.f32 %f2, [%rd4+256];";
    let text = format!("{}\t.file\t1 \"/home/u/k.cu\"\n\t.file\t2 \"helpers.h\", 1700000000, 1234\n", module(body));
    let r = ok(&scenario(Lang::Ptx, &text, "32", None, &[]));
    let from: Vec<Option<String>> = r.instructions.iter().map(|i| i.source_label()).collect();
    assert_eq!(from, vec![Some("helpers.h:40".to_string()), Some("k.cu:11".to_string()), None]);
    assert_eq!(r.instructions[1].source.as_ref().map(|s| s.file.as_str()), Some("/home/u/k.cu"));
    // The corpus (hw/make-corpus.sh builds with line information): NVRTC's PTX for vectorAdd puts the
    // two loads and the store of `C[i] = A[i] + B[i];` on vectorAdd.cu's line 63.
    let r = ok(&scenario(Lang::Ptx, &corpus("vectorAdd", "nvrtc_sm_80.ptx"), "256", None, &[]));
    let from: Vec<Option<String>> = r.instructions.iter().map(|i| i.source_label()).collect();
    assert_eq!(from, vec![Some("vectorAdd.cu:63".to_string()); 3]);
    assert!(corpus("vectorAdd", "vectorAdd.cu").lines().nth(62).unwrap().contains("C[i] = A[i] + B[i]"));
}

/// A range declares the registers the body names, not its whole count: `.reg .b32 %r<1048576>` (the most the
/// parser takes) with two of them used costs a handful of registers, and the last of the range is still one.
#[cfg(feature = "lang-ptx")]
#[test]
fn a_register_range_costs_only_the_registers_the_body_names() {
    let text = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{\n.reg .b32 %r<1048576>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [k_param_0];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1048575, %tid.x;\nmul.wide.u32 %rd3, %r1048575, 4;\nadd.s64 %rd3, %rd2, %rd3;\nld.global.u32 %r7, [%rd3];\nret;\n}\n";
    let launch = warpscope::program::launch::Launch::new(
        warpscope::program::launch::Dim3::linear(32),
        warpscope::program::launch::Dim3::linear(1),
    )
    .expect("launch");
    let opts = warpscope::lang::ptx::Options { kernel: None, sm: 80 };
    let p = warpscope::lang::ptx::lower(text, launch, &Default::default(), opts).expect("lowers");
    // %r7, %r1048575 and %rd1-%rd3, with the temporaries of four instructions.
    assert!(p.n_regs < 16, "{} registers", p.n_regs);
    // tid * 4 from the pointer's base: 128 contiguous bytes, 4 sectors.
    let r = ok(&scenario(Lang::Ptx, text, "32", None, &[]));
    assert_eq!(r.instructions[0].memory.as_ref().map(|m| m.sectors), Some(4));
}
