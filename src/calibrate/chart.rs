//! The agreement chart: a [`Comparison`] laid out as a [`Scene`], like every other figure, and written as a
//! standalone SVG by [`crate::figure::svg`]. One row per probe and one column per metric that is non-zero
//! somewhere; each cell holds the engine's and the measured count (one number when they are equal) and is
//! coloured by the outcome. The colours are the figure's own classes, reused: bluish green (the bytes a lane
//! uses) for equal, orange (the current step) for a recorded departure, pale vermilion with a vermilion border
//! (an error lane) for an unexplained difference, light grey (an untouched cell) for a metric not measured. A
//! stale probe's row is one empty outlined bar (a request bracket's grey): not compared.

use super::compare::{percent, Comparison, Verdict};
use super::probes::metrics;
use crate::figure::scene::{Anchor, Class, Item, Scene, Theme};
use crate::figure::svg::to_svg;

/// A count the engine predicts exactly.
const EQUAL: Class = Class::Bytes;
/// A difference a recorded departure explains.
const DEPARTURE: Class = Class::CellCurrent;
/// A difference with no recorded reason.
const DIFFERS: Class = Class::LaneError;
/// A metric the measurement does not hold.
const NOT_MEASURED: Class = Class::Cell;
/// The row of a stale probe.
const STALE: Class = Class::Group;

const ROW_H: f64 = 18.0;
const CELL_W: f64 = 64.0;
/// The probe ids' column.
const LABEL_W: f64 = 300.0;
/// The top of the first row, under the title, the legend and the two-line column heads.
const TOP: f64 = 116.0;
/// Room for the title, the legend and the caption when there are few columns.
const MIN_WIDTH: f64 = 760.0;
const FONT: f64 = 11.0;

fn rect(x: f64, y: f64, w: f64, h: f64, class: Class, tip: Option<String>) -> Item {
    Item::Rect { x, y, w, h, class, tip }
}

fn text(x: f64, y: f64, t: impl Into<String>, size: f64, class: Class, anchor: Anchor) -> Item {
    Item::Text { x, y, text: t.into(), size, class, anchor }
}

/// A metric's short name: `req global ld`, `sect local st`, `wavef shared ld`, `confl shared st`,
/// `inst generic ld`.
fn short(m: &str) -> String {
    m.trim_end_matches(".sum")
        .replace("l1tex__t_requests_pipe_lsu_mem_", "req ")
        .replace("l1tex__t_sectors_pipe_lsu_mem_", "sect ")
        .replace("l1tex__data_pipe_lsu_wavefronts_mem_", "wavef ")
        .replace("l1tex__data_bank_conflicts_pipe_lsu_mem_", "confl ")
        .replace("smsp__inst_executed_op_", "inst ")
        .replace("_op_", " ")
        .replace('_', " ")
}

/// The agreement chart as a scene: the title with the probes that agree, a legend, then one row per probe,
/// one cell per metric with a non-zero count in some probe, coloured by the outcome (see the module). The
/// caption says how many probes and counts agree.
pub fn agreement_scene(c: &Comparison) -> Scene {
    let metric_names = metrics();
    // Only the metrics that are non-zero somewhere get a column.
    let used: Vec<&String> = metric_names
        .iter()
        .filter(|m| c.probes.iter().any(|p| p.counts.get(*m).is_some_and(|&(a, b)| a != 0 || b != 0)))
        .collect();
    let width = (LABEL_W + CELL_W * used.len() as f64 + 20.0).max(MIN_WIDTH);
    // The last 40 px hold the caption, which the SVG writer draws.
    let height = TOP + ROW_H * c.probes.len() as f64 + 40.0;
    let (a, n) = c.agreement();
    let (ca, cn) = c.count_agreement();

    let mut items = vec![rect(0.0, 0.0, width, height, Class::Background, None)];
    let title = format!("{} (CC {}): {a} of {n} probes agree with warpscope ({:.1}%)", c.gpu, c.cc, percent(a, n));
    items.push(text(10.0, 24.0, title, 16.0, Class::Title, Anchor::Start));
    items.push(text(
        10.0,
        44.0,
        "Each cell: engine / measured count, one number when they are equal. A stale pattern's row is not compared.",
        12.0,
        Class::Muted,
        Anchor::Start,
    ));
    let mut x = 10.0;
    for (class, label) in
        [(EQUAL, "equal"), (DEPARTURE, "recorded departure"), (DIFFERS, "differs"), (NOT_MEASURED, "not measured")]
    {
        items.push(rect(x, 55.0, 14.0, 12.0, class, None));
        items.push(text(x + 20.0, 65.0, label, 12.0, Class::Label, Anchor::Start));
        x += 20.0 + 7.0 * label.len() as f64 + 18.0;
    }

    // Column heads on two lines: what is counted, then the space and the operation.
    for (j, m) in used.iter().enumerate() {
        let x = LABEL_W + CELL_W * j as f64 + CELL_W / 2.0;
        let name = short(m);
        let (what, rest) = name.split_once(' ').unwrap_or((name.as_str(), ""));
        items.push(text(x, TOP - 22.0, what, 10.0, Class::Muted, Anchor::Middle));
        items.push(text(x, TOP - 8.0, rest, 10.0, Class::Label, Anchor::Middle));
    }

    for (i, p) in c.probes.iter().enumerate() {
        let y = TOP + ROW_H * i as f64;
        if let Verdict::Stale { reason } = &p.verdict {
            items.push(text(10.0, y + 13.0, p.id.clone(), FONT, Class::Muted, Anchor::Start));
            if !used.is_empty() {
                let tip = format!("{}: stale, not compared: {reason}", p.id);
                items.push(rect(
                    LABEL_W + 1.0,
                    y + 1.0,
                    CELL_W * used.len() as f64 - 2.0,
                    ROW_H - 2.0,
                    STALE,
                    Some(tip),
                ));
                items.push(text(
                    LABEL_W + 8.0,
                    y + 13.0,
                    "stale pattern: not compared (measure again)",
                    FONT,
                    Class::Muted,
                    Anchor::Start,
                ));
            }
            continue;
        }
        items.push(text(10.0, y + 13.0, p.id.clone(), FONT, Class::Label, Anchor::Start));
        for (j, m) in used.iter().enumerate() {
            let x = LABEL_W + CELL_W * j as f64;
            let (class, label, tip) = match p.counts.get(*m) {
                None => (NOT_MEASURED, String::new(), None),
                Some(&(pred, meas)) => {
                    let class = if pred == meas {
                        EQUAL
                    } else if matches!(p.verdict, Verdict::Explained { .. }) {
                        DEPARTURE
                    } else {
                        DIFFERS
                    };
                    let label = if pred == 0 && meas == 0 {
                        String::new()
                    } else if pred == meas {
                        pred.to_string()
                    } else {
                        format!("{pred}/{meas}")
                    };
                    (class, label, Some(format!("{}: {m}: engine {pred}, measured {meas}", p.id)))
                }
            };
            items.push(rect(x + 1.0, y + 1.0, CELL_W - 2.0, ROW_H - 2.0, class, tip));
            if !label.is_empty() {
                items.push(text(x + CELL_W / 2.0, y + 13.0, label, FONT, Class::Label, Anchor::Middle));
            }
        }
    }

    let caption =
        format!("{a} of {n} probes and {ca} of {cn} counts agree with the engine on {} (CC {}).", c.gpu, c.cc);
    Scene { width, height, items, caption }
}

/// The agreement chart as a standalone SVG document (light theme), as `warpscope calibrate compare --svg`
/// writes it.
pub fn agreement_svg(c: &Comparison) -> String {
    to_svg(&agreement_scene(c), Theme::Light)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::ProbeComparison;
    use crate::model::arch::Cc;
    use std::collections::BTreeMap;

    const REQ: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
    const SECT: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
    const LOCAL_REQ: &str = "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum";
    const WAVEF: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
    const CONFL: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";

    fn probe(id: &str, counts: &[(&str, (u64, u64))], verdict: Verdict) -> ProbeComparison {
        let counts: BTreeMap<String, (u64, u64)> = counts.iter().map(|(m, c)| (m.to_string(), *c)).collect();
        ProbeComparison { id: id.into(), op: "LDG.E.32".into(), counts, verdict }
    }

    /// Four probes, one of each outcome. Columns: REQ, SECT, WAVEF and CONFL are non-zero somewhere; LOCAL_REQ
    /// is measured but zero everywhere, so it gets no column.
    fn comparison() -> Comparison {
        Comparison {
            gpu: "Test <GPU>".into(),
            cc: Cc::new(9, 0),
            probes: vec![
                probe("a", &[(REQ, (1, 1)), (SECT, (4, 4)), (LOCAL_REQ, (0, 0)), (CONFL, (0, 0))], Verdict::Agree),
                probe("b", &[(REQ, (1, 1)), (SECT, (8, 9))], Verdict::Differ { rows: vec![(SECT.into(), 8, 9)] }),
                probe(
                    "c",
                    &[(WAVEF, (2, 3)), (CONFL, (1, 2))],
                    Verdict::Explained {
                        rows: vec![(WAVEF.into(), 2, 3, "n".into()), (CONFL.into(), 1, 2, "n".into())],
                    },
                ),
                probe("d", &[], Verdict::Stale { reason: "the pattern changed".into() }),
            ],
        }
    }

    #[test]
    fn the_scene_has_one_mark_per_cell_head_and_label() {
        let scene = agreement_scene(&comparison());
        let rects: Vec<Class> = scene
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Rect { class, .. } => Some(*class),
                _ => None,
            })
            .collect();
        let texts = scene.items.iter().filter(|i| matches!(i, Item::Text { .. })).count();
        let lines = scene.items.iter().filter(|i| matches!(i, Item::Line { .. })).count();
        // Rects: the background, 4 legend swatches, 3 compared probes x 4 columns, 1 stale bar = 18.
        assert_eq!(rects.len(), 18);
        // By class, each outcome's legend swatch included: equal a/REQ, a/SECT, a/CONFL (0 = 0, no number),
        // b/REQ + 1; differs b/SECT + 1; departures c/WAVEF, c/CONFL + 1; not measured a/WAVEF, b/WAVEF,
        // b/CONFL, c/REQ, c/SECT + 1; the stale bar of d.
        let of = |class: Class| rects.iter().filter(|&&c| c == class).count();
        assert_eq!((of(EQUAL), of(DIFFERS), of(DEPARTURE), of(NOT_MEASURED), of(STALE)), (5, 2, 3, 6, 1));
        // Texts: title, key sentence, 4 legend labels; 2 heads x 4 columns; 4 probe ids; the numbers 1, 4
        // (row a), 1, 8/9 (b), 2/3, 1/2 (c); "stale pattern" (d) = 6 + 8 + 4 + 6 + 1 = 25.
        assert_eq!(texts, 25);
        assert_eq!(lines, 0);
        // Width: 300 for the ids + 4 x 64 + 20 = 576, widened to 760; height: 116 + 4 rows x 18 + 40 = 228.
        assert_eq!((scene.width, scene.height), (760.0, 228.0));
        // Probes: a agrees, b and c do not, d is stale (not compared). Counts: all 4 of a (zeros included), 1
        // of b's 2, none of c's 2.
        assert_eq!(scene.caption, "1 of 3 probes and 5 of 8 counts agree with the engine on Test <GPU> (CC 9.0).");
    }

    #[test]
    fn the_svg_is_the_scene_written_by_the_figure_writer() {
        let c = comparison();
        let svg = agreement_svg(&c);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let count = |tag: &str| doc.descendants().filter(|n| n.has_tag_name(tag)).count();
        // The scene's 18 rects and 25 texts, and the caption the writer adds as text: at the figures' text
        // size (24) its 80 characters take two lines of the 760-wide chart, with a background rect under the
        // second.
        assert_eq!((count("rect"), count("text")), (18 + 1, 25 + 2));
        assert!(svg.contains("Test &lt;GPU&gt; (CC 9.0): 1 of 3 probes agree with warpscope (33.3%)"));
        assert!(svg.contains(">8/9</text>") && svg.contains(">2/3</text>"));
    }
}
