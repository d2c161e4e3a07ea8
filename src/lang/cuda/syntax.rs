//! The CUDA syntax tree: C's types (`Ty`; `Types`, a file's structs and type names, with each type's size,
//! alignment, fields and the memory accesses a value of it takes), declarations (`Decl`, with their
//! `Storage`), statements (`Stmt`) and a parsed function (`FnDef`). What the parser makes and the lowering
//! reads; nothing here reads tokens or emits operations. Expressions are C's expression tree
//! (`lang::cexpr::Ex`), which the expression language uses too.
//!
//! May import: `crate::text` (`lang::Span`), `lang::cexpr`'s expression tree and the standard library.
//!
//! Its functions are `#[cold]`: they run once per analysis, and LLVM then keeps them compact instead of
//! inlining into them, which keeps the page's analysis worker within its 300 KB budget (docs/performance.md,
//! the size budgets) while the executor stays optimised for speed.

use crate::lang::cexpr::Ex;
use crate::lang::lex::{Tok, Token};
use crate::lang::Span;
use std::rc::Rc;

/// A template parameter: `class T`, `unsigned int blockSize`, `int N = 32`.
#[derive(Clone, Debug)]
pub(super) struct TParam {
    pub name: String,
    pub is_type: bool,
    pub default: Option<Vec<Token>>,
    /// A value parameter's type when it is not `int` (`unsigned int blockSize`): its value is converted to it.
    pub ty: Vec<Tok>,
}

/// A class as the file defines it.
#[derive(Clone, Debug)]
pub(super) struct ClassTemplate {
    pub(super) name: String,
    pub(super) params: Vec<TParam>,
    /// `Name<args>` for an explicit specialization.
    pub(super) spec: Option<String>,
    /// Its tokens between the braces.
    pub(super) body: Rc<[Token]>,
    /// `alignas(N)`, as tokens.
    pub(super) align: Vec<Token>,
    pub(super) span: Span,
}

// ----------------------------------------------------------------------------------------------------------
// Types
// ----------------------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Ty {
    Int { bytes: u32, signed: bool },
    Float { bytes: u32 },
    Vector { elem: Rc<Ty>, n: u32, bytes: u32, align: u32 },
    Struct(usize),
    Ptr(Rc<Ty>),
    Array(Rc<Ty>, u64),
    Void,
}

#[derive(Clone, Debug, Default)]
pub(super) struct StructDef {
    pub(super) name: String,
    pub(super) fields: Vec<(String, Ty, u64)>,
    pub(super) size: u64,
    pub(super) align: u64,
    /// A class's member functions (constructors under the class's own name, `operator[]`), each a definition's
    /// tokens with the class's template arguments in place, parsed when called.
    pub(super) methods: Vec<Method>,
    /// `static constexpr` members with their values.
    pub(super) statics: Vec<(String, i128)>,
}

/// A member function of a class.
#[derive(Clone, Debug)]
pub(super) struct Method {
    /// Its name: `get_bits`, `operator[]`, or the class's own name for a constructor.
    pub(super) name: String,
    /// `static`: called without an object.
    pub(super) is_static: bool,
    /// Its definition from its return type (or the constructor's name) to its body's closing `}`.
    pub(super) toks: std::rc::Rc<[crate::lang::lex::Token]>,
}

#[cold]
pub(super) fn scalar(name: &str) -> Option<Ty> {
    let int = |bytes, signed| Some(Ty::Int { bytes, signed });
    match name {
        "char" | "signed char" | "int8_t" => int(1, true),
        "unsigned char" | "uint8_t" | "bool" => int(1, false),
        "short" | "short int" | "signed short" | "int16_t" => int(2, true),
        // `ushort`, `uint`, `ulong`: glibc's <sys/types.h> typedefs, which nvcc's host headers bring in.
        "unsigned short" | "unsigned short int" | "uint16_t" | "ushort" => int(2, false),
        "int" | "signed" | "signed int" | "int32_t" => int(4, true),
        "unsigned" | "unsigned int" | "uint32_t" | "uint" => int(4, false),
        "long" | "long int" | "long long" | "long long int" | "int64_t" | "ptrdiff_t" | "intptr_t" => int(8, true),
        "unsigned long"
        | "unsigned long long"
        | "unsigned long int"
        | "unsigned long long int"
        | "size_t"
        | "uint64_t"
        | "uintptr_t"
        | "ulong"
        // Texture and surface objects are 64-bit handles (cuda's texture_types.h); reading through one is
        // refused where it happens.
        | "cudaTextureObject_t"
        | "cudaSurfaceObject_t" => int(8, false),
        "float" => Some(Ty::Float { bytes: 4 }),
        "double" => Some(Ty::Float { bytes: 8 }),
        "half" | "__half" | "__nv_bfloat16" | "nv_bfloat16" => Some(Ty::Float { bytes: 2 }),
        "__nv_fp8_e4m3" | "__nv_fp8_e5m2" => Some(Ty::Float { bytes: 1 }),
        "void" => Some(Ty::Void),
        _ => vector(name),
    }
}

/// CUDA's vector types: (name, element, count, size, alignment) as in vector_types.h.
pub(super) const VECTORS: [(&str, &str, u32, u32, u32); 29] = [
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
    ("__nv_bfloat162", "half", 2, 4, 4),
    ("nv_bfloat162", "half", 2, 4, 4),
];

#[cold]
pub(super) fn vector(name: &str) -> Option<Ty> {
    VECTORS
        .iter()
        .find(|t| t.0 == name)
        .and_then(|&(_, elem, n, bytes, align)| Some(Ty::Vector { elem: Rc::new(scalar(elem)?), n, bytes, align }))
}

/// A file's struct types and type names. Clones share them: a class template instantiated while one function
/// is parsed (or lowered) is a type for every other.
#[derive(Clone)]
pub(super) struct Types {
    structs: Rc<std::cell::RefCell<Vec<StructDef>>>,
    /// `typedef` and `using` names.
    aliases: Rc<std::cell::RefCell<Vec<(String, Ty)>>>,
    /// The file's classes, made types when named (`class`).
    classes: Rc<std::cell::RefCell<Vec<ClassTemplate>>>,
}

/// cooperative_groups' handle types (after `cg::` is dropped).
pub(super) const GROUP_TYPES: [&str; 3] = ["thread_block", "coalesced_group", "thread_group"];

impl Types {
    #[cold]
    pub(super) fn size(&self, t: &Ty) -> u64 {
        match t {
            Ty::Int { bytes, .. } | Ty::Float { bytes } => u64::from(*bytes),
            Ty::Vector { bytes, .. } => u64::from(*bytes),
            Ty::Struct(i) => self.structs.borrow().get(*i).map_or(0, |s| s.size),
            Ty::Ptr(_) => 8,
            Ty::Array(e, n) => self.size(e).saturating_mul(*n),
            Ty::Void => 1,
        }
    }

    #[cold]
    pub(super) fn align(&self, t: &Ty) -> u64 {
        match t {
            Ty::Int { bytes, .. } | Ty::Float { bytes } => u64::from(*bytes),
            Ty::Vector { align, .. } => u64::from(*align),
            Ty::Struct(i) => self.structs.borrow().get(*i).map_or(1, |s| s.align),
            Ty::Ptr(_) => 8,
            Ty::Array(e, _) => self.align(e),
            Ty::Void => 1,
        }
    }

    #[cold]
    pub(super) fn lookup(&self, name: &str) -> Option<Ty> {
        scalar(name)
            .or_else(|| self.structs.borrow().iter().position(|s| s.name == name).map(Ty::Struct))
            .or_else(|| self.aliases.borrow().iter().find(|a| a.0 == name).map(|a| a.1.clone()))
    }

    /// Struct `i`'s definition.
    #[cold]
    pub(super) fn def(&self, i: usize) -> Option<StructDef> {
        self.structs.borrow().get(i).cloned()
    }

    /// Adds a struct type; its index.
    #[cold]
    pub(super) fn push(&self, def: StructDef) -> usize {
        let mut s = self.structs.borrow_mut();
        s.push(def);
        s.len() - 1
    }

    /// Adds a type name.
    #[cold]
    pub(super) fn alias(&self, name: String, ty: Ty) {
        self.aliases.borrow_mut().push((name, ty));
    }

    /// Replaces struct `i`'s definition (a class's placeholder by its layout).
    #[cold]
    pub(super) fn set(&self, i: usize, def: StructDef) {
        if let Some(d) = self.structs.borrow_mut().get_mut(i) {
            *d = def;
        }
    }

    /// The file's classes.
    #[cold]
    pub(super) fn classes(&self) -> Vec<ClassTemplate> {
        self.classes.borrow().clone()
    }

    /// Adds a class of the file.
    #[cold]
    pub(super) fn add_class(&self, c: ClassTemplate) {
        self.classes.borrow_mut().push(c);
    }

    /// Types with the cooperative_groups handles a kernel declares (`thread_block`, `thread_block_tile<32>`):
    /// structs with no fields, whose methods the lowering knows.
    #[cold]
    pub(super) fn with_groups() -> Types {
        let mut structs: Vec<StructDef> =
            GROUP_TYPES.iter().map(|n| StructDef { name: n.to_string(), align: 1, ..StructDef::default() }).collect();
        for n in [1, 2, 4, 8, 16, 32] {
            structs.push(StructDef { name: format!("thread_block_tile<{n}>"), align: 1, ..StructDef::default() });
        }
        Types { structs: Rc::new(std::cell::RefCell::new(structs)), aliases: Rc::default(), classes: Rc::default() }
    }

    #[cold]
    pub(super) fn name(&self, t: &Ty) -> String {
        match t {
            Ty::Int { bytes, signed } => format!("{}int{}", if *signed { "" } else { "u" }, bytes * 8),
            Ty::Float { bytes: 8 } => "double".into(),
            Ty::Float { bytes: 2 } => "half".into(),
            Ty::Float { .. } => "float".into(),
            Ty::Vector { elem, n, .. } => format!("{}{n}", self.name(elem)),
            Ty::Struct(i) => self.structs.borrow().get(*i).map_or("struct".into(), |s| s.name.clone()),
            Ty::Ptr(e) => format!("{}*", self.name(e)),
            Ty::Array(e, n) => format!("{}[{n}]", self.name(e)),
            Ty::Void => "void".into(),
        }
    }

    /// The memory accesses that reading or writing a value of type `t` takes: (offset, size, signed, label).
    #[cold]
    pub(super) fn units(&self, t: &Ty, label: &str, out: &mut Vec<(u64, u32, bool, String)>) {
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
                let fields = self.structs.borrow().get(*i).map(|s| s.fields.clone()).unwrap_or_default();
                let mut all = Vec::new();
                for (name, fty, off) in fields {
                    let mut sub = Vec::new();
                    self.units(&fty, &format!("{label}.{name}"), &mut sub);
                    all.extend(sub.into_iter().map(|(o, s, g, l)| (o + off, s, g, l)));
                }
                // A struct aligned to its own size of 8 or 16 bytes whose fields tile it in equal parts
                // (`struct alignas(16) Packed128 { float payload[4]; }`) is copied as one vector access, as nvcc
                // emits it (ld.v4.u32).
                let size = self.size(t);
                let whole = matches!(size, 8 | 16)
                    && self.align(t) == size
                    && all.first().is_some_and(|f| {
                        all.iter().enumerate().all(|(k, u)| u.1 == f.1 && u.0 == u64::from(f.1) * k as u64)
                    })
                    && all.len() as u64 * all.first().map_or(0, |f| u64::from(f.1)) == size;
                if whole {
                    out.push((0, size as u32, false, label.to_string()));
                } else {
                    out.extend(all);
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

    #[cold]
    pub(super) fn field(&self, t: &Ty, f: &str) -> Option<(Ty, u64)> {
        match t {
            Ty::Struct(i) => {
                let s = self.structs.borrow();
                s.get(*i)?.fields.iter().find(|(n, _, _)| n == f).map(|(_, ty, off)| (ty.clone(), *off))
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
// Declarations and statements
// ----------------------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Storage {
    Reg,
    Shared,
    Global,
    /// `__constant__`: global memory read through the constant cache (docs/model.md#constant-memory).
    ConstMem,
    Param,
    Const,
    /// `#define NAME value`: a constant of its value's type.
    Macro,
}

#[derive(Clone, Debug)]
pub(super) struct Decl {
    pub(super) name: Rc<str>,
    pub(super) base: Ty,
    pub(super) pointers: u32,
    pub(super) dims: Vec<Option<Ex>>,
    pub(super) storage: Storage,
    pub(super) init: Option<Ex>,
    pub(super) span: Span,
    /// `auto`: the type is the initial value's.
    pub(super) auto: bool,
    /// A reference (`float4 &v`, `const T &x`): a parameter that names the caller's variable.
    pub(super) reference: bool,
    /// A pointer declared `const T * __restrict__`: nothing in the kernel writes what it points to, and nvcc
    /// reads it through the read-only path (`ld.global.nc`, SASS `LDG.E.CONSTANT`; checked with NVRTC 12.9).
    pub(super) const_restrict: bool,
    /// A pointer parameter declared `__restrict__` (const or not).
    pub(super) restrict: bool,
}

#[derive(Clone, Debug)]
pub(super) enum Stmt {
    Decl(Vec<Decl>),
    Expr(Ex),
    If(Ex, Box<Stmt>, Option<Box<Stmt>>),
    For(Option<Box<Stmt>>, Option<Ex>, Option<Ex>, Box<Stmt>, Span),
    While(Ex, Box<Stmt>, Span),
    Block(Vec<Stmt>),
    Return(Option<Ex>, Span),
    DoWhile(Box<Stmt>, Ex, Span),
    Break,
    Continue,
    Nop,
}

/// A function parsed for a call or a launch: its parameters (as declarations) and body.
pub(super) struct FnDef {
    /// `None` for `void`.
    pub(super) ret: Option<Ty>,
    pub(super) params: Vec<Decl>,
    pub(super) body: Vec<Stmt>,
}

#[cold]
pub(super) fn stmt_start(s: &Stmt) -> usize {
    match s {
        Stmt::Decl(d) => d.first().map_or(0, |d| d.span.start),
        Stmt::Expr(e) | Stmt::If(e, ..) => e.span.start,
        Stmt::For(.., sp) | Stmt::While(.., sp) | Stmt::DoWhile(.., sp) | Stmt::Return(_, sp) => sp.start,
        _ => 0,
    }
}

/// Calls `f` on `s` and on every statement nested in it, in order.
pub(super) fn walk<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Stmt)) {
    f(s);
    match s {
        Stmt::If(_, a, b) => {
            walk(a, f);
            if let Some(b) = b {
                walk(b, f);
            }
        }
        Stmt::For(i, _, _, b, _) => {
            if let Some(i) = i {
                walk(i, f);
            }
            walk(b, f);
        }
        Stmt::While(_, b, _) | Stmt::DoWhile(b, _, _) => walk(b, f),
        Stmt::Block(v) => v.iter().for_each(|s| walk(s, f)),
        _ => {}
    }
}

#[cold]
pub(super) fn wrap_ptr(mut t: Ty, pointers: u32) -> Ty {
    for _ in 0..pointers {
        t = Ty::Ptr(Rc::new(t));
    }
    t
}
