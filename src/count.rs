//! The fast path: the same numbers as [`crate::engine::analyze`] for one warp, with no allocation: fixed-size
//! arrays for the 32 lanes, sorting instead of hashing, and no notes, warnings or animation steps. Bulk users
//! (whole grids, benchmarks, block totals) call this; the figure calls `analyze` for the one issue it draws.
//! Property tests hold the two paths equal.

use crate::access::{Instr, LaneSet, Space, WarpAddrs, WARP_LANES};
use crate::arch::{self, Cc, MemoryAccess};
use crate::engine::{classify, Config, WINDOW_BYTES};
use crate::local;

/// What one warp-level instruction costs, summed over the spaces it reaches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Lanes that moved data.
    pub active_lanes: u32,
    /// Global and local: requests.
    pub requests: u32,
    /// Global and local: distinct 128-byte lines.
    pub lines: u32,
    /// Global and local: distinct 32-byte sectors.
    pub sectors: u32,
    /// Global and local: transactions.
    pub transactions: u32,
    /// Global and local: active lanes x size.
    pub bytes_requested: u64,
    /// Global and local: distinct bytes.
    pub bytes_unique: u64,
    /// Global and local: bytes the transactions move.
    pub bytes_moved: u64,
    /// Shared: wavefronts.
    pub wavefronts: u32,
    /// Shared: ideal wavefronts.
    pub ideal_wavefronts: u32,
    /// Shared: the worst phase's cost.
    pub conflict_degree: u32,
    /// Lanes that moved no data.
    pub error_lanes: LaneSet,
    /// Lanes whose address was aligned down.
    pub misaligned: LaneSet,
}

impl Counts {
    /// The detailed path's numbers in this form: a report's parts summed (`misaligned` is left empty; reports
    /// list misaligned lanes as warnings). The fast path must equal this, which tests and fuzzing check.
    pub fn of_report(r: &crate::report::Report) -> Counts {
        let mut c = Counts { error_lanes: r.error_lanes, ..Counts::default() };
        for p in r.parts() {
            c.active_lanes += p.active_lanes;
            match &p.cost {
                crate::report::Cost::Memory(m) => {
                    c.requests += m.requests;
                    c.lines += m.lines;
                    c.sectors += m.sectors;
                    c.transactions += m.transactions;
                    c.bytes_requested += m.bytes_requested;
                    c.bytes_unique += m.bytes_unique;
                    c.bytes_moved += m.bytes_moved;
                }
                crate::report::Cost::Banks(b) => {
                    c.wavefronts += b.wavefronts;
                    c.ideal_wavefronts += b.ideal_wavefronts;
                    c.conflict_degree = c.conflict_degree.max(b.conflict_degree);
                }
                // `parts` flattens splits.
                crate::report::Cost::Split { .. } => {}
            }
        }
        c
    }
}

/// One space's active lanes, compacted: lane numbers (ascending) and their aligned addresses.
struct Lanes {
    lane: [u8; WARP_LANES],
    addr: [u64; WARP_LANES],
    n: usize,
}

impl Lanes {
    const EMPTY: Lanes = Lanes { lane: [0; WARP_LANES], addr: [0; WARP_LANES], n: 0 };

    fn push(&mut self, lane: usize, addr: u64) {
        self.lane[self.n] = lane as u8;
        self.addr[self.n] = addr;
        self.n += 1;
    }
}

/// Counts the cost of one warp-level instruction (see [`crate::engine::analyze_lanes`] for `plg`).
pub fn count(cc: Cc, instr: &Instr, warp: &WarpAddrs, plg: Option<LaneSet>, cfg: &Config) -> Counts {
    let size = instr.size_bytes;
    let mut c = Counts::default();
    match instr.base.fixed_space() {
        // The common case: one space, decided by the mnemonic. Gather the lanes in one pass (the same checks
        // as engine::classify, which the property tests hold equal).
        Some(space) => {
            let size64 = u64::from(size);
            let win = cfg.windows;
            let limit = match space {
                Space::Global => u64::MAX,
                Space::Shared => win.shared_alloc_bytes.map_or(WINDOW_BYTES, |a| a.min(WINDOW_BYTES)),
                Space::Local => win.local_alloc_bytes.map_or(WINDOW_BYTES, |a| a.min(WINDOW_BYTES)),
            };
            let strict = cfg.strict_align && instr.base != crate::access::Base::Ldg;
            let align_mask = !(size64 - 1);
            let mut l = Lanes::EMPTY;
            for (lane, a) in warp.0.iter().enumerate() {
                let Some(a) = *a else { continue };
                if space != Space::Global && a.saturating_add(size64) > limit {
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
            cost_space(cc, instr, space, &mut l, cfg, &mut c);
        }
        None => {
            let cl = classify(instr, warp, plg, cfg);
            c.error_lanes = cl.errors;
            c.misaligned = cl.misaligned;
            for space in [Space::Global, Space::Shared, Space::Local] {
                let mask = cl.masks[space as usize];
                if mask.is_empty() {
                    continue;
                }
                let mut l = Lanes::EMPTY;
                for lane in mask.iter() {
                    l.push(lane, cl.addrs[space as usize][lane]);
                }
                cost_space(cc, instr, space, &mut l, cfg, &mut c);
            }
        }
    }
    c
}

fn cost_space(cc: Cc, instr: &Instr, space: Space, l: &mut Lanes, cfg: &Config, c: &mut Counts) {
    let size = instr.size_bytes;
    c.active_lanes += l.n as u32;
    match space {
        Space::Shared => {
            let rule = arch::bank_rule(cc, size, cfg.bank_mode, None);
            banks(rule, l, size, c);
        }
        Space::Global | Space::Local => {
            if space == Space::Local {
                for k in 0..l.n {
                    l.addr[k] = local::interleave(l.addr[k], usize::from(l.lane[k]), size);
                }
            }
            let acc = MemoryAccess { space, base: instr.base, cop: instr.effective_cop(), size_bytes: size };
            let rule = arch::memory_rule(cc, acc, cfg.l1, None);
            memory(rule, l, size, c);
        }
    }
}

/// The number of distinct values in a sorted slice.
fn distinct_sorted(v: &[u64]) -> u32 {
    let mut n = 0u32;
    for (i, x) in v.iter().enumerate() {
        if i == 0 || v[i - 1] != *x {
            n += 1;
        }
    }
    n
}

fn memory(rule: arch::MemoryRule, l: &Lanes, size: u32, c: &mut Counts) {
    let n = l.n;
    let mut a = l.addr;
    let a = &mut a[..n];
    // Most warps are already in address order; sorting only the others saves most of the work.
    if !a.is_sorted() {
        a.sort_unstable();
    }
    // Sectors, lines and distinct addresses from the sorted addresses. Every lane accesses `size` bytes
    // aligned to `size` (a power of two at most 16), so an access never crosses a sector and two accesses
    // overlap only when their addresses are equal: unique bytes = distinct addresses x size.
    let (mut sectors, mut lines, mut distinct) = (0u32, 0u32, 0u64);
    // The shifted values never reach u64::MAX, so it marks "none yet"; the address itself can (a byte load at
    // the top of the address space), hence the `k == 0` test.
    let (mut last_sector, mut last_line, mut last) = (u64::MAX, u64::MAX, 0);
    for (k, &x) in a.iter().enumerate() {
        sectors += u32::from(x >> 5 != last_sector);
        lines += u32::from(x >> 7 != last_line);
        distinct += u64::from(k == 0 || x != last);
        last_sector = x >> 5;
        last_line = x >> 7;
        last = x;
    }
    let unique = distinct * u64::from(size);
    let tx_bytes = u64::from(rule.transaction_bytes);
    // 32 or 128: a shift instead of a division.
    let tx_shift = rule.transaction_bytes.trailing_zeros();
    let (mut requests, mut transactions) = (0u32, 0u32);
    if rule.lanes_per_request == WARP_LANES as u32 {
        if n > 0 {
            requests = 1;
            transactions = match tx_bytes {
                32 => sectors,
                _ => lines,
            };
        }
    } else {
        // Half- or quarter-warp requests: the lanes are in ascending order, so each group is a run.
        let per = rule.lanes_per_request as u8;
        let mut k = 0;
        while k < n {
            let group = l.lane[k] / per;
            let mut u = [0u64; WARP_LANES];
            let mut m = 0;
            while k < n && l.lane[k] / per == group {
                u[m] = l.addr[k] >> tx_shift;
                m += 1;
                k += 1;
            }
            requests += 1;
            if !u[..m].is_sorted() {
                u[..m].sort_unstable();
            }
            transactions += distinct_sorted(&u[..m]);
        }
    }
    c.requests += requests;
    c.lines += lines;
    c.sectors += sectors;
    c.transactions += transactions;
    c.bytes_requested += n as u64 * u64::from(size);
    c.bytes_unique += unique;
    c.bytes_moved += u64::from(transactions) * tx_bytes;
}

fn banks(rule: arch::BankRule, l: &Lanes, size: u32, c: &mut Counts) {
    let words = u64::from(size.div_ceil(4));
    let per = rule.lanes_per_phase as u8;
    let mut k = 0;
    while k < l.n {
        let phase = l.lane[k] / per;
        // Every word the phase touches as one u64: bank in the high half, conflict key in the low half
        // (shared offsets are below 16 MB, so keys fit). At most 16 lanes x 4 words = 64.
        let mut pairs = [0u64; 64];
        let mut n = 0;
        while k < l.n && l.lane[k] / per == phase {
            let first = l.addr[k] & !3;
            k += 1;
            for w in 0..words {
                let word = first + 4 * w;
                pairs[n] = u64::from(rule.banking.bank(word)) << 32 | (rule.banking.key(word) & 0xFFFF_FFFF);
                n += 1;
            }
        }
        // Distinct pairs through a small open-addressed set (128 slots for at most 64 pairs), counting each
        // bank's distinct keys as they arrive: the busiest bank is the phase's cost.
        let mut slots = [u64::MAX; 128];
        let mut per_bank = [0u8; 32];
        let (mut distinct, mut worst) = (0u32, 0u32);
        for &p in &pairs[..n] {
            let mut h = (p.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as usize;
            loop {
                if slots[h] == p {
                    break;
                }
                if slots[h] == u64::MAX {
                    slots[h] = p;
                    distinct += 1;
                    let b = (p >> 32) as usize & 31;
                    per_bank[b] += 1;
                    worst = worst.max(u32::from(per_bank[b]));
                    break;
                }
                h = (h + 1) & 127;
            }
        }
        c.wavefronts += worst;
        c.ideal_wavefronts += distinct.div_ceil(32).max(1);
        c.conflict_degree = c.conflict_degree.max(worst);
    }
}
