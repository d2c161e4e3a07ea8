//! The fast path: the same numbers as [`crate::engine::analyze`] for one warp, with no allocation: fixed-size
//! arrays for the 32 lanes, sorting instead of hashing, and no notes, warnings or animation steps. Bulk users
//! (whole grids, benchmarks, block totals) call this; the figure calls `analyze` for the one issue it draws.
//! Property tests hold the two paths equal.

use crate::access::{Instr, LaneSet, Space, WarpAddrs, WARP_LANES};
use crate::arch::{self, Cc, MemoryAccess};
use crate::engine::{classify, Config};
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

/// Counts the cost of one warp-level instruction (see [`crate::engine::analyze_lanes`] for `plg`).
pub fn count(cc: Cc, instr: &Instr, warp: &WarpAddrs, plg: Option<LaneSet>, cfg: &Config) -> Counts {
    let cl = classify(instr, warp, plg, cfg);
    let mut c = Counts { error_lanes: cl.errors, misaligned: cl.misaligned, ..Counts::default() };
    let size = instr.size_bytes;
    for space in [Space::Global, Space::Shared, Space::Local] {
        let offsets = &cl.per_space[space as usize];
        let n = offsets.iter().filter(|a| a.is_some()).count() as u32;
        // A fixed-space instruction is costed in its space even with no lane; a generic one only where lanes went.
        let fixed = instr.base.fixed_space() == Some(space);
        if n == 0 && !fixed {
            continue;
        }
        c.active_lanes += n;
        match space {
            Space::Shared => {
                let rule = arch::bank_rule(cc, size, cfg.bank_mode, None);
                banks(rule, offsets, size, &mut c);
            }
            Space::Global | Space::Local => {
                let mut phys = *offsets;
                if space == Space::Local {
                    for (lane, a) in phys.iter_mut().enumerate() {
                        *a = a.map(|off| local::interleave(off, lane, size));
                    }
                }
                let acc = MemoryAccess { space, base: instr.base, cop: instr.effective_cop(), size_bytes: size };
                let rule = arch::memory_rule(cc, acc, cfg.l1, None);
                memory(rule, &phys, size, &mut c);
            }
        }
    }
    c
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

fn memory(rule: arch::MemoryRule, addrs: &[Option<u64>; WARP_LANES], size: u32, c: &mut Counts) {
    let mut a = [0u64; WARP_LANES];
    let mut n = 0;
    for x in addrs.iter().flatten() {
        a[n] = *x;
        n += 1;
    }
    let a = &mut a[..n];
    a.sort_unstable();
    // Sectors and lines from the sorted addresses (an aligned access never crosses a sector).
    let (mut sectors, mut lines) = (0u32, 0u32);
    let (mut last_sector, mut last_line) = (u64::MAX, u64::MAX);
    let (mut unique, mut covered_to) = (0u64, 0u64);
    for (i, &x) in a.iter().enumerate() {
        if x / 32 != last_sector {
            sectors += 1;
            last_sector = x / 32;
        }
        if x / 128 != last_line {
            lines += 1;
            last_line = x / 128;
        }
        let end = x.saturating_add(u64::from(size));
        let from = if i == 0 { x } else { x.max(covered_to) };
        unique += end.saturating_sub(from);
        covered_to = if i == 0 { end } else { covered_to.max(end) };
    }
    let tx_bytes = u64::from(rule.transaction_bytes);
    let (mut requests, mut transactions) = (0u32, 0u32);
    if rule.lanes_per_request == WARP_LANES as u32 {
        if n > 0 {
            requests = 1;
            transactions = match tx_bytes {
                32 => sectors,
                128 => lines,
                _ => {
                    let mut u = [0u64; WARP_LANES];
                    for (k, x) in a.iter().enumerate() {
                        u[k] = x / tx_bytes;
                    }
                    distinct_sorted(&u[..n])
                }
            };
        }
    } else {
        let per = rule.lanes_per_request as usize;
        for g in 0..WARP_LANES / per {
            let mut u = [0u64; WARP_LANES];
            let mut m = 0;
            for x in addrs[g * per..(g + 1) * per].iter().flatten() {
                u[m] = x / tx_bytes;
                m += 1;
            }
            if m > 0 {
                requests += 1;
                u[..m].sort_unstable();
                transactions += distinct_sorted(&u[..m]);
            }
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

fn banks(rule: arch::BankRule, addrs: &[Option<u64>; WARP_LANES], size: u32, c: &mut Counts) {
    let words = u64::from(size.div_ceil(4));
    let per = rule.lanes_per_phase as usize;
    for p in 0..WARP_LANES / per {
        // (bank, key) of every word the phase's active lanes touch: at most 16 lanes x 4 words = 64.
        let mut pairs = [(0u32, 0u64); 64];
        let mut n = 0;
        for a in addrs[p * per..(p + 1) * per].iter().flatten() {
            let first = a & !3;
            for w in 0..words {
                let word = first + 4 * w;
                if n < pairs.len() {
                    pairs[n] = (rule.banking.bank(word), rule.banking.key(word));
                    n += 1;
                }
            }
        }
        if n == 0 {
            continue;
        }
        let pairs = &mut pairs[..n];
        pairs.sort_unstable();
        let (mut distinct, mut worst, mut run) = (0u32, 0u32, 0u32);
        for i in 0..n {
            if i > 0 && pairs[i] == pairs[i - 1] {
                continue;
            }
            distinct += 1;
            run = if i > 0 && pairs[i].0 == pairs[i - 1].0 { run + 1 } else { 1 };
            worst = worst.max(run);
        }
        c.wavefronts += worst;
        c.ideal_wavefronts += distinct.div_ceil(32).max(1);
        c.conflict_degree = c.conflict_degree.max(worst);
    }
}
