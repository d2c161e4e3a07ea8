//! Global (and interleaved local) memory: requests, 128-byte lines, 32-byte sectors and transactions.
//!
//! Architecture invariant: this module knows nothing about compute capabilities. It follows the
//! [`MemoryRule`] that `arch` chose: split the warp into requests of `lanes_per_request` lanes, and charge
//! each request one transaction per distinct aligned block of `transaction_bytes` it touches (PG-5.0 F.4.2,
//! BPG 9.2.1, the Nsight Compute memory tables).

use crate::access::{LaneSet, WARP_LANES};
use crate::arch::{group_lanes, MemoryRule};
use crate::report::{MemoryCost, RequestStep, TransactionStep};

/// Bytes in an L1/L2 cache line.
pub const LINE_BYTES: u64 = 128;
/// Bytes in a sector.
pub const SECTOR_BYTES: u64 = 32;

/// Costs one warp's access. `addrs` holds each lane's aligned address (`None` for lanes not in this part);
/// an aligned access of at most 16 bytes never crosses a sector, so each lane touches one sector and line.
pub fn cost(rule: MemoryRule, addrs: &[Option<u64>; WARP_LANES], size_bytes: u32) -> MemoryCost {
    let active: Vec<(usize, u64)> = addrs.iter().enumerate().filter_map(|(l, a)| a.map(|a| (l, a))).collect();
    let lines = distinct(active.iter().map(|&(_, a)| a / LINE_BYTES));
    let sectors = distinct(active.iter().map(|&(_, a)| a / SECTOR_BYTES));
    let tx_bytes = u64::from(rule.transaction_bytes);

    let mut steps = Vec::new();
    let groups = WARP_LANES as u32 / rule.lanes_per_request;
    for g in 0..groups {
        let lanes = group_lanes(g, rule.lanes_per_request);
        let mut txs: Vec<TransactionStep> = Vec::new();
        for &(lane, addr) in active.iter().filter(|(l, _)| lanes.contains(*l)) {
            let start = addr / tx_bytes * tx_bytes;
            let sector_bit = 1u8 << ((addr - start) / SECTOR_BYTES);
            match txs.iter_mut().find(|t| t.addr == start) {
                Some(t) => {
                    t.lanes.insert(lane);
                    t.sector_mask |= sector_bit;
                }
                None => {
                    let mut l = LaneSet::default();
                    l.insert(lane);
                    txs.push(TransactionStep {
                        addr: start,
                        bytes: rule.transaction_bytes,
                        sector_mask: sector_bit,
                        lanes: l,
                    });
                }
            }
        }
        if !txs.is_empty() {
            txs.sort_by_key(|t| t.addr);
            steps.push(RequestStep { lanes, transactions: txs });
        }
    }

    let requests = steps.len() as u32;
    let transactions: u32 = steps.iter().map(|s| s.transactions.len() as u32).sum();
    let bytes_requested = active.len() as u64 * u64::from(size_bytes);
    let bytes_unique = unique_bytes(active.iter().map(|&(_, a)| a), u64::from(size_bytes));
    let bytes_moved = u64::from(transactions) * tx_bytes;
    MemoryCost {
        requests,
        lines,
        sectors,
        transactions,
        transaction_bytes: rule.transaction_bytes,
        bytes_requested,
        bytes_unique,
        bytes_moved,
        efficiency: ratio(bytes_unique, bytes_moved),
        sectors_per_request: ratio(u64::from(sectors), u64::from(requests)),
        path: rule.path,
        steps,
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Number of distinct values among at most 32 (sorting a small array beats hashing here).
fn distinct(values: impl Iterator<Item = u64>) -> u32 {
    let mut v: Vec<u64> = values.collect();
    v.sort_unstable();
    v.dedup();
    v.len() as u32
}

/// Bytes in the union of the intervals `[a, a + size)`.
pub fn unique_bytes(starts: impl Iterator<Item = u64>, size_bytes: u64) -> u64 {
    let mut v: Vec<u64> = starts.collect();
    v.sort_unstable();
    v.dedup();
    // Ends in u128: the last access of the address space ends at 2^64, one past u64::MAX.
    let mut total = 0u128;
    let mut covered_to = 0u128;
    for &a in &v {
        let (a, end) = (u128::from(a), u128::from(a) + u128::from(size_bytes));
        total += end - a.max(covered_to).min(end);
        covered_to = covered_to.max(end);
    }
    u64::try_from(total).unwrap_or(u64::MAX)
}
