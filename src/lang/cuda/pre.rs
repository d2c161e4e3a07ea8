//! The preprocessor a CUDA file goes through before it is parsed: `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`/
//! `#endif` keep or drop lines, `#define` with and without arguments, `#undef`; `#include`, `#pragma` and
//! `#line` are read past.
//!
//! Every macro is expanded here, as C does it: its tokens replace its use, so `#define W 2 - 1` makes
//! `tid * W` mean `tid * 2 - 1`, names in a macro are looked up where it is used, and the definition in
//! force at the use is the one that counts. `--set TILE_DIM=64` gives an object-like macro another value.
//! Expanded tokens point at the macro's use, so an error inside one names the line that used it.
//!
//! Its functions are `#[cold]`: they run once per analysis, and LLVM then keeps them compact instead of
//! inlining into them, which keeps the page's analysis worker within its 300 KB budget (docs/performance.md,
//! the size budgets) while the executor stays optimised for speed.

use super::super::cexpr::{BinOp, Ex, Parser, UnOp, E};
use super::super::lex::{lex, Tok, Token};
use super::super::{InputError, Span};
use std::collections::{HashMap, HashSet};

/// Expansion stops past this many tokens (a macro that doubles itself a few dozen times would otherwise
/// fill memory).
pub const MAX_EXPANDED_TOKENS: usize = 2_000_000;
const MAX_EXPANSION_DEPTH: u32 = 64;

#[derive(Clone, Debug)]
struct Macro {
    params: Option<Vec<String>>,
    body: Vec<Token>,
    /// Expanded here (else kept as a `#define` line for the parser, and used only by `#if`).
    expand: bool,
    /// The last parameter takes the remaining arguments, commas included (`...` / `__VA_ARGS__`).
    variadic: bool,
}

/// The macros a file defines, and the values the compiler predefines.
#[derive(Default)]
pub struct Macros {
    map: HashMap<String, Macro>,
}

/// The error a [`Tok::Bad`] among `toks` is, if there is one: text that is no token is an error where the
/// preprocessor does not skip it.
fn no_bad(src: &str, toks: &[Token]) -> Result<(), InputError> {
    match toks.iter().find_map(|t| if let Tok::Bad(m) = &t.tok { Some((m, t.span)) } else { None }) {
        Some((m, span)) => Err(InputError::at(src, span, m.clone())),
        None => Ok(()),
    }
}

/// The directive's name and the tokens after it, with spans in `src`.
#[cold]
fn directive(src: &str, span: Span) -> Result<(String, Vec<Token>), InputError> {
    let text = &src[span.start + 1..span.end];
    // A `\` before a newline joins the lines: blank both out so that offsets stay offsets into `src`.
    let joined: String = text
        .char_indices()
        .map(
            |(i, c)| {
                if c == '\\' && text[i + 1..].starts_with(['\n', '\r']) || c == '\n' || c == '\r' {
                    ' '
                } else {
                    c
                }
            },
        )
        .collect();
    let mut toks = super::super::lex::lex_skippable(&joined).map_err(|e| InputError::at(src, span, e.message))?;
    toks.pop(); // End
    for t in &mut toks {
        t.span = Span { start: t.span.start + span.start + 1, end: t.span.end + span.start + 1 };
    }
    let mut toks = literal_types(src, toks);
    let name = match toks.first().map(|t| &t.tok) {
        Some(Tok::Ident(w)) => w.clone(),
        None => String::new(),
        Some(_) => return Err(InputError::at(src, span, "expected a directive name after `#`")),
    };
    if !toks.is_empty() {
        toks.remove(0);
    }
    Ok((name, toks))
}

fn is_keyword(w: &str) -> bool {
    super::super::cexpr::BUILTIN_TYPES.contains(&w)
        || matches!(
            w,
            "__shared__"
                | "__device__"
                | "__global__"
                | "__host__"
                | "__constant__"
                | "__forceinline__"
                | "__noinline__"
                | "inline"
                | "static"
                | "extern"
                | "volatile"
                | "__restrict__"
                | "return"
                | "if"
                | "for"
                | "while"
                | "template"
                | "typename"
                | "class"
        )
}

/// Gives integer literals C's types (C11 6.4.4.1): a `u` suffix makes one unsigned, `l`/`ll` long long,
/// and a hex or octal literal too big for `int` is `unsigned int` when it fits in 32 bits. The lexer keeps
/// only values, so each such literal becomes a cast of its value (`8u` is `(unsigned int)8`); decimal
/// literals without a suffix keep their value's type (`int`, else `long long`).
fn literal_types(src: &str, toks: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(toks.len());
    for t in toks {
        let Tok::Int(v) = t.tok else {
            out.push(t);
            continue;
        };
        let text = src.get(t.span.start..t.span.end).unwrap_or("").to_ascii_lowercase();
        let digits = text.trim_end_matches(['u', 'l']);
        let suffix = &text[digits.len()..];
        let unsigned = suffix.contains('u');
        let long = suffix.contains('l');
        let radix_fits_unsigned =
            (digits.starts_with("0x") || digits.starts_with("0b") || (digits.len() > 1 && digits.starts_with('0')))
                && i32::try_from(v).is_err()
                && u32::try_from(v).is_ok();
        let ty: &[&str] = match (unsigned, long) {
            (true, true) => &["unsigned", "long", "long"],
            (true, false) if u32::try_from(v).is_ok() => &["unsigned", "int"],
            (true, false) => &["unsigned", "long", "long"],
            (false, true) => &["long", "long"],
            (false, false) if radix_fits_unsigned => &["unsigned", "int"],
            (false, false) => &[],
        };
        if !ty.is_empty() {
            let sp = t.span;
            out.push(Token { tok: Tok::Punct("("), span: sp });
            out.extend(ty.iter().map(|w| Token { tok: Tok::Ident(w.to_string()), span: sp }));
            out.push(Token { tok: Tok::Punct(")"), span: sp });
        }
        out.push(t);
    }
    out
}

/// Floating-point constants every CUDA file can name (<math.h>, <cfloat>, math_constants.h).
const FLOAT_CONSTANTS: [&str; 30] = [
    "INFINITY",
    "NAN",
    "HUGE_VAL",
    "HUGE_VALF",
    "FLT_MAX",
    "FLT_MIN",
    "FLT_EPSILON",
    "FLT_TRUE_MIN",
    "DBL_MAX",
    "DBL_MIN",
    "DBL_EPSILON",
    "M_PI",
    "M_PI_2",
    "M_PI_4",
    "M_1_PI",
    "M_2_PI",
    "M_2_SQRTPI",
    "M_E",
    "M_LN2",
    "M_LN10",
    "M_LOG2E",
    "M_LOG10E",
    "M_SQRT2",
    "M_SQRT1_2",
    "CUDART_INF_F",
    "CUDART_NAN_F",
    "CUDART_PI_F",
    "CUDART_INF",
    "CUDART_NAN",
    "CUDART_PI",
];

/// <climits>: (name, value, unsigned int).
const INT_LIMITS: [(&str, i128, bool); 10] = [
    ("CHAR_BIT", 8, false),
    ("SCHAR_MAX", 127, false),
    ("SHRT_MAX", 32767, false),
    ("USHRT_MAX", 65535, false),
    ("INT_MAX", 2_147_483_647, false),
    ("INT_MIN", -2_147_483_648, false),
    ("UINT_MAX", 4_294_967_295, true),
    ("LLONG_MAX", 9_223_372_036_854_775_807, false),
    ("LLONG_MIN", -9_223_372_036_854_775_808, false),
    ("ULLONG_MAX", 18_446_744_073_709_551_615, false),
];

/// Runs the preprocessor over `toks` (all of `src`). `predefined` are the compiler's macros
/// (`__CUDA_ARCH__`).
#[cold]
pub fn preprocess(
    src: &str,
    toks: Vec<Token>,
    predefined: &[(&str, i128)],
    overrides: &std::collections::BTreeMap<String, i128>,
    headers: &[(String, Vec<Token>)],
) -> Result<(Vec<Token>, Macros), InputError> {
    let mut toks = literal_types(src, toks);
    // Headers already included (each once: include guards and `#pragma once` make that so in practice).
    let mut included = vec![false; headers.len()];
    let mut macros = Macros::default();
    for (name, v) in predefined {
        let t = Token { tok: Tok::Int(*v), span: Span { start: 0, end: 1 } };
        macros.map.insert(name.to_string(), Macro { params: None, body: vec![t], expand: true, variadic: false });
    }
    // The floating-point constants of <math.h>, <cfloat> and CUDA's math_constants.h, which nvcc's
    // cuda_runtime.h brings into every file: values warpscope does not follow (a float literal each).
    for name in FLOAT_CONSTANTS {
        let t = Token { tok: Tok::Float, span: Span { start: 0, end: 1 } };
        macros.map.insert(name.to_string(), Macro { params: None, body: vec![t], expand: true, variadic: false });
    }
    // <climits>' limits, as (unsigned) casts where C gives them an unsigned type.
    for (name, v, unsigned) in INT_LIMITS {
        let sp = Span { start: 0, end: 1 };
        let mut body = Vec::new();
        if unsigned {
            body.extend(["(", "unsigned", ")"].map(|w| Token {
                tok: if w == "unsigned" { Tok::Ident(w.into()) } else { Tok::Punct(if w == "(" { "(" } else { ")" }) },
                span: sp,
            }));
        }
        if v < 0 {
            body.push(Token { tok: Tok::Punct("("), span: sp });
            body.push(Token { tok: Tok::Punct("-"), span: sp });
            body.push(Token { tok: Tok::Int(-v - 1), span: sp });
            body.push(Token { tok: Tok::Punct("-"), span: sp });
            body.push(Token { tok: Tok::Int(1), span: sp });
            body.push(Token { tok: Tok::Punct(")"), span: sp });
        } else {
            body.push(Token { tok: Tok::Int(v), span: sp });
        }
        macros.map.insert(name.to_string(), Macro { params: None, body, expand: true, variadic: false });
    }
    // (this branch is live, some branch of this #if was taken, the enclosing region is live, #if's span)
    let mut conds: Vec<(bool, bool, bool, Span)> = Vec::new();
    let live = |c: &[(bool, bool, bool, Span)]| c.last().is_none_or(|c| c.0 && c.2);
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if let Tok::Hash(_) = t.tok {
            let span = t.span;
            let (name, rest) = directive(src, span)?;
            let on = live(&conds);
            match name.as_str() {
                "if" | "ifdef" | "ifndef" => {
                    let v = if !on {
                        false
                    } else if name == "if" {
                        condition(src, &rest, &macros, span)?
                    } else {
                        let Some(Token { tok: Tok::Ident(m), .. }) = rest.first() else {
                            return Err(InputError::at(src, span, format!("#{name} needs a macro name")));
                        };
                        macros.map.contains_key(m) == (name == "ifdef")
                    };
                    conds.push((v, v, on, span));
                }
                "elif" | "else" => {
                    let Some(&(_, taken, outer, open)) = conds.last() else {
                        return Err(InputError::at(src, span, format!("#{name} without #if")));
                    };
                    let v = !taken && outer && (name == "else" || condition(src, &rest, &macros, span)?);
                    *conds.last_mut().expect("checked") = (v, taken || v, outer, open);
                }
                "endif" => {
                    if conds.pop().is_none() {
                        return Err(InputError::at(src, span, "#endif without #if"));
                    }
                }
                _ if !on => {}
                "define" => {
                    no_bad(src, &rest)?;
                    let Some(Token { tok: Tok::Ident(m), span: nspan }) = rest.first().cloned() else {
                        return Err(InputError::at(src, span, "expected a name after #define"));
                    };
                    let function_like =
                        matches!(rest.get(1), Some(Token { tok: Tok::Punct("("), span: s }) if s.start == nspan.end);
                    let mac = if function_like {
                        let mut params = Vec::new();
                        let mut variadic = false;
                        let mut k = 2;
                        let dot = |k: usize| matches!(rest.get(k).map(|t| &t.tok), Some(Tok::Punct(".")));
                        loop {
                            match rest.get(k).map(|t| &t.tok) {
                                Some(Tok::Punct(")")) => break,
                                // `...` (its arguments are `__VA_ARGS__`) or GNU's `args...` (named).
                                Some(Tok::Punct(".")) if !variadic && dot(k + 1) && dot(k + 2) => {
                                    params.push("__VA_ARGS__".to_string());
                                    variadic = true;
                                    k += 2;
                                }
                                Some(Tok::Ident(p)) if !variadic && dot(k + 1) && dot(k + 2) && dot(k + 3) => {
                                    params.push(p.clone());
                                    variadic = true;
                                    k += 3;
                                }
                                Some(Tok::Ident(p)) if !variadic => params.push(p.clone()),
                                Some(Tok::Punct(",")) if !variadic => {}
                                _ => {
                                    let at = rest.get(k).map_or(span, |t| t.span);
                                    return Err(InputError::at(
                                        src,
                                        at,
                                        "expected a parameter name, `...` or `)` in the macro's parameter list",
                                    ));
                                }
                            }
                            k += 1;
                        }
                        Macro { params: Some(params), body: rest[k + 1..].to_vec(), expand: true, variadic }
                    } else {
                        // `--set NAME=VALUE` gives an object-like macro another value.
                        let body = match overrides.get(&m) {
                            Some(v) => vec![Token { tok: Tok::Int(*v), span: nspan }],
                            None => rest[1..].to_vec(),
                        };
                        Macro { params: None, body, expand: true, variadic: false }
                    };
                    macros.map.insert(m, mac);
                }
                "undef" => {
                    if let Some(Token { tok: Tok::Ident(m), .. }) = rest.first() {
                        macros.map.remove(m);
                    }
                }
                "include" => {
                    // `#include "common.h"` or `<common.h>`: a header given with the file is read here; any
                    // other (the CUDA toolkit's, the C library's) is what nvcc's own headers provide.
                    let name: String = match rest.first().map(|t| &t.tok) {
                        Some(Tok::Str(n)) => n.to_string(),
                        _ => {
                            let end = rest.iter().position(|t| matches!(t.tok, Tok::Punct(">"))).unwrap_or(0);
                            src.get(rest.first().map_or(0, |t| t.span.end)..rest.get(end).map_or(0, |t| t.span.start))
                                .unwrap_or("")
                                .to_string()
                        }
                    };
                    let base = name.rsplit('/').next().unwrap_or(&name);
                    let found = headers.iter().position(|(h, _)| *h == name || h.rsplit('/').next() == Some(base));
                    if let Some(k) = found.filter(|&k| !included[k]) {
                        included[k] = true;
                        let body = literal_types(src, headers[k].1.clone());
                        toks.splice(i + 1..i + 1, body);
                    }
                }
                "pragma" | "line" | "warning" | "" => {}
                "error" => {
                    let text = src[span.start..span.end].trim();
                    return Err(InputError::at(src, span, format!("the file stops itself here: {text}")));
                }
                other => {
                    return Err(InputError::at(
                        src,
                        span,
                        format!("unknown preprocessor directive `#{other}` (known: #define, #undef, #if, #ifdef, #ifndef, #elif, #else, #endif, #include, #pragma)"),
                    ))
                }
            }
            i += 1;
            continue;
        }
        if !live(&conds) || matches!(t.tok, Tok::End) {
            if matches!(t.tok, Tok::End) {
                out.push(t.clone());
            }
            i += 1;
            continue;
        }
        no_bad(src, std::slice::from_ref(t))?;
        // A macro use: expand it (with its arguments, if it takes them).
        if let Tok::Ident(name) = &t.tok {
            if let Some(m) = macros.map.get(name).filter(|m| m.expand) {
                let (used, next) = invocation(src, &toks, i, m)?;
                macros.expand_into(src, &toks[i..next], &mut HashSet::new(), &mut out, 0, false)?;
                let _ = used;
                i = next;
                continue;
            }
        }
        out.push(t.clone());
        i += 1;
    }
    if let Some(&(.., open)) = conds.last() {
        return Err(InputError::at(src, open, "this #if has no #endif"));
    }
    Ok((out, macros))
}

/// The tokens of a macro use starting at `toks[i]`: `(arguments, index after the use)`.
#[cold]
fn invocation(src: &str, toks: &[Token], i: usize, m: &Macro) -> Result<(usize, usize), InputError> {
    if m.params.is_none() || !matches!(toks.get(i + 1).map(|t| &t.tok), Some(Tok::Punct("("))) {
        return Ok((1, i + 1));
    }
    let mut depth = 0;
    for (k, t) in toks.iter().enumerate().skip(i + 1) {
        match t.tok {
            Tok::Punct("(") => depth += 1,
            Tok::Punct(")") => {
                depth -= 1;
                if depth == 0 {
                    return Ok((k + 1 - i, k + 1));
                }
            }
            Tok::End | Tok::Hash(_) => break,
            _ => {}
        }
    }
    Err(InputError::at(src, toks[i].span, "this macro's arguments have no closing `)`"))
}

impl Macros {
    /// Expands the macros in `toks` (a whole use, or any run of tokens) into `out`. `all`: also the
    /// expression macros the parser keeps (for `#if` and host code).
    #[cold]
    fn expand_into(
        &self,
        src: &str,
        toks: &[Token],
        off: &mut HashSet<String>,
        out: &mut Vec<Token>,
        depth: u32,
        all: bool,
    ) -> Result<(), InputError> {
        let at = toks.first().map_or(Span { start: 0, end: 1 }, |t| t.span);
        if depth > MAX_EXPANSION_DEPTH {
            return Err(InputError::at(src, at, format!("macros nested more than {MAX_EXPANSION_DEPTH} deep")));
        }
        let mut i = 0;
        while i < toks.len() {
            if out.len() > MAX_EXPANDED_TOKENS {
                return Err(InputError::at(src, at, format!("macro expansion passes {MAX_EXPANDED_TOKENS} tokens")));
            }
            let t = &toks[i];
            let Tok::Ident(name) = &t.tok else {
                out.push(t.clone());
                i += 1;
                continue;
            };
            let Some(m) = self.map.get(name).filter(|m| (m.expand || all) && !off.contains(name)) else {
                out.push(t.clone());
                i += 1;
                continue;
            };
            let (_, next) = invocation(src, toks, i, m)?;
            let whole = Span { start: t.span.start, end: toks[next - 1].span.end };
            let mut body: Vec<Token> = Vec::new();
            match &m.params {
                None => body.extend(m.body.iter().map(|b| Token { tok: b.tok.clone(), span: whole })),
                Some(_) if next == i + 1 => {
                    // A function-like macro's name without `(` is just a name.
                    out.push(t.clone());
                    i += 1;
                    continue;
                }
                Some(params) => {
                    let mut args = split_args(&toks[i + 2..next - 1]);
                    // A variadic macro's last parameter takes the rest, with their commas; it may be empty.
                    if m.variadic && args.len() + 1 >= params.len() {
                        if args.len() + 1 == params.len() {
                            args.push(Vec::new());
                        }
                        let rest = args.split_off(params.len() - 1);
                        let mut joined = Vec::new();
                        for (n, a) in rest.into_iter().enumerate() {
                            if n > 0 {
                                joined.push(Token { tok: Tok::Punct(","), span: whole });
                            }
                            joined.extend(a);
                        }
                        args.push(joined);
                    }
                    // Arguments are expanded before they replace the parameters (C11 6.10.3.1), except where
                    // the body stringifies or pastes them.
                    if !m.body.iter().any(|t| matches!(t.tok, Tok::Punct("#"))) {
                        for a in &mut args {
                            let mut e = Vec::new();
                            self.expand_into(src, a, off, &mut e, depth + 1, all)?;
                            *a = e;
                        }
                    }
                    if args.len() != params.len() && !(params.is_empty() && args.len() == 1 && args[0].is_empty()) {
                        return Err(InputError::at(
                            src,
                            whole,
                            format!("macro `{name}` takes {} argument(s), found {}", params.len(), args.len()),
                        ));
                    }
                    let mut k = 0;
                    while k < m.body.len() {
                        let b = &m.body[k];
                        // `##` is pasted after substitution.
                        if matches!(b.tok, Tok::Punct("#"))
                            && matches!(m.body.get(k + 1).map(|t| &t.tok), Some(Tok::Punct("#")))
                        {
                            // GNU's `, ## __VA_ARGS__`: the comma goes when there are no variable arguments, and
                            // nothing is pasted when there are.
                            let variadic_next = m.variadic
                                && matches!(m.body.get(k + 2).map(|t| &t.tok), Some(Tok::Ident(p)) if params.last() == Some(p));
                            if variadic_next && matches!(body.last().map(|t| &t.tok), Some(Tok::Punct(","))) {
                                if args.last().is_none_or(Vec::is_empty) {
                                    body.pop();
                                }
                                k += 2;
                                continue;
                            }
                            body.push(Token { tok: Tok::Punct("#"), span: whole });
                            body.push(Token { tok: Tok::Punct("#"), span: whole });
                            k += 2;
                            continue;
                        }
                        // `#x`: the argument as a string (only printf would read it).
                        if matches!(b.tok, Tok::Punct("#")) {
                            if let Some(Token { tok: Tok::Ident(p), .. }) = m.body.get(k + 1) {
                                if let Some(j) = params.iter().position(|q| q == p) {
                                    let text = match args.get(j).map(Vec::as_slice) {
                                        Some([first, .., last]) => {
                                            src.get(first.span.start..last.span.end).unwrap_or("")
                                        }
                                        Some([one]) => src.get(one.span.start..one.span.end).unwrap_or(""),
                                        _ => "",
                                    };
                                    body.push(Token { tok: Tok::Str(text.into()), span: whole });
                                    k += 2;
                                    continue;
                                }
                            }
                        }
                        match &b.tok {
                            Tok::Ident(p) if params.contains(p) => {
                                let a = &args[params.iter().position(|q| q == p).expect("a parameter")];
                                body.extend(a.iter().cloned());
                            }
                            tok => body.push(Token { tok: tok.clone(), span: whole }),
                        }
                        k += 1;
                    }
                    body = paste(src, body)?;
                }
            }
            off.insert(name.clone());
            let r = self.expand_into(src, &body, off, out, depth + 1, all);
            off.remove(name);
            r?;
            i = next;
        }
        Ok(())
    }
}

/// Splits a macro's argument tokens on the commas outside parentheses.
#[cold]
fn split_args(toks: &[Token]) -> Vec<Vec<Token>> {
    let mut args = vec![Vec::new()];
    let mut depth = 0;
    for t in toks {
        match t.tok {
            Tok::Punct("(" | "[" | "{") => depth += 1,
            Tok::Punct(")" | "]" | "}") => depth -= 1,
            Tok::Punct(",") if depth == 0 => {
                args.push(Vec::new());
                continue;
            }
            _ => {}
        }
        args.last_mut().expect("one").push(t.clone());
    }
    args
}

/// `a ## b`: the two tokens' text joined and read again as one token.
#[cold]
fn paste(src: &str, body: Vec<Token>) -> Result<Vec<Token>, InputError> {
    if !body.iter().any(|t| matches!(t.tok, Tok::Punct("#"))) {
        return Ok(body);
    }
    let text = |t: &Token| match &t.tok {
        Tok::Ident(w) => Some(w.clone()),
        Tok::Int(n) => Some(n.to_string()),
        _ => None,
    };
    let mut out: Vec<Token> = Vec::new();
    let mut k = 0;
    while k < body.len() {
        let is_paste =
            matches!(body[k].tok, Tok::Punct("#")) && matches!(body.get(k + 1).map(|t| &t.tok), Some(Tok::Punct("#")));
        if is_paste {
            let (Some(a), Some(b)) = (out.pop(), body.get(k + 2)) else {
                return Err(InputError::at(src, body[k].span, "`##` needs a token on each side"));
            };
            let (Some(x), Some(y)) = (text(&a), text(b)) else {
                return Err(InputError::at(src, body[k].span, "`##` joins names and numbers only"));
            };
            let joined = format!("{x}{y}");
            let mut t =
                lex(&joined).map_err(|_| InputError::at(src, a.span, format!("`{joined}` is not one token")))?;
            t.pop();
            if t.len() != 1 {
                return Err(InputError::at(src, a.span, format!("`{joined}` is not one token")));
            }
            out.push(Token { tok: t.remove(0).tok, span: a.span });
            k += 3;
            continue;
        }
        out.push(body[k].clone());
        k += 1;
    }
    Ok(out)
}

/// The value of an `#if` condition.
#[cold]
fn condition(src: &str, rest: &[Token], macros: &Macros, span: Span) -> Result<bool, InputError> {
    no_bad(src, rest)?;
    // `defined X` and `defined(X)` first, before the names are expanded.
    let mut toks = Vec::new();
    let mut k = 0;
    while k < rest.len() {
        if matches!(&rest[k].tok, Tok::Ident(w) if w == "defined") {
            let (name, next) = match (rest.get(k + 1).map(|t| &t.tok), rest.get(k + 2).map(|t| &t.tok)) {
                (Some(Tok::Punct("(")), Some(Tok::Ident(n))) => (n.clone(), k + 4),
                (Some(Tok::Ident(n)), _) => (n.clone(), k + 2),
                _ => return Err(InputError::at(src, rest[k].span, "`defined` needs a macro name")),
            };
            toks.push(Token { tok: Tok::Int(i128::from(macros.map.contains_key(&name))), span: rest[k].span });
            k = next;
            continue;
        }
        toks.push(rest[k].clone());
        k += 1;
    }
    let mut expanded = Vec::new();
    macros.expand_into(src, &toks, &mut HashSet::new(), &mut expanded, 0, true)?;
    if expanded.is_empty() {
        return Err(InputError::at(src, span, "#if needs a condition"));
    }
    // Names left after expansion are 0 in `#if`, and `true` is 1 (C++).
    Ok(eval_tokens(src, expanded, &|w| Some(i128::from(w == "true")), true)? != 0)
}

/// Parses `toks` as one constant expression and evaluates it. Type words stay (they make casts); every
/// other name gets `ident`'s value, and a name it has none for makes the expression not constant.
#[cold]
fn eval_tokens(
    src: &str,
    mut toks: Vec<Token>,
    ident: &dyn Fn(&str) -> Option<i128>,
    pp: bool,
) -> Result<i128, InputError> {
    for t in &mut toks {
        if let Tok::Ident(w) = &t.tok {
            if !is_keyword(w) {
                let v = ident(w).ok_or_else(|| InputError::at(src, t.span, format!("`{w}` is not a constant")))?;
                t.tok = Tok::Int(v);
            }
        }
    }
    let end = toks.last().map_or(0, |t| t.span.end);
    toks.push(Token { tok: Tok::End, span: Span { start: end, end: end + 1 } });
    let mut p = Parser::new(src, toks);
    let e = p.ternary()?;
    if !matches!(p.peek(), Tok::End) {
        return Err(p.err(format!("unexpected {} in the constant expression", p.describe())));
    }
    let (v, t) = typed_eval(src, &e, &|_| None, pp)?;
    Ok(t.value(v))
}

/// An integer type of a constant expression: its width and signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct IntTy {
    bits: u32,
    signed: bool,
}

const INT: IntTy = IntTy { bits: 32, signed: true };

impl IntTy {
    /// The bits `v` has in this type (C's conversions: modulo 2^bits, then sign-extended for a signed type),
    /// as 64 bits.
    fn wrap(self, v: u64) -> u64 {
        let k = 64 - self.bits;
        if self.signed {
            (((v << k) as i64) >> k) as u64
        } else {
            (v << k) >> k
        }
    }

    /// The value of bits of this type.
    fn value(self, v: u64) -> i128 {
        if self.signed {
            i128::from(v as i64)
        } else {
            i128::from(v)
        }
    }

    /// The integer promotions (C11 6.3.1.1): types narrower than `int` compute as `int`.
    fn promoted(self) -> IntTy {
        if self.bits < 32 {
            INT
        } else {
            self
        }
    }

    /// The usual arithmetic conversions of two operands (C11 6.3.1.8).
    fn common(self, o: IntTy) -> IntTy {
        let (a, b) = (self.promoted(), o.promoted());
        if a.signed == b.signed {
            return IntTy { bits: a.bits.max(b.bits), signed: a.signed };
        }
        let (u, s) = if a.signed { (b, a) } else { (a, b) };
        if u.bits >= s.bits {
            u
        } else {
            s
        }
    }
}

/// The integer type a cast names (`unsigned int`, `size_t`, `long long`...), from the CUDA front end's own
/// table of scalar types; `None` for any other type. `bool` is 1 bit: a cast to it tests for zero.
fn int_type(name: &str) -> Option<IntTy> {
    let words: Vec<&str> = name.split_whitespace().filter(|w| !matches!(*w, "const" | "volatile")).collect();
    let name = words.join(" ");
    if name == "bool" {
        return Some(IntTy { bits: 1, signed: false });
    }
    match super::scalar(&name)? {
        super::Ty::Int { bytes, signed } => Some(IntTy { bits: bytes * 8, signed }),
        _ => None,
    }
}

/// The value of a constant integer expression; `names` gives the names it may use. Arithmetic follows C's
/// types: `(unsigned)-1` is 4294967295, `-1 > 0u` is true, `(unsigned char)300` is 44.
#[cold]
pub fn const_eval(src: &str, e: &Ex, names: &dyn Fn(&str) -> Option<i128>) -> Result<i128, InputError> {
    let (v, t) = typed_eval(src, e, names, false)?;
    Ok(t.value(v))
}

/// `const_eval`'s bits and type; in `#if` (`pp`) every signed type is `intmax_t` and every unsigned one
/// `uintmax_t` (C11 6.10.1), both 64 bits.
#[cold]
fn typed_eval(src: &str, e: &Ex, names: &dyn Fn(&str) -> Option<i128>, pp: bool) -> Result<(u64, IntTy), InputError> {
    let v = |x: &Ex| typed_eval(src, x, names, pp);
    let widen = |t: IntTy| IntTy { bits: if pp { 64 } else { t.bits }, ..t };
    // A literal or a name: `int` when it fits, else `long long`, else `unsigned long long`.
    let number = |n: i128| -> Result<(u64, IntTy), InputError> {
        let bits = if i32::try_from(n).is_ok() { 32 } else { 64 };
        let signed = i64::try_from(n).is_ok();
        if !signed && u64::try_from(n).is_err() {
            return Err(InputError::at(src, e.span, "this value does not fit in 64 bits"));
        }
        Ok((n as u64, widen(IntTy { bits, signed })))
    };
    let boolean = |b: bool| (u64::from(b), widen(INT));
    match &e.kind {
        E::Int(n) => number(*n),
        E::Name(n) => number(names(n).ok_or_else(|| InputError::at(src, e.span, format!("`{n}` is not a constant")))?),
        E::Unary(op, a) => {
            let (x, t) = v(a)?;
            let t = widen(t.promoted());
            Ok(match op {
                UnOp::Neg => (t.wrap(x.wrapping_neg()), t),
                UnOp::Plus => (t.wrap(x), t),
                UnOp::Not => (t.wrap(!x), t),
                UnOp::LNot => boolean(x == 0),
                _ => return Err(InputError::at(src, e.span, "not a constant integer expression")),
            })
        }
        // `&&` stops at false and `||` at true (C11 6.5.13-14): the other operand is not evaluated.
        E::Binary(op @ (BinOp::LAnd | BinOp::LOr), a, b) => {
            let x = v(a)?.0 != 0;
            Ok(boolean(if x == (*op == BinOp::LOr) { x } else { v(b)?.0 != 0 }))
        }
        E::Binary(op, a, b) => {
            let ((x, tx), (y, ty)) = (v(a)?, v(b)?);
            let shift = matches!(op, BinOp::Shl | BinOp::Shr);
            // A shift has its left operand's (promoted) type; other operators convert both to a common one.
            let t = widen(if shift { tx.promoted() } else { tx.common(ty) });
            let (x, y) = (t.wrap(x), if shift { y } else { t.wrap(y) });
            let (sx, sy) = (x as i64, y as i64);
            let msg = match op {
                BinOp::Div | BinOp::Rem if y == 0 => Some(format!("division by zero in `{}`", op.symbol())),
                BinOp::Shl | BinOp::Shr if ty.value(y) < 0 || y >= u64::from(t.bits) => Some(format!(
                    "shift by {}: the shift amount must be 0..{} for a {}-bit value",
                    ty.value(y),
                    t.bits - 1,
                    t.bits
                )),
                _ => None,
            };
            if let Some(m) = msg {
                return Err(InputError::at(src, e.op_span, m));
            }
            let less = if t.signed { sx < sy } else { x < y };
            let r = match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                // Division truncates toward zero; the remainder has the dividend's sign (C11 6.5.5).
                BinOp::Div if t.signed => sx.wrapping_div(sy) as u64,
                BinOp::Rem if t.signed => sx.wrapping_rem(sy) as u64,
                BinOp::Div => x / y,
                BinOp::Rem => x % y,
                BinOp::Shl => x << y,
                BinOp::Shr if t.signed => (sx >> y) as u64,
                BinOp::Shr => x >> y,
                BinOp::And => x & y,
                BinOp::Or => x | y,
                BinOp::Xor => x ^ y,
                BinOp::Lt => return Ok(boolean(less)),
                BinOp::Le => return Ok(boolean(less || x == y)),
                BinOp::Gt => return Ok(boolean(!less && x != y)),
                BinOp::Ge => return Ok(boolean(!less)),
                BinOp::Eq => return Ok(boolean(x == y)),
                BinOp::Ne => return Ok(boolean(x != y)),
                BinOp::LAnd | BinOp::LOr => return Ok(boolean(false)),
            };
            Ok((t.wrap(r), t))
        }
        // Only the chosen operand is evaluated (C11 6.5.15); the result has both operands' common type,
        // the other's taken when it has one.
        E::Ternary(c, a, b) => {
            let (pick, other) = if v(c)?.0 != 0 { (a, b) } else { (b, a) };
            let (x, tx) = v(pick)?;
            let t = widen(tx.common(v(other).map_or(tx, |r| r.1)));
            Ok((t.wrap(tx.value(x) as u64), t))
        }
        E::Cast(tn, a) => {
            let t = int_type(&tn.base).filter(|_| tn.pointers == 0).ok_or_else(|| {
                InputError::at(
                    src,
                    e.span,
                    format!("a cast to `{}` is not an integer conversion warpscope computes", tn.base),
                )
            })?;
            let (x, _) = v(a)?;
            Ok(if t.bits == 1 { boolean(x != 0) } else { (t.wrap(x), widen(t)) })
        }
        _ => Err(InputError::at(src, e.span, "not a constant integer expression")),
    }
}

/// The constant value of tokens from host code, with macros expanded and `known` names (host variables
/// with constant values) looked up; `None` when something is not constant.
#[cold]
pub fn host_value(src: &str, toks: &[Token], macros: &Macros, known: &HashMap<String, i128>) -> Option<i128> {
    let mut expanded = Vec::new();
    macros.expand_into(src, toks, &mut HashSet::new(), &mut expanded, 0, true).ok()?;
    let ident = |w: &str| match w {
        "true" => Some(1),
        "false" => Some(0),
        _ => known.get(w).copied(),
    };
    eval_tokens(src, expanded, &ident, false).ok()
}
