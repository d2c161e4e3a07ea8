//! The lab panel: the exercise list, the task (Markdown drawn as elements), live goals, hints, questions
//! and the done state. Grading is the same function `warpscope check` uses.

use super::state::{Action, State};
use crate::teach::lab::{grade_result, Block, Span2};
use yew::prelude::*;

fn spans(v: &[Span2]) -> Html {
    v.iter()
        .map(|s| {
            let mut node = if s.code {
                html! { <code>{ s.text.clone() }</code> }
            } else {
                html! { { s.text.clone() } }
            };
            if s.em {
                node = html! { <em>{ node }</em> };
            }
            if s.strong {
                node = html! { <strong>{ node }</strong> };
            }
            match &s.link {
                Some(href) => html! { <a href={href.clone()} target="_blank" rel="noopener noreferrer">{ node }</a> },
                None => node,
            }
        })
        .collect()
}

/// Markdown blocks as elements (text is always text: no HTML from the lab file reaches the DOM). Their
/// headings are `h4`, under the exercise's `h3`.
pub fn blocks(parsed: &[Block]) -> Html {
    let mut out = Vec::new();
    let mut items = Vec::new();
    let flush = |items: &mut Vec<Html>, out: &mut Vec<Html>| {
        if !items.is_empty() {
            out.push(html! { <ul>{ for items.drain(..) }</ul> });
        }
    };
    for b in parsed.iter().cloned() {
        match b {
            Block::Item(s) => items.push(html! { <li>{ spans(&s) }</li> }),
            other => {
                flush(&mut items, &mut out);
                out.push(match other {
                    Block::Para(s) => html! { <p>{ spans(&s) }</p> },
                    Block::Heading(_, s) => html! { <h4>{ spans(&s) }</h4> },
                    Block::Code(t) => html! { <pre class="mono">{ t }</pre> },
                    Block::Item(_) => html! {},
                });
            }
        }
    }
    flush(&mut items, &mut out);
    out.into_iter().collect()
}

/// Where the page remembers whether the exercise text is open (for every lab and exercise alike: a teacher who
/// folds it away to project the figure keeps it folded).
const TASK_OPEN_KEY: &str = "warpscope-lab-task";

/// The task's properties.
#[derive(Properties, PartialEq)]
struct TaskProps {
    /// The exercise title, always shown.
    title: AttrValue,
    /// The text that folds away.
    children: Html,
}

/// The exercise's title and text, which the student can fold away to bring the pattern up; remembered in
/// this browser.
#[component(Task)]
fn task(props: &TaskProps) -> Html {
    let open = use_state(|| super::browser::load(TASK_OPEN_KEY).as_deref() != Some("closed"));
    let ontoggle = {
        let open = open.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::Element = e.target_unchecked_into();
            let now = el.has_attribute("open");
            super::browser::save(TASK_OPEN_KEY, if now { "open" } else { "closed" });
            open.set(now);
        })
    };
    html! {
        <details id="task" class="task" open={*open} {ontoggle}>
            <summary title={if *open { "hide the exercise text" } else { "show the exercise text" }}><h3>{ props.title.clone() }</h3></summary>
            { props.children.clone() }
        </details>
    }
}

/// The parts of the lab panel: what the student reads before changing the pattern (the exercise, its task
/// and goals), drawn above the controls; and what comes after (questions, hints, done, saving), below the
/// editor, so that on a 1366x768 screen the task, the control to change, the goals and the figure are on
/// one screen.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The lab's exercises, the task and the goals.
    Task,
    /// Questions, hints, the done state, saving and resetting.
    After,
}

/// One part of the lab panel.
pub fn view(d: &UseReducerDispatcher<State>, state: &State, part: Part) -> Html {
    let Some(l) = &state.lab else { return html! {} };
    let Some(ex) = l.exercise() else { return html! {} };
    let click = |a: Action| {
        let d = d.clone();
        Callback::from(move |_| d.dispatch(a.clone()))
    };
    // A student's work is deleted only when they confirm it.
    let reset = {
        let d = d.clone();
        Callback::from(move |_| {
            let sure = web_sys::window()
                .and_then(|w| {
                    w.confirm_with_message(
                        "Reset your progress in this lab? The answers and patterns of every exercise, kept in this browser, are deleted.",
                    )
                    .ok()
                })
                .unwrap_or(false);
            if sure {
                d.dispatch(Action::LabReset);
            }
        })
    };
    // The exercise shown is graded with its goals as the analysis worker checked them against the result the
    // page shows; the others keep what they were graded when last shown.
    let pane = state.panes.first();
    let goals = match pane.map(|p| (&p.error, &p.goals)) {
        Some((None, Some(g))) => Ok(g.as_slice()),
        Some((Some(e), _)) => Err(e.clone()),
        // Checked with the result, which is on its way.
        Some((None, None)) => Ok(&[][..]),
        None => Err("the answer has not run yet".to_string()),
    };
    let grade = grade_result(ex, l.answer(), goals);
    let done_all: Vec<bool> = l
        .lab
        .exercises
        .iter()
        .enumerate()
        .map(|(k, e)| if k == l.current { grade.done } else { l.progress.done.contains(&e.id) })
        .collect();
    let hints = l.progress.hints.get(&ex.id).copied().unwrap_or(0);
    let choices = l.answer().map(|a| a.choices.clone()).unwrap_or_default();
    let student = l.progress.student.trim().to_string();
    let answers_json = {
        let a = crate::teach::lab::Answers {
            lab: l.lab.title.clone(),
            student: student.clone(),
            answers: l.progress.answers.clone(),
        };
        super::json::to_json_pretty(&a)
    };
    let file = crate::teach::lab::answers_file_name(&l.lab.title, &student);
    let save = {
        let d = d.clone();
        Callback::from(move |_| {
            // The teacher receives a file from every student: each carries its author's name, in it and in its
            // file name.
            if student.is_empty() {
                d.dispatch(Action::Notice(Some(
                    "Write your name in the field beside \"save answers\" first: it goes into the file and its name."
                        .into(),
                )));
                if let Some(el) = web_sys::window()
                    .and_then(|w| w.document())
                    .and_then(|doc| doc.get_element_by_id("lab-name"))
                    .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok())
                {
                    let _ = el.focus();
                }
                return;
            }
            let r = super::browser::download_text(&file, &answers_json, "application/json");
            d.dispatch(Action::Notice(Some(match r {
                Ok(()) => format!("Answers saved as {file}: hand it in, or grade it with `warpscope check`."),
                Err(e) => e,
            })));
        })
    };
    let on_name = {
        let d = d.clone();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            d.dispatch(Action::LabName(el.value()));
        })
    };
    // The done state, with the way on, right under the goals (in the first screen) and again after the
    // questions.
    let done = |id: &'static str| {
        html! {
            <p id={id} class="done" role="status">
                <span>{ "✔ Done: every goal is met" }{ if ex.questions.is_empty() { "." } else { " and every question answered." } }</span>
                if l.current + 1 < l.lab.exercises.len() {
                    <button id={format!("{id}-next")} class="next" onclick={click(Action::LabOpen(l.current + 1))}>{ "next exercise →" }</button>
                }
            </p>
        }
    };
    if part == Part::After {
        return html! {
            <section id="lab-after" class="lab lab-after" aria-label="questions and progress">
                { for ex.questions.iter().enumerate().map(|(q, question)| {
                    let chosen = choices.get(q).copied().flatten();
                    let right = question.answer;
                    html! {
                        // A fieldset named by the question's text (not a legend: a question of several lines
                        // would overlap the box's border).
                        <fieldset class="question" id={format!("q{q}")} aria-labelledby={format!("q{q}-text")}>
                            <div class="question-text" id={format!("q{q}-text")}>{ blocks(&question.text) }</div>
                            { for question.choices.iter().enumerate().map(|(c, text)| {
                                let d = d.clone();
                                let onchange = Callback::from(move |_| d.dispatch(Action::LabChoice(q, c)));
                                html! {
                                    <label class={classes!(
                                        (chosen == Some(c) && c == right).then_some("right"),
                                        (chosen == Some(c) && c != right).then_some("wrong"))}>
                                        <input type="radio" name={format!("q{q}")} id={format!("q{q}-{c}")} checked={chosen == Some(c)} {onchange} />
                                        { " " }{ spans(text) }
                                    </label>
                                }
                            }) }
                            if let Some(c) = chosen {
                                <div class={if c == right { "feedback right" } else { "feedback wrong" }}>
                                    if c == right { { "Right. " }{ blocks(&question.explain) } } else { { "Not quite: look at the figure again." } }
                                </div>
                            }
                        </fieldset>
                    }
                }) }
                if !ex.hints.is_empty() {
                    <div class="hints">
                        { for ex.hints.iter().take(hints).map(|h| html! { <div class="hint">{ blocks(h) }</div> }) }
                        if hints < ex.hints.len() {
                            <button id="hint" onclick={click(Action::LabHint)}>{ format!("show a hint ({} of {})", hints + 1, ex.hints.len()) }</button>
                        }
                    </div>
                }
                if grade.done { { done("lab-done") } }
                <p class="lab-actions">
                    <label class="lab-name">{ "your name " }
                        <input id="lab-name" value={l.progress.student.clone()} oninput={on_name} autocomplete="name" placeholder="for the answers file" />
                    </label>
                    <button id="lab-save" onclick={save}>{ "save answers" }</button>
                    <button id="lab-reset" onclick={reset}>{ "reset progress" }</button>
                </p>
            </section>
        };
    }
    html! {
        <section id="lab" class="lab" aria-label="lab">
            if let Some(origin) = &l.origin {
                <p id="lab-origin" class="lab-origin" role="note">
                    <strong>{ format!("Lab from {origin}") }</strong>
                    { " — not from this site. Its text and links come from there: give no password or personal data where they lead." }
                </p>
            }
            <div class="lab-head">
                <h2>{ l.lab.title.clone() }</h2>
                <ol id="exercises" class="exercises">
                    { for l.lab.exercises.iter().enumerate().map(|(k, e)| html! {
                        <li>
                            <button class={classes!((k == l.current).then_some("current"), done_all[k].then_some("done"))}
                                onclick={click(Action::LabOpen(k))} title={e.title.clone()} aria-current={(k == l.current).to_string()}>
                                { if done_all[k] { format!("✔ {}", k + 1) } else { (k + 1).to_string() } }
                            </button>
                        </li>
                    }) }
                </ol>
            </div>
            <div id="exercise" class="exercise">
                <Task title={ex.title.clone()}>
                    if l.current == 0 && !l.lab.intro.is_empty() {
                        <details class="lab-intro" id="lab-intro">
                            <summary>{ "about this lab" }</summary>
                            { blocks(&l.lab.intro) }
                        </details>
                    }
                    { blocks(&ex.text) }
                </Task>
                <ul id="goals" class="goals" aria-label="goals">
                    { for grade.goals.iter().map(|g| html! {
                        // The condition is the goal's title (hover, or a screen reader's description): the
                        // sentence is what the student reads.
                        <li class={if g.pass { "pass" } else { "fail" }} title={(!g.check.is_empty()).then(|| g.check.clone())}>
                            <span class="mark">{ if g.pass { "✔" } else { "✘" } }</span>
                            { format!(" {} ", g.text) }
                            if !g.detail.is_empty() { <span class="detail">{ format!(" — {}", g.detail) }</span> }
                        </li>
                    }) }
                </ul>
                if grade.done { { done("lab-done-top") } }
            </div>
        </section>
    }
}
