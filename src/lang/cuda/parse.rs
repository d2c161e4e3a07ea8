//! CUDA tokens to the syntax tree. `parse` lexes a snippet or file, preprocesses it (`pre`), reads its top
//! level (`file`), chooses the kernel (`--kernel`, else the one the host code launches, else the first) and
//! parses that kernel's body. `CudaParser` parses declarations, structs, function definitions and
//! statements; `instantiate` parses a function of the file with its template parameters replaced by
//! arguments, for the chosen kernel here and for each `__device__` function or template the lowering calls.
//!
//! May import: `syntax`, `pre`, `items`, `lang::{lex, cexpr, InputError, Span}` and `lang::expr::Vars` (the
//! `--set` values the preprocessor's `#if` reads).
//!
//! Its functions are `#[cold]`: they run once per analysis, and LLVM then keeps them compact instead of
//! inlining into them, which keeps the page's analysis worker within its 300 KB budget (docs/performance.md,
//! the size budgets) while the executor stays optimised for speed.

use super::items::{self, FileItems, FnItem, FnKind};
use super::pre::{self, Macros};
use super::syntax::{wrap_ptr, Decl, FnDef, Stmt, Storage, StructDef, Ty, Types, GROUP_TYPES, VECTORS};
use crate::lang::cexpr::{Ex, Parser, TypeName, E};
use crate::lang::lex::{lex, Tok, Token};
use crate::lang::{InputError, Span};
use std::rc::Rc;

/// cooperative_groups' templates: the tile, and the operators `cg::reduce` takes.
const GROUP_TEMPLATES: [&str; 8] =
    ["tiled_partition", "thread_block_tile", "plus", "less", "greater", "bit_and", "bit_or", "bit_xor"];

pub(super) struct Program {
    pub(super) types: Types,
    pub(super) stmts: Vec<Stmt>,
    /// The file's `__global__` kernels, in order (a template's as its instances: `reduce4<int, 256>`).
    pub(super) kernels: Vec<String>,
    /// The one whose body `stmts` holds.
    pub(super) ran: Option<String>,
    /// Where the kernel's parameters start in `stmts` (what comes before is the file's top level).
    pub(super) kernel_start: usize,
    /// The file, for `__device__` functions and templates parsed when called.
    pub(super) file: Rc<File>,
    /// The launch the file's host code makes of the kernel that ran, when it has one.
    pub(super) launch: Option<items::HostLaunch>,
    /// Template kernels nothing instantiates (they are listed in a note), with example arguments.
    pub(super) uninstantiated: Vec<(String, String)>,
}

/// The file after the preprocessor, with its index.
pub(super) struct File {
    pub(super) toks: Vec<Token>,
    pub(super) items: FileItems,
    pub(super) macros: Rc<Macros>,
    pub(super) type_names: std::collections::HashSet<String>,
    pub(super) templates: std::collections::HashSet<String>,
}

pub(super) struct CudaParser<'a> {
    pub(super) p: Parser<'a>,
    pub(super) types: Types,
    pub(super) depth: u32,
    /// Functions, launches and template instances of the file.
    pub(super) files: FileItems,
    /// The first top-level statement that did not parse (an error only if the file has no kernel).
    pub(super) deferred: Option<InputError>,
    /// The top level's integer constants (`const int TILE_DIM = 32;`), for reading launches.
    pub(super) constants: std::collections::HashMap<String, i128>,
    pub(super) macros: Rc<Macros>,
}

/// Statements (blocks, ifs, loops) nested deeper than this are refused rather than risking the stack.
pub const MAX_NESTING: u32 = 64;

/// Words before a function's return type.
const FN_QUALIFIERS: [&str; 13] = [
    "explicit",
    "virtual",
    "__global__",
    "__device__",
    "__host__",
    "static",
    "inline",
    "__inline__",
    "__forceinline__",
    "__noinline__",
    "constexpr",
    "extern",
    "template",
];

const QUALIFIERS: [&str; 15] = [
    "constexpr",
    "__host__",
    "const",
    "volatile",
    "__restrict__",
    "restrict",
    "static",
    "extern",
    "register",
    "__shared__",
    "__device__",
    "__constant__",
    "inline",
    "__forceinline__",
    "struct",
];

impl<'a> CudaParser<'a> {
    #[cold]
    fn at_decl(&self) -> bool {
        match self.p.peek() {
            Tok::Ident(w) => {
                QUALIFIERS.contains(&w.as_str())
                    || self.types.lookup(w).is_some()
                    || (self.p.types.contains(w.as_str()) && !matches!(self.p.peek2(), Tok::Punct("(" | "::" | "{")))
                    || self.is_int_word(w)
                    || w == "auto"
                    || (w == "thread_block_tile" && matches!(self.p.peek2(), Tok::Punct("<")))
            }
            _ => false,
        }
    }

    #[cold]
    fn is_int_word(&self, w: &str) -> bool {
        matches!(w, "unsigned" | "signed" | "long" | "short")
    }

    /// `#define NAME value` becomes a constant; `#include` and `#pragma` lines are ignored.
    #[cold]
    pub(super) fn define(&mut self, line: &str, span: Span) -> Result<Option<Stmt>, InputError> {
        let src = self.p.src;
        let Some(rest) = line.strip_prefix("define") else {
            return Ok(None);
        };
        let rest_start = span.start
            + 1
            + (line.len() - rest.len())
            + (src[span.start + 1..].len() - src[span.start + 1..].trim_start().len());
        let rest = rest.trim_start();
        let name_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let name = &rest[..name_len];
        if name.is_empty() {
            return Err(InputError::at(src, span, "expected a name after #define"));
        }
        if rest[name_len..].starts_with('(') {
            return Err(InputError::at(src, span, "function-like macros are not supported; use a constant"));
        }
        let value_off = rest_start + name_len + (rest[name_len..].len() - rest[name_len..].trim_start().len());
        let value_text = rest[name_len..].trim();
        if value_text.is_empty() {
            return Ok(None);
        }
        // Parse the value as an expression with spans pointing into the original source.
        let mut toks = lex(value_text)?;
        for t in &mut toks {
            t.span = Span { start: t.span.start + value_off, end: t.span.end + value_off };
        }
        let mut sub = Parser::new(src, toks);
        sub.types = self.p.types.clone();
        let value = sub.ternary()?;
        let decl = Decl {
            name: name.into(),
            base: Ty::Int { bytes: 8, signed: true },
            pointers: 0,
            dims: Vec::new(),
            storage: Storage::Macro,
            init: Some(value),
            span,
            auto: false,
            reference: false,
            const_restrict: false,
            restrict: false,
        };
        Ok(Some(Stmt::Decl(vec![decl])))
    }

    #[cold]
    pub(super) fn struct_definition_ahead(&self) -> bool {
        // `struct Name {` or `struct {`, with `alignas(N)` or `__align__(N)` after `struct`, and `: Base`.
        let tok = |k: usize| &self.p.toks[k.min(self.p.toks.len() - 1)].tok;
        let mut k = self.p.pos + 1;
        if matches!(tok(k), Tok::Ident(w) if w == "alignas" || w == "__align__") {
            let mut depth = 0;
            k += 1;
            loop {
                match tok(k) {
                    Tok::Punct("(") => depth += 1,
                    Tok::Punct(")") => depth -= 1,
                    Tok::End => return false,
                    _ => {}
                }
                k += 1;
                if depth <= 0 {
                    break;
                }
            }
        }
        matches!(tok(k), Tok::Punct("{")) || matches!((tok(k), tok(k + 1)), (Tok::Ident(_), Tok::Punct("{")))
    }

    #[cold]
    pub(super) fn struct_def(&mut self) -> Result<(), InputError> {
        let typedef = self.p.at_word("typedef");
        if typedef {
            self.p.bump();
        }
        if !self.p.at_word("struct") {
            return Err(self.p.err("only `typedef struct { ... } Name;` typedefs are supported"));
        }
        self.p.bump();
        // `struct __align__(8) SumMax` / `struct alignas(16) V`: at least that alignment.
        let mut align = 1u64;
        if self.p.at_word("__align__") || self.p.at_word("alignas") {
            self.p.bump();
            self.p.expect("(", "after the alignment keyword")?;
            let e = self.p.ternary()?;
            let a = pre::const_eval(self.p.src, &e, &|_| None).ok().filter(|a| *a > 0 && (*a as u64).is_power_of_two());
            align =
                a.ok_or_else(|| InputError::at(self.p.src, e.span, "the alignment is a constant power of two"))? as u64;
            self.p.expect(")", "to close the alignment")?;
        }
        let mut name = match self.p.peek().clone() {
            Tok::Ident(n) => {
                self.p.bump();
                Some(n)
            }
            _ => None,
        };
        self.p.expect("{", "to open the struct")?;
        let mut fields = Vec::new();
        let mut off = 0u64;
        while !self.p.eat("}") {
            let tn = self.p.type_name()?;
            let base = self.resolve(&tn)?;
            let mut first = true;
            loop {
                let mut pointers = if first { tn.pointers } else { 0 };
                first = false;
                while self.p.eat("*") {
                    pointers += 1;
                }
                let fname = self.p.ident("a field name")?;
                let mut ty = wrap_ptr(base.clone(), pointers);
                let mut dims = Vec::new();
                while self.p.eat("[") {
                    let e = self.p.ternary()?;
                    let n = pre::const_eval(self.p.src, &e, &|_| None).ok().ok_or_else(|| {
                        InputError::at(self.p.src, e.span, "a struct field's array size must be a literal")
                    })?;
                    dims.push(n as u64);
                    self.p.expect("]", "to close the array size")?;
                }
                for &d in dims.iter().rev() {
                    ty = Ty::Array(Rc::new(ty), d);
                }
                let a = self.types.align(&ty);
                off = off.div_ceil(a) * a;
                align = align.max(a);
                fields.push((fname, ty.clone(), off));
                off += self.types.size(&ty);
                if !self.p.eat(",") {
                    break;
                }
            }
            self.p.expect(";", "after the field")?;
        }
        if typedef {
            name = Some(self.p.ident("the typedef's name")?);
        }
        let name = name.ok_or_else(|| self.p.err("the struct needs a name"))?;
        self.p.expect(";", "after the struct")?;
        let size = off.div_ceil(align) * align;
        self.types.push(StructDef { name: name.clone(), fields, size, align, ..StructDef::default() });
        self.p.types.insert(name);
        Ok(())
    }

    #[cold]
    pub(super) fn resolve(&self, tn: &TypeName) -> Result<Ty, InputError> {
        if tn.base == "auto" {
            return Ok(Ty::Void);
        }
        let at = self.p.prev_span();
        self.class_type(&tn.base, at)?
            .ok_or_else(|| InputError::at(self.p.src, at, format!("unknown type `{}`", tn.base)))
    }

    /// A function definition at the parser's position: qualifiers, return type, name, parameters, body.
    #[cold]
    fn function_def(&mut self, kind: FnKind) -> Result<FnDef, InputError> {
        loop {
            if self.p.at_word("__launch_bounds__") {
                self.p.bump();
                let close = self.matching_here()?;
                self.p.pos = close;
            } else if matches!(self.p.peek(), Tok::Ident(w) if FN_QUALIFIERS.contains(&w.as_str())) {
                self.p.bump();
            } else {
                break;
            }
        }
        let ret = if self.p.at_word("void") && !matches!(self.p.peek2(), Tok::Punct("*")) {
            self.p.bump();
            None
        } else {
            let tn = self.p.type_name()?;
            // A reference return (`float &vec_at(...)`) gives the value (as the call reads it).
            while self.p.eat("&") || self.p.eat("&&") {}
            Some(wrap_ptr(self.resolve(&tn)?, tn.pointers))
        };
        if kind == FnKind::Kernel && ret.is_some() {
            return Err(self.p.err("a __global__ kernel returns void"));
        }
        while self.p.at_word("__launch_bounds__") {
            self.p.bump();
            let close = self.matching_here()?;
            self.p.pos = close;
        }
        let name = self.p.ident("the function's name")?.to_string();
        if self.p.at("<") {
            self.p.template_args()?;
        }
        self.p.expect("(", "to open the parameter list")?;
        let mut params = Vec::new();
        if self.p.at_word("void") && matches!(self.p.peek2(), Tok::Punct(")")) {
            self.p.bump();
        }
        if !self.p.eat(")") {
            loop {
                let span = self.p.span();
                let first_tok = self.p.pos;
                let tn = self.p.type_name()?;
                let base = self.resolve(&tn)?;
                let mut pointers = tn.pointers;
                let mut reference = false;
                loop {
                    if self.p.eat("*") {
                        pointers += 1;
                    } else if self.p.eat("&") || self.p.eat("&&") {
                        // A reference names the caller's variable (`float4 &v`); `const T &x` only reads it.
                        reference = true;
                    } else if self.p.at_word("__restrict__") || self.p.at_word("const") || self.p.at_word("restrict") {
                        self.p.bump();
                    } else {
                        break;
                    }
                }
                let (restrict, const_restrict) = self.restrict(first_tok);
                let (restrict, const_restrict) = (restrict && pointers == 1, const_restrict && pointers == 1);
                // An unnamed parameter (a prototype's) gets a name no one can write.
                let name = match self.p.peek() {
                    Tok::Ident(_) => self.p.ident("a parameter name")?,
                    _ => format!("<parameter {}>", params.len() + 1),
                };
                // `float a[]` and `float a[N]` are a pointer; `float a[R][C]` a pointer to rows of C elements.
                let mut base = base;
                let mut rows: Vec<u64> = Vec::new();
                let mut first = true;
                while self.p.eat("[") {
                    if first {
                        while !self.p.eat("]") {
                            if matches!(self.p.peek(), Tok::End) {
                                return Err(self.p.err("expected `]`"));
                            }
                            self.p.bump();
                        }
                        first = false;
                        continue;
                    }
                    let e = self.p.ternary()?;
                    let n = pre::const_eval(self.p.src, &e, &|n| self.constants.get(n).copied()).map_err(|_| {
                        InputError::at(self.p.src, e.span, "an array parameter's inner size must be a constant")
                    })?;
                    rows.push(n.max(0) as u64);
                    self.p.expect("]", "to close the array size")?;
                }
                if !first {
                    base = wrap_ptr(base, pointers);
                    for &n in rows.iter().rev() {
                        base = Ty::Array(Rc::new(base), n);
                    }
                    pointers = 1;
                }
                // A default argument (`int n = 32`): the value a call without it passes.
                let init = if self.p.eat("=") { Some(self.p.assignment()?) } else { None };
                let span = Span { start: span.start, end: self.p.prev_span().end };
                params.push(Decl {
                    name: name.into(),
                    base,
                    pointers,
                    dims: Vec::new(),
                    storage: Storage::Param,
                    init,
                    span,
                    auto: false,
                    reference,
                    const_restrict,
                    restrict,
                });
                if self.p.eat(")") {
                    break;
                }
                self.p.expect(",", "between parameters")?;
            }
        }
        while !self.p.at("{") {
            if matches!(self.p.peek(), Tok::End) {
                return Err(self.p.err("expected `{` to open the function body"));
            }
            self.p.bump();
        }
        self.p.bump();
        let mut body = Vec::new();
        while !self.p.eat("}") {
            if matches!(self.p.peek(), Tok::End) {
                return Err(self.p.err("expected `}` to close the function body"));
            }
            body.push(self.statement(false)?);
        }
        let _ = name;
        Ok(FnDef { ret, params, body })
    }

    /// Whether the declarator from token `first` to the parser's position is `T * __restrict__`, and whether
    /// it is `const T * __restrict__`: `const` before the `*` (the pointee is read-only) and `__restrict__` after
    /// it (nothing else writes what it points to).
    fn restrict(&self, first: usize) -> (bool, bool) {
        let toks = &self.p.toks[first.min(self.p.pos)..self.p.pos];
        let Some(star) = toks.iter().position(|t| matches!(t.tok, Tok::Punct("*"))) else { return (false, false) };
        let word = |t: &crate::lang::lex::Token, w: &[&str]| matches!(&t.tok, Tok::Ident(x) if w.contains(&x.as_str()));
        let restrict = toks[star..].iter().any(|t| word(t, &["__restrict__", "restrict"]));
        (restrict, restrict && toks[..star].iter().any(|t| word(t, &["const"])))
    }

    /// The index past the parenthesis group that starts at the parser's next token.
    #[cold]
    fn matching_here(&self) -> Result<usize, InputError> {
        let mut depth = 0i32;
        let mut k = self.p.pos;
        loop {
            match &self.p.toks[k.min(self.p.toks.len() - 1)].tok {
                Tok::Punct("(") => depth += 1,
                Tok::Punct(")") => depth -= 1,
                Tok::End => return Err(self.p.err("expected `(` ... `)`")),
                _ => {}
            }
            k += 1;
            if depth <= 0 {
                return Ok(k);
            }
        }
    }

    #[cold]
    pub(super) fn statement(&mut self, top: bool) -> Result<Stmt, InputError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.p.err(format!("statements nested more than {MAX_NESTING} deep")));
        }
        let r = self.statement_inner(top);
        self.depth -= 1;
        r
    }

    #[cold]
    fn statement_inner(&mut self, top: bool) -> Result<Stmt, InputError> {
        if let Tok::Hash(line) = self.p.peek().clone() {
            let span = self.p.span();
            self.p.bump();
            return Ok(self.define(&line, span)?.unwrap_or(Stmt::Nop));
        }
        if self.p.eat(";") {
            return Ok(Stmt::Nop);
        }
        if self.p.eat("{") {
            let mut v = Vec::new();
            while !self.p.eat("}") {
                if matches!(self.p.peek(), Tok::End) {
                    return Err(self.p.err("expected `}` to close the block"));
                }
                v.push(self.statement(false)?);
            }
            return Ok(Stmt::Block(v));
        }
        if self.p.at_word("if") {
            self.p.bump();
            // `if constexpr (...)`: its condition is a constant, so only the taken side runs.
            if self.p.at_word("constexpr") {
                self.p.bump();
            }
            self.p.expect("(", "after `if`")?;
            let c = self.p.assignment()?;
            self.p.expect(")", "to close the condition")?;
            let then = self.statement(false)?;
            let els = if self.p.at_word("else") {
                self.p.bump();
                Some(Box::new(self.statement(false)?))
            } else {
                None
            };
            return Ok(Stmt::If(c, Box::new(then), els));
        }
        if self.p.at_word("for") {
            let span = self.p.span();
            self.p.bump();
            self.p.expect("(", "after `for`")?;
            let init = if self.p.eat(";") { None } else { Some(Box::new(self.simple_statement()?)) };
            let cond = if self.p.at(";") { None } else { Some(self.p.assignment()?) };
            self.p.expect(";", "after the loop condition")?;
            let step = if self.p.at(")") { None } else { Some(self.comma_expr()?) };
            self.p.expect(")", "to close the loop header")?;
            let body = self.statement(false)?;
            return Ok(Stmt::For(init, cond, step, Box::new(body), span));
        }
        if self.p.at_word("while") {
            let span = self.p.span();
            self.p.bump();
            self.p.expect("(", "after `while`")?;
            let c = self.p.assignment()?;
            self.p.expect(")", "to close the condition")?;
            let body = self.statement(false)?;
            return Ok(Stmt::While(c, Box::new(body), span));
        }
        if self.p.at_word("return") {
            let span = self.p.span();
            self.p.bump();
            let value = if self.p.at(";") { None } else { Some(self.comma_expr()?) };
            self.p.expect(";", "after `return`")?;
            return Ok(Stmt::Return(value, span));
        }
        for (word, s) in [("break", Stmt::Break), ("continue", Stmt::Continue)] {
            if self.p.at_word(word) {
                self.p.bump();
                self.p.expect(";", &format!("after `{word}`"))?;
                return Ok(s);
            }
        }
        if self.p.at_word("do") {
            // `do body while (c);` is `body` then `while (c) body`.
            let span = self.p.span();
            self.p.bump();
            let body = self.statement(false)?;
            if !self.p.at_word("while") {
                return Err(self.p.err(format!("expected `while` after the `do` body, found {}", self.p.describe())));
            }
            self.p.bump();
            self.p.expect("(", "after `while`")?;
            let c = self.p.assignment()?;
            self.p.expect(")", "to close the condition")?;
            self.p.expect(";", "after `do ... while (...)`")?;
            return Ok(Stmt::DoWhile(Box::new(body), c, span));
        }
        if self.p.at_word("static_assert") {
            while !self.p.eat(";") {
                if matches!(self.p.peek(), Tok::End) {
                    return Err(self.p.err("expected `;` after static_assert"));
                }
                self.p.bump();
            }
            return Ok(Stmt::Nop);
        }
        if ["asm", "__asm__", "__asm"].iter().any(|w| self.p.at_word(w)) {
            return self.asm();
        }
        // `namespace cg = cooperative_groups;` and `using namespace cg;` in a body (the aliases were read for
        // the whole file); `using T = float;` and `typedef float T;` name a type from here on.
        let alias_ahead = matches!(self.p.toks.get(self.p.pos + 2).map(|t| &t.tok), Some(Tok::Punct("=")));
        if (self.p.at_word("namespace") && alias_ahead) || (self.p.at_word("using") && !alias_ahead) {
            while !self.p.eat(";") {
                if matches!(self.p.peek(), Tok::End) {
                    return Err(self.p.err("expected `;`"));
                }
                self.p.bump();
            }
            return Ok(Stmt::Nop);
        }
        if (self.p.at_word("using") && alias_ahead)
            || (self.p.at_word("typedef") && !matches!(self.p.peek2(), Tok::Ident(w) if w == "struct"))
        {
            self.type_alias()?;
            return Ok(Stmt::Nop);
        }
        if self.p.at_word("switch") || self.p.at_word("goto") {
            return Err(self.p.err(format!("{} is not supported; use if, for or while", self.p.describe())));
        }
        let _ = top;
        self.simple_statement()
    }

    /// `asm volatile("PTX" : "=r"(out), ... : "r"(in), ... : "memory");` as a call of `__asm` whose arguments
    /// are the template's string pieces (their text is read from the source), then each output as
    /// `__asm_out("=r", out = __asm_data())` (an assignment, so every pass sees the variable written), then each
    /// input as `__asm_in("r", in)`. The lowering reads the template's instructions.
    #[cold]
    fn asm(&mut self) -> Result<Stmt, InputError> {
        let word = self.p.span();
        self.p.bump();
        while self.p.at_word("volatile") || self.p.at_word("__volatile__") || self.p.at_word("inline") {
            self.p.bump();
        }
        self.p.expect("(", "after `asm`")?;
        let mut args = Vec::new();
        let string = |p: &Parser| {
            let text = match p.peek() {
                Tok::Str(t) => t.clone(),
                _ => "".into(),
            };
            Ex { kind: E::Str(text), span: p.span(), op_span: p.span() }
        };
        while matches!(self.p.peek(), Tok::Str(_)) {
            args.push(string(&self.p));
            self.p.bump();
        }
        if args.is_empty() {
            return Err(self.p.err(format!("`asm` takes its PTX as a string, found {}", self.p.describe())));
        }
        // Outputs, inputs, clobbers; `::` skips a section.
        let mut section = 0;
        loop {
            if self.p.eat("::") {
                section += 2;
            } else if self.p.eat(":") {
                section += 1;
            } else {
                break;
            }
            while matches!(self.p.peek(), Tok::Str(_)) {
                let c = string(&self.p);
                self.p.bump();
                if section < 3 {
                    self.p.expect("(", "after an asm operand's constraint")?;
                    let e = self.p.assignment()?;
                    self.p.expect(")", "to close an asm operand")?;
                    let span = Span { start: c.span.start, end: e.span.end };
                    let (name, operand) = if section == 1 {
                        let data = Ex { kind: E::Call("__asm_data".into(), Vec::new()), span: e.span, op_span: e.span };
                        let assign = E::Assign(None, Box::new(e.clone()), Box::new(data));
                        ("__asm_out", Ex { kind: assign, span: e.span, op_span: e.span })
                    } else {
                        ("__asm_in", e)
                    };
                    args.push(Ex { kind: E::Call(name.into(), vec![c, operand]), span, op_span: span });
                }
                if !self.p.eat(",") {
                    break;
                }
            }
        }
        self.p.expect(")", "to close `asm(...)`")?;
        let span = Span { start: word.start, end: self.p.prev_span().end };
        self.p.expect(";", "after `asm(...)`")?;
        Ok(Stmt::Expr(Ex { kind: E::Call("__asm".into(), args), span, op_span: word }))
    }

    #[cold]
    fn comma_expr(&mut self) -> Result<Ex, InputError> {
        let mut e = self.p.assignment()?;
        while self.p.eat(",") {
            // `i++, j++`: evaluate both; keep the last as the value.
            let next = self.p.assignment()?;
            let span = Span { start: e.span.start, end: next.span.end };
            e = Ex { kind: E::Call("__comma".into(), vec![e, next]), span, op_span: span };
        }
        Ok(e)
    }

    /// A declaration or an expression, ending with `;`.
    #[cold]
    fn simple_statement(&mut self) -> Result<Stmt, InputError> {
        // `vec4 *in;` or `myint x;`: an unknown word used as a type.
        if let Tok::Ident(w) = self.p.peek().clone() {
            let tok = |k: usize| self.p.toks[(self.p.pos + k).min(self.p.toks.len() - 1)].tok.clone();
            let declarator_end = |t: Tok| matches!(t, Tok::Punct(";" | "," | "=" | "["));
            let looks_like_decl = matches!(tok(1), Tok::Ident(_)) && declarator_end(tok(2))
                || matches!(tok(1), Tok::Punct("*")) && matches!(tok(2), Tok::Ident(_)) && declarator_end(tok(3));
            if looks_like_decl && !self.at_decl() {
                return Err(self.p.err(format!("unknown type `{w}` (define structs before using them)")));
            }
        }
        if self.at_decl() {
            let d = self.declaration()?;
            return Ok(Stmt::Decl(d));
        }
        let e = self.comma_expr()?;
        self.p.expect(";", "after the statement")?;
        Ok(Stmt::Expr(e))
    }

    #[cold]
    fn declaration(&mut self) -> Result<Vec<Decl>, InputError> {
        let start = self.p.span();
        let mut storage = Storage::Reg;
        let mut is_const = false;
        // Qualifiers before the type.
        while let Tok::Ident(w) = self.p.peek().clone() {
            match w.as_str() {
                "__shared__" => storage = Storage::Shared,
                "__device__" => storage = Storage::Global,
                "__constant__" => storage = Storage::ConstMem,
                "const" => is_const = true,
                "extern" | "static" | "volatile" | "register" | "inline" | "__forceinline__" | "__restrict__"
                | "__host__" => {}
                "constexpr" => is_const = true,
                _ => break,
            }
            self.p.bump();
        }
        let tn = self.p.type_name()?;
        let base = self.resolve(&tn)?;
        let mut out = Vec::new();
        loop {
            let dspan = self.p.span();
            // `float *a, *b;`: the type parser took the first declarator's `*`; later ones count their own.
            let mut pointers = if out.is_empty() { tn.pointers } else { 0 };
            loop {
                if self.p.eat("*") {
                    pointers += 1;
                } else if self.p.at_word("__restrict__") || self.p.at_word("const") || self.p.at_word("restrict") {
                    self.p.bump();
                } else {
                    break;
                }
            }
            let name = self.p.ident("a variable name")?;
            let mut dims = Vec::new();
            while self.p.eat("[") {
                if self.p.eat("]") {
                    dims.push(None);
                    continue;
                }
                dims.push(Some(self.p.ternary()?));
                self.p.expect("]", "to close the array size")?;
            }
            // `= value`, `= {…}`, or C++'s `{…}` right after the name.
            let init = if self.p.eat("=") {
                Some(if self.p.at("{") { self.p.init_list()? } else { self.p.assignment()? })
            } else if self.p.at("{") {
                Some(self.p.init_list()?)
            } else {
                None
            };
            let st = match storage {
                Storage::Reg if is_const && dims.is_empty() && pointers == 0 && init.is_some() => Storage::Const,
                // A pointer declared without a value is a kernel parameter (`float *in;`).
                Storage::Reg if pointers > 0 && init.is_none() && dims.is_empty() => Storage::Param,
                s => s,
            };
            let span =
                Span { start: if out.is_empty() { start.start } else { dspan.start }, end: self.p.prev_span().end };
            let auto = tn.base == "auto";
            if auto && (init.is_none() || !dims.is_empty()) {
                return Err(InputError::at(self.p.src, span, "an `auto` variable needs an initial value"));
            }
            out.push(Decl {
                name: name.into(),
                base: base.clone(),
                pointers,
                dims,
                storage: st,
                init,
                span,
                auto,
                reference: false,
                const_restrict: false,
                restrict: false,
            });
            if !self.p.eat(",") {
                break;
            }
        }
        self.p.expect(";", "after the declaration")?;
        Ok(out)
    }
}

/// A file read to its top level: preprocessed, its types, functions, templates and launches indexed.
#[cold]
fn read<'s>(
    src: &'s str,
    main_len: usize,
    regions: &[(String, std::ops::Range<usize>)],
    sm: u32,
    vars: &crate::lang::expr::Vars,
) -> Result<(CudaParser<'s>, Vec<Stmt>), InputError> {
    let all = crate::lang::lex::lex_skippable(src)?;
    // The file's tokens, and each included header's (spliced in where it is included).
    let mut toks = Vec::new();
    let mut headers: Vec<(String, Vec<crate::lang::lex::Token>)> =
        regions.iter().map(|(n, _)| (n.clone(), Vec::new())).collect();
    for t in all {
        match regions.iter().position(|(_, r)| r.contains(&t.span.start)) {
            Some(k) if t.span.start >= main_len && !matches!(t.tok, Tok::End) => headers[k].1.push(t),
            _ => toks.push(t),
        }
    }
    // What nvcc defines in a device compilation for this architecture.
    let predefined = [
        ("__CUDA_ARCH__", i128::from(sm) * 10),
        ("__CUDACC__", 1),
        ("__NVCC__", 1),
        ("__CUDACC_VER_MAJOR__", 12),
        ("__CUDACC_VER_MINOR__", 9),
        ("NULL", 0),
    ];
    let (toks, macros) = pre::preprocess(src, toks, &predefined, vars, &headers)?;
    let toks = items::strip_namespaces(toks);
    let mut types_set: std::collections::HashSet<String> =
        crate::lang::cexpr::BUILTIN_TYPES.iter().map(|s| s.to_string()).collect();
    types_set.extend(VECTORS.iter().map(|v| v.0.to_string()));
    types_set.extend(GROUP_TYPES.iter().map(|v| v.to_string()));
    types_set.extend(["auto".to_string(), "thread_block_tile".to_string()]);
    // libcu++ and <type_traits> names kernels use as types (see `class`).
    const LIBRARY: [&str; 8] = [
        "barrier",
        "pipeline",
        "pipeline_shared_state",
        "bool_constant",
        "integral_constant",
        "true_type",
        "false_type",
        "aligned_size_t",
    ];
    types_set.extend(LIBRARY.iter().take(7).map(|s| s.to_string()));
    let mut parser = Parser::new(src, toks);
    parser.types = types_set;
    parser.templates = GROUP_TEMPLATES.iter().map(|s| s.to_string()).collect();
    // Texture and surface reads are templates (`tex1Dfetch<float>(t, i)`): parsed, then refused with the reason.
    parser.templates.extend(["tex1Dfetch", "tex1D", "tex2D", "tex3D", "tex2DLayered", "surf2Dread"].map(String::from));
    parser.templates.extend(LIBRARY.iter().filter(|n| !n.ends_with("_type")).map(|s| s.to_string()));
    let mut cp = CudaParser {
        p: parser,
        types: Types::with_groups(),
        depth: 0,
        files: FileItems::default(),
        macros: Rc::new(macros),
        deferred: None,
        constants: Default::default(),
    };
    let mut stmts = Vec::new();
    cp.top_level(&mut stmts)?;
    Ok((cp, stmts))
}

/// A file's kernels and its uninstantiated template kernels with example arguments (see [`kernel_list`]).
pub(super) type KernelList = (Vec<String>, Vec<(String, String)>);

/// A file's kernels, in its order: each kernel, a template kernel as each instance the file makes of it,
/// and the template kernels nothing instantiates with example arguments (name, `name<args>`).
#[cold]
fn kernel_list(items: &FileItems) -> KernelList {
    let mut kernels: Vec<String> = Vec::new();
    let mut uninstantiated = Vec::new();
    for f in items.fns.iter().filter(|f| f.kind == FnKind::Kernel && f.spec.is_none()) {
        if !f.is_template {
            kernels.push(f.name.clone());
            continue;
        }
        let before = kernels.len();
        let made = items
            .instances
            .iter()
            .map(|i| i.0.clone())
            .chain(items.launches.iter().map(|l| items::canonical(&l.kernel)));
        for inst in made {
            if inst.split('<').next() == Some(f.name.as_str()) && inst.contains('<') && !kernels.contains(&inst) {
                kernels.push(inst);
            }
        }
        if kernels.len() == before {
            uninstantiated.push((f.name.clone(), format!("{}<{}>", f.name, example_args(f))));
        }
    }
    (kernels, uninstantiated)
}

/// The kernels a page's menu offers for a file, read from its top level alone (no kernel's body is
/// lowered, so one that fails leaves the others choosable): each kernel or instance the file makes, then
/// each template kernel nothing instantiates, as (name, `name<example arguments>`).
#[cold]
pub(super) fn kernels(
    src: &str,
    main_len: usize,
    regions: &[(String, std::ops::Range<usize>)],
    sm: u32,
    vars: &crate::lang::expr::Vars,
) -> Result<KernelList, InputError> {
    let (cp, _) = read(src, main_len, regions, sm, vars)?;
    Ok(kernel_list(&cp.files))
}

/// A parsed snippet: its types and statements, with the body of one kernel (`kernel`, else the first).
#[cold]
pub(super) fn parse(
    src: &str,
    main_len: usize,
    regions: &[(String, std::ops::Range<usize>)],
    kernel: Option<&str>,
    sm: u32,
    vars: &crate::lang::expr::Vars,
) -> Result<Program, InputError> {
    let wanted = kernel.map(str::trim).filter(|k| !k.is_empty());
    let (cp, mut stmts) = read(src, main_len, regions, sm, vars)?;
    let CudaParser { p, types, files, macros, deferred, .. } = cp;
    let file = Rc::new(File {
        type_names: p.types.clone(),
        templates: p.templates.clone(),
        toks: p.toks,
        items: files,
        macros,
    });
    let items = &file.items;
    let (mut kernels, uninstantiated) = kernel_list(items);
    let launched = items.launches.iter().map(|l| items::canonical(&l.kernel)).find(|k| kernels.contains(k));
    let chosen = match wanted {
        Some(w) => {
            let w = items::canonical(w);
            let base = w.split('<').next().unwrap_or("").to_string();
            let template = items.fns.iter().find(|f| f.kind == FnKind::Kernel && f.is_template && f.name == base);
            if kernels.contains(&w) {
                Some(w)
            } else if let (Some(_), true) = (template, w.contains('<')) {
                // Any instance can be asked for, not only those the file makes.
                kernels.push(w.clone());
                Some(w)
            } else if let Some(first) = kernels.iter().find(|k| k.split('<').next() == Some(w.as_str())) {
                Some(first.clone())
            } else {
                let message = if let Some(t) = template {
                    format!("`{w}` is a template: give its arguments, e.g. --kernel '{w}<{}>'", example_args(t))
                } else if kernels.is_empty() {
                    format!("no kernel `{w}`: this snippet has no __global__ kernel")
                } else {
                    format!("no kernel `{w}` in this file (its kernels: {})", kernels.join(", "))
                };
                return Err(InputError::at(src, Span { start: 0, end: 1 }, message));
            }
        }
        None => launched.clone().or_else(|| kernels.first().cloned()),
    };
    if chosen.is_none() && !uninstantiated.is_empty() {
        let f = &uninstantiated[0].0;
        let item = items.fns.iter().find(|x| &x.name == f);
        let example = item.map_or("int".to_string(), example_args);
        return Err(InputError::at(
            src,
            item.map_or(Span { start: 0, end: 1 }, |x| x.span),
            format!("`{f}` is a template kernel that nothing in the file instantiates: choose its arguments with --kernel '{f}<{example}>' (for example), or add a launch or `template __global__ void {f}<…>(…);`"),
        ));
    }
    if chosen.is_some() {
        // In a file with kernels, the top level's variables are the host's (`float *d_A;`, `int n = 1024;`)
        // unless they are __device__, __constant__, __shared__ or constants, which kernels can use; and no
        // statement there is code.
        stmts.retain(|s| match s {
            Stmt::Decl(ds) => ds.iter().all(|d| !matches!(d.storage, Storage::Param | Storage::Reg)),
            _ => false,
        });
    } else if let Some(e) = deferred {
        return Err(e);
    }
    let kernel_start = stmts.len();
    let mut launch = None;
    if let Some(k) = &chosen {
        let base = k.split('<').next().unwrap_or("");
        let item = items
            .fns
            .iter()
            .find(|f| f.kind == FnKind::Kernel && f.spec.is_none() && f.name == base)
            .expect("a listed kernel is a function of the file");
        let args = k.find('<').map(|i| &k[i + 1..k.len() - 1]);
        let def = instantiate(src, &file, &types, item, args)?;
        stmts.extend(def.params.into_iter().map(|d| Stmt::Decl(vec![d])));
        stmts.extend(def.body);
        launch = items.launches.iter().find(|l| &items::canonical(&l.kernel) == k).cloned();
    }
    if stmts.is_empty() {
        let message = if items.fns.iter().any(|f| f.kind == FnKind::Host) {
            "this file has host code but no __global__ kernel: if its kernels are in an #include'd file, paste that file (warpscope reads one file)"
        } else {
            "the snippet has no statements: write a declaration and an access such as `float x = in[threadIdx.x];`"
        };
        return Err(InputError::at(src, Span { start: 0, end: 1 }, message));
    }
    Ok(Program { types, stmts, kernels, ran: chosen, kernel_start, file, launch, uninstantiated })
}

/// The type `name` names in the file, making a class a type when it is first named (see `class`).
#[cold]
pub(super) fn lookup_type(
    src: &str,
    file: &File,
    types: &Types,
    name: &str,
    at: Span,
) -> Result<Option<Ty>, InputError> {
    if let Some(t) = types.lookup(name) {
        return Ok(Some(t));
    }
    let mut p = Parser::new(src, vec![Token { tok: Tok::End, span: at }]);
    p.types = file.type_names.clone();
    p.templates = file.templates.clone();
    let cp = CudaParser {
        p,
        types: types.clone(),
        depth: 0,
        files: FileItems::default(),
        macros: Rc::clone(&file.macros),
        deferred: None,
        constants: Default::default(),
    };
    cp.class_type(name, at)
}

/// A member function of class `class` from its definition's tokens: a constructor parses as `void __ctor(...)`,
/// `operator[]` as `__index`, and a reference return as the value's type.
#[cold]
pub(super) fn method(src: &str, file: &File, types: &Types, class: &str, toks: &[Token]) -> Result<FnDef, InputError> {
    let open = toks.iter().position(|t| matches!(t.tok, Tok::Punct("("))).unwrap_or(toks.len());
    let mut out: Vec<Token> = Vec::with_capacity(toks.len() + 2);
    let mut k = 0;
    while k < toks.len() {
        let t = &toks[k];
        if k < open {
            match &t.tok {
                Tok::Punct("&") => {
                    k += 1;
                    continue;
                }
                Tok::Ident(w) if w == class && k + 1 == open => {
                    out.push(Token { tok: Tok::Ident("void".into()), span: t.span });
                    out.push(Token { tok: Tok::Ident("__ctor".into()), span: t.span });
                    k += 1;
                    continue;
                }
                Tok::Ident(w) if w == "operator" => {
                    out.push(Token { tok: Tok::Ident("__index".into()), span: t.span });
                    k = open;
                    continue;
                }
                _ => {}
            }
        }
        out.push(t.clone());
        k += 1;
    }
    let end = out.last().map_or(Span { start: 0, end: 1 }, |t| t.span);
    out.push(Token { tok: Tok::End, span: end });
    let mut p = Parser::new(src, out);
    p.types = file.type_names.clone();
    p.types.insert(class.to_string());
    p.templates = file.templates.clone();
    let mut cp = CudaParser {
        p,
        types: types.clone(),
        depth: 0,
        files: FileItems::default(),
        macros: Rc::clone(&file.macros),
        deferred: None,
        constants: Default::default(),
    };
    cp.function_def(FnKind::Device)
}

/// Example template arguments for `item`'s parameters: `int` for a type, the default or 256 for a value.
#[cold]
fn example_args(item: &FnItem) -> String {
    let v: Vec<String> = item
        .params
        .iter()
        .map(|p| match (&p.default, p.is_type) {
            (Some(d), _) => d
                .iter()
                .map(|t| match &t.tok {
                    Tok::Ident(w) => w.clone(),
                    Tok::Int(n) => n.to_string(),
                    Tok::Punct(x) => x.to_string(),
                    _ => String::new(),
                })
                .collect::<Vec<_>>()
                .join(" "),
            (None, true) => "int".to_string(),
            (None, false) => "256".to_string(),
        })
        .collect();
    v.join(", ")
}

/// What replaces a template parameter: a type's tokens as they are; a value in parentheses, converted to the
/// parameter's type when that is not `int` (`((unsigned int)(256))`), so that C's conversions follow it.
fn param_value(p: &super::syntax::TParam, value: &[Tok]) -> Vec<Tok> {
    if p.is_type {
        return value.to_vec();
    }
    let mut out = vec![Tok::Punct("(")];
    if !p.ty.is_empty() {
        out.push(Tok::Punct("("));
        out.extend(p.ty.iter().cloned());
        out.push(Tok::Punct(")"));
    }
    out.push(Tok::Punct("("));
    out.extend(value.iter().cloned());
    out.push(Tok::Punct(")"));
    out.push(Tok::Punct(")"));
    out
}

/// Parses function `item` with its template parameters replaced by `args` (`int, 256`).
#[cold]
pub(super) fn instantiate(
    src: &str,
    file: &File,
    types: &Types,
    item: &FnItem,
    args: Option<&str>,
) -> Result<FnDef, InputError> {
    let mut values: Vec<Vec<Tok>> = Vec::new();
    if let Some(args) = args.filter(|a| !a.trim().is_empty()) {
        let toks = lex(args).map_err(|e| {
            InputError::at(src, item.span, format!("in the template arguments `{args}`: {}", e.message))
        })?;
        let mut depth = 0;
        let mut cur = Vec::new();
        for t in toks {
            match t.tok {
                Tok::End => break,
                Tok::Punct("<" | "(") => depth += 1,
                Tok::Punct(">" | ")") => depth -= 1,
                Tok::Punct(",") if depth == 0 => {
                    values.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
            cur.push(t.tok);
        }
        values.push(cur);
    }
    if values.len() > item.params.len() {
        return Err(InputError::at(
            src,
            item.span,
            format!("`{}` takes {} template argument(s), given {}", item.name, item.params.len(), values.len()),
        ));
    }
    for k in values.len()..item.params.len() {
        let p = &item.params[k];
        match &p.default {
            // A default may name earlier parameters (`int S = N`): they are replaced first.
            Some(d) => {
                let mut v = Vec::new();
                for t in d {
                    match &t.tok {
                        Tok::Ident(w) if item.params[..k].iter().any(|q| &q.name == w) => {
                            let j = item.params.iter().position(|q| &q.name == w).expect("found");
                            v.extend(param_value(&item.params[j], &values[j]));
                        }
                        tok => v.push(tok.clone()),
                    }
                }
                values.push(v);
            }
            None => {
                let names: Vec<&str> = item.params.iter().map(|p| p.name.as_str()).collect();
                return Err(InputError::at(
                    src,
                    item.span,
                    format!(
                        "`{}` needs its template arguments ({}): e.g. --kernel '{}<{}>'",
                        item.name,
                        names.join(", "),
                        item.name,
                        example_args(item)
                    ),
                ));
            }
        }
    }
    let mut toks = Vec::with_capacity(item.toks.len() + 1);
    for t in &file.toks[item.toks.clone()] {
        if let Tok::Ident(w) = &t.tok {
            if let Some(i) = item.params.iter().position(|p| &p.name == w) {
                // A function's name given for a function-pointer parameter (`blockReduce<warpReduceSum>`)
                // stands as itself: the call through the parameter is a call of that function.
                let function =
                    matches!(values[i].as_slice(), [Tok::Ident(f)] if file.items.fns.iter().any(|x| &x.name == f));
                let value = if function { values[i].clone() } else { param_value(&item.params[i], &values[i]) };
                toks.extend(value.into_iter().map(|tok| Token { tok, span: t.span }));
                continue;
            }
        }
        toks.push(t.clone());
    }
    let end = toks.last().map_or(Span { start: 0, end: 1 }, |t| t.span);
    toks.push(Token { tok: Tok::End, span: end });
    let mut p = Parser::new(src, toks);
    p.types = file.type_names.clone();
    p.templates = file.templates.clone();
    let mut cp = CudaParser {
        p,
        types: types.clone(),
        depth: 0,
        files: FileItems::default(),
        macros: Rc::clone(&file.macros),
        deferred: None,
        constants: Default::default(),
    };
    cp.function_def(item.kind)
}
