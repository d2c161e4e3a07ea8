//! The figure, laid out once: a pure function from a report (one warp's issue of one instruction) and an
//! animation step to a scene of rectangles, lines and text. The page draws the scene as SVG elements and the
//! exporters write it as an SVG string, so the picture is the same everywhere.
//!
//! Layout: the 32 lanes across the top (with their request or phase groups), then for global and local
//! memory the touched 128-byte lines as four 32-byte sector cells each, with the bytes each lane touches;
//! for shared memory the 32 banks as columns under the lanes and the touched words as cells, numbered by the
//! wavefront that serves them. Arrows join each lane to its bytes. Step k shows the first k transactions or
//! wavefronts as done and the k-th as current.

use crate::model::access::{Instr, LaneSet, WARP_LANES};
use crate::model::report::{BankCost, Cost, MemoryCost, Report, SpaceTag};
use crate::text::{hex, plural};
use serde::Serialize;

/// What a shape is, which decides its colour in every theme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The figure's background.
    Background,
    /// Heading text.
    Title,
    /// Ordinary text.
    Label,
    /// Secondary text.
    Muted,
    /// An active lane.
    Lane,
    /// A lane that takes part in the current step.
    LaneCurrent,
    /// An inactive lane.
    LaneInactive,
    /// An error lane (outside a window, misaligned under strict).
    LaneError,
    /// A request or phase bracket.
    Group,
    /// A 32-byte sector or bank word nobody touches.
    Cell,
    /// A sector or word the warp touches, not yet moved or served.
    CellTouched,
    /// A sector or word moved or served in an earlier step.
    CellDone,
    /// The sector or word of the current step.
    CellCurrent,
    /// The bytes a lane actually uses.
    Bytes,
    /// An arrow from a lane to its bytes.
    Arrow,
    /// An arrow of a lane in the current step.
    ArrowCurrent,
    /// The outline of a 128-byte line or transaction.
    Outline,
    /// Bytes of a shared-memory phase (an ldmatrix matrix) in the tile view: one of four colours, by the
    /// phase number modulo 4.
    Phase(u8),
    /// A sector by where the modelled memory system served it: 0 an L1 hit, 1 L2, 2 DRAM.
    Served(u8),
    /// The outline of a chunk that conflicts: the same banks as another row's chunk in the same phase.
    Conflict,
    /// Text that names a conflict.
    ConflictLabel,
    /// Text on a bright cell (the current lane, a served word, the current sector): dark in both themes.
    Ink,
}

/// Text alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Anchor {
    /// Left.
    Start,
    /// Centre.
    Middle,
    /// Right.
    End,
}

/// One shape. Coordinates in CSS pixels of the scene.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum Item {
    /// A rectangle; `tip` becomes its tooltip.
    Rect {
        /// Left.
        x: f64,
        /// Top.
        y: f64,
        /// Width.
        w: f64,
        /// Height.
        h: f64,
        /// What it is.
        class: Class,
        /// Tooltip text.
        tip: Option<String>,
    },
    /// A straight line.
    Line {
        /// Start x.
        x1: f64,
        /// Start y.
        y1: f64,
        /// End x.
        x2: f64,
        /// End y.
        y2: f64,
        /// What it is.
        class: Class,
    },
    /// Text.
    Text {
        /// Anchor x.
        x: f64,
        /// Baseline y.
        y: f64,
        /// The text.
        text: String,
        /// Font size in px.
        size: f64,
        /// What it is.
        class: Class,
        /// Alignment.
        anchor: Anchor,
    },
}

/// A laid-out figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scene {
    /// Width in px.
    pub width: f64,
    /// Height in px.
    pub height: f64,
    /// Shapes, back to front.
    pub items: Vec<Item>,
    /// One sentence describing the step shown, for the caption and screen readers.
    pub caption: String,
}

/// One step of the animation: a transaction or a wavefront.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    /// Which part of a split generic access (0 when not split).
    pub part: usize,
    /// The request (global, local) or phase (shared), from 0.
    pub group: usize,
    /// The transaction or wavefront within it, from 0.
    pub index: usize,
    /// The lanes it serves.
    pub lanes: LaneSet,
    /// A sentence saying what happens.
    pub text: String,
}

/// Every step of an issue, in order: each request's transactions, or each phase's wavefronts.
pub fn steps(report: &Report) -> Vec<Step> {
    let mut out = Vec::new();
    for (pi, p) in report.parts().iter().enumerate() {
        let first = out.len();
        match &p.cost {
            Cost::Memory(m) => {
                let split = m.steps.len() > 1 || m.steps.first().is_some_and(|s| s.lanes.len() < 32);
                for (gi, r) in m.steps.iter().enumerate() {
                    for (ti, t) in r.transactions.iter().enumerate() {
                        let what = if t.bytes == 128 { "line" } else { "sector" };
                        let req = if split {
                            format!("request {} (lanes {}): ", gi + 1, r.lanes.ranges())
                        } else {
                            String::new()
                        };
                        out.push(Step {
                            part: pi,
                            group: gi,
                            index: ti,
                            lanes: t.lanes,
                            text: format!("{req}{} B {what} at {} for {}", t.bytes, hex(t.addr), t.lanes.phrase()),
                        });
                    }
                }
            }
            Cost::Banks(b) => {
                let matrix = is_matrix(p);
                let verb = if Instr::parse(&p.op).is_ok_and(|i| i.base.is_store()) { "writes" } else { "reads" };
                for (gi, ph) in b.phases.iter().enumerate() {
                    let n = ph.wavefronts.len();
                    for (wi, w) in ph.wavefronts.iter().enumerate() {
                        let phase = if matrix {
                            format!("{}: ", matrix_name(ph.lanes))
                        } else if b.phases.len() > 1 {
                            format!("phase {} (lanes {}): ", gi + 1, ph.lanes.ranges())
                        } else {
                            String::new()
                        };
                        let extra = if wi >= ph.ideal as usize { " (a replay caused by a bank conflict)" } else { "" };
                        out.push(Step {
                            part: pi,
                            group: gi,
                            index: wi,
                            lanes: w.lanes,
                            text: if matrix {
                                let rows: Vec<String> = w.lanes.iter().map(|l| (l % 8).to_string()).collect();
                                let rows = if rows.len() == 1 {
                                    format!("row {}", rows[0])
                                } else {
                                    format!("rows {}", rows.join(", "))
                                };
                                format!(
                                    "{phase}wavefront {} of {n} {verb} {rows} ({}){extra}",
                                    wi + 1,
                                    w.lanes.phrase()
                                )
                            } else {
                                format!("{phase}wavefront {} of {n} serves {}{extra}", wi + 1, w.lanes.phrase())
                            },
                        });
                    }
                }
            }
            Cost::Constant(k) => {
                let n = k.constant_passes.len();
                for (i, c) in k.constant_passes.iter().enumerate() {
                    out.push(Step {
                        part: pi,
                        group: 0,
                        index: i,
                        lanes: c.lanes,
                        text: format!(
                            "pass {} of {n}: the constant cache serves {} to {}",
                            i + 1,
                            hex(c.addr),
                            c.lanes.phrase()
                        ),
                    });
                }
            }
            Cost::Split { .. } => {}
        }
        // cp.async: say which half of the copy each step belongs to.
        if report.space == SpaceTag::GlobalToShared {
            let half = if p.space == SpaceTag::Global { "global read" } else { "shared write" };
            for s in &mut out[first..] {
                s.text = format!("{half}, {}", s.text);
            }
        }
    }
    out
}

/// The width of a scene.
pub const WIDTH: f64 = 1200.0;
/// The smallest scale the page draws a scene at: a 1280-pixel-wide screen gives the figure 800 pixels.
pub const MIN_SCALE: f64 = 2.0 / 3.0;
/// The size of every label in a scene: 16 CSS pixels at [`MIN_SCALE`], readable from the back of a room.
pub const TEXT: f64 = 24.0;
/// The size of a scene's title.
pub const TITLE: f64 = 27.0;
/// The height of a line of labels.
pub const LINE_H: f64 = 30.0;
const LANE_X0: f64 = 100.0;
const LANE_W: f64 = 32.0;
const LANE_PITCH: f64 = 34.0;
const LANE_Y: f64 = 44.0;
const LANE_H: f64 = 36.0;
/// The width of a narrow scene (a phone's): 16 lanes a row.
pub const NARROW_WIDTH: f64 = 660.0;

/// How wide a scene is laid out: every lane in one row (the page on a screen, slides, the exports), or two
/// rows of 16 lanes, and shared memory's 32 banks as two rows of 16, for a phone, where the wide figure would
/// be drawn at a third of its size or need a sideways swipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// 32 lanes a row, [`WIDTH`] wide.
    Wide,
    /// 16 lanes a row, [`NARROW_WIDTH`] wide.
    Narrow,
}

impl Fold {
    /// The scene's width.
    pub fn width(self) -> f64 {
        match self {
            Fold::Wide => WIDTH,
            Fold::Narrow => NARROW_WIDTH,
        }
    }
    /// Lanes (and banks) in a row.
    fn per_row(self) -> usize {
        match self {
            Fold::Wide => WARP_LANES,
            Fold::Narrow => WARP_LANES / 2,
        }
    }
    /// Rows of lanes (and of banks per 128-byte row).
    fn rows(self) -> usize {
        WARP_LANES / self.per_row()
    }
    /// The left edge of lane (or bank) `l`'s column.
    fn x(self, l: usize) -> f64 {
        LANE_X0 + (l % self.per_row()) as f64 * LANE_PITCH
    }
    /// Which row lane (or bank) `l` is in.
    fn row(self, l: usize) -> usize {
        l / self.per_row()
    }
}

/// The text on top of a cell of class `cell`: dark on the bright fills that both themes share.
pub fn ink_on(cell: Class) -> Class {
    match cell {
        Class::LaneCurrent | Class::CellCurrent | Class::CellDone => Class::Ink,
        _ => Class::Label,
    }
}

/// About how wide `t` is at `size` (DejaVu Sans: digits 0.64 em, lower case 0.3-0.82 em; 0.6 on average).
pub fn text_width(t: &str, size: f64) -> f64 {
    t.chars().count() as f64 * size * 0.6
}

/// `t` cut into lines no wider than `width` at `size`, at spaces.
pub fn wrap(t: &str, size: f64, width: f64) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in t.split(' ') {
        if !line.is_empty() && text_width(&line, size) + text_width(word, size) + size * 0.3 > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

/// `t`, cut with an ellipsis to fit `width` at `size`.
pub fn fit(t: &str, size: f64, width: f64) -> String {
    let max = (width / (size * 0.6)).floor() as usize;
    if t.chars().count() <= max {
        t.to_string()
    } else {
        let mut s: String = t.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// Wrapped text from `(x, y)` (the first baseline) down; returns the y under its last line.
pub(super) fn paragraph(items: &mut Vec<Item>, x: f64, y: f64, t: &str, class: Class) -> f64 {
    paragraph_in(items, x, y, t, class, WIDTH)
}

/// [`paragraph`] in a scene `width` wide.
fn paragraph_in(items: &mut Vec<Item>, x: f64, y: f64, t: &str, class: Class, width: f64) -> f64 {
    let mut y = y;
    for l in wrap(t, TEXT, width - x - 16.0) {
        items.push(text(x, y, l, TEXT, class, Anchor::Start));
        y += LINE_H;
    }
    y
}

pub(super) fn text(x: f64, y: f64, t: impl Into<String>, size: f64, class: Class, anchor: Anchor) -> Item {
    Item::Text { x, y, text: t.into(), size, class, anchor }
}

pub(super) fn rect(x: f64, y: f64, w: f64, h: f64, class: Class, tip: Option<String>) -> Item {
    Item::Rect { x, y, w, h, class, tip }
}

fn line(x1: f64, y1: f64, x2: f64, y2: f64, class: Class) -> Item {
    Item::Line { x1, y1, x2, y2, class }
}

/// The lanes that moved data in any part of a report.
fn active_lanes(report: &Report) -> LaneSet {
    let mut m = LaneSet::default();
    for p in report.parts() {
        for (l, a) in p.addresses.iter().enumerate() {
            if a.is_some() {
                m.insert(l);
            }
        }
    }
    m
}

/// How a lane is drawn: an error, in the current step, active, or inactive.
fn lane_class(report: &Report, active: LaneSet, current: Option<&Step>, l: usize) -> Class {
    if report.error_lanes.contains(l) {
        Class::LaneError
    } else if current.is_some_and(|s| s.lanes.contains(l)) {
        Class::LaneCurrent
    } else if active.contains(l) {
        Class::Lane
    } else {
        Class::LaneInactive
    }
}

/// A figure's title: `LDG.E.32 on CC 8.0: a[i]` (the instruction, the CC, the access as the source spells it).
/// The CLI's exported figures and the page's figure use it alike.
pub fn title(op: &str, cc: crate::model::arch::Cc, access: &str) -> String {
    format!("{op} on CC {cc}: {access}")
}

/// Lays out one issue at animation step `shown` (0 = nothing moved yet; `steps(report).len()` = all done).
pub fn scene(report: &Report, title: &str, shown: usize) -> Scene {
    scene_in(report, title, shown, Fold::Wide)
}

/// Where a scene's lanes are: their columns, the top of each row of them, their height.
#[derive(Clone, Copy)]
struct LaneRows {
    fold: Fold,
    tops: [f64; 2],
    h: f64,
}

impl LaneRows {
    /// The middle of lane `l`, where its arrows start.
    fn mid(&self, l: usize) -> f64 {
        self.fold.x(l) + LANE_W / 2.0
    }
    /// The bottom of lane `l`.
    fn bottom(&self, l: usize) -> f64 {
        self.tops[self.fold.row(l)] + self.h
    }
}

/// Draws the 32 lanes as `fold` lays them out, each row's top at `top(row)`, `h` tall; into `under` (wide:
/// under the arrows) or `over` (narrow: the first row's arrows pass under the second row's lanes).
#[allow(clippy::too_many_arguments)]
fn lane_rows(
    under: &mut Vec<Item>,
    over: &mut Vec<Item>,
    report: &Report,
    current: Option<&Step>,
    fold: Fold,
    top: &dyn Fn(usize) -> f64,
    h: f64,
    tips: bool,
) -> LaneRows {
    let active = active_lanes(report);
    let out = if fold == Fold::Wide { under } else { over };
    // The numbers' baseline: the lanes' own row is 36 tall, a repeated strip 32.
    let base = if h >= LANE_H { 26.0 } else { 24.0 };
    let mut tops = [0.0; 2];
    for (r, t) in tops.iter_mut().enumerate().take(fold.rows()) {
        *t = top(r);
        out.push(text(LANE_X0 - 8.0, *t + base, "lane", TEXT, Class::Muted, Anchor::End));
    }
    for l in 0..WARP_LANES {
        let class = lane_class(report, active, current, l);
        let tip = tips.then(|| lane_tip(report, l));
        let y = tops[fold.row(l)];
        out.push(rect(fold.x(l), y, LANE_W, h, class, tip));
        out.push(text(fold.x(l) + LANE_W / 2.0, y + base, l.to_string(), TEXT, ink_on(class), Anchor::Middle));
    }
    LaneRows { fold, tops, h }
}

/// [`scene`], laid out `fold` wide: on a phone, 16 lanes a row.
pub fn scene_in(report: &Report, title: &str, shown: usize, fold: Fold) -> Scene {
    let width = fold.width();
    let all = steps(report);
    let shown = shown.min(all.len());
    let current = shown.checked_sub(1).and_then(|i| all.get(i));
    let mut items = vec![rect(0.0, 0.0, width, 0.0, Class::Background, None)];
    items.push(text(16.0, 30.0, fit(title, TITLE, width - 32.0), TITLE, Class::Title, Anchor::Start));

    // Request or phase brackets when the warp is split; ldmatrix's phases are its matrices, and each lane
    // gives one row of its matrix.
    let matrix = is_matrix(report);
    let groups: Vec<(LaneSet, String)> = report
        .parts()
        .first()
        .map(|p| match &p.cost {
            Cost::Memory(m) if m.steps.iter().any(|s| s.lanes.len() < 32) => {
                m.steps.iter().enumerate().map(|(i, s)| (s.lanes, format!("request {}", i + 1))).collect()
            }
            // Eight lanes leave room for `matrix 1`; its lanes are the bracket's.
            Cost::Banks(b) if matrix => b
                .phases
                .iter()
                .map(|s| (s.lanes, format!("matrix {}", s.lanes.iter().next().unwrap_or(0) / 8)))
                .collect(),
            Cost::Banks(b) if b.phases.iter().any(|s| s.lanes.len() < 32) => {
                b.phases.iter().enumerate().map(|(i, s)| (s.lanes, format!("phase {}", i + 1))).collect()
            }
            _ => Vec::new(),
        })
        .unwrap_or_default();
    // Labels drawn last, over the arrows that fan out from the lanes: the groups' names and the parts' headings.
    let mut headings = Vec::new();
    // Each row of lanes with, under it, its lanes' matrix rows and the brackets of its groups.
    let band = LANE_H + 8.0 + if matrix { 28.0 } else { 0.0 } + if groups.is_empty() { 0.0 } else { 34.0 };
    let row_top = |r: usize| LANE_Y + r as f64 * (band + 10.0);
    let lanes = lane_rows(&mut items, &mut headings, report, current, fold, &row_top, LANE_H, true);
    for r in 0..fold.rows() {
        let mut y = row_top(r) + LANE_H + 8.0;
        let in_row = |l: &usize| fold.row(*l) == r;
        if matrix {
            // Each lane gives one row of its matrix: the row's number under the lane.
            headings.push(text(LANE_X0 - 8.0, y + 20.0, "row", TEXT, Class::Muted, Anchor::End));
            for (ls, _) in &groups {
                for l in ls.iter().filter(in_row) {
                    headings.push(text(
                        lanes.mid(l),
                        y + 20.0,
                        (l % 8).to_string(),
                        TEXT,
                        Class::Muted,
                        Anchor::Middle,
                    ));
                }
            }
            y += 28.0;
        }
        for (ls, label) in &groups {
            let (Some(first), Some(last)) = (ls.iter().find(in_row), ls.iter().filter(in_row).last()) else { continue };
            let (x1, x2) = (fold.x(first), fold.x(last) + LANE_W);
            items.push(line(x1, y + 4.0, x2, y + 4.0, Class::Group));
            items.push(line(x1, y, x1, y + 4.0, Class::Group));
            items.push(line(x2, y, x2, y + 4.0, Class::Group));
            headings.push(text((x1 + x2) / 2.0, y + 28.0, label.clone(), TEXT, Class::Muted, Anchor::Middle));
        }
    }
    let mut y = row_top(fold.rows() - 1) + band + 34.0;

    let mut step_base = 0usize;
    for (pi, p) in report.parts().iter().enumerate() {
        let part_steps = all.iter().filter(|s| s.part == pi).count();
        let done_in_part = shown.saturating_sub(step_base).min(part_steps);
        let label = match p.space {
            // cp.async: one instruction reads global memory and writes shared memory.
            SpaceTag::Global if report.space == SpaceTag::GlobalToShared => "global read (sectors)",
            SpaceTag::Shared if report.space == SpaceTag::GlobalToShared => "shared write (wavefronts)",
            SpaceTag::Global => "global memory",
            SpaceTag::Local => "local memory (interleaved)",
            SpaceTag::Shared => "shared memory",
            SpaceTag::Constant => "constant cache (one address per pass)",
            SpaceTag::Generic | SpaceTag::GlobalToShared => "memory",
        };
        // Right-aligned on a background box, drawn last so that the arrows fanning out from the lanes pass
        // under it.
        let label_w = text_width(label, TEXT) + 16.0;
        headings.push(rect(width - 16.0 - label_w, y - 24.0, label_w, 32.0, Class::Background, None));
        headings.push(text(width - 24.0, y, label, TEXT, Class::Title, Anchor::End));
        y += 14.0;
        // A later part (cp.async's shared write) repeats the lanes above itself, so that its arrows do not
        // cross the part before it.
        let from = if pi == 0 {
            lanes
        } else {
            let strip_y = y + 6.0;
            let strip_top = |r: usize| strip_y + r as f64 * 40.0;
            let strip = lane_rows(&mut items, &mut headings, report, current, fold, &strip_top, 32.0, false);
            y += 48.0 + (fold.rows() - 1) as f64 * 40.0;
            strip
        };
        let cur = current.filter(|s| s.part == pi);
        y = match &p.cost {
            Cost::Memory(m) => memory_view(&mut items, p, m, &from, y, done_in_part, cur, &report.served),
            Cost::Banks(b) => bank_view(&mut items, p, b, &from, y, done_in_part, cur),
            Cost::Constant(k) => constant_view(&mut items, k, &from, y, done_in_part, cur),
            Cost::Split { .. } => y,
        };
        if p.atomic.is_some_and(|a| a.serial > 1) {
            // A shared atomic's steps are its wavefronts, one lane's operation each where lanes share a word:
            // the queue marks them.
            let now = cur.filter(|_| matches!(p.cost, Cost::Banks(_))).map(|s| s.lanes);
            y = queue_view(&mut items, p, y + 12.0, now, fold);
        }
        y += 24.0;
        step_base += part_steps;
    }
    items.append(&mut headings);

    let caption = match current {
        Some(s) => format!("Step {shown} of {}: {}.", all.len(), s.text),
        None if all.is_empty() => "No lane is active: nothing moves.".to_string(),
        None if all.len() == 1 => format!("The warp issues {}; 1 step follows.", report.op),
        None => format!("The warp issues {}; {} follow.", report.op, plural(all.len() as u32, "step")),
    };
    // The caption is not a shape: the page shows it as a live figcaption, the SVG writer as text in the
    // room left for it here.
    let height = y + 24.0;
    if let Some(Item::Rect { h, .. }) = items.first_mut() {
        *h = height;
    }
    Scene { width, height, items, caption }
}

/// True for `ldmatrix` / `stmatrix` (`LDSM`, `STSM`): each lane gives one 16-byte row of an 8x8 matrix, and
/// each matrix is one phase.
pub fn is_matrix(report: &Report) -> bool {
    Instr::parse(&report.op).is_ok_and(|i| i.base.is_matrix())
}

/// `matrix 1 (lanes 8-15)`: the matrix whose rows the lanes of a phase give (threads 8k..8k+7 give matrix k).
pub fn matrix_name(lanes: LaneSet) -> String {
    let first = lanes.iter().next().unwrap_or(0);
    format!("matrix {} (lanes {})", first / 8, lanes.ranges())
}

/// `2 wavefronts (measured; documented phase model: 4)` where the two shared models differ (docs/model.md#shared-memory-as-measured),
/// otherwise `2 wavefronts`. Merging phases never costs more, so the smaller count is the measured one.
pub fn wavefronts_text(wavefronts: u64, other_model: Option<u64>) -> String {
    let count = plural(u32::try_from(wavefronts).unwrap_or(u32::MAX), "wavefront");
    match other_model {
        Some(o) if o > wavefronts => format!("{count} (measured; documented phase model: {o})"),
        Some(o) if o < wavefronts => format!("{count} (documented phase model; measured: {o})"),
        _ => count,
    }
}

/// Why each phase of a shared access costs what it does, one sentence per phase: for ldmatrix, where its
/// rows fall among the eight groups of four banks; otherwise its wavefronts against the ideal.
pub fn phase_sentences(report: &Report, b: &BankCost) -> Vec<String> {
    let row_bytes = u64::from(b.banks) * u64::from(b.bank_bytes);
    let group_banks = (16 / b.bank_bytes.max(1)).max(1);
    let matrix = is_matrix(report);
    let mut out = Vec::new();
    for (i, ph) in b.phases.iter().enumerate() {
        let w = ph.wavefronts.len() as u32;
        let mut addrs: Vec<u64> = ph.lanes.iter().filter_map(|l| report.addresses.get(l).copied().flatten()).collect();
        if addrs.is_empty() {
            continue;
        }
        addrs.sort_unstable();
        addrs.dedup();
        let name =
            if matrix { matrix_name(ph.lanes) } else { format!("phase {} (lanes {})", i + 1, ph.lanes.ranges()) };
        if !matrix {
            let extra = w.saturating_sub(ph.ideal);
            out.push(format!(
                "{name}: {} (ideal {}){}",
                plural(w, "wavefront"),
                ph.ideal,
                if extra > 0 {
                    format!(", {} replayed by bank conflicts", plural(extra, "wavefront"))
                } else {
                    String::new()
                }
            ));
            continue;
        }
        // Rows per group of four banks (a 16-byte chunk's position in a 128-byte row).
        let mut per_group: Vec<(u64, u32)> = Vec::new();
        for a in &addrs {
            let g = (a % row_bytes) / 16;
            match per_group.iter_mut().find(|(k, _)| *k == g) {
                Some((_, n)) => *n += 1,
                None => per_group.push((g, 1)),
            }
        }
        let (worst_group, worst) =
            per_group.iter().copied().max_by_key(|&(g, n)| (n, std::cmp::Reverse(g))).unwrap_or((0, 1));
        let banks = |g: u64| {
            let lo = g * u64::from(group_banks);
            format!("banks {lo}-{}", lo + u64::from(group_banks) - 1)
        };
        let rows = plural(addrs.len() as u32, "row");
        let why = if worst == 1 {
            format!("its {rows} fall in {} different groups of 4 banks, so one pass serves them all", per_group.len())
        } else if per_group.len() == 1 {
            format!("its {rows} all fall in {}, so they are served one after another", banks(worst_group))
        } else {
            format!(
                "its {rows} fall in {} groups of 4 banks, {worst} of them in {}",
                per_group.len(),
                banks(worst_group)
            )
        };
        let way = if worst > 1 { format!(" ({worst}-way)") } else { String::new() };
        out.push(format!("{name}: {why}: {}{way}", plural(w, "wavefront")));
    }
    out
}

fn lane_tip(report: &Report, l: usize) -> String {
    if report.error_lanes.contains(l) {
        return format!("lane {l}: error lane (outside the window or allocation)");
    }
    for p in report.parts() {
        if let Some(Some(a)) = p.addresses.get(l) {
            let space = match p.space {
                SpaceTag::Shared => "shared offset",
                SpaceTag::Local => "local store address",
                _ => "address",
            };
            return format!("lane {l}: {space} {} ({} B)", hex(*a), p.size);
        }
    }
    format!("lane {l}: inactive")
}

const SECTOR_W: f64 = 31.0;
const LINE_GAP: f64 = 20.0;
const LINES_PER_ROW: usize = 8;
/// Where the first 128-byte line of a row starts.
const LINE_X0: f64 = 24.0;

#[allow(clippy::too_many_arguments)]
fn memory_view(
    items: &mut Vec<Item>,
    p: &Report,
    m: &MemoryCost,
    from: &LaneRows,
    y0: f64,
    done: usize,
    current: Option<&Step>,
    served: &[(u64, crate::model::cache::Served)],
) -> f64 {
    let served_at = |addr: u64| served.iter().find(|(a, _)| *a == addr).map(|(_, how)| *how as u8);
    let per_row = if from.fold == Fold::Wide { LINES_PER_ROW } else { LINES_PER_ROW / 2 };
    let size = u64::from(p.size);
    let mut lines: Vec<u64> = p.addresses.iter().flatten().map(|a| a / 128).collect();
    lines.sort_unstable();
    lines.dedup();
    // Which steps moved which sectors: (line, sector) -> first step index that moved it.
    let mut moved: Vec<((u64, u64), usize)> = Vec::new();
    let mut k = 0usize;
    for r in &m.steps {
        for t in &r.transactions {
            for s in 0..4u64 {
                if t.sector_mask & (1 << s) != 0 {
                    let sector_addr = t.addr / 32 + s;
                    moved.push(((sector_addr / 4, sector_addr % 4), k));
                }
            }
            k += 1;
        }
    }
    let current_index =
        current.map(|c| m.steps.iter().take(c.group).map(|r| r.transactions.len()).sum::<usize>() + c.index);
    let row_h = 90.0;
    let top = y0 + 44.0;
    // The lines' addresses go over the arrows that cross them. Addresses too long for a line's width (a
    // 64-bit pointer) become offsets from the first line, which the legend names.
    let mut labels = Vec::new();
    let room = 4.0 * SECTOR_W + LINE_GAP - 8.0;
    let base = lines
        .iter()
        .any(|&ln| text_width(&hex(ln * 128), TEXT) > room)
        .then(|| lines.first().map(|&ln| ln * 128))
        .flatten();
    let line_label = |ln: u64| match base {
        Some(b) => fit(&format!("+{}", hex(ln * 128 - b)), TEXT, room),
        None => hex(ln * 128),
    };
    for (i, &ln) in lines.iter().enumerate() {
        let col = i % per_row;
        let row = i / per_row;
        let x = LINE_X0 + col as f64 * (4.0 * SECTOR_W + LINE_GAP);
        let y = top + row as f64 * row_h;
        labels.push(text(x, y - 8.0, line_label(ln), TEXT, Class::Muted, Anchor::Start));
        if i > 0 && lines[i - 1] + 1 != ln && col > 0 {
            labels.push(text(x - LINE_GAP / 2.0, y + 26.0, "…", TEXT, Class::Muted, Anchor::Middle));
        }
        for s in 0..4u64 {
            let steps_here: Vec<usize> = moved.iter().filter(|(k, _)| *k == (ln, s)).map(|(_, i)| *i).collect();
            let touched = p.addresses.iter().flatten().any(|a| a / 32 == ln * 4 + s);
            let from = served_at((ln * 4 + s) * 32);
            let class = if current_index.is_some_and(|c| steps_here.contains(&c)) {
                Class::CellCurrent
            } else if let Some(k) = from.filter(|_| touched) {
                Class::Served(k)
            } else if steps_here.iter().any(|&k| k < done) {
                Class::CellDone
            } else if touched {
                Class::CellTouched
            } else {
                Class::Cell
            };
            let sx = x + s as f64 * SECTOR_W;
            let how = match from {
                Some(0) => ", an L1 hit",
                Some(1) => ", served by L2",
                Some(_) => ", read from DRAM",
                None => "",
            };
            let tip = format!("sector {} ({}touched{how})", hex((ln * 4 + s) * 32), if touched { "" } else { "not " });
            items.push(rect(sx, y, SECTOR_W - 2.0, 36.0, class, Some(tip)));
        }
        // The transaction outline for 128-byte transactions.
        if m.transaction_bytes == 128 {
            items.push(rect(x - 2.0, y - 2.0, 4.0 * SECTOR_W + 2.0, 40.0, Class::Outline, None));
        }
    }
    // Bytes each lane touches, and arrows from the lanes.
    for (l, a) in p.addresses.iter().enumerate() {
        let Some(a) = a else { continue };
        let Some(i) = lines.iter().position(|&ln| ln == a / 128) else { continue };
        let col = i % per_row;
        let row = i / per_row;
        let x = LINE_X0 + col as f64 * (4.0 * SECTOR_W + LINE_GAP);
        let y = top + row as f64 * row_h;
        let off = a % 128;
        let bx = x + (off / 32) as f64 * SECTOR_W + (off % 32) as f64 * (SECTOR_W - 2.0) / 32.0;
        let bw = ((size as f64) * (SECTOR_W - 2.0) / 32.0).max(1.5);
        items.push(rect(bx, y + 24.0, bw, 10.0, Class::Bytes, None));
        let cur = current.is_some_and(|c| c.lanes.contains(l));
        items.push(line(
            from.mid(l),
            from.bottom(l),
            bx + bw / 2.0,
            y,
            if cur { Class::ArrowCurrent } else { Class::Arrow },
        ));
    }
    items.append(&mut labels);
    let rows = lines.len().div_ceil(per_row).max(1);
    let bottom = top + rows as f64 * row_h - 40.0;
    let count = |k: u8| served.iter().filter(|(_, h)| *h as u8 == k).count();
    let where_served = if served.is_empty() {
        String::new()
    } else {
        format!(
            "; modelled, this issue's sectors came from L1 (light green): {}, L2 (yellow): {}, DRAM (purple): {}",
            count(0),
            count(1),
            count(2)
        )
    };
    let legend = format!(
        "{}, {}, {} of {} B; cells are 32-byte sectors, green bars the bytes each lane uses{}{where_served}",
        plural(m.lines, "line"),
        plural(m.sectors, "sector"),
        plural(m.transactions, "transaction"),
        m.transaction_bytes,
        base.map(|b| format!("; lines are labelled by their offset from {}", hex(b))).unwrap_or_default()
    );
    paragraph_in(items, LINE_X0, bottom + 26.0, &legend, Class::Muted, from.fold.width()) - 24.0
}

/// An atomic's lanes that share an address, drawn as the queue they form (docs/model.md#atomics: "each read/modify/write to
/// that location occurs and they are all serialized"): the three longest queues, lanes in order.
fn queue_view(items: &mut Vec<Item>, p: &Report, y0: f64, now: Option<LaneSet>, fold: Fold) -> f64 {
    let mut by_addr: Vec<(u64, Vec<usize>)> = Vec::new();
    for (l, a) in p.addresses.iter().enumerate() {
        let Some(a) = a else { continue };
        match by_addr.iter_mut().find(|(x, _)| x == a) {
            Some((_, ls)) => ls.push(l),
            None => by_addr.push((*a, vec![l])),
        }
    }
    by_addr.retain(|(_, ls)| ls.len() > 1);
    by_addr.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let queues = by_addr.len();
    let mut y = y0;
    let shown_boxes: usize = if fold == Fold::Wide { 16 } else { 8 };
    let box_w = 48.0;
    for (a, lanes) in by_addr.iter().take(3) {
        y += LINE_H;
        let place = if p.space == SpaceTag::Global { " (performed in L2)" } else { "" };
        let head = format!("At {}{place}: {} read-modify-writes, one after another", hex(*a), lanes.len());
        items.push(text(
            LINE_X0,
            y,
            fit(&head, TEXT, fold.width() - LINE_X0 - 16.0),
            TEXT,
            Class::Label,
            Anchor::Start,
        ));
        y += 12.0;
        // The first lanes, or, when the current step's lane is further on, the window of lanes that ends with it.
        let at = lanes.iter().position(|l| now.is_some_and(|n| n.contains(*l))).unwrap_or(0);
        let (x0, shown, skip) = if at >= shown_boxes {
            (LINE_X0 + 136.0, shown_boxes - 2, at + 3 - shown_boxes)
        } else {
            (LINE_X0, shown_boxes, 0)
        };
        if skip > 0 {
            items.push(text(LINE_X0, y + 25.0, format!("{skip} before"), TEXT, Class::Muted, Anchor::Start));
        }
        for (k, l) in lanes.iter().enumerate().skip(skip).take(shown).map(|(k, l)| (k - skip, l)) {
            let x = x0 + k as f64 * (box_w + 20.0);
            let class = if now.is_some_and(|n| n.contains(*l)) { Class::CellCurrent } else { Class::CellTouched };
            let tip = format!("lane {l}: operation {} of {}", k + skip + 1, lanes.len());
            items.push(rect(x, y, box_w, 34.0, class, Some(tip)));
            items.push(text(x + box_w / 2.0, y + 25.0, l.to_string(), TEXT, ink_on(class), Anchor::Middle));
            if k + skip + 1 < lanes.len().min(skip + shown) {
                items.push(line(x + box_w + 2.0, y + 17.0, x + box_w + 18.0, y + 17.0, Class::Arrow));
            }
        }
        if lanes.len() > skip + shown {
            let x = x0 + shown as f64 * (box_w + 20.0);
            items.push(text(
                x,
                y + 25.0,
                format!("+{}", lanes.len() - skip - shown),
                TEXT,
                Class::Muted,
                Anchor::Start,
            ));
        }
        y += 34.0 + 8.0;
    }
    if queues > 3 {
        y += LINE_H;
        let more = if queues == 4 {
            "… and 1 more address that several lanes share".to_string()
        } else {
            format!("… and {} more addresses that several lanes share", queues - 3)
        };
        items.push(text(LINE_X0, y, more, TEXT, Class::Muted, Anchor::Start));
    }
    y + 8.0
}

/// A constant-bank load: one box per distinct address, in the order the passes serve them, with an arrow from
/// each lane to its address.
fn constant_view(
    items: &mut Vec<Item>,
    k: &crate::model::report::ConstantCost,
    from: &LaneRows,
    y0: f64,
    done: usize,
    current: Option<&Step>,
) -> f64 {
    let per_row: usize = if from.fold == Fold::Wide { 8 } else { 4 };
    let box_w = (from.fold.width() - LINE_X0 - 40.0) / per_row as f64 - 8.0;
    let row_h = 80.0;
    let top = y0 + 44.0;
    for (i, c) in k.constant_passes.iter().enumerate() {
        let x = LINE_X0 + (i % per_row) as f64 * (box_w + 8.0);
        let y = top + (i / per_row) as f64 * row_h;
        let class = if current.is_some_and(|s| s.index == i) {
            Class::CellCurrent
        } else if i < done {
            Class::CellDone
        } else {
            Class::CellTouched
        };
        let tip = format!("pass {}: {} for {}", i + 1, hex(c.addr), c.lanes.phrase());
        items.push(rect(x, y, box_w, 36.0, class, Some(tip)));
        items.push(text(
            x + box_w / 2.0,
            y + 26.0,
            fit(&hex(c.addr), TEXT, box_w - 6.0),
            TEXT,
            ink_on(class),
            Anchor::Middle,
        ));
        let cur = current.is_some_and(|s| s.index == i);
        for l in c.lanes.iter() {
            items.push(line(
                from.mid(l),
                from.bottom(l),
                x + box_w / 2.0,
                y,
                if cur { Class::ArrowCurrent } else { Class::Arrow },
            ));
        }
    }
    let rows = k.constant_passes.len().div_ceil(per_row).max(1);
    let bottom = top + rows as f64 * row_h - 40.0;
    let legend = format!(
        "{} through the constant cache, one per distinct address (with 64-byte lines: {}); boxes are the addresses in the constant bank",
        if k.passes == 1 { "1 pass".to_string() } else { format!("{} passes", k.passes) },
        plural(k.lines_64, "line")
    );
    paragraph_in(items, LINE_X0, bottom + 26.0, &legend, Class::Muted, from.fold.width()) - 24.0
}

/// Rows of banks drawn at once (more when one wavefront spans more rows): a 32-way conflict's 32 rows are
/// drawn whole, the point of the picture.
pub const MAX_BANK_ROWS: usize = 32;
/// Up to this many rows, a row of banks is drawn 32 units tall; more are drawn 28 tall, still room for a
/// label of [`TEXT`] size.
const ROOMY_BANK_ROWS: usize = 16;

/// The rows of the bank grid to draw, as `(first, count)` of `n` rows: all when they fit, else a window that
/// holds the rows `lo..=hi` the current step serves (the last rows it can, so that the window moves on with
/// the animation), or the first rows before the first step.
pub fn bank_window(n: usize, now: Option<(usize, usize)>) -> (usize, usize) {
    if n <= MAX_BANK_ROWS {
        return (0, n);
    }
    match now {
        None => (0, MAX_BANK_ROWS),
        Some((lo, hi)) => {
            let count = (hi - lo + 1).clamp(MAX_BANK_ROWS, n);
            let first = (hi + 1).saturating_sub(count).min(lo).min(n - count);
            (first, count)
        }
    }
}

fn bank_view(
    items: &mut Vec<Item>,
    p: &Report,
    b: &BankCost,
    from: &LaneRows,
    y0: f64,
    done: usize,
    current: Option<&Step>,
) -> f64 {
    let matrix = is_matrix(p);
    let row_bytes = u64::from(b.banks) * u64::from(b.bank_bytes);
    // Each served word, with the global index of the wavefront that serves it.
    let mut served: Vec<(u64, usize)> = Vec::new();
    let mut k = 0usize;
    let mut current_index = None;
    for (gi, ph) in b.phases.iter().enumerate() {
        for (wi, w) in ph.wavefronts.iter().enumerate() {
            if current.is_some_and(|c| c.group == gi && c.index == wi) {
                current_index = Some(k);
            }
            for word in &w.words {
                served.push((word.addr, k));
            }
            k += 1;
        }
    }
    let mut rows: Vec<u64> = served.iter().map(|(a, _)| a / row_bytes).collect();
    rows.sort_unstable();
    rows.dedup();
    // The rows the current wavefront serves are always drawn: the window follows the animation.
    let now = current_index.and_then(|c| {
        let at = |a: u64| rows.iter().position(|&r| r == a / row_bytes);
        let idx: Vec<usize> = served.iter().filter(|(_, k)| *k == c).filter_map(|(a, _)| at(*a)).collect();
        Some((*idx.iter().min()?, *idx.iter().max()?))
    });
    let (first_row, shown_rows) = bank_window(rows.len(), now);
    let all_rows = rows.len();
    let rows: Vec<u64> = rows.into_iter().skip(first_row).take(shown_rows).collect();
    // Narrow, a 128-byte row is two rows of 16 banks, under two rows of bank numbers.
    let fold = from.fold;
    let subs = fold.rows();
    let top = y0 + 44.0 + (subs - 1) as f64 * 26.0;
    let cell_h = if shown_rows > ROOMY_BANK_ROWS { 28.0 } else { 32.0 };
    let row_pitch = subs as f64 * cell_h + if subs > 1 { 8.0 } else { 0.0 };
    // Where bank `bank`'s cell of drawn row `ri` is.
    let cell_y = |ri: usize, bank: usize| top + ri as f64 * row_pitch + fold.row(bank) as f64 * cell_h;
    // A label's baseline in its cell.
    let base = cell_h - 9.0;
    // The banks' numbers go over the arrows that cross them.
    let mut labels =
        vec![text(LANE_X0 - 8.0, top - 8.0 - (subs - 1) as f64 * 26.0, "bank", TEXT, Class::Muted, Anchor::End)];
    for bank in 0..WARP_LANES {
        let y = top - 8.0 - (subs - 1 - fold.row(bank)) as f64 * 26.0;
        labels.push(text(fold.x(bank) + LANE_W / 2.0, y, bank.to_string(), TEXT, Class::Muted, Anchor::Middle));
    }
    for (ri, &row) in rows.iter().enumerate() {
        let y = cell_y(ri, 0);
        items.push(text(LANE_X0 - 8.0, y + base, hex(row * row_bytes), TEXT, Class::Muted, Anchor::End));
        for bank in 0..WARP_LANES as u64 {
            let y = cell_y(ri, bank as usize);
            let lo = row * row_bytes + bank * u64::from(b.bank_bytes);
            let hi = lo + u64::from(b.bank_bytes);
            let here: Vec<usize> = served.iter().filter(|(a, _)| (lo..hi).contains(a)).map(|(_, k)| *k).collect();
            let class = if current_index.is_some_and(|c| here.contains(&c)) {
                Class::CellCurrent
            } else if here.iter().any(|&k| k < done) {
                Class::CellDone
            } else if !here.is_empty() {
                Class::CellTouched
            } else {
                Class::Cell
            };
            let x = fold.x(bank as usize);
            let tip = match here.first() {
                Some(k) => format!("bank {bank}, offset {}: wavefront {}", hex(lo), k + 1),
                None => format!("bank {bank}, offset {}", hex(lo)),
            };
            items.push(rect(x, y, LANE_W, cell_h - 2.0, class, Some(tip)));
            if matrix {
                continue;
            }
            if let Some(k) = here.iter().min() {
                items.push(text(x + LANE_W / 2.0, y + base, (k + 1).to_string(), TEXT, ink_on(class), Anchor::Middle));
            }
        }
    }
    // Arrows from lanes to the first word of their access.
    for (l, a) in p.addresses.iter().enumerate() {
        let Some(a) = a else { continue };
        let Some(ri) = rows.iter().position(|&r| r == a / row_bytes) else { continue };
        let bank = ((a % row_bytes) / u64::from(b.bank_bytes)) as usize;
        let y = cell_y(ri, bank);
        let cur = current.is_some_and(|c| c.lanes.contains(l));
        items.push(line(
            from.mid(l),
            from.bottom(l),
            fold.x(bank) + LANE_W / 2.0,
            y,
            if cur { Class::ArrowCurrent } else { Class::Arrow },
        ));
    }
    items.append(&mut labels);
    // ldmatrix: each 16-byte row spans four banks; one label across them names the matrix row and the
    // wavefront that reads it, so eight rows stacked in the same four banks read as eight wavefronts. Drawn
    // over the arrows, which end at the row they point to.
    if matrix {
        let mut chunks: Vec<(u64, Vec<usize>)> = Vec::new();
        for (l, a) in p.addresses.iter().enumerate() {
            let Some(a) = a else { continue };
            let c = a / 16 * 16;
            match chunks.iter_mut().find(|(k, _)| *k == c) {
                Some((_, ls)) => ls.push(l),
                None => chunks.push((c, vec![l])),
            }
        }
        for (c, lanes) in &chunks {
            let Some(ri) = rows.iter().position(|&r| r == c / row_bytes) else { continue };
            let bank = ((c % row_bytes) / u64::from(b.bank_bytes)) as usize;
            let span = (16 / b.bank_bytes.max(1)) as usize;
            let x1 = fold.x(bank);
            let x2 = fold.x((bank + span - 1).min(WARP_LANES - 1)) + LANE_W;
            let y = cell_y(ri, bank);
            let here: Vec<usize> = served.iter().filter(|(a, _)| (*c..c + 16).contains(a)).map(|(_, k)| *k).collect();
            let wave = here.iter().copied().min();
            let class = if current_index.is_some_and(|k| here.contains(&k)) {
                Class::CellCurrent
            } else if here.iter().any(|&k| k < done) {
                Class::CellDone
            } else {
                Class::CellTouched
            };
            let tip = format!("offset {}: banks {bank}-{}", hex(*c), bank + span - 1);
            items.push(rect(x1, y, x2 - x1, cell_h - 2.0, class, Some(tip)));
            // Short enough for four banks: `r3 · w4` is matrix row 3, read by wavefront 4 (the legend says so).
            let who = match lanes.as_slice() {
                [l] => format!("r{}", l % 8),
                ls => format!("{}r", ls.len()),
            };
            let label = match wave {
                Some(k) => format!("{who} · w{}", k + 1),
                None => who,
            };
            items.push(text((x1 + x2) / 2.0, y + base, label, TEXT, ink_on(class), Anchor::Middle));
        }
    }
    let mut bottom = top + shown_rows as f64 * row_pitch;
    let width = fold.width();
    if all_rows > shown_rows {
        let window = format!(
            "rows {}-{} of {}: the rows the current step serves are drawn",
            first_row + 1,
            first_row + shown_rows,
            all_rows
        );
        bottom = paragraph_in(items, LANE_X0, bottom + 26.0, &window, Class::Muted, width) - 24.0;
    }
    let legend = format!(
        "{}, ideal {}, {}, {}-way; {}",
        wavefronts_text(u64::from(b.wavefronts), b.other_model_wavefronts.map(u64::from)),
        b.ideal_wavefronts,
        plural(b.bank_conflicts, "bank conflict"),
        b.conflict_degree,
        if matrix {
            "each 16-byte row spans 4 banks; r3 · w4 is matrix row 3, read by wavefront 4"
        } else {
            "each word shows the wavefront that serves it"
        }
    );
    let mut y = paragraph_in(items, LANE_X0, bottom + 28.0, &legend, Class::Muted, width);
    if matrix {
        for sentence in phase_sentences(p, b) {
            y = paragraph_in(items, LANE_X0, y + 4.0, &sentence, Class::Label, width);
        }
    }
    y - 24.0
}

/// A light or dark colour theme.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    /// Dark text on white (print, slides).
    #[default]
    Light,
    /// Light text on near-black (projectors in dark rooms).
    Dark,
}

/// Fill, stroke and stroke width of a class in a theme. Colours are from the Okabe-Ito palette, which stays
/// distinguishable with the common colour-vision deficiencies. Contrast (WCAG 2.2, checked by the page's
/// end-to-end test): text 4.5:1 or more against what it sits on, every shape's fill or edge 3:1 or more.
pub fn paint(class: Class, theme: Theme) -> (&'static str, &'static str, f64) {
    let dark = theme == Theme::Dark;
    let (bg, fg, muted, cell, cell_edge) = if dark {
        ("#14161a", "#eceff3", "#a8b0ba", "#262a31", "#6b7480")
    } else {
        ("#ffffff", "#1a1a1a", "#555b63", "#f1f3f5", "#8a929c")
    };
    match class {
        Class::Background => (bg, "none", 0.0),
        Class::Title | Class::Label => (fg, "none", 0.0),
        Class::Muted => (muted, "none", 0.0),
        Class::Lane => (if dark { "#1f4e6b" } else { "#cfe6f5" }, "#0072b2", 1.5),
        Class::LaneCurrent => ("#e69f00", "#a35f00", 2.0),
        Class::LaneInactive => (cell, cell_edge, 1.0),
        Class::LaneError => (if dark { "#6b2a14" } else { "#f6d0c2" }, "#d55e00", 2.0),
        Class::Group => ("none", muted, 1.5),
        Class::Cell => (cell, cell_edge, 1.0),
        Class::CellTouched => (if dark { "#1f4e6b" } else { "#cfe6f5" }, "#0072b2", 1.0),
        Class::CellDone => ("#56b4e9", "#0072b2", 1.5),
        Class::CellCurrent => ("#e69f00", "#a35f00", 2.5),
        // Okabe-Ito's bluish green, darkened in the light theme to stand out on the sky-blue and orange
        // sectors; in the dark theme a light green with a dark edge for the same.
        Class::Bytes => {
            if dark {
                ("#3ccf9f", "#14161a", 1.0)
            } else {
                ("#00654a", "none", 0.0)
            }
        }
        Class::Arrow => ("none", if dark { "#6b7480" } else { "#858d97" }, 1.0),
        Class::ArrowCurrent => ("none", "#d55e00", 2.0),
        Class::Outline => ("none", "#0072b2", 2.0),
        // Tints of Okabe-Ito orange, sky blue, bluish green and reddish purple, with the full colour as the
        // edge: dark text stays readable on the light tints, light text on the dark ones.
        Class::Phase(k) => match (k % 4, dark) {
            (0, false) => ("#f7d48f", "#b77e00", 1.5),
            (1, false) => ("#b9e0f7", "#2b8cc4", 1.5),
            (2, false) => ("#a6e3cf", "#00795a", 1.5),
            (_, false) => ("#f0c6de", "#a8527f", 1.5),
            (0, true) => ("#6e4c00", "#e69f00", 1.5),
            (1, true) => ("#1b5374", "#56b4e9", 1.5),
            (2, true) => ("#005440", "#009e73", 1.5),
            (_, true) => ("#6a2f52", "#cc79a7", 1.5),
        },
        // Okabe-Ito bluish green (L1) and yellow (L2), and a purple that reads as purple (DRAM; Okabe-Ito's
        // reddish purple reads as pink, and the legend says purple), as tints with the full colour as the edge;
        // orange stays the current step's. The page's memory chart and its legend use the same colours
        // (www/style.css, --served-*).
        Class::Served(k) => match (k, dark) {
            (0, false) => ("#a6e3cf", "#00795a", 1.5),
            (1, false) => ("#f6ef9a", "#a39500", 1.5),
            (_, false) => ("#cbb8ec", "#6a3d9a", 1.5),
            (0, true) => ("#005440", "#009e73", 1.5),
            (1, true) => ("#5c5600", "#f0e442", 1.5),
            (_, true) => ("#4a2f6e", "#b596e6", 1.5),
        },
        Class::Conflict => ("none", if dark { "#ff7a3d" } else { "#c2410c" }, 3.0),
        Class::ConflictLabel => (if dark { "#ffc3a6" } else { "#8f2d00" }, "none", 0.0),
        Class::Ink => ("#1a1a1a", "none", 0.0),
    }
}

/// The block overview: one compact row per warp-level issue (up to 32), each with its 32 lanes and its own
/// transactions or wavefronts as squares, all stepping together: step k shows each warp's k-th step.
pub fn block_scene(reports: &[&Report], labels: &[String], title: &str, shown: usize) -> Scene {
    const ROW: f64 = 30.0;
    const CELL: f64 = 15.0;
    const X0: f64 = 112.0;
    let mut items = vec![rect(0.0, 0.0, WIDTH, 0.0, Class::Background, None)];
    items.push(text(16.0, 30.0, fit(title, TITLE, WIDTH - 32.0), TITLE, Class::Title, Anchor::Start));
    let steps_x = X0 + 32.0 * CELL + 18.0;
    // The steps that fit beside the lanes, with room for a `+N` after them.
    let max_shown = ((WIDTH - 64.0 - steps_x) / CELL) as usize;
    items.push(text(X0, 66.0, "lanes 0-31", TEXT, Class::Muted, Anchor::Start));
    items.push(text(steps_x, 66.0, "transactions or wavefronts, in order", TEXT, Class::Muted, Anchor::Start));
    let mut y = 80.0;
    let mut max_steps = 0;
    for (r, label) in reports.iter().zip(labels).take(32) {
        let all = steps(r);
        max_steps = max_steps.max(all.len());
        let current = shown.checked_sub(1).and_then(|i| all.get(i));
        items.push(text(X0 - 8.0, y + 21.0, label.clone(), TEXT, Class::Muted, Anchor::End));
        let active = active_lanes(r);
        for l in 0..WARP_LANES {
            let class = lane_class(r, active, current, l);
            items.push(rect(X0 + l as f64 * CELL, y, CELL - 2.0, ROW - 4.0, class, None));
        }
        for (k, s) in all.iter().enumerate().take(max_shown) {
            let class = if k + 1 == shown {
                Class::CellCurrent
            } else if k < shown {
                Class::CellDone
            } else {
                Class::CellTouched
            };
            items.push(rect(steps_x + k as f64 * CELL, y, CELL - 2.0, ROW - 4.0, class, Some(s.text.clone())));
        }
        if all.len() > max_shown {
            items.push(text(
                steps_x + max_shown as f64 * CELL + 4.0,
                y + 21.0,
                format!("+{}", all.len() - max_shown),
                TEXT,
                Class::Muted,
                Anchor::Start,
            ));
        }
        y += ROW;
    }
    if reports.len() > 32 {
        items.push(text(
            X0,
            y + 21.0,
            format!("… {} more warp issues", reports.len() - 32),
            TEXT,
            Class::Muted,
            Anchor::Start,
        ));
        y += ROW;
    }
    let caption = match shown {
        0 => format!("{} warp issues side by side; {} steps follow.", reports.len().min(32), max_steps),
        k => format!("Step {k} of {max_steps} in every warp at once."),
    };
    let height = y + 24.0;
    if let Some(Item::Rect { h, .. }) = items.first_mut() {
        *h = height;
    }
    Scene { width: WIDTH, height, items, caption }
}

/// Scenes drawn side by side, left to right, each under its label (`A`, `B`): the compare view as one figure.
/// One scene comes back unchanged.
pub fn beside(mut scenes: Vec<(String, Scene)>) -> Scene {
    const GAP: f64 = 40.0;
    const LABEL: f64 = 32.0;
    if scenes.len() == 1 {
        return scenes.remove(0).1;
    }
    let width = scenes.iter().map(|(_, s)| s.width).sum::<f64>() + GAP * (scenes.len().saturating_sub(1)) as f64;
    let height = LABEL + scenes.iter().map(|(_, s)| s.height).fold(0.0, f64::max);
    let mut items = vec![rect(0.0, 0.0, width, height, Class::Background, None)];
    let mut captions = Vec::new();
    let mut x0 = 0.0;
    for (label, s) in scenes {
        items.push(text(x0 + 16.0, 24.0, label.clone(), 20.0, Class::Title, Anchor::Start));
        // Each scene's own background is the first item: the shared one replaces it.
        for item in s.items.into_iter().skip(1) {
            items.push(match item {
                Item::Rect { x, y, w, h, class, tip } => Item::Rect { x: x + x0, y: y + LABEL, w, h, class, tip },
                Item::Line { x1, y1, x2, y2, class } => {
                    Item::Line { x1: x1 + x0, y1: y1 + LABEL, x2: x2 + x0, y2: y2 + LABEL, class }
                }
                Item::Text { x, y, text, size, class, anchor } => {
                    Item::Text { x: x + x0, y: y + LABEL, text, size, class, anchor }
                }
            });
        }
        captions.push(format!("{label}: {}", s.caption));
        x0 += s.width + GAP;
    }
    Scene { width, height, items, caption: captions.join(" ") }
}

/// `scene` with a footnote under it (what the totals assume and leave out), wrapped to the figure's width:
/// what the embed view and an exported SVG carry so that a figure on a slide keeps its caveats.
pub fn with_footnote(mut scene: Scene, note: &str) -> Scene {
    const SIZE: f64 = 13.0;
    const LINE: f64 = 18.0;
    // About 0.55 em per character in the figure's sans-serif font.
    let per_line = ((scene.width - 32.0) / (SIZE * 0.55)).max(20.0) as usize;
    let mut lines: Vec<String> = Vec::new();
    for word in note.split_whitespace() {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= per_line => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    let top = scene.height + 4.0;
    for (k, l) in lines.iter().enumerate() {
        scene.items.push(text(16.0, top + LINE * (k as f64 + 1.0), l.clone(), SIZE, Class::Muted, Anchor::Start));
    }
    scene.height = top + LINE * lines.len() as f64 + 10.0;
    if let Some(Item::Rect { h, class: Class::Background, .. }) = scene.items.first_mut() {
        *h = scene.height;
    }
    scene
}
