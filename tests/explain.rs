//! Explanations name the lanes behind the excess cost, and every automatic fix is one the engine confirms.
#![cfg(not(target_arch = "wasm32"))]

use warpscope::teach::explain::{explain, Explanation, Fix};
use warpscope::teach::presets;
use warpscope::L1Choice;

fn explain_preset(name: &str, instr: usize) -> Explanation {
    let sc = presets::find(name).expect("preset").scenario();
    let r = sc.run().expect("runs");
    explain(&sc, &r, instr, &sc.report(&r, instr, 0).expect("runs").expect("an issue"))
}

#[test]
fn misaligned_warp_blames_lane_31_and_offers_alignment() {
    // BPG 9.2.1.2: the fifth sector holds lane 31's 4 bytes only; aligned, the warp needs 4.
    let ex = explain_preset("misaligned", 0);
    assert!(ex.lines.iter().any(|l| l == "The sector at 0x80 carries 4 useful bytes for lane 31."), "{:?}", ex.lines);
    let s = &ex.suggestions[0];
    assert_eq!(s.fix, Some(Fix::Text("4*lane + 0x0".into())));
    assert_eq!(s.why, "transactions: 5 → 4 over the block");
}

#[test]
fn strided_and_scattered_reads_suggest_packing() {
    // BPG 9.2.1.3: stride 2 moves 8 sectors for 4 of data.
    let ex = explain_preset("strided", 0);
    assert!(
        ex.lines.iter().any(|l| l.contains("8 bytes apart but each uses 4: the warp drags in 2x")),
        "{:?}",
        ex.lines
    );
    let fix = ex.suggestions.iter().find_map(|s| s.fix.clone());
    assert_eq!(fix, Some(Fix::Text("4*lane + 0x0".into())));
    // Kepler with L1 on: 32 lines of 128 B for 128 useful bytes; L2-only moves 32 x 32 B (PG-11 K.3.2).
    let ex = explain_preset("kepler-l1-opt-in", 0);
    let l2 = ex.suggestions.iter().find(|s| s.fix == Some(Fix::L1(L1Choice::Off))).expect("an L2-only suggestion");
    assert_eq!(l2.why, "32-byte transactions instead of 128-byte lines: bytes moved 4096 → 1024 over the block");
}

#[test]
fn bank_conflicts_name_the_bank_and_padding_is_verified() {
    // BPG 9.2.3.3: the naive transpose's column read: bank 0 serves 32 words; padding removes the conflicts.
    let ex = explain_preset("transpose-naive", 2);
    assert!(
        ex.lines.iter().any(|l| l == "Bank 0 holds different words for lanes 0-31, so it is needed in 32 wavefronts of one phase."),
        "{:?}",
        ex.lines
    );
    let pad = ex.suggestions.iter().find(|s| s.title == "Pad the shared array by one column").expect("padding");
    match &pad.fix {
        Some(Fix::Text(t)) => assert!(t.contains("__shared__ float tile[TILE][TILE + 1];"), "{t}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(pad.why, "wavefronts: 1024 → 32 over the block");
    // An expression with a 128-byte stride: padding to 132 is conflict-free (BPG 9.2.3.3).
    let sc = warpscope::scenario::Scenario { op: "LDS.32".into(), text: "128*lane".into(), ..Default::default() };
    let r = sc.run().expect("runs");
    let ex = explain(&sc, &r, 0, &sc.report(&r, 0, 0).expect("runs").expect("an issue"));
    assert_eq!(ex.suggestions[0].fix, Some(Fix::Text("132*lane + 0x0".into())));
    assert_eq!(ex.suggestions[0].why, "wavefronts: 32 → 1 over the block");
}

#[test]
fn kepler_stride_two_is_not_blamed_on_a_bank() {
    // MODEL B: in Kepler's 4-byte mode words i and i+32 of a 256-byte segment share a bank without conflict;
    // on 8.0 the same stride is 2-way, with 16 banks serving two words each.
    let ex = explain_preset("kepler-4byte-stride2", 0);
    assert_eq!(ex.lines, ["1 wavefront for 32 active lanes: no bank conflicts, every phase takes the fewest wavefronts its bytes allow."]);
    let sc = warpscope::scenario::Scenario { op: "LDS.32".into(), text: "8*lane".into(), ..Default::default() };
    let r = sc.run().expect("runs");
    let ex = explain(&sc, &r, 0, &sc.report(&r, 0, 0).expect("runs").expect("an issue"));
    assert_eq!(ex.lines[1], "Bank 0 holds different words for lanes 0, 16, so it is needed in 2 wavefronts of one phase (16 banks are this busy).");
}

#[test]
fn swizzle_vector_and_index_swap_are_offered_when_they_help() {
    // XOR swizzle of a 128-byte stride: conflict-free like padding (BPG 9.2.3.3 idea, no extra column).
    let sc = warpscope::scenario::Scenario { op: "LDS.32".into(), text: "128*lane".into(), ..Default::default() };
    let r = sc.run().expect("runs");
    let ex = explain(&sc, &r, 0, &sc.report(&r, 0, 0).expect("runs").expect("an issue"));
    let sw = ex.suggestions.iter().find(|s| s.title.starts_with("XOR-swizzle")).expect("a swizzle");
    assert_eq!(
        (sw.fix.clone(), sw.why.as_str()),
        (Some(Fix::Text("(0x0 + 128*lane) ^ (4*(lane & 31))".into())), "wavefronts: 32 → 1 over the block")
    );
    // A coalesced 4-byte load: offer LDG.E.128 at 16*lane.
    let ex = explain_preset("coalesced", 0);
    assert_eq!(ex.suggestions.len(), 1);
    assert_eq!(ex.suggestions[0].fix, Some(Fix::OpText("LDG.E.128".into(), "16*lane + 0x0".into())));
    // The matrix column read: m[threadIdx.x * N + blockIdx.x] -> m[blockIdx.x * N + threadIdx.x]: 32 -> 4
    // sectors (the row case of the same preset).
    let ex = explain_preset("matrix-row-vs-column", 1);
    let swap = ex.suggestions.iter().find(|s| s.title.starts_with("Swap the index")).expect("an index swap");
    assert_eq!(swap.why, "transactions: 32 → 4 over the block");
    match &swap.fix {
        Some(Fix::Text(t)) => assert!(t.contains("float col = m[blockIdx.x * N + threadIdx.x];"), "{t}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn good_patterns_get_no_suggestion() {
    for name in ["transpose-padded", "float4-load"] {
        let r = presets::find(name).expect("preset").scenario().run().expect("runs");
        for k in 0..r.instructions.len() {
            let sc = presets::find(name).expect("preset").scenario();
            let ex = explain(&sc, &r, k, &sc.report(&r, k, 0).expect("runs").expect("an issue"));
            assert!(ex.suggestions.is_empty(), "{name} #{k}: {:?}", ex.suggestions);
        }
    }
}
