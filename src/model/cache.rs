//! The memory system across warps and blocks (docs/model.md#the-memory-system): each SM's L1 (and 3.5/3.7's read-only
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
    /// Adds `o`'s counts.
    pub fn add(&mut self, o: &Traffic) {
        self.requests += o.requests;
        self.sectors += o.sectors;
        self.hits += o.hits;
    }

    /// The counts made since `before` (counts only grow).
    pub fn since(&self, before: &Traffic) -> Traffic {
        Traffic {
            requests: self.requests - before.requests,
            sectors: self.sectors - before.sectors,
            hits: self.hits - before.hits,
        }
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
    /// Bytes written to device memory: dirty sectors evicted during the run, plus those still dirty at the end
    /// (docs/model.md#the-memory-system step 7; the second part is also reported apart, as `dirty_at_end_bytes`).
    pub dram_write_bytes: u64,
    /// Of `dram_write_bytes`, the dirty bytes still in L2 at the end (written back after the kernel).
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

/// A set-associative cache of 128-byte lines with true LRU per set: `sets` sets of `ways` ways, set = line mod
/// sets, an empty way chosen before an eviction. Narrow sets (L2) keep their tags in recency order in one
/// array (a search and a short move touch one or two host cache lines); wide sets (L1, with hundreds of ways)
/// keep a table from line to slot and a linked list of slots in recency order.
enum Lru<P> {
    Narrow(Narrow<P>),
    Wide(Wide<P>),
}

struct Narrow<P> {
    ways: usize,
    /// The number of sets, reduced for fast division (L2 set counts are rarely powers of two).
    sets: strength_reduce::StrengthReducedU64,
    /// Per set, `ways` tags, most recently used first; `EMPTY` for a free way (free ways are last).
    tags: Vec<u64>,
    data: Vec<P>,
}

impl<P: Copy + Default> Narrow<P> {
    /// The way of set `base / ways` that holds `line`. Every way is compared (a set holds a line at most once):
    /// no branch on where the line is.
    #[inline(always)]
    fn search(&self, base: usize, line: u64) -> Option<usize> {
        let mut k = usize::MAX;
        for (j, &t) in self.tags[base..base + self.ways].iter().enumerate() {
            if t == line {
                k = j;
            }
        }
        (k != usize::MAX).then_some(k)
    }

    /// Puts `line` with `data` first in set `base / ways`, the ways before `last` moving down by one (a short
    /// loop: `rotate_right` calls memmove).
    #[inline(always)]
    fn make_first(&mut self, base: usize, last: usize, line: u64, data: P) {
        for j in (base + 1..=base + last).rev() {
            self.tags[j] = self.tags[j - 1];
            self.data[j] = self.data[j - 1];
        }
        self.tags[base] = line;
        self.data[base] = data;
    }

    /// Finds or allocates `line` in set `base / ways` in one pass: each way, from the most recent, takes the tag
    /// before it until the line's own way (a hit) or the last (an allocation, its line evicted), and the line goes
    /// first. Lines are found near the front as a rule, so most passes end early.
    #[inline(always)]
    fn rotate_in(&mut self, base: usize, line: u64) -> (usize, Option<(u64, P)>) {
        let tags = &mut self.tags[base..base + self.ways];
        let data = &mut self.data[base..base + self.ways];
        let (mut tag, mut d) = (line, P::default());
        for (t, x) in tags.iter_mut().zip(data.iter_mut()) {
            std::mem::swap(t, &mut tag);
            std::mem::swap(x, &mut d);
            if tag == line {
                data[0] = d;
                return (base, None);
            }
        }
        (base, (tag != EMPTY).then_some((tag, d)))
    }

    /// Allocates `line` first in set `base / ways`, evicting the last way's line.
    #[inline(always)]
    fn allocate(&mut self, base: usize, line: u64) -> Option<(usize, Option<(u64, P)>)> {
        let last = base + self.ways - 1;
        let old = (self.tags[last] != EMPTY).then_some((self.tags[last], self.data[last]));
        self.make_first(base, self.ways - 1, line, P::default());
        Some((base, old))
    }
}

/// A tag no line has (lines are addresses >> 7).
const EMPTY: u64 = u64::MAX;
/// No slot.
const NIL: u32 = u32::MAX;

/// A way of a [`Wide`] set: its line and its neighbours in the set's recency list (16 bytes; the data apart).
#[derive(Clone, Copy)]
struct Slot {
    line: u64,
    prev: u32,
    next: u32,
}

/// A map from line to slot for [`Wide`]: open addressing with linear probing at most half full. Each entry is 32
/// bits, the slot + 1 in its low `slot_bits` (0 = empty) and the high bits of the line's hash above them, so an
/// L1's map and ways (about 40 KB for 176 KB of L1) stay in the host's nearest cache. Deletion shifts the
/// entries after it back, so no tombstones lengthen later probes (a cache evicts on nearly every miss).
struct SlotTable {
    entries: Vec<u32>,
    /// log2 of the entry count.
    bits: u32,
    /// The bits of an entry that hold the slot + 1.
    low: u32,
    /// Whether an entry's hash bits give its home (else the home comes from its slot's line).
    home_in_entry: bool,
}

impl SlotTable {
    fn new(slots: usize) -> SlotTable {
        let bits = (slots.max(1) * 2).next_power_of_two().trailing_zeros().clamp(1, 31);
        let slot_bits = (usize::BITS - slots.leading_zeros()).max(1);
        let low = u32::MAX >> (32 - slot_bits.min(32));
        SlotTable { entries: vec![0; 1 << bits], bits, low, home_in_entry: bits + slot_bits <= 32 }
    }

    #[inline(always)]
    fn fingerprint(line: u64) -> u32 {
        (line.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32
    }

    #[inline(always)]
    fn home(&self, fp: u32) -> usize {
        (fp >> (32 - self.bits)) as usize
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.entries.len() - 1
    }

    #[inline(always)]
    fn get(&self, line: u64, slots: &[Slot]) -> Option<u32> {
        let fp = Self::fingerprint(line);
        let high = fp & !self.low;
        let mut i = self.home(fp);
        loop {
            let e = self.entries[i];
            if e == 0 {
                return None;
            }
            let k = (e & self.low).wrapping_sub(1);
            if e & !self.low == high && slots[k as usize].line == line {
                return Some(k);
            }
            i = (i + 1) & self.mask();
        }
    }

    #[inline(always)]
    fn insert(&mut self, line: u64, k: u32) {
        let fp = Self::fingerprint(line);
        let mut i = self.home(fp);
        while self.entries[i] != 0 {
            i = (i + 1) & self.mask();
        }
        self.entries[i] = (fp & !self.low) | (k + 1);
    }

    /// Removes `line`, held in slot `k`.
    fn remove(&mut self, line: u64, k: u32, slots: &[Slot]) {
        let mask = self.mask();
        let mut j = self.home(Self::fingerprint(line));
        while self.entries[j] & self.low != k + 1 {
            j = (j + 1) & mask;
        }
        // Backward shift: move each later entry of the run into the hole when its home allows it.
        let mut n = j;
        loop {
            n = (n + 1) & mask;
            let e = self.entries[n];
            if e == 0 {
                break;
            }
            let home = if self.home_in_entry {
                self.home(e)
            } else {
                self.home(Self::fingerprint(slots[((e & self.low) - 1) as usize].line))
            };
            if (n.wrapping_sub(home) & mask) >= (n.wrapping_sub(j) & mask) {
                self.entries[j] = e;
                j = n;
            }
        }
        self.entries[j] = 0;
    }
}

struct Wide<P> {
    ways: u32,
    /// sets - 1: the set count is a power of two (L1 has 4 sets).
    set_mask: u64,
    map: SlotTable,
    slots: Vec<Slot>,
    data: Vec<P>,
    /// Per set: most and least recently used slot, slots in use.
    head: Vec<u32>,
    tail: Vec<u32>,
    used: Vec<u32>,
}

impl<P: Copy + Default> Wide<P> {
    fn unlink(&mut self, s: usize, k: u32) {
        let (p, n) = (self.slots[k as usize].prev, self.slots[k as usize].next);
        match p {
            NIL => self.head[s] = n,
            p => self.slots[p as usize].next = n,
        }
        match n {
            NIL => self.tail[s] = p,
            n => self.slots[n as usize].prev = p,
        }
    }

    fn push_front(&mut self, s: usize, k: u32) {
        let h = self.head[s];
        self.slots[k as usize].prev = NIL;
        self.slots[k as usize].next = h;
        match h {
            NIL => self.tail[s] = k,
            h => self.slots[h as usize].prev = k,
        }
        self.head[s] = k;
    }
}

impl<P: Copy + Default> Lru<P> {
    fn new(sets: u64, ways: u32) -> Lru<P> {
        if ways <= 32 || !sets.is_power_of_two() {
            let n = usize::try_from(sets * u64::from(ways)).unwrap_or(0);
            Lru::Narrow(Narrow {
                ways: ways as usize,
                sets: strength_reduce::StrengthReducedU64::new(sets.max(1)),
                tags: vec![EMPTY; n],
                data: vec![P::default(); n],
            })
        } else {
            let n = usize::try_from(sets * u64::from(ways)).unwrap_or(0);
            let map = SlotTable::new(n);
            Lru::Wide(Wide {
                ways,
                set_mask: sets.next_power_of_two() - 1,
                map,
                slots: vec![Slot { line: 0, prev: NIL, next: NIL }; n],
                data: vec![P::default(); n],
                head: vec![NIL; sets as usize],
                tail: vec![NIL; sets as usize],
                used: vec![0; sets as usize],
            })
        }
    }

    /// The set a line maps to.
    #[inline(always)]
    fn set_of(&self, line: u64) -> usize {
        match self {
            Lru::Narrow(c) if c.ways == 0 => 0,
            Lru::Narrow(c) => (line % c.sets) as usize,
            Lru::Wide(c) => (line & c.set_mask) as usize,
        }
    }

    /// Host bytes one set's tags and data take.
    fn set_bytes(&self) -> usize {
        match self {
            Lru::Narrow(c) => c.ways * (8 + std::mem::size_of::<P>()),
            Lru::Wide(c) => c.ways as usize * (std::mem::size_of::<Slot>() + std::mem::size_of::<P>()),
        }
    }

    /// Finds the line, making it the most recently used of its set: the index of its data.
    fn find(&mut self, line: u64) -> Option<usize> {
        let set = self.set_of(line);
        match self {
            Lru::Narrow(c) => {
                if c.ways == 0 {
                    return None;
                }
                let base = set * c.ways;
                let w = c.search(base, line)?;
                let d = c.data[base + w];
                c.make_first(base, w, line, d);
                Some(base)
            }
            Lru::Wide(c) => {
                let k = c.map.get(line, &c.slots)?;
                if c.head[set] != k {
                    c.unlink(set, k);
                    c.push_front(set, k);
                }
                Some(k as usize)
            }
        }
    }

    /// Finds the line or allocates it ([`Lru::find`], else [`Lru::insert_in`]) in one search of its set.
    #[inline(always)]
    fn touch(&mut self, line: u64) -> Option<(usize, Option<(u64, P)>)> {
        let set = self.set_of(line);
        self.touch_in(set, line)
    }

    /// [`Lru::touch`] with the line's set known.
    #[inline(always)]
    fn touch_in(&mut self, set: usize, line: u64) -> Option<(usize, Option<(u64, P)>)> {
        match self {
            Lru::Narrow(c) => {
                if c.ways == 0 {
                    return None;
                }
                Some(c.rotate_in(set * c.ways, line))
            }
            Lru::Wide(c) => match c.map.get(line, &c.slots) {
                Some(k) => {
                    if c.head[set] != k {
                        c.unlink(set, k);
                        c.push_front(set, k);
                    }
                    Some((k as usize, None))
                }
                None => self.insert_in(set, line),
            },
        }
    }

    /// Allocates an absent line as the most recently used of its set `set`, with default data: the index of its
    /// data and the evicted line with its data. `None` in a cache with no ways.
    fn insert_in(&mut self, set: usize, line: u64) -> Option<(usize, Option<(u64, P)>)> {
        match self {
            Lru::Narrow(c) => {
                if c.ways == 0 {
                    return None;
                }
                c.allocate(set * c.ways, line)
            }
            Lru::Wide(c) => {
                let s = set;
                let (k, old) = if c.used[s] < c.ways {
                    let k = s as u32 * c.ways + c.used[s];
                    c.used[s] += 1;
                    (k, None)
                } else {
                    let k = c.tail[s];
                    c.unlink(s, k);
                    let old = c.slots[k as usize].line;
                    c.map.remove(old, k, &c.slots);
                    (k, Some((old, c.data[k as usize])))
                };
                c.slots[k as usize] = Slot { line, prev: NIL, next: NIL };
                c.data[k as usize] = P::default();
                c.push_front(s, k);
                c.map.insert(line, k);
                Some((k as usize, old))
            }
        }
    }

    /// The number of sets.
    fn sets(&self) -> usize {
        match self {
            Lru::Narrow(c) => c.sets.get() as usize,
            Lru::Wide(c) => c.head.len(),
        }
    }

    /// The ways per set.
    fn ways(&self) -> usize {
        match self {
            Lru::Narrow(c) => c.ways,
            Lru::Wide(c) => c.ways as usize,
        }
    }

    /// Calls `f` with each line of set `set` and its data, most recently used first, while `f` returns true.
    #[cold]
    fn walk_set(&self, set: usize, mut f: impl FnMut(u64, P) -> bool) {
        match self {
            Lru::Narrow(c) => {
                let base = set * c.ways;
                for j in base..base + c.ways {
                    if c.tags[j] == EMPTY || !f(c.tags[j], c.data[j]) {
                        return;
                    }
                }
            }
            Lru::Wide(c) => {
                let mut k = c.head[set];
                while k != NIL {
                    if !f(c.slots[k as usize].line, c.data[k as usize]) {
                        return;
                    }
                    k = c.slots[k as usize].next;
                }
            }
        }
    }

    /// Empties every set.
    #[cold]
    fn clear(&mut self) {
        match self {
            Lru::Narrow(c) => c.tags.fill(EMPTY),
            Lru::Wide(c) => {
                c.map.entries.fill(0);
                c.head.fill(NIL);
                c.tail.fill(NIL);
                c.used.fill(0);
            }
        }
    }

    /// Replaces set `set`'s contents with `lines` (line and data, most recently used first; at most the ways).
    /// The cache behaves from then on as one that reached this recency order by accesses.
    #[cold]
    fn set_lines(&mut self, set: usize, lines: &[(u64, P)]) {
        match self {
            Lru::Narrow(c) => {
                let base = set * c.ways;
                for j in 0..c.ways {
                    let (t, d) = lines.get(j).copied().unwrap_or((EMPTY, P::default()));
                    c.tags[base + j] = t;
                    c.data[base + j] = d;
                }
            }
            Lru::Wide(c) => {
                // The old lines leave the map first, then the new ones take the set's first slots in order.
                let mut k = c.head[set];
                while k != NIL {
                    let line = c.slots[k as usize].line;
                    c.map.remove(line, k, &c.slots);
                    k = c.slots[k as usize].next;
                }
                let first = set as u32 * c.ways;
                let n = lines.len().min(c.ways as usize) as u32;
                for (i, &(line, d)) in lines.iter().take(n as usize).enumerate() {
                    let k = first + i as u32;
                    let prev = if i == 0 { NIL } else { k - 1 };
                    let next = if i as u32 + 1 < n { k + 1 } else { NIL };
                    c.slots[k as usize] = Slot { line, prev, next };
                    c.data[k as usize] = d;
                    c.map.insert(line, k);
                }
                c.head[set] = if n > 0 { first } else { NIL };
                c.tail[set] = if n > 0 { first + n - 1 } else { NIL };
                c.used[set] = n;
            }
        }
    }

    /// The data at an index [`Lru::find`] or [`Lru::touch`] gave.
    fn data(&mut self, i: usize) -> &mut P {
        match self {
            Lru::Narrow(c) => &mut c.data[i],
            Lru::Wide(c) => &mut c.data[i],
        }
    }

    fn for_each(&self, mut f: impl FnMut(&P)) {
        match self {
            Lru::Narrow(c) => c.tags.iter().zip(&c.data).filter(|(t, _)| **t != EMPTY).for_each(|(_, d)| f(d)),
            Lru::Wide(c) => {
                for (s, &used) in c.used.iter().enumerate() {
                    let first = s * c.ways as usize;
                    c.data[first..first + used as usize].iter().for_each(&mut f);
                }
            }
        }
    }
}

#[derive(Clone, Copy, Default)]
struct L2Line {
    valid: u8,
    dirty: u8,
    /// Sectors whose 32 bytes were all written.
    full: u8,
    /// Sectors with some bytes written: which, in [`Machine::partial`].
    partial: u8,
}

/// Sectors per page of the bounds' record (1 MiB of addresses).
const PAGE_SECTORS: usize = 1 << 15;

struct Page {
    seen: Vec<u64>,
    /// Sectors whose 32 bytes have all been written (a bit each, as `seen`); empty until the first write.
    full: Vec<u64>,
    /// The written bytes of sectors written in part, by sector index in the page.
    partial: FxHashMap<u32, u32>,
}

/// Host bytes a page of the bounds' record takes, besides its partly written sectors.
const PAGE_BYTES: u64 = 2 * (PAGE_SECTORS as u64 / 8) + 64;
/// Host bytes a partly written sector takes in the record.
const PARTIAL_BYTES: u64 = 16;

/// What each sector's first access was and which bytes were written: the schedule-free bounds.
struct Bounds {
    pages: FxHashMap<u64, usize>,
    store: Vec<Page>,
    /// Recently used pages, by page number mod [`RECENT`]: (page + 1, index in `store`); 0 = none.
    recent: [(u64, u32); RECENT],
    compulsory: u64,
    unique_written: u64,
    /// Sectors written in part, in every page.
    partial_sectors: u64,
}

/// Pages remembered without a hash lookup (a kernel's arrays interleave their pages).
const RECENT: usize = 64;

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            pages: FxHashMap::default(),
            store: Vec::new(),
            recent: [(0, 0); RECENT],
            compulsory: 0,
            unique_written: 0,
            partial_sectors: 0,
        }
    }
}

impl Bounds {
    #[inline(always)]
    fn page(&mut self, sector: u64) -> &mut Page {
        let key = sector >> 15;
        let slot = key as usize % RECENT;
        let idx = match self.recent[slot] {
            (k, i) if k == key.wrapping_add(1) => i as usize,
            _ => {
                let next = self.store.len();
                let i = *self.pages.entry(key).or_insert(next);
                if i == next {
                    self.store.push(Page {
                        seen: vec![0; PAGE_SECTORS / 64],
                        full: Vec::new(),
                        partial: FxHashMap::default(),
                    });
                }
                self.recent[slot] = (key.wrapping_add(1), i as u32);
                i
            }
        };
        &mut self.store[idx]
    }

    /// Records an access to the sectors `mask` of `line`: `read` when it reads (a load or an atomic), `bytes`
    /// written per sector (none for a load). A line's four sectors share one word of the page's bits.
    #[inline(always)]
    fn access(&mut self, line: u64, mask: u8, read: bool, bytes: Option<&[u32; 4]>) {
        let first = (line << 2) as usize & (PAGE_SECTORS - 1);
        let p = self.page(line << 2);
        let (word, shift) = (first / 64, first % 64);
        let fresh = (!(p.seen[word] >> shift) as u8) & mask & 0xF;
        p.seen[word] |= u64::from(mask) << shift;
        if read {
            self.compulsory += 32 * u64::from(fresh.count_ones());
        }
        if let Some(bytes) = bytes {
            self.write(line, mask, bytes);
        }
    }

    /// The written part of [`Bounds::access`] (stores and atomics): which bytes of each sector are now written.
    #[inline(never)]
    fn write(&mut self, line: u64, mask: u8, bytes: &[u32; 4]) {
        let first = (line << 2) as usize & (PAGE_SECTORS - 1);
        let p = self.page(line << 2);
        let (word, shift) = (first / 64, first % 64);
        let mut new_bytes = 0;
        {
            if p.full.is_empty() {
                p.full = vec![0; PAGE_SECTORS / 64];
            }
            let mut partial_change = 0i64;
            for (s, &b) in bytes.iter().enumerate() {
                if mask >> s & 1 == 0 || p.full[word] >> (shift + s) & 1 != 0 {
                    continue;
                }
                let k = (first + s) as u32;
                let before = p.partial.get(&k).copied().unwrap_or(0);
                new_bytes += u64::from((b & !before).count_ones());
                let now = before | b;
                if now == u32::MAX {
                    p.full[word] |= 1 << (shift + s);
                    if before != 0 {
                        p.partial.remove(&k);
                        partial_change -= 1;
                    }
                } else if now != before {
                    if before == 0 {
                        partial_change += 1;
                    }
                    p.partial.insert(k, now);
                }
            }
            self.partial_sectors = self.partial_sectors.wrapping_add_signed(partial_change);
        }
        self.unique_written += new_bytes;
    }
}

/// The modelled memory system of one device: its SMs' L1 parts ([`Sm`]), which never see one another, and L2 with
/// device memory, which sees every SM's requests in the model's order.
pub struct Machine {
    /// Per SM, its L1/TEX (and read-only cache) with the counts it made.
    pub sms: Vec<Sm>,
    l2: Lru<L2Line>,
    /// The written bytes of sectors in L2 that are partly written, by sector.
    partial: FxHashMap<u64, u32>,
    bounds: Bounds,
    /// Per instruction (L2 and device memory; each SM keeps its L1 counts until [`Machine::finish`]).
    pub sites: Vec<SiteTraffic>,
    /// Kernel totals (L2 and device memory, as `sites`).
    pub totals: Totals,
    /// For watched issues ([`Issue::watch`]): each sector the lanes touched and where it was served, as
    /// (watch id, sector address >> 5, [`Served`]), in the model's order.
    pub served: Vec<(u32, u64, Served)>,
    /// Requests routed to L2 and not yet served, by bucket of sets ([`Machine::route`]).
    buckets: Vec<Vec<Routed>>,
    /// A set's bucket: `set >> bucket_shift`.
    bucket_shift: u32,
    /// The bytes and watch of routed stores, atomics and watched requests.
    extras: Vec<Extra>,
    /// The served entries of routed watched requests, in the model's order, until [`Machine::drain`].
    pending: Vec<(u32, u64, Served)>,
    /// Whether the bounds are recorded (a schedule check leaves them out: no schedule changes them).
    pub bounds_on: bool,
}

/// A request waiting in its bucket: its L2 set and its entry in [`Machine::extras`] ([`NO_EXTRA`]: a load nobody
/// watches).
#[derive(Clone, Copy)]
struct Routed {
    req: L2Request,
    set: u32,
    extra: u32,
}

const NO_EXTRA: u32 = u32::MAX;

/// A routed request's written bytes, its watch id and where its served entries start in [`Machine::pending`].
struct Extra {
    bytes: [u32; 4],
    watch: u32,
    served_at: u32,
}

/// The host bytes of L2 sets one bucket covers: they stay in the host's caches while the bucket is served.
const BUCKET_BYTES: usize = 64 << 10;

/// One SM's L1/TEX part: its caches and what it counted. An SM sees only its own issues, so SMs may run apart
/// (on other threads) as long as L2 then serves their requests in the model's order.
pub struct Sm {
    l1: Lru<u8>,
    read_only: Option<Lru<u8>>,
    /// L1 traffic per instruction.
    sites: Vec<Traffic>,
    /// L1 traffic by space and operation.
    totals: [[Traffic; 4]; 2],
    /// As [`Machine::served`], for the L1 hits of watched issues, until L2 takes them in order.
    served: Vec<(u32, u64, Served)>,
    /// When asked for ([`Sm::fresh`]): each line's first touch.
    first: Option<Box<FirstTouch>>,
}

/// Per line an SM's caches touched (by cache: 0 L1, 1 the read-only cache), how many lines its set had
/// allocated before the line's first touch: a line that was already in the set `p` places below the most
/// recent one would have been evicted by then when `p` plus that count reaches the set's ways.
#[derive(Default)]
pub struct FirstTouch {
    /// `line << 1 | cache` -> allocations in the line's set before its first touch.
    lines: FxHashMap<u64, u32>,
    allocs: [[u32; 4]; 2],
}

impl FirstTouch {
    #[cold]
    fn touch(&mut self, cache: u8, line: u64) {
        let n = self.allocs[usize::from(cache)][(line & 3) as usize];
        self.lines.entry(line << 1 | u64::from(cache)).or_insert(n);
    }
}

/// What an SM's L1 passes on to L2 during a round, in order: the requests, and the written bytes of each store
/// and atomic request (in the same order).
#[derive(Default)]
pub struct Outbox {
    /// The requests.
    pub reqs: Vec<L2Request>,
    bytes: Vec<[u32; 4]>,
    /// The next entry of `bytes` that L2 takes.
    taken: usize,
}

impl Outbox {
    /// Empties it for the next round, keeping its memory.
    pub fn clear(&mut self) {
        self.reqs.clear();
        self.bytes.clear();
        self.taken = 0;
    }
}

/// Where a watched issue's sector was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Served {
    /// An L1 (or 3.5/3.7 read-only cache) hit.
    L1,
    /// L2: a hit, a store, or an atomic on a resident sector.
    L2,
    /// An L2 miss that read the sector from device memory.
    Dram,
}

/// No watch: [`Issue::watch`] for an issue nobody draws.
pub const UNWATCHED: u32 = u32::MAX;

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

/// One warp issue as [`Sm::l1`] takes it.
#[derive(Clone, Copy, Debug)]
pub struct Issue<'a> {
    /// The instruction.
    pub site: usize,
    /// The cache it goes through.
    pub u: L1Use,
    /// Local memory.
    pub local: bool,
    /// Its lines, request by request, each request's lines in increasing address ([`LineAccess::lines`]).
    pub lines: &'a [LineAccess],
    /// The written bytes its store or atomic lines name ([`LineAccess::bytes`]).
    pub bytes: &'a [[u32; 4]],
    /// Lines to add to every line: a block played as a translation of another (a multiple of 128 bytes).
    pub shift_lines: u64,
    /// An id under which the issue's sectors are recorded with where they were served ([`Machine::served`]),
    /// or [`UNWATCHED`].
    pub watch: u32,
}

/// One line of a warp issue: what its lanes touch in one 128-byte line of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineAccess {
    /// The line (`address >> 7`).
    pub line: u64,
    /// The sectors the lanes touch (bit i = sector i).
    pub sectors: u8,
    /// The first line of a request.
    pub request: bool,
    /// For a store or an atomic, the index of the line's written bytes (per sector) in the issue's bytes.
    pub bytes: u32,
}

impl LineAccess {
    /// Groups the sectors of an issue through `u` (request by request, each request's sectors in increasing
    /// address) into its lines, appending them to `lines` and, for a store or an atomic, each line's written
    /// bytes to `bytes`.
    pub fn lines(acc: &[Access], u: L1Use, lines: &mut Vec<LineAccess>, bytes: &mut Vec<[u32; 4]>) {
        let written = matches!(u, L1Use::Store | L1Use::Atomic { .. });
        let mut i = 0;
        while i < acc.len() {
            let line = acc[i].sector >> 2;
            let mut j = i + 1;
            while j < acc.len() && !acc[j].request && acc[j].sector >> 2 == line {
                j += 1;
            }
            let mut mask = 0u8;
            let mut b = [0u32; 4];
            for a in &acc[i..j] {
                mask |= 1 << (a.sector & 3);
                b[(a.sector & 3) as usize] |= a.bytes;
            }
            let at = if written {
                bytes.push(b);
                (bytes.len() - 1) as u32
            } else {
                0
            };
            lines.push(LineAccess { line, sectors: mask, request: acc[i].request || i == 0, bytes: at });
            i = j;
        }
    }
}

/// One request from an SM's L1/TEX to L2 for one line: what [`Sm::l1`] passes on and [`Machine::route`] takes, in
/// the model's order. 16 bytes: a round's requests of every SM are held at once. A store's or an atomic's written
/// bytes travel beside it, in its [`Outbox`].
#[derive(Clone, Copy, Debug)]
pub struct L2Request {
    /// The line (`address >> 7`).
    pub line: u64,
    /// The issuing instruction.
    pub site: u32,
    /// The sectors sent (bit i = sector i).
    pub sectors: u8,
    /// The sectors the lanes touched (a 2.x line fill sends more).
    pub touched: u8,
    kind: Kind,
    /// The operation class (index into [`OPS`]), and local memory in bit 4.
    op: u8,
}

impl Machine {
    /// Empty caches (Nsight Compute's default cache control flushes them before a measured kernel).
    pub fn new(shape: Shape, sites: usize) -> Machine {
        let l1_ways = u32::try_from(shape.l1_bytes / 512).unwrap_or(u32::MAX);
        let ro_ways = u32::try_from(shape.read_only_bytes / 512).unwrap_or(u32::MAX);
        let l2 = Lru::new(shape.l2_sets, shape.l2_ways);
        let per_bucket = (BUCKET_BYTES / l2.set_bytes().max(1)).max(1);
        let bucket_shift = usize::BITS - 1 - per_bucket.leading_zeros();
        let buckets = ((shape.l2_sets.max(1) as usize - 1) >> bucket_shift) + 1;
        Machine {
            sms: (0..shape.sms)
                .map(|_| Sm {
                    l1: Lru::new(4, l1_ways),
                    read_only: (ro_ways > 0).then(|| Lru::new(4, ro_ways)),
                    sites: vec![Traffic::default(); sites],
                    totals: Default::default(),
                    served: Vec::new(),
                    first: None,
                })
                .collect(),
            l2,
            partial: FxHashMap::default(),
            bounds: Bounds::default(),
            sites: vec![SiteTraffic::default(); sites],
            totals: Totals::default(),
            served: Vec::new(),
            buckets: (0..buckets).map(|_| Vec::new()).collect(),
            bucket_shift,
            extras: Vec::new(),
            pending: Vec::new(),
            bounds_on: true,
        }
    }

    /// One warp issue of instruction `site` on SM `sm`, through L1 and then L2 at once.
    pub fn issue(&mut self, sm: usize, site: usize, u: L1Use, local: bool, acc: &[Access]) {
        let (mut lines, mut bytes) = (Vec::new(), Vec::new());
        LineAccess::lines(acc, u, &mut lines, &mut bytes);
        let mut out = Outbox::default();
        let issue = Issue { site, u, local, lines: &lines, bytes: &bytes, shift_lines: 0, watch: UNWATCHED };
        self.sms[sm].l1(&issue, &mut out);
        self.take_l1_served(sm);
        for r in out.reqs.clone() {
            let bytes = out.next_bytes(&r);
            self.route(&r, bytes, UNWATCHED);
        }
        self.drain();
    }

    /// Moves SM `sm`'s recorded L1 hits of watched issues into [`Machine::served`]: before L2 serves the round
    /// they were issued in, so each issue's L1 hits come before its L2 sectors.
    pub fn take_l1_served(&mut self, sm: usize) {
        let s = &mut self.sms[sm].served;
        if !s.is_empty() {
            self.served.append(s);
        }
    }
}

impl Sm {
    /// The L1/TEX part of one warp issue: `issue.lines` holds its lines, request by request, each request's
    /// lines in increasing address. What goes on to L2 is appended to `out`, in order.
    pub fn l1(&mut self, issue: &Issue, out: &mut Outbox) {
        let Issue { site, u, local, lines, bytes, shift_lines, watch } = *issue;
        let op = op_index(u);
        let space = usize::from(local);
        let mut l1 = Traffic::default();
        let kind = match u {
            L1Use::Store => Kind::Store,
            L1Use::Atomic { .. } => Kind::Atomic,
            _ => Kind::Load,
        };
        let through = match u {
            L1Use::Cached { whole_line } => Some((false, whole_line)),
            L1Use::ReadOnly => Some((self.read_only.is_some(), false)),
            _ => None,
        };
        for la in lines {
            l1.requests += u64::from(la.request);
            let line = la.line.wrapping_add(shift_lines);
            let mask = la.sectors;
            l1.sectors += u64::from(mask.count_ones());
            let mut req = L2Request {
                line,
                site: site as u32,
                sectors: mask,
                touched: mask,
                kind,
                op: op as u8 | u8::from(local) << 4,
            };
            match through {
                Some((ro, whole_line)) => {
                    let (cache, ci) = match (&mut self.read_only, ro) {
                        (Some(c), true) => (c, 1),
                        _ => (&mut self.l1, 0),
                    };
                    if let Some(f) = &mut self.first {
                        f.touch(ci, line);
                    }
                    let slot = cache.touch(line).map(|(k, _)| k);
                    let valid = slot.map_or(0, |k| *cache.data(k));
                    if let (Some(f), Some(_), 0) = (&mut self.first, slot, valid) {
                        // A resident line always has a valid sector: this one was just allocated.
                        f.allocs[usize::from(ci)][(line & 3) as usize] += 1;
                    }
                    l1.hits += u64::from((valid & mask).count_ones());
                    if watch != UNWATCHED {
                        for s in (0..SECTORS).filter(|s| (valid & mask) >> s & 1 != 0) {
                            self.served.push((watch, line << 2 | u64::from(s), Served::L1));
                        }
                    }
                    let mut missing = mask & !valid;
                    if whole_line && missing != 0 {
                        missing = 0xF & !valid;
                    }
                    if let Some(k) = slot {
                        *cache.data(k) = valid | missing;
                    }
                    if missing != 0 {
                        req.sectors = missing;
                        out.reqs.push(req);
                    } else if whole_line {
                        // A 2.x line fill validates sectors no lane had touched: a later hit on one can be its
                        // first access, which the bounds must see in the model's order. No L2 traffic.
                        req.sectors = 0;
                        out.reqs.push(req);
                    }
                }
                None => {
                    if u == L1Use::Store {
                        if let Some(f) = &mut self.first {
                            f.touch(0, line);
                        }
                        let cache = &mut self.l1;
                        if let Some(k) = cache.find(line) {
                            *cache.data(k) |= mask;
                        }
                    }
                    if kind != Kind::Load {
                        out.bytes.push(bytes[la.bytes as usize]);
                    }
                    out.reqs.push(req);
                }
            }
        }
        self.sites[site].add(&l1);
        self.totals[space][op].add(&l1);
    }
}

/// An SM's L1 traffic counts: per instruction, and by space and operation.
pub type SmCounts = (Vec<Traffic>, [[Traffic; 4]; 2]);

/// An SM's cached lines: per cache, per set, most recently used first, (line, valid sectors, a tag).
pub type CacheLines = Vec<Vec<Vec<(u64, u8, u8)>>>;

impl Sm {
    /// An SM like this one with empty caches and no counts, which notes each line's first touch
    /// ([`Sm::take_first_touch`]).
    #[cold]
    pub fn fresh(&self) -> Sm {
        Sm {
            l1: Lru::new(4, self.l1.ways() as u32),
            read_only: self.read_only.as_ref().map(|c| Lru::new(4, c.ways() as u32)),
            sites: vec![Traffic::default(); self.sites.len()],
            totals: Default::default(),
            served: Vec::new(),
            first: Some(Box::default()),
        }
    }

    /// The first touches a [fresh](Sm::fresh) SM noted ([`FirstTouch`]): `line << 1 | cache` -> the allocations
    /// in the line's set before its first touch.
    pub fn take_first_touch(&mut self) -> FxHashMap<u64, u32> {
        self.first.take().map(|f| f.lines).unwrap_or_default()
    }

    /// Calls `f(cache, line, room)` for every line its caches hold (cache 0: L1, 1: the read-only cache), where
    /// `room` is the number of allocations in the line's set that evict it (the ways less its place below the
    /// most recent line), until `f` returns false; false when `f` did.
    #[cold]
    pub fn all_lines(&self, mut f: impl FnMut(u8, u64, u32) -> bool) -> bool {
        for (ci, c) in std::iter::once(&self.l1).chain(self.read_only.as_ref()).enumerate() {
            let ways = c.ways() as u32;
            for set in 0..c.sets() {
                let mut go = true;
                let mut place = 0;
                c.walk_set(set, |line, _| {
                    go = f(ci as u8, line, ways - place);
                    place += 1;
                    go
                });
                if !go {
                    return false;
                }
            }
        }
        true
    }

    /// Per cache (L1, then the read-only cache if any), per set, the lines most recently used first with their
    /// valid sectors and `tag(cache, line)`.
    #[cold]
    pub fn lines(&self, mut tag: impl FnMut(u8, u64) -> u8) -> CacheLines {
        std::iter::once(&self.l1)
            .chain(self.read_only.as_ref())
            .enumerate()
            .map(|(ci, c)| {
                (0..c.sets())
                    .map(|set| {
                        let mut v = Vec::new();
                        c.walk_set(set, |line, valid| {
                            v.push((line, valid, tag(ci as u8, line)));
                            true
                        });
                        v
                    })
                    .collect()
            })
            .collect()
    }

    /// Puts `lines` (as [`Sm::lines`] gives them, each line moved by `moved(line, tag)`) above the lines each
    /// set holds now, which move down and fall out past the set's ways: the state an SM reaches when a wave of
    /// accesses that leaves those lines in that order hits none of the lines it held.
    #[cold]
    pub fn push_recent(&mut self, lines: &CacheLines, moved: impl Fn(u64, u8) -> u64) {
        let caches = std::iter::once(&mut self.l1).chain(self.read_only.as_mut());
        for (c, sets) in caches.zip(lines) {
            let ways = c.ways();
            if sets.iter().all(|s| s.len() >= ways) {
                // Every line goes: an empty cache takes the new ones (its map cleared at once, not line by line).
                c.clear();
            }
            for (set, recent) in sets.iter().enumerate() {
                let mut v: Vec<(u64, u8)> = recent.iter().map(|&(l, valid, tag)| (moved(l, tag), valid)).collect();
                if v.len() < ways {
                    c.walk_set(set, |line, valid| {
                        v.push((line, valid));
                        v.len() < ways
                    });
                }
                c.set_lines(set, &v);
            }
        }
    }

    /// Its L1 traffic counts so far.
    pub fn counts(&self) -> SmCounts {
        (self.sites.clone(), self.totals)
    }

    /// Adds counts made elsewhere (as [`Sm::counts`] gives them).
    #[cold]
    pub fn add_counts(&mut self, c: &SmCounts) {
        for (a, b) in self.sites.iter_mut().zip(&c.0) {
            a.add(b);
        }
        for (a, b) in self.totals.iter_mut().flatten().zip(c.1.iter().flatten()) {
            a.add(b);
        }
    }
}

impl L2Request {
    /// A store or an atomic: its written bytes travel beside it in its [`Outbox`].
    pub fn writes(&self) -> bool {
        self.kind != Kind::Load
    }
}

impl Outbox {
    /// The written bytes of its stores and atomics, in order.
    pub fn written(&self) -> &[[u32; 4]] {
        &self.bytes
    }

    /// The written bytes of its next request `r` taken in order (none for a load).
    #[inline(always)]
    pub fn next_bytes(&mut self, r: &L2Request) -> [u32; 4] {
        if r.writes() {
            self.taken += 1;
            self.bytes[self.taken - 1]
        } else {
            [0; 4]
        }
    }
}

impl Machine {
    /// L2's part of one request, taken in the model's order: the bounds at once, then the request waits in the
    /// bucket of its set until [`Machine::drain`] serves the round (tags, sectors, DRAM reads and write-backs).
    /// An L1 hit is never a sector's first access, except after a 2.x line fill, which sends a request with no
    /// sectors for the bounds alone, so the requests see every first access. `bytes`: a store's or an atomic's
    /// written bytes per sector ([`Outbox::next_bytes`]); `watch` an id as [`Issue::watch`], under which its
    /// sectors are recorded with where they were served.
    #[inline(always)]
    pub fn route(&mut self, r: &L2Request, bytes: [u32; 4], watch: u32) {
        let line = r.line;
        if self.bounds_on {
            match r.kind {
                Kind::Load => self.bounds.access(line, r.touched, true, None),
                Kind::Store => self.bounds.access(line, r.touched, false, Some(&bytes)),
                Kind::Atomic => self.bounds.access(line, r.touched, true, Some(&bytes)),
            }
        }
        if r.sectors == 0 {
            return;
        }
        let set = self.l2.set_of(line);
        let extra = if r.kind == Kind::Load && watch == UNWATCHED {
            NO_EXTRA
        } else {
            // A watched request's sectors take their places in `served` now, in the model's order; serving
            // fills in where each was served.
            let served_at = self.pending.len() as u32;
            if watch != UNWATCHED {
                for s in (0..SECTORS).filter(|s| (r.sectors & r.touched) >> s & 1 != 0) {
                    self.pending.push((watch, line << 2 | u64::from(s), Served::L2));
                }
            }
            self.extras.push(Extra { bytes, watch, served_at });
            (self.extras.len() - 1) as u32
        };
        self.buckets[set >> self.bucket_shift].push(Routed { req: *r, set: set as u32, extra });
    }

    /// Serves the routed requests, bucket by bucket. L2's sets never see one another, so serving each set's
    /// requests in the model's order gives the model's figures, while a bucket's sets stay in the host's caches.
    pub fn drain(&mut self) {
        for b in 0..self.buckets.len() {
            let mut bucket = std::mem::take(&mut self.buckets[b]);
            for x in &bucket {
                self.serve(x);
            }
            bucket.clear();
            self.buckets[b] = bucket;
        }
        self.served.append(&mut self.pending);
        self.extras.clear();
    }

    #[inline(always)]
    fn serve(&mut self, x: &Routed) {
        let r = &x.req;
        let line = r.line;
        let set = x.set as usize;
        let (bytes, watch, served_at) = match self.extras.get(x.extra as usize) {
            Some(e) => (e.bytes, e.watch, e.served_at as usize),
            None => ([0; 4], UNWATCHED, 0),
        };
        let k = match self.l2.touch_in(set, line) {
            Some((k, old)) => {
                if let Some((tag, old)) = old {
                    self.totals.dram_write_bytes += 32 * u64::from(old.dirty.count_ones());
                    if old.partial != 0 {
                        for s in 0..SECTORS {
                            if old.partial >> s & 1 != 0 {
                                self.partial.remove(&(tag << 2 | u64::from(s)));
                            }
                        }
                    }
                }
                Some(k)
            }
            None => None,
        };
        let mut spare = L2Line::default();
        let l = match k {
            Some(k) => self.l2.data(k),
            None => &mut spare,
        };
        let before = l.valid | l.full;
        let sectors = u64::from(r.sectors.count_ones());
        let (mut hits, mut dram) = (0u64, 0u64);
        if r.kind == Kind::Load {
            // A sector is present when valid or fully written; a missing one is read from DRAM.
            let missing = r.sectors & !before;
            hits = u64::from((r.sectors & before).count_ones());
            dram = 32 * u64::from(missing.count_ones());
            l.valid |= missing;
        } else {
            for s in 0..SECTORS {
                if r.sectors >> s & 1 == 0 {
                    continue;
                }
                let bit = 1u8 << s;
                let present = (l.valid | l.full) & bit != 0;
                let mut write = |l: &mut L2Line| {
                    let b = bytes[s as usize];
                    if l.full & bit != 0 || b == 0 {
                        return;
                    }
                    let sector = line << 2 | u64::from(s);
                    let so_far = if l.partial & bit != 0 { self.partial.get(&sector).copied().unwrap_or(0) } else { 0 };
                    let now = so_far | b;
                    if now == u32::MAX {
                        l.full |= bit;
                        if l.partial & bit != 0 {
                            self.partial.remove(&sector);
                            l.partial &= !bit;
                        }
                    } else {
                        self.partial.insert(sector, now);
                        l.partial |= bit;
                    }
                };
                if r.kind == Kind::Store {
                    hits += 1;
                    write(l);
                    l.dirty |= bit;
                } else {
                    if present {
                        hits += 1;
                    } else {
                        dram += 32;
                        l.valid |= bit;
                    }
                    write(l);
                    l.dirty |= bit;
                }
            }
        }
        if watch != UNWATCHED {
            // Which sectors missed: those the request sent that were neither valid nor fully written before.
            let touched = (0..SECTORS).filter(|s| (r.sectors & r.touched) >> s & 1 != 0);
            for (at, s) in (served_at..).zip(touched) {
                if r.kind != Kind::Store && before & (1u8 << s) == 0 {
                    self.pending[at].2 = Served::Dram;
                }
            }
        }
        let t = Traffic { requests: 1, sectors, hits };
        let site = &mut self.sites[r.site as usize];
        site.l2.add(&t);
        site.dram_read_bytes += dram;
        self.totals.l2[usize::from(r.op >> 4)][usize::from(r.op & 3)].add(&t);
        self.totals.dram_read_bytes += dram;
    }

    /// Host bytes the record behind the bounds holds: it grows with the distinct memory the run touches (a page
    /// per MiB of addresses), while the caches stay the size they model.
    pub fn record_bytes(&self) -> u64 {
        self.bounds.store.len() as u64 * PAGE_BYTES + self.bounds.partial_sectors * PARTIAL_BYTES
    }

    /// Ends the run: adds up the SMs' L1 counts, counts the dirty sectors left in L2 and fills in the bounds.
    pub fn finish(self) -> (Vec<SiteTraffic>, Totals) {
        let mut totals = self.totals;
        let mut sites = self.sites;
        for sm in &self.sms {
            for (site, t) in sites.iter_mut().zip(&sm.sites) {
                site.l1.add(t);
            }
            for (space, ops) in totals.l1.iter_mut().zip(&sm.totals) {
                for (o, t) in space.iter_mut().zip(ops) {
                    o.add(t);
                }
            }
        }
        let mut dirty = 0;
        self.l2.for_each(|l| dirty += 32 * u64::from(l.dirty.count_ones()));
        totals.dirty_at_end_bytes = dirty;
        totals.dram_write_bytes += dirty;
        totals.compulsory_read_bytes = self.bounds.compulsory;
        totals.unique_written_bytes = self.bounds.unique_written;
        (sites, totals)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Load,
    Store,
    Atomic,
}
