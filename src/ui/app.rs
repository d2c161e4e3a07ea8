//! The page: inputs (CC, language, instruction, block, preset, pattern), the block's memory instructions,
//! and the metrics and notes of the selected one. It runs [`Scenario`]s and computes nothing itself.

use crate::arch::{Cc, ALL_CCS};
use crate::launch::Dim3;
use crate::pattern::Lang;
use crate::presets::PRESETS;
use crate::scenario::{Field, Scenario, ScenarioError};
use crate::trace::{InstrResult, ProgramResult};
use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

/// What the page holds: the inputs as typed (the block text too, so a half-typed size is not lost), the
/// last good result, the current error and the selected instruction.
#[derive(Clone, PartialEq)]
struct State {
    scenario: Scenario,
    block_text: String,
    preset: String,
    result: Option<ProgramResult>,
    error: Option<String>,
    selected: usize,
}

impl State {
    fn new() -> State {
        let scenario = Scenario::default();
        let result = scenario.run().ok();
        State { block_text: "32".into(), preset: String::new(), scenario, result, error: None, selected: 0 }
    }

    /// Re-runs after an edit: a good result replaces the old one; an error is shown beside the last good one.
    fn rerun(mut self) -> State {
        match Dim3::parse(&self.block_text, "block") {
            Ok(b) => self.scenario.block = b,
            Err(e) => {
                self.error = Some(e);
                return self;
            }
        }
        match self.scenario.run() {
            Ok(r) => {
                if self.selected >= r.instructions.len() {
                    self.selected = 0;
                }
                self.result = Some(r);
                self.error = None;
            }
            Err(e) => self.error = Some(describe(&e)),
        }
        self
    }
}

fn describe(e: &ScenarioError) -> String {
    let what = match e.field {
        Field::Pattern => "pattern",
        Field::Op => "instruction",
        Field::Launch => "block",
        Field::Set => "setting",
    };
    format!("{what} {}", e.error)
}

enum Action {
    Cc(String),
    Lang(String),
    Op(String),
    Block(String),
    Text(String),
    Preset(String),
    Select(usize),
}

fn reduce(state: &State, action: Action) -> State {
    let mut s = state.clone();
    match action {
        Action::Cc(v) => match Cc::parse(&v) {
            Ok(cc) => s.scenario.cc = cc,
            Err(e) => s.error = Some(e),
        },
        Action::Lang(v) => {
            if let Ok(l) = Lang::parse(&v) {
                s.scenario.lang = l;
            }
        }
        Action::Op(v) => s.scenario.op = v,
        Action::Block(v) => s.block_text = v,
        Action::Text(v) => s.scenario.text = v,
        Action::Preset(name) => {
            if let Some(p) = crate::presets::find(&name) {
                s.scenario = p.scenario();
                s.block_text = p.block.to_string().trim_end_matches("x1").trim_end_matches("x1").to_string();
                s.selected = 0;
            }
            s.preset = name;
        }
        Action::Select(i) => {
            s.selected = i;
            return s;
        }
    }
    s.rerun()
}

fn metric(name: &'static str, label: &'static str, value: String) -> Html {
    html! {
        <div class="metric">
            <span class="metric-label">{ label }</span>
            <span class="metric-value" data-metric={name}>{ value }</span>
        </div>
    }
}

fn metrics(i: &InstrResult) -> Html {
    html! {
        <div class="metrics">
            { metric("warps", "warp issues", i.warps.to_string()) }
            if let Some(m) = &i.memory {
                { metric("requests", "requests", m.requests.to_string()) }
                { metric("lines", "lines", m.lines.to_string()) }
                { metric("sectors", "sectors", m.sectors.to_string()) }
                { metric("transactions", "transactions", m.transactions.to_string()) }
                { metric("transaction_bytes", "bytes each", m.transaction_bytes.to_string()) }
                { metric("efficiency", "efficiency", format!("{:.1}%", m.efficiency * 100.0)) }
            }
            if let Some(b) = &i.banks {
                { metric("wavefronts", "wavefronts", b.wavefronts.to_string()) }
                { metric("ideal_wavefronts", "ideal", b.ideal_wavefronts.to_string()) }
                { metric("bank_conflicts", "bank conflicts", b.bank_conflicts.to_string()) }
                { metric("conflict_degree", "worst n-way", b.conflict_degree.to_string()) }
            }
        </div>
    }
}

/// The page.
#[component(App)]
pub fn app() -> Html {
    let state = use_state(State::new);
    let dispatch = {
        let state = state.clone();
        Callback::from(move |a: Action| state.set(reduce(&state, a)))
    };
    let on_select = |make: fn(String) -> Action| {
        let dispatch = dispatch.clone();
        Callback::from(move |e: Event| {
            let el: HtmlSelectElement = e.target_unchecked_into();
            dispatch.emit(make(el.value()));
        })
    };
    let on_input = |make: fn(String) -> Action| {
        let dispatch = dispatch.clone();
        Callback::from(move |e: InputEvent| {
            let el: HtmlInputElement = e.target_unchecked_into();
            dispatch.emit(make(el.value()));
        })
    };
    let on_text = {
        let dispatch = dispatch.clone();
        Callback::from(move |e: InputEvent| {
            let el: HtmlTextAreaElement = e.target_unchecked_into();
            dispatch.emit(Action::Text(el.value()));
        })
    };
    let s = &*state;
    let sc = &s.scenario;
    let needs_op = matches!(sc.lang, Lang::Expr | Lang::Addresses);
    let selected = s.result.as_ref().and_then(|r| r.instructions.get(s.selected));
    let lang_label = |l: Lang| match l {
        Lang::Expr => "expression",
        Lang::Cuda => "CUDA snippet",
        Lang::Sass => "SASS",
        Lang::Addresses => "address list",
    };

    html! {
        <main>
            <header>
                <h1>{ "warpscope" }</h1>
                <p class="tagline">{ "memory coalescing and bank conflicts, one warp at a time" }</p>
            </header>
            <section class="inputs">
                <label>{ "example" }
                    <select id="preset" onchange={on_select(Action::Preset)}>
                        <option value="" selected={s.preset.is_empty()}>{ "choose an example…" }</option>
                        { for PRESETS.iter().map(|p| html! {
                            <option value={p.name} selected={s.preset == p.name}>{ p.title }</option>
                        }) }
                    </select>
                </label>
                <label>{ "compute capability" }
                    <select id="cc" onchange={on_select(Action::Cc)}>
                        { for ALL_CCS.iter().map(|c| html! {
                            <option value={c.to_string()} selected={*c == sc.cc}>
                                { format!("{} — {}", c, c.facts().example_gpu) }
                            </option>
                        }) }
                    </select>
                </label>
                <label>{ "language" }
                    <select id="lang" onchange={on_select(Action::Lang)}>
                        { for Lang::ALL.iter().map(|l| html! {
                            <option value={l.name()} selected={*l == sc.lang}>{ lang_label(*l) }</option>
                        }) }
                    </select>
                </label>
                if needs_op {
                    <label>{ "instruction" }<input id="op" value={sc.op.clone()} oninput={on_input(Action::Op)} spellcheck="false" /></label>
                }
                <label>{ "block" }<input id="block" class="short" value={s.block_text.clone()} oninput={on_input(Action::Block)} spellcheck="false" /></label>
            </section>
            <textarea id="pattern" rows={if sc.lang == Lang::Expr { "2" } else { "10" }} spellcheck="false" value={sc.text.clone()} oninput={on_text}
                aria-label="access pattern" />
            if let Some(e) = &s.error {
                <pre id="error" role="alert">{ e.clone() }</pre>
            }
            if let Some(r) = &s.result {
                <section class="result">
                    <ol class="instructions">
                        { for r.instructions.iter().enumerate().map(|(k, i)| {
                            let dispatch = dispatch.clone();
                            let onclick = Callback::from(move |_| dispatch.emit(Action::Select(k)));
                            html! {
                                <li class={classes!((k == s.selected).then_some("selected"))}>
                                    <button {onclick}>
                                        <span class="op">{ i.op.clone() }</span>
                                        <span class="access">{ format!("line {}: {}", i.line, i.access) }</span>
                                    </button>
                                </li>
                            }
                        }) }
                    </ol>
                    if let Some(i) = selected {
                        <p id="summary">{ format!(
                            "{} on CC {}: issued by {} in a {} block",
                            i.op,
                            r.cc,
                            if i.warps == 1 { "1 warp".to_string() } else { format!("{} warps (counting loop iterations)", i.warps) },
                            r.launch.block
                        ) }</p>
                        { metrics(i) }
                        <ul class="notes">
                            { for i.notes.iter().map(|n| html! { <li><strong>{ "model note: " }</strong>{ n.text.clone() }<span class="source">{ format!(" ({})", n.source) }</span></li> }) }
                            { for i.warnings.iter().take(6).map(|w| html! { <li class="warning">{ w.clone() }</li> }) }
                        </ul>
                    }
                    if r.instructions.is_empty() {
                        <p id="summary">{ "No memory instruction ran: every lane was inactive or the program has no loads or stores." }</p>
                    }
                </section>
            }
        </main>
    }
}
