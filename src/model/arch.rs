//! Compute capabilities: the table of facts and the per-CC rules.
//!
//! Architecture invariant: this is the only module that branches on the compute capability. The engine
//! modules (`global`, `shared`, `local`) ask it for a rule and follow that rule without knowing which GPU it
//! came from. Every rule cites its source (see `MODEL.md` in the project's shared notes and the README).

use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A compute capability such as 8.0. Only the values in [`ALL_CCS`] can be constructed through [`Cc::parse`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cc {
    /// The major version (2 for Fermi, 8 for Ampere, ...).
    pub major: u8,
    /// The minor version.
    pub minor: u8,
}

impl Cc {
    /// Builds a CC from its two numbers without checking that warpscope knows it.
    pub const fn new(major: u8, minor: u8) -> Cc {
        Cc { major, minor }
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
            Some((major, minor)) if ALL_CCS.contains(&Cc::new(major, minor)) => Ok(Cc::new(major, minor)),
            Some(_) => Err(format!("unknown compute capability `{text}` (known: {known})")),
            None => Err(format!("`{text}` is not a compute capability such as 8.0 (known: {known})")),
        }
    }

    /// The architecture family.
    pub fn family(self) -> Family {
        match self.major {
            2 => Family::Fermi,
            3 => Family::Kepler,
            5 => Family::Maxwell,
            6 => Family::Pascal,
            7 if self.minor < 5 => Family::Volta,
            7 => Family::Turing,
            8 if self.minor == 9 => Family::Ada,
            8 => Family::Ampere,
            9 => Family::Hopper,
            _ => Family::Blackwell,
        }
    }

    /// The row of the facts table for this CC.
    pub fn facts(self) -> &'static CcFacts {
        FACTS.iter().find(|f| f.cc == self).unwrap_or(&FACTS[FACTS.len() - 1])
    }

    /// True on CC 2.x and 3.x, where wide accesses are split into half- and quarter-warp requests and the L1
    /// path moves 128-byte lines (PG-5.0 F.4.2, PG-11 K.3.2).
    pub fn splits_wide_requests(self) -> bool {
        self.major <= 3
    }
}

impl fmt::Display for Cc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
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
pub const ALL_CCS: [Cc; 16] = [
    Cc::new(2, 0),
    Cc::new(3, 0),
    Cc::new(3, 5),
    Cc::new(3, 7),
    Cc::new(5, 0),
    Cc::new(5, 2),
    Cc::new(6, 0),
    Cc::new(6, 1),
    Cc::new(7, 0),
    Cc::new(7, 5),
    Cc::new(8, 0),
    Cc::new(8, 6),
    Cc::new(8, 9),
    Cc::new(9, 0),
    Cc::new(10, 0),
    Cc::new(12, 0),
];

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

/// The facts table (MODEL.md section D, checked against the CUDA C++ Programming Guide's compute-capability
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
        unchecked: "memory rules assumed unchanged from 9.0",
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
        unchecked: "unified data cache size: the guide's text says 100 KB, its cache table allows up to 128 KB; memory rules assumed unchanged from 9.0",
    },
];

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

/// Rounds a preferred carveout up to the next capacity the CC supports (seeds/002: "When using a percentage,
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

// ---------------------------------------------------------------------------------------------------------
// The rules the engine follows.
// ---------------------------------------------------------------------------------------------------------

use crate::model::access::{Base, CacheOp, Space};
use crate::model::note::Note;

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

/// Adds a note when the caller collects them; the closure (and its formatting) runs only then.
fn add(notes: &mut Option<&mut Vec<Note>>, f: impl FnOnce() -> Note) {
    if let Some(v) = notes {
        v.push(f());
    }
}

fn note(id: &'static str, text: impl Into<String>, source: &'static str) -> Note {
    Note::new(id, text, source)
}

/// Chooses the rule for a global or local access and appends the model notes that touch it.
pub fn memory_rule(cc: Cc, acc: MemoryAccess, l1: L1Choice, mut notes: Option<&mut Vec<Note>>) -> MemoryRule {
    let store = acc.base.is_store();
    let load = !store;
    let global = acc.space == Space::Global;
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
    let l2_only_cop = matches!(acc.cop, CacheOp::Cg | CacheOp::Cv);
    let family = cc.family();
    if global && acc.base == Base::Ldg && cc <= Cc::new(3, 0) {
        add(&mut notes, || {
            note(
                "ldg-before-kepler",
                format!(
                "CC {cc} has no LDG instruction (nvcc emits a generic LD for global loads); warpscope counts it as LD"
            ),
                "PG-11 K.3.2; seeds/002 (Kepler instruction table, LDG from 3.5)",
            )
        });
    }
    if load && matches!(family, Family::Maxwell | Family::Pascal) {
        add(&mut notes, || {
            note(
            "maxwell-pascal-internal-split",
            "NVIDIA staff describe an internal split on CC 5.x/6.x before the tag lookup (8, 4 or 2 threads per request for 32-, 64- or 128-bit accesses); profilers count one request per instruction, and so does warpscope",
            "NVIDIA forums t/49571",
        )
        });
    }
    match (family, acc.space, store) {
        // Local memory on 2.x/3.x is cached in L1 and L2 (128-byte transactions), loads and stores alike.
        (Family::Fermi | Family::Kepler, Space::Local, _) => rule(DataPath::L1),
        // Stores bypass L1 on 2.x and go to L2 on 3.x: 32-byte granularity.
        (_, _, true) => rule(DataPath::L2),
        (Family::Fermi, _, false) => {
            if l2_only_cop || l1 == L1Choice::Off {
                rule(DataPath::L2)
            } else {
                rule(DataPath::L1)
            }
        }
        (Family::Kepler, _, false) => {
            let ldg = acc.base == Base::Ldg && cc >= Cc::new(3, 5);
            if ldg || (acc.cop == CacheOp::Ci && cc >= Cc::new(3, 5)) {
                add(&mut notes, || {
                    note(
                    "kepler-ldg-read-only",
                    "On Kepler (3.5+) LDG and .CI loads are the non-coherent read-only path (__ldg): the read-only data cache, 32-byte granularity; ordinary global loads are the generic LD",
                    "seeds/002 (Kepler table: LDG Non-coherent Global Memory Load); PG-11 K.3.2",
                )
                });
                return rule(DataPath::ReadOnly);
            }
            if cc == Cc::new(3, 0) {
                add(&mut notes, || {
                    note(
                    "kepler-3.0-l1-default",
                    "The CUDA 5.0 guide says CC 3.0 caches global loads in L1 like 2.x; later guides say L2 only. warpscope follows the later guides by default; --l1 on gives the 5.0 guide's 128-byte behaviour",
                    "PG-5.0 F.5.2 vs PG-11 K.3.2",
                )
                });
            }
            match (l2_only_cop, l1) {
                (false, L1Choice::On) => {
                    if cc == Cc::new(3, 5) {
                        add(&mut notes, || {
                            note(
                            "kepler-l1-opt-in",
                            "Only some CC 3.5 devices honour -dlcm=ca (3.7 does); on the others these loads stay L2-only with 32-byte transactions",
                            "PG-11 K.3.2",
                        )
                        });
                    }
                    rule(DataPath::L1)
                }
                _ => rule(DataPath::L2),
            }
        }
        (Family::Maxwell, _, false) => {
            if acc.cop == CacheOp::Ci {
                return rule(DataPath::ReadOnly);
            }
            match (cc.minor, l1, l2_only_cop) {
                (0, L1Choice::On, _) => {
                    add(&mut notes, || {
                        note(
                            "maxwell-5.0-no-l1",
                            "CC 5.0 never caches non-read-only global data in L1: -dlcm=ca has no effect",
                            "PG 5.x Global Memory",
                        )
                    });
                    rule(DataPath::L2)
                }
                (_, L1Choice::On, false) => {
                    add(&mut notes, || {
                        note(
                        "maxwell-l1-segments",
                        "With L1 caching on, CC 5.2 counts 128-byte aligned segments (Best Practices Guide); the L1/TEX cache itself fetches only the 32-byte sectors used, so the traffic to L2 may be smaller than the 128-byte count",
                        "BPG 9.2.1; NVIDIA forums t/49571",
                    )
                    });
                    rule(DataPath::L1)
                }
                _ => rule(DataPath::L2),
            }
        }
        (_, _, false) => {
            if family == Family::Pascal && l1 != L1Choice::Off {
                add(&mut notes, || {
                    note(
                    "pascal-l1-default",
                    "The Best Practices Guide says global loads are cached in L1 by default on 6.0+, the Programming Guide says 6.x behaves like 5.x (L2 only); the data access unit is 32 bytes either way, so the counts do not change",
                    "BPG 9.2.1 vs PG 6.x Global Memory",
                )
                });
            }
            let path = match (acc.cop, l1, l2_only_cop) {
                (CacheOp::Ci, _, _) => DataPath::ReadOnly,
                (_, L1Choice::Off, _) | (_, _, true) => DataPath::L2,
                _ if family == Family::Pascal => DataPath::L2,
                _ => DataPath::L1,
            };
            rule(path)
        }
    }
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

/// Chooses the bank rule for a shared access and appends the model notes that touch it.
pub fn bank_rule(cc: Cc, size_bytes: u32, mode: BankMode, mut notes: Option<&mut Vec<Note>>) -> BankRule {
    let family = cc.family();
    if family != Family::Kepler && mode == BankMode::EightByte {
        add(&mut notes, || {
            note(
            "bank-mode-no-op",
            format!("The 8-byte bank mode exists only on Kepler (3.x); cudaDeviceSetSharedMemConfig is a no-op on CC {cc}, so 4-byte banks are used"),
            "PG-11 K.3.3; CUDA runtime API (deprecated)",
        )
        });
    }
    match family {
        Family::Fermi => {
            if size_bytes == 16 {
                add(&mut notes, || {
                    note(
                    "fermi-128-bit",
                    "Fermi: \"the majority of 128-bit accesses will cause 2-way bank conflicts\"; the guide's rule adds 1 to the largest number of quarter-warp threads with different addresses in one bank. warpscope counts half-warp passes over 32 four-byte banks, which gives the same 2 passes for a conflict-free half-warp and reports conflict degree 2",
                    "PG-5.0 F.4.3",
                )
                });
            }
            BankRule { banking: Banking::Word4, lanes_per_phase: if size_bytes <= 4 { 32 } else { 16 } }
        }
        Family::Kepler => {
            let banking = match mode {
                BankMode::FourByte => Banking::Kepler4,
                BankMode::EightByte => Banking::Kepler8,
            };
            if size_bytes == 16 || (size_bytes == 8 && mode == BankMode::FourByte) {
                add(&mut notes, || {
                    note(
                    "kepler-wide-derived",
                    "Kepler banks deliver 64 bits per clock: warpscope serves accesses of up to 8 bytes in one pass of 32 lanes and 16-byte accesses in half-warps. The guide does not state this split; it is derived from the 64-bit bank width and unverified",
                    "PG-11 K.3.3 (derived)",
                )
                });
            }
            BankRule { banking, lanes_per_phase: if size_bytes <= 8 { 32 } else { 16 } }
        }
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

/// Which documented departures from the phase model an issue's shared lanes show (bits of
/// [`crate::model::count::flags`]); [`shared_exception_notes`] says what NVIDIA staff report about them.
pub fn shared_exception_flags(cc: Cc, size_bytes: u32, lanes: &crate::model::access::Lanes) -> u8 {
    use crate::model::count::flags;
    if lanes.n < 2 || !matches!(size_bytes, 8 | 16) {
        return 0;
    }
    let first = lanes.addr[0];
    let all_same = lanes.addr[..lanes.n].iter().all(|&a| a == first);
    let volta_turing = cc.family() == Family::Volta || cc.family() == Family::Turing;
    let mut f = 0;
    if size_bytes == 16 && volta_turing {
        let by_lane = lanes.to_options();
        let pairs_same = |x: usize| {
            lanes.iter().all(|(l, a)| match by_lane[l ^ x] {
                Some(b) => a == b,
                None => true,
            })
        };
        if all_same || pairs_same(1) || pairs_same(2) {
            f |= flags::LDS128_PAIRS;
        }
    }
    if size_bytes == 8 && all_same && cc.major >= 5 {
        f |= flags::LDS64_UNIFORM;
    }
    f
}

/// The model notes for the departures in `flags` ([`shared_exception_flags`]); `modelled_wavefronts` is the
/// phase model's count for the issue.
pub fn shared_exception_notes(flags: u8, modelled_wavefronts: u32, notes: &mut Vec<Note>) {
    if flags & crate::model::count::flags::LDS128_PAIRS != 0 {
        notes.push(note(
            "volta-lds128-pairs",
            format!("On CC 7.0-7.5 NVIDIA staff state that LDS.128 whose lane pairs (n, n^1) or (n, n^2) share an address takes 2 requests, not the phase model's {modelled_wavefronts}; the .U hint targets this case"),
            "NVIDIA forums t/359822; seeds/000 (.U uniform hint)",
        ));
    }
    if flags & crate::model::count::flags::LDS64_UNIFORM != 0 {
        notes.push(note(
            "lds64-uniform-unverified",
            "LDS.64 with every lane on one address is counted as one wavefront per half-warp; hardware behaviour for this case is unverified",
            "MODEL.md section B",
        ));
    }
}
