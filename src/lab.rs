//! Course labs: exercises with goals, hints and questions, written by teachers as TOML files, and the
//! grading of a student's answers. The page shows a lab live; `warpscope check` grades saved answers.
//!
//! A goal is a condition in the expression language over the engine's metrics, for example
//! `bank_conflicts == 0 && sectors <= 8`, checked for each memory instruction (`scope = "each"`, the
//! default), for the block's sums (`"sum"`) or for at least one instruction (`"any"`), optionally only for
//! instructions whose mnemonic contains `select` (`select = "LDS"`).

use crate::arch::{BankMode, Cc, L1Choice};
use crate::launch::Dim3;
use crate::pattern::cexpr::{Ex, Parser};
use crate::pattern::lex::{lex, Tok};
use crate::pattern::{expr, InputError, Lang, Span};
use crate::scenario::Scenario;
use crate::trace::{InstrResult, ProgramResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

/// The metric names a goal may use.
pub const METRICS: [&str; 18] = [
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
];

/// Settings an exercise may lock so the student cannot change them.
pub const LOCKABLE: [&str; 8] = ["cc", "lang", "op", "block", "pattern", "l1", "bank_mode", "sets"];

/// A lab: a title, an introduction and its exercises.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lab {
    /// The lab's title.
    pub title: String,
    /// Markdown shown before the first exercise.
    #[serde(default)]
    pub intro: String,
    /// The exercises, in order.
    #[serde(rename = "exercise", default)]
    pub exercises: Vec<Exercise>,
}

/// One exercise.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exercise {
    /// A stable identifier (answers are saved under it).
    pub id: Spanned<String>,
    /// The title.
    pub title: String,
    /// The task, in Markdown.
    pub text: String,
    /// The starting language (`expr`, `cuda`, `sass`, `addresses`).
    #[serde(default)]
    pub lang: Option<Spanned<String>>,
    /// The starting pattern.
    pub pattern: Spanned<String>,
    /// The instruction (expressions and address lists).
    #[serde(default)]
    pub op: Option<Spanned<String>>,
    /// The compute capability.
    #[serde(default)]
    pub cc: Option<Spanned<String>>,
    /// The block size.
    #[serde(default)]
    pub block: Option<Spanned<String>>,
    /// `NAME=VALUE` settings.
    #[serde(default)]
    pub sets: Vec<String>,
    /// `default`, `on` or `off`.
    #[serde(default)]
    pub l1: Option<Spanned<String>>,
    /// 4 or 8.
    #[serde(default)]
    pub bank_mode: Option<u8>,
    /// Settings the student cannot change.
    #[serde(default)]
    pub locked: Vec<Spanned<String>>,
    /// Conditions that must all hold.
    #[serde(rename = "goal", default)]
    pub goals: Vec<Goal>,
    /// Hints, revealed one at a time.
    #[serde(default)]
    pub hints: Vec<String>,
    /// Multiple-choice questions about the figure.
    #[serde(rename = "question", default)]
    pub questions: Vec<Question>,
    /// A solution the tests (and a teacher) can check; not shown to students.
    #[serde(default)]
    pub solution: Option<Answer>,
}

/// A goal.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Goal {
    /// The condition, e.g. `bank_conflicts == 0 && sectors <= 8`.
    pub check: Spanned<String>,
    /// What the student reads.
    pub text: String,
    /// `each` (default), `sum` or `any`.
    #[serde(default)]
    pub scope: Option<Spanned<String>>,
    /// Only instructions whose mnemonic contains this.
    #[serde(default)]
    pub select: Option<String>,
}

/// A multiple-choice question.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The question.
    pub text: String,
    /// The choices.
    pub choices: Vec<String>,
    /// The index of the right choice, from 0.
    pub answer: Spanned<usize>,
    /// Shown once answered.
    #[serde(default)]
    pub explain: String,
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
    /// `default`, `on`, `off`.
    pub l1: Option<String>,
    /// 4 or 8.
    pub bank_mode: Option<u8>,
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
    /// Answers by exercise id.
    pub answers: BTreeMap<String, Answer>,
}

fn span_of<T>(s: &Spanned<T>) -> Span {
    let r = s.span();
    Span { start: r.start, end: r.end }
}

/// Parses a goal condition; `offset` is where its text starts in the file (for error positions).
fn parse_condition(src: &str, text: &str, offset: usize) -> Result<Ex, InputError> {
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

fn check_names(src: &str, e: &Ex) -> Result<(), InputError> {
    use crate::pattern::cexpr::E;
    match &e.kind {
        E::Name(n) if !METRICS.contains(&n.as_str()) => {
            Err(InputError::at(src, e.span, format!("unknown metric `{n}` (known: {})", METRICS.join(", "))))
        }
        E::Unary(_, a) => check_names(src, a),
        E::Binary(_, a, b) => check_names(src, a).and_then(|_| check_names(src, b)),
        E::Ternary(c, a, b) => check_names(src, c).and_then(|_| check_names(src, a)).and_then(|_| check_names(src, b)),
        E::Name(_) | E::Int(_) => Ok(()),
        _ => Err(InputError::at(src, e.span, "a goal uses metrics, numbers, comparisons, && || ! and arithmetic")),
    }
}

/// Reads and checks a lab file: TOML syntax, fields, goal conditions, question answers, locked names, and
/// that every exercise's starting view runs. Errors name the line and column.
pub fn parse(src: &str) -> Result<Lab, InputError> {
    let lab: Lab = toml::from_str(src).map_err(|e| {
        let span = e.span().map_or(Span { start: 0, end: 1 }, |r| Span { start: r.start, end: r.end.max(r.start + 1) });
        InputError::at(src, span, e.message().to_string())
    })?;
    if lab.exercises.is_empty() {
        return Err(InputError::at(src, Span { start: 0, end: 1 }, "a lab needs at least one [[exercise]]"));
    }
    let mut ids: Vec<&str> = Vec::new();
    for ex in &lab.exercises {
        if ids.contains(&ex.id.get_ref().as_str()) {
            return Err(InputError::at(src, span_of(&ex.id), format!("a second exercise with id `{}`", ex.id.get_ref())));
        }
        ids.push(ex.id.get_ref());
        for l in &ex.locked {
            if !LOCKABLE.contains(&l.get_ref().as_str()) {
                return Err(InputError::at(src, span_of(l), format!("`{}` cannot be locked (lockable: {})", l.get_ref(), LOCKABLE.join(", "))));
            }
        }
        for g in &ex.goals {
            parse_condition(src, g.check.get_ref(), span_of(&g.check).start + 1)?;
            if let Some(s) = &g.scope {
                if !matches!(s.get_ref().as_str(), "each" | "sum" | "any") {
                    return Err(InputError::at(src, span_of(s), "a goal's scope is `each`, `sum` or `any`"));
                }
            }
        }
        for q in &ex.questions {
            if *q.answer.get_ref() >= q.choices.len() {
                return Err(InputError::at(
                    src,
                    span_of(&q.answer),
                    format!("answer {} is not one of the {} choices (counted from 0)", q.answer.get_ref(), q.choices.len()),
                ));
            }
        }
        let sc = ex.scenario(None).map_err(|(field, m)| InputError::at(src, ex.field_span(field), m))?;
        sc.run().map_err(|e| InputError::at(src, span_of(&ex.pattern), format!("the starting pattern does not run: {}", e.error.message)))?;
    }
    Ok(lab)
}

impl Exercise {
    /// True if the student may not change `setting`.
    pub fn is_locked(&self, setting: &str) -> bool {
        self.locked.iter().any(|l| l.get_ref() == setting)
    }

    fn field_span(&self, field: &str) -> Span {
        let s = match field {
            "cc" => self.cc.as_ref().map(span_of),
            "lang" => self.lang.as_ref().map(span_of),
            "op" => self.op.as_ref().map(span_of),
            "block" => self.block.as_ref().map(span_of),
            "l1" => self.l1.as_ref().map(span_of),
            _ => None,
        };
        s.unwrap_or_else(|| span_of(&self.pattern))
    }

    /// The exercise's view with a student's answer applied (locked settings keep the exercise's values).
    /// Errors name the field.
    pub fn scenario(&self, answer: Option<&Answer>) -> Result<Scenario, (&'static str, String)> {
        let pick = |name: &str, mine: Option<&String>, theirs: Option<&Option<String>>| -> Option<String> {
            match theirs.and_then(|t| t.clone()) {
                Some(t) if !self.is_locked(name) => Some(t),
                _ => mine.cloned(),
            }
        };
        let base = Scenario::default();
        let cc = pick("cc", self.cc.as_ref().map(|s| s.get_ref()), answer.map(|a| &a.cc));
        let lang = pick("lang", self.lang.as_ref().map(|s| s.get_ref()), answer.map(|a| &a.lang));
        let op = pick("op", self.op.as_ref().map(|s| s.get_ref()), answer.map(|a| &a.op));
        let block = pick("block", self.block.as_ref().map(|s| s.get_ref()), answer.map(|a| &a.block));
        let l1 = pick("l1", self.l1.as_ref().map(|s| s.get_ref()), answer.map(|a| &a.l1));
        let pattern = pick("pattern", Some(self.pattern.get_ref()), answer.map(|a| &a.pattern)).unwrap_or_default();
        let bank_mode = match answer.and_then(|a| a.bank_mode) {
            Some(b) if !self.is_locked("bank_mode") => Some(b),
            _ => self.bank_mode,
        };
        let sets = match answer.and_then(|a| a.sets.clone()) {
            Some(s) if !self.is_locked("sets") => s,
            _ => self.sets.clone(),
        };
        let mut sc = Scenario { text: pattern, sets, ..base };
        if let Some(c) = cc {
            sc.cc = Cc::parse(&c).map_err(|m| ("cc", m))?;
        }
        if let Some(l) = lang {
            sc.lang = Lang::parse(&l).map_err(|m| ("lang", m))?;
        }
        if let Some(o) = op {
            sc.op = o;
        }
        if let Some(b) = block {
            sc.block = Dim3::parse(&b, "block").map_err(|m| ("block", m))?;
        }
        sc.config.l1 = match l1.as_deref() {
            None | Some("default") => L1Choice::Default,
            Some("on") => L1Choice::On,
            Some("off") => L1Choice::Off,
            Some(other) => return Err(("l1", format!("l1 is default, on or off, not `{other}`"))),
        };
        sc.config.bank_mode = match bank_mode {
            None | Some(4) => BankMode::FourByte,
            Some(8) => BankMode::EightByte,
            Some(other) => return Err(("bank_mode", format!("bank_mode is 4 or 8, not {other}"))),
        };
        Ok(sc)
    }
}

/// The metrics of one instruction (or a sum), by name, as integers: efficiency in percent (0..100) and
/// sectors_per_request in hundredths.
pub fn metrics_of(i: &InstrResult) -> BTreeMap<&'static str, i128> {
    let mut m = BTreeMap::new();
    let mem = i.memory.clone().unwrap_or_default();
    let banks = i.banks.clone().unwrap_or_default();
    m.insert("requests", i128::from(mem.requests));
    m.insert("lines", i128::from(mem.lines));
    m.insert("sectors", i128::from(mem.sectors));
    m.insert("transactions", i128::from(mem.transactions));
    m.insert("transaction_bytes", i128::from(mem.transaction_bytes));
    m.insert("bytes_requested", i128::from(mem.bytes_requested));
    m.insert("bytes_unique", i128::from(mem.bytes_unique));
    m.insert("bytes_moved", i128::from(mem.bytes_moved));
    m.insert("efficiency", (mem.efficiency * 100.0).floor() as i128);
    m.insert("sectors_per_request", (mem.sectors_per_request * 100.0).round() as i128);
    m.insert("wavefronts", i128::from(banks.wavefronts));
    m.insert("ideal_wavefronts", i128::from(banks.ideal_wavefronts));
    m.insert("bank_conflicts", i128::from(banks.bank_conflicts));
    m.insert("conflict_degree", i128::from(banks.conflict_degree));
    m.insert("warps", i128::from(i.warps));
    m.insert("lanes", i.issues.iter().map(|x| i128::from(x.active_lanes)).sum());
    m.insert("size", i128::from(i.size));
    m.insert("instructions", 1);
    m
}

/// A goal's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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

/// Checks a goal against a program's results.
pub fn check_goal(g: &Goal, r: &ProgramResult) -> GoalResult {
    let check = g.check.get_ref().clone();
    let fail = |detail: String| GoalResult { text: g.text.clone(), check: check.clone(), pass: false, detail };
    let Ok(cond) = parse_condition(&check, &check, 0) else { return fail("the condition does not parse".into()) };
    let selected: Vec<&InstrResult> = r
        .instructions
        .iter()
        .filter(|i| g.select.as_ref().is_none_or(|s| i.op.contains(s.as_str())))
        .collect();
    if selected.is_empty() {
        return fail(match &g.select {
            Some(s) => format!("no memory instruction matches `{s}`"),
            None => "the program has no memory instruction".into(),
        });
    }
    let holds = |m: &BTreeMap<&'static str, i128>| expr::eval(&cond, &|n| m.get(n).copied()).map(|v| v != 0).unwrap_or(false);
    let scope = g.scope.as_ref().map_or("each", |s| s.get_ref().as_str());
    let (pass, detail) = match scope {
        "sum" => {
            let mut sum: BTreeMap<&'static str, i128> = BTreeMap::new();
            for i in &selected {
                for (k, v) in metrics_of(i) {
                    *sum.entry(k).or_default() += v;
                }
            }
            // Ratios do not add up: recompute them from the sums.
            let moved = sum.get("bytes_moved").copied().unwrap_or(0);
            let eff = if moved == 0 { 0 } else { sum.get("bytes_unique").copied().unwrap_or(0) * 100 / moved };
            sum.insert("efficiency", eff);
            let req = sum.get("requests").copied().unwrap_or(0);
            let spr = if req == 0 { 0 } else { sum.get("sectors").copied().unwrap_or(0) * 100 / req };
            sum.insert("sectors_per_request", spr);
            let ok = holds(&sum);
            (ok, if ok { String::new() } else { "the block's totals do not meet it yet".into() })
        }
        "any" => {
            let ok = selected.iter().any(|i| holds(&metrics_of(i)));
            (ok, if ok { String::new() } else { "no instruction meets it yet".into() })
        }
        _ => match selected.iter().find(|i| !holds(&metrics_of(i))) {
            None => (true, String::new()),
            Some(i) => (false, format!("line {} ({}) does not meet it yet", i.line, i.op)),
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

/// Grades one exercise with an answer (or its starting view).
pub fn grade_exercise(ex: &Exercise, answer: Option<&Answer>) -> ExerciseGrade {
    let id = ex.id.get_ref().clone();
    let questions: Vec<bool> = ex
        .questions
        .iter()
        .enumerate()
        .map(|(k, q)| answer.and_then(|a| a.choices.get(k).copied().flatten()) == Some(*q.answer.get_ref()))
        .collect();
    let result = ex.scenario(answer).map_err(|(f, m)| format!("{f}: {m}")).and_then(|sc| sc.run().map_err(|e| e.to_string()));
    match result {
        Ok(r) => {
            let goals: Vec<GoalResult> = ex.goals.iter().map(|g| check_goal(g, &r)).collect();
            let done = goals.iter().all(|g| g.pass) && questions.iter().all(|q| *q);
            ExerciseGrade { id, goals, questions, done, error: None }
        }
        Err(e) => ExerciseGrade {
            id,
            goals: ex.goals.iter().map(|g| GoalResult { text: g.text.clone(), check: g.check.get_ref().clone(), pass: false, detail: "the answer does not run".into() }).collect(),
            questions,
            done: false,
            error: Some(e),
        },
    }
}

/// Grades a whole lab.
pub fn grade(lab: &Lab, answers: &Answers) -> Vec<ExerciseGrade> {
    lab.exercises.iter().map(|ex| grade_exercise(ex, answers.answers.get(ex.id.get_ref()))).collect()
}

// ------------------------------------------------------------------------------------------------------
// Markdown, rendered safely: parsed into a small tree the page draws as elements. Raw HTML is shown as text,
// and only http(s) and relative links are kept.
// ------------------------------------------------------------------------------------------------------

/// A run of text with its style.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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

/// A block of Markdown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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

/// Parses Markdown into blocks.
pub fn markdown(text: &str) -> Vec<Block> {
    use pulldown_cmark::{Event, HeadingLevel, Tag, TagEnd};
    let mut blocks = Vec::new();
    let mut spans: Vec<Span2> = Vec::new();
    let (mut em, mut strong, mut in_code_block) = (0u32, 0u32, false);
    let mut link: Option<String> = None;
    let mut code_text = String::new();
    let mut heading: Option<u8> = None;
    let push = |spans: &mut Vec<Span2>, t: &str, code: bool, em: u32, strong: u32, link: &Option<String>| {
        spans.push(Span2 { text: t.to_string(), code, em: em > 0, strong: strong > 0, link: link.clone() });
    };
    for ev in pulldown_cmark::Parser::new(text) {
        match ev {
            Event::Start(Tag::Emphasis) => em += 1,
            Event::End(TagEnd::Emphasis) => em = em.saturating_sub(1),
            Event::Start(Tag::Strong) => strong += 1,
            Event::End(TagEnd::Strong) => strong = strong.saturating_sub(1),
            Event::Start(Tag::Link { dest_url, .. }) => {
                let d = dest_url.to_string();
                let safe = d.starts_with("https://") || d.starts_with("http://") || !(d.contains(':') || d.starts_with("//"));
                link = safe.then_some(d);
            }
            Event::End(TagEnd::Link) => link = None,
            Event::Start(Tag::Heading { level, .. }) => {
                heading = Some(match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    HeadingLevel::H3 => 3,
                    HeadingLevel::H4 => 4,
                    HeadingLevel::H5 => 5,
                    HeadingLevel::H6 => 6,
                })
            }
            Event::End(TagEnd::Heading(_)) => blocks.push(Block::Heading(heading.take().unwrap_or(3), std::mem::take(&mut spans))),
            Event::End(TagEnd::Paragraph) if !spans.is_empty() => blocks.push(Block::Para(std::mem::take(&mut spans))),
            Event::End(TagEnd::Item) if !spans.is_empty() => blocks.push(Block::Item(std::mem::take(&mut spans))),
            Event::Start(Tag::Item) if !spans.is_empty() => blocks.push(Block::Item(std::mem::take(&mut spans))),
            Event::Start(Tag::CodeBlock(_)) => {
                in_code_block = true;
                code_text.clear();
            }
            Event::End(TagEnd::CodeBlock) => {
                in_code_block = false;
                blocks.push(Block::Code(std::mem::take(&mut code_text)));
            }
            Event::Text(t) if in_code_block => code_text.push_str(&t),
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => push(&mut spans, &t, false, em, strong, &link),
            Event::Code(t) => push(&mut spans, &t, true, em, strong, &link),
            Event::SoftBreak | Event::HardBreak => push(&mut spans, " ", false, em, strong, &link),
            _ => {}
        }
    }
    if !spans.is_empty() {
        blocks.push(Block::Para(spans));
    }
    blocks
}
