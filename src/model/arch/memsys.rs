//! What each CC's memory system holds across warps and blocks (docs/model.md#device-presets): the device presets (the CC
//! menu's example GPU: SMs, L2 size and ways, residency limits, L1 capacity), which loads allocate in L1, and
//! how many blocks an SM holds for a launch. The cache simulator in [`crate::model::cache`] follows what this
//! module decides without knowing which GPU it came from.

use super::{Cc, Family, L1Choice};
use crate::model::access::{Base, CacheOp, Instr, Space};
use serde::{Deserialize, Serialize};

/// Binary kilobyte.
pub const KB: u64 = 1024;
/// Binary megabyte.
pub const MB: u64 = 1024 * 1024;

/// The device a cache figure is modelled on. Every field is editable (page and CLI); the defaults are the CC's
/// row of docs/model.md#device-presets preset table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preset {
    /// The GPU the row describes.
    pub gpu: String,
    /// Streaming multiprocessors.
    pub sms: u32,
    /// L2 bytes.
    pub l2_bytes: u64,
    /// L2 associativity.
    pub l2_ways: u32,
    /// Most resident threads per SM.
    pub max_threads_per_sm: u32,
    /// Most resident blocks per SM.
    pub max_blocks_per_sm: u32,
    /// Unified L1 + shared bytes per SM (7.0 and later), or `None` where L1 is fixed.
    pub unified_bytes: Option<u64>,
    /// L1 bytes where L1 is not unified with shared memory (before 7.0).
    pub fixed_l1_bytes: u64,
    /// Where the row's values come from, and what could not be checked.
    pub source: String,
}

/// `(gpu, SMs, L2 KB, ways, threads/SM, blocks/SM, unified KB, fixed L1 KB)` per CC, docs/model.md#the-memory-system table.
#[allow(clippy::type_complexity)]
const ROWS: [(&str, u32, u64, u32, u32, u32, u64, u64); 16] = [
    ("GeForce GTX 480", 15, 768, 8, 1536, 8, 0, 16),
    ("GeForce GTX 680", 8, 512, 16, 2048, 16, 0, 16),
    ("Tesla K40", 15, 1536, 16, 2048, 16, 0, 16),
    ("Tesla K80 (one GPU)", 13, 1536, 16, 2048, 16, 0, 16),
    ("GeForce GTX 750 Ti", 5, 2048, 16, 2048, 32, 0, 24),
    ("GeForce GTX 980", 16, 2048, 16, 2048, 32, 0, 24),
    ("Tesla P100", 56, 4096, 16, 2048, 32, 0, 24),
    ("GeForce GTX 1080", 20, 2048, 16, 2048, 32, 0, 48),
    ("Tesla V100", 80, 6144, 24, 2048, 32, 128, 0),
    ("Tesla T4", 40, 4096, 16, 1024, 16, 96, 0),
    ("A100", 108, 40 * 1024, 16, 2048, 32, 192, 0),
    ("GeForce RTX 3090", 82, 6144, 16, 1536, 16, 128, 0),
    ("GeForce RTX 4090", 128, 72 * 1024, 16, 1536, 24, 128, 0),
    ("H100 SXM5", 132, 50 * 1024, 16, 2048, 32, 256, 0),
    ("B200", 148, 126 * 1024, 16, 2048, 32, 256, 0),
    ("GeForce RTX 5090", 170, 96 * 1024, 16, 1536, 32, 128, 0),
];

/// The bytes of 3.5/3.7's read-only data cache (docs/model.md#the-memory-system: 48 KB, laid out like L1).
pub const READ_ONLY_BYTES: u64 = 48 * KB;

impl Preset {
    /// The CC's row of docs/model.md#device-presets preset table.
    pub fn of(cc: Cc) -> Preset {
        let (gpu, sms, l2_kb, ways, threads, blocks, unified_kb, fixed_kb) = ROWS[usize::from(cc.index)];
        let unchecked = match cc.family() {
            Family::Fermi | Family::Kepler | Family::Maxwell => {
                "; L2 ways are this model's choice where no simulator configuration exists"
            }
            _ => "",
        };
        Preset {
            gpu: gpu.into(),
            sms,
            l2_bytes: l2_kb * KB,
            l2_ways: ways,
            max_threads_per_sm: threads,
            max_blocks_per_sm: blocks,
            unified_bytes: (unified_kb > 0).then_some(unified_kb * KB),
            fixed_l1_bytes: fixed_kb * KB,
            source: format!(
                "SMs and L2 size from NVIDIA's whitepapers and device tables, residency limits from the CUDA \
                 Programming Guide's compute-capability table, L2 ways from the Accel-Sim configurations{unchecked}"
            ),
        }
    }

    /// L2 sets: bytes / (128 x ways), at least 1.
    pub fn l2_sets(&self) -> u64 {
        (self.l2_bytes / (128 * u64::from(self.l2_ways.max(1)))).max(1)
    }
}

/// The shared-memory capacities (bytes) a CC's carveout chooses among, smallest first.
fn shared_capacities(cc: Cc) -> Vec<u64> {
    cc.facts().shared_capacities_kb.iter().map(|&k| u64::from(k) * KB).collect()
}

/// How many blocks an SM holds and what is left for L1 (docs/model.md#the-memory-system, step 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Residency {
    /// Blocks per SM the thread and block limits allow.
    pub r0: u32,
    /// Blocks per SM the model runs.
    pub r: u32,
    /// The shared-memory carveout per SM (7.0 and later), in bytes.
    pub carveout_bytes: Option<u64>,
    /// L1 bytes per SM.
    pub l1_bytes: u64,
}

/// Residency for blocks of `threads` threads using `shared` bytes of shared memory (static + dynamic).
pub fn residency(cc: Cc, p: &Preset, threads: u32, shared: u64) -> Residency {
    let r0 = p.max_blocks_per_sm.min(p.max_threads_per_sm / threads.max(1)).max(1);
    match p.unified_bytes {
        None => Residency { r0, r: r0, carveout_bytes: None, l1_bytes: p.fixed_l1_bytes },
        Some(unified) => {
            let caps = shared_capacities(cc);
            let need = u64::from(r0) * shared;
            let (carveout, r) = match caps.iter().find(|&&c| need <= c) {
                Some(&c) => (c, r0),
                None => {
                    let largest = caps.last().copied().unwrap_or(0);
                    let r = largest.checked_div(shared).map_or(r0, |n| u32::try_from(n).unwrap_or(u32::MAX).max(1));
                    (largest, r.min(r0))
                }
            };
            Residency { r0, r, carveout_bytes: Some(carveout), l1_bytes: unified.saturating_sub(carveout) }
        }
    }
}

/// The carveouts (bytes) a CC offers, for a menu.
pub fn carveouts(cc: Cc) -> Vec<u64> {
    if cc.facts().percent_carveout {
        shared_capacities(cc)
    } else {
        Vec::new()
    }
}

/// L1 bytes for a carveout on a unified CC (`unified - carveout`), or the fixed L1 size.
pub fn l1_for_carveout(p: &Preset, carveout: Option<u64>) -> u64 {
    match (p.unified_bytes, carveout) {
        (Some(u), Some(c)) => u.saturating_sub(c),
        (Some(u), None) => u,
        (None, _) => p.fixed_l1_bytes,
    }
}

/// Which cache of the SM a global or local access of an issue goes through (docs/model.md#the-memory-system, "What is cached in
/// L1, per CC").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum L1Use {
    /// A load that allocates in L1 (`whole_line`: 2.x fills all four sectors of a missing line).
    Cached {
        /// A miss fetches the whole 128-byte line.
        whole_line: bool,
    },
    /// A load through 3.5/3.7's read-only data cache (48 KB, laid out like L1).
    ReadOnly,
    /// A load that skips L1: counted as L1 requests and sectors with no hits.
    Uncached,
    /// A store: write-through to L2; a line present in L1 is updated.
    Store,
    /// An atomic: passes through L1 to L2, which performs it.
    Atomic {
        /// The result is unused (`RED`): counted under `op_red`.
        reduction: bool,
    },
}

/// Whether the instruction is a read-only (non-coherent) load: `LDG.CONSTANT`, `.CI`, `ld.global.nc`, `__ldg`.
fn read_only(instr: &Instr) -> bool {
    instr.effective_cop() == CacheOp::Ci
}

/// The cache a load or store of `instr` in `space` uses on `cc` with the user's L1 choice.
pub fn l1_use(cc: Cc, instr: &Instr, space: Space, l1: L1Choice) -> L1Use {
    if instr.is_store() {
        return L1Use::Store;
    }
    if instr.base.is_atomic() {
        return L1Use::Atomic { reduction: instr.base == Base::Red };
    }
    // cp.async's global side is a load; `.CG` (16-byte copies) bypasses L1 like any `.CG` load.
    let cop = if instr.base == Base::Ldgsts { instr.cop } else { instr.effective_cop() };
    if matches!(cop, CacheOp::Cg | CacheOp::Cv) {
        return L1Use::Uncached;
    }
    let cached = L1Use::Cached { whole_line: false };
    let ro = read_only(instr) || (instr.base == Base::Ldg && cc.family() == Family::Kepler);
    match cc.family() {
        Family::Fermi if l1 == L1Choice::Off && space == Space::Global => L1Use::Uncached,
        Family::Fermi => L1Use::Cached { whole_line: true },
        Family::Kepler if space == Space::Local => cached,
        Family::Kepler if ro && cc >= Cc::new(3, 5) => L1Use::ReadOnly,
        Family::Kepler if l1 == L1Choice::On => cached,
        Family::Kepler => L1Use::Uncached,
        Family::Maxwell if space == Space::Local => L1Use::Uncached,
        Family::Maxwell if read_only(instr) => cached,
        Family::Maxwell if cc != Cc::new(5, 0) && l1 == L1Choice::On => cached,
        Family::Maxwell => L1Use::Uncached,
        Family::Pascal if space == Space::Local || read_only(instr) => cached,
        Family::Pascal if cc == Cc::new(6, 0) && l1 != L1Choice::Off => cached,
        Family::Pascal if l1 == L1Choice::On => cached,
        Family::Pascal => L1Use::Uncached,
        _ if l1 == L1Choice::Off && space == Space::Global && !read_only(instr) => L1Use::Uncached,
        _ => cached,
    }
}

/// Whether the CC has 3.5/3.7's separate read-only data cache.
pub fn has_read_only_cache(cc: Cc) -> bool {
    cc.family() == Family::Kepler && cc >= Cc::new(3, 5)
}
