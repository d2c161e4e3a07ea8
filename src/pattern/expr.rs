//! Integer expressions in named variables: `4*lane + 0x100`, `(lane ^ 1) << 3`, ...
//!
//! C precedence: unary `- ~ +`, then `* / %`, `+ -`, `<< >>`, `&`, `^`, `|`. Values are 128-bit integers so
//! that any 64-bit address and its intermediate sums are exact; overflow, division by zero and
//! out-of-range shifts are errors at the operator's position.

use super::{InputError, Span};

/// A parsed expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A literal.
    Num(i128, Span),
    /// A variable.
    Var(String, Span),
    /// `-x`, `~x` or `+x`.
    Unary(char, Box<Expr>, Span),
    /// `a op b`; the span is the operator's.
    Binary(BinOp, Box<Expr>, Box<Expr>, Span),
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (truncating, as in C)
    Div,
    /// `%`
    Rem,
    /// `<<`
    Shl,
    /// `>>` (arithmetic)
    Shr,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
}

impl BinOp {
    fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::Xor => 2,
            BinOp::And => 3,
            BinOp::Shl | BinOp::Shr => 4,
            BinOp::Add | BinOp::Sub => 5,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 6,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
        }
    }
}

/// An evaluation error: what went wrong and at which operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    /// What went wrong.
    pub message: String,
    /// Where.
    pub span: Span,
}

/// The largest magnitude a value may reach: intermediate results beyond 2^96 are reported as overflow
/// rather than silently wrapped.
const LIMIT: i128 = 1 << 96;

impl Expr {
    /// The span of the whole expression.
    pub fn span(&self) -> Span {
        match self {
            Expr::Num(_, s) | Expr::Var(_, s) => *s,
            Expr::Unary(_, e, s) => Span { start: s.start, end: e.span().end },
            Expr::Binary(_, a, b, _) => Span { start: a.span().start, end: b.span().end },
        }
    }

    /// Evaluates with variables from `var`.
    pub fn eval(&self, var: &dyn Fn(&str) -> Option<i128>) -> Result<i128, EvalError> {
        let fail = |span: Span, message: String| Err(EvalError { message, span });
        match self {
            Expr::Num(n, _) => Ok(*n),
            Expr::Var(name, span) => match var(name) {
                Some(v) => Ok(v),
                None => fail(*span, format!("unknown variable `{name}`")),
            },
            Expr::Unary(op, e, span) => {
                let v = e.eval(var)?;
                match op {
                    '-' => Ok(-v),
                    '~' => Ok(!v),
                    '+' => Ok(v),
                    _ => fail(*span, format!("unknown operator `{op}`")),
                }
            }
            Expr::Binary(op, a, b, span) => {
                let (x, y) = (a.eval(var)?, b.eval(var)?);
                let value = match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::Div | BinOp::Rem if y == 0 => {
                        return fail(*span, format!("division by zero in `{}`", op.symbol()))
                    }
                    BinOp::Div => x.checked_div(y),
                    BinOp::Rem => x.checked_rem(y),
                    BinOp::Shl | BinOp::Shr if !(0..=63).contains(&y) => {
                        return fail(*span, format!("shift by {y}: the shift amount must be 0..63"))
                    }
                    BinOp::Shl => x.checked_mul(1i128 << y),
                    BinOp::Shr => Some(x >> y),
                    BinOp::And => Some(x & y),
                    BinOp::Or => Some(x | y),
                    BinOp::Xor => Some(x ^ y),
                };
                match value {
                    Some(v) if (-LIMIT..=LIMIT).contains(&v) => Ok(v),
                    _ => fail(*span, format!("overflow in `{}`: the value is past any 64-bit address", op.symbol())),
                }
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(i128),
    Ident(String),
    Op(&'static str),
    Open,
    Close,
    End,
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
}

impl Lexer<'_> {
    fn next(&mut self) -> Result<(Tok, Span), InputError> {
        let bytes = self.src.as_bytes();
        while self.pos < bytes.len() && bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        let start = self.pos;
        let Some(&c) = bytes.get(start) else {
            return Ok((Tok::End, Span { start, end: start + 1 }));
        };
        let span = |end: usize| Span { start, end };
        if c.is_ascii_digit() {
            let mut end = start;
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
                end += 1;
            }
            self.pos = end;
            let text: String = self.src[start..end].chars().filter(|&c| c != '_').collect();
            let lower = text.to_ascii_lowercase();
            let parsed = if let Some(hex) = lower.strip_prefix("0x") {
                i128::from_str_radix(hex, 16).ok()
            } else if let Some(bin) = lower.strip_prefix("0b") {
                i128::from_str_radix(bin, 2).ok()
            } else {
                lower.parse::<i128>().ok()
            };
            return match parsed {
                Some(n) if n <= LIMIT => Ok((Tok::Num(n), span(end))),
                Some(_) => Err(InputError::at(self.src, span(end), "number too large: past any 64-bit address")),
                None => Err(InputError::at(
                    self.src,
                    span(end),
                    format!("`{}` is not a number (decimal, 0x hex or 0b binary)", &self.src[start..end]),
                )),
            };
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let mut end = start;
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_' || bytes[end] == b'.')
            {
                end += 1;
            }
            self.pos = end;
            return Ok((Tok::Ident(self.src[start..end].to_string()), span(end)));
        }
        let two = self.src.get(start..start + 2);
        for op in ["<<", ">>"] {
            if two == Some(op) {
                self.pos += 2;
                return Ok((Tok::Op(op), span(start + 2)));
            }
        }
        self.pos += 1;
        let tok = match c {
            b'(' => Tok::Open,
            b')' => Tok::Close,
            b'+' => Tok::Op("+"),
            b'-' => Tok::Op("-"),
            b'*' => Tok::Op("*"),
            b'/' => Tok::Op("/"),
            b'%' => Tok::Op("%"),
            b'&' => Tok::Op("&"),
            b'|' => Tok::Op("|"),
            b'^' => Tok::Op("^"),
            b'~' => Tok::Op("~"),
            _ => {
                let ch = self.src[start..].chars().next().unwrap_or('?');
                self.pos = start + ch.len_utf8();
                return Err(InputError::at(
                    self.src,
                    Span { start, end: self.pos },
                    format!("unexpected character `{ch}`"),
                ));
            }
        };
        Ok((tok, span(start + 1)))
    }
}

struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Tok,
    span: Span,
    vars: &'a [&'a str],
    depth: u32,
}

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: u32 = 200;

impl Parser<'_> {
    fn bump(&mut self) -> Result<(), InputError> {
        let (t, s) = self.lex.next()?;
        self.tok = t;
        self.span = s;
        Ok(())
    }

    fn err(&self, message: impl Into<String>) -> InputError {
        InputError::at(self.lex.src, self.span, message)
    }

    fn describe(&self) -> String {
        match &self.tok {
            Tok::End => "the end of the expression".into(),
            _ => format!("`{}`", &self.lex.src[self.span.start..self.span.end.min(self.lex.src.len())]),
        }
    }

    fn binop(&self) -> Option<BinOp> {
        match self.tok {
            Tok::Op("+") => Some(BinOp::Add),
            Tok::Op("-") => Some(BinOp::Sub),
            Tok::Op("*") => Some(BinOp::Mul),
            Tok::Op("/") => Some(BinOp::Div),
            Tok::Op("%") => Some(BinOp::Rem),
            Tok::Op("<<") => Some(BinOp::Shl),
            Tok::Op(">>") => Some(BinOp::Shr),
            Tok::Op("&") => Some(BinOp::And),
            Tok::Op("|") => Some(BinOp::Or),
            Tok::Op("^") => Some(BinOp::Xor),
            _ => None,
        }
    }

    fn expr(&mut self, min_prec: u8) -> Result<Expr, InputError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(format!("expression nested more than {MAX_DEPTH} deep")));
        }
        let mut lhs = self.unary()?;
        while let Some(op) = self.binop() {
            if op.precedence() < min_prec {
                break;
            }
            let op_span = self.span;
            self.bump()?;
            let rhs = self.expr(op.precedence() + 1)?;
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs), op_span);
        }
        self.depth -= 1;
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, InputError> {
        let span = self.span;
        match self.tok.clone() {
            Tok::Op(op @ ("-" | "~" | "+")) => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(self.err(format!("expression nested more than {MAX_DEPTH} deep")));
                }
                self.bump()?;
                let e = self.unary()?;
                self.depth -= 1;
                Ok(Expr::Unary(op.chars().next().unwrap_or('+'), Box::new(e), span))
            }
            Tok::Num(n) => {
                self.bump()?;
                Ok(Expr::Num(n, span))
            }
            Tok::Ident(name) => {
                if !self.vars.contains(&name.as_str()) {
                    return Err(self.err(format!("unknown variable `{name}` (known: {})", self.vars.join(", "))));
                }
                self.bump()?;
                Ok(Expr::Var(name, span))
            }
            Tok::Open => {
                self.bump()?;
                let e = self.expr(0)?;
                if self.tok != Tok::Close {
                    return Err(self.err(format!(
                        "expected `)` to close the `(` at column {}, found {}",
                        span.start + 1,
                        self.describe()
                    )));
                }
                self.bump()?;
                Ok(e)
            }
            _ => Err(self.err(format!("expected a number, a variable or `(`, found {}", self.describe()))),
        }
    }
}

/// Parses an expression whose variables must be among `vars`.
pub fn parse(src: &str, vars: &[&str]) -> Result<Expr, InputError> {
    let mut p = Parser { lex: Lexer { src, pos: 0 }, tok: Tok::End, span: Span { start: 0, end: 1 }, vars, depth: 0 };
    p.bump()?;
    if p.tok == Tok::End {
        return Err(p.err("empty expression"));
    }
    let e = p.expr(0)?;
    if p.tok != Tok::End {
        return Err(p.err(format!("expected an operator or the end of the expression, found {}", p.describe())));
    }
    Ok(e)
}
