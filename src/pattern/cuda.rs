//! CUDA snippets: declarations and accesses as a student writes them, run once per thread of the block.
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

use super::cexpr::{BinOp, Ex, Parser, TypeName, UnOp, E};
use super::expr::Vars;
use super::lex::{lex, Tok, VALUE_LIMIT};
use super::{InputError, Span};
use crate::access::Instr;
use crate::launch::{Launch, Thread};
use crate::report::Note;
use crate::trace::{Site, Trace, TraceBuilder};
use std::collections::HashMap;
use std::rc::Rc;

/// First cudaMalloc-like base address for global arrays; each further array starts 256 MB later.
pub const GLOBAL_BASE: u64 = 0x7000_0000_0000;
/// Distance between the base addresses of successive global arrays.
pub const GLOBAL_STRIDE: u64 = 0x1000_0000;
/// Statements and expressions one thread may evaluate before warpscope stops it.
pub const MAX_STEPS_PER_THREAD: u64 = 200_000;

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
                out.extend(self.kernel()?);
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
            storage: Storage::Const,
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

    fn kernel(&mut self) -> Result<Vec<Stmt>, InputError> {
        self.p.bump(); // __global__
        if !self.p.at_word("void") {
            return Err(self.p.err("a __global__ kernel returns void"));
        }
        self.p.bump();
        self.p.ident("the kernel's name")?;
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
        Ok(out)
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

// ----------------------------------------------------------------------------------------------------------
// Running it
// ----------------------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemSpace {
    Global,
    Shared,
    Local,
}

#[derive(Clone, Debug, PartialEq)]
struct Place {
    space: MemSpace,
    addr: i128,
    ty: Ty,
    read_only: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum Why {
    Data(Span),
    Float(Span),
    Param(Rc<str>, Span),
}

#[derive(Clone, Debug, PartialEq)]
enum Val {
    Int(i128),
    Unknown(Why),
    Ptr(Place),
}

#[derive(Clone, Debug)]
enum Slot {
    Val(Ty, Val),
    Mem(Place),
}

enum LRef {
    Var(String),
    Mem(Place),
}

#[derive(PartialEq)]
enum Flow {
    Next,
    Break,
    Continue,
    Return,
}

/// Placement decisions shared by all threads of the block.
/// One memory access of a value: its offset and size, and what its site is called.
struct UnitInfo {
    off: u64,
    size: u32,
    mnemonic: String,
    label: String,
}

struct Layout {
    /// The accesses each access expression makes (by span start, store, space, read-only), computed once for
    /// all threads: the type of an expression is the same in every thread.
    units: std::collections::BTreeMap<(usize, bool, u8, bool), Rc<[UnitInfo]>>,
    globals: HashMap<String, u64>,
    shared: HashMap<usize, u64>,
    local: HashMap<usize, u64>,
    shared_top: u64,
    local_top: u64,
    next_global: u64,
}

struct Exec<'a> {
    prog: &'a Program,
    src: &'a str,
    launch: Launch,
    thread: Thread,
    vars: &'a Vars,
    /// The thread's variables, innermost last; `marks` holds where each open scope starts. A thread has few
    /// variables, so a backwards scan beats hashing.
    scopes: Vec<(Rc<str>, Slot)>,
    marks: Vec<usize>,
    steps: u64,
    layout: &'a mut Layout,
    builder: &'a mut TraceBuilder,
    stmt: usize,
    counter: usize,
    lines: Vec<&'a str>,
}

type R<T> = Result<T, InputError>;

impl Exec<'_> {
    fn err(&self, span: Span, msg: impl Into<String>) -> InputError {
        InputError::at(self.src, span, msg)
    }

    fn tick(&mut self, span: Span) -> R<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS_PER_THREAD {
            return Err(self.err(
                span,
                format!(
                    "thread {} ran more than {MAX_STEPS_PER_THREAD} steps here; is a loop too long or endless?",
                    self.thread.linear
                ),
            ));
        }
        Ok(())
    }

    fn lookup(&self, name: &str) -> Option<&Slot> {
        self.scopes.iter().rev().find(|(n, _)| &**n == name).map(|(_, s)| s)
    }

    fn open_scope(&mut self) {
        self.marks.push(self.scopes.len());
    }

    fn close_scope(&mut self) {
        let m = self.marks.pop().unwrap_or(0);
        self.scopes.truncate(m);
    }

    fn why_text(&self, w: &Why) -> String {
        let pos = |s: &Span| {
            let line = self.src[..s.start.min(self.src.len())].matches('\n').count() + 1;
            format!("{line}:{}", super::cexpr::column_of(self.src, s.start))
        };
        match w {
            Why::Data(s) => format!("data loaded from memory at {}", pos(s)),
            Why::Float(s) => format!("a floating-point value ({})", pos(s)),
            Why::Param(n, _) => format!("the parameter `{n}`, which has no value (give it one with --set {n}=VALUE)"),
        }
    }

    fn int(&mut self, e: &Ex, what: &str) -> R<i128> {
        match self.rvalue(e)? {
            Val::Int(v) => Ok(v),
            Val::Unknown(w) => {
                let tail = if matches!(w, Why::Param(..)) { "" } else { "; warpscope follows addresses, not data" };
                Err(self.err(e.span, format!("{what} depends on {}{tail}", self.why_text(&w))))
            }
            Val::Ptr(_) => Err(self.err(e.span, format!("{what} is a pointer, not a number"))),
        }
    }

    fn run(&mut self, stmts: &[Stmt]) -> R<Flow> {
        for s in stmts {
            let f = self.stmt(s)?;
            if f != Flow::Next {
                return Ok(f);
            }
        }
        Ok(Flow::Next)
    }

    fn stmt(&mut self, s: &Stmt) -> R<Flow> {
        let start = stmt_start(s);
        if start != 0 || !matches!(s, Stmt::Block(_) | Stmt::Nop) {
            self.stmt = start;
            self.counter = 0;
        }
        match s {
            Stmt::Nop => Ok(Flow::Next),
            Stmt::Return => Ok(Flow::Return),
            Stmt::Break => Ok(Flow::Break),
            Stmt::Continue => Ok(Flow::Continue),
            Stmt::Expr(e) => {
                self.tick(e.span)?;
                self.rvalue(e)?;
                Ok(Flow::Next)
            }
            Stmt::Decl(ds) => {
                for d in ds {
                    self.declare(d)?;
                }
                Ok(Flow::Next)
            }
            Stmt::Block(v) => {
                self.open_scope();
                let f = self.run(v);
                self.close_scope();
                f
            }
            Stmt::If(c, t, e) => {
                self.tick(c.span)?;
                if self.int(c, "the condition")? != 0 {
                    self.stmt(t)
                } else if let Some(e) = e {
                    self.stmt(e)
                } else {
                    Ok(Flow::Next)
                }
            }
            Stmt::For(init, cond, step, body, span) => {
                self.open_scope();
                let r = self.for_loop(init.as_deref(), cond.as_ref(), step.as_ref(), body, *span);
                self.close_scope();
                r
            }
            Stmt::While(c, body, span) => {
                loop {
                    self.tick(*span)?;
                    self.stmt = span.start;
                    self.counter = 0;
                    if self.int(c, "the loop condition")? == 0 {
                        break;
                    }
                    match self.stmt(body)? {
                        Flow::Break => break,
                        Flow::Return => return Ok(Flow::Return),
                        _ => {}
                    }
                }
                Ok(Flow::Next)
            }
        }
    }

    fn for_loop(
        &mut self,
        init: Option<&Stmt>,
        cond: Option<&Ex>,
        step: Option<&Ex>,
        body: &Stmt,
        span: Span,
    ) -> R<Flow> {
        if let Some(i) = init {
            self.stmt(i)?;
        }
        loop {
            self.tick(span)?;
            self.stmt = span.start;
            self.counter = 0;
            if let Some(c) = cond {
                if self.int(c, "the loop condition")? == 0 {
                    break;
                }
            }
            match self.stmt(body)? {
                Flow::Break => break,
                Flow::Return => return Ok(Flow::Return),
                _ => {}
            }
            self.stmt = span.start;
            self.counter = 0;
            if let Some(s) = step {
                self.rvalue(s)?;
            }
        }
        Ok(Flow::Next)
    }

    fn declare(&mut self, d: &Decl) -> R<()> {
        self.tick(d.span)?;
        let types = &self.prog.types;
        let mut ty = wrap_ptr(d.base.clone(), d.pointers);
        for dim in d.dims.iter().rev() {
            let n = match dim {
                Some(e) => {
                    let n = self.int(e, "the array size")?;
                    if !(1..=1 << 30).contains(&n) {
                        return Err(self.err(e.span, format!("array size {n} is out of range (1..2^30)")));
                    }
                    n as u64
                }
                None => 0,
            };
            ty = Ty::Array(Rc::new(ty), n);
        }
        let slot = match d.storage {
            Storage::Shared => {
                let size = types.size(&ty);
                let align = types.align(&ty).max(16);
                let layout = &mut *self.layout;
                let off = *layout.shared.entry(d.span.start).or_insert_with(|| {
                    let off = layout.shared_top.div_ceil(align) * align;
                    layout.shared_top = off + size;
                    off
                });
                Slot::Mem(Place { space: MemSpace::Shared, addr: i128::from(off), ty, read_only: false })
            }
            Storage::Global if !d.dims.is_empty() => {
                let base = self.global_base(&d.name);
                Slot::Mem(Place { space: MemSpace::Global, addr: i128::from(base), ty, read_only: false })
            }
            Storage::Param | Storage::Global => match &ty {
                Ty::Ptr(elem) => {
                    let base = self.global_base(&d.name);
                    Slot::Val(
                        ty.clone(),
                        Val::Ptr(Place {
                            space: MemSpace::Global,
                            addr: i128::from(base),
                            ty: (**elem).clone(),
                            read_only: false,
                        }),
                    )
                }
                _ => match self.vars.get(&*d.name) {
                    Some(&v) => Slot::Val(ty, Val::Int(v)),
                    None => Slot::Val(ty, Val::Unknown(Why::Param(d.name.clone(), d.span))),
                },
            },
            Storage::Reg | Storage::Const if !d.dims.is_empty() => {
                // A local array lives in local memory, laid out per thread.
                let size = types.size(&ty);
                let align = types.align(&ty).max(4);
                let layout = &mut *self.layout;
                let off = *layout.local.entry(d.span.start).or_insert_with(|| {
                    let off = layout.local_top.div_ceil(align) * align;
                    layout.local_top = off + size;
                    off
                });
                Slot::Mem(Place { space: MemSpace::Local, addr: i128::from(off), ty, read_only: false })
            }
            Storage::Reg | Storage::Const => {
                let val = match (&d.init, self.vars.get(&*d.name)) {
                    (_, Some(&v)) if d.storage == Storage::Const => Val::Int(v),
                    (Some(e), _) => {
                        let v = self.rvalue(e)?;
                        self.convert(&ty, v, e.span)
                    }
                    (None, _) => Val::Unknown(Why::Param(d.name.clone(), d.span)),
                };
                Slot::Val(ty, val)
            }
        };
        // A redeclaration in the same scope replaces the variable; an inner scope shadows it.
        let from = self.marks.last().copied().unwrap_or(0);
        match self.scopes[from..].iter_mut().find(|(n, _)| **n == *d.name) {
            Some((_, old)) => *old = slot,
            None => self.scopes.push((d.name.clone(), slot)),
        }
        Ok(())
    }

    fn global_base(&mut self, name: &str) -> u64 {
        if let Some(&v) = self.vars.get(name) {
            return v as u64;
        }
        let layout = &mut *self.layout;
        *layout.globals.entry(name.to_string()).or_insert_with(|| {
            let b = layout.next_global;
            layout.next_global += GLOBAL_STRIDE;
            b
        })
    }

    /// Converts a value to a variable's type: integers wrap to the type's width as on the GPU.
    fn convert(&self, ty: &Ty, v: Val, span: Span) -> Val {
        match (ty, v) {
            (Ty::Int { bytes, signed }, Val::Int(x)) => Val::Int(wrap(x, *bytes, *signed)),
            (Ty::Float { .. }, Val::Int(_)) => Val::Unknown(Why::Float(span)),
            (Ty::Ptr(elem), Val::Ptr(p)) => Val::Ptr(Place { ty: (**elem).clone(), ..p }),
            (Ty::Ptr(elem), Val::Int(a)) => {
                Val::Ptr(Place { space: MemSpace::Global, addr: a, ty: (**elem).clone(), read_only: false })
            }
            (_, v) => v,
        }
    }

    /// The accesses reading or writing `place` makes, computed once per access expression.
    fn units_of(&mut self, place: &Place, store: bool, span: Span) -> R<Rc<[UnitInfo]>> {
        let key = (span.start, store, place.space as u8, place.read_only);
        if let Some(u) = self.layout.units.get(&key) {
            return Ok(u.clone());
        }
        let types = &self.prog.types;
        let mut units = Vec::new();
        types.units(&place.ty, "", &mut units);
        if units.is_empty() {
            return Err(self.err(
                span,
                format!("cannot {} a value of type {}", if store { "store" } else { "load" }, types.name(&place.ty)),
            ));
        }
        let infos: Rc<[UnitInfo]> = units
            .into_iter()
            .map(|(off, size, signed, label)| {
                let sz = match (size, signed) {
                    (1, true) => "S8",
                    (1, false) => "U8",
                    (2, true) => "S16",
                    (2, false) => "U16",
                    (4, _) => "32",
                    (8, _) => "64",
                    _ => "128",
                };
                let mnemonic = match (place.space, store) {
                    (MemSpace::Global, false) if place.read_only => format!("LDG.E.CONSTANT.{sz}"),
                    (MemSpace::Global, false) => format!("LDG.E.{sz}"),
                    (MemSpace::Global, true) => format!("STG.E.{sz}"),
                    (MemSpace::Shared, false) => format!("LDS.{sz}"),
                    (MemSpace::Shared, true) => format!("STS.{sz}"),
                    (MemSpace::Local, false) => format!("LDL.{sz}"),
                    (MemSpace::Local, true) => format!("STL.{sz}"),
                };
                UnitInfo { off, size, mnemonic, label }
            })
            .collect();
        self.layout.units.insert(key, infos.clone());
        Ok(infos)
    }

    fn record(&mut self, place: &Place, store: bool, span: Span) -> R<()> {
        let units = self.units_of(place, store, span)?;
        let counter = self.counter;
        self.counter += 1;
        let thread = self.thread.linear;
        let local = place.space == MemSpace::Local;
        for (k, u) in units.iter().enumerate() {
            let addr = place.addr + i128::from(u.off);
            if addr < 0 || addr > i128::from(u64::MAX) {
                return Err(self.err(span, format!("thread {thread}: the address {addr:#x} is outside memory")));
            }
            let _ = u.size;
            let key = (self.stmt, counter, span.start, k);
            let (src, lines) = (self.src, &self.lines);
            // The site's description is built only the first time any thread reaches it.
            let site = || {
                let at = span.start.min(src.len());
                let line = src[..at].matches('\n').count() + 1;
                Site {
                    line,
                    text: lines.get(line - 1).map_or("", |l| l.trim()).to_string(),
                    access: format!("{}{}", &src[at..span.end.min(src.len())], u.label),
                    instr: Instr::parse(&u.mnemonic)
                        .unwrap_or_else(|_| Instr::parse("LDG.E.32").expect("a valid mnemonic")),
                    notes: if local {
                        vec![Note {
                            id: "local-array",
                            text: "A local array is placed in local memory here; nvcc keeps it in registers when every index is known at compile time (for example in a fully unrolled loop)".into(),
                            source: "CUDA C++ Programming Guide, Local Memory",
                        }]
                    } else {
                        Vec::new()
                    },
                }
            };
            if let Err(m) = self.builder.record(key, thread, addr as u64, None, site) {
                return Err(self.err(span, m));
            }
        }
        Ok(())
    }

    fn load(&mut self, place: Place, span: Span) -> R<Val> {
        if let Ty::Array(elem, _) = &place.ty {
            return Ok(Val::Ptr(Place { ty: (**elem).clone(), ..place }));
        }
        self.record(&place, false, span)?;
        Ok(Val::Unknown(Why::Data(span)))
    }

    /// `threadIdx.x`, `blockDim.y`, `warpSize`, ... and `--set` values, unless a variable shadows them. Matched
    /// on the expression's shape, without building the dotted name.
    fn builtin(&self, e: &Ex) -> Option<i128> {
        match &e.kind {
            E::Member(base, field, false) => {
                let E::Name(obj) = &base.kind else { return None };
                if !matches!(obj.as_str(), "threadIdx" | "blockIdx" | "blockDim" | "gridDim")
                    || self.lookup(obj).is_some()
                {
                    return None;
                }
                let d = match obj.as_str() {
                    "threadIdx" => self.thread.tid,
                    "blockIdx" => self.thread.block,
                    "blockDim" => self.launch.block,
                    _ => self.launch.grid,
                };
                match field.as_str() {
                    "x" => Some(i128::from(d.x)),
                    "y" => Some(i128::from(d.y)),
                    "z" => Some(i128::from(d.z)),
                    _ => None,
                }
            }
            E::Name(n) if self.lookup(n).is_none() => match n.as_str() {
                "warpSize" => Some(32),
                _ => self.vars.get(n).copied(),
            },
            _ => None,
        }
    }

    fn rvalue(&mut self, e: &Ex) -> R<Val> {
        if let Some(v) = self.builtin(e) {
            return Ok(Val::Int(v));
        }
        match &e.kind {
            E::Int(n) => Ok(Val::Int(*n)),
            E::Float => Ok(Val::Unknown(Why::Float(e.span))),
            E::Name(n) => match self.lookup(n).cloned() {
                Some(Slot::Val(_, v)) => Ok(v),
                Some(Slot::Mem(p)) => self.load(p, e.span),
                None => Err(self
                    .err(e.span, format!("unknown name `{n}`: declare it, or give it a value with --set {n}=VALUE"))),
            },
            E::Index(..) | E::Member(..) | E::Unary(UnOp::Deref, _) => match self.lvalue(e)? {
                LRef::Mem(p) => self.load(p, e.span),
                LRef::Var(n) => match self.lookup(&n) {
                    Some(Slot::Val(_, Val::Int(v))) => Ok(Val::Int(*v)),
                    _ => Ok(Val::Unknown(Why::Data(e.span))),
                },
            },
            E::Unary(UnOp::AddrOf, a) => match self.lvalue(a)? {
                LRef::Mem(p) => Ok(Val::Ptr(p)),
                LRef::Var(n) => Err(self.err(e.span, format!("`{n}` lives in a register: it has no memory address"))),
            },
            E::Unary(op, a) => match self.rvalue(a)? {
                Val::Int(v) => Ok(Val::Int(match op {
                    UnOp::Neg => -v,
                    UnOp::Plus => v,
                    UnOp::Not => !v,
                    _ => i128::from(v == 0),
                })),
                Val::Ptr(p) if *op == UnOp::LNot => Ok(Val::Int(i128::from(p.addr == 0))),
                other => Ok(other),
            },
            E::Binary(op, a, b) => {
                let x = self.rvalue(a)?;
                match (op, &x) {
                    (BinOp::LAnd, Val::Int(0)) => return Ok(Val::Int(0)),
                    (BinOp::LOr, Val::Int(v)) if *v != 0 => return Ok(Val::Int(1)),
                    _ => {}
                }
                let y = self.rvalue(b)?;
                self.binary(*op, x, y, e)
            }
            E::Ternary(c, a, b) => {
                if self.int(c, "the condition")? != 0 {
                    self.rvalue(a)
                } else {
                    self.rvalue(b)
                }
            }
            E::Assign(op, lhs, rhs) => {
                let v = self.rvalue(rhs)?;
                let target = self.lvalue(lhs)?;
                self.assign(target, *op, v, lhs, e)
            }
            E::IncDec(prefix, inc, a) => {
                let target = self.lvalue(a)?;
                let one = Ex { kind: E::Int(1), span: e.span, op_span: e.op_span };
                let old = match &target {
                    LRef::Var(n) => match self.lookup(n) {
                        Some(Slot::Val(_, v)) => v.clone(),
                        _ => Val::Unknown(Why::Data(e.span)),
                    },
                    LRef::Mem(_) => Val::Unknown(Why::Data(e.span)),
                };
                let op = if *inc { BinOp::Add } else { BinOp::Sub };
                let new = self.assign(target, Some(op), Val::Int(1), a, &one)?;
                Ok(if *prefix { new } else { old })
            }
            E::Cast(tn, a) => {
                let v = self.rvalue(a)?;
                let base = self
                    .prog
                    .types
                    .lookup(&tn.base)
                    .ok_or_else(|| self.err(e.op_span, format!("unknown type `{}`", tn.base)))?;
                let ty = wrap_ptr(base, tn.pointers);
                Ok(self.convert(&ty, v, e.span))
            }
            E::SizeofType(tn) => {
                let base = self
                    .prog
                    .types
                    .lookup(&tn.base)
                    .ok_or_else(|| self.err(e.op_span, format!("unknown type `{}`", tn.base)))?;
                Ok(Val::Int(i128::from(self.prog.types.size(&wrap_ptr(base, tn.pointers)))))
            }
            E::Call(name, args) => self.call(name, args, e),
        }
    }

    fn binary(&mut self, op: BinOp, x: Val, y: Val, e: &Ex) -> R<Val> {
        let size = |p: &Place| i128::from(self.prog.types.size(&p.ty).max(1));
        match (x, y) {
            (Val::Int(a), Val::Int(b)) => op.apply(a, b).map(Val::Int).map_err(|m| self.err(e.op_span, m)),
            (Val::Ptr(p), Val::Int(i)) | (Val::Int(i), Val::Ptr(p)) if matches!(op, BinOp::Add) => {
                let addr = p.addr + i * size(&p);
                Ok(Val::Ptr(Place { addr, ..p }))
            }
            (Val::Ptr(p), Val::Int(i)) if op == BinOp::Sub => {
                let addr = p.addr - i * size(&p);
                Ok(Val::Ptr(Place { addr, ..p }))
            }
            (Val::Ptr(p), Val::Ptr(q)) => match op {
                BinOp::Sub => Ok(Val::Int((p.addr - q.addr) / size(&p))),
                _ => op.apply(p.addr, q.addr).map(Val::Int).map_err(|m| self.err(e.op_span, m)),
            },
            (Val::Unknown(w), _) | (_, Val::Unknown(w)) => Ok(Val::Unknown(w)),
            _ => Err(self.err(e.op_span, format!("`{}` does not apply to a pointer", op.symbol()))),
        }
    }

    fn assign(&mut self, target: LRef, op: Option<BinOp>, v: Val, lhs: &Ex, e: &Ex) -> R<Val> {
        match target {
            LRef::Var(n) => {
                let (ty, old) = match self.lookup(&n) {
                    Some(Slot::Val(t, v)) => (t.clone(), v.clone()),
                    _ => return Err(self.err(lhs.span, format!("cannot assign to `{n}`"))),
                };
                let new = match op {
                    None => v,
                    Some(op) => self.binary(op, old, v, e)?,
                };
                let new = self.convert(&ty, new, e.span);
                if let Some((_, slot)) = self.scopes.iter_mut().rev().find(|(name, _)| **name == *n) {
                    *slot = Slot::Val(ty, new.clone());
                }
                Ok(new)
            }
            LRef::Mem(p) => {
                if let Ty::Array(..) = p.ty {
                    return Err(self.err(lhs.span, "cannot assign to a whole array"));
                }
                if op.is_some() {
                    self.record(&p, false, lhs.span)?;
                }
                self.record(&p, true, lhs.span)?;
                Ok(Val::Unknown(Why::Data(lhs.span)))
            }
        }
    }

    fn lvalue(&mut self, e: &Ex) -> R<LRef> {
        match &e.kind {
            E::Name(n) => match self.lookup(n) {
                Some(Slot::Val(..)) => Ok(LRef::Var(n.clone())),
                Some(Slot::Mem(p)) => Ok(LRef::Mem(p.clone())),
                None => Err(self.err(e.span, format!("unknown name `{n}`"))),
            },
            E::Index(a, i) => {
                let base = self.rvalue(a)?;
                let idx = self.int(i, "the index")?;
                match base {
                    Val::Ptr(p) => {
                        let size = i128::from(self.prog.types.size(&p.ty));
                        Ok(LRef::Mem(Place { addr: p.addr + idx * size, ..p }))
                    }
                    Val::Unknown(w) => {
                        Err(self.err(a.span, format!("the array's address depends on {}", self.why_text(&w))))
                    }
                    Val::Int(_) => Err(self.err(a.span, "indexing something that is not an array or a pointer")),
                }
            }
            E::Unary(UnOp::Deref, a) => match self.rvalue(a)? {
                Val::Ptr(p) => Ok(LRef::Mem(p)),
                Val::Unknown(w) => Err(self.err(a.span, format!("the pointer depends on {}", self.why_text(&w)))),
                Val::Int(_) => Err(self.err(a.span, "dereferencing something that is not a pointer")),
            },
            E::Member(a, f, arrow) => {
                let base = if *arrow {
                    match self.rvalue(a)? {
                        Val::Ptr(p) => LRef::Mem(p),
                        _ => return Err(self.err(a.span, "`->` needs a pointer")),
                    }
                } else {
                    self.lvalue(a)?
                };
                match base {
                    LRef::Mem(p) => {
                        let (fty, off) = self.prog.types.field(&p.ty, f).ok_or_else(|| {
                            self.err(e.op_span, format!("type {} has no field `{f}`", self.prog.types.name(&p.ty)))
                        })?;
                        Ok(LRef::Mem(Place { addr: p.addr + i128::from(off), ty: fty, ..p }))
                    }
                    LRef::Var(n) => Ok(LRef::Var(n)),
                }
            }
            _ => Err(self.err(e.span, "this expression is not a variable or a memory location")),
        }
    }

    fn call(&mut self, name: &str, args: &[Ex], e: &Ex) -> R<Val> {
        match name {
            "__comma" => {
                let mut last = Val::Int(0);
                for a in args {
                    last = self.rvalue(a)?;
                }
                Ok(last)
            }
            "min" | "max" | "umin" | "umax" if args.len() == 2 => {
                let (a, b) = (self.rvalue(&args[0])?, self.rvalue(&args[1])?);
                match (a, b) {
                    (Val::Int(a), Val::Int(b)) => Ok(Val::Int(if name.ends_with("min") { a.min(b) } else { a.max(b) })),
                    (Val::Unknown(w), _) | (_, Val::Unknown(w)) => Ok(Val::Unknown(w)),
                    _ => Err(self.err(e.span, format!("`{name}` takes numbers"))),
                }
            }
            "abs" if args.len() == 1 => match self.rvalue(&args[0])? {
                Val::Int(v) => Ok(Val::Int(v.abs())),
                other => Ok(other),
            },
            "__ldg" | "__ldca" | "__ldcg" | "__ldcs" | "__ldlu" | "__ldcv" if args.len() == 1 => match self
                .rvalue(&args[0])?
            {
                Val::Ptr(p) => {
                    let read_only = name == "__ldg";
                    self.load(Place { read_only, ..p }, e.span)
                }
                Val::Unknown(w) => Err(self.err(args[0].span, format!("the pointer depends on {}", self.why_text(&w)))),
                Val::Int(_) => Err(self.err(args[0].span, format!("`{name}` takes a pointer"))),
            },
            "__syncthreads" | "__syncwarp" | "__threadfence" | "__threadfence_block" => {
                for a in args {
                    self.rvalue(a)?;
                }
                Ok(Val::Int(0))
            }
            "sqrtf" | "expf" | "sinf" | "cosf" | "fabsf" | "sqrt" | "exp" | "fmaf" | "__fdividef" => {
                for a in args {
                    self.rvalue(a)?;
                }
                Ok(Val::Unknown(Why::Float(e.span)))
            }
            _ if name.starts_with("atomic") => Err(self.err(e.op_span, format!("`{name}`: atomics are not modelled"))),
            _ => {
                Err(self
                    .err(e.op_span, format!("unknown function `{name}` (known: min, max, abs, __ldg, __syncthreads)")))
            }
        }
    }
}

fn wrap(x: i128, bytes: u32, signed: bool) -> i128 {
    let bits = bytes * 8;
    if bits >= 96 {
        return x;
    }
    let m = x.rem_euclid(1i128 << bits);
    if signed && m >= 1i128 << (bits - 1) {
        m - (1i128 << bits)
    } else {
        m
    }
}

/// Runs a CUDA snippet for every thread of one block and returns its memory trace.
pub fn trace(src: &str, launch: Launch, vars: &Vars) -> Result<Trace, InputError> {
    let toks = lex(src)?;
    let mut types_set: std::collections::HashSet<String> =
        super::cexpr::BUILTIN_TYPES.iter().map(|s| s.to_string()).collect();
    types_set.extend(VECTORS.iter().map(|v| v.0.to_string()));
    let mut parser = Parser::new(src, toks);
    parser.types = types_set;
    let mut cp = CudaParser { p: parser, types: Types { structs: Vec::new() }, depth: 0 };
    let stmts = cp.program()?;
    if stmts.is_empty() {
        return Err(InputError::at(
            src,
            Span { start: 0, end: 1 },
            "the snippet has no statements: write a declaration and an access such as `float x = in[threadIdx.x];`",
        ));
    }
    let prog = Program { types: cp.types, stmts };
    let mut layout = Layout {
        units: std::collections::BTreeMap::new(),
        globals: HashMap::new(),
        shared: HashMap::new(),
        local: HashMap::new(),
        shared_top: 0,
        local_top: 0,
        next_global: GLOBAL_BASE,
    };
    let mut builder = TraceBuilder::new(launch);
    let lines: Vec<&str> = src.lines().collect();
    for t in 0..launch.threads() {
        let mut ex = Exec {
            prog: &prog,
            src,
            launch,
            thread: launch.thread(t),
            vars,
            scopes: Vec::new(),
            marks: Vec::new(),
            steps: 0,
            layout: &mut layout,
            builder: &mut builder,
            stmt: 0,
            counter: 0,
            lines: lines.clone(),
        };
        ex.run(&prog.stmts)?;
    }
    let _ = VALUE_LIMIT;
    Ok(builder.finish())
}
