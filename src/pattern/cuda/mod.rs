//! CUDA snippets: declarations and accesses as a student writes them, parsed here and lowered (`lower`) into
//! the program every language shares.
//!
//! ```text
//! __shared__ float tile[32][33];
//! float *in;
//! int i = blockIdx.x * blockDim.x + threadIdx.x;
//! tile[threadIdx.y][threadIdx.x] = in[i];
//! ```
//!
//! Every read of memory becomes a load and every write a store, of the element's width (a `float4` is one
//! 16-byte access; a `float3` or a struct is one access per field, as nvcc emits them). Global pointers get
//! 256-byte aligned, cudaMalloc-like base addresses unless `--set NAME=ADDR` gives one; shared arrays are
//! laid out from offset 0 of the shared window; local arrays in local memory. Values loaded from memory are
//! data: warpscope follows addresses, so an address or a branch that depends on loaded data is an error
//! that says where the data came from.

mod lower;

pub use lower::lower;

use super::cexpr::{Ex, Parser, TypeName, E};
use super::lex::{lex, Tok};
use super::{InputError, Span};
use std::rc::Rc;

pub use super::params::{GLOBAL_BASE, GLOBAL_STRIDE};

// ----------------------------------------------------------------------------------------------------------
// Types
// ----------------------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Ty {
    Int { bytes: u32, signed: bool },
    Float { bytes: u32 },
    Vector { elem: Rc<Ty>, n: u32, bytes: u32, align: u32 },
    Struct(usize),
    Ptr(Rc<Ty>),
    Array(Rc<Ty>, u64),
    Void,
}

#[derive(Clone, Debug)]
struct StructDef {
    name: String,
    fields: Vec<(String, Ty, u64)>,
    size: u64,
    align: u64,
}

fn scalar(name: &str) -> Option<Ty> {
    let int = |bytes, signed| Some(Ty::Int { bytes, signed });
    match name {
        "char" | "signed char" | "int8_t" => int(1, true),
        "unsigned char" | "uint8_t" | "bool" => int(1, false),
        "short" | "short int" | "signed short" | "int16_t" => int(2, true),
        "unsigned short" | "unsigned short int" | "uint16_t" => int(2, false),
        "int" | "signed" | "signed int" | "int32_t" => int(4, true),
        "unsigned" | "unsigned int" | "uint32_t" => int(4, false),
        "long" | "long int" | "long long" | "long long int" | "int64_t" => int(8, true),
        "unsigned long"
        | "unsigned long long"
        | "unsigned long int"
        | "unsigned long long int"
        | "size_t"
        | "uint64_t" => int(8, false),
        "float" => Some(Ty::Float { bytes: 4 }),
        "double" => Some(Ty::Float { bytes: 8 }),
        "half" | "__half" => Some(Ty::Float { bytes: 2 }),
        "void" => Some(Ty::Void),
        _ => vector(name),
    }
}

/// CUDA's vector types: (name, element, count, size, alignment) as in vector_types.h.
const VECTORS: [(&str, &str, u32, u32, u32); 27] = [
    ("char2", "char", 2, 2, 2),
    ("char4", "char", 4, 4, 4),
    ("uchar2", "unsigned char", 2, 2, 2),
    ("uchar4", "unsigned char", 4, 4, 4),
    ("short2", "short", 2, 4, 4),
    ("short4", "short", 4, 8, 8),
    ("ushort2", "unsigned short", 2, 4, 4),
    ("ushort4", "unsigned short", 4, 8, 8),
    ("int2", "int", 2, 8, 8),
    ("int3", "int", 3, 12, 4),
    ("int4", "int", 4, 16, 16),
    ("uint2", "unsigned int", 2, 8, 8),
    ("uint3", "unsigned int", 3, 12, 4),
    ("uint4", "unsigned int", 4, 16, 16),
    ("float2", "float", 2, 8, 8),
    ("float3", "float", 3, 12, 4),
    ("float4", "float", 4, 16, 16),
    ("double2", "double", 2, 16, 16),
    ("double3", "double", 3, 24, 8),
    ("double4", "double", 4, 32, 16),
    ("longlong2", "long long", 2, 16, 16),
    ("long2", "long", 2, 16, 16),
    ("ulong2", "unsigned long", 2, 16, 16),
    ("short3", "short", 3, 6, 2),
    ("char3", "char", 3, 3, 1),
    ("half2", "half", 2, 4, 4),
    ("__half2", "half", 2, 4, 4),
];

fn vector(name: &str) -> Option<Ty> {
    VECTORS
        .iter()
        .find(|t| t.0 == name)
        .and_then(|&(_, elem, n, bytes, align)| Some(Ty::Vector { elem: Rc::new(scalar(elem)?), n, bytes, align }))
}

struct Types {
    structs: Vec<StructDef>,
}

impl Types {
    fn size(&self, t: &Ty) -> u64 {
        match t {
            Ty::Int { bytes, .. } | Ty::Float { bytes } => u64::from(*bytes),
            Ty::Vector { bytes, .. } => u64::from(*bytes),
            Ty::Struct(i) => self.structs.get(*i).map_or(0, |s| s.size),
            Ty::Ptr(_) => 8,
            Ty::Array(e, n) => self.size(e).saturating_mul(*n),
            Ty::Void => 1,
        }
    }

    fn align(&self, t: &Ty) -> u64 {
        match t {
            Ty::Int { bytes, .. } | Ty::Float { bytes } => u64::from(*bytes),
            Ty::Vector { align, .. } => u64::from(*align),
            Ty::Struct(i) => self.structs.get(*i).map_or(1, |s| s.align),
            Ty::Ptr(_) => 8,
            Ty::Array(e, _) => self.align(e),
            Ty::Void => 1,
        }
    }

    fn lookup(&self, name: &str) -> Option<Ty> {
        scalar(name).or_else(|| self.structs.iter().position(|s| s.name == name).map(Ty::Struct))
    }

    fn name(&self, t: &Ty) -> String {
        match t {
            Ty::Int { bytes, signed } => format!("{}int{}", if *signed { "" } else { "u" }, bytes * 8),
            Ty::Float { bytes: 8 } => "double".into(),
            Ty::Float { bytes: 2 } => "half".into(),
            Ty::Float { .. } => "float".into(),
            Ty::Vector { elem, n, .. } => format!("{}{n}", self.name(elem)),
            Ty::Struct(i) => self.structs.get(*i).map_or("struct".into(), |s| s.name.clone()),
            Ty::Ptr(e) => format!("{}*", self.name(e)),
            Ty::Array(e, n) => format!("{}[{n}]", self.name(e)),
            Ty::Void => "void".into(),
        }
    }

    /// The memory accesses that reading or writing a value of type `t` takes: (offset, size, signed, label).
    fn units(&self, t: &Ty, label: &str, out: &mut Vec<(u64, u32, bool, String)>) {
        match t {
            Ty::Int { bytes, signed } => out.push((0, *bytes, *signed, label.to_string())),
            Ty::Float { bytes } => out.push((0, *bytes, false, label.to_string())),
            Ty::Ptr(_) => out.push((0, 8, false, label.to_string())),
            Ty::Vector { elem, n, bytes, align } => {
                if bytes == align && matches!(bytes, 2 | 4 | 8 | 16) {
                    out.push((0, *bytes, false, label.to_string()));
                } else if *bytes == 32 && *align == 16 {
                    out.push((0, 16, false, format!("{label} (first half)")));
                    out.push((16, 16, false, format!("{label} (second half)")));
                } else {
                    let es = self.size(elem);
                    for k in 0..*n {
                        let mut sub = Vec::new();
                        self.units(elem, &format!("{label}.{}", ["x", "y", "z", "w"][k as usize % 4]), &mut sub);
                        out.extend(sub.into_iter().map(|(o, s, g, l)| (o + es * u64::from(k), s, g, l)));
                    }
                }
            }
            Ty::Struct(i) => {
                let fields = self.structs.get(*i).map(|s| s.fields.clone()).unwrap_or_default();
                for (name, fty, off) in fields {
                    let mut sub = Vec::new();
                    self.units(&fty, &format!("{label}.{name}"), &mut sub);
                    out.extend(sub.into_iter().map(|(o, s, g, l)| (o + off, s, g, l)));
                }
            }
            Ty::Array(e, n) => {
                let es = self.size(e);
                for k in 0..*n {
                    let mut sub = Vec::new();
                    self.units(e, &format!("{label}[{k}]"), &mut sub);
                    out.extend(sub.into_iter().map(|(o, s, g, l)| (o + es * k, s, g, l)));
                }
            }
            Ty::Void => {}
        }
    }

    fn field(&self, t: &Ty, f: &str) -> Option<(Ty, u64)> {
        match t {
            Ty::Struct(i) => {
                let s = self.structs.get(*i)?;
                s.fields.iter().find(|(n, _, _)| n == f).map(|(_, ty, off)| (ty.clone(), *off))
            }
            Ty::Vector { elem, n, .. } => {
                let k = ["x", "y", "z", "w"].iter().position(|c| *c == f)? as u32;
                (k < *n).then(|| ((**elem).clone(), self.size(elem) * u64::from(k)))
            }
            _ => None,
        }
    }
}

// ----------------------------------------------------------------------------------------------------------
// The program
// ----------------------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Storage {
    Reg,
    Shared,
    Global,
    Param,
    Const,
    /// `#define NAME value`: a constant of its value's type.
    Macro,
}

#[derive(Clone, Debug)]
struct Decl {
    name: Rc<str>,
    base: Ty,
    pointers: u32,
    dims: Vec<Option<Ex>>,
    storage: Storage,
    init: Option<Ex>,
    span: Span,
}

#[derive(Clone, Debug)]
enum Stmt {
    Decl(Vec<Decl>),
    Expr(Ex),
    If(Ex, Box<Stmt>, Option<Box<Stmt>>),
    For(Option<Box<Stmt>>, Option<Ex>, Option<Ex>, Box<Stmt>, Span),
    While(Ex, Box<Stmt>, Span),
    Block(Vec<Stmt>),
    Return,
    Break,
    Continue,
    Nop,
}

struct Program {
    types: Types,
    stmts: Vec<Stmt>,
    /// The file's `__global__` kernels, in order.
    kernels: Vec<String>,
    /// The one whose body `stmts` holds.
    ran: Option<String>,
}

fn stmt_start(s: &Stmt) -> usize {
    match s {
        Stmt::Decl(d) => d.first().map_or(0, |d| d.span.start),
        Stmt::Expr(e) | Stmt::If(e, ..) => e.span.start,
        Stmt::For(.., sp) | Stmt::While(.., sp) => sp.start,
        _ => 0,
    }
}

struct CudaParser<'a> {
    p: Parser<'a>,
    types: Types,
    depth: u32,
    /// The kernel to keep (`--kernel`); the first when `None`.
    wanted: Option<&'a str>,
    /// Every kernel seen, and the one kept.
    kernels: Vec<String>,
    ran: Option<String>,
}

/// Statements (blocks, ifs, loops) nested deeper than this are refused rather than risking the stack.
pub const MAX_NESTING: u32 = 64;

const QUALIFIERS: [&str; 13] = [
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
    fn at_decl(&self) -> bool {
        match self.p.peek() {
            Tok::Ident(w) => QUALIFIERS.contains(&w.as_str()) || self.types.lookup(w).is_some() || self.is_int_word(w),
            _ => false,
        }
    }

    fn is_int_word(&self, w: &str) -> bool {
        matches!(w, "unsigned" | "signed" | "long" | "short")
    }

    fn program(&mut self) -> Result<Vec<Stmt>, InputError> {
        let mut out = Vec::new();
        while !matches!(self.p.peek(), Tok::End) {
            if let Tok::Hash(line) = self.p.peek().clone() {
                let span = self.p.span();
                self.p.bump();
                if let Some(d) = self.define(&line, span)? {
                    out.push(d);
                }
                continue;
            }
            if self.p.at_word("typedef") || (self.p.at_word("struct") && self.struct_definition_ahead()) {
                self.struct_def()?;
                continue;
            }
            if self.p.at_word("template") {
                return Err(self.p.err("templates are not supported: write the kernel with concrete types"));
            }
            if self.p.at_word("__global__") {
                // Only the chosen kernel's body is run: a file's other kernels are listed, not merged in.
                let (name, body) = self.kernel()?;
                self.kernels.push(name.clone());
                let keep = match self.wanted {
                    Some(w) => self.ran.is_none() && super::params::find_kernel(w, &[name.as_str()]).is_some(),
                    None => self.ran.is_none(),
                };
                if keep {
                    out.extend(body);
                    self.ran = Some(name);
                }
                continue;
            }
            out.push(self.statement(true)?);
        }
        Ok(out)
    }

    /// `#define NAME value` becomes a constant; `#include` and `#pragma` lines are ignored.
    fn define(&mut self, line: &str, span: Span) -> Result<Option<Stmt>, InputError> {
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
        };
        Ok(Some(Stmt::Decl(vec![decl])))
    }

    fn struct_definition_ahead(&self) -> bool {
        // `struct Name {` or `struct {`.
        let t1 = &self.p.toks[(self.p.pos + 1).min(self.p.toks.len() - 1)].tok;
        let t2 = &self.p.toks[(self.p.pos + 2).min(self.p.toks.len() - 1)].tok;
        matches!(t1, Tok::Punct("{")) || matches!((t1, t2), (Tok::Ident(_), Tok::Punct("{")))
    }

    fn struct_def(&mut self) -> Result<(), InputError> {
        let typedef = self.p.at_word("typedef");
        if typedef {
            self.p.bump();
        }
        if !self.p.at_word("struct") {
            return Err(self.p.err("only `typedef struct { ... } Name;` typedefs are supported"));
        }
        self.p.bump();
        if self.p.at_word("__align__") {
            return Err(self.p.err("__align__ is not supported; the struct gets C's natural alignment"));
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
        let (mut off, mut align) = (0u64, 1u64);
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
                    let n = const_eval(&e).ok_or_else(|| {
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
        self.types.structs.push(StructDef { name: name.clone(), fields, size, align });
        self.p.types.insert(name);
        Ok(())
    }

    fn resolve(&self, tn: &TypeName) -> Result<Ty, InputError> {
        self.types
            .lookup(&tn.base)
            .ok_or_else(|| InputError::at(self.p.src, self.p.prev_span(), format!("unknown type `{}`", tn.base)))
    }

    fn kernel(&mut self) -> Result<(String, Vec<Stmt>), InputError> {
        self.p.bump(); // __global__
        if !self.p.at_word("void") {
            return Err(self.p.err("a __global__ kernel returns void"));
        }
        self.p.bump();
        let name = self.p.ident("the kernel's name")?.to_string();
        if self.p.at_word("__launch_bounds__") {
            self.p.bump();
            self.p.expect("(", "after __launch_bounds__")?;
            while !self.p.eat(")") {
                self.p.bump();
            }
        }
        self.p.expect("(", "to open the parameter list")?;
        let mut out = Vec::new();
        if !self.p.eat(")") {
            loop {
                let span = self.p.span();
                let tn = self.p.type_name()?;
                let base = self.resolve(&tn)?;
                let mut pointers = tn.pointers;
                while self.p.eat("*")
                    || self.p.at_word("__restrict__") && {
                        self.p.bump();
                        true
                    }
                {
                    pointers += 1;
                }
                let name = self.p.ident("a parameter name")?;
                let span = Span { start: span.start, end: self.p.prev_span().end };
                out.push(Stmt::Decl(vec![Decl {
                    name: name.into(),
                    base,
                    pointers,
                    dims: Vec::new(),
                    storage: Storage::Param,
                    init: None,
                    span,
                }]));
                if self.p.eat(")") {
                    break;
                }
                self.p.expect(",", "between parameters")?;
            }
        }
        self.p.expect("{", "to open the kernel body")?;
        while !self.p.eat("}") {
            if matches!(self.p.peek(), Tok::End) {
                return Err(self.p.err("expected `}` to close the kernel body"));
            }
            out.push(self.statement(false)?);
        }
        Ok((name, out))
    }

    fn statement(&mut self, top: bool) -> Result<Stmt, InputError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.p.err(format!("statements nested more than {MAX_NESTING} deep")));
        }
        let r = self.statement_inner(top);
        self.depth -= 1;
        r
    }

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
        for (word, s) in [("return", Stmt::Return), ("break", Stmt::Break), ("continue", Stmt::Continue)] {
            if self.p.at_word(word) {
                self.p.bump();
                if word == "return" && !self.p.at(";") {
                    return Err(self.p.err("a kernel returns nothing: write `return;`"));
                }
                self.p.expect(";", &format!("after `{word}`"))?;
                return Ok(s);
            }
        }
        if self.p.at_word("do") || self.p.at_word("switch") || self.p.at_word("goto") {
            return Err(self.p.err(format!("{} is not supported; use if, for or while", self.p.describe())));
        }
        let _ = top;
        self.simple_statement()
    }

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

    fn declaration(&mut self) -> Result<Vec<Decl>, InputError> {
        let start = self.p.span();
        let mut storage = Storage::Reg;
        let mut is_const = false;
        // Qualifiers before the type.
        while let Tok::Ident(w) = self.p.peek().clone() {
            match w.as_str() {
                "__shared__" => storage = Storage::Shared,
                "__device__" | "__constant__" => storage = Storage::Global,
                "const" => is_const = true,
                "extern" | "static" | "volatile" | "register" | "inline" | "__forceinline__" | "__restrict__" => {}
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
            let init = if self.p.eat("=") {
                if self.p.at("{") {
                    return Err(self.p.err("brace initialisers are not supported"));
                }
                Some(self.p.assignment()?)
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
            out.push(Decl { name: name.into(), base: base.clone(), pointers, dims, storage: st, init, span });
            if !self.p.eat(",") {
                break;
            }
        }
        self.p.expect(";", "after the declaration")?;
        Ok(out)
    }
}

fn wrap_ptr(mut t: Ty, pointers: u32) -> Ty {
    for _ in 0..pointers {
        t = Ty::Ptr(Rc::new(t));
    }
    t
}

fn const_eval(e: &Ex) -> Option<i128> {
    match &e.kind {
        E::Int(n) => Some(*n),
        E::Binary(op, a, b) => op.apply(const_eval(a)?, const_eval(b)?).ok(),
        _ => None,
    }
}

/// A parsed snippet: its types and statements, with the body of one kernel (`kernel`, else the first).
fn parse(src: &str, kernel: Option<&str>) -> Result<Program, InputError> {
    let toks = lex(src)?;
    let mut types_set: std::collections::HashSet<String> =
        super::cexpr::BUILTIN_TYPES.iter().map(|s| s.to_string()).collect();
    types_set.extend(VECTORS.iter().map(|v| v.0.to_string()));
    let mut parser = Parser::new(src, toks);
    parser.types = types_set;
    let wanted = kernel.map(str::trim).filter(|k| !k.is_empty());
    let mut cp = CudaParser {
        p: parser,
        types: Types { structs: Vec::new() },
        depth: 0,
        wanted,
        kernels: Vec::new(),
        ran: None,
    };
    let stmts = cp.program()?;
    if let (Some(w), None) = (wanted, &cp.ran) {
        let message = if cp.kernels.is_empty() {
            format!("no kernel `{w}`: this snippet has no __global__ kernel")
        } else {
            format!("no kernel `{w}` in this file (its kernels: {})", cp.kernels.join(", "))
        };
        return Err(InputError::at(src, Span { start: 0, end: 1 }, message));
    }
    if stmts.is_empty() {
        return Err(InputError::at(
            src,
            Span { start: 0, end: 1 },
            "the snippet has no statements: write a declaration and an access such as `float x = in[threadIdx.x];`",
        ));
    }
    Ok(Program { types: cp.types, stmts, kernels: cp.kernels, ran: cp.ran })
}
