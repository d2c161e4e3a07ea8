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

/// Whether two C-like texts (CUDA, PTX) differ only inside comments or in whitespace after a line's last
/// token, with every other character at the same line and column: the same program, its lines and columns
/// unchanged, so what was computed for one holds for the other. String and character literals are code.
pub fn same_code(a: &str, b: &str) -> bool {
    code_chars(a).eq(code_chars(b))
}

/// The characters outside comments that are not whitespace, with their line and column.
fn code_chars(text: &str) -> impl Iterator<Item = (u32, u32, char)> + '_ {
    let mut chars = text.chars().peekable();
    let (mut line, mut col) = (1u32, 0u32);
    // Inside: 0 code, 1 line comment, 2 block comment, 3 string, 4 character literal.
    let mut inside = 0u8;
    let mut escaped = false;
    std::iter::from_fn(move || loop {
        let c = chars.next()?;
        col += 1;
        if c == '\n' {
            line += 1;
            col = 0;
            if inside == 1 {
                inside = 0;
            }
            continue;
        }
        match inside {
            // A backslash at the end of a line comment carries it on to the next line.
            1 if c == '\\' && chars.peek() == Some(&'\n') => {
                chars.next();
                line += 1;
                col = 0;
                continue;
            }
            1 => continue,
            2 => {
                if c == '*' && chars.peek() == Some(&'/') {
                    chars.next();
                    col += 1;
                    inside = 0;
                }
                continue;
            }
            3 | 4 => {
                let close = if inside == 3 { '"' } else { '\'' };
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == close {
                    inside = 0;
                }
                return Some((line, col, c));
            }
            _ => {}
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => inside = 1,
            ('/', Some('*')) => {
                chars.next();
                col += 1;
                inside = 2;
            }
            (c, _) if c.is_whitespace() => {}
            ('"', _) => {
                inside = 3;
                return Some((line, col, c));
            }
            ('\'', _) => {
                inside = 4;
                return Some((line, col, c));
            }
            (c, _) => return Some((line, col, c)),
        }
    })
}

/// The 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
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

/// `a`, `a and b`, `a, b and c`: a list as a sentence says it.
pub fn list_and(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
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

/// `1,048,576`: an integer with thousands separators, read at a glance from the back of a lecture hall.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push(',');
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
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(8_448_000), "8,448,000");
        assert_eq!(grouped(1_048_576), "1,048,576");
        assert_eq!(ranges([0, 1, 2, 3, 20, 22, 23]), "0-3, 20, 22-23");
        assert_eq!(ranges([]), "none");
        assert_eq!(lanes_phrase([3]), "lane 3");
        assert_eq!(lanes_phrase([0, 1, 9]), "lanes 0-1, 9");
        assert_eq!(list_and(&[]), "");
        assert_eq!(list_and(&["pattern"]), "pattern");
        assert_eq!(list_and(&["language", "pattern"]), "language and pattern");
        assert_eq!(list_and(&["language", "pattern", "block"]), "language, pattern and block");
    }
}

/// How a message that meets data the model was not given says how to give it (`page_words` rewrites it for the
/// page, which does not take arrays yet).
pub const GIVE_DATA: &str =
    "warpscope reads data only where it is given (--data NAME=SOURCE: a .npy file or a generator such as uniform(0, 1024, n=4096))";

/// A message written in the command line's words, in the page's: a value given with `--set NAME=VALUE` on the
/// command line is typed as `NAME=VALUE` in the page's values field.
pub fn page_words(text: &str) -> String {
    const FLAG: &str = "--set ";
    let text = text
        .replace("with --set, e.g. --set ", "in the values field, e.g. ")
        .replace("with --kernel NAME or the kernel menu", "in the kernel menu")
        .replace(
            "Run one with --kernel and its arguments, for example --kernel '",
            "Choose one in the kernel menu and give its arguments in the template arguments field, for example '",
        )
        .replace(
            "choose its arguments with --kernel '",
            "choose it in the kernel menu and give its arguments in the template arguments field, e.g. '",
        )
        .replace("e.g. --kernel '", "in the template arguments field, e.g. '")
        .replace(", or give it with --include", "")
        .replace(
            "give it with --shared-bytes, or shared_bytes=N in the page's device field",
            "give it as shared_bytes=N in the device field",
        )
        .replace(", or give them with --include", "")
        // Data is given on the command line (and in Python); the page does not take arrays yet.
        .replace(
            &GIVE_DATA["warpscope reads data only where it is given ".len()..],
            "(on the command line, `warpscope analyze --data NAME=SOURCE` with a .npy file or a generator such as uniform(0, 1024, n=4096); this page does not take arrays yet)",
        );
    // `(--data-branches runs; …)` names the command line's option: the page has a menu for it.
    let mut text = text;
    while let Some(i) = text.find("(--data-branches ") {
        let Some(end) = text[i..].find(')').map(|e| i + e) else { break };
        text.replace_range(i..=end, "(the data-dependent conditions menu chooses another)");
    }
    let mut out = String::with_capacity(text.len() + 32);
    let mut rest = text.as_str();
    while let Some(i) = rest.find(FLAG) {
        let (before, with) = match rest[..i].strip_suffix("with ") {
            Some(b) => (b, true),
            None => (&rest[..i], false),
        };
        out.push_str(before);
        let after = &rest[i + FLAG.len()..];
        let end = after.find(|c: char| c.is_whitespace() || matches!(c, ')' | ',' | ';')).unwrap_or(after.len());
        let (value, dot) = match after[..end].strip_suffix('.') {
            Some(v) => (v, "."),
            None => (&after[..end], ""),
        };
        if with {
            out.push_str("as ");
        }
        out.push_str(value);
        out.push_str(" in the values field");
        out.push_str(dot);
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod page_tests {
    use super::page_words;

    #[test]
    fn the_data_branches_option_becomes_the_pages_menu() {
        // The note of Program::decision_notes (src/program/mod.rs).
        assert_eq!(
            page_words("so warpscope assumed its condition holds in every lane (--data-branches true; `runs`, `true`, `false` or a lane mask such as 0x0000ffff chooses another): the counts hold"),
            "so warpscope assumed its condition holds in every lane (the data-dependent conditions menu chooses another): the counts hold"
        );
    }

    #[test]
    fn kernel_flags_become_the_pages_kernel_menu() {
        // The messages of src/lang/cuda/parse.rs and lower.rs about kernels and templates.
        assert_eq!(
            page_words("`reduce` is a template kernel that nothing in the file instantiates: choose its arguments with --kernel 'reduce<int, 256>' (for example), or add a launch"),
            "`reduce` is a template kernel that nothing in the file instantiates: choose it in the kernel menu and give its arguments in the template arguments field, e.g. 'reduce<int, 256>' (for example), or add a launch"
        );
        assert_eq!(
            page_words(
                "This file has 2 kernels (a, b); this is a. Choose another with --kernel NAME or the kernel menu."
            ),
            "This file has 2 kernels (a, b); this is a. Choose another in the kernel menu."
        );
    }

    #[test]
    fn command_line_flags_become_the_pages_values_field() {
        // The messages the languages write (src/lang/cuda/lower.rs, sass/lower.rs, expr.rs, ptx/lower.rs).
        assert_eq!(
            page_words("the parameter `n`, which has no value (give it one with --set n=VALUE)"),
            "the parameter `n`, which has no value (give it one as n=VALUE in the values field)"
        );
        assert_eq!(
            page_words("unknown variable `k` (known: lane, tid; give others a value with --set NAME=VALUE)"),
            "unknown variable `k` (known: lane, tid; give others a value as NAME=VALUE in the values field)"
        );
        assert_eq!(
            page_words("Give other values with --set, e.g. --set n=VALUE."),
            "Give other values in the values field, e.g. n=VALUE."
        );
        assert_eq!(page_words("give one with --set R4=VALUE"), "give one as R4=VALUE in the values field");
        assert_eq!(page_words("no flag here"), "no flag here");
    }
}

/// How the product cites its model reference, `docs/model.md`, in any text it writes: this prefix and a
/// section's heading id (`docs/model.md#atomics`). The command line prints it as it is; the page links it to the
/// reference published with the site (`model.html#atomics`, see [`MODEL_PAGE`]) under the section's title.
pub const MODEL_CITE: &str = "docs/model.md#";

/// The published model reference, next to the page's `index.html`.
pub const MODEL_PAGE: &str = "model.html";

/// The sections of the model reference that the product cites: heading id and title. A test checks that each is
/// a heading of `docs/model.md` with this title, and that every citation anywhere names one of them.
pub const MODEL_SECTIONS: [(&str, &str); 27] = [
    ("units-and-words", "Units and words"),
    ("alignment-and-windows", "Alignment and windows"),
    ("global-memory", "Global memory"),
    ("shared-memory", "Shared memory"),
    ("local-memory", "Local memory"),
    ("compute-capabilities", "Compute capabilities"),
    ("shared-memory-as-measured", "Shared memory as measured"),
    ("ldmatrix-and-stmatrix", "ldmatrix and stmatrix"),
    ("asynchronous-copies", "Asynchronous copies"),
    ("swizzles", "Swizzles"),
    ("kernel-parameters", "Kernel parameters"),
    ("whole-grids", "Whole grids"),
    ("the-memory-system", "The memory system"),
    ("device-presets", "Device presets"),
    ("the-schedule", "The schedule"),
    ("l1-l2-and-dram", "L1, L2 and DRAM"),
    ("exact-reading", "Exact reading"),
    ("what-the-model-cannot-predict", "What the model cannot predict"),
    ("canonical-figures", "Canonical figures"),
    ("atomics", "Atomics"),
    ("constant-memory", "Constant memory"),
    ("the-read-only-path", "The read-only path"),
    ("values-from-data", "Values from data"),
    ("kernels-on-data", "Kernels on data"),
    ("model-notes", "Model notes"),
    ("sources", "Sources"),
    ("calibrating-against-a-gpu", "Calibrating against a GPU"),
];

/// A run of a text that may cite the model reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run<'a> {
    /// Plain text.
    Text(&'a str),
    /// A citation of a section: its heading id and title.
    Cite {
        /// The heading id.
        anchor: &'static str,
        /// The section's title.
        title: &'static str,
    },
}

/// Splits `text` into plain runs and citations of the model reference ([`MODEL_CITE`] and a known section's
/// id). A citation of an unknown section stays text (the test of the citations keeps there being none).
pub fn runs(text: &str) -> Vec<Run<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(MODEL_CITE) {
        let after = &rest[i + MODEL_CITE.len()..];
        let len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(after.len());
        match MODEL_SECTIONS.iter().find(|(a, _)| *a == &after[..len]) {
            Some(&(anchor, title)) => {
                if i > 0 {
                    out.push(Run::Text(&rest[..i]));
                }
                out.push(Run::Cite { anchor, title });
            }
            None => out.push(Run::Text(&rest[..i + MODEL_CITE.len() + len])),
        }
        rest = &after[len..];
    }
    if !rest.is_empty() {
        out.push(Run::Text(rest));
    }
    out
}

#[cfg(test)]
mod cite_tests {
    use super::*;

    #[test]
    fn citations_split_out_of_text_and_unknown_ones_stay_text() {
        assert_eq!(
            runs("one pass each (docs/model.md#constant-memory). More"),
            [
                Run::Text("one pass each ("),
                Run::Cite { anchor: "constant-memory", title: "Constant memory" },
                Run::Text("). More")
            ]
        );
        assert_eq!(runs("docs/model.md#nowhere."), [Run::Text("docs/model.md#nowhere"), Run::Text(".")]);
        assert_eq!(runs("plain"), [Run::Text("plain")]);
    }
}
