//! From a lowered program to results: every warp-level issue is costed on the fast path as it happens and
//! added into per-instruction totals under Nsight Compute's names; the detailed steps of one issue are
//! computed only when the figure (or `--steps`) asks for them, by running that issue's warp again.
//!
//! [`Analysis`] holds a lowered program and its settings; [`Analysis::run`] gives a [`ProgramResult`] for a
//! block or a whole grid, [`Analysis::report`] the detailed [`Report`] of one issue, and [`Analysis::trace`]
//! the captured addresses of the first issues (for calibration probes).
//!
//! May import: `text`, `model`, `program`. Never the languages or anything above.

pub mod caches;

use crate::model::access::{Base, Instr, LaneSet, Second, Space, WarpAddrs};
use crate::model::arch::Cc;
use crate::model::cost::{analyze_with, issue_notes, warnings, Config};
use crate::model::count::{count_lanes, Counts, PartCost};
use crate::model::note::Note;
use crate::model::report::{Report, SpaceTag};
use crate::program::exec::Sink;
use crate::program::grid::{self, BlockStats, Blocks, Control, Costing, RunError};
use crate::program::launch::{Dim3, Launch};
use crate::program::{Program, Site, SiteId, SourceLine};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Issues listed per instruction (the first ones of the shown block); the totals count every issue.
pub const MAX_LISTED_ISSUES: usize = 64;
/// Warning lines kept per instruction; the rest are counted.
pub const MAX_WARNINGS: usize = 16;

/// One warp's issue of a site, with its addresses.
#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    /// The warp in the block.
    pub warp: u32,
    /// Which time this warp issues the site (loop iterations), from 0.
    pub iteration: u32,
    /// The lanes' addresses; lanes that did not reach the site are inactive.
    pub addrs: WarpAddrs,
    /// For generic LD/ST with an explicit `Plg` operand: the lanes whose Plg is true.
    pub plg: Option<LaneSet>,
    /// For `cp.async` (`LDGSTS`): each lane's global source address (`addrs` are the shared destinations).
    pub src: Option<WarpAddrs>,
}

/// One issue's operands as a run captured them.
#[derive(Clone, Debug, PartialEq)]
pub struct Captured {
    /// The addresses.
    pub addrs: WarpAddrs,
    /// The lanes whose explicit `Plg` is true.
    pub plg: Option<LaneSet>,
    /// A `cp.async`'s global source addresses.
    pub src: Option<WarpAddrs>,
}

fn warp_addrs(addrs: &[u64; 32], mask: u32) -> WarpAddrs {
    WarpAddrs(std::array::from_fn(|l| (mask >> l & 1 != 0).then_some(addrs[l])))
}

fn captured(addrs: &[u64; 32], mask: u32, second: Second) -> Captured {
    Captured {
        addrs: warp_addrs(addrs, mask),
        plg: second.plg().map(LaneSet),
        src: match second {
            Second::Src(s, reads) => Some(warp_addrs(s, mask & reads)),
            _ => None,
        },
    }
}

/// A site and some of its issues.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceItem {
    /// The site.
    pub site: Site,
    /// Its first warp-level issues, by warp then iteration.
    pub issues: Vec<Issue>,
    /// How many issues the site had in the block (also those not captured).
    pub issues_total: usize,
}

/// Captured issues: the sites in program order, each with its first warp-level issues.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The launch it ran under.
    pub launch: Launch,
    /// The sites.
    pub items: Vec<TraceItem>,
}

/// Sums over the issues for global and local parts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryTotals {
    /// Requests.
    pub requests: u64,
    /// Lines (per warp, summed).
    pub lines: u64,
    /// Sectors (per warp, summed).
    pub sectors: u64,
    /// Transactions.
    pub transactions: u64,
    /// Bytes per transaction (of the first part seen).
    pub transaction_bytes: u32,
    /// Bytes requested.
    pub bytes_requested: u64,
    /// Unique bytes (per warp, summed).
    pub bytes_unique: u64,
    /// Bytes moved.
    pub bytes_moved: u64,
    /// bytes_unique / bytes_moved.
    pub efficiency: f64,
    /// sectors / requests.
    pub sectors_per_request: f64,
}

/// Sums over the issues for shared parts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BankTotals {
    /// Wavefronts.
    pub wavefronts: u64,
    /// Ideal wavefronts.
    pub ideal_wavefronts: u64,
    /// Bank conflicts.
    pub bank_conflicts: u64,
    /// The largest conflict degree of any issue.
    pub conflict_degree: u32,
    /// The wavefronts the other shared model counts, present where the two differ (docs/model.md#shared-memory-as-measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_model_wavefronts: Option<u64>,
}

/// One issue, in brief.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IssueSummary {
    /// The warp.
    pub warp: u32,
    /// The iteration.
    pub iteration: u32,
    /// Lanes that moved data.
    pub active_lanes: u32,
    /// The engine's one-line summary.
    pub summary: String,
}

/// One memory instruction of a program, summed over every warp issue of the blocks counted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstrResult {
    /// 1-based source line.
    pub line: usize,
    /// The source line.
    pub text: String,
    /// For PTX and SASS with line information: the CUDA source line it was compiled from.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source: Option<SourceLine>,
    /// What is accessed.
    pub access: String,
    /// The instruction.
    pub op: String,
    /// The space, or `generic` when lanes went to more than one.
    pub space: SpaceTag,
    /// Bytes per lane.
    pub size: u32,
    /// Warp-level issues (warps x iterations x blocks) with at least one active lane.
    pub warps: u64,
    /// Active lanes, summed over the issues.
    pub active_lanes: u64,
    /// Lanes whose address was not aligned to the access size (aligned down, with a warning), summed over the
    /// issues.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub misaligned_lanes: u64,
    /// Active lanes that moved no data (outside their window or allocation, or misaligned under strict
    /// alignment), summed over the issues.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub error_lanes: u64,
    /// Global and local sums.
    #[serde(flatten, skip_serializing_if = "Option::is_none", default)]
    pub memory: Option<MemoryTotals>,
    /// Shared sums.
    #[serde(flatten, skip_serializing_if = "Option::is_none", default)]
    pub banks: Option<BankTotals>,
    /// For an atomic or reduction: read-modify-writes and their serialization, summed (docs/model.md#atomics).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub atomic: Option<AtomicTotals>,
    /// For an atomic: its chains of lanes on one address, and its most-hit addresses.
    #[cfg(feature = "data")]
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub contention: Option<Contention>,
    /// For a constant-bank load: passes through the constant cache, summed (docs/model.md#constant-memory).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub constant: Option<ConstantTotals>,
    /// The sums under Nsight Compute's metric names.
    pub ncu: BTreeMap<String, u64>,
    /// The same sums divided by the requests they came from (global and local requests; for shared memory
    /// and instruction counts, the warp-level instructions), keyed by the sum's name.
    pub ncu_per_request: BTreeMap<String, f64>,
    /// Model and language notes, once each.
    pub notes: Vec<Note>,
    /// The first warnings, prefixed with their warp.
    pub warnings: Vec<String>,
    /// Warnings in all (also those not listed).
    pub warnings_total: u64,
    /// The first issues of the shown block, in brief (at most [`MAX_LISTED_ISSUES`]).
    pub issues: Vec<IssueSummary>,
    /// For each warp of the shown block, how many times it issued this instruction.
    pub passes: Vec<u32>,
    /// The program's memory site this is (for [`Analysis::report`]).
    #[serde(skip)]
    pub site: usize,
}

/// For serde: a count of zero is left out of the JSON.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl InstrResult {
    /// The CUDA line a compiler made this PTX or SASS instruction from, as `transpose.cu:142`.
    pub fn source_label(&self) -> Option<String> {
        let s = self.source.as_ref()?;
        Some(format!("{}:{}", s.file.rsplit('/').next().unwrap_or(&s.file), s.line))
    }

    /// The shown block's issues, warp by warp (the figure's numbering).
    pub fn issue_count(&self) -> usize {
        self.passes.iter().map(|&p| p as usize).sum()
    }

    /// Issue `k` of the shown block as (warp, pass).
    pub fn issue_at(&self, k: usize) -> Option<(u32, u32)> {
        let mut k = k;
        for (w, &p) in self.passes.iter().enumerate() {
            if k < p as usize {
                return Some((w as u32, k as u32));
            }
            k -= p as usize;
        }
        None
    }

    /// The number of issue `(warp, pass)` in the shown block.
    pub fn issue_index(&self, warp: u32, pass: u32) -> Option<usize> {
        let before: usize = self.passes.iter().take(warp as usize).map(|&p| p as usize).sum();
        (pass < *self.passes.get(warp as usize)?).then_some(before + pass as usize)
    }

    /// The most passes any warp made (loop trips).
    pub fn max_passes(&self) -> u32 {
        self.passes.iter().copied().max().unwrap_or(0)
    }
}

/// The whole program's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgramResult {
    /// The compute capability.
    pub cc: Cc,
    /// The launch (`block_idx`: the block whose issues are listed).
    pub launch: Launch,
    /// How many blocks were counted and how many ran.
    pub blocks: BlockStats,
    /// One entry per memory instruction, in program order.
    pub instructions: Vec<InstrResult>,
    /// The kernel that ran, when the input had named kernels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Every kernel of the input, when it has several: the symbol to choose it by (`--kernel`) and the name
    /// users know.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<KernelName>,
    /// Notes about the whole program: which of several kernels ran, the parameter values it assumed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// The memory operations the totals leave out (atomics, `ld.const`, calls), by line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncounted: Vec<Uncounted>,
    /// L1, L2 and DRAM across warps and blocks, modelled (docs/model.md#the-memory-system), when asked for. The page gets
    /// [`ProgramResult::cache_chart`] instead.
    #[cfg_attr(target_arch = "wasm32", serde(skip))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches: Option<caches::CacheResult>,
    /// The memory chart's words, for the page (not in the command line's JSON, which has the numbers).
    #[cfg_attr(not(target_arch = "wasm32"), serde(skip))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_chart: Option<caches::CacheChart>,
}

/// An atomic's read-modify-writes over its issues (docs/model.md#atomics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AtomicTotals {
    /// Read-modify-writes: the active lanes of every issue.
    pub ops: u64,
    /// Per issue, the most lanes on one address (done one after another), summed.
    pub serial: u64,
    /// The most lanes on one address in any issue.
    pub max_serial: u64,
}

/// How an atomic's lanes met on addresses (docs/model.md#atomics): the chains of lanes on one address in an issue,
/// done one after another, by length; and, where data is given, the most-hit addresses over the run.
#[cfg(feature = "data")]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contention {
    /// (lanes on one address in one issue, how many times that occurred), for each length that did.
    pub chains: Vec<(u32, u64)>,
    /// The most-hit addresses, most first (at most 8), where data is given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hot: Vec<HotAddress>,
    /// Why the most-hit addresses are not listed, where they were counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_missing: Option<String>,
}

/// One of an atomic's most-hit addresses.
#[cfg(feature = "data")]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HotAddress {
    /// The address.
    pub addr: u64,
    /// Read-modify-writes at it over the run.
    pub ops: u64,
    /// Where it is, when the kernel names the array: `bins[32]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// A constant-bank load's passes over its issues (docs/model.md#constant-memory).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstantTotals {
    /// Passes: distinct addresses per issue, summed.
    pub passes: u64,
    /// The alternative count: distinct 64-byte lines per issue, summed.
    pub lines_64: u64,
}

/// A memory operation the model does not count, where it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Uncounted {
    /// Its 1-based line.
    pub line: usize,
    /// What it is (`atomicAdd → ATOMG.E.ADD`).
    pub op: String,
}

impl ProgramResult {
    /// One line saying what the totals assume and leave out, for a figure's footnote (the embed view and
    /// the exported SVG), or `None` when they assume nothing beyond the settings shown.
    pub fn assumptions(&self) -> Option<String> {
        let mut parts = Vec::new();
        let given: Vec<&Note> = self.notes.iter().filter(|n| n.id.ends_with("param-defaults")).collect();
        if !given.is_empty() {
            parts.push("parameter values warpscope gave".to_string());
        }
        if self.notes.iter().any(|n| n.id == "cuda-assumed") {
            parts.push("values assumed where the code does not say".to_string());
        }
        let data: Vec<&Note> =
            self.notes.iter().filter(|n| n.id.starts_with("data-") && n.id.ends_with("assumed")).collect();
        if let Some(n) = data.first() {
            let how = n.text.split("warpscope assumed ").nth(1).and_then(|t| t.split(" (--data-branches").next());
            parts.push(match how {
                Some(h) => format!("data-dependent branches: {h}"),
                None => "data-dependent branches assumed".to_string(),
            });
        }
        let mut data_atomics: Vec<String> = self
            .instructions
            .iter()
            .filter(|i| i.notes.iter().any(|n| n.id == "atomic-address-data"))
            .map(|i| format!("line {}", i.line))
            .collect();
        data_atomics.dedup();
        if !data_atomics.is_empty() {
            parts.push(format!("atomics whose address is data not counted ({})", data_atomics.join(", ")));
        }
        if !self.uncounted.is_empty() {
            let mut ops: Vec<String> = Vec::new();
            for u in &self.uncounted {
                let name = u.op.split(" → ").next().unwrap_or(&u.op).trim_matches('`').to_string();
                let item = format!("{name} (line {})", u.line);
                if !ops.contains(&item) {
                    ops.push(item);
                }
            }
            let more = ops.len().saturating_sub(3);
            ops.truncate(3);
            parts.push(format!(
                "not counted: {}{}",
                ops.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() }
            ));
        }
        (!parts.is_empty()).then(|| format!("Assumptions: {}.", parts.join("; ")))
    }
}

/// A kernel of the input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelName {
    /// The symbol as the input spells it (mangled): what `--kernel` and the page's menu pass.
    pub symbol: String,
    /// The name users know (demangled where the build can).
    pub name: String,
}

/// Nsight Compute's word for a space.
fn ncu_space(space: Space) -> &'static str {
    match space {
        Space::Global => "global",
        Space::Shared => "shared",
        Space::Local => "local",
    }
}

/// Additive sums for one site (a block's, then the launch's).
#[derive(Clone, Debug, Default)]
pub struct Sums {
    issues: u64,
    active_lanes: u64,
    /// global, local: requests, lines, sectors, transactions, bytes requested, unique, moved.
    mem: [[u64; 7]; 2],
    /// wavefronts, ideal, conflict degree (a maximum), the other shared model's wavefronts.
    banks: [u64; 4],
    /// Issues that reached each space.
    space_issues: [u64; 3],
    /// Atomics: read-modify-writes, serial ones summed, the most serial in one issue.
    atomic: [u64; 3],
    /// Atomics: how many times `k + 1` lanes of an issue met on one address (a chain of k + 1 done in series).
    #[cfg(feature = "data")]
    chains: [u64; 32],
    /// Atomics, where addresses are counted (given data): the read-modify-writes per address.
    #[cfg(feature = "data")]
    hot: Option<Box<Hot>>,
    /// Constant loads: passes, 64-byte lines.
    constant: [u64; 2],
    /// Lanes whose address was aligned down, and lanes that moved no data (outside a window or allocation).
    lanes_off: [u64; 2],
}

impl Sums {
    fn add(&mut self, c: &Counts) {
        self.issues += 1;
        self.lanes_off[0] += u64::from(c.misaligned.len());
        self.lanes_off[1] += u64::from(c.error_lanes.len());
        if let Some(k) = c.constant {
            self.constant[0] += u64::from(k.passes);
            self.constant[1] += u64::from(k.lines_64);
            // A constant load has no parts (it is not L1/TEX traffic): its lanes are counted here.
            self.active_lanes += u64::from(k.active_lanes);
        }
        if let Some(a) = c.atomic {
            self.atomic[0] += u64::from(a.ops);
            self.atomic[1] += u64::from(a.serial);
            self.atomic[2] = self.atomic[2].max(u64::from(a.serial));
        }
        for p in c.parts() {
            if !(c.copy && p.space == Space::Global) {
                self.active_lanes += u64::from(p.active_lanes);
            }
            self.space_issues[p.space as usize] += 1;
            match &p.cost {
                PartCost::Memory(m) => {
                    let k = if p.space == Space::Local { 1 } else { 0 };
                    let s = &mut self.mem[k];
                    s[0] += u64::from(m.requests);
                    s[1] += u64::from(m.lines);
                    s[2] += u64::from(m.sectors);
                    s[3] += u64::from(m.transactions);
                    s[4] += m.bytes_requested;
                    s[5] += m.bytes_unique;
                    s[6] += m.bytes_moved;
                }
                PartCost::Banks(b) => {
                    self.banks[0] += u64::from(b.wavefronts);
                    self.banks[1] += u64::from(b.ideal_wavefronts);
                    self.banks[2] = self.banks[2].max(u64::from(b.conflict_degree));
                    let other = if b.other_model_wavefronts != 0 { b.other_model_wavefronts } else { b.wavefronts };
                    self.banks[3] += u64::from(other);
                }
            }
        }
    }

    fn add_scaled(&mut self, o: &Sums, times: u64) {
        self.issues += o.issues * times;
        self.active_lanes += o.active_lanes * times;
        self.lanes_off[0] += o.lanes_off[0] * times;
        self.lanes_off[1] += o.lanes_off[1] * times;
        for k in 0..2 {
            for i in 0..7 {
                self.mem[k][i] += o.mem[k][i] * times;
            }
        }
        self.banks[0] += o.banks[0] * times;
        self.banks[1] += o.banks[1] * times;
        self.banks[3] += o.banks[3] * times;
        if times > 0 {
            self.banks[2] = self.banks[2].max(o.banks[2]);
        }
        for k in 0..3 {
            self.space_issues[k] += o.space_issues[k] * times;
        }
        self.constant[0] += o.constant[0] * times;
        self.constant[1] += o.constant[1] * times;
        self.atomic[0] += o.atomic[0] * times;
        self.atomic[1] += o.atomic[1] * times;
        if times > 0 {
            self.atomic[2] = self.atomic[2].max(o.atomic[2]);
        }
        #[cfg(feature = "data")]
        self.add_contention(o, times);
    }

    /// [`Sums::add_scaled`] for the chains and most-hit addresses.
    #[cfg(feature = "data")]
    fn add_contention(&mut self, o: &Sums, times: u64) {
        for k in 0..32 {
            self.chains[k] += o.chains[k] * times;
        }
        if let Some(h) = &o.hot {
            let mine = self.hot.get_or_insert_with(Default::default);
            if times > 1 && !(h.counts.is_empty() && h.pending.is_empty()) {
                mine.lost = Some("blocks counted as translations of one that ran, whose addresses are not listed");
                mine.counts = Default::default();
            }
            if let Some(why) = h.lost {
                mine.lost.get_or_insert(why);
            }
            if times > 0 {
                for (&a, &n) in &h.counts {
                    mine.add(a, n);
                }
                for &(a, n) in &h.pending {
                    mine.add(a, n);
                }
            }
        }
    }
}

/// Read-modify-writes per address for one atomic site, up to [`Hot::MAX`] addresses.
#[cfg(feature = "data")]
#[derive(Clone, Debug, Default)]
struct Hot {
    counts: rustc_hash::FxHashMap<u64, u64>,
    /// A block's chains as they came, (address, lanes): added into a run's `counts` when the block is.
    pending: Vec<(u64, u64)>,
    /// More addresses than it keeps, or blocks counted as translations of one that ran: no list.
    lost: Option<&'static str>,
}

#[cfg(feature = "data")]
impl Hot {
    const MAX: usize = 1 << 16;

    fn add(&mut self, addr: u64, n: u64) {
        if self.lost.is_some() {
            return;
        }
        if self.counts.len() >= Self::MAX && !self.counts.contains_key(&addr) {
            self.lost = Some("more than 65,536 addresses");
            self.counts = Default::default();
            return;
        }
        *self.counts.entry(addr).or_insert(0) += n;
    }
}

/// What is known about one site beyond its sums.
#[derive(Default)]
struct SiteInfo {
    /// Spaces its issues reached (bit per space), and the first transaction size seen.
    spaces: u8,
    tx_bytes: u32,
    notes: Vec<Note>,
    /// Note signatures already seen: parts present and their flags.
    sigs: Vec<u32>,
    warnings: Vec<String>,
    warnings_total: u64,
    issues: Vec<IssueSummary>,
    passes: Vec<u32>,
    /// For an atomic: why some issues' addresses were unknown (data), so they were not counted.
    unknown: Option<String>,
}

/// Costs every issue and adds block sums up: the sink a run hands its issues to.
pub struct Collector<'a> {
    cc: Cc,
    cfg: Config,
    sites: &'a [Site],
    lane_mask: u32,
    listed: Dim3,
    listing: bool,
    block: Dim3,
    several_blocks: bool,
    current: Vec<Sums>,
    total: Vec<Sums>,
    info: Vec<SiteInfo>,
    /// The current block's distinct 4-byte words of constant memory, and the most any block read.
    const_words: std::collections::HashSet<u64>,
    max_const_words: usize,
    /// Count each atomic's read-modify-writes per address (when data is given).
    #[cfg(feature = "data")]
    pub hot_addresses: bool,
}

impl<'a> Collector<'a> {
    /// A collector for `sites` whose issues of block `listed` are listed one by one.
    pub fn new(
        cc: Cc,
        cfg: &Config,
        sites: &'a [Site],
        lane_mask: LaneSet,
        listed: Dim3,
        several_blocks: bool,
    ) -> Self {
        Collector {
            cc,
            cfg: *cfg,
            sites,
            lane_mask: lane_mask.0,
            listed,
            listing: false,
            block: listed,
            several_blocks,
            current: vec![Sums::default(); sites.len()],
            total: vec![Sums::default(); sites.len()],
            info: (0..sites.len()).map(|_| SiteInfo::default()).collect(),
            const_words: std::collections::HashSet::new(),
            max_const_words: 0,
            #[cfg(feature = "data")]
            hot_addresses: false,
        }
    }

    /// Costs one issue and adds it in.
    pub fn issue_counts(&mut self, site: usize, warp: u32, pass: u32, c: &Counts) {
        let Some(instr) = self.sites.get(site).map(|s| &s.instr) else { return };
        self.current[site].add(c);
        let info = &mut self.info[site];
        // Notes: computed again only when an issue brings parts or conditions not seen before.
        let mut sig = 0u32;
        for p in c.parts() {
            sig |= (1 | u32::from(p.flags) << 1) << (8 * p.space as u32);
            info.spaces |= 1 << p.space as u8;
            if info.tx_bytes == 0 {
                if let PartCost::Memory(m) = &p.cost {
                    info.tx_bytes = m.transaction_bytes;
                }
            }
        }
        if !info.sigs.contains(&sig) {
            info.sigs.push(sig);
            for n in issue_notes(self.cc, instr, &self.cfg, c) {
                if !info.notes.iter().any(|m| m.id == n.id) {
                    info.notes.push(n);
                }
            }
        }
        if !(c.out_of_window.is_empty() && c.misaligned.is_empty() && c.same_address.is_empty()) {
            for w in warnings(instr, &self.cfg, c) {
                info.warnings_total += 1;
                if info.warnings.len() < MAX_WARNINGS {
                    let who = if self.several_blocks {
                        let b = self.block;
                        format!("block ({},{},{}) warp {warp}", b.x, b.y, b.z)
                    } else {
                        format!("warp {warp}")
                    };
                    info.warnings.push(format!("{who}: {}", w.text));
                }
            }
        }
        if self.listing {
            let w = warp as usize;
            if info.passes.len() <= w {
                info.passes.resize(w + 1, 0);
            }
            info.passes[w] = info.passes[w].max(pass + 1);
            if info.issues.len() < MAX_LISTED_ISSUES {
                info.issues.push(IssueSummary {
                    warp,
                    iteration: pass,
                    active_lanes: c.parts().map(|p| p.active_lanes).sum(),
                    summary: c.summary(),
                });
            }
        }
    }

    /// The results, once every block was added.
    pub fn finish(self, launch: Launch, blocks: BlockStats) -> ProgramResult {
        let const_bytes = 4 * self.max_const_words.max(self.const_words.len()) as u64;
        let mut notes = Vec::new();
        if const_bytes > CONSTANT_WORKING_SET {
            notes.push(crate::model::arch::notes::constant_working_set(const_bytes));
        }
        let instructions: Vec<InstrResult> = self
            .sites
            .iter()
            .zip(self.total)
            .zip(self.info)
            .enumerate()
            .map(|(k, ((site, t), mut info))| {
                // Every warp of the shown block has an entry, also those that never issued it.
                let warps = launch.warps() as usize;
                if info.passes.len() < warps {
                    info.passes.resize(warps, 0);
                }
                instr_result(k, site, &t, info)
            })
            // An instruction no lane reached is not listed; an atomic whose address was data is, with its note,
            // after the counted ones (so that what a view selects first has issues to draw).
            .filter(|r| r.warps > 0 || r.notes.iter().any(|n| n.id == "atomic-address-data"))
            .collect();
        let (mut instructions, not_counted): (Vec<InstrResult>, Vec<InstrResult>) =
            instructions.into_iter().partition(|r: &InstrResult| r.warps > 0);
        instructions.extend(not_counted);
        ProgramResult {
            cc: self.cc,
            launch,
            blocks,
            instructions,
            kernel: None,
            kernels: Vec::new(),
            notes,
            uncounted: Vec::new(),
            caches: None,
            cache_chart: None,
        }
    }
}

/// The constant cache's working set per SM, in bytes (CUDA Programming Guide, Compute Capabilities table: 8 KB on every CC).
const CONSTANT_WORKING_SET: u64 = 8 << 10;

impl Sink for Collector<'_> {
    fn issue(&mut self, site: SiteId, warp: u32, pass: u32, addrs: &[u64; 32], mask: u32, second: Second) -> bool {
        let mask = mask & self.lane_mask;
        if mask == 0 {
            return true;
        }
        let Some(instr) = self.sites.get(site as usize).map(|s| &s.instr) else { return true };
        if instr.base.is_constant() {
            let size = u64::from(instr.size_bytes);
            for l in (0..32).filter(|l| mask >> l & 1 != 0) {
                let a = addrs[l] & !(size - 1);
                for w in 0..size.div_ceil(4) {
                    self.const_words.insert(a / 4 + w);
                }
            }
        }
        let c = count_lanes(self.cc, instr, addrs, mask, second, &self.cfg);
        self.issue_counts(site as usize, warp, pass, &c);
        #[cfg(feature = "data")]
        if instr.base.is_atomic() {
            // The chains: lanes on one aligned address, done one after another (docs/model.md#atomics). The
            // lanes' addresses in order (an insertion sort: 32 at most).
            let align = !(u64::from(instr.size_bytes.max(1)) - 1);
            let (mut a, mut len) = ([0u64; 32], 0);
            for l in (0..32).filter(|l| mask >> l & 1 != 0) {
                let x = addrs[l] & align;
                let mut k = len;
                while k > 0 && a[k - 1] > x {
                    a[k] = a[k - 1];
                    k -= 1;
                }
                a[k] = x;
                len += 1;
            }
            let s = &mut self.current[site as usize];
            let mut k = 0;
            while k < len {
                let n = a[k..len].iter().take_while(|&&x| x == a[k]).count();
                s.chains[n - 1] += 1;
                if self.hot_addresses {
                    s.hot.get_or_insert_with(Default::default).pending.push((a[k], n as u64));
                }
                k += n;
            }
        }
        true
    }

    fn unknown_address(&mut self, site: SiteId, why: &str) {
        if let Some(info) = self.info.get_mut(site as usize) {
            info.unknown.get_or_insert_with(|| why.to_string());
        }
    }
}

impl Costing for Collector<'_> {
    type Partial = Vec<Sums>;

    fn begin_block(&mut self, b: Dim3) {
        self.max_const_words = self.max_const_words.max(self.const_words.len());
        self.const_words.clear();
        self.block = b;
        self.listing = b == self.listed;
    }

    fn take_block(&mut self) -> Vec<Sums> {
        std::mem::replace(&mut self.current, vec![Sums::default(); self.sites.len()])
    }

    fn add(&mut self, p: &Vec<Sums>, times: u64) {
        for (t, s) in self.total.iter_mut().zip(p) {
            t.add_scaled(s, times);
        }
    }
}

/// An atomic site's chains and most-hit addresses.
#[cfg(feature = "data")]
fn contention(t: &Sums) -> Contention {
    let chains = (0..32).filter(|&k| t.chains[k] > 0).map(|k| (k as u32 + 1, t.chains[k])).collect();
    let (mut hot, mut hot_missing) = (Vec::new(), None);
    if let Some(h) = &t.hot {
        match h.lost {
            Some(why) => hot_missing = Some(why.to_string()),
            None => {
                let mut all: Vec<(u64, u64)> = h.counts.iter().map(|(&a, &n)| (a, n)).collect();
                all.sort_unstable_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
                hot = all.into_iter().take(8).map(|(addr, ops)| HotAddress { addr, ops, at: None }).collect();
            }
        }
    }
    Contention { chains, hot, hot_missing }
}

fn instr_result(k: usize, site: &Site, t: &Sums, info: SiteInfo) -> InstrResult {
    let instr = &site.instr;
    // Nsight Compute names ldmatrix, stmatrix and cp.async apart from plain loads and stores.
    let op = match instr.base {
        Base::Ldsm => "ldsm",
        Base::Stsm => "stsm",
        Base::Ldgsts => "ldgsts",
        Base::Red => "red",
        Base::Atomg | Base::Atom | Base::Atoms => "atom",
        _ if instr.is_store() => "st",
        _ => "ld",
    };
    let mut ncu: BTreeMap<String, u64> = BTreeMap::new();
    let mut per_request: BTreeMap<String, f64> = BTreeMap::new();
    let mut memory: Option<MemoryTotals> = None;
    let mut banks: Option<BankTotals> = None;
    for space in [Space::Global, Space::Shared, Space::Local] {
        if info.spaces & (1 << space as u8) == 0 {
            continue;
        }
        let sp = ncu_space(space);
        match space {
            Space::Shared => {
                let (wav, ideal, degree) = (t.banks[0], t.banks[1], t.banks[2]);
                let name = format!("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum");
                let conflicts = format!("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum");
                let n = t.space_issues[Space::Shared as usize];
                per_request.insert(name.clone(), crate::model::report::ratio(wav, n));
                per_request.insert(conflicts.clone(), crate::model::report::ratio(wav - ideal, n));
                ncu.insert(name, wav);
                ncu.insert(conflicts, wav - ideal);
                banks = Some(BankTotals {
                    wavefronts: wav,
                    ideal_wavefronts: ideal,
                    bank_conflicts: wav - ideal,
                    conflict_degree: degree as u32,
                    other_model_wavefronts: (t.banks[3] != wav).then_some(t.banks[3]),
                });
            }
            Space::Global | Space::Local => {
                let s = &t.mem[if space == Space::Local { 1 } else { 0 }];
                let req = format!("l1tex__t_requests_pipe_lsu_mem_{sp}_op_{op}.sum");
                let sec = format!("l1tex__t_sectors_pipe_lsu_mem_{sp}_op_{op}.sum");
                per_request.insert(req.clone(), crate::model::report::ratio(s[0], s[0]));
                per_request.insert(sec.clone(), crate::model::report::ratio(s[2], s[0]));
                ncu.insert(req, s[0]);
                ncu.insert(sec, s[2]);
                let m = memory
                    .get_or_insert_with(|| MemoryTotals { transaction_bytes: info.tx_bytes, ..Default::default() });
                m.requests += s[0];
                m.lines += s[1];
                m.sectors += s[2];
                m.transactions += s[3];
                m.bytes_requested += s[4];
                m.bytes_unique += s[5];
                m.bytes_moved += s[6];
            }
        }
    }
    if let Some(m) = memory.as_mut() {
        m.efficiency = crate::model::report::ratio(m.bytes_unique, m.bytes_moved);
        m.sectors_per_request = crate::model::report::ratio(m.sectors, m.requests);
    }
    let space_name = instr.base.fixed_space().map_or("generic", ncu_space);
    let inst = match instr.base {
        Base::Ldsm | Base::Stsm | Base::Ldgsts => format!("smsp__inst_executed_op_{op}.sum"),
        _ => format!("smsp__inst_executed_op_{space_name}_{op}.sum"),
    };
    if t.issues > 0 {
        ncu.insert(inst, t.issues);
    }
    let seen: Vec<Space> = [Space::Global, Space::Shared, Space::Local]
        .into_iter()
        .filter(|s| info.spaces & (1 << *s as u8) != 0)
        .collect();
    let space = match seen.as_slice() {
        _ if instr.base == Base::Ldgsts => SpaceTag::GlobalToShared,
        _ if instr.base.is_constant() => SpaceTag::Constant,
        [one] => SpaceTag::from(*one),
        [] => instr.base.fixed_space().map_or(SpaceTag::Global, SpaceTag::from),
        _ => SpaceTag::Generic,
    };
    let mut notes = site.notes.clone();
    if let Some(why) = &info.unknown {
        notes.push(crate::model::arch::notes::atomic_address_data(why, t.issues == 0));
    }
    for mut n in info.notes {
        if let Some(b) = &banks {
            crate::model::arch::notes::refill(&mut n, b.wavefronts, b.other_model_wavefronts.unwrap_or(b.wavefronts));
        }
        if !notes.iter().any(|m| m.id == n.id) {
            notes.push(n);
        }
    }
    InstrResult {
        line: site.line,
        text: site.text.clone(),
        source: site.source.clone(),
        access: site.access.clone(),
        op: instr.text.clone(),
        space,
        size: instr.size_bytes,
        warps: t.issues,
        active_lanes: t.active_lanes,
        misaligned_lanes: t.lanes_off[0],
        error_lanes: t.lanes_off[1],
        memory,
        banks,
        constant: instr.base.is_constant().then_some(ConstantTotals { passes: t.constant[0], lines_64: t.constant[1] }),
        atomic: instr.base.is_atomic().then_some(AtomicTotals {
            ops: t.atomic[0],
            serial: t.atomic[1],
            max_serial: t.atomic[2],
        }),
        #[cfg(feature = "data")]
        contention: (instr.base.is_atomic() && t.issues > 0).then(|| contention(t)),
        ncu,
        ncu_per_request: per_request,
        notes,
        warnings: info.warnings,
        warnings_total: info.warnings_total,
        issues: info.issues,
        passes: info.passes,
        site: k,
    }
}

/// Costs captured issues (calibration probes): the same totals a run would give for them.
pub fn analyze_trace(cc: Cc, trace: &Trace, cfg: &Config) -> ProgramResult {
    let sites: Vec<Site> = trace.items.iter().map(|i| i.site.clone()).collect();
    let mut c = Collector::new(cc, cfg, &sites, LaneSet::ALL, trace.launch.block_idx, false);
    c.begin_block(trace.launch.block_idx);
    for (k, item) in trace.items.iter().enumerate() {
        for issue in &item.issues {
            let counts =
                crate::model::count::count_with(cc, &item.site.instr, &issue.addrs, issue.plg, issue.src.as_ref(), cfg);
            c.issue_counts(k, issue.warp, issue.iteration, &counts);
        }
    }
    let p = c.take_block();
    c.add(&p, 1);
    let stats = BlockStats { total: 1, executed: 1, classes: 1, ..BlockStats::default() };
    c.finish(trace.launch, stats)
}

/// A lowered program with everything needed to run it.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The compute capability.
    pub cc: Cc,
    /// Engine settings.
    pub config: Config,
    /// The launch; `block_idx` is the block whose issues are listed and drawn.
    pub launch: Launch,
    /// The program.
    pub program: Rc<Program>,
    /// Lanes allowed to take part in every warp (`--mask`).
    pub lane_mask: LaneSet,
    /// The most bytes of register state a block's warps may use.
    pub max_memory_bytes: u64,
    /// Threads the memory system may use ([`crate::scenario::Limits::threads`]).
    pub threads: usize,
    /// Whether the memory system may replay an SM's wave from a translated one instead of playing it
    /// (docs/model.md#the-memory-system; the figures are the same either way, which the tests show by turning
    /// it off).
    pub replay: bool,
    /// The text the program was lowered from (the notes' line numbers).
    pub source: Rc<str>,
}

struct Capture {
    site: SiteId,
    pass: u32,
    lane_mask: u32,
    got: Option<Captured>,
}

impl Sink for Capture {
    fn issue(&mut self, site: SiteId, _: u32, pass: u32, addrs: &[u64; 32], mask: u32, second: Second) -> bool {
        if site != self.site || pass != self.pass {
            return true;
        }
        self.got = Some(captured(addrs, mask & self.lane_mask, second));
        false
    }
}

struct Recorder {
    max: usize,
    lane_mask: u32,
    items: Vec<(Vec<Issue>, usize)>,
}

impl Sink for Recorder {
    fn issue(&mut self, site: SiteId, warp: u32, pass: u32, addrs: &[u64; 32], mask: u32, second: Second) -> bool {
        let mask = mask & self.lane_mask;
        if mask == 0 {
            return true;
        }
        let Some((issues, total)) = self.items.get_mut(site as usize) else { return true };
        *total += 1;
        if issues.len() < self.max {
            let c = captured(addrs, mask, second);
            issues.push(Issue { warp, iteration: pass, addrs: c.addrs, plg: c.plg, src: c.src });
        }
        true
    }
}

impl Analysis {
    /// Runs the blocks `blocks` names (the listed block is `launch.block_idx`).
    pub fn run(&self, blocks: Blocks, control: &mut dyn Control) -> Result<ProgramResult, RunError> {
        let several = blocks != Blocks::One(self.launch.block_idx) && self.launch.grid.volume() > 1;
        let listed = match blocks {
            Blocks::One(b) => b,
            Blocks::All | Blocks::Each => Dim3 { x: 0, y: 0, z: 0 },
        };
        let mut c = Collector::new(self.cc, &self.config, &self.program.sites, self.lane_mask, listed, several);
        #[cfg(feature = "data")]
        {
            c.hot_addresses = self.program.given.is_some();
        }
        let launch = Launch { block_idx: listed, ..self.launch };
        let stats =
            grid::run(&self.program, &launch, blocks, &mut c, control, self.max_memory_bytes, &self.config.windows)?;
        let mut r = c.finish(launch, stats);
        // The most-hit addresses, named by the array the kernel declares nearest below them.
        #[cfg(feature = "data")]
        for i in &mut r.instructions {
            for h in i.contention.iter_mut().flat_map(|c| c.hot.iter_mut()) {
                let below = self.program.arrays.iter().filter(|a| a.base <= h.addr).max_by_key(|a| a.base);
                h.at = below.and_then(|a| {
                    let (off, eb) = (h.addr - a.base, u64::from(a.elem.bytes()?));
                    Some(if off % eb == 0 {
                        format!("{}[{}]", a.name, off / eb)
                    } else {
                        format!("{} + {off} bytes", a.name)
                    })
                });
            }
        }
        r.kernel = self.program.kernel.clone();
        if self.program.kernels.len() > 1 {
            r.kernels =
                self.program.kernels.iter().map(|(s, n)| KernelName { symbol: s.clone(), name: n.clone() }).collect();
        }
        let from_run = std::mem::take(&mut r.notes);
        r.notes = self.program.notes.clone();
        r.notes.extend(from_run);
        let data_atomics: Vec<(String, usize)> = r
            .instructions
            .iter()
            .filter(|i| i.notes.iter().any(|n| n.id == "atomic-address-data"))
            .map(|i| (i.op.clone(), i.line))
            .collect();
        if !data_atomics.is_empty() {
            r.notes.push(crate::model::arch::notes::atomics_not_counted(&data_atomics));
        }
        r.uncounted =
            self.program.uncounted.iter().map(|(line, op)| Uncounted { line: *line, op: op.clone() }).collect();
        r.notes.extend(self.program.decision_notes(&r.blocks.decisions, &self.source));
        Ok(r)
    }

    /// The addresses of pass `pass` of warp `warp` at memory instruction `instr` (in program order), in the
    /// listed block; `None` when that warp never issues it that often.
    pub fn capture(
        &self,
        instr: usize,
        warp: u32,
        pass: u32,
        control: &mut dyn Control,
    ) -> Result<Option<Captured>, RunError> {
        if instr >= self.program.sites.len() || warp >= self.launch.warps() {
            return Ok(None);
        }
        let mut cap = Capture { site: instr as SiteId, pass, lane_mask: self.lane_mask.0, got: None };
        grid::run_warp(&self.program, &self.launch, warp, &mut cap, control)?;
        Ok(cap.got.filter(|c| c.addrs.0.iter().any(Option::is_some)))
    }

    /// The detailed report of one issue: what the figure draws.
    pub fn report(
        &self,
        instr: usize,
        warp: u32,
        pass: u32,
        control: &mut dyn Control,
    ) -> Result<Option<Report>, RunError> {
        let Some(c) = self.capture(instr, warp, pass, control)? else { return Ok(None) };
        let site = &self.program.sites[instr];
        Ok(Some(analyze_with(self.cc, &site.instr, &c.addrs, c.plg, c.src.as_ref(), &self.config)))
    }

    /// The first `max_issues` issues of every site in the listed block, with their addresses, warp by warp.
    pub fn trace(&self, max_issues: usize, control: &mut dyn Control) -> Result<Trace, RunError> {
        let sites = &self.program.sites;
        let mut rec =
            Recorder { max: max_issues, lane_mask: self.lane_mask.0, items: vec![(Vec::new(), 0); sites.len()] };
        for w in 0..self.launch.warps() {
            grid::run_warp(&self.program, &self.launch, w, &mut rec, control)?;
        }
        let items = sites
            .iter()
            .zip(rec.items)
            .filter(|(_, (_, total))| *total > 0)
            .map(|(site, (issues, issues_total))| TraceItem { site: site.clone(), issues, issues_total })
            .collect();
        Ok(Trace { launch: self.launch, items })
    }

    /// The instruction each site is.
    pub fn instr(&self, k: usize) -> Option<&Instr> {
        self.program.sites.get(k).map(|s| &s.instr)
    }
}

impl ProgramResult {
    /// The table `warpscope analyze --format text` prints for a program.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let facts = self.cc.facts();
        let grid = if self.blocks.total > 1 {
            format!(", grid {} ({} blocks, {} run)", self.launch.grid, self.blocks.total, self.blocks.executed)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "CC {} ({:?}, {}), block {} ({} warp{}){grid}, {} memory instruction{}",
            self.cc,
            facts.family,
            facts.example_gpu,
            self.launch.block,
            self.launch.warps(),
            crate::text::ending(self.launch.warps(), "s"),
            self.instructions.len(),
            crate::text::ending(self.instructions.len() as u64, "s")
        );
        if let Some(k) = &self.kernel {
            let _ = writeln!(out, "kernel {k}");
        }
        for n in &self.notes {
            let _ = writeln!(out, "note [{}]: {}", n.id, n.text);
        }
        for (i, r) in self.instructions.iter().enumerate() {
            let from = r.source_label().map_or(String::new(), |s| format!(" ({s})"));
            let _ = writeln!(out, "\n#{} line {}{from}: {}", i + 1, r.line, r.text);
            let _ = writeln!(
                out,
                "  {} ({}, {} B per lane), {} warp issue(s), {:?}",
                r.access, r.op, r.size, r.warps, r.space
            );
            if let Some(m) = &r.memory {
                let _ = writeln!(
                    out,
                    "  requests {}, lines {}, sectors {} ({:.2}/request), transactions {} x {} B, efficiency {:.1}%",
                    m.requests,
                    m.lines,
                    m.sectors,
                    m.sectors_per_request,
                    m.transactions,
                    m.transaction_bytes,
                    m.efficiency * 100.0
                );
            }
            if let Some(b) = &r.banks {
                let _ = writeln!(
                    out,
                    "  wavefronts {}, ideal {}, bank conflicts {}, worst {}-way",
                    b.wavefronts, b.ideal_wavefronts, b.bank_conflicts, b.conflict_degree
                );
            }
            if let Some(k) = &r.constant {
                let _ = writeln!(
                    out,
                    "  constant cache: {} pass{} (one per distinct address; {} with 64-byte lines)",
                    k.passes,
                    crate::text::ending(k.passes, "es"),
                    k.lines_64
                );
            }
            if let Some(a) = &r.atomic {
                let _ = writeln!(
                    out,
                    "  atomic: {} read-modify-writes, {} in series (most lanes on one address, summed over issues), at most {} in one issue",
                    a.ops, a.serial, a.max_serial
                );
            }
            #[cfg(feature = "data")]
            if let Some(c) = &r.contention {
                let chains: Vec<String> = c
                    .chains
                    .iter()
                    .map(|(n, k)| format!("{n} lane{} x{k}", crate::text::ending(u64::from(*n), "s")))
                    .collect();
                let _ = writeln!(out, "  chains (lanes on one address in an issue): {}", chains.join(", "));
                if !c.hot.is_empty() {
                    let hot: Vec<String> = c
                        .hot
                        .iter()
                        .map(|h| format!("{} x{}", h.at.clone().unwrap_or_else(|| format!("{:#x}", h.addr)), h.ops))
                        .collect();
                    let _ = writeln!(out, "  most hit: {}", hot.join(", "));
                }
                if let Some(why) = &c.hot_missing {
                    let _ = writeln!(out, "  most hit: not listed ({why})");
                }
            }
            for w in r.warnings.iter().take(4) {
                let _ = writeln!(out, "  warning: {w}");
            }
            if r.warnings_total > 4 {
                let _ = writeln!(out, "  ({} more warnings)", r.warnings_total - 4);
            }
            for n in &r.notes {
                let _ = writeln!(out, "  note [{}]: {}", n.id, n.text);
            }
        }
        if let Some(c) = &self.caches {
            out.push('\n');
            out.push_str(&c.to_text());
        }
        out
    }
}
