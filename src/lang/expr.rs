//! The expression language: one address per thread, written as a C expression over the thread's built-in
//! variables, with an optional predicate.
//!
//! ```text
//! 4*lane + 4
//! (threadIdx.y * blockDim.x + threadIdx.x) * 4
//! 16*lane if lane < 20          // the predicate becomes the active mask
//! base + 8*min(tid, n - 1)      // base and n set with --set
//! 16*lane from 16*tid + 4096    // cp.async (LDGSTS): shared destination from global source
//! ```
//!
//! Variables: `lane`, `warp`, `tid` (the linear thread index), `threadIdx.x/y/z`, `blockIdx.*`, `blockDim.*`,
//! `gridDim.*`, `warpSize`, and any name given a value with `--set`. Operators: C's arithmetic, bitwise,
//! comparison and logical operators, `?:`, `min(a, b)`, `max(a, b)`, `abs(a)`.
//!
//! Swizzles (docs/model.md#swizzles; [`layout`](super::layout)): `sw128(a)`, `sw64(a)`, `sw32(a)` (the TMA modes on byte
//! addresses) and `swizzle(B, M, S, a)` (CuTe's `Swizzle<B,M,S>`, with constant B, M, S). Layouts given with
//! `--layout` are functions too: `L(i, j)` or `L(k)` (see [`Layouts`]).

use super::cexpr::{Ex, Parser, UnOp, E};
use super::layout::{Layouts, Swizzle, FUNCTIONS};
use super::lex::{lex, Tok};
use super::{InputError, Span};
use crate::program::launch::BUILTIN_NAMES;
use std::rc::Rc;

/// A parsed address expression with its optional predicate.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// The address.
    pub addr: Ex,
    /// The predicate: lanes where it is 0 are inactive.
    pub pred: Option<Ex>,
    /// For a copy (`cp.async`, `LDGSTS`): the global source address, written `DST from SRC`.
    pub src: Option<Ex>,
    /// The source text.
    pub source: String,
    /// The layouts it may call.
    pub layouts: Rc<Layouts>,
}

/// An evaluation error: what went wrong and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    /// What went wrong.
    pub message: String,
    /// Where.
    pub span: Span,
}

impl Pattern {
    /// Parses `ADDR` or `ADDR if PRED`. `vars` are the user's extra variable names (from `--set`).
    pub fn parse(source: &str, vars: &[String]) -> Result<Pattern, InputError> {
        Pattern::parse_with(source, vars, Rc::new(Layouts::NONE))
    }

    /// [`Pattern::parse`] with layouts the pattern may call.
    pub fn parse_with(source: &str, vars: &[String], layouts: Rc<Layouts>) -> Result<Pattern, InputError> {
        let toks = lex(source)?;
        if let Some(t) = toks.iter().find(|t| matches!(t.tok, Tok::Hash(_))) {
            return Err(InputError::at(source, t.span, "`#` lines belong in CUDA snippets, not in an expression"));
        }
        let mut p = Parser::new(source, toks);
        if matches!(p.peek(), Tok::End) {
            return Err(p.err("empty expression: write an address such as 4*lane"));
        }
        let addr = p.ternary()?;
        let src = if p.at_word("from") {
            p.bump();
            if matches!(p.peek(), Tok::End) || p.at_word("if") {
                return Err(p.err("expected the global source address after `from`"));
            }
            Some(p.ternary()?)
        } else {
            None
        };
        let pred = if p.at_word("if") {
            p.bump();
            if matches!(p.peek(), Tok::End) {
                return Err(p.err("expected a condition after `if`"));
            }
            Some(p.ternary()?)
        } else {
            None
        };
        if !matches!(p.peek(), Tok::End) {
            let hint = if p.at_word("where") || p.at_word("when") {
                " (write the predicate as `ADDR if COND`)"
            } else if p.at_word("from") {
                " (`from` comes before `if`: `DST from SRC if COND`)"
            } else {
                ""
            };
            return Err(
                p.err(format!("expected an operator or the end of the expression, found {}{hint}", p.describe()))
            );
        }
        let cx = Cx { src: source, vars, layouts: &layouts };
        check(&cx, &addr)?;
        for e in pred.iter().chain(&src) {
            check(&cx, e)?;
        }
        Ok(Pattern { addr, pred, src, source: source.to_string(), layouts })
    }

    /// The copy's global source as a pattern of its own (same predicate), for `DST from SRC`.
    pub fn source_pattern(&self) -> Option<Pattern> {
        Some(Pattern { addr: self.src.clone()?, src: None, ..self.clone() })
    }

    /// The thread's address, or `None` when the predicate is false.
    pub fn eval(&self, var: &dyn Fn(&str) -> Option<i128>) -> Result<Option<i128>, EvalError> {
        if let Some(p) = &self.pred {
            if ev(p, var, &self.layouts)? == 0 {
                return Ok(None);
            }
        }
        ev(&self.addr, var, &self.layouts).map(Some)
    }
}

/// What a check knows: the text, the `--set` names and the layouts.
struct Cx<'a> {
    src: &'a str,
    vars: &'a [String],
    layouts: &'a Layouts,
}

/// Checks that an expression uses only what the language allows and only known variables.
#[cold]
fn check(cx: &Cx, e: &Ex) -> Result<(), InputError> {
    let (src, vars) = (cx.src, cx.vars);
    let bad = |what: &str| Err(InputError::at(src, e.span, format!("{what} is not allowed in an address expression")));
    match &e.kind {
        E::Int(_) => Ok(()),
        E::Float => Err(InputError::at(src, e.span, "a floating-point number cannot be an address")),
        E::Name(_) | E::Member(_, _, false) => match e.dotted_name() {
            Some(n) if BUILTIN_NAMES.contains(&n.as_str()) || vars.contains(&n) => Ok(()),
            Some(n) => {
                let mut known: Vec<&str> = BUILTIN_NAMES.to_vec();
                known.extend(vars.iter().map(String::as_str));
                Err(InputError::at(
                    src,
                    e.span,
                    format!(
                        "unknown variable `{n}` (known: {}; give others a value with --set NAME=VALUE)",
                        known.join(", ")
                    ),
                ))
            }
            None => bad("a field access"),
        },
        E::Unary(UnOp::AddrOf | UnOp::Deref, _) => bad("a pointer operation"),
        E::Unary(_, a) => check(cx, a),
        E::Binary(_, a, b) => {
            check(cx, a)?;
            check(cx, b)
        }
        E::Ternary(c, a, b) => {
            check(cx, c)?;
            check(cx, a)?;
            check(cx, b)
        }
        E::Call(name, args) => {
            let arity = match (name.as_str(), cx.layouts.get(name)) {
                ("min" | "max", _) => 2,
                ("abs" | "sw128" | "sw64" | "sw32", _) => 1,
                ("swizzle", _) => 4,
                (_, Some(_)) if args.len() == 1 => 1,
                (_, Some(l)) if args.len() != l.rank() => {
                    return Err(InputError::at(
                        src,
                        e.span,
                        format!(
                            "layout `{name}` takes one coordinate per mode ({}) or one index, found {}",
                            l.rank(),
                            args.len()
                        ),
                    ))
                }
                (_, Some(l)) => l.rank(),
                _ => {
                    let mut known = FUNCTIONS.to_vec();
                    known.extend(cx.layouts.names());
                    return Err(InputError::at(
                        src,
                        e.op_span,
                        format!("unknown function `{name}` (known: {})", known.join(", ")),
                    ));
                }
            };
            if args.len() != arity {
                return Err(InputError::at(
                    src,
                    e.span,
                    format!("`{name}` takes {arity} argument(s), found {}", args.len()),
                ));
            }
            args.iter().try_for_each(|a| check(cx, a))?;
            if name == "swizzle" {
                // B, M and S are constants, as CuTe's template arguments are.
                let mut bms = [0i128; 3];
                for (v, a) in bms.iter_mut().zip(args) {
                    *v = eval(a, &|_| None).map_err(|_| {
                        InputError::at(src, a.span, "swizzle(B, M, S, x): B, M and S must be constant integers")
                    })?;
                }
                Swizzle::new(bms[0], bms[1], bms[2]).map_err(|m| InputError::at(src, e.span, m))?;
            }
            Ok(())
        }
        E::Index(..) => bad("indexing"),
        E::Member(..) => bad("`->`"),
        E::Assign(..) => bad("assignment"),
        E::IncDec(..) => bad("`++`/`--`"),
        E::SizeofType(t) if sizeof(t).is_some() => Ok(()),
        E::SizeofType(t) => Err(InputError::at(
            src,
            e.span,
            format!("warpscope does not know the size of `{}` in an expression (it knows the scalar and vector types: float, int, double, half, float4, ...)", t.base),
        )),
        E::SizeofExpr(_) => bad("`sizeof` of a value (write the type: sizeof(float))"),
        E::Cast(..) => bad("a cast"),
        E::Str(_) => bad("a string"),
        E::InitList(_) => bad("a brace initialiser"),
    }
}

/// Evaluates a checked expression.
pub fn eval(e: &Ex, var: &dyn Fn(&str) -> Option<i128>) -> Result<i128, EvalError> {
    ev(e, var, &Layouts::NONE)
}

/// Evaluates a checked expression that may call `layouts`.
fn ev(e: &Ex, var: &dyn Fn(&str) -> Option<i128>, layouts: &Layouts) -> Result<i128, EvalError> {
    let fail = |message: String, span: Span| Err(EvalError { message, span });
    match &e.kind {
        E::Int(n) => Ok(*n),
        E::Name(_) | E::Member(..) => {
            let name = e.dotted_name().unwrap_or_default();
            match var(&name) {
                Some(v) => Ok(v),
                None => fail(format!("unknown variable `{name}`"), e.span),
            }
        }
        E::Unary(op, a) => {
            let v = ev(a, var, layouts)?;
            Ok(match op {
                UnOp::Neg => -v,
                UnOp::Plus => v,
                UnOp::Not => !v,
                UnOp::LNot => i128::from(v == 0),
                UnOp::AddrOf | UnOp::Deref => return fail("pointer operations are not allowed here".into(), e.op_span),
            })
        }
        E::Binary(op, a, b) => {
            let x = ev(a, var, layouts)?;
            // Short-circuit like C, so `lane < 20 && 100 / (20 - lane)` is safe.
            match op {
                super::cexpr::BinOp::LAnd if x == 0 => return Ok(0),
                super::cexpr::BinOp::LOr if x != 0 => return Ok(1),
                _ => {}
            }
            let y = ev(b, var, layouts)?;
            op.apply(x, y).or_else(|m| fail(m, e.op_span))
        }
        E::Ternary(c, a, b) => {
            if ev(c, var, layouts)? != 0 {
                ev(a, var, layouts)
            } else {
                ev(b, var, layouts)
            }
        }
        E::Call(name, args) => {
            let vals: Vec<i128> = args.iter().map(|a| ev(a, var, layouts)).collect::<Result<_, _>>()?;
            let r = match (name.as_str(), vals.as_slice(), Swizzle::named(name)) {
                ("min", [a, b], _) => Ok(*a.min(b)),
                ("max", [a, b], _) => Ok(*a.max(b)),
                ("abs", [a], _) => Ok(a.abs()),
                (_, [x], Some(s)) => Ok(s.apply(*x)),
                ("swizzle", [b, m, s, x], _) => Swizzle::new(*b, *m, *s).map(|s| s.apply(*x)).map_err(|m| (0, m)),
                _ => match layouts.get(name) {
                    Some(l) => layouts.call(l, &vals),
                    None => Err((usize::MAX, format!("unknown function `{name}`"))),
                },
            };
            // An error points at the coordinate it is about, or at the call.
            r.or_else(|(i, m)| fail(m, args.get(i).filter(|_| layouts.get(name).is_some()).map_or(e.span, |a| a.span)))
        }
        E::SizeofType(t) => sizeof(t).map_or_else(|| fail(format!("unknown type `{}`", t.base), e.span), Ok),
        _ => fail("not allowed in an address expression".into(), e.span),
    }
}

/// `sizeof(T)` for the scalar and vector types an address expression may name (CUDA's sizes; pointers are 8).
fn sizeof(t: &super::cexpr::TypeName) -> Option<i128> {
    if t.pointers > 0 {
        return Some(8);
    }
    let base = t.base.trim_start_matches("unsigned ").trim_start_matches("signed ");
    Some(match base {
        "char" | "int8_t" | "uint8_t" => 1,
        "unsigned" => 4,
        "short" | "ushort" | "half" | "__half" | "__nv_bfloat16" | "nv_bfloat16" | "int16_t" | "uint16_t" | "char2"
        | "uchar2" => 2,
        "int" | "uint" | "float" | "int32_t" | "uint32_t" | "half2" | "__half2" | "__nv_bfloat162" | "short2"
        | "ushort2" | "char4" | "uchar4" => 4,
        "long" | "ulong" | "long long" | "double" | "size_t" | "int64_t" | "uint64_t" | "float2" | "int2" | "uint2"
        | "short4" | "ushort4" => 8,
        "float3" | "int3" | "uint3" => 12,
        "float4" | "int4" | "uint4" | "double2" | "longlong2" | "long2" | "ulong2" => 16,
        "double4" => 32,
        _ => return None,
    })
}

/// User variables from `--set NAME=VALUE`, by name.
pub use crate::program::Vars;

/// The program runs a pattern per lane through this, knowing nothing of its syntax.
impl crate::program::LaneExpr for Pattern {
    fn source(&self) -> &str {
        &self.source
    }

    fn eval(&self, var: &dyn Fn(&str) -> Option<i128>) -> Result<Option<i128>, (Span, String)> {
        Pattern::eval(self, var).map_err(|e| (e.span, e.message))
    }

    fn address_slope(&self, var: &dyn Fn(&str) -> Option<i128>) -> Option<[i128; 3]> {
        slope_in(&self.addr, var, &self.layouts)
    }

    fn condition_block_invariant(&self, var: &dyn Fn(&str) -> Option<i128>) -> bool {
        self.pred.as_ref().is_none_or(|p| slope_in(p, var, &self.layouts) == Some([0; 3]))
    }
}

/// How an expression's value changes with `blockIdx` when every other variable keeps its value: the
/// coefficients of `blockIdx.x`, `.y`, `.z` when the expression is affine in them, `None` when it is not (or
/// when that cannot be shown). `var` gives the values at the block being run. The whole-grid analysis uses
/// this to prove that two blocks' addresses differ by a translation.
pub fn slope(e: &Ex, var: &dyn Fn(&str) -> Option<i128>) -> Option<[i128; 3]> {
    slope_in(e, var, &Layouts::NONE)
}

/// [`slope`] of an expression that may call `layouts`.
fn slope_in(e: &Ex, var: &dyn Fn(&str) -> Option<i128>, layouts: &Layouts) -> Option<[i128; 3]> {
    use super::cexpr::BinOp as B;
    let slope = |e: &Ex, var: &dyn Fn(&str) -> Option<i128>| slope_in(e, var, layouts);
    let eval = |e: &Ex, var: &dyn Fn(&str) -> Option<i128>| ev(e, var, layouts);
    const ZERO: [i128; 3] = [0; 3];
    let zero = |s: &[i128; 3]| *s == ZERO;
    let scale = |s: [i128; 3], k: i128| -> Option<[i128; 3]> {
        Some([s[0].checked_mul(k)?, s[1].checked_mul(k)?, s[2].checked_mul(k)?])
    };
    match &e.kind {
        E::Int(_) => Some(ZERO),
        E::Name(_) | E::Member(..) => Some(match e.dotted_name().as_deref() {
            Some("blockIdx.x") => [1, 0, 0],
            Some("blockIdx.y") => [0, 1, 0],
            Some("blockIdx.z") => [0, 0, 1],
            _ => ZERO,
        }),
        E::Unary(op, a) => {
            let s = slope(a, var)?;
            match op {
                UnOp::Plus => Some(s),
                UnOp::Neg => scale(s, -1),
                _ if zero(&s) => Some(ZERO),
                _ => None,
            }
        }
        E::Binary(op, a, b) => {
            let (sa, sb) = (slope(a, var)?, slope(b, var)?);
            match op {
                B::Add => Some([sa[0].checked_add(sb[0])?, sa[1].checked_add(sb[1])?, sa[2].checked_add(sb[2])?]),
                B::Sub => Some([sa[0].checked_sub(sb[0])?, sa[1].checked_sub(sb[1])?, sa[2].checked_sub(sb[2])?]),
                B::Mul if zero(&sa) => scale(sb, eval(a, var).ok()?),
                B::Mul if zero(&sb) => scale(sa, eval(b, var).ok()?),
                B::Shl if zero(&sb) => {
                    let k = eval(b, var).ok().filter(|k| (0..64).contains(k))?;
                    scale(sa, 1i128 << k)
                }
                _ if zero(&sa) && zero(&sb) => Some(ZERO),
                _ => None,
            }
        }
        E::Ternary(c, a, b) => {
            if !zero(&slope(c, var)?) {
                return None;
            }
            if eval(c, var).ok()? != 0 {
                slope(a, var)
            } else {
                slope(b, var)
            }
        }
        // A function (min, a swizzle, a layout) of block-dependent values is not affine in general: only one
        // whose arguments all keep their value from block to block is shown to (it keeps its value too).
        E::Call(_, args) => {
            for a in args {
                if !zero(&slope(a, var)?) {
                    return None;
                }
            }
            Some(ZERO)
        }
        _ => None,
    }
}
