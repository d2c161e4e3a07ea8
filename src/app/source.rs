//! The code area of a pane: the pattern's editor and, for CUDA, PTX and SASS, the source view: every line of
//! the pasted kernel with its memory instructions' metrics beside it (summed over the block or grid, as the
//! instruction list counts them), heat-coloured by excess as Nsight Compute's Source page colours its
//! columns. Clicking a line selects its instruction in the figure. User text goes into the DOM as text only.

use super::editor::{error_at, Editor};
use crate::analysis::{InstrResult, ProgramResult};
use crate::lang::Lang;
use crate::model::global::SECTOR_BYTES;
use crate::text::grouped;
use std::collections::BTreeMap;
use std::rc::Rc;
use yew::prelude::*;

/// Heat levels above "no excess".
const HEAT_LEVELS: u64 = 4;
/// Texts longer than this many lines fold long runs of lines far from every memory instruction.
const FOLD_ABOVE_LINES: usize = 80;
/// Lines kept on each side of a line with instructions when folding.
const FOLD_CONTEXT: usize = 3;
/// The shortest run of lines that is folded.
const FOLD_MIN: usize = 5;

/// The sectors an instruction needs at least: one per request, and enough to carry the distinct bytes its
/// lanes touch (32 bytes a sector). Sectors beyond this are excess: misalignment, strides, scattered lanes.
pub fn ideal_sectors(i: &InstrResult) -> u64 {
    i.memory.as_ref().map_or(0, |m| m.requests.max(m.bytes_unique.div_ceil(SECTOR_BYTES)))
}

/// The metrics of one source line: the sums of its memory instructions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineMetrics {
    /// The instructions on the line (indices into the result's list), in program order.
    pub instrs: Vec<usize>,
    /// Global and local requests.
    pub requests: u64,
    /// Sectors.
    pub sectors: u64,
    /// Sectors beyond [`ideal_sectors`].
    pub excess_sectors: u64,
    /// Shared-memory wavefronts.
    pub wavefronts: u64,
    /// Bank conflicts (wavefronts beyond the ideal).
    pub conflicts: u64,
    /// Whether any instruction of the line reaches global or local memory, and shared memory.
    pub memory: bool,
    /// Whether any reaches shared memory.
    pub shared: bool,
    /// The line's memory operations the totals leave out (atomics, `ld.const`, calls).
    pub uncounted: Vec<String>,
}

impl LineMetrics {
    /// What the heat colour measures: excess sectors plus bank conflicts.
    pub fn excess(&self) -> u64 {
        self.excess_sectors + self.conflicts
    }

    /// Sectors per request, as Nsight Compute reports it.
    pub fn sectors_per_request(&self) -> Option<f64> {
        (self.requests > 0).then(|| self.sectors as f64 / self.requests as f64)
    }
}

/// The metrics of each source line that has memory instructions, by 1-based line of the pasted text.
pub fn line_metrics(r: &ProgramResult) -> BTreeMap<usize, LineMetrics> {
    let mut out: BTreeMap<usize, LineMetrics> = BTreeMap::new();
    for (k, ins) in r.instructions.iter().enumerate() {
        let m = out.entry(ins.line).or_default();
        // An atomic whose address is data: listed, not counted (it has no issue to draw).
        if ins.notes.iter().any(|n| n.id == "atomic-address-data") {
            if !m.uncounted.contains(&ins.op) {
                m.uncounted.push(ins.op.clone());
            }
            continue;
        }
        m.instrs.push(k);
        if let Some(mem) = &ins.memory {
            m.memory = true;
            m.requests += mem.requests;
            m.sectors += mem.sectors;
            m.excess_sectors += mem.sectors.saturating_sub(ideal_sectors(ins));
        }
        if let Some(b) = &ins.banks {
            m.shared = true;
            m.wavefronts += b.wavefronts;
            m.conflicts += b.bank_conflicts;
        }
    }
    for u in &r.uncounted {
        let name = u.op.split(" → ").next().unwrap_or(&u.op).trim_matches('`').to_string();
        let m = out.entry(u.line).or_default();
        if !m.uncounted.contains(&name) {
            m.uncounted.push(name);
        }
    }
    out
}

/// Heat level 0 (no excess) to [`HEAT_LEVELS`] (the worst line's), in equal steps of the worst line's excess.
pub fn heat(excess: u64, worst: u64) -> u64 {
    if excess == 0 || worst == 0 {
        0
    } else {
        (excess * HEAT_LEVELS).div_ceil(worst).clamp(1, HEAT_LEVELS)
    }
}

/// One row of the source view: a line, or a fold of lines with no memory instruction near.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Row {
    /// 1-based line.
    Line(usize),
    /// `n` lines folded, from 1-based line `from`.
    Fold { from: usize, n: usize },
}

/// The rows of a text of `lines` lines whose instructions sit on `marked` lines: every line, except that a long
/// text folds runs of at least [`FOLD_MIN`] lines more than [`FOLD_CONTEXT`] lines from every marked line.
pub fn rows(lines: usize, marked: &BTreeMap<usize, LineMetrics>) -> Vec<Row> {
    if lines <= FOLD_ABOVE_LINES {
        return (1..=lines).map(Row::Line).collect();
    }
    let near = |n: usize| marked.range(n.saturating_sub(FOLD_CONTEXT)..=n + FOLD_CONTEXT).next().is_some();
    let mut out = Vec::new();
    let mut n = 1;
    while n <= lines {
        if near(n) {
            out.push(Row::Line(n));
            n += 1;
            continue;
        }
        let from = n;
        while n <= lines && !near(n) {
            n += 1;
        }
        if n - from >= FOLD_MIN {
            out.push(Row::Fold { from, n: n - from });
        } else {
            out.extend((from..n).map(Row::Line));
        }
    }
    out
}

/// Whether the language has a source view (one line per statement, with instructions on lines).
pub fn has_source_view(lang: Lang) -> bool {
    matches!(lang, Lang::Cuda | Lang::Ptx | Lang::Sass)
}

/// What the code area shows.
#[derive(Properties, Clone)]
pub struct CodeAreaProps {
    /// The pane (0 or 1).
    pub pane: usize,
    /// The pattern text.
    pub text: AttrValue,
    /// Its language.
    pub lang: Lang,
    /// Locked by the lab.
    pub readonly: bool,
    /// The pane's error, as shown under the editor.
    pub error: Option<String>,
    /// The last good result.
    pub result: Option<Rc<ProgramResult>>,
    /// The selected instruction.
    pub instr: usize,
    /// The text changed.
    pub on_text: Callback<String>,
    /// An instruction was chosen in the source view.
    pub on_instr: Callback<usize>,
}

// The callbacks are left out: the pane builds new ones each render that do the same; comparing them would
// redraw the source view on every animation step. Results are compared by identity: a new analysis is a new
// `Rc`.
impl PartialEq for CodeAreaProps {
    fn eq(&self, o: &CodeAreaProps) -> bool {
        let same_result = match (&self.result, &o.result) {
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        same_result
            && (self.pane, &self.text, self.lang, self.readonly, &self.error, self.instr)
                == (o.pane, &o.text, o.lang, o.readonly, &o.error, o.instr)
    }
}

fn id(base: &str, pane: usize) -> String {
    if pane == 0 {
        base.to_string()
    } else {
        format!("{base}-b")
    }
}

/// The editor and, beside it behind a toggle, the source view.
#[function_component(CodeArea)]
pub fn code_area(p: &CodeAreaProps) -> Html {
    let show_source = use_state(|| false);
    let available = has_source_view(p.lang)
        && p.result.as_ref().is_some_and(|r| !r.instructions.is_empty() || !r.uncounted.is_empty());
    let source = *show_source && available;
    let selected_line = p.result.as_ref().and_then(|r| r.instructions.get(p.instr)).map_or(0, |i| i.line);
    let error = p.error.as_deref().and_then(error_at);
    let toggle = |on: bool| {
        let show_source = show_source.clone();
        Callback::from(move |_| show_source.set(on))
    };
    html! {
        <div class="code-area" id={id("code-area", p.pane)}>
            if available {
                <div class="code-tabs" role="group" aria-label="show the code or its metrics per line">
                    <button id={id("show-code", p.pane)} aria-pressed={(!source).to_string()} onclick={toggle(false)}>{ "code" }</button>
                    <button id={id("show-source", p.pane)} aria-pressed={source.to_string()} onclick={toggle(true)}
                        title="every line with its memory instructions' sectors, wavefronts and bank conflicts">{ "metrics per line" }</button>
                </div>
            }
            <div class="code-editor" hidden={source}>
                <Editor id={AttrValue::from(id("pattern", p.pane))} text={p.text.clone()} lang={p.lang} readonly={p.readonly}
                    {error} line={selected_line} on_text={p.on_text.clone()} />
            </div>
            if let (true, Some(r)) = (source, p.result.as_ref()) {
                { source_view(p, r) }
            }
        </div>
    }
}

/// A metric cell: empty where the line has no instruction of that kind.
fn cell(name: &'static str, value: Option<String>) -> Html {
    html! { <td class="num" data-col={name}>{ value.unwrap_or_default() }</td> }
}

fn source_view(p: &CodeAreaProps, r: &ProgramResult) -> Html {
    let metrics = line_metrics(r);
    // With the memory system on: each line's modelled L1 and L2 hit rates and DRAM reads (docs/model.md#the-memory-system).
    let caches: BTreeMap<usize, [String; 3]> =
        r.cache_chart.as_ref().map(|c| c.per_line.iter().cloned().collect()).unwrap_or_default();
    let cached = r.cache_chart.is_some();
    let worst = metrics.values().map(LineMetrics::excess).max().unwrap_or(0);
    let text: Vec<&str> = p.text.lines().collect();
    let selected = r.instructions.get(p.instr).map(|i| i.line);
    let stale = p.error.is_some();
    // The indentation the lines with instructions share is left out, so that the code starts beside the
    // numbers instead of past the column's edge (a loop body in a kernel is indented two or three levels).
    let indent = metrics
        .keys()
        .filter_map(|n| text.get(n - 1))
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    let row = |n: usize| -> Html {
        let full = text.get(n - 1).copied().unwrap_or("");
        let blank = full.len() - full.trim_start_matches([' ', '\t']).len();
        let line = &full[blank.min(indent)..];
        let m = metrics.get(&n);
        let level = m.map_or(0, |m| heat(m.excess(), worst));
        let onclick = m.and_then(|m| m.instrs.first()).map(|&first| {
            let cb = p.on_instr.clone();
            Callback::from(move |_| cb.emit(first))
        });
        let title = m.map(|m| {
            let mut t = format!(
                "{} excess sector{}, {} bank conflict{}",
                grouped(m.excess_sectors),
                crate::text::ending(m.excess_sectors, "s"),
                grouped(m.conflicts),
                crate::text::ending(m.conflicts, "s")
            );
            if !m.uncounted.is_empty() {
                t = format!("{t}; not counted in the totals: {}", m.uncounted.join(", "));
            }
            t
        });
        let num = |on: bool, v: u64| (on).then(|| grouped(v));
        html! {
            <tr class={classes!(m.filter(|m| !m.instrs.is_empty()).map(|_| "has-instr"), m.filter(|m| !m.uncounted.is_empty()).map(|_| "uncounted"),
                    format!("heat-{level}"), (m.is_some() && selected == Some(n)).then_some("selected"))}
                data-line={n.to_string()} data-heat={level.to_string()} {title} {onclick}>
                <td class="ln">{ n }</td>
                <td class="ops">
                    { for m.iter().flat_map(|m| m.instrs.iter()).map(|&k| {
                        let cb = p.on_instr.clone();
                        html! {
                            <button class="op-chip" aria-pressed={(k == p.instr).to_string()}
                                onclick={Callback::from(move |e: MouseEvent| { e.stop_propagation(); cb.emit(k) })}>{ r.instructions[k].op.clone() }</button>
                        }
                    }) }
                    { for m.iter().flat_map(|m| m.uncounted.iter()).map(|u| html! {
                        <span class="op-chip not-counted" title="this operation moves memory, but the totals leave it out">{ format!("{u}: not counted") }</span>
                    }) }
                </td>
                { cell("sectors_per_request", m.and_then(LineMetrics::sectors_per_request).map(|v| format!("{v:.2}"))) }
                { cell("sectors", m.and_then(|m| num(m.memory, m.sectors))) }
                { cell("excess_sectors", m.and_then(|m| num(m.memory, m.excess_sectors))) }
                { cell("wavefronts", m.and_then(|m| num(m.shared, m.wavefronts))) }
                { cell("bank_conflicts", m.and_then(|m| num(m.shared, m.conflicts))) }
                if cached {
                    { for ["l1_hit", "l2_hit", "dram_read"].into_iter().enumerate().map(|(k, name)| {
                        cell(name, caches.get(&n).map(|c| c[k].clone()))
                    }) }
                }
                <td class="code">{ line }</td>
            </tr>
        }
    };
    html! {
        <div class={classes!("source-view", stale.then_some("stale"))} id={id("source-view", p.pane)}>
            if stale {
                <p class="stale-label">{ "Showing the last pattern that ran. Fix the error to update." }</p>
            }
            <p class="source-legend">
                { "Summed over " }{ if r.blocks.total > 1 { "the grid" } else { "the block" } }
                { ". Colour: excess sectors (beyond one per request and 32 bytes each) plus bank conflicts, against the worst line: " }
                { for ["none", "≤ ¼", "≤ ½", "≤ ¾", "worst"].iter().enumerate().map(|(l, label)| html! {
                    <span class={classes!("swatch", format!("heat-{l}"))}>{ *label }</span>
                }) }
                { ". Click a line to see its instruction." }
                if cached {
                    { " L1 hit, L2 hit and DRAM are modelled (the memory chart says how)." }
                }
            </p>
            <div class="source-scroll">
                <table class="source-table" aria-label="metrics per source line">
                    <thead>
                        <tr>
                            <th scope="col">{ "line" }</th><th scope="col">{ "instructions" }</th>
                            <th scope="col" title="sectors per request">{ "sectors / req" }</th><th scope="col">{ "sectors" }</th>
                            <th scope="col" title="sectors beyond one per request and 32 bytes each">{ "excess" }</th>
                            <th scope="col">{ "wavefronts" }</th><th scope="col">{ "conflicts" }</th>
                            if cached {
                                <th scope="col" title="modelled: the line's loads' L1 sector hit rate">{ "L1 hit" }</th>
                                <th scope="col" title="modelled: the line's L2 sector hit rate">{ "L2 hit" }</th>
                                <th scope="col" title="modelled: bytes its L2 misses read from DRAM">{ "DRAM" }</th>
                            }
                            <th scope="col" class="code">{ "source" }</th>
                        </tr>
                    </thead>
                    <tbody>
                        { for rows(text.len(), &metrics).into_iter().map(|rw| match rw {
                            Row::Line(n) => row(n),
                            Row::Fold { from, n } => html! {
                                <tr class="fold"><td class="ln">{ format!("{from}–{}", from + n - 1) }</td>
                                    <td colspan={if cached { "10" } else { "7" }}>{ format!("⋯ {n} lines without memory instructions") }</td></tr>
                            },
                        }) }
                    </tbody>
                </table>
            </div>
        </div>
    }
}
