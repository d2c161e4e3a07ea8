//! Explanations name the lanes behind the excess cost, and every automatic fix is one the engine confirms.
//! Each explanation is compared as a whole text (expect-test; `UPDATE_EXPECT=1` rewrites the expectations
//! after a change, to be read in the diff): why the issue costs what it does, then each fix with its
//! measured effect and the edit it makes.
#![cfg(not(target_arch = "wasm32"))]

use expect_test::{expect, Expect};
use warpscope::lang::Lang;
use warpscope::scenario::Scenario;
use warpscope::teach::explain::{explain, Fix};
use warpscope::teach::presets;

/// The explanation of issue 0 of instruction `instr` as text. A fix that rewrites a whole file shows only
/// the lines it changes.
fn render(sc: &Scenario, instr: usize) -> String {
    let r = sc.run().expect("runs");
    let ex = explain(sc, &r, instr, &sc.report(&r, instr, 0).expect("runs").expect("an issue"));
    let mut out = String::from("why:\n");
    for l in &ex.lines {
        out.push_str(&format!("  {l}\n"));
    }
    out.push_str("fixes:\n");
    for s in &ex.suggestions {
        out.push_str(&format!("  - {}\n    {}\n", s.title, s.why));
        let edit = match &s.fix {
            None => "no automatic edit".to_string(),
            Some(Fix::Text(t)) if sc.lang == Lang::Expr => format!("pattern: {t}"),
            Some(Fix::Text(t)) => {
                let old: Vec<&str> = sc.text.lines().collect();
                let changed: Vec<String> = t
                    .lines()
                    .enumerate()
                    .filter(|(k, l)| old.get(*k) != Some(l))
                    .map(|(k, l)| format!("line {}: {}", k + 1, l.trim()))
                    .collect();
                changed.join("; ")
            }
            Some(Fix::Op(o)) => format!("instruction: {o}"),
            Some(Fix::L1(l)) => format!("L1: {l}"),
            Some(Fix::OpText(o, t)) => format!("instruction: {o}, pattern: {t}"),
        };
        out.push_str(&format!("    {edit}\n"));
    }
    out
}

fn preset(name: &str, instr: usize, want: Expect) {
    want.assert_eq(&render(&presets::find(name).expect("preset").scenario(), instr));
}

fn lds(text: &str, want: Expect) {
    let sc = Scenario { op: "LDS.32".into(), text: text.into(), ..Default::default() };
    want.assert_eq(&render(&sc, 0));
}

#[test]
fn misaligned_warp_blames_lane_31_and_offers_alignment() {
    // BPG 9.2.1.2: the fifth sector holds lane 31's 4 bytes only; aligned, the warp needs 4.
    preset(
        "misaligned",
        0,
        expect![[r#"
        why:
          32 active lanes request 128 bytes; they touch 128 bytes in 5 sectors, 160 B moved (80% efficiency).
          Packed and aligned, 128 bytes would fit in 4 sectors.
          The sector at 0x80 carries 4 useful bytes for lane 31.
          The warp is contiguous but starts 4 bytes into a sector: it straddles one more sector than it needs.
        fixes:
          - Align the start to 128 bytes
            transactions: 5 → 4 over the block
            pattern: 4*lane + 0x0
    "#]],
    );
}

#[test]
fn strided_and_scattered_reads_suggest_packing() {
    // BPG 9.2.1.3: stride 2 moves 8 sectors for 4 sectors of data.
    preset(
        "strided",
        0,
        expect![[r#"
            why:
              32 active lanes request 128 bytes; they touch 128 bytes in 8 sectors, 256 B moved (50% efficiency).
              Packed and aligned, 128 bytes would fit in 4 sectors.
              Neighbouring lanes are 8 bytes apart but each uses 4: the warp moves 256 bytes for the 128 it uses (2x the data).
            fixes:
              - Store the values each warp reads next to each other
                Make consecutive lanes read consecutive elements: a struct of arrays instead of an array of structs, or stage the data through shared memory and read it there.
                no automatic edit
              - Read with a stride of 4 bytes
                transactions: 8 → 4 over the block
                pattern: 4*lane + 0x0
        "#]],
    );
    // Kepler with L1 on: 32 lines of 128 B for 128 useful bytes; L2-only moves 32 x 32 B (PG-11 K.3.2).
    preset(
        "kepler-l1-opt-in",
        0,
        expect![[r#"
            why:
              32 active lanes request 128 bytes; they touch 128 bytes in 32 sectors, 4096 B moved (3.1% efficiency).
              Packed and aligned, 128 bytes would fit in 4 sectors.
              The line at 0x0 carries 4 useful bytes for lane 0.
              The line at 0x80 carries 4 useful bytes for lane 1.
              The line at 0x100 carries 4 useful bytes for lane 2.
              The line at 0x180 carries 4 useful bytes for lane 3.
              … and 28 more sparsely used transactions.
              Neighbouring lanes are 128 bytes apart but each uses 4: the warp moves 4096 bytes for the 128 it uses (32x the data).
            fixes:
              - Store the values each warp reads next to each other
                Make consecutive lanes read consecutive elements: a struct of arrays instead of an array of structs, or stage the data through shared memory and read it there.
                no automatic edit
              - Read with a stride of 4 bytes
                transactions: 32 → 1 over the block
                pattern: 4*lane + 0x0
              - Cache this load in L2 only (-Xptxas -dlcm=cg or .CG)
                32-byte transactions instead of 128-byte lines: bytes moved 4096 → 1024 over the block
                L1: off
        "#]],
    );
}

#[test]
fn bank_conflicts_name_the_bank_and_padding_is_verified() {
    // BPG 9.2.3.3: the naive transpose's column read: bank 0 serves 32 words; padding removes the conflicts.
    preset(
        "transpose-naive",
        2,
        expect![[r#"
        why:
          32 wavefronts where 1 would do: 31 bank conflicts, worst 32-way.
          Bank 0 holds different words for lanes 0-31, so it is needed in 32 wavefronts of one phase.
        fixes:
          - Pad the shared array by one column
            wavefronts: 1024 → 32 over the block
            line 3: __shared__ float tile[TILE][TILE + 1];
    "#]],
    );
    // A 128-byte stride: padding to 132 is conflict-free, and so is an XOR swizzle (BPG 9.2.3.3's idea
    // without the extra column).
    lds(
        "128*lane",
        expect![[r#"
        why:
          32 wavefronts where 1 would do: 31 bank conflicts, worst 32-way.
          Bank 0 holds different words for lanes 0-31, so it is needed in 32 wavefronts of one phase.
        fixes:
          - Pad the stride to 132 bytes (an odd number of words)
            wavefronts: 32 → 1 over the block
            pattern: 132*lane + 0x0
          - XOR-swizzle the word within the row (no padding)
            wavefronts: 32 → 1 over the block
            pattern: (0x0 + 128*lane) ^ (4*(lane & 31))
    "#]],
    );
}

#[test]
fn kepler_stride_two_is_not_blamed_on_a_bank() {
    // docs/model.md#shared-memory: in Kepler's 4-byte mode words i and i+32 of a 256-byte segment share a bank without conflict;
    // on 8.0 the same stride is 2-way, with 16 banks serving two words each.
    preset(
        "kepler-4byte-stride2",
        0,
        expect![[r#"
        why:
          1 wavefront for 32 active lanes: no bank conflicts, every phase takes the fewest wavefronts its bytes allow.
        fixes:
    "#]],
    );
    lds(
        "8*lane",
        expect![[r#"
        why:
          2 wavefronts where 1 would do: 1 bank conflict, worst 2-way.
          Bank 0 holds different words for lanes 0, 16, so it is needed in 2 wavefronts of one phase (16 banks are this busy).
        fixes:
          - Pad the stride to 12 bytes (an odd number of words)
            wavefronts: 2 → 1 over the block
            pattern: 12*lane + 0x0
    "#]],
    );
}

#[test]
fn vector_and_index_swap_are_offered_when_they_help() {
    // A coalesced 4-byte load: LDG.E.128 at 16*lane moves the same 512 bytes in a quarter of the loads.
    preset(
        "coalesced",
        0,
        expect![[r#"
        why:
          32 active lanes request 128 bytes; they touch 128 bytes in 4 sectors, 128 B moved (100% efficiency).
        fixes:
          - Use a 16-byte vector type (float4 / int4)
            each lane moves 16 bytes instead of 4: the same data in 4x fewer load instructions, still fully coalesced
            instruction: LDG.E.128, pattern: 16*lane + 0x0
    "#]],
    );
    // The matrix column read: m[threadIdx.x * N + blockIdx.x] -> m[blockIdx.x * N + threadIdx.x]: 32 -> 4
    // sectors (the row case of the same preset).
    preset(
        "matrix-row-vs-column",
        1,
        expect![[r#"
            why:
              32 active lanes request 128 bytes; they touch 128 bytes in 32 sectors, 1024 B moved (12.5% efficiency).
              Packed and aligned, 128 bytes would fit in 4 sectors.
              The sector at 0x7000_0000_0000 carries 4 useful bytes for lane 0.
              The sector at 0x7000_0000_1000 carries 4 useful bytes for lane 1.
              The sector at 0x7000_0000_2000 carries 4 useful bytes for lane 2.
              The sector at 0x7000_0000_3000 carries 4 useful bytes for lane 3.
              … and 28 more sparsely used transactions.
              Neighbouring lanes are 4096 bytes apart but each uses 4: the warp moves 1024 bytes for the 128 it uses (8x the data).
            fixes:
              - Store the values each warp reads next to each other
                Make consecutive lanes read consecutive elements: a struct of arrays instead of an array of structs, or stage the data through shared memory and read it there.
                no automatic edit
              - Swap the index so threadIdx.x moves fastest: m[blockIdx.x * N + threadIdx.x]
                transactions: 32 → 4 over the block
                line 4: float col = m[blockIdx.x * N + threadIdx.x];   // down a column
        "#]],
    );
}

#[test]
fn good_patterns_get_no_suggestion() {
    for name in ["transpose-padded", "float4-load"] {
        let sc = presets::find(name).expect("preset").scenario();
        let n = sc.run().expect("runs").instructions.len();
        for k in 0..n {
            let text = render(&sc, k);
            assert!(text.ends_with("fixes:\n"), "{name} #{k}:\n{text}");
        }
    }
}

/// The numbers a sentence states, each with the word that follows it: "1024 bytes" gives (1024, "bytes"),
/// "8x" gives (8, "x"), "32-way" gives (32, "-way"), "80% efficiency" gives (80, "%").
fn stated(sentence: &str) -> Vec<(f64, String)> {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let mut out = Vec::new();
    for (k, w) in words.iter().enumerate() {
        let w = w.trim_start_matches('(');
        // `1,792` is one number (a clause's comma is followed by a space).
        let digits: String = w.chars().take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',').collect();
        let digits = digits.trim_end_matches([',', '.']).to_string();
        let Ok(n) = digits.replace(',', "").parse::<f64>() else { continue };
        let rest = &w[digits.len()..];
        let unit = if rest.is_empty() {
            words.get(k + 1).map(|u| u.trim_matches(|c: char| !c.is_alphanumeric()).to_string()).unwrap_or_default()
        } else {
            rest.trim_end_matches([')', '.', ',', ':', ';']).to_string()
        };
        out.push((n, unit));
    }
    out
}

#[test]
fn every_number_in_a_why_is_the_issue_own_metric() {
    // Issue 28: the matrix column read (4096-byte stride) said "1024x the data it needs" (the stride over the
    // size); it moves 32 sectors of 32 bytes, 1024 bytes, for 128 used: 8x. Every "Why" sentence of every
    // issue of every preset is read back here, and each number with a unit must be the issue's own metric.
    let mut checked = 0;
    for p in presets::PRESETS.iter() {
        let sc = p.scenario();
        let r = sc.run().expect("runs");
        for (instr, i) in r.instructions.iter().enumerate() {
            let issues: u64 = i.passes.iter().map(|&x| u64::from(x)).sum();
            for issue in 0..issues.min(16) as usize {
                let Some(report) = sc.report(&r, instr, issue).expect("runs") else { continue };
                for line in warpscope::teach::explain::why(&report) {
                    let at = format!("{} instruction {instr} issue {issue}: {line}", p.name);
                    for (n, unit) in stated(&line) {
                        let ok = match (&report.cost, unit.as_str()) {
                            (warpscope::model::report::Cost::Memory(m), "x") => {
                                (n - (m.bytes_moved as f64 / m.bytes_unique as f64)).abs() < 0.051
                            }
                            (warpscope::model::report::Cost::Memory(m), "%") => {
                                (n - m.efficiency * 100.0).abs() < 0.051
                            }
                            (warpscope::model::report::Cost::Memory(m), "B") => n == m.bytes_moved as f64,
                            (warpscope::model::report::Cost::Memory(m), "sector" | "sectors") => {
                                n == f64::from(m.sectors) || n == m.bytes_unique.div_ceil(32) as f64
                            }
                            (warpscope::model::report::Cost::Memory(m), "bytes" | "byte") => {
                                [
                                m.bytes_requested,
                                m.bytes_unique,
                                m.bytes_moved,
                                u64::from(report.size),
                            ]
                            .contains(&(n as u64))
                                // a stride ("lanes are 4096 bytes apart") or an offset into a sector
                                || line.contains("apart") || line.contains("into a sector")
                            }
                            (warpscope::model::report::Cost::Banks(b), "wavefront" | "wavefronts") => {
                                n == f64::from(b.wavefronts) || line.contains(&format!("in {n} wavefronts"))
                            }
                            (warpscope::model::report::Cost::Banks(b), "bank") => n == f64::from(b.bank_conflicts),
                            (warpscope::model::report::Cost::Banks(b), "-way") => n == f64::from(b.conflict_degree),
                            (warpscope::model::report::Cost::Banks(b), "would") => n == f64::from(b.ideal_wavefronts),
                            (_, "active") => n == f64::from(report.active_lanes),
                            _ => true,
                        };
                        assert!(ok, "{at}: {n} {unit} is not the issue's metric");
                        checked += 1;
                    }
                }
            }
        }
    }
    // Every preset issue states its numbers; a change that stopped stating them would stop checking them.
    assert!(checked > 300, "only {checked} numbers were checked");
}

#[test]
fn a_column_read_moves_eight_times_the_data_it_uses() {
    // Issue 28's case, from the "matrix-row-vs-column" preset: lanes 4096 bytes apart, 4-byte floats, one
    // 32-byte sector each on CC 8.0 (docs/model.md#global-memory): 1,024 bytes moved for 128 used.
    let sc = presets::find("matrix-row-vs-column").expect("preset").scenario();
    let r = sc.run().expect("runs");
    let report = sc.report(&r, 1, 0).expect("runs").expect("an issue");
    let lines = warpscope::teach::explain::why(&report);
    assert!(
        lines.contains(
            &"Neighbouring lanes are 4096 bytes apart but each uses 4: the warp moves 1024 bytes for the 128 it uses (8x the data)."
                .to_string()
        ),
        "{lines:#?}"
    );
}

#[test]
fn every_preset_description_states_numbers_its_result_gives() {
    // The menu's description of each preset is written by hand; its sector, line, percentage, conflict and
    // wavefront counts are read back here and must be what the engine gives one of the preset's issues.
    use warpscope::model::report::Cost;
    for p in presets::PRESETS.iter() {
        let sc = p.scenario();
        let r = sc.run().expect("runs");
        let mut have: Vec<(f64, &str)> = Vec::new();
        for (instr, i) in r.instructions.iter().enumerate() {
            let issues: u64 = i.passes.iter().map(|&x| u64::from(x)).sum();
            for issue in 0..issues.min(64) as usize {
                let Some(report) = sc.report(&r, instr, issue).expect("runs") else { continue };
                for part in report.parts() {
                    match &part.cost {
                        Cost::Memory(m) => {
                            have.push((f64::from(m.sectors), "sectors"));
                            // "4 sectors of data": the sectors the bytes used fill when packed
                            have.push((m.bytes_unique.div_ceil(32) as f64, "sectors"));
                            have.push((f64::from(m.lines), "lines"));
                            have.push((m.efficiency * 100.0, "%"));
                        }
                        Cost::Banks(b) => {
                            have.push((f64::from(b.conflict_degree), "-way"));
                            have.push((f64::from(b.wavefronts), "wavefronts"));
                            // the other shared model's count, which the note gives beside it (docs/model.md#shared-memory-as-measured)
                            if let Some(o) = b.other_model_wavefronts {
                                have.push((f64::from(o), "wavefronts"));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        // The memory system's figures, for a preset that turns it on: the loads' L1 and L2 sectors and hits.
        if let Some(c) = &r.caches {
            for t in [&c.totals.l1, &c.totals.l2] {
                let loads = warpscope::model::cache::Totals::sum(t, &[0]);
                have.push((loads.sectors as f64, "sectors"));
                have.push((loads.hits as f64, "sectors"));
            }
            for rate in [c.totals.l1_load_hit_rate(), c.totals.l2_load_hit_rate()].into_iter().flatten() {
                have.push((rate, "%"));
            }
        }
        // A clause about other compute capabilities ("2-way on 2.x and 5.x+") is about another result.
        let own: Vec<&str> = p
            .explanation
            .split(", ")
            .flat_map(|c| c.split("; "))
            .flat_map(|c| c.split(": "))
            .filter(|c| !c.contains(".x"))
            .collect();
        for (n, unit) in own.iter().flat_map(|c| stated(c)) {
            let kind = match unit.as_str() {
                "sector" | "sectors" => "sectors",
                "line" | "lines" => "lines",
                "%" => "%",
                "-way" => "-way",
                "wavefront" | "wavefronts" => "wavefronts",
                _ => continue,
            };
            assert!(
                have.iter().any(|&(v, k)| k == kind && (v - n).abs() < 0.051),
                "preset {}: \"{n}{unit}\" is no issue's {kind} ({})",
                p.name,
                p.explanation
            );
        }
    }
}
