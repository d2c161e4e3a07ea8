//! C expressions: the AST and a precedence-climbing parser over [`lex`](super::lex) tokens. The expression
//! language uses the arithmetic subset; CUDA snippets use all of it (indexing, members, assignment, calls,
//! casts).
//!
//! Its functions are `#[cold]`: they run once per analysis, and LLVM then keeps them compact instead of
//! inlining into them, which keeps the page's analysis worker within its 300 KB budget (docs/performance.md,
//! the size budgets) while the executor stays optimised for speed.

use super::lex::{Tok, Token};
use super::{InputError, Span};
use std::collections::HashSet;

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`
    LAnd,
    /// `||`
    LOr,
}

impl BinOp {
    #[cold]
    fn from_punct(p: &str) -> Option<(BinOp, u8)> {
        Some(match p {
            "||" => (BinOp::LOr, 1),
            "&&" => (BinOp::LAnd, 2),
            "|" => (BinOp::Or, 3),
            "^" => (BinOp::Xor, 4),
            "&" => (BinOp::And, 5),
            "==" => (BinOp::Eq, 6),
            "!=" => (BinOp::Ne, 6),
            "<" => (BinOp::Lt, 7),
            "<=" => (BinOp::Le, 7),
            ">" => (BinOp::Gt, 7),
            ">=" => (BinOp::Ge, 7),
            "<<" => (BinOp::Shl, 8),
            ">>" => (BinOp::Shr, 8),
            "+" => (BinOp::Add, 9),
            "-" => (BinOp::Sub, 9),
            "*" => (BinOp::Mul, 10),
            "/" => (BinOp::Div, 10),
            "%" => (BinOp::Rem, 10),
            _ => return None,
        })
    }

    #[cold]
    fn from_assign(p: &str) -> Option<Option<BinOp>> {
        Some(match p {
            "=" => None,
            "+=" => Some(BinOp::Add),
            "-=" => Some(BinOp::Sub),
            "*=" => Some(BinOp::Mul),
            "/=" => Some(BinOp::Div),
            "%=" => Some(BinOp::Rem),
            "<<=" => Some(BinOp::Shl),
            ">>=" => Some(BinOp::Shr),
            "&=" => Some(BinOp::And),
            "|=" => Some(BinOp::Or),
            "^=" => Some(BinOp::Xor),
            _ => return None,
        })
    }

    /// The operator as written.
    #[cold]
    pub fn symbol(self) -> &'static str {
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
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::LAnd => "&&",
            BinOp::LOr => "||",
        }
    }

    /// Applies the operator to two integers; `None` on division by zero, a bad shift or overflow.
    pub fn apply(self, x: i128, y: i128) -> Result<i128, String> {
        let v = match self {
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            BinOp::Div | BinOp::Rem if y == 0 => return Err(format!("division by zero in `{}`", self.symbol())),
            BinOp::Div => x.checked_div(y),
            BinOp::Rem => x.checked_rem(y),
            BinOp::Shl | BinOp::Shr if !(0..=63).contains(&y) => {
                return Err(format!("shift by {y}: the shift amount must be 0..63"))
            }
            BinOp::Shl => x.checked_mul(1i128 << y),
            BinOp::Shr => Some(x >> y),
            BinOp::And => Some(x & y),
            BinOp::Or => Some(x | y),
            BinOp::Xor => Some(x ^ y),
            BinOp::Lt => Some(i128::from(x < y)),
            BinOp::Le => Some(i128::from(x <= y)),
            BinOp::Gt => Some(i128::from(x > y)),
            BinOp::Ge => Some(i128::from(x >= y)),
            BinOp::Eq => Some(i128::from(x == y)),
            BinOp::Ne => Some(i128::from(x != y)),
            BinOp::LAnd => Some(i128::from(x != 0 && y != 0)),
            BinOp::LOr => Some(i128::from(x != 0 || y != 0)),
        };
        match v {
            Some(v) if (-super::lex::VALUE_LIMIT..=super::lex::VALUE_LIMIT).contains(&v) => Ok(v),
            _ => Err(format!("overflow in `{}`: the value is past any 64-bit address", self.symbol())),
        }
    }
}

/// A unary prefix operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `+x`
    Plus,
    /// `~x`
    Not,
    /// `!x`
    LNot,
    /// `&x`
    AddrOf,
    /// `*x`
    Deref,
}

/// A type as written in a cast or `sizeof`: a base name and a pointer depth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeName {
    /// `float`, `unsigned int`, `float4`, a struct name, ...
    pub base: String,
    /// Number of `*`.
    pub pointers: u32,
}

/// An expression node.
#[derive(Clone, Debug, PartialEq)]
pub enum E {
    /// An integer literal.
    Int(i128),
    /// A floating-point literal.
    Float,
    /// A name.
    Name(String),
    /// A prefix operator.
    Unary(UnOp, Box<Ex>),
    /// A binary operator.
    Binary(BinOp, Box<Ex>, Box<Ex>),
    /// `c ? a : b`
    Ternary(Box<Ex>, Box<Ex>, Box<Ex>),
    /// `f(args)`
    Call(String, Vec<Ex>),
    /// `a[i]`
    Index(Box<Ex>, Box<Ex>),
    /// `a.f` (`arrow` false) or `a->f` (`arrow` true).
    Member(Box<Ex>, String, bool),
    /// `a = b`, `a += b`, ...
    Assign(Option<BinOp>, Box<Ex>, Box<Ex>),
    /// `++a`, `a--`, ...: (prefix, increment, operand).
    IncDec(bool, bool, Box<Ex>),
    /// `(T)x`, `reinterpret_cast<T>(x)`, `static_cast<T>(x)`.
    Cast(TypeName, Box<Ex>),
    /// `sizeof(T)`.
    SizeofType(TypeName),
    /// `sizeof(expression)`.
    SizeofExpr(Box<Ex>),
    /// A string literal, its text between the quotes with escapes as written (`printf` and `assert` take one;
    /// an `asm` statement's template is read from it).
    Str(std::rc::Rc<str>),
    /// A brace initialiser `{a, b, {c}}` (the type it initialises comes from its place: a declaration, a
    /// `T{...}` construction, a return).
    InitList(Vec<Ex>),
}

/// An expression with its span; binary nodes keep the operator's span in `op_span`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ex {
    /// The node.
    pub kind: E,
    /// The whole expression's span.
    pub span: Span,
    /// For operators, the operator's own span (errors point there).
    pub op_span: Span,
}

/// Nesting deeper than this is refused rather than risking the stack.
pub const MAX_DEPTH: u32 = 200;

/// A parser over a token list. The CUDA statement parser drives it too.
pub struct Parser<'a> {
    /// The source text (for error excerpts).
    pub src: &'a str,
    /// The tokens.
    pub toks: Vec<Token>,
    /// The next token's index.
    pub pos: usize,
    /// Names that start a type (for casts).
    pub types: HashSet<String>,
    /// Names that take template arguments (`tiled_partition<32>`, a file's templates): `name<...>` is read
    /// as one name.
    pub templates: HashSet<String>,
    depth: u32,
}

/// Built-in type names a cast may start with.
pub const BUILTIN_TYPES: [&str; 53] = [
    "void",
    "cudaTextureObject_t",
    "cudaSurfaceObject_t",
    "bool",
    "char",
    "short",
    "int",
    "long",
    "unsigned",
    "signed",
    "float",
    "double",
    "size_t",
    "int8_t",
    "uint8_t",
    "int16_t",
    "uint16_t",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
    "half",
    "__half",
    "uint",
    "ushort",
    "ulong",
    "__nv_bfloat16",
    "nv_bfloat16",
    "__nv_fp8_e4m3",
    "__nv_fp8_e5m2",
    "char2",
    "char4",
    "uchar2",
    "uchar4",
    "short2",
    "short4",
    "ushort2",
    "ushort4",
    "int2",
    "int3",
    "int4",
    "uint2",
    "uint3",
    "uint4",
    "float2",
    "float3",
    "float4",
    "double2",
    "double3",
    "double4",
    "longlong2",
    "const",
    "struct",
];

impl<'a> Parser<'a> {
    /// A parser over `toks`.
    #[cold]
    pub fn new(src: &'a str, toks: Vec<Token>) -> Parser<'a> {
        Parser {
            src,
            toks,
            pos: 0,
            types: BUILTIN_TYPES.iter().map(|s| s.to_string()).collect(),
            templates: HashSet::new(),
            depth: 0,
        }
    }

    /// The current token.
    #[cold]
    pub fn peek(&self) -> &Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)].tok
    }

    /// The token after the current one.
    #[cold]
    pub fn peek2(&self) -> &Tok {
        &self.toks[(self.pos + 1).min(self.toks.len() - 1)].tok
    }

    /// The current token's span.
    #[cold]
    pub fn span(&self) -> Span {
        self.toks[self.pos.min(self.toks.len() - 1)].span
    }

    /// The span of the previous token.
    #[cold]
    pub fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1).min(self.toks.len() - 1)].span
    }

    /// Advances one token.
    #[cold]
    pub fn bump(&mut self) {
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
    }

    /// True (and advances) if the current token is the punctuation `p`.
    #[cold]
    pub fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Tok::Punct(q) if *q == p) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// True if the current token is the punctuation `p`.
    #[cold]
    pub fn at(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    /// True if the current token is the identifier `word`.
    #[cold]
    pub fn at_word(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Ident(w) if w == word)
    }

    /// An error at the current token.
    #[cold]
    pub fn err(&self, message: impl Into<String>) -> InputError {
        InputError::at(self.src, self.span(), message)
    }

    /// A description of the current token for messages.
    #[cold]
    pub fn describe(&self) -> String {
        match self.peek() {
            Tok::End => "the end of the input".into(),
            Tok::Hash(_) => "a `#` line".into(),
            _ => {
                let s = self.span();
                format!("`{}`", &self.src[s.start.min(self.src.len())..s.end.min(self.src.len())])
            }
        }
    }

    /// Requires the punctuation `p`.
    #[cold]
    pub fn expect(&mut self, p: &str, context: &str) -> Result<(), InputError> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.err(format!("expected `{p}` {context}, found {}", self.describe())))
        }
    }

    /// Requires an identifier and returns it.
    #[cold]
    pub fn ident(&mut self, what: &str) -> Result<String, InputError> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.bump();
                Ok(s)
            }
            _ => Err(self.err(format!("expected {what}, found {}", self.describe()))),
        }
    }

    #[cold]
    fn node(kind: E, span: Span, op_span: Span) -> Ex {
        Ex { kind, span, op_span }
    }

    #[cold]
    fn join(a: Span, b: Span) -> Span {
        Span { start: a.start.min(b.start), end: a.end.max(b.end) }
    }

    #[cold]
    fn enter(&mut self) -> Result<(), InputError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(format!("expression nested more than {MAX_DEPTH} deep")));
        }
        Ok(())
    }

    /// A full expression including assignment (not the comma operator).
    #[cold]
    pub fn assignment(&mut self) -> Result<Ex, InputError> {
        self.enter()?;
        let lhs = self.ternary()?;
        let result = match self.peek().clone() {
            Tok::Punct(p) => match BinOp::from_assign(p) {
                Some(op) => {
                    let op_span = self.span();
                    self.bump();
                    let rhs = self.assignment()?;
                    let span = Self::join(lhs.span, rhs.span);
                    Self::node(E::Assign(op, Box::new(lhs), Box::new(rhs)), span, op_span)
                }
                None => lhs,
            },
            _ => lhs,
        };
        self.depth -= 1;
        Ok(result)
    }

    /// A conditional expression (no assignment).
    #[cold]
    pub fn ternary(&mut self) -> Result<Ex, InputError> {
        self.enter()?;
        let cond = self.binary(1)?;
        let result = if self.at("?") {
            let op_span = self.span();
            self.bump();
            let a = self.assignment()?;
            self.expect(":", "in `?:`")?;
            let b = self.ternary()?;
            let span = Self::join(cond.span, b.span);
            Self::node(E::Ternary(Box::new(cond), Box::new(a), Box::new(b)), span, op_span)
        } else {
            cond
        };
        self.depth -= 1;
        Ok(result)
    }

    #[cold]
    fn binary(&mut self, min_prec: u8) -> Result<Ex, InputError> {
        self.enter()?;
        let mut lhs = self.unary()?;
        // Each operator of a chain (`a + b + c ...`) makes the tree one level deeper, as nesting does: every
        // walk over the tree (checks, evaluation, lowering) recurses that deep, so chains count against the
        // same limit.
        let mut chain = 0u32;
        while let Tok::Punct(p) = self.peek().clone() {
            let Some((op, prec)) = BinOp::from_punct(p) else { break };
            if prec < min_prec {
                break;
            }
            chain += 1;
            if self.depth + chain > MAX_DEPTH {
                return Err(self.err(format!(
                    "expression nested more than {MAX_DEPTH} deep (each operator of a chain such as `a + b + c` counts one level): split it into several statements"
                )));
            }
            let op_span = self.span();
            self.bump();
            let rhs = self.binary(prec + 1)?;
            let span = Self::join(lhs.span, rhs.span);
            lhs = Self::node(E::Binary(op, Box::new(lhs), Box::new(rhs)), span, op_span);
        }
        self.depth -= 1;
        Ok(lhs)
    }

    #[cold]
    fn is_type_start(&self, tok: &Tok) -> bool {
        matches!(tok, Tok::Ident(w) if self.types.contains(w.as_str()))
    }

    /// Parses a type name (`unsigned int`, `const float4 *`, `struct P *`).
    #[cold]
    pub fn type_name(&mut self) -> Result<TypeName, InputError> {
        const INT_WORDS: [&str; 6] = ["unsigned", "signed", "long", "short", "int", "char"];
        let mut words: Vec<String> = Vec::new();
        while let Tok::Ident(w) = self.peek().clone() {
            if matches!(w.as_str(), "const" | "volatile" | "__restrict__" | "restrict" | "struct") {
                self.bump();
                continue;
            }
            let fits = match words.is_empty() {
                true => self.types.contains(w.as_str()),
                // `unsigned int`, `long long`, `unsigned char`: integer words combine.
                false => INT_WORDS.contains(&w.as_str()) && words.iter().all(|x| INT_WORDS.contains(&x.as_str())),
            };
            if !fits {
                break;
            }
            self.bump();
            let w = if words.is_empty() && self.templates.contains(w.as_str()) && self.at("<") {
                format!("{w}<{}>", self.template_args()?)
            } else {
                w
            };
            words.push(w);
        }
        if words.is_empty() {
            return Err(self.err(format!("expected a type, found {}", self.describe())));
        }
        let mut pointers = 0;
        loop {
            if self.eat("*") {
                pointers += 1;
            } else if self.at_word("const") || self.at_word("__restrict__") || self.at_word("restrict") {
                self.bump();
            } else {
                break;
            }
        }
        Ok(TypeName { base: words.join(" "), pointers })
    }

    /// Whether `(` starts a cast: a type then `)`. `(int(x) ^ y)` starts a parenthesised expression whose first
    /// operand is the functional cast `int(x)`.
    #[cold]
    fn cast_ahead(&mut self) -> bool {
        let at = self.pos;
        self.bump();
        let cast = self.type_name().is_ok() && self.at(")");
        self.pos = at;
        cast
    }

    #[cold]
    fn unary(&mut self) -> Result<Ex, InputError> {
        self.enter()?;
        let start = self.span();
        let result = match self.peek().clone() {
            Tok::Punct(p @ ("-" | "+" | "~" | "!" | "&" | "*")) => {
                self.bump();
                let e = self.unary()?;
                let op = match p {
                    "-" => UnOp::Neg,
                    "+" => UnOp::Plus,
                    "~" => UnOp::Not,
                    "!" => UnOp::LNot,
                    "&" => UnOp::AddrOf,
                    _ => UnOp::Deref,
                };
                let span = Self::join(start, e.span);
                Self::node(E::Unary(op, Box::new(e)), span, start)
            }
            Tok::Punct(p @ ("++" | "--")) => {
                self.bump();
                let e = self.unary()?;
                let span = Self::join(start, e.span);
                Self::node(E::IncDec(true, p == "++", Box::new(e)), span, start)
            }
            Tok::Punct("(") if self.is_type_start(&self.peek2().clone()) && self.cast_ahead() => {
                self.bump();
                let ty = self.type_name()?;
                self.expect(")", "to close the cast")?;
                let e = self.unary()?;
                let span = Self::join(start, e.span);
                Self::node(E::Cast(ty, Box::new(e)), span, start)
            }
            Tok::Ident(w) if w == "sizeof" => {
                self.bump();
                self.expect("(", "after sizeof")?;
                if self.is_type_start(&self.peek().clone()) {
                    let ty = self.type_name()?;
                    self.expect(")", "to close sizeof")?;
                    Self::node(E::SizeofType(ty), Self::join(start, self.prev_span()), start)
                } else {
                    let e = self.assignment()?;
                    self.expect(")", "to close sizeof")?;
                    Self::node(E::SizeofExpr(Box::new(e)), Self::join(start, self.prev_span()), start)
                }
            }
            Tok::Ident(w) if matches!(w.as_str(), "reinterpret_cast" | "static_cast" | "const_cast") => {
                self.bump();
                self.expect("<", "after the cast keyword")?;
                let ty = self.type_name()?;
                self.expect(">", "to close the cast type")?;
                self.expect("(", "after the cast type")?;
                let e = self.assignment()?;
                self.expect(")", "to close the cast")?;
                let span = Self::join(start, self.prev_span());
                self.postfix(Self::node(E::Cast(ty, Box::new(e)), span, start))?
            }
            _ => {
                let p = self.primary()?;
                self.postfix(p)?
            }
        };
        self.depth -= 1;
        Ok(result)
    }

    #[cold]
    fn primary(&mut self) -> Result<Ex, InputError> {
        let span = self.span();
        match self.peek().clone() {
            Tok::Int(n) => {
                self.bump();
                Ok(Self::node(E::Int(n), span, span))
            }
            Tok::Float => {
                self.bump();
                Ok(Self::node(E::Float, span, span))
            }
            Tok::Char(n) => {
                self.bump();
                Ok(Self::node(E::Int(n), span, span))
            }
            Tok::Str(first) => {
                self.bump();
                // Adjacent literals are one string ("a" "b").
                let mut text = first.to_string();
                while let Tok::Str(more) = self.peek().clone() {
                    text.push_str(&more);
                    self.bump();
                }
                Ok(Self::node(E::Str(text.into()), Self::join(span, self.prev_span()), span))
            }
            Tok::Ident(name) => {
                self.bump();
                let mut name = if self.templates.contains(name.as_str()) && self.at("<") {
                    format!("{name}<{}>", self.template_args()?)
                } else {
                    name
                };
                // `Packed128<float>::zeros()`: a member of a template's instance.
                if name.ends_with('>') && self.at("::") {
                    self.bump();
                    if let Tok::Ident(m) = self.peek().clone() {
                        self.bump();
                        name = format!("{name}::{m}");
                    }
                }
                if self.at("(") {
                    self.bump();
                    let mut args = Vec::new();
                    if !self.at(")") {
                        loop {
                            args.push(self.assignment()?);
                            if !self.eat(",") {
                                break;
                            }
                        }
                    }
                    self.expect(")", &format!("to close the call to `{name}`"))?;
                    let whole = Self::join(span, self.prev_span());
                    return Ok(Self::node(E::Call(name, args), whole, span));
                }
                // `float4{a, b, c, d}`, `Packed128<float>{bits}`: a value of the type, from a brace initialiser.
                if self.at("{") && (self.types.contains(name.as_str()) || name.contains('<')) {
                    let list = self.init_list()?;
                    let whole = Self::join(span, list.span);
                    let tn = TypeName { base: name, pointers: 0 };
                    return Ok(Self::node(E::Cast(tn, Box::new(list)), whole, span));
                }
                Ok(Self::node(E::Name(name), span, span))
            }
            Tok::Punct("{") => self.init_list(),
            Tok::Punct("(") => {
                self.bump();
                let e = self.assignment()?;
                if !self.at(")") {
                    return Err(self.err(format!(
                        "expected `)` to close the `(` at column {}, found {}",
                        column_of(self.src, span.start),
                        self.describe()
                    )));
                }
                self.bump();
                Ok(Ex { span: Self::join(span, self.prev_span()), ..e })
            }
            _ => Err(self.err(format!("expected a number, a name or `(`, found {}", self.describe()))),
        }
    }

    /// A brace initialiser at `{`: its items (each an expression or a nested initialiser), a trailing comma
    /// allowed, `{}` empty.
    #[cold]
    pub fn init_list(&mut self) -> Result<Ex, InputError> {
        let open = self.span();
        self.expect("{", "to open the initialiser")?;
        let mut items = Vec::new();
        while !self.at("}") {
            items.push(if self.at("{") { self.init_list()? } else { self.assignment()? });
            if !self.eat(",") {
                break;
            }
        }
        self.expect("}", "to close the initialiser")?;
        Ok(Self::node(E::InitList(items), Self::join(open, self.prev_span()), open))
    }

    /// The arguments of a template id after its `<`, through the matching `>`, as canonical text:
    /// `int, 256` (what `--kernel 'reduce4<int, 256>'` names).
    #[cold]
    pub fn template_args(&mut self) -> Result<String, InputError> {
        let open = self.span();
        self.expect("<", "to open the template arguments")?;
        let (mut depth, mut parens) = (1u32, 0u32);
        let mut text = String::new();
        let mut prev_word = false;
        loop {
            let tok = self.peek().clone();
            match tok {
                Tok::End | Tok::Hash(_) | Tok::Punct(";" | "{" | "}") => {
                    return Err(InputError::at(self.src, open, "this `<` has no matching `>`"));
                }
                Tok::Punct("(") => parens += 1,
                Tok::Punct(")") => parens = parens.saturating_sub(1),
                Tok::Punct("<") if parens == 0 => depth += 1,
                Tok::Punct(">") if parens == 0 => {
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        return Ok(text);
                    }
                }
                Tok::Punct(">>") if parens == 0 && depth == 2 => {
                    // `a<b<c>>`: the one token closes both; the outer `>` is consumed with it.
                    self.bump();
                    text.push('>');
                    return Ok(text);
                }
                _ => {}
            }
            let word = matches!(tok, Tok::Ident(_) | Tok::Int(_));
            // The token's own text: a token substituted for a template parameter has the parameter's span.
            let piece = match &tok {
                Tok::Int(n) | Tok::Char(n) => n.to_string(),
                Tok::Ident(w) => w.clone(),
                Tok::Punct(p) => p.to_string(),
                Tok::Float | Tok::Str(_) | Tok::Hash(_) | Tok::Bad(_) | Tok::End => {
                    return Err(self.err("template arguments here are types and integers"));
                }
            };
            if word && prev_word {
                text.push(' ');
            }
            text.push_str(&piece);
            if matches!(tok, Tok::Punct(",")) {
                text.push(' ');
            }
            prev_word = word;
            self.bump();
        }
    }

    #[cold]
    fn postfix(&mut self, mut e: Ex) -> Result<Ex, InputError> {
        loop {
            let op_span = self.span();
            if self.eat("[") {
                let idx = self.assignment()?;
                self.expect("]", "to close the index")?;
                let span = Self::join(e.span, self.prev_span());
                e = Self::node(E::Index(Box::new(e), Box::new(idx)), span, op_span);
            } else if self.at(".") || self.at("->") {
                let arrow = self.at("->");
                self.bump();
                let field = self.ident("a field name")?;
                if self.at("(") {
                    // A method call, `g.sync()` or `tile.shfl_down(v, 1)`: the receiver is the first argument.
                    let name_span = self.prev_span();
                    self.bump();
                    let mut args = vec![e];
                    if !self.at(")") {
                        loop {
                            args.push(self.assignment()?);
                            if !self.eat(",") {
                                break;
                            }
                        }
                    }
                    self.expect(")", &format!("to close the call to `{field}`"))?;
                    let span = Self::join(args[0].span, self.prev_span());
                    let sep = if arrow { "->" } else { "." };
                    e = Self::node(E::Call(format!("{sep}{field}"), args), span, name_span);
                    continue;
                }
                let span = Self::join(e.span, self.prev_span());
                e = Self::node(E::Member(Box::new(e), field, arrow), span, op_span);
            } else if self.at("++") || self.at("--") {
                let inc = self.at("++");
                self.bump();
                let span = Self::join(e.span, op_span);
                e = Self::node(E::IncDec(false, inc, Box::new(e)), span, op_span);
            } else {
                return Ok(e);
            }
        }
    }
}

/// The 1-based column of a byte offset.
#[cold]
pub fn column_of(src: &str, offset: usize) -> usize {
    let offset = offset.min(src.len());
    let offset = (0..=offset).rev().find(|&i| src.is_char_boundary(i)).unwrap_or(0);
    let line_start = src[..offset].rfind('\n').map_or(0, |i| i + 1);
    src[line_start..offset].chars().count() + 1
}

impl Ex {
    /// The dotted name of `a`, `threadIdx.x` or `blockDim.y`, if the expression is one.
    #[cold]
    pub fn dotted_name(&self) -> Option<String> {
        match &self.kind {
            E::Name(n) => Some(n.clone()),
            E::Member(base, f, false) => base.dotted_name().map(|b| format!("{b}.{f}")),
            _ => None,
        }
    }
}
