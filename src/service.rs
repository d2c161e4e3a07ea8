//! The page's analysis service: a request (a scenario and the issue the figure shows) in, replies out. The
//! page runs it in a web worker, so no analysis ever runs on the page's main thread; natively the same code
//! is tested directly.
//!
//! For each request it replies, in order: progress while a long run goes on, the result (the totals), the
//! issue the figure shows with its explanation, the explanation's checked fixes, and `Done`. When the
//! program has the same memory instructions as the previous request's (the user is typing), the figure is
//! sent first, computed from the shown warp alone, before the whole block or grid has run. A request for the
//! same scenario (a new selection) answers from the kept result without running again.
//!
//! May import: `text`, `model`, `program`, `lang`, `analysis`, `scenario`, `figure`, `teach`.

use crate::analysis::{Analysis, ProgramResult};
use crate::model::report::Report;
use crate::program::grid::{Control, Progress};
use crate::scenario::{now_seconds, Field, Scenario};
use crate::teach::explain::{fixes, why, Suggestion};
use serde::{Deserialize, Serialize};

/// What the page asks for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Identifies the request; every reply carries it.
    pub id: u64,
    /// The scenario.
    pub scenario: Scenario,
    /// The instruction the figure shows (an index into the result's instructions).
    pub instr: usize,
    /// The issue it shows, numbered warp by warp in the listed block.
    pub issue: usize,
    /// Also every warp's issue at the same pass (the stacked view).
    pub all_warps: bool,
    /// Kernel names the page had demangled: (mangled, demangled), an empty one when it could not be read.
    #[serde(default)]
    pub names: Vec<(String, String)>,
    /// A lab exercise's goals (pane 0 in a lab, `Some` even when the exercise has none), checked against the
    /// result and answered with it in [`Reply::Result`]: the page's main thread does not evaluate conditions.
    #[serde(default)]
    pub goals: Option<Vec<crate::teach::lab::Goal>>,
    /// Show the first instruction whose mnemonic contains this instead of `instr` (a lab exercise opens on
    /// the instruction its goals are about).
    #[serde(default)]
    pub focus: Option<String>,
    /// Where a grid's schedule check runs (the memory system's other number of blocks per SM): here after the
    /// main run, or in a second worker beside it.
    #[serde(default)]
    #[cfg_attr(not(feature = "caches"), serde(skip))]
    pub schedule: Schedule,
    /// With [`Schedule::Apart`]: the check's figures, computed by the second worker, to add to the result. The page
    /// passes on what that worker wrote without reading it, so its module carries no code for it.
    #[serde(default)]
    #[cfg_attr(all(target_arch = "wasm32", feature = "caches"), serde(skip_serializing))]
    #[cfg_attr(not(feature = "caches"), serde(skip))]
    pub check: Option<crate::analysis::caches::Sensitivity>,
}

impl Request {
    /// A request for `scenario`'s first instruction and issue, with nothing else asked.
    pub fn new(id: u64, scenario: Scenario) -> Request {
        Request {
            id,
            scenario,
            instr: 0,
            issue: 0,
            all_warps: false,
            names: Vec::new(),
            goals: None,
            focus: None,
            schedule: Schedule::Here,
            check: None,
        }
    }
}

/// Where a memory-system run's schedule check ([`Analysis::cache_schedule_check`]) runs. The page runs it in a
/// second worker where the machine has a core for it, so the two runs take about one run's time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Schedule {
    /// After the main run, in the same worker.
    #[default]
    Here,
    /// Elsewhere: the result comes without it, or with [`Request::check`] added to it.
    Apart,
    /// The check alone, answered as [`Reply::Schedule`].
    Only,
}

/// The issue the figure shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shown {
    /// The instruction (index into the result).
    pub instr: usize,
    /// The issue, numbered warp by warp.
    pub issue: usize,
    /// Its warp.
    pub warp: u32,
    /// Its pass (loop iteration), from 0.
    pub pass: u32,
    /// The figure's title: the instruction, the CC and what is accessed.
    pub title: String,
    /// The detailed report.
    pub report: Report,
    /// Why it costs what it costs, most important first.
    pub why: Vec<String>,
    /// For the stacked view: every warp's issue at the same pass, labelled.
    pub others: Vec<(String, Report)>,
}

/// What the service answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    /// A long run is under way.
    Progress {
        /// The request.
        id: u64,
        /// Blocks whose counts are known.
        done: u64,
        /// Blocks to count.
        total: u64,
        /// Seconds since the run started.
        seconds: f64,
        /// What the run is doing, in words ("Memory system: block 412 of 1,024 through L1, L2 and DRAM"):
        /// written here, so that the page's main module carries no formatting of its own for it.
        #[serde(default)]
        text: String,
    },
    /// The run stopped at a limit before it finished, with nothing wrong in the input: what it met, how far it
    /// came and what to do, in the page's words. (An endless loop is an [`Reply::Error`] at the loop instead.)
    Stopped {
        /// The request.
        id: u64,
        /// What happened and what to do.
        message: String,
    },
    /// The totals.
    Result {
        /// The request.
        id: u64,
        /// The result (boxed: the other replies are small).
        result: Box<ProgramResult>,
        /// The request's lab goals checked against the result, each goal's outcome in the request's order
        /// (`None` when the request has no goals to check). In the same message as the result, so the page
        /// never shows a result with the grade of another.
        #[serde(default)]
        goals: Option<Vec<crate::teach::lab::GoalResult>>,
    },
    /// The issue the figure shows.
    Shown {
        /// The request.
        id: u64,
        /// The issue.
        shown: Box<Shown>,
    },
    /// The suggested fixes for the shown issue, each checked by running it.
    Fixes {
        /// The request.
        id: u64,
        /// The instruction.
        instr: usize,
        /// The issue.
        issue: usize,
        /// The fixes, best first.
        suggestions: Vec<Suggestion>,
    },
    /// The kernels a CUDA file offers, read before its kernel runs (so that a failing kernel leaves the
    /// others choosable).
    Kernels {
        /// The request.
        id: u64,
        /// Every kernel of the text, template kernels nothing instantiates included.
        kernels: Vec<crate::lang::KernelChoice>,
    },
    /// The scenario cannot run: which input, and the message with its line:column.
    Error {
        /// The request.
        id: u64,
        /// Which input.
        field: Field,
        /// The error as `line:column: message` with its excerpt.
        message: String,
    },
    /// The analysis needs these mangled kernel names demangled (the page's workers have no demangler): the
    /// page sends the request again with them in `names`. Nothing else comes for this request but `Done`.
    Names {
        /// The request.
        id: u64,
        /// The mangled symbols.
        symbols: Vec<String>,
    },
    /// A schedule check asked for alone ([`Schedule::Only`]): `None` for a launch of one block.
    /// The page reads only that it came and passes `run` on to the main worker ([`Request::check`]).
    /// A build without the cache model (the page's language workers) never sends one.
    #[cfg_attr(all(target_arch = "wasm32", feature = "caches"), serde(skip_deserializing))]
    #[cfg_attr(not(feature = "caches"), serde(skip))]
    Schedule {
        /// The request.
        id: u64,
        /// The other run's figures.
        run: Option<crate::analysis::caches::Sensitivity>,
    },
    /// Nothing more comes for this request.
    Done {
        /// The request.
        id: u64,
    },
}

impl Reply {
    /// The request a reply answers.
    pub fn id(&self) -> u64 {
        match self {
            Reply::Progress { id, .. }
            | Reply::Result { id, .. }
            | Reply::Shown { id, .. }
            | Reply::Fixes { id, .. }
            | Reply::Error { id, .. }
            | Reply::Stopped { id, .. }
            | Reply::Kernels { id, .. }
            | Reply::Names { id, .. }
            | Reply::Schedule { id, .. }
            | Reply::Done { id } => *id,
        }
    }
}

/// At most this many instructions travel in one message from the worker to the page. The page reads each
/// message on its main thread, and a result of 20,000 instructions (a long SASS listing) took it a second in
/// one piece. Parts of 250 took 10 ms each, but the first of them 49-62 ms (the reading code runs cold: the
/// browser's baseline wasm code and its generic calls into JS, until they are optimised); parts of 100 still
/// 25-66 ms. Parts of 25 take at most 17 ms, the first included, and the page stays responsive in between
/// (measured on the 2-core development machine with a Chromium trace of the SASS case in
/// `tests/e2e/robust.test.mjs`).
pub const PART_INSTRUCTIONS: usize = 25;

/// A part of a result's instructions, sent ahead of the [`Reply::Result`] that carries the rest (see
/// [`split_result`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultPart {
    /// The request.
    pub part: u64,
    /// Instructions, in order, that come before the result's own.
    pub instructions: Vec<crate::analysis::InstrResult>,
}

/// Splits a reply for sending: a [`Reply::Result`] of more than [`PART_INSTRUCTIONS`] instructions becomes
/// parts, in order, followed by the result with its last instructions. Any other reply is sent whole.
/// [`Parts::join`] puts them together again.
pub fn split_result(reply: Reply) -> (Vec<ResultPart>, Reply) {
    let Reply::Result { id, mut result, goals } = reply else { return (Vec::new(), reply) };
    let n = result.instructions.len();
    if n <= PART_INSTRUCTIONS {
        return (Vec::new(), Reply::Result { id, result, goals });
    }
    // The result keeps the last part (1 to PART_INSTRUCTIONS instructions); the others go ahead of it.
    let ahead = (n - 1) / PART_INSTRUCTIONS * PART_INSTRUCTIONS;
    let rest = result.instructions.split_off(ahead);
    let mut parts = Vec::with_capacity(ahead / PART_INSTRUCTIONS);
    let mut all = std::mem::replace(&mut result.instructions, rest).into_iter();
    for _ in 0..ahead / PART_INSTRUCTIONS {
        parts.push(ResultPart { part: id, instructions: all.by_ref().take(PART_INSTRUCTIONS).collect() });
    }
    (parts, Reply::Result { id, result, goals })
}

/// The parts received for a request, until its result arrives.
#[derive(Default)]
pub struct Parts {
    id: u64,
    instructions: Vec<crate::analysis::InstrResult>,
}

impl Parts {
    /// Keeps a part (a part of a newer request drops those of an older one).
    pub fn add(&mut self, part: ResultPart) {
        if part.part != self.id {
            self.id = part.part;
            self.instructions.clear();
        }
        self.instructions.extend(part.instructions);
    }

    /// The reply with the parts received before it put back in front of a result's instructions.
    pub fn join(&mut self, reply: Reply) -> Reply {
        match reply {
            Reply::Result { id, mut result, goals } if id == self.id && !self.instructions.is_empty() => {
                let mut all = std::mem::take(&mut self.instructions);
                all.append(&mut result.instructions);
                result.instructions = all;
                Reply::Result { id, result, goals }
            }
            r => r,
        }
    }
}

/// What the service keeps between requests: the last scenario, its program and result, and the fixes
/// already checked.
#[derive(Default)]
pub struct Cache {
    scenario: Option<Scenario>,
    analysis: Option<Analysis>,
    result: Option<ProgramResult>,
    fixes: Vec<((usize, usize), Vec<Suggestion>)>,
    /// `result` came without its schedule check, which runs elsewhere ([`Schedule::Apart`]).
    unchecked: bool,
    /// The schedule check of `scenario`, when this worker ran it alone ([`Schedule::Only`]).
    #[cfg_attr(not(feature = "caches"), allow(dead_code))]
    check: Option<Option<crate::analysis::caches::Sensitivity>>,
}

/// The run's control: the scenario's limits (a run that keeps finishing blocks may go on to `max_seconds`; one
/// that finishes none stops after `stall_seconds`), and progress replies every tenth of a second.
struct Watch<'a> {
    id: u64,
    deadline: crate::scenario::Deadline,
    last: f64,
    reply: &'a mut dyn FnMut(Reply),
}

impl Control for Watch<'_> {
    fn keep_going(&mut self, p: &Progress) -> bool {
        let now = now_seconds();
        if now - self.last >= 0.1 {
            self.last = now;
            (self.reply)(Reply::Progress {
                id: self.id,
                done: p.blocks_done,
                total: p.blocks_total,
                seconds: self.deadline.elapsed(),
                text: progress_text(p),
            });
        }
        self.deadline.keep_going(p)
    }
}

fn watch<'a>(id: u64, sc: &Scenario, reply: &'a mut dyn FnMut(Reply)) -> Watch<'a> {
    Watch { id, deadline: crate::scenario::Deadline::of(&sc.limits), last: now_seconds(), reply }
}

/// What a long run is doing, for the page's progress line: "Memory system: block 412 of 1,024 through L1, L2
/// and DRAM" (the page adds the seconds).
pub fn progress_text(p: &Progress) -> String {
    use crate::program::grid::Stage;
    let blocks = format!("block {} of {}", crate::text::grouped(p.blocks_done), crate::text::grouped(p.blocks_total));
    match p.stage {
        Stage::Counting if p.blocks_total > 1 => format!("Counting the grid: {blocks}"),
        Stage::Counting => "Running the block".to_string(),
        Stage::Memory => format!("Memory system: {blocks} through L1, L2 and DRAM"),
        Stage::ScheduleCheck => format!("Memory system, the same grid with another number of blocks per SM: {blocks}"),
    }
}

/// What the page says when a run stops at one of its limits with nothing wrong in the input: what it was doing,
/// how far it came, and what to do.
pub fn stopped_message(sc: &Scenario, progress: &Progress, hit: crate::scenario::LimitHit) -> String {
    use crate::scenario::LimitHit;
    let (done, total) = (crate::text::grouped(progress.blocks_done), crate::text::grouped(progress.blocks_total));
    let mut m = match hit {
        LimitHit::Total(s) => format!(
            "The run reached the page's time limit ({s} s) while {}, after {done} of {total} blocks: nothing is wrong \
             with the pattern, the launch is large for the page.",
            progress.stage.doing()
        ),
        LimitHit::Stall(s) => format!(
            "No block finished for {s} s while {} ({done} of {total} blocks done): the page stopped the run.",
            progress.stage.doing()
        ),
    };
    m.push_str(" To see it: choose a smaller grid (each block's counts stay the same");
    if sc.caches.is_some() {
        m.push_str("; the memory system's hit rates and DRAM figures change with the grid's size), or turn the memory system off for the counts without caches");
    } else {
        m.push(')');
    }
    m.push_str(", or run it with warpscope's command line, which takes the time it needs (--max-seconds).");
    m
}

/// Whether two programs have the same memory instructions in the same order (so an instruction index and an
/// issue number mean the same thing in both).
fn same_sites(a: &Analysis, b: &Analysis) -> bool {
    let (x, y) = (&a.program.sites, &b.program.sites);
    x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.instr == q.instr && p.line == q.line)
}

fn shown(
    analysis: &Analysis,
    result: &ProgramResult,
    instr: usize,
    issue: usize,
    all_warps: bool,
    control: &mut dyn Control,
) -> Option<Shown> {
    let i = result.instructions.get(instr)?;
    let (warp, pass) = i.issue_at(issue)?;
    let mut report = analysis.report(i.site, warp, pass, control).ok()??;
    if let Some(c) = &result.caches {
        report.served = c.served.get(&(i.site as u32, warp, pass)).cloned().unwrap_or_default();
    }
    let why = why(&report);
    let mut others = Vec::new();
    if all_warps {
        // Every issue of the block when they fit the figure's 32 rows (8 warps of 4 passes); else every warp
        // at the shown pass.
        let several = i.max_passes() > 1;
        let rows: Vec<(u32, u32)> = if i.issue_count() <= 32 {
            (0..i.issue_count()).filter_map(|k| i.issue_at(k)).collect()
        } else {
            (0..i.passes.len() as u32).filter(|&w| pass < i.passes[w as usize]).map(|w| (w, pass)).take(32).collect()
        };
        for (w, p) in rows {
            if let Ok(Some(r)) = analysis.report(i.site, w, p, control) {
                let label = if several { format!("w{w} p{}", p + 1) } else { format!("warp {w}") };
                others.push((label, r));
            }
        }
    }
    // The access as the current program spells it (`result` may be the previous program's).
    let access = analysis.program.sites.get(i.site).map_or(i.access.as_str(), |s| s.access.as_str());
    let title = crate::figure::scene::title(&i.op, result.cc, access);
    Some(Shown { instr, issue, warp, pass, title, report, why, others })
}

/// The scenario's analysis, or the replies that end the request: the kernel names it needs demangled (the
/// page sends it again with them) or its error.
fn lowered(id: u64, sc: &Scenario, reply: &mut dyn FnMut(Reply)) -> Option<Analysis> {
    let analysis = sc.analysis();
    let symbols = crate::lang::params::take_missing();
    if !symbols.is_empty() {
        reply(Reply::Names { id, symbols });
        reply(Reply::Done { id });
        return None;
    }
    match analysis {
        Ok(a) => Some(a),
        Err(e) => {
            reply(Reply::Error { id, field: e.field, message: e.error.to_string() });
            reply(Reply::Done { id });
            None
        }
    }
}

/// The replies that end a run that failed. Stopped at a limit: at the loop a warp was in when no block finished
/// for the stall limit (an endless loop), else with nothing to point at (the run was progressing: the launch is
/// large). `hit`: the limit its deadline met.
fn run_failed(
    id: u64,
    sc: &Scenario,
    e: crate::program::grid::RunError,
    hit: Option<crate::scenario::LimitHit>,
    reply: &mut dyn FnMut(Reply),
) {
    match e {
        crate::program::grid::RunError::Stopped { at, progress, .. }
            if !(at.is_some()
                && progress.stage == crate::program::grid::Stage::Counting
                && matches!(hit, Some(crate::scenario::LimitHit::Stall(_)))) =>
        {
            let hit = hit.unwrap_or(crate::scenario::LimitHit::Total(sc.limits.max_seconds));
            reply(Reply::Stopped { id, message: stopped_message(sc, &progress, hit) });
        }
        e @ crate::program::grid::RunError::Stopped { .. } => {
            let e = sc.stop_error(e, hit);
            reply(Reply::Error { id, field: e.field, message: e.error.to_string() });
        }
        e => {
            let e = sc.run_error(e);
            reply(Reply::Error { id, field: e.field, message: e.error.to_string() });
        }
    }
    reply(Reply::Done { id })
}

/// A schedule check alone ([`Schedule::Only`]): the grid with another number of blocks per SM, beside the
/// main run in another worker. Stopped and failed runs answer as a whole run does.
#[cfg(feature = "caches")]
fn serve_check(req: &Request, cache: &mut Cache, reply: &mut dyn FnMut(Reply)) {
    let (id, sc) = (req.id, &req.scenario);
    if cache.scenario.as_ref() != Some(sc) || cache.check.is_none() {
        crate::lang::params::learn_names(&req.names);
        // Kernel names: the main run asks for them too, and the page sends the check again with them.
        let Some(analysis) = lowered(id, sc, reply) else { return };
        let mut watch = watch(id, sc, reply);
        let ran = match &sc.caches {
            Some(settings) => analysis.cache_schedule_check(settings, &mut watch),
            None => Ok(None),
        };
        match ran {
            Ok(run) => {
                let run = run.map(|r| r.figures());
                *cache = Cache { scenario: Some(sc.clone()), check: Some(run), ..Cache::default() }
            }
            Err(e) => {
                let hit = watch.deadline.hit();
                return run_failed(id, sc, e, hit, reply);
            }
        }
    }
    reply(Reply::Schedule { id, run: cache.check.clone().flatten() });
    reply(Reply::Done { id })
}

/// Serves one request, calling `reply` for each answer (the last is always `Done`).
pub fn serve(req: &Request, cache: &mut Cache, reply: &mut dyn FnMut(Reply)) {
    let id = req.id;
    let sc = &req.scenario;
    // A build without the cache model refuses the scenario (`Scenario::analysis`), as a whole run does.
    #[cfg(feature = "caches")]
    if req.schedule == Schedule::Only {
        return serve_check(req, cache, reply);
    }
    let here = req.schedule == Schedule::Here;
    let same = cache.scenario.as_ref() == Some(sc) && cache.result.is_some() && !(here && cache.unchecked);
    let mut sent_shown = None;
    if !same {
        crate::lang::params::learn_names(&req.names);
        // The kernel menu first, from the file's top level: it stays choosable when the kernel fails.
        if let Some(kernels) = sc.kernel_choices() {
            reply(Reply::Kernels { id, kernels });
        }
        let Some(analysis) = lowered(id, sc, reply) else { return };
        // Typing in the same program: the figure first, from the shown warp alone.
        if let (Some(prev), Some(prev_a)) = (&cache.result, &cache.analysis) {
            if same_sites(prev_a, &analysis) {
                let mut watch = watch(id, sc, reply);
                let quick = shown(&analysis, prev, req.instr, req.issue, req.all_warps, &mut watch);
                if let Some(s) = quick {
                    reply(Reply::Shown { id, shown: Box::new(s.clone()) });
                    sent_shown = Some(s);
                }
            }
        }
        let mut watch = watch(id, sc, reply);
        let ran =
            analysis.run(sc.blocks(), &mut watch).and_then(|r| sc.add_caches_checked(&analysis, r, &mut watch, here));
        let hit = watch.deadline.hit();
        let result = match ran {
            Ok(r) => r,
            Err(e) => return run_failed(id, sc, e, hit, reply),
        };
        let unchecked = !here && result.caches.is_some();
        *cache = Cache {
            scenario: Some(sc.clone()),
            analysis: Some(analysis),
            result: Some(result),
            unchecked,
            ..Cache::default()
        };
    }
    // The schedule check a second worker ran, added to the result.
    #[cfg(feature = "caches")]
    if let (Some(check), Some(r), true) = (&req.check, cache.result.as_mut(), cache.unchecked) {
        if let Some(c) = r.caches.take() {
            let c = c.with_schedule_figures(Some(check.clone()));
            r.cache_chart = Some(c.chart());
            r.caches = Some(c);
        }
        cache.unchecked = false;
    }
    let (Some(analysis), Some(result)) = (&cache.analysis, &cache.result) else { return reply(Reply::Done { id }) };
    // Always sent: the page may have asked from a fresh pane that has no result yet.
    let goals = req.goals.as_ref().map(|gs| {
        // A goal that reads addresses reads the instruction's first issue.
        let first_issue = |i: &crate::analysis::InstrResult| {
            let (warp, pass) = i.issue_at(0)?;
            let mut deadline = crate::scenario::Deadline::of(&sc.limits);
            analysis
                .report(i.site, warp, pass, &mut deadline)
                .ok()
                .flatten()
                .map(|r| crate::teach::lab::goal_addresses(&r))
        };
        let subject = crate::teach::lab::Subject { text: &sc.text, first_issue: &first_issue };
        gs.iter().map(|g| crate::teach::lab::check_goal(g, &subject, result)).collect()
    });
    reply(Reply::Result { id, result: Box::new(result.clone()), goals });
    // The selection, kept within the result.
    let focus = req.focus.as_ref().and_then(|f| result.instructions.iter().position(|i| i.op.contains(f.as_str())));
    let instr = match focus {
        Some(k) => k,
        None if req.instr < result.instructions.len() => req.instr,
        None => 0,
    };
    let issue = match result.instructions.get(instr) {
        Some(i) if focus.is_none() && req.issue < i.issue_count() => req.issue,
        _ => 0,
    };
    let mut watch = watch(id, sc, reply);
    let s = shown(analysis, result, instr, issue, req.all_warps, &mut watch);
    let Some(s) = s else { return reply(Reply::Done { id }) };
    let report = s.report.clone();
    // Sent again only when the whole run changed it (another issue, or an explanation that cites totals).
    if sent_shown.as_ref() != Some(&s) {
        reply(Reply::Shown { id, shown: Box::new(s) });
    }
    // The fixes: each is a run of a changed scenario, so they come last, and are kept.
    let key = (instr, issue);
    let suggestions = match cache.fixes.iter().find(|(k, _)| *k == key) {
        Some((_, f)) => f.clone(),
        None => {
            let f = fixes(sc, result, instr, &report);
            cache.fixes.push((key, f.clone()));
            f
        }
    };
    reply(Reply::Fixes { id, instr, issue, suggestions });
    reply(Reply::Done { id });
}
