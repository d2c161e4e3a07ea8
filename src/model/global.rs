//! Global (and interleaved local) memory: requests, 128-byte lines, 32-byte sectors and transactions.
//!
//! Architecture invariant: this module knows nothing about compute capabilities. It follows the
//! [`MemoryRule`] that `arch` chose: split the warp into requests of `lanes_per_request` lanes, and charge
//! each request one transaction per distinct aligned block of `transaction_bytes` it touches (CUDA Programming Guide 5.0 F.4.2,
//! Best Practices Guide 9.2.1, the Nsight Compute memory tables).
//!
//! One costing path: [`cost`] computes the counts with stack arrays and no allocation, and reports each
//! request and transaction to a [`TxSink`]. The fast path passes [`NoDetail`]; the figure passes [`Steps`],
//! which records what the animation shows. Both get their numbers from the same walk.

use crate::model::access::{LaneSet, Lanes, WARP_LANES};
use crate::model::arch::{DataPath, MemoryRule};
use crate::model::report::{RequestStep, TransactionStep};

/// Bytes in an L1/L2 cache line.
pub const LINE_BYTES: u64 = 128;
/// Bytes in a sector.
pub const SECTOR_BYTES: u64 = 32;

/// What one warp's global or local access costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemCounts {
    /// Requests with at least one active lane.
    pub requests: u32,
    /// Distinct 128-byte lines.
    pub lines: u32,
    /// Distinct 32-byte sectors.
    pub sectors: u32,
    /// Transactions charged, summed over requests.
    pub transactions: u32,
    /// Bytes per transaction: 128 or 32.
    pub transaction_bytes: u32,
    /// Active lanes x access size.
    pub bytes_requested: u64,
    /// Distinct bytes.
    pub bytes_unique: u64,
    /// transactions x transaction_bytes.
    pub bytes_moved: u64,
    /// Some block was charged in more than one request (half- and quarter-warp splits).
    pub double_counted: bool,
    /// The cache the data goes through.
    pub path: DataPath,
}

/// Receives the requests and transactions of one access, in order.
pub trait TxSink {
    /// Whether the sink wants them (the fast path does not, and skips the work of ordering lanes).
    const DETAIL: bool;
    /// A request covering `lanes` starts.
    fn request(&mut self, lanes: LaneSet);
    /// A transaction of `bytes` at `addr` starts.
    fn transaction(&mut self, addr: u64, bytes: u32);
    /// `lane`'s bytes are in the current transaction, in its sector `sector_bit`.
    fn lane(&mut self, lane: usize, sector_bit: u8);
}

/// The fast path's sink: nothing is recorded.
pub struct NoDetail;

impl TxSink for NoDetail {
    const DETAIL: bool = false;
    fn request(&mut self, _: LaneSet) {}
    fn transaction(&mut self, _: u64, _: u32) {}
    fn lane(&mut self, _: usize, _: u8) {}
}

/// Records the requests with their transactions, as the animation shows them.
#[derive(Default)]
pub struct Steps(pub Vec<RequestStep>);

impl TxSink for Steps {
    const DETAIL: bool = true;
    fn request(&mut self, lanes: LaneSet) {
        self.0.push(RequestStep { lanes, transactions: Vec::new() });
    }
    fn transaction(&mut self, addr: u64, bytes: u32) {
        if let Some(r) = self.0.last_mut() {
            r.transactions.push(TransactionStep { addr, bytes, sector_mask: 0, lanes: LaneSet::default() });
        }
    }
    fn lane(&mut self, lane: usize, sector_bit: u8) {
        if let Some(t) = self.0.last_mut().and_then(|r| r.transactions.last_mut()) {
            t.lanes.insert(lane);
            t.sector_mask |= sector_bit;
        }
    }
}

/// Costs one warp's access: `l` holds the active lanes' aligned addresses. An aligned access of at most 16
/// bytes never crosses a sector, so each lane touches one sector and one line, and two lanes' bytes overlap
/// only when their addresses are equal.
pub fn cost<S: TxSink>(rule: MemoryRule, l: &Lanes, size_bytes: u32, sink: &mut S) -> MemCounts {
    let n = l.n;
    let mut a = l.addr;
    let a = &mut a[..n];
    // Most warps are already in address order; sorting only the others saves most of the work.
    if !a.is_sorted() {
        a.sort_unstable();
    }
    // The shifted values never reach u64::MAX, so it marks "none yet"; the address itself can (a byte load at
    // the top of the address space), hence the `k == 0` test.
    let (mut sectors, mut lines, mut distinct) = (0u32, 0u32, 0u64);
    let (mut last_sector, mut last_line, mut last) = (u64::MAX, u64::MAX, 0);
    for (k, &x) in a.iter().enumerate() {
        sectors += u32::from(x >> 5 != last_sector);
        lines += u32::from(x >> 7 != last_line);
        distinct += u64::from(k == 0 || x != last);
        last_sector = x >> 5;
        last_line = x >> 7;
        last = x;
    }
    let tx_bytes = rule.transaction_bytes;
    // 32 or 128: a shift instead of a division.
    let shift = tx_bytes.trailing_zeros();
    let (mut requests, mut transactions) = (0u32, 0u32);
    let per = rule.lanes_per_request;
    if per == WARP_LANES as u32 {
        if n > 0 {
            requests = 1;
            transactions = if tx_bytes == 32 { sectors } else { lines };
            if S::DETAIL {
                sink.request(LaneSet::ALL);
                let mut pairs: Vec<(u64, usize)> = l.iter().map(|(lane, addr)| (addr, lane)).collect();
                pairs.sort_unstable();
                emit(&pairs, shift, tx_bytes, sink);
            }
        }
    } else {
        // Half- or quarter-warp requests: the lanes are in ascending order, so each group is a run.
        let mut k = 0;
        while k < n {
            let group = u32::from(l.lane[k]) / per;
            let mut u = [0u64; WARP_LANES];
            let mut m = 0;
            let start = k;
            while k < n && u32::from(l.lane[k]) / per == group {
                u[m] = l.addr[k] >> shift;
                m += 1;
                k += 1;
            }
            requests += 1;
            let u = &mut u[..m];
            if !u.is_sorted() {
                u.sort_unstable();
            }
            transactions += u.iter().enumerate().filter(|&(i, x)| i == 0 || u[i - 1] != *x).count() as u32;
            if S::DETAIL {
                sink.request(LaneSet::group(group, per));
                let mut pairs: Vec<(u64, usize)> = (start..k).map(|i| (l.addr[i], usize::from(l.lane[i]))).collect();
                pairs.sort_unstable();
                emit(&pairs, shift, tx_bytes, sink);
            }
        }
    }
    let distinct_blocks = if tx_bytes == 32 { sectors } else { lines };
    MemCounts {
        requests,
        lines,
        sectors,
        transactions,
        transaction_bytes: tx_bytes,
        bytes_requested: n as u64 * u64::from(size_bytes),
        bytes_unique: distinct * u64::from(size_bytes),
        bytes_moved: u64::from(transactions) * u64::from(tx_bytes),
        double_counted: transactions > distinct_blocks,
        path: rule.path,
    }
}

/// Reports the transactions of address-sorted (address, lane) pairs.
fn emit<S: TxSink>(pairs: &[(u64, usize)], shift: u32, tx_bytes: u32, sink: &mut S) {
    let mut current = None;
    for &(addr, lane) in pairs {
        let start = addr >> shift << shift;
        if current != Some(start) {
            sink.transaction(start, tx_bytes);
            current = Some(start);
        }
        sink.lane(lane, 1u8 << ((addr - start) / SECTOR_BYTES));
    }
}
