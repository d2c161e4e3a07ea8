//! The figure: steps, captions and the SVG writer.
#![cfg(not(target_arch = "wasm32"))]

use warpscope::figure::scene::{scene, steps, Theme};
use warpscope::figure::svg::to_svg;
use warpscope::teach::presets;

fn first_report(preset: &str, instr: usize) -> warpscope::Report {
    let sc = presets::find(preset).expect("preset").scenario();
    let r = sc.run().expect("runs");
    sc.report(&r, instr, 0).expect("runs").expect("an issue")
}

#[test]
fn steps_follow_transactions_and_wavefronts() {
    // BPG 9.2.1.2: 5 sectors, the last one for lane 31 alone.
    let r = first_report("misaligned", 0);
    let s = steps(&r);
    assert_eq!(s.len(), 5);
    assert_eq!(s[4].text, "32 B sector at 0x80 for lane 31");
    // PG-5.0 F.4.2: four quarter-warp requests of one 128-byte line each.
    let r = first_report("fermi-quarter-warps", 0);
    let s = steps(&r);
    assert_eq!(s.len(), 4);
    assert_eq!(s[1].text, "request 2 (lanes 8-15): 128 B line at 0x80 for lanes 8-15");
    // BPG 9.2.3.3: the naive transpose's column read replays 31 times.
    let r = first_report("transpose-naive", 2);
    let s = steps(&r);
    assert_eq!(s.len(), 32);
    assert_eq!(s[1].text, "wavefront 2 of 32 serves lane 1 (a replay caused by a bank conflict)");
}

#[test]
fn captions_say_what_the_step_shows() {
    let r = first_report("misaligned", 0);
    assert_eq!(scene(&r, "t", 0).caption, "The warp issues LDG.E.32; 5 steps follow.");
    assert_eq!(scene(&r, "t", 5).caption, "Step 5 of 5: 32 B sector at 0x80 for lane 31.");
    // Steps past the end show the last one.
    assert_eq!(scene(&r, "t", 99).caption, scene(&r, "t", 5).caption);
}

#[test]
fn every_preset_draws_valid_svg_in_both_themes() {
    for p in presets::PRESETS.iter() {
        let sc = p.scenario();
        let r = sc.run().expect("runs");
        for (k, i) in r.instructions.iter().enumerate() {
            let report = &sc.report(&r, k, 0).expect("runs").expect("an issue");
            let n = steps(report).len();
            for theme in [Theme::Light, Theme::Dark] {
                let svg = to_svg(&scene(report, &format!("{} <{}> & \"x\"", p.name, i.op), n), theme);
                let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{}: invalid SVG: {e}", p.name));
                assert_eq!(doc.root_element().tag_name().name(), "svg");
                assert!(!svg.contains("<image") && !svg.contains("<script"), "no raster, no script");
            }
        }
    }
}
