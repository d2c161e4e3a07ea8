//! CUDA snippets lowered into the shared program: C's types and conversions decide every operation's width
//! and signedness once, here; control flow becomes branches the SIMT machine runs with divergence.
//!
//! Values: integers and pointers live in registers (a pointer holds the address in its space, and its static
//! type says which space and what it points to); floating-point values are registers marked unknown;
//! structs and vectors held in variables are a register per scalar field. Memory places (arrays, shared
//! and local variables, `*p`, `p->f`) are an address and a type; reading one records a load per access unit
//! (a `float3` is three 4-byte loads, as nvcc emits them), and its value is data: unknown, with where it came
//! from, so that an address or a branch that depends on it is an error naming that place.
//!
//! Its functions are `#[cold]`: they run once per analysis, and LLVM then keeps them compact instead of
//! inlining into them, which keeps the page's analysis worker within its 300 KB budget (docs/performance.md,
//! the size budgets) while the executor stays optimised for speed.
//!
//! May import: `syntax`, `parse` (device functions and templates are parsed on demand while lowering), `file`,
//! `lang::{cexpr, expr, layout, params}`, `program`, `model::{access, note}`.

use super::items::FnKind;
use super::{
    instantiate, stmt_start, wrap_ptr, Decl, FnDef, Program as Ast, Stmt, Storage, Ty, Types, GLOBAL_BASE,
    GLOBAL_STRIDE,
};
use crate::lang::cexpr::{BinOp as CBin, Ex, UnOp, E};
use crate::lang::expr::Vars;
use crate::lang::{InputError, LineIndex, Span};
use crate::model::access::Instr;
use crate::model::note::Note;
use crate::program::launch::Launch;
#[cfg(feature = "data")]
use crate::program::memory::ArrayDecl;
use crate::program::memory::Elem;
use crate::program::{
    exec, BinOp, Builder, Cmp, Label, Load, Op, PredOp, PredRef, Program, Reg, ShflMode, Site, Special, Src, Width,
};
use std::collections::HashMap;
use std::rc::Rc;

/// Why a cp.async that reads fewer bytes than it writes is refused (the PTX ISA's src-size and ignore-src,
/// `__pipeline_memcpy_async`'s zfill): its global read depends on a size warpscope does not model.
pub(crate) const ZERO_FILL: &str = "a cp.async that reads fewer bytes than it copies (src-size, ignore-src or zfill: the rest is zero-filled) is not modelled; warpscope refuses it rather than count the full copy";

type R<T> = Result<T, InputError>;

// The lowering, one idea a file: statements and control flow, declarations and types, expressions, calls
// and templates, intrinsics. Each holds methods of `Lower`.
mod call;
mod decl;
mod expr;
mod intrinsics;
mod stmt;

use intrinsics::math_result;

/// Calls nested deeper than this are refused (a recursive function would never end).
const MAX_CALL_DEPTH: usize = 16;

/// A type as C spells it (for template arguments).
#[cold]
fn c_name(t: &Types, ty: &Ty) -> String {
    match ty {
        Ty::Int { bytes, signed } => {
            let base = match bytes {
                1 => "char",
                2 => "short",
                8 => "long long",
                _ => "int",
            };
            if *signed {
                base.to_string()
            } else {
                format!("unsigned {base}")
            }
        }
        Ty::Ptr(e) => format!("{} *", c_name(t, e)),
        Ty::Vector { .. } => super::VECTORS
            .iter()
            .find(|v| super::vector(v.0).as_ref() == Some(ty))
            .map_or_else(|| t.name(ty), |v| v.0.to_string()),
        other => t.name(other),
    }
}

/// The element type of the undeclared array `n` from how a fragment uses it: the declared type of the
/// variable it is read into or written from, or of the array it is copied from or to. With where it was
/// told.
#[cold]
fn infer_elem(ast: &Ast, n: &str) -> Option<(Ty, String)> {
    // Every statement, nested ones too; the declarations among them give the declared types.
    let mut stmts = Vec::new();
    for s in &ast.stmts {
        super::walk(s, &mut |x| stmts.push(x));
    }
    let all: Vec<&Decl> =
        stmts.iter().filter_map(|s| if let Stmt::Decl(ds) = s { Some(ds) } else { None }).flatten().collect();
    let declared = |x: &str| -> Option<Ty> {
        let d = all.iter().find(|d| &*d.name == x && !d.auto)?;
        let mut t = wrap_ptr(d.base.clone(), d.pointers);
        for _ in &d.dims {
            t = Ty::Array(Rc::new(t), 0);
        }
        Some(t)
    };
    let is_n = |e: &Ex| matches!(&e.kind, E::Index(a, _) if matches!(&a.kind, E::Name(m) if m == n));
    // The type of the other side: a declared variable, an element of a declared array or pointer.
    let other = |e: &Ex| -> Option<Ty> {
        match &e.kind {
            E::Name(x) => declared(x).filter(|t| !matches!(t, Ty::Array(..))),
            E::Index(a, _) => match &a.kind {
                E::Name(x) => match declared(x)? {
                    Ty::Ptr(t) | Ty::Array(t, _) => Some((*t).clone()),
                    _ => None,
                },
                _ => None,
            },
            E::Float => Some(Ty::Float { bytes: 4 }),
            _ => None,
        }
    };
    // The expressions: each initialiser with its declaration, and each expression statement.
    let mut es: Vec<(&Ex, Option<&Decl>)> = Vec::new();
    for s in &stmts {
        match s {
            Stmt::Decl(ds) => es.extend(ds.iter().filter_map(|d| d.init.as_ref().map(|i| (i, Some(d))))),
            Stmt::Expr(e) => es.push((e, None)),
            _ => {}
        }
    }
    for (e, d) in es {
        if let Some(d) = d.filter(|d| is_n(e) && !d.auto && d.dims.is_empty()) {
            return Some((
                wrap_ptr(d.base.clone(), d.pointers),
                format!("the type of `{}`, which it is read into", d.name),
            ));
        }
        if let E::Assign(_, lhs, rhs) = &e.kind {
            if is_n(rhs) {
                if let Some(t) = other(lhs) {
                    return Some((t, "the type of what it is read into".to_string()));
                }
            }
            if is_n(lhs) {
                if let Some(t) = other(rhs) {
                    return Some((t, "the type of what is written into it".to_string()));
                }
            }
        }
    }
    None
}

/// Splits template argument text on its top-level commas.
#[cold]
fn split_args(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut depth = 0;
    for c in text.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().expect("one").push(c);
    }
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemSpace {
    Global,
    /// `__constant__` memory: read through the constant cache, which warpscope does not cost (an LDC).
    Const,
    Shared,
    Local,
    /// A local array nvcc keeps in registers (every index known at compile time once loops with constant
    /// trip counts are unrolled, see `regs`): laid out like local memory, but its accesses move no memory.
    Reg,
}

/// CUDA's texture and surface functions (CUDA C++ Programming Guide, Texture and Surface Functions).
const TEXTURE_FUNCTIONS: [&str; 22] = [
    "tex1Dfetch",
    "tex1D",
    "tex2D",
    "tex3D",
    "tex1DLayered",
    "tex2DLayered",
    "texCubemap",
    "texCubemapLayered",
    "tex2Dgather",
    "tex1DLod",
    "tex2DLod",
    "tex3DLod",
    "tex1DGrad",
    "tex2DGrad",
    "tex3DGrad",
    "surf1Dread",
    "surf2Dread",
    "surf3Dread",
    "surf1Dwrite",
    "surf2Dwrite",
    "surf3Dwrite",
    "surfCubemapread",
];

/// An integer type after C's rules: its width in bits and signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct IntTy {
    bits: u8,
    signed: bool,
}

impl IntTy {
    const INT: IntTy = IntTy { bits: 32, signed: true };
    const UINT: IntTy = IntTy { bits: 32, signed: false };
    const LLONG: IntTy = IntTy { bits: 64, signed: true };
    const ULLONG: IntTy = IntTy { bits: 64, signed: false };

    /// Integer promotion: types narrower than `int` become `int`.
    #[cold]
    fn promoted(self) -> IntTy {
        if self.bits < 32 {
            IntTy::INT
        } else {
            self
        }
    }

    #[cold]
    fn width(self) -> Width {
        if self.promoted().bits <= 32 {
            Width::W32
        } else {
            Width::W64
        }
    }

    /// The usual arithmetic conversions.
    #[cold]
    fn common(a: IntTy, b: IntTy) -> IntTy {
        let (a, b) = (a.promoted(), b.promoted());
        if a == b {
            return a;
        }
        if a.bits == b.bits {
            return IntTy { bits: a.bits, signed: false };
        }
        // The wider type wins; a 64-bit signed type holds every 32-bit unsigned value.
        if a.bits > b.bits {
            a
        } else {
            b
        }
    }

    #[cold]
    fn of(t: &Ty) -> Option<IntTy> {
        match t {
            Ty::Int { bytes, signed } => Some(IntTy { bits: (*bytes * 8).min(64) as u8, signed: *signed }),
            _ => None,
        }
    }

    /// The type of an integer literal (or `--set` value): `int` when it fits, else `long long`, else
    /// `unsigned long long`.
    #[cold]
    fn of_literal(v: i128) -> IntTy {
        if i32::try_from(v).is_ok() {
            IntTy::INT
        } else if i64::try_from(v).is_ok() {
            IntTy::LLONG
        } else {
            IntTy::ULLONG
        }
    }
}

/// A value: where it is (a register or a constant) and its C type.
#[derive(Clone, Debug)]
enum Val {
    Int(Src, IntTy),
    /// A floating-point value (always unknown).
    Float(Src),
    Ptr {
        src: Src,
        to: Ty,
        space: MemSpace,
        read_only: bool,
    },
    /// A struct or vector held in registers: (offset, field value) for every scalar field.
    Agg {
        ty: Ty,
        leaves: Vec<(u64, Val)>,
    },
}

impl Val {
    #[cold]
    fn src(&self) -> Option<Src> {
        match self {
            Val::Int(s, _) | Val::Float(s) | Val::Ptr { src: s, .. } => Some(*s),
            Val::Agg { .. } => None,
        }
    }
}

/// A memory location: its space, its address there, and its type.
#[derive(Clone, Debug)]
struct Place {
    space: MemSpace,
    addr: Src,
    ty: Ty,
    read_only: bool,
}

#[derive(Clone, Debug)]
enum Binding {
    /// A register variable: its type and its registers (as a value).
    Var { ty: Ty, val: Val },
    /// A variable in memory (arrays, shared and local variables).
    Mem(Place),
    /// A constant (`#define`, `const`, `--set`).
    Const(Val),
}

enum LRef {
    Var(usize),
    Mem(Place),
}

/// One memory access of a value: its offset and size, and what its site is called.
struct Unit {
    off: u64,
    mnemonic: String,
    label: String,
}

struct Lower<'a> {
    b: Builder,
    ast: &'a Ast,
    src: &'a str,
    vars: &'a Vars,
    launch: Launch,
    lines: LineIndex<'a>,
    /// Variables, innermost last; `marks` holds where each open scope starts.
    scopes: Vec<(Rc<str>, Binding)>,
    marks: Vec<usize>,
    globals: HashMap<String, u64>,
    next_global: u64,
    /// Global bases given with `--set`, in declaration order: checked against the others' defaults.
    given_bases: Vec<(String, u64)>,
    /// Global arrays and pointer parameters, where data can be given.
    #[cfg(feature = "data")]
    arrays: Vec<ArrayDecl>,
    shared_top: u64,
    /// `__constant__` variables' offsets in the constant bank, in declaration order, and where the next goes.
    const_offsets: HashMap<String, u64>,
    const_top: u64,
    local_top: u64,
    /// The statement being lowered (its start) and the accesses so far in it: sites sort by these.
    stmt: usize,
    seq: usize,
    /// (continue, break) targets of the loops around.
    loops: Vec<(Label, Label)>,
    /// Parameters that took a default value, as `name = value`.
    defaulted: Vec<String>,
    /// Registers and predicates that may hold an unknown value at some point (a conservative, flow-blind
    /// guess made while emitting). A value that is surely known needs no check with a message of its own: the
    /// memory operation and the branch still stop on an unknown value, so skipping the check never lets a
    /// wrong number through; it only skips work.
    maybe_unknown: Vec<bool>,
    maybe_unknown_pred: Vec<bool>,
    /// `__device__` functions parsed so far, by name with template arguments.
    fns: HashMap<String, Rc<FnDef>>,
    /// The inlined calls being lowered, innermost last.
    frames: Vec<Frame>,
    /// How many bindings the file's top level made (a called function sees those and its parameters).
    globals_end: usize,
    /// Calls inlined so far: each call's memory operations are sites of their own.
    calls: usize,
    /// The current call's offset in site keys.
    salt: usize,
    /// Memory operations warpscope does not count (atomics): (line, op).
    uncosted: Vec<(usize, String)>,
    /// The architecture compiled for (`__CUDA_ARCH__` / 10): before Maxwell nvcc makes an ordinary global load
    /// a generic `LD.E`, keeping `LDG` for the read-only path.
    sm: u32,
    /// While an atomic's target is evaluated: an index that depends on data is allowed (a histogram's
    /// `&bins[in[i]]`); the run then reports that atomic as not counted instead of stopping.
    data_index_ok: bool,
    /// Names a fragment uses without declaring them, and what warpscope took them for.
    assumed: Vec<String>,
    /// Where dynamic shared memory was first used, if it was.
    dynamic_shared: Option<Span>,
    /// Where dynamic shared memory starts, when a first pass found it (see `lower_kernel`).
    dynamic_base: Option<u64>,
    /// A static shared array was declared after dynamic shared memory was used.
    static_after_dynamic: bool,
    /// Where the file's own text ends (included headers follow it): code in a header is attributed to the line
    /// of the file that reaches it.
    main_len: usize,
    /// Where each local array lives (by its declaration's start): registers or local memory (`regs`).
    homes: HashMap<usize, super::regs::Home>,
    /// The classes whose member functions are being run, innermost last (their other members are in scope).
    class_stack: Vec<usize>,
    /// Each parsed member function's class (by the definition's address).
    fns_class: HashMap<usize, usize>,
    /// The next free byte of the registers that hold arrays and class objects (a space of its own, so that
    /// local memory's layout is what nvcc's would be).
    reg_top: u64,
    /// The arrays declared so far, where they live, in words (a note).
    array_homes: Vec<String>,
    /// Unknown names and functions met so far: each is an error, reported together once the kernel has been
    /// read to its end (with an unknown value standing in, so that the rest is read).
    unsupported: Vec<InputError>,
    /// Where in the text the last access's line was read (see `site_line`).
    site_at: usize,
    /// The included headers' places in the text: (name, range).
    regions: &'a [(String, std::ops::Range<usize>)],
    /// The position of the assignment operator of the store (or read-modify-write) being lowered: its line
    /// is the access's (see `site_line`).
    store_at: Option<usize>,
    /// The cache operator of the access being lowered, set by the cache-hint intrinsics (`__ldcs` is
    /// `ld.global.cs`, SASS `LDG.E.CS`) for their one access.
    cop: Option<&'static str>,
    /// Kernel parameters the file's launch passes a constant for.
    launch_values: HashMap<String, i128>,
    /// Those used, as `name = value`.
    from_launch: Vec<String>,
}

/// An inlined call: where `return` goes and the variable that receives its value.
struct Frame {
    end: Label,
    ret: Option<(Ty, Binding)>,
    /// Whether a `return` with a value was lowered (which fixed a returned pointer's space).
    returned: bool,
}

fn frame_returned(l: &Lower) -> bool {
    l.frames.last().is_some_and(|f| f.returned)
}

#[cold]
fn set_flag(v: &mut Vec<bool>, i: u32, on: bool) {
    let i = i as usize;
    if v.len() <= i {
        v.resize(i + 1, false);
    }
    v[i] = on;
}

#[cold]
fn types<'a>(l: &Lower<'a>) -> &'a Types {
    &l.ast.types
}

impl<'a> Lower<'a> {
    #[cold]
    pub(super) fn err(&self, span: Span, msg: impl Into<String>) -> InputError {
        InputError::at(self.src, span, msg)
    }

    #[cold]
    pub(super) fn pos(&self, s: Span) -> String {
        self.lines.pos(s.start)
    }

    #[cold]
    pub(super) fn emit(&mut self, op: Op, span: Span) {
        self.track(&op);
        self.b.emit(op, None, span);
    }

    #[cold]
    pub(super) fn unknown_src(&self, s: Src) -> bool {
        match s {
            Src::Reg(r) => self.maybe_unknown.get(r as usize).copied().unwrap_or(false),
            Src::Imm(_) => false,
        }
    }

    #[cold]
    pub(super) fn unknown_pred(&self, p: PredRef) -> bool {
        p.idx.is_some_and(|i| self.maybe_unknown_pred.get(i as usize).copied().unwrap_or(false))
    }

    /// Notes which registers an operation may make unknown.
    #[cold]
    pub(super) fn track(&mut self, op: &Op) {
        let (dst, unknown) = match op {
            Op::Unknown { dst, .. } | Op::Peek { dst, .. } => (Some(*dst), true),
            Op::Mem { data: Some(l), .. } => (Some(l.dst), true),
            Op::Bin { dst, a, b, .. } => (Some(*dst), self.unknown_src(*a) || self.unknown_src(*b)),
            Op::Index { dst, base, idx, .. } => (Some(*dst), self.unknown_src(*base) || self.unknown_src(*idx)),
            Op::Conv { dst, a, .. } | Op::Mov { dst, a } => (Some(*dst), self.unknown_src(*a)),
            Op::Sel { dst, p, a, b } => {
                (Some(*dst), self.unknown_pred(*p) || self.unknown_src(*a) || self.unknown_src(*b))
            }
            Op::PredToReg { dst, p } => (Some(*dst), self.unknown_pred(*p)),
            Op::Setp { dst, a, b, .. } => {
                let u = self.unknown_src(*a) || self.unknown_src(*b);
                set_flag(&mut self.maybe_unknown_pred, *dst, u);
                (None, false)
            }
            Op::PredLogic { dst, a, b, .. } => {
                let u = self.unknown_pred(*a) || self.unknown_pred(*b);
                set_flag(&mut self.maybe_unknown_pred, *dst, u);
                (None, false)
            }
            _ => (None, false),
        };
        if let Some(d) = dst {
            // Once a variable may be unknown, it stays so: the guess ignores which assignment runs last.
            let was = self.maybe_unknown.get(d as usize).copied().unwrap_or(false);
            set_flag(&mut self.maybe_unknown, d, unknown || was && !self.b.is_temp(d));
        }
    }

    #[cold]
    pub(super) fn temp(&mut self) -> Reg {
        self.b.temp()
    }

    #[cold]
    pub(super) fn bin(&mut self, op: BinOp, w: Width, a: Src, b: Src, span: Span) -> Src {
        if let (Src::Imm(x), Src::Imm(y)) = (a, b) {
            if let Some(v) = exec::bin(op, w, x, y) {
                return Src::Imm(v);
            }
        }
        // x + 0 at 64 bits is x (a 32-bit add would also wrap, so it is kept there).
        match (op, w, a, b) {
            (BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor | BinOp::Shl, Width::W64, x, Src::Imm(0)) => return x,
            (BinOp::Add | BinOp::Or | BinOp::Xor, Width::W64, Src::Imm(0), y) => return y,
            (BinOp::Mul, Width::W64, x, Src::Imm(1)) => return x,
            _ => {}
        }
        let d = self.temp();
        self.emit(Op::Bin { op, w, dst: d, a, b }, span);
        Src::Reg(d)
    }

    #[cold]
    pub(super) fn conv(&mut self, a: Src, bits: u8, signed: bool, span: Span) -> Src {
        if bits >= 64 {
            return a;
        }
        if let Src::Imm(v) = a {
            return Src::Imm(exec::conv(v, bits, signed));
        }
        let d = self.temp();
        self.emit(Op::Conv { dst: d, a, bits, signed }, span);
        Src::Reg(d)
    }

    /// Records an unsupported name or function (reported with the others at the end of the kernel) and gives
    /// an unknown value in its place.
    #[cold]
    pub(super) fn unsupported_value(&mut self, err: InputError, why: String, span: Span) -> Val {
        if !self.unsupported.iter().any(|u| u.message == err.message) {
            self.unsupported.push(err);
        }
        Val::Int(self.unknown(why, span), IntTy::INT)
    }

    #[cold]
    pub(super) fn unknown(&mut self, why: String, span: Span) -> Src {
        let w = self.b.why(why);
        let d = self.temp();
        self.emit(Op::Unknown { dst: d, why: w }, span);
        Src::Reg(d)
    }

    #[cold]
    pub(super) fn float(&mut self, span: Span) -> Val {
        let why = format!("a floating-point value ({}); warpscope follows addresses, not data", self.pos(span));
        let w = self.b.data_why(why);
        let d = self.temp();
        self.emit(Op::Unknown { dst: d, why: w }, span);
        Val::Float(Src::Reg(d))
    }

    /// A 64-bit copy of an integer value (sign- or zero-extended by its type).
    #[cold]
    pub(super) fn to64(&mut self, v: Src, t: IntTy, span: Span) -> Src {
        let p = t.promoted();
        if p.bits >= 64 {
            v
        } else {
            self.conv(v, 32, p.signed, span)
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Names
    // ------------------------------------------------------------------------------------------------

    #[cold]
    pub(super) fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rposition(|(n, _)| &**n == name)
    }

    #[cold]
    pub(super) fn open_scope(&mut self) {
        self.marks.push(self.scopes.len());
    }

    #[cold]
    pub(super) fn close_scope(&mut self) {
        let m = self.marks.pop().unwrap_or(0);
        self.scopes.truncate(m);
    }

    /// `threadIdx.x`, `blockDim.y`, `warpSize`, ... and `--set` values, unless a variable shadows them.
    #[cold]
    pub(super) fn builtin(&mut self, e: &Ex) -> Option<Val> {
        match &e.kind {
            E::Member(base, field, false) => {
                let E::Name(obj) = &base.kind else { return None };
                let k: u8 = match field.as_str() {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => return None,
                };
                if self.lookup(obj).is_some() {
                    return None;
                }
                let l = self.launch;
                let pick = |d: crate::program::launch::Dim3| u64::from([d.x, d.y, d.z][usize::from(k)]);
                let which = match obj.as_str() {
                    "threadIdx" => Special::Tid(k),
                    "blockIdx" => Special::Ctaid(k),
                    // Sizes are known for the whole launch: constants.
                    "blockDim" => return Some(Val::Int(Src::Imm(pick(l.block)), IntTy::UINT)),
                    "gridDim" => return Some(Val::Int(Src::Imm(pick(l.grid)), IntTy::UINT)),
                    _ => return None,
                };
                let d = self.temp();
                self.emit(Op::Special { dst: d, which }, e.span);
                Some(Val::Int(Src::Reg(d), IntTy::UINT))
            }
            E::Name(n) if self.lookup(n).is_none() => match n.as_str() {
                "warpSize" => Some(Val::Int(Src::Imm(32), IntTy::INT)),
                _ => {
                    let v = *self.vars.get(n)?;
                    Some(Val::Int(Src::Imm(v as u64), IntTy::of_literal(v)))
                }
            },
            _ => None,
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Statements
    // ------------------------------------------------------------------------------------------------

    #[cold]
    pub(super) fn set_stmt(&mut self, start: usize) {
        // A statement of an included header keeps the file's statement that reached it.
        if start < self.main_len {
            self.stmt = start;
            self.seq = 0;
        }
    }

    /// The file's line of an access at `span`: its own line, or, inside an included header, the line of the
    /// file's statement that reached it.
    /// Where in an included header an access at `span` is, as PTX's line information names it (the access's
    /// line is then the file's statement that reached it).
    #[cold]
    pub(super) fn header_source(&self, span: Span) -> Option<crate::program::SourceLine> {
        // The position `site_line` chose for this access, by the same rule as the file's own lines.
        let at = if (span.start..=span.end).contains(&self.site_at) { self.site_at } else { span.start };
        let (name, r) = self.regions.iter().find(|(_, r)| r.contains(&at))?;
        let line = self.src[r.start..at].matches('\n').count() + 1;
        Some(crate::program::SourceLine { file: name.clone(), line: line as u32 })
    }

    #[cold]
    pub(super) fn site_line(&mut self, span: Span) -> usize {
        // Where an access spans lines, nvcc's line information (PTX `.loc`, SASS `//## File`) gives a store the
        // line of its `=` and a load the line where its expression ends (`a[i +\n n]`: the line of `n]`):
        // the same here, so that the three languages name the same line.
        let end = span.end.saturating_sub(1).max(span.start);
        let at = self.store_at.take().filter(|&a| a >= span.start).unwrap_or(end);
        self.site_at = at;
        let at = if at < self.main_len { at } else { self.stmt };
        self.lines.line(at.min(self.src.len()))
    }
}

/// What the CUDA front end needs besides the text.
#[derive(Clone, Copy, Debug)]
pub struct Options<'k> {
    /// The kernel to run (`--kernel`), with template arguments for a template (`reduce4<int, 256>`).
    pub kernel: Option<&'k str>,
    /// The architecture (`__CUDA_ARCH__` is ten times this: 80 gives 800).
    pub sm: u32,
    /// The files the text includes.
    pub headers: &'k [crate::lang::Header],
}

/// A lowered CUDA file: the program, and the launch its host code makes where it has one.
pub struct Lowered {
    pub program: Program,
    pub block: Option<crate::program::launch::Dim3>,
    pub grid: Option<crate::program::launch::Dim3>,
}

/// Whether function `f` (a template's instance named with its arguments, `f<BM, WMITER>`) uses its `k`-th
/// parameter, a pointer, only with compile-time constant indices, also where it passes it on to another
/// function: what keeps an array passed to it in registers (see `regs`). `value` gives the caller's constants,
/// written as their values in the arguments.
#[cold]
#[allow(clippy::too_many_arguments)]
fn callee_keeps(
    src: &str,
    file: &super::File,
    ts: &Types,
    f: &str,
    k: usize,
    constant: &dyn Fn(&str) -> bool,
    value: &dyn Fn(&str) -> Option<u64>,
    depth: u32,
) -> bool {
    const MAX_DEPTH: u32 = 4;
    let (base, args) = match f.find('<') {
        Some(i) if f.ends_with('>') => (&f[..i], Some(&f[i + 1..f.len() - 1])),
        _ => (f, None),
    };
    let Some(item) =
        file.items.fns.iter().find(|x| {
            x.kind == FnKind::Device && x.is_template == args.is_some() && x.spec.is_none() && x.name == base
        })
    else {
        return false;
    };
    let args = args.map(|a| {
        let mut out = String::new();
        let mut word = String::new();
        for c in a.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
                continue;
            }
            match value(&word) {
                Some(x) if !word.starts_with(|d: char| d.is_ascii_digit()) => out.push_str(&(x as i64).to_string()),
                _ => out.push_str(&word),
            }
            word.clear();
            out.push(c);
        }
        out.pop();
        out
    });
    let Ok(def) = instantiate(src, file, ts, item, args.as_deref()) else { return false };
    let nested = |g: &str, j: usize| depth < MAX_DEPTH && callee_keeps(src, file, ts, g, j, constant, value, depth + 1);
    def.params
        .get(k)
        .is_some_and(|p| p.pointers > 0 && super::regs::param_constant(&def.body, &p.name, constant, &nested))
}

/// Lowers the file's top level and then its kernel. `dynamic_base`: where dynamic shared memory starts, when
/// a first pass found static arrays declared after it was used (nvcc places it after all of them).
#[cold]
#[allow(clippy::too_many_arguments)]
fn lower_kernel<'a>(
    ast: &'a Ast,
    src: &'a str,
    main_len: usize,
    regions: &'a [(String, std::ops::Range<usize>)],
    vars: &'a Vars,
    launch: Launch,
    dynamic_base: Option<u64>,
    sm: u32,
) -> Result<Lower<'a>, InputError> {
    let mut l = Lower {
        sm,
        b: Builder::new(),
        ast,
        src,
        vars,
        launch,
        lines: LineIndex::new(src),
        scopes: Vec::new(),
        marks: Vec::new(),
        globals: HashMap::new(),
        next_global: GLOBAL_BASE,
        given_bases: Vec::new(),
        #[cfg(feature = "data")]
        arrays: Vec::new(),
        shared_top: 0,
        const_offsets: HashMap::new(),
        const_top: 0,
        local_top: 0,
        stmt: 0,
        seq: 0,
        loops: Vec::new(),
        maybe_unknown: Vec::new(),
        maybe_unknown_pred: Vec::new(),
        defaulted: Vec::new(),
        fns: HashMap::new(),
        frames: Vec::new(),
        globals_end: 0,
        calls: 0,
        salt: 0,
        uncosted: Vec::new(),
        data_index_ok: false,
        store_at: None,
        site_at: 0,
        regions,
        unsupported: Vec::new(),
        assumed: Vec::new(),
        homes: HashMap::new(),
        class_stack: Vec::new(),
        fns_class: HashMap::new(),
        reg_top: 0,
        array_homes: Vec::new(),
        main_len,
        cop: None,
        launch_values: HashMap::new(),
        dynamic_shared: None,
        dynamic_base,
        static_after_dynamic: false,
        from_launch: Vec::new(),
    };
    if let Some(hl) = &ast.launch {
        for (k, s) in ast.stmts[ast.kernel_start.min(ast.stmts.len())..].iter().take(hl.args.len()).enumerate() {
            if let (Stmt::Decl(ds), Some(Some(v))) = (s, hl.args.get(k)) {
                if let Some(d) = ds.first().filter(|d| d.storage == Storage::Param) {
                    l.launch_values.insert(d.name.to_string(), *v);
                }
            }
        }
    }
    let stmts = &ast.stmts;
    let top = ast.kernel_start.min(stmts.len());
    // A fragment's statements are all top level.
    l.find_homes(&stmts[..top]);
    let mut r = l.block(&stmts[..top]);
    if r.is_ok() {
        l.globals_end = l.scopes.len();
        l.find_homes(&stmts[top..]);
        r = l.block(&stmts[top..]);
    }
    // Every unknown name and function of the kernel at once, the first leading (a later error may follow
    // from one of them: a value warpscope had to leave unknown).
    if l.unsupported.is_empty() {
        r?;
        return Ok(l);
    }
    let mut first = l.unsupported.remove(0);
    // The others in short: what is unknown, and where.
    let short = |e: &InputError| {
        let m = e.message.split(" (").next().unwrap_or(&e.message);
        format!("{} at {}:{}", m.split(": declare it").next().unwrap_or(m), e.line, e.column)
    };
    let mut more: Vec<String> = l.unsupported.iter().map(short).collect();
    if let Err(e) = r {
        // A later error that is not one of these (one that follows from them names them as its cause).
        if !e.message.contains("warpscope does not know") && e.message != first.message {
            more.push(short(&e));
        }
    }
    if !more.is_empty() {
        first.message = format!("{}; also in this kernel: {}", first.message, more.join("; "));
    }
    Err(first)
}

/// The kernels of a file, for a menu: read from its top level alone, so that a kernel whose body fails
/// leaves the others choosable.
#[cold]
pub fn kernels(text: &str, vars: &Vars, opts: Options) -> Result<Vec<crate::lang::KernelChoice>, InputError> {
    let mut all = String::from(text);
    let mut regions = Vec::new();
    for h in opts.headers {
        all.push('\n');
        let start = all.len();
        all.push_str(&h.text);
        regions.push((h.name.clone(), start..all.len()));
    }
    let (made, open) = super::parse::kernels(&all, text.len(), &regions, opts.sm, vars)?;
    let mut out: Vec<crate::lang::KernelChoice> =
        made.into_iter().map(|k| crate::lang::KernelChoice { name: k.clone(), value: k, template: None }).collect();
    out.extend(open.into_iter().map(|(name, example)| crate::lang::KernelChoice {
        value: example.clone(),
        template: Some(example[name.len() + 1..example.len() - 1].to_string()),
        name,
    }));
    Ok(out)
}

/// Lowers a CUDA snippet or file into a program.
#[cold]
pub fn lower(text: &str, launch: Launch, vars: &Vars, opts: Options) -> Result<Lowered, InputError> {
    lower_with_headers(text, launch, vars, &opts).map_err(|mut e| {
        // A name the file cannot resolve may come from a header it includes but was not given.
        if e.message.starts_with("unknown ") {
            let missing: Vec<&str> = text
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix('#')?.trim_start().strip_prefix("include")?.trim().strip_prefix('"'))
                .filter_map(|l| l.split('"').next())
                .filter(|n| {
                    let base = n.rsplit('/').next().unwrap_or(n);
                    !opts.headers.iter().any(|h| h.name == *n || h.name.rsplit('/').next() == Some(base))
                })
                .collect();
            if !missing.is_empty() {
                e.message = format!(
                    "{}. The file includes {}, which {} not given: paste {} above the kernel, or give {} with --include",
                    e.message,
                    missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
                    if missing.len() == 1 { "was" } else { "were" },
                    if missing.len() == 1 { "it" } else { "them" },
                    if missing.len() == 1 { "it" } else { "them" },
                );
            }
        }
        e
    })
}

#[cold]
fn lower_with_headers(text: &str, launch: Launch, vars: &Vars, opts: &Options) -> Result<Lowered, InputError> {
    if opts.headers.is_empty() {
        return lower_text(text, text.len(), &[], launch, vars, opts);
    }
    // The headers follow the file in one text, so that every position stays a position in it; the
    // preprocessor splices a header's tokens where it is included. An error inside a header is reported at
    // the `#include` line, naming the header's own line.
    let mut all = String::from(text);
    let mut regions = Vec::new();
    for h in opts.headers {
        all.push('\n');
        let start = all.len();
        all.push_str(&h.text);
        regions.push((h.name.clone(), start..all.len()));
    }
    lower_text(&all, text.len(), &regions, launch, vars, opts).map_err(|e| {
        let main_lines = text.matches('\n').count() + 1;
        if e.line <= main_lines {
            return e;
        }
        // Which header, and where in it.
        let starts: Vec<usize> = std::iter::once(0).chain(all.match_indices('\n').map(|(i, _)| i + 1)).collect();
        let at = starts.get(e.line - 1).copied().unwrap_or(0);
        let Some((name, r)) = regions.iter().find(|(_, r)| r.contains(&at) || r.end == at) else { return e };
        let local = all[r.start..at].matches('\n').count() + 1;
        let base = name.rsplit('/').next().unwrap_or(name);
        let include = text
            .lines()
            .position(|l| l.trim_start().starts_with('#') && l.contains("include") && l.contains(base))
            .map_or(1, |i| i + 1);
        InputError {
            message: format!("in `{name}` line {local}: {}", e.message),
            line: include,
            column: 1,
            excerpt: e.excerpt,
        }
    })
}

#[cold]
fn lower_text(
    src: &str,
    main_len: usize,
    regions: &[(String, std::ops::Range<usize>)],
    mut launch: Launch,
    vars: &Vars,
    opts: &Options,
) -> Result<Lowered, InputError> {
    let ast = super::parse(src, main_len, regions, opts.kernel, opts.sm, vars)?;
    // The file's own launch of this kernel gives the block and grid it was written for.
    let mut launch_note = None;
    let (mut block, mut grid) = (None, None);
    if let Some(hl) = &ast.launch {
        let lines = LineIndex::new(src);
        let mut parts = Vec::new();
        if let Some(b) = hl.block.filter(|b| b.volume() > 0) {
            launch.block = b;
            block = Some(b);
            parts.push(format!("block {b}"));
        }
        if let Some(g) = hl.grid.filter(|g| g.volume() > 0) {
            launch.grid = g;
            grid = Some(g);
            parts.push(format!("grid {g}"));
        }
        let unread: Vec<&str> =
            [("grid", hl.grid.is_none()), ("block", hl.block.is_none())].iter().filter(|x| x.1).map(|x| x.0).collect();
        launch_note = Some(format!(
            "The launch at line {} (`{}<<<…>>>`) gives {}{}. Edit the launch in the file to change {}.",
            lines.line(hl.span.start),
            hl.kernel,
            if parts.is_empty() { "nothing warpscope can read as a constant".to_string() } else { parts.join(" and ") },
            match unread.len() {
                0 => String::new(),
                1 => format!("; its {} is not a constant there, so the launch settings give it", unread[0]),
                _ => "; its grid and block are not constants there, so the launch settings give them".to_string(),
            },
            if parts.is_empty() { "it" } else { "them" },
        ));
        if launch.block.volume() > u64::from(crate::program::launch::MAX_BLOCK_THREADS) {
            return Err(InputError::at(
                src,
                hl.span,
                format!(
                    "this launch's block has {} threads; a block has at most {}",
                    launch.block.volume(),
                    crate::program::launch::MAX_BLOCK_THREADS
                ),
            ));
        }
    }
    let mut l = lower_kernel(&ast, src, main_len, regions, vars, launch, None, opts.sm)?;
    if l.static_after_dynamic {
        let base = l.shared_top.div_ceil(16) * 16;
        l = lower_kernel(&ast, src, main_len, regions, vars, launch, Some(base), opts.sm)?;
    }
    let ast = &ast;
    if let Some(k) = &ast.ran {
        l.b.set_kernel(k.clone());
    }
    l.b.set_kernels(ast.kernels.iter().map(|k| (k.clone(), k.clone())).collect());
    if ast.kernels.len() > 1 {
        l.b.note(Note::new(
            "cuda-kernel",
            format!(
                "This file has {} kernels ({}); this is {}. Choose another with --kernel NAME or the kernel menu.",
                ast.kernels.len(),
                ast.kernels.join(", "),
                ast.ran.as_deref().unwrap_or("the first")
            ),
            "the file's __global__ functions",
        ));
    }
    if !ast.uninstantiated.is_empty() {
        l.b.note(Note::new(
            "cuda-templates",
            format!(
                "Template kernels that nothing in the file instantiates: {}. Run one with --kernel and its arguments, for example --kernel '{}'.",
                ast.uninstantiated.iter().map(|u| u.0.as_str()).collect::<Vec<_>>().join(", "),
                ast.uninstantiated[0].1
            ),
            "the file's template __global__ functions",
        ));
    }
    if let Some(mut n) = launch_note {
        if !l.from_launch.is_empty() {
            n.push_str(&format!(" Parameters it passes as constants: {}.", l.from_launch.join(", ")));
        }
        if let Some(b) = ast.launch.as_ref().and_then(|h| h.smem).filter(|b| *b > 0) {
            n.push_str(&format!(" It asks for {b} bytes of dynamic shared memory."));
        }
        l.b.note(Note::new("cuda-launch", n, "the file's host code"));
    }
    if !l.defaulted.is_empty() {
        let first = l.defaulted[0].split(' ').next().unwrap_or("n").to_string();
        l.b.note(Note::new(
            "cuda-param-defaults",
            format!(
                "Integer kernel parameters given the launch's thread count: {}. Give other values with --set, e.g. --set {first}=VALUE.",
                l.defaulted.join(", ")
            ),
            "docs/model.md#kernel-parameters",
        ));
    }
    if !l.assumed.is_empty() {
        l.b.note(Note::new(
            "cuda-assumed",
            format!("Assumed, because the code does not say: {}.", l.assumed.join("; ")),
            "warpscope's reading of the snippet",
        ));
    }
    if !l.array_homes.is_empty() {
        l.b.note(Note::new(
            "cuda-local-arrays",
            format!(
                "Local arrays: {}. An array stays in registers when every index is known at compile time once loops with constant trip counts are unrolled; otherwise it is local memory (LDL/STL).",
                l.array_homes.join("; ")
            ),
            "CUDA C++ Best Practices Guide, Local Memory; the PTX and SASS nvcc makes",
        ));
    }
    let mut overlaps = Vec::new();
    for (name, v) in &l.given_bases {
        for (other, &d) in &l.globals {
            if other != name && !l.vars.contains_key(other) && (d..d + GLOBAL_STRIDE).contains(v) {
                overlaps.push(format!("`{name}` = 0x{v:x} is inside `{other}`'s default region (0x{d:x}, 256 MB)"));
            }
        }
    }
    if !overlaps.is_empty() {
        overlaps.sort();
        l.b.note(Note::new(
            "cuda-overlapping-bases",
            format!(
                "{}: the two share addresses, and cache figures count one's accesses as hits on the other's lines. Give the other a value of its own with --set.",
                overlaps.join("; ")
            ),
            "warpscope's default bases: each pointer or global array 256 MB after the one before, by declaration order",
        ));
    }
    l.b.note_uncosted("cuda-not-costed", "operations", &l.uncosted);
    if let Some(n) = restrict_note(ast, crate::model::arch::Cc::sm_has_read_only_path(l.sm)) {
        l.b.note(n);
    }
    // What the CUDA front end cannot know of the compiler's choices, said once per kernel with loads.
    if ast.ran.is_some() && l.b.has_loads() {
        l.b.note(Note::new(
            "cuda-as-written",
            "Each read is counted as the source writes it. nvcc may keep a value it has read in a register and not read it again (the same element in an unrolled loop, a value just stored): the compiled kernel can issue fewer loads; its PTX or SASS shows which.",
            "the PTX and SASS nvcc makes from the same kernels, compared line by line in warpscope's tests of published kernels",
        ));
    }
    let mut program = l.b.finish();
    #[cfg(feature = "data")]
    {
        program.arrays = std::mem::take(&mut l.arrays);
    }
    // A block's shared memory: its static arrays, and its dynamic shared memory where the file's launch says
    // how much.
    let smem = ast.launch.as_ref().and_then(|h| h.smem);
    program.shared_bytes = match (l.dynamic_shared, smem) {
        (None, _) => Some(l.shared_top),
        (Some(_), Some(b)) => Some(l.dynamic_base.unwrap_or(l.shared_top.div_ceil(16) * 16) + b),
        (Some(_), None) => None,
    };
    Ok(Lowered { program, block, grid })
}

/// What the kernel's `__restrict__` pointers mean for its loads: nvcc reads a `const T * __restrict__` parameter
/// through the read-only path (`ld.global.nc`, `LDG.E.CONSTANT`), and warpscope does the same; nvcc also uses
/// that path for other pointers when it proves that no write of the kernel reaches them, which warpscope does
/// not prove. Checked with NVRTC 12.9 for sm_52 and sm_80 (the model reference, "The read-only path").
fn restrict_note(ast: &Ast, has_path: bool) -> Option<Note> {
    let params: Vec<&Decl> = ast.stmts[ast.kernel_start.min(ast.stmts.len())..]
        .iter()
        .filter_map(|s| match s {
            Stmt::Decl(ds) => Some(ds.iter().filter(|d| d.storage == Storage::Param)),
            _ => None,
        })
        .flatten()
        .collect();
    if !params.iter().any(|d| d.restrict) {
        return None;
    }
    let names = |f: &dyn Fn(&Decl) -> bool| {
        params.iter().filter(|d| f(d)).map(|d| format!("`{}`", d.name)).collect::<Vec<_>>().join(", ")
    };
    let read_only = names(&|d| d.const_restrict);
    let mut text = match (has_path, read_only.is_empty()) {
        (true, false) => format!(
            "Read through the read-only path (LDG.E.CONSTANT, PTX ld.global.nc), as nvcc compiles a `const T * __restrict__` parameter: {read_only}."
        ),
        (false, false) => format!(
            "{read_only}: `const __restrict__`, but this CC has no read-only path (it came with 3.5): ordinary loads."
        ),
        _ => String::new(),
    };
    // A `__restrict__` pointer that is not const (written, or only not declared const) lets nvcc prove more.
    if has_path && params.iter().any(|d| d.restrict && !d.const_restrict) {
        let others = names(&|d| d.pointers > 0 && !d.const_restrict);
        text.push_str(&format!(
            "{}nvcc may also read {others} through that path where it proves that no write of the kernel reaches what they point to (a `__restrict__` pointer the kernel does not write, or every write going through `__restrict__` pointers); warpscope counts those reads as ordinary loads. The kernel's PTX or SASS shows what the compiler chose.",
            if text.is_empty() { "" } else { " " }
        ));
    }
    if text.is_empty() {
        return None;
    }
    Some(Note::new("cuda-restrict", text, "NVRTC 12.9's PTX for sm_52 and sm_80; docs/model.md#the-read-only-path"))
}

/// Which parameters of a function's definition (its tokens from the return type on) are references.
fn reference_params(toks: &[crate::lang::lex::Token]) -> Vec<bool> {
    use crate::lang::lex::Tok;
    let Some(open) = toks.iter().position(|t| matches!(t.tok, Tok::Punct("("))) else { return Vec::new() };
    let (mut depth, mut out, mut cur) = (0i32, Vec::new(), false);
    for t in &toks[open + 1..] {
        match t.tok {
            Tok::Punct("(" | "<" | "[" | "{") => depth += 1,
            Tok::Punct(")") if depth == 0 => break,
            Tok::Punct(")" | ">" | "]" | "}") => depth -= 1,
            Tok::Punct(",") if depth == 0 => {
                out.push(cur);
                cur = false;
            }
            Tok::Punct("&" | "&&") if depth == 0 => cur = true,
            _ => {}
        }
    }
    out.push(cur);
    out
}

/// How many parameters a member function's definition declares (its first parenthesised list).
fn params_of(toks: &[crate::lang::lex::Token]) -> usize {
    use crate::lang::lex::Tok;
    let Some(open) = toks.iter().position(|t| matches!(t.tok, Tok::Punct("("))) else { return 0 };
    let (mut depth, mut n, mut any) = (0i32, 1usize, false);
    for t in &toks[open + 1..] {
        match t.tok {
            Tok::Punct("(" | "<" | "[" | "{") => depth += 1,
            Tok::Punct(")") if depth == 0 => break,
            Tok::Punct(")" | ">" | "]" | "}") => depth -= 1,
            Tok::Punct(",") if depth == 0 => n += 1,
            Tok::Ident(ref w) if w == "void" && !any => {}
            _ => {}
        }
        any = true;
    }
    if any {
        n
    } else {
        0
    }
}

/// The items of a brace initialiser with nested braces read flat (C's brace elision).
fn flatten_init<'e>(e: &'e Ex, out: &mut Vec<&'e Ex>) {
    match &e.kind {
        E::InitList(items) => items.iter().for_each(|x| flatten_init(x, out)),
        _ => out.push(e),
    }
}

/// An asm instruction's operands, split at the commas outside braces and brackets.
#[cold]
fn split_top(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}
