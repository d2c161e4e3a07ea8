//! Swizzles and CuTe layouts in the expression language and in CUDA (docs/model.md#ldmatrix-and-stmatrix and H): every count below is
//! derived by hand from the definitions cited next to it, not taken from a run.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use warpscope::lang::layout::{Layouts, Swizzle};
use warpscope::scenario::{Scenario, Setting};

/// A scenario on CC 8.0 with `settings` applied through the one settings path.
fn scenario(lang: &str, op: &str, text: &str, settings: &[(Setting, &str)]) -> Scenario {
    let mut sc = Scenario::default();
    for (s, v) in [(Setting::Lang, lang), (Setting::Op, op), (Setting::Pattern, text), (Setting::Cc, "8.0")]
        .iter()
        .chain(settings)
    {
        sc.set(*s, v).unwrap_or_else(|e| panic!("{s} {v}: {e}"));
    }
    sc
}

/// Shared wavefronts of the first instruction.
fn wavefronts(sc: &Scenario) -> u64 {
    let r = sc.run().unwrap_or_else(|e| panic!("{e}\n{}", sc.text));
    r.instructions[0].banks.as_ref().expect("a shared access").wavefronts
}

fn err(sc: &Scenario) -> String {
    match sc.run() {
        Ok(_) => panic!("expected an error for {:?}", sc.text),
        Err(e) => format!("{}:{}: {}", e.error.line, e.error.column, e.error.message),
    }
}

const LDSM: &str = "LDSM.16.M88.4";
/// The row addresses of ldmatrix .x4 over a tile of 64 halves (128 bytes) per row: lane l gives row l % 8 of
/// matrix l / 8, whose 16 bytes start at column 16 * (l / 8) (docs/model.md#ldmatrix-and-stmatrix).
const ROWS: &str = "128*(lane%8) + 16*(lane/8)";

#[test]
fn tma_swizzles_spread_ldmatrix_rows_over_bank_groups() {
    // docs/model.md#ldmatrix-and-stmatrix: rows 128 bytes apart are 8-way per matrix, x4 = 32 wavefronts; sw128 makes them 4.
    assert_eq!(wavefronts(&scenario("expr", LDSM, ROWS, &[])), 32);
    assert_eq!(wavefronts(&scenario("expr", LDSM, &format!("sw128({ROWS})"), &[])), 4);
    // Row r = lane % 8 sits in address bits 7-9 and the chunk c = lane / 8 in bits 4-5 (docs/model.md#swizzles).
    // sw64 = Swizzle<2,4,3> XORs bits 7-8 (r & 3) into bits 4-5: chunk c ^ (r & 3) takes 4 values over the
    // 8 rows, each twice: 2-way, 2 wavefronts per matrix, 8 in all.
    assert_eq!(wavefronts(&scenario("expr", LDSM, &format!("sw64({ROWS})"), &[])), 8);
    // sw32 = Swizzle<1,4,3> XORs bit 7 (r & 1) into bit 4: 2 values, each 4 times: 4-way, 16 in all.
    assert_eq!(wavefronts(&scenario("expr", LDSM, &format!("sw32({ROWS})"), &[])), 16);
    // swizzle(3, 4, 3, x) is sw128 (docs/model.md#swizzles: 128B = Swizzle<3,4,3>).
    assert_eq!(wavefronts(&scenario("expr", LDSM, &format!("swizzle(3, 4, 3, {ROWS})"), &[])), 4);
}

#[test]
fn layouts_in_elements_need_the_element_form_of_the_swizzle() {
    // The tile as CuTe writes it for halves: 8 rows of 64 elements, `(8,64):(64,1)`, with --elem-bytes 2.
    // L(lane % 8, (lane / 8) * 8) is element 64 r + 8 c, byte 128 r + 16 c: the rows above, 32 wavefronts.
    let addr = "L(lane % 8, (lane / 8) * 8)";
    let with = |layout: &str, elem: &str| {
        scenario("expr", LDSM, addr, &[(Setting::Layout, layout), (Setting::ElemBytes, elem)])
    };
    assert_eq!(wavefronts(&with("L = (8,64):(64,1)", "2")), 32);
    // A swizzle in a layout applies to the element offset. The 128-byte swizzle permutes 16-byte chunks =
    // 8 halves (element bits 3-5) by the row within 1024 bytes = 512 halves (element bits 6-8): Swizzle<3,3,3>,
    // which CUTLASS's SM80 half-precision shared layouts use. Element 64 r + 8 c becomes 64 r + 8 (c ^ r):
    // 8 rows of a matrix on 8 different chunks, 1 wavefront per matrix, 4 in all.
    assert_eq!(wavefronts(&with("L = Swizzle<3,3,3> o (8,64):(64,1)", "2")), 4);
    // Swizzle<3,4,3>, the byte form, applied to element offsets XORs element bits 7-9 (r >> 1) into bits 4-6:
    // the chunk (element bits 3-5) is (c0, c1 ^ r1, r2): 4 values over 8 rows, 2-way, 8 wavefronts.
    assert_eq!(wavefronts(&with("L = Swizzle<3,4,3> o (8,64):(64,1)", "2")), 8);
    // The byte form is right on a byte layout: (8,128):(128,1) with --elem-bytes 1, column 16 (l / 8) is
    // sw128 of the rows above: 4.
    let bytes = scenario(
        "expr",
        LDSM,
        "L(lane % 8, (lane / 8) * 16)",
        &[(Setting::Layout, "L = Swizzle<3,4,3> ∘ (8,128):(128,1)"), (Setting::ElemBytes, "1")],
    );
    assert_eq!(wavefronts(&bytes), 4);
    // One 1-D index on a rank-2 layout is decomposed colexicographically (CuTe, 01_layout.md: "Coordinates"):
    // k = i + 8 j gives (i, j), so L(lane % 8 + 64 (lane / 8)) is L(lane % 8, 8 (lane / 8)): 4 again.
    let one = scenario(
        "expr",
        LDSM,
        "L(lane % 8 + 64 * (lane / 8))",
        &[(Setting::Layout, "L = Swizzle<3,3,3> o (8,64):(64,1)"), (Setting::ElemBytes, "2")],
    );
    assert_eq!(wavefronts(&one), 4);
}

#[test]
fn layout_errors_name_the_layout_mode_value_and_lane() {
    let sc = scenario("expr", "LDS.32", "L(lane, 0)", &[(Setting::Layout, "L = (8,64):(64,1)")]);
    assert_eq!(
        err(&sc),
        "1:3: `L` = (8,64):(64,1): coordinate 8 is outside mode 0 (shape 8, so 0..7) (thread 8, lane 8)"
    );
    let sc = scenario("expr", "LDS.32", "4*L(lane + 1)", &[(Setting::Layout, "L = (4,8):(8,1)")]);
    assert_eq!(err(&sc), "1:5: `L` = (4,8):(8,1): index 32 is outside the layout (size 32) (thread 31, lane 31)");
    let sc = scenario("expr", "LDS.32", "L(lane, 0, 1)", &[(Setting::Layout, "L = (8,64):(64,1)")]);
    assert_eq!(err(&sc), "1:1: layout `L` takes one coordinate per mode (2) or one index, found 3");
    let sc = scenario("expr", "LDS.32", "M(lane)", &[(Setting::Layout, "L = 8:1")]);
    assert_eq!(err(&sc), "1:1: unknown function `M` (known: min, max, abs, sw128, sw64, sw32, swizzle, L)");
    // Bad layout text: the error names the setting and the line:column in it.
    let mut sc = Scenario::default();
    sc.set(Setting::Layout, "A = 8:1\nB = (8,64):(64,1,2)").expect("read when lowered");
    let e = sc.run().map(|_| ()).unwrap_err();
    assert_eq!(
        (e.field, e.error.line, e.error.column, e.error.message.as_str()),
        (
            warpscope::scenario::Field::Layout,
            2,
            12,
            "the stride (64,1,2) does not have the form of the shape (8,64): one stride per shape entry, nested alike"
        )
    );
    let e = sc.set(Setting::ElemBytes, "3000").unwrap_err();
    assert_eq!(e.error.message, "elem_bytes is a whole number of bytes from 1 to 1024, not `3000`");
}

#[test]
fn swizzle_arguments_are_checked_as_cute_does() {
    // cute/swizzle.hpp: static_assert(num_base >= 0), (num_bits >= 0), (abs(num_shft) >= num_bits).
    let e = |text: &str| err(&scenario("expr", "LDS.32", text, &[]));
    assert_eq!(
        e("swizzle(3, 4, 2, 4*lane)"),
        "1:1: Swizzle<3,4,2>: |S| must be at least B, or the bits would overlap (as cute/swizzle.hpp requires)"
    );
    assert_eq!(
        e("swizzle(-1, 4, 3, 4*lane)"),
        "1:1: Swizzle<-1,4,3>: B, the number of bits, must be at least 0 (as cute/swizzle.hpp requires)"
    );
    assert_eq!(e("swizzle(3, lane, 3, 4*lane)"), "1:12: swizzle(B, M, S, x): B, M and S must be constant integers");
    assert_eq!(e("sw128(lane, 1)"), "1:1: `sw128` takes 1 argument(s), found 2");
}

#[test]
fn cuda_snippets_call_the_swizzles() {
    // A column of a 32x32 float tile, 128 bytes per row: 32-way (BPG 9.2.3.3). sw128 moves word 32 l to
    // byte 128 l + 16 (l & 7), bank 4 (l & 7): 8 banks with 4 rows each, 4 wavefronts.
    let plain = "__shared__ float s[4096];\nfloat v = s[(128 * threadIdx.x) / 4];\n";
    assert_eq!(wavefronts(&scenario("cuda", "", plain, &[])), 32);
    let swz = "__shared__ float s[4096];\nfloat v = s[sw128(128 * threadIdx.x) / 4];\n";
    assert_eq!(wavefronts(&scenario("cuda", "", swz, &[])), 4);
    let gen = "__shared__ float s[4096];\nfloat v = s[swizzle(3, 4, 3, 128 * threadIdx.x) / 4];\n";
    assert_eq!(wavefronts(&scenario("cuda", "", gen, &[])), 4);
    // A device function of the file named `swizzle` is the file's, not the built-in.
    let own = "__device__ unsigned swizzle(unsigned a, unsigned b, unsigned c, unsigned x) { return x; }\n\
               __global__ void k() {\n  __shared__ float s[4096];\n  float v = s[swizzle(3, 4, 3, 128 * threadIdx.x) / 4];\n}\n";
    assert_eq!(wavefronts(&scenario("cuda", "", own, &[])), 32);
    let bad = "__shared__ float s[4096];\nfloat v = s[swizzle(3, threadIdx.x, 3, 128) / 4];\n";
    assert_eq!(err(&scenario("cuda", "", bad, &[])), "2:24: swizzle(B, M, S, x): B, M and S must be constant integers");
}

#[test]
fn a_layout_reaches_links_and_labs() {
    let sc = scenario(
        "expr",
        LDSM,
        "L(lane % 8, (lane / 8) * 8)",
        &[(Setting::Layout, "L = Swizzle<3,3,3> o (8,64):(64,1)"), (Setting::ElemBytes, "2")],
    );
    let pane = warpscope::share::PaneState::from_scenario(&sc, "", 0, 0);
    let back = pane.scenario().expect("round trip");
    assert_eq!((back.layout.as_str(), back.elem_bytes), (sc.layout.as_str(), 2));
    // A link written before layouts existed has neither field: no layouts, 1-byte elements.
    let mut old = serde_json::to_value(&pane).expect("json");
    old.as_object_mut().map(|o| (o.remove("layout"), o.remove("elem_bytes")));
    let old: warpscope::share::PaneState = serde_json::from_value(old).expect("old link");
    let sc = old.scenario().expect("old link's scenario");
    assert_eq!((sc.layout.as_str(), sc.elem_bytes), ("", 1));
    // A lab exercise may give a layout and lock it.
    let lab = "title = \"t\"\nintro = \"\"\n[[exercise]]\nid = \"a\"\ntitle = \"a\"\ntext = \"\"\nlang = \"expr\"\nop = \"LDSM.16.M88.4\"\n\
               pattern = \"L(lane % 8, (lane / 8) * 8)\"\nlayout = \"L = (8,64):(64,1)\"\nelem_bytes = 2\nlocked = [\"layout\", \"elem_bytes\"]\n";
    let course = warpscope::teach::lab_file::parse(lab).unwrap_or_else(|e| panic!("{e}"));
    let answer = warpscope::teach::lab::Answer { layout: Some("L = 8:1".into()), ..Default::default() };
    let sc = course.exercises[0].scenario(Some(&answer)).expect("scenario");
    assert_eq!((sc.layout.as_str(), sc.elem_bytes), ("L = (8,64):(64,1)", 2));
    assert_eq!(wavefronts(&sc), 32);
    let bad = lab.replace("(64,1)\"", "(64,1\"");
    let e = warpscope::teach::lab_file::parse(&bad).map(|_| ()).unwrap_err();
    assert_eq!(
        (e.line, e.message.as_str()),
        (10, "layout 1:17: expected `)` or `,` in the tuple, found the end of the input")
    );
}

#[test]
fn colexicographic_coordinates_follow_cute() {
    // CuTe 01_layout.md, "Index Mapping": (3,(2,3)):(3,(12,1)) maps row i and 1-D column j to
    //   row 0:  0 12  1 13  2 14
    //   row 1:  3 15  4 16  5 17
    //   row 2:  6 18  7 19  8 20
    let ls = Layouts::parse("T = (3,(2,3)):(3,(12,1))", 1).expect("parses");
    let t = ls.get("T").expect("T");
    let table = [[0, 12, 1, 13, 2, 14], [3, 15, 4, 16, 5, 17], [6, 18, 7, 19, 8, 20]];
    for (i, row) in table.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            assert_eq!(t.offset(&[i as i128, j as i128]), Ok(v), "T({i}, {j})");
            // The 1-D index i + 3 j walks the same coordinates (colexicographic: the leftmost fastest).
            assert_eq!(t.offset(&[(i + 3 * j) as i128]), Ok(v), "T({})", i + 3 * j);
        }
    }
    // Same page, idx2crd(16, (3,(2,3))) = (1,(1,2)): 1*3 + 1*12 + 2*1 = 17.
    assert_eq!(t.offset(&[16]), Ok(17));
    // Without a stride, CuTe's default is compact and colexicographic (LayoutLeft): (4,2) is (4,2):(1,4).
    let ls = Layouts::parse("C = (4,2)\nR = (4,2):(2,1); E = 8:1", 4).expect("parses");
    let (c, r) = (ls.get("C").expect("C"), ls.get("R").expect("R"));
    assert_eq!((c.offset(&[3, 1]), r.offset(&[3, 1]), r.offset(&[5])), (Ok(7), Ok(7), Ok(3)));
    // --elem-bytes scales the element offset into a byte address.
    assert_eq!(ls.call(ls.get("E").expect("E"), &[5]), Ok(20));
}

#[test]
fn layout_text_errors_have_positions() {
    let e = |text: &str| {
        let e = Layouts::parse(text, 1).map(|_| ()).unwrap_err();
        format!("{}:{}: {}", e.line, e.column, e.message)
    };
    assert_eq!(e("L (8,64):(64,1)"), "1:3: expected `=` after the layout's name, found `(`");
    assert_eq!(e("L = (8,0):(64,1)"), "1:5: a shape's entries are at least 1, not 0");
    assert_eq!(e("L = Swizzle<3,4,3> (8,64):(64,1)"), "1:20: expected `o` or `∘` after the swizzle, found `(`");
    assert_eq!(
        e("L = Swizzle<3,4,1> o 8:1"),
        "1:5: Swizzle<3,4,1>: |S| must be at least B, or the bits would overlap (as cute/swizzle.hpp requires)"
    );
    assert_eq!(e("L = 8:1 M = 4:1"), "1:9: expected `;` or a new line after the layout, found `M`");
    assert_eq!(e("L = 8:1\nlane = 4:1"), "2:1: `lane` is a built-in variable: give the layout another name");
    assert_eq!(e("L = 8:1\nL = 4:1"), "2:1: `L` is a layout defined before: give the layout another name");
    assert_eq!(e("sw128 = 8:1"), "1:1: `sw128` is a function: give the layout another name");
    assert_eq!(e("L = ((2,4),8):((1,16))"), "1:15: the stride ((1,16)) does not have the form of the shape ((2,4),8): one stride per shape entry, nested alike");
    assert_eq!(e("= 8:1"), "1:1: expected a layout name (`L = (8,64):(64,1)`), found `=`");
    // Blank lines, `;;` and comments are fine.
    assert!(Layouts::parse("\n// tiles\nA = 8:1;;\n\nB = ((2,4),8):((1,16),2) // nested\n", 1).is_ok());
}

proptest! {
    /// Every swizzle with S >= B is an involution (the bits XORed in are left unchanged), and sw128 keeps
    /// every address in its 1024-byte block (docs/model.md#swizzles).
    #[test]
    fn swizzles_are_involutions(x in 0i128..(1 << 40), b in 0i128..4, m in 0i128..6, extra in 0i128..3) {
        let sw = Swizzle::new(3, 4, 3).expect("sw128");
        prop_assert_eq!(sw.apply(sw.apply(x)), x);
        prop_assert_eq!(sw.apply(x) >> 10, x >> 10);
        let any = Swizzle::new(b, m, b + extra).expect("valid");
        prop_assert_eq!(any.apply(any.apply(x)), x);
    }
}

#[test]
fn swizzle_values_follow_the_definition() {
    // docs/model.md#swizzles: x ^ ((x >> S) & (((1 << B) - 1) << M)). sw128 of 0x380 (row bits 7-9 = 7): 0x380 ^ 0x70.
    let sw128 = Swizzle::named("sw128").expect("sw128");
    assert_eq!((sw128.apply(0x380), sw128.apply(0x3f0), sw128.apply(0x400)), (0x3f0, 0x380, 0x400));
    // sw64: bits 7-8 into 4-5; sw32: bit 7 into bit 4.
    assert_eq!(Swizzle::named("sw64").expect("sw64").apply(0x180), 0x1b0);
    assert_eq!(Swizzle::named("sw32").expect("sw32").apply(0x180), 0x190);
    // A negative S shifts left, as CuTe's shiftr does: Swizzle<1,0,-2> XORs bit 0 into bit 2.
    assert_eq!(Swizzle::new(1, 0, -2).expect("valid").apply(0b001), 0b101);
}
