//! Course labs as the page and the grader use them: plain data (a [`Course`]) and the grading of a student's
//! answers. Teachers write labs as TOML; [`crate::teach::lab_file`] reads and checks those files and compiles them
//! into a `Course` (Markdown already parsed into blocks), so the page's main module needs neither a TOML nor
//! a Markdown parser.
//!
//! A goal is a condition in the expression language over the engine's metrics, for example
//! `bank_conflicts == 0 && sectors <= 8`, checked for each memory instruction (`scope = "each"`, the
//! default), for the block's sums (`"sum"`) or for at least one instruction (`"any"`), optionally only for
//! instructions whose mnemonic contains `select` (`select = "LDS"`).
//!
//! Goals also constrain the idea, not only the count: `addr(k)` is lane k's address in an instruction's first
//! issue, `scope = "lanes"` checks the condition for every active lane of that issue with `lane` and `addr`
//! (this lane's), and `keep = "..."` requires lines of the starting pattern to stay as written.

use crate::analysis::{InstrResult, ProgramResult};
use crate::lang::cexpr::{Ex, Parser};
use crate::lang::lex::{lex, Tok};
use crate::lang::{expr, InputError, Span};
use crate::model::cache::SiteTraffic;
use crate::scenario::{Scenario, Setting};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The metric names a goal may use, in the order of [`metrics_of`]'s values. The cache metrics (docs/model.md#the-memory-system)
/// are the modelled memory system's, 0 when it is off: `l1_hit_rate` (the loads' L1 sector hit rate, percent)
/// and `l2_hit_rate` (percent) from `l1_hits` of `l1_sectors` and `l2_hits` of `l2_sectors`, and the bytes an
/// instruction's misses read from DRAM. `ops` and `serial` are an atomic's (docs/model.md#atomics), `passes` a
/// constant load's (docs/model.md#constant-memory). `misaligned` counts the lanes whose address was not aligned
/// to the access size (a misaligned global access stops a kernel on a real GPU), `error_lanes` the lanes that
/// moved no data (outside their window or the kernel's shared memory).
pub const METRICS: [&str; 30] = [
    "requests",
    "lines",
    "sectors",
    "transactions",
    "transaction_bytes",
    "bytes_requested",
    "bytes_unique",
    "bytes_moved",
    "efficiency",
    "sectors_per_request",
    "wavefronts",
    "ideal_wavefronts",
    "bank_conflicts",
    "conflict_degree",
    "warps",
    "lanes",
    "size",
    "instructions",
    "l1_hit_rate",
    "l2_hit_rate",
    "l1_hits",
    "l1_sectors",
    "l2_hits",
    "l2_sectors",
    "dram_read_bytes",
    "ops",
    "serial",
    "passes",
    "misaligned",
    "error_lanes",
];

/// A run of text with its style.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span2 {
    /// The text.
    pub text: String,
    /// `code`.
    pub code: bool,
    /// *emphasis*.
    pub em: bool,
    /// **strong**.
    pub strong: bool,
    /// A link target (http, https or relative).
    pub link: Option<String>,
}

/// A block of Markdown, already parsed: the page draws it as elements, never as HTML.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Block {
    /// A paragraph.
    Para(Vec<Span2>),
    /// A heading of level 1..6.
    Heading(u8, Vec<Span2>),
    /// A list item (nested lists are flattened).
    Item(Vec<Span2>),
    /// A code block.
    Code(String),
}

/// A compiled lab.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Course {
    /// The title.
    pub title: String,
    /// The introduction.
    pub intro: Vec<Block>,
    /// The exercises.
    pub exercises: Vec<Exercise>,
}

/// One exercise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exercise {
    /// A stable identifier (answers are saved under it).
    pub id: String,
    /// The title.
    pub title: String,
    /// The task.
    pub text: Vec<Block>,
    /// The starting language.
    pub lang: Option<String>,
    /// The starting pattern.
    pub pattern: String,
    /// The instruction.
    pub op: Option<String>,
    /// The compute capability.
    pub cc: Option<String>,
    /// The block size.
    pub block: Option<String>,
    /// The grid size.
    #[serde(default)]
    pub grid: Option<String>,
    /// The memory system (docs/model.md#the-memory-system): `on`, `off`, or `on` with the device's changes.
    #[serde(default)]
    pub caches: Option<String>,
    /// `NAME=VALUE` settings.
    pub sets: Vec<String>,
    /// `default`, `on` or `off`.
    pub l1: Option<String>,
    /// 4 or 8.
    pub bank_mode: Option<u8>,
    /// `measured` or `documented`.
    pub shared_model: Option<String>,
    /// Named CuTe layouts the pattern may call.
    #[serde(default)]
    pub layout: Option<String>,
    /// Bytes per layout element.
    #[serde(default)]
    pub elem_bytes: Option<u32>,
    /// Settings the student cannot change (one of [`Setting::LOCKABLE`]).
    pub locked: Vec<Setting>,
    /// Conditions that must all hold.
    pub goals: Vec<Goal>,
    /// Hints, revealed one at a time.
    pub hints: Vec<Vec<Block>>,
    /// Multiple-choice questions.
    pub questions: Vec<Question>,
    /// A solution the tests (and a teacher) can check.
    pub solution: Option<Answer>,
}

/// A goal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    /// The condition (empty for a `keep` goal).
    pub check: String,
    /// What the student reads.
    pub text: String,
    /// `each`, `sum`, `any` or `lanes`.
    pub scope: String,
    /// Only instructions whose mnemonic contains this.
    pub select: Option<String>,
    /// Lines of the starting pattern that must stay as written, one after another (spaces aside): the loop
    /// and the read the task is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<String>,
    /// Code the pattern must use somewhere (its tokens, spaces and comments aside): the value the task is
    /// about, or a spelling of the idea.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uses: Option<String>,
}

/// What a goal reads besides the result's totals: the pattern as the student wrote it (for `keep`), and the
/// per-lane addresses of an instruction's first issue (for `addr(k)` and the `lanes` scope).
pub struct Subject<'a> {
    /// The pattern.
    pub text: &'a str,
    /// Lane by lane, the addresses of the instruction's first issue, `None` for an inactive lane; `None`
    /// when the instruction has no issue.
    pub first_issue: &'a dyn Fn(&InstrResult) -> Option<Vec<Option<u64>>>,
}

/// The addresses a goal's `addr` reads from an issue's report: the lanes' own, or for a copy its shared
/// destination (the pattern's left side), or for a generic access each lane's in the space it went to.
pub fn goal_addresses(r: &crate::model::report::Report) -> Vec<Option<u64>> {
    use crate::model::report::{Cost, SpaceTag};
    if r.addresses.iter().any(Option::is_some) {
        return r.addresses.clone();
    }
    let Cost::Split { parts } = &r.cost else { return r.addresses.clone() };
    if r.space == SpaceTag::GlobalToShared {
        if let Some(w) = parts.iter().find(|p| p.space == SpaceTag::Shared) {
            return w.addresses.clone();
        }
    }
    (0..r.addresses.len()).map(|l| parts.iter().find_map(|p| p.addresses.get(l).copied().flatten())).collect()
}

/// A line with its runs of white space made one space, for `keep`.
fn squeeze(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `want` (not empty) occurs in `have`, one after another.
fn contains_run<T: PartialEq>(have: &[T], want: &[T]) -> bool {
    !want.is_empty() && have.windows(want.len()).any(|w| w == want)
}

/// Whether `text` still has the lines `keep`, one after another (spaces and blank lines aside).
pub fn keeps(text: &str, keep: &str) -> bool {
    let lines = |t: &str| t.lines().map(squeeze).filter(|l| !l.is_empty()).collect::<Vec<_>>();
    contains_run(&lines(text), &lines(keep))
}

/// Whether `text` uses the code `code` somewhere: its tokens, one after another (spaces, line breaks and
/// comments aside). Text that does not lex uses nothing.
pub fn uses(text: &str, code: &str) -> bool {
    use crate::lang::lex::{lex, Tok};
    let toks = |t: &str| -> Option<Vec<Tok>> {
        let v: Vec<Tok> = lex(t).ok()?.into_iter().map(|t| t.tok).filter(|t| !matches!(t, Tok::End)).collect();
        Some(v)
    };
    let (Some(have), Some(want)) = (toks(text), toks(code)) else { return false };
    contains_run(&have, &want)
}

/// A multiple-choice question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    /// The question.
    pub text: Vec<Block>,
    /// The choices (inline Markdown).
    pub choices: Vec<Vec<Span2>>,
    /// The index of the right choice, from 0.
    pub answer: usize,
    /// Shown once answered.
    pub explain: Vec<Block>,
}

/// A student's answer to one exercise: what they changed, and their choices.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Answer {
    /// The pattern text.
    pub pattern: Option<String>,
    /// The language.
    pub lang: Option<String>,
    /// The instruction.
    pub op: Option<String>,
    /// The compute capability.
    pub cc: Option<String>,
    /// The block size.
    pub block: Option<String>,
    /// The grid size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<String>,
    /// The memory system setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches: Option<String>,
    /// `default`, `on`, `off`.
    pub l1: Option<String>,
    /// 4 or 8.
    pub bank_mode: Option<u8>,
    /// `measured` or `documented`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_model: Option<String>,
    /// Named CuTe layouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// Bytes per layout element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elem_bytes: Option<u32>,
    /// `NAME=VALUE` settings.
    pub sets: Option<Vec<String>>,
    /// The chosen answer of each question (index from 0), in order.
    pub choices: Vec<Option<usize>>,
}

/// A student's saved answers, as the page exports them and `warpscope check` reads them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Answers {
    /// The lab's title (informative).
    pub lab: String,
    /// The student's name, as they typed it on the page (the file's name carries it too).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub student: String,
    /// Answers by exercise id.
    pub answers: BTreeMap<String, Answer>,
}

/// The file name a student's answers are saved under: `answers-LAB-NAME.json`, each part in lower case with
/// runs of other characters as one `-` (`answers-caches-across-warps-and-blocks-ada-lovelace.json`).
pub fn answers_file_name(lab: &str, student: &str) -> String {
    let slug = |t: &str| {
        let mut out = String::new();
        // ASCII letters in lower case; other letters as they are (Unicode's case tables would cost the page's
        // main module more than the rest of this file).
        for c in t.chars().map(|c| c.to_ascii_lowercase()) {
            if c.is_ascii_alphanumeric() || !c.is_ascii() {
                out.push(c);
            } else if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
        }
        out.trim_end_matches('-').chars().take(60).collect::<String>()
    };
    let parts: Vec<String> = [slug(lab), slug(student)].into_iter().filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        "answers.json".into()
    } else {
        format!("answers-{}.json", parts.join("-"))
    }
}

/// Parses a goal condition; `offset` is where its text starts in `src` (for error positions).
pub fn parse_condition(src: &str, text: &str, offset: usize) -> Result<Ex, InputError> {
    let mut toks = lex(text).map_err(|e| InputError::at(src, Span { start: offset, end: offset + 1 }, e.message))?;
    for t in &mut toks {
        t.span = Span { start: t.span.start + offset, end: t.span.end + offset };
    }
    let mut p = Parser::new(src, toks);
    let e = p.ternary()?;
    if !matches!(p.peek(), Tok::End) {
        return Err(p.err(format!("expected an operator or the end of the condition, found {}", p.describe())));
    }
    check_names(src, &e)?;
    Ok(e)
}

/// The names a `lanes` goal reads besides the metrics: the lane and its address.
pub const LANE_NAMES: [&str; 2] = ["lane", "addr"];

/// The number of different addresses the active lanes of an instruction's first issue give (any scope).
pub const DISTINCT: &str = "distinct";

/// The number of different address patterns among the selected instructions (their first issues compared lane
/// by lane): three loads of three neighbours are 3, one address read three times is 1 (any scope).
pub const PATTERNS: &str = "patterns";

/// Whether a condition reads `lane` or `addr` (only a `lanes` goal can).
pub fn reads_lane(e: &Ex) -> bool {
    use crate::lang::cexpr::E;
    match &e.kind {
        E::Name(n) => LANE_NAMES.contains(&n.as_str()),
        E::Unary(_, a) => reads_lane(a),
        E::Binary(_, a, b) => reads_lane(a) || reads_lane(b),
        E::Ternary(c, a, b) => reads_lane(c) || reads_lane(a) || reads_lane(b),
        E::Call(_, args) => args.iter().any(reads_lane),
        _ => false,
    }
}

fn check_names(src: &str, e: &Ex) -> Result<(), InputError> {
    use crate::lang::cexpr::E;
    match &e.kind {
        E::Name(n)
            if !METRICS.contains(&n.as_str()) && !LANE_NAMES.contains(&n.as_str()) && n != DISTINCT && n != PATTERNS =>
        {
            Err(InputError::at(
                src,
                e.span,
                format!(
                    "unknown metric `{n}` (known: {}, {DISTINCT}, {PATTERNS}, addr(k); in a `lanes` goal also lane, addr)",
                    METRICS.join(", ")
                ),
            ))
        }
        E::Call(f, args) if f == "addr" && args.len() == 1 => check_names(src, &args[0]),
        E::Call(f, _) if f == "addr" => Err(InputError::at(src, e.span, "`addr(k)` takes one lane number")),
        E::Unary(_, a) => check_names(src, a),
        E::Binary(_, a, b) => check_names(src, a).and_then(|_| check_names(src, b)),
        E::Ternary(c, a, b) => check_names(src, c).and_then(|_| check_names(src, a)).and_then(|_| check_names(src, b)),
        E::Name(_) | E::Int(_) => Ok(()),
        _ => Err(InputError::at(
            src,
            e.span,
            "a goal uses metrics, numbers, addr(k), comparisons, && || ! and arithmetic",
        )),
    }
}

impl Exercise {
    /// True if the student may not change `setting`.
    pub fn is_locked(&self, setting: Setting) -> bool {
        self.locked.contains(&setting)
    }

    /// The exercise's view with a student's answer applied (locked settings keep the exercise's values).
    /// Errors name the setting.
    pub fn scenario(&self, answer: Option<&Answer>) -> Result<Scenario, (Setting, String)> {
        let theirs = |s: Setting| -> Option<String> {
            let a = answer.filter(|_| !self.is_locked(s))?;
            match s {
                Setting::Cc => a.cc.clone(),
                Setting::Lang => a.lang.clone(),
                Setting::Op => a.op.clone(),
                Setting::Block => a.block.clone(),
                Setting::Grid => a.grid.clone(),
                Setting::Caches => a.caches.clone(),
                Setting::Pattern => a.pattern.clone(),
                Setting::L1 => a.l1.clone(),
                Setting::BankMode => a.bank_mode.map(|b| b.to_string()),
                Setting::SharedModel => a.shared_model.clone(),
                Setting::Layout => a.layout.clone(),
                Setting::ElemBytes => a.elem_bytes.map(|b| b.to_string()),
                _ => None,
            }
        };
        let mine = |s: Setting| -> Option<String> {
            match s {
                Setting::Cc => self.cc.clone(),
                Setting::Lang => self.lang.clone(),
                Setting::Op => self.op.clone(),
                Setting::Block => self.block.clone(),
                Setting::Grid => self.grid.clone(),
                Setting::Caches => self.caches.clone(),
                Setting::Pattern => Some(self.pattern.clone()),
                Setting::L1 => self.l1.clone(),
                Setting::BankMode => self.bank_mode.map(|b| b.to_string()),
                Setting::SharedModel => self.shared_model.clone(),
                Setting::Layout => self.layout.clone(),
                Setting::ElemBytes => self.elem_bytes.map(|b| b.to_string()),
                _ => None,
            }
        };
        let mut sc = Scenario { text: String::new(), ..Scenario::default() };
        // Every lockable setting the exercise or the answer gives (the sets follow as one list).
        for s in Setting::LOCKABLE {
            if let Some(v) = theirs(s).or_else(|| mine(s)) {
                sc.set(s, &v).map_err(|e| (s, e.error.message))?;
            }
        }
        sc.sets = match answer.and_then(|a| a.sets.clone()) {
            Some(s) if !self.is_locked(Setting::Sets) => s,
            _ => self.sets.clone(),
        };
        Ok(sc)
    }
}

/// The metrics of one instruction (or a sum), in the order of [`METRICS`], as integers: efficiency and the
/// hit rates in percent (0..100, rounded down) and sectors_per_request in hundredths. `caches`: the modelled
/// memory system's figures for the instruction, when it ran.
pub fn metrics_of(i: &InstrResult, caches: Option<&SiteTraffic>) -> [i128; METRICS.len()] {
    let mem = i.memory.clone().unwrap_or_default();
    let banks = i.banks.clone().unwrap_or_default();
    let t = caches.copied().unwrap_or_default();
    // The L1 hit rate is the loads' (atomics and stores never hit).
    let l1 = if i.atomic.is_none() && !i.op.starts_with("ST") { t.l1 } else { Default::default() };
    let pct = |hits: u64, sectors: u64| if sectors == 0 { 0 } else { i128::from(hits) * 100 / i128::from(sectors) };
    [
        i128::from(mem.requests),
        i128::from(mem.lines),
        i128::from(mem.sectors),
        i128::from(mem.transactions),
        i128::from(mem.transaction_bytes),
        i128::from(mem.bytes_requested),
        i128::from(mem.bytes_unique),
        i128::from(mem.bytes_moved),
        (mem.efficiency * 100.0).floor() as i128,
        (mem.sectors_per_request * 100.0).round() as i128,
        i128::from(banks.wavefronts),
        i128::from(banks.ideal_wavefronts),
        i128::from(banks.bank_conflicts),
        i128::from(banks.conflict_degree),
        i128::from(i.warps),
        i128::from(i.active_lanes),
        i128::from(i.size),
        1,
        pct(l1.hits, l1.sectors),
        pct(t.l2.hits, t.l2.sectors),
        i128::from(l1.hits),
        i128::from(l1.sectors),
        i128::from(t.l2.hits),
        i128::from(t.l2.sectors),
        i128::from(t.dram_read_bytes),
        i128::from(i.atomic.map_or(0, |a| a.ops)),
        i128::from(i.atomic.map_or(0, |a| a.serial)),
        i128::from(i.constant.map_or(0, |k| k.passes)),
        i128::from(i.misaligned_lanes),
        i128::from(i.error_lanes),
    ]
}

/// The position of metric `name` in [`METRICS`] (and in [`metrics_of`]'s values).
fn metric(name: &str) -> Option<usize> {
    METRICS.iter().position(|m| *m == name)
}

/// A goal's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoalResult {
    /// What the student reads.
    pub text: String,
    /// The condition.
    pub check: String,
    /// Whether it holds.
    pub pass: bool,
    /// Why not, when it does not.
    pub detail: String,
}

/// Replaces each `addr(k)` of a condition by lane k's address in `addrs` (an instruction's first issue).
fn bind_addr(e: &Ex, var: &dyn Fn(&str) -> Option<i128>, addrs: Option<&[Option<u64>]>) -> Result<Ex, expr::EvalError> {
    use crate::lang::cexpr::E;
    let sub = |x: &Ex| bind_addr(x, var, addrs).map(Box::new);
    let kind = match &e.kind {
        E::Call(f, args) if f == "addr" && args.len() == 1 => {
            let k = expr::eval(&bind_addr(&args[0], var, addrs)?, var)?;
            let fail = |message: String| Err(expr::EvalError { message, span: e.span });
            let Some(addrs) = addrs else { return fail("the instruction has no issue to read addresses from".into()) };
            match usize::try_from(k).ok().and_then(|k| addrs.get(k)) {
                Some(Some(a)) => E::Int(i128::from(*a)),
                Some(None) => return fail(format!("lane {k} is not active in the instruction's first issue")),
                None => return fail(format!("there is no lane {k} (lanes are 0 to {})", addrs.len().max(1) - 1)),
            }
        }
        E::Unary(op, a) => E::Unary(*op, sub(a)?),
        E::Binary(op, a, b) => E::Binary(*op, sub(a)?, sub(b)?),
        E::Ternary(c, a, b) => E::Ternary(sub(c)?, sub(a)?, sub(b)?),
        k => k.clone(),
    };
    Ok(Ex { kind, span: e.span, op_span: e.op_span })
}

/// Checks a goal against a program's results and the pattern that gave them.
pub fn check_goal(g: &Goal, subject: &Subject, r: &ProgramResult) -> GoalResult {
    let check = g.check.clone();
    let fail = |detail: String| GoalResult { text: g.text.clone(), check: check.clone(), pass: false, detail };
    if let Some(keep) = &g.keep {
        let pass = keeps(subject.text, keep);
        let detail = if pass {
            String::new()
        } else {
            format!("`{}` must stay as it was", keep.trim().lines().map(str::trim).collect::<Vec<_>>().join(" "))
        };
        return GoalResult { text: g.text.clone(), check, pass, detail };
    }
    if let Some(code) = &g.uses {
        let pass = uses(subject.text, code);
        let detail = if pass { String::new() } else { format!("the pattern must use `{}`", code.trim()) };
        return GoalResult { text: g.text.clone(), check, pass, detail };
    }
    let Ok(cond) = parse_condition(&check, &check, 0) else { return fail("the condition does not parse".into()) };
    let selected: Vec<&InstrResult> =
        r.instructions.iter().filter(|i| g.select.as_ref().is_none_or(|s| i.op.contains(s.as_str()))).collect();
    if selected.is_empty() {
        return fail(match &g.select {
            Some(s) => format!("no memory instruction matches `{s}`"),
            None => "the program has no memory instruction".into(),
        });
    }
    // `addr(k)` and the `lanes` scope read an instruction's first issue, fetched only when the goal reads it.
    let reads_addresses =
        g.scope == "lanes" || check.contains("addr") || check.contains(DISTINCT) || check.contains(PATTERNS);
    let firsts: Vec<Option<Vec<Option<u64>>>> =
        selected.iter().map(|i| if reads_addresses { (subject.first_issue)(i) } else { None }).collect();
    let patterns = firsts.iter().flatten().collect::<std::collections::BTreeSet<_>>().len() as i128;
    // A condition that cannot be evaluated on these numbers (a division by zero, an overflow, an inactive
    // lane) is not met, and says so: it is not read as false.
    let holds = |m: &[i128; METRICS.len()], addrs: Option<&[Option<u64>]>, lane: Option<(usize, u64)>| {
        let var = |n: &str| match (n, lane) {
            ("lane", Some((l, _))) => Some(l as i128),
            ("addr", Some((_, a))) => Some(i128::from(a)),
            (PATTERNS, _) => Some(patterns),
            (DISTINCT, _) => addrs.map(|a| {
                let set: std::collections::BTreeSet<u64> = a.iter().flatten().copied().collect();
                set.len() as i128
            }),
            _ => metric(n).map(|k| m[k]),
        };
        expr::eval(&bind_addr(&cond, &var, addrs)?, &var).map(|v| v != 0)
    };
    let cannot =
        |at: String, e: expr::EvalError| (false, format!("the condition cannot be evaluated {at}: {}", e.message));
    let at = |i: &InstrResult| format!("on line {} ({})", i.line, i.op);
    let traffic = |i: &InstrResult| -> Option<&SiteTraffic> {
        r.caches.as_ref()?.instructions.iter().find(|c| c.site == i.site).map(|c| &c.traffic)
    };
    let each: Vec<[i128; METRICS.len()]> = selected.iter().map(|i| metrics_of(i, traffic(i))).collect();
    let (pass, detail) = match g.scope.as_str() {
        "sum" => {
            let mut sum = [0i128; METRICS.len()];
            for m in &each {
                for (s, v) in sum.iter_mut().zip(m) {
                    *s += v;
                }
            }
            // Ratios do not add up: recompute them from the sums.
            let of = |name: &str| metric(name).map_or(0, |k| sum[k]);
            let ratio = |num: &str, den: &str| if of(den) == 0 { 0 } else { of(num) * 100 / of(den) };
            for (name, v) in [
                ("efficiency", ratio("bytes_unique", "bytes_moved")),
                ("sectors_per_request", ratio("sectors", "requests")),
                ("l1_hit_rate", ratio("l1_hits", "l1_sectors")),
                ("l2_hit_rate", ratio("l2_hits", "l2_sectors")),
            ] {
                if let Some(k) = metric(name) {
                    sum[k] = v;
                }
            }
            match holds(&sum, firsts[0].as_deref(), None) {
                Ok(true) => (true, String::new()),
                Ok(false) => (false, "the block's totals do not meet it yet".into()),
                Err(e) => cannot("on the block's totals".into(), e),
            }
        }
        "any" => {
            let outcomes: Vec<_> = each.iter().zip(&firsts).map(|(m, f)| holds(m, f.as_deref(), None)).collect();
            if outcomes.iter().any(|o| matches!(o, Ok(true))) {
                (true, String::new())
            } else {
                match outcomes.into_iter().zip(&selected).find_map(|(o, i)| o.err().map(|e| (i, e))) {
                    Some((i, e)) => cannot(at(i), e),
                    None => (false, "no instruction meets it yet".into()),
                }
            }
        }
        "lanes" => {
            let mut outcome = (true, String::new());
            'instrs: for ((m, first), i) in each.iter().zip(&firsts).zip(&selected) {
                let Some(addrs) = first else {
                    outcome = (false, format!("line {} ({}) has no issue to check", i.line, i.op));
                    break;
                };
                for (l, a) in addrs.iter().enumerate().filter_map(|(l, a)| a.map(|a| (l, a))) {
                    match holds(m, Some(addrs), Some((l, a))) {
                        Ok(true) => {}
                        Ok(false) => {
                            outcome = (
                                false,
                                format!(
                                    "lane {l} (address {}) on line {} ({}) does not meet it yet",
                                    crate::text::hex(a),
                                    i.line,
                                    i.op
                                ),
                            );
                            break 'instrs;
                        }
                        Err(e) => {
                            outcome = cannot(format!("for lane {l} {}", at(i)), e);
                            break 'instrs;
                        }
                    }
                }
            }
            outcome
        }
        _ => match each.iter().zip(&firsts).zip(&selected).find_map(|((m, f), i)| match holds(m, f.as_deref(), None) {
            Ok(true) => None,
            Ok(false) => Some((false, format!("line {} ({}) does not meet it yet", i.line, i.op))),
            Err(e) => Some(cannot(at(i), e)),
        }) {
            None => (true, String::new()),
            Some(failed) => failed,
        },
    };
    GoalResult { text: g.text.clone(), check, pass, detail }
}

/// The grade of one exercise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExerciseGrade {
    /// The exercise id.
    pub id: String,
    /// The goals' outcomes.
    pub goals: Vec<GoalResult>,
    /// For each question: answered correctly?
    pub questions: Vec<bool>,
    /// All goals pass and every question is answered correctly.
    pub done: bool,
    /// Why the answer could not be run, if it could not.
    pub error: Option<String>,
}

/// The goal addresses ([`goal_addresses`]) of instruction `i`'s first issue in a scenario's result.
fn first_issue(sc: &Scenario, r: &ProgramResult, i: &InstrResult) -> Option<Vec<Option<u64>>> {
    let k = r.instructions.iter().position(|x| x.site == i.site)?;
    sc.report(r, k, 0).ok().flatten().map(|rep| goal_addresses(&rep))
}

/// Grades one exercise with an answer (or its starting view): runs the answer's scenario.
pub fn grade_exercise(ex: &Exercise, answer: Option<&Answer>) -> ExerciseGrade {
    let result = ex
        .scenario(answer)
        .map_err(|(s, m)| format!("{s}: {m}"))
        .and_then(|sc| sc.run().map(|r| (sc, r)).map_err(|e| e.to_string()));
    let goals = result.map(|(sc, r)| {
        let first_issue = |i: &InstrResult| first_issue(&sc, &r, i);
        let subject = Subject { text: &sc.text, first_issue: &first_issue };
        ex.goals.iter().map(|g| check_goal(g, &subject, &r)).collect::<Vec<_>>()
    });
    grade_result(ex, answer, goals.as_deref().map_err(String::clone))
}

/// Grades one exercise from its goals checked against the result its answer's scenario gave ([`check_goal`]),
/// or why it did not run. The page's analysis worker checks the goals with the result it computes, so the
/// page's main thread neither runs a scenario nor evaluates a goal's condition.
pub fn grade_result(ex: &Exercise, answer: Option<&Answer>, goals: Result<&[GoalResult], String>) -> ExerciseGrade {
    let id = ex.id.clone();
    let questions: Vec<bool> = ex
        .questions
        .iter()
        .enumerate()
        .map(|(k, q)| answer.and_then(|a| a.choices.get(k).copied().flatten()) == Some(q.answer))
        .collect();
    let unmet = |detail: &str| -> Vec<GoalResult> {
        ex.goals
            .iter()
            .map(|g| GoalResult { text: g.text.clone(), check: g.check.clone(), pass: false, detail: detail.into() })
            .collect()
    };
    match goals {
        // Outcomes of this exercise's goals (not those of the exercise shown before, still on their way).
        Ok(goals) if goals.len() == ex.goals.len() && goals.iter().zip(&ex.goals).all(|(r, g)| r.check == g.check) => {
            let done = goals.iter().all(|g| g.pass) && questions.iter().all(|q| *q);
            ExerciseGrade { id, goals: goals.to_vec(), questions, done, error: None }
        }
        Ok(_) => ExerciseGrade { id, goals: unmet("being checked"), questions, done: false, error: None },
        Err(e) => ExerciseGrade { id, goals: unmet("the answer does not run"), questions, done: false, error: Some(e) },
    }
}

/// Grades a whole lab.
pub fn grade(lab: &Course, answers: &Answers) -> Vec<ExerciseGrade> {
    lab.exercises.iter().map(|ex| grade_exercise(ex, answers.answers.get(&ex.id))).collect()
}
