//! The memory system across warps and blocks (MODEL.md section J): each SM's L1 (and 3.5/3.7's read-only
//! cache), the device's L2 and device memory, as a deterministic model: 128-byte lines of four 32-byte sectors,
//! true LRU, write-through L1, write-back write-validate L2, atomics performed in L2.
//!
//! [`Machine::issue`] takes one warp issue's sectors (its requests in order, each request's sectors in increasing
//! address with the bytes its lanes touch) and the cache [`L1Use`] that `arch` chose for it, and counts what each
//! level serves, per instruction and per kernel, under Nsight Compute's names. It knows nothing about compute
//! capabilities, programs or schedules: the caller decides which SM issues what, in which order.

use crate::model::arch::memsys::L1Use;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// Sectors per line.
const SECTORS: u32 = 4;
/// A slot index meaning "none".
const NIL: u32 = u32::MAX;

/// One sector an issue touches: its index (`address >> 5`) and the bytes of it the lanes touch (bit i = byte
/// i). `request` is true on the first sector of each request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// `address >> 5`.
    pub sector: u64,
    /// The touched bytes of the sector.
    pub bytes: u32,
    /// The first sector of a request.
    pub request: bool,
}

/// Requests, sectors and hits at one level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Traffic {
    /// Requests.
    pub requests: u64,
    /// Sectors.
    pub sectors: u64,
    /// Sector hits (at L1 only loads hit).
    pub hits: u64,
}

impl Traffic {
    fn add(&mut self, o: &Traffic) {
        self.requests += o.requests;
        self.sectors += o.sectors;
        self.hits += o.hits;
    }
}

/// What one instruction's issues cost across the hierarchy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteTraffic {
    /// At L1/TEX (or the read-only cache).
    pub l1: Traffic,
    /// At L2, from this instruction's L1 misses, stores and atomics.
    pub l2: Traffic,
    /// Bytes read from device memory for its L2 misses.
    pub dram_read_bytes: u64,
}

/// The operation classes of Nsight's counters: `op_ld`, `op_st`, `op_atom`, `op_red`.
pub const OPS: [&str; 4] = ["ld", "st", "atom", "red"];

fn op_index(u: L1Use) -> usize {
    match u {
        L1Use::Cached { .. } | L1Use::ReadOnly | L1Use::Uncached => 0,
        L1Use::Store => 1,
        L1Use::Atomic { reduction: false } => 2,
        L1Use::Atomic { reduction: true } => 3,
    }
}

/// Kernel totals: `[space][op]` with space 0 = global, 1 = local and op as [`OPS`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// L1/TEX traffic by space and operation.
    pub l1: [[Traffic; 4]; 2],
    /// L2 traffic from L1/TEX by space and operation.
    pub l2: [[Traffic; 4]; 2],
    /// Bytes read from device memory.
    pub dram_read_bytes: u64,
    /// Bytes written to device memory by evictions during the run.
    pub dram_write_bytes: u64,
    /// Dirty bytes still in L2 at the end (written back after the kernel; not in `dram_write_bytes`).
    pub dirty_at_end_bytes: u64,
    /// Bound: 32 x the distinct sectors whose first access in the run reads them.
    pub compulsory_read_bytes: u64,
    /// Bound: the distinct bytes written (stores, atomics, reductions).
    pub unique_written_bytes: u64,
}

impl Totals {
    /// The traffic of one level summed over spaces for the operations `ops` (indices into [`OPS`]).
    pub fn sum(level: &[[Traffic; 4]; 2], ops: &[usize]) -> Traffic {
        let mut t = Traffic::default();
        for space in level {
            for &o in ops {
                t.add(&space[o]);
            }
        }
        t
    }

    /// L1 load hit rate in percent (`l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate`), `None` without loads.
    pub fn l1_load_hit_rate(&self) -> Option<f64> {
        rate(&Totals::sum(&self.l1, &[0]))
    }

    /// L2 load hit rate in percent (`lts__t_sector_op_read_hit_rate`), `None` without loads reaching L2.
    pub fn l2_load_hit_rate(&self) -> Option<f64> {
        rate(&Totals::sum(&self.l2, &[0]))
    }

    /// L1 hit rate over all operations.
    pub fn l1_hit_rate(&self) -> Option<f64> {
        rate(&Totals::sum(&self.l1, &[0, 1, 2, 3]))
    }

    /// L2 hit rate over all operations.
    pub fn l2_hit_rate(&self) -> Option<f64> {
        rate(&Totals::sum(&self.l2, &[0, 1, 2, 3]))
    }
}

/// hits / sectors in percent.
pub fn rate(t: &Traffic) -> Option<f64> {
    (t.sectors > 0).then(|| 100.0 * t.hits as f64 / t.sectors as f64)
}

#[derive(Clone, Copy, Default)]
struct Slot<P> {
    tag: u64,
    prev: u32,
    next: u32,
    data: P,
}

/// A set-associative cache of 128-byte lines with true LRU per set: `sets` sets of `ways` ways, set = line mod
/// sets, an empty way chosen before an eviction.
struct Lru<P> {
    sets: u64,
    ways: u32,
    slots: Vec<Slot<P>>,
    /// Per set: most recently used slot, least recently used slot, slots in use.
    head: Vec<u32>,
    tail: Vec<u32>,
    used: Vec<u32>,
    /// line -> slot, for wide sets (a linear search serves narrow ones).
    map: Option<FxHashMap<u64, u32>>,
}

impl<P: Copy + Default> Lru<P> {
    fn new(sets: u64, ways: u32) -> Lru<P> {
        let n = usize::try_from(sets * u64::from(ways)).unwrap_or(0);
        Lru {
            sets,
            ways,
            slots: vec![Slot { tag: 0, prev: NIL, next: NIL, data: P::default() }; n],
            head: vec![NIL; sets as usize],
            tail: vec![NIL; sets as usize],
            used: vec![0; sets as usize],
            map: (ways > 16).then(FxHashMap::default),
        }
    }

    fn set_of(&self, line: u64) -> usize {
        (line % self.sets) as usize
    }

    fn find(&self, line: u64) -> Option<u32> {
        if let Some(m) = &self.map {
            return m.get(&line).copied();
        }
        let s = self.set_of(line);
        let base = s as u32 * self.ways;
        (base..base + self.used[s]).find(|&k| self.slots[k as usize].tag == line)
    }

    fn unlink(&mut self, s: usize, k: u32) {
        let (p, n) = (self.slots[k as usize].prev, self.slots[k as usize].next);
        if p == NIL {
            self.head[s] = n;
        } else {
            self.slots[p as usize].next = n;
        }
        if n == NIL {
            self.tail[s] = p;
        } else {
            self.slots[n as usize].prev = p;
        }
    }

    fn push_front(&mut self, s: usize, k: u32) {
        let h = self.head[s];
        self.slots[k as usize].prev = NIL;
        self.slots[k as usize].next = h;
        if h == NIL {
            self.tail[s] = k;
        } else {
            self.slots[h as usize].prev = k;
        }
        self.head[s] = k;
    }

    /// Makes slot `k` of `line`'s set the most recently used.
    fn touch(&mut self, line: u64, k: u32) {
        let s = self.set_of(line);
        if self.head[s] != k {
            self.unlink(s, k);
            self.push_front(s, k);
        }
    }

    /// Allocates `line` (not present) as the most recently used line of its set; returns its slot and the
    /// evicted line's data, if a line was evicted. `None` when the cache has no ways.
    fn allocate(&mut self, line: u64) -> Option<(u32, Option<P>)> {
        if self.ways == 0 {
            return None;
        }
        let s = self.set_of(line);
        let (k, old) = if self.used[s] < self.ways {
            let k = s as u32 * self.ways + self.used[s];
            self.used[s] += 1;
            (k, None)
        } else {
            let k = self.tail[s];
            self.unlink(s, k);
            let old = self.slots[k as usize];
            if let Some(m) = &mut self.map {
                m.remove(&old.tag);
            }
            (k, Some(old.data))
        };
        self.slots[k as usize] = Slot { tag: line, prev: NIL, next: NIL, data: P::default() };
        self.push_front(s, k);
        if let Some(m) = &mut self.map {
            m.insert(line, k);
        }
        Some((k, old))
    }

    fn iter(&self) -> impl Iterator<Item = &P> {
        (0..self.sets as usize).flat_map(move |s| {
            let base = s * self.ways as usize;
            self.slots[base..base + self.used[s] as usize].iter().map(|x| &x.data)
        })
    }
}

#[derive(Clone, Copy, Default)]
struct L2Line {
    valid: u8,
    dirty: u8,
    written: [u32; 4],
}

/// Sectors per page of the bounds' record (1 MiB of addresses).
const PAGE_SECTORS: usize = 1 << 15;

struct Page {
    seen: Vec<u64>,
    written: Option<Vec<u32>>,
}

/// What each sector's first access was and which bytes were written: the schedule-free bounds.
#[derive(Default)]
struct Bounds {
    pages: FxHashMap<u64, usize>,
    store: Vec<Page>,
    last: Option<(u64, usize)>,
    compulsory: u64,
    unique_written: u64,
}

impl Bounds {
    fn page(&mut self, sector: u64) -> &mut Page {
        let key = sector >> 15;
        let idx = match self.last {
            Some((k, i)) if k == key => i,
            _ => {
                let next = self.store.len();
                let i = *self.pages.entry(key).or_insert(next);
                if i == next {
                    self.store.push(Page { seen: vec![0; PAGE_SECTORS / 64], written: None });
                }
                self.last = Some((key, i));
                i
            }
        };
        &mut self.store[idx]
    }

    /// Records an access to `sector`: `read` when it reads (a load or an atomic), `bytes` written (0 for a load).
    fn access(&mut self, sector: u64, read: bool, bytes: u32) {
        let i = (sector as usize) & (PAGE_SECTORS - 1);
        let p = self.page(sector);
        let first = p.seen[i / 64] >> (i % 64) & 1 == 0;
        p.seen[i / 64] |= 1 << (i % 64);
        let mut compulsory = 0;
        if first && read {
            compulsory = 32;
        }
        let mut new_bytes = 0;
        if bytes != 0 {
            let w = p.written.get_or_insert_with(|| vec![0; PAGE_SECTORS]);
            new_bytes = u64::from((bytes & !w[i]).count_ones());
            w[i] |= bytes;
        }
        self.compulsory += compulsory;
        self.unique_written += new_bytes;
    }
}

/// The modelled memory system of one device.
pub struct Machine {
    l1: Vec<Lru<u8>>,
    read_only: Vec<Lru<u8>>,
    l2: Lru<L2Line>,
    bounds: Bounds,
    /// Per instruction.
    pub sites: Vec<SiteTraffic>,
    /// Kernel totals.
    pub totals: Totals,
}

/// The shape of a [`Machine`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// SMs.
    pub sms: u32,
    /// L1 bytes per SM (4 sets of `bytes / 512` ways).
    pub l1_bytes: u64,
    /// Read-only cache bytes per SM (3.5/3.7), else 0.
    pub read_only_bytes: u64,
    /// L2 sets.
    pub l2_sets: u64,
    /// L2 ways.
    pub l2_ways: u32,
}

impl Machine {
    /// Empty caches (Nsight Compute's default cache control flushes them before a measured kernel).
    pub fn new(shape: Shape, sites: usize) -> Machine {
        let l1_ways = u32::try_from(shape.l1_bytes / 512).unwrap_or(u32::MAX);
        let ro_ways = u32::try_from(shape.read_only_bytes / 512).unwrap_or(u32::MAX);
        Machine {
            l1: (0..shape.sms).map(|_| Lru::new(4, l1_ways)).collect(),
            read_only: (0..if ro_ways > 0 { shape.sms } else { 0 }).map(|_| Lru::new(4, ro_ways)).collect(),
            l2: Lru::new(shape.l2_sets, shape.l2_ways),
            bounds: Bounds::default(),
            sites: vec![SiteTraffic::default(); sites],
            totals: Totals::default(),
        }
    }

    /// SMs.
    pub fn sms(&self) -> usize {
        self.l1.len()
    }

    /// One warp issue of instruction `site` on SM `sm`: `acc` holds its sectors, request by request, each in
    /// increasing address; `local` for local memory.
    pub fn issue(&mut self, sm: usize, site: usize, u: L1Use, local: bool, acc: &[Access]) {
        let op = op_index(u);
        let space = usize::from(local);
        let mut l1 = Traffic::default();
        let mut l2 = Traffic::default();
        let mut dram = 0u64;
        let mut i = 0;
        while i < acc.len() {
            if acc[i].request || i == 0 {
                l1.requests += 1;
            }
            // One line: the run of sectors of this request with the same line.
            let line = acc[i].sector >> 2;
            let mut j = i + 1;
            while j < acc.len() && !acc[j].request && acc[j].sector >> 2 == line {
                j += 1;
            }
            let run = &acc[i..j];
            let mut mask = 0u8;
            for a in run {
                mask |= 1 << (a.sector & 3);
            }
            l1.sectors += u64::from(mask.count_ones());
            let through = match u {
                L1Use::Cached { whole_line } => Some((false, whole_line)),
                L1Use::ReadOnly => Some((!self.read_only.is_empty(), false)),
                _ => None,
            };
            match through {
                Some((ro, whole_line)) => {
                    let cache = if ro { &mut self.read_only[sm] } else { &mut self.l1[sm] };
                    let (valid, slot) = match cache.find(line) {
                        Some(k) => {
                            cache.touch(line, k);
                            (cache.slots[k as usize].data, Some(k))
                        }
                        None => (0, cache.allocate(line).map(|(k, _)| k)),
                    };
                    l1.hits += u64::from((valid & mask).count_ones());
                    let mut missing = mask & !valid;
                    if whole_line && missing != 0 {
                        missing = 0xF & !valid;
                    }
                    if let Some(k) = slot {
                        cache.slots[k as usize].data = valid | missing;
                    }
                    if missing != 0 {
                        l2.requests += 1;
                        let (s, h, d) = self.l2_access(line, missing, &[0; 4], Kind::Load);
                        l2.sectors += s;
                        l2.hits += h;
                        dram += d;
                    }
                }
                None => {
                    if u == L1Use::Store {
                        let cache = &mut self.l1[sm];
                        if let Some(k) = cache.find(line) {
                            cache.touch(line, k);
                            cache.slots[k as usize].data |= mask;
                        }
                    }
                    let mut bytes = [0u32; 4];
                    for a in run {
                        bytes[(a.sector & 3) as usize] |= a.bytes;
                    }
                    let kind = match u {
                        L1Use::Store => Kind::Store,
                        L1Use::Atomic { .. } => Kind::Atomic,
                        _ => Kind::Load,
                    };
                    l2.requests += 1;
                    let (s, h, d) = self.l2_access(line, mask, &bytes, kind);
                    l2.sectors += s;
                    l2.hits += h;
                    dram += d;
                }
            }
            for a in run {
                match u {
                    L1Use::Store => self.bounds.access(a.sector, false, a.bytes),
                    L1Use::Atomic { .. } => self.bounds.access(a.sector, true, a.bytes),
                    _ => self.bounds.access(a.sector, true, 0),
                }
            }
            i = j;
        }
        let s = &mut self.sites[site];
        s.l1.add(&l1);
        s.l2.add(&l2);
        s.dram_read_bytes += dram;
        self.totals.l1[space][op].add(&l1);
        self.totals.l2[space][op].add(&l2);
        self.totals.dram_read_bytes += dram;
    }

    /// One L2 request for `mask`'s sectors of `line`: (sectors, hits, DRAM bytes read).
    fn l2_access(&mut self, line: u64, mask: u8, bytes: &[u32; 4], kind: Kind) -> (u64, u64, u64) {
        let k = match self.l2.find(line) {
            Some(k) => {
                self.l2.touch(line, k);
                k
            }
            None => match self.l2.allocate(line) {
                Some((k, old)) => {
                    if let Some(old) = old {
                        self.totals.dram_write_bytes += 32 * u64::from(old.dirty.count_ones());
                    }
                    k
                }
                None => return (u64::from(mask.count_ones()), 0, 32 * u64::from(mask.count_ones())),
            },
        };
        let l = &mut self.l2.slots[k as usize].data;
        let (mut sectors, mut hits, mut dram) = (0, 0, 0);
        for s in 0..SECTORS {
            if mask >> s & 1 == 0 {
                continue;
            }
            sectors += 1;
            let bit = 1u8 << s;
            let present = l.valid & bit != 0 || l.written[s as usize] == u32::MAX;
            match kind {
                Kind::Store => {
                    hits += 1;
                    l.written[s as usize] |= bytes[s as usize];
                    l.dirty |= bit;
                }
                Kind::Load | Kind::Atomic => {
                    if present {
                        hits += 1;
                    } else {
                        dram += 32;
                        l.valid |= bit;
                    }
                    if kind == Kind::Atomic {
                        l.written[s as usize] |= bytes[s as usize];
                        l.dirty |= bit;
                    }
                }
            }
        }
        (sectors, hits, dram)
    }

    /// Ends the run: counts the dirty sectors left in L2 and fills in the bounds.
    pub fn finish(mut self) -> (Vec<SiteTraffic>, Totals) {
        self.totals.dirty_at_end_bytes = self.l2.iter().map(|l| 32 * u64::from(l.dirty.count_ones())).sum();
        self.totals.compulsory_read_bytes = self.bounds.compulsory;
        self.totals.unique_written_bytes = self.bounds.unique_written;
        (self.sites, self.totals)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Load,
    Store,
    Atomic,
}
