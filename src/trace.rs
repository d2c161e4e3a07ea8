//! From per-thread accesses to per-warp instructions, and from those to block-level results.
//!
//! Every input language ends here: it records, for each thread, each memory access at a *site* (one static
//! memory instruction: a source access or a SASS line). [`TraceBuilder::finish`] groups the accesses of a site
//! into warp-level issues (lanes of the same warp that reached the site for the same time issue together;
//! the others are inactive), and [`analyze_trace`] runs the engine on each issue and sums over the block
//! under Nsight Compute's metric names.

use crate::access::{Instr, LaneSet, Space, WarpAddrs, WARP_LANES};
use crate::arch::Cc;
use crate::engine::{analyze_lanes, Config};
use crate::launch::Launch;
use crate::report::{Cost, Note, Report, SpaceTag};
use serde::Serialize;
use std::collections::BTreeMap;

/// The most accesses one trace may record (all threads, all sites, all loop iterations).
pub const MAX_EVENTS: usize = 4_000_000;

/// One static memory instruction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Site {
    /// 1-based source line.
    pub line: usize,
    /// The source line, trimmed.
    pub text: String,
    /// What is accessed, e.g. `in[i]` or `aos[i].y`.
    pub access: String,
    /// The instruction.
    pub instr: Instr,
    /// Notes from the input language (for example where a local array was placed).
    pub notes: Vec<Note>,
}

/// One warp's issue of a site.
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
}

/// A site and its issues.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceItem {
    /// The site.
    pub site: Site,
    /// Its warp-level issues, by warp then iteration.
    pub issues: Vec<Issue>,
}

/// What a program did: its sites in program order, each with its warp-level issues.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The launch it ran under.
    pub launch: Launch,
    /// The sites.
    pub items: Vec<TraceItem>,
}

/// An ordering key for sites: languages choose it so that sorting gives program order.
pub type SiteKey = (usize, usize, usize, usize);

struct SiteData {
    site: Site,
    per_thread: Vec<Vec<(u64, Option<bool>)>>,
}

/// Collects per-thread accesses.
pub struct TraceBuilder {
    launch: Launch,
    sites: Vec<(SiteKey, SiteData)>,
    index: BTreeMap<SiteKey, usize>,
    events: usize,
}

impl TraceBuilder {
    /// A builder for one block of `launch`.
    pub fn new(launch: Launch) -> TraceBuilder {
        TraceBuilder { launch, sites: Vec::new(), index: BTreeMap::new(), events: 0 }
    }

    /// Records that thread `thread` (linear index) accessed `addr` at site `key`. `make_site` describes the
    /// site the first time it is seen. Fails when the trace grows past [`MAX_EVENTS`].
    pub fn record(
        &mut self,
        key: SiteKey,
        thread: u32,
        addr: u64,
        plg: Option<bool>,
        make_site: impl FnOnce() -> Site,
    ) -> Result<(), String> {
        self.events += 1;
        if self.events > MAX_EVENTS {
            return Err(format!(
                "the program makes more than {MAX_EVENTS} memory accesses in one block; shorten loops or the block"
            ));
        }
        let threads = self.launch.threads() as usize;
        let i = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                self.sites.push((key, SiteData { site: make_site(), per_thread: vec![Vec::new(); threads] }));
                self.index.insert(key, self.sites.len() - 1);
                self.sites.len() - 1
            }
        };
        if let Some(v) = self.sites[i].1.per_thread.get_mut(thread as usize) {
            v.push((addr, plg));
        }
        Ok(())
    }

    /// Groups the accesses into warp-level issues, sites in key order.
    pub fn finish(mut self) -> Trace {
        self.sites.sort_by_key(|(k, _)| *k);
        let warps = self.launch.warps();
        let items = self
            .sites
            .into_iter()
            .map(|(_, data)| {
                let mut issues = Vec::new();
                for w in 0..warps {
                    let lanes: Vec<&Vec<(u64, Option<bool>)>> = (0..WARP_LANES as u32)
                        .filter_map(|l| data.per_thread.get((w * WARP_LANES as u32 + l) as usize))
                        .collect();
                    let times = lanes.iter().map(|v| v.len()).max().unwrap_or(0);
                    for k in 0..times {
                        let mut a = [None; WARP_LANES];
                        let mut plg = LaneSet::default();
                        let mut has_plg = false;
                        for (l, v) in lanes.iter().enumerate() {
                            if let Some(&(addr, p)) = v.get(k) {
                                a[l] = Some(addr);
                                if let Some(p) = p {
                                    has_plg = true;
                                    if p {
                                        plg.insert(l);
                                    }
                                }
                            }
                        }
                        issues.push(Issue {
                            warp: w,
                            iteration: k as u32,
                            addrs: WarpAddrs(a),
                            plg: has_plg.then_some(plg),
                        });
                    }
                }
                TraceItem { site: data.site, issues }
            })
            .collect();
        Trace { launch: self.launch, items }
    }
}

/// Sums over a block for global and local parts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
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

/// Sums over a block for shared parts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BankTotals {
    /// Wavefronts.
    pub wavefronts: u64,
    /// Ideal wavefronts.
    pub ideal_wavefronts: u64,
    /// Bank conflicts.
    pub bank_conflicts: u64,
    /// The largest conflict degree of any issue.
    pub conflict_degree: u32,
}

/// One issue, in brief.
#[derive(Clone, Debug, PartialEq, Serialize)]
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

/// One memory instruction of a program, analysed for every warp that issued it and summed over the block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstrResult {
    /// 1-based source line.
    pub line: usize,
    /// The source line.
    pub text: String,
    /// What is accessed.
    pub access: String,
    /// The instruction.
    pub op: String,
    /// The space, or `generic` when lanes went to more than one.
    pub space: SpaceTag,
    /// Bytes per lane.
    pub size: u32,
    /// Warp-level issues (warps x iterations) with at least one active lane.
    pub warps: u32,
    /// Global and local sums.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryTotals>,
    /// Shared sums.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub banks: Option<BankTotals>,
    /// The same sums under Nsight Compute's metric names.
    pub ncu: BTreeMap<String, u64>,
    /// Model and language notes, once each.
    pub notes: Vec<Note>,
    /// Warnings, prefixed with the warp.
    pub warnings: Vec<String>,
    /// Each issue in brief.
    pub issues: Vec<IssueSummary>,
    /// Each issue's full report (for the figure); not in the JSON.
    #[serde(skip)]
    pub reports: Vec<Report>,
}

/// The whole program's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProgramResult {
    /// The compute capability.
    pub cc: Cc,
    /// The launch.
    pub launch: Launch,
    /// One entry per memory instruction, in program order.
    pub instructions: Vec<InstrResult>,
}

fn ncu_space(space: SpaceTag) -> &'static str {
    match space {
        SpaceTag::Global => "global",
        SpaceTag::Shared => "shared",
        SpaceTag::Local => "local",
        SpaceTag::Generic => "generic",
    }
}

/// Analyses every issue of every site.
pub fn analyze_trace(cc: Cc, trace: &Trace, cfg: &Config) -> ProgramResult {
    let instructions = trace
        .items
        .iter()
        .map(|item| {
            let instr = &item.site.instr;
            let op = if instr.is_store() { "st" } else { "ld" };
            let mut mem: Option<MemoryTotals> = None;
            let mut banks: Option<BankTotals> = None;
            let mut ncu: BTreeMap<String, u64> = BTreeMap::new();
            let mut notes: Vec<Note> = item.site.notes.clone();
            let mut warnings = Vec::new();
            let mut spaces: Vec<SpaceTag> = Vec::new();
            let mut reports = Vec::new();
            let mut issues = Vec::new();
            for issue in &item.issues {
                let r = analyze_lanes(cc, instr, &issue.addrs, issue.plg, cfg);
                for n in &r.notes {
                    if !notes.iter().any(|m| m.id == n.id) {
                        notes.push(n.clone());
                    }
                }
                for w in &r.warnings {
                    warnings.push(format!("warp {}: {}", issue.warp, w.text));
                }
                for p in r.parts() {
                    if !spaces.contains(&p.space) {
                        spaces.push(p.space);
                    }
                    let sp = ncu_space(p.space);
                    match &p.cost {
                        Cost::Memory(m) => {
                            let t = mem.get_or_insert_with(|| MemoryTotals {
                                transaction_bytes: m.transaction_bytes,
                                ..MemoryTotals::default()
                            });
                            t.requests += u64::from(m.requests);
                            t.lines += u64::from(m.lines);
                            t.sectors += u64::from(m.sectors);
                            t.transactions += u64::from(m.transactions);
                            t.bytes_requested += m.bytes_requested;
                            t.bytes_unique += m.bytes_unique;
                            t.bytes_moved += m.bytes_moved;
                            *ncu.entry(format!("l1tex__t_requests_pipe_lsu_mem_{sp}_op_{op}.sum")).or_default() +=
                                u64::from(m.requests);
                            *ncu.entry(format!("l1tex__t_sectors_pipe_lsu_mem_{sp}_op_{op}.sum")).or_default() +=
                                u64::from(m.sectors);
                        }
                        Cost::Banks(b) => {
                            let t = banks.get_or_insert_with(BankTotals::default);
                            t.wavefronts += u64::from(b.wavefronts);
                            t.ideal_wavefronts += u64::from(b.ideal_wavefronts);
                            t.bank_conflicts += u64::from(b.bank_conflicts);
                            t.conflict_degree = t.conflict_degree.max(b.conflict_degree);
                            *ncu.entry(format!("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"))
                                .or_default() += u64::from(b.wavefronts);
                            *ncu.entry(format!("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"))
                                .or_default() += u64::from(b.bank_conflicts);
                        }
                        Cost::Split { .. } => {}
                    }
                }
                let space_name = match instr.base.fixed_space() {
                    Some(Space::Global) => "global",
                    Some(Space::Shared) => "shared",
                    Some(Space::Local) => "local",
                    None => "generic",
                };
                *ncu.entry(format!("smsp__inst_executed_op_{space_name}_{op}.sum")).or_default() += 1;
                issues.push(IssueSummary {
                    warp: issue.warp,
                    iteration: issue.iteration,
                    active_lanes: r.active_lanes,
                    summary: r.summary(),
                });
                reports.push(r);
            }
            if let Some(t) = mem.as_mut() {
                t.efficiency = if t.bytes_moved == 0 { 0.0 } else { t.bytes_unique as f64 / t.bytes_moved as f64 };
                t.sectors_per_request = if t.requests == 0 { 0.0 } else { t.sectors as f64 / t.requests as f64 };
            }
            let space = match spaces.as_slice() {
                [one] => *one,
                [] => instr.base.fixed_space().map_or(SpaceTag::Global, SpaceTag::from),
                _ => SpaceTag::Generic,
            };
            InstrResult {
                line: item.site.line,
                text: item.site.text.clone(),
                access: item.site.access.clone(),
                op: instr.text.clone(),
                space,
                size: instr.size_bytes,
                warps: item.issues.len() as u32,
                memory: mem,
                banks,
                ncu,
                notes,
                warnings,
                issues,
                reports,
            }
        })
        .collect();
    ProgramResult { cc, launch: trace.launch, instructions }
}

impl ProgramResult {
    /// The table `warpscope analyze --format text` prints for a program.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let facts = self.cc.facts();
        let _ = writeln!(
            out,
            "CC {} ({:?}, {}), block {} ({} warp{}), {} memory instruction{}",
            self.cc,
            facts.family,
            facts.example_gpu,
            self.launch.block,
            self.launch.warps(),
            if self.launch.warps() == 1 { "" } else { "s" },
            self.instructions.len(),
            if self.instructions.len() == 1 { "" } else { "s" }
        );
        for (i, r) in self.instructions.iter().enumerate() {
            let _ = writeln!(out, "\n#{} line {}: {}", i + 1, r.line, r.text);
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
            for w in r.warnings.iter().take(4) {
                let _ = writeln!(out, "  warning: {w}");
            }
            if r.warnings.len() > 4 {
                let _ = writeln!(out, "  ({} more warnings)", r.warnings.len() - 4);
            }
            for n in &r.notes {
                let _ = writeln!(out, "  note [{}]: {}", n.id, n.text);
            }
        }
        out
    }
}
