//! Figures for slides and handouts: the embed view a slide deck shows in an iframe (`?embed=slides`), the
//! share bar (the link, the embed code, SVG, PNG and every step as one zip) and the sizes the embed code asks
//! for. A figure on a slide is read from the back of a lecture hall: its caption and numbers are large, and it
//! fits the frame without scrolling.

use super::browser;
use super::common::{id, pane_scene, screen_scene, tile_shown};
use super::state::{Action, Pane, State};
use crate::figure::scene::Theme;
use crate::figure::svg::to_svg;
use yew::prelude::*;

type Dispatch = UseReducerDispatcher<State>;

fn file_stem(state: &State) -> String {
    let p = &state.panes[0];
    let what = if p.preset.is_empty() {
        p.result
            .as_ref()
            .and_then(|r| r.instructions.get(p.instr))
            .map(|i| i.op.to_ascii_lowercase())
            .unwrap_or_else(|| "figure".into())
    } else {
        p.preset.clone()
    };
    let clean: String = what.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    format!("warpscope-{clean}-cc{}", p.scenario.cc.to_string().replace('.', ""))
}

/// The embed code's frame width: a reveal.js slide's (960 x 700).
const EMBED_WIDTH: u32 = 960;

/// The tallest frame the embed code asks for: a reveal.js slide is 700 px tall, and its title takes about 100.
const EMBED_MAX_HEIGHT: u32 = 600;

/// Above this height-to-width ratio a figure sits beside its caption and numbers in the embed, drawn to the
/// frame's height (a 32-way conflict's 32 rows of banks): below its caption it would be cut or tiny.
const TALL: f64 = 0.7;

/// The frame height that shows the embedded figures whole at [`EMBED_WIDTH`], at most [`EMBED_MAX_HEIGHT`]: each
/// figure at the frame's width when it fits (its labels 24 units, about 18 px), the comparison's panes one
/// above the other, with the caption, the numbers and the controls; a taller figure is drawn to the frame's
/// height beside its words.
fn embed_height(state: &State) -> u32 {
    let scale = f64::from(EMBED_WIDTH - 30) / crate::figure::scene::WIDTH;
    let two = state.panes.len() > 1;
    let panes: f64 = state
        .panes
        .iter()
        .filter_map(|p| p.shown.as_deref())
        .map(|shown| pane_scene(state, shown, 0).height * scale + 130.0 + if two { 30.0 } else { 0.0 })
        .sum();
    let h = (panes + 60.0).clamp(300.0, f64::from(EMBED_MAX_HEIGHT));
    (h / 10.0).ceil() as u32 * 10
}

/// The embed code for the view: an iframe of the frame's size that opens at step 0 (a figure on a slide is
/// built up by the clicker), `kind` `slides` for the figures or `chart` for the memory chart.
fn embed_code(state: &State, kind: &str) -> Option<String> {
    let mut view = state.view();
    view.step = Some(0);
    let link = super::json::encode_view(&view)?;
    let url = format!("{}?embed={kind}#{link}", browser::base_url());
    let height = if kind == "chart" { 420 } else { embed_height(state) };
    Some(format!(
        "<iframe src=\"{url}\" width=\"{EMBED_WIDTH}\" height=\"{height}\" style=\"border:0\" title=\"warpscope figure\" allowfullscreen></iframe>"
    ))
}

pub fn share_bar(d: &Dispatch, state: &UseReducerHandle<State>, link: &str) -> Html {
    let full = format!("{}#{link}", browser::base_url());
    let iframe = embed_code(state, "slides").unwrap_or_default();
    // The memory chart has an embed of its own, for a slide about what L1, L2 and DRAM serve.
    let chart_iframe =
        state.panes[0].result.as_ref().and_then(|r| r.cache_chart.as_ref()).and_then(|_| embed_code(state, "chart"));
    let notify = |d: &Dispatch, r: Result<(), String>, ok: &str| {
        d.dispatch(Action::Notice(Some(match r {
            Ok(()) => ok.to_string(),
            Err(e) => e,
        })))
    };
    let copy_link = {
        let (d, full) = (d.clone(), full.clone());
        Callback::from(move |_| notify(&d, browser::copy(&full), "Link copied: it opens this exact view."))
    };
    let copy_embed = {
        let (d, iframe) = (d.clone(), iframe.clone());
        Callback::from(move |_| {
            notify(
                &d,
                browser::copy(&iframe),
                "Embed code copied (960 x up to 600 px, opening at step 0): paste it into a reveal.js slide, Google Slides or a web page.",
            )
        })
    };
    let copy_chart = chart_iframe.clone().map(|code| {
        let d = d.clone();
        Callback::from(move |_| {
            notify(&d, browser::copy(&code), "Memory chart embed code copied: paste it into a slide.")
        })
    });
    let stem = file_stem(state);
    let step = state.step_shown();
    let steps = state.max_steps();
    let tile = state.panes[0].shown.as_deref().is_some_and(|s| tile_shown(state, s));
    // Exports draw what is on screen (both panes, every warp stacked, the tile view), in the light theme,
    // when a button is pressed (not on every render).
    let frame_name = |k: usize, ext: &str| {
        if tile {
            format!("{stem}-tile.{ext}")
        } else {
            format!("{stem}-step{k:02}.{ext}")
        }
    };
    let export_svg_cb = {
        let (d, state, name) = (d.clone(), state.clone(), frame_name(step, "svg"));
        Callback::from(move |_| {
            if let Some(sc) = screen_scene(&state, step) {
                notify(&d, browser::download_text(&name, &to_svg(&sc, Theme::Light), "image/svg+xml"), "SVG saved.");
            }
        })
    };
    let export_png_cb = {
        let (d, state, name) = (d.clone(), state.clone(), frame_name(step, "png"));
        Callback::from(move |_| {
            if let Some(sc) = screen_scene(&state, step) {
                let d = d.clone();
                let svg = to_svg(&sc, Theme::Light);
                browser::download_png(&name, &svg, sc.width, sc.height, move |r| notify(&d, r, "PNG (2x) saved."));
            }
        })
    };
    // Every step as an SVG and a 2x PNG, numbered, in one zip: one download, whatever the browser's limit on
    // several. Drawn when asked, not on every render.
    // Every step as SVG and PNG in one zip: drawn frame by frame off the click (the page stays usable), with
    // its progress on the button's line and a cancel button.
    let export_all = {
        let (d, state, stem) = (d.clone(), state.clone(), stem.clone());
        Callback::from(move |_| {
            let snapshot: State = (*state).clone();
            let n = steps + 1;
            browser::set_export_cancelled(false);
            d.dispatch(Action::Exporting(Some((0, n))));
            let (d, stem) = (d.clone(), stem.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let mut files = Vec::with_capacity(n * 2);
                let mut failed = None;
                for k in 0..n {
                    if browser::export_cancelled() {
                        d.dispatch(Action::Exporting(None));
                        d.dispatch(Action::Notice(Some("Export cancelled: nothing was saved.".into())));
                        return;
                    }
                    let Some(sc) = screen_scene(&snapshot, k) else { continue };
                    let name = format!("{stem}-step{k:02}");
                    let svg = to_svg(&sc, Theme::Light);
                    match browser::png_bytes(&svg, sc.width, sc.height).await {
                        Ok(png) => files.push((format!("{name}.png"), png)),
                        Err(e) => failed = Some(e),
                    }
                    files.push((format!("{name}.svg"), svg.into_bytes()));
                    d.dispatch(Action::Exporting(Some((k + 1, n))));
                }
                d.dispatch(Action::Exporting(None));
                if files.is_empty() {
                    return;
                }
                let r = match browser::zip(files).await {
                    Ok(zip) => browser::download_bytes(&format!("{stem}-steps.zip"), &zip, "application/zip"),
                    Err(e) => Err(e),
                };
                let ok = match &failed {
                    None => format!("{n} frames saved in one zip, each step as SVG and PNG (2x), for a slide build."),
                    Some(e) => format!("{n} frames saved in one zip as SVG; the PNGs could not be drawn ({e})."),
                };
                notify(&d, r, &ok);
            });
        })
    };
    let cancel_export = Callback::from(|_| browser::set_export_cancelled(true));
    let no_link = link.is_empty();
    html! {
        <div class="share" aria-label="share and export">
            if no_link {
                <input id="share-link" readonly=true value="this pattern is too large to share as a link: export the figure, or save the text" aria-label="link to this view" />
            } else {
                <input id="share-link" class="mono" readonly=true value={full} aria-label="link to this view" />
            }
            <button id="copy-link" onclick={copy_link} disabled={no_link}>{ "copy link" }</button>
            <button id="copy-embed" onclick={copy_embed} title={iframe} disabled={no_link}>{ "copy embed code" }</button>
            if let (Some(cb), Some(code)) = (copy_chart, chart_iframe) {
                <button id="copy-chart-embed" onclick={cb} title={code} disabled={no_link}>{ "copy chart embed code" }</button>
            }
            <span class="sep" />
            <button id="export-svg" onclick={export_svg_cb}>{ "SVG" }</button>
            <button id="export-png" onclick={export_png_cb}>{ "PNG 2x" }</button>
            if let Some((done, all)) = state.exporting {
                <button id="export-frames" disabled=true>{ "all steps" }</button>
                <span id="export-progress" class="mono" role="status">{ format!("frame {done} of {all}") }</span>
                <button id="export-cancel" onclick={cancel_export}>{ "cancel" }</button>
            } else {
                <button id="export-frames" onclick={export_all}>{ "all steps" }</button>
            }
        </div>
    }
}

/// One line of pane `p`'s numbers for the embed view: what the figure is about first (an atomic's
/// read-modify-writes and the longest chain of them on one address, a constant load's passes), then its
/// sectors or wavefronts.
fn metric_line(p: &Pane) -> Option<String> {
    use crate::text::grouped;
    p.result.as_ref().and_then(|r| r.instructions.get(p.instr)).map(|i| {
        let mut parts = Vec::new();
        if let Some(a) = &i.atomic {
            parts.push(format!(
                "{} read-modify-writes, at most {} in series on one address",
                grouped(a.ops),
                grouped(a.max_serial)
            ));
        }
        if let Some(k) = &i.constant {
            parts.push(format!("{} constant-cache pass{}", grouped(k.passes), crate::text::ending(k.passes, "es")));
        }
        parts.push(format!("{} · CC {}", i.op, p.scenario.cc));
        if let Some(m) = &i.memory {
            parts.push(format!(
                "{} sectors · {} × {} B · {:.0}% efficient",
                grouped(m.sectors),
                grouped(m.transactions),
                m.transaction_bytes,
                m.efficiency * 100.0
            ));
        }
        if let Some(b) = &i.banks {
            parts.push(format!(
                "{} wavefronts · {} conflicts · {}-way",
                grouped(b.wavefronts),
                grouped(b.bank_conflicts),
                b.conflict_degree
            ));
        }
        parts.join(" · ")
    })
}

/// The embed view: the figures of every pane the link holds (both when it was copied in compare mode), each
/// with its caption and numbers, and the player; or, for `?embed=chart`, the memory chart. A figure taller
/// than wide sits beside its words, drawn to the frame's height, so that the whole of it shows.
pub fn embed_view(d: &Dispatch, state: &State, link: &str) -> Html {
    let click = |a: Action| {
        let d = d.clone();
        Callback::from(move |_| d.dispatch(a.clone()))
    };
    let theme = if state.theme == Theme::Dark { "theme-dark" } else { "theme-light" };
    if browser::embed_kind().as_deref() == Some("chart") {
        let p = &state.panes[0];
        return html! {
            <main id="embed-main" tabindex="-1" class={classes!("app", "embed", "embed-chart", theme)}>
                if let Some(c) = p.result.as_ref().and_then(|r| r.cache_chart.as_ref()) {
                    { super::chart::memory_chart(0, c, None, true) }
                } else if p.busy {
                    <p class="run-text">{ "Modelling the memory system…" }</p>
                } else {
                    <p>{ "This view has no memory chart: open it in warpscope and turn the memory system on." }</p>
                }
                <a id="open-full" href={format!("{}#{link}", browser::base_url())} target="_blank" rel="noopener">{ "open in warpscope ↗" }</a>
            </main>
        };
    }
    let max = state.max_steps();
    let step = state.step_shown();
    let two = state.panes.len() > 1;
    html! {
        <main id="embed-main" tabindex="-1" class={classes!("app", "embed", theme)}>
            if let Some(n) = &state.notice { <p id="notice" class="notice" role="status">{ n.clone() }</p> }
            <div class={classes!("embed-panes", two.then_some("two"))}>
                { for state.panes.iter().enumerate().map(|(k, p)| {
                    let scene = p.shown.as_deref().map(|shown| std::rc::Rc::new(pane_scene(state, shown, step)));
                    let tall = !two && scene.as_ref().is_some_and(|s| s.height > TALL * s.width);
                    html! {
                        <div class={classes!("embed-pane", tall.then_some("tall"))}>
                            <div class="embed-figure">
                                if let Some(sc) = &scene {
                                    <super::figure::Figure scene={sc.clone()} theme={state.theme} id={id("figure", k)} />
                                }
                            </div>
                            <div class="embed-words">
                                if two {
                                    <p class="embed-label">{ if k == 0 { "A" } else { "B" } }</p>
                                }
                                if let Some(sc) = &scene {
                                    <p id={id("caption", k)} class="embed-caption" aria-live="polite">{ sc.caption.clone() }</p>
                                }
                                <p id={id("metric-line", k)} class="metric-line">{ metric_line(p).unwrap_or_default() }</p>
                                if let Some(n) = p.result.as_ref().and_then(|r| r.assumptions()) {
                                    <p id={id("embed-assumptions", k)} class="assumptions-line">{ n }</p>
                                }
                            </div>
                        </div>
                    }
                }) }
            </div>
            <div class="embed-bar">
                <button id="back" data-space="play" title="step back (←)" aria-label="step back" onclick={click(Action::Step(-1))}>{ "◀" }</button>
                <button id="play" class="primary" title="play / pause (space)" aria-label={if state.playing { "pause" } else { "play" }} onclick={click(Action::TogglePlay)}>{ if state.playing { "❚❚" } else { "▶" } }</button>
                <button id="step" data-space="play" title="step forward (→)" aria-label="step forward" onclick={click(Action::Step(1))}>{ "▶|" }</button>
                <span id="step-label" class="mono">{ format!("{step} / {max}") }</span>
                <a id="open-full" href={format!("{}#{link}", browser::base_url())} target="_blank" rel="noopener">{ "open in warpscope ↗" }</a>
            </div>
        </main>
    }
}
