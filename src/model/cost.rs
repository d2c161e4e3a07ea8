//! The one entry point of the core: [`analyze`] one warp's memory instruction on one compute capability.
//!
//! It decides each lane's space (generic addresses by window), checks windows and alignment, then hands
//! each space's lanes to `global`, `shared` or `local` under the rule `arch` chose. It cannot fail: inputs
//! were validated when they were parsed.

use super::{global, shared};
use crate::model::access::{Base, Instr, LaneSet, Space, WarpAddrs, WARP_LANES};
use crate::model::arch::notes::Situation;
use crate::model::arch::{self, Cc};
use crate::model::count::{Counts, Part, PartCost};
use crate::model::note::Note;
use crate::model::report::{BankCost, Cost, MemoryCost, Report, SpaceTag, Warning, WarningKind};

pub use crate::model::config::Config;

fn push_unique(notes: &mut Vec<Note>, new: impl IntoIterator<Item = Note>) {
    for n in new {
        if !notes.iter().any(|m| m.id == n.id) {
            notes.push(n);
        }
    }
}

/// Analyses one warp-level memory instruction.
pub fn analyze(cc: Cc, instr: &Instr, warp: &WarpAddrs, cfg: &Config) -> Report {
    analyze_lanes(cc, instr, warp, None, cfg)
}

/// The model notes that touch one part of an issue: the rows of the notes table ([`arch::notes::NOTES`]) whose
/// condition holds for its CC, settings and addresses. The detailed report and the block totals both take
/// their notes here.
pub fn part_notes(cc: Cc, instr: &Instr, cfg: &Config, p: &Part) -> Vec<Note> {
    arch::notes::notes(&Situation {
        cc,
        space: p.space,
        base: instr.base,
        cop: instr.effective_cop(),
        size_bytes: instr.size_bytes,
        l1: cfg.l1,
        bank_mode: cfg.bank_mode,
        flags: p.flags,
        wavefronts: match &p.cost {
            PartCost::Banks(b) => b.wavefronts,
            PartCost::Memory(_) => 0,
        },
        alt_wavefronts: match &p.cost {
            PartCost::Banks(b) => b.other_model_wavefronts,
            PartCost::Memory(_) => 0,
        },
        shared_model: cfg.shared_model,
        uniform_hint: instr.uniform_hint,
    })
}

/// The notes of a whole issue: each part's, once each, in the order global, shared, local.
pub fn issue_notes(cc: Cc, instr: &Instr, cfg: &Config, c: &Counts) -> Vec<Note> {
    if let Some(k) = c.constant {
        return arch::notes::constant_notes(k);
    }
    let mut notes = Vec::new();
    for p in c.parts() {
        push_unique(&mut notes, part_notes(cc, instr, cfg, p));
    }
    notes
}

/// The warnings of an issue: lanes outside a window, misaligned lanes, stores to the same address.
pub fn warnings(instr: &Instr, cfg: &Config, c: &Counts) -> Vec<Warning> {
    let size = instr.size_bytes;
    let mut out = Vec::new();
    if !c.out_of_window.is_empty() {
        out.push(Warning {
            kind: WarningKind::OutOfWindow,
            lanes: c.out_of_window,
            text: format!(
                "lanes {} address memory outside the window or the allocation: on hardware they read 0 and raise an error; they move no data here",
                c.out_of_window.ranges()
            ),
        });
    }
    if !c.misaligned.is_empty() {
        let strict = cfg.strict_align && instr.base != Base::Ldg;
        out.push(Warning {
            kind: if strict { WarningKind::MisalignedError } else { WarningKind::Misaligned },
            lanes: c.misaligned,
            text: if strict {
                format!("lanes {} are not aligned to {size} bytes: with strict alignment they raise an error and move no data", c.misaligned.ranges())
            } else {
                format!("lanes {} are not aligned to {size} bytes: counted aligned down, as the instruction reference says the hardware forces them; CUDA reports such an access as a misaligned-address error that stops the kernel (docs/model.md#alignment-and-windows)", c.misaligned.ranges())
            },
        });
    }
    if !c.same_address.is_empty() {
        out.push(Warning {
            kind: WarningKind::SameAddressStore,
            lanes: c.same_address,
            text: format!(
                "lanes {} store to the same address: one undefined lane's value is written",
                c.same_address.ranges()
            ),
        });
    }
    out
}

/// Analyses one warp-level memory instruction whose generic address may come with an explicit `Plg`
/// predicate (the ST instruction reference): `plg` holds the lanes whose Plg is true ("local or global"); the others go to shared
/// memory. Without it (`None`), the address alone decides the space, as current hardware does.
///
/// The counts come from the same gathering and costing as [`crate::model::count::count`]; this path also records
/// the steps the animation shows, and the notes and warnings.
pub fn analyze_lanes(cc: Cc, instr: &Instr, warp: &WarpAddrs, plg: Option<LaneSet>, cfg: &Config) -> Report {
    analyze_with(cc, instr, warp, plg, None, cfg)
}

/// [`analyze_lanes`] with the global source addresses of a `cp.async` (`LDGSTS`, whose `warp` holds the
/// shared destinations): one report in two parts, the global read costed as a global load of the copy's
/// width and the shared write as a shared store of that width (docs/model.md#asynchronous-copies). The counts are
/// [`crate::model::count::count_with`]'s.
pub fn analyze_with(
    cc: Cc,
    instr: &Instr,
    warp: &WarpAddrs,
    plg: Option<LaneSet>,
    src: Option<&WarpAddrs>,
    cfg: &Config,
) -> Report {
    let warp = &WarpAddrs(std::array::from_fn(|l| warp.0[l].filter(|_| instr.lane_mask() >> l & 1 != 0)));
    let Some(src) = src else { return analyze_one(cc, instr, warp, plg, cfg) };
    let src = WarpAddrs(std::array::from_fn(|l| src.0[l].filter(|_| warp.0[l].is_some())));
    let mut read = analyze_one(cc, &instr.copy_source(), &src, None, cfg);
    read.op = instr.text.clone();
    // A lane whose read fails writes nothing.
    let dst = WarpAddrs(std::array::from_fn(|l| warp.0[l].filter(|_| !read.error_lanes.contains(l))));
    let write = analyze_one(cc, instr, &dst, None, cfg);
    if !write.error_lanes.is_empty() {
        let ok = WarpAddrs(std::array::from_fn(|l| src.0[l].filter(|_| !write.error_lanes.contains(l))));
        let warnings = read.warnings;
        read = analyze_one(cc, &instr.copy_source(), &ok, None, cfg);
        read.op = instr.text.clone();
        read.warnings = warnings;
    }
    let mut notes = Vec::new();
    push_unique(&mut notes, read.notes.iter().chain(&write.notes).cloned());
    // The warnings move to the whole copy, each saying which side it is about.
    let mut write = write;
    let side = |side: &str, ws: Vec<Warning>| {
        ws.into_iter().map(|w| Warning { text: format!("{side}: {}", w.text), ..w }).collect::<Vec<_>>()
    };
    let mut warnings = side("global source", std::mem::take(&mut read.warnings));
    warnings.extend(side("shared destination", std::mem::take(&mut write.warnings)));
    Report {
        cc,
        op: instr.text.clone(),
        space: SpaceTag::GlobalToShared,
        size: instr.size_bytes,
        active_lanes: write.active_lanes,
        addresses: vec![None; WARP_LANES],
        error_lanes: LaneSet(read.error_lanes.0 | write.error_lanes.0),
        cost: Cost::Split { parts: vec![read, write] },
        notes,
        warnings,
        atomic: None,
        served: Vec::new(),
    }
}

fn analyze_one(cc: Cc, instr: &Instr, warp: &WarpAddrs, plg: Option<LaneSet>, cfg: &Config) -> Report {
    let mut addrs = [0u64; WARP_LANES];
    let mut mask = 0u32;
    for (l, x) in warp.0.iter().enumerate() {
        if let Some(x) = x {
            addrs[l] = *x;
            mask |= 1 << l;
        }
    }
    if instr.base.is_constant() {
        let (k, by_addr) = crate::model::count::ConstCounts::of(&addrs, mask, instr.size_bytes);
        let align = !(u64::from(instr.size_bytes) - 1);
        return Report {
            cc,
            op: instr.text.clone(),
            space: SpaceTag::Constant,
            size: instr.size_bytes,
            active_lanes: mask.count_ones(),
            cost: Cost::Constant(crate::model::report::ConstantCost {
                passes: k.passes,
                lines_64: k.lines_64,
                constant_passes: by_addr
                    .into_iter()
                    .map(|(addr, lanes)| crate::model::report::ConstantPass { addr, lanes })
                    .collect(),
            }),
            error_lanes: LaneSet::default(),
            addresses: warp.0.iter().map(|a| a.map(|a| a & align)).collect(),
            notes: arch::notes::constant_notes(k),
            warnings: Vec::new(),
            atomic: None,
            served: Vec::new(),
        };
    }
    let mut g = crate::model::count::gather(instr, &addrs, mask, plg.map(|p| p.0), cfg);
    let mut counts =
        Counts { error_lanes: g.errors, misaligned: g.misaligned, out_of_window: g.out_of_window, ..Counts::default() };
    let mut parts: Vec<Report> = Vec::new();
    for space in [Space::Global, Space::Shared, Space::Local] {
        if !g.spaces[space as usize] {
            continue;
        }
        let lanes = &mut g.lanes[space as usize];
        let mut tx = global::Steps::default();
        let mut waves = shared::Phases::default();
        let p = crate::model::count::part(cc, instr, space, lanes, cfg, &mut tx, &mut waves);
        counts.parts[space as usize] = Some(p);
        let cost = match p.cost {
            PartCost::Banks(b) => Cost::Banks(BankCost {
                wavefronts: b.wavefronts,
                ideal_wavefronts: b.ideal_wavefronts,
                bank_conflicts: b.wavefronts - b.ideal_wavefronts,
                conflict_degree: b.conflict_degree,
                banks: shared::BANKS,
                bank_bytes: b.bank_bytes,
                other_model_wavefronts: (b.other_model_wavefronts != 0).then_some(b.other_model_wavefronts),
                phases: waves.0,
            }),
            PartCost::Memory(m) => Cost::Memory(MemoryCost {
                requests: m.requests,
                lines: m.lines,
                sectors: m.sectors,
                transactions: m.transactions,
                transaction_bytes: m.transaction_bytes,
                bytes_requested: m.bytes_requested,
                bytes_unique: m.bytes_unique,
                bytes_moved: m.bytes_moved,
                efficiency: crate::model::report::ratio(m.bytes_unique, m.bytes_moved),
                sectors_per_request: crate::model::report::ratio(u64::from(m.sectors), u64::from(m.requests)),
                path: m.path,
                steps: tx.0,
            }),
        };
        parts.push(Report {
            cc,
            op: instr.text.clone(),
            space: space.into(),
            size: instr.size_bytes,
            active_lanes: p.active_lanes,
            cost,
            error_lanes: LaneSet::default(),
            addresses: lanes.to_options().to_vec(),
            notes: part_notes(cc, instr, cfg, &p),
            warnings: Vec::new(),
            atomic: None,
            served: Vec::new(),
        });
    }
    if instr.is_store() {
        counts.same_address = crate::model::count::same_address(&g);
    }
    let mut report = if parts.len() == 1 {
        parts.remove(0)
    } else {
        let mut notes = Vec::new();
        for p in &parts {
            push_unique(&mut notes, p.notes.iter().cloned());
        }
        Report {
            cc,
            op: instr.text.clone(),
            space: SpaceTag::Generic,
            size: instr.size_bytes,
            active_lanes: parts.iter().map(|p| p.active_lanes).sum(),
            addresses: vec![None; WARP_LANES],
            cost: Cost::Split { parts },
            error_lanes: LaneSet::default(),
            notes,
            warnings: Vec::new(),
            atomic: None,
            served: Vec::new(),
        }
    };
    report.error_lanes = counts.error_lanes;
    report.warnings = warnings(instr, cfg, &counts);
    if instr.base.is_atomic() {
        report.atomic =
            Some(crate::model::count::AtomicCounts::of(&addrs, mask & !counts.error_lanes.0, instr.size_bytes));
    }
    report
}
