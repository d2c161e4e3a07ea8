//! Compute capabilities: what warpscope knows about each one, and nothing about them anywhere else.
//!
//! Architecture invariant (checked by `tests/layers.rs`): this is the only module that branches on the compute
//! capability or its family. [`Cc`] can only hold a known CC and keeps its numbers private; the facts table
//! ([`FACTS`]) has a row for each. [`rules`] are pure functions from a CC and an access to a rule the engine
//! modules (`global`, `shared`, `local`) follow without knowing which GPU it came from; [`notes`] is the one
//! table of what the product says about those rules, with its sources.
//!
//! May import: `model::access`, `model::note`, `serde`.

pub mod memsys;
pub mod notes;
pub mod rules;

pub use rules::{
    bank_rule, memory_rule, merged, shared_exception_flags, BankRule, Banking, DataPath, MemoryAccess, MemoryRule,
};

use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A compute capability warpscope knows, such as 8.0: one of [`ALL_CCS`], and nothing else. Its numbers
/// are private; the rest of the crate asks this module what a CC implies ([`Cc::facts`],
/// [`Cc::has_bank_mode`], [`Cc::l1_choice_matters`], ...), never compares versions itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cc {
    /// The index in [`ALL_CCS`] and [`FACTS`] (oldest first, so the order is the version order).
    index: u8,
}

/// The (major, minor) version of every CC warpscope models, oldest first.
const VERSIONS: [(u8, u8); 16] = [
    (2, 0),
    (3, 0),
    (3, 5),
    (3, 7),
    (5, 0),
    (5, 2),
    (6, 0),
    (6, 1),
    (7, 0),
    (7, 5),
    (8, 0),
    (8, 6),
    (8, 9),
    (9, 0),
    (10, 0),
    (12, 0),
];

impl Cc {
    /// The CC `major.minor`, for literals in code. It must be one of [`ALL_CCS`]: in a constant an unknown CC
    /// is a compile-time error; text from users goes through [`Cc::parse`], which returns an error instead.
    pub const fn new(major: u8, minor: u8) -> Cc {
        match Cc::find(major, minor) {
            Some(c) => c,
            None => panic!("warpscope does not model this compute capability"),
        }
    }

    const fn find(major: u8, minor: u8) -> Option<Cc> {
        let mut i = 0;
        while i < VERSIONS.len() {
            if VERSIONS[i].0 == major && VERSIONS[i].1 == minor {
                return Some(Cc { index: i as u8 });
            }
            i += 1;
        }
        None
    }

    const fn major(self) -> u8 {
        VERSIONS[self.index as usize].0
    }

    const fn minor(self) -> u8 {
        VERSIONS[self.index as usize].1
    }

    /// Parses `8.0`, `80`, `sm_80` or `compute_80` into a known CC.
    pub fn parse(text: &str) -> Result<Cc, String> {
        let t = text.trim();
        let t = t.strip_prefix("sm_").or_else(|| t.strip_prefix("compute_")).unwrap_or(t);
        let parsed = match t.split_once('.') {
            Some((a, b)) => a.parse::<u8>().ok().zip(b.parse::<u8>().ok()),
            None if t.len() >= 2 && t.chars().all(|c| c.is_ascii_digit()) => {
                let (a, b) = t.split_at(t.len() - 1);
                a.parse::<u8>().ok().zip(b.parse::<u8>().ok())
            }
            None => None,
        };
        let known = ALL_CCS.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ");
        match parsed {
            Some((major, minor)) => {
                Cc::find(major, minor).ok_or_else(|| format!("unknown compute capability `{text}` (known: {known})"))
            }
            None => Err(format!("`{text}` is not a compute capability such as 8.0 (known: {known})")),
        }
    }

    /// Whether code compiled for `sm_NN` (`NN` = 10 * major + minor) has the read-only path: `LDG` through the
    /// read-only (texture) cache from 3.5 (`__ldg`, `const T * __restrict__` pointers, `ld.global.nc`); the
    /// model reference's "The read-only path".
    pub fn sm_has_read_only_path(sm: u32) -> bool {
        sm >= 35
    }

    /// The number in `sm_80`: 10 * major + minor.
    pub fn sm(self) -> u32 {
        u32::from(self.major()) * 10 + u32::from(self.minor())
    }

    /// The architecture family.
    pub fn family(self) -> Family {
        match (self.major(), self.minor()) {
            (2, _) => Family::Fermi,
            (3, _) => Family::Kepler,
            (5, _) => Family::Maxwell,
            (6, _) => Family::Pascal,
            (7, m) if m < 5 => Family::Volta,
            (7, _) => Family::Turing,
            (8, 9) => Family::Ada,
            (8, _) => Family::Ampere,
            (9, _) => Family::Hopper,
            _ => Family::Blackwell,
        }
    }

    /// The row of the facts table for this CC.
    pub fn facts(self) -> &'static CcFacts {
        &FACTS[usize::from(self.index)]
    }

    /// True on CC 2.x and 3.x, where wide accesses are split into half- and quarter-warp requests and the L1
    /// path moves 128-byte lines (CUDA Programming Guide 5.0 F.4.2, CUDA Programming Guide 11 K.3.2).
    pub fn splits_wide_requests(self) -> bool {
        self.major() <= 3
    }

    /// True where `cudaDeviceSetSharedMemConfig` chooses between 4- and 8-byte banks: Kepler (CUDA Programming Guide 11 K.3.3).
    pub fn has_bank_mode(self) -> bool {
        self.family() == Family::Kepler
    }

    /// True where the L1 choice (`-dlcm=ca|cg`) can change the counts: 128-byte L1 transactions on 2.x and
    /// 3.x, 128-byte segments on 5.2 (the page shows the L1 menu only there). From 6.0 both paths move
    /// 32-byte sectors.
    pub fn l1_choice_matters(self) -> bool {
        self.major() <= 5
    }

    /// True where the measured shared-memory rule (docs/model.md#shared-memory-as-measured) can differ from the documented phase model:
    /// CC 7.0 and later, where 64- and 128-bit accesses whose lanes share addresses in pairs merge phases. The
    /// page offers the `shared model` choice only there.
    pub fn has_measured_shared_rule(self) -> bool {
        self.major() >= 7
    }

    /// The newest CC of the generation before this one (by major version), if there is one: the comparison
    /// students ask for first.
    pub fn previous_generation(self) -> Option<Cc> {
        ALL_CCS.iter().rev().find(|c| c.major() < self.major()).copied()
    }
}

impl fmt::Display for Cc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major(), self.minor())
    }
}

impl Serialize for Cc {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Cc {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Cc, D::Error> {
        let text = String::deserialize(d)?;
        Cc::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Every compute capability warpscope models, oldest first.
pub const ALL_CCS: [Cc; 16] = {
    let mut all = [Cc { index: 0 }; 16];
    let mut i = 0;
    while i < all.len() {
        all[i] = Cc { index: i as u8 };
        i += 1;
    }
    all
};

/// The CCs of [`ALL_CCS`] grouped by family, oldest first, with each family's name: the CC menu's groups.
pub fn families() -> Vec<(&'static str, Vec<Cc>)> {
    let mut groups: Vec<(Family, Vec<Cc>)> = Vec::new();
    for c in ALL_CCS {
        match groups.last_mut() {
            Some((f, v)) if *f == c.family() => v.push(c),
            _ => groups.push((c.family(), vec![c])),
        }
    }
    groups.into_iter().map(|(f, v)| (f.name(), v)).collect()
}

/// An NVIDIA architecture generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Family {
    /// CC 2.x.
    Fermi,
    /// CC 3.x.
    Kepler,
    /// CC 5.x.
    Maxwell,
    /// CC 6.x.
    Pascal,
    /// CC 7.0 and 7.2.
    Volta,
    /// CC 7.5.
    Turing,
    /// CC 8.0 and 8.6.
    Ampere,
    /// CC 8.9.
    Ada,
    /// CC 9.0.
    Hopper,
    /// CC 10.0 and 12.0.
    Blackwell,
}

impl Family {
    /// The family's name, as NVIDIA writes it.
    pub fn name(self) -> &'static str {
        match self {
            Family::Fermi => "Fermi",
            Family::Kepler => "Kepler",
            Family::Maxwell => "Maxwell",
            Family::Pascal => "Pascal",
            Family::Volta => "Volta",
            Family::Turing => "Turing",
            Family::Ampere => "Ampere",
            Family::Ada => "Ada",
            Family::Hopper => "Hopper",
            Family::Blackwell => "Blackwell",
        }
    }
}

/// Whether global loads go through L1 when the program does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum L1Default {
    /// Cached in L1 and L2 (`-dlcm=ca` is the default).
    On,
    /// Cached in L2 only; the program may opt in with `-Xptxas -dlcm=ca`.
    OffOptIn,
    /// Cached in L2 only and L1 caching of ordinary global data is not available.
    OffFixed,
}

/// One row of the per-CC facts table: what the "choose a GPU" menu and the carveout calculator show.
#[derive(Clone, Debug, Serialize)]
pub struct CcFacts {
    /// The compute capability.
    pub cc: Cc,
    /// Its architecture family.
    pub family: Family,
    /// A GPU of this CC that students are likely to know.
    pub example_gpu: &'static str,
    /// The L1 / shared-memory / texture storage per SM, as the guide describes it.
    pub l1_shared: &'static str,
    /// The shared-memory capacities per SM (KB) that the driver can configure, smallest first.
    pub shared_capacities_kb: &'static [u32],
    /// The largest shared memory one block can use (KB).
    pub max_shared_per_block_kb: u32,
    /// L2 size of the example GPU.
    pub l2: &'static str,
    /// Whether global loads are cached in L1 by default.
    pub l1_default: L1Default,
    /// The size of a shared-memory bank in bytes (4, or 8 for Kepler's 64-bit bank width).
    pub bank_width_bytes: u32,
    /// True when the preferred carveout is a percentage (`cudaFuncAttributePreferredSharedMemoryCarveout`,
    /// CC 7.0 and later); before that `cudaFuncSetCacheConfig` picks one of the capacities.
    pub percent_carveout: bool,
    /// What in this row could not be checked against the current Programming Guide.
    pub unchecked: &'static str,
}

/// The facts table (docs/model.md#compute-capabilities, checked against the CUDA C++ Programming Guide's compute-capability
/// tables; `unchecked` says what was not).
pub const FACTS: [CcFacts; 16] = [
    CcFacts {
        cc: Cc::new(2, 0),
        family: Family::Fermi,
        example_gpu: "GeForce GTX 480 (GF100)",
        l1_shared: "64 KB per SM: 48 KB shared + 16 KB L1, or 16 KB shared + 48 KB L1",
        shared_capacities_kb: &[16, 48],
        max_shared_per_block_kb: 48,
        l2: "768 KB",
        l1_default: L1Default::On,
        bank_width_bytes: 4,
        percent_carveout: false,
        unchecked: "L2 size (from secondary sources only)",
    },
    CcFacts {
        cc: Cc::new(3, 0),
        family: Family::Kepler,
        example_gpu: "GeForce GTX 680 (GK104)",
        l1_shared: "64 KB per SM: 48/16, 32/32 or 16/48 KB shared/L1",
        shared_capacities_kb: &[16, 32, 48],
        max_shared_per_block_kb: 48,
        l2: "512 KB",
        l1_default: L1Default::OffOptIn,
        bank_width_bytes: 8,
        percent_carveout: false,
        unchecked: "",
    },
    CcFacts {
        cc: Cc::new(3, 5),
        family: Family::Kepler,
        example_gpu: "Tesla K40 (GK110B)",
        l1_shared: "64 KB L1/shared per SM + 48 KB read-only data cache",
        shared_capacities_kb: &[16, 32, 48],
        max_shared_per_block_kb: 48,
        l2: "1.5 MB",
        l1_default: L1Default::OffOptIn,
        bank_width_bytes: 8,
        percent_carveout: false,
        unchecked: "",
    },
    CcFacts {
        cc: Cc::new(3, 7),
        family: Family::Kepler,
        example_gpu: "Tesla K80 (GK210)",
        l1_shared: "64 KB L1/shared + 64 KB more shared per SM + 48 KB read-only data cache",
        shared_capacities_kb: &[80, 96, 112],
        max_shared_per_block_kb: 48,
        l2: "1.5 MB per GPU",
        l1_default: L1Default::OffOptIn,
        bank_width_bytes: 8,
        percent_carveout: false,
        unchecked: "",
    },
    CcFacts {
        cc: Cc::new(5, 0),
        family: Family::Maxwell,
        example_gpu: "GeForce GTX 750 Ti (GM107)",
        l1_shared: "24 KB unified L1/texture + 64 KB shared per SM",
        shared_capacities_kb: &[64],
        max_shared_per_block_kb: 48,
        l2: "2 MB",
        l1_default: L1Default::OffFixed,
        bank_width_bytes: 4,
        percent_carveout: false,
        unchecked: "L2 size of the example GPU (2 MB confirmed for another GM107 part)",
    },
    CcFacts {
        cc: Cc::new(5, 2),
        family: Family::Maxwell,
        example_gpu: "GeForce GTX 980 (GM204)",
        l1_shared: "24 KB unified L1/texture + 96 KB shared per SM",
        shared_capacities_kb: &[96],
        max_shared_per_block_kb: 48,
        l2: "2 MB",
        l1_default: L1Default::OffOptIn,
        bank_width_bytes: 4,
        percent_carveout: false,
        unchecked: "L2 size of the example GPU",
    },
    CcFacts {
        cc: Cc::new(6, 0),
        family: Family::Pascal,
        example_gpu: "Tesla P100 (GP100)",
        l1_shared: "24 KB unified L1/texture + 64 KB shared per SM",
        shared_capacities_kb: &[64],
        max_shared_per_block_kb: 48,
        l2: "4 MB (16 GB model; 3 MB on the 12 GB model)",
        l1_default: L1Default::On,
        bank_width_bytes: 4,
        percent_carveout: false,
        unchecked: "L1 default: the Pascal tuning guide says GP100 caches global loads in L1, the Programming Guide says 6.x behaves like 5.x",
    },
    CcFacts {
        cc: Cc::new(6, 1),
        family: Family::Pascal,
        example_gpu: "GeForce GTX 1080 Ti (GP102)",
        l1_shared: "48 KB unified L1/texture + 96 KB shared per SM",
        shared_capacities_kb: &[96],
        max_shared_per_block_kb: 48,
        l2: "2.75 MB",
        l1_default: L1Default::OffOptIn,
        bank_width_bytes: 4,
        percent_carveout: false,
        unchecked: "",
    },
    CcFacts {
        cc: Cc::new(7, 0),
        family: Family::Volta,
        example_gpu: "Tesla V100 (GV100)",
        l1_shared: "128 KB unified L1/shared per SM",
        shared_capacities_kb: &[0, 8, 16, 32, 64, 96],
        max_shared_per_block_kb: 96,
        l2: "6 MB",
        l1_default: L1Default::On,
        bank_width_bytes: 4,
        percent_carveout: true,
        unchecked: "",
    },
    CcFacts {
        cc: Cc::new(7, 5),
        family: Family::Turing,
        example_gpu: "Tesla T4 (TU104)",
        l1_shared: "96 KB unified L1/shared per SM",
        shared_capacities_kb: &[32, 64],
        max_shared_per_block_kb: 64,
        l2: "4 MB",
        l1_default: L1Default::On,
        bank_width_bytes: 4,
        percent_carveout: true,
        unchecked: "",
    },
    CcFacts {
        cc: Cc::new(8, 0),
        family: Family::Ampere,
        example_gpu: "A100 (GA100)",
        l1_shared: "192 KB unified L1/shared per SM",
        shared_capacities_kb: &[0, 8, 16, 32, 64, 100, 132, 164],
        max_shared_per_block_kb: 163,
        l2: "40 MB",
        l1_default: L1Default::On,
        bank_width_bytes: 4,
        percent_carveout: true,
        unchecked: "",
    },
    CcFacts {
        cc: Cc::new(8, 6),
        family: Family::Ampere,
        example_gpu: "GeForce RTX 3090 (GA102)",
        l1_shared: "128 KB unified L1/shared per SM",
        shared_capacities_kb: &[0, 8, 16, 32, 64, 100],
        max_shared_per_block_kb: 99,
        l2: "6 MB",
        l1_default: L1Default::On,
        bank_width_bytes: 4,
        percent_carveout: true,
        unchecked: "",
    },
    CcFacts {
        cc: Cc::new(8, 9),
        family: Family::Ada,
        example_gpu: "GeForce RTX 4090 (AD102)",
        l1_shared: "128 KB unified L1/shared per SM",
        shared_capacities_kb: &[0, 8, 16, 32, 64, 100],
        max_shared_per_block_kb: 99,
        l2: "72 MB",
        l1_default: L1Default::On,
        bank_width_bytes: 4,
        percent_carveout: true,
        unchecked: "",
    },
    CcFacts {
        cc: Cc::new(9, 0),
        family: Family::Hopper,
        example_gpu: "H100 (GH100)",
        l1_shared: "256 KB unified L1/shared per SM",
        shared_capacities_kb: &[0, 8, 16, 32, 64, 100, 132, 164, 196, 228],
        max_shared_per_block_kb: 227,
        l2: "50 MB",
        l1_default: L1Default::On,
        bank_width_bytes: 4,
        percent_carveout: true,
        unchecked: "",
    },
    CcFacts {
        cc: Cc::new(10, 0),
        family: Family::Blackwell,
        example_gpu: "B200 (GB100)",
        l1_shared: "256 KB unified L1/shared per SM",
        shared_capacities_kb: &[0, 8, 16, 32, 64, 100, 132, 164, 196, 228],
        max_shared_per_block_kb: 227,
        l2: "126 MB",
        l1_default: L1Default::On,
        bank_width_bytes: 4,
        percent_carveout: true,
        unchecked: "capacities as in 9.0 (228 KB shared per SM, 227 KB per block) agree with tables that cite the Programming Guide, which could not be read here; memory rules assumed unchanged from 9.0; tensor memory not modelled",
    },
    CcFacts {
        cc: Cc::new(12, 0),
        family: Family::Blackwell,
        example_gpu: "GeForce RTX 5090 (GB202)",
        l1_shared: "128 KB unified L1/shared per SM",
        shared_capacities_kb: &[0, 8, 16, 32, 64, 100],
        max_shared_per_block_kb: 99,
        l2: "96 MB",
        l1_default: L1Default::On,
        bank_width_bytes: 4,
        percent_carveout: true,
        unchecked: "unified data cache size: the guide's text says 100 KB, its cache table allows up to 128 KB (100 KB shared per SM, 99 KB per block, as third-party tables citing the guide also give); memory rules assumed unchanged from 9.0",
    },
];

/// The offset of the first kernel parameter in constant bank 0 for SASS architecture `sm` (75 for sm_75), as
/// ptxas places it. Each value was read from the `EIATTR_PARAM_CBANK` attribute of cubins that ptxas 12.9
/// built for that architecture, and the disassembly's `c[0x0][...]` operands agree (see docs/languages.md, SASS
/// section; docs/model.md#kernel-parameters). Older architectures (sm_2x, sm_3x) cannot be built by the current toolchain: `None`.
pub fn param_base(sm: u32) -> Option<u32> {
    match sm {
        50..=69 => Some(0x140),
        70..=89 => Some(0x160),
        90..=99 => Some(0x210),
        100..=129 => Some(0x380),
        _ => None,
    }
}

/// The constant-bank-0 words that hold the generic address of the shared window for SASS architecture `sm`:
/// (low word, high word). ptxas 12.9 reads them for `cvta.shared` on sm_70-sm_89 (`MOV R4, c[0x0][0x18]`,
/// `MOV R5, c[0x0][0x1c]` for the window's base; checked by compiling `cvta.shared.u64` of a shared array at
/// offset 0); sm_90 forms the address otherwise. `None` where warpscope has not read it.
pub fn shared_window_words(sm: u32) -> Option<(u32, u32)> {
    match sm {
        70..=89 => Some((0x18, 0x1c)),
        _ => None,
    }
}

/// A preferred shared-memory carveout as `cudaFuncAttributePreferredSharedMemoryCarveout` takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carveout {
    /// `cudaSharedmemCarveoutDefault` (-1): the driver chooses.
    Default,
    /// An integer percentage 0..=100 of the largest capacity (`MaxL1` is 0, `MaxShared` is 100).
    Percent(u8),
}

impl Carveout {
    /// Parses `-1`, `0..=100`, `default`, `maxl1` or `maxshared`.
    pub fn parse(text: &str) -> Result<Carveout, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "-1" | "default" => Ok(Carveout::Default),
            "maxl1" => Ok(Carveout::Percent(0)),
            "maxshared" => Ok(Carveout::Percent(100)),
            t => match t.parse::<u8>() {
                Ok(p) if p <= 100 => Ok(Carveout::Percent(p)),
                _ => Err(format!("carveout `{text}` is not -1, a percentage 0..100, default, maxl1 or maxshared")),
            },
        }
    }
}

/// What a carveout request gives on a CC.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CarveoutResult {
    /// The shared-memory capacity per SM in KB, or `None` when the driver decides (`Default`).
    pub shared_kb: Option<u32>,
    /// How the number was reached, in one sentence.
    pub explanation: String,
}

/// Rounds a preferred carveout up to the next capacity the CC supports (Hadwiger's KAUST lecture on GPU memory: "When using a percentage,
/// the carveout is rounded up to the nearest supported shared memory capacity"; CC 7.0: 50% of 96 KB = 48 KB
/// -> 64 KB; CC 8.0: 50% of 164 KB -> 100 KB). Returns an error on CCs without a percentage carveout.
pub fn carveout(cc: Cc, request: Carveout) -> Result<CarveoutResult, String> {
    let facts = cc.facts();
    if !facts.percent_carveout {
        return Err(format!(
            "CC {cc} has no percentage carveout; cudaFuncSetCacheConfig chooses one of {:?} KB of shared memory",
            facts.shared_capacities_kb
        ));
    }
    let max_kb = facts.shared_capacities_kb.iter().copied().max().unwrap_or(0);
    match request {
        Carveout::Default => Ok(CarveoutResult {
            shared_kb: None,
            explanation: "cudaSharedmemCarveoutDefault (-1): the driver picks the configuration".into(),
        }),
        Carveout::Percent(p) => {
            // Work in 1/100 KB so the comparison is exact: p% of max_kb KB = p * max_kb / 100 KB.
            let wanted_centi_kb = u64::from(p) * u64::from(max_kb);
            let chosen = facts
                .shared_capacities_kb
                .iter()
                .copied()
                .find(|&c| u64::from(c) * 100 >= wanted_centi_kb)
                .unwrap_or(max_kb);
            let wanted = wanted_centi_kb as f64 / 100.0;
            let explanation = if u64::from(chosen) * 100 == wanted_centi_kb {
                format!("{p}% of {max_kb} KB is {chosen} KB, a supported capacity")
            } else {
                format!("{p}% of {max_kb} KB is {wanted} KB, rounded up to the next supported capacity, {chosen} KB")
            };
            Ok(CarveoutResult { shared_kb: Some(chosen), explanation })
        }
    }
}

/// The user's L1 choice for global loads: the nvcc flag `-Xptxas -dlcm=ca|cg`, or the CC's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum L1Choice {
    /// The CC's documented default.
    #[default]
    Default,
    /// `-dlcm=ca`: cache global loads in L1 where the CC allows it.
    On,
    /// `-dlcm=cg`: cache global loads in L2 only.
    Off,
}

impl L1Choice {
    /// Every choice, in menu order.
    pub const ALL: [L1Choice; 3] = [L1Choice::Default, L1Choice::On, L1Choice::Off];

    /// The name settings, links and labs use: `default`, `on` or `off`.
    pub fn name(self) -> &'static str {
        match self {
            L1Choice::Default => "default",
            L1Choice::On => "on",
            L1Choice::Off => "off",
        }
    }
}

impl fmt::Display for L1Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for L1Choice {
    type Err = String;
    /// `default` (or nothing), `on` or `off`.
    fn from_str(text: &str) -> Result<L1Choice, String> {
        match text {
            "" => Ok(L1Choice::Default),
            t => L1Choice::ALL
                .into_iter()
                .find(|c| c.name() == t)
                .ok_or_else(|| format!("l1 is default, on or off, not `{text}`")),
        }
    }
}

/// Kepler's shared-memory bank mode (`cudaDeviceSetSharedMemConfig`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BankMode {
    /// Successive 32-bit words in successive banks (the default).
    #[default]
    #[serde(rename = "4")]
    FourByte,
    /// Successive 64-bit words in successive banks.
    #[serde(rename = "8")]
    EightByte,
}

impl BankMode {
    /// The bank width in bytes: 4 or 8.
    pub fn bytes(self) -> u8 {
        match self {
            BankMode::FourByte => 4,
            BankMode::EightByte => 8,
        }
    }
}

impl fmt::Display for BankMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.bytes())
    }
}

impl std::str::FromStr for BankMode {
    type Err = String;
    /// `4` or `8` (bytes).
    fn from_str(text: &str) -> Result<BankMode, String> {
        match text {
            "4" => Ok(BankMode::FourByte),
            "8" => Ok(BankMode::EightByte),
            _ => Err(format!("bank_mode is 4 or 8, not {text}")),
        }
    }
}

/// Which shared-memory rule counts 64- and 128-bit accesses whose lanes share addresses in pairs on CC 7.0
/// and later (docs/model.md#shared-memory-as-measured): the measured one (the default) or the documented phase model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SharedModel {
    /// Phases merge where lanes share addresses in pairs, as measured on V100, A100 and with Nsight Compute
    /// on 8.6 and 9.0.
    #[default]
    Measured,
    /// Half-warp phases for 8 bytes and quarter-warp phases for 16 bytes, always (CUDA Programming Guide, Best Practices Guide 9.2.3).
    Documented,
}

impl SharedModel {
    /// Every choice, in menu order.
    pub const ALL: [SharedModel; 2] = [SharedModel::Measured, SharedModel::Documented];

    /// The name settings, links and labs use: `measured` or `documented`.
    pub fn name(self) -> &'static str {
        match self {
            SharedModel::Measured => "measured",
            SharedModel::Documented => "documented",
        }
    }
}

impl fmt::Display for SharedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SharedModel {
    type Err = String;
    /// `measured` (or nothing) or `documented`.
    fn from_str(text: &str) -> Result<SharedModel, String> {
        match text {
            "" => Ok(SharedModel::Measured),
            t => SharedModel::ALL
                .into_iter()
                .find(|c| c.name() == t)
                .ok_or_else(|| format!("shared_model is measured or documented, not `{text}`")),
        }
    }
}
