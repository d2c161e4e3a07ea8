//! A scenario: everything that decides what warpscope shows (CC, language, text, instruction, launch,
//! `--set` values, settings). The CLI, the page and the presets all run scenarios, so they always agree.

use crate::analysis::{Analysis, ProgramResult, Trace};
use crate::lang::{self, expr::Vars, InputError, Lang, Source, Span};
use crate::model::access::{Instr, LaneSet};
use crate::model::arch::{BankMode, Cc, L1Choice};
use crate::model::cost::Config;
use crate::model::report::Report;
use crate::program::grid::{Blocks, Control, RunError};
use crate::program::launch::{Dim3, Launch};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::rc::Rc;

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    /// The compute capability.
    pub cc: Cc,
    /// The input language.
    pub lang: Lang,
    /// The pattern text.
    pub text: String,
    /// The instruction mnemonic for `expr` and `addresses`.
    pub op: String,
    /// blockDim.
    pub block: Dim3,
    /// gridDim.
    pub grid: Dim3,
    /// `NAME=VALUE` settings, as written.
    pub sets: Vec<String>,
    /// Engine settings.
    pub config: Config,
    /// Lanes allowed to take part in every warp (the CLI's `--mask`); all by default.
    pub lane_mask: LaneSet,
    /// The one block to run (`--block-idx`), or `None` for every block of the grid.
    pub block_idx: Option<Dim3>,
    /// Run every block of the grid, none counted as equivalent to another (`--every-block`): slower, and the
    /// check of the equivalence shortcut.
    #[serde(default)]
    pub every_block: bool,
    /// Limits on time and memory.
    pub limits: Limits,
    /// Which kernel of a listing or file with several to run (`--kernel`); the first when `None`.
    #[serde(default)]
    pub kernel: Option<String>,
}

impl Default for Scenario {
    fn default() -> Scenario {
        Scenario {
            cc: Cc::new(8, 0),
            lang: Lang::Expr,
            text: "4*lane + 4".into(),
            op: "LDG.E.32".into(),
            block: Dim3::linear(32),
            grid: Dim3::linear(1),
            sets: Vec::new(),
            config: Config::default(),
            lane_mask: LaneSet::ALL,
            block_idx: None,
            every_block: false,
            limits: Limits::default(),
            kernel: None,
        }
    }
}

/// Which input a problem is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Field {
    /// The pattern text.
    Pattern,
    /// The instruction mnemonic.
    Op,
    /// The block or grid size.
    Launch,
    /// A `--set` value.
    Set,
    /// A limit on time or memory.
    Limit,
}

/// A problem with a scenario: which input, and the error with its position in that input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The input.
    pub field: Field,
    /// The error.
    pub error: InputError,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.field {
            Field::Pattern => "pattern",
            Field::Op => "instruction",
            Field::Launch => "launch",
            Field::Set => "setting",
            Field::Limit => "limit",
        };
        write!(f, "{what} {}", self.error)
    }
}

impl std::error::Error for ScenarioError {}

fn whole(text: &str, message: String) -> InputError {
    InputError::at(text, Span { start: 0, end: text.len().max(1) }, message)
}

impl Scenario {
    /// The parsed instruction.
    pub fn instr(&self) -> Result<Instr, ScenarioError> {
        Instr::parse(&self.op).map_err(|e| ScenarioError {
            field: Field::Op,
            error: InputError::at(&self.op, Span { start: e.column, end: e.column + e.len }, e.message),
        })
    }

    /// The `--set` values by name.
    pub fn vars(&self) -> Result<Vars, ScenarioError> {
        let mut vars = Vars::new();
        for s in &self.sets {
            let (k, v) = lang::parse_set(s).map_err(|m| ScenarioError { field: Field::Set, error: whole(s, m) })?;
            vars.insert(k, v);
        }
        Ok(vars)
    }

    /// The launch.
    pub fn launch(&self) -> Result<Launch, ScenarioError> {
        let text = format!("{} {}", self.block, self.grid);
        Launch::new(self.block, self.grid).map_err(|m| ScenarioError { field: Field::Launch, error: whole(&text, m) })
    }

    /// Parses and lowers the pattern into a program, with everything needed to run it.
    pub fn analysis(&self) -> Result<Analysis, ScenarioError> {
        // An address list may name its instructions itself; an empty op then means "none given".
        let op = match self.lang {
            Lang::Expr => Some(self.instr()?),
            Lang::Addresses if !self.op.trim().is_empty() => Some(self.instr()?),
            _ => None,
        };
        let vars = self.vars()?;
        let mut launch = self.launch()?;
        let source = Source {
            lang: self.lang,
            text: &self.text,
            op,
            launch,
            vars: &vars,
            kernel: self.kernel.as_deref(),
            cc: self.cc,
        };
        let lowered = lang::lower(&source).map_err(|error| ScenarioError { field: Field::Pattern, error })?;
        if lowered.block.is_some() || lowered.grid.is_some() {
            let block = lowered.block.unwrap_or(self.block);
            let grid = lowered.grid.unwrap_or(self.grid);
            launch = Launch::new(block, grid)
                .map_err(|m| ScenarioError { field: Field::Launch, error: whole(&self.text, m) })?;
        }
        if let Some(b) = self.block_idx {
            let g = launch.grid;
            if b.x >= g.x || b.y >= g.y || b.z >= g.z {
                let text = format!("{b} {g}");
                return Err(ScenarioError {
                    field: Field::Launch,
                    error: whole(&text, format!("block index ({},{},{}) is outside the grid {g}", b.x, b.y, b.z)),
                });
            }
            launch.block_idx = b;
        }
        Ok(Analysis {
            cc: self.cc,
            config: self.config,
            launch,
            program: Rc::new(lowered.program),
            lane_mask: self.lane_mask,
            max_memory_bytes: self.limits.max_memory_mb.saturating_mul(1 << 20),
        })
    }

    /// Which blocks a run covers: the one `block_idx` names, or the whole grid.
    pub fn blocks(&self) -> Blocks {
        match (self.block_idx, self.every_block) {
            (Some(b), _) => Blocks::One(b),
            (None, false) => Blocks::All,
            (None, true) => Blocks::Each,
        }
    }

    /// Runs the scenario: parse, lower, run every warp of every block it covers, cost every issue.
    pub fn run(&self) -> Result<ProgramResult, ScenarioError> {
        self.run_with(&mut Deadline::new(self.limits.max_seconds))
    }

    /// [`Scenario::run`] under a caller's control (a time limit, cancellation).
    pub fn run_with(&self, control: &mut dyn Control) -> Result<ProgramResult, ScenarioError> {
        let a = self.analysis()?;
        a.run(self.blocks(), control).map_err(|e| self.run_error(e))
    }

    /// The detailed report of issue `issue` (numbered warp by warp, as [`InstrResult::issue_at`] does) of
    /// instruction `instr` of `result`, this scenario's result: what the figure draws.
    pub fn report(&self, result: &ProgramResult, instr: usize, issue: usize) -> Result<Option<Report>, ScenarioError> {
        let Some(i) = result.instructions.get(instr) else { return Ok(None) };
        let Some((warp, pass)) = i.issue_at(issue) else { return Ok(None) };
        let a = self.analysis()?;
        a.report(i.site, warp, pass, &mut Deadline::new(self.limits.max_seconds)).map_err(|e| self.run_error(e))
    }

    /// The first `max_issues` issues of every memory instruction of the listed block, with their addresses.
    pub fn trace(&self, max_issues: usize) -> Result<Trace, ScenarioError> {
        let a = self.analysis()?;
        a.trace(max_issues, &mut Deadline::new(self.limits.max_seconds)).map_err(|e| self.run_error(e))
    }

    /// A run's error as an error of this scenario's inputs.
    pub fn run_error(&self, e: RunError) -> ScenarioError {
        let text = &self.text;
        match e {
            RunError::Exec(x) => ScenarioError { field: Field::Pattern, error: InputError::at(text, x.span, x.message) },
            RunError::Stopped { at, block, warp, progress } => {
                let limit = format!(
                    "the analysis stopped at the time limit ({} s; the command line's --max-seconds raises it)",
                    self.limits.max_seconds
                );
                let message = match at {
                    Some(_) => format!(
                        "{limit} while warp {warp} of block ({},{},{}) was here, after {} warp instructions: is a loop endless?",
                        block.x, block.y, block.z, progress.instructions
                    ),
                    None => format!(
                        "{limit} after counting {} of {} blocks",
                        progress.blocks_done, progress.blocks_total
                    ),
                };
                let span = at.unwrap_or(Span { start: 0, end: 1 });
                ScenarioError { field: Field::Limit, error: InputError::at(text, span, message) }
            }
            RunError::Memory { needed, limit } => ScenarioError {
                field: Field::Limit,
                error: whole(
                    text,
                    format!(
                        "a block of this program needs {} MB of register state, over the limit of {} MB (the command line's --max-memory-mb raises it)",
                        needed.div_ceil(1 << 20),
                        limit >> 20
                    ),
                ),
            },
        }
    }
}

/// The limits on a run: a hostile or endless pattern must stop, with an error that says which limit it hit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Wall-clock seconds a run may take.
    pub max_seconds: f64,
    /// Megabytes of register state a block may use (every warp of a block is alive between barriers).
    pub max_memory_mb: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_seconds: 60.0, max_memory_mb: 1024 }
    }
}

/// A [`Control`] that stops a run after a number of seconds of wall-clock time. The clock lives here, at the
/// edge: the core itself is deterministic and only asks its control whether to go on.
pub struct Deadline {
    start: f64,
    seconds: f64,
}

impl Deadline {
    /// A deadline `seconds` from now.
    pub fn new(seconds: f64) -> Deadline {
        Deadline { start: now_seconds(), seconds }
    }
}

impl Control for Deadline {
    fn keep_going(&mut self, _: &crate::program::grid::Progress) -> bool {
        now_seconds() - self.start <= self.seconds
    }
}

/// Seconds on a monotonic clock (the browser's `performance.now()` in the page).
#[cfg(not(target_arch = "wasm32"))]
pub fn now_seconds() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
}

/// Seconds on a monotonic clock (the browser's `performance.now()` in the page).
#[cfg(target_arch = "wasm32")]
pub fn now_seconds() -> f64 {
    js_sys::Date::now() / 1000.0
}

/// Builds a config from the two user-facing engine settings.
pub fn config(l1: L1Choice, bank_mode: BankMode) -> Config {
    Config { l1, bank_mode, ..Config::default() }
}
