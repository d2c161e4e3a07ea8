//! The result of analysing one warp-level memory instruction, its JSON form (serde) and its text form.
//!
//! Units: every count is a number of things (requests, lines, sectors, transactions, wavefronts); every size
//! is in bytes and says so in its name.

use super::note::Note;
use crate::model::access::{LaneSet, Space};
use crate::model::arch::{Cc, DataPath};
use crate::text::plural;
use serde::{Deserialize, Serialize};
use std::fmt::{self, Write as _};

/// What kind of problem a lane had.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// The address was not a multiple of the access size and was aligned down.
    Misaligned,
    /// Misaligned under `--strict`: the lane is an error lane.
    MisalignedError,
    /// The address fell outside the window or the allocation: the lane is an error lane and moves no data.
    OutOfWindow,
    /// Several lanes store to the same bytes: one undefined lane wins.
    SameAddressStore,
}

/// A problem with some lanes of this instruction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// The kind of problem.
    pub kind: WarningKind,
    /// The lanes it concerns.
    pub lanes: LaneSet,
    /// A sentence for the user.
    pub text: String,
}

/// The space of a report: one of the three memories, or `generic` for a generic op whose lanes split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpaceTag {
    /// Global memory.
    Global,
    /// Shared memory.
    Shared,
    /// Local memory.
    Local,
    /// A generic LD/ST whose lanes went to more than one space; see `parts`.
    Generic,
    /// A copy from global to shared memory in one instruction (`cp.async`, `LDGSTS`): `parts` holds its
    /// global read (sectors) and its shared write (wavefronts).
    GlobalToShared,
    /// Constant memory through the constant cache (`LDC`, docs/model.md#constant-memory).
    Constant,
}

impl From<Space> for SpaceTag {
    fn from(s: Space) -> SpaceTag {
        match s {
            Space::Global => SpaceTag::Global,
            Space::Shared => SpaceTag::Shared,
            Space::Local => SpaceTag::Local,
        }
    }
}

/// The analysis of one warp-level memory instruction (or one space's part of a generic one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The compute capability.
    pub cc: Cc,
    /// The instruction, as written.
    pub op: String,
    /// The space that served it.
    pub space: SpaceTag,
    /// Bytes per lane.
    pub size: u32,
    /// Lanes that took part and moved data (error lanes excluded).
    pub active_lanes: u32,
    /// The cost, whose fields depend on the space.
    #[serde(flatten)]
    pub cost: Cost,
    /// Lanes that were active but moved no data (outside a window or allocation, or misaligned under
    /// `--strict`).
    pub error_lanes: LaneSet,
    /// Per lane, the address this part served after alignment: a global address, a shared-window offset, or
    /// for local memory the interleaved address in the local backing store. `null` for lanes not in it.
    pub addresses: Vec<Option<u64>>,
    /// Model notes that touch this result.
    pub notes: Vec<Note>,
    /// Problems with some lanes.
    pub warnings: Vec<Warning>,
    /// For an atomic or reduction: its read-modify-writes and their serialization (docs/model.md#atomics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic: Option<crate::model::tally::AtomicCounts>,
    /// With the memory system on, for the drawn issue: each sector its lanes touched (its address) and where
    /// the modelled caches served it (docs/model.md#the-memory-system). Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub served: Vec<(u64, crate::model::cache::Served)>,
}

/// The cost of an instruction: memory transactions, shared-memory wavefronts, or parts of a generic op.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Cost {
    /// Global or local memory.
    Memory(MemoryCost),
    /// Shared memory.
    Banks(BankCost),
    /// A constant-bank load: passes through the constant cache.
    Constant(ConstantCost),
    /// A generic op split across spaces: one report per space, in the order global, shared, local.
    Split {
        /// The parts.
        parts: Vec<Report>,
    },
}

/// What a global or local access costs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryCost {
    /// Requests with at least one active lane.
    pub requests: u32,
    /// Distinct 128-byte lines the warp touches.
    pub lines: u32,
    /// Distinct 32-byte sectors the warp touches.
    pub sectors: u32,
    /// Transactions the CC's rule charges, summed over requests.
    pub transactions: u32,
    /// Bytes per transaction: 128 or 32.
    pub transaction_bytes: u32,
    /// Active lanes x access size.
    pub bytes_requested: u64,
    /// Distinct bytes the active lanes touch.
    pub bytes_unique: u64,
    /// transactions x transaction_bytes.
    pub bytes_moved: u64,
    /// bytes_unique / bytes_moved (0 when nothing moved).
    pub efficiency: f64,
    /// sectors / requests (0 without requests), the ratio Nsight Compute reports.
    pub sectors_per_request: f64,
    /// The cache the data went through.
    pub path: DataPath,
    /// The requests in issue order, each with its transactions: what the animation shows.
    pub steps: Vec<RequestStep>,
}

/// One request of a global or local access.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestStep {
    /// The lanes the request covers (active or not).
    pub lanes: LaneSet,
    /// Its transactions, by address.
    pub transactions: Vec<TransactionStep>,
}

/// One transaction: a 128-byte line or a 32-byte sector or segment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionStep {
    /// First byte address of the transaction (aligned to its size).
    pub addr: u64,
    /// Its size in bytes.
    pub bytes: u32,
    /// Which of its four 32-byte sectors the request touches (bit i = sector i), for 128-byte transactions;
    /// 1 for a 32-byte transaction.
    pub sector_mask: u8,
    /// The lanes whose bytes it carries.
    pub lanes: LaneSet,
}

/// What a constant-bank load costs (docs/model.md#constant-memory).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConstantCost {
    /// Passes: one per distinct address among the active lanes.
    pub passes: u32,
    /// Distinct 64-byte lines: the alternative count in the model's notes.
    pub lines_64: u32,
    /// Each pass: the address it serves and its lanes, ascending.
    pub constant_passes: Vec<ConstantPass>,
}

/// One pass of the constant cache.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstantPass {
    /// The offset in the constant bank.
    pub addr: u64,
    /// The lanes it serves.
    pub lanes: LaneSet,
}

/// What a shared-memory access costs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BankCost {
    /// Conflict-free passes actually needed, summed over phases.
    pub wavefronts: u32,
    /// Passes the same access would need with no bank conflicts.
    pub ideal_wavefronts: u32,
    /// wavefronts - ideal_wavefronts.
    pub bank_conflicts: u32,
    /// The most distinct words (conflict keys) one bank must serve in one phase: the "n-way".
    pub conflict_degree: u32,
    /// Number of banks.
    pub banks: u32,
    /// Width of a bank in bytes (4, or 8 in Kepler's 8-byte mode).
    pub bank_bytes: u32,
    /// The wavefronts the other shared model (`--shared-model`) counts, present where the two differ: a
    /// 64- or 128-bit access whose lanes share addresses in pairs on CC 7.0+ (docs/model.md#shared-memory-as-measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_model_wavefronts: Option<u32>,
    /// Phases in order, each with its wavefronts: what the animation shows.
    pub phases: Vec<PhaseStep>,
}

/// One phase (the whole warp, a half-warp or a quarter-warp) of a shared access.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseStep {
    /// The lanes of the phase (active or not).
    pub lanes: LaneSet,
    /// The phase's cost with no conflicts.
    pub ideal: u32,
    /// Its wavefronts in order.
    pub wavefronts: Vec<WavefrontStep>,
}

/// One conflict-free pass of shared memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WavefrontStep {
    /// The lanes served (a wide access may be served over several wavefronts).
    pub lanes: LaneSet,
    /// The bank words read or written: (bank, first byte address of the 4-byte word).
    pub words: Vec<BankWord>,
}

/// A 4-byte word of shared memory served in a wavefront.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BankWord {
    /// The bank.
    pub bank: u32,
    /// First byte offset of the word in the shared window.
    pub addr: u64,
}

impl Report {
    /// The memory cost, if this is a global or local report.
    pub fn memory(&self) -> Option<&MemoryCost> {
        match &self.cost {
            Cost::Memory(m) => Some(m),
            _ => None,
        }
    }

    /// The bank cost, if this is a shared report.
    pub fn banks(&self) -> Option<&BankCost> {
        match &self.cost {
            Cost::Banks(b) => Some(b),
            _ => None,
        }
    }

    /// The parts of a split generic op, or this report alone.
    pub fn parts(&self) -> Vec<&Report> {
        match &self.cost {
            Cost::Split { parts } => parts.iter().collect(),
            _ => vec![self],
        }
    }

    /// The one-line summary used in the text form and the page's metric line.
    pub fn summary(&self) -> String {
        let s = self.cost_summary();
        match self.atomic {
            Some(a) => format!("{s}; {}", atomic_summary(a)),
            None => s,
        }
    }

    fn cost_summary(&self) -> String {
        match &self.cost {
            Cost::Memory(m) => {
                memory_summary(m.requests, m.lines, m.sectors, m.transactions, m.transaction_bytes, m.efficiency)
            }
            Cost::Banks(b) => bank_summary(b.wavefronts, b.ideal_wavefronts, b.conflict_degree),
            Cost::Constant(k) => constant_summary(k.passes, k.lines_64),
            Cost::Split { parts } if self.space == SpaceTag::GlobalToShared => {
                parts.iter().map(|p| format!("{}: {}", self.part_name(p), p.summary())).collect::<Vec<_>>().join("; ")
            }
            Cost::Split { parts } => parts
                .iter()
                .map(|p| format!("{:?}: {}", p.space, p.summary()).to_ascii_lowercase())
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    /// The human-readable table `warpscope analyze --format text` prints; the snapshot tests compare it.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let facts = self.cc.facts();
        let _ = writeln!(
            out,
            "{} on CC {} ({:?}, {}): {} bytes per lane, {} active lanes",
            self.op, self.cc, facts.family, facts.example_gpu, self.size, self.active_lanes
        );
        self.write_body(&mut out, "");
        if let Some(a) = self.atomic {
            let _ = writeln!(out, "atomic read-modify-writes:");
            let _ = writeln!(out, "  {:<20} {}", "operations", a.ops);
            let _ = writeln!(out, "  {:<20} {}", "serial (one address)", a.serial);
        }
        if !self.notes.is_empty() {
            let _ = writeln!(out, "model notes:");
            for n in &self.notes {
                let _ = writeln!(out, "  - [{}] {} ({})", n.id, n.text, n.source);
            }
        }
        out
    }

    fn write_body(&self, out: &mut String, indent: &str) {
        let row = |out: &mut String, name: &str, value: String| {
            let _ = writeln!(out, "{indent}  {name:<20} {value}");
        };
        match &self.cost {
            Cost::Memory(m) => {
                let _ = writeln!(out, "{indent}{} memory, {:?} path", self.space_name(), m.path);
                row(out, "requests", m.requests.to_string());
                row(out, "lines (128 B)", m.lines.to_string());
                row(out, "sectors (32 B)", m.sectors.to_string());
                row(out, "sectors/request", format!("{:.2}", m.sectors_per_request));
                row(out, "transactions", format!("{} x {} B", m.transactions, m.transaction_bytes));
                row(out, "bytes requested", m.bytes_requested.to_string());
                row(out, "bytes unique", m.bytes_unique.to_string());
                row(out, "bytes moved", m.bytes_moved.to_string());
                row(out, "efficiency", format!("{:.1}%", m.efficiency * 100.0));
                let _ = writeln!(out, "{indent}steps:");
                for (i, r) in m.steps.iter().enumerate() {
                    let _ = writeln!(out, "{indent}  request {} (lanes {}):", i + 1, r.lanes.ranges());
                    for t in &r.transactions {
                        let _ = writeln!(out, "{indent}    {} B at {:#x}: lanes {}", t.bytes, t.addr, t.lanes.ranges());
                    }
                }
            }
            Cost::Banks(b) => {
                let _ = writeln!(out, "{indent}shared memory, {} banks x {} B", b.banks, b.bank_bytes);
                row(out, "wavefronts", b.wavefronts.to_string());
                row(out, "ideal wavefronts", b.ideal_wavefronts.to_string());
                row(out, "bank conflicts", b.bank_conflicts.to_string());
                row(out, "conflict degree", format!("{}-way", b.conflict_degree));
                let _ = writeln!(out, "{indent}steps:");
                for (i, p) in b.phases.iter().enumerate() {
                    let _ = writeln!(out, "{indent}  phase {} (lanes {}):", i + 1, p.lanes.ranges());
                    for (w, wf) in p.wavefronts.iter().enumerate() {
                        let _ = writeln!(out, "{indent}    wavefront {}: lanes {}", w + 1, wf.lanes.ranges());
                    }
                }
            }
            Cost::Constant(k) => {
                let _ = writeln!(out, "{indent}constant memory, constant cache");
                row(out, "passes", k.passes.to_string());
                row(out, "64-byte lines", k.lines_64.to_string());
                let _ = writeln!(out, "{indent}steps:");
                for (i, p) in k.constant_passes.iter().enumerate() {
                    let _ = writeln!(out, "{indent}  pass {}: {:#x} for lanes {}", i + 1, p.addr, p.lanes.ranges());
                }
            }
            Cost::Split { parts } if self.space == SpaceTag::GlobalToShared => {
                let _ = writeln!(out, "{indent}copy global -> shared in one instruction:");
                for p in parts {
                    let _ = writeln!(out, "{indent}- {}, {}:", self.part_name(p), plural(p.active_lanes, "lane"));
                    p.write_body(out, &format!("{indent}  "));
                }
            }
            Cost::Split { parts } => {
                let _ = writeln!(out, "{indent}generic access split across {} spaces:", parts.len());
                for p in parts {
                    let _ = writeln!(out, "{indent}- {} lane(s) to {}:", p.active_lanes, p.space_name());
                    p.write_body(out, &format!("{indent}  "));
                }
            }
        }
        if !self.error_lanes.is_empty() {
            let _ = writeln!(out, "{indent}error lanes: {}", self.error_lanes.ranges());
        }
        for w in &self.warnings {
            let _ = writeln!(out, "{indent}warning: {}", w.text);
        }
    }

    /// How a part of a split report is named: `global read` and `shared write` for a copy from global to
    /// shared memory, otherwise its space (`global`, `shared`, `local`).
    fn part_name(&self, part: &Report) -> &'static str {
        match (self.space, part.space) {
            (SpaceTag::GlobalToShared, SpaceTag::Global) => "global read",
            (SpaceTag::GlobalToShared, SpaceTag::Shared) => "shared write",
            _ => part.space_name(),
        }
    }

    fn space_name(&self) -> &'static str {
        match self.space {
            SpaceTag::Global => "global",
            SpaceTag::Shared => "shared",
            SpaceTag::Local => "local",
            SpaceTag::Generic => "generic",
            SpaceTag::GlobalToShared => "global to shared",
            SpaceTag::Constant => "constant",
        }
    }
}

/// The summary of a global or local access (the report's and the fast path's, word for word).
pub fn memory_summary(
    requests: u32,
    lines: u32,
    sectors: u32,
    transactions: u32,
    transaction_bytes: u32,
    efficiency: f64,
) -> String {
    format!(
        "{}, {}, {}, {transactions} x {transaction_bytes} B transactions, efficiency {:.1}%",
        plural(requests, "request"),
        plural(lines, "line"),
        plural(sectors, "sector"),
        efficiency * 100.0
    )
}

/// The summary of a constant-bank load.
pub fn constant_summary(passes: u32, lines_64: u32) -> String {
    let p = if passes == 1 { "1 pass".to_string() } else { format!("{passes} passes") };
    format!("{p} (one per distinct address), {} of 64 B", plural(lines_64, "line"))
}

/// The atomic part of a summary: `32 operations, 32 serial on one address`.
pub fn atomic_summary(a: crate::model::tally::AtomicCounts) -> String {
    format!("{}, {} serial on one address", plural(a.ops, "operation"), a.serial)
}

/// The summary of a shared access.
pub fn bank_summary(wavefronts: u32, ideal_wavefronts: u32, conflict_degree: u32) -> String {
    format!(
        "{}, ideal {ideal_wavefronts}, {}, {conflict_degree}-way",
        plural(wavefronts, "wavefront"),
        plural(wavefronts - ideal_wavefronts, "bank conflict")
    )
}

/// a / b, or 0 when b is 0.
pub fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}
