//! The lab page: header, the animation player, one pane (or two when comparing), and the CC facts with the
//! carveout calculator. It draws the state; the reducer in `state.rs` changes it.

use super::browser;
use super::common::{id, pane_scene_in};
use super::engine::{Engine, LocalEngine};
use super::figure::Figure;
use super::source::CodeArea;
use super::state::{Action, CompareWith, Edit, LabFile, Pane, State, L1_CHOICES};
use crate::analysis::InstrResult;
use crate::figure::scene::Theme;
use crate::lang::Lang;
use crate::model::arch::{carveout, families, BankMode, Carveout, Cc, SharedModel};
use crate::scenario::Setting;
use crate::service::Shown;
use crate::teach::explain::Fix;
use crate::teach::presets::PRESETS;
use crate::text::grouped;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement, KeyboardEvent};
use yew::prelude::*;

type Dispatch = UseReducerDispatcher<State>;

fn on_select(d: &Dispatch, f: impl Fn(String) -> Action + 'static) -> Callback<Event> {
    let d = d.clone();
    Callback::from(move |e: Event| {
        let el: HtmlSelectElement = e.target_unchecked_into();
        d.dispatch(f(el.value()));
    })
}

fn on_input(d: &Dispatch, f: impl Fn(String) -> Action + 'static) -> Callback<InputEvent> {
    let d = d.clone();
    Callback::from(move |e: InputEvent| {
        let el: HtmlInputElement = e.target_unchecked_into();
        d.dispatch(f(el.value()));
    })
}

/// A CUDA file's kernel menu, every kernel of the text (template kernels nothing instantiates too), and for
/// a template kernel a field with its arguments, prefilled with a suggestion.
fn kernel_menu(
    d: &Dispatch,
    k: usize,
    sc: &crate::scenario::Scenario,
    result: Option<&crate::analysis::ProgramResult>,
    ks: &[crate::lang::KernelChoice],
    disabled: bool,
) -> Html {
    // What runs: the chosen kernel, else what the last result ran, else the file's first.
    let current = sc.kernel.clone().or_else(|| result.and_then(|r| r.kernel.clone()));
    let base = |v: &str| v.split('<').next().unwrap_or(v).trim().to_string();
    let chosen = current
        .as_deref()
        .and_then(|c| {
            ks.iter().position(|x| x.value == c).or_else(|| ks.iter().position(|x| base(&x.value) == base(c)))
        })
        .unwrap_or(0);
    let pick = &ks[chosen];
    // A template kernel's arguments: those running, else the suggestion (not yet run: a button runs them).
    let template = pick.template.is_some() || pick.value.contains('<');
    let running = current.as_deref().filter(|c| base(c) == base(&pick.value) && c.contains('<'));
    let args_of = |v: &str| v.find('<').map_or(String::new(), |i| v[i + 1..v.len().saturating_sub(1)].to_string());
    let args = running.map_or_else(|| pick.template.clone().unwrap_or_else(|| args_of(&pick.value)), args_of);
    let name = base(&pick.value);
    let on_args = {
        let name = name.clone();
        on_input(d, move |v| Action::Edit(k, Edit::Kernel(format!("{name}<{}>", v.trim()))))
    };
    let run_suggested = {
        let d = d.clone();
        let v = format!("{name}<{args}>");
        Callback::from(move |_: MouseEvent| d.dispatch(Action::Edit(k, Edit::Kernel(v.clone()))))
    };
    html! {
        <>
        <label>{ "kernel" }
            <select id={id("kernel", k)} {disabled} onchange={on_select(d, move |v| Action::Edit(k, Edit::Kernel(v)))}>
                { for ks.iter().enumerate().map(|(i, kn)| html! {
                    <option value={kn.value.clone()} selected={i == chosen}>
                        { if kn.template.is_some() { format!("{} (template)", kn.name) } else { kn.name.clone() } }
                    </option>
                }) }
            </select>
        </label>
        if template {
            <label title="The template's arguments, as in name<…>: the suggestion fits its parameters' kinds">{ "template arguments" }
                <input id={id("kernel-args", k)} class="mono" value={args} spellcheck="false" {disabled} oninput={on_args} />
            </label>
            if running.is_none() {
                <button id={id("kernel-args-run", k)} class="small" {disabled} onclick={run_suggested}>{ "run with these" }</button>
            }
        }
        </>
    }
}

/// Where conditions that depend on loaded data hold, when what they decide moves memory: the assumption the
/// totals then rest on, chosen by the user (the program notes say which conditions it applies to).
fn data_branches_control(d: &Dispatch, k: usize, db: crate::program::DataBranches, disabled: bool) -> Html {
    use crate::program::DataBranches;
    let choice = match db {
        DataBranches::Runs => "runs",
        DataBranches::Holds => "true",
        DataBranches::Fails => "false",
        DataBranches::Lanes(_) => "lanes",
    };
    let set = move |v: String| Action::Edit(k, Edit::Set(Setting::DataBranches, v));
    html! {
        <>
        <label title="A branch or guard whose condition depends on loaded data, where what it decides moves memory: which lanes take it">
            { "data-dependent conditions" }
            <select id={id("data-branches", k)} {disabled}
                onchange={on_select(d, move |v| set(if v == "lanes" { "0x0000ffff".to_string() } else { v }))}>
                { for [("runs", "guarded code runs once"), ("true", "hold in every lane"), ("false", "fail in every lane"), ("lanes", "hold in given lanes")]
                    .iter().map(|(v, label)| html! { <option value={*v} selected={*v == choice}>{ *label }</option> }) }
            </select>
        </label>
        if let DataBranches::Lanes(m) = db {
            <label>{ "lanes (mask)" }
                <input id={id("data-lanes", k)} class="short mono" value={format!("{m:#010x}")} spellcheck="false" {disabled}
                    oninput={on_input(d, move |v| Action::Edit(k, Edit::Set(Setting::DataBranches, v)))} />
            </label>
        }
        </>
    }
}

/// The CC menu, grouped by architecture.
fn cc_select(d: &Dispatch, pane: usize, cc: Cc, disabled: bool) -> Html {
    html! {
        <select data-value={cc.to_string()} id={id("cc", pane)} aria-label="compute capability" {disabled} onchange={on_select(d, move |v| Action::Edit(pane, Edit::Set(Setting::Cc, v)))}>
            { for families().into_iter().map(|(family, ccs)| html! {
                <optgroup label={family}>
                    { for ccs.into_iter().map(|c| html! {
                        <option value={c.to_string()} selected={c == cc}>{ format!("{c} · {}", c.facts().example_gpu) }</option>
                    }) }
                </optgroup>
            }) }
        </select>
    }
}

fn metric(
    name: &'static str,
    label: &'static str,
    value: f64,
    shown: String,
    base: Option<f64>,
    lower_is_better: bool,
) -> Html {
    let delta = base.filter(|b| (b - value).abs() > 1e-9).map(|b| {
        let better = if lower_is_better { value < b } else { value > b };
        let sign = if value > b { "▲" } else { "▼" };
        let diff = value - b;
        let text =
            if name == "efficiency" { format!("{sign} {:+.1} pts", diff * 100.0) } else { format!("{sign} {diff:+}") };
        html! { <span class={classes!("delta", if better { "better" } else { "worse" })}>{ text }</span> }
    });
    html! {
        <div class="metric">
            <span class="metric-label">{ label }</span>
            <span class="metric-value" data-metric={name}>{ shown }</span>
            { for delta }
        </div>
    }
}

fn metrics(i: &InstrResult, base: Option<&InstrResult>) -> Html {
    let bm = base.and_then(|b| b.memory.as_ref());
    let bb = base.and_then(|b| b.banks.as_ref());
    html! {
        <div class="metrics">
            { metric("warps", "warp issues", i.warps as f64, grouped(i.warps), base.map(|b| b.warps as f64), true) }
            if let Some(m) = &i.memory {
                { metric("requests", "requests", m.requests as f64, grouped(m.requests), bm.map(|b| b.requests as f64), true) }
                { metric("lines", "lines", m.lines as f64, grouped(m.lines), bm.map(|b| b.lines as f64), true) }
                { metric("sectors", "sectors", m.sectors as f64, grouped(m.sectors), bm.map(|b| b.sectors as f64), true) }
                { metric("sectors_per_request", "sectors / request", m.sectors_per_request, format!("{:.2}", m.sectors_per_request), bm.map(|b| b.sectors_per_request), true) }
                { metric("transactions", "transactions", m.transactions as f64, grouped(m.transactions), bm.map(|b| b.transactions as f64), true) }
                { metric("transaction_bytes", "bytes each", f64::from(m.transaction_bytes), m.transaction_bytes.to_string(), bm.map(|b| f64::from(b.transaction_bytes)), true) }
                { metric("efficiency", "efficiency", m.efficiency, format!("{:.1}%", m.efficiency * 100.0), bm.map(|b| b.efficiency), false) }
            }
            if let Some(b) = &i.banks {
                { metric("wavefronts", "wavefronts", b.wavefronts as f64, grouped(b.wavefronts), bb.map(|x| x.wavefronts as f64), true) }
                { metric("ideal_wavefronts", "ideal", b.ideal_wavefronts as f64, grouped(b.ideal_wavefronts), bb.map(|x| x.ideal_wavefronts as f64), true) }
                { metric("bank_conflicts", "bank conflicts", b.bank_conflicts as f64, grouped(b.bank_conflicts), bb.map(|x| x.bank_conflicts as f64), true) }
                { metric("conflict_degree", "worst n-way", f64::from(b.conflict_degree), b.conflict_degree.to_string(), bb.map(|x| f64::from(x.conflict_degree)), true) }
                if b.other_model_wavefronts.is_some() {
                    <p class="other-model" data-metric="other_model_wavefronts">
                        { crate::figure::scene::wavefronts_text(b.wavefronts, b.other_model_wavefronts) }
                    </p>
                }
            }
            // An atomic's read-modify-writes and the most that wait on one address (docs/model.md#atomics).
            if let Some(a) = &i.atomic {
                { metric("ops", "read-modify-writes", a.ops as f64, grouped(a.ops), base.and_then(|b| b.atomic).map(|x| x.ops as f64), true) }
                { metric("max_serial", "most in series", a.max_serial as f64, grouped(a.max_serial), base.and_then(|b| b.atomic).map(|x| x.max_serial as f64), true) }
            }
            // A constant load's passes through the constant cache (docs/model.md#constant-memory).
            if let Some(k) = &i.constant {
                { metric("passes", "constant passes", k.passes as f64, grouped(k.passes), base.and_then(|b| b.constant).map(|x| x.passes as f64), true) }
                { metric("lines_64", "64-byte lines", k.lines_64 as f64, grouped(k.lines_64), base.and_then(|b| b.constant).map(|x| x.lines_64 as f64), true) }
            }
        </div>
    }
}

/// A long run's progress with a button that cancels it, or why the last run stopped: at the top of the figure's
/// column, where the figure it is working on will be.
fn run_status(d: &Dispatch, k: usize, pane: &Pane) -> Html {
    if let (true, Some(p)) = (pane.busy, pane.progress.as_ref()) {
        let cancel = {
            let d = d.clone();
            Callback::from(move |_| d.dispatch(Action::Cancel(k)))
        };
        // The counting runs every block's class quickly; the memory system plays them all: its bar is the
        // run's length.
        let (value, max) = (p.done.min(p.total), p.total.max(1));
        return html! {
            <div class="run-status" id={id("progress", k)} role="status">
                <span class="run-text">{ format!("{} · {:.1} s", p.text, p.seconds) }</span>
                <progress value={value.to_string()} max={max.to_string()} aria-label="blocks done"></progress>
                <button id={id("cancel", k)} onclick={cancel}>{ "cancel" }</button>
            </div>
        };
    }
    match &pane.stopped {
        Some(m) => html! { <p class="run-stopped" id={id("stopped", k)} role="status">{ m.clone() }</p> },
        None => html! {},
    }
}

/// How a whole grid's totals were reached.
fn blocks_text(r: &crate::analysis::ProgramResult) -> String {
    let b = &r.blocks;
    let mut s = format!(
        "Totals over the grid {} ({} blocks); the figure shows block (0,0,0). {} block{} ran",
        r.launch.grid,
        b.total,
        b.executed,
        crate::text::ending(b.executed, "s")
    );
    if b.executed < b.total {
        s += &format!(
            "; the others were proven to cost the same as one that ran ({} class{}).",
            b.classes,
            crate::text::ending(b.classes, "es")
        );
    } else {
        s.push('.');
    }
    s
}

fn lang_label(l: Lang) -> &'static str {
    match l {
        Lang::Expr => "expression",
        Lang::Cuda => "CUDA",
        Lang::Sass => "SASS",
        Lang::Ptx => "PTX",
        Lang::Addresses => "address list",
    }
}

/// True when the lab's current exercise locks `setting`.
fn locked(state: &State, setting: Setting) -> bool {
    state.lab.as_ref().and_then(|l| l.exercise()).is_some_and(|e| e.is_locked(setting))
}

/// The one line that says what a lab exercise fixes: `fixed by the exercise: CC 8.0 · expression · LDG.E.32`.
fn fixed_summary(state: &State, sc: &crate::scenario::Scenario) -> String {
    let mut parts = Vec::new();
    if locked(state, Setting::Cc) {
        parts.push(format!("CC {}", sc.cc));
    }
    if locked(state, Setting::Lang) {
        parts.push(lang_label(sc.lang).to_string());
    }
    if locked(state, Setting::Op) && matches!(sc.lang, Lang::Expr | Lang::Addresses) {
        parts.push(sc.op.clone());
    }
    format!("fixed by the exercise: {}", parts.join(" · "))
}

/// One pane: inputs, instructions, the figure, metrics, explanation and notes.
fn pane_view(d: &Dispatch, state: &State, k: usize) -> Html {
    let pane: &Pane = &state.panes[k];
    let sc = &pane.scenario;
    let needs_op = matches!(sc.lang, Lang::Expr | Lang::Addresses);
    let result = pane.result.clone();
    let selected = result.as_ref().and_then(|r| r.instructions.get(pane.instr));
    // Pane B marks its differences from pane A only when both run the same program and show the same
    // instruction; otherwise it says what differs.
    let mismatch = if k == 1 { state.compare_mismatch() } else { None };
    let base = (k == 1 && mismatch.is_none())
        .then(|| state.panes[0].result.as_ref().and_then(|r| r.instructions.get(state.panes[0].instr)))
        .flatten();
    let on_text = {
        let d = d.clone();
        Callback::from(move |text: String| d.dispatch(Action::Edit(k, Edit::Text(text))))
    };
    let on_instr = {
        let d = d.clone();
        Callback::from(move |i: usize| d.dispatch(Action::Instr(k, i)))
    };
    let kepler = sc.cc.has_bank_mode();
    // Layouts describe shared-memory tiles: the field is offered for shared-memory instructions (and kept
    // while it holds a layout).
    let shared_op = crate::model::access::Instr::parse(&sc.op)
        .is_ok_and(|i| i.base.fixed_space() == Some(crate::model::access::Space::Shared));
    // The shared model is offered where it can change a count: on a CC that has the measured rule, for a
    // shared access, a program whose result reaches shared memory (a kernel, a generic access that does),
    // or while it holds the non-default choice (so it can be set back).
    let measured_rule = sc.cc.has_measured_shared_rule()
        && ((needs_op && shared_op)
            || sc.config.shared_model != SharedModel::default()
            || result.as_ref().is_some_and(|r| r.instructions.iter().any(|i| i.banks.is_some())));
    let show_l1 = sc.cc.l1_choice_matters();
    let stale = pane.error.is_some() || pane.stopped.is_some() || (pane.busy && pane.progress.is_some());
    // The settings. In a lab whose pattern the student edits, they come after the editor: the task, the goals
    // and the pattern to change are then on one screen (1366x768).
    let editor_first = k == 0 && state.lab.is_some() && !locked(state, Setting::Pattern);
    let inputs = html! {
        <div class="inputs">
            if !locked(state, Setting::Cc) {
                <label>{ "compute capability" }{ cc_select(d, k, sc.cc, false) }</label>
            }
            if state.lab.is_none() {
            <label>{ "example" }
                <select data-value={pane.preset.clone()} id={id("preset", k)} onchange={on_select(d, move |v| Action::Edit(k, Edit::Preset(v)))}>
                    <option value="" selected={pane.preset.is_empty()}>{ "choose an example…" }</option>
                    { for PRESETS.iter().map(|p| html! { <option value={p.name} selected={pane.preset == p.name}>{ p.title }</option> }) }
                </select>
            </label>
            }
            if !locked(state, Setting::Lang) {
            <label>{ "language" }
                <select data-value={sc.lang.name()} id={id("lang", k)} onchange={on_select(d, move |v| Action::Edit(k, Edit::Set(Setting::Lang, v)))}>
                    { for Lang::ALL.iter().map(|l| html! { <option value={l.name()} selected={*l == sc.lang}>{ lang_label(*l) }</option> }) }
                </select>
            </label>
            }
            if needs_op && !locked(state, Setting::Op) {
                <label>{ "instruction" }<input id={id("op", k)} class="mono" value={sc.op.clone()} spellcheck="false"
                    oninput={on_input(d, move |v| Action::Edit(k, Edit::Set(Setting::Op, v)))} /></label>
            }
            // A CUDA file's menu comes from its top level (every kernel, even when one fails); a listing's
            // from its result, while that result is the current text's.
            if let Some(ks) = pane.kernels.as_ref().filter(|ks| sc.lang == Lang::Cuda && (ks.len() > 1 || ks.iter().any(|c| c.template.is_some()))) {
                { kernel_menu(d, k, sc, result.as_deref(), ks, locked(state, Setting::Pattern)) }
            } else if let Some(r) = result.as_ref().filter(|r| r.kernels.len() > 1 && sc.lang != Lang::Cuda && pane.error.is_none()) {
                <label>{ "kernel" }
                    <select id={id("kernel", k)} disabled={locked(state, Setting::Pattern)} onchange={on_select(d, move |v| Action::Edit(k, Edit::Kernel(v)))}>
                        { for r.kernels.iter().map(|kn| html! {
                            <option value={kn.symbol.clone()} selected={r.kernel.as_deref() == Some(kn.name.as_str())}>{ kn.name.clone() }</option>
                        }) }
                    </select>
                </label>
            }
            <label>{ "block" }<input id={id("block", k)} class="short mono" value={pane.block_text.clone()} spellcheck="false"
                disabled={locked(state, Setting::Block)} oninput={on_input(d, move |v| Action::Edit(k, Edit::Block(v)))} /></label>
            <label title="Blocks in the launch: the totals count every block">{ "grid" }<input id={id("grid", k)} class="short mono" value={pane.grid_text.clone()} spellcheck="false"
                disabled={locked(state, Setting::Grid)} oninput={on_input(d, move |v| Action::Edit(k, Edit::Grid(v)))} /></label>
            // A CUDA file's own launch (`k<<<grid, block>>>`) replaces the fields: say so beside them.
            if let Some(r) = result.as_ref().filter(|r| sc.lang == Lang::Cuda && (r.launch.block != sc.block || r.launch.grid != sc.grid)) {
                <span class="launch-from-code" id={id("code-launch", k)}>
                    { format!("the code launches block {}, grid {}", r.launch.block, r.launch.grid) }
                </span>
            }
            if matches!(sc.lang, Lang::Cuda | Lang::Ptx | Lang::Sass) || !sc.sets.is_empty() {
                <label>{ "values (NAME=VALUE, …)" }<input id={id("sets", k)} class="mono" value={pane.sets_text.clone()} spellcheck="false"
                    placeholder={if sc.lang == Lang::Ptx { "param_2=1024, c[0x0][0x16c]=64" } else { "n=1024, R4=0x1000" }} disabled={locked(state, Setting::Sets)} oninput={on_input(d, move |v| Action::Edit(k, Edit::Sets(v)))} /></label>
            }
            if matches!(sc.lang, Lang::Cuda | Lang::Ptx | Lang::Sass)
                && (sc.data_branches != crate::program::DataBranches::default()
                    || result.as_ref().is_some_and(|r| r.notes.iter().any(|n| n.id.starts_with("data-"))))
            {
                { data_branches_control(d, k, sc.data_branches, locked(state, Setting::DataBranches)) }
            }
            { caches_control(d, k, sc, locked(state, Setting::Caches)) }
            if show_l1 {
                <label>{ "global loads" }
                    <select id={id("l1", k)} disabled={locked(state, Setting::L1)} onchange={on_select(d, move |v| Action::Edit(k, Edit::Set(Setting::L1, v)))}>
                        { for L1_CHOICES.iter().map(|(c, label)| html! { <option value={c.name()} selected={sc.config.l1 == *c}>{ *label }</option> }) }
                    </select>
                </label>
            }
            if kepler {
                <label>{ "bank mode" }
                    <select id={id("bank-mode", k)} disabled={locked(state, Setting::BankMode)} onchange={on_select(d, move |v| Action::Edit(k, Edit::Set(Setting::BankMode, v)))}>
                        <option value="4" selected={sc.config.bank_mode == BankMode::FourByte}>{ "4-byte" }</option>
                        <option value="8" selected={sc.config.bank_mode == BankMode::EightByte}>{ "8-byte" }</option>
                    </select>
                </label>
            }
            if measured_rule {
                <label title="How 64- and 128-bit shared accesses whose lanes share addresses in pairs are counted: as measured on V100, A100 and with Nsight Compute (phases merge), or by the documented phase model">{ "shared model" }
                    <select id={id("shared-model", k)} disabled={locked(state, Setting::SharedModel)} onchange={on_select(d, move |v| Action::Edit(k, Edit::Set(Setting::SharedModel, v)))}>
                        { for SharedModel::ALL.iter().map(|m| html! {
                            <option value={m.name()} selected={sc.config.shared_model == *m}>{ m.name() }</option>
                        }) }
                    </select>
                </label>
            }
            if sc.lang == Lang::Expr && (!sc.layout.trim().is_empty() || shared_op) {
                <label title="CuTe layouts the expression can call by name, e.g. L(lane % 8, (lane / 8) * 8): NAME = [Swizzle<B,M,S> o] shape:stride, offsets in elements">{ "layout (CuTe)" }
                    <input id={id("layout", k)} class="mono" value={sc.layout.clone()} spellcheck="false"
                        placeholder="L = Swizzle<3,3,3> o (8,64):(64,1)" disabled={locked(state, Setting::Layout)}
                        oninput={on_input(d, move |v| Action::Edit(k, Edit::Set(Setting::Layout, v)))} /></label>
                if !sc.layout.trim().is_empty() {
                    <label title="Bytes per layout element: the layout's offsets are multiplied by it">{ "element bytes" }
                        <input id={id("elem-bytes", k)} class="short mono" value={sc.elem_bytes.to_string()} spellcheck="false"
                            disabled={locked(state, Setting::ElemBytes)}
                            oninput={on_input(d, move |v| Action::Edit(k, Edit::Set(Setting::ElemBytes, v)))} /></label>
                }
            }
        </div>
    };
    html! {
        <section class={classes!("pane", if k == 0 { "pane-a" } else { "pane-b" })} id={if k == 0 { "pane-a" } else { "pane-b" }}
            data-busy={pane.busy.then_some("true")}>
            // In projection mode the memory chart spans the pane, above its two columns, in large type.
            if let (true, Some(c)) = (state.projection, result.as_ref().and_then(|r| r.cache_chart.as_ref())) {
                <div class={classes!("pane-wide", stale.then_some("stale"))}>
                    { super::chart::memory_chart(k, c, pane.shown.as_deref().and_then(|s| super::chart::shown_served(s, state.step_shown())), true) }
                </div>
            }
            // Two columns on wide screens: what the user writes on the left (the lab's task, the inputs, the
            // pattern, the instruction list), what it costs on the right (the figure, the numbers, why).
            <div class="pane-edit">
            if k == 0 { { super::lab::view(d, state, super::lab::Part::Task) } }
            // In a lab, the settings the exercise fixes fold into one line (their controls, disabled, inside):
            // the controls the student may change come right under the goals.
            if k == 0 && (locked(state, Setting::Cc) || locked(state, Setting::Lang) || locked(state, Setting::Op)) {
                <details class="fixed-settings" id="fixed-settings">
                    <summary>{ fixed_summary(state, sc) }</summary>
                    <div class="inputs">
                        if locked(state, Setting::Cc) {
                            <label>{ "compute capability" }{ cc_select(d, k, sc.cc, true) }</label>
                        }
                        if locked(state, Setting::Lang) {
                            <label>{ "language" }
                                <select id={id("lang", k)} disabled=true>
                                    <option selected=true>{ lang_label(sc.lang) }</option>
                                </select>
                            </label>
                        }
                        if locked(state, Setting::Op) && needs_op {
                            <label>{ "instruction" }<input id={id("op", k)} class="mono" value={sc.op.clone()} disabled=true /></label>
                        }
                    </div>
                </details>
            }
            if !editor_first { { inputs.clone() } }
            if k == 1 {
                <p class="compare-note" id="compare-note" role="status">
                    { mismatch.clone().unwrap_or_else(|| if pane.follows {
                        "Pane B runs pane A's program and follows its edits; ▲/▼ mark the differences.".to_string()
                    } else {
                        "Pane B runs its own copy of pane A's program; ▲/▼ mark the differences.".to_string()
                    }) }
                    if !pane.follows {
                        <button id="follow-a" onclick={ { let d = d.clone(); Callback::from(move |_| d.dispatch(Action::Follow)) } }>
                            { "follow pane A" }
                        </button>
                    }
                </p>
            }
            if let Some(p) = crate::teach::presets::find(&pane.preset) {
                <p class="explanation-preset">{ super::cite::cited(p.explanation) }</p>
            }
            <CodeArea pane={k} text={AttrValue::from(sc.text.clone())} lang={sc.lang} readonly={locked(state, Setting::Pattern)}
                error={pane.error.clone()} result={result.clone()} instr={pane.instr} {on_text} {on_instr} />
            if let Some(e) = &pane.error {
                <pre id={id("error", k)} class="error" role="alert">{ super::cite::cited(e) }</pre>
            }
            if editor_first { { inputs } }
            if let Some(r) = &result {
              <div class={classes!("result-list", stale.then_some("stale"))}>
                <div class="instructions-row">
                    if r.instructions.len() > MAX_LISTED {
                        { instr_window(d, k, pane.instr, r.instructions.len()) }
                    }
                    <ol class="instructions" aria-label="memory instructions">
                        { for r.instructions.iter().enumerate().skip(listed_from(pane.instr, r.instructions.len())).take(MAX_LISTED).map(|(i, ins)| {
                            let d = d.clone();
                            let onclick = Callback::from(move |_| d.dispatch(Action::Instr(k, i)));
                            // An atomic whose address is data has no issue to draw: it says so instead.
                            let uncounted = ins.warps == 0;
                            html! {
                                <li class={classes!((i == pane.instr).then_some("selected"), uncounted.then_some("not-counted"))}>
                                    <button {onclick} data-space="play" aria-pressed={(i == pane.instr).to_string()} disabled={uncounted}
                                        title={uncounted.then_some("its address depends on data: listed, not counted")}>
                                        <span class="op">{ ins.op.clone() }</span>
                                        <span class="access">{ match ins.source_label() {
                                            Some(from) => format!("line {} ({from}): {}", ins.line, ins.access),
                                            None => format!("line {}: {}", ins.line, ins.access),
                                        } }</span>
                                        if uncounted { <span class="access">{ " · not counted (address is data)" }</span> }
                                    </button>
                                </li>
                            }
                        }) }
                    </ol>
                    if let Some(ins) = selected.filter(|i| i.issue_count() > 1) {
                        if k == 0 {
                            <button id="all-warps" aria-pressed={state.all_warps.to_string()}
                                onclick={ { let d = d.clone(); let on = !state.all_warps; Callback::from(move |_| d.dispatch(Action::AllWarps(on))) } }>
                                { if state.all_warps { "one warp" } else { "all warps" } }
                            </button>
                        }
                        { warp_select(d, k, pane, ins) }
                    }
                </div>
              </div>
            }
            if k == 0 { { super::lab::view(d, state, super::lab::Part::After) } }
            </div>
            <div class="pane-view">
            <h2 class="sr-only">{ if state.panes.len() > 1 { if k == 0 { "Figure A" } else { "Figure B" } } else { "Figure" } }</h2>
            { run_status(d, k, pane) }
            if let Some(r) = &result {
              // While the text has an error, the last result that ran stays visible but dimmed, so that nobody
              // reads it as the result of the text above.
              <div class={classes!("result", stale.then_some("stale"))} id={id("result", k)}>
                if let Some(e) = &pane.error {
                    <p class="stale-label">{ if e.starts_with("memory system") {
                        "Showing the last pattern that ran. Fix the memory system's device setting to update."
                    } else {
                        "Showing the last pattern that ran. Fix the error in the pattern to update."
                    } }</p>
                } else if pane.stopped.is_some() {
                    <p class="stale-label">{ "Showing the last result that finished." }</p>
                } else if stale {
                    <p class="stale-label">{ "Showing the last result while this run goes on." }</p>
                }
                if r.instructions.is_empty() {
                    <p class="summary">{ "No memory instruction ran: every lane was inactive, or the program has no loads or stores." }</p>
                }
                if let (Some(c), false) = (&r.cache_chart, state.projection) { { super::chart::memory_chart(k, c, pane.shown.as_deref().and_then(|s| super::chart::shown_served(s, state.step_shown())), false) } }
                { program_notes(k, r) }
                if let (Some(_), Some(shown)) = (selected, pane.shown.as_deref()) {
                    if crate::figure::tile::shared_part(&shown.report).is_some() && !(state.all_warps && shown.others.len() > 1) {
                        <div class="figure-tools">
                            <button id={id("tile-view", k)} aria-pressed={state.tile.to_string()}
                                title="shared memory as 128-byte rows of 16-byte chunks: which banks each lane's bytes fall in"
                                onclick={ { let d = d.clone(); let on = !state.tile; Callback::from(move |_| d.dispatch(Action::Tile(on))) } }>
                                { if state.tile { "lane view" } else { "tile view" } }
                            </button>
                        </div>
                    }
                    { figure_view(state, k, shown) }
                }
                if let Some(ins) = selected {
                    { metrics(ins, base) }
                }
                if r.blocks.total > 1 {
                    <p class="summary grid-note" id={id("blocks", k)}>{ blocks_text(r) }</p>
                }
                if let (Some(ins), Some(shown)) = (selected, pane.shown.as_deref()) {
                    { explanation_view(d, k, pane, shown, k == 0 && lab_unsolved(state)) }
                    <ul class="notes">
                        { for ins.notes.iter().map(|n| html! { <li><strong>{ "Model note: " }</strong>{ super::cite::cited(&crate::text::page_words(&n.text)) }<span class="source">{ " (" }{ super::cite::cited(&n.source) }{ ")" }</span></li> }) }
                        { for ins.warnings.iter().take(6).map(|w| html! { <li class="warning">{ w.clone() }</li> }) }
                    </ul>
                }
              </div>
            }
            </div>
        </section>
    }
}

/// What a program-level note is about, in a student's words, and whether it changes what the totals mean
/// (shown first, marked).
fn note_kind(id: &str) -> (&'static str, bool) {
    match id {
        i if i.ends_with("not-costed") => ("Not counted", true),
        "data-branch-assumed" | "data-guard-assumed" => ("Assumed about data", true),
        "data-branch-both-ways" => ("Data-dependent branch", false),
        i if i.ends_with("param-defaults") => ("Values given", true),
        "cuda-assumed" => ("Values assumed", true),
        "cuda-launch" => ("Launch from the code", false),
        i if i.ends_with("-kernel") || i == "cuda-templates" => ("Kernel", false),
        "cuda-local-arrays" => ("Registers and local memory", false),
        "cuda-as-written" => ("Counted as written", false),
        _ => ("Model note", false),
    }
}

/// The notes about the whole program, next to the totals they qualify: what ran, what values it was given,
/// what it assumed about data and what the totals leave out.
/// The memory system's switch and, when on, the device's changes (`sms=108 l2=40MB ways=16 blocks_per_sm=2
/// carveout_kb=16`; empty: the CC's example GPU).
fn caches_control(d: &Dispatch, k: usize, sc: &crate::scenario::Scenario, disabled: bool) -> Html {
    let on = sc.caches.is_some();
    let text = sc.value(Setting::Caches);
    let device = text.strip_prefix("on").unwrap_or("").trim().to_string();
    html! {
        <>
        <label title="L1, L2 and DRAM across the warps and blocks of the run: a deterministic model, explained in the model reference">
            <span>{ "memory system " }<a class="cite" href={format!("{}#the-memory-system", crate::text::MODEL_PAGE)} target="_blank" rel="noopener">{ "(how it is modelled)" }</a></span>
            <select id={id("caches", k)} {disabled}
                onchange={on_select(d, move |v| Action::Edit(k, Edit::Set(Setting::Caches, v)))}>
                <option value="off" selected={!on}>{ "each issue alone" }</option>
                <option value="on" selected={on}>{ "L1, L2, DRAM (modelled)" }</option>
            </select>
        </label>
        if on {
            <label title="sms=N l2=SIZE ways=N blocks_per_sm=N carveout_kb=N; empty: the compute capability's example GPU">
                { "device" }
                <input id={id("cache-device", k)} class="mono" value={device} spellcheck="false" {disabled}
                    placeholder="sms=108 l2=40MB ways=16"
                    oninput={on_input(d, move |v| Action::Edit(k, Edit::Set(Setting::Caches, format!("on {v}"))))} />
            </label>
        }
        </>
    }
}

fn program_notes(k: usize, r: &crate::analysis::ProgramResult) -> Html {
    if r.notes.is_empty() {
        return html! {};
    }
    let mut notes: Vec<(&'static str, bool, &crate::model::note::Note)> = r
        .notes
        .iter()
        .map(|n| {
            let (label, important) = note_kind(&n.id);
            (label, important, n)
        })
        .collect();
    // The ones that change what the numbers mean first; otherwise the order the analysis gave.
    notes.sort_by_key(|n| !n.1);
    html! {
        <section class="program-notes" id={id("program-notes", k)} aria-label="what these numbers assume and leave out">
            <h3>{ "What these numbers assume and leave out" }</h3>
            <ul>
                { for notes.iter().map(|(label, important, n)| html! {
                    <li class={classes!(important.then_some("important"))} data-note={n.id.to_string()}>
                        <strong>{ format!("{label}: ") }</strong>{ super::cite::cited(&crate::text::page_words(&n.text)) }
                        <span class="source">{ " (" }{ super::cite::cited(&n.source) }{ ")" }</span>
                    </li>
                }) }
            </ul>
        </section>
    }
}

/// The most instructions listed at once: a listing of 20,000 would take the browser seconds to draw on every
/// change, so a long one is listed as a window around the selected instruction.
const MAX_LISTED: usize = 200;

/// The first instruction listed: a window of [`MAX_LISTED`] around the selected one.
fn listed_from(selected: usize, total: usize) -> usize {
    selected.saturating_sub(MAX_LISTED / 2).min(total.saturating_sub(MAX_LISTED))
}

/// Which instructions a long listing shows, and a field to go to any of them by number.
fn instr_window(d: &Dispatch, k: usize, selected: usize, total: usize) -> Html {
    let from = listed_from(selected, total);
    let to = (from + MAX_LISTED).min(total);
    let d = d.clone();
    html! {
        <p class="instr-window" id={id("instr-window", k)}>
            { format!("Instructions {}–{} of {}, around the selected one. ", from + 1, to, grouped(total as u64)) }
            <label>{ "show instruction " }
                { number_field(id("instr-go", k), selected + 1, total, move |n| d.dispatch(Action::Instr(k, n - 1))) }
            </label>
        </p>
    }
}

/// A field for a number from 1 to `max`, for choices too many for a menu.
fn number_field(id: String, value: usize, max: usize, on: impl Fn(usize) + 'static) -> Html {
    let onchange = Callback::from(move |e: Event| {
        let el: HtmlInputElement = e.target_unchecked_into();
        if let Ok(n) = el.value().trim().parse::<usize>() {
            on(n.clamp(1, max.max(1)));
        }
    });
    html! { <input {id} class="short mono" type="number" min="1" max={max.to_string()} value={value.to_string()} {onchange} /> }
}

/// The most passes offered as a menu; more are chosen by number (a menu of 66,000 passes takes the browser
/// seconds to draw).
const MAX_PASS_MENU: u32 = 200;

/// The warp and pass selectors of an instruction with several issues in the listed block.
fn warp_select(d: &Dispatch, k: usize, pane: &Pane, ins: &InstrResult) -> Html {
    let (warp, pass) = match pane.shown.as_deref() {
        Some(s) if s.instr == pane.instr => (s.warp, s.pass),
        _ => ins.issue_at(pane.issue).unwrap_or((0, 0)),
    };
    let passes = ins.passes.get(warp as usize).copied().unwrap_or(0);
    let by_warp = {
        let ins = ins.clone();
        on_select(d, move |v| {
            let w: u32 = v.parse().unwrap_or(0);
            // The same pass in the other warp, or its last.
            let p = pass.min(ins.passes.get(w as usize).copied().unwrap_or(1).saturating_sub(1));
            Action::Issue(k, ins.issue_index(w, p).unwrap_or(0))
        })
    };
    let by_pass = {
        let ins = ins.clone();
        on_select(d, move |v| Action::Issue(k, ins.issue_index(warp, v.parse().unwrap_or(0)).unwrap_or(0)))
    };
    let by_pass_number = {
        let (ins, d) = (ins.clone(), d.clone());
        move |p: usize| d.dispatch(Action::Issue(k, ins.issue_index(warp, p as u32 - 1).unwrap_or(0)))
    };
    html! {
        <>
            <label class="warp-select">{ "warp" }
                <select id={id("warp", k)} onchange={by_warp}>
                    { for ins.passes.iter().enumerate().filter(|(_, &p)| p > 0).map(|(w, _)| html! {
                        <option value={w.to_string()} selected={w as u32 == warp}>{ format!("warp {w}") }</option>
                    }) }
                </select>
            </label>
            if passes > MAX_PASS_MENU {
                <label class="warp-select">{ "pass" }
                    { number_field(id("pass", k), pass as usize + 1, passes as usize, by_pass_number) }
                    { format!(" of {}", grouped(u64::from(passes))) }
                </label>
            } else if ins.max_passes() > 1 {
                <label class="warp-select">{ "pass" }
                    <select id={id("pass", k)} onchange={by_pass}>
                        { for (0..passes).map(|p| html! {
                            <option value={p.to_string()} selected={p == pass}>{ format!("{} of {passes}", p + 1) }</option>
                        }) }
                    </select>
                </label>
            }
        </>
    }
}

fn figure_view(state: &State, k: usize, shown: &Shown) -> Html {
    // On a phone the figure fits the screen's width: 16 lanes a row.
    let fold = if browser::narrow() { crate::figure::scene::Fold::Narrow } else { crate::figure::scene::Fold::Wide };
    let sc = Rc::new(pane_scene_in(state, shown, state.step_shown(), fold));
    let caption = sc.caption.clone();
    html! {
        // A figure with no narrow layout (every warp stacked, the tile view) keeps its width on a phone and
        // scrolls sideways there.
        <figure class={classes!("figure-wrap", (sc.width > crate::figure::scene::NARROW_WIDTH).then_some("wide"))}>
            <Figure scene={sc} theme={state.theme} id={id("figure", k)} />
            <figcaption id={id("caption", k)} aria-live="polite">{ caption }</figcaption>
        </figure>
    }
}

/// Whether a lab exercise is shown and not done yet: its suggested fixes would give its answer away.
fn lab_unsolved(state: &State) -> bool {
    state.lab.as_ref().is_some_and(|l| l.exercise().is_some_and(|e| !l.progress.done.contains(&e.id)))
}

/// The explanation and, unless `hold_fixes` (a lab exercise not done yet), the suggested fixes.
fn explanation_view(d: &Dispatch, k: usize, pane: &Pane, shown: &Shown, hold_fixes: bool) -> Html {
    // The explanation comes with the figure; the fixes, each checked by a run in the worker, right after.
    let suggestions = pane.fixes.as_deref().cloned().unwrap_or_default();
    let ex = crate::teach::explain::Explanation { lines: shown.why.clone(), suggestions };
    html! {
        <div class="explain" id={id("explain", k)}>
            <h3>{ "Why" }</h3>
            <ul>{ for ex.lines.iter().map(|l| html! { <li>{ l.clone() }</li> }) }</ul>
            if !ex.suggestions.is_empty() && hold_fixes {
                <h3>{ "Try" }</h3>
                <p class="fixes-held" id="fixes-held">
                    { "Suggested fixes appear once this exercise is done: here they would give its answer away." }
                </p>
            } else if !ex.suggestions.is_empty() {
                <h3>{ "Try" }</h3>
                <ul class="suggestions">
                    { for ex.suggestions.iter().map(|s| {
                        let fix = s.fix.clone();
                        let d = d.clone();
                        html! {
                            <li>
                                <strong>{ s.title.clone() }</strong>{ format!(" — {}", s.why) }
                                if let Some(f) = fix {
                                    <button class="try" onclick={Callback::from(move |_| d.dispatch(Action::Edit(k, Edit::Fix(f.clone()))))}>
                                        { match &s.fix { Some(Fix::Text(t)) if t.len() < 40 => format!("try {t}"), _ => "try it".to_string() } }
                                    </button>
                                }
                            </li>
                        }
                    }) }
                </ul>
            }
        </div>
    }
}

fn facts_view(d: &Dispatch, state: &State) -> Html {
    let cc = state.panes[0].scenario.cc;
    let f = cc.facts();
    let carve = Carveout::parse(&state.carveout).and_then(|c| carveout(cc, c));
    let l1 = match f.l1_default {
        crate::model::arch::L1Default::On => "cached in L1 and L2",
        crate::model::arch::L1Default::OffOptIn => "L2 only (L1 opt-in with -dlcm=ca)",
        crate::model::arch::L1Default::OffFixed => "L2 only",
    };
    html! {
        <section class="facts" id="facts" aria-label="facts for this compute capability">
            <h2>{ format!("CC {cc}: {} · {}", f.family.name(), f.example_gpu) }</h2>
            <dl>
                <dt>{ "L1 / shared" }</dt><dd>{ f.l1_shared }</dd>
                <dt>{ "shared capacities" }</dt><dd>{ format!("{} KB", f.shared_capacities_kb.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")) }</dd>
                <dt>{ "max shared per block" }</dt><dd>{ format!("{} KB", f.max_shared_per_block_kb) }</dd>
                <dt>{ "L2" }</dt><dd>{ f.l2 }</dd>
                <dt>{ "bank width" }</dt><dd>{ if f.bank_width_bytes == 8 { "64 bits (4- or 8-byte mode)" } else { "32 bits, 32 banks" } }</dd>
                <dt>{ "global loads" }</dt><dd>{ l1 }</dd>
                if !f.unchecked.is_empty() {
                    <dt>{ "not confirmed" }</dt><dd>{ f.unchecked }</dd>
                }
            </dl>
            <label class="carveout">{ "carveout %" }
                <input id="carveout" class="short mono" value={state.carveout.clone()} oninput={on_input(d, Action::Carveout)} />
            </label>
            <p id="carveout-result">{ match carve { Ok(c) => c.explanation, Err(e) => e } }</p>
        </section>
    }
}

fn player(d: &Dispatch, state: &State) -> Html {
    let max = state.max_steps();
    let shown = state.step_shown();
    let click = |a: Action| {
        let d = d.clone();
        Callback::from(move |_| d.dispatch(a.clone()))
    };
    let on_scrub = on_input(d, |v| Action::SetStep(v.parse().unwrap_or(0)));
    html! {
        <div class="player" role="group" aria-label="animation">
            <button id="first" data-space="play" title="first step (Home)" aria-label="first step" onclick={click(Action::SetStep(0))}>{ "|◀◀" }</button>
            <button id="back" data-space="play" title="step back (←)" aria-label="step back" onclick={click(Action::Step(-1))}>{ "◀" }</button>
            <button id="play" class="primary" title="play / pause (space)" aria-label={if state.playing { "pause" } else { "play" }} onclick={click(Action::TogglePlay)}>{ if state.playing { "❚❚ pause" } else { "▶ play" } }</button>
            <button id="step" data-space="play" title="step forward (→)" aria-label="step forward" onclick={click(Action::Step(1))}>{ "▶" }</button>
            <button id="last" data-space="play" title="last step (End)" aria-label="last step" onclick={click(Action::SetStep(usize::MAX))}>{ "▶▶|" }</button>
            <input id="scrub" type="range" min="0" max={max.to_string()} value={shown.to_string()} aria-label="step" oninput={on_scrub} />
            <span id="step-label" class="mono">{ format!("step {shown} / {max}") }</span>
            <label>{ "speed" }
                <select id="speed" onchange={on_select(d, |v| Action::Speed(v.parse().unwrap_or(700)))}>
                    { for [(1500, "slow"), (700, "normal"), (250, "fast"), (60, "fastest")].iter().map(|(ms, l)| html! {
                        <option value={ms.to_string()} selected={state.speed_ms == *ms}>{ *l }</option>
                    }) }
                </select>
            </label>
        </div>
    }
}

/// The page's properties: by default its analyses run in web workers; the browser tests pass the service to
/// run in-thread.
#[derive(Properties, PartialEq, Default)]
pub struct AppProps {
    /// Run analyses in-thread instead of in workers.
    #[prop_or_default]
    pub local: Option<LocalEngine>,
}

/// The page.
#[component(App)]
pub fn app(props: &AppProps) -> Html {
    let state = use_reducer(|| {
        let (link, embed) = browser::location();
        let mut s = State::from_link(link.as_deref(), embed);
        // A link carries its theme; a fresh visit follows the system's light or dark setting.
        if link.as_deref().is_none_or(|l| l.trim_start_matches('#').is_empty()) && browser::prefers_dark() {
            s.theme = Theme::Dark;
        }
        if let Some(texts) = super::rescue::take_saved() {
            s.restore(texts);
        }
        super::rescue::remember(s.panes.iter().map(|p| p.scenario.text.as_str()));
        s
    });
    let d = state.dispatcher();
    // Every pane whose latest request has not been sent yet sends it to the analysis engine; the replies come
    // back as actions. Sent from the render itself, before the page is reconciled and painted, so that the
    // worker computes while the main thread draws the edit.
    {
        let engine = use_mut_ref(|| Engine::new(props.local.clone()));
        let sent = use_mut_ref(Vec::<u64>::new);
        // A run the user cancelled: its worker stops (once per request).
        let stopped = use_mut_ref(Vec::<u64>::new);
        for (k, p) in state.panes.iter().enumerate() {
            if let Some(id) = p.cancelled.filter(|id| !stopped.borrow().contains(id)) {
                stopped.borrow_mut().push(id);
                engine.borrow().cancel(k);
            }
        }
        let due: Vec<(usize, crate::service::Request)> = state
            .panes
            .iter()
            .enumerate()
            .filter(|(k, p)| p.busy && sent.borrow().get(*k) != Some(&p.request))
            .filter_map(|(k, _)| Some((k, state.request(k)?)))
            .collect();
        if !due.is_empty() {
            let deliver: super::engine::Deliver = {
                let d = d.clone();
                Rc::new(move |pane, reply| d.dispatch(Action::Engine(pane, reply)))
            };
            for (k, req) in due {
                {
                    let mut s = sent.borrow_mut();
                    if s.len() <= k {
                        s.resize(k + 1, 0);
                    }
                    s[k] = req.id;
                }
                engine.borrow().send(k, req, Rc::clone(&deliver));
            }
        }
    }
    // After every render: close the pending performance measure once the figure answers the latest edit
    // (see perf.rs).
    let current = state.figures_current();
    use_effect(move || super::perf::rendered(current));
    // A menu shows the state's choice (`data-value`) after every render: an option the user once picked keeps
    // its own selectedness against the `selected` attribute, so a view brought by Back or a link would
    // otherwise show the old choice.
    use_effect(browser::sync_selects);
    // The address bar always holds the current view: encoded only when the view changes, and written once the
    // panes are answered (history.replaceState costs a couple of milliseconds, kept off the edit's path).
    // Each change of view (a preset, a CC, an instruction, comparing, the theme) is a history entry, so Back
    // and Forward walk through them; typing and stepping through the animation replace the current entry.
    let link = (*use_memo(state.view(), super::json::encode_view)).clone();
    let settled = !state.panes.iter().any(|p| p.busy);
    let last_entry = use_mut_ref(|| None::<crate::share::ViewState>);
    let shown = state.clone();
    use_effect_with((link.clone(), settled), move |(link, settled)| {
        if let (Some(link), true) = (link, settled) {
            let mut entry = shown.view();
            entry.step = None;
            entry.panes.iter_mut().for_each(|p| p.text.clear());
            let mut last = last_entry.borrow_mut();
            // Back or Forward brought this view: the address bar shows it (as written; the page may have
            // spelled it differently), and the entries after it stay.
            let arrived = browser::take_arrival();
            let shown = browser::location().0.as_deref() == Some(link.as_str());
            let push = !arrived && !shown && last.as_ref().is_some_and(|l| *l != entry);
            if !shown {
                browser::set_hash(link, push);
            }
            *last = Some(entry);
        }
    });
    let link = link.unwrap_or_default();
    // A link pasted into the address bar of this open page changes only the part after `#`: show its view,
    // unless the change is the page's own (it keeps the view there).
    {
        let d = d.clone();
        use_effect_with((), move |_| {
            let listener = web_sys::window().map(|w| {
                gloo_events::EventListener::new(&w, "hashchange", move |_| {
                    if let (Some(link), _) = browser::location() {
                        if !browser::is_own_hash(&link) {
                            browser::note_arrival();
                            d.dispatch(Action::OpenLink(link));
                        }
                    }
                })
            });
            move || drop(listener)
        });
    }
    // ?lab=NAME loads labs/NAME.toml from the site; ?lab=URL a lab from another site, where the site allows
    // it. The lab worker does the reading (with a size limit) and the checking.
    {
        let d = d.clone();
        use_effect_with((), move |_| {
            if let Some(param) = browser::lab_param() {
                let d2 = d.clone();
                let started = browser::load_lab(param, move |r| {
                    d2.dispatch(Action::LabLoaded(r.map(|lab| {
                        let key = format!("warpscope-lab:{}", lab.url);
                        let saved = browser::load(&key);
                        LabFile { key, json: lab.course, saved, origin: lab.origin }
                    })));
                });
                if let Err(e) = started {
                    d.dispatch(Action::LabLoaded(Err(e)));
                }
            }
        });
    }
    let progress = state.lab.as_ref().map(|l| (l.key.clone(), super::json::to_json(&l.progress)));
    use_effect_with(progress, |p| {
        if let Some((key, json)) = p {
            browser::save(key, json);
        }
    });

    // The animation timer runs only while playing.
    {
        let d = d.clone();
        use_effect_with((state.playing, state.speed_ms), move |&(playing, ms)| {
            let timer = playing.then(|| gloo_timers::callback::Interval::new(ms, move || d.dispatch(Action::Tick)));
            move || drop(timer)
        });
    }
    // Keyboard: space plays, arrows and PageUp/PageDown step, Home/End jump; typing in a field is left alone.
    // Embedded for slides (`?embed=slides`), a step past the last (or before the first) hands the keys back to
    // the deck: reveal.js's postMessage API moves it on, and the focus returns to the parent page.
    let edges = use_mut_ref(|| (false, false));
    *edges.borrow_mut() = (state.step_shown() == 0, state.step_shown() >= state.max_steps());
    {
        let d = d.clone();
        let slides = state.embed && browser::slides_mode();
        use_effect_with((), move |_| {
            let listener = web_sys::window().and_then(|w| w.document()).map(|doc| {
                // Not passive: the keys it handles must not also scroll the page.
                let active = gloo_events::EventListenerOptions::enable_prevent_default();
                gloo_events::EventListener::new_with_options(&doc, "keydown", active, move |e| {
                    let Some(e) = e.dyn_ref::<KeyboardEvent>() else { return };
                    let tag = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()).map(|el| el.tag_name());
                    let typing = matches!(tag.as_deref(), Some("INPUT" | "TEXTAREA" | "SELECT"))
                        || e.target()
                            .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
                            .is_some_and(|h| h.is_content_editable());
                    // A focused button keeps space and Enter for itself, except the instruction list's and the
                    // step controls' (`data-space="play"`): after clicking one, space still plays as the footer
                    // says. The arrows, Home/End and a presenter remote's PageUp/PageDown always step.
                    let plays = e
                        .target()
                        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                        .is_some_and(|el| el.get_attribute("data-space").as_deref() == Some("play"));
                    let button_key =
                        tag.as_deref() == Some("BUTTON") && (e.key() == "Enter" || (e.key() == " " && !plays));
                    if typing || button_key || e.ctrl_key() || e.meta_key() || e.alt_key() {
                        return;
                    }
                    let key = e.key();
                    let (first, last) = *edges.borrow();
                    let forward = matches!(key.as_str(), "ArrowRight" | "PageDown" | "ArrowDown" | " ");
                    let backward = matches!(key.as_str(), "ArrowLeft" | "PageUp" | "ArrowUp");
                    if slides && ((forward && last) || (backward && first)) {
                        e.prevent_default();
                        browser::hand_back_to_deck(forward);
                        return;
                    }
                    let action = match key.as_str() {
                        " " if slides => Some(Action::Step(1)),
                        " " => Some(Action::TogglePlay),
                        "ArrowRight" | "PageDown" => Some(Action::Step(1)),
                        "ArrowLeft" | "PageUp" => Some(Action::Step(-1)),
                        "ArrowDown" if slides => Some(Action::Step(1)),
                        "ArrowUp" if slides => Some(Action::Step(-1)),
                        "Home" => Some(Action::SetStep(0)),
                        "End" => Some(Action::SetStep(usize::MAX)),
                        _ => None,
                    };
                    if let Some(a) = action {
                        e.prevent_default();
                        d.dispatch(a);
                    }
                })
            });
            move || drop(listener)
        });
    }

    // Embedded in a deck: arriving on the slide starts the figure at step 0 and takes the keys, so that the
    // clicker steps the figure and then the deck (browser.rs, `on_slide_start`).
    {
        let d = d.clone();
        let slides = state.embed && browser::slides_mode();
        use_effect_with(slides, move |&slides| {
            if slides {
                browser::on_slide_start(Box::new(move || d.dispatch(Action::SetStep(0))));
            }
        });
    }
    if state.embed {
        return super::slides::embed_view(&d, &state, &link);
    }
    let comparing = state.panes.len() > 1;
    let dark = state.theme == Theme::Dark;
    let compare = |with: Option<CompareWith>| {
        let d = d.clone();
        Callback::from(move |_| d.dispatch(Action::Compare(with)))
    };
    let toggle_theme = {
        let d = d.clone();
        Callback::from(move |_| d.dispatch(Action::Theme(if dark { Theme::Light } else { Theme::Dark })))
    };
    html! {
        <div class={classes!("app", if dark { "theme-dark" } else { "theme-light" }, comparing.then_some("comparing"), state.projection.then_some("projection"), state.lab.is_some().then_some("lab-mode"))}>
            <header class="top">
                <h1>{ "warpscope" }</h1>
                <p class="tagline">{ "memory coalescing and bank conflicts, one warp at a time" }</p>
                <div class="top-actions">
                    if comparing {
                        <button id="compare" aria-pressed="true" onclick={compare(None)}>{ "single view" }</button>
                    } else {
                        <button id="compare" aria-pressed="false" title="the same pattern on the previous GPU generation" onclick={compare(Some(CompareWith::OtherGpu))}>{ "compare GPUs" }</button>
                        <button id="compare-pattern" title="a second pattern on the same GPU" onclick={compare(Some(CompareWith::OtherPattern))}>{ "compare patterns" }</button>
                    }
                    <button id="theme" onclick={toggle_theme}>{ if dark { "light theme" } else { "dark theme" } }</button>
                    <button id="projection" aria-pressed={state.projection.to_string()} title="large type for a projector: the memory chart across the page, every label 18 px or more at 1280x720"
                        onclick={ { let d = d.clone(); let on = !state.projection; Callback::from(move |_| d.dispatch(Action::Projection(on))) } }>
                        { "large type" }
                    </button>
                </div>
            </header>
            <main id="main">
            if let Some(n) = &state.notice {
                <p id="notice" class="notice" role="status">
                    { n.clone() }
                    <button class="dismiss" aria-label="dismiss" onclick={ { let d = d.clone(); Callback::from(move |_| d.dispatch(Action::Notice(None))) } }>{ "×" }</button>
                </p>
            }
            { player(&d, &state) }
            <div class="panes">
                { for (0..state.panes.len()).map(|k| pane_view(&d, &state, k)) }
            </div>
            { super::slides::share_bar(&d, &state, &link) }
            { facts_view(&d, &state) }
            </main>
            <footer class="keys">{ "Keys: space play/pause · ← → step · Home/End first/last. Counts follow the documented model per CC; model notes show where sources or hardware differ." }</footer>
        </div>
    }
}
