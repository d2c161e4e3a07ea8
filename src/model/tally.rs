//! What one issue's atomics and constant reads count, apart from the bytes they move: an atomic's
//! read-modify-writes and how many of them run one after another (docs/model.md#atomics), a constant load's passes
//! through the constant cache (docs/model.md#constant-memory). Below the counting ([`crate::model::count`]), the reports
//! ([`crate::model::report`]) and the notes ([`crate::model::arch::notes`]), which all read them.

use crate::model::access::{LaneSet, WARP_LANES};

/// What a constant-bank load costs (docs/model.md#constant-memory): the constant cache serves one address per pass, "split into
/// as many separate requests as there are different memory addresses in the initial request" (CUDA Programming Guide, Constant
/// Memory).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConstCounts {
    /// Passes: distinct addresses among the active lanes (each rounded down to the access size).
    pub passes: u32,
    /// The alternative count Nsight's IDC description suggests: distinct 64-byte lines.
    pub lines_64: u32,
    /// The active lanes that read.
    pub active_lanes: u32,
}

impl ConstCounts {
    /// The passes of the lanes of `mask` at `addrs`, and the addresses themselves with their lanes, ascending.
    pub fn of(addrs: &[u64; WARP_LANES], mask: u32, size: u32) -> (ConstCounts, Vec<(u64, LaneSet)>) {
        let align = !(u64::from(size) - 1);
        let mut by_addr: Vec<(u64, LaneSet)> = Vec::new();
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = addrs[lane] & align;
            match by_addr.binary_search_by_key(&a, |x| x.0) {
                Ok(k) => by_addr[k].1.insert(lane),
                Err(k) => by_addr.insert(k, (a, LaneSet(1 << lane))),
            }
        }
        let mut lines: Vec<u64> = by_addr.iter().map(|x| x.0 / 64).collect();
        lines.dedup();
        let k =
            ConstCounts { passes: by_addr.len() as u32, lines_64: lines.len() as u32, active_lanes: mask.count_ones() };
        (k, by_addr)
    }
}

/// What an atomic's lanes do (docs/model.md#atomics): `ops` read-modify-writes, the most of them on one address done one
/// after another ("each read/modify/write to that location occurs and they are all serialized", CUDA Programming Guide "Atomic
/// Functions").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AtomicCounts {
    /// Read-modify-writes: the lanes that moved data.
    pub ops: u32,
    /// The most lanes on one address.
    pub serial: u32,
}

impl AtomicCounts {
    /// The counts of the lanes of `mask` at `addrs`, addresses aligned down to `size` bytes.
    pub fn of(addrs: &[u64; WARP_LANES], mask: u32, size: u32) -> AtomicCounts {
        let align = !(u64::from(size) - 1);
        let mut a: [u64; WARP_LANES] = [u64::MAX; WARP_LANES];
        let mut n = 0;
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            a[n] = addrs[lane] & align;
            n += 1;
        }
        let a = &mut a[..n];
        a.sort_unstable();
        let (mut serial, mut run) = (u32::from(n > 0), 0u32);
        for k in 0..n {
            run = if k > 0 && a[k] == a[k - 1] { run + 1 } else { 1 };
            serial = serial.max(run);
        }
        AtomicCounts { ops: n as u32, serial }
    }
}
