//! Blocks and whole launches: the warps of a block run in barrier-separated rounds, and a grid's blocks run
//! only as far as needed to know every block's counts exactly.
//!
//! For a whole grid, a block runs with [`Affine`] tracking; the conditions it returns describe the other
//! blocks that are provably equivalent (see the proof obligation in [`super::affine`]). Blocks are visited in
//! order; a block that meets a known class's conditions is counted with it without running, and a block that
//! meets none runs and starts a class of its own. Each class's sums are added once per member.

use super::affine::{Affine, Constraint, SiteRule};
use super::exec::{Env, ExecError, Sink, Status, Warp};
use super::Program;
use crate::program::launch::{Dim3, Launch};
use crate::text::Span;
use std::rc::Rc;

/// Instructions a warp runs between two looks at the [`Control`].
pub const SLICE: u64 = 1 << 16;

/// What a run is doing: counting the launch's blocks, playing them through the modelled memory system, or
/// playing them again with another number of resident blocks per SM (the schedule check).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stage {
    /// Running blocks and counting every issue.
    #[default]
    Counting,
    /// Playing every block's issues through L1, L2 and DRAM.
    Memory,
    /// The same with another number of resident blocks per SM.
    ScheduleCheck,
}

impl Stage {
    /// What a run in this stage is doing, in words: "counting the launch's blocks".
    pub fn doing(self) -> &'static str {
        match self {
            Stage::Counting => "counting the launch's blocks",
            Stage::Memory => "playing the blocks through L1, L2 and DRAM (the memory system)",
            Stage::ScheduleCheck => {
                "playing the blocks through the memory system again with another number of blocks per SM (its \
                 schedule check)"
            }
        }
    }
}

/// How far a run has come.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// What the run is doing.
    pub stage: Stage,
    /// Blocks whose counts are known (run, or shown equivalent to one that ran).
    pub blocks_done: u64,
    /// Blocks in the launch (or 1 for a single block).
    pub blocks_total: u64,
    /// Blocks that ran.
    pub blocks_run: u64,
    /// Warp instructions executed.
    pub instructions: u64,
}

/// Decides whether a long run goes on; asked between slices of work. Time limits and cancellation live here,
/// outside the deterministic core.
pub trait Control {
    /// False stops the run.
    fn keep_going(&mut self, progress: &Progress) -> bool;
}

/// A control that never stops.
pub struct Unlimited;

impl Control for Unlimited {
    fn keep_going(&mut self, _: &Progress) -> bool {
        true
    }
}

/// Why a run did not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The program stopped with an error.
    Exec(ExecError),
    /// The [`Control`] stopped it while warp `warp` of block `block` was at `at`.
    Stopped {
        /// Where that warp was.
        at: Option<Span>,
        /// The block.
        block: Dim3,
        /// The warp.
        warp: u32,
        /// How far it had come.
        progress: Progress,
    },
    /// What a whole-grid run keeps (the memory system's record of the memory it touched, the blocks it traced)
    /// reached the memory limit.
    Held {
        /// Bytes held.
        bytes: u64,
        /// The limit.
        limit: u64,
        /// How far it had come.
        progress: Progress,
    },
    /// A memory-system setting is out of the range its device allows (the message names it and the range).
    Settings(String),
    /// A block's register state would need more memory than allowed.
    Memory {
        /// Bytes needed.
        needed: u64,
        /// The limit.
        limit: u64,
    },
}

impl From<ExecError> for RunError {
    fn from(e: ExecError) -> RunError {
        RunError::Exec(e)
    }
}

/// Receives the issues of every block that runs and adds block sums up.
pub trait Costing: Sink {
    /// What one block's issues add up to.
    type Partial;
    /// Block `b` starts running.
    fn begin_block(&mut self, b: Dim3);
    /// The sums of the issues since the last `begin_block`.
    fn take_block(&mut self) -> Self::Partial;
    /// Adds a block's sums `times` times.
    fn add(&mut self, p: &Self::Partial, times: u64);
}

/// Which blocks a run covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocks {
    /// One block, `blockIdx` as given.
    One(Dim3),
    /// Every block of the grid.
    All,
    /// Every block of the grid, each one run (no equivalence shortcut): the brute force the shortcut is
    /// checked against.
    Each,
}

/// What a run covered.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BlockStats {
    /// Blocks counted.
    pub total: u64,
    /// Blocks that ran.
    pub executed: u64,
    /// Classes of equivalent blocks (each represented by one block that ran).
    pub classes: u64,
    /// Why some blocks had to run on their own, when they did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub why_executed: Option<String>,
    /// The data-dependent decisions the blocks that ran met (stated in the result's notes).
    #[serde(skip)]
    pub decisions: Vec<super::DataDecision>,
}

/// Bytes of register state one warp needs.
pub fn warp_bytes(prog: &Program, tracking: bool) -> u64 {
    let regs = u64::from(prog.n_regs) * (32 * 8 + 8) + u64::from(prog.n_preds) * 12;
    if tracking {
        regs + u64::from(prog.n_regs) * (32 * 24 + 8)
    } else {
        regs
    }
}

struct Class<P> {
    b0: Dim3,
    constraints: Vec<Constraint>,
    partial: P,
    count: u64,
}

fn site_rules(prog: &Program, windows: &crate::model::access::Windows) -> Rc<[SiteRule]> {
    prog.sites
        .iter()
        .map(|s| {
            let space = s.instr.base.fixed_space();
            SiteRule {
                global: space == Some(crate::model::access::Space::Global),
                addr_bits: s.instr.address_bits(),
                windows: (space.is_none() && s.instr.extended).then_some([windows.shared_base, windows.local_base]),
            }
        })
        .collect()
}

/// Runs the blocks of `launch` that `blocks` names and adds every block's issues into `costing`.
pub fn run<C: Costing>(
    prog: &Program,
    launch: &Launch,
    blocks: Blocks,
    costing: &mut C,
    control: &mut dyn Control,
    max_memory_bytes: u64,
    windows: &crate::model::access::Windows,
) -> Result<BlockStats, RunError> {
    let total = launch.grid.volume();
    let mut decisions = Vec::new();
    let mut progress =
        Progress { blocks_total: if matches!(blocks, Blocks::One(_)) { 1 } else { total }, ..Progress::default() };
    let warps = u64::from(launch.warps());
    let single = match blocks {
        Blocks::One(b) => Some(b),
        _ if total == 1 => Some(Dim3 { x: 0, y: 0, z: 0 }),
        _ => None,
    };
    if let Some(b) = single {
        check_memory(warps * warp_bytes(prog, false), max_memory_bytes)?;
        costing.begin_block(b);
        run_block(prog, launch, b, costing, None, control, &mut progress, &mut decisions)?;
        let p = costing.take_block();
        costing.add(&p, 1);
        return Ok(BlockStats { total: 1, executed: 1, classes: 1, why_executed: None, decisions });
    }
    if blocks == Blocks::Each {
        check_memory(warps * warp_bytes(prog, false), max_memory_bytes)?;
        let g = launch.grid;
        for z in 0..g.z {
            for y in 0..g.y {
                for x in 0..g.x {
                    let b = Dim3 { x, y, z };
                    if progress.blocks_done % 4096 == 4095 && !control.keep_going(&progress) {
                        return Err(RunError::Stopped { at: None, block: b, warp: 0, progress });
                    }
                    costing.begin_block(b);
                    run_block(prog, launch, b, costing, None, control, &mut progress, &mut decisions)?;
                    let p = costing.take_block();
                    costing.add(&p, 1);
                    progress.blocks_done += 1;
                }
            }
        }
        return Ok(BlockStats { total, executed: total, classes: total, why_executed: None, decisions });
    }
    check_memory(warps * warp_bytes(prog, true), max_memory_bytes)?;
    let rules = site_rules(prog, windows);
    let g = launch.grid;
    let mut classes: Vec<Class<C::Partial>> = Vec::new();
    let mut stats = BlockStats { total, ..BlockStats::default() };
    // Tracking costs time; once blocks keep proving nothing, the rest run plainly.
    let mut singletons_in_a_row = 0u32;
    let mut polls = 0u32;
    for z in 0..g.z {
        for y in 0..g.y {
            let mut x = 0u32;
            while x < g.x {
                polls += 1;
                if polls % 4096 == 0 && !control.keep_going(&progress) {
                    return Err(RunError::Stopped { at: None, block: Dim3 { x, y, z }, warp: 0, progress });
                }
                let left = u64::from(g.x - x);
                let mut matched = false;
                for c in classes.iter_mut().rev() {
                    let delta = [
                        i128::from(x) - i128::from(c.b0.x),
                        i128::from(y) - i128::from(c.b0.y),
                        i128::from(z) - i128::from(c.b0.z),
                    ];
                    let run = c.constraints.iter().map(|k| k.run_length(delta, left)).min().unwrap_or(left);
                    if run > 0 {
                        c.count += run;
                        progress.blocks_done += run;
                        x += run as u32;
                        matched = true;
                        break;
                    }
                }
                if matched {
                    continue;
                }
                let b = Dim3 { x, y, z };
                let track = singletons_in_a_row < 8;
                costing.begin_block(b);
                let proof = run_block(
                    prog,
                    launch,
                    b,
                    costing,
                    track.then(|| rules.clone()),
                    control,
                    &mut progress,
                    &mut decisions,
                )?;
                let partial = costing.take_block();
                stats.executed += 1;
                match proof {
                    Some(Ok(constraints)) => {
                        singletons_in_a_row = 0;
                        classes.push(Class { b0: b, constraints, partial, count: 1 });
                    }
                    other => {
                        singletons_in_a_row += 1;
                        if stats.why_executed.is_none() {
                            stats.why_executed = Some(match other {
                                Some(Err(why)) => why,
                                _ => "blocks kept proving nothing about others, so each ran".into(),
                            });
                        }
                        stats.classes += 1;
                        costing.add(&partial, 1);
                    }
                }
                progress.blocks_done += 1;
                x += 1;
            }
        }
    }
    for c in &classes {
        costing.add(&c.partial, c.count);
    }
    stats.classes += classes.len() as u64;
    stats.decisions = decisions;
    Ok(stats)
}

/// What running one block proved about the others: `Some(Ok(conditions))` when tracked and the proof holds,
/// `Some(Err(why))` when it proves nothing, `None` when not tracked.
pub type Proof = Option<Result<Vec<Constraint>, String>>;

/// Runs block `b` of `launch` on its own into `sink` (with `track`, following `blockIdx` to prove which other
/// blocks are translations of it): the cache model's way through a grid, which needs every block's addresses.
#[allow(clippy::too_many_arguments)]
pub fn run_one(
    prog: &Program,
    launch: &Launch,
    b: Dim3,
    sink: &mut dyn Sink,
    track: bool,
    control: &mut dyn Control,
    progress: &mut Progress,
    decisions: &mut Vec<super::DataDecision>,
    windows: &crate::model::access::Windows,
) -> Result<Proof, RunError> {
    let rules = track.then(|| site_rules(prog, windows));
    run_block(prog, launch, b, sink, rules, control, progress, decisions)
}

/// Where a warp stopped at `pc` was, for a message: the innermost loop around `pc` (a backward branch over it),
/// which is where a long run spends its time, else the instruction itself.
fn where_stopped(prog: &Program, pc: u32) -> Span {
    let mut best: Option<(u32, Span)> = None;
    for (j, inst) in prog.insts.iter().enumerate().skip(pc as usize) {
        if let super::Op::Bra { target } = inst.op {
            if target <= pc {
                let size = j as u32 - target;
                if best.is_none_or(|(s, _)| size < s) {
                    best = Some((size, inst.span));
                }
            }
        }
    }
    best.map(|(_, s)| s).or_else(|| prog.insts.get(pc as usize).map(|i| i.span)).unwrap_or(Span { start: 0, end: 1 })
}

pub fn check_memory(needed: u64, limit: u64) -> Result<(), RunError> {
    if needed > limit {
        return Err(RunError::Memory { needed, limit });
    }
    Ok(())
}

/// Runs one block: every warp up to the next barrier, round after round. With `track`, returns what the run
/// proves about other blocks: `Ok(conditions)`, or `Err(why)` when it proves nothing.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn run_block(
    prog: &Program,
    launch: &Launch,
    b: Dim3,
    sink: &mut dyn Sink,
    track: Option<Rc<[SiteRule]>>,
    control: &mut dyn Control,
    progress: &mut Progress,
    decisions: &mut Vec<super::DataDecision>,
) -> Result<Option<Result<Vec<Constraint>, String>>, RunError> {
    let env = Env { launch: *launch, block_idx: b };
    let n = launch.warps();
    let mut warps: Vec<Warp> = (0..n)
        .map(|w| {
            let mut warp = Warp::new(prog, launch, w);
            if let Some(rules) = &track {
                warp.affine = Some(Box::new(Affine::new(prog, rules.clone(), b, launch.grid)));
            }
            warp
        })
        .collect();
    let mut waiting = vec![false; n as usize];
    let mut checks = Checks::default();
    loop {
        for (w, warp) in warps.iter_mut().enumerate() {
            if waiting[w] || warp.done() {
                continue;
            }
            loop {
                let mut fuel = SLICE;
                let status = warp.run(prog, &env, sink, &mut fuel)?;
                if !checks.spend(SLICE - fuel, control, progress) {
                    let at = warp.pc().map(|pc| where_stopped(prog, pc));
                    return Err(RunError::Stopped { at, block: b, warp: warp.warp, progress: *progress });
                }
                match status {
                    Status::Paused => {}
                    Status::Barrier => {
                        waiting[w] = true;
                        break;
                    }
                    Status::Done | Status::Stopped => break,
                }
            }
        }
        if warps.iter().all(Warp::done) {
            break;
        }
        // Every warp that has not exited waits at the barrier: release them together.
        waiting.iter_mut().for_each(|x| *x = false);
    }
    progress.blocks_run += 1;
    for w in &warps {
        for d in &w.decisions {
            if !decisions.iter().any(|x| x.at == d.at) {
                decisions.push(*d);
            }
        }
    }
    if track.is_none() {
        return Ok(None);
    }
    let mut all: Vec<Constraint> = Vec::new();
    for w in &mut warps {
        let Some(a) = w.affine.take() else { continue };
        if let Some(why) = a.singleton {
            return Ok(Some(Err(why)));
        }
        for c in a.constraints {
            merge(&mut all, c);
        }
    }
    Ok(Some(Ok(all)))
}

fn merge(all: &mut Vec<Constraint>, c: Constraint) {
    if let Constraint::Range { e, lo, hi } = &c {
        for old in all.iter_mut() {
            if let Constraint::Range { e: e2, lo: lo2, hi: hi2 } = old {
                if e2 == e {
                    *lo2 = (*lo2).max(*lo);
                    *hi2 = (*hi2).min(*hi);
                    return;
                }
            }
        }
    }
    if !all.contains(&c) {
        all.push(c);
    }
}

/// Runs warp `warp` of block `launch.block_idx` alone (barriers do not hold it: addresses never depend on
/// another warp) until `sink` stops it or it exits.
pub fn run_warp(
    prog: &Program,
    launch: &Launch,
    warp: u32,
    sink: &mut dyn Sink,
    control: &mut dyn Control,
) -> Result<(), RunError> {
    let env = Env { launch: *launch, block_idx: launch.block_idx };
    let mut w = Warp::new(prog, launch, warp);
    let mut progress = Progress { blocks_total: 1, ..Progress::default() };
    let mut checks = Checks::default();
    loop {
        let mut fuel = SLICE;
        let status = w.run(prog, &env, sink, &mut fuel)?;
        if !checks.spend(SLICE - fuel, control, &mut progress) {
            let at = w.pc().map(|pc| where_stopped(prog, pc));
            return Err(RunError::Stopped { at, block: launch.block_idx, warp, progress });
        }
        if matches!(status, Status::Done | Status::Stopped) {
            return Ok(());
        }
    }
}

/// Asks the [`Control`] once per [`SLICE`] instructions, however the work was cut: a warp's slice ends
/// early at every barrier, and a loop around a barrier must still be stoppable.
#[derive(Default)]
struct Checks {
    since: u64,
}

impl Checks {
    /// Counts `used` instructions; false when the control stops the run.
    fn spend(&mut self, used: u64, control: &mut dyn Control, progress: &mut Progress) -> bool {
        progress.instructions += used;
        self.since += used;
        if self.since < SLICE {
            return true;
        }
        self.since = 0;
        control.keep_going(progress)
    }
}
