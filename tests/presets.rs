//! Every preset against a golden snapshot: adding a preset adds a case. Update with `UPDATE_EXPECT=1 cargo
//! test --test presets` after checking the diff by eye; the numbers of the teaching cases are asserted
//! from their sources in tests/engine.rs and tests/languages.rs.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::HashSet;
use warpscope::presets::PRESETS;

#[test]
fn every_preset_matches_the_golden_snapshot() {
    let mut out = String::new();
    for p in PRESETS.iter() {
        let r = p.scenario().run().unwrap_or_else(|e| panic!("preset {} fails: {e}", p.name));
        out.push_str(&format!("=== {}: {}\n{}\n", p.name, p.title, r.to_text()));
    }
    expect_test::expect_file!["golden/presets.txt"].assert_eq(&out);
}

#[test]
fn presets_are_named_once_and_explained() {
    let mut names = HashSet::new();
    for p in PRESETS.iter() {
        assert!(names.insert(p.name), "duplicate preset name {}", p.name);
        assert!(p.explanation.len() > 40, "{} needs an explanation", p.name);
        assert!(warpscope::presets::find(p.name).is_some());
    }
    assert!(PRESETS.len() >= 20);
}
