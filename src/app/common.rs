//! What several of the page's views share: element ids per pane, and the scene a pane's figure draws (the
//! page's figure, the slides' embed and the exports). Below `view`, `chart` and `slides`, which all use it.

use super::state::State;
use crate::service::Shown;

/// An element's id in pane `pane`: `base` in the first, `base-b` in the second.
pub fn id(base: &str, pane: usize) -> String {
    if pane == 0 {
        base.to_string()
    } else {
        format!("{base}-b")
    }
}

/// Whether pane `k` shows the tile view: asked for, one warp in detail, and an issue with a shared part.
pub fn tile_shown(state: &State, shown: &Shown) -> bool {
    state.tile
        && !(state.all_warps && shown.others.len() > 1)
        && crate::figure::tile::shared_part(&shown.report).is_some()
}

/// Pane `shown`'s figure at `step` as the page draws it: the tile view, every warp stacked, or one warp in
/// detail.
pub fn pane_scene(state: &State, shown: &Shown, step: usize) -> crate::figure::scene::Scene {
    pane_scene_in(state, shown, step, crate::figure::scene::Fold::Wide)
}

/// [`pane_scene`], one warp's figure laid out `fold` wide (the page on a phone: 16 lanes a row).
pub fn pane_scene_in(
    state: &State,
    shown: &Shown,
    step: usize,
    fold: crate::figure::scene::Fold,
) -> crate::figure::scene::Scene {
    let title = shown.title.clone();
    let tile = tile_shown(state, shown).then(|| crate::figure::tile::tile_scene(&shown.report, &title).ok()).flatten();
    if let Some(t) = tile {
        t
    } else if state.all_warps && shown.others.len() > 1 {
        let reports: Vec<&crate::model::report::Report> = shown.others.iter().map(|(_, r)| r).collect();
        let labels: Vec<String> = shown.others.iter().map(|(l, _)| l.clone()).collect();
        crate::figure::scene::block_scene(&reports, &labels, &title, step)
    } else {
        crate::figure::scene::scene_in(&shown.report, &title, step, fold)
    }
}

/// Everything the page's figures show at `step`, as one figure (both panes side by side when comparing): what
/// SVG/PNG export, "all steps" and embed code carry.
pub fn screen_scene(state: &State, step: usize) -> Option<crate::figure::scene::Scene> {
    let scenes: Vec<(String, crate::figure::scene::Scene)> = state
        .panes
        .iter()
        .enumerate()
        .filter_map(|(k, p)| {
            let label = format!("{} · CC {}", if k == 0 { "A" } else { "B" }, p.scenario.cc);
            // What the totals assume and leave out travels with the figure onto a slide.
            let note = p.result.as_ref().and_then(|r| r.assumptions());
            p.shown.as_deref().map(|s| {
                let sc = pane_scene(state, s, step);
                match note {
                    Some(n) => (label, crate::figure::scene::with_footnote(sc, &n)),
                    None => (label, sc),
                }
            })
        })
        .collect();
    (!scenes.is_empty()).then(|| crate::figure::scene::beside(scenes))
}
