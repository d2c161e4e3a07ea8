//! The figure: steps, captions and the SVG writer.
#![cfg(not(target_arch = "wasm32"))]

use warpscope::figure::scene::{scene, steps, Theme};
use warpscope::figure::svg::to_svg;
use warpscope::teach::presets;

fn first_report(preset: &str, instr: usize) -> warpscope::Report {
    let sc = presets::find(preset).expect("preset").scenario();
    let r = sc.run().expect("runs");
    sc.report(&r, instr, 0).expect("runs").expect("an issue")
}

#[test]
fn steps_follow_transactions_and_wavefronts() {
    // BPG 9.2.1.2: 5 sectors, the last one for lane 31 alone.
    let r = first_report("misaligned", 0);
    let s = steps(&r);
    assert_eq!(s.len(), 5);
    assert_eq!(s[4].text, "32 B sector at 0x80 for lane 31");
    // PG-5.0 F.4.2: four quarter-warp requests of one 128-byte line each.
    let r = first_report("fermi-quarter-warps", 0);
    let s = steps(&r);
    assert_eq!(s.len(), 4);
    assert_eq!(s[1].text, "request 2 (lanes 8-15): 128 B line at 0x80 for lanes 8-15");
    // BPG 9.2.3.3: the naive transpose's column read replays 31 times.
    let r = first_report("transpose-naive", 2);
    let s = steps(&r);
    assert_eq!(s.len(), 32);
    assert_eq!(s[1].text, "wavefront 2 of 32 serves lane 1 (a replay caused by a bank conflict)");
}

#[test]
fn captions_say_what_the_step_shows() {
    let r = first_report("misaligned", 0);
    assert_eq!(scene(&r, "t", 0).caption, "The warp issues LDG.E.32; 5 steps follow.");
    assert_eq!(scene(&r, "t", 5).caption, "Step 5 of 5: 32 B sector at 0x80 for lane 31.");
    // Steps past the end show the last one.
    assert_eq!(scene(&r, "t", 99).caption, scene(&r, "t", 5).caption);
}

#[test]
fn every_preset_draws_valid_svg_in_both_themes() {
    for p in presets::PRESETS.iter() {
        let sc = p.scenario();
        let r = sc.run().expect("runs");
        for (k, i) in r.instructions.iter().enumerate() {
            let report = &sc.report(&r, k, 0).expect("runs").expect("an issue");
            let n = steps(report).len();
            for theme in [Theme::Light, Theme::Dark] {
                let svg = to_svg(&scene(report, &format!("{} <{}> & \"x\"", p.name, i.op), n), theme);
                let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{}: invalid SVG: {e}", p.name));
                assert_eq!(doc.root_element().tag_name().name(), "svg");
                assert!(!svg.contains("<image") && !svg.contains("<script"), "no raster, no script");
            }
        }
    }
}

// ---- ldmatrix, the tile view, cp.async (docs/model.md#ldmatrix-and-stmatrix, docs/model.md#asynchronous-copies, docs/model.md#swizzles) ----

use warpscope::figure::scene::{wavefronts_text, Class, Item};
use warpscope::figure::tile::{tile, tile_scene};
use warpscope::scenario::{Scenario, Setting};

/// The first issue of a one-line expression on a CC.
fn expr_report(cc: &str, op: &str, pattern: &str) -> warpscope::Report {
    let mut sc = Scenario::default();
    sc.set(Setting::Lang, "expr").expect("lang");
    sc.set(Setting::Cc, cc).expect("cc");
    sc.set(Setting::Op, op).expect("op");
    sc.set(Setting::Block, "32").expect("block");
    sc.set(Setting::Pattern, pattern).expect("pattern");
    let r = sc.run().expect("runs");
    sc.report(&r, 0, 0).expect("runs").expect("an issue")
}

const LDSM_ROWS: &str = "128*(lane%8) + 16*(lane/8)";
const LDSM_SWIZZLED: &str = "((128*(lane%8) + 16*(lane/8)) ^ (((128*(lane%8) + 16*(lane/8)) >> 3) & 0x70))";

fn conflict_outlines(items: &[Item]) -> usize {
    items.iter().filter(|i| matches!(i, Item::Rect { class: Class::Conflict, .. })).count()
}

fn texts(items: &[Item]) -> Vec<&str> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn unswizzled_ldmatrix_tile_is_one_conflicting_column_per_matrix() {
    // docs/model.md#ldmatrix-and-stmatrix: lane l gives row l%8 of matrix l/8 at 128*(l%8) + 16*(l/8): matrix k's 8 rows are 128 bytes
    // apart, all in chunk column k (banks 4k..4k+3): 8 rows x 4 matrices = 32 chunks, every one 8-way, in the
    // 4 columns 0-3; 8 rows of 128 bytes.
    let r = expr_report("8.0", "LDSM.16.M88.4", LDSM_ROWS);
    assert_eq!(r.banks().map(|b| b.wavefronts), Some(32));
    let t = tile(&r).expect("shared");
    assert_eq!(t.rows, (0..8).collect::<Vec<u64>>());
    assert_eq!(t.chunks.len(), 32);
    assert_eq!(t.conflicting().count(), 32);
    assert_eq!(t.conflict_columns(), vec![0, 1, 2, 3]);
    for c in &t.chunks {
        assert_eq!((c.column, c.phase, c.conflict, c.lanes.len()), (c.column, c.column as usize, 8, 1));
        assert_eq!(c.lanes.iter().next(), Some((c.row + 8 * c.column) as usize), "row r of matrix k is lane 8k+r");
    }
    let s = tile_scene(&r, "t").expect("a tile");
    assert_eq!(conflict_outlines(&s.items), 32);
    // Each chunk's label, one line each: its matrix row, its lane, its conflict.
    assert_eq!(texts(&s.items).iter().filter(|t| **t == "8-way").count(), 32);
    assert!(texts(&s.items).windows(3).any(|w| w == ["row 7", "lane 31", "8-way"]));
    assert_eq!(
        s.caption,
        "Tile view of LDSM.16.M88.4: 8 128-byte rows of shared memory, 32 chunks conflict in 4 bank groups."
    );
}

#[test]
fn swizzled_ldmatrix_tile_spreads_each_matrix_over_eight_columns() {
    // docs/model.md#swizzles: the 128-byte swizzle XORs row bits 7-9 into chunk bits 4-6: row r of matrix k lands in
    // column k ^ r, so each matrix covers all 8 columns once and nothing conflicts (4 wavefronts).
    let r = expr_report("8.0", "LDSM.16.M88.4", LDSM_SWIZZLED);
    assert_eq!(r.banks().map(|b| b.wavefronts), Some(4));
    let t = tile(&r).expect("shared");
    assert_eq!(t.chunks.len(), 32);
    assert_eq!(t.conflicting().count(), 0);
    for c in &t.chunks {
        let lane = c.lanes.iter().next().expect("a lane") as u64;
        assert_eq!(c.column, (lane / 8) ^ (lane % 8), "row r of matrix k in column k ^ r");
        assert_eq!(c.phase as u64, lane / 8);
    }
    for k in 0..4 {
        let mut cols: Vec<u64> = t.chunks.iter().filter(|c| c.phase == k).map(|c| c.column).collect();
        cols.sort_unstable();
        assert_eq!(cols, (0..8).collect::<Vec<u64>>(), "matrix {k} covers every column once");
    }
    assert_eq!(conflict_outlines(&tile_scene(&r, "t").expect("a tile").items), 0);
}

#[test]
fn tile_view_covers_every_shared_width_and_the_copy() {
    // LDS.128 16*lane: 512 bytes = 4 rows of 8 whole chunks, a quarter-warp phase each, no conflict.
    let t = tile(&expr_report("8.0", "LDS.128", "16*lane")).expect("shared");
    assert_eq!((t.rows.len(), t.chunks.len(), t.conflicting().count()), (4, 32, 0));
    assert!(t.chunks.iter().all(|c| c.words == 0b1111 && c.phase == c.row as usize));
    // LDS.64 8*lane: 256 bytes = 2 rows, 2 lanes per chunk, half-warp phases.
    let t = tile(&expr_report("8.0", "LDS.64", "8*lane")).expect("shared");
    assert_eq!((t.rows.len(), t.chunks.len(), t.conflicting().count()), (2, 16, 0));
    assert!(t.chunks.iter().all(|c| c.lanes.len() == 2 && c.phase == c.row as usize));
    // LDS.32 4*lane: one row, 4 lanes per chunk.
    let t = tile(&expr_report("8.0", "LDS.32", "4*lane")).expect("shared");
    assert_eq!((t.rows.len(), t.chunks.len(), t.conflicting().count()), (1, 8, 0));
    // LDS.32 128*lane: every lane in bank 0 of its own row: 32 chunks in column 0, each 32-way, word 0 only.
    let r = expr_report("8.0", "LDS.32", "128*lane");
    let t = tile(&r).expect("shared");
    assert_eq!((t.rows.len(), t.chunks.len(), t.conflict_columns()), (32, 32, vec![0]));
    assert!(t.chunks.iter().all(|c| c.conflict == 32 && c.words == 1));
    let s = tile_scene(&r, "t").expect("a tile");
    assert_eq!(conflict_outlines(&s.items), warpscope::figure::tile::MAX_ROWS, "16 rows drawn");
    assert!(texts(&s.items).contains(&"… 16 more rows"));
    // cp.async: the tile shows the shared write (16*lane from 4096 up in global memory).
    let r = expr_report("8.0", "LDGSTS.E.BYPASS.128", "16*lane from 16*tid + 4096");
    let t = tile(&r).expect("the shared write");
    assert_eq!((t.rows.clone(), t.chunks.len(), t.conflicting().count()), (vec![0, 1, 2, 3], 32, 0));
    // A global load has no tile.
    let e = tile_scene(&expr_report("8.0", "LDG.E.32", "4*lane"), "t").expect_err("no shared part");
    assert!(e.contains("touches none"), "{e}");
}

#[test]
fn tile_conflicts_agree_with_the_counted_bank_conflicts_for_every_preset() {
    for p in presets::PRESETS.iter() {
        let sc = p.scenario();
        let r = sc.run().expect("runs");
        for k in 0..r.instructions.len() {
            let report = sc.report(&r, k, 0).expect("runs").expect("an issue");
            let Some(t) = tile(&report) else { continue };
            let (_, b) = warpscope::figure::tile::shared_part(&report).expect("shared");
            assert_eq!(
                t.conflicting().count() > 0,
                b.bank_conflicts > 0,
                "{} instruction {k}: conflict marks and the count disagree",
                p.name
            );
            let svg = to_svg(&tile_scene(&report, p.name).expect("a tile"), Theme::Dark);
            roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{}: invalid SVG: {e}", p.name));
        }
    }
}

#[test]
fn ldmatrix_figure_names_matrices_and_rows() {
    let r = expr_report("8.0", "LDSM.16.M88.4", LDSM_ROWS);
    let n = steps(&r).len();
    assert_eq!(n, 32);
    let s = scene(&r, "t", n);
    let t = texts(&s.items);
    // Under each lane its matrix row (lane 8k+r gives row r); on each 16-byte chunk its row and the wavefront
    // that reads it: matrix 0's 8 rows all fall in banks 0-3, so row 3 is its 4th wavefront.
    for label in ["matrix 0", "matrix 3", "row", "r3 · w4"] {
        assert!(t.contains(&label), "{label} missing");
    }
    assert_eq!(t.iter().filter(|t| **t == "7").count(), 4 + 2, "row 7 under 4 lanes, lane 7's and bank 7's numbers");
    // The sentences wrap onto lines of the figure's width.
    assert!(t.join(" ").contains(
        "matrix 1 (lanes 8-15): its 8 rows all fall in banks 4-7, so they are served one after another: 8 wavefronts (8-way)"
    ));
    assert_eq!(
        s.caption,
        "Step 32 of 32: matrix 3 (lanes 24-31): wavefront 8 of 8 reads row 7 (lane 31) (a replay caused by a bank conflict)."
    );
    let s = scene(&expr_report("8.0", "LDSM.16.M88.4", LDSM_SWIZZLED), "t", 0);
    assert!(texts(&s.items).join(" ").contains(
        "matrix 2 (lanes 16-23): its 8 rows fall in 8 different groups of 4 banks, so one pass serves them all: 1 wavefront"
    ));
}

#[test]
fn cp_async_is_drawn_and_written_as_a_copy() {
    let r = expr_report("8.0", "LDGSTS.E.BYPASS.128", "16*lane from 16*tid + 4096");
    let n = steps(&r).len();
    assert_eq!(n, 16 + 4, "16 sectors read, 4 wavefronts written");
    let s = scene(&r, "t", n);
    let t = texts(&s.items);
    assert!(t.contains(&"global read (sectors)") && t.contains(&"shared write (wavefronts)"));
    assert!(!t.contains(&"memory"));
    assert_eq!(s.caption, "Step 20 of 20: shared write, phase 4 (lanes 24-31): wavefront 1 of 1 serves lanes 24-31.");
    assert_eq!(steps(&r)[0].text, "global read, 32 B sector at 0x1000 for lanes 0-1");
    let text = r.to_text();
    assert!(text.contains("copy global -> shared in one instruction:\n- global read, 32 lanes:\n"), "{text}");
    assert!(text.contains("- shared write, 32 lanes:\n  shared memory, 32 banks x 4 B\n"), "{text}");
    assert!(!text.contains("generic access split"));
    assert!(r.summary().starts_with("global read: 1 request, 4 lines, 16 sectors"), "{}", r.summary());
}

#[test]
fn the_other_shared_model_is_named_where_it_differs() {
    // docs/model.md#shared-memory-as-measured: LDS.128 16*(lane/2) on 8.0 is 2 wavefronts measured, 4 by the documented phase model.
    let r = expr_report("8.0", "LDS.128", "16*(lane/2)");
    let b = r.banks().expect("shared");
    assert_eq!((b.wavefronts, b.other_model_wavefronts), (2, Some(4)));
    let s = scene(&r, "t", 0);
    assert!(texts(&s.items).iter().any(|t| t.starts_with("2 wavefronts (measured; documented phase model: 4), ideal")));
    assert_eq!(wavefronts_text(4, Some(2)), "4 wavefronts (documented phase model; measured: 2)");
    assert_eq!(wavefronts_text(1, None), "1 wavefront");
    assert!(warpscope::model::arch::Cc::new(7, 0).has_measured_shared_rule());
    assert!(!warpscope::model::arch::Cc::new(6, 1).has_measured_shared_rule());
}

// ---- readable from the back of the room ----

use warpscope::figure::scene::{bank_window, block_scene, text_width, wrap, MAX_BANK_ROWS, MIN_SCALE, TEXT, WIDTH};

/// Every text of a scene: at least the figure's text size (16 CSS px at the page's smallest scale), and inside
/// the scene's width by the layout's own estimate of its width.
fn assert_readable(s: &warpscope::figure::scene::Scene, what: &str) {
    for item in &s.items {
        if let Item::Text { x, text, size, anchor, .. } = item {
            assert!(*size >= TEXT, "{what}: `{text}` at {size}");
            let w = text_width(text, *size);
            let (left, right) = match anchor {
                warpscope::figure::scene::Anchor::Start => (*x, x + w),
                warpscope::figure::scene::Anchor::Middle => (x - w / 2.0, x + w / 2.0),
                warpscope::figure::scene::Anchor::End => (x - w, *x),
            };
            assert!(left >= -4.0 && right <= WIDTH + 4.0, "{what}: `{text}` runs from {left:.0} to {right:.0}");
        }
    }
}

#[test]
fn every_figure_of_every_preset_keeps_its_text_at_the_figure_size() {
    assert_eq!(TEXT * MIN_SCALE, 16.0, "16 CSS px at the page's smallest scale");
    for p in presets::PRESETS.iter() {
        let sc = p.scenario();
        let r = sc.run().expect("runs");
        for k in 0..r.instructions.len() {
            let report = sc.report(&r, k, 0).expect("runs").expect("an issue");
            let n = steps(&report).len();
            let title = format!("{} on CC {}", r.instructions[k].op, p.cc);
            for step in [0, 1, n] {
                assert_readable(&scene(&report, &title, step), p.name);
            }
            if let Ok(t) = tile_scene(&report, &title) {
                assert_readable(&t, p.name);
            }
            let many: Vec<&warpscope::Report> = std::iter::repeat_n(&report, 40).collect();
            let labels: Vec<String> = (0..40).map(|w| format!("w{w} p4")).collect();
            assert_readable(&block_scene(&many, &labels, &title, n), p.name);
        }
    }
}

#[test]
fn long_legends_wrap_at_spaces() {
    assert_eq!(wrap("one two three", TEXT, text_width("one two", TEXT) + 8.0), vec!["one two", "three"]);
    assert_eq!(wrap("word", TEXT, 1.0), vec!["word"], "a word longer than the line stays whole");
}

#[test]
fn the_bank_grid_follows_the_step() {
    // Up to 32 rows, a 32-way conflict's whole column (issue 28): all of them.
    assert_eq!(MAX_BANK_ROWS, 32);
    assert_eq!(bank_window(10, Some((9, 9))), (0, 10));
    assert_eq!(bank_window(32, None), (0, 32));
    assert_eq!(bank_window(32, Some((16, 16))), (0, 32));
    // More: the first 32 before the first step, then a window that ends at the current step's last row.
    assert_eq!(bank_window(64, None), (0, MAX_BANK_ROWS));
    assert_eq!(bank_window(64, Some((3, 3))), (0, 32));
    assert_eq!(bank_window(64, Some((32, 32))), (1, 32));
    assert_eq!(bank_window(64, Some((63, 63))), (32, 32));
    // One wavefront over 40 rows: all 40 are drawn.
    assert_eq!(bank_window(64, Some((4, 43))), (4, 40));
    // BPG 9.2.3.3: the naive transpose's column read serves one lane per wavefront, lane k-1 at step k, each
    // in its own row: every step draws its word (and its lane) in orange and one orange arrow.
    let r = first_report("transpose-naive", 2);
    for k in 1..=32 {
        let s = scene(&r, "t", k);
        let count = |c: Class| s.items.iter().filter(|i| matches!(i, Item::Rect { class, .. } if *class == c)).count();
        assert_eq!((count(Class::LaneCurrent), count(Class::CellCurrent)), (1, 1), "step {k}");
        let arrows = s.items.iter().filter(|i| matches!(i, Item::Line { class: Class::ArrowCurrent, .. })).count();
        assert_eq!(arrows, 1, "step {k}");
        assert!(texts(&s.items).contains(&k.to_string().as_str()), "step {k}: its wavefront number");
        // The whole 32-way conflict at every step: 32 rows of 32 banks, no window.
        let cells = s
            .items
            .iter()
            .filter(|i| matches!(i, Item::Rect { class, .. } if matches!(class, Class::Cell | Class::CellTouched | Class::CellDone | Class::CellCurrent)))
            .count();
        assert_eq!(cells, 32 * 32, "step {k}");
        assert!(!texts(&s.items).iter().any(|t| t.contains("of 32: the rows")), "step {k}");
    }
}

/// On a phone the page lays the figure out narrow: two rows of 16 lanes, shared memory's banks in two rows of
/// 16, global lines four to a row, so that it fits the screen's width with labels of a readable size instead of
/// needing a sideways swipe. For every issue of every preset: every shape inside the 660-unit width, the 32
/// lanes in two rows of 16, the same caption and steps as the wide figure, and valid SVG.
#[test]
fn the_narrow_figure_fits_its_width_with_every_lane_and_step() {
    use warpscope::figure::scene::{scene_in, Fold, Item, NARROW_WIDTH};
    let mut checked = 0;
    for p in presets::PRESETS.iter() {
        let sc = warpscope::scenario::Scenario { caches: None, ..p.scenario() };
        let r = sc.run().expect("runs");
        for k in 0..r.instructions.len() {
            let Some(report) = sc.report(&r, k, 0).expect("runs") else { continue };
            let n = steps(&report).len();
            for step in [0, n / 2, n] {
                let narrow = scene_in(&report, p.title, step, Fold::Narrow);
                let wide = scene(&report, p.title, step);
                assert_eq!(narrow.width, NARROW_WIDTH);
                assert_eq!(narrow.caption, wide.caption, "{} #{k} step {step}", p.name);
                for item in &narrow.items {
                    let (x0, x1) = match item {
                        Item::Rect { x, w, .. } => (*x, x + w),
                        Item::Line { x1, x2, .. } => (x1.min(*x2), x1.max(*x2)),
                        Item::Text { .. } => continue,
                    };
                    assert!(x0 >= 0.0 && x1 <= NARROW_WIDTH + 0.5, "{} #{k}: a shape from {x0} to {x1}", p.name);
                }
                // The lanes: 32 rectangles with a lane's tooltip, 16 to a row.
                let lanes: Vec<(f64, f64)> = narrow
                    .items
                    .iter()
                    .filter_map(|i| match i {
                        Item::Rect { x, y, tip: Some(t), .. }
                            if t.starts_with("lane ") && !t.contains(": operation") =>
                        {
                            Some((*x, *y))
                        }
                        _ => None,
                    })
                    .collect();
                assert_eq!(lanes.len(), 32, "{} #{k}", p.name);
                let mut rows: Vec<f64> = lanes.iter().map(|l| l.1).collect();
                rows.dedup();
                assert_eq!(rows.len(), 2, "{} #{k}: lanes in two rows", p.name);
                let svg = to_svg(&narrow, Theme::Light);
                roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{}: invalid SVG: {e}", p.name));
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked} narrow figures");
}
