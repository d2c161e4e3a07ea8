//! The input languages: text in, the engine's types out. This is the only fallible entry to the core; every
//! error carries the line and column where it starts and an excerpt with a caret.

pub mod expr;

use crate::access::{Instr, LaneSet, WarpAddrs, WARP_LANES};
use std::fmt;

/// A byte range in the input text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte (at least `start + 1` when shown).
    pub end: usize,
}

/// A problem with the user's input: what is wrong and where (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct InputError {
    /// What is wrong, in one sentence.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The offending line followed by a caret line under the problem.
    pub excerpt: String,
}

impl InputError {
    /// Builds an error for `span` of `source`.
    pub fn at(source: &str, span: Span, message: impl Into<String>) -> InputError {
        let start = span.start.min(source.len());
        let start = (0..=start).rev().find(|&i| source.is_char_boundary(i)).unwrap_or(0);
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i);
        let line = source[..start].matches('\n').count() + 1;
        let column = source[line_start..start].chars().count() + 1;
        let text = &source[line_start..line_end];
        let width = source[start..span.end.clamp(start, line_end)].chars().count().max(1);
        let excerpt = format!("{text}\n{}{}", " ".repeat(column - 1), "^".repeat(width));
        InputError { message: message.into(), line, column, excerpt }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}\n{}", self.line, self.column, self.message, self.excerpt)
    }
}

/// Evaluates an address expression in `lane` for the lanes of `mask`, checking each address against the
/// instruction's address width.
pub fn warp_from_expr(source: &str, instr: &Instr, mask: LaneSet) -> Result<WarpAddrs, InputError> {
    let e = expr::parse(source, &["lane"])?;
    let bits = instr.address_bits();
    let max = if bits == 64 { u64::MAX } else { u64::from(u32::MAX) };
    let mut addrs = [None; WARP_LANES];
    for (lane, slot) in addrs.iter_mut().enumerate() {
        if !mask.contains(lane) {
            continue;
        }
        let value = e
            .eval(&|name| (name == "lane").then_some(lane as i128))
            .map_err(|err| InputError::at(source, err.span, format!("{} (lane {lane})", err.message)))?;
        let addr = u64::try_from(value).ok().filter(|&a| a <= max).ok_or_else(|| {
            let why = if value < 0 {
                format!("lane {lane}: the address is negative ({value})")
            } else if bits == 32 {
                format!("lane {lane}: the address {value:#x} does not fit in 32 bits; {} takes a 32-bit address (add .E for 64 bits)", instr.text)
            } else {
                format!("lane {lane}: the address {value:#x} does not fit in 64 bits")
            };
            let lead = source.len() - source.trim_start().len();
            InputError::at(source, Span { start: lead, end: source.trim_end().len().max(lead + 1) }, why)
        })?;
        *slot = Some(addr);
    }
    Ok(WarpAddrs(addrs))
}
