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

use super::file::FnKind;
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
use crate::program::{
    exec, BinOp, Builder, Cmp, Label, Op, PredOp, PredRef, Program, Reg, ShflMode, Site, Special, Src, Width,
};
use std::collections::HashMap;
use std::rc::Rc;

/// Why a cp.async that reads fewer bytes than it writes is refused (the PTX ISA's src-size and ignore-src,
/// `__pipeline_memcpy_async`'s zfill): its global read depends on a size warpscope does not model.
pub(crate) const ZERO_FILL: &str = "a cp.async that reads fewer bytes than it copies (src-size, ignore-src or zfill: the rest is zero-filled) is not modelled; warpscope refuses it rather than count the full copy";

type R<T> = Result<T, InputError>;

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
    fn err(&self, span: Span, msg: impl Into<String>) -> InputError {
        InputError::at(self.src, span, msg)
    }

    #[cold]
    fn pos(&self, s: Span) -> String {
        self.lines.pos(s.start)
    }

    #[cold]
    fn emit(&mut self, op: Op, span: Span) {
        self.track(&op);
        self.b.emit(op, None, span);
    }

    #[cold]
    fn unknown_src(&self, s: Src) -> bool {
        match s {
            Src::Reg(r) => self.maybe_unknown.get(r as usize).copied().unwrap_or(false),
            Src::Imm(_) => false,
        }
    }

    #[cold]
    fn unknown_pred(&self, p: PredRef) -> bool {
        p.idx.is_some_and(|i| self.maybe_unknown_pred.get(i as usize).copied().unwrap_or(false))
    }

    /// Notes which registers an operation may make unknown.
    #[cold]
    fn track(&mut self, op: &Op) {
        let (dst, unknown) = match op {
            Op::Unknown { dst, .. } => (Some(*dst), true),
            Op::Mem { data: Some((d, _)), .. } => (Some(*d), true),
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
    fn temp(&mut self) -> Reg {
        self.b.temp()
    }

    #[cold]
    fn bin(&mut self, op: BinOp, w: Width, a: Src, b: Src, span: Span) -> Src {
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
    fn conv(&mut self, a: Src, bits: u8, signed: bool, span: Span) -> Src {
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
    fn unsupported_value(&mut self, err: InputError, why: String, span: Span) -> Val {
        if !self.unsupported.iter().any(|u| u.message == err.message) {
            self.unsupported.push(err);
        }
        Val::Int(self.unknown(why, span), IntTy::INT)
    }

    #[cold]
    fn unknown(&mut self, why: String, span: Span) -> Src {
        let w = self.b.why(why);
        let d = self.temp();
        self.emit(Op::Unknown { dst: d, why: w }, span);
        Src::Reg(d)
    }

    #[cold]
    fn float(&mut self, span: Span) -> Val {
        let why = format!("a floating-point value ({}); warpscope follows addresses, not data", self.pos(span));
        let w = self.b.data_why(why);
        let d = self.temp();
        self.emit(Op::Unknown { dst: d, why: w }, span);
        Val::Float(Src::Reg(d))
    }

    /// A 64-bit copy of an integer value (sign- or zero-extended by its type).
    #[cold]
    fn to64(&mut self, v: Src, t: IntTy, span: Span) -> Src {
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
    fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rposition(|(n, _)| &**n == name)
    }

    #[cold]
    fn open_scope(&mut self) {
        self.marks.push(self.scopes.len());
    }

    #[cold]
    fn close_scope(&mut self) {
        let m = self.marks.pop().unwrap_or(0);
        self.scopes.truncate(m);
    }

    /// `threadIdx.x`, `blockDim.y`, `warpSize`, ... and `--set` values, unless a variable shadows them.
    #[cold]
    fn builtin(&mut self, e: &Ex) -> Option<Val> {
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
    fn set_stmt(&mut self, start: usize) {
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
    fn header_source(&self, span: Span) -> Option<crate::program::SourceLine> {
        // The position `site_line` chose for this access, by the same rule as the file's own lines.
        let at = if (span.start..=span.end).contains(&self.site_at) { self.site_at } else { span.start };
        let (name, r) = self.regions.iter().find(|(_, r)| r.contains(&at))?;
        let line = self.src[r.start..at].matches('\n').count() + 1;
        Some(crate::program::SourceLine { file: name.clone(), line: line as u32 })
    }

    #[cold]
    fn site_line(&mut self, span: Span) -> usize {
        // Where an access spans lines, nvcc's line information (PTX `.loc`, SASS `//## File`) gives a store the
        // line of its `=` and a load the line where its expression ends (`a[i +\n n]`: the line of `n]`):
        // the same here, so that the three languages name the same line.
        let end = span.end.saturating_sub(1).max(span.start);
        let at = self.store_at.take().filter(|&a| a >= span.start).unwrap_or(end);
        self.site_at = at;
        let at = if at < self.main_len { at } else { self.stmt };
        self.lines.line(at.min(self.src.len()))
    }

    #[cold]
    fn block(&mut self, stmts: &[Stmt]) -> R<()> {
        for s in stmts {
            self.stmt_(s)?;
        }
        Ok(())
    }

    #[cold]
    fn stmt_(&mut self, s: &Stmt) -> R<()> {
        let start = stmt_start(s);
        if start != 0 || !matches!(s, Stmt::Block(_) | Stmt::Nop) {
            self.set_stmt(start);
        }
        let mark = self.b.temps_mark();
        let r = self.stmt_inner(s);
        self.b.release(mark);
        r
    }

    /// A loop's body, with `continue` going to `next` and `break` to `exit`; then `next` is placed and the
    /// loop's own accesses (condition, step) take the loop statement's site keys after the body's.
    fn loop_body(&mut self, body: &Stmt, next: Label, exit: Label, stmt: usize) -> R<()> {
        self.loops.push((next, exit));
        let r = self.stmt_(body);
        self.loops.pop();
        r?;
        self.b.place(next);
        self.set_stmt(stmt);
        self.seq = 1 << 20;
        Ok(())
    }

    #[cold]
    fn stmt_inner(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Nop => Ok(()),
            Stmt::Return(value, span) => {
                let Some(frame) = self.frames.last() else {
                    if let Some(v) = value {
                        return Err(self.err(v.span, "a kernel returns nothing: write `return;`"));
                    }
                    self.emit(Op::Exit, *span);
                    return Ok(());
                };
                let (end, ret) = (frame.end, frame.ret.clone());
                match (value, ret) {
                    (Some(v), Some((ty, b))) => {
                        let x = self.rvalue(v)?;
                        let x = self.convert(&ty, x, v.span)?;
                        // A returned pointer points where the returned value does: the first `return` says
                        // which space; another space in a later one is an error, as for any pointer variable.
                        let b = match (&b, &x) {
                            (
                                Binding::Var { ty: vt, val: Val::Ptr { src, to, space, read_only } },
                                Val::Ptr { space: s, read_only: r, .. },
                            ) if *space != *s => {
                                if frame_returned(self) {
                                    return Err(self.err(
                                        v.span,
                                        "this function returns pointers into two memory spaces; warpscope needs one",
                                    ));
                                }
                                let nb = Binding::Var {
                                    ty: vt.clone(),
                                    val: Val::Ptr { src: *src, to: to.clone(), space: *s, read_only: *r || *read_only },
                                };
                                if let Some(f) = self.frames.last_mut() {
                                    f.ret = Some((ty.clone(), nb.clone()));
                                }
                                nb
                            }
                            _ => b,
                        };
                        if let Some(f) = self.frames.last_mut() {
                            f.returned = true;
                        }
                        self.assign_var_binding(&b, x, v.span)?;
                    }
                    (Some(v), None) => self.discard(v)?,
                    (None, Some(_)) => {
                        return Err(self.err(*span, "this function returns a value: write `return VALUE;`"))
                    }
                    (None, None) => {}
                }
                self.b.bra(end, None, *span);
                Ok(())
            }
            Stmt::DoWhile(body, c, span) => {
                let (top, next, exit) = (self.b.label(), self.b.label(), self.b.label());
                self.b.place(top);
                self.loop_body(body, next, exit, span.start)?;
                let p = self.cond(c, "the loop condition")?;
                self.branch(top, p, true, "the condition of the `do ... while` loop", c.span);
                self.b.place(exit);
                Ok(())
            }
            Stmt::Break | Stmt::Continue => {
                let target = self.loops.last().map(|&(c, b)| if matches!(s, Stmt::Break) { b } else { c });
                match target {
                    Some(t) => self.b.bra(t, None, Span { start: 0, end: 1 }),
                    // Outside a loop it ends the thread, as a return would.
                    None => self.emit(Op::Exit, Span { start: 0, end: 1 }),
                }
                Ok(())
            }
            Stmt::Expr(e) => self.discard(e),
            Stmt::Decl(ds) => {
                for d in ds {
                    self.declare(d)?;
                }
                Ok(())
            }
            Stmt::Block(v) => {
                self.open_scope();
                let r = self.block(v);
                self.close_scope();
                r
            }
            Stmt::If(c, t, e) => {
                let p = self.cond(c, "the condition")?;
                let else_l = self.b.label();
                self.branch(else_l, p, false, "the condition of the `if`", c.span);
                self.stmt_(t)?;
                match e {
                    Some(e) => {
                        let end = self.b.label();
                        self.b.bra(end, None, c.span);
                        self.b.place(else_l);
                        self.stmt_(e)?;
                        self.b.place(end);
                    }
                    None => self.b.place(else_l),
                }
                Ok(())
            }
            Stmt::For(init, cond, step, body, span) => {
                self.open_scope();
                let r = self.for_loop(init.as_deref(), cond.as_ref(), step.as_ref(), body, *span);
                self.close_scope();
                r
            }
            Stmt::While(c, body, span) => {
                let (top, next, exit) = (self.b.label(), self.b.label(), self.b.label());
                self.b.place(top);
                self.b.place(next);
                self.set_stmt(span.start);
                let p = self.cond(c, "the loop condition")?;
                self.branch(exit, p, false, "the condition of the `while` loop", c.span);
                self.loops.push((next, exit));
                let r = self.stmt_(body);
                self.loops.pop();
                r?;
                self.b.bra(top, None, *span);
                self.b.place(exit);
                Ok(())
            }
        }
    }

    /// Evaluates an expression whose value is not used: `i++` then needs no copy of the old value.
    #[cold]
    fn discard(&mut self, e: &Ex) -> R<()> {
        match &e.kind {
            E::IncDec(false, inc, a) => {
                let pre = Ex { kind: E::IncDec(true, *inc, a.clone()), ..e.clone() };
                self.rvalue(&pre).map(|_| ())
            }
            E::Call(n, args) if n == "__comma" => args.iter().try_for_each(|a| self.discard(a)),
            // An atomic whose result is not used: ptxas makes it a reduction (MODEL.md K).
            E::Call(n, args) if n.starts_with("atomic") => self.atomic(n, args, e, true).map(|_| ()),
            _ => self.rvalue(e).map(|_| ()),
        }
    }

    #[cold]
    fn for_loop(
        &mut self,
        init: Option<&Stmt>,
        cond: Option<&Ex>,
        step: Option<&Ex>,
        body: &Stmt,
        span: Span,
    ) -> R<()> {
        if let Some(i) = init {
            self.stmt_(i)?;
        }
        let (top, next, exit) = (self.b.label(), self.b.label(), self.b.label());
        self.b.place(top);
        self.set_stmt(span.start);
        if let Some(c) = cond {
            let p = self.cond(c, "the loop condition")?;
            self.branch(exit, p, false, "the condition of the `for` loop", c.span);
        }
        self.loop_body(body, next, exit, span.start)?;
        if let Some(s) = step {
            self.discard(s)?;
        }
        self.b.bra(top, None, span);
        self.b.place(exit);
        Ok(())
    }

    /// A conditional branch to `to` where `cond` holds (`taken_when` true) or fails (false), described as the
    /// source's `what` at `span`: a condition that depends on data then runs both ways (it only decides values)
    /// or is decided by the stated data-branch assumption (see `Program::data_branches`).
    #[cold]
    fn branch(&mut self, to: Label, cond: PredRef, taken_when: bool, what: &str, span: Span) {
        let guard = if taken_when { cond } else { cond.negated() };
        self.b.bra(to, Some(guard), span);
        self.b.describe_branch(what, taken_when);
    }

    /// A condition as a predicate (unknown where it depends on data: see [`Lower::branch`]).
    #[cold]
    fn cond(&mut self, c: &Ex, what: &str) -> R<PredRef> {
        // A comparison of two integers becomes the predicate itself, not a 0/1 value tested again.
        if let E::Binary(op @ (CBin::Lt | CBin::Le | CBin::Gt | CBin::Ge | CBin::Eq | CBin::Ne), a, b) = &c.kind {
            let (x, y) = (self.rvalue(a)?, self.rvalue(b)?);
            if let (Val::Int(p, ta), Val::Int(q, tb)) = (&x, &y) {
                let t = IntTy::common(*ta, *tb);
                let w = t.width();
                let (p, q) =
                    if w == Width::W64 { (self.to64(*p, *ta, c.span), self.to64(*q, *tb, c.span)) } else { (*p, *q) };
                let cmp = match op {
                    CBin::Lt => Cmp::Lt,
                    CBin::Le => Cmp::Le,
                    CBin::Gt => Cmp::Gt,
                    CBin::Ge => Cmp::Ge,
                    CBin::Eq => Cmp::Eq,
                    _ => Cmp::Ne,
                };
                return Ok(self.setp(cmp, t.signed, w, p, q, c.span));
            }
            let v = self.binary(*op, x, y, c)?;
            return self.truth(v, c.span, what);
        }
        if let E::Unary(UnOp::LNot, a) = &c.kind {
            return Ok(self.cond(a, what)?.negated());
        }
        let v = self.rvalue(c)?;
        self.truth(v, c.span, what)
    }

    #[cold]
    fn truth(&mut self, v: Val, span: Span, what: &str) -> R<PredRef> {
        let (src, w) = match v {
            Val::Int(s, t) => (s, t.width()),
            Val::Float(s) => (s, Width::W64),
            Val::Ptr { src, .. } => (src, Width::W64),
            Val::Agg { .. } => return Err(self.err(span, format!("{what} is a struct, not a number"))),
        };
        if let Src::Imm(x) = src {
            return Ok(if x & w.mask() != 0 { PredRef::TRUE } else { PredRef::TRUE.negated() });
        }
        let p = self.b.pred();
        self.emit(Op::Setp { dst: p, cmp: Cmp::Ne, signed: false, w, a: src, b: Src::Imm(0) }, span);
        Ok(PredRef::of(p))
    }

    /// An integer the program needs to know (an index, an array size): its value and type.
    #[cold]
    fn int(&mut self, e: &Ex, what: &str) -> R<(Src, IntTy)> {
        let v = self.rvalue(e)?;
        let (src, t) = match v {
            Val::Int(s, t) => (s, t),
            Val::Float(s) => (s, IntTy::INT),
            Val::Ptr { .. } => return Err(self.err(e.span, format!("{what} is a pointer, not a number"))),
            Val::Agg { .. } => return Err(self.err(e.span, format!("{what} is a struct, not a number"))),
        };
        if self.unknown_src(src) && !self.data_index_ok {
            let ctx = self.b.ctx(format!("{what} depends on "));
            self.emit(Op::Require { a: src, ctx }, e.span);
        }
        Ok((src, t))
    }

    /// The base of a global array or pointer: the value given with `--set`, else its default. Every one takes
    /// its default's place in declaration order whether or not it is given, so that giving one never moves
    /// another onto it (`copy(in, out)` with `in` set keeps `out` one stride above `in`'s default).
    #[cold]
    fn global_base(&mut self, name: &str) -> u64 {
        let default = match self.globals.get(name) {
            Some(&b) => b,
            None => {
                let b = self.next_global;
                self.next_global += GLOBAL_STRIDE;
                self.globals.insert(name.to_string(), b);
                if let Some(&v) = self.vars.get(name) {
                    self.given_bases.push((name.to_string(), v as u64));
                }
                b
            }
        };
        match self.vars.get(name) {
            Some(&v) => v as u64,
            None => default,
        }
    }

    #[cold]
    fn param_why(&mut self, d: &Decl) -> u32 {
        self.b.why(format!("the parameter `{}`, which has no value (give it one with --set {}=VALUE)", d.name, d.name))
    }

    #[cold]
    fn declare(&mut self, d: &Decl) -> R<()> {
        if d.auto {
            let e = d.init.as_ref().ok_or_else(|| self.err(d.span, "an `auto` variable needs an initial value"))?;
            let v = self.rvalue(e)?;
            let ty = wrap_ptr(self.ty_of(&v), d.pointers);
            let v = self.convert(&ty, v, e.span)?;
            let b = self.var_with(&ty, v, d.span, e.span)?;
            self.bind(d.name.clone(), b);
            return Ok(());
        }
        let mut ty = wrap_ptr(d.base.clone(), d.pointers);
        for dim in d.dims.iter().rev() {
            let n = match dim {
                Some(e) => {
                    let v = self.rvalue(e)?;
                    let n = match v {
                        Val::Int(Src::Imm(x), t) => exec::conv(x, t.promoted().bits, t.promoted().signed) as i64,
                        _ => {
                            return Err(self.err(
                                e.span,
                                "the array size must be a constant (a number, a #define, a const or a --set value)",
                            ))
                        }
                    };
                    if !(1..=1 << 30).contains(&n) {
                        return Err(self.err(e.span, format!("array size {n} is out of range (1..2^30)")));
                    }
                    n as u64
                }
                None => 0,
            };
            ty = Ty::Array(Rc::new(ty), n);
        }
        let binding = match d.storage {
            Storage::Shared => {
                let t = types(self);
                let (size, align) = (t.size(&ty), t.align(&ty).max(16));
                // Dynamic shared memory (an unsized `extern __shared__` array, `SharedMemory<T>()`) starts
                // where the kernel's static shared memory ends; a static array declared after it was used
                // asks for a second pass that knows that end.
                if size == 0 {
                    self.dynamic_shared.get_or_insert(d.span);
                    let off = self.dynamic_base.unwrap_or(self.shared_top.div_ceil(16) * 16);
                    let b = Binding::Mem(Place { space: MemSpace::Shared, addr: Src::Imm(off), ty, read_only: false });
                    self.bind(d.name.clone(), b);
                    return Ok(());
                }
                if self.dynamic_shared.is_some() {
                    self.static_after_dynamic = true;
                }
                let off = self.shared_top.div_ceil(align) * align;
                self.shared_top = off + size;
                Binding::Mem(Place { space: MemSpace::Shared, addr: Src::Imm(off), ty, read_only: false })
            }
            Storage::Global if !d.dims.is_empty() => {
                let base = self.global_base(&d.name);
                Binding::Mem(Place { space: MemSpace::Global, addr: Src::Imm(base), ty, read_only: false })
            }
            // `__constant__` variables: offsets in the constant bank, each at its type's alignment, in
            // declaration order as nvcc lays them out (MODEL.md L: 64 KB in all).
            Storage::ConstMem => {
                let off = match self.const_offsets.get(&*d.name) {
                    Some(&o) => o,
                    None => {
                        let t = types(self);
                        let (size, align) = (t.size(&ty), t.align(&ty).max(4));
                        let off = self.const_top.div_ceil(align) * align;
                        if off + size > 64 << 10 {
                            return Err(self.err(
                                d.span,
                                format!(
                                    "`{}` ends at byte {} of constant memory, which holds 64 KB",
                                    d.name,
                                    off + size
                                ),
                            ));
                        }
                        self.const_top = off + size;
                        self.const_offsets.insert(d.name.to_string(), off);
                        off
                    }
                };
                Binding::Mem(Place { space: MemSpace::Const, addr: Src::Imm(off), ty, read_only: false })
            }
            Storage::Param | Storage::Global => match &ty {
                Ty::Ptr(elem) => {
                    let base = self.global_base(&d.name);
                    let r = self.b.reg();
                    self.emit(Op::Mov { dst: r, a: Src::Imm(base) }, d.span);
                    let val =
                        Val::Ptr { src: Src::Reg(r), to: (**elem).clone(), space: MemSpace::Global, read_only: false };
                    Binding::Var { ty: ty.clone(), val }
                }
                _ => {
                    let mut v = self.vars.get(&*d.name).copied();
                    if let (None, Some(&a)) = (v, self.launch_values.get(&*d.name)) {
                        // The value the file's launch passes.
                        v = Some(a);
                        self.from_launch.push(format!("{} = {a}", d.name));
                    }
                    if v.is_none() && d.storage == Storage::Param {
                        // An integer kernel parameter with no value: the launch's thread count (MODEL.md
                        // section I), said in a note.
                        if let Ty::Int { bytes, .. } = ty {
                            let threads = u64::from(self.launch.threads()) * self.launch.grid.volume();
                            let mask = if bytes >= 8 { u64::MAX } else { (1u64 << (8 * bytes)) - 1 };
                            v = Some(i128::from(threads & mask));
                            self.defaulted.push(format!("{} = {}", d.name, threads & mask));
                        }
                    }
                    let why = self.param_why(d);
                    self.new_var(&ty, d.span, |l, r, span| match v {
                        Some(v) => l.emit(Op::Mov { dst: r, a: Src::Imm(v as u64) }, span),
                        None => l.emit(Op::Unknown { dst: r, why }, span),
                    })?
                }
            },
            Storage::Reg | Storage::Const | Storage::Macro if !d.dims.is_empty() => {
                // A local array lives in local memory, laid out per thread.
                let t = types(self);
                // `float a[] = {1, 2, 3}`: the size from the initialiser.
                if let (Ty::Array(elem, 0), Some(Ex { kind: E::InitList(items), .. })) = (&ty, &d.init) {
                    ty = Ty::Array(elem.clone(), items.len() as u64);
                }
                let (size, align) = (t.size(&ty), t.align(&ty).max(4));
                let home = self.homes.get(&d.span.start).cloned();
                let space = if home == Some(super::regs::Home::Registers) { MemSpace::Reg } else { MemSpace::Local };
                let top = if space == MemSpace::Reg { &mut self.reg_top } else { &mut self.local_top };
                let off = top.div_ceil(align) * align;
                *top = off + size;
                let line = self.lines.line(d.span.start.min(self.src.len()));
                let entry = match &home {
                    Some(super::regs::Home::Local(at, why)) => {
                        format!("`{}` (line {line}) in local memory: {why} ({})", d.name, self.pos(*at))
                    }
                    Some(super::regs::Home::Registers) => format!("`{}` (line {line}) in registers", d.name),
                    None => format!("`{}` (line {line}) in local memory", d.name),
                };
                if !self.array_homes.contains(&entry) {
                    self.array_homes.push(entry);
                }
                let place = Place { space, addr: Src::Imm(off), ty, read_only: false };
                if let Some(init) = &d.init {
                    self.init_array(&place, init)?;
                }
                Binding::Mem(place)
            }
            // A variable whose address is taken and indexed at run time (`T *p = reinterpret_cast<T *>(&v);
            // p[n - i]`) is local memory, as nvcc places it: its reads and writes are LDL and STL.
            Storage::Reg
                if d.pointers == 0
                    && !d.reference
                    && matches!(self.homes.get(&d.span.start), Some(super::regs::Home::Local(..))) =>
            {
                let t = types(self);
                let (size, align) = (t.size(&ty), t.align(&ty).max(4));
                let off = self.local_top.div_ceil(align) * align;
                self.local_top = off + size;
                let line = self.lines.line(d.span.start.min(self.src.len()));
                if let Some(super::regs::Home::Local(at, why)) = self.homes.get(&d.span.start).cloned() {
                    let entry = format!("`{}` (line {line}) in local memory: {why} ({})", d.name, self.pos(at));
                    if !self.array_homes.contains(&entry) {
                        self.array_homes.push(entry);
                    }
                }
                let place = Place { space: MemSpace::Local, addr: Src::Imm(off), ty: ty.clone(), read_only: false };
                if let Some(init) = &d.init {
                    // Its value is not followed once in memory (as any memory's); the initial value's own
                    // loads count, and the variable is written whole.
                    self.init_value(&ty, init)?;
                    self.access(&place, true, d.span)?;
                }
                Binding::Mem(place)
            }
            Storage::Macro | Storage::Const if self.vars.contains_key(&*d.name) => {
                let v = self.vars[&*d.name];
                let t = if d.storage == Storage::Macro {
                    IntTy::of_literal(v)
                } else {
                    IntTy::of(&ty).unwrap_or(IntTy::INT)
                };
                Binding::Const(Val::Int(Src::Imm(v as u64), t))
            }
            Storage::Macro => {
                let e = d.init.as_ref().ok_or_else(|| self.err(d.span, "a #define needs a value"))?;
                let v = self.rvalue(e)?;
                match v.src() {
                    Some(Src::Imm(_)) => Binding::Const(v),
                    _ => {
                        let ty = match &v {
                            Val::Int(_, t) => Ty::Int { bytes: u32::from(t.bits) / 8, signed: t.signed },
                            _ => ty,
                        };
                        let r = self.new_var(&ty, d.span, |_, _, _| {})?;
                        self.assign_var_binding(&r, v, e.span)?;
                        r
                    }
                }
            }
            Storage::Reg | Storage::Const => match &d.init {
                Some(e) => {
                    let v = self.init_value(&ty, e)?;
                    match (d.storage, v.src()) {
                        (Storage::Const, Some(Src::Imm(_))) => Binding::Const(v),
                        _ => self.var_with(&ty, v, d.span, e.span)?,
                    }
                }
                None => {
                    let why = self.param_why(d);
                    self.new_var(&ty, d.span, |l, r, span| l.emit(Op::Unknown { dst: r, why }, span))?
                }
            },
        };
        self.bind(d.name.clone(), binding);
        Ok(())
    }

    /// Adds a variable to the innermost scope.
    #[cold]
    fn bind(&mut self, name: Rc<str>, binding: Binding) {
        // A redeclaration in the same scope replaces the variable; an inner scope shadows it.
        let from = self.marks.last().copied().unwrap_or(0);
        match self.scopes[from..].iter_mut().find(|(n, _)| **n == *name) {
            Some((_, old)) => *old = binding,
            None => self.scopes.push((name, binding)),
        }
    }

    /// A name a fragment uses without declaring it: indexed, a global pointer whose element type its use
    /// tells (4-byte `int` when nothing does); otherwise an integer parameter with the launch's thread count.
    /// Either way it is declared at the top level and listed in a note.
    #[cold]
    fn implicit(&mut self, n: &str, indexed: bool, span: Span) -> R<Val> {
        if let Some((ns, _)) = n.split_once("::") {
            return Err(self.err(span, format!("`{ns}::` is a namespace or class warpscope does not know (known: cooperative_groups and its aliases)")));
        }
        if types(self).lookup(n).is_some() || matches!(n, "auto" | "thread_block_tile") {
            return Err(self.err(span, format!("the type `{n}` where a value belongs")));
        }
        let at = self.pos(span);
        let (ty, said) = if indexed {
            let (elem, from) = match infer_elem(self.ast, n) {
                Some((t, why)) => (t, why),
                None => (
                    Ty::Int { bytes: 4, signed: true },
                    "nothing in the code tells its element type, so 4-byte int".to_string(),
                ),
            };
            let tname = types(self).name(&elem);
            let base = self.global_base(n);
            let said = format!("`{n}` (first used at {at}) is a global pointer to {tname}, at 0x{base:x} ({from}); declare it to say otherwise: `{} *{n};`", c_name(types(self), &elem));
            (Ty::Ptr(Rc::new(elem)), said)
        } else {
            let threads = u64::from(self.launch.threads()) * self.launch.grid.volume();
            (Ty::Int { bytes: 4, signed: true }, format!("`{n}` (first used at {at}) is an int parameter = {threads}, the launch's thread count; declare it (`int {n} = 1000;`) or give it with --set {n}=VALUE"))
        };
        self.assumed.push(said);
        let v = match &ty {
            Ty::Ptr(elem) => {
                let base = self.global_base(n);
                Val::Ptr { src: Src::Imm(base), to: (**elem).clone(), space: MemSpace::Global, read_only: false }
            }
            _ => {
                let threads = u64::from(self.launch.threads()) * self.launch.grid.volume();
                Val::Int(Src::Imm(threads & 0xffff_ffff), IntTy::INT)
            }
        };
        // Declared once, for every later use (in any scope).
        let b = self.var_with(&ty, v.clone(), span, span)?;
        let at_top = self.globals_end.min(self.scopes.len());
        self.scopes.insert(at_top, (Rc::from(n), b));
        self.globals_end += 1;
        for m in &mut self.marks {
            if *m >= at_top {
                *m += 1;
            }
        }
        Ok(v)
    }

    /// The C type of a value (for `auto` and template argument deduction).
    #[cold]
    fn ty_of(&self, v: &Val) -> Ty {
        match v {
            Val::Int(_, t) => Ty::Int { bytes: u32::from(t.bits) / 8, signed: t.signed },
            Val::Float(_) => Ty::Float { bytes: 4 },
            Val::Ptr { to, .. } => Ty::Ptr(Rc::new(to.clone())),
            Val::Agg { ty, .. } => ty.clone(),
        }
    }

    /// A register variable of type `ty` holding `v`; a pointer variable points where `v` does (its space).
    #[cold]
    fn var_with(&mut self, ty: &Ty, v: Val, span: Span, vspan: Span) -> R<Binding> {
        if self.class_like(ty) {
            return Ok(Binding::Mem(self.class_place(ty)));
        }
        let mut b = self.new_var(ty, span, |_, _, _| {})?;
        if let (Binding::Var { val: Val::Ptr { space, read_only, .. }, .. }, Val::Ptr { space: s, read_only: r, .. }) =
            (&mut b, &v)
        {
            *space = *s;
            *read_only = *r;
        }
        self.assign_var_binding(&b, v, vspan)?;
        Ok(b)
    }

    /// A register variable of type `ty`; `init` fills each new scalar register.
    #[cold]
    fn new_var(&mut self, ty: &Ty, span: Span, mut init: impl FnMut(&mut Self, Reg, Span)) -> R<Binding> {
        if self.class_like(ty) {
            return Ok(Binding::Mem(self.class_place(ty)));
        }
        let val = self.fresh(ty, span, &mut init)?;
        Ok(Binding::Var { ty: ty.clone(), val })
    }

    #[cold]
    fn fresh(&mut self, ty: &Ty, span: Span, init: &mut impl FnMut(&mut Self, Reg, Span)) -> R<Val> {
        match ty {
            Ty::Int { .. } => {
                let r = self.b.reg();
                init(self, r, span);
                Ok(Val::Int(Src::Reg(r), IntTy::of(ty).unwrap_or(IntTy::INT)))
            }
            Ty::Float { .. } => {
                let r = self.b.reg();
                init(self, r, span);
                Ok(Val::Float(Src::Reg(r)))
            }
            Ty::Ptr(elem) => {
                let r = self.b.reg();
                init(self, r, span);
                Ok(Val::Ptr { src: Src::Reg(r), to: (**elem).clone(), space: MemSpace::Global, read_only: false })
            }
            Ty::Struct(_) | Ty::Vector { .. } => {
                let mut leaves = Vec::new();
                for (off, t) in self.fields(ty) {
                    leaves.push((off, self.fresh(&t, span, init)?));
                }
                Ok(Val::Agg { ty: ty.clone(), leaves })
            }
            Ty::Array(..) | Ty::Void => {
                Err(self.err(span, format!("a variable of type {} cannot live in a register", types(self).name(ty))))
            }
        }
    }

    /// Decides where the local arrays of a function body live (see `regs`).
    #[cold]
    fn find_homes(&mut self, body: &[Stmt]) {
        let bound = |n: &str| match self.lookup(n).map(|i| &self.scopes[i].1) {
            _ if self.vars.contains_key(n) => self.vars.get(n).map(|&v| v as u64),
            Some(Binding::Const(v)) => match v.src() {
                Some(Src::Imm(x)) => Some(x),
                _ => None,
            },
            // `x128::size`: a class's `static constexpr` member.
            None if n.contains("::") => {
                let (cls, m) = n.rsplit_once("::")?;
                let Ok(Some(Ty::Struct(i))) = self.lookup_type(cls, Span { start: 0, end: 0 }) else { return None };
                types(self).def(i).and_then(|d| d.statics.iter().find(|s| s.0 == m).map(|s| s.1 as u64))
            }
            _ => None,
        };
        // The body's own integer constants (`constexpr uint WMITER = (WM * WN) / (...)`), not declared yet
        // when the homes are decided, in order: a template call's arguments may name them.
        let mut ahead: HashMap<String, i128> = HashMap::new();
        for st in body {
            let Stmt::Decl(ds) = st else { continue };
            for d in ds.iter().filter(|d| d.storage == Storage::Const && d.pointers == 0 && d.dims.is_empty()) {
                let (Some(mut init), Ty::Int { .. }) = (d.init.as_ref(), &d.base) else { continue };
                // `constexpr size_t N{A / B};`
                if let E::InitList(items) = &init.kind {
                    match items.as_slice() {
                        [one] => init = one,
                        _ => continue,
                    }
                }
                let names = |n: &str| ahead.get(n).copied().or_else(|| bound(n).map(|x| i128::from(x as i64)));
                if let Ok(v) = super::pre::const_eval(self.src, init, &names) {
                    ahead.insert(d.name.to_string(), v);
                }
            }
        }
        let value = |n: &str| bound(n).or_else(|| ahead.get(n).map(|&v| v as u64));
        let constant = |n: &str| self.vars.contains_key(n) || value(n).is_some();
        let file = Rc::clone(&self.ast.file);
        let src = self.src;
        let ts = types(self);
        // A function that passes the array on to another is followed there too (a few calls deep).
        let callee = |f: &str, k: usize| callee_keeps(src, &file, ts, f, k, &constant, &value, 0);
        let found = super::regs::homes(body, &constant, &callee);
        self.homes.extend(found);
    }

    /// A value of type `ty` from `e`: a brace initialiser fills the type's scalar fields in order (nested
    /// braces read flat, as C's brace elision does), the rest zero; anything else is converted.
    fn init_value(&mut self, ty: &Ty, e: &Ex) -> R<Val> {
        let E::InitList(items) = &e.kind else {
            let v = self.rvalue(e)?;
            return self.convert(ty, v, e.span);
        };
        // `int4 v{*reinterpret_cast<const int4 *>(p)}`: one value of the type itself initialises it whole;
        // a scalar is its first field, the rest zero (read once either way).
        if let ([one], Ty::Struct(_) | Ty::Vector { .. }) = (items.as_slice(), ty) {
            if !matches!(one.kind, E::InitList(_)) {
                let v = self.rvalue(one)?;
                if matches!(&v, Val::Agg { ty: t, .. } if t == ty) {
                    return Ok(v);
                }
                let mut out = Vec::new();
                for (k, (off, fty)) in self.fields(ty).into_iter().enumerate() {
                    let x = if k == 0 { self.convert(&fty, v.clone(), one.span)? } else { self.zero(&fty, e.span)? };
                    out.push((off, x));
                }
                return Ok(Val::Agg { ty: ty.clone(), leaves: out });
            }
        }
        let mut flat = Vec::new();
        flatten_init(e, &mut flat);
        match ty {
            Ty::Struct(_) | Ty::Vector { .. } => {
                let leaves = self.fields(ty);
                if flat.len() > leaves.len() {
                    return Err(self.err(e.span, format!("{} values for {} fields", flat.len(), leaves.len())));
                }
                let mut out = Vec::new();
                for (k, (off, fty)) in leaves.into_iter().enumerate() {
                    let v = match flat.get(k) {
                        Some(x) => {
                            let v = self.rvalue(x)?;
                            self.convert(&fty, v, x.span)?
                        }
                        None => self.zero(&fty, e.span)?,
                    };
                    out.push((off, v));
                }
                Ok(Val::Agg { ty: ty.clone(), leaves: out })
            }
            Ty::Array(..) => Err(self.err(e.span, "an array is initialised in its declaration")),
            _ => match flat.as_slice() {
                [] => self.zero(ty, e.span),
                [x] => {
                    let v = self.rvalue(x)?;
                    self.convert(ty, v, x.span)
                }
                _ => Err(self.err(e.span, format!("{} values for one {}", flat.len(), types(self).name(ty)))),
            },
        }
    }

    /// Zero of a scalar type (a float's value is not followed, as any float's).
    #[cold]
    fn zero(&mut self, ty: &Ty, span: Span) -> R<Val> {
        let v = Val::Int(Src::Imm(0), IntTy::INT);
        match ty {
            Ty::Struct(_) | Ty::Vector { .. } => {
                let mut out = Vec::new();
                for (off, fty) in self.fields(ty) {
                    out.push((off, self.zero(&fty, span)?));
                }
                Ok(Val::Agg { ty: ty.clone(), leaves: out })
            }
            _ => self.convert(ty, v, span),
        }
    }

    /// The stores an array's initialiser makes: element by element in order (brace elision read flat), the
    /// rest zero, as C initialises every element.
    #[cold]
    fn init_array(&mut self, place: &Place, e: &Ex) -> R<()> {
        let mut flat = Vec::new();
        flatten_init(e, &mut flat);
        let leaves = self.fields(&place.ty);
        if flat.len() > leaves.len() {
            return Err(self.err(e.span, format!("{} values for {} elements", flat.len(), leaves.len())));
        }
        for (k, (off, fty)) in leaves.into_iter().enumerate() {
            if let Some(x) = flat.get(k) {
                self.rvalue(x)?;
            }
            let at = self.bin(BinOp::Add, Width::W64, place.addr, Src::Imm(off), e.span);
            self.access(&Place { space: place.space, addr: at, ty: fty, read_only: false }, true, e.span)?;
        }
        Ok(())
    }

    /// The scalar fields of a struct or vector type, with their offsets (nested arrays and structs flattened).
    #[cold]
    fn fields(&self, ty: &Ty) -> Vec<(u64, Ty)> {
        let t = types(self);
        let mut out = Vec::new();
        #[cold]
        fn walk(t: &Types, ty: &Ty, off: u64, out: &mut Vec<(u64, Ty)>) {
            match ty {
                Ty::Vector { elem, n, .. } => {
                    let es = t.size(elem);
                    for k in 0..u64::from(*n) {
                        walk(t, elem, off + es * k, out);
                    }
                }
                Ty::Struct(i) => {
                    if let Some(s) = t.def(*i) {
                        for (_, fty, foff) in &s.fields {
                            walk(t, fty, off + foff, out);
                        }
                    }
                }
                Ty::Array(e, n) => {
                    let es = t.size(e);
                    for k in 0..*n {
                        walk(t, e, off + es * k, out);
                    }
                }
                Ty::Void => {}
                other => out.push((off, other.clone())),
            }
        }
        walk(t, ty, 0, &mut out);
        out
    }

    #[cold]
    fn assign_var_binding(&mut self, b: &Binding, v: Val, span: Span) -> R<()> {
        if let Binding::Var { val, .. } = b {
            let dst = val.clone();
            self.store_into(&dst, v, span)?;
        }
        Ok(())
    }

    /// Copies value `v` (already of the variable's type) into the registers of `dst`.
    #[cold]
    fn store_into(&mut self, dst: &Val, v: Val, span: Span) -> R<()> {
        match (dst, v) {
            (Val::Agg { leaves, .. }, Val::Agg { leaves: from, .. }) => {
                for ((_, d), (_, s)) in leaves.iter().zip(from) {
                    self.store_into(d, s, span)?;
                }
                Ok(())
            }
            (d, s) => match (d.src(), s.src()) {
                (Some(Src::Reg(r)), Some(Src::Reg(t))) if r == t => Ok(()),
                (Some(Src::Reg(r)), Some(Src::Reg(t))) if self.b.retarget_last(t, r) => {
                    let u = self.unknown_src(Src::Reg(t));
                    let was = self.unknown_src(Src::Reg(r));
                    set_flag(&mut self.maybe_unknown, r, u || was);
                    Ok(())
                }
                (Some(Src::Reg(r)), Some(a)) => {
                    self.emit(Op::Mov { dst: r, a }, span);
                    Ok(())
                }
                _ => Err(self.err(span, "cannot assign this value here")),
            },
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Types and conversions
    // ------------------------------------------------------------------------------------------------

    /// Converts a value to a variable's type: integers wrap to the type's width as on the GPU.
    #[cold]
    fn convert(&mut self, ty: &Ty, v: Val, span: Span) -> R<Val> {
        Ok(match (ty, v) {
            (Ty::Int { .. }, Val::Int(s, from)) => {
                let to = IntTy::of(ty).unwrap_or(IntTy::INT);
                // Between the two widths the machine computes in (32 and 64 bits) a same-width conversion only
                // reinterprets the bits; narrower types wrap.
                let s = if to.bits >= 64 {
                    self.to64(s, from, span)
                } else if to.bits == 32 && from.promoted().bits == 32 {
                    s
                } else {
                    self.conv(s, to.bits, to.signed, span)
                };
                Val::Int(s, to)
            }
            (Ty::Int { .. }, Val::Ptr { src, .. }) => {
                let to = IntTy::of(ty).unwrap_or(IntTy::INT);
                let s = self.conv(src, to.bits, to.signed, span);
                Val::Int(s, to)
            }
            (Ty::Int { .. }, Val::Float(s)) => Val::Int(s, IntTy::of(ty).unwrap_or(IntTy::INT)),
            (Ty::Float { .. }, v @ Val::Float(_)) => v,
            (Ty::Float { .. }, _) => self.float(span),
            (Ty::Ptr(elem), Val::Ptr { src, space, read_only, .. }) => {
                Val::Ptr { src, to: (**elem).clone(), space, read_only }
            }
            (Ty::Ptr(elem), Val::Int(s, from)) => {
                let s = self.to64(s, from, span);
                Val::Ptr { src: s, to: (**elem).clone(), space: MemSpace::Global, read_only: false }
            }
            (Ty::Ptr(elem), Val::Float(s)) => {
                Val::Ptr { src: s, to: (**elem).clone(), space: MemSpace::Global, read_only: false }
            }
            (Ty::Struct(_) | Ty::Vector { .. }, v @ Val::Agg { .. }) => {
                let Val::Agg { ty: from, .. } = &v else { unreachable!("matched an aggregate") };
                if from != ty {
                    return Err(self
                        .err(span, format!("cannot convert {} to {}", types(self).name(from), types(self).name(ty))));
                }
                v
            }
            (ty, v) => {
                let what = match v {
                    Val::Int(..) => "an integer",
                    Val::Float(_) => "a floating-point value",
                    Val::Ptr { .. } => "a pointer",
                    Val::Agg { .. } => "a struct",
                };
                return Err(self.err(span, format!("cannot convert {what} to {}", types(self).name(ty))));
            }
        })
    }

    // ------------------------------------------------------------------------------------------------
    // Memory
    // ------------------------------------------------------------------------------------------------

    /// The accesses reading or writing a value of type `ty` makes.
    #[cold]
    fn units(&self, place: &Place, store: bool, span: Span) -> R<Vec<Unit>> {
        let t = types(self);
        let mut units = Vec::new();
        t.units(&place.ty, "", &mut units);
        if units.is_empty() {
            return Err(self.err(
                span,
                format!("cannot {} a value of type {}", if store { "store" } else { "load" }, t.name(&place.ty)),
            ));
        }
        Ok(units
            .into_iter()
            .map(|(off, size, signed, label)| {
                // A store writes the low bytes: it has no signedness (nvdisasm prints STG.E.U8).
                let sz = match (size, signed && !store) {
                    (1, true) => "S8",
                    (1, false) => "U8",
                    (2, true) => "S16",
                    (2, false) => "U16",
                    (4, _) => "32",
                    (8, _) => "64",
                    _ => "128",
                };
                let cop = self.cop.unwrap_or("");
                let mnemonic = match (place.space, store) {
                    (MemSpace::Global, false) if place.read_only => format!("LDG.E.CONSTANT.{sz}"),
                    // Kepler and Fermi: an ordinary load is the generic LD (LDG is 3.5's read-only path).
                    (MemSpace::Global, false) if self.sm < 50 => format!("LD.E{cop}.{sz}"),
                    (MemSpace::Global, false) => format!("LDG.E{cop}.{sz}"),
                    (MemSpace::Global, true) => format!("STG.E{cop}.{sz}"),
                    (MemSpace::Shared, false) => format!("LDS.{sz}"),
                    (MemSpace::Shared, true) => format!("STS.{sz}"),
                    (MemSpace::Local | MemSpace::Reg, false) => format!("LDL.{sz}"),
                    (MemSpace::Local | MemSpace::Reg, true) => format!("STL.{sz}"),
                    (MemSpace::Const, _) => format!("LDC.{sz}"),
                };
                Unit { off, mnemonic, label }
            })
            .collect())
    }

    /// Records the accesses of reading or writing `place`.
    #[cold]
    fn access(&mut self, place: &Place, store: bool, span: Span) -> R<()> {
        self.access_into(place, store, span, None)
    }

    /// [`Self::access`]; a one-access load can name the register that receives its data.
    #[cold]
    fn access_into(&mut self, place: &Place, store: bool, span: Span, data: Option<(Reg, u32)>) -> R<()> {
        if place.space == MemSpace::Reg {
            // Registers: no memory moves. The values an array keeps in registers are not followed.
            if let Some((d, _)) = data {
                let why = format!(
                    "a value kept in a register array ({}); warpscope follows addresses, not the values arrays hold",
                    self.pos(span)
                );
                let w = self.b.data_why(why);
                self.emit(Op::Unknown { dst: d, why: w }, span);
            }
            return Ok(());
        }
        if place.space == MemSpace::Const && store {
            return Err(self.err(span, "a store to __constant__ memory: kernels cannot write it"));
        }
        let units = self.units(place, store, span)?;
        let local = place.space == MemSpace::Local;
        let at = span.start.min(self.src.len());
        let line = self.site_line(span);
        let text = self.lines.text(line).trim().to_string();
        let written = self.src[at..span.end.min(self.src.len())].to_string();
        for u in units {
            let addr = self.bin(BinOp::Add, Width::W64, place.addr, Src::Imm(u.off), span);
            let addr = match addr {
                Src::Reg(r) => r,
                imm => {
                    let r = self.temp();
                    self.emit(Op::Mov { dst: r, a: imm }, span);
                    r
                }
            };
            let instr = Instr::parse(&u.mnemonic).map_err(|e| self.err(span, e.message))?;
            let notes = if local {
                vec![Note::new("local-array", "A local array in local memory: one of its indices is known only at run time, or it is used as a pointer (the program's note on local arrays says which)", "CUDA C++ Best Practices Guide, Local Memory")]
            } else {
                Vec::new()
            };
            let site = self.b.site(
                (self.stmt, self.seq.saturating_add(self.salt)),
                Site {
                    line,
                    text: text.clone(),
                    access: format!("{written}{}", u.label),
                    instr,
                    notes,
                    source: self.header_source(span),
                },
            );
            self.seq += 1;
            let ctx = self.b.ctx(format!("the address of this {} depends on ", u.mnemonic));
            self.emit(Op::Mem { site, addr, plg: None, src: None, ctx, data }, span);
        }
        Ok(())
    }

    /// Reads a place: arrays decay to a pointer to their first element; anything else is a load, whose value
    /// is data.
    #[cold]
    fn load(&mut self, place: Place, span: Span) -> R<Val> {
        if let Ty::Array(elem, _) = &place.ty {
            return Ok(Val::Ptr {
                src: place.addr,
                to: (**elem).clone(),
                space: place.space,
                read_only: place.read_only,
            });
        }
        let why = format!("data loaded from memory at {}; warpscope follows addresses, not data", self.pos(span));
        let w = self.b.data_why(why);
        let ty = place.ty.clone();
        if matches!(ty, Ty::Int { .. } | Ty::Float { .. } | Ty::Ptr(_)) && self.units(&place, false, span)?.len() == 1 {
            // One access: the memory operation itself receives the (unknown) data.
            let d = self.temp();
            self.access_into(&place, false, span, Some((d, w)))?;
            return Ok(match &ty {
                Ty::Float { .. } => Val::Float(Src::Reg(d)),
                Ty::Ptr(elem) => {
                    Val::Ptr { src: Src::Reg(d), to: (**elem).clone(), space: MemSpace::Global, read_only: false }
                }
                _ => Val::Int(Src::Reg(d), IntTy::of(&ty).unwrap_or(IntTy::INT)),
            });
        }
        self.access(&place, false, span)?;
        self.fresh_temp(&ty, span, w)
    }

    /// A value of type `ty` in fresh temporaries, unknown for reason `why`.
    #[cold]
    fn fresh_temp(&mut self, ty: &Ty, span: Span, why: u32) -> R<Val> {
        Ok(match ty {
            Ty::Int { .. } => {
                let d = self.temp();
                self.emit(Op::Unknown { dst: d, why }, span);
                Val::Int(Src::Reg(d), IntTy::of(ty).unwrap_or(IntTy::INT))
            }
            Ty::Float { .. } => {
                let d = self.temp();
                self.emit(Op::Unknown { dst: d, why }, span);
                Val::Float(Src::Reg(d))
            }
            Ty::Ptr(elem) => {
                let d = self.temp();
                self.emit(Op::Unknown { dst: d, why }, span);
                Val::Ptr { src: Src::Reg(d), to: (**elem).clone(), space: MemSpace::Global, read_only: false }
            }
            Ty::Struct(_) | Ty::Vector { .. } => {
                let mut leaves = Vec::new();
                for (off, t) in self.fields(ty) {
                    leaves.push((off, self.fresh_temp(&t, span, why)?));
                }
                Val::Agg { ty: ty.clone(), leaves }
            }
            Ty::Array(..) | Ty::Void => {
                return Err(self.err(span, format!("cannot load a value of type {}", types(self).name(ty))))
            }
        })
    }

    /// The address of element `idx` of an array of `elem` at `base`.
    #[cold]
    fn index_addr(&mut self, base: Src, elem: &Ty, idx: Src, it: IntTy, span: Span) -> Src {
        let size = types(self).size(elem).max(1);
        let t = it.promoted();
        if let Src::Imm(i) = idx {
            let off = exec::conv(i, t.bits, t.signed).wrapping_mul(size);
            return self.bin(BinOp::Add, Width::W64, base, Src::Imm(off), span);
        }
        let d = self.temp();
        self.emit(Op::Index { dst: d, base, idx, bits: t.bits, signed: t.signed, scale: size }, span);
        Src::Reg(d)
    }

    #[cold]
    fn require_ptr(&mut self, src: Src, what: &str, span: Span) {
        if self.unknown_src(src) {
            let ctx = self.b.ctx(format!("{what} depends on "));
            self.emit(Op::Require { a: src, ctx }, span);
        }
    }

    #[cold]
    fn lvalue(&mut self, e: &Ex) -> R<LRef> {
        match &e.kind {
            E::Name(n) => match self.lookup(n) {
                Some(i) => match &self.scopes[i].1 {
                    Binding::Var { .. } => Ok(LRef::Var(i)),
                    Binding::Mem(p) => Ok(LRef::Mem(p.clone())),
                    Binding::Const(_) => Err(self.err(e.span, format!("cannot assign to the constant `{n}`"))),
                },
                None => Err(self.err(e.span, format!("unknown name `{n}`"))),
            },
            E::Index(a, i) if matches!(self.static_type(a), Ok(Ty::Struct(_))) => self.index_operator(a, i, e),
            E::Index(a, i) => {
                let base = match &a.kind {
                    // A fragment's undeclared array: a global pointer.
                    E::Name(n) if self.ast.ran.is_none() && self.lookup(n).is_none() && self.builtin(a).is_none() => {
                        self.implicit(n, true, a.span)?
                    }
                    _ => self.rvalue(a)?,
                };
                let (idx, it) = self.int(i, "the index")?;
                match base {
                    Val::Ptr { src, to, space, read_only } => {
                        self.require_ptr(src, "the array's address", a.span);
                        let addr = self.index_addr(src, &to, idx, it, e.span);
                        Ok(LRef::Mem(Place { space, addr, ty: to, read_only }))
                    }
                    _ => Err(self.err(a.span, "indexing something that is not an array or a pointer")),
                }
            }
            E::Unary(UnOp::Deref, a) => match self.rvalue(a)? {
                Val::Ptr { src, to, space, read_only } => {
                    self.require_ptr(src, "the pointer", a.span);
                    Ok(LRef::Mem(Place { space, addr: src, ty: to, read_only }))
                }
                _ => Err(self.err(a.span, "dereferencing something that is not a pointer")),
            },
            E::Member(a, f, arrow) => {
                let base = if *arrow {
                    match self.rvalue(a)? {
                        Val::Ptr { src, to, space, read_only } => {
                            self.require_ptr(src, "the pointer", a.span);
                            LRef::Mem(Place { space, addr: src, ty: to, read_only })
                        }
                        _ => return Err(self.err(a.span, "`->` needs a pointer")),
                    }
                } else {
                    self.lvalue(a)?
                };
                match base {
                    LRef::Mem(p) => {
                        let (fty, off) = types(self).field(&p.ty, f).ok_or_else(|| {
                            self.err(e.op_span, format!("type {} has no field `{f}`", types(self).name(&p.ty)))
                        })?;
                        let addr = self.bin(BinOp::Add, Width::W64, p.addr, Src::Imm(off), e.span);
                        Ok(LRef::Mem(Place { addr, ty: fty, ..p }))
                    }
                    LRef::Var(i) => {
                        // A field of a register variable: handled by the caller through `member_var`.
                        Err(self.member_var_error(i, f, e))
                    }
                }
            }
            _ => Err(self.err(e.span, "this expression is not a variable or a memory location")),
        }
    }

    /// The value of `a.f` (`a->f`) when `f` is a `static constexpr` member of `a`'s class.
    #[cold]
    fn static_member(&self, a: &Ex, f: &str, arrow: bool) -> Option<i128> {
        let t = match (self.static_type(a).ok()?, arrow) {
            (Ty::Ptr(p), true) => (*p).clone(),
            (t, false) => t,
            _ => return None,
        };
        let Ty::Struct(i) = t else { return None };
        types(self).def(i)?.statics.iter().find(|s| s.0 == f).map(|s| s.1)
    }

    /// `obj[i]` on a class object: its `operator[]`, whose body returns an element of a field
    /// (`return payload[index];`), read as that element of this object.
    #[cold]
    fn index_operator(&mut self, a: &Ex, i: &Ex, e: &Ex) -> R<LRef> {
        let Ok(Ty::Struct(cls)) = self.static_type(a) else {
            return Err(self.err(a.span, "indexing something that is not an array or a pointer"));
        };
        let Some((def, _)) = self.method_def(cls, "operator[]", 1, e)? else {
            return Err(self.err(e.op_span, format!("`{}` has no operator[]", types(self).name(&Ty::Struct(cls)))));
        };
        let (Some(param), [Stmt::Return(Some(ret), _)]) = (def.params.first(), def.body.as_slice()) else {
            return Err(self.err(e.op_span, "warpscope reads an operator[] whose body is `return field[index];`"));
        };
        let obj = match self.lvalue(a)? {
            LRef::Mem(p) => p,
            LRef::Var(_) => self.class_place(&Ty::Struct(cls)),
        };
        let idx = self.rvalue(i)?;
        let pty = wrap_ptr(param.base.clone(), param.pointers);
        let idx = self.convert(&pty, idx, i.span)?;
        let saved_scopes = self.scopes.split_off(self.globals_end.min(self.scopes.len()));
        let saved_marks = std::mem::take(&mut self.marks);
        self.open_scope();
        for (name, fty, off) in types(self).def(cls).map(|d| d.fields).unwrap_or_default() {
            let addr = self.bin(BinOp::Add, Width::W64, obj.addr, Src::Imm(off), e.span);
            let place = Place { space: obj.space, addr, ty: fty, read_only: obj.read_only };
            self.bind(name.into(), Binding::Mem(place));
        }
        self.bind(param.name.clone(), Binding::Const(idx));
        let r = self.lvalue(ret);
        self.scopes.truncate(self.globals_end.min(self.scopes.len()));
        self.scopes.extend(saved_scopes);
        self.marks = saved_marks;
        r
    }

    #[cold]
    fn member_var_error(&self, _i: usize, _f: &str, e: &Ex) -> InputError {
        self.err(e.span, "assign to a field of a struct held in a register by assigning the whole struct")
    }

    /// A field of a struct or vector held in registers.
    #[cold]
    fn member_of(&self, v: &Val, f: &str, e: &Ex) -> R<Val> {
        let Val::Agg { ty, leaves } = v else {
            return Err(self.err(e.op_span, format!("`.{f}` on a value that is not a struct or vector")));
        };
        let (fty, off) = types(self)
            .field(ty, f)
            .ok_or_else(|| self.err(e.op_span, format!("type {} has no field `{f}`", types(self).name(ty))))?;
        let size = types(self).size(&fty);
        let parts: Vec<(u64, Val)> = leaves
            .iter()
            .filter(|(o, _)| *o >= off && *o < off + size.max(1))
            .map(|(o, v)| (o - off, v.clone()))
            .collect();
        match (&fty, parts.as_slice()) {
            (Ty::Struct(_) | Ty::Vector { .. }, _) => Ok(Val::Agg { ty: fty.clone(), leaves: parts }),
            (_, [(_, v)]) => Ok(v.clone()),
            _ => Err(self.err(e.op_span, format!("cannot read field `{f}` here"))),
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Expressions
    // ------------------------------------------------------------------------------------------------

    #[cold]
    fn rvalue(&mut self, e: &Ex) -> R<Val> {
        if let Some(v) = self.builtin(e) {
            return Ok(v);
        }
        match &e.kind {
            E::Int(n) => Ok(Val::Int(Src::Imm(*n as u64), IntTy::of_literal(*n))),
            E::Float => Ok(self.float(e.span)),
            E::Name(n) => match self.lookup(n).map(|i| self.scopes[i].1.clone()) {
                Some(Binding::Var { val, .. }) => Ok(val),
                Some(Binding::Const(v)) => Ok(v),
                Some(Binding::Mem(p)) => self.load(p, e.span),
                // C++'s bool literals, promoted to int like any bool.
                None if n == "true" || n == "false" => Ok(Val::Int(Src::Imm(u64::from(n == "true")), IntTy::INT)),
                None if n == "nullptr" => Ok(Val::Int(Src::Imm(0), IntTy::LLONG)),
                // `x128::size`: a class's `static constexpr` member.
                None if n.contains("::") => {
                    let (cls, m) = n.rsplit_once("::").unwrap_or((n, ""));
                    let Some(Ty::Struct(i)) = self.lookup_type(cls, e.span)? else {
                        return Err(self.err(e.span, format!("unknown name `{n}`")));
                    };
                    let v = types(self).def(i).and_then(|d| d.statics.iter().find(|s| s.0 == m).map(|s| s.1));
                    match v {
                        Some(v) => Ok(Val::Int(Src::Imm(v as u64), IntTy::of_literal(v))),
                        None => Err(self.err(e.span, format!("`{cls}` has no static constant `{m}`"))),
                    }
                }
                None if self.ast.ran.is_none() => self.implicit(n, false, e.span),
                None => {
                    let err = self.err(
                        e.span,
                        format!("unknown name `{n}`: declare it, or give it a value with --set {n}=VALUE"),
                    );
                    Ok(self.unsupported_value(err, format!("`{n}`, a name warpscope does not know"), e.span))
                }
            },
            // `packed.size`: a class's `static constexpr` member through an object.
            E::Member(a, f, arrow) if self.static_member(a, f, *arrow).is_some() => {
                let v = self.static_member(a, f, *arrow).unwrap_or(0);
                Ok(Val::Int(Src::Imm(v as u64), IntTy::of_literal(v)))
            }
            E::Member(a, f, false) if !self.is_memory(a) => {
                let v = self.rvalue(a)?;
                self.member_of(&v, f, e)
            }
            E::Index(..) | E::Member(..) | E::Unary(UnOp::Deref, _) => match self.lvalue(e)? {
                LRef::Mem(p) => self.load(p, e.span),
                LRef::Var(i) => match &self.scopes[i].1 {
                    Binding::Var { val, .. } => Ok(val.clone()),
                    _ => Err(self.err(e.span, "not a value")),
                },
            },
            E::Unary(UnOp::AddrOf, a) => match self.lvalue(a)? {
                LRef::Mem(p) => Ok(Val::Ptr { src: p.addr, to: p.ty, space: p.space, read_only: p.read_only }),
                LRef::Var(i) => {
                    // The address of a register variable of floating-point data (`reinterpret_cast<float *>(&v)`
                    // on a float4): a pointer into registers, whose values are not followed anyway. An integer's
                    // would be followed, so its address is refused rather than guessed.
                    let (n, b) = (self.scopes[i].0.clone(), self.scopes[i].1.clone());
                    let Binding::Var { ty, .. } = b else { unreachable!("an LRef::Var is a register variable") };
                    // A vector or struct (`reinterpret_cast<half *>(&int4_value)`) holds bits whose values are
                    // not followed; a scalar integer's value is, so its address is refused.
                    let whole = matches!(ty, Ty::Vector { .. } | Ty::Struct(_));
                    if !whole && !self.is_data_type(&ty) {
                        return Err(self.err(e.span, format!("`{n}` lives in a register: warpscope follows the address of a register variable only for floating-point values, vectors and structs")));
                    }
                    let p = self.class_place(&ty);
                    Ok(Val::Ptr { src: p.addr, to: ty, space: MemSpace::Reg, read_only: false })
                }
            },
            E::Unary(op, a) => {
                let v = self.rvalue(a)?;
                self.unary(*op, v, e)
            }
            E::Binary(op @ (CBin::LAnd | CBin::LOr), a, b) if !self.is_pure(b) => self.short_circuit(*op, a, b, e),
            E::Binary(op, a, b) => {
                let x = self.rvalue(a)?;
                let y = self.rvalue(b)?;
                self.binary(*op, x, y, e)
            }
            E::Ternary(c, a, b) => self.ternary(c, a, b, e),
            E::Assign(op, lhs, rhs) => {
                let v = self.rvalue(rhs)?;
                self.assign(lhs, *op, v, e)
            }
            E::IncDec(prefix, inc, a) => {
                let op = if *inc { CBin::Add } else { CBin::Sub };
                let one = Val::Int(Src::Imm(1), IntTy::INT);
                match self.lvalue(a)? {
                    LRef::Var(i) => {
                        let Binding::Var { val: old, .. } = self.scopes[i].1.clone() else {
                            unreachable!("a variable")
                        };
                        // The old value, copied before the variable changes (for `i++`).
                        let before = if *prefix { None } else { Some(self.copy(&old, e.span)) };
                        let new = self.assign(a, Some(op), one, e)?;
                        Ok(before.unwrap_or(new))
                    }
                    LRef::Mem(p) => {
                        self.access(&p, false, a.span)?;
                        self.access(&p, true, a.span)?;
                        let why = format!(
                            "data loaded from memory at {}; warpscope follows addresses, not data",
                            self.pos(a.span)
                        );
                        let w = self.b.data_why(why);
                        self.fresh_temp(&p.ty, e.span, w)
                    }
                }
            }
            E::Cast(tn, a) => {
                // `cg::plus<float>{}`: an operator for `cg::reduce`.
                if ["plus<", "less<", "greater<", "bit_and<", "bit_or<", "bit_xor<"]
                    .iter()
                    .any(|p| tn.base.starts_with(p))
                {
                    return Ok(Val::Int(Src::Imm(0), IntTy::INT));
                }
                let base = self
                    .lookup_type(&tn.base, e.op_span)?
                    .ok_or_else(|| self.err(e.op_span, format!("unknown type `{}`", tn.base)))?;
                let ty = wrap_ptr(base, tn.pointers);
                if let E::InitList(items) = &a.kind {
                    if self.class_like(&ty) {
                        return self.construct(&ty, items, e);
                    }
                    return self.init_value(&ty, a);
                }
                let v = self.rvalue(a)?;
                self.convert(&ty, v, e.span)
            }
            E::InitList(items) => match items.as_slice() {
                [one] => self.rvalue(one),
                _ => Err(self.err(e.span, "a brace initialiser here needs a type: write `T{...}`")),
            },
            E::SizeofType(tn) => {
                let base = self
                    .lookup_type(&tn.base, e.op_span)?
                    .ok_or_else(|| self.err(e.op_span, format!("unknown type `{}`", tn.base)))?;
                let size = types(self).size(&wrap_ptr(base, tn.pointers));
                Ok(Val::Int(Src::Imm(size), IntTy::ULLONG))
            }
            E::Call(name, args) => self.call(name, args, e),
            E::SizeofExpr(a) => {
                let ty = self.static_type(a)?;
                Ok(Val::Int(Src::Imm(types(self).size(&ty)), IntTy::ULLONG))
            }
            E::Str(_) => Err(self.err(e.span, "a string here: only printf and assert take one")),
        }
    }

    /// The type of `a` without evaluating it (for `sizeof`): names, elements and fields of names.
    #[cold]
    fn static_type(&self, a: &Ex) -> R<Ty> {
        let t = types(self);
        match &a.kind {
            E::Name(n) => match self.lookup(n).map(|i| &self.scopes[i].1) {
                Some(Binding::Var { ty, .. }) => Ok(ty.clone()),
                Some(Binding::Mem(p)) => Ok(p.ty.clone()),
                Some(Binding::Const(v)) => Ok(self.ty_of(v)),
                None => Err(self.err(a.span, format!("unknown name `{n}`"))),
            },
            E::Index(b, _) | E::Unary(UnOp::Deref, b) => match self.static_type(b)? {
                Ty::Array(e, _) | Ty::Ptr(e) => Ok((*e).clone()),
                // A class's `operator[]` returning an element of a field (`return payload[index];`).
                Ty::Struct(i) if matches!(a.kind, E::Index(..)) => {
                    let def = t.def(i).ok_or_else(|| self.err(a.span, "an unknown struct"))?;
                    let elem = def.methods.iter().filter(|m| m.name == "operator[]").find_map(|m| {
                        let toks = &m.toks;
                        let k = toks
                            .iter()
                            .position(|x| matches!(&x.tok, crate::lang::lex::Tok::Ident(w) if w == "return"))?;
                        let crate::lang::lex::Tok::Ident(f) = &toks.get(k + 1)?.tok else { return None };
                        match def.fields.iter().find(|x| &x.0 == f)?.1.clone() {
                            Ty::Array(e, _) => Some((*e).clone()),
                            _ => None,
                        }
                    });
                    elem.ok_or_else(|| {
                        self.err(a.span, "indexing a struct without an operator[] that returns a field's element")
                    })
                }
                _ => Err(self.err(a.span, "indexing something that is not an array or a pointer")),
            },
            E::Member(b, f, arrow) => {
                let bt = self.static_type(b)?;
                let bt = match (arrow, bt) {
                    (true, Ty::Ptr(e)) => (*e).clone(),
                    (false, x) => x,
                    _ => return Err(self.err(a.span, "`->` needs a pointer")),
                };
                t.field(&bt, f).map(|x| x.0).ok_or_else(|| self.err(a.op_span, format!("no field `{f}`")))
            }
            E::Int(v) => Ok(match IntTy::of_literal(*v) {
                x if x.bits == 32 => Ty::Int { bytes: 4, signed: true },
                _ => Ty::Int { bytes: 8, signed: true },
            }),
            _ => Err(self.err(a.span, "sizeof of this expression: write sizeof(TYPE) or sizeof(a variable)")),
        }
    }

    /// Whether `a` names memory (so `a.f` is a field of a memory place, not of a register struct).
    #[cold]
    fn is_memory(&self, a: &Ex) -> bool {
        match &a.kind {
            E::Name(n) => matches!(self.lookup(n).map(|i| &self.scopes[i].1), Some(Binding::Mem(_))),
            E::Index(..) | E::Unary(UnOp::Deref, _) => true,
            E::Member(b, _, arrow) => *arrow || self.is_memory(b),
            _ => false,
        }
    }

    /// Whether evaluating `e` has no effect and cannot fail: then both sides of `&&`, `||` and `?:` can be
    /// computed and selected, without a branch.
    #[cold]
    fn is_pure(&self, e: &Ex) -> bool {
        match &e.kind {
            E::Int(_) | E::Float | E::SizeofType(_) => true,
            E::Name(n) => !matches!(self.lookup(n).map(|i| &self.scopes[i].1), Some(Binding::Mem(_))),
            E::Member(b, _, false) => !self.is_memory(b) && self.is_pure(b),
            E::Unary(UnOp::Deref | UnOp::AddrOf, _) => false,
            E::Unary(_, a) | E::Cast(_, a) => self.is_pure(a),
            E::Binary(CBin::Div | CBin::Rem, ..) => false,
            E::Binary(_, a, b) => self.is_pure(a) && self.is_pure(b),
            E::Ternary(c, a, b) => self.is_pure(c) && self.is_pure(a) && self.is_pure(b),
            E::Call(n, args) => {
                matches!(n.as_str(), "min" | "max" | "umin" | "umax" | "abs") && args.iter().all(|a| self.is_pure(a))
            }
            _ => false,
        }
    }

    /// A copy of a value's registers (so a later change of the variable does not change it).
    #[cold]
    fn copy(&mut self, v: &Val, span: Span) -> Val {
        match v {
            Val::Agg { ty, leaves } => {
                Val::Agg { ty: ty.clone(), leaves: leaves.iter().map(|(o, l)| (*o, self.copy(l, span))).collect() }
            }
            other => {
                let Some(Src::Reg(r)) = other.src() else { return other.clone() };
                let d = self.temp();
                self.emit(Op::Mov { dst: d, a: Src::Reg(r) }, span);
                match other {
                    Val::Int(_, t) => Val::Int(Src::Reg(d), *t),
                    Val::Float(_) => Val::Float(Src::Reg(d)),
                    Val::Ptr { to, space, read_only, .. } => {
                        Val::Ptr { src: Src::Reg(d), to: to.clone(), space: *space, read_only: *read_only }
                    }
                    Val::Agg { .. } => unreachable!("handled above"),
                }
            }
        }
    }

    #[cold]
    fn unary(&mut self, op: UnOp, v: Val, e: &Ex) -> R<Val> {
        match v {
            Val::Int(s, t) => {
                let t = t.promoted();
                let w = t.width();
                Ok(match op {
                    UnOp::Neg => Val::Int(self.bin(BinOp::Sub, w, Src::Imm(0), s, e.span), t),
                    UnOp::Plus => Val::Int(s, t),
                    UnOp::Not => Val::Int(self.bin(BinOp::Xor, w, s, Src::Imm(u64::MAX), e.span), t),
                    _ => {
                        let p = self.setp(Cmp::Eq, false, w, s, Src::Imm(0), e.span);
                        self.bool_val(p, e.span)
                    }
                })
            }
            Val::Ptr { src, .. } if op == UnOp::LNot => {
                let p = self.setp(Cmp::Eq, false, Width::W64, src, Src::Imm(0), e.span);
                Ok(self.bool_val(p, e.span))
            }
            Val::Float(s) => Ok(Val::Float(s)),
            _ => Err(self.err(e.op_span, "this operator needs a number")),
        }
    }

    #[cold]
    fn setp(&mut self, cmp: Cmp, signed: bool, w: Width, a: Src, b: Src, span: Span) -> PredRef {
        if let (Src::Imm(x), Src::Imm(y)) = (a, b) {
            return if exec::setp(cmp, signed, w, x, y) { PredRef::TRUE } else { PredRef::TRUE.negated() };
        }
        let p = self.b.pred();
        self.emit(Op::Setp { dst: p, cmp, signed, w, a, b }, span);
        PredRef::of(p)
    }

    /// A predicate as an `int` 0 or 1.
    #[cold]
    fn bool_val(&mut self, p: PredRef, span: Span) -> Val {
        match p.idx {
            None => Val::Int(Src::Imm(u64::from(!p.neg)), IntTy::INT),
            Some(_) => {
                let d = self.temp();
                self.emit(Op::PredToReg { dst: d, p }, span);
                Val::Int(Src::Reg(d), IntTy::INT)
            }
        }
    }

    #[cold]
    fn binary(&mut self, op: CBin, x: Val, y: Val, e: &Ex) -> R<Val> {
        let span = e.span;
        match (x, y) {
            (Val::Int(a, ta), Val::Int(b, tb)) => self.int_binary(op, a, ta, b, tb, e),
            (Val::Float(a), _) | (_, Val::Float(a)) => {
                if matches!(
                    op,
                    CBin::Lt | CBin::Le | CBin::Gt | CBin::Ge | CBin::Eq | CBin::Ne | CBin::LAnd | CBin::LOr
                ) {
                    // A comparison of data is an int, still data.
                    let d = self.temp();
                    self.emit(Op::Mov { dst: d, a }, span);
                    Ok(Val::Int(Src::Reg(d), IntTy::INT))
                } else {
                    Ok(Val::Float(a))
                }
            }
            (Val::Ptr { src, to, space, read_only }, Val::Int(i, ti)) if matches!(op, CBin::Add | CBin::Sub) => {
                let i = self.to64(i, ti, span);
                let i = if op == CBin::Sub { self.bin(BinOp::Sub, Width::W64, Src::Imm(0), i, span) } else { i };
                let addr = self.index_addr(src, &to, i, IntTy::LLONG, span);
                Ok(Val::Ptr { src: addr, to, space, read_only })
            }
            (Val::Int(i, ti), Val::Ptr { src, to, space, read_only }) if op == CBin::Add => {
                let addr = self.index_addr(src, &to, i, ti, span);
                Ok(Val::Ptr { src: addr, to, space, read_only })
            }
            (Val::Ptr { src: p, to, .. }, Val::Ptr { src: q, .. }) => {
                if op == CBin::Sub {
                    let size = types(self).size(&to).max(1);
                    let d = self.bin(BinOp::Sub, Width::W64, p, q, span);
                    let d = self.bin(BinOp::DivS, Width::W64, d, Src::Imm(size), span);
                    return Ok(Val::Int(d, IntTy::LLONG));
                }
                self.int_binary(op, p, IntTy::ULLONG, q, IntTy::ULLONG, e)
            }
            (Val::Ptr { src, .. }, Val::Int(i, ti)) | (Val::Int(i, ti), Val::Ptr { src, .. })
                if matches!(op, CBin::Eq | CBin::Ne | CBin::LAnd | CBin::LOr) =>
            {
                let i = self.to64(i, ti, span);
                self.int_binary(op, src, IntTy::ULLONG, i, IntTy::ULLONG, e)
            }
            _ => Err(self.err(e.op_span, format!("`{}` does not apply to a pointer", op.symbol()))),
        }
    }

    #[cold]
    fn int_binary(&mut self, op: CBin, a: Src, ta: IntTy, b: Src, tb: IntTy, e: &Ex) -> R<Val> {
        let span = e.span;
        // Shifts take the promoted type of the left operand; everything else the usual conversions.
        if matches!(op, CBin::Shl | CBin::Shr) {
            let t = ta.promoted();
            let w = t.width();
            let a = if w == Width::W64 { self.to64(a, ta, span) } else { a };
            let kind = match (op, t.signed) {
                (CBin::Shl, _) => BinOp::Shl,
                (_, true) => BinOp::ShrS,
                _ => BinOp::ShrU,
            };
            let b = self.to64(b, tb, span);
            return Ok(Val::Int(self.bin(kind, w, a, b, span), t));
        }
        if matches!(op, CBin::LAnd | CBin::LOr) {
            let pa = self.setp(Cmp::Ne, false, ta.width(), a, Src::Imm(0), span);
            let pb = self.setp(Cmp::Ne, false, tb.width(), b, Src::Imm(0), span);
            let p = self.pred_logic(if op == CBin::LAnd { PredOp::And } else { PredOp::Or }, pa, pb, span);
            return Ok(self.bool_val(p, span));
        }
        let t = IntTy::common(ta, tb);
        let w = t.width();
        let (a, b) = if w == Width::W64 { (self.to64(a, ta, span), self.to64(b, tb, span)) } else { (a, b) };
        let cmp = |c| Some(c);
        let compare = match op {
            CBin::Lt => cmp(Cmp::Lt),
            CBin::Le => cmp(Cmp::Le),
            CBin::Gt => cmp(Cmp::Gt),
            CBin::Ge => cmp(Cmp::Ge),
            CBin::Eq => cmp(Cmp::Eq),
            CBin::Ne => cmp(Cmp::Ne),
            _ => None,
        };
        if let Some(c) = compare {
            let p = self.setp(c, t.signed, w, a, b, span);
            return Ok(self.bool_val(p, span));
        }
        let kind = match (op, t.signed) {
            (CBin::Add, _) => BinOp::Add,
            (CBin::Sub, _) => BinOp::Sub,
            (CBin::Mul, _) => BinOp::Mul,
            (CBin::Div, true) => BinOp::DivS,
            (CBin::Div, false) => BinOp::DivU,
            (CBin::Rem, true) => BinOp::RemS,
            (CBin::Rem, false) => BinOp::RemU,
            (CBin::And, _) => BinOp::And,
            (CBin::Or, _) => BinOp::Or,
            (CBin::Xor, _) => BinOp::Xor,
            _ => return Err(self.err(e.op_span, format!("`{}` is not supported here", op.symbol()))),
        };
        if matches!(kind, BinOp::DivS | BinOp::DivU | BinOp::RemS | BinOp::RemU) && b == Src::Imm(0) {
            return Err(self.err(e.op_span, format!("division by zero in `{}`", op.symbol())));
        }
        let span = if matches!(kind, BinOp::DivS | BinOp::DivU | BinOp::RemS | BinOp::RemU) { e.op_span } else { span };
        Ok(Val::Int(self.bin(kind, w, a, b, span), t))
    }

    #[cold]
    fn pred_logic(&mut self, op: PredOp, a: PredRef, b: PredRef, span: Span) -> PredRef {
        let t = PredRef::TRUE;
        let f = t.negated();
        match (op, a.idx, b.idx) {
            (PredOp::And, None, _) => {
                if a == t {
                    b
                } else {
                    f
                }
            }
            (PredOp::And, _, None) => {
                if b == t {
                    a
                } else {
                    f
                }
            }
            (PredOp::Or, None, _) => {
                if a == t {
                    t
                } else {
                    b
                }
            }
            (PredOp::Or, _, None) => {
                if b == t {
                    t
                } else {
                    a
                }
            }
            _ => {
                let p = self.b.pred();
                self.emit(Op::PredLogic { dst: p, op, a, b }, span);
                PredRef::of(p)
            }
        }
    }

    /// `a && b` or `a || b` whose right side has effects: it runs only in the lanes that need it.
    #[cold]
    fn short_circuit(&mut self, op: CBin, a: &Ex, b: &Ex, e: &Ex) -> R<Val> {
        let pa = self.cond(a, "the condition")?;
        let r = self.temp();
        let skip = self.b.label();
        // && : lanes where a is false are done with 0; || : lanes where a is true are done with 1.
        let (done_when, done_value) = if op == CBin::LAnd { (pa.negated(), 0) } else { (pa, 1) };
        self.emit(Op::Mov { dst: r, a: Src::Imm(done_value) }, e.span);
        let what = if op == CBin::LAnd { "the left side of `&&`" } else { "the left side of `||`" };
        self.branch(skip, pa, done_when == pa, what, a.span);
        let pb = self.cond(b, "the condition")?;
        self.emit(Op::PredToReg { dst: r, p: pb }, e.span);
        self.b.place(skip);
        Ok(Val::Int(Src::Reg(r), IntTy::INT))
    }

    #[cold]
    fn ternary(&mut self, c: &Ex, a: &Ex, b: &Ex, e: &Ex) -> R<Val> {
        let p = self.cond(c, "the condition")?;
        if self.is_pure(a) && self.is_pure(b) {
            let x = self.rvalue(a)?;
            let y = self.rvalue(b)?;
            return self.select(p, x, y, e);
        }
        // Effects on either side: branch, and meet in a result register.
        let else_l = self.b.label();
        let end = self.b.label();
        self.branch(else_l, p, false, "the condition of `?:`", c.span);
        let x = self.rvalue(a)?;
        let (slot, ty) = self.result_slot(&x, e)?;
        let x = self.convert(&ty, x, a.span)?;
        self.store_into(&slot, x, a.span)?;
        self.b.bra(end, None, e.span);
        self.b.place(else_l);
        let y = self.rvalue(b)?;
        let y = self.convert(&ty, y, b.span)?;
        self.store_into(&slot, y, b.span)?;
        self.b.place(end);
        Ok(slot)
    }

    #[cold]
    fn result_slot(&mut self, like: &Val, e: &Ex) -> R<(Val, Ty)> {
        let ty = match like {
            Val::Int(_, t) => {
                let p = t.promoted();
                Ty::Int { bytes: u32::from(p.bits) / 8, signed: p.signed }
            }
            Val::Float(_) => Ty::Float { bytes: 4 },
            Val::Ptr { to, .. } => Ty::Ptr(Rc::new(to.clone())),
            Val::Agg { ty, .. } => ty.clone(),
        };
        let mut nothing = |_: &mut Self, _: Reg, _: Span| {};
        let mut v = self.fresh(&ty, e.span, &mut nothing)?;
        if let (Val::Ptr { space, read_only, .. }, Val::Ptr { space: s2, read_only: r2, .. }) = (like, &mut v) {
            *s2 = *space;
            *r2 = *read_only;
        }
        Ok((v, ty))
    }

    #[cold]
    fn select(&mut self, p: PredRef, x: Val, y: Val, e: &Ex) -> R<Val> {
        let span = e.span;
        if p.idx.is_none() {
            return Ok(if p.neg { y } else { x });
        }
        let sel = |l: &mut Self, a: Src, b: Src| {
            let d = l.temp();
            l.emit(Op::Sel { dst: d, p, a, b }, span);
            Src::Reg(d)
        };
        match (x, y) {
            (Val::Int(a, ta), Val::Int(b, tb)) => {
                let t = IntTy::common(ta, tb);
                let (a, b) =
                    if t.width() == Width::W64 { (self.to64(a, ta, span), self.to64(b, tb, span)) } else { (a, b) };
                Ok(Val::Int(sel(self, a, b), t))
            }
            (Val::Ptr { src: a, to, space, read_only }, Val::Ptr { src: b, space: s2, .. }) if space == s2 => {
                Ok(Val::Ptr { src: sel(self, a, b), to, space, read_only })
            }
            (Val::Float(a), other) | (other, Val::Float(a)) => {
                let b = other.src().unwrap_or(a);
                Ok(Val::Float(sel(self, a, b)))
            }
            // Structs of one type: field by field.
            (Val::Agg { ty, leaves: la }, Val::Agg { ty: tb, leaves: lb }) if ty == tb && la.len() == lb.len() => {
                let mut leaves = Vec::new();
                for ((off, x), (_, y)) in la.into_iter().zip(lb) {
                    leaves.push((off, self.select(p, x, y, e)?));
                }
                Ok(Val::Agg { ty, leaves })
            }
            _ => Err(self.err(e.op_span, "the two sides of `?:` have types warpscope cannot combine")),
        }
    }

    #[cold]
    fn assign(&mut self, lhs: &Ex, op: Option<CBin>, v: Val, e: &Ex) -> R<Val> {
        // A field of a register struct: `s.x = v`.
        if let E::Member(base, f, false) = &lhs.kind {
            if !self.is_memory(base) {
                let whole = self.rvalue(base)?;
                let field = self.member_of(&whole, f, lhs)?;
                let new = match op {
                    None => v,
                    Some(op) => self.binary(op, field.clone(), v, e)?,
                };
                let new = match &field {
                    Val::Int(_, t) => {
                        self.convert(&Ty::Int { bytes: u32::from(t.bits) / 8, signed: t.signed }, new, e.span)?
                    }
                    _ => new,
                };
                self.store_into(&field, new.clone(), e.span)?;
                return Ok(field);
            }
        }
        match self.lvalue(lhs)? {
            LRef::Var(i) => {
                let Binding::Var { ty, val } = self.scopes[i].1.clone() else { unreachable!("a variable") };
                let new = match op {
                    None => v,
                    Some(op) => self.binary(op, val.clone(), v, e)?,
                };
                let new = self.convert(&ty, new, e.span)?;
                // A pointer variable keeps the space of what it points to.
                if let (Val::Ptr { space: want, .. }, Val::Ptr { space: got, .. }) = (&val, &new) {
                    if want != got {
                        return Err(self.err(
                            e.span,
                            "this pointer points to another memory space than before; warpscope needs each pointer variable to stay in one space",
                        ));
                    }
                }
                self.store_into(&val, new, e.span)?;
                Ok(val)
            }
            LRef::Mem(p) => {
                if let Ty::Array(..) = p.ty {
                    return Err(self.err(lhs.span, "cannot assign to a whole array"));
                }
                if op.is_some() {
                    self.store_at = Some(e.op_span.start);
                    let r = self.access(&p, false, lhs.span);
                    self.store_at = None;
                    r?;
                }
                self.store_at = Some(e.op_span.start);
                let r = self.access(&p, true, lhs.span);
                self.store_at = None;
                r?;
                if op.is_none() {
                    // `a[i] = v` has the value v, as the element's type.
                    let ty = p.ty.clone();
                    return self.convert(&ty, v, e.span);
                }
                let why =
                    format!("data loaded from memory at {}; warpscope follows addresses, not data", self.pos(lhs.span));
                let w = self.b.data_why(why);
                self.fresh_temp(&p.ty, lhs.span, w)
            }
        }
    }

    #[cold]
    fn call(&mut self, name: &str, args: &[Ex], e: &Ex) -> R<Val> {
        match name {
            "__comma" => {
                let mut last = Val::Int(Src::Imm(0), IntTy::INT);
                for a in args {
                    last = self.rvalue(a)?;
                }
                Ok(last)
            }
            "min" | "max" | "umin" | "umax" if args.len() == 2 => {
                let (a, b) = (self.rvalue(&args[0])?, self.rvalue(&args[1])?);
                match (a, b) {
                    (Val::Int(a, ta), Val::Int(b, tb)) => {
                        let mut t = IntTy::common(ta, tb);
                        if name.starts_with('u') {
                            t.signed = false;
                        }
                        let w = t.width();
                        let (a, b) =
                            if w == Width::W64 { (self.to64(a, ta, e.span), self.to64(b, tb, e.span)) } else { (a, b) };
                        let op = match (name.ends_with("min"), t.signed) {
                            (true, true) => BinOp::MinS,
                            (true, false) => BinOp::MinU,
                            (false, true) => BinOp::MaxS,
                            (false, false) => BinOp::MaxU,
                        };
                        Ok(Val::Int(self.bin(op, w, a, b, e.span), t))
                    }
                    (Val::Float(s), _) | (_, Val::Float(s)) => Ok(Val::Float(s)),
                    _ => Err(self.err(e.span, format!("`{name}` takes numbers"))),
                }
            }
            "abs" if args.len() == 1 => match self.rvalue(&args[0])? {
                Val::Int(s, t) => {
                    let t = t.promoted();
                    let w = t.width();
                    let n = self.bin(BinOp::Sub, w, Src::Imm(0), s, e.span);
                    Ok(Val::Int(self.bin(BinOp::MaxS, w, s, n, e.span), t))
                }
                other => Ok(other),
            },
            "__ldg" | "__ldca" | "__ldcg" | "__ldcs" | "__ldlu" | "__ldcv" if args.len() == 1 => {
                match self.rvalue(&args[0])? {
                    Val::Ptr { src, to, space, .. } => {
                        self.require_ptr(src, "the pointer", args[0].span);
                        let read_only = name == "__ldg";
                        // CUDA's cache-hint loads are `ld.global.ca/.cg/.cs/.lu/.cv` (CUDA C++ Programming
                        // Guide, "Load Functions Using Cache Hints"), on the global path only.
                        self.cop = match (name, space) {
                            (_, MemSpace::Shared | MemSpace::Local) => None,
                            ("__ldca", _) => Some(".CA"),
                            ("__ldcg", _) => Some(".CG"),
                            ("__ldcs", _) => Some(".CS"),
                            ("__ldlu", _) => Some(".LU"),
                            ("__ldcv", _) => Some(".CV"),
                            _ => None,
                        };
                        let v = self.load(Place { space, addr: src, ty: to, read_only }, e.span);
                        self.cop = None;
                        v
                    }
                    _ => Err(self.err(args[0].span, format!("`{name}` takes a pointer"))),
                }
            }
            // `__stcs(p, v)` and its kin: `st.global.cs/.cg/.wb/.wt` (the same guide, "Store Functions Using
            // Cache Hints").
            "__stwb" | "__stcg" | "__stcs" | "__stwt" if args.len() == 2 => {
                let v = self.rvalue(&args[1])?;
                match self.rvalue(&args[0])? {
                    Val::Ptr { src, to, space, .. } => {
                        self.require_ptr(src, "the pointer", args[0].span);
                        self.cop = match (name, space) {
                            (_, MemSpace::Shared | MemSpace::Local) => None,
                            ("__stwb", _) => Some(".WB"),
                            ("__stcg", _) => Some(".CG"),
                            ("__stcs", _) => Some(".CS"),
                            _ => Some(".WT"),
                        };
                        let _ = self.convert(&to, v, args[1].span)?;
                        let r = self.access(&Place { space, addr: src, ty: to, read_only: false }, true, e.span);
                        self.cop = None;
                        r?;
                        Ok(Val::Int(Src::Imm(0), IntTy::INT))
                    }
                    _ => Err(self.err(args[0].span, format!("`{name}` takes a pointer and a value"))),
                }
            }
            "__syncthreads" => {
                for a in args {
                    self.rvalue(a)?;
                }
                self.emit(Op::Bar, e.span);
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            "__asm" => self.asm(args, e),
            "__cvta_generic_to_shared" if args.len() == 1 => match self.rvalue(&args[0])? {
                // A shared pointer already holds its offset in the shared window: what the conversion gives.
                Val::Ptr { src, space: MemSpace::Shared, .. } => Ok(Val::Int(src, IntTy::ULLONG)),
                _ => Err(self.err(args[0].span, "`__cvta_generic_to_shared` takes a pointer into shared memory")),
            },
            "__pipeline_memcpy_async" | "cuda::memcpy_async" | "memcpy_async" | "cooperative_groups::memcpy_async" => {
                self.memcpy_async(name, args, e)
            }
            // libcu++: `init(&bar, n)` sets up a barrier; `make_pipeline()` a thread's pipeline.
            "init"
                if args.len() == 2
                    && matches!(&args[0].kind, E::Unary(UnOp::AddrOf, b) if matches!(self.static_type(b), Ok(t) if types(self).name(&t).starts_with("barrier<"))) =>
            {
                for a in args {
                    self.rvalue(a)?;
                }
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            "make_pipeline" => {
                for a in args {
                    self.rvalue(a)?;
                }
                let ty = self.lookup_type("pipeline<thread_scope_thread>", e.span)?.unwrap_or(Ty::Void);
                Ok(Val::Agg { ty, leaves: Vec::new() })
            }
            "__pipeline_commit" | "__pipeline_wait_prior" | "__syncwarp" | "__threadfence" | "__threadfence_block" => {
                for a in args {
                    self.rvalue(a)?;
                }
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            _ if math_result(name).is_some() => self.math(name, args, e),
            // Output and checks: their arguments are evaluated (a load there is still a load); nothing else.
            "printf" | "assert" => {
                for a in args.iter().filter(|a| !matches!(a.kind, E::Str(_))) {
                    self.rvalue(a)?;
                }
                // printf writes its arguments to a local buffer (STL, packed as the compiler chooses) and
                // calls vprintf: both moves of memory that the totals leave out, and say so.
                if name == "printf" {
                    let line = self.site_line(Span { start: e.span.start, end: e.span.start + 1 });
                    let what = "printf → its arguments' local buffer (STL) and vprintf";
                    if !self.uncosted.iter().any(|u| u.0 == line && u.1 == what) {
                        self.uncosted.push((line, what.to_string()));
                    }
                }
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            // cooperative_groups (with `cg::` dropped).
            "this_thread_block" if args.is_empty() => Ok(self.group("thread_block")),
            "coalesced_threads" if args.is_empty() => Ok(self.group("coalesced_group")),
            // `cg::plus<T>()` and friends: an operator for `cg::reduce`, which combines values across lanes.
            _ if ["plus<", "less<", "greater<", "bit_and<", "bit_or<", "bit_xor<"]
                .iter()
                .any(|p| name.starts_with(p)) =>
            {
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            "reduce" if args.len() == 3 => {
                self.rvalue(&args[0])?;
                let v = self.rvalue(&args[1])?;
                // The operation: `cg::plus<float>()`, or a function of the file named as a value.
                let named_fn =
                    matches!(&args[2].kind, E::Name(n) if self.ast.file.items.fns.iter().any(|f| f.name == **n));
                if !named_fn {
                    self.rvalue(&args[2])?;
                }
                let why = format!(
                    "`cg::reduce` ({}), a value combined across lanes that warpscope does not compute",
                    self.pos(e.span)
                );
                // What it combines is the lanes' values (data, as loads give): a decision on it is a
                // data-dependent one, stated with the results.
                let ty = self.ty_of(&v);
                let w = self.b.data_why(why);
                self.fresh_temp(&ty, e.span, w)
            }
            "sync" if args.len() == 1 => {
                let g = self.rvalue(&args[0])?;
                self.method(&g, "sync", &[], e)
            }
            _ if name.starts_with("tiled_partition<") => {
                // The size, also when it came through a typed template parameter (`((unsigned int)(32))`).
                let inner = &name["tiled_partition<".len()..name.len() - 1];
                let n: u32 =
                    inner.rsplit(|c: char| !c.is_ascii_digit()).find(|d| !d.is_empty()).unwrap_or("").parse().map_err(
                        |_| self.err(e.op_span, "tiled_partition<N> needs a number N (1, 2, 4, 8, 16 or 32)"),
                    )?;
                if !matches!(n, 1 | 2 | 4 | 8 | 16 | 32) {
                    return Err(
                        self.err(e.op_span, format!("tiled_partition<{n}>: a tile is 1, 2, 4, 8, 16 or 32 threads"))
                    );
                }
                for a in args {
                    // A tile of a tile has its own meta_group_rank and meta_group_size, relative to the parent
                    // tile: not modelled, so refused rather than counted as a tile of the block.
                    if let Val::Agg { ty: Ty::Struct(i), .. } = self.rvalue(a)? {
                        if types(self).name(&Ty::Struct(i)).starts_with("thread_block_tile") {
                            return Err(self.err(a.span, "tiled_partition of a tile is not modelled: partition the thread block (cg::tiled_partition<N>(cg::this_thread_block()))"));
                        }
                    }
                }
                Ok(self.group(&format!("thread_block_tile<{n}>")))
            }
            _ if name.starts_with('.') || name.starts_with("->") => {
                let m = name.trim_start_matches("->").trim_start_matches('.');
                // A member function of a class: run on the object itself.
                let obj_ty = self.static_type(&args[0]).ok().map(|t| match (name.starts_with("->"), t) {
                    (true, Ty::Ptr(p)) => (*p).clone(),
                    (_, t) => t,
                });
                if let Some(Ty::Struct(i)) = obj_ty {
                    if let Some((def, is_static)) = self.method_def(i, m, args.len() - 1, e)? {
                        let this = if is_static {
                            None
                        } else {
                            let target = if name.starts_with("->") {
                                Ex { kind: E::Unary(UnOp::Deref, Box::new(args[0].clone())), ..args[0].clone() }
                            } else {
                                args[0].clone()
                            };
                            match self.lvalue(&target)? {
                                LRef::Mem(p) => Some(p),
                                LRef::Var(_) => Some(self.class_place(&Ty::Struct(i))),
                            }
                        };
                        let mut vals = Vec::new();
                        for a in &args[1..] {
                            vals.push(self.rvalue(a)?);
                        }
                        return self.inline(m, def, vals, this, e);
                    }
                }
                let recv = self.rvalue(&args[0])?;
                self.method(&recv, m, &args[1..], e)
            }
            // `memcpy(&dst, &src, n)` between objects kept in registers (a class's bits): nothing moves in memory;
            // the destination's value becomes unknown.
            "memcpy" if args.len() == 3 => {
                for a in &args[..2] {
                    let E::Unary(UnOp::AddrOf, target) = &a.kind else {
                        return Err(self.err(a.span, "warpscope follows memcpy between variables (`memcpy(&a, &b, n)`), not through pointers into memory"));
                    };
                    match self.lvalue(target)? {
                        LRef::Mem(p) if p.space != MemSpace::Reg => {
                            return Err(self
                                .err(a.span, "memcpy to or from memory is not modelled: write the loads and stores"))
                        }
                        _ => {}
                    }
                }
                self.rvalue(&args[2])?;
                if let E::Unary(_, target) = &args[0].kind {
                    if let Ok(LRef::Var(_)) = self.lvalue(target) {
                        let ty = self.static_type(target)?;
                        let why = format!("bits memcpy copied at {}", self.pos(e.span));
                        let w = self.b.data_why(why);
                        let v = self.fresh_temp(&ty, e.span, w)?;
                        self.assign(target, None, v, &args[0])?;
                    }
                }
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            "__shfl_sync" | "__shfl_up_sync" | "__shfl_down_sync" | "__shfl_xor_sync" => {
                if !(3..=4).contains(&args.len()) {
                    return Err(self
                        .err(e.span, format!("`{name}(mask, value, lane_or_delta[, width])` takes 3 or 4 arguments")));
                }
                self.rvalue(&args[0])?;
                let v = self.rvalue(&args[1])?;
                let width = match args.get(3) {
                    Some(w) => self.const_int(w, "the shuffle width")?,
                    None => 32,
                };
                let mode = match name {
                    "__shfl_sync" => ShflMode::Idx,
                    "__shfl_up_sync" => ShflMode::Up,
                    "__shfl_down_sync" => ShflMode::Down,
                    _ => ShflMode::Bfly,
                };
                self.shuffle(mode, v, &args[2], width, e)
            }
            "__ballot_sync" | "__all_sync" | "__any_sync" | "__uni_sync" if args.len() == 2 => {
                self.rvalue(&args[0])?;
                let p = self.cond(&args[1], "the vote")?;
                self.vote(name, p, e.span)
            }
            "__activemask" if args.is_empty() => self.vote("__ballot_sync", PredRef::TRUE, e.span),
            "__popc" | "__popcll" | "__brev" | "__clz" | "__clzll" | "__ffs" | "__ffsll" if args.len() == 1 => {
                let (a, t) = self.int(&args[0], "the value")?;
                let a = if name.ends_with("ll") { self.to64(a, t, e.span) } else { a };
                let d = self.temp();
                let f = match name {
                    "__popc" | "__popcll" => crate::program::UnOp::Popc,
                    "__brev" => crate::program::UnOp::Brev,
                    _ => {
                        return Ok(Val::Int(
                            self.unknown(
                                format!("`{name}` ({}), which warpscope does not compute", self.pos(e.span)),
                                e.span,
                            ),
                            IntTy::INT,
                        ))
                    }
                };
                if name == "__popcll" {
                    return Ok(Val::Int(
                        self.unknown(
                            format!("`{name}` ({}), which warpscope does not compute", self.pos(e.span)),
                            e.span,
                        ),
                        IntTy::INT,
                    ));
                }
                self.emit(crate::program::Op::Un { f, dst: d, a }, e.span);
                Ok(Val::Int(Src::Reg(d), if name == "__brev" { IntTy::UINT } else { IntTy::INT }))
            }
            "__reduce_add_sync" | "__reduce_min_sync" | "__reduce_max_sync" | "__reduce_and_sync"
            | "__reduce_or_sync" | "__reduce_xor_sync"
                if args.len() == 2 =>
            {
                self.rvalue(&args[0])?;
                self.rvalue(&args[1])?;
                let why = format!(
                    "`{name}` ({}), a value combined across lanes that warpscope does not compute",
                    self.pos(e.span)
                );
                Ok(Val::Int(self.unknown(why, e.span), IntTy::UINT))
            }
            _ if name.starts_with("make_") && types(self).lookup(&name[5..]).is_some() => {
                let ty = types(self).lookup(&name[5..]).expect("checked");
                let fields = self.fields(&ty);
                if fields.len() != args.len() {
                    return Err(
                        self.err(e.span, format!("`{name}` takes {} arguments, found {}", fields.len(), args.len()))
                    );
                }
                let mut leaves = Vec::new();
                for ((off, fty), a) in fields.into_iter().zip(args) {
                    let v = self.rvalue(a)?;
                    leaves.push((off, self.convert(&fty, v, a.span)?));
                }
                Ok(Val::Agg { ty, leaves })
            }
            _ if name.starts_with("atomic") => self.atomic(name, args, e, false),
            _ if TEXTURE_FUNCTIONS.iter().any(|t| name.split('<').next() == Some(*t)) => Err(self.err(
                e.op_span,
                format!("`{name}` reads through the texture or surface path, which warpscope does not model: how that path splits a warp's request and how its block-linear layouts place data are not published (MODEL.md L), so warpscope refuses it rather than guess"),
            )),
            _ => {
                // A functional cast, `int(x)` or `float4(v)`; a class's constructor.
                if let Some(ty) = self.lookup_type(name, e.op_span)? {
                    if self.class_like(&ty) {
                        return self.construct(&ty, args, e);
                    }
                    if let [a] = args {
                        let v = self.rvalue(a)?;
                        return self.convert(&ty, v, e.span);
                    }
                }
                // Another member function of the class being run, called by its plain name.
                if let Some(&cls) = self.class_stack.last() {
                    if let Some((def, _)) = self.method_def(cls, name, args.len(), e)? {
                        let mut vals = Vec::new();
                        for a in args {
                            vals.push(self.rvalue(a)?);
                        }
                        let this = self.lookup("this").and_then(|i| match &self.scopes[i].1 {
                            Binding::Const(Val::Ptr { src, to, space, read_only }) => {
                                Some(Place { space: *space, addr: *src, ty: to.clone(), read_only: *read_only })
                            }
                            _ => None,
                        });
                        return self.inline(name, def, vals, this, e);
                    }
                }
                // `Class::member(args)`: a static member function.
                if let Some((cls, m)) = name.rsplit_once("::") {
                    if let Some(Ty::Struct(i)) = self.lookup_type(cls, e.op_span)? {
                        if let Some((def, _)) = self.method_def(i, m, args.len(), e)? {
                            let mut vals = Vec::new();
                            for a in args {
                                vals.push(self.rvalue(a)?);
                            }
                            return self.inline(name, def, vals, None, e);
                        }
                    }
                }
                if let Some(v) = self.shared_view(name, e)? {
                    return Ok(v);
                }
                if let Some(v) = self.call_fn(name, args, e)? {
                    return Ok(v);
                }
                if let Some(v) = self.swizzle(name, args, e)? {
                    return Ok(v);
                }
                let err = match name.split_once("::") {
                    Some((ns, _)) => self.err(
                        e.op_span,
                        format!("`{ns}::` is a namespace or class warpscope does not know (known: cooperative_groups and its aliases)"),
                    ),
                    None => self.err(
                        e.op_span,
                        format!("unknown function `{name}` (define it as a __device__ function in the file; warpscope knows min, max, abs, sw128, sw64, sw32, swizzle, __ldg, __syncthreads, __shfl_*_sync, __ballot_sync, atomics and cooperative_groups basics)"),
                    ),
                };
                // Its arguments are still read (their loads, their own unknown names).
                for a in args {
                    if self.rvalue(a).is_err() {
                        break;
                    }
                }
                Ok(self.unsupported_value(
                    err,
                    format!("the result of `{name}`, a function warpscope does not know"),
                    e.span,
                ))
            }
        }
    }

    /// A function of CUDA's math library or a half/bfloat16 intrinsic: its arguments are evaluated (a load
    /// there is still a load), and its value is data of the function's type. Functions that also write
    /// through pointers (`sincosf(x, &s, &c)`, `modff`, `frexpf`) write unknown values there.
    #[cold]
    fn math(&mut self, name: &str, args: &[Ex], e: &Ex) -> R<Val> {
        let ret = math_result(name).unwrap_or("float");
        for (k, a) in args.iter().enumerate() {
            let out = k > 0
                && matches!(
                    name,
                    "sincosf"
                        | "__sincosf"
                        | "sincos"
                        | "sincospif"
                        | "sincospi"
                        | "modff"
                        | "modf"
                        | "frexpf"
                        | "frexp"
                        | "remquof"
                        | "remquo"
                );
            if out && !(matches!(name, "remquof" | "remquo") && k < 2) {
                let E::Unary(UnOp::AddrOf, target) = &a.kind else {
                    return Err(self.err(
                        a.span,
                        format!("`{name}` writes through this pointer; warpscope follows it when it is `&variable`"),
                    ));
                };
                let ty = self.static_type(target)?;
                let why =
                    format!("a value `{name}` ({}) wrote; warpscope follows addresses, not data", self.pos(e.span));
                let w = self.b.data_why(why);
                let v = self.fresh_temp(&ty, a.span, w)?;
                self.assign(target, None, v, a)?;
                continue;
            }
            self.rvalue(a)?;
        }
        let ty = types(self).lookup(ret).unwrap_or(Ty::Float { bytes: 4 });
        let why = format!("the value of `{name}` ({}); warpscope follows addresses, not data", self.pos(e.span));
        let w = self.b.data_why(why);
        self.fresh_temp(&ty, e.span, w)
    }

    /// One `cp.async` (`LDGSTS`) from `src` (global) into `dst` (an offset in the shared window) at `e`.
    #[cold]
    fn copy_async(&mut self, instr: Instr, dst: Src, src: Src, e: &Ex, access: String) {
        let dst = self.bin(BinOp::And, Width::W64, dst, Src::Imm(0xFFFF_FFFF), e.span);
        let [dst, src] = [dst, src].map(|v| match v {
            Src::Reg(r) => r,
            imm => {
                let r = self.temp();
                self.emit(Op::Mov { dst: r, a: imm }, e.span);
                r
            }
        });
        self.mem_op(instr, dst, Some(src), e, access);
    }

    /// A memory site for `instr` at `e`, issued at `addr` (`src`: a copy's global source).
    #[cold]
    fn mem_op(&mut self, instr: Instr, addr: Reg, src: Option<Reg>, e: &Ex, access: String) {
        // An asm statement or an intrinsic call is on the line where it starts, as compilers place it.
        let line = self.site_line(Span { start: e.span.start, end: e.span.start + 1 });
        let text = self.lines.text(line).trim().to_string();
        let ctx = self.b.ctx(format!("the address of this {} depends on ", instr.text));
        let site = self.b.site(
            (self.stmt, self.seq.saturating_add(self.salt)),
            Site { line, text, access, instr, notes: Vec::new(), source: self.header_source(e.span) },
        );
        self.seq += 1;
        self.emit(Op::Mem { site, addr, plg: None, src, ctx, data: None }, e.span);
    }

    /// `__pipeline_memcpy_async(dst, src, size[, zfill])` and the per-thread `cuda::memcpy_async(dst, src, size,
    /// pipeline)`: one `cp.async` of 4, 8 or 16 bytes per thread (CUDA 12.9 `cuda_pipeline_helpers.h`: `.cg` for
    /// 16 bytes, `.ca` for 4 and 8; the same in libcu++). The group forms split one copy among a group's
    /// threads in a way the CUDA C++ Programming Guide does not document: refused.
    #[cold]
    fn memcpy_async(&mut self, name: &str, args: &[Ex], e: &Ex) -> R<Val> {
        let first = match args.first() {
            Some(a) => self.rvalue(a)?,
            None => Val::Int(Src::Imm(0), IntTy::INT),
        };
        if matches!(first, Val::Agg { .. }) || args.len() == 5 {
            return Err(self.err(
                e.op_span,
                format!("`{name}` with a group copies one block of bytes with all the group's threads, split among them in a way the CUDA C++ Programming Guide (memcpy_async) does not document; write each thread's own copy: `__pipeline_memcpy_async(dst + i, src + i, 16)` or `cuda::memcpy_async(dst + i, src + i, cuda::aligned_size_t<16>(16), pipeline)`"),
            ));
        }
        if args.len() < 3 {
            return Err(self.err(e.span, format!("`{name}(dst, src, size, ...)` takes at least 3 arguments")));
        }
        let dst = match first {
            Val::Ptr { src, space: MemSpace::Shared, .. } => src,
            _ => {
                return Err(self.err(
                    args[0].span,
                    format!("`{name}` copies into shared memory: its destination is a pointer into a __shared__ array"),
                ))
            }
        };
        let src = match self.rvalue(&args[1])? {
            Val::Ptr { src, space: MemSpace::Global, .. } => src,
            _ => {
                return Err(self
                    .err(args[1].span, format!("`{name}` copies from global memory: its source is a global pointer")))
            }
        };
        // `cuda::aligned_size_t<N>(size)`: the size is its argument.
        // (It parses as the comparisons `cuda::aligned_size_t < N > (size)`.)
        let size_ex = match &args[2].kind {
            E::Call(n, a) if n.starts_with("aligned_size_t<") && a.len() == 1 => &a[0],
            E::Binary(CBin::Gt, l, size) => match &l.kind {
                E::Binary(CBin::Lt, n, _) if matches!(&n.kind, E::Name(n) if n.ends_with("aligned_size_t")) => size,
                _ => &args[2],
            },
            _ => &args[2],
        };
        let size = self.const_int(size_ex, "the copy's size")?;
        // `__pipeline_memcpy_async(dst, src, size, zfill)`: the last `zfill` bytes are not read from global memory;
        // all of them (zfill == size) reads nothing and zero-fills, none reads all.
        let mut reads = None;
        if let (true, Some(z)) = (name == "__pipeline_memcpy_async", args.get(3)) {
            match self.rvalue(z)? {
                Val::Int(Src::Imm(0), _) => {}
                Val::Int(Src::Imm(n), _) if n == size => reads = Some(PredRef::TRUE.negated()),
                Val::Int(Src::Imm(_), _) => return Err(self.err(z.span, ZERO_FILL)),
                Val::Int(v, _) => {
                    // zfill 0 reads: the guard's "src-size" is size - zfill.
                    let src_size = self.bin(BinOp::Sub, Width::W32, Src::Imm(size), v, z.span);
                    reads = Some(self.zero_fill_guard(src_size, size, z.span));
                }
                _ => return Err(self.err(z.span, "the zero-filled byte count is an integer")),
            }
        }
        for a in &args[3..] {
            if !matches!(&a.kind, E::Name(_)) {
                self.rvalue(a)?;
            }
        }
        let instr = match size {
            16 => "LDGSTS.E.BYPASS.128",
            8 => "LDGSTS.E.64",
            4 => "LDGSTS.E.32",
            _ => return Err(self.err(size_ex.span, format!("`{name}` of {size} bytes is not one cp.async (4, 8 or 16 bytes per thread): split it into copies of 16 bytes"))),
        };
        let instr = Instr::parse(instr).map_err(|m| self.err(e.span, m.message))?;
        let access = self.src[e.span.start..e.span.end.min(self.src.len())].to_string();
        self.copy_async(instr, dst, src, e, access);
        self.set_reads(reads);
        Ok(Val::Int(Src::Imm(0), IntTy::INT))
    }

    /// `asm volatile("PTX" : outputs : inputs)`: the template's `ldmatrix`, `stmatrix` and `cp.async`
    /// instructions, with `%N` the N-th operand (outputs first). Outputs become unknown data. Any other
    /// instruction is refused: warpscope cannot know what it does to the values or memory it touches.
    #[cold]
    fn asm(&mut self, args: &[Ex], e: &Ex) -> R<Val> {
        let pieces = args.iter().take_while(|a| matches!(a.kind, E::Str(_))).count();
        let tspan = Span { start: args[0].span.start, end: args[pieces - 1].span.end };
        let mut text = String::new();
        for p in &args[..pieces] {
            // The literal's own text (not the source at its span, which is the macro's call site when the
            // statement came from a macro).
            let E::Str(raw) = &p.kind else { continue };
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                match (c, c == '\\') {
                    (_, true) => match chars.next() {
                        Some('n' | 't' | 'r') => text.push(' '),
                        Some(o) => text.push(o),
                        None => {}
                    },
                    (c, false) => text.push(c),
                }
            }
        }
        let ops = &args[pieces..];
        // Inputs are read before the instructions run.
        let mut vals: Vec<Option<Src>> = Vec::new();
        for a in ops {
            vals.push(match &a.kind {
                E::Call(n, v) if n == "__asm_in" => self.rvalue(&v[1])?.src(),
                _ => None,
            });
        }
        let at = self.pos(tspan);
        // Values the template computes: its own registers (`.reg .u64 r;`), and outputs it sets from inputs.
        let mut locals: Vec<(String, Src)> = Vec::new();
        let mut computed = vec![false; vals.len()];
        // Predicates the template declares and sets from its operands (`.reg .pred p; setp.ne.b32 p, %3, 0;
        // @p cp.async ...`, the predicated copy of many tensor-core kernels).
        let mut preds: Vec<(String, PredRef)> = Vec::new();
        for inst in text.split(';').map(|t| t.trim().trim_start_matches('{').trim_end_matches('}').trim()) {
            if inst.is_empty() || inst.starts_with('.') || inst.starts_with("//") {
                continue;
            }
            // `@p` / `@!p`: a guard from a predicate the template set.
            let (guard, inst) = match inst.strip_prefix('@') {
                Some(rest) => {
                    let (g, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                    let (neg, name) = g.strip_prefix('!').map_or((false, g), |n| (true, n));
                    let Some(p) = preds.iter().find(|(n, _)| n == name).map(|(_, p)| *p) else {
                        return Err(self.err(tspan, format!("asm: `@{g}` guards an instruction with a predicate the template does not set with setp")));
                    };
                    (Some(if neg { p.negated() } else { p }), rest.trim())
                }
                None => (None, inst),
            };
            let (opcode, rest) = inst.split_once(char::is_whitespace).unwrap_or((inst, ""));
            let parts: Vec<&str> = opcode.split('.').collect();
            let operands: Vec<&str> = split_top(rest);
            // Address arithmetic in the template (`cvta.to.shared.u64 r, %1; cvt.u32.u64 %0, r;`, `mov`, `add`):
            // computed, so that the outputs it makes are known.
            if guard.is_none() {
                if let Some(v) = self.asm_compute(&parts, &operands, &vals, &locals, e.span) {
                    let d = operands.first().copied().unwrap_or("").trim();
                    match d.strip_prefix('%').and_then(|n| n.parse::<usize>().ok()) {
                        Some(k) if k < vals.len() => {
                            vals[k] = Some(v);
                            computed[k] = true;
                        }
                        _ => {
                            locals.retain(|(n, _)| n != d);
                            locals.push((d.to_string(), v));
                        }
                    }
                    continue;
                }
            }
            let value = |l: &mut Self, k: usize| -> R<(Src, i64)> {
                let t = operands.get(k).copied().unwrap_or("").trim();
                let inner = t.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or(t);
                let (n, off) = inner.split_once('+').unwrap_or((inner, "0"));
                let off: Option<i64> = off.trim().parse().ok();
                let v = match n.trim().strip_prefix('%').and_then(|n| n.parse::<usize>().ok()) {
                    Some(k) => vals.get(k).copied().flatten(),
                    None => locals
                        .iter()
                        .find(|(x, _)| x == n.trim())
                        .map(|(_, v)| *v)
                        .or_else(|| n.trim().parse::<u64>().ok().map(Src::Imm)),
                };
                match (v, off) {
                    (Some(v), Some(off)) => Ok((v, off)),
                    _ => Err(
                        l.err(tspan, format!("`{inst}`: operand `{t}` is not an input (%N), a number or [%N+offset]"))
                    ),
                }
            };
            // setp.CMP.TYPE p, a, b: a predicate for a later `@p`.
            if parts.first() == Some(&"setp") && guard.is_none() {
                let name = operands.first().copied().unwrap_or("").trim().to_string();
                let cmp = match parts.get(1).copied() {
                    Some("eq") => Cmp::Eq,
                    Some("ne") => Cmp::Ne,
                    Some("lt" | "lo") => Cmp::Lt,
                    Some("le" | "ls") => Cmp::Le,
                    Some("gt" | "hi") => Cmp::Gt,
                    Some("ge" | "hs") => Cmp::Ge,
                    _ => {
                        return Err(
                            self.err(tspan, format!("asm: `{inst}`: warpscope reads setp.eq/ne/lt/le/gt/ge here"))
                        )
                    }
                };
                let ty = parts.last().copied().unwrap_or("b32");
                let (x, _) = value(self, 1)?;
                let (y, _) = value(self, 2)?;
                let w = if ty.ends_with("64") { Width::W64 } else { Width::W32 };
                let p = self.setp(cmp, ty.starts_with('s'), w, x, y, e.span);
                preds.push((name, p));
                continue;
            }
            let size = match parts.as_slice() {
                ["cp", "async", "ca" | "cg", ..] => match value(self, 2)? {
                    (Src::Imm(n), 0) => Some(n),
                    _ => None,
                },
                _ => None,
            };
            let kind = crate::lang::asm_kind(&parts, size).map_err(|m| self.err(tspan, format!("asm: {m}")))?;
            let (instr, store) = match kind {
                crate::lang::AsmKind::Mem { instr, store } => (instr, store),
                crate::lang::AsmKind::Uncounted(what) => {
                    let line = self.lines.line(e.span.start.min(self.src.len()));
                    self.uncosted.push((line, format!("`{opcode}` in asm ({what})")));
                    continue;
                }
                crate::lang::AsmKind::Compute => continue,
            };
            let copy = instr.base == crate::model::access::Base::Ldgsts;
            // cp.async [dst], [src], size{, src-size | ignore-src}{, cache-policy}: a src-size of 0 (or an
            // ignore-src predicate that holds) reads nothing and zero-fills; equal to the size, all of it.
            let has_extra = operands.len() > 3 + usize::from(inst.contains("cache_hint"));
            let mut reads = None;
            if copy && has_extra {
                let extra = operands[3].trim();
                match preds.iter().find(|(n, _)| n == extra.trim_start_matches('!')) {
                    Some((_, p)) => reads = Some(if extra.starts_with('!') { *p } else { p.negated() }),
                    None => {
                        let (v, _) = value(self, 3)?;
                        let full = size.unwrap_or(16);
                        match v {
                            Src::Imm(n) if n == full => {}
                            Src::Imm(0) => reads = Some(PredRef::TRUE.negated()),
                            Src::Imm(_) => return Err(self.err(tspan, format!("asm: {ZERO_FILL}"))),
                            v => reads = Some(self.zero_fill_guard(v, full, e.span)),
                        }
                    }
                }
            }
            // A guarded instruction: the lanes whose guard fails branch around it.
            let skip = guard.map(|g| {
                let l = self.b.label();
                self.b.bra(l, Some(g.negated()), e.span);
                l
            });
            // ldmatrix {d..}, [a]; ld {d..}, [a]; stmatrix [a], {s..}; st [a], s; cp.async [dst], [src], size.
            let (a, off) = value(self, usize::from(!store && !copy))?;
            let a = self.bin(BinOp::Add, Width::W64, a, Src::Imm(off as u64), e.span);
            if copy {
                let (g, goff) = value(self, 1)?;
                let g = self.bin(BinOp::Add, Width::W64, g, Src::Imm(goff as u64), e.span);
                self.copy_async(instr, a, g, e, inst.to_string());
                self.set_reads(reads);
            } else {
                let shared = matches!(instr.base.fixed_space(), Some(crate::model::access::Space::Shared));
                let a = if shared { self.bin(BinOp::And, Width::W64, a, Src::Imm(0xFFFF_FFFF), e.span) } else { a };
                let r = match a {
                    Src::Reg(r) => r,
                    imm => {
                        let r = self.temp();
                        self.emit(Op::Mov { dst: r, a: imm }, e.span);
                        r
                    }
                };
                self.mem_op(instr, r, None, e, inst.to_string());
            }
            if let Some(l) = skip {
                self.b.place(l);
            }
        }
        for (k, a) in ops.iter().enumerate() {
            if let E::Call(n, v) = &a.kind {
                if let (true, E::Assign(None, lhs, _), Some(Some(x))) =
                    (n == "__asm_out" && computed[k], &v[1].kind, vals.get(k))
                {
                    let wide = matches!(&v[0].kind, E::Str(c) if c.contains('l'));
                    let x = if wide { *x } else { self.bin(BinOp::And, Width::W64, *x, Src::Imm(0xFFFF_FFFF), a.span) };
                    let t = if wide { IntTy::ULLONG } else { IntTy::UINT };
                    self.assign(lhs, None, Val::Int(x, t), &v[1])?;
                    continue;
                }
                if let (true, E::Assign(None, lhs, _)) = (n == "__asm_out", &v[1].kind) {
                    let why = format!("the output of the asm statement at {at}, data warpscope does not know");
                    let w = self.b.data_why(why);
                    let d = self.temp();
                    self.emit(Op::Unknown { dst: d, why: w }, a.span);
                    let d = Src::Reg(d);
                    self.assign(lhs, None, Val::Int(d, IntTy::UINT), &v[1])?;
                }
            }
        }
        Ok(Val::Int(Src::Imm(0), IntTy::INT))
    }

    /// The lanes of a cp.async that read their source, from its src-size `v` (0: zero-fill; `full`: the whole
    /// copy); a lane with any other size stops the run (a partial copy is not modelled).
    #[cold]
    fn zero_fill_guard(&mut self, v: Src, full: u64, span: Span) -> PredRef {
        let zero = self.setp(Cmp::Eq, false, Width::W32, v, Src::Imm(0), span);
        let whole = self.setp(Cmp::Eq, false, Width::W32, v, Src::Imm(full), span);
        let ok = self.pred_logic(PredOp::Or, zero, whole, span);
        let ctx = self.b.ctx(format!("this cp.async's src-size is neither 0 nor its size ({full}): {ZERO_FILL}"));
        self.b.emit(Op::Trap { ctx }, Some(ok.negated()), span);
        zero.negated()
    }

    /// Marks the cp.async just emitted as reading only in the lanes of `reads` (see `Op::Mem`'s `plg`).
    #[cold]
    fn set_reads(&mut self, reads: Option<PredRef>) {
        if let (Some(r), Some(crate::program::Inst { op: Op::Mem { plg, .. }, .. })) = (reads, self.b.last_mut()) {
            *plg = Some(r);
        }
    }

    /// One arithmetic instruction of inline PTX on known values: `mov`, `cvta.to.shared` (a shared pointer
    /// already holds its offset in the shared window), `cvt` between integer widths, `add`, `sub`,
    /// `mul.lo`, `shl`, `and`, `or`, `xor`. `None` for anything else, or an operand not known here.
    #[cold]
    fn asm_compute(
        &mut self,
        parts: &[&str],
        operands: &[&str],
        vals: &[Option<Src>],
        locals: &[(String, Src)],
        span: Span,
    ) -> Option<Src> {
        let get = |t: &str| -> Option<Src> {
            let t = t.trim();
            match t.strip_prefix('%').and_then(|n| n.parse::<usize>().ok()) {
                Some(k) => vals.get(k).copied().flatten(),
                None => locals.iter().find(|(x, _)| x == t).map(|(_, v)| *v).or_else(|| {
                    let (neg, d) = t.strip_prefix('-').map_or((false, t), |d| (true, d));
                    let v = match d.strip_prefix("0x") {
                        Some(h) => u64::from_str_radix(h, 16).ok()?,
                        None => d.parse::<u64>().ok()?,
                    };
                    Some(Src::Imm(if neg { v.wrapping_neg() } else { v }))
                }),
            }
        };
        let ty = parts.last().copied().unwrap_or("");
        let w = if ty.ends_with("64") { Width::W64 } else { Width::W32 };
        let a = get(operands.get(1)?)?;
        Some(match parts {
            ["mov", _] => a,
            ["cvta", "to", "shared", ..] => a,
            ["cvt", d, _] if d.starts_with('u') || d.starts_with('s') || d.starts_with('b') => {
                let bits: u8 = d[1..].parse().ok()?;
                self.conv(a, bits.min(64), d.starts_with('s'), span)
            }
            [op @ ("add" | "sub" | "and" | "or" | "xor" | "shl"), _] | [op @ "mul", "lo", _] => {
                let b = get(operands.get(2)?)?;
                let op = match *op {
                    "add" => BinOp::Add,
                    "sub" => BinOp::Sub,
                    "and" => BinOp::And,
                    "or" => BinOp::Or,
                    "xor" => BinOp::Xor,
                    "shl" => BinOp::Shl,
                    _ => BinOp::Mul,
                };
                self.bin(op, w, a, b, span)
            }
            _ => return None,
        })
    }

    /// A cooperative_groups handle (a struct with no fields).
    #[cold]
    fn group(&self, name: &str) -> Val {
        let ty = types(self).lookup(name).unwrap_or(Ty::Void);
        Val::Agg { ty, leaves: Vec::new() }
    }

    /// The swizzles of the expression language (MODEL.md H), when no device function of the file has the
    /// name: `sw128(x)`, `sw64(x)`, `sw32(x)` and `swizzle(B, M, S, x)` with constant B, M, S, computed as
    /// `x ^ ((x & yyy_msk) >> S)` on x's type.
    #[cold]
    #[inline(never)]
    fn swizzle(&mut self, name: &str, args: &[Ex], e: &Ex) -> R<Option<Val>> {
        use crate::lang::layout::Swizzle;
        let (sw, x) = match (name, args) {
            ("swizzle", [b, m, s, x]) => {
                let mut v = [0i128; 3];
                for (slot, a) in v.iter_mut().zip([b, m, s]) {
                    *slot = match self.rvalue(a)? {
                        Val::Int(Src::Imm(x), t) => {
                            exec::conv(x, t.promoted().bits, t.promoted().signed) as i64 as i128
                        }
                        _ => return Err(self.err(a.span, "swizzle(B, M, S, x): B, M and S must be constant integers")),
                    };
                }
                (Swizzle::new(v[0], v[1], v[2]).map_err(|m| self.err(e.span, m))?, x)
            }
            (n, [x]) if Swizzle::named(n).is_some() => (Swizzle::named(n).unwrap_or(Swizzle { b: 0, m: 0, s: 0 }), x),
            _ => return Ok(None),
        };
        let Val::Int(v, t) = self.rvalue(x)? else {
            return Err(self.err(x.span, format!("`{name}` takes an integer")));
        };
        let t = t.promoted();
        let w = t.width();
        // On x's width, as C computes it: bits the mask or the shift puts past it are dropped.
        let y = self.bin(BinOp::And, w, v, Src::Imm(sw.source_mask() as u64), e.span);
        let y = match sw.s {
            s if s >= 0 => self.bin(BinOp::ShrU, w, y, Src::Imm(s as u64), e.span),
            s => self.bin(BinOp::Shl, w, y, Src::Imm(-s as u64), e.span),
        };
        Ok(Some(Val::Int(self.bin(BinOp::Xor, w, v, y, e.span), t)))
    }

    /// An integer argument that must be a constant.
    #[cold]
    fn const_int(&mut self, e: &Ex, what: &str) -> R<u64> {
        match self.rvalue(e)? {
            Val::Int(Src::Imm(v), _) => Ok(v),
            _ => Err(self.err(e.span, format!("{what} must be a constant"))),
        }
    }

    /// `mode` shuffle of `v` within segments of `width` lanes.
    #[cold]
    fn shuffle(&mut self, mode: ShflMode, v: Val, lane: &Ex, width: u64, e: &Ex) -> R<Val> {
        if !matches!(width, 1 | 2 | 4 | 8 | 16 | 32) {
            return Err(self.err(e.span, format!("shuffle width {width}: it is a power of two up to 32")));
        }
        let (b, _) = self.int(lane, "the shuffle's lane")?;
        // CUDA's headers pack the clamp and segment mask as `((32 - width) << 8) | clamp`.
        let clamp = if mode == ShflMode::Up { 0 } else { 31 };
        let c = Src::Imm(((32 - width) << 8) | clamp);
        let inactive = self.b.why(format!("a shuffle ({}) read a lane that is not running", self.pos(e.span)));
        let one = |l: &mut Self, a: Src| {
            let d = l.temp();
            l.emit(Op::Shfl { mode, dst: d, pdst: None, a, b, c, inactive }, e.span);
            Src::Reg(d)
        };
        Ok(match v {
            Val::Int(a, t) if t.bits <= 32 => Val::Int(one(self, a), t),
            Val::Float(_) => self.float(e.span),
            Val::Int(_, t) => {
                let why =
                    format!("a 64-bit shuffle ({}), which warpscope does not split into halves", self.pos(e.span));
                Val::Int(self.unknown(why, e.span), t)
            }
            _ => return Err(self.err(e.span, "a shuffle moves a number")),
        })
    }

    #[cold]
    fn vote(&mut self, name: &str, p: PredRef, span: Span) -> R<Val> {
        if name == "__ballot_sync" {
            let d = self.temp();
            self.emit(Op::Vote { dst: Some(d), pdst: None, all: false, p }, span);
            return Ok(Val::Int(Src::Reg(d), IntTy::UINT));
        }
        let q = self.b.pred();
        match name {
            "__all_sync" => self.emit(Op::Vote { dst: None, pdst: Some(q), all: true, p }, span),
            "__any_sync" => self.emit(Op::Vote { dst: None, pdst: Some(q), all: false, p }, span),
            _ => {
                // uni: all lanes agree = all hold, or none does.
                let n = self.b.pred();
                self.emit(Op::Vote { dst: None, pdst: Some(q), all: true, p }, span);
                self.emit(Op::Vote { dst: None, pdst: Some(n), all: true, p: p.negated() }, span);
                let r = self.pred_logic(PredOp::Or, PredRef::of(q), PredRef::of(n), span);
                return Ok(self.bool_val(r, span));
            }
        }
        Ok(self.bool_val(PredRef::of(q), span))
    }

    /// A method of a cooperative_groups handle.
    #[cold]
    fn method(&mut self, recv: &Val, m: &str, args: &[Ex], e: &Ex) -> R<Val> {
        let Val::Agg { ty: Ty::Struct(i), .. } = recv else {
            return Err(self.err(e.op_span, format!("`.{m}()` on a value that is not a cooperative_groups group")));
        };
        let group = types(self).name(&Ty::Struct(*i));
        // libcu++'s barrier and pipeline (`arrive_and_wait`, `producer_commit`, `consumer_wait`, ...): they order
        // the copies, which are costed where they are issued.
        if group.starts_with("barrier<") || group.starts_with("pipeline<") {
            for a in args {
                self.rvalue(a)?;
            }
            return Ok(Val::Int(Src::Imm(0), IntTy::INT));
        }
        let tile: Option<u64> =
            group.strip_prefix("thread_block_tile<").and_then(|n| n.trim_end_matches('>').parse().ok());
        let block = self.launch.block;
        let span = e.span;
        let linear = |l: &mut Self| {
            let d = l.temp();
            l.emit(Op::Special { dst: d, which: Special::LinearTid }, span);
            Src::Reg(d)
        };
        match (m, tile, group.as_str()) {
            ("sync", None, "thread_block") => {
                self.emit(Op::Bar, span);
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            ("sync", Some(_), _) => Ok(Val::Int(Src::Imm(0), IntTy::INT)),
            ("thread_rank", None, "thread_block") => Ok(Val::Int(linear(self), IntTy::UINT)),
            ("thread_rank", Some(n), _) => {
                let l = linear(self);
                Ok(Val::Int(self.bin(BinOp::RemU, Width::W32, l, Src::Imm(n), span), IntTy::UINT))
            }
            ("meta_group_rank", Some(n), _) => {
                let l = linear(self);
                Ok(Val::Int(self.bin(BinOp::DivU, Width::W32, l, Src::Imm(n), span), IntTy::UINT))
            }
            ("size" | "num_threads", None, "thread_block") => {
                Ok(Val::Int(Src::Imm(u64::from(block.x) * u64::from(block.y) * u64::from(block.z)), IntTy::UINT))
            }
            ("size" | "num_threads", Some(n), _) => Ok(Val::Int(Src::Imm(n), IntTy::UINT)),
            ("meta_group_size", Some(n), _) => {
                let threads = u64::from(block.x) * u64::from(block.y) * u64::from(block.z);
                Ok(Val::Int(Src::Imm(threads.div_ceil(n)), IntTy::UINT))
            }
            ("shfl" | "shfl_up" | "shfl_down" | "shfl_xor", Some(n), _) if args.len() == 2 => {
                let v = self.rvalue(&args[0])?;
                let mode = match m {
                    "shfl" => ShflMode::Idx,
                    "shfl_up" => ShflMode::Up,
                    "shfl_down" => ShflMode::Down,
                    _ => ShflMode::Bfly,
                };
                self.shuffle(mode, v, &args[1], n, e)
            }
            ("ballot" | "all" | "any", Some(32), _) if args.len() == 1 => {
                let p = self.cond(&args[0], "the vote")?;
                let name = match m {
                    "ballot" => "__ballot_sync",
                    "all" => "__all_sync",
                    _ => "__any_sync",
                };
                self.vote(name, p, span)
            }
            _ => Err(self.err(
                e.op_span,
                format!("`{group}::{m}` is not modelled (known: sync, thread_rank, size, num_threads, meta_group_rank, and on a tile shfl, shfl_up, shfl_down, shfl_xor; ballot, all, any on a 32-thread tile)"),
            )),
        }
    }

    /// `atomicAdd(p, v)` and friends (MODEL.md K): a read-modify-write of `*p`, costed as the SASS nvcc makes of
    /// it: `ATOMS` in shared memory (`ATOMS.POPC.INC` for `atomicAdd(&s[i], 1)` whose result is unused), `RED`
    /// for a global atomic whose result is unused, `ATOMG` otherwise. An add, min, max, and or or applies
    /// nvcc's warp aggregation where the warp's lanes share the address and the value (an assumption about the
    /// compiler, said in a note). What an atomic returns is data.
    #[cold]
    fn atomic(&mut self, name: &str, args: &[Ex], e: &Ex, unused: bool) -> R<Val> {
        const OPS: [(&str, &str); 11] = [
            ("atomicAdd", "ADD"),
            ("atomicSub", "ADD"),
            ("atomicExch", "EXCH"),
            ("atomicMin", "MIN"),
            ("atomicMax", "MAX"),
            ("atomicInc", "INC"),
            ("atomicDec", "DEC"),
            ("atomicCAS", "CAS"),
            ("atomicAnd", "AND"),
            ("atomicOr", "OR"),
            ("atomicXor", "XOR"),
        ];
        let base = name.trim_end_matches("_block").trim_end_matches("_system");
        let Some(&(_, op)) = OPS.iter().find(|(n, _)| *n == base) else {
            return Err(
                self.err(e.op_span, format!("unknown atomic `{name}` (known: {})", OPS.map(|o| o.0).join(", ")))
            );
        };
        let Some(first) = args.first() else {
            return Err(self.err(e.span, format!("`{name}` takes a pointer first")));
        };
        self.data_index_ok = true;
        let target = self.rvalue(first);
        self.data_index_ok = false;
        let (addr, space, to) = match target? {
            Val::Ptr { src, space, to, .. } => (src, space, to),
            _ => return Err(self.err(first.span, format!("`{name}` takes a pointer first"))),
        };
        let mut vals = Vec::new();
        for a in &args[1..] {
            vals.push(self.rvalue(a)?);
        }
        let size = types(self).size(&to);
        let width = match size {
            2 => ".F16",
            4 => "",
            8 => ".64",
            16 => ".128",
            _ => {
                return Err(
                    self.err(first.span, format!("`{name}` on a {size}-byte value: atomics move 2, 4, 8 or 16 bytes"))
                )
            }
        };
        let value = vals.first().and_then(Val::src);
        let shared = match space {
            MemSpace::Shared => true,
            MemSpace::Global => false,
            MemSpace::Const => {
                return Err(self.err(first.span, format!("`{name}` on __constant__ memory, which kernels cannot write")))
            }
            MemSpace::Local | MemSpace::Reg => {
                return Err(self.err(
                    first.span,
                    format!("`{name}` on a thread's own variable: atomics work on global or shared memory"),
                ))
            }
        };
        let popc = shared && unused && op == "ADD" && base == "atomicAdd" && size == 4 && value == Some(Src::Imm(1));
        let mnemonic = match (shared, unused && !matches!(op, "CAS" | "EXCH")) {
            _ if popc => "ATOMS.POPC.INC.32".to_string(),
            (true, _) => format!("ATOMS.{op}{width}"),
            (false, true) => format!("RED.E.{op}{width}"),
            (false, false) => format!("ATOMG.E.{op}{width}"),
        };
        let instr = Instr::parse(&mnemonic).map_err(|err| self.err(e.span, err.message))?;
        // nvcc aggregates in global and shared memory alike (its SASS for `atomicAdd(&s[5], 2)` is one lane's
        // ATOMS.ADD of a popcount's worth); an increment by one in shared memory is ATOMS.POPC.INC instead.
        let aggregate = !popc && matches!(op, "ADD" | "MIN" | "MAX" | "AND" | "OR");
        let line = self.site_line(e.span);
        let text = self.lines.text(line).trim().to_string();
        let at = first.span.start.min(self.src.len());
        let written = self.src[at..first.span.end.min(self.src.len())].to_string();
        let mut notes = Vec::new();
        if aggregate {
            notes.push(Note::new(
                "cuda-atomic-aggregation",
                "Assumed, as nvcc does \"in many cases\": where every active lane of a warp applies the same value at the same address, one lane performs the atomic for the warp (a popcount's worth of adds). This is an assumption about the compiler; the kernel's PTX or SASS shows what it did",
                "PG, Atomic Functions; MODEL.md section K",
            ));
        }
        let site = self.b.site(
            (self.stmt, self.seq.saturating_add(self.salt)),
            Site { line, text, access: written, instr, notes, source: self.header_source(e.span) },
        );
        self.seq += 1;
        let addr = match addr {
            Src::Reg(r) => r,
            imm => {
                let r = self.temp();
                self.emit(Op::Mov { dst: r, a: imm }, e.span);
                r
            }
        };
        let ctx = self.b.ctx(format!("the address of this {mnemonic} depends on "));
        let mem = Op::Mem { site, addr, plg: None, src: None, ctx, data: None };
        match (aggregate, value) {
            (true, Some(val)) => {
                let p = self.b.pred();
                self.emit(Op::Aggregate { dst: p, addr, val }, e.span);
                self.track(&mem);
                self.b.emit(mem, Some(PredRef::of(p)), e.span);
            }
            _ => self.emit(mem, e.span),
        }
        let why =
            format!("the old value an atomic returns ({}); warpscope follows addresses, not data", self.pos(e.span));
        let w = self.b.data_why(why);
        self.fresh_temp(&to, e.span, w)
    }

    /// `SharedMemory<T>()`: a pointer to the kernel's dynamic shared memory, typed by the view's conversion.
    #[cold]
    fn shared_view(&mut self, name: &str, e: &Ex) -> R<Option<Val>> {
        let file = Rc::clone(&self.ast.file);
        let base = name.split('<').next().unwrap_or(name);
        let view = file
            .items
            .views
            .iter()
            .find(|v| v.spec.as_deref() == Some(name))
            .or_else(|| file.items.views.iter().find(|v| v.spec.is_none() && v.name == base));
        let Some(view) = view else { return Ok(None) };
        let args: Vec<String> = match name.find('<') {
            Some(i) => split_args(&name[i + 1..name.len() - 1]),
            None => Vec::new(),
        };
        let mut text = String::new();
        for t in &view.target {
            let word = match &t.tok {
                crate::lang::lex::Tok::Ident(w) => match view.params.iter().position(|p| &p.name == w) {
                    Some(k) => args.get(k).cloned().unwrap_or_else(|| w.clone()),
                    None => w.clone(),
                },
                crate::lang::lex::Tok::Punct(p) => p.to_string(),
                _ => String::new(),
            };
            text.push_str(&word);
            text.push(' ');
        }
        let toks = crate::lang::lex::lex(&text).map_err(|x| self.err(e.span, x.message))?;
        let mut p = crate::lang::cexpr::Parser::new(&text, toks);
        p.types = file.type_names.clone();
        let tn = p.type_name().map_err(|x| self.err(e.span, x.message))?;
        let elem =
            types(self).lookup(&tn.base).ok_or_else(|| self.err(e.span, format!("unknown type `{}`", tn.base)))?;
        let Ty::Ptr(to) = wrap_ptr(elem, tn.pointers) else {
            return Err(self.err(e.span, format!("`{base}` converts to a non-pointer")));
        };
        // Dynamic shared memory starts where the kernel's static shared memory ends (see `declare`).
        self.dynamic_shared.get_or_insert(e.span);
        let off = self.dynamic_base.unwrap_or(self.shared_top.div_ceil(16) * 16);
        Ok(Some(Val::Ptr { src: Src::Imm(off), to: (*to).clone(), space: MemSpace::Shared, read_only: false }))
    }

    /// A call of a `__device__` function of the file, inlined. `None` when no such function exists.
    #[cold]
    fn call_fn(&mut self, name: &str, args: &[Ex], e: &Ex) -> R<Option<Val>> {
        let file = Rc::clone(&self.ast.file);
        let base = name.split('<').next().unwrap_or(name).to_string();
        let explicit = name.find('<').map(|i| name[i + 1..name.len() - 1].to_string());
        // Overloads: the one with as many parameters as arguments, else the first.
        let candidates: Vec<&super::file::FnItem> =
            file.items.fns.iter().filter(|f| f.kind != FnKind::Kernel && f.spec.is_none() && f.name == base).collect();
        let Some(item) = candidates
            .iter()
            .find(|f| params_of(&file.toks[f.toks.clone()]) == args.len())
            .or(candidates.first())
            .copied()
        else {
            if file.items.fns.iter().any(|f| f.kind == FnKind::Kernel && f.name == base) {
                return Err(self.err(e.op_span, format!("`{base}` is a __global__ kernel: a kernel cannot call it (dynamic parallelism is not modelled)")));
            }
            return Ok(None);
        };
        if item.kind == FnKind::Host {
            return Err(self
                .err(e.op_span, format!("`{base}` is a host function: mark it __device__ to call it from a kernel")));
        }
        if self.frames.len() >= MAX_CALL_DEPTH {
            return Err(
                self.err(e.op_span, format!("calls nested more than {MAX_CALL_DEPTH} deep (is `{base}` recursive?)"))
            );
        }
        // A reference parameter names the caller's variable (or memory): its argument is not read at the call.
        let by_ref = reference_params(&file.toks[item.toks.clone()]);
        let mut vals = Vec::with_capacity(args.len());
        let mut refs = Vec::with_capacity(args.len());
        for (k, a) in args.iter().enumerate() {
            let lvalue = matches!(a.kind, E::Name(_) | E::Index(..) | E::Member(..) | E::Unary(UnOp::Deref, _));
            if by_ref.get(k).copied().unwrap_or(false) && lvalue {
                let ty = self.static_type(a)?;
                refs.push(Some(self.lvalue(a)?));
                vals.push(self.placeholder(&ty));
            } else if let E::InitList(_) = a.kind {
                // `f(acc, { x[i], 1.0f })`: a value of the parameter's type, made once the function is known.
                refs.push(None);
                vals.push(Val::Agg { ty: Ty::Void, leaves: Vec::new() });
            } else {
                refs.push(None);
                vals.push(self.rvalue(a)?);
            }
        }
        let explicit = explicit.map(|a| self.constant_args(&a));
        let targs = match (&explicit, item.is_template) {
            (Some(a), _) => Some(a.clone()),
            (None, true) => Some(self.deduce(item, &file, &vals, e)?),
            (None, false) => None,
        };
        let key = match &targs {
            Some(a) => format!("{base}<{a}>"),
            None => base.clone(),
        };
        let def = match self.fns.get(&key) {
            Some(d) => Rc::clone(d),
            None => {
                // An explicit specialization for these arguments wins.
                let spec = file.items.fns.iter().find(|f| f.spec.as_deref() == Some(key.as_str()));
                let d = match spec {
                    Some(s) => instantiate(self.src, &file, types(self), s, None)?,
                    None => instantiate(self.src, &file, types(self), item, targs.as_deref())?,
                };
                let d = Rc::new(d);
                self.fns.insert(key.clone(), Rc::clone(&d));
                d
            }
        };
        for (k, a) in args.iter().enumerate() {
            if let (E::InitList(_), Some(p)) = (&a.kind, def.params.get(k)) {
                let ty = wrap_ptr(p.base.clone(), p.pointers);
                vals[k] = self.init_value(&ty, a)?;
            }
        }
        self.inline_refs(&base, def, vals, refs, None, e).map(Some)
    }

    /// A value of type `ty` that emits nothing (a reference argument's stand-in for deducing template
    /// arguments).
    #[cold]
    fn placeholder(&self, ty: &Ty) -> Val {
        match ty {
            Ty::Int { .. } => Val::Int(Src::Imm(0), IntTy::of(ty).unwrap_or(IntTy::INT)),
            Ty::Float { .. } => Val::Float(Src::Imm(0)),
            Ty::Ptr(e) => Val::Ptr { src: Src::Imm(0), to: (**e).clone(), space: MemSpace::Global, read_only: false },
            _ => Val::Agg { ty: ty.clone(), leaves: Vec::new() },
        }
    }

    /// Template arguments as the caller wrote them, with the caller's constants in place
    /// (`warpReduceSum<warp_size>` with a local `const int warp_size = 32` passes 32).
    #[cold]
    fn constant_args(&self, text: &str) -> String {
        let Ok(toks) = crate::lang::lex::lex(text) else { return text.to_string() };
        let mut out = String::new();
        let mut last = 0;
        for t in toks {
            if let crate::lang::lex::Tok::Ident(w) = &t.tok {
                let value = self.lookup(w).and_then(|i| match &self.scopes[i].1 {
                    Binding::Const(Val::Int(Src::Imm(v), ty)) => {
                        Some(exec::conv(*v, ty.promoted().bits, ty.promoted().signed) as i64)
                    }
                    _ => None,
                });
                if let Some(v) = value {
                    out.push_str(&text[last..t.span.start]);
                    out.push_str(&v.to_string());
                    last = t.span.end;
                }
            }
        }
        out.push_str(&text[last.min(text.len())..]);
        out
    }

    /// Runs function `def` inline on `vals`; a member function on an object `this` in memory or registers
    /// (its fields are names in the body, and `this` points to it). Its value (unknown data for a class
    /// value kept in registers).
    #[cold]
    fn inline(&mut self, base: &str, def: Rc<FnDef>, vals: Vec<Val>, this: Option<Place>, e: &Ex) -> R<Val> {
        let refs = (0..vals.len()).map(|_| None).collect();
        self.inline_refs(base, def, vals, refs, this, e)
    }

    /// [`Lower::inline`] with the reference arguments: each a variable or place the parameter names.
    #[cold]
    fn inline_refs(
        &mut self,
        base: &str,
        def: Rc<FnDef>,
        vals: Vec<Val>,
        refs: Vec<Option<LRef>>,
        this: Option<Place>,
        e: &Ex,
    ) -> R<Val> {
        let cls = self.fns_class.get(&(Rc::as_ptr(&def) as usize)).copied();
        if let Some(c) = cls {
            self.class_stack.push(c);
        }
        // The bindings the references name, taken before the callee's scope hides them.
        let refs: Vec<Option<Binding>> = refs
            .into_iter()
            .map(|r| match r {
                Some(LRef::Var(i)) => Some(self.scopes[i].1.clone()),
                Some(LRef::Mem(p)) => Some(Binding::Mem(p)),
                None => None,
            })
            .collect();
        let r = self.inline_body(base, def, vals, refs, this, e);
        if cls.is_some() {
            self.class_stack.pop();
        }
        r
    }

    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn inline_body(
        &mut self,
        base: &str,
        def: Rc<FnDef>,
        vals: Vec<Val>,
        refs: Vec<Option<Binding>>,
        this: Option<Place>,
        e: &Ex,
    ) -> R<Val> {
        // A default argument stands for a missing one.
        let mut vals = vals;
        if vals.len() < def.params.len() && def.params[vals.len()..].iter().all(|d| d.init.is_some()) {
            for d in def.params[vals.len()..].iter() {
                let init = d.init.as_ref().expect("checked");
                vals.push(self.rvalue(init)?);
            }
        }
        if def.params.len() != vals.len() {
            return Err(
                self.err(e.span, format!("`{base}` takes {} argument(s), found {}", def.params.len(), vals.len()))
            );
        }
        // The callee sees the file's top level and its own parameters only.
        let saved_scopes = self.scopes.split_off(self.globals_end.min(self.scopes.len()));
        let saved_marks = std::mem::take(&mut self.marks);
        let saved_loops = std::mem::take(&mut self.loops);
        let (saved_stmt, saved_seq, saved_salt) = (self.stmt, self.seq, self.salt);
        self.calls += 1;
        self.salt = self.calls.saturating_mul(1 << 24);
        self.open_scope();
        let r = (|| -> R<Val> {
            if let Some(obj) = &this {
                // The object's fields by name, and `this`.
                if let Ty::Struct(i) = &obj.ty {
                    for (name, fty, off) in types(self).def(*i).map(|d| d.fields).unwrap_or_default() {
                        let addr = self.bin(BinOp::Add, Width::W64, obj.addr, Src::Imm(off), e.span);
                        let place = Place { space: obj.space, addr, ty: fty, read_only: obj.read_only };
                        self.bind(name.into(), Binding::Mem(place));
                    }
                }
                let ptr = Val::Ptr { src: obj.addr, to: obj.ty.clone(), space: obj.space, read_only: obj.read_only };
                self.bind("this".into(), Binding::Const(ptr));
            }
            for (k, (d, v)) in def.params.iter().zip(vals).enumerate() {
                if let (true, Some(Some(b))) = (d.reference, refs.get(k)) {
                    self.bind(d.name.clone(), b.clone());
                    continue;
                }
                let ty = wrap_ptr(d.base.clone(), d.pointers);
                let v = self.convert(&ty, v, e.span)?;
                let b = self.var_with(&ty, v, d.span, e.span)?;
                self.bind(d.name.clone(), b);
            }
            let ret = match &def.ret {
                Some(t) => Some((t.clone(), self.new_var(t, e.span, |_, _, _| {})?)),
                None => None,
            };
            let end = self.b.label();
            self.frames.push(Frame { end, ret, returned: false });
            self.find_homes(&def.body);
            let r = self.block(&def.body);
            let frame = self.frames.pop().expect("pushed above");
            self.b.place(end);
            r?;
            Ok(match frame.ret {
                Some((_, Binding::Var { val, .. })) => val,
                Some((t, Binding::Mem(_))) => {
                    let why = format!("the value `{base}` returns ({}), kept in registers", self.pos(e.span));
                    let w = self.b.data_why(why);
                    self.fresh_temp(&t, e.span, w)?
                }
                _ => Val::Int(Src::Imm(0), IntTy::INT),
            })
        })();
        self.scopes.truncate(self.globals_end.min(self.scopes.len()));
        self.scopes.extend(saved_scopes);
        self.marks = saved_marks;
        self.loops = saved_loops;
        (self.stmt, self.seq, self.salt) = (saved_stmt, saved_seq, saved_salt);
        r
    }

    /// The type a name names in the file (a class is made a type when first named).
    #[cold]
    fn lookup_type(&self, name: &str, span: Span) -> R<Option<Ty>> {
        super::parse::lookup_type(self.src, &self.ast.file, types(self), name, span)
    }

    /// Whether values of `ty` are class objects kept in registers as a whole (a struct with member functions
    /// or array fields): they live in a register place, so that member functions and `operator[]` can change
    /// them; the values they hold are not followed.
    #[cold]
    fn class_like(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Struct(i) => types(self)
                .def(*i)
                .is_some_and(|d| !d.methods.is_empty() || d.fields.iter().any(|(_, t, _)| matches!(t, Ty::Array(..)))),
            _ => false,
        }
    }

    /// Whether values of `ty` are floating-point data only (floats, float vectors, structs of them).
    #[cold]
    fn is_data_type(&self, ty: &Ty) -> bool {
        !self.fields(ty).is_empty() && self.fields(ty).iter().all(|(_, t)| matches!(t, Ty::Float { .. }))
    }

    /// A register place for a class object of type `ty`.
    #[cold]
    fn class_place(&mut self, ty: &Ty) -> Place {
        let t = types(self);
        let (size, align) = (t.size(ty), t.align(ty).max(4));
        let off = self.reg_top.div_ceil(align) * align;
        self.reg_top = off + size;
        Place { space: MemSpace::Reg, addr: Src::Imm(off), ty: ty.clone(), read_only: false }
    }

    /// Member function `m` of class `cls` (struct index), parsed once.
    #[cold]
    fn method_def(&mut self, cls: usize, m: &str, arity: usize, e: &Ex) -> R<Option<(Rc<FnDef>, bool)>> {
        let Some(def) = types(self).def(cls) else { return Ok(None) };
        let candidates: Vec<&super::syntax::Method> = def.methods.iter().filter(|x| x.name == m).collect();
        let Some(method) = candidates.iter().find(|x| params_of(&x.toks) == arity).or(candidates.first()).copied()
        else {
            return Ok(None);
        };
        let key = format!("{}::{m}/{}", def.name, params_of(&method.toks));
        if let Some(d) = self.fns.get(&key) {
            return Ok(Some((Rc::clone(d), method.is_static)));
        }
        let parsed = super::parse::method(self.src, &self.ast.file, types(self), &def.name, &method.toks)
            .map_err(|err| self.err(e.op_span, format!("in `{}::{m}`: {}", def.name, err.message)))?;
        let d = Rc::new(parsed);
        self.fns.insert(key, Rc::clone(&d));
        self.fns_class.insert(Rc::as_ptr(&d) as usize, cls);
        Ok(Some((d, method.is_static)))
    }

    /// A class object constructed from `args` (`Packed128<float>{bits}`, `Packed128<float>(bits)`): its
    /// constructor runs on a fresh register place; the value (unknown data) is the object.
    #[cold]
    fn construct(&mut self, ty: &Ty, args: &[Ex], e: &Ex) -> R<Val> {
        let Ty::Struct(i) = ty else { return self.init_value(ty, e) };
        let name = types(self).name(ty);
        let obj = self.class_place(ty);
        if let Some((def, _)) = self.method_def(*i, &name, args.len(), e)? {
            let mut vals = Vec::new();
            for a in args {
                vals.push(self.rvalue(a)?);
            }
            self.inline(&name, def, vals, Some(obj), e)?;
        } else {
            for a in args {
                self.rvalue(a)?;
            }
        }
        let why = format!("a `{name}` made at {}, kept in registers", self.pos(e.span));
        let w = self.b.data_why(why);
        self.fresh_temp(ty, e.span, w)
    }

    /// Template arguments of a call from its arguments' types: `T` from a parameter declared `T` or `T *`.
    #[cold]
    fn deduce(&mut self, item: &super::file::FnItem, file: &super::File, vals: &[Val], e: &Ex) -> R<String> {
        // The declared parameter types, as token words, from the function's own tokens.
        let toks = &file.toks[item.toks.clone()];
        let open = toks.iter().position(|t| matches!(t.tok, crate::lang::lex::Tok::Punct("(")));
        let mut params: Vec<Vec<String>> = vec![Vec::new()];
        if let Some(o) = open {
            let mut depth = 0;
            for t in &toks[o + 1..] {
                match &t.tok {
                    crate::lang::lex::Tok::Punct("(") => depth += 1,
                    crate::lang::lex::Tok::Punct(")") if depth == 0 => break,
                    crate::lang::lex::Tok::Punct(")") => depth -= 1,
                    crate::lang::lex::Tok::Punct(",") if depth == 0 => {
                        params.push(Vec::new());
                        continue;
                    }
                    _ => {}
                }
                let w = match &t.tok {
                    crate::lang::lex::Tok::Ident(w) => w.clone(),
                    crate::lang::lex::Tok::Punct(p) => p.to_string(),
                    _ => String::new(),
                };
                params.last_mut().expect("one").push(w);
            }
        }
        let mut out = Vec::new();
        for tp in &item.params {
            // Every argument that fixes the parameter; one whose type is exact (not a register's floating-point
            // value, which does not tell float from double) wins.
            let candidates: Vec<(Ty, bool)> = params
                .iter()
                .zip(vals)
                .filter_map(|(words, v)| {
                    let at = words.iter().position(|w| *w == tp.name)?;
                    let stars = words[at + 1..].iter().filter(|w| *w == "*").count();
                    let mut ty = self.ty_of(v);
                    for _ in 0..stars {
                        ty = match ty {
                            Ty::Ptr(t) => (*t).clone(),
                            _ => return None,
                        };
                    }
                    Some((ty, matches!(v, Val::Float(_)) && stars == 0))
                })
                .collect();
            let found = candidates.iter().find(|c| !c.1).or(candidates.first()).cloned();
            match (found, &tp.default) {
                (Some((ty, from_float)), _) => {
                    if from_float {
                        self.assumed.push(format!("{} = float in the call of `{}` at {} (a register does not tell float from double: write {}<double>(…) if it is double)", tp.name, item.name, self.pos(e.span), item.name));
                    }
                    out.push(c_name(types(self), &ty));
                }
                (None, Some(d)) => out.push(
                    d.iter()
                        .map(|t| match &t.tok {
                            crate::lang::lex::Tok::Ident(w) => w.clone(),
                            crate::lang::lex::Tok::Int(n) => n.to_string(),
                            crate::lang::lex::Tok::Punct(p) => p.to_string(),
                            _ => String::new(),
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                (None, None) => {
                    return Err(self.err(
                        e.op_span,
                        format!(
                            "cannot deduce the template argument `{}` of `{}`: write it, as {}<…>(…)",
                            tp.name, item.name, item.name
                        ),
                    ));
                }
            }
        }
        Ok(out.join(", "))
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
            "MODEL.md section I: kernel parameters",
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
    // What the CUDA front end cannot know of the compiler's choices, said once per kernel with loads.
    if ast.ran.is_some() && l.b.has_loads() {
        l.b.note(Note::new(
            "cuda-as-written",
            "Each read is counted as the source writes it. nvcc may keep a value it has read in a register and not read it again (the same element in an unrolled loop, a value just stored): the compiled kernel can issue fewer loads; its PTX or SASS shows which.",
            "the PTX and SASS nvcc makes (tests/data/published/differences.txt)",
        ));
    }
    Ok(Lowered { program: l.b.finish(), block, grid })
}

/// The type of what a function of CUDA's math library (CUDA Math API: single and double precision, type
/// casting, half and bfloat16 intrinsics) returns, by name; `None` for a name that is not one.
fn math_result(name: &str) -> Option<&'static str> {
    const FLOAT: &[&str] = &[
        "sqrtf",
        "rsqrtf",
        "cbrtf",
        "rcbrtf",
        "expf",
        "exp2f",
        "exp10f",
        "expm1f",
        "logf",
        "log2f",
        "log10f",
        "log1pf",
        "logbf",
        "powf",
        "sinf",
        "cosf",
        "tanf",
        "sinpif",
        "cospif",
        "asinf",
        "acosf",
        "atanf",
        "atan2f",
        "sinhf",
        "coshf",
        "tanhf",
        "asinhf",
        "acoshf",
        "atanhf",
        "erff",
        "erfcf",
        "erfinvf",
        "erfcinvf",
        "erfcxf",
        "normcdff",
        "normcdfinvf",
        "lgammaf",
        "tgammaf",
        "j0f",
        "j1f",
        "y0f",
        "y1f",
        "fabsf",
        "fmaxf",
        "fminf",
        "fmaf",
        "fdimf",
        "floorf",
        "ceilf",
        "roundf",
        "truncf",
        "rintf",
        "nearbyintf",
        "copysignf",
        "fmodf",
        "remainderf",
        "remquof",
        "ldexpf",
        "scalbnf",
        "scalblnf",
        "hypotf",
        "rhypotf",
        "norm3df",
        "rnorm3df",
        "norm4df",
        "rnorm4df",
        "normf",
        "rnormf",
        "fdividef",
        "modff",
        "frexpf",
        "nextafterf",
        "sincosf",
        "sincospif",
        "__fdividef",
        "__expf",
        "__exp10f",
        "__logf",
        "__log2f",
        "__log10f",
        "__powf",
        "__sinf",
        "__cosf",
        "__tanf",
        "__sincosf",
        "__saturatef",
        "__frcp_rn",
        "__frcp_rz",
        "__frcp_ru",
        "__frcp_rd",
        "__fsqrt_rn",
        "__fsqrt_rz",
        "__fsqrt_ru",
        "__fsqrt_rd",
        "__frsqrt_rn",
        "__fadd_rn",
        "__fadd_rz",
        "__fadd_ru",
        "__fadd_rd",
        "__fsub_rn",
        "__fsub_rz",
        "__fsub_ru",
        "__fsub_rd",
        "__fmul_rn",
        "__fmul_rz",
        "__fmul_ru",
        "__fmul_rd",
        "__fdiv_rn",
        "__fdiv_rz",
        "__fdiv_ru",
        "__fdiv_rd",
        "__fmaf_rn",
        "__fmaf_rz",
        "__fmaf_ru",
        "__fmaf_rd",
        "__fmaf_ieee_rn",
        "__fmaf_ieee_rz",
        "__fmaf_ieee_ru",
        "__fmaf_ieee_rd",
        "__int2float_rn",
        "__int2float_rz",
        "__int2float_ru",
        "__int2float_rd",
        "__uint2float_rn",
        "__uint2float_rz",
        "__uint2float_ru",
        "__uint2float_rd",
        "__ll2float_rn",
        "__ull2float_rn",
        "__double2float_rn",
        "__double2float_rz",
        "__half2float",
        "__low2float",
        "__high2float",
        "__bfloat162float",
        "__int_as_float",
        "__uint_as_float",
        "__tanhf",
        "__expf_approx",
    ];
    const DOUBLE: &[&str] = &[
        "sqrt",
        "rsqrt",
        "cbrt",
        "exp",
        "exp2",
        "exp10",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "pow",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "erf",
        "erfc",
        "fabs",
        "fmax",
        "fmin",
        "fma",
        "fdim",
        "floor",
        "ceil",
        "round",
        "trunc",
        "rint",
        "nearbyint",
        "copysign",
        "fmod",
        "remainder",
        "hypot",
        "ldexp",
        "modf",
        "frexp",
        "remquo",
        "sincos",
        "sincospi",
        "lgamma",
        "tgamma",
        "__dadd_rn",
        "__dsub_rn",
        "__dmul_rn",
        "__ddiv_rn",
        "__drcp_rn",
        "__dsqrt_rn",
        "__fma_rn",
        "__int2double_rn",
        "__uint2double_rn",
        "__ll2double_rn",
        "__ull2double_rn",
        "__longlong_as_double",
        "__hiloint2double",
        "__float2double",
    ];
    const INT: &[&str] = &[
        "__float2int_rn",
        "__float2int_rz",
        "__float2int_ru",
        "__float2int_rd",
        "__double2int_rn",
        "__double2int_rz",
        "__float_as_int",
        "__double2hiint",
        "__double2loint",
        "ilogbf",
        "ilogb",
        "isnan",
        "isinf",
        "isfinite",
        "signbit",
        "__isnanf",
        "__isinff",
        "__isnan",
        "__isinf",
        "__finitef",
        "__signbitf",
        "__half2int_rn",
        "__half2int_rz",
        "__bfloat162int_rn",
        "__bfloat162int_rz",
        "__hisnan",
        "__hisinf",
        "__heq",
        "__hne",
        "__hlt",
        "__hle",
        "__hgt",
        "__hge",
        "__hbeq2",
        "__hbne2",
        "__hblt2",
        "__hble2",
        "__hbgt2",
        "__hbge2",
        "lrintf",
        "lroundf",
        "lrint",
        "lround",
    ];
    const UINT: &[&str] = &[
        "__float2uint_rn",
        "__float2uint_rz",
        "__float2uint_ru",
        "__float2uint_rd",
        "__float_as_uint",
        "__double2uint_rn",
        "__double2uint_rz",
        "__half_as_ushort",
        "__bfloat16_as_ushort",
        "__half2uint_rn",
        "__half2uint_rz",
        "__hbeq2_mask",
        "__heq2_mask",
        "__hne2_mask",
    ];
    const LONGLONG: &[&str] = &[
        "__float2ll_rn",
        "__float2ll_rz",
        "__double2ll_rn",
        "__double2ll_rz",
        "__double_as_longlong",
        "llrintf",
        "llroundf",
        "llrint",
        "llround",
    ];
    const ULONGLONG: &[&str] = &["__float2ull_rn", "__float2ull_rz", "__double2ull_rn", "__double2ull_rz"];
    const SHORT: &[&str] = &["__half_as_short", "__bfloat16_as_short", "__half2short_rn", "__half2short_rz"];
    const HALF: &[&str] = &[
        "__float2half",
        "__float2half_rn",
        "__float2half_rz",
        "__float2half_ru",
        "__float2half_rd",
        "__double2half",
        "__int2half_rn",
        "__uint2half_rn",
        "__short2half_rn",
        "__ushort2half_rn",
        "__ushort_as_half",
        "__short_as_half",
        "__hadd",
        "__hsub",
        "__hmul",
        "__hdiv",
        "__hfma",
        "__hfma_relu",
        "__hneg",
        "__habs",
        "__hmax",
        "__hmin",
        "__hmax_nan",
        "__hmin_nan",
        "__hadd_sat",
        "__hmul_sat",
        "__hfma_sat",
        "hsqrt",
        "hrsqrt",
        "hrcp",
        "hexp",
        "hexp2",
        "hexp10",
        "hlog",
        "hlog2",
        "hlog10",
        "hsin",
        "hcos",
        "htanh",
        "hceil",
        "hfloor",
        "htrunc",
        "hrint",
        "__low2half",
        "__high2half",
        "__hadd_rn",
        "__hmul_rn",
        "__hsub_rn",
    ];
    const HALF2: &[&str] = &[
        "__float2half2_rn",
        "__floats2half2_rn",
        "__float22half2_rn",
        "__halves2half2",
        "__half2half2",
        "__lows2half2",
        "__highs2half2",
        "__lowhigh2highlow",
        "__low2half2",
        "__high2half2",
        "__hadd2",
        "__hsub2",
        "__hmul2",
        "__h2div",
        "__hfma2",
        "__hfma2_relu",
        "__hneg2",
        "__habs2",
        "__hmax2",
        "__hmin2",
        "__hmax2_nan",
        "__hmin2_nan",
        "__hadd2_sat",
        "__hmul2_sat",
        "__hfma2_sat",
        "h2sqrt",
        "h2rsqrt",
        "h2rcp",
        "h2exp",
        "h2exp2",
        "h2log",
        "h2log2",
        "h2sin",
        "h2cos",
        "h2ceil",
        "h2floor",
        "h2trunc",
        "h2rint",
        "__hcmadd",
    ];
    const BF16: &[&str] = &[
        "__float2bfloat16",
        "__float2bfloat16_rn",
        "__float2bfloat16_rz",
        "__float2bfloat16_ru",
        "__float2bfloat16_rd",
        "__double2bfloat16",
        "__int2bfloat16_rn",
        "__uint2bfloat16_rn",
        "__ushort_as_bfloat16",
        "__short_as_bfloat16",
        "__low2bfloat16",
        "__high2bfloat16",
    ];
    const BF162: &[&str] = &[
        "__float2bfloat162_rn",
        "__floats2bfloat162_rn",
        "__float22bfloat162_rn",
        "__halves2bfloat162",
        "__bfloat162bfloat162",
        "__lows2bfloat162",
        "__highs2bfloat162",
        "__low2bfloat162",
        "__high2bfloat162",
    ];
    const FLOAT2: &[&str] = &["__half22float2", "__bfloat1622float2"];
    [
        (FLOAT, "float"),
        (DOUBLE, "double"),
        (INT, "int"),
        (UINT, "unsigned int"),
        (LONGLONG, "long long"),
        (ULONGLONG, "unsigned long long"),
        (SHORT, "short"),
        (HALF, "half"),
        (HALF2, "half2"),
        (BF16, "__nv_bfloat16"),
        (BF162, "__nv_bfloat162"),
        (FLOAT2, "float2"),
    ]
    .into_iter()
    .find(|(names, _)| names.contains(&name))
    .map(|(_, ty)| ty)
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
