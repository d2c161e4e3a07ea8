//! The input languages end to end: text in, per-instruction block results out. Each case's numbers cite
//! their source or the rule they are derived from.
#![cfg(not(target_arch = "wasm32"))]

use warpscope::analysis::{InstrResult, ProgramResult};
use warpscope::lang::Lang;
use warpscope::program::launch::Dim3;
use warpscope::scenario::{Field, Scenario};
use warpscope::{Cc, SpaceTag};

struct Run {
    sc: Scenario,
}

fn run(lang: Lang, text: &str) -> Run {
    Run { sc: Scenario { lang, text: text.to_string(), ..Scenario::default() } }
}

impl Run {
    fn op(mut self, op: &str) -> Run {
        self.sc.op = op.to_string();
        self
    }
    fn block(mut self, b: &str) -> Run {
        self.sc.block = Dim3::parse(b, "block").expect("test block");
        self
    }
    fn set(mut self, s: &str) -> Run {
        self.sc.sets.push(s.to_string());
        self
    }
    fn cc(mut self, cc: &str) -> Run {
        self.sc.cc = Cc::parse(cc).expect("test cc");
        self
    }
    fn ok(&self) -> ProgramResult {
        self.sc.run().unwrap_or_else(|e| panic!("{e}"))
    }
    /// The error, as `line:column: message`.
    fn err(&self) -> String {
        match self.sc.run() {
            Ok(_) => panic!("expected an error for {:?}", self.sc.text),
            Err(e) => format!("{}:{}: {}", e.error.line, e.error.column, e.error.message),
        }
    }
}

/// (op, space, warps, sectors or wavefronts) of one instruction.
fn brief(i: &InstrResult) -> (String, SpaceTag, u64, u64) {
    let n = match (&i.memory, &i.banks) {
        (Some(m), None) => m.sectors,
        (None, Some(b)) => b.wavefronts,
        _ => u64::MAX,
    };
    (i.op.clone(), i.space, i.warps, n)
}

fn briefs(r: &ProgramResult) -> Vec<(String, SpaceTag, u64, u64)> {
    r.instructions.iter().map(brief).collect()
}

fn b(op: &str, space: SpaceTag, warps: u64, n: u64) -> (String, SpaceTag, u64, u64) {
    (op.to_string(), space, warps, n)
}

use SpaceTag::{Generic, Global, Local, Shared};

// ------------------------------------------------------------------------------------------------------
// Expressions
// ------------------------------------------------------------------------------------------------------

#[test]
fn expressions_use_block_variables_predicates_and_functions() {
    // Warps are formed from the linear thread index x + y*blockDim.x (PG, Thread Hierarchy): in a 16x4 block
    // warp 0 holds rows 0-1, so row-major 4-byte loads are 128 contiguous bytes = 4 sectors per warp.
    let r = run(Lang::Expr, "4*(threadIdx.y * blockDim.x + threadIdx.x)").op("LDG.E.32").block("16x4").ok();
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 2, 8)]);
    // The same block read with tid: identical.
    let r = run(Lang::Expr, "4*tid").op("LDG.E.32").block("16x4").ok();
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 2, 8)]);
    // A predicate is the active mask: 20 lanes x 4 B = 80 B over 3 sectors (derived from docs/model.md#global-memory).
    let r = run(Lang::Expr, "4*lane if lane < 20").op("LDG.E.32").ok();
    assert_eq!(r.instructions[0].issues[0].active_lanes, 20);
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 1, 3)]);
    // min(): lanes 15-31 share lane 15's word; 64 bytes = 2 sectors.
    let r = run(Lang::Expr, "4*min(lane, 15)").op("LDG.E.32").ok();
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 1, 2)]);
    // ?: sends half the warp 4 KB away: 2 sectors in each of 2 lines.
    let r = run(Lang::Expr, "lane < 16 ? 4*lane : 0x1000 + 4*lane").op("LDG.E.32").ok();
    assert_eq!(r.instructions[0].memory.as_ref().map(|m| (m.lines, m.sectors)), Some((2, 4)));
    // --set variables: stride 8 from a 32-byte aligned base is 8 sectors (BPG 9.2.1.3).
    let r = run(Lang::Expr, "base + 8*lane").op("LDG.E.32").set("base=0x2000").ok();
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 1, 8)]);
    // A partial tail warp: 48 threads, warp 1 has 16 lanes (2 sectors), warp 0 has 4.
    let r = run(Lang::Expr, "4*tid").op("LDG.E.32").block("48").ok();
    let per_warp: Vec<u32> = r.instructions[0].issues.iter().map(|i| i.active_lanes).collect();
    assert_eq!(per_warp, [32, 16]);
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 2, 6)]);
}

#[test]
fn expression_errors_name_their_position() {
    assert_eq!(run(Lang::Expr, "4*lane if").op("LDS.32").err(), "1:10: expected a condition after `if`");
    assert!(run(Lang::Expr, "4*lanes").op("LDS.32").err().starts_with("1:3: unknown variable `lanes`"));
    assert_eq!(
        run(Lang::Expr, "4*lane where lane < 3").op("LDS.32").err(),
        "1:8: expected an operator or the end of the expression, found `where` (write the predicate as `ADDR if COND`)"
    );
    assert_eq!(
        run(Lang::Expr, "sqrt(lane)").op("LDS.32").err(),
        "1:1: unknown function `sqrt` (known: min, max, abs, sw128, sw64, sw32, swizzle)"
    );
    assert_eq!(run(Lang::Expr, "1.5 * lane").op("LDS.32").err(), "1:1: a floating-point number cannot be an address");
    assert_eq!(
        run(Lang::Expr, "4*lane").op("LDS.32").block("2000").sc.run().map(|_| ()).unwrap_err().field,
        Field::Launch
    );
    // `sizeof` of a type is a number (CUDA's sizes): 4*lane written as sizeof(float)*lane costs the same.
    let a = run(Lang::Expr, "sizeof(float) * lane").op("LDG.E.32").ok();
    let b = run(Lang::Expr, "4 * lane").op("LDG.E.32").ok();
    assert_eq!(a.instructions[0].ncu, b.instructions[0].ncu);
    let a = run(Lang::Expr, "sizeof(float4) * lane").op("LDG.E.128").ok();
    let b = run(Lang::Expr, "16 * lane").op("LDG.E.128").ok();
    assert_eq!(a.instructions[0].ncu, b.instructions[0].ncu);
    assert_eq!(
        run(Lang::Expr, "sizeof(lane) * lane").op("LDG.E.32").err(),
        "1:1: `sizeof` of a value (write the type: sizeof(float)) is not allowed in an address expression"
    );
}

// ------------------------------------------------------------------------------------------------------
// CUDA snippets
// ------------------------------------------------------------------------------------------------------

#[test]
fn cuda_accesses_become_instructions_of_the_right_width() {
    // AoS vs SoA: a 12-byte struct's field is read with a 12-byte stride: 384 B span = 12 sectors; the
    // separate array is 4 sectors (derived from docs/model.md#global-memory; the struct layout is C's).
    let r = run(Lang::Cuda, "struct P { float x, y, z; };\nP *aos;\nfloat *soa;\nfloat a = aos[threadIdx.x].x;\nfloat b = soa[threadIdx.x];\n").ok();
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 1, 12), b("LDG.E.32", Global, 1, 4)]);
    assert_eq!((r.instructions[0].line, r.instructions[0].access.as_str()), (4, "aos[threadIdx.x].x"));

    // float3 is three 4-byte loads (vector_types.h: 12 bytes, 4-byte aligned); each has a 12-byte stride.
    let r = run(Lang::Cuda, "float3 *p;\nfloat3 v = p[threadIdx.x];\n").ok();
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 1, 12), b("LDG.E.32", Global, 1, 12), b("LDG.E.32", Global, 1, 12)]);
    assert_eq!(r.instructions[2].access, "p[threadIdx.x].z");

    // double2 is one 16-byte load (16-byte aligned): 512 B = 16 sectors.
    let r = run(Lang::Cuda, "double2 *v;\ndouble2 x = v[threadIdx.x];\n").ok();
    assert_eq!(briefs(&r), [b("LDG.E.128", Global, 1, 16)]);

    // A struct {float; double;} is 16 bytes with the double at offset 8: two loads, each one per 16 bytes
    // (512 B span, 16 sectors).
    let r = run(Lang::Cuda, "struct S { float a; double b; };\nS *s;\nS y = s[threadIdx.x];\n").ok();
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 1, 16), b("LDG.E.64", Global, 1, 16)]);

    // `out[i] += x` is a load then a store, in that order.
    let r = run(Lang::Cuda, "float *out;\nout[threadIdx.x] += 1.0f;\n").ok();
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 1, 4), b("STG.E.32", Global, 1, 4)]);

    // The same float2 load on CC 2.0 is two half-warp requests of one 128-byte line each (PG-5.0 F.4.2).
    let r = run(Lang::Cuda, "float2 *v;\nfloat2 x = v[threadIdx.x];\n").cc("2.0").ok();
    let m = r.instructions[0].memory.clone().expect("global");
    assert_eq!((m.requests, m.transactions, m.transaction_bytes), (2, 2, 128));

    // __ldg is the read-only path (.CONSTANT = .CI).
    let r = run(Lang::Cuda, "const float *in;\nfloat x = __ldg(&in[threadIdx.x]);\n").ok();
    assert_eq!(briefs(&r), [b("LDG.E.CONSTANT.32", Global, 1, 4)]);
}

#[test]
fn cuda_control_flow_and_layout() {
    // if (threadIdx.x < 20): 20 active lanes, 80 B = 3 sectors.
    let r = run(Lang::Cuda, "float *in;\nif (threadIdx.x < 20) { float x = in[threadIdx.x]; }\n").ok();
    assert_eq!(r.instructions[0].issues[0].active_lanes, 20);
    // A for loop with constant bounds issues once per iteration: 4 iterations x 2 warps = 8 issues.
    let r = run(Lang::Cuda, "float *in;\nfor (int j = 0; j < 4; j++)\n    in[j * 64 + threadIdx.x] = 0;\n")
        .block("64")
        .ok();
    assert_eq!(briefs(&r), [b("STG.E.32", Global, 8, 32)]);
    // #define and const work as constants; a 2-D shared tile read by column (BPG 9.2.3.3): [32][32] is
    // 32-way, [32][33] conflict-free.
    let naive = "#define T 32\n__shared__ float tile[T][T];\nfloat v = tile[threadIdx.x][0];\n";
    assert_eq!(briefs(&run(Lang::Cuda, naive).ok()), [b("LDS.32", Shared, 1, 32)]);
    let padded = "const int T = 32;\n__shared__ float tile[T][T + 1];\nfloat v = tile[threadIdx.x][0];\n";
    assert_eq!(briefs(&run(Lang::Cuda, padded).ok()), [b("LDS.32", Shared, 1, 1)]);
    // A kernel with parameters; the scalar parameter takes its value from --set. 40 threads pass the test:
    // warp 0 reads 4 sectors, warp 1 reads 8 lanes = 1 sector.
    let kernel = "__global__ void scale(float *in, float *out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = 2.0f * in[i];\n}\n";
    let r = run(Lang::Cuda, kernel).block("64").set("n=40").ok();
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 2, 5), b("STG.E.32", Global, 2, 5)]);
    // A local array indexed at run time goes to local memory.
    let r = run(Lang::Cuda, "float a[8];\na[threadIdx.x % 8] = 0;\n").ok();
    assert_eq!(r.instructions[0].op, "STL.32");
    assert_eq!(r.instructions[0].space, Local);
}

#[test]
fn cuda_global_arrays_get_cudamalloc_like_bases() {
    // Bases are 256-byte aligned and 256 MB apart from 0x7000_0000_0000; --set overrides one.
    let r = run(Lang::Cuda, "float *a, *b;\nfloat x = a[threadIdx.x];\nfloat y = b[threadIdx.x];\n");
    let first = |i: usize| addr(&r.sc, i, 0);
    assert_eq!((first(0), first(1)), (Some(0x7000_0000_0000), Some(0x7000_1000_0000)));
    let r = run(Lang::Cuda, "float *a;\nfloat x = a[threadIdx.x];\n").set("a=0x1004").ok();
    // Misaligned base: 4*lane + 4 -> 5 sectors (BPG 9.2.1.2).
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 1, 5)]);
}

#[test]
fn cuda_errors_name_their_position() {
    let e = run(Lang::Cuda, "float *in, *data;\nfloat x = in[data[threadIdx.x]];\n").err();
    assert_eq!(
        e,
        "2:14: the index depends on data loaded from memory at 2:14; warpscope reads data only where it is given (--data NAME=SOURCE: a .npy file or a generator such as uniform(0, 1024, n=4096))"
    );
    // A branch on loaded data whose side moves memory runs under the stated assumption (tests/data_branches.rs).
    let r = run(Lang::Cuda, "float *in;\nif (in[threadIdx.x] > 0) in[0] = 1;\n").ok();
    assert_eq!(r.instructions.iter().map(|i| i.warps).collect::<Vec<_>>(), [1, 1]);
    assert_eq!(r.notes.iter().map(|n| n.id.as_ref()).collect::<Vec<_>>(), ["data-branch-assumed"]);
    assert_eq!(
        // In a kernel (in a fragment, an undeclared name is assumed, with a note).
        run(Lang::Cuda, "__global__ void k(float *in) {\nfloat x = in[idx];\n}\n").err(),
        "2:14: unknown name `idx`: declare it, or give it a value with --set idx=VALUE"
    );
    assert_eq!(
        run(Lang::Cuda, "float *in;\nfloat x = in[0]\nfloat y;\n").err(),
        "3:1: expected `;` after the declaration, found `float`"
    );
    assert_eq!(run(Lang::Cuda, "vec4 *in;\n").err(), "1:1: unknown type `vec4` (define structs before using them)");
    // A loop that outlasts the time limit is reported at the loop, with the limit and how to raise it.
    let mut endless = run(Lang::Cuda, "float *in;\nfor (int k = 0; k < 100000000; k++) in[k] = 0;\n");
    endless.sc.limits.max_seconds = 0.2;
    let e = endless.err();
    assert!(
        e.starts_with("2:1: the analysis stopped at the time limit (0.2 s; the command line's --max-seconds raises it) while warp 0 of block (0,0,0) was here"),
        "{e}"
    );
    assert_eq!(
        run(Lang::Cuda, "float *p;\nfloat x = p[threadIdx.x] /* open\n").err(),
        "2:26: unterminated `/*` comment"
    );
    // An integer parameter takes the launch's thread count (docs/model.md#kernel-parameters); a float one has no default.
    let kernel = "__global__ void k(float *in, int n) {\n  if (threadIdx.x < n) in[threadIdx.x] = 0;\n}\n";
    assert_eq!(run(Lang::Cuda, kernel).ok().instructions[0].warps, 1);
    let kernel = "__global__ void k(float *in, float n) {\n  if (threadIdx.x < n) in[threadIdx.x] = 0;\n}\n";
    assert_eq!(
        run(Lang::Cuda, kernel).err(),
        "2:7: the condition of the `if` depends on the parameter `n`, which has no value (give it one with --set n=VALUE)"
    );
    // 3000 nested blocks once overflowed the wasm stack ("memory access out of bounds"); the 65th level
    // (MAX_NESTING = 64 in src/lang/cuda/parse.rs) starts at column 65.
    let deep = format!("{}{}", "{".repeat(3000), "}".repeat(3000));
    assert_eq!(run(Lang::Cuda, &deep).err(), "1:65: statements nested more than 64 deep");
    // Its 6000-character line is cut to a 100-character window (EXCERPT_CHARS) around column 65: from 40
    // characters before it, with `…` on both sides and the caret under the 65th brace.
    let e = run(Lang::Cuda, &deep).sc.run().expect_err("too deep").error;
    assert_eq!(e.excerpt, format!("…{}…\n{}^", "{".repeat(100), " ".repeat(41)));
    // `4*lane` followed by 10,000 `+lane` once overflowed the stack in the walks over its 10,000-deep tree (the
    // page died): an operator chain counts one level per operator against MAX_DEPTH = 200 (src/lang/cexpr.rs).
    // The conditional and the binary level take 2 and `4*lane`'s `*` 1, so the 198th `+` is level 201: it
    // starts at offset 6 + 197 x 5 = 991, column 992.
    let chain = format!("4*lane{}", "+lane".repeat(10_000));
    let e = run(Lang::Expr, &chain).err();
    assert!(e.starts_with("1:992: expression nested more than 200 deep (each operator of a chain"), "{e}");
    let kernel = format!("__global__ void k(float *a) {{\n  a[threadIdx.x] = 1{};\n}}\n", " + 1".repeat(5_000));
    assert!(run(Lang::Cuda, &kernel).err().contains("expression nested more than 200 deep"));
}

// ------------------------------------------------------------------------------------------------------
// SASS
// ------------------------------------------------------------------------------------------------------

/// Lane `lane`'s address in the first issue of instruction `instr`, from the detailed report.
fn addr(sc: &Scenario, instr: usize, lane: usize) -> Option<u64> {
    let r = sc.run().expect("runs");
    sc.report(&r, instr, 0).expect("reports").expect("an issue").addresses[lane]
}

#[test]
fn lea_follows_the_lea_page() {
    // The LEA instruction reference's example 1, &A[i+10] for doubles: R0 = (R2 << 3) + R4 with carry,
    // R1 = ({R3,R2} >> 29) + R5 + CC.CF. With R4 = 0xffffff80, lane 16 carries: R0 = 0x80 + 0xffffff80 =
    // 0x1_0000_0000 -> R0 = 0, CF = 1; R1 = 0 + 0x7000 + 1. Address {R1,R0} + 80 = 0x7001_0000_0050.
    let ex1 = warpscope::teach::presets::find("lea-double-index").expect("preset").scenario();
    assert_eq!(addr(&ex1, 0, 0), Some(0x7000_ffff_ff80 + 80));
    assert_eq!(addr(&ex1, 0, 16), Some(0x7001_0000_0050));
    assert_eq!(addr(&ex1, 0, 31), Some(0x7000_ffff_ff80 + 8 * 31 + 80));

    // Example 2, &A[100-i]: -R2 negated, sign-extended high half from BFE.S32. Lane 1: R0 = (-1 << 3) +
    // 0x1000 = 0x1_0000_0ff8 -> 0xff8 with CF = 1; R1 = 0xffffffff + 0x7000 + 1 = 0x7000. + 800 = base +
    // 8 * 99.
    let ex2 = warpscope::teach::presets::find("lea-negative-index").expect("preset").scenario();
    assert_eq!(addr(&ex2, 0, 1), Some(0x7000_0000_1000 + 8 * 99));
    assert_eq!(addr(&ex2, 0, 31), Some(0x7000_0000_1000 + 8 * 69));

    // Example 3, &B[i].field: scale 7 from constant-bank operands, Rc omitted ({RZ,R2}): lane 2 =
    // (2 << 7) + 0 and ({0,2} >> 25) + 0x7000 -> 0x7000_0000_0100 + 20.
    let ex3 = warpscope::teach::presets::find("lea-struct-field").expect("preset").scenario();
    assert_eq!(addr(&ex3, 0, 2), Some(0x7000_0000_0114));

    // The 32-bit example: R10 = R12 + R2, then [R10 - 2].
    let ex4 = warpscope::teach::presets::find("lea-32bit-bytes").expect("preset").scenario();
    assert_eq!(addr(&ex4, 0, 5), Some(0x1000 + 5 - 2));
}

#[test]
fn lea_plg_steers_generic_loads_into_shared_memory() {
    // With the base in the shared window, LEA.HI.X sets P0 = false and LD.E.64 goes to shared memory:
    // offsets 8*i + 80, 8-byte accesses by half-warp, conflict-free: 2 wavefronts (docs/model.md#shared-memory).
    let text = "S2R R2, SR_TID.X ;\nMOV R3, RZ ;\nLEA.LO R0.CC, R2, R4, 3 ;\nLEA.HI.X P0, R1, R2, R5, R3, 3 ;\nLD.E.64 R6, [R0 + 80], P0 ;\n";
    let shared = run(Lang::Sass, text).set("R4=0").set("R5=0x7f00");
    assert_eq!(briefs(&shared.ok()), [b("LD.E.64", Shared, 1, 2)]);
    assert_eq!(addr(&shared.sc, 0, 3), Some(80 + 24), "shared offsets are window offsets");
    // Outside the window P0 is true: global memory, 256 B from a 16-byte offset = 9 sectors.
    let r = run(Lang::Sass, text).set("R4=0").set("R5=0x7000").ok();
    assert_eq!(briefs(&r), [b("LD.E.64", Global, 1, 9)]);
    // The LEA instruction reference: "LEA can write at most one of CC and Plg".
    let e = run(Lang::Sass, "LEA.LO P0, R0.CC, R2, R4, 3 ;\n").err();
    assert_eq!(e, "1:12: LEA can write at most one of CC and Plg (the LEA instruction reference)");
}

#[test]
fn sass_machine_runs_compiler_output() {
    // Current carry-predicate forms: IADD3 + IADD3.X form a 64-bit address 16 bytes below a 4 GB boundary:
    // 128 contiguous bytes from offset 0xf0 of a line = 5 sectors over 2 lines.
    let iadd = "S2R R0, SR_TID.X ;\nSHL R0, R0, 0x2 ;\nIADD3 R2, P0, R0, c[0x0][0x160], RZ ;\nIADD3.X R3, RZ, c[0x0][0x164], RZ, P0, !PT ;\nLDG.E R4, [R2.64] ;\n";
    let iadd = run(Lang::Sass, iadd).set("c[0x0][0x160]=0x7000fffffff0");
    let r = iadd.ok();
    assert_eq!(r.instructions[0].memory.as_ref().map(|m| (m.lines, m.sectors)), Some((2, 5)));
    assert_eq!(addr(&iadd.sc, 0, 4), Some(0x7001_0000_0000));
    // Current LEA / LEA.HI.X with a carry predicate: 4*tid from an aligned base, 4 sectors.
    let lea = "S2R R0, SR_TID.X ;\nLEA R2, P0, R0, c[0x0][0x160], 0x2 ;\nLEA.HI.X R3, R0, c[0x0][0x164], RZ, 0x2, P0 ;\nLDG.E R4, [R2.64] ;\n";
    let r = run(Lang::Sass, lea).set("c[0x0][0x160]=0x700000000000").ok();
    assert_eq!(briefs(&r), [b("LDG.E", Global, 1, 4)]);
    // A guard and EXIT: threads 20 and up leave before the load (20 lanes, 3 sectors).
    let exit = "S2R R0, SR_TID.X ;\nISETP.GE.AND P0, PT, R0, 0x14, PT ;\n@P0 EXIT ;\nIMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x160] ;\nLDG.E R4, [R2.64] ;\n";
    let r = run(Lang::Sass, exit).set("c[0x0][0x160]=0x700000000000").ok();
    assert_eq!(r.instructions[0].issues[0].active_lanes, 20);
    // Annotations, addresses, encodings and header lines are ignored; an unknown instruction that no
    // address needs (FADD) is fine. STS of 4*tid + 16: banks 4..35 mod 32, conflict-free (PG 20.4.3).
    let dump = "        code for sm_80\n                Function : _Z1kPf\n        /*0000*/                   S2R R0, SR_TID.X ;             /* 0x0000000000007919 */\n        /*0010*/                   FADD R9, R9, 1 ;\n        /*0018*/                   SHL R0, R0, 0x2 ;\n        /*0020*/                   STS [R0+0x10], R9 &wr0 ?WAIT1 ;\n";
    let r = run(Lang::Sass, dump).ok();
    assert_eq!(briefs(&r), [b("STS", Shared, 1, 1)]);
    assert_eq!((r.instructions[0].line, r.instructions[0].access.as_str()), (6, "[R0+0x10]"));
}

#[test]
fn sass_errors_say_which_instruction_an_address_depends_on() {
    let e = run(Lang::Sass, "XMAD R2, R0, R1, RZ ;\nLDG.E.32 R4, [R2] ;\n").set("R0=1").set("R1=2").err();
    assert_eq!(e, "2:14: the address of this LDG depends on a value warpscope does not know: R2 was written by XMAD at line 1, which warpscope does not model");
    let e = run(Lang::Sass, "LDG.E.XX R4, [R2] ;\n").err();
    assert_eq!(e, "1:7: unknown modifier `.XX` for LDG (sizes: .U8 .S8 .U16 .S16 .32 .64 .128; cache operators: .CA .CG .CS .LU .CV .CI)");
    let e = run(Lang::Sass, "@Q0 LDG.E.32 R4, [R2] ;\n").err();
    assert_eq!(e, "1:1: `@Q0` is not a predicate guard (@P0, @!P1, @PT)");
    let e = run(Lang::Sass, "ldg.e.32 R4, [R2] ;\n").err();
    assert_eq!(e, "1:1: `ldg.e.32` is not a SASS instruction (opcodes are upper case, e.g. LDG.E.32)");
    let e = run(Lang::Sass, "LDG.E.32 R4, [R2] ;\n").err();
    assert!(e.contains("R2 has no value"), "{e}");
    // Register and constant-bank limits: registers are R0..R255, and a constant bank is 64 KB (CUDA C++
    // Programming Guide, constant memory size).
    let e = run(Lang::Sass, "LDG.E.32 R0, [R999] ;\n").err();
    assert_eq!(e, "1:14: `R999` is not a register or an offset in `[R999]`");
    let e = run(Lang::Sass, "MOV R2, c[0x0][0x10000] ;\n").err();
    assert_eq!(e, "1:9: c[0x0][0x10000]: offset 0x10000 is past the end of the 64 KB constant bank (at most 0xfffc)");
}

// ------------------------------------------------------------------------------------------------------
// Address lists
// ------------------------------------------------------------------------------------------------------

fn list(values: impl Fn(usize) -> String) -> String {
    (0..32).map(values).collect::<Vec<_>>().join(" ")
}

#[test]
fn address_lists_give_warps_and_instructions() {
    let w0 = list(|l| format!("{:#x}", 0x1000 + 4 * l));
    let w1 = list(|l| if l < 8 { format!("{}", 0x2000 + 8 * l) } else { "-".into() });
    let text = format!("LDG.E.32\n{w0}\n{w1}\nLDS.64\n{}\n", list(|l| format!("{}", 8 * l)));
    let r = run(Lang::Addresses, &text).op("").ok();
    // Warp 0: 4 sectors; warp 1: 8 lanes at stride 8 = 64 B = 2 sectors; then LDS.64 8*lane: 2 wavefronts.
    assert_eq!(briefs(&r), [b("LDG.E.32", Global, 2, 6), b("LDS.64", Shared, 1, 2)]);
    assert_eq!(r.instructions[0].issues[1].active_lanes, 8);
    // Errors.
    let short = format!("LDG.E.32\n{}\n", (0..31).map(|l| l.to_string()).collect::<Vec<_>>().join(" "));
    assert_eq!(
        run(Lang::Addresses, &short).op("").err(),
        "2:81: warp 0 of LDG.E.32 has 31 address(es); a warp needs 32 (use - for inactive lanes)"
    );
    assert_eq!(
        run(Lang::Addresses, "LDG.E.32\n0x10 zz\n").op("").err(),
        "2:6: `zz` is not an address (decimal, 0x hex, or - for an inactive lane)"
    );
    assert_eq!(
        run(Lang::Addresses, "0x10\n").op("").err(),
        "1:1: which instruction? put a mnemonic such as LDG.E.32 on the first line, or pass --op"
    );
    assert_eq!(
        run(Lang::Addresses, "LDG.32\n0x100000000\n").op("").err(),
        "2:1: 0x100000000 does not fit in 32 bits; LDG.32 takes a 32-bit address (add .E)"
    );
    // --op gives the instruction when the list does not.
    let r = run(Lang::Addresses, &w0).op("STG.E.32").ok();
    assert_eq!(briefs(&r), [b("STG.E.32", Global, 1, 4)]);
}

#[test]
fn generic_preset_splits_one_instruction_over_two_memories() {
    let r = warpscope::teach::presets::find("generic-shared").expect("preset").scenario().run().expect("runs");
    let i = &r.instructions[0];
    assert_eq!(i.space, Generic);
    // 16 lanes x 4 B in global = 2 sectors; 16 lanes in shared, banks 0-15 = 1 wavefront.
    assert_eq!((i.memory.as_ref().map(|m| m.sectors), i.banks.as_ref().map(|b| b.wavefronts)), (Some(2), Some(1)));
    assert_eq!(i.ncu.get("smsp__inst_executed_op_generic_ld.sum"), Some(&1));
    assert_eq!(i.ncu.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), Some(&2));
    assert_eq!(i.ncu.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"), Some(&1));
}

#[test]
fn block_sums_use_nsight_compute_names() {
    // The naive transpose's column read: 32 issues x 32 wavefronts, 31 conflicts each (BPG 9.2.3.3).
    let r = warpscope::teach::presets::find("transpose-naive").expect("preset").scenario().run().expect("runs");
    let lds = r.instructions.iter().find(|i| i.op == "LDS.32").expect("a shared load");
    assert_eq!(lds.ncu.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"), Some(&1024));
    assert_eq!(lds.ncu.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), Some(&992));
    let st = r.instructions.iter().find(|i| i.op == "STG.E.32").expect("a global store");
    // 32 coalesced warp stores: 32 requests, 128 sectors.
    assert_eq!(st.ncu.get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"), Some(&32));
    assert_eq!(st.ncu.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), Some(&128));
    assert_eq!(r.cc, Cc::new(8, 0));
}
