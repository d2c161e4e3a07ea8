//! The counts of one warp-level instruction, computed on the allocation-free path: fixed-size arrays for the
//! 32 lanes, no notes, warnings or animation steps. Bulk users (programs, whole grids, benchmarks) call
//! [`count_lanes`] for every issue; the figure calls [`crate::model::cost::analyze`] for the one issue it draws.
//! Both gather lanes with [`gather`] and cost them with `global::cost` and `shared::cost`, the detailed path
//! only with recording sinks, so the numbers come from one set of rules.

use crate::model::access::WINDOW_BYTES;
use crate::model::access::{Base, Instr, LaneSet, Lanes, Second, Space, WarpAddrs, WARP_LANES};
use crate::model::arch::{self, Cc, MemoryAccess, SharedModel};
use crate::model::config::Config;
use crate::model::global::{self, MemCounts};
use crate::model::local;
use crate::model::shared::{self, BankCounts};

use crate::model::arch::notes::flags;
pub use crate::model::tally::{AtomicCounts, ConstCounts};

/// A space's share of an instruction's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartCost {
    /// Global or local memory.
    Memory(MemCounts),
    /// Shared memory.
    Banks(BankCounts),
}

/// One space's part of a warp-level instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// The space.
    pub space: Space,
    /// Lanes that moved data in it.
    pub active_lanes: u32,
    /// What it costs.
    pub cost: PartCost,
    /// [`flags`].
    pub flags: u8,
}

/// What one warp-level instruction costs, per space it reaches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Per space (global, shared, local), the part when the instruction reaches it. A fixed-space instruction
    /// always has its part (empty when no lane moved data); a generic one has a part per space its lanes
    /// reach, or an empty global part.
    pub parts: [Option<Part>; 3],
    /// Lanes that moved no data (outside a window or allocation, or misaligned under `--strict`).
    pub error_lanes: LaneSet,
    /// Lanes whose address was aligned down.
    pub misaligned: LaneSet,
    /// Lanes outside their window or allocation.
    pub out_of_window: LaneSet,
    /// For stores: lanes whose bytes another lane also writes (global and shared).
    pub same_address: LaneSet,
    /// A copy in one instruction (`cp.async`): its global and shared parts are the same lanes' read and
    /// write, so its active lanes are the shared part's, not the sum.
    pub copy: bool,
    /// For an atomic or reduction: its operations and their serialization (docs/model.md#atomics).
    pub atomic: Option<AtomicCounts>,
    /// For a constant-bank load: its passes (docs/model.md#constant-memory). It has no parts: it is not L1/TEX traffic.
    pub constant: Option<ConstCounts>,
}

/// The spaces' counts added together: the numbers a block total adds up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sums {
    /// Lanes that moved data.
    pub active_lanes: u32,
    /// Requests (global and local).
    pub requests: u32,
    /// Lines.
    pub lines: u32,
    /// Sectors.
    pub sectors: u32,
    /// Transactions.
    pub transactions: u32,
    /// Bytes requested.
    pub bytes_requested: u64,
    /// Unique bytes.
    pub bytes_unique: u64,
    /// Bytes moved.
    pub bytes_moved: u64,
    /// Wavefronts (shared).
    pub wavefronts: u32,
    /// Ideal wavefronts.
    pub ideal_wavefronts: u32,
    /// The worst phase.
    pub conflict_degree: u32,
}

impl Counts {
    /// The parts in the order global, shared, local.
    pub fn parts(&self) -> impl Iterator<Item = &Part> {
        self.parts.iter().flatten()
    }

    /// The spaces added together.
    pub fn sums(&self) -> Sums {
        let mut s = Sums::default();
        for p in self.parts() {
            if !(self.copy && p.space == Space::Global) {
                s.active_lanes += p.active_lanes;
            }
            match &p.cost {
                PartCost::Memory(m) => {
                    s.requests += m.requests;
                    s.lines += m.lines;
                    s.sectors += m.sectors;
                    s.transactions += m.transactions;
                    s.bytes_requested += m.bytes_requested;
                    s.bytes_unique += m.bytes_unique;
                    s.bytes_moved += m.bytes_moved;
                }
                PartCost::Banks(b) => {
                    s.wavefronts += b.wavefronts;
                    s.ideal_wavefronts += b.ideal_wavefronts;
                    s.conflict_degree = s.conflict_degree.max(b.conflict_degree);
                }
            }
        }
        s
    }

    /// The one-line summary, word for word what [`crate::model::report::Report::summary`] says for the same issue.
    pub fn summary(&self) -> String {
        if let Some(k) = self.constant {
            return crate::model::report::constant_summary(k.passes, k.lines_64);
        }
        let s = self.cost_summary();
        match self.atomic {
            Some(a) => format!("{s}; {}", crate::model::report::atomic_summary(a)),
            None => s,
        }
    }

    fn cost_summary(&self) -> String {
        let parts: Vec<&Part> = self.parts().collect();
        let one = |p: &Part| match &p.cost {
            PartCost::Memory(m) => crate::model::report::memory_summary(
                m.requests,
                m.lines,
                m.sectors,
                m.transactions,
                m.transaction_bytes,
                crate::model::report::ratio(m.bytes_unique, m.bytes_moved),
            ),
            PartCost::Banks(b) => {
                crate::model::report::bank_summary(b.wavefronts, b.ideal_wavefronts, b.conflict_degree)
            }
        };
        match parts.as_slice() {
            [p] => one(p),
            ps => ps
                .iter()
                .map(|p| {
                    format!("{:?}: {}", crate::model::report::SpaceTag::from(p.space), one(p)).to_ascii_lowercase()
                })
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    /// The detailed path's numbers in this form (flags read back from the report's notes), for tests that hold
    /// the two paths equal.
    pub fn of_report(r: &crate::model::report::Report) -> Counts {
        let copy = r.space == crate::model::report::SpaceTag::GlobalToShared;
        let mut c = Counts { error_lanes: r.error_lanes, copy, atomic: r.atomic, ..Counts::default() };
        if let crate::model::report::Cost::Constant(k) = &r.cost {
            c.constant = Some(ConstCounts { passes: k.passes, lines_64: k.lines_64, active_lanes: r.active_lanes });
        }
        for w in &r.warnings {
            match w.kind {
                crate::model::report::WarningKind::OutOfWindow => c.out_of_window = w.lanes,
                crate::model::report::WarningKind::Misaligned | crate::model::report::WarningKind::MisalignedError => {
                    c.misaligned = w.lanes
                }
                crate::model::report::WarningKind::SameAddressStore => c.same_address = w.lanes,
            }
        }
        for p in r.parts() {
            let has = |id: &str| p.notes.iter().any(|n| n.id == id);
            let mut f = 0u8;
            if has("split-double-count") {
                f |= flags::DOUBLE_COUNTED;
            }
            if has("counts-not-performance") {
                f |= flags::MOVED_UNUSED;
            }
            if has("shared-measured") || has("shared-documented") {
                f |= flags::MEASURED_MERGE;
            }
            if has("lds64-uniform-unverified") {
                f |= flags::LDS64_UNIFORM;
            }
            let space = match p.space {
                crate::model::report::SpaceTag::Shared => Space::Shared,
                crate::model::report::SpaceTag::Local => Space::Local,
                _ => Space::Global,
            };
            let cost = match &p.cost {
                crate::model::report::Cost::Memory(m) => PartCost::Memory(MemCounts {
                    requests: m.requests,
                    lines: m.lines,
                    sectors: m.sectors,
                    transactions: m.transactions,
                    transaction_bytes: m.transaction_bytes,
                    bytes_requested: m.bytes_requested,
                    bytes_unique: m.bytes_unique,
                    bytes_moved: m.bytes_moved,
                    double_counted: f & flags::DOUBLE_COUNTED != 0,
                    path: m.path,
                }),
                crate::model::report::Cost::Banks(b) => PartCost::Banks(BankCounts {
                    wavefronts: b.wavefronts,
                    ideal_wavefronts: b.ideal_wavefronts,
                    conflict_degree: b.conflict_degree,
                    bank_bytes: b.bank_bytes,
                    other_model_wavefronts: b.other_model_wavefronts.unwrap_or(0),
                }),
                crate::model::report::Cost::Split { .. } | crate::model::report::Cost::Constant(_) => continue,
            };
            c.parts[space as usize] = Some(Part { space, active_lanes: p.active_lanes, cost, flags: f });
        }
        c
    }
}

/// One issue's lanes sorted into spaces, aligned, and checked against windows and allocations.
pub struct Gathered {
    /// Per space (global, shared, local), the lanes that go there with their aligned addresses (offsets in
    /// the window for shared and local).
    pub lanes: [Lanes; 3],
    /// The spaces that have parts (see [`Counts::parts`]).
    pub spaces: [bool; 3],
    /// Lanes that move no data.
    pub errors: LaneSet,
    /// Lanes outside their window or allocation.
    pub out_of_window: LaneSet,
    /// Lanes aligned down.
    pub misaligned: LaneSet,
}

/// Decides each lane's space (a generic address by its window, or by an explicit Plg: `plg` holds the lanes
/// whose Plg is true, "local or global"), checks windows and allocations, and aligns addresses down. `addrs`
/// holds every lane's address; only the lanes of `mask` take part.
pub fn gather(instr: &Instr, addrs: &[u64; WARP_LANES], mask: u32, plg: Option<u32>, cfg: &Config) -> Gathered {
    let size = u64::from(instr.size_bytes);
    let win = cfg.windows;
    let mut g = Gathered {
        lanes: [Lanes::EMPTY; 3],
        spaces: [false; 3],
        errors: LaneSet::default(),
        out_of_window: LaneSet::default(),
        misaligned: LaneSet::default(),
    };
    let limits = [
        u64::MAX,
        win.shared_alloc_bytes.map_or(WINDOW_BYTES, |a| a.min(WINDOW_BYTES)),
        win.local_alloc_bytes.map_or(WINDOW_BYTES, |a| a.min(WINDOW_BYTES)),
    ];
    let strict = cfg.strict_align && instr.base != Base::Ldg;
    // Sizes are powers of two: a mask aligns down without a division per lane.
    let align_mask = !(size - 1);
    let fixed = instr.base.fixed_space();
    for (lane, &addr) in addrs.iter().enumerate() {
        if mask >> lane & 1 == 0 {
            continue;
        }
        let in_window = |base: u64| addr.checked_sub(base).filter(|&off| off < WINDOW_BYTES);
        let (space, offset) = match (fixed, plg) {
            (Some(space), _) => (space, addr),
            // Plg false: the lane goes to shared memory whatever its address says; outside the window it is an
            // error lane.
            (None, Some(p)) if p >> lane & 1 == 0 => {
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
            g.out_of_window.insert(lane);
            g.errors.insert(lane);
            continue;
        }
        let aligned = offset & align_mask;
        if aligned != offset {
            g.misaligned.insert(lane);
            if strict {
                g.errors.insert(lane);
                continue;
            }
        }
        g.lanes[space as usize].push(lane, aligned);
    }
    match fixed {
        Some(space) => g.spaces[space as usize] = true,
        None => {
            for s in 0..3 {
                g.spaces[s] = g.lanes[s].n > 0;
            }
            if !g.spaces.iter().any(|&x| x) {
                g.spaces[Space::Global as usize] = true;
            }
        }
    }
    g
}

/// The counts of one warp-level instruction: the lanes of `mask` are active, with addresses in `addrs`.
pub fn count_lanes(
    cc: Cc,
    instr: &Instr,
    addrs: &[u64; WARP_LANES],
    mask: u32,
    second: Second,
    cfg: &Config,
) -> Counts {
    let mask = mask & instr.lane_mask();
    if let Second::Src(src, reads) = second {
        return count_copy(cc, instr, addrs, src, mask, reads, cfg);
    }
    if instr.base.is_constant() {
        let (k, _) = ConstCounts::of(addrs, mask, instr.size_bytes);
        return Counts { constant: Some(k), ..Counts::default() };
    }
    if instr.base.is_atomic() {
        let mut c = if let Some(space) = instr.base.fixed_space() {
            count_fixed(cc, instr, space, addrs, mask, cfg)
        } else {
            count_generic(cc, instr, addrs, mask, second.plg(), cfg)
        };
        c.atomic = Some(AtomicCounts::of(addrs, mask & !c.error_lanes.0, instr.size_bytes));
        return c;
    }
    let plg = second.plg();
    if let (Some(space), false) = (instr.base.fixed_space(), instr.is_store()) {
        return count_fixed(cc, instr, space, addrs, mask, cfg);
    }
    count_generic(cc, instr, addrs, mask, plg, cfg)
}

/// A generic access or a store: lanes gathered into the spaces they reach.
fn count_generic(
    cc: Cc,
    instr: &Instr,
    addrs: &[u64; WARP_LANES],
    mask: u32,
    plg: Option<u32>,
    cfg: &Config,
) -> Counts {
    let mut g = gather(instr, addrs, mask, plg, cfg);
    let mut c =
        Counts { error_lanes: g.errors, misaligned: g.misaligned, out_of_window: g.out_of_window, ..Counts::default() };
    if instr.is_store() {
        c.same_address = same_address(&g);
    }
    for s in [Space::Global, Space::Shared, Space::Local] {
        if g.spaces[s as usize] {
            let lanes = &mut g.lanes[s as usize];
            c.parts[s as usize] = Some(part(cc, instr, s, lanes, cfg, &mut global::NoDetail, &mut shared::NoWaves));
        }
    }
    c
}

/// A `cp.async` (`LDGSTS`): its global read costed as a global load of its width from `src`, its shared write
/// as a shared store of that width to `dst` (docs/model.md#asynchronous-copies). A lane that fails on either side moves no data.
#[allow(clippy::too_many_arguments)]
fn count_copy(
    cc: Cc,
    instr: &Instr,
    dst: &[u64; WARP_LANES],
    src: &[u64; WARP_LANES],
    mask: u32,
    reads: u32,
    cfg: &Config,
) -> Counts {
    // Lanes that do not read (src-size 0) still write their zeros to shared memory.
    let read = count_fixed(cc, &instr.copy_source(), Space::Global, src, mask & reads, cfg);
    let bad = read.error_lanes.0;
    let mut c = count_fixed(cc, instr, Space::Shared, dst, mask & !bad, cfg);
    let write_bad = c.error_lanes.0;
    c.parts[Space::Global as usize] = if write_bad & mask & reads & !bad != 0 {
        count_fixed(cc, &instr.copy_source(), Space::Global, src, mask & reads & !bad & !write_bad, cfg).parts[0]
    } else {
        read.parts[0]
    };
    c.copy = true;
    c.error_lanes.0 |= bad;
    c.misaligned.0 |= read.misaligned.0;
    c.out_of_window.0 |= read.out_of_window.0;
    c
}

/// The common case, a load from one fixed space: the same checks as [`gather`] for that space alone, into
/// one lane list (the fast path's inner loop, so it builds nothing it does not need).
fn count_fixed(cc: Cc, instr: &Instr, space: Space, addrs: &[u64; WARP_LANES], mask: u32, cfg: &Config) -> Counts {
    let size = u64::from(instr.size_bytes);
    let win = cfg.windows;
    let limit = match space {
        Space::Global => u64::MAX,
        Space::Shared => win.shared_alloc_bytes.map_or(WINDOW_BYTES, |a| a.min(WINDOW_BYTES)),
        Space::Local => win.local_alloc_bytes.map_or(WINDOW_BYTES, |a| a.min(WINDOW_BYTES)),
    };
    let strict = cfg.strict_align && instr.base != Base::Ldg;
    let align_mask = !(size - 1);
    let mut c = Counts::default();
    let mut l = Lanes::EMPTY;
    // A whole warp in its window and aligned (nearly every issue): the lanes in one pass the compiler can
    // vectorise, with the checks as reductions.
    if mask == u32::MAX {
        let outside = space != Space::Global && addrs.iter().any(|&a| a.saturating_add(size) > limit);
        let unaligned = addrs.iter().fold(0, |acc, &a| acc | (a & !align_mask));
        if !outside && unaligned == 0 {
            for k in 0..WARP_LANES {
                l.lane[k] = k as u8;
            }
            l.addr = *addrs;
            l.n = WARP_LANES;
            c.parts[space as usize] =
                Some(part(cc, instr, space, &mut l, cfg, &mut global::NoDetail, &mut shared::NoWaves));
            return c;
        }
    }
    let mut m = mask;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = addrs[lane];
        if space != Space::Global && a.saturating_add(size) > limit {
            c.out_of_window.insert(lane);
            c.error_lanes.insert(lane);
            continue;
        }
        let aligned = a & align_mask;
        if aligned != a {
            c.misaligned.insert(lane);
            if strict {
                c.error_lanes.insert(lane);
                continue;
            }
        }
        l.push(lane, aligned);
    }
    c.parts[space as usize] = Some(part(cc, instr, space, &mut l, cfg, &mut global::NoDetail, &mut shared::NoWaves));
    c
}

/// [`count_lanes`] for addresses as [`WarpAddrs`] holds them.
pub fn count(cc: Cc, instr: &Instr, warp: &WarpAddrs, plg: Option<LaneSet>, cfg: &Config) -> Counts {
    count_with(cc, instr, warp, plg, None, cfg)
}

/// [`count`] with the global source addresses of a `cp.async` (`src`, lanes as in `warp`).
pub fn count_with(
    cc: Cc,
    instr: &Instr,
    warp: &WarpAddrs,
    plg: Option<LaneSet>,
    src: Option<&WarpAddrs>,
    cfg: &Config,
) -> Counts {
    let reads = src.map_or(u32::MAX, |s| (0..WARP_LANES).filter(|&l| s.0[l].is_some()).fold(0u32, |m, l| m | 1 << l));
    let src = src.map(|s| std::array::from_fn(|l| s.0[l].unwrap_or(0)));
    let mut a = [0u64; WARP_LANES];
    let mut mask = 0u32;
    for (l, x) in warp.0.iter().enumerate() {
        if let Some(x) = x {
            a[l] = *x;
            mask |= 1 << l;
        }
    }
    let second = match (&src, plg) {
        (Some(s), _) => Second::Src(s, reads),
        (None, Some(p)) => Second::Plg(p.0),
        (None, None) => Second::None,
    };
    count_lanes(cc, instr, &a, mask, second, cfg)
}

/// Costs one space's lanes with the given sinks (the detailed path records, the fast path does not). Local
/// lanes are interleaved first, so `lanes` holds the addresses that were costed afterwards.
pub fn part<T: global::TxSink, W: shared::WaveSink>(
    cc: Cc,
    instr: &Instr,
    space: Space,
    lanes: &mut Lanes,
    cfg: &Config,
    tx: &mut T,
    waves: &mut W,
) -> Part {
    let size = instr.size_bytes;
    let active_lanes = lanes.n as u32;
    match space {
        Space::Shared => {
            let rule = arch::bank_rule(cc, size, cfg.bank_mode);
            // A shared atomic: every lane's read-modify-write is a pass (docs/model.md#atomics); POPC.INC counts a word once.
            if instr.base.is_atomic() && !instr.is_popc_inc() {
                let b = shared::cost_atomic(rule, lanes, size, waves);
                return Part { space, active_lanes, cost: PartCost::Banks(b), flags: 0 };
            }
            // ldmatrix/stmatrix take one phase per matrix, whatever the rows' addresses (docs/model.md#ldmatrix-and-stmatrix).
            let mut flags = if instr.base.is_matrix() { 0 } else { arch::shared_exception_flags(cc, size, lanes) };
            if flags & flags::MEASURED_MERGE == 0 {
                let b = shared::cost(rule, lanes, size, waves);
                return Part { space, active_lanes, cost: PartCost::Banks(b), flags };
            }
            let (counted, other) = match cfg.shared_model {
                SharedModel::Measured => (arch::merged(rule), rule),
                SharedModel::Documented => (rule, arch::merged(rule)),
            };
            let mut b = shared::cost(counted, lanes, size, waves);
            let alt = shared::cost(other, lanes, size, &mut shared::NoWaves).wavefronts;
            if alt == b.wavefronts {
                flags &= !flags::MEASURED_MERGE;
            } else {
                b.other_model_wavefronts = alt;
            }
            Part { space, active_lanes, cost: PartCost::Banks(b), flags }
        }
        Space::Global | Space::Local => {
            if space == Space::Local {
                for k in 0..lanes.n {
                    lanes.addr[k] = local::interleave(lanes.addr[k], usize::from(lanes.lane[k]), size);
                }
            }
            let acc = MemoryAccess { space, base: instr.base, cop: instr.effective_cop(), size_bytes: size };
            let rule = arch::memory_rule(cc, acc, cfg.l1);
            let m = global::cost(rule, lanes, size, tx);
            let mut flags = 0;
            if m.double_counted {
                flags |= flags::DOUBLE_COUNTED;
            }
            if m.bytes_moved > m.bytes_unique {
                flags |= flags::MOVED_UNUSED;
            }
            Part { space, active_lanes, cost: PartCost::Memory(m), flags }
        }
    }
}

/// Store lanes whose bytes another lane writes too, in global and shared memory (local addresses are per
/// thread, so equal offsets of different lanes are different bytes).
pub fn same_address(g: &Gathered) -> LaneSet {
    let mut out = LaneSet::default();
    for l in &g.lanes[..Space::Local as usize] {
        // (address, lane) as global coalescing sorts them: one sort in the binary for both.
        let mut pairs: [(u64, usize); WARP_LANES] = [(0, 0); WARP_LANES];
        for (slot, (&a, &lane)) in pairs.iter_mut().zip(l.addr.iter().zip(&l.lane)).take(l.n) {
            *slot = (a, usize::from(lane));
        }
        let pairs = &mut pairs[..l.n];
        pairs.sort_unstable();
        for k in 1..pairs.len() {
            if pairs[k].0 == pairs[k - 1].0 {
                out.insert(pairs[k].1);
                out.insert(pairs[k - 1].1);
            }
        }
    }
    out
}
