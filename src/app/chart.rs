//! The memory chart, as Nsight Compute's Memory Workload Analysis draws it: the kernel, the L1 cache (per SM),
//! the L2 cache and DRAM as boxes left to right, requests and sectors on the arrows between them, hit rates in
//! the boxes, and beside them the bounds no schedule changes. The worker wrote every figure in a student's
//! words, with Nsight Compute's exact names in each figure's tip (shown on hover). Drawn as HTML, not as an
//! SVG scaled to its column, so that its text has the size the page gives it: in projection mode (large type)
//! at least 18 px at 1280x720, as in a slide's embed.

use super::common::id;
use crate::analysis::caches::CacheChart;
use crate::service::Shown;
use yew::prelude::*;

/// The shown issue in the memory chart: where its sectors came from (L1, L2, DRAM counts), the boxes that
/// serve the current step's sectors (bit 1 L1, 2 L2, 3 DRAM), and which issue it is.
pub struct ChartNow {
    counts: [usize; 3],
    boxes: u8,
    issue: String,
}

/// The shown issue's sectors by where the modelled memory system served them, at animation step `step`.
pub fn shown_served(shown: &Shown, step: usize) -> Option<ChartNow> {
    let served = &shown.report.served;
    if served.is_empty() {
        return None;
    }
    let mut counts = [0; 3];
    for (_, how) in served {
        counts[*how as usize] += 1;
    }
    let mut boxes = 0u8;
    if let Some(m) = shown.report.memory() {
        let now = m.steps.iter().flat_map(|r| &r.transactions).nth(step.wrapping_sub(1));
        for t in now.into_iter() {
            for s in (0..4u64).filter(|s| t.bytes == 128 && t.sector_mask >> s & 1 != 0 || t.bytes != 128 && *s == 0) {
                if let Some((_, how)) = served.iter().find(|(a, _)| *a == t.addr + 32 * s) {
                    boxes |= 1 << (*how as u8 + 1);
                }
            }
        }
    }
    Some(ChartNow { counts, boxes, issue: format!("warp {}, pass {}", shown.warp, shown.pass + 1) })
}

/// The legend of where the figure's sectors came from, in the figure's own colours.
fn served_legend(n: &ChartNow) -> Html {
    let part = |k: usize, name: &'static str, colour: &'static str| {
        html! {
            <span class="mc-served">
                <span class={classes!("swatch", format!("served-{k}"))} aria-hidden="true"></span>
                { format!("{} {name} ({colour})", n.counts[k]) }
            </span>
        }
    };
    html! {
        <>
            { part(0, "from L1", "green") }{ " · " }{ part(1, "from L2", "yellow") }{ " · " }{ part(2, "from DRAM", "purple") }
        </>
    }
}

/// The chart of pane `k`: `now` is the figure's issue, `projection` the page's large type.
pub fn memory_chart(k: usize, c: &CacheChart, now: Option<ChartNow>, projection: bool) -> Html {
    let lit = now.as_ref().map_or(0, |n| n.boxes);
    let level = ["mc-kernel", "mc-l1", "mc-l2", "mc-dram"];
    html! {
        <section class={classes!("memory-chart", projection.then_some("projection"))} id={id("memory-chart", k)} aria-label="memory chart">
            <h3>{ "Memory chart" }
                if c.sensitive { <span class="sensitive" title="another number of resident blocks per SM moves these figures">{ " · sensitive to the schedule" }</span> }
            </h3>
            <p class="modelled">{ c.title.clone() }</p>
            <div class="mc-flow" role="img" aria-label="the kernel, the L1 cache, the L2 cache and DRAM, with the traffic between them">
                { for c.boxes.iter().enumerate().map(|(i, [name, value, detail, tip])| html! {
                    <>
                        <div class={classes!("mc-box", level.get(i).copied(), (lit >> i & 1 != 0).then_some("mc-now"))} title={tip.clone()}>
                            <span class="mc-name">{ name.clone() }</span>
                            <span class="mc-value">{ value.clone() }</span>
                            <span class="mc-detail">{ detail.clone() }</span>
                        </div>
                        if let Some([above, below, tip]) = c.arrows.get(i) {
                            <div class="mc-arrow" title={tip.clone()}>
                                <span class="mc-above">{ above.clone() }</span>
                                <span class="mc-line" aria-hidden="true"></span>
                                <span class="mc-below">{ below.clone() }</span>
                            </div>
                        }
                    </>
                }) }
            </div>
            if let Some(n) = &now {
                <p class="mc-issue" id={id("mc-issue", k)}>
                    { format!("The figure's issue ({}), sector by sector: ", n.issue) }{ served_legend(n) }
                    { "; the box serving the step's sector is outlined." }
                </p>
            }
            <ul class="mc-bounds">
                { for c.bounds.iter().map(|[words, tip]| html! { <li title={tip.clone()}>{ words.clone() }</li> }) }
            </ul>
            if let Some(s) = &c.schedule { <p class="mc-schedule">{ s.clone() }</p> }
            <table class="mc-lines">
                <thead><tr><th>{ "line" }</th><th>{ "instruction" }</th><th>{ "L1 hit %" }</th><th>{ "L2 hit %" }</th><th>{ "read from DRAM" }</th></tr></thead>
                <tbody>
                { for c.lines.iter().map(|[line, ins, l1, l2, dram]| html! {
                    <tr><td>{ line.clone() }</td><td class="mono">{ ins.clone() }</td><td>{ l1.clone() }</td><td>{ l2.clone() }</td><td>{ dram.clone() }</td></tr>
                }) }
                </tbody>
            </table>
            <ul class="mc-notes">
                { for c.notes.iter().map(|n| html! {
                    <li data-note={n.id.to_string()}>{ super::cite::cited(&crate::text::page_words(&n.text)) }
                        <span class="source">{ " (" }{ super::cite::cited(&n.source) }{ ")" }</span></li>
                }) }
            </ul>
        </section>
    }
}
