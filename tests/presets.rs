//! Every preset against a golden snapshot: adding a preset adds a case. Update with `UPDATE_EXPECT=1 cargo
//! test --test presets` after checking the diff by eye; the numbers of the teaching cases are asserted
//! from their sources in tests/engine.rs and tests/languages.rs.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::HashSet;
use warpscope::teach::presets::PRESETS;

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
        assert!(warpscope::teach::presets::find(p.name).is_some());
    }
    assert!(PRESETS.len() >= 20);
}

/// Adds one detailed report's costs into (requests, lines, sectors, transactions) and (wavefronts, ideal,
/// conflicts), checking on the way that the steps drawn add up to the counts they come with.
fn add_detail(r: &warpscope::Report, mem: &mut [u64; 4], banks: &mut [u64; 3]) {
    use warpscope::model::report::Cost;
    match &r.cost {
        Cost::Memory(m) => {
            let drawn: usize = m.steps.iter().map(|s| s.transactions.len()).sum();
            assert_eq!(drawn as u32, m.transactions, "{}: the drawn transactions are the counted ones", r.op);
            for (t, v) in mem.iter_mut().zip([m.requests, m.lines, m.sectors, m.transactions]) {
                *t += u64::from(v);
            }
        }
        Cost::Banks(b) => {
            let drawn: usize = b.phases.iter().map(|p| p.wavefronts.len()).sum();
            assert_eq!(drawn as u32, b.wavefronts, "{}: the drawn wavefronts are the counted ones", r.op);
            for (t, v) in banks.iter_mut().zip([b.wavefronts, b.ideal_wavefronts, b.bank_conflicts]) {
                *t += u64::from(v);
            }
        }
        Cost::Constant(k) => {
            assert_eq!(k.constant_passes.len() as u32, k.passes, "{}: the drawn passes are the counted ones", r.op)
        }
        Cost::Split { parts } => parts.iter().for_each(|p| add_detail(p, mem, banks)),
    }
}

#[test]
fn lazy_steps_agree_with_the_fast_counts_on_every_preset() {
    // The fast path counts every issue without recording steps; the figure asks for one issue's steps later,
    // by running that warp again. Both come from the same rules: over all issues of a preset, the detailed
    // reports add up to the totals, and the figure's report of an issue is the detailed report of the same
    // addresses.
    for p in PRESETS.iter() {
        // One block: the trace is the listed block's, the totals the launch's.
        let sc = warpscope::scenario::Scenario {
            grid: warpscope::program::launch::Dim3::linear(1),
            caches: None,
            ..p.scenario()
        };
        let r = sc.run().unwrap_or_else(|e| panic!("preset {} fails: {e}", p.name));
        // Every issue of the block with its addresses, in the figure's numbering (warps, then passes).
        let t = sc.trace(usize::MAX).expect("trace");
        assert_eq!(t.items.len(), r.instructions.len(), "preset {}", p.name);
        for (k, (i, item)) in r.instructions.iter().zip(&t.items).enumerate() {
            assert_eq!(item.issues.len(), i.issue_count(), "preset {} #{}", p.name, k + 1);
            let (mut mem, mut banks, mut lanes) = ([0u64; 4], [0u64; 3], 0u64);
            for (n, issue) in item.issues.iter().enumerate() {
                let d = warpscope::model::cost::analyze_with(
                    sc.cc,
                    &item.site.instr,
                    &issue.addrs,
                    issue.plg,
                    issue.src.as_ref(),
                    &sc.config,
                );
                lanes += u64::from(d.active_lanes);
                add_detail(&d, &mut mem, &mut banks);
                // The figure's path for the first issues (it runs the warp up to the issue, so it is not
                // repeated for every one of SGEMM's 32,768).
                if n < 8 {
                    let shown = sc.report(&r, k, n).expect("report runs").expect("issue exists");
                    assert_eq!(shown, d, "preset {} #{} issue {n}", p.name, k + 1);
                }
            }
            let want_mem = i.memory.as_ref().map_or([0; 4], |m| [m.requests, m.lines, m.sectors, m.transactions]);
            let want_banks = i.banks.as_ref().map_or([0; 3], |b| [b.wavefronts, b.ideal_wavefronts, b.bank_conflicts]);
            assert_eq!((mem, banks, lanes), (want_mem, want_banks, i.active_lanes), "preset {} #{}", p.name, k + 1);
        }
    }
}
