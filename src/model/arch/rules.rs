//! The rules the engine follows: pure functions from a CC, an access and the user's settings to how the
//! access is split and which cache and banks serve it. They say nothing to the user; what the product says
//! about them (disagreements between sources, unverified cases) is the table in [`super::notes`].

use super::{BankMode, Cc, Family, L1Choice};
use crate::model::access::{Base, CacheOp, Space};
use serde::{Deserialize, Serialize};

/// Which cache a global or local access goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataPath {
    /// Cached in L1 and L2.
    L1,
    /// Cached in L2 only.
    L2,
    /// The read-only (texture / non-coherent) data cache.
    ReadOnly,
}

/// A global or local access as the rules see it.
#[derive(Clone, Copy, Debug)]
pub struct MemoryAccess {
    /// Global or local.
    pub space: Space,
    /// The mnemonic (LDG and LD differ on Kepler).
    pub base: Base,
    /// The cache operator after aliases.
    pub cop: CacheOp,
    /// Bytes per lane.
    pub size_bytes: u32,
}

/// How a global or local access becomes requests and transactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryRule {
    /// Lanes per request: 32, or 16 / 8 for 8- / 16-byte accesses on CC 2.x and 3.x.
    pub lanes_per_request: u32,
    /// Bytes per transaction: 128 (a line on an L1-cached path of 2.x/3.x, or a segment on 5.2 with L1 on)
    /// or 32 (a sector or segment).
    pub transaction_bytes: u32,
    /// The cache the data goes through.
    pub path: DataPath,
}

/// Chooses the rule for a global or local access.
pub fn memory_rule(cc: Cc, acc: MemoryAccess, l1: L1Choice) -> MemoryRule {
    let split = cc.splits_wide_requests();
    let lanes_per_request = match (split, acc.size_bytes) {
        (true, 8) => 16,
        (true, 16) => 8,
        _ => 32,
    };
    let rule = |path: DataPath| MemoryRule {
        lanes_per_request,
        transaction_bytes: if path == DataPath::L1 && (split || cc == Cc::new(5, 2)) { 128 } else { 32 },
        path,
    };
    let l2_only_cop = acc.cop.bypasses_l1();
    let family = cc.family();
    // Atomics and reductions pass through L1 to L2, which performs them (docs/model.md#the-memory-system, docs/model.md#atomics): costed as stores are.
    let store = acc.base.writes();
    rule(match (family, acc.space, store) {
        // Local memory on 2.x/3.x is cached in L1 and L2 (128-byte transactions), loads and stores alike.
        (Family::Fermi | Family::Kepler, Space::Local, _) => DataPath::L1,
        // Stores bypass L1 on 2.x and go to L2 on 3.x: 32-byte granularity.
        (_, _, true) => DataPath::L2,
        (Family::Fermi, _, false) if l2_only_cop || l1 == L1Choice::Off => DataPath::L2,
        (Family::Fermi, _, false) => DataPath::L1,
        // On 3.5+ LDG and .CI loads are the non-coherent read-only path.
        (Family::Kepler, _, false) if cc >= Cc::new(3, 5) && (acc.base == Base::Ldg || acc.cop == CacheOp::Ci) => {
            DataPath::ReadOnly
        }
        (Family::Kepler, _, false) if !l2_only_cop && l1 == L1Choice::On => DataPath::L1,
        (Family::Kepler, _, false) => DataPath::L2,
        (Family::Maxwell, _, false) if acc.cop == CacheOp::Ci => DataPath::ReadOnly,
        // CC 5.0 never caches ordinary global data in L1.
        (Family::Maxwell, _, false) if cc != Cc::new(5, 0) && l1 == L1Choice::On && !l2_only_cop => DataPath::L1,
        (Family::Maxwell, _, false) => DataPath::L2,
        (_, _, false) => match (acc.cop, l1, l2_only_cop) {
            (CacheOp::Ci, _, _) => DataPath::ReadOnly,
            (_, L1Choice::Off, _) | (_, _, true) => DataPath::L2,
            _ if family == Family::Pascal => DataPath::L2,
            _ => DataPath::L1,
        },
    })
}

/// How lanes' 32-bit words map to banks and which words a bank can serve together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Banking {
    /// 32 banks of 4 bytes: bank = (addr >> 2) & 31; a bank serves one 32-bit word per pass (2.x, 5.x+).
    Word4,
    /// Kepler 8-byte mode: bank = (addr >> 3) & 31; a bank serves one 64-bit word per pass.
    Kepler8,
    /// Kepler 4-byte mode: bank = (addr >> 2) & 31; a bank serves any words of one 256-byte aligned segment
    /// per pass (words i and i+32 share the 64-bit bank), so the conflict key is addr >> 8.
    Kepler4,
}

impl Banking {
    /// Width of the unit that identifies a bank, in bytes.
    pub fn bank_bytes(self) -> u32 {
        match self {
            Banking::Kepler8 => 8,
            Banking::Word4 | Banking::Kepler4 => 4,
        }
    }

    /// The bank of a byte address.
    pub fn bank(self, addr: u64) -> u32 {
        match self {
            Banking::Kepler8 => ((addr >> 3) & 31) as u32,
            Banking::Word4 | Banking::Kepler4 => ((addr >> 2) & 31) as u32,
        }
    }

    /// Two addresses in the same bank with the same key are served in one pass.
    pub fn key(self, addr: u64) -> u64 {
        match self {
            Banking::Word4 => addr >> 2,
            Banking::Kepler8 => addr >> 3,
            Banking::Kepler4 => addr >> 8,
        }
    }
}

/// How a shared-memory access is split into phases and banked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BankRule {
    /// The bank mapping.
    pub banking: Banking,
    /// Lanes per phase: 32, 16 (half-warps) or 8 (quarter-warps).
    pub lanes_per_phase: u32,
}

/// Chooses the bank rule for a shared access.
pub fn bank_rule(cc: Cc, size_bytes: u32, mode: BankMode) -> BankRule {
    match cc.family() {
        Family::Fermi => BankRule { banking: Banking::Word4, lanes_per_phase: if size_bytes <= 4 { 32 } else { 16 } },
        Family::Kepler => BankRule {
            banking: match mode {
                BankMode::FourByte => Banking::Kepler4,
                BankMode::EightByte => Banking::Kepler8,
            },
            lanes_per_phase: if size_bytes <= 8 { 32 } else { 16 },
        },
        _ => BankRule {
            banking: Banking::Word4,
            lanes_per_phase: match size_bytes {
                16 => 8,
                8 => 16,
                _ => 32,
            },
        },
    }
}

/// The measured rule for 64- and 128-bit shared accesses on CC 7.0 and later (docs/model.md#shared-memory-as-measured): the phases of
/// `rule` merged pairwise (16 lanes per phase become 32, 8 become 16). Used when [`shared_exception_flags`]
/// finds [`super::notes::flags::MEASURED_MERGE`].
pub fn merged(rule: BankRule) -> BankRule {
    BankRule { lanes_per_phase: (rule.lanes_per_phase * 2).min(32), ..rule }
}

/// Which departures from the phase model an issue's shared lanes show (bits of [`super::notes::flags`]):
/// on CC 7.0 and later, LDS/STS.64 whose every active lane has the address of lane i^1 (where that lane is
/// active), or LDS/STS.128 whose every active lane has the address of lane i^1 or of lane i^2, merge phases
/// as measured (docs/model.md#shared-memory-as-measured: gpu_shm_microbench on V100 and A100, NVIDIA forums t/77228 and t/373160); on 5.x
/// and 6.x, LDS.64 with every lane on one address is unverified.
pub fn shared_exception_flags(cc: Cc, size_bytes: u32, lanes: &crate::model::access::Lanes) -> u8 {
    use super::notes::flags;
    if lanes.n < 2 || !matches!(size_bytes, 8 | 16) {
        return 0;
    }
    if cc >= Cc::new(7, 0) {
        let mut by_lane = [u64::MAX; 32];
        for (l, a) in lanes.iter() {
            by_lane[l] = a;
        }
        let same = |l: usize, x: usize| by_lane[l ^ x] == u64::MAX || by_lane[l ^ x] == by_lane[l];
        let pairs = lanes.iter().all(|(l, _)| if size_bytes == 8 { same(l, 1) } else { same(l, 1) || same(l, 2) });
        return if pairs { flags::MEASURED_MERGE } else { 0 };
    }
    let first = lanes.addr[0];
    if size_bytes == 8 && !cc.splits_wide_requests() && lanes.addr[..lanes.n].iter().all(|&a| a == first) {
        return flags::LDS64_UNIFORM;
    }
    0
}
