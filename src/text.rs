//! The words every layer writes the same way: positions in the user's text, counts with their noun, hex
//! addresses and lane ranges.
//!
//! May import: nothing of the crate. Everything else may import it.

/// A byte range in the input text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte (at least `start + 1` when shown).
    pub end: usize,
}

/// `1 sector`, `5 sectors`: a count with its noun, made plural by `s`.
pub fn plural(n: impl Into<u64>, word: &str) -> String {
    match n.into() {
        1 => format!("1 {word}"),
        n => format!("{n} {word}s"),
    }
}

/// The ending a noun takes after the count `n`: `""` for 1, `plural` otherwise (`"s"`, `"es"`).
pub fn ending(n: impl Into<u64>, plural: &'static str) -> &'static str {
    if n.into() == 1 {
        ""
    } else {
        plural
    }
}

/// `0x7000_0000_0040`: hex with `_` every four digits, so long addresses can be read aloud.
pub fn hex(v: u64) -> String {
    let digits = format!("{v:x}");
    let mut out = String::with_capacity(digits.len() + digits.len() / 4 + 2);
    out.push_str("0x");
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 4 == 0 {
            out.push('_');
        }
        out.push(c);
    }
    out
}

/// Lane numbers (ascending) written as ranges: `0-15, 20, 22-23`, or `none`.
pub fn ranges(lanes: impl IntoIterator<Item = usize>) -> String {
    let mut out = String::new();
    let mut run: Option<(usize, usize)> = None;
    let flush = |out: &mut String, (a, b): (usize, usize)| {
        if !out.is_empty() {
            out.push_str(", ");
        }
        if a == b {
            out.push_str(&a.to_string());
        } else {
            out.push_str(&format!("{a}-{b}"));
        }
    };
    for l in lanes {
        run = match run {
            Some((a, b)) if l == b + 1 => Some((a, l)),
            Some(r) => {
                flush(&mut out, r);
                Some((l, l))
            }
            None => Some((l, l)),
        };
    }
    if let Some(r) = run {
        flush(&mut out, r);
    }
    if out.is_empty() {
        out.push_str("none");
    }
    out
}

/// `lane 3` or `lanes 0-7, 9`.
pub fn lanes_phrase(lanes: impl IntoIterator<Item = usize>) -> String {
    let mut n = 0;
    let list = ranges(lanes.into_iter().inspect(|_| n += 1));
    if n == 1 {
        format!("lane {list}")
    } else {
        format!("lanes {list}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!(plural(1u32, "sector"), "1 sector");
        assert_eq!(plural(0u32, "sector"), "0 sectors");
        assert_eq!(plural(5u64, "bank conflict"), "5 bank conflicts");
        assert_eq!(ending(1u32, "es"), "");
        assert_eq!(ending(2u32, "es"), "es");
        assert_eq!(hex(0x7000_0000_0040), "0x7000_0000_0040");
        assert_eq!(hex(0x40), "0x40");
        assert_eq!(hex(0), "0x0");
        assert_eq!(ranges([0, 1, 2, 3, 20, 22, 23]), "0-3, 20, 22-23");
        assert_eq!(ranges([]), "none");
        assert_eq!(lanes_phrase([3]), "lane 3");
        assert_eq!(lanes_phrase([0, 1, 9]), "lanes 0-1, 9");
    }
}
