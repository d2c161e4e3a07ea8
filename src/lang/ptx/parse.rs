//! PTX text to the syntax tree: tokens (comments dropped, numbers and float literals read), then a module's
//! directives (`.version`, `.target`, `.file`, `.loc`, `.section`), kernels, functions, variables and each
//! body's declarations, labels and instructions with their operands. Nothing here knows what an instruction
//! means.
//!
//! May import: `syntax` and `lang::{InputError, Span}`.

use super::syntax::{type_bits, Decl, Declared, Func, Inst, Module, Opnd, Space, Stmt};
use crate::lang::{InputError, Span};

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub enum T {
    /// A name, directive, opcode or register, dots included: `ld.global.f32`, `%tid.x`, `.reg`, `$L__BB0_2`.
    Word(String),
    /// An integer literal (its two's-complement bits).
    Int(u64),
    /// A floating-point literal, as the bits of an f64 (`0d...`, decimal) or an f32 (`0f...`, `f32` true).
    Float {
        /// The bits.
        bits: u64,
        /// Written as a 32-bit `0f` literal.
        f32: bool,
    },
    /// A string literal (`.file`, `.pragma`).
    Str,
    /// One punctuation character.
    P(char),
}

/// A token with where it is.
#[derive(Clone, Debug)]
pub struct Tok {
    /// The token.
    pub t: T,
    /// Its bytes in the source.
    pub span: Span,
    /// 1-based line.
    pub line: usize,
}

fn word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'%'
}

/// Splits PTX into tokens. Comments (`//`, `/* */`) go.
pub fn lex(src: &str) -> Result<Vec<Tok>, InputError> {
    let s = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1usize);
    while i < s.len() {
        let c = s[i];
        let start = i;
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_ascii_whitespace() => i += 1,
            b'/' if s.get(i + 1) == Some(&b'/') => {
                while i < s.len() && s[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if s.get(i + 1) == Some(&b'*') => {
                i += 2;
                loop {
                    if i + 1 >= s.len() {
                        return Err(InputError::at(
                            src,
                            Span { start, end: start + 2 },
                            "this comment is never closed",
                        ));
                    }
                    if s[i] == b'*' && s[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    if s[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            b'"' => {
                i += 1;
                while i < s.len() && s[i] != b'"' && s[i] != b'\n' {
                    i += if s[i] == b'\\' { 2 } else { 1 };
                }
                if i >= s.len() || s[i] != b'"' {
                    return Err(InputError::at(src, Span { start, end: start + 1 }, "this string is never closed"));
                }
                i += 1;
                out.push(Tok { t: T::Str, span: Span { start, end: i }, line });
            }
            b'0'..=b'9' => {
                let (t, end) = number(src, i)?;
                i = end;
                out.push(Tok { t, span: Span { start, end: i }, line });
            }
            c if word_char(c) || c == b'.' => {
                i += 1;
                loop {
                    match s.get(i) {
                        Some(&c) if word_char(c) => i += 1,
                        // A dot inside a word (`ld.global`, `%tid.x`), and `::` (`.shared::cta`, `.L2::128B`).
                        Some(b'.') if s.get(i + 1).is_some_and(|&c| word_char(c)) => i += 1,
                        Some(b':') if s.get(i + 1) == Some(&b':') && s.get(i + 2).is_some_and(|&c| word_char(c)) => {
                            i += 2
                        }
                        _ => break,
                    }
                }
                out.push(Tok { t: T::Word(src[start..i].to_string()), span: Span { start, end: i }, line });
            }
            b'{' | b'}' | b'(' | b')' | b'[' | b']' | b',' | b';' | b':' | b'@' | b'!' | b'+' | b'-' | b'<' | b'>'
            | b'=' | b'|' => {
                i += 1;
                out.push(Tok { t: T::P(c as char), span: Span { start, end: i }, line });
            }
            _ => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err(InputError::at(
                    src,
                    Span { start, end: start + ch.len_utf8() },
                    format!("unexpected character `{}` in PTX", ch.escape_default()),
                ));
            }
        }
    }
    Ok(out)
}

/// An integer (decimal, `0x` hex, `0b` binary, octal, optional `U` suffix) or a float (`0f` + 8 hex digits,
/// `0d` + 16, or decimal with a point or exponent) starting at `i`.
fn number(src: &str, i: usize) -> Result<(T, usize), InputError> {
    let s = src.as_bytes();
    let mut j = i;
    while j < s.len() && (s[j].is_ascii_alphanumeric() || s[j] == b'_') {
        j += 1;
    }
    // A decimal float: digits '.' digits [e[+-]digits].
    let mut k = j;
    let is_dec_float = s[i..j].iter().all(u8::is_ascii_digit)
        && (s.get(k) == Some(&b'.') && s.get(k + 1).is_some_and(u8::is_ascii_digit));
    if is_dec_float {
        k += 1;
        while k < s.len() && s[k].is_ascii_digit() {
            k += 1;
        }
        if matches!(s.get(k), Some(b'e' | b'E')) {
            let mut m = k + 1;
            if matches!(s.get(m), Some(b'+' | b'-')) {
                m += 1;
            }
            if s.get(m).is_some_and(u8::is_ascii_digit) {
                while m < s.len() && s[m].is_ascii_digit() {
                    m += 1;
                }
                k = m;
            }
        }
        let v: f64 = src[i..k].parse().unwrap_or(0.0);
        return Ok((T::Float { bits: v.to_bits(), f32: false }, k));
    }
    let text = &src[i..j];
    let bad = || InputError::at(src, Span { start: i, end: j }, format!("`{text}` is not a PTX number"));
    let lower = text.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0f").filter(|h| h.len() == 8) {
        let v = u64::from_str_radix(h, 16).map_err(|_| bad())?;
        return Ok((T::Float { bits: v, f32: true }, j));
    }
    if let Some(h) = lower.strip_prefix("0d").filter(|h| h.len() == 16) {
        let v = u64::from_str_radix(h, 16).map_err(|_| bad())?;
        return Ok((T::Float { bits: v, f32: false }, j));
    }
    let body = lower.strip_suffix('u').unwrap_or(&lower);
    let v = if let Some(h) = body.strip_prefix("0x") {
        u64::from_str_radix(h, 16)
    } else if let Some(b) = body.strip_prefix("0b") {
        u64::from_str_radix(b, 2)
    } else if body.len() > 1 && body.starts_with('0') {
        u64::from_str_radix(&body[1..], 8)
    } else {
        body.parse::<u64>()
    };
    Ok((T::Int(v.map_err(|_| bad())?), j))
}

/// Statements nest at most this deep (`{ { ... } }`).
const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Tok>,
    i: usize,
    /// The last `.loc`: (file number, line); `None` after `.loc F 0 C` (no source line).
    loc: Option<(u32, u32)>,
}

type R<T> = Result<T, InputError>;

impl Parser<'_> {
    fn peek(&self) -> Option<&T> {
        self.toks.get(self.i).map(|t| &t.t)
    }

    fn span(&self) -> Span {
        self.toks.get(self.i).map_or(Span { start: self.src.len(), end: self.src.len() + 1 }, |t| t.span)
    }

    fn line(&self) -> usize {
        self.toks.get(self.i).map_or(usize::MAX, |t| t.line)
    }

    fn err(&self, span: Span, m: impl Into<String>) -> InputError {
        InputError::at(self.src, span, m)
    }

    fn describe(&self) -> String {
        match self.toks.get(self.i) {
            None => "the end of the text".into(),
            Some(t) => format!("`{}`", &self.src[t.span.start..t.span.end]),
        }
    }

    fn is_p(&self, c: char) -> bool {
        self.peek() == Some(&T::P(c))
    }

    fn eat_p(&mut self, c: char) -> bool {
        if self.is_p(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect_p(&mut self, c: char, what: &str) -> R<Span> {
        let sp = self.span();
        if self.eat_p(c) {
            Ok(sp)
        } else {
            Err(self.err(sp, format!("expected `{c}` {what}, found {}", self.describe())))
        }
    }

    fn word(&self) -> Option<&str> {
        match self.peek() {
            Some(T::Word(w)) => Some(w),
            _ => None,
        }
    }

    fn expect_word(&mut self, what: &str) -> R<(String, Span)> {
        let sp = self.span();
        match self.peek() {
            Some(T::Word(w)) => {
                let w = w.clone();
                self.i += 1;
                Ok((w, sp))
            }
            _ => Err(self.err(sp, format!("expected {what}, found {}", self.describe()))),
        }
    }

    fn int(&mut self, what: &str) -> R<u64> {
        let sp = self.span();
        match self.peek() {
            Some(T::Int(v)) => {
                let v = *v;
                self.i += 1;
                Ok(v)
            }
            _ => Err(self.err(sp, format!("expected {what}, found {}", self.describe()))),
        }
    }

    /// Skips the rest of the current line (directives without `;`: `.version 7.5`, `.loc 1 2 3`).
    fn skip_line(&mut self) {
        let line = self.line();
        while self.i < self.toks.len() && self.toks[self.i].line == line {
            self.i += 1;
        }
    }

    /// Skips to the `;` that ends a statement, and past it.
    fn skip_statement(&mut self) -> R<()> {
        let start = self.span();
        while let Some(t) = self.peek().cloned() {
            self.i += 1;
            if t == T::P(';') {
                return Ok(());
            }
        }
        Err(self.err(start, "this statement has no `;` at its end"))
    }

    /// `.loc FILE LINE COLUMN[, function_name L, inlined_at F L C]`: where the next instructions come from
    /// (the first file and line: the instruction's own, inside an inlined function). Skips the line.
    fn loc_directive(&mut self) {
        let nums = |k: usize| match self.toks.get(self.i + k) {
            Some(Tok { t: T::Int(v), .. }) => u32::try_from(*v).ok(),
            _ => None,
        };
        self.loc = match (nums(1), nums(2)) {
            (Some(f), Some(l)) if l > 0 => Some((f, l)),
            _ => None,
        };
        self.skip_line();
    }

    /// `.file N "name"[, time, size]`: the number and name, when written so.
    fn file_directive(&self) -> Option<(u32, String)> {
        let n = match self.toks.get(self.i + 1)? {
            Tok { t: T::Int(v), .. } => u32::try_from(*v).ok()?,
            _ => return None,
        };
        let name = match self.toks.get(self.i + 2)? {
            Tok { t: T::Str, span, .. } => self.src.get(span.start + 1..span.end - 1)?.to_string(),
            _ => return None,
        };
        Some((n, name))
    }

    /// Skips a balanced `{ ... }` (`.section` contents).
    fn skip_braces(&mut self) -> R<()> {
        let start = self.expect_p('{', "to open the section")?;
        let mut depth = 1;
        while let Some(t) = self.peek().cloned() {
            self.i += 1;
            match t {
                T::P('{') => depth += 1,
                T::P('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err(self.err(start, "this `{` is never closed"))
    }

    fn module(&mut self) -> R<Module> {
        let mut m = Module::default();
        while self.peek().is_some() {
            let sp = self.span();
            let Some(w) = self.word().map(str::to_string) else {
                return Err(self.err(
                    sp,
                    format!(
                        "unexpected {} at the top level of a PTX module (expected .entry, .func, a variable or a directive)",
                        self.describe()
                    ),
                ));
            };
            match w.as_str() {
                ".version" | ".address_size" => self.skip_line(),
                ".file" => {
                    if let Some(f) = self.file_directive() {
                        m.files.push(f);
                    }
                    self.skip_line();
                }
                ".loc" => self.loc_directive(),
                ".target" => {
                    self.i += 1;
                    let line = self.line();
                    while self.i < self.toks.len() && self.toks[self.i].line == line {
                        if let T::Word(w) = &self.toks[self.i].t {
                            if let Some(n) = w.strip_prefix("sm_") {
                                let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
                                m.target = digits.parse().ok();
                            }
                        }
                        self.i += 1;
                    }
                }
                ".pragma" => self.skip_statement()?,
                ".section" => {
                    self.i += 1;
                    while !self.is_p('{') && self.peek().is_some() {
                        self.i += 1;
                    }
                    self.skip_braces()?;
                }
                _ => {
                    // Linking directives, then an entry, a function or a variable.
                    let mut is_extern = false;
                    while let Some(l) =
                        self.word().filter(|w| matches!(*w, ".visible" | ".extern" | ".weak" | ".common"))
                    {
                        is_extern |= l == ".extern";
                        self.i += 1;
                    }
                    match self.word() {
                        Some(".entry") => {
                            let f = self.func(true)?;
                            m.funcs.push(f);
                        }
                        Some(".func") => {
                            let f = self.func(false)?;
                            m.funcs.push(f);
                        }
                        Some(".global" | ".shared" | ".const" | ".local") => {
                            let mut d = self.decl()?;
                            d.is_extern = is_extern;
                            m.vars.push(d);
                        }
                        _ => {
                            return Err(self.err(
                                self.span(),
                                format!(
                                    "unexpected {} at the top level of a PTX module (expected .entry, .func, a variable or a directive)",
                                    self.describe()
                                ),
                            ))
                        }
                    }
                }
            }
        }
        Ok(m)
    }

    /// `.entry NAME (params) directives* { body }` or `.func [(rets)] NAME [(params)] { body } | ;`.
    fn func(&mut self, entry: bool) -> R<Func> {
        self.i += 1;
        let mut rets = Vec::new();
        if !entry && self.is_p('(') {
            rets = self.param_list()?;
        }
        let (name, span) = self.expect_word(if entry { "the kernel's name" } else { "the function's name" })?;
        let params = if self.is_p('(') { self.param_list()? } else { Vec::new() };
        // Performance directives (`.maxntid 256, 1, 1`, `.reqntid`, `.minnctapersm`, `.noreturn`, ...).
        while let Some(T::Word(w)) = self.peek() {
            if !w.starts_with('.') {
                break;
            }
            self.i += 1;
            while matches!(self.peek(), Some(T::Int(_)) | Some(T::P(','))) {
                self.i += 1;
            }
        }
        let body = if self.eat_p(';') {
            None
        } else if self.is_p('{') {
            let open = self.span();
            self.i += 1;
            let mut stmts = Vec::new();
            self.block(&mut stmts, open, 0)?;
            Some(stmts)
        } else {
            return Err(
                self.err(self.span(), format!("expected `{{` to open the body of {name}, found {}", self.describe()))
            );
        };
        Ok(Func { name, entry, params, rets, body, span })
    }

    /// `( .param .u64 a, .param .align 8 .b8 s[16] )`.
    fn param_list(&mut self) -> R<Vec<Decl>> {
        self.expect_p('(', "to open the parameter list")?;
        let mut out = Vec::new();
        if self.eat_p(')') {
            return Ok(out);
        }
        loop {
            let sp = self.span();
            if self.word() != Some(".param") && self.word() != Some(".reg") {
                return Err(
                    self.err(sp, format!("expected a parameter (`.param .u64 name`), found {}", self.describe()))
                );
            }
            out.push(self.decl_body(&[',', ')'])?);
            if self.eat_p(',') {
                continue;
            }
            self.expect_p(')', "to close the parameter list")?;
            return Ok(out);
        }
    }

    /// A declaration ending in `;`.
    fn decl(&mut self) -> R<Decl> {
        let d = self.decl_body(&[';'])?;
        self.expect_p(';', "after the declaration")?;
        Ok(d)
    }

    /// `.space [.align N] [.ptr ...] [.v4] .type name[<N>|[N]...] [= init], ...` up to one of `stop` (not eaten).
    fn decl_body(&mut self, stop: &[char]) -> R<Decl> {
        let start = self.span();
        let (sw, ssp) = self.expect_word("a state space")?;
        let space = match sw.as_str() {
            ".reg" => Space::Reg,
            ".global" => Space::Global,
            ".shared" => Space::Shared,
            ".local" => Space::Local,
            ".const" => Space::Const,
            ".param" => Space::Param,
            s if s.starts_with(".shared::") => Space::Shared,
            _ => {
                return Err(self
                    .err(ssp, format!("`{sw}` is not a state space (.reg, .global, .shared, .local, .const, .param)")))
            }
        };
        let mut d = Decl {
            space,
            is_extern: false,
            align: None,
            ty: String::new(),
            vec: 1,
            ptr: false,
            names: Vec::new(),
            span: start,
        };
        loop {
            let sp = self.span();
            match self.peek() {
                Some(T::Word(w)) if w.starts_with('.') => {
                    let w = w.clone();
                    self.i += 1;
                    match w.as_str() {
                        ".align" => d.align = Some(self.int("the alignment after .align")?),
                        ".ptr" => d.ptr = true,
                        ".v2" => d.vec = 2,
                        ".v4" => d.vec = 4,
                        ".v8" => d.vec = 8,
                        ".global" | ".shared" | ".local" | ".const" => {}
                        t if type_bits(&t[1..]).is_some() => d.ty = t[1..].to_string(),
                        // `.attribute(.managed)`, `.texref` and other qualifiers: skipped with their arguments.
                        _ => {
                            if self.is_p('(') {
                                while !self.eat_p(')') && self.peek().is_some() {
                                    self.i += 1;
                                }
                            }
                        }
                    }
                    let _ = sp;
                }
                Some(T::Word(_)) => break,
                _ => {
                    return Err(self.err(sp, format!("expected a name in this declaration, found {}", self.describe())))
                }
            }
        }
        loop {
            let (name, span) = self.expect_word("a name")?;
            let mut dec = Declared { name, range: None, elems: None, span };
            if self.eat_p('<') {
                let n = self.int("a register count")?;
                self.expect_p('>', "after the register count")?;
                if n > 1 << 20 {
                    return Err(self.err(span, format!("{n} registers is more than warpscope takes (at most 1048576)")));
                }
                dec.range = Some(n as u32);
            }
            while self.eat_p('[') {
                let n = if self.is_p(']') { 0 } else { self.int("an array size")? };
                self.expect_p(']', "after the array size")?;
                let e = dec.elems.unwrap_or(1).checked_mul(n).filter(|&e| e <= 1 << 40);
                dec.elems = Some(e.ok_or_else(|| self.err(span, "this array is larger than warpscope takes (1 TB)"))?);
            }
            d.names.push(dec);
            if self.eat_p('=') {
                // An initialiser: skipped to the end of the declaration.
                let mut depth = 0;
                while let Some(t) = self.peek() {
                    match t {
                        T::P('{') => depth += 1,
                        T::P('}') => depth -= 1,
                        T::P(c) if depth == 0 && (stop.contains(c) || *c == ',') => break,
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            if stop.contains(&',') || !self.is_p(',') {
                break;
            }
            self.i += 1;
        }
        if d.ty.is_empty() {
            return Err(self.err(start, "this declaration has no type (such as .b32, .u64, .f32, .pred)"));
        }
        Ok(d)
    }

    /// Statements up to the `}` that closes the block opened at `open`.
    fn block(&mut self, out: &mut Vec<Stmt>, open: Span, depth: usize) -> R<()> {
        if depth > MAX_DEPTH {
            return Err(self.err(open, format!("blocks nest more than {MAX_DEPTH} deep")));
        }
        loop {
            let sp = self.span();
            match self.peek() {
                None => return Err(self.err(open, "this `{` is never closed")),
                Some(T::P('}')) => {
                    self.i += 1;
                    return Ok(());
                }
                Some(T::P('{')) => {
                    self.i += 1;
                    self.block(out, sp, depth + 1)?;
                }
                Some(T::P(';')) => self.i += 1,
                Some(T::Word(w)) if w.starts_with('.') => match w.as_str() {
                    ".loc" => self.loc_directive(),
                    ".file" => self.skip_line(),
                    ".pragma" | ".maxnreg" | ".maxntid" | ".reqntid" | ".minnctapersm" => self.skip_statement()?,
                    ".reg" | ".local" | ".shared" | ".param" | ".const" | ".global" => {
                        out.push(Stmt::Decl(self.decl()?))
                    }
                    w if w.starts_with(".shared::") => out.push(Stmt::Decl(self.decl()?)),
                    _ => {
                        return Err(self.err(sp, format!("`{w}` is not a directive warpscope knows inside a function")))
                    }
                },
                Some(T::Word(w)) if self.toks.get(self.i + 1).is_some_and(|t| t.t == T::P(':')) => {
                    out.push(Stmt::Label(w.clone(), sp));
                    self.i += 2;
                }
                Some(T::Word(_)) | Some(T::P('@')) => out.push(Stmt::Inst(self.inst()?)),
                _ => return Err(self.err(sp, format!("expected an instruction, found {}", self.describe()))),
            }
        }
    }

    fn inst(&mut self) -> R<Inst> {
        let start = self.span();
        let line = self.line();
        let mut guard = None;
        if self.eat_p('@') {
            let neg = self.eat_p('!');
            let (p, _) = self.expect_word("a predicate after `@`")?;
            guard = Some((p, neg));
        }
        let (op, op_span) = self.expect_word("an instruction")?;
        let parts: Vec<String> = op.split('.').map(str::to_string).collect();
        let mut ops = Vec::new();
        if !self.is_p(';') {
            loop {
                let sp = self.span();
                let o = self.operand()?;
                let end = self.toks.get(self.i.saturating_sub(1)).map_or(sp.end, |t| t.span.end);
                ops.push((o, Span { start: sp.start, end }));
                if !self.eat_p(',') {
                    break;
                }
            }
        }
        let end = self.expect_p(';', "at the end of the instruction")?;
        Ok(Inst { guard, parts, ops, span: Span { start: start.start, end: end.start }, op_span, line, loc: self.loc })
    }

    fn operand(&mut self) -> R<Opnd> {
        let sp = self.span();
        match self.peek().cloned() {
            Some(T::P('[')) => {
                self.i += 1;
                let mut base = None;
                let mut off: i64 = 0;
                if let Some(T::Word(w)) = self.peek() {
                    base = Some(w.clone());
                    self.i += 1;
                }
                loop {
                    let neg = if self.eat_p('+') {
                        self.eat_p('-')
                    } else if self.eat_p('-') {
                        true
                    } else if base.is_none() && matches!(self.peek(), Some(T::Int(_))) && off == 0 {
                        false
                    } else {
                        break;
                    };
                    let v = self.int("a byte offset")? as i64;
                    off = off.wrapping_add(if neg { v.wrapping_neg() } else { v });
                }
                // `[tensorMap, {x, y}]`: a tensor copy's coordinates (cp.async.bulk.tensor, which the lowering
                // refuses with its own message).
                if self.eat_p(',') {
                    self.operand()?;
                }
                self.expect_p(']', "to close the address")?;
                Ok(Opnd::Addr { base, off })
            }
            Some(T::P('{')) => {
                self.i += 1;
                let mut v = Vec::new();
                loop {
                    v.push(self.operand()?);
                    if !self.eat_p(',') {
                        break;
                    }
                }
                self.expect_p('}', "to close the vector")?;
                Ok(Opnd::Vec(v))
            }
            Some(T::P('(')) => {
                self.i += 1;
                let mut v = Vec::new();
                if !self.is_p(')') {
                    loop {
                        v.push(self.operand()?);
                        if !self.eat_p(',') {
                            break;
                        }
                    }
                }
                self.expect_p(')', "to close the list")?;
                Ok(Opnd::List(v))
            }
            Some(T::P('!')) => {
                self.i += 1;
                let (name, _) = self.expect_word("a predicate after `!`")?;
                Ok(Opnd::Name { name, neg: true })
            }
            Some(T::P('-')) => {
                self.i += 1;
                match self.peek().cloned() {
                    Some(T::Int(v)) => {
                        self.i += 1;
                        Ok(Opnd::Imm(v.wrapping_neg()))
                    }
                    Some(T::Float { bits, f32 }) => {
                        self.i += 1;
                        Ok(Opnd::Float(if f32 { bits ^ 0x8000_0000 } else { bits ^ (1 << 63) }, f32))
                    }
                    _ => Err(self.err(sp, format!("expected a number after `-`, found {}", self.describe()))),
                }
            }
            Some(T::Int(v)) => {
                self.i += 1;
                Ok(Opnd::Imm(v))
            }
            Some(T::Float { bits, f32 }) => {
                self.i += 1;
                Ok(Opnd::Float(bits, f32))
            }
            Some(T::Word(w)) => {
                self.i += 1;
                if w == "_" {
                    return Ok(Opnd::Sink);
                }
                if self.eat_p('|') {
                    let (q, _) = self.expect_word("a second predicate after `|`")?;
                    return Ok(Opnd::Pair(w, q));
                }
                if self.is_p('+')
                    || (self.is_p('-') && matches!(self.toks.get(self.i + 1).map(|t| &t.t), Some(T::Int(_))))
                {
                    let neg = self.eat_p('-') || {
                        self.i += 1;
                        self.eat_p('-')
                    };
                    let v = self.int("a byte offset")? as i64;
                    return Ok(Opnd::NameOff(w, if neg { v.wrapping_neg() } else { v }));
                }
                Ok(Opnd::Name { name: w, neg: false })
            }
            _ => Err(self.err(sp, format!("expected an operand, found {}", self.describe()))),
        }
    }
}

/// Parses a PTX module.
pub fn parse(src: &str) -> R<Module> {
    let toks = lex(src)?;
    let mut p = Parser { src, toks, i: 0, loc: None };
    let m = p.module()?;
    if !m.funcs.iter().any(|f| f.entry && f.body.is_some()) {
        return Err(InputError::at(
            src,
            Span { start: 0, end: 1 },
            "no kernel in this PTX: paste a module with an `.entry` (what `nvcc -ptx` or `clang --cuda-device-only -S` writes)",
        ));
    }
    Ok(m)
}
