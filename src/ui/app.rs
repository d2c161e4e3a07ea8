//! The placeholder lab page: one instruction, one CC, one warp, its metrics and model notes.

use crate::access::{Instr, LaneSet};
use crate::arch::{Cc, ALL_CCS};
use crate::engine::{analyze, Config};
use crate::pattern::{warp_from_expr, InputError, Span};
use crate::report::{Cost, Report};
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// What the page shows: the inputs and the last good report.
#[derive(Clone, PartialEq)]
struct View {
    cc: Cc,
    op: String,
    addr: String,
}

impl Default for View {
    fn default() -> View {
        // The Best Practices Guide's misaligned example: 5 sectors over 2 lines on CC 6.0+.
        View { cc: Cc::new(8, 0), op: "LDG.E.32".into(), addr: "4*lane + 4".into() }
    }
}

fn run(view: &View) -> Result<Report, String> {
    let instr = Instr::parse(&view.op).map_err(|e| {
        format!("instruction {}", InputError::at(&view.op, Span { start: e.column, end: e.column + e.len }, e.message))
    })?;
    let warp = warp_from_expr(&view.addr, &instr, LaneSet::ALL).map_err(|e| format!("address {e}"))?;
    Ok(analyze(view.cc, &instr, &warp, &Config::default()))
}

fn metric(name: &'static str, label: &'static str, value: String) -> Html {
    html! {
        <div class="metric">
            <span class="metric-label">{ label }</span>
            <span class="metric-value" data-metric={name}>{ value }</span>
        </div>
    }
}

fn metrics(report: &Report) -> Html {
    let parts = report.parts();
    parts
        .iter()
        .map(|p| match &p.cost {
            Cost::Memory(m) => html! {
                <div class="metrics">
                    { metric("requests", "requests", m.requests.to_string()) }
                    { metric("lines", "lines", m.lines.to_string()) }
                    { metric("sectors", "sectors", m.sectors.to_string()) }
                    { metric("transactions", "transactions", format!("{}", m.transactions)) }
                    { metric("transaction_bytes", "bytes each", m.transaction_bytes.to_string()) }
                    { metric("efficiency", "efficiency", format!("{:.1}%", m.efficiency * 100.0)) }
                </div>
            },
            Cost::Banks(b) => html! {
                <div class="metrics">
                    { metric("wavefronts", "wavefronts", b.wavefronts.to_string()) }
                    { metric("ideal_wavefronts", "ideal", b.ideal_wavefronts.to_string()) }
                    { metric("bank_conflicts", "bank conflicts", b.bank_conflicts.to_string()) }
                    { metric("conflict_degree", "n-way", b.conflict_degree.to_string()) }
                </div>
            },
            Cost::Split { .. } => html! {},
        })
        .collect()
}

/// The page.
#[component(App)]
pub fn app() -> Html {
    let view = use_state(View::default);
    let last_good = use_state(|| run(&View::default()).ok());
    let error = use_state(|| None::<String>);

    let update = {
        let (view, last_good, error) = (view.clone(), last_good.clone(), error.clone());
        Callback::from(move |next: View| {
            match run(&next) {
                Ok(r) => {
                    last_good.set(Some(r));
                    error.set(None);
                }
                // The last good result stays on screen; the error is shown beside it.
                Err(e) => error.set(Some(e)),
            }
            view.set(next);
        })
    };
    let on_cc = {
        let (view, update) = (view.clone(), update.clone());
        Callback::from(move |e: Event| {
            let sel: HtmlSelectElement = e.target_unchecked_into();
            if let Ok(cc) = Cc::parse(&sel.value()) {
                update.emit(View { cc, ..(*view).clone() });
            }
        })
    };
    let on_op = {
        let (view, update) = (view.clone(), update.clone());
        Callback::from(move |e: InputEvent| {
            let input: HtmlInputElement = e.target_unchecked_into();
            update.emit(View { op: input.value(), ..(*view).clone() });
        })
    };
    let on_addr = {
        let (view, update) = (view.clone(), update.clone());
        Callback::from(move |e: InputEvent| {
            let input: HtmlInputElement = e.target_unchecked_into();
            update.emit(View { addr: input.value(), ..(*view).clone() });
        })
    };

    html! {
        <main>
            <header><h1>{ "warpscope" }</h1><p class="tagline">{ "memory coalescing and bank conflicts, one warp at a time" }</p></header>
            <section class="inputs">
                <label>{ "compute capability " }
                    <select id="cc" onchange={on_cc}>
                        { for ALL_CCS.iter().map(|c| html! {
                            <option value={c.to_string()} selected={*c == view.cc}>
                                { format!("{} — {}", c, c.facts().example_gpu) }
                            </option>
                        }) }
                    </select>
                </label>
                <label>{ "instruction " }<input id="op" value={view.op.clone()} oninput={on_op} /></label>
                <label>{ "address of lane " }<input id="pattern" value={view.addr.clone()} oninput={on_addr} spellcheck="false" /></label>
            </section>
            if let Some(e) = (*error).clone() {
                <pre id="error" role="alert">{ e }</pre>
            }
            if let Some(r) = (*last_good).clone() {
                <section class="result">
                    <p id="summary">{ format!("{} on CC {}: {}", r.op, r.cc, r.summary()) }</p>
                    { metrics(&r) }
                    <ul class="notes">
                        { for r.notes.iter().map(|n| html! { <li><strong>{ "model note: " }</strong>{ n.text.clone() }<span class="source">{ format!(" ({})", n.source) }</span></li> }) }
                        { for r.warnings.iter().map(|w| html! { <li class="warning">{ w.text.clone() }</li> }) }
                    </ul>
                </section>
            }
        </main>
    }
}
