//! Explanations and suggested fixes for one warp issue: which lanes cause each excess sector or bank conflict,
//! and edits that would help. Every suggestion that changes the scenario is checked by running it: it is
//! offered only if the engine says it costs less.

use crate::analysis::ProgramResult;
use crate::lang::Lang;
use crate::model::access::LaneSet;
use crate::model::arch::L1Choice;
use crate::model::report::{Cost, Report};
use crate::scenario::Scenario;
use crate::text::{hex, plural};
use serde::{Deserialize, Serialize};

/// A change the page can apply with one click.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fix {
    /// Replace the pattern text.
    Text(String),
    /// Change the instruction.
    Op(String),
    /// Change the L1 choice.
    L1(L1Choice),
    /// Change the instruction and the pattern together (a wider access).
    OpText(String, String),
}

/// A suggested change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suggestion {
    /// What to do, in a few words.
    pub title: String,
    /// Why it helps, with the numbers the engine measured for it.
    pub why: String,
    /// The change, when it can be applied automatically.
    pub fix: Option<Fix>,
}

/// The explanation of one issue.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Explanation {
    /// Sentences, most important first.
    pub lines: Vec<String>,
    /// Suggested changes, best first.
    pub suggestions: Vec<Suggestion>,
}

/// `moved` over `used` as a multiplier: "8x", "1.5x".
fn times(moved: u64, used: u64) -> String {
    let r = moved as f64 / used.max(1) as f64;
    if (r - r.round()).abs() < 1e-9 {
        format!("{}x", r.round())
    } else {
        format!("{r:.1}x")
    }
}

/// A fraction as a percentage, with one decimal where it is not whole: "80", "12.5".
fn percent(f: f64) -> String {
    let p = f * 100.0;
    if (p - p.round()).abs() < 0.05 {
        format!("{}", p.round())
    } else {
        format!("{p:.1}")
    }
}

/// The per-lane addresses of a report as (lane, address).
fn active(report: &Report) -> Vec<(usize, u64)> {
    report.addresses.iter().enumerate().filter_map(|(l, a)| a.map(|a| (l, a))).collect()
}

/// If the active lanes' addresses are `base + stride * lane`, returns (base, stride).
fn affine(points: &[(usize, u64)]) -> Option<(i128, i128)> {
    let (&(l0, a0), rest) = points.split_first()?;
    let (l1, a1) = *rest.first()?;
    let stride = (i128::from(a1) - i128::from(a0)) / (l1 as i128 - l0 as i128);
    let base = i128::from(a0) - stride * l0 as i128;
    points.iter().all(|&(l, a)| base + stride * l as i128 == i128::from(a)).then_some((base, stride))
}

/// An instruction's cost: wavefronts, or transactions, summed over the block.
fn cost(i: &crate::analysis::InstrResult) -> Option<u64> {
    i.banks.as_ref().map(|b| b.wavefronts).or_else(|| i.memory.as_ref().map(|m| m.transactions))
}

/// The cost the selected instruction has in another scenario.
fn cost_of(sc: &Scenario, instr: usize) -> Option<u64> {
    sc.run().ok()?.instructions.get(instr).and_then(cost)
}

/// Explains one issue (`report`) of instruction `instr` of `result`, the scenario's current result: why it
/// costs what it does, and the fixes that lower the cost (each checked by running it).
pub fn explain(sc: &Scenario, result: &ProgramResult, instr: usize, report: &Report) -> Explanation {
    Explanation { lines: why(report), suggestions: fixes(sc, result, instr, report) }
}

/// Why an issue costs what it does, in sentences, most important first. It reads only the report,
/// so the page shows it at once; [`fixes`] runs the scenario again and comes after.
pub fn why(report: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    let points = active(report);
    let size = u64::from(report.size);
    match &report.cost {
        Cost::Memory(m) => {
            let requested = m.bytes_requested;
            // The fewest sectors the bytes the warp uses fit in (lanes that share an address need it once).
            let ideal = m.bytes_unique.div_ceil(32).max(u64::from(points.len().min(1) as u32));
            lines.push(format!(
                "{} request {requested} bytes; they touch {} bytes in {}, {} B moved ({}% efficiency).",
                plural(u64::from(report.active_lanes), "active lane"),
                m.bytes_unique,
                plural(u64::from(m.sectors), "sector"),
                m.bytes_moved,
                percent(m.efficiency)
            ));
            if u64::from(m.sectors) > ideal && points.len() > 1 {
                lines.push(format!(
                    "Packed and aligned, {} would fit in {}.",
                    plural(m.bytes_unique, "byte"),
                    plural(ideal, "sector")
                ));
                // Which transactions carry few useful bytes.
                let mut partial = Vec::new();
                for r in &m.steps {
                    for t in &r.transactions {
                        let useful: u64 = points
                            .iter()
                            .filter(|(_, a)| *a >= t.addr && *a < t.addr + u64::from(t.bytes))
                            .map(|_| size)
                            .sum::<u64>()
                            .min(u64::from(t.bytes));
                        if useful < u64::from(t.bytes) / 2 {
                            partial.push(format!(
                                "{} at {} carries {} for {}",
                                if t.bytes == 128 { "the line" } else { "the sector" },
                                hex(t.addr),
                                plural(useful, "useful byte"),
                                t.lanes.phrase()
                            ));
                        }
                    }
                }
                for p in partial.iter().take(4) {
                    lines.push(format!("{}{}.", p[..1].to_ascii_uppercase(), &p[1..]));
                }
                if partial.len() > 4 {
                    lines.push(format!("… and {} more sparsely used transactions.", partial.len() - 4));
                }
            }
            match affine(&points) {
                Some((_, 0)) => {
                    lines.push("Every lane reads the same address: one transaction serves the warp.".into())
                }
                Some((base, stride)) if stride == i128::from(size) && base % 32 != 0 => {
                    lines.push(format!("The warp is contiguous but starts {} bytes into a sector: it straddles one more sector than it needs.", base % 32));
                }
                Some((_, stride)) if stride.unsigned_abs() > u128::from(size) && m.bytes_moved > m.bytes_unique => {
                    lines.push(format!(
                        "Neighbouring lanes are {} bytes apart but each uses {size}: the warp moves {} bytes for the {} it uses ({} the data).",
                        stride.abs(),
                        m.bytes_moved,
                        m.bytes_unique,
                        times(m.bytes_moved, m.bytes_unique)
                    ));
                }
                _ => {}
            }
        }
        Cost::Banks(b) => {
            if b.bank_conflicts == 0 {
                lines.push(format!(
                    "{} for {} active lanes: no bank conflicts, every phase takes the fewest wavefronts its bytes allow.",
                    plural(u64::from(b.wavefronts), "wavefront"),
                    report.active_lanes
                ));
            } else {
                lines.push(format!(
                    "{} where {} would do: {}, worst {}-way.",
                    plural(u64::from(b.wavefronts), "wavefront"),
                    b.ideal_wavefronts,
                    plural(u64::from(b.bank_conflicts), "bank conflict"),
                    b.conflict_degree
                ));
            }
            // In the worst phase, how many wavefronts each bank is needed in (the CC's bank rule decided which
            // words share a pass), and which lanes make the busiest bank busy.
            if let Some(ph) = b.phases.iter().max_by_key(|p| p.wavefronts.len()).filter(|p| p.wavefronts.len() > 1) {
                let mut load = [0u32; 64];
                for w in &ph.wavefronts {
                    // The banks this wavefront uses, each once (words are in bank order).
                    let mut banks: Vec<u32> = w.words.iter().map(|x| x.bank).collect();
                    banks.dedup();
                    for bk in banks {
                        load[bk as usize % 64] += 1;
                    }
                }
                let worst = load.iter().copied().max().unwrap_or(0);
                if worst > 1 {
                    let busy: Vec<usize> = (0..64).filter(|&k| load[k] == worst).collect();
                    let bank = busy[0] as u32;
                    let mut lanes_of = LaneSet::default();
                    for w in &ph.wavefronts {
                        for word in w.words.iter().filter(|x| x.bank == bank) {
                            for l in w.lanes.iter() {
                                if report.addresses[l].is_some_and(|a| a < word.addr + 4 && word.addr < a + size) {
                                    lanes_of.insert(l);
                                }
                            }
                        }
                    }
                    let others =
                        if busy.len() > 1 { format!(" ({} banks are this busy)", busy.len()) } else { String::new() };
                    lines.push(format!(
                        "Bank {bank} holds different words for {}, so it is needed in {worst} wavefronts of one phase{others}.",
                        lanes_of.phrase()
                    ));
                }
            }
        }
        Cost::Constant(k) => {
            lines.push(format!(
                "{} read {}: the constant cache serves one address per pass, so the warp takes {}.",
                plural(u64::from(report.active_lanes), "active lane"),
                plural(u64::from(k.passes), "distinct address"),
                plural(u64::from(k.passes), "pass")
            ));
            if k.passes > 1 {
                lines.push("Constant memory is fast when every lane of a warp reads the same address; per-thread indices serialize.".into());
            }
        }
        Cost::Split { parts } => {
            let spaces: Vec<String> = parts
                .iter()
                .map(|p| format!("{} lane(s) to {:?}", p.active_lanes, p.space).to_ascii_lowercase())
                .collect();
            lines.push(format!(
                "This generic access splits: {}. Each part is costed in its own memory.",
                spaces.join(", ")
            ));
        }
    }
    lines
}

/// Changes that would lower the cost of instruction `instr`, best first. Every one that edits the scenario
/// was run and is offered only if the engine says it costs less; advice without an edit is offered when the
/// pattern calls for it.
pub fn fixes(sc: &Scenario, result: &ProgramResult, instr: usize, report: &Report) -> Vec<Suggestion> {
    let mut out = Vec::new();
    let base_cost = result.instructions.get(instr).and_then(cost);
    let try_text = |out: &mut Vec<Suggestion>, title: String, text: String, unit: &str| {
        let mut cand = sc.clone();
        cand.text = text.clone();
        if let (Some(new), Some(old)) = (cost_of(&cand, instr), base_cost) {
            if new < old {
                out.push(Suggestion {
                    title,
                    why: format!("{unit}: {old} → {new} over the block"),
                    fix: Some(Fix::Text(text)),
                });
            }
        }
    };
    // Expression patterns of one warp can be rewritten as another expression.
    let one_warp_expr = sc.lang == Lang::Expr && sc.launch().is_ok_and(|l| l.warps() == 1);
    let points = active(report);
    let size = u64::from(report.size);
    match &report.cost {
        Cost::Memory(m) => {
            match affine(&points) {
                Some((base, stride)) if stride == i128::from(size) && base % 32 != 0 && one_warp_expr => {
                    let aligned = base - base % 128;
                    try_text(
                        &mut out,
                        "Align the start to 128 bytes".into(),
                        format!("{size}*lane + {aligned:#x}"),
                        "transactions",
                    );
                }
                Some((base, stride)) if stride.unsigned_abs() > u128::from(size) => {
                    out.push(Suggestion {
                        title: "Store the values each warp reads next to each other".into(),
                        why: "Make consecutive lanes read consecutive elements: a struct of arrays instead of an array of structs, or stage the data through shared memory and read it there.".into(),
                        fix: None,
                    });
                    if one_warp_expr {
                        try_text(
                            &mut out,
                            format!("Read with a stride of {size} bytes"),
                            format!("{size}*lane + {base:#x}"),
                            "transactions",
                        );
                    }
                }
                _ => {}
            }
            // A coalesced narrow load: a vector type moves the same bytes with fewer instructions.
            if let (Some((base, stride)), Lang::Expr) = (affine(&points), sc.lang) {
                if stride == i128::from(size) && size < 16 && base % 16 == 0 {
                    if let Some(wide) = sc.instr().ok().and_then(|i| i.with_size(16)) {
                        out.push(Suggestion {
                            title: "Use a 16-byte vector type (float4 / int4)".into(),
                            why: format!("each lane moves 16 bytes instead of {size}: the same data in {}x fewer load instructions, still fully coalesced", 16 / size.max(1)),
                            fix: Some(Fix::OpText(wide.text, format!("16*lane + {base:#x}"))),
                        });
                    }
                }
            }
            // A CUDA access whose fastest-moving index is not threadIdx.x: swap the index terms.
            if sc.lang == Lang::Cuda {
                if let Some(access) = result.instructions.get(instr).map(|i| i.access.clone()) {
                    if let Some(swapped) = swap_index(&access) {
                        if let Some(pos) = sc.text.find(&access) {
                            let text = format!("{}{swapped}{}", &sc.text[..pos], &sc.text[pos + access.len()..]);
                            try_text(
                                &mut out,
                                format!("Swap the index so threadIdx.x moves fastest: {swapped}"),
                                text,
                                "transactions",
                            );
                        }
                    }
                }
            }
            if m.transaction_bytes == 128 && m.efficiency < 0.5 && sc.config.l1 != L1Choice::Off {
                let mut cand = sc.clone();
                cand.config.l1 = L1Choice::Off;
                if let (Some(new), Some(old)) = (cost_of(&cand, instr).map(|t| t * 32), base_cost.map(|t| t * 128)) {
                    if new < old {
                        out.push(Suggestion {
                            title: "Cache this load in L2 only (-Xptxas -dlcm=cg or .CG)".into(),
                            why: format!("32-byte transactions instead of 128-byte lines: bytes moved {old} → {new} over the block"),
                            fix: Some(Fix::L1(L1Choice::Off)),
                        });
                    }
                }
            }
        }
        Cost::Banks(b) if b.bank_conflicts > 0 => {
            if let Some((base, stride)) = affine(&points) {
                if one_warp_expr && stride > 0 {
                    try_text(
                        &mut out,
                        format!("Pad the stride to {} bytes (an odd number of words)", stride + 4),
                        format!("{}*lane + {base:#x}", stride + 4),
                        "wavefronts",
                    );
                    if stride % 128 == 0 {
                        try_text(
                            &mut out,
                            "XOR-swizzle the word within the row (no padding)".into(),
                            format!("({base:#x} + {stride}*lane) ^ (4*(lane & 31))"),
                            "wavefronts",
                        );
                    }
                }
            }
            if sc.lang == Lang::Cuda {
                if let Some(padded) = pad_shared_array(&sc.text) {
                    try_text(&mut out, "Pad the shared array by one column".into(), padded, "wavefronts");
                }
            }
        }
        Cost::Banks(_) | Cost::Constant(_) | Cost::Split { .. } => {}
    }
    out
}

/// `m[threadIdx.x * N + c]` becomes `m[c * N + threadIdx.x]`: the term with threadIdx.x moves to the unit
/// stride. Only that simple shape is rewritten.
fn swap_index(access: &str) -> Option<String> {
    let open = access.find('[')?;
    let close = access.rfind(']')?;
    let index = &access[open + 1..close];
    let (a, b) = index.split_once('+')?;
    let (a, b) = (a.trim(), b.trim());
    let (p, q) = a.split_once('*')?;
    let (p, q) = (p.trim(), q.trim());
    if !p.contains("threadIdx.x") || b.contains("threadIdx.x") || q.contains("threadIdx") || b.contains('+') {
        return None;
    }
    Some(format!("{}[{b} * {q} + {p}]{}", &access[..open], &access[close + 1..]))
}

/// `__shared__ T name[A][B]` becomes `__shared__ T name[A][B + 1]` (the first two-dimensional shared array).
fn pad_shared_array(text: &str) -> Option<String> {
    let decl = text.find("__shared__")?;
    let open1 = decl + text[decl..].find('[')?;
    let close1 = open1 + text[open1..].find(']')?;
    let rest = &text[close1 + 1..];
    if !rest.trim_start().starts_with('[') {
        return None;
    }
    let open2 = close1 + 1 + rest.find('[')?;
    let close2 = open2 + text[open2..].find(']')?;
    let inner = text[open2 + 1..close2].trim();
    if inner.is_empty() || inner.ends_with("+ 1") || text[decl..open1].contains(';') {
        return None;
    }
    Some(format!("{}[{inner} + 1]{}", &text[..open2], &text[close2 + 1..]))
}
