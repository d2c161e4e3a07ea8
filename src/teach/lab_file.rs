//! Lab files as teachers write them (TOML with Markdown text): reading, checking with line:column errors,
//! and compiling into a [`Course`]. The page runs this in a worker (`src/bin/warpscope-lab.rs`) so its main
//! module carries neither parser.

use crate::lang::{InputError, Span};
use crate::scenario::Setting;
use crate::teach::lab::{keeps, parse_condition, reads_lane, Answer, Block, Course, Exercise, Goal, Question, Span2};
use serde::Deserialize;
use toml::Spanned;

/// A lab file: a title, an introduction and its exercises.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLab {
    /// The lab's title.
    pub title: String,
    /// Markdown shown before the first exercise.
    #[serde(default)]
    pub intro: String,
    /// The exercises, in order.
    #[serde(rename = "exercise", default)]
    pub exercises: Vec<RawExercise>,
}

/// One exercise.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExercise {
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
    /// The grid size.
    #[serde(default)]
    pub grid: Option<Spanned<String>>,
    /// The memory system (docs/model.md#the-memory-system): `on`, `off`, or `on` with the device's changes.
    #[serde(default)]
    pub caches: Option<Spanned<String>>,
    /// `NAME=VALUE` settings.
    #[serde(default)]
    pub sets: Vec<String>,
    /// `default`, `on` or `off`.
    #[serde(default)]
    pub l1: Option<Spanned<String>>,
    /// 4 or 8.
    #[serde(default)]
    pub bank_mode: Option<u8>,
    /// `measured` or `documented`.
    #[serde(default)]
    pub shared_model: Option<Spanned<String>>,
    /// Named CuTe layouts the pattern may call.
    #[serde(default)]
    pub layout: Option<Spanned<String>>,
    /// Bytes per layout element.
    #[serde(default)]
    pub elem_bytes: Option<Spanned<u32>>,
    /// Settings the student cannot change.
    #[serde(default)]
    pub locked: Vec<Spanned<String>>,
    /// Conditions that must all hold.
    #[serde(rename = "goal", default)]
    pub goals: Vec<RawGoal>,
    /// Hints, revealed one at a time.
    #[serde(default)]
    pub hints: Vec<String>,
    /// Multiple-choice questions about the figure.
    #[serde(rename = "question", default)]
    pub questions: Vec<RawQuestion>,
    /// A solution the tests (and a teacher) can check; not shown to students.
    #[serde(default)]
    pub solution: Option<Answer>,
}

/// A goal.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGoal {
    /// The condition, e.g. `bank_conflicts == 0 && sectors <= 8`.
    #[serde(default)]
    pub check: Option<Spanned<String>>,
    /// Instead of a condition: lines of the starting pattern that must stay as written, one after another.
    #[serde(default)]
    pub keep: Option<Spanned<String>>,
    /// Instead of a condition: code the pattern must use, anywhere (its tokens, spaces and comments aside):
    /// the value the task is about (`in[i] & 1`), a spelling of an idea (`__restrict__`).
    #[serde(default)]
    pub uses: Option<Spanned<String>>,
    /// What the student reads.
    pub text: String,
    /// `each` (default), `sum`, `any` or `lanes` (every active lane of the instruction's first issue, with
    /// `lane` and `addr`).
    #[serde(default)]
    pub scope: Option<Spanned<String>>,
    /// Only instructions whose mnemonic contains this.
    #[serde(default)]
    pub select: Option<String>,
}

/// A multiple-choice question.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawQuestion {
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

fn span_of<T>(s: &Spanned<T>) -> Span {
    let r = s.span();
    Span { start: r.start, end: r.end }
}

/// The largest lab file read (1 MB): the page, `warpscope check` and `warpscope-lab` refuse larger ones.
pub const MAX_LAB_BYTES: usize = 1 << 20;

/// Reads and checks a lab file: TOML syntax, fields, goal conditions, question answers, locked names, and
/// that every exercise's starting view runs. Errors name the line and column.
pub fn parse(src: &str) -> Result<Course, InputError> {
    if src.len() > MAX_LAB_BYTES {
        return Err(InputError::at(
            src,
            Span { start: 0, end: 1 },
            format!("the lab file is {} bytes; a lab file may have at most {MAX_LAB_BYTES} (1 MB)", src.len()),
        ));
    }
    let lab: RawLab = toml::from_str(src).map_err(|e| {
        let span = e.span().map_or(Span { start: 0, end: 1 }, |r| Span { start: r.start, end: r.end.max(r.start + 1) });
        InputError::at(src, span, e.message().to_string())
    })?;
    if lab.exercises.is_empty() {
        return Err(InputError::at(src, Span { start: 0, end: 1 }, "a lab needs at least one [[exercise]]"));
    }
    let mut ids: Vec<&str> = Vec::new();
    for ex in &lab.exercises {
        if ids.contains(&ex.id.get_ref().as_str()) {
            return Err(InputError::at(
                src,
                span_of(&ex.id),
                format!("a second exercise with id `{}`", ex.id.get_ref()),
            ));
        }
        ids.push(ex.id.get_ref());
        for l in &ex.locked {
            if !lockable(l.get_ref()) {
                let names: Vec<&str> = Setting::LOCKABLE.iter().map(|s| s.name()).collect();
                return Err(InputError::at(
                    src,
                    span_of(l),
                    format!("`{}` cannot be locked (lockable: {})", l.get_ref(), names.join(", ")),
                ));
            }
        }
        for g in &ex.goals {
            let lanes = g.scope.as_ref().is_some_and(|s| s.get_ref() == "lanes");
            if let Some(s) = &g.scope {
                if !matches!(s.get_ref().as_str(), "each" | "sum" | "any" | "lanes") {
                    return Err(InputError::at(src, span_of(s), "a goal's scope is `each`, `sum`, `any` or `lanes`"));
                }
            }
            if let Some(u) = &g.uses {
                if g.check.is_some() || g.keep.is_some() {
                    return Err(InputError::at(src, span_of(u), "a goal has one of `check`, `keep` and `uses`"));
                }
                match crate::lang::lex::lex(u.get_ref()) {
                    Ok(t) if t.iter().any(|t| !matches!(t.tok, crate::lang::lex::Tok::End)) => {}
                    Ok(_) => return Err(InputError::at(src, span_of(u), "`uses` names no code")),
                    Err(e) => return Err(InputError::at(src, span_of(u), format!("`uses`: {}", e.message))),
                }
                continue;
            }
            match (&g.check, &g.keep) {
                (Some(c), None) => {
                    let cond = parse_condition(src, c.get_ref(), span_of(c).start + 1)?;
                    if !lanes && reads_lane(&cond) {
                        return Err(InputError::at(
                            src,
                            span_of(c),
                            "`lane` and `addr` are a lane's: this goal needs scope = \"lanes\"",
                        ));
                    }
                }
                (None, Some(k)) if !keeps(ex.pattern.get_ref(), k.get_ref()) => {
                    return Err(InputError::at(
                        src,
                        span_of(k),
                        "`keep` names lines the starting pattern does not have",
                    ));
                }
                (None, Some(_)) => {}
                (Some(_), Some(k)) => {
                    return Err(InputError::at(src, span_of(k), "a goal has a `check` or a `keep`, not both"));
                }
                (None, None) => {
                    return Err(InputError::at(src, span_of(&ex.id), "a goal needs a `check`, a `keep` or a `uses`"));
                }
            }
        }
        for q in &ex.questions {
            if *q.answer.get_ref() >= q.choices.len() {
                return Err(InputError::at(
                    src,
                    span_of(&q.answer),
                    format!(
                        "answer {} is not one of the {} choices (counted from 0)",
                        q.answer.get_ref(),
                        q.choices.len()
                    ),
                ));
            }
        }
        let compiled = compile_exercise(ex);
        let sc = compiled.scenario(None).map_err(|(field, m)| InputError::at(src, ex.field_span(field), m))?;
        sc.layouts().map_err(|e| {
            let at = format!("layout {}:{}: {}", e.error.line, e.error.column, e.error.message);
            InputError::at(src, ex.field_span(Setting::Layout), at)
        })?;
        // Parsed and lowered, not run: the page runs it in its analysis worker anyway, and leaving the
        // executor out keeps the lab worker's module small.
        // A worker that lacks a language's front end leaves the check to the analysis worker that has it. The
        // memory system does not change whether a pattern lowers, and the lab worker does not carry it.
        let lowered = crate::scenario::Scenario { caches: None, ..sc };
        let checked = if lowered.lang.available() { lowered.analysis().map(|_| ()) } else { Ok(()) };
        checked.map_err(|e| {
            InputError::at(src, span_of(&ex.pattern), format!("the starting pattern does not run: {}", e.error.message))
        })?;
    }
    Ok(Course {
        title: lab.title.clone(),
        intro: markdown(&lab.intro),
        exercises: lab.exercises.iter().map(compile_exercise).collect(),
    })
}

fn inline(text: &str) -> Vec<Span2> {
    markdown(text)
        .into_iter()
        .flat_map(|b| match b {
            Block::Para(s) | Block::Heading(_, s) | Block::Item(s) => s,
            Block::Code(t) => vec![Span2 { text: t, code: true, em: false, strong: false, link: None }],
        })
        .collect()
}

/// True if a lab may lock the setting named `name`.
fn lockable(name: &str) -> bool {
    name.parse::<Setting>().is_ok_and(|s| Setting::LOCKABLE.contains(&s))
}

fn compile_exercise(ex: &RawExercise) -> Exercise {
    let get = |s: &Option<Spanned<String>>| s.as_ref().map(|x| x.get_ref().clone());
    Exercise {
        id: ex.id.get_ref().clone(),
        title: ex.title.clone(),
        text: markdown(&ex.text),
        lang: get(&ex.lang),
        pattern: ex.pattern.get_ref().clone(),
        op: get(&ex.op),
        cc: get(&ex.cc),
        block: get(&ex.block),
        grid: get(&ex.grid),
        caches: get(&ex.caches),
        sets: ex.sets.clone(),
        l1: get(&ex.l1),
        bank_mode: ex.bank_mode,
        shared_model: get(&ex.shared_model),
        layout: get(&ex.layout),
        elem_bytes: ex.elem_bytes.as_ref().map(|b| *b.get_ref()),
        locked: ex
            .locked
            .iter()
            .filter_map(|l| l.get_ref().parse().ok())
            .filter(|s| Setting::LOCKABLE.contains(s))
            .collect(),
        goals: ex
            .goals
            .iter()
            .map(|g| Goal {
                check: g.check.as_ref().map(|c| c.get_ref().clone()).unwrap_or_default(),
                keep: g.keep.as_ref().map(|k| k.get_ref().clone()),
                uses: g.uses.as_ref().map(|u| u.get_ref().clone()),
                text: g.text.clone(),
                scope: get(&g.scope).unwrap_or_else(|| "each".into()),
                select: g.select.clone(),
            })
            .collect(),
        hints: ex.hints.iter().map(|h| markdown(h)).collect(),
        questions: ex
            .questions
            .iter()
            .map(|q| Question {
                text: markdown(&q.text),
                choices: q.choices.iter().map(|c| inline(c)).collect(),
                answer: *q.answer.get_ref(),
                explain: markdown(&q.explain),
            })
            .collect(),
        solution: ex.solution.clone(),
    }
}

impl RawExercise {
    fn field_span(&self, setting: Setting) -> Span {
        let s = match setting {
            Setting::Cc => self.cc.as_ref().map(span_of),
            Setting::Lang => self.lang.as_ref().map(span_of),
            Setting::Op => self.op.as_ref().map(span_of),
            Setting::Block => self.block.as_ref().map(span_of),
            Setting::Grid => self.grid.as_ref().map(span_of),
            Setting::Caches => self.caches.as_ref().map(span_of),
            Setting::L1 => self.l1.as_ref().map(span_of),
            Setting::SharedModel => self.shared_model.as_ref().map(span_of),
            Setting::Layout => self.layout.as_ref().map(span_of),
            Setting::ElemBytes => self.elem_bytes.as_ref().map(span_of),
            _ => None,
        };
        s.unwrap_or_else(|| span_of(&self.pattern))
    }
}

// ------------------------------------------------------------------------------------------------------
// Markdown, rendered safely: parsed into a small tree the page draws as elements. Raw HTML is shown as text,
// and only http(s) and relative links are kept.
// ------------------------------------------------------------------------------------------------------

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
                let safe =
                    d.starts_with("https://") || d.starts_with("http://") || !(d.contains(':') || d.starts_with("//"));
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
            Event::End(TagEnd::Heading(_)) => {
                blocks.push(Block::Heading(heading.take().unwrap_or(3), std::mem::take(&mut spans)))
            }
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

#[cfg(test)]
mod tests {
    /// The page's lab worker is built without the code front ends and the cache model; the test command runs the
    /// `lean_build` tests in that build too (`cargo test --no-default-features --lib lean_build`). A lab whose
    /// expression exercise turns the memory system on loads there: checking that its pattern lowers does not
    /// need the cache model (it once refused the whole lab: "this build of warpscope has no memory-system
    /// model").
    #[test]
    fn lean_build_loads_a_lab_with_the_memory_system_on() {
        let src = r#"
title = "Caches"
intro = "The memory system on an expression."

[[exercise]]
id = "stride"
title = "1. A strided load"
text = "Make the load coalesced."
lang = "expr"
op = "LDG.E.32"
pattern = "8*tid"
block = "64"
caches = "on"
locked = ["caches"]
solution = { pattern = "4*tid" }

[[exercise.goal]]
check = "sectors <= 8"
text = "at most 8 sectors a block"
"#;
        let course = super::parse(src).unwrap_or_else(|e| panic!("the lab loads: {e}"));
        assert_eq!(course.exercises.len(), 1);
        let sc = course.exercises[0].scenario(None).expect("a scenario");
        assert!(sc.caches.is_some(), "the exercise keeps the memory system on");
    }
}
