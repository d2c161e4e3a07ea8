//! A scenario: everything that decides what warpscope shows (CC, language, text, instruction, launch,
//! `--set` values, settings). The CLI, the page and the presets all run scenarios, so they always agree.

use crate::access::{Instr, LaneSet};
use crate::arch::{BankMode, Cc, L1Choice};
use crate::engine::Config;
use crate::launch::{Dim3, Launch};
use crate::pattern::{self, expr::Vars, InputError, Lang, Source, Span};
use crate::trace::{analyze_trace, ProgramResult, Trace};
use std::fmt;

/// What the user asked for.
#[derive(Clone, Debug, PartialEq)]
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
        }
    }
}

/// Which input a problem is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The pattern text.
    Pattern,
    /// The instruction mnemonic.
    Op,
    /// The block or grid size.
    Launch,
    /// A `--set` value.
    Set,
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
            let (k, v) = pattern::parse_set(s).map_err(|m| ScenarioError { field: Field::Set, error: whole(s, m) })?;
            vars.insert(k, v);
        }
        Ok(vars)
    }

    /// The launch.
    pub fn launch(&self) -> Result<Launch, ScenarioError> {
        let text = format!("{} {}", self.block, self.grid);
        Launch::new(self.block, self.grid).map_err(|m| ScenarioError { field: Field::Launch, error: whole(&text, m) })
    }

    /// Runs the scenario: parse, trace every thread of the block, analyse every warp-level issue.
    pub fn run(&self) -> Result<ProgramResult, ScenarioError> {
        Ok(analyze_trace(self.cc, &self.trace()?, &self.config))
    }

    /// Parses and traces every thread of the block: each memory instruction with its warp-level issues, before
    /// any analysis (`--mask` applied).
    pub fn trace(&self) -> Result<Trace, ScenarioError> {
        // An address list may name its instructions itself; an empty op then means "none given".
        let op = match self.lang {
            Lang::Expr => Some(self.instr()?),
            Lang::Addresses if !self.op.trim().is_empty() => Some(self.instr()?),
            _ => None,
        };
        let vars = self.vars()?;
        let launch = self.launch()?;
        let source = Source { lang: self.lang, text: &self.text, op, launch, vars: &vars };
        let mut trace = pattern::trace(&source).map_err(|error| ScenarioError { field: Field::Pattern, error })?;
        if self.lane_mask != LaneSet::ALL {
            for item in &mut trace.items {
                for issue in &mut item.issues {
                    for (lane, a) in issue.addrs.0.iter_mut().enumerate() {
                        if !self.lane_mask.contains(lane) {
                            *a = None;
                        }
                    }
                }
                item.issues.retain(|i| i.addrs.0.iter().any(Option::is_some));
            }
        }
        Ok(trace)
    }
}

/// Builds a config from the two user-facing engine settings.
pub fn config(l1: L1Choice, bank_mode: BankMode) -> Config {
    Config { l1, bank_mode, ..Config::default() }
}
