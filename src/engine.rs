//! The one entry point of the core: [`analyze`] one warp's memory instruction on one compute capability.
//!
//! It decides each lane's space (generic addresses by window), checks windows and alignment, then hands
//! each space's lanes to `global`, `shared` or `local` under the rule `arch` chose. It cannot fail: inputs
//! were validated when they were parsed.

use crate::access::{Base, Instr, LaneSet, Space, WarpAddrs, WARP_LANES};
use crate::arch::{self, BankMode, Cc, L1Choice, MemoryAccess};
use crate::report::{Cost, Note, Report, SpaceTag, Warning, WarningKind};
use crate::{global, local, shared};
use serde::Serialize;

/// Bytes in the shared and in the local window (seeds/000: "Each address window is 16 MB in size").
pub const WINDOW_BYTES: u64 = 16 << 20;
/// Default generic address of the shared window (MODEL.md: high in the generic space, so small example
/// addresses are global).
pub const DEFAULT_SHARED_WINDOW: u64 = 0x0000_7F00_0000_0000;
/// Default generic address of the local window.
pub const DEFAULT_LOCAL_WINDOW: u64 = 0x0000_7F00_0100_0000;

/// Where the shared and local windows sit in the generic address space, and how much of each is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Windows {
    /// Generic address of the start of the shared window.
    pub shared_base: u64,
    /// Generic address of the start of the local window.
    pub local_base: u64,
    /// Shared bytes allocated per block; lanes past it are error lanes. `None`: the whole window.
    pub shared_alloc_bytes: Option<u64>,
    /// Local bytes allocated per thread; lanes past it are error lanes. `None`: the whole window.
    pub local_alloc_bytes: Option<u64>,
}

impl Default for Windows {
    fn default() -> Windows {
        Windows {
            shared_base: DEFAULT_SHARED_WINDOW,
            local_base: DEFAULT_LOCAL_WINDOW,
            shared_alloc_bytes: None,
            local_alloc_bytes: None,
        }
    }
}

/// Settings that change the result, besides the CC and the instruction. A config struct, not bool
/// parameters, so that call sites say what they mean.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Config {
    /// `-Xptxas -dlcm=ca|cg`, or the CC's default.
    pub l1: L1Choice,
    /// Kepler's bank mode (4-byte is the default; a no-op elsewhere).
    pub bank_mode: BankMode,
    /// Misaligned lanes of LDL/LDS/ST/STS/STL/LD become error lanes instead of warnings (seeds/000: they "can
    /// optionally raise an error"). LDG always aligns silently (seeds/001).
    pub strict_align: bool,
    /// The windows.
    pub windows: Windows,
}

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

/// Each lane's space and aligned address within it, and the lanes with problems. Shared by [`analyze`] and
/// [`crate::count::count`] so the detailed and the fast path always agree.
pub struct Classified {
    /// Per space (global, shared, local), each lane's aligned address within that space; only the lanes in
    /// `masks` are meaningful.
    pub addrs: [[u64; WARP_LANES]; 3],
    /// Per space, the lanes that go there.
    pub masks: [LaneSet; 3],
    /// Lanes that move no data.
    pub errors: LaneSet,
    /// Lanes outside their window or allocation.
    pub out_of_window: LaneSet,
    /// Lanes whose address was not a multiple of the access size.
    pub misaligned: LaneSet,
}

/// Decides each lane's space (generic addresses by window, or by an explicit Plg), checks windows and
/// allocations, and aligns addresses down.
pub fn classify(instr: &Instr, warp: &WarpAddrs, plg: Option<LaneSet>, cfg: &Config) -> Classified {
    let size = u64::from(instr.size_bytes);
    let win = cfg.windows;
    let mut errors = LaneSet::default();
    let mut out_of_window = LaneSet::default();
    let mut misaligned = LaneSet::default();
    let mut addrs = [[0u64; WARP_LANES]; 3];
    let mut masks = [LaneSet::default(); 3];
    // What is the same for every lane is decided once.
    let fixed = instr.base.fixed_space();
    let limits = [
        u64::MAX,
        win.shared_alloc_bytes.map_or(WINDOW_BYTES, |a| a.min(WINDOW_BYTES)),
        win.local_alloc_bytes.map_or(WINDOW_BYTES, |a| a.min(WINDOW_BYTES)),
    ];
    let strict = cfg.strict_align && instr.base != Base::Ldg;
    let align_mask = !(size - 1);
    // The common case, a global-only instruction: no windows, no limits.
    if fixed == Some(Space::Global) {
        let (a, m) = (&mut addrs[0], &mut masks[0]);
        for (lane, addr) in warp.0.iter().enumerate() {
            let Some(addr) = *addr else { continue };
            let aligned = addr & align_mask;
            if aligned != addr {
                misaligned.insert(lane);
                if strict {
                    errors.insert(lane);
                    continue;
                }
            }
            a[lane] = aligned;
            m.insert(lane);
        }
        return Classified { addrs, masks, errors, out_of_window, misaligned };
    }
    for (lane, addr) in warp.0.iter().enumerate() {
        let Some(addr) = *addr else { continue };
        // Which space, and the address within it.
        let in_window = |base: u64| addr.checked_sub(base).filter(|&off| off < WINDOW_BYTES);
        let (space, offset) = match (fixed, plg) {
            (Some(space), _) => (space, addr),
            // Plg false: the lane goes to shared memory whatever its address says; outside the window it
            // is an error lane.
            (None, Some(p)) if !p.contains(lane) => {
                let base = if instr.extended { win.shared_base } else { win.shared_base & 0xFFFF_FFFF };
                match addr.checked_sub(base) {
                    Some(off) => (Space::Shared, off),
                    None => (Space::Shared, u64::MAX - size),
                }
            }
            (None, Some(_)) if instr.extended => match in_window(win.local_base) {
                Some(off) => (Space::Local, off),
                None => (Space::Global, addr),
            },
            (None, Some(_)) => (Space::Global, addr),
            (None, None) if instr.extended => match (in_window(win.shared_base), in_window(win.local_base)) {
                (Some(off), _) => (Space::Shared, off),
                (_, Some(off)) => (Space::Local, off),
                _ => (Space::Global, addr),
            },
            // A 32-bit generic address is always global: the windows sit above 4 GB.
            (None, None) => (Space::Global, addr),
        };
        if space != Space::Global && offset.saturating_add(size) > limits[space as usize] {
            out_of_window.insert(lane);
            errors.insert(lane);
            continue;
        }
        // Sizes are powers of two: a mask aligns down without a 64-bit division per lane.
        let aligned = offset & align_mask;
        if aligned != offset {
            misaligned.insert(lane);
            if strict {
                errors.insert(lane);
                continue;
            }
        }
        addrs[space as usize][lane] = aligned;
        masks[space as usize].insert(lane);
    }

    Classified { addrs, masks, errors, out_of_window, misaligned }
}

impl Classified {
    /// One space's lanes as optional addresses.
    pub fn offsets(&self, space: Space) -> [Option<u64>; WARP_LANES] {
        let (a, m) = (&self.addrs[space as usize], self.masks[space as usize]);
        std::array::from_fn(|l| m.contains(l).then_some(a[l]))
    }
}

/// Analyses one warp-level memory instruction whose generic address may come with an explicit `Plg`
/// predicate (seeds/004): `plg` holds the lanes whose Plg is true ("local or global"); the others go to shared
/// memory. Without it (`None`), the address alone decides the space, as current hardware does.
pub fn analyze_lanes(cc: Cc, instr: &Instr, warp: &WarpAddrs, plg: Option<LaneSet>, cfg: &Config) -> Report {
    let size = u64::from(instr.size_bytes);
    let mut warnings = Vec::new();
    let cl = classify(instr, warp, plg, cfg);
    let (errors, out_of_window, misaligned) = (cl.errors, cl.out_of_window, cl.misaligned);
    let per_space = [cl.offsets(Space::Global), cl.offsets(Space::Shared), cl.offsets(Space::Local)];

    if !out_of_window.is_empty() {
        warnings.push(Warning {
            kind: WarningKind::OutOfWindow,
            lanes: out_of_window,
            text: format!(
                "lanes {} address memory outside the window or the allocation: on hardware they read 0 and raise an error; they move no data here",
                out_of_window.ranges()
            ),
        });
    }
    if !misaligned.is_empty() {
        let strict = cfg.strict_align && instr.base != Base::Ldg;
        warnings.push(Warning {
            kind: if strict { WarningKind::MisalignedError } else { WarningKind::Misaligned },
            lanes: misaligned,
            text: if strict {
                format!("lanes {} are not aligned to {size} bytes: with strict alignment they raise an error and move no data", misaligned.ranges())
            } else {
                format!("lanes {} are not aligned to {size} bytes: the hardware forces them down to the aligned address", misaligned.ranges())
            },
        });
    }
    if instr.is_store() {
        let overlapping = same_address_lanes(&per_space);
        if !overlapping.is_empty() {
            warnings.push(Warning {
                kind: WarningKind::SameAddressStore,
                lanes: overlapping,
                text: format!(
                    "lanes {} store to the same address: one undefined lane's value is written",
                    overlapping.ranges()
                ),
            });
        }
    }

    let spaces = [Space::Global, Space::Shared, Space::Local];
    let mut parts: Vec<Report> = match instr.base.fixed_space() {
        Some(space) => vec![part(cc, instr, space, &per_space[space as usize], cfg)],
        None => spaces
            .iter()
            .filter(|&&s| per_space[s as usize].iter().any(Option::is_some))
            .map(|&s| part(cc, instr, s, &per_space[s as usize], cfg))
            .collect(),
    };
    if parts.is_empty() {
        parts.push(part(cc, instr, Space::Global, &[None; WARP_LANES], cfg));
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
            addresses: warp.0.iter().map(|_| None).collect(),
            cost: Cost::Split { parts },
            error_lanes: LaneSet::default(),
            notes,
            warnings: Vec::new(),
        }
    };
    report.error_lanes = errors;
    report.warnings = warnings;
    report
}

/// Lanes whose stores overlap another lane's bytes in the same space.
fn same_address_lanes(per_space: &[[Option<u64>; WARP_LANES]; 3]) -> LaneSet {
    let mut out = LaneSet::default();
    // Local offsets are per thread: equal offsets of different lanes are different bytes after interleaving.
    for addrs in &per_space[..Space::Local as usize] {
        for (i, a) in addrs.iter().enumerate() {
            let Some(a) = a else { continue };
            if addrs.iter().enumerate().any(|(j, b)| j != i && b == &Some(*a)) {
                out.insert(i);
            }
        }
    }
    out
}

/// The report for the lanes of one space.
fn part(cc: Cc, instr: &Instr, space: Space, offsets: &[Option<u64>; WARP_LANES], cfg: &Config) -> Report {
    let mut notes = Vec::new();
    let active = offsets.iter().filter(|a| a.is_some()).count() as u32;
    let (cost, addresses) = match space {
        Space::Shared => {
            let rule = arch::bank_rule(cc, instr.size_bytes, cfg.bank_mode, Some(&mut notes));
            let banks = shared::cost(rule, offsets, instr.size_bytes);
            arch::shared_exceptions(cc, instr.size_bytes, offsets, banks.wavefronts, Some(&mut notes));
            (Cost::Banks(banks), offsets.to_vec())
        }
        Space::Global | Space::Local => {
            let mut phys = *offsets;
            if space == Space::Local {
                for (lane, a) in phys.iter_mut().enumerate() {
                    *a = a.map(|off| local::interleave(off, lane, instr.size_bytes));
                }
                notes.push(Note {
                    id: "local-interleave",
                    text: if instr.size_bytes > 4 {
                        "Local memory interleaves consecutive words across lanes; the layout of 64- and 128-bit local values is not documented, so warpscope interleaves at the access width".into()
                    } else {
                        "Local memory interleaves consecutive 32-bit words across lanes, so lanes reading the same per-thread address are coalesced".into()
                    },
                    source: "PG, Local Memory; MODEL.md section C",
                });
            }
            let acc =
                MemoryAccess { space, base: instr.base, cop: instr.effective_cop(), size_bytes: instr.size_bytes };
            let rule = arch::memory_rule(cc, acc, cfg.l1, Some(&mut notes));
            let m = global::cost(rule, &phys, instr.size_bytes);
            let mut tx_addrs: Vec<u64> = m.steps.iter().flat_map(|r| r.transactions.iter().map(|t| t.addr)).collect();
            let all = tx_addrs.len();
            tx_addrs.sort_unstable();
            tx_addrs.dedup();
            if tx_addrs.len() < all {
                notes.push(Note {
                    id: "split-double-count",
                    text: "The warp was split into half- or quarter-warp requests and one block is charged in more than one request: that is the documented cost (each request is broken into cache-line requests issued independently)".into(),
                    source: "PG-5.0 F.4.2",
                });
            }
            if m.bytes_moved > m.bytes_unique {
                notes.push(Note {
                    id: "counts-not-performance",
                    text: "These counts are per warp, not performance: neighbouring warps often reuse the same lines from cache (the Best Practices Guide's misaligned copy reaches about 9/10 of peak bandwidth, not the 4/5 the sector count suggests)".into(),
                    source: "BPG 9.2.1.2",
                });
            }
            (Cost::Memory(m), phys.to_vec())
        }
    };
    if instr.uniform_hint {
        push_unique(
            &mut notes,
            [Note {
                id: "uniform-hint",
                text: "The .U uniform hint tells the hardware that addresses are likely uniform (or equal in lane pairs); it does not change the counts warpscope models".into(),
                source: "seeds/000 (.U), seeds/001 (.U.128)",
            }],
        );
    }
    Report {
        cc,
        op: instr.text.clone(),
        space: space.into(),
        size: instr.size_bytes,
        active_lanes: active,
        cost,
        error_lanes: LaneSet::default(),
        addresses,
        notes,
        warnings: Vec::new(),
    }
}
