//! The tile view: the shared memory one issue touches, drawn as it is laid out. Each row is one pass over all
//! the banks (128 bytes: 32 banks of 4 bytes), cut into 16-byte chunks (banks 0-3, 4-7, ... 28-31). Every
//! chunk a lane touches takes the colour of the lane's phase (its matrix, for ldmatrix) and the lane's name;
//! a chunk whose banks another row's chunk also needs in the same phase is a bank conflict and is outlined.
//! So an unswizzled ldmatrix tile shows each matrix as one column of eight conflicting chunks, and the
//! 128-byte swizzle spreads each matrix's rows over eight columns.
//!
//! A pure function from a report to a [`Scene`], like [`super::scene::scene`]; [`tile`] gives the layout's
//! data (which chunks, which phase, which conflict) for tests and captions.

use super::scene::{
    fit, is_matrix, paragraph, phase_sentences, rect, text, text_width, wavefronts_text, Anchor, Class, Item, Scene,
    LINE_H, TEXT, TITLE, WIDTH,
};
use crate::model::access::LaneSet;
use crate::model::arch::{bank_rule, BankMode};
use crate::model::report::{BankCost, Report};
use crate::text::{hex, plural};

/// Bytes in a chunk: one ldmatrix row, one LDS.128 lane, four 4-byte banks.
pub const CHUNK_BYTES: u64 = 16;

/// One 16-byte chunk of shared memory that some lane touches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Its row: offset / row bytes (128 with 4-byte banks).
    pub row: u64,
    /// Its position in the row, 0..8: the group of banks it lies in.
    pub column: u64,
    /// The lanes that touch it.
    pub lanes: LaneSet,
    /// The first phase (index into the report's phases) that touches it: its colour.
    pub phase: usize,
    /// Which of its bank words are touched (bit i = word i).
    pub words: u32,
    /// 0 when no bank of it conflicts; otherwise the most distinct words one of its banks must serve in one
    /// phase (the n of n-way).
    pub conflict: u32,
}

/// The tile view's data: the shared part of an issue, as chunks in rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Tile {
    /// Bytes per row: the banks times the bank width (128, or 256 in Kepler's 8-byte mode).
    pub row_bytes: u64,
    /// Bytes per bank word (4, or 8 in Kepler's 8-byte mode).
    pub bank_bytes: u64,
    /// The rows touched, in order.
    pub rows: Vec<u64>,
    /// The touched chunks, by row then column.
    pub chunks: Vec<Chunk>,
}

impl Tile {
    /// Chunks per row (8 with 4-byte banks).
    pub fn columns(&self) -> u64 {
        self.row_bytes / CHUNK_BYTES
    }

    /// The chunks marked as conflicting.
    pub fn conflicting(&self) -> impl Iterator<Item = &Chunk> {
        self.chunks.iter().filter(|c| c.conflict > 0)
    }

    /// The columns (bank groups) with a conflicting chunk, in order.
    pub fn conflict_columns(&self) -> Vec<u64> {
        let mut cols: Vec<u64> = self.conflicting().map(|c| c.column).collect();
        cols.sort_unstable();
        cols.dedup();
        cols
    }
}

/// The shared-memory part of a report (itself, or cp.async's shared write), with its bank cost.
pub fn shared_part(report: &Report) -> Option<(&Report, &BankCost)> {
    report.parts().into_iter().find_map(|p| p.banks().map(|b| (p, b)))
}

/// The chunks an issue's shared part touches, or `None` when it has no shared part.
pub fn tile(report: &Report) -> Option<Tile> {
    let (p, b) = shared_part(report)?;
    let bank_bytes = u64::from(b.bank_bytes.max(1));
    let banks = u64::from(b.banks.max(1));
    let row_bytes = banks * bank_bytes;
    let size = u64::from(p.size.max(1));
    let phase_of = |l: usize| b.phases.iter().position(|ph| ph.lanes.contains(l));
    // Each lane's words: (lane, phase, word address).
    let mut words: Vec<(usize, usize, u64)> = Vec::new();
    for (l, a) in p.addresses.iter().enumerate() {
        let (Some(a), Some(ph)) = (a, phase_of(l)) else { continue };
        let first = a / bank_bytes * bank_bytes;
        let mut w = first;
        while w < a + size {
            words.push((l, ph, w));
            w += bank_bytes;
        }
    }
    // Per phase and bank, the distinct conflict keys it must serve (words; Kepler's 4-byte mode serves any
    // words of one 256-byte segment together): more than one is a conflict. The banking is the CC's rule.
    let mode = if b.bank_bytes == 8 { BankMode::EightByte } else { BankMode::FourByte };
    let banking = bank_rule(p.cc, p.size, mode).banking;
    // A shared atomic's lanes each do their own read-modify-write of a word, one after another (the model
    // reference's "Atomics"), where a load's lanes share it: every lane on the bank counts, not every word.
    // `ATOMS.POPC.INC` updates each word once, as a load reads it.
    let each_lane = report.atomic.is_some() && !report.op.contains("POPC");
    let degree = |ph: usize, w: u64| -> u32 {
        let bank = banking.bank(w);
        let mut distinct: Vec<u64> = words
            .iter()
            .filter(|&&(_, p2, w2)| p2 == ph && banking.bank(w2) == bank)
            .map(|t| banking.key(t.2))
            .collect();
        if !each_lane {
            distinct.sort_unstable();
            distinct.dedup();
        }
        distinct.len() as u32
    };
    let mut chunks: Vec<Chunk> = Vec::new();
    for &(l, ph, w) in &words {
        let (row, column) = (w / row_bytes, (w % row_bytes) / CHUNK_BYTES);
        let bit = 1u32 << ((w % CHUNK_BYTES) / bank_bytes);
        let d = degree(ph, w);
        let conflict = if d > 1 { d } else { 0 };
        match chunks.iter_mut().find(|c| c.row == row && c.column == column) {
            Some(c) => {
                c.lanes.insert(l);
                c.phase = c.phase.min(ph);
                c.words |= bit;
                c.conflict = c.conflict.max(conflict);
            }
            None => {
                let mut lanes = LaneSet::default();
                lanes.insert(l);
                chunks.push(Chunk { row, column, lanes, phase: ph, words: bit, conflict });
            }
        }
    }
    chunks.sort_by_key(|c| (c.row, c.column));
    let mut rows: Vec<u64> = chunks.iter().map(|c| c.row).collect();
    rows.dedup();
    Some(Tile { row_bytes, bank_bytes, rows, chunks })
}

/// Rows drawn at most; the rest are counted.
pub const MAX_ROWS: usize = 16;
const X0: f64 = 110.0;

/// The name of phase `i` of a report: `matrix 1 (lanes 8-15)` for ldmatrix, `phase 2 (lanes 8-15)` or `one
/// phase (lanes 0-31)` otherwise.
fn phase_name(report: &Report, b: &BankCost, i: usize) -> String {
    let Some(ph) = b.phases.get(i) else { return String::new() };
    if is_matrix(report) {
        super::scene::matrix_name(ph.lanes)
    } else if b.phases.len() == 1 {
        format!("one phase (lanes {})", ph.lanes.ranges())
    } else {
        format!("phase {} (lanes {})", i + 1, ph.lanes.ranges())
    }
}

/// The tile view of an issue, or why there is none (it touches no shared memory).
pub fn tile_scene(report: &Report, title: &str) -> Result<Scene, String> {
    let t = tile(report).ok_or_else(|| {
        format!("the tile view shows shared memory, and {} touches none: use the lane view", report.op)
    })?;
    let Some((p, b)) = shared_part(report) else {
        return Err(format!("{} touches no shared memory", report.op));
    };
    let matrix = is_matrix(p);
    let mut items = vec![rect(0.0, 0.0, WIDTH, 0.0, Class::Background, None)];
    items.push(text(16.0, 30.0, fit(title, TITLE, WIDTH - 32.0), TITLE, Class::Title, Anchor::Start));

    // The phases' colours, wrapped onto as many lines as they need.
    let intro = if matrix { "colour = matrix:" } else { "colour = phase:" };
    let mut x = 16.0;
    let mut legend_y = 66.0;
    items.push(text(x, legend_y, intro, TEXT, Class::Muted, Anchor::Start));
    x += text_width(intro, TEXT) + 12.0;
    for i in 0..b.phases.len().min(8) {
        let name = phase_name(p, b, i);
        let w = 28.0 + text_width(&name, TEXT) + 18.0;
        if x + w > WIDTH - 16.0 {
            x = 16.0;
            legend_y += LINE_H;
        }
        items.push(rect(x, legend_y - 18.0, 20.0, 20.0, Class::Phase(i as u8), None));
        items.push(text(x + 28.0, legend_y, name.clone(), TEXT, Class::Label, Anchor::Start));
        x += w;
    }

    // Column heads: the banks and the bytes of each chunk position (only the banks where 16 columns leave no
    // room for the bytes).
    let cols = t.columns();
    let cw = (WIDTH - X0 - 16.0) / cols as f64;
    let group = CHUNK_BYTES / t.bank_bytes;
    let head_y = legend_y + 42.0;
    let wide = cols <= 8;
    items.push(text(X0 - 10.0, head_y, "banks", TEXT, Class::Muted, Anchor::End));
    if wide {
        items.push(text(X0 - 10.0, head_y + LINE_H, "bytes", TEXT, Class::Muted, Anchor::End));
    }
    for c in 0..cols {
        let cx = X0 + c as f64 * cw + cw / 2.0;
        items.push(text(
            cx,
            head_y,
            format!("{}-{}", c * group, c * group + group - 1),
            TEXT,
            Class::Label,
            Anchor::Middle,
        ));
        if wide {
            let bytes = format!("{}-{}", c * CHUNK_BYTES, c * CHUNK_BYTES + CHUNK_BYTES - 1);
            items.push(text(cx, head_y + LINE_H, bytes, TEXT, Class::Muted, Anchor::Middle));
        }
    }

    // The rows: each cell names its lane (or lanes), its matrix row for ldmatrix, and its conflict, one line
    // each, so every label keeps the figure's size.
    let top = head_y + if wide { LINE_H } else { 0.0 } + 16.0;
    let shown = t.rows.len().min(MAX_ROWS);
    let label_lines = |k: &Chunk| -> Vec<(String, Class)> {
        let mut out = Vec::new();
        match (matrix, k.lanes.len()) {
            (true, 1) => {
                let l = k.lanes.iter().next().unwrap_or(0);
                out.push((format!("row {}", l % 8), Class::Label));
                out.push((format!("lane {l}"), Class::Label));
            }
            (_, 1) => out.push((format!("lane {}", k.lanes.iter().next().unwrap_or(0)), Class::Label)),
            _ => out.push((fit(&format!("lanes {}", k.lanes.ranges()), TEXT, cw - 8.0), Class::Label)),
        }
        if k.conflict > 0 {
            out.push((format!("{}-way", k.conflict), Class::ConflictLabel));
        }
        out
    };
    let lines = t.chunks.iter().map(|k| label_lines(k).len()).max().unwrap_or(1).max(1);
    let row_h = 16.0 + LINE_H * lines as f64;
    for (ri, &row) in t.rows.iter().take(shown).enumerate() {
        let y = top + ri as f64 * row_h;
        items.push(text(X0 - 10.0, y + 26.0, hex(row * t.row_bytes), TEXT, Class::Muted, Anchor::End));
        if ri > 0 && t.rows[ri - 1] + 1 != row {
            // Rows in between are untouched: a dashed gap would be noise, a mark says rows were skipped.
            items.push(text(X0 - 10.0, y + 2.0, "⋮", TEXT, Class::Muted, Anchor::End));
        }
        for c in 0..cols {
            let cx = X0 + c as f64 * cw;
            let chunk = t.chunks.iter().find(|k| k.row == row && k.column == c);
            let offset = row * t.row_bytes + c * CHUNK_BYTES;
            let Some(k) = chunk else {
                items.push(rect(
                    cx + 1.0,
                    y,
                    cw - 4.0,
                    row_h - 6.0,
                    Class::Cell,
                    Some(format!("offset {}: untouched", hex(offset))),
                ));
                continue;
            };
            let tip = format!(
                "offset {}: {}, {}{}",
                hex(offset),
                k.lanes.phrase(),
                phase_name(p, b, k.phase),
                if k.conflict > 0 { format!(", {}-way bank conflict", k.conflict) } else { String::new() }
            );
            items.push(rect(cx + 1.0, y, cw - 4.0, row_h - 6.0, Class::Cell, Some(tip)));
            // The touched words in the phase's colour: the whole chunk for 16-byte accesses.
            let per_word = (cw - 4.0) / group as f64;
            let mut w = 0;
            while w < group {
                if k.words & (1 << w) == 0 {
                    w += 1;
                    continue;
                }
                let mut end = w;
                while end + 1 < group && k.words & (1 << (end + 1)) != 0 {
                    end += 1;
                }
                let wx = cx + 1.0 + w as f64 * per_word;
                items.push(rect(
                    wx,
                    y,
                    (end - w + 1) as f64 * per_word,
                    row_h - 6.0,
                    Class::Phase(k.phase as u8),
                    None,
                ));
                w = end + 1;
            }
            if k.conflict > 0 {
                items.push(rect(cx + 1.0, y, cw - 4.0, row_h - 6.0, Class::Conflict, None));
            }
            let mid = cx + (cw - 4.0) / 2.0;
            let label = label_lines(k);
            // Centred in the cell, whatever the number of lines.
            let first = y + (row_h - 6.0) / 2.0 - LINE_H * (label.len() as f64 - 1.0) / 2.0 + 8.0;
            for (i, (line, class)) in label.into_iter().enumerate() {
                items.push(text(mid, first + i as f64 * LINE_H, line, TEXT, class, Anchor::Middle));
            }
        }
    }
    let mut y = top + shown as f64 * row_h;
    if t.rows.len() > shown {
        items.push(text(
            X0,
            y + 20.0,
            format!("… {} more rows", t.rows.len() - shown),
            TEXT,
            Class::Muted,
            Anchor::Start,
        ));
        y += 28.0;
    }

    // What it means.
    let conflicting = t.conflicting().count();
    let columns = t.conflict_columns().len();
    let total = format!(
        "{}, ideal {}: {}",
        wavefronts_text(u64::from(b.wavefronts), b.other_model_wavefronts.map(u64::from)),
        b.ideal_wavefronts,
        if conflicting == 0 {
            "no chunk shares its banks with another row in its phase".to_string()
        } else {
            format!(
                "{} in {} conflict (outlined)",
                plural(conflicting as u32, "chunk"),
                plural(columns as u32, "bank group")
            )
        }
    );
    y = paragraph(&mut items, 16.0, y + 30.0, &total, Class::Title);
    for sentence in phase_sentences(p, b).into_iter().take(8) {
        y = paragraph(&mut items, 16.0, y + 4.0, &sentence, Class::Label);
    }
    y += 8.0;
    let how = [
        format!(
            "Each row is {} bytes, one word in each of the {} banks; each cell is 16 bytes, {} banks side by side.",
            t.row_bytes, b.banks, group
        ),
        "Cells of different rows in the same column need the same banks: within one phase they are served one \
         after another (a conflict)."
            .to_string(),
    ];
    for line in how {
        y = paragraph(&mut items, 16.0, y, &line, Class::Muted);
    }

    let caption = format!(
        "Tile view of {}: {} of shared memory, {}.",
        report.op,
        plural(t.rows.len() as u32, &format!("{}-byte row", t.row_bytes)),
        if conflicting == 0 {
            "no bank conflicts".to_string()
        } else {
            format!("{} conflict in {}", plural(conflicting as u32, "chunk"), plural(columns as u32, "bank group"))
        }
    );
    let height = y + 28.0;
    if let Some(Item::Rect { h, .. }) = items.first_mut() {
        *h = height;
    }
    Ok(Scene { width: WIDTH, height, items, caption })
}
