//! A scenario: everything that decides what warpscope shows (CC, language, text, instruction, launch,
//! `--set` values, settings). The CLI, the page and the presets all run scenarios, so they always agree.
//!
//! May import: `text`, `model`, `program`, `lang`, `analysis`. Settings enter through [`Scenario::set`] (one
//! [`Setting`] enum for the CLI, links, labs and the page).

use crate::analysis::caches::CacheSettings;
use crate::analysis::{Analysis, ProgramResult, Trace};
use crate::lang::{self, expr::Vars, InputError, Lang, Source, Span};
use crate::model::access::{Instr, LaneSet};
use crate::model::arch::Cc;
use crate::model::cost::Config;
use crate::model::report::Report;
use crate::program::grid::{Blocks, Control, RunError};
use crate::program::launch::{Dim3, Launch};
use crate::program::DataBranches;
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
    /// Named CuTe layouts the address expression may call (`--layout`), as written.
    #[serde(default)]
    pub layout: String,
    /// Bytes per layout element (`--elem-bytes`): a layout's value is its element offset times this.
    #[serde(default = "one_byte")]
    pub elem_bytes: u32,
    /// In which lanes a condition that depends on data holds where what it decides moves memory
    /// (`--data-branches`): an assumption the result states.
    #[serde(default)]
    pub data_branches: DataBranches,
    /// Files the CUDA text `#include`s, given with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<lang::Header>,
    /// Model L1, L2 and DRAM across the run's warps and blocks (docs/model.md#the-memory-system) on this device, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches: Option<CacheSettings>,
    /// Contents given to the kernel's arrays (`--data NAME=SOURCE`, docs/model.md#kernels-on-data): its loads
    /// read them.
    #[cfg(feature = "data")]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data: Vec<crate::data::DataSpec>,
}

fn one_byte() -> u32 {
    1
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
            layout: String::new(),
            elem_bytes: 1,
            data_branches: DataBranches::default(),
            headers: Vec::new(),
            caches: None,
            #[cfg(feature = "data")]
            data: Vec::new(),
        }
    }
}

/// A setting the user changes by name: a lab locks it, a link stores it, the page's controls and the command
/// line's flags set it. Every front end goes through [`Scenario::set`] and [`Scenario::value`], so a setting
/// is parsed and written in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Setting {
    /// The compute capability: `8.0`, `sm_80`.
    Cc,
    /// The input language: `expr`, `cuda`, `ptx`, `sass`, `addresses`.
    Lang,
    /// The instruction mnemonic.
    Op,
    /// blockDim: `X`, `XxY`, `XxYxZ`.
    Block,
    /// gridDim, written as blockDim is.
    Grid,
    /// The pattern text.
    Pattern,
    /// `NAME=VALUE` settings, separated by commas, spaces or new lines.
    Sets,
    /// L1 caching of global loads: `default`, `on`, `off`.
    L1,
    /// Kepler's bank mode in bytes: `4`, `8`.
    BankMode,
    /// How 64- and 128-bit shared accesses whose lanes share addresses count on CC 7.0+: `measured`,
    /// `documented` (docs/model.md#shared-memory-as-measured).
    SharedModel,
    /// The kernel to run (empty: the first).
    Kernel,
    /// Named CuTe layouts for address expressions: `L = Swizzle<3,4,3> o (8,128):(128,1)`, separated by `;`
    /// or new lines (empty: none).
    Layout,
    /// Bytes per layout element, 1 to 1024 (default 1: a layout's offsets are bytes).
    ElemBytes,
    /// Where a condition that depends on data holds, when what it decides moves memory: `runs` (the guarded
    /// code runs and a loop does not repeat, the default), `true` (every lane), `false`, or a lane mask
    /// (`0x0000ffff`: lanes 0-15).
    DataBranches,
    /// The memory system across warps and blocks (docs/model.md#the-memory-system): `off`, `on`, or `on` with the device's
    /// changes (`on sms=108 l2=40MB ways=16 blocks_per_sm=2 carveout_kb=16`).
    Caches,
}

impl Setting {
    /// Every setting.
    pub const ALL: [Setting; 15] = [
        Setting::Cc,
        Setting::Lang,
        Setting::Op,
        Setting::Block,
        Setting::Grid,
        Setting::Pattern,
        Setting::Sets,
        Setting::L1,
        Setting::BankMode,
        Setting::SharedModel,
        Setting::Kernel,
        Setting::Layout,
        Setting::ElemBytes,
        Setting::DataBranches,
        Setting::Caches,
    ];

    /// The settings a lab may lock.
    pub const LOCKABLE: [Setting; 14] = [
        Setting::Cc,
        Setting::Lang,
        Setting::Op,
        Setting::Block,
        Setting::Grid,
        Setting::Pattern,
        Setting::L1,
        Setting::BankMode,
        Setting::SharedModel,
        Setting::Sets,
        Setting::Layout,
        Setting::ElemBytes,
        Setting::DataBranches,
        Setting::Caches,
    ];

    /// The name labs, links and messages use.
    pub fn name(self) -> &'static str {
        match self {
            Setting::Cc => "cc",
            Setting::Lang => "lang",
            Setting::Op => "op",
            Setting::Block => "block",
            Setting::Grid => "grid",
            Setting::Pattern => "pattern",
            Setting::Sets => "sets",
            Setting::L1 => "l1",
            Setting::BankMode => "bank_mode",
            Setting::SharedModel => "shared_model",
            Setting::Kernel => "kernel",
            Setting::Layout => "layout",
            Setting::ElemBytes => "elem_bytes",
            Setting::DataBranches => "data_branches",
            Setting::Caches => "caches",
        }
    }

    /// Whether the setting describes the machine the program runs on (CC, L1 choice, bank mode, shared
    /// model) rather than the program itself: two panes that differ only in these compare like with like.
    pub fn is_machine(self) -> bool {
        matches!(self, Setting::Cc | Setting::L1 | Setting::BankMode | Setting::SharedModel | Setting::Caches)
    }

    /// What the page calls the setting's input.
    pub fn label(self) -> &'static str {
        match self {
            Setting::Cc => "compute capability",
            Setting::Lang => "language",
            Setting::Op => "instruction",
            Setting::Block => "block",
            Setting::Grid => "grid",
            Setting::Pattern => "pattern",
            Setting::Sets => "values",
            Setting::L1 => "global loads",
            Setting::BankMode => "bank mode",
            Setting::SharedModel => "shared model",
            Setting::Kernel => "kernel",
            Setting::Layout => "layout",
            Setting::ElemBytes => "element bytes",
            Setting::DataBranches => "data-dependent conditions",
            Setting::Caches => "memory system",
        }
    }

    /// The input a problem with this setting is reported against.
    pub fn field(self) -> Field {
        match self {
            Setting::Op => Field::Op,
            Setting::Block | Setting::Grid => Field::Launch,
            Setting::Sets => Field::Set,
            Setting::Cc
            | Setting::Lang
            | Setting::Pattern
            | Setting::L1
            | Setting::BankMode
            | Setting::SharedModel
            | Setting::Kernel
            | Setting::DataBranches => Field::Pattern,
            Setting::Caches => Field::Caches,
            Setting::Layout | Setting::ElemBytes => Field::Layout,
        }
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Setting {
    type Err = String;
    fn from_str(text: &str) -> Result<Setting, String> {
        Setting::ALL.into_iter().find(|s| s.name() == text).ok_or_else(|| {
            let known: Vec<&str> = Setting::ALL.iter().map(|s| s.name()).collect();
            format!("unknown setting `{text}` (known: {})", known.join(", "))
        })
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
    /// The CuTe layouts (and their element size).
    Layout,
    /// The memory system's device settings.
    Caches,
    /// The arrays given as data.
    Data,
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
            Field::Layout => "layout",
            Field::Caches => "memory system",
            Field::Data => "data",
        };
        write!(f, "{what} {}", self.error)
    }
}

impl std::error::Error for ScenarioError {}

fn whole(text: &str, message: String) -> InputError {
    InputError::at(text, Span { start: 0, end: text.len().max(1) }, message)
}

impl Scenario {
    /// Sets `setting` from its text, as labs, links, the page and the command line write it. On an error the
    /// scenario is unchanged and the message names the setting (`block `0x4`: a size must be at least 1`).
    /// A new language forgets the chosen kernel.
    pub fn set(&mut self, setting: Setting, value: &str) -> Result<(), ScenarioError> {
        let err = |m: String| ScenarioError { field: setting.field(), error: whole(value, m) };
        match setting {
            Setting::Cc => self.cc = Cc::parse(value).map_err(err)?,
            Setting::Lang => {
                self.lang = Lang::parse(value).map_err(err)?;
                self.kernel = None;
            }
            Setting::Op => self.op = value.to_string(),
            Setting::Block => self.block = Dim3::parse(value, setting.name()).map_err(err)?,
            Setting::Grid => self.grid = Dim3::parse(value, setting.name()).map_err(err)?,
            Setting::Pattern => self.text = value.to_string(),
            Setting::Sets => {
                self.sets =
                    value.split([',', ' ', '\n']).map(str::trim).filter(|x| !x.is_empty()).map(String::from).collect()
            }
            Setting::L1 => self.config.l1 = value.parse().map_err(err)?,
            Setting::BankMode => self.config.bank_mode = value.parse().map_err(err)?,
            Setting::SharedModel => self.config.shared_model = value.parse().map_err(err)?,
            Setting::Kernel => self.kernel = Some(value.to_string()).filter(|k| !k.is_empty()),
            // Read when the scenario is lowered (as the pattern is), so that the page's main thread, which runs
            // nothing, does not carry the layout parser.
            Setting::Layout => self.layout = value.to_string(),
            Setting::ElemBytes => {
                self.elem_bytes = value.trim().parse().ok().filter(|b| (1..=1024).contains(b)).ok_or_else(|| {
                    err(format!("elem_bytes is a whole number of bytes from 1 to 1024, not `{value}`"))
                })?
            }
            Setting::DataBranches => self.data_branches = DataBranches::parse(value).map_err(err)?,
            Setting::Caches => self.caches = CacheSettings::parse(value).map_err(err)?,
        }
        Ok(())
    }

    /// The text of `setting`, as [`Scenario::set`] reads it back.
    pub fn value(&self, setting: Setting) -> String {
        match setting {
            Setting::Cc => self.cc.to_string(),
            Setting::Lang => self.lang.name().to_string(),
            Setting::Op => self.op.clone(),
            Setting::Block => self.block.to_string(),
            Setting::Grid => self.grid.to_string(),
            Setting::Pattern => self.text.clone(),
            Setting::Sets => self.sets.join(", "),
            Setting::L1 => self.config.l1.to_string(),
            Setting::BankMode => self.config.bank_mode.to_string(),
            Setting::SharedModel => self.config.shared_model.to_string(),
            Setting::Kernel => self.kernel.clone().unwrap_or_default(),
            Setting::Layout => self.layout.clone(),
            Setting::ElemBytes => self.elem_bytes.to_string(),
            Setting::DataBranches => self.data_branches.text(),
            Setting::Caches => CacheSettings::text(self.caches.as_ref()),
        }
    }

    /// The program settings (everything but the machine's, see [`Setting::is_machine`]) in which `other`
    /// differs from this scenario, in [`Setting::ALL`] order: empty when both run the same program. The
    /// instruction counts only for the languages that take one (expressions, addresses), the layout only
    /// for expressions.
    pub fn program_differences(&self, other: &Scenario) -> Vec<Setting> {
        let used = |s: Setting| match s {
            Setting::Op => matches!(self.lang, Lang::Expr | Lang::Addresses),
            Setting::Layout | Setting::ElemBytes => self.lang == Lang::Expr,
            _ => true,
        };
        Setting::ALL.into_iter().filter(|s| !s.is_machine() && used(*s) && self.value(*s) != other.value(*s)).collect()
    }

    /// The parsed instruction; one the chosen CC does not have (`LDSM` before 7.5, ...) is refused here.
    pub fn instr(&self) -> Result<Instr, ScenarioError> {
        let instr = Instr::parse(&self.op).map_err(|e| ScenarioError {
            field: Field::Op,
            error: InputError::at(&self.op, Span { start: e.column, end: e.column + e.len }, e.message),
        })?;
        match instr.base.first_cc() {
            Some(first) if self.cc < first => Err(ScenarioError {
                field: Field::Op,
                error: whole(
                    &self.op,
                    format!(
                        "{} ({}) needs CC {first} or later; CC {} does not have it (PTX ISA, {}: sm_{})",
                        instr.base.name(),
                        instr.base.ptx_name(),
                        self.cc,
                        instr.base.ptx_name(),
                        first.sm()
                    ),
                ),
            }),
            _ => Ok(instr),
        }
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

    /// The named layouts, with their element size; an error names the setting and the place in its text
    /// (`layout 2:12: ...`).
    #[inline(never)]
    pub fn layouts(&self) -> Result<lang::layout::Layouts, ScenarioError> {
        lang::layout::Layouts::parse(&self.layout, i128::from(self.elem_bytes.max(1)))
            .map_err(|e| ScenarioError { field: Field::Layout, error: e })
    }

    /// The launch.
    pub fn launch(&self) -> Result<Launch, ScenarioError> {
        Launch::new(self.block, self.grid).map_err(|m| {
            // The excerpt is the size the message is about, not both sizes side by side.
            let text = if m.starts_with("grid") { self.grid.to_string() } else { self.block.to_string() };
            ScenarioError { field: Field::Launch, error: whole(&text, m) }
        })
    }

    /// The kernels a CUDA file offers for the kernel menu, read from its top level alone: known even when the
    /// chosen kernel fails. `None` for the other languages; none for a file whose top level cannot be read
    /// (the analysis reports that error).
    pub fn kernel_choices(&self) -> Option<Vec<lang::KernelChoice>> {
        if self.lang != Lang::Cuda {
            return None;
        }
        let Ok(vars) = self.vars() else { return Some(Vec::new()) };
        let source = Source {
            lang: self.lang,
            text: &self.text,
            op: None,
            launch: Launch::default(),
            vars: &vars,
            kernel: None,
            cc: self.cc,
            layouts: Rc::new(lang::layout::Layouts::default()),
            headers: &self.headers,
        };
        Some(lang::kernel_choices(&source)?.unwrap_or_default())
    }

    /// Parses and lowers the pattern into a program, with everything needed to run it.
    pub fn analysis(&self) -> Result<Analysis, ScenarioError> {
        if self.caches.is_some() && !cfg!(feature = "caches") {
            let message = "this build of warpscope has no memory-system model (on the page it runs in its own worker)";
            return Err(ScenarioError {
                field: Field::Pattern,
                error: InputError::at(&self.text, Span { start: 0, end: 0 }, message),
            });
        }
        if let Some(c) = &self.caches {
            // The message names the setting and its value; the device field has no line to point into.
            c.check(self.cc).map_err(|m| ScenarioError { field: Field::Caches, error: InputError::unplaced(m) })?;
        }
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
            layouts: Rc::new(self.layouts()?),
            headers: &self.headers,
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
        let mut program = lowered.program;
        program.data_branches = self.data_branches;
        #[cfg(feature = "data")]
        if !self.data.is_empty() {
            let data_error = |m: String| ScenarioError { field: Field::Data, error: InputError::unplaced(m) };
            for n in crate::data::give(&mut program, &self.data).map_err(data_error)? {
                program.notes.push(crate::model::arch::notes::data_given(n));
            }
        }
        // The shared memory the kernel declares bounds its shared accesses, unless a setting gives another.
        let mut config = self.config;
        config.windows.shared_alloc_bytes = config.windows.shared_alloc_bytes.or(program.shared_bytes);
        // The memory system sizes residency by it: a block no SM of this CC could hold has no residency.
        if let (Some(c), Some(bytes)) = (&self.caches, config.windows.shared_alloc_bytes) {
            let shared = c.shared_bytes.unwrap_or(bytes);
            let max = u64::from(self.cc.facts().max_shared_per_block_kb) * 1024;
            if shared > max {
                let m = format!(
                    "a block using {shared} bytes of shared memory cannot run on CC {}: a block has at most {max}",
                    self.cc
                );
                return Err(ScenarioError { field: Field::Caches, error: InputError::unplaced(m) });
            }
        }
        Ok(Analysis {
            cc: self.cc,
            config,
            launch,
            source: Rc::from(self.text.as_str()),
            program: Rc::new(program),
            lane_mask: self.lane_mask,
            max_memory_bytes: self.limits.max_memory_mb.saturating_mul(1 << 20),
            threads: self.limits.threads.max(1),
            replay: true,
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
        self.run_with(&mut Deadline::of(&self.limits))
    }

    /// [`Scenario::run`] under a caller's control (a time limit, cancellation).
    pub fn run_with(&self, control: &mut dyn Control) -> Result<ProgramResult, ScenarioError> {
        let a = self.analysis()?;
        let r = a.run(self.blocks(), control).map_err(|e| self.run_error(e))?;
        self.add_caches(&a, r, control).map_err(|e| self.run_error(e))
    }

    /// `r` with the modelled memory system's figures (docs/model.md#the-memory-system) when the scenario turns it on. Only a build
    /// with the `caches` feature carries the model (the command line, and on the page the memory-system
    /// worker); elsewhere [`Scenario::analysis`] has already refused such a scenario.
    pub fn add_caches(
        &self,
        a: &Analysis,
        r: ProgramResult,
        control: &mut dyn Control,
    ) -> Result<ProgramResult, RunError> {
        self.add_caches_checked(a, r, control, true)
    }

    /// [`Scenario::add_caches`], with a grid's schedule check (`check`) or without it (the page runs it in a
    /// second worker and adds it with [`crate::analysis::caches::CacheResult::with_schedule`]).
    pub fn add_caches_checked(
        &self,
        a: &Analysis,
        r: ProgramResult,
        control: &mut dyn Control,
        check: bool,
    ) -> Result<ProgramResult, RunError> {
        #[cfg(feature = "caches")]
        if let Some(settings) = &self.caches {
            let mut r = r;
            let c = if check {
                a.caches(self.block_idx, settings, control)?
            } else {
                a.caches_alone(self.block_idx, settings, control)?
            };
            r.cache_chart = Some(c.chart());
            r.caches = Some(c);
            return Ok(r);
        }
        let _ = (a, control, check);
        Ok(r)
    }

    /// The detailed report of issue `issue` (numbered warp by warp, as [`crate::analysis::InstrResult::issue_at`] does) of
    /// instruction `instr` of `result`, this scenario's result: what the figure draws.
    pub fn report(&self, result: &ProgramResult, instr: usize, issue: usize) -> Result<Option<Report>, ScenarioError> {
        let Some(i) = result.instructions.get(instr) else { return Ok(None) };
        let Some((warp, pass)) = i.issue_at(issue) else { return Ok(None) };
        let a = self.analysis()?;
        a.report(i.site, warp, pass, &mut Deadline::of(&self.limits)).map_err(|e| self.run_error(e))
    }

    /// The first `max_issues` issues of every memory instruction of the listed block, with their addresses.
    pub fn trace(&self, max_issues: usize) -> Result<Trace, ScenarioError> {
        let a = self.analysis()?;
        a.trace(max_issues, &mut Deadline::of(&self.limits)).map_err(|e| self.run_error(e))
    }

    /// A run stopped by its [`Control`] as an error of this scenario's inputs: placed at the loop a warp was in
    /// when a block did not finish (the first, or any once no block finished for the stall limit), else about the
    /// run as a whole (the input is fine, the launch is large). `hit`: the limit that stopped it, when the
    /// control says (`None`: the time limit).
    pub fn stop_error(&self, e: RunError, hit: Option<LimitHit>) -> ScenarioError {
        use crate::program::grid::Stage;
        let RunError::Stopped { at, block, warp, progress } = e else { return self.run_error(e) };
        let text = &self.text;
        let hit = hit.unwrap_or(LimitHit::Total(self.limits.max_seconds));
        let (done, total) = (crate::text::grouped(progress.blocks_done), crate::text::grouped(progress.blocks_total));
        match at {
            Some(span) if progress.stage == Stage::Counting => {
                let limit = match hit {
                    LimitHit::Stall(s) => format!("no block finished for {s} s"),
                    LimitHit::Total(s) => {
                        format!("the analysis stopped at the time limit ({s} s; the command line's --max-seconds raises it)")
                    }
                };
                let why = match hit {
                    LimitHit::Total(_) if progress.blocks_done > 0 => {
                        format!("after {done} of {total} blocks had finished: is a loop here endless, or is the launch large?")
                    }
                    _ => format!("after {} warp instructions: is a loop endless?", progress.instructions),
                };
                let message =
                    format!("{limit} while warp {warp} of block ({},{},{}) was here, {why}", block.x, block.y, block.z);
                ScenarioError { field: Field::Limit, error: InputError::at(text, span, message) }
            }
            _ => {
                let limit = match hit {
                    LimitHit::Total(s) => format!("the run reached the time limit ({s} s)"),
                    LimitHit::Stall(s) => format!("no block finished for {s} s"),
                };
                let message = format!(
                    "{limit} while {}, after {done} of {total} blocks: the input is fine and the launch is large; \
                     --max-seconds gives it more time, a smaller --grid or --block-idx less to do",
                    progress.stage.doing()
                );
                ScenarioError { field: Field::Limit, error: InputError::unplaced(message) }
            }
        }
    }

    /// A run's error as an error of this scenario's inputs.
    pub fn run_error(&self, e: RunError) -> ScenarioError {
        let text = &self.text;
        match e {
            RunError::Exec(x) => ScenarioError { field: Field::Pattern, error: InputError::at(text, x.span, x.message) },
            RunError::Stopped { .. } => self.stop_error(e, None),
            RunError::Held { limit, progress, .. } => ScenarioError {
                field: Field::Limit,
                error: InputError::unplaced(format!(
                    "the memory system's record of the memory this grid touches reached the limit of {} MB after {} of \
                     {} blocks (each MiB of addresses the grid reads or writes takes a page of the record behind the \
                     bounds): the input is fine and the launch is large; --max-memory-mb raises the limit, a smaller \
                     --grid or --block-idx gives it less to do",
                    limit >> 20,
                    crate::text::grouped(progress.blocks_done),
                    crate::text::grouped(progress.blocks_total)
                )),
            },
            RunError::Settings(m) => ScenarioError { field: Field::Caches, error: InputError::unplaced(m) },
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
    /// Seconds a run may go without finishing a block (an endless loop finishes none), when a front end
    /// wants a run that is progressing to go on past a short limit: the page's. `None`: only `max_seconds`.
    #[serde(default)]
    pub stall_seconds: Option<f64>,
    /// Threads the memory system may run its SMs' L1 parts on (1: none besides the caller's). The figures do
    /// not depend on it (docs/model.md#the-memory-system).
    #[serde(default = "one_thread")]
    pub threads: usize,
}

fn one_thread() -> usize {
    1
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_seconds: 60.0, max_memory_mb: 1024, stall_seconds: None, threads: 1 }
    }
}

/// Which limit stopped a run: its total time, or the time without a finished block (seconds each).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LimitHit {
    /// The run took `max_seconds`.
    Total(f64),
    /// No block finished for `stall_seconds`.
    Stall(f64),
}

/// A [`Control`] that stops a run after a number of seconds of wall-clock time, or after a number of seconds
/// without a finished block, and remembers which. The clock lives here, at the edge: the core itself is
/// deterministic and only asks its control whether to go on.
pub struct Deadline {
    start: f64,
    seconds: f64,
    stall: Option<f64>,
    /// The last progress seen ((stage, blocks done)) and when it was first seen.
    last: (crate::program::grid::Stage, u64),
    since: f64,
    hit: Option<LimitHit>,
}

impl Deadline {
    /// A deadline `seconds` from now.
    pub fn new(seconds: f64) -> Deadline {
        Deadline::starting_at(now_seconds(), seconds, None)
    }

    /// A deadline for a scenario's limits: `max_seconds` from now, and `stall_seconds` without a finished block.
    pub fn of(limits: &Limits) -> Deadline {
        Deadline::starting_at(now_seconds(), limits.max_seconds, limits.stall_seconds)
    }

    /// A deadline whose clock started at `now` (seconds): [`Deadline::keep_going_at`] is then asked with the
    /// time, so that tests can drive it without waiting.
    pub fn starting_at(now: f64, seconds: f64, stall: Option<f64>) -> Deadline {
        Deadline { start: now, seconds, stall, last: Default::default(), since: now, hit: None }
    }

    /// Seconds since the run started.
    pub fn elapsed(&self) -> f64 {
        now_seconds() - self.start
    }

    /// The limit that stopped the run, once one has.
    pub fn hit(&self) -> Option<LimitHit> {
        self.hit
    }

    /// [`Control::keep_going`] at time `now`.
    pub fn keep_going_at(&mut self, p: &crate::program::grid::Progress, now: f64) -> bool {
        if (p.stage, p.blocks_done) != self.last {
            self.last = (p.stage, p.blocks_done);
            self.since = now;
        }
        if now - self.start > self.seconds {
            self.hit = Some(LimitHit::Total(self.seconds));
        } else if let Some(s) = self.stall.filter(|s| now - self.since > *s) {
            self.hit = Some(LimitHit::Stall(s));
        }
        self.hit.is_none()
    }
}

impl Control for Deadline {
    fn keep_going(&mut self, p: &crate::program::grid::Progress) -> bool {
        self.keep_going_at(p, now_seconds())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::teach::presets::PRESETS;

    /// A build without the cache model (the page's language and lab workers; the test command runs the
    /// `lean_build` tests in that build too) refuses a scenario with the memory system on, by name, instead of
    /// answering without it; a build with it (the command line, the memory worker) runs it.
    #[test]
    fn lean_build_runs_the_memory_system_only_where_the_build_carries_it() {
        let sc = Scenario { caches: Some(Default::default()), ..Default::default() };
        match (sc.run(), cfg!(feature = "caches")) {
            (Ok(r), true) => assert!(r.caches.is_some()),
            (Err(e), false) => assert!(e.error.message.contains("no memory-system model"), "{}", e.error.message),
            (r, has) => {
                panic!("with the cache model {has}: {:?}", r.map(|r| r.caches.is_some()).map_err(|e| e.error.message))
            }
        }
    }

    /// Every setting written by `value` reads back through `set` to the same scenario, for every preset.
    #[test]
    fn settings_round_trip() {
        for p in PRESETS {
            let sc = p.scenario();
            let mut back = Scenario::default();
            for s in Setting::ALL {
                back.set(s, &sc.value(s)).unwrap_or_else(|e| panic!("{} {s}: {e}", p.name));
            }
            assert_eq!((back.cc, back.lang, &back.text, &back.op), (sc.cc, sc.lang, &sc.text, &sc.op), "{}", p.name);
            assert_eq!(
                (back.block, back.grid, &back.sets, back.kernel.clone()),
                (sc.block, sc.grid, &sc.sets, sc.kernel.clone())
            );
            assert_eq!((back.config.l1, back.config.bank_mode), (sc.config.l1, sc.config.bank_mode), "{}", p.name);
        }
        for s in Setting::ALL {
            assert_eq!(s.name().parse::<Setting>(), Ok(s));
        }
    }

    /// A bad value leaves the scenario as it was and names the setting.
    #[test]
    fn settings_errors_name_the_setting() {
        let mut sc = Scenario::default();
        let before = sc.clone();
        let e = sc.set(Setting::Block, "0x4").unwrap_err();
        assert_eq!((e.field, e.error.message.as_str()), (Field::Launch, "block `0x4`: a size must be at least 1"));
        let e = sc.set(Setting::L1, "maybe").unwrap_err();
        assert_eq!(e.error.message, "l1 is default, on or off, not `maybe`");
        let e = sc.set(Setting::BankMode, "16").unwrap_err();
        assert_eq!(e.error.message, "bank_mode is 4 or 8, not 16");
        let e = sc.set(Setting::SharedModel, "guessed").unwrap_err();
        assert_eq!(e.error.message, "shared_model is measured or documented, not `guessed`");
        assert!(sc.set(Setting::Cc, "4.0").is_err());
        assert_eq!(sc, before);
        assert_eq!(
            "carveout".parse::<Setting>(),
            Err("unknown setting `carveout` (known: cc, lang, op, block, grid, pattern, sets, l1, bank_mode, \
                 shared_model, kernel, layout, elem_bytes, data_branches, caches)"
                .into())
        );
        let e = sc.set(Setting::DataBranches, "maybe").unwrap_err();
        assert_eq!(
            e.error.message,
            "data_branches is runs (the guarded code runs, loops do not repeat), true, false or a 32-bit lane mask such as 0x0000ffff (the lanes where the condition holds), not `maybe`"
        );
        for (text, back) in
            [("runs", "runs"), ("true", "true"), ("none", "false"), ("0xffff", "0x0000ffff"), ("0xffffffff", "true")]
        {
            let mut d = Scenario::default();
            d.set(Setting::DataBranches, text).expect("a valid value");
            assert_eq!(d.value(Setting::DataBranches), back);
        }
        // A block over 1024 threads: the excerpt is the block, not "2048x1x1 1x1x1" (block and grid side by side).
        let big = Scenario { block: Dim3::linear(2048), ..Scenario::default() };
        let e = big.launch().unwrap_err();
        assert_eq!(e.error.message, "block 2048x1x1 has 2048 threads; a block has at most 1024");
        assert_eq!(e.error.excerpt, "2048x1x1\n^^^^^^^^");
        // The page's sets field: commas, spaces or new lines between items.
        sc.set(Setting::Sets, "n=1024, R4=0x1000\nm=2").expect("sets");
        assert_eq!(sc.sets, ["n=1024", "R4=0x1000", "m=2"]);
        // A new language forgets the kernel chosen in the old one.
        sc.set(Setting::Kernel, "reduce4").expect("kernel");
        sc.set(Setting::Lang, "sass").expect("lang");
        assert_eq!(sc.kernel, None);
    }
}
