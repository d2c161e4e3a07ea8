//! Address lists, for addresses taken from a trace: 32 per warp, decimal or `0x` hex, `-` for an inactive
//! lane, separated by spaces, commas or new lines. A line holding only a mnemonic (`LDS.64`, or `op LDS.64`)
//! starts a new instruction; `#` and `//` start comments.
//!
//! ```text
//! LDG.E.32
//! 0x1000 0x1004 0x1008 ... (32 values: warp 0)
//! 0x1080 -      0x1088 ... (32 values: warp 1)
//! ```

use super::{InputError, Span};
use crate::model::access::{Instr, WARP_LANES};
use crate::program::launch::{Dim3, MAX_BLOCK_THREADS};
use crate::program::{Builder, Op, PredRef, Program, Site};

struct Block {
    op: Instr,
    op_span: Option<Span>,
    line: usize,
    values: Vec<(Option<u64>, Span)>,
}

/// Parses an address list into a program: each instruction's warps are warps 0, 1, 2, ... of one block,
/// whose size (one warp per row) comes back with it.
pub fn lower(src: &str, default_op: Option<Instr>) -> Result<(Program, Dim3), InputError> {
    if src.len() > super::lex::MAX_INPUT_BYTES {
        return Err(InputError::at(src, Span { start: 0, end: 1 }, "the input is larger than 1 MB"));
    }
    let mut blocks: Vec<Block> = Vec::new();
    let mut offset = 0usize;
    for (line_idx, line) in src.split('\n').enumerate() {
        let line_start = offset;
        offset += line.len() + 1;
        let code = line.split('#').next().unwrap_or("");
        let code = code.split("//").next().unwrap_or("");
        let words: Vec<(usize, &str)> = code
            .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
            .scan(0usize, |pos, w| {
                let start = *pos;
                *pos += w.len() + 1;
                Some((start, w))
            })
            .filter(|(_, w)| !w.is_empty())
            .collect();
        if words.is_empty() {
            continue;
        }
        // An instruction line: `LDS.64` or `op LDS.64`.
        let first = words[0].1;
        let is_op_line = first.eq_ignore_ascii_case("op")
            || first.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && !first.starts_with("0x");
        if is_op_line {
            let (col, text) = if first.eq_ignore_ascii_case("op") && words.len() > 1 { words[1] } else { words[0] };
            let span = Span { start: line_start + col, end: line_start + col + text.len() };
            let op = Instr::parse(text).map_err(|e| {
                InputError::at(
                    src,
                    Span { start: span.start + e.column, end: span.start + e.column + e.len },
                    e.message,
                )
            })?;
            let extra = if first.eq_ignore_ascii_case("op") { 2 } else { 1 };
            if let Some(&(c, w)) = words.get(extra) {
                return Err(InputError::at(
                    src,
                    Span { start: line_start + c, end: line_start + c + w.len() },
                    "an instruction line holds only the mnemonic; put the addresses on the next lines",
                ));
            }
            blocks.push(Block { op, op_span: Some(span), line: line_idx + 1, values: Vec::new() });
            continue;
        }
        if blocks.is_empty() {
            let Some(op) = default_op.clone() else {
                return Err(InputError::at(
                    src,
                    Span { start: line_start + words[0].0, end: line_start + words[0].0 + first.len() },
                    "which instruction? put a mnemonic such as LDG.E.32 on the first line, or pass --op",
                ));
            };
            blocks.push(Block { op, op_span: None, line: line_idx + 1, values: Vec::new() });
        }
        let block = blocks.last_mut().expect("a block was pushed");
        for (col, w) in words {
            let span = Span { start: line_start + col, end: line_start + col + w.len() };
            let value = if w == "-" {
                None
            } else {
                let clean: String = w.chars().filter(|&c| c != '_').collect::<String>().to_ascii_lowercase();
                let parsed = match clean.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16),
                    None => clean.parse::<u64>(),
                };
                match parsed {
                    Ok(v) if block.op.address_bits() == 32 && v > u64::from(u32::MAX) => {
                        return Err(InputError::at(
                            src,
                            span,
                            format!(
                                "{v:#x} does not fit in 32 bits; {} takes a 32-bit address (add .E)",
                                block.op.text
                            ),
                        ))
                    }
                    Ok(v) => Some(v),
                    Err(_) => {
                        return Err(InputError::at(
                            src,
                            span,
                            format!("`{w}` is not an address (decimal, 0x hex, or - for an inactive lane)"),
                        ))
                    }
                }
            };
            block.values.push((value, span));
        }
    }
    if blocks.is_empty() {
        return Err(InputError::at(
            src,
            Span { start: 0, end: 1 },
            "no addresses: give 32 per warp, - for an inactive lane",
        ));
    }
    let max_warps = blocks.iter().map(|b| b.values.len().div_ceil(WARP_LANES)).max().unwrap_or(1).max(1);
    for b in &blocks {
        let n = b.values.len();
        if n % WARP_LANES != 0 || n == 0 {
            let span = b.values.last().map(|v| v.1).or(b.op_span).unwrap_or(Span { start: 0, end: 1 });
            return Err(InputError::at(
                src,
                span,
                format!(
                    "warp {} of {} has {} address(es); a warp needs 32 (use - for inactive lanes)",
                    n / WARP_LANES,
                    b.op.text,
                    n % WARP_LANES
                ),
            ));
        }
    }
    if max_warps * WARP_LANES > MAX_BLOCK_THREADS as usize {
        return Err(InputError::at(
            src,
            Span { start: 0, end: 1 },
            "more than 32 warps for one instruction: a block has at most 1024 threads",
        ));
    }
    let block = Dim3::linear((max_warps * WARP_LANES) as u32);
    let lines: Vec<&str> = src.lines().collect();
    let mut builder = Builder::new();
    let span = Span { start: 0, end: 1 };
    let ctx = builder.ctx("the address depends on ");
    for (i, b) in blocks.iter().enumerate() {
        let text = lines.get(b.line - 1).map_or("", |l| l.trim()).to_string();
        let rows: Vec<[Option<u64>; WARP_LANES]> =
            b.values.chunks(WARP_LANES).map(|c| std::array::from_fn(|l| c.get(l).and_then(|v| v.0))).collect();
        let (dst, pred) = (builder.reg(), builder.pred());
        builder.emit(Op::Table { dst, pred, rows: rows.into() }, None, span);
        let site = builder.site(
            (i, 0),
            Site {
                line: b.line,
                text,
                access: format!("{} addresses", b.op.text),
                instr: b.op.clone(),
                notes: Vec::new(),
                source: None,
            },
        );
        builder.emit(Op::Mem { site, addr: dst, plg: None, src: None, ctx, data: None }, Some(PredRef::of(pred)), span);
    }
    Ok((builder.finish(), block))
}
