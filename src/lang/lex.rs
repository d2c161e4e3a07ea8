//! A C-like lexer shared by the expression and CUDA languages: integers (decimal, hex, binary, with `_`
//! separators and C suffixes), floats, identifiers, punctuation, comments and preprocessor lines.
//!
//! Its functions are `#[cold]`: they run once per analysis, and LLVM then keeps them compact instead of
//! inlining into them, which keeps the page's analysis worker within its 300 KB budget (docs/performance.md,
//! the size budgets) while the executor stays optimised for speed.

use super::{InputError, Span};

/// The largest input any language accepts, in bytes.
pub const MAX_INPUT_BYTES: usize = 1 << 20;

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An integer literal.
    Int(i128),
    /// A floating-point literal (its value is data, not an address, so it is not kept).
    Float,
    /// An identifier or keyword.
    Ident(String),
    /// Punctuation or an operator.
    Punct(&'static str),
    /// A preprocessor line (`#define N 32`), with the text after `#` (a line ending in `\\` goes on to the
    /// next; the backslash and newline are kept, so offsets into the text are offsets into the source).
    Hash(String),
    /// A string literal: its text between the quotes, escapes as written (`asm` templates read it, also when
    /// the literal came through a macro; `printf` and `assert` ignore it).
    Str(std::rc::Rc<str>),
    /// A character literal, as its value.
    Char(i128),
    /// Text that is no token (an unclosed quote, a stray character), with the error it is: from
    /// [`lex_skippable`] only, for a preprocessor to report where it is not skipped (C reads the lines of
    /// `#if 0` as text, so `// don't` there is no error).
    Bad(String),
    /// The end of the input.
    End,
}

/// A token with its place in the source.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Where it is.
    pub span: Span,
}

const PUNCT: [&str; 48] = [
    "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "::", "+", "-", "*", "/", "%", "<", ">", "=", "!", "~", "&", "|", "^", "?", ":", ";", ",", ".", "(",
    ")", "[", "]", "{", "}", "@", "#",
];

/// Values beyond this magnitude are past any 64-bit address; literals and intermediate results are kept
/// below it so that 128-bit arithmetic never overflows silently.
pub const VALUE_LIMIT: i128 = 1 << 96;

/// Splits `src` into tokens.
#[cold]
pub fn lex(src: &str) -> Result<Vec<Token>, InputError> {
    lex_with(src, false)
}

/// Like [`lex`], but text that is no token becomes a [`Tok::Bad`] (to the end of its line, for a quote)
/// instead of an error; an unclosed `/*` and an input past the size limit are still errors.
#[cold]
pub fn lex_skippable(src: &str) -> Result<Vec<Token>, InputError> {
    lex_with(src, true)
}

#[cold]
fn lex_with(src: &str, lenient: bool) -> Result<Vec<Token>, InputError> {
    // In lenient mode an error becomes a `Bad` token over `span`, and lexing goes on at `resume`.
    let bad = |toks: &mut Vec<Token>, e: InputError, span: Span| -> Result<(), InputError> {
        if !lenient {
            return Err(e);
        }
        toks.push(Token { tok: Tok::Bad(e.message), span });
        Ok(())
    };
    if src.len() > MAX_INPUT_BYTES {
        return Err(InputError::at(
            src,
            Span { start: 0, end: 1 },
            format!("the input is {} bytes; warpscope reads at most {} bytes", src.len(), MAX_INPUT_BYTES),
        ));
    }
    let bytes = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0usize;
    let mut line_start = true;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        // A backslash at the end of a line splices the next line on (C's translation phase 2): whitespace here.
        if c == b'\\' && (src[i + 1..].starts_with('\n') || src[i + 1..].starts_with("\r\n")) {
            i += if bytes[i + 1] == b'\r' { 3 } else { 2 };
            continue;
        }
        if src[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if src[i..].starts_with("/*") {
            match src[i + 2..].find("*/") {
                Some(end) => i += end + 4,
                None => return Err(InputError::at(src, Span { start: i, end: i + 2 }, "unterminated `/*` comment")),
            }
            continue;
        }
        let start = i;
        if c == b'#' && line_start {
            while i < bytes.len() && (bytes[i] != b'\n' || (i > 0 && bytes[i - 1] == b'\\')) {
                i += 1;
            }
            toks.push(Token { tok: Tok::Hash(src[start + 1..i].trim().to_string()), span: Span { start, end: i } });
            continue;
        }
        line_start = false;
        if c == b'"' || c == b'\'' {
            let tok = quoted(src, start).and_then(|end| {
                let tok =
                    if c == b'"' { Tok::Str(src[start + 1..end - 1].into()) } else { char_value(src, start, end)? };
                Ok((tok, end))
            });
            match tok {
                Ok((tok, end)) => {
                    toks.push(Token { tok, span: Span { start, end } });
                    i = end;
                }
                Err(e) => {
                    bad(&mut toks, e, Span { start, end: start + 1 })?;
                    i = src[start..].find('\n').map_or(bytes.len(), |n| start + n);
                }
            }
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            match number(src, start) {
                Ok((tok, end)) => {
                    toks.push(Token { tok, span: Span { start, end } });
                    i = end;
                }
                Err(e) => {
                    i = start + 1;
                    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.' || bytes[i] == b'_')
                    {
                        i += 1;
                    }
                    // A preprocessing number that is no number (`2d`, pasted onto a name by `##` in a macro)
                    // stays a word for the preprocessor; used as code, it is an unknown name there.
                    let word = src[start..i].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                    if lenient && word {
                        toks.push(Token { tok: Tok::Ident(src[start..i].to_string()), span: Span { start, end: i } });
                    } else {
                        bad(&mut toks, e, Span { start, end: i })?;
                    }
                }
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            toks.push(Token { tok: Tok::Ident(src[start..i].to_string()), span: Span { start, end: i } });
            continue;
        }
        match PUNCT.iter().find(|p| src[i..].starts_with(**p)) {
            Some(p) => {
                i += p.len();
                toks.push(Token { tok: Tok::Punct(p), span: Span { start, end: i } });
            }
            None => {
                let ch = src[i..].chars().next().unwrap_or('?');
                let span = Span { start, end: start + ch.len_utf8() };
                bad(
                    &mut toks,
                    InputError::at(src, span, format!("unexpected character `{}`", ch.escape_debug())),
                    span,
                )?;
                i = span.end;
            }
        }
    }
    toks.push(Token { tok: Tok::End, span: Span { start: src.len(), end: src.len() + 1 } });
    Ok(toks)
}

/// The end of the string or character literal starting at `start` (its closing quote included).
#[cold]
fn quoted(src: &str, start: usize) -> Result<usize, InputError> {
    let bytes = src.as_bytes();
    let q = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() && bytes[i] != b'\n' {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] == q {
            return Ok(i + 1);
        }
        i += 1;
    }
    let what = if q == b'"' { "string" } else { "character literal" };
    Err(InputError::at(src, Span { start, end: start + 1 }, format!("unterminated {what}: close it on the same line")))
}

#[cold]
fn char_value(src: &str, start: usize, end: usize) -> Result<Tok, InputError> {
    let body = &src[start + 1..end - 1];
    let v = match body.as_bytes() {
        [c] if *c != b'\\' => i128::from(*c),
        [b'\\', c] => i128::from(match c {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'0' => 0,
            other => *other,
        }),
        _ => {
            return Err(InputError::at(
                src,
                Span { start, end },
                "only one-character literals such as 'a' or '\\n' are understood",
            ))
        }
    };
    Ok(Tok::Char(v))
}

/// Whether `t` is a decimal floating-point literal: digits with an optional `.` (at least one digit in all),
/// then an optional exponent `e`/`E`, sign, digits. (Checked by hand: the value itself is never used.)
#[cold]
fn is_decimal_float(t: &str) -> bool {
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).count();
    let dots = mantissa.bytes().filter(|&b| b == b'.').count();
    let mantissa_ok = digits > 0 && dots <= 1 && digits + dots == mantissa.len();
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}

#[cold]
fn number(src: &str, start: usize) -> Result<(Tok, usize), InputError> {
    let bytes = src.as_bytes();
    let mut end = start;
    let mut is_float = false;
    let hex = src[start..].starts_with("0x") || src[start..].starts_with("0X");
    while end < bytes.len() {
        let b = bytes[end];
        let exp_sign = !hex && (b == b'+' || b == b'-') && end > start && matches!(bytes[end - 1], b'e' | b'E');
        // C++14's digit separator: `1'000'000`, `0xFFFF'FFFF` (a quote between two digits).
        let separator = b == b'\''
            && end > start
            && bytes[end - 1].is_ascii_hexdigit()
            && bytes.get(end + 1).is_some_and(u8::is_ascii_hexdigit);
        if separator {
            end += 1;
            continue;
        }
        if b.is_ascii_alphanumeric() || b == b'_' || (b == b'.' && !hex) || exp_sign {
            if b == b'.' || (!hex && (b == b'e' || b == b'E')) {
                is_float = true;
            }
            end += 1;
        } else {
            break;
        }
    }
    let text = &src[start..end];
    let span = Span { start, end };
    if is_float {
        let body: String = text.trim_end_matches(['f', 'F']).chars().filter(|&c| c != '\'').collect();
        let body = body.as_str();
        return match is_decimal_float(body) {
            true => Ok((Tok::Float, end)),
            false => Err(InputError::at(src, span, format!("`{text}` is not a number"))),
        };
    }
    let clean: String = text.chars().filter(|&c| c != '_' && c != '\'').collect::<String>().to_ascii_lowercase();
    let digits = clean.trim_end_matches(['u', 'l']);
    let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = digits.strip_prefix("0b") {
        (2, b)
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return Err(InputError::at(src, span, format!("`{text}` is not a number (decimal, 0x hex or 0b binary)")));
    }
    match i128::from_str_radix(body, radix) {
        Ok(n) if n <= VALUE_LIMIT => Ok((Tok::Int(n), end)),
        _ => Err(InputError::at(src, span, "number too large: past any 64-bit address")),
    }
}
