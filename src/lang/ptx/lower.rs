//! The PTX syntax tree lowered into the program every language shares (see `crate::program`): the kernel
//! chosen and the functions it reaches (inlined at each `call`, recursion refused), shared, local and global
//! variables placed, kernel parameters given their values or defaults, and each instruction run with PTX's
//! exact integer semantics at its type. Each `ld`/`st` becomes a memory site under the SASS instruction it
//! compiles to (`ld.global.nc.v4.f32` is `LDG.E.128.CONSTANT`); `cvta` and `isspacep` use the generic-address
//! windows. A name outside the PTX ISA's instructions is an error, with the nearest name when one is close.
//!
//! May import: `syntax`, `crate::program`, `crate::model::access` (instructions, the generic-address windows;
//! and `model::note` for its notes), `lang::params`, `lang::expr::Vars` and `lang::{InputError, Span}`.

use super::syntax::{self, type_bits, Decl, Func, Inst, Module, Opnd, Space, Stmt};
use super::Options;
use crate::lang::expr::Vars;
use crate::lang::params;
use crate::lang::{InputError, Span};
use crate::model::access::Instr;
use crate::model::access::{DEFAULT_LOCAL_WINDOW, DEFAULT_SHARED_WINDOW, WINDOW_BYTES};
use crate::model::note::Note;
use crate::program::launch::Launch;
#[cfg(feature = "data")]
use crate::program::memory::{ArrayDecl, Elem};
use crate::program::{
    BinOp, Builder, Cmp, Label, Op, Pred, PredOp, PredRef, Program, Reg, ShflMode, Site, SiteId, SourceLine, Special,
    Src, UnOp, Width,
};
use std::collections::{BTreeSet, HashMap, HashSet};

type R<T> = Result<T, InputError>;

// The instructions' semantics, one idea a file: computing (`compute.rs`), memory (`memory.rs`).
mod compute;
mod memory;

use compute::{arith, bits_op, cvt, setp, unary};
#[cfg(feature = "data")]
use memory::ptx_elem;
use memory::{atomic, cp_async, matrix, memory, pointer_params};

/// Every instruction name of the PTX ISA (9.0), without modifiers. A name outside it is an error, as `ptxas`
/// would make it, rather than an unknown value: a typo (`mvo.u32`) is named where it is.
const PTX_OPCODES: &[&str] = &[
    "abs",
    "activemask",
    "add",
    "addc",
    "alloca",
    "applypriority",
    "atom",
    "bar",
    "barrier",
    "bfe",
    "bfi",
    "bfind",
    "bmsk",
    "bra",
    "brev",
    "brkpt",
    "brx",
    "call",
    "clusterlaunchcontrol",
    "clz",
    "cnot",
    "copysign",
    "cos",
    "cp",
    "createpolicy",
    "cvt",
    "cvta",
    "discard",
    "div",
    "dp2a",
    "dp4a",
    "elect",
    "ex2",
    "exit",
    "fence",
    "fma",
    "fns",
    "getctarank",
    "griddepcontrol",
    "isspacep",
    "istypep",
    "ld",
    "ldmatrix",
    "ldu",
    "lg2",
    "lop3",
    "mad",
    "mad24",
    "madc",
    "mapa",
    "match",
    "max",
    "mbarrier",
    "membar",
    "min",
    "mma",
    "mov",
    "movmatrix",
    "mul",
    "mul24",
    "multimem",
    "nanosleep",
    "neg",
    "not",
    "or",
    "pmevent",
    "popc",
    "prefetch",
    "prefetchu",
    "prmt",
    "rcp",
    "red",
    "redux",
    "rem",
    "ret",
    "rsqrt",
    "sad",
    "selp",
    "set",
    "setmaxnreg",
    "setp",
    "shf",
    "shfl",
    "shl",
    "shr",
    "sin",
    "slct",
    "sqrt",
    "st",
    "stackrestore",
    "stacksave",
    "stmatrix",
    "sub",
    "subc",
    "suld",
    "suq",
    "sured",
    "sust",
    "szext",
    "tanh",
    "tcgen05",
    "tensormap",
    "testp",
    "tex",
    "tld4",
    "trap",
    "txq",
    "vabsdiff",
    "vabsdiff2",
    "vabsdiff4",
    "vadd",
    "vadd2",
    "vadd4",
    "vavrg2",
    "vavrg4",
    "vmad",
    "vmax",
    "vmax2",
    "vmax4",
    "vmin",
    "vmin2",
    "vmin4",
    "vote",
    "vset",
    "vset2",
    "vset4",
    "vshl",
    "vshr",
    "vsub",
    "vsub2",
    "vsub4",
    "wgmma",
    "wmma",
    "xor",
];

/// The PTX instruction name closest to a misspelt one (at most two edits away), if one is.
fn nearest(word: &str) -> Option<&'static str> {
    // Edit distance counting a swap of neighbours as one edit (optimal string alignment): `mvo` is one from `mov`.
    let dist = |a: &str, b: &str| {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let mut v =
                    (d[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1])).min(d[i - 1][j] + 1).min(d[i][j - 1] + 1);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    v = v.min(d[i - 2][j - 2] + 1);
                }
                d[i][j] = v;
            }
        }
        d[a.len()][b.len()]
    };
    if word.len() > 32 {
        return None;
    }
    PTX_OPCODES.iter().map(|&o| (dist(word, o), o)).filter(|&(d, _)| d <= 2).min_by_key(|&(d, _)| d).map(|(_, o)| o)
}

/// Calls nest at most this deep; recursion is refused.
const MAX_CALL_DEPTH: usize = 8;

/// A kernel parameter: where it is, and its value or why it has none.
#[derive(Clone, Debug)]
struct KParam {
    size: u64,
    value: Result<u64, String>,
}

/// Where a `ld.param`/`st.param` name points: a kernel parameter, or a call's parameter storage.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Kernel(usize),
    Mem(u32),
}

/// One inlined function: its names.
struct Frame<'m> {
    func: &'m Func,
    regs: HashMap<String, Reg>,
    preds: HashMap<String, Pred>,
    /// `%r<13>`: prefix -> (count, is a predicate).
    ranges: Vec<(String, u32, bool)>,
    labels: HashMap<String, Label>,
    slots: HashMap<String, Slot>,
    ret: Option<Label>,
}

struct Lw<'a> {
    b: Builder,
    src: &'a str,
    m: &'a Module,
    launch: Launch,
    guard: Option<PredRef>,
    span: Span,
    line: usize,
    frames: Vec<Frame<'a>>,
    kparams: Vec<(String, KParam)>,
    /// Call parameter storage: (slot, byte offset) -> the register holding the value written there, and its bytes.
    slot_regs: HashMap<(u32, i64), (Reg, u64)>,
    /// Each declared register's width in bits (a narrower signed value written to it is sign-extended).
    reg_bits: HashMap<Reg, u32>,
    /// The instruction being lowered works on f32: decimal float immediates are rounded to f32 bits.
    imm_f32: bool,
    next_slot: u32,
    shared: HashMap<String, u64>,
    locals: HashMap<String, u64>,
    local_top: u64,
    globals: HashMap<String, u64>,
    /// `.const` variables: their offsets in the constant bank (docs/model.md#constant-memory), in declaration order.
    consts: HashMap<String, u64>,
    sites: HashMap<usize, SiteId>,
    /// Lines of instructions that move memory but are not costed (atomics, constant and texture reads).
    uncosted: BTreeSet<(usize, String)>,
}

const ZERO: Src = Src::Imm(0);

fn width(bits: u32) -> Width {
    if bits > 32 {
        Width::W64
    } else {
        Width::W32
    }
}

/// The kind of a type name: (bits, signed, float).
fn kind(ty: &str) -> (u32, bool, bool) {
    let bits = type_bits(ty).unwrap_or(32);
    let float = ty.starts_with('f') || ty.starts_with("bf") || ty == "tf32";
    (bits, ty.starts_with('s'), float)
}

impl<'a> Lw<'a> {
    fn err(&self, span: Span, msg: impl Into<String>) -> InputError {
        InputError::at(self.src, span, msg)
    }

    fn emit(&mut self, op: Op) {
        self.b.emit(op, self.guard, self.span);
    }

    fn tmp(&mut self) -> Reg {
        self.b.temp()
    }

    fn frame(&self) -> &Frame<'a> {
        self.frames.last().expect("a frame while lowering")
    }

    fn frame_mut(&mut self) -> &mut Frame<'a> {
        self.frames.last_mut().expect("a frame while lowering")
    }

    fn bin(&mut self, op: BinOp, w: Width, a: Src, b: Src) -> Src {
        self.b.bin(op, w, a, b, self.guard, self.span)
    }

    fn conv(&mut self, a: Src, bits: u32, signed: bool) -> Src {
        self.b.conv(a, bits.min(64) as u8, signed, self.guard, self.span)
    }

    fn unknown(&mut self, why: String) -> Src {
        self.b.unknown(why, self.guard, self.span)
    }

    fn un(&mut self, f: UnOp, a: Src) -> Src {
        if let Src::Imm(x) = a {
            return Src::Imm(f.apply(x));
        }
        let d = self.tmp();
        self.emit(Op::Un { f, dst: d, a });
        Src::Reg(d)
    }

    fn setp(&mut self, cmp: Cmp, signed: bool, w: Width, a: Src, b: Src) -> Pred {
        let p = self.b.pred();
        self.emit(Op::Setp { dst: p, cmp, signed, w, a, b });
        p
    }

    fn sel(&mut self, p: PredRef, a: Src, b: Src) -> Src {
        let d = self.tmp();
        self.emit(Op::Sel { dst: d, p, a, b });
        Src::Reg(d)
    }

    // ---- names ----

    /// Declares the names of a `.reg` declaration in the current frame; each starts unknown.
    #[cold]
    fn declare_regs(&mut self, d: &Decl) -> R<()> {
        let pred = d.ty == "pred";
        for n in &d.names {
            let names: Vec<String> = match n.range {
                None => vec![n.name.clone()],
                Some(c) => {
                    let count = c.max(1);
                    self.frame_mut().ranges.push((n.name.clone(), count, pred));
                    // Only the members the body names (`%r7` of `%r<13>`, written as the range writes it), so that
                    // `.reg .b32 %r<1048576>;` costs the registers a kernel uses, not a million.
                    let mut names = Vec::new();
                    each_name(self.frame().func, &mut |u: &str| {
                        let i = u.strip_prefix(n.name.as_str()).unwrap_or("");
                        let canonical = i == "0" || !i.starts_with('0');
                        if canonical && i.bytes().all(|b| b.is_ascii_digit()) && i.parse().is_ok_and(|v: u32| v < count)
                        {
                            names.push(u.to_string());
                        }
                    });
                    names
                }
            };
            // Registers and predicates made from here on belong to this declaration: a name already among them is
            // named again further on in the body.
            let (first_reg, first_pred) = (self.b.reg_count(), self.b.pred_count());
            for name in names {
                let again = self.frame().regs.get(&name).is_some_and(|&r| r >= first_reg)
                    || self.frame().preds.get(&name).is_some_and(|&p| p >= first_pred);
                if again {
                    continue;
                }
                let why = self.b.why(format!("{name} is read before any instruction writes it"));
                self.span = n.span;
                if pred {
                    let p = self.b.pred();
                    self.frame_mut().preds.insert(name, p);
                    let v = self.tmp();
                    self.b.emit(Op::Unknown { dst: v, why }, None, n.span);
                    self.b.emit(
                        Op::Setp { dst: p, cmp: Cmp::Ne, signed: false, w: Width::W64, a: Src::Reg(v), b: ZERO },
                        None,
                        n.span,
                    );
                } else {
                    let r = self.b.reg();
                    self.frame_mut().regs.insert(name, r);
                    self.reg_bits.insert(r, type_bits(&d.ty).unwrap_or(64));
                    self.b.emit(Op::Unknown { dst: r, why }, None, n.span);
                }
            }
        }
        Ok(())
    }

    fn reg_of(&self, name: &str) -> Option<Reg> {
        self.frame().regs.get(name).copied()
    }

    fn pred_of(&self, name: &str) -> Option<Pred> {
        self.frame().preds.get(name).copied()
    }

    fn undeclared(&self, name: &str, span: Span) -> InputError {
        // Name the range that would hold it, if its prefix is declared.
        let prefix = name.trim_end_matches(|c: char| c.is_ascii_digit());
        if let Some((_, n, _)) = self.frame().ranges.iter().find(|(p, _, _)| p == prefix) {
            return self.err(
                span,
                format!("`{name}` is past the declared registers `{prefix}<{n}>` ({prefix}0 to {prefix}{})", n - 1),
            );
        }
        self.err(span, format!("`{name}` is not declared (declare registers with `.reg .b32 {prefix}<N>;`)"))
    }

    /// The address a symbol names (a variable), or `None` when it is not a variable.
    fn symbol_addr(&mut self, name: &str) -> Option<Result<u64, String>> {
        if let Some(&o) = self.shared.get(name) {
            return Some(Ok(o));
        }
        if let Some(&o) = self.locals.get(name) {
            return Some(Ok(o));
        }
        if let Some(&g) = self.globals.get(name) {
            return Some(Ok(g));
        }
        if let Some(&o) = self.consts.get(name) {
            return Some(Ok(o));
        }
        if self.frame().slots.contains_key(name) {
            return Some(Err(format!("the address of parameter {name}")));
        }
        None
    }

    /// A special register's value.
    fn special(&mut self, name: &str) -> Option<Src> {
        let dim = |s: &str| match s {
            "x" => Some(0u8),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        let (head, tail) = name.split_once('.').unwrap_or((name, ""));
        let which = match (head, dim(tail)) {
            ("%tid", Some(d)) => Some(Special::Tid(d)),
            ("%ntid", Some(d)) => Some(Special::Ntid(d)),
            ("%ctaid", Some(d)) => Some(Special::Ctaid(d)),
            ("%nctaid", Some(d)) => Some(Special::Nctaid(d)),
            ("%laneid", None) if tail.is_empty() => Some(Special::Lane),
            _ => None,
        };
        if let Some(w) = which {
            let d = self.tmp();
            self.emit(Op::Special { dst: d, which: w });
            return Some(Src::Reg(d));
        }
        // A cluster of one block (no cluster launch): the block is its own cluster.
        match (head, dim(tail)) {
            ("%cluster_ctaid", Some(_)) => return Some(ZERO),
            ("%cluster_nctaid", Some(_)) => return Some(Src::Imm(1)),
            ("%clusterid", Some(d)) => {
                let r = self.tmp();
                self.emit(Op::Special { dst: r, which: Special::Ctaid(d) });
                return Some(Src::Reg(r));
            }
            ("%nclusterid", Some(d)) => {
                let r = self.tmp();
                self.emit(Op::Special { dst: r, which: Special::Nctaid(d) });
                return Some(Src::Reg(r));
            }
            _ => {}
        }
        // `shift_of << laneid` at 32 bits: 1 << lane is %lanemask_eq, 2 << lane - 1 is %lanemask_le.
        let lanemask = |lw: &mut Lw, shift_of: u64| {
            let lane = lw.tmp();
            lw.emit(Op::Special { dst: lane, which: Special::Lane });
            lw.bin(BinOp::Shl, Width::W32, Src::Imm(shift_of), Src::Reg(lane))
        };
        match name {
            // The PTX ISA's predefined constant: the warp size in threads.
            "WARP_SZ" => Some(Src::Imm(32)),
            "%cluster_ctarank" => Some(ZERO),
            "%cluster_nctarank" | "%is_explicit_cluster" => Some(Src::Imm(u64::from(name == "%cluster_nctarank"))),
            "%lanemask_eq" => Some(lanemask(self, 1)),
            "%lanemask_lt" | "%lanemask_ge" => {
                let m = lanemask(self, 1);
                let lt = self.bin(BinOp::Sub, Width::W32, m, Src::Imm(1));
                Some(if name == "%lanemask_ge" {
                    self.bin(BinOp::Xor, Width::W32, lt, Src::Imm(0xFFFF_FFFF))
                } else {
                    lt
                })
            }
            "%lanemask_le" | "%lanemask_gt" => {
                let m = lanemask(self, 2);
                let le = self.bin(BinOp::Sub, Width::W32, m, Src::Imm(1));
                Some(if name == "%lanemask_gt" {
                    self.bin(BinOp::Xor, Width::W32, le, Src::Imm(0xFFFF_FFFF))
                } else {
                    le
                })
            }
            // %warpid is the warp's hardware slot, which the PTX ISA says may change and is not tid / 32.
            "%warpid" | "%clock" | "%clock64" | "%globaltimer" | "%globaltimer_lo" | "%globaltimer_hi" | "%smid"
            | "%nsmid" | "%gridid" | "%nwarpid" | "%dynamic_smem_size" | "%total_smem_size" | "%aggr_smem_size" => {
                Some(self.unknown(format!("{name} (a value of the machine, not of the program) at line {}", self.line)))
            }
            _ if name.starts_with("%envreg") || name.starts_with("%pm") => {
                Some(self.unknown(format!("{name} (a value of the machine, not of the program) at line {}", self.line)))
            }
            _ => None,
        }
    }

    /// An operand's value (the low `bits` bits matter to the caller).
    fn val(&mut self, o: &Opnd, span: Span) -> R<Src> {
        match o {
            Opnd::Imm(v) => Ok(Src::Imm(*v)),
            // A 0f literal is f32 bits; a 0d or decimal literal used at f32 is rounded to f32.
            Opnd::Float(bits, false) if self.imm_f32 => {
                Ok(Src::Imm(u64::from((f64::from_bits(*bits) as f32).to_bits())))
            }
            Opnd::Float(bits, _) => Ok(Src::Imm(*bits)),
            Opnd::Name { name, neg: false } => {
                if let Some(r) = self.reg_of(name) {
                    return Ok(Src::Reg(r));
                }
                if let Some(p) = self.pred_of(name) {
                    let d = self.tmp();
                    self.emit(Op::PredToReg { dst: d, p: PredRef::of(p) });
                    return Ok(Src::Reg(d));
                }
                if let Some(v) = self.special(name) {
                    return Ok(v);
                }
                match self.symbol_addr(name) {
                    Some(Ok(a)) => Ok(Src::Imm(a)),
                    Some(Err(why)) => Ok(self.unknown(why)),
                    None => Err(self.undeclared(name, span)),
                }
            }
            Opnd::NameOff(name, off) => match self.symbol_addr(name) {
                Some(Ok(a)) => Ok(Src::Imm(a.wrapping_add(*off as u64))),
                Some(Err(why)) => Ok(self.unknown(why)),
                None => {
                    if let Some(r) = self.reg_of(name) {
                        return Ok(self.bin(BinOp::Add, Width::W64, Src::Reg(r), Src::Imm(*off as u64)));
                    }
                    Err(self.err(span, format!("`{name}` is not a variable of this module")))
                }
            },
            Opnd::Name { name, neg: true } => {
                let p = self
                    .pred_of(name)
                    .ok_or_else(|| self.err(span, format!("`!{name}`: `{name}` is not a predicate")))?;
                let d = self.tmp();
                self.emit(Op::PredToReg { dst: d, p: PredRef::not(p) });
                Ok(Src::Reg(d))
            }
            _ => Err(self.err(span, "expected a register, a number or a variable here")),
        }
    }

    /// An operand's value as a `ty` integer: 8- and 16-bit values extended by the type's sign.
    fn ival(&mut self, o: &Opnd, span: Span, ty: &str) -> R<Src> {
        let v = self.val(o, span)?;
        let (bits, signed, _) = kind(ty);
        Ok(if bits < 32 { self.conv(v, bits, signed) } else { v })
    }

    fn pred_ref(&self, o: &Opnd, span: Span) -> R<PredRef> {
        match o {
            Opnd::Name { name, neg } => match self.pred_of(name) {
                Some(p) => Ok(PredRef { idx: Some(p), neg: *neg }),
                None => {
                    Err(self.err(span, format!("`{name}` is not a predicate (declare it with `.reg .pred {name};`)")))
                }
            },
            // A nonzero constant is true: LLVM writes `mov.pred %p, -1`.
            Opnd::Imm(v) => Ok(if *v != 0 { PredRef::TRUE } else { PredRef::TRUE.negated() }),
            _ => Err(self.err(span, "expected a predicate here")),
        }
    }

    /// Writes `v` (its low `bits` bits, zero-extended) to destination `o`.
    fn set(&mut self, o: &Opnd, span: Span, v: Src, bits: u32) -> R<()> {
        match o {
            Opnd::Sink => Ok(()),
            Opnd::Name { name, neg: false } => {
                if let Some(r) = self.reg_of(name) {
                    let v = if bits < 64 { self.conv(v, bits, false) } else { v };
                    if let Src::Reg(t) = v {
                        if self.b.is_temp(t) && self.guard.is_none() && self.b.retarget_last(t, r) {
                            return Ok(());
                        }
                    }
                    self.emit(Op::Mov { dst: r, a: v });
                    Ok(())
                } else if let Some(p) = self.pred_of(name) {
                    self.emit(Op::Setp { dst: p, cmp: Cmp::Ne, signed: false, w: Width::W64, a: v, b: ZERO });
                    Ok(())
                } else {
                    Err(self.undeclared(name, span))
                }
            }
            _ => Err(self.err(span, "expected a destination register here")),
        }
    }

    /// Writes the `bits`-bit value `v` to `o`: a signed value is sign-extended into a wider register, as `ld`
    /// and `cvt` do (PTX ISA, "Operand size exceeding instruction-type size").
    fn set_ext(&mut self, o: &Opnd, span: Span, v: Src, bits: u32, signed: bool) -> R<()> {
        if let (true, Opnd::Name { name, neg: false }) = (signed, o) {
            if let Some(r) = self.reg_of(name) {
                let rb = self.reg_bits.get(&r).copied().unwrap_or(64);
                if rb > bits {
                    let v = self.conv(v, bits, true);
                    return self.set(o, span, v, rb);
                }
            }
        }
        self.set(o, span, v, bits)
    }

    /// Makes every register destination of `o` (a register or a vector of them) unknown for `why`.
    fn set_unknown(&mut self, o: &Opnd, span: Span, why: &str) -> R<()> {
        self.set_unknown_as(o, span, why, false)
    }

    /// [`Lw::set_unknown`] for a value that is data (loaded, or a floating-point result): a branch on it is
    /// decided by the data-branch assumption (see `Program::data_branches`).
    fn set_data(&mut self, o: &Opnd, span: Span, why: &str) -> R<()> {
        self.set_unknown_as(o, span, why, true)
    }

    fn set_unknown_as(&mut self, o: &Opnd, span: Span, why: &str, data: bool) -> R<()> {
        match o {
            Opnd::Vec(v) => {
                for x in v {
                    self.set_unknown_as(x, span, why, data)?;
                }
                Ok(())
            }
            Opnd::Pair(a, b) => {
                for n in [a, b] {
                    self.set_unknown_as(&Opnd::Name { name: n.clone(), neg: false }, span, why, data)?;
                }
                Ok(())
            }
            Opnd::Name { name, .. } => {
                let w = if data { self.b.data_why(why.to_string()) } else { self.b.why(why.to_string()) };
                if let Some(r) = self.reg_of(name) {
                    self.emit(Op::Unknown { dst: r, why: w });
                } else if let Some(p) = self.pred_of(name) {
                    let v = self.tmp();
                    self.emit(Op::Unknown { dst: v, why: w });
                    self.emit(Op::Setp { dst: p, cmp: Cmp::Ne, signed: false, w: Width::W64, a: Src::Reg(v), b: ZERO });
                } else {
                    return Err(self.undeclared(name, span));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn param_slot(&self, name: &str) -> Option<Slot> {
        self.frames.iter().rev().find_map(|f| f.slots.get(name).copied())
    }
}

/// The instruction's type modifiers, in order (`cvt.rn.f32.u32` -> `["f32", "u32"]`).
fn types(inst: &Inst) -> Vec<&str> {
    inst.parts[1..].iter().map(String::as_str).filter(|p| type_bits(p).is_some()).collect()
}

/// Picks the kernel `wanted` names, or the first.
fn choose<'m>(src: &str, m: &'m Module, wanted: Option<&str>) -> R<&'m Func> {
    let kernels: Vec<&Func> = m.funcs.iter().filter(|f| f.entry && f.body.is_some()).collect();
    match wanted.map(str::trim).filter(|k| !k.is_empty()) {
        Some(want) => {
            let names: Vec<&str> = kernels.iter().map(|f| f.name.as_str()).collect();
            params::find_kernel(want, &names).map(|i| kernels[i]).ok_or_else(|| {
                let shown: Vec<String> = kernels.iter().map(|f| params::shown(&f.name)).collect();
                InputError::at(
                    src,
                    Span { start: 0, end: 1 },
                    format!("no kernel `{want}` in this PTX (its kernels: {})", shown.join(", ")),
                )
            })
        }
        None => Ok(kernels[0]),
    }
}

/// The functions a kernel reaches through calls, itself first.
fn reachable<'m>(m: &'m Module, k: &'m Func) -> Vec<&'m Func> {
    let mut out = vec![k];
    let mut i = 0;
    while i < out.len() {
        for s in out[i].body.iter().flatten() {
            if let Stmt::Inst(inst) = s {
                if inst.parts[0] == "call" {
                    for (o, _) in &inst.ops {
                        if let Opnd::Name { name, .. } = o {
                            if let Some(f) = m.funcs.iter().find(|f| &f.name == name && f.body.is_some()) {
                                if !out.iter().any(|g| std::ptr::eq(*g, f)) {
                                    out.push(f);
                                }
                            }
                        }
                    }
                }
            }
        }
        i += 1;
    }
    out
}

/// Names an operand mentions.
fn names_in(o: &Opnd, out: &mut HashSet<String>) {
    match o {
        Opnd::Name { name, .. } | Opnd::NameOff(name, _) => {
            out.insert(name.clone());
        }
        Opnd::Addr { base: Some(b), .. } => {
            out.insert(b.clone());
        }
        Opnd::Vec(v) | Opnd::List(v) => v.iter().for_each(|x| names_in(x, out)),
        _ => {}
    }
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)) * a.max(1)
}

fn decl_bytes(d: &Decl, n: &syntax::Declared) -> u64 {
    d.elem_bytes() * n.elems.unwrap_or(1)
}

/// Lowers a parsed PTX module into a program: the kernel `opts` names, with the functions it calls.
pub(super) fn lower_module(src: &str, m: &Module, launch: Launch, vars: &Vars, opts: Options) -> R<Program> {
    let kernel = choose(src, m, opts.kernel)?;
    let funcs = reachable(m, kernel);
    let mut lw = Lw {
        b: Builder::new(),
        src,
        m,
        launch,
        guard: None,
        span: kernel.span,
        line: 0,
        frames: Vec::new(),
        kparams: Vec::new(),
        slot_regs: HashMap::new(),
        reg_bits: HashMap::new(),
        imm_f32: false,
        next_slot: 0,
        shared: HashMap::new(),
        locals: HashMap::new(),
        local_top: 0,
        globals: HashMap::new(),
        consts: HashMap::new(),
        sites: HashMap::new(),
        uncosted: BTreeSet::new(),
    };
    lw.b.set_kernel(params::shown(&kernel.name));
    let kernels: Vec<&Func> = m.funcs.iter().filter(|f| f.entry && f.body.is_some()).collect();
    lw.b.set_kernels(kernels.iter().map(|f| (f.name.clone(), params::shown(&f.name))).collect());
    if kernels.len() > 1 {
        let names: Vec<String> = kernels.iter().map(|f| params::shown(&f.name)).collect();
        lw.b.note(Note::new(
            "ptx-kernel",
            format!(
                "This PTX has {} kernels ({}); this is {}. Choose another with --kernel NAME or the kernel menu.",
                kernels.len(),
                names.join(", "),
                params::shown(&kernel.name)
            ),
            "the module's .entry directives",
        ));
    }

    // Shared memory: the static variables the kernel mentions, in declaration order (module scope, then each
    // function's), then the dynamic (`.extern`, unsized) ones, which all start at the end of the static ones.
    let mut mentioned = HashSet::new();
    for f in &funcs {
        for s in f.body.iter().flatten() {
            if let Stmt::Inst(i) = s {
                i.ops.iter().for_each(|(o, _)| names_in(o, &mut mentioned));
            }
        }
    }
    let mut shared_top = 0u64;
    let mut const_top = 0u64;
    let mut dynamic = Vec::new();
    let body_decls = funcs.iter().flat_map(|f| f.body.iter().flatten()).filter_map(|s| match s {
        Stmt::Decl(d) => Some(d),
        _ => None,
    });
    for d in m.vars.iter().chain(body_decls) {
        for n in &d.names {
            match d.space {
                Space::Shared if d.is_extern || n.elems == Some(0) => {
                    dynamic.push((d.align.unwrap_or(16), n.name.clone()))
                }
                Space::Shared if mentioned.contains(&n.name) => {
                    let off = align_up(shared_top, d.align.unwrap_or(d.elem_bytes()));
                    shared_top = off + decl_bytes(d, n);
                    lw.shared.insert(n.name.clone(), off);
                }
                Space::Const if !lw.consts.contains_key(&n.name) => {
                    let off = align_up(const_top, d.align.unwrap_or(d.elem_bytes()).max(4));
                    const_top = off + decl_bytes(d, n);
                    lw.consts.insert(n.name.clone(), off);
                }
                _ => {}
            }
        }
    }
    for (align, name) in dynamic {
        lw.shared.insert(name, align_up(shared_top, align.max(16)));
    }

    // Kernel parameters.
    let sm = m.target.unwrap_or(opts.sm);
    let bank = params::param_base(sm);
    let sig = params::signature(&kernel.name);
    let pointers = pointer_params(kernel);
    let mut offset = 0u64;
    let mut n_pointers = 0u64;
    let mut defaulted = Vec::new();
    #[cfg(feature = "data")]
    let mut arrays: Vec<ArrayDecl> = Vec::new();
    let threads = u64::from(launch.threads()) * launch.grid.volume();
    for (idx, d) in kernel.params.iter().enumerate() {
        let Some(n) = d.names.first() else { continue };
        let size = decl_bytes(d, n);
        offset = align_up(offset, d.align.unwrap_or(d.elem_bytes()));
        let short = n.name.rsplit_once("_param_").map(|(_, i)| format!("param_{i}"));
        let cbank = bank.map(|b| params::cbank_key(0, b + offset as u32));
        let given = [Some(n.name.clone()), short.clone(), cbank.clone()]
            .into_iter()
            .flatten()
            .find_map(|k| vars.get(&k).copied());
        let sig_kind = sig.as_ref().and_then(|s| s.params.iter().find(|p| p.index == idx)).map(|p| p.kind.clone());
        let (bits, _, float) = kind(&d.ty);
        let is_pointer = match &sig_kind {
            Some(k) => *k == params::Kind::Pointer,
            None => d.ptr || pointers.contains(&n.name),
        };
        let shown = short.clone().unwrap_or_else(|| n.name.clone());
        let sig_ty = sig.as_ref().and_then(|s| s.params.iter().find(|p| p.index == idx)).map(|p| format!("{}, ", p.ty));
        let sig_ty = sig_ty.unwrap_or_default();
        let value = if let Some(v) = given {
            // A value the parameter cannot hold (signed or unsigned) would be cut quietly.
            let wide = (1..8).contains(&size) && d.names[0].elems.is_none() && d.vec <= 1;
            let bits = 8 * size as u32;
            if wide && (v < -(1i128 << (bits - 1)) || v >= 1i128 << bits) {
                Err(format!("parameter {shown} is {bits} bits wide; --set {shown}={v} does not fit in it"))
            } else {
                Ok(v as u64)
            }
        } else if d.names[0].elems.is_some() || d.vec > 1 {
            Err(format!("parameter {shown} is an aggregate (a struct or array) with no value: give one with --set {shown}=VALUE"))
        } else if is_pointer {
            let v = params::POINTER_BASE + n_pointers * params::GLOBAL_STRIDE;
            defaulted.push(format!("{shown} ({sig_ty}pointer) = {v:#x}"));
            Ok(v)
        } else if float || matches!(sig_kind, Some(params::Kind::Other)) {
            Err(format!("parameter {shown} is floating point, with no default: give it with --set {shown}=VALUE"))
        } else if bits <= 32 || matches!(sig_kind, Some(params::Kind::Int { .. })) {
            let v = if bits < 64 { threads & ((1u64 << bits) - 1) } else { threads };
            defaulted.push(format!("{shown} ({sig_ty}integer) = {v}"));
            Ok(v)
        } else {
            Err(format!(
                "parameter {shown} is a 64-bit value that warpscope cannot tell a pointer from an integer (the kernel's name carries no types): give it with --set {shown}=VALUE"
            ))
        };
        if is_pointer {
            n_pointers += 1;
            // A pointer parameter is an array that data can be given for, under its short name (`param_0`),
            // of the type the kernel's name says it points to (none for an `extern "C"` kernel's).
            #[cfg(feature = "data")]
            if let Ok(base) = value {
                let ty = sig.as_ref().and_then(|s| s.params.iter().find(|p| p.index == idx)).map(|p| p.ty.as_str());
                let elem = ty.and_then(crate::program::memory::Elem::of_pointer);
                arrays.push(ArrayDecl { name: shown.clone(), base, elem: elem.unwrap_or(Elem::Other) });
            }
        }
        lw.kparams.push((n.name.clone(), KParam { size, value }));
        offset += size;
    }
    if !defaulted.is_empty() {
        lw.b.note(Note::new(
            "ptx-param-defaults",
            format!(
                "Kernel parameters given defaults (pointers get their own 256-byte-aligned bases, as cudaMalloc gives; integers the launch's thread count): {}. Give other values with --set, e.g. --set {}=VALUE.",
                defaulted.join("; "),
                defaulted[0].split(' ').next().unwrap_or("param_0")
            ),
            "docs/model.md#kernel-parameters",
        ));
    }
    // Module-scope global variables: each its own base after the pointer parameters'.
    let mut k = n_pointers;
    for d in &m.vars {
        if d.space == Space::Global {
            for n in &d.names {
                let base = params::POINTER_BASE + k * params::GLOBAL_STRIDE;
                lw.globals.insert(n.name.clone(), base);
                #[cfg(feature = "data")]
                arrays.push(ArrayDecl { name: n.name.clone(), base, elem: ptx_elem(&d.ty) });
                k += 1;
            }
        }
    }

    let mut frame = new_frame(&mut lw, kernel, None);
    for (i, (name, _)) in lw.kparams.iter().enumerate() {
        frame.slots.insert(name.clone(), Slot::Kernel(i));
    }
    lw.frames.push(frame);
    body(&mut lw, kernel, 0)?;
    lw.frames.pop();
    lw.b.note_uncosted("ptx-not-costed", "instructions", &lw.uncosted);
    #[allow(unused_mut)]
    let mut program = lw.b.finish();
    #[cfg(feature = "data")]
    {
        program.arrays = arrays;
    }
    Ok(program)
}

fn new_frame<'a>(lw: &mut Lw<'a>, f: &'a Func, ret: Option<Label>) -> Frame<'a> {
    let mut labels = HashMap::new();
    for s in f.body.iter().flatten() {
        if let Stmt::Label(n, _) = s {
            labels.insert(n.clone(), lw.b.label());
        }
    }
    Frame {
        func: f,
        regs: HashMap::new(),
        preds: HashMap::new(),
        ranges: Vec::new(),
        labels,
        slots: HashMap::new(),
        ret,
    }
}

/// Calls `each` with every name a function's instructions write: operands (inside addresses, vectors and lists
/// too) and guards.
#[cold]
fn each_name(f: &Func, each: &mut impl FnMut(&str)) {
    let mut stack: Vec<&Opnd> = Vec::new();
    for s in f.body.iter().flatten() {
        if let Stmt::Inst(i) = s {
            if let Some((g, _)) = &i.guard {
                each(g);
            }
            stack.extend(i.ops.iter().map(|(o, _)| o));
            while let Some(o) = stack.pop() {
                match o {
                    Opnd::Name { name, .. } | Opnd::NameOff(name, _) | Opnd::Addr { base: Some(name), .. } => {
                        each(name)
                    }
                    Opnd::Pair(a, b) => {
                        each(a);
                        each(b);
                    }
                    Opnd::Vec(v) | Opnd::List(v) => stack.extend(v),
                    Opnd::Addr { base: None, .. } | Opnd::Imm(_) | Opnd::Float(..) | Opnd::Sink => {}
                }
            }
        }
    }
}

/// Lowers the body of the function in the top frame.
fn body(lw: &mut Lw, f: &Func, depth: usize) -> R<()> {
    for s in f.body.iter().flatten() {
        match s {
            Stmt::Decl(d) => match d.space {
                Space::Reg => lw.declare_regs(d)?,
                Space::Param => {
                    for n in &d.names {
                        let id = lw.next_slot;
                        lw.next_slot += 1;
                        lw.frame_mut().slots.insert(n.name.clone(), Slot::Mem(id));
                    }
                }
                Space::Local => {
                    for n in &d.names {
                        if !lw.locals.contains_key(&n.name) {
                            let off = align_up(lw.local_top, d.align.unwrap_or(d.elem_bytes()));
                            lw.local_top = off + decl_bytes(d, n);
                            lw.locals.insert(n.name.clone(), off);
                        }
                    }
                }
                Space::Global => {
                    let base = params::POINTER_BASE + (lw.globals.len() as u64 + 64) * params::GLOBAL_STRIDE;
                    for n in &d.names {
                        lw.globals.entry(n.name.clone()).or_insert(base);
                    }
                }
                Space::Const => {
                    for n in &d.names {
                        let top = lw.consts.values().max().copied().unwrap_or(0) + 256;
                        let off = align_up(top, d.align.unwrap_or(d.elem_bytes()).max(4));
                        lw.consts.entry(n.name.clone()).or_insert(off);
                    }
                }
                Space::Shared => {}
            },
            Stmt::Label(n, _) => {
                let l = lw.frame().labels[n];
                lw.b.place(l);
            }
            Stmt::Inst(i) => {
                let mark = lw.b.temps_mark();
                lw.span = i.span;
                lw.line = i.line;
                lw.guard = match &i.guard {
                    None => None,
                    Some((p, neg)) => {
                        let o = Opnd::Name { name: p.clone(), neg: *neg };
                        Some(lw.pred_ref(&o, i.span)?)
                    }
                };
                inst(lw, i, depth)?;
                lw.guard = None;
                lw.b.release(mark);
            }
        }
    }
    Ok(())
}

fn op(i: &Inst, k: usize) -> (&Opnd, Span) {
    i.ops.get(k).map_or((&Opnd::Sink, i.span), |(o, s)| (o, *s))
}

fn need(lw: &Lw, i: &Inst, n: usize) -> R<()> {
    if i.ops.len() < n {
        return Err(lw.err(i.span, format!("{} takes {n} operands, found {}", i.opcode(), i.ops.len())));
    }
    Ok(())
}

fn inst(lw: &mut Lw, i: &Inst, depth: usize) -> R<()> {
    let root = i.parts[0].as_str();
    let tys = types(i);
    let ty = tys.last().copied().unwrap_or("b32");
    lw.imm_f32 = ty == "f32";
    if kind(ty).0 > 64 && !matches!(root, "ld" | "ldu" | "st" | "mov") {
        // The machine's registers are 64 bits: a 128-bit result is not guessed at.
        let why = format!("the 128-bit result of {} at line {}, which warpscope does not model", i.opcode(), i.line);
        return match i.ops.first() {
            Some((d, ds)) => lw.set_unknown(d, *ds, &why),
            None => Ok(()),
        };
    }
    if i.parts.iter().any(|p| p == "u16x2" || p == "s16x2") {
        // Two 16-bit lanes in one register: not modelled, and not to be taken as one 32-bit value.
        let why =
            format!("the packed 16x2 result of {} at line {}, which warpscope does not model", i.opcode(), i.line);
        return match i.ops.first() {
            Some((d, ds)) => lw.set_unknown(d, *ds, &why),
            None => Ok(()),
        };
    }
    let (bits, signed, float) = kind(ty);
    let w = width(bits);
    let why = |what: &str| format!("{what} at line {}", i.line);
    match root {
        "mov" => {
            need(lw, i, 2)?;
            let (d, ds) = op(i, 0);
            let (a, asp) = op(i, 1);
            match (d, a) {
                (Opnd::Vec(parts), _) => {
                    // Unpack: the low part first.
                    let v = lw.val(a, asp)?;
                    let each = bits / parts.len().max(1) as u32;
                    for (k, p) in parts.iter().enumerate() {
                        let s = lw.bin(BinOp::ShrU, Width::W64, v, Src::Imm(u64::from(each) * k as u64));
                        lw.set(p, ds, s, each)?;
                    }
                }
                (_, Opnd::Vec(parts)) => {
                    let each = bits / parts.len().max(1) as u32;
                    let mut acc = ZERO;
                    for (k, p) in parts.iter().enumerate() {
                        let v = lw.val(p, asp)?;
                        let v = lw.conv(v, each, false);
                        let v = lw.bin(BinOp::Shl, Width::W64, v, Src::Imm(u64::from(each) * k as u64));
                        acc = lw.bin(BinOp::Or, Width::W64, acc, v);
                    }
                    lw.set(d, ds, acc, bits)?;
                }
                _ if ty == "pred" => {
                    let p = lw.pred_ref(a, asp)?;
                    let v = lw.tmp();
                    lw.emit(Op::PredToReg { dst: v, p });
                    lw.set(d, ds, Src::Reg(v), 1)?;
                }
                _ => {
                    let v = lw.val(a, asp)?;
                    lw.set(d, ds, v, bits)?;
                }
            }
        }
        "add" | "sub" | "mul" | "mad" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl" | "shr"
        | "mul24" | "mad24" | "sad" => arith(lw, i, root, ty)?,
        "neg" | "abs" | "not" | "cnot" | "popc" | "clz" | "brev" | "bfind" => unary(lw, i, root, ty)?,
        "setp" | "set" => setp(lw, i, root)?,
        "selp" => {
            need(lw, i, 4)?;
            let a = lw.val(op(i, 1).0, op(i, 1).1)?;
            let b = lw.val(op(i, 2).0, op(i, 2).1)?;
            let p = lw.pred_ref(op(i, 3).0, op(i, 3).1)?;
            let v = lw.sel(p, a, b);
            lw.set(op(i, 0).0, op(i, 0).1, v, bits)?;
        }
        "slct" => {
            need(lw, i, 4)?;
            let cty = tys.last().copied().unwrap_or("s32");
            let dty = tys.first().copied().unwrap_or("b32");
            if kind(cty).2 {
                return lw.set_unknown(op(i, 0).0, op(i, 0).1, &why("slct on a floating-point selector"));
            }
            let a = lw.val(op(i, 1).0, op(i, 1).1)?;
            let b = lw.val(op(i, 2).0, op(i, 2).1)?;
            let c = lw.val(op(i, 3).0, op(i, 3).1)?;
            let p = lw.setp(Cmp::Ge, true, Width::W32, c, ZERO);
            let v = lw.sel(PredRef::of(p), a, b);
            lw.set(op(i, 0).0, op(i, 0).1, v, kind(dty).0)?;
        }
        "cvt" => cvt(lw, i, &tys)?,
        "cvta" => {
            need(lw, i, 2)?;
            let a = lw.val(op(i, 1).0, op(i, 1).1)?;
            let to = i.has("to");
            let base = if i.has("shared") || i.parts.iter().any(|p| p.starts_with("shared::")) {
                Some(DEFAULT_SHARED_WINDOW)
            } else if i.has("local") {
                Some(DEFAULT_LOCAL_WINDOW)
            } else if i.has("global") {
                Some(0)
            } else {
                None
            };
            let v = match base {
                Some(b) => lw.bin(if to { BinOp::Sub } else { BinOp::Add }, Width::W64, a, Src::Imm(b)),
                None => lw.unknown(why("a constant or parameter address from cvta")),
            };
            lw.set(op(i, 0).0, op(i, 0).1, v, bits)?;
        }
        "isspacep" => {
            need(lw, i, 2)?;
            let a = lw.val(op(i, 1).0, op(i, 1).1)?;
            let in_window = |lw: &mut Lw, base: u64| {
                let off = lw.bin(BinOp::Sub, Width::W64, a, Src::Imm(base));
                lw.setp(Cmp::Lt, false, Width::W64, off, Src::Imm(WINDOW_BYTES))
            };
            let p = if i.parts.iter().any(|p| p == "shared" || p.starts_with("shared::")) {
                in_window(lw, DEFAULT_SHARED_WINDOW)
            } else if i.has("local") {
                in_window(lw, DEFAULT_LOCAL_WINDOW)
            } else if i.has("global") {
                let s = in_window(lw, DEFAULT_SHARED_WINDOW);
                let l = in_window(lw, DEFAULT_LOCAL_WINDOW);
                let q = lw.b.pred();
                lw.emit(Op::PredLogic { dst: q, op: PredOp::Or, a: PredRef::of(s), b: PredRef::of(l) });
                let r = lw.b.pred();
                lw.emit(Op::PredLogic { dst: r, op: PredOp::And, a: PredRef::not(q), b: PredRef::TRUE });
                r
            } else {
                return lw.set_unknown(op(i, 0).0, op(i, 0).1, &why("isspacep on a constant or parameter space"));
            };
            let v = lw.tmp();
            lw.emit(Op::PredToReg { dst: v, p: PredRef::of(p) });
            lw.set(op(i, 0).0, op(i, 0).1, Src::Reg(v), 1)?;
        }
        "bfe" | "bfi" | "prmt" | "lop3" | "shf" => bits_op(lw, i, root, ty)?,
        "ld" | "ldu" | "st" => memory(lw, i, root)?,
        "atom" | "red" => atomic(lw, i, root)?,
        "bra" => {
            need(lw, i, 1)?;
            let (t, ts) = op(i, 0);
            let Opnd::Name { name, .. } = t else { return Err(lw.err(ts, "bra needs a label")) };
            let l = *lw
                .frame()
                .labels
                .get(name)
                .ok_or_else(|| lw.err(ts, format!("no label `{name}` in this function")))?;
            lw.b.bra(l, lw.guard, i.span);
        }
        "ret" => match lw.frame().ret {
            Some(l) => lw.b.bra(l, lw.guard, i.span),
            None => lw.emit(Op::Exit),
        },
        "exit" => lw.emit(Op::Exit),
        "call" => call(lw, i, depth)?,
        "bar" | "barrier" => {
            if i.has("warp") || i.has("cluster") || i.has("arrive") && root == "barrier" && i.has("cluster") {
                return Ok(());
            }
            if i.has("arrive") {
                return Err(lw.err(i.op_span, format!("{}: a barrier that does not wait (producer and consumer warps) is not modelled; warpscope runs `bar.sync`", i.opcode())));
            }
            if let Some((o, s)) = i.ops.get(if i.has("red") { 2 } else { 1 }).filter(|_| !i.has("red")) {
                let n = lw.val(o, *s)?;
                if n != Src::Imm(u64::from(lw.launch.threads())) {
                    return Err(lw.err(*s, format!("{}: a barrier for part of the block (a thread count) is not modelled; warpscope runs barriers for the whole block", i.opcode())));
                }
            }
            lw.emit(Op::Bar);
            if i.has("red") {
                lw.set_unknown(op(i, 0).0, op(i, 0).1, &why("the block-wide reduction of bar.red"))?;
            }
        }
        "membar" | "fence" | "prefetch" | "prefetchu" | "nanosleep" | "pmevent" | "griddepcontrol" | "discard"
        | "applypriority" => {}
        "shfl" => {
            need(lw, i, 4)?;
            let mode = if i.has("up") {
                ShflMode::Up
            } else if i.has("down") {
                ShflMode::Down
            } else if i.has("bfly") {
                ShflMode::Bfly
            } else if i.has("idx") {
                ShflMode::Idx
            } else {
                return Err(lw.err(i.op_span, "shfl needs a mode: .up, .down, .bfly or .idx"));
            };
            let a = lw.val(op(i, 1).0, op(i, 1).1)?;
            let b = lw.val(op(i, 2).0, op(i, 2).1)?;
            let c = lw.val(op(i, 3).0, op(i, 3).1)?;
            let (d, ds) = op(i, 0);
            let (dname, pdst) = match d {
                Opnd::Pair(r, p) => {
                    let pp = lw.pred_of(p).ok_or_else(|| lw.err(ds, format!("`{p}` is not a predicate")))?;
                    (Opnd::Name { name: r.clone(), neg: false }, Some(pp))
                }
                other => (other.clone(), None),
            };
            let inactive = lw.b.why(why("shfl.sync read a lane that is not running"));
            let t = lw.tmp();
            lw.emit(Op::Shfl { mode, dst: t, pdst, a, b, c, inactive });
            lw.set(&dname, ds, Src::Reg(t), 32)?;
        }
        "vote" => {
            need(lw, i, 2)?;
            let p = lw.pred_ref(op(i, 1).0, op(i, 1).1)?;
            let (d, ds) = op(i, 0);
            if i.has("ballot") {
                let t = lw.tmp();
                lw.emit(Op::Vote { dst: Some(t), pdst: None, all: false, p });
                lw.set(d, ds, Src::Reg(t), 32)?;
            } else {
                let q = lw.b.pred();
                if i.has("uni") {
                    let n = lw.b.pred();
                    lw.emit(Op::Vote { dst: None, pdst: Some(q), all: true, p });
                    lw.emit(Op::Vote { dst: None, pdst: Some(n), all: true, p: p.negated() });
                    let u = lw.b.pred();
                    lw.emit(Op::PredLogic { dst: u, op: PredOp::Or, a: PredRef::of(q), b: PredRef::of(n) });
                    let v = lw.tmp();
                    lw.emit(Op::PredToReg { dst: v, p: PredRef::of(u) });
                    lw.set(d, ds, Src::Reg(v), 1)?;
                } else {
                    lw.emit(Op::Vote { dst: None, pdst: Some(q), all: i.has("all"), p });
                    let v = lw.tmp();
                    lw.emit(Op::PredToReg { dst: v, p: PredRef::of(q) });
                    lw.set(d, ds, Src::Reg(v), 1)?;
                }
            }
        }
        "activemask" => {
            need(lw, i, 1)?;
            let t = lw.tmp();
            lw.emit(Op::Vote { dst: Some(t), pdst: None, all: false, p: PredRef::TRUE });
            lw.set(op(i, 0).0, op(i, 0).1, Src::Reg(t), 32)?;
        }
        "ldmatrix" | "stmatrix" => matrix(lw, i, root)?,
        "cp" if i.parts.get(1).is_some_and(|p| p == "async") && !i.has("bulk") => cp_async(lw, i)?,
        "cp" => {
            let what = format!(
                "{}: a bulk or tensor (TMA) copy moves a whole box that a tensor map made on the host describes, so warpscope does not count it inside a kernel; cost the box with `warpscope tma --box WxH --elem-bytes N --pitch BYTES --swizzle MODE`",
                i.opcode()
            );
            let ctx = lw.b.ctx(what);
            lw.emit(Op::Trap { ctx });
        }
        // wgmma's fences and group waits order the tensor cores' work and move nothing.
        "wgmma" if i.has("fence") || i.has("commit_group") || i.has("wait_group") => {}
        // wgmma.mma_async computes from registers and from tiles in shared memory that its descriptors name:
        // its results are data; the tiles it reads are listed as not counted.
        "wgmma" => {
            lw.uncosted.insert((i.line, i.opcode()));
            if let Some((d, ds)) = i.ops.first() {
                lw.set_data(d, *ds, &format!("the result of {} at line {}", i.opcode(), i.line))?;
            }
        }
        // An mbarrier is a 64-bit word in shared memory that its operations update atomically (PTX ISA,
        // "Parallel Synchronization and Communication Instructions: mbarrier"): listed as not counted, like
        // the atomics; what they return (a state token, whether a phase completed) is data.
        "mbarrier" => {
            lw.uncosted.insert((i.line, i.opcode()));
            if let Some((d, ds)) = i
                .ops
                .first()
                .filter(|_| !(i.has("init") || i.has("inval") || i.has("expect_tx") || i.has("complete_tx")))
            {
                if !matches!(d, Opnd::Name { name, .. } if &**name == "_") {
                    lw.set_data(d, *ds, &format!("the result of {} at line {}", i.opcode(), i.line))?;
                }
            }
        }
        "tex" | "tld4" | "suld" | "sust" | "sured" | "suq" | "txq" => {
            let what = format!(
                "{} is a texture or surface access, which warpscope does not model: how the texture path splits a warp's request and how its block-linear layouts place data are not published (docs/model.md#the-read-only-path), so warpscope refuses it rather than guess",
                i.opcode()
            );
            let ctx = lw.b.ctx(what);
            lw.emit(Op::Trap { ctx });
        }
        "wmma" | "multimem" | "tensormap" | "tcgen05" => {
            let what = format!(
                "{}: warpscope does not model this instruction yet; it moves memory, so its cost cannot be left out",
                i.opcode()
            );
            let ctx = lw.b.ctx(what);
            lw.emit(Op::Trap { ctx });
        }
        "trap" | "brkpt" => {
            let ctx = lw.b.ctx(format!("the kernel executes `{}` at line {} (it aborts there)", i.opcode(), i.line));
            lw.emit(Op::Trap { ctx });
        }
        "brx" => {
            let ctx = lw.b.ctx(format!("{}: indirect branches are not followed", i.opcode()));
            lw.emit(Op::Trap { ctx });
        }
        _ if !PTX_OPCODES.contains(&root) => {
            let hint = nearest(root).map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default();
            return Err(lw.err(i.op_span, format!("`{root}` is not a PTX instruction{hint}")));
        }
        _ => {
            // Floating point and anything else: the destination is unknown for a named reason.
            let what = if float {
                format!("the floating-point result of {}", i.opcode())
            } else {
                format!("the result of {}, which warpscope does not model,", i.opcode())
            };
            if let Some((d, ds)) = i.ops.first() {
                lw.set_unknown(d, *ds, &why(&what))?;
            }
        }
    }
    let _ = (w, signed);
    Ok(())
}

/// `call (rets), f, (args);`: inlines `f`, binding its parameters to the caller's parameter storage.
fn call(lw: &mut Lw, i: &Inst, depth: usize) -> R<()> {
    let mut rets: &[Opnd] = &[];
    let mut args: &[Opnd] = &[];
    let mut target = None;
    for (o, s) in &i.ops {
        match o {
            Opnd::List(v) if target.is_none() => rets = v,
            Opnd::List(v) => args = v,
            Opnd::Name { name, .. } if target.is_none() => target = Some((name.clone(), *s)),
            _ => {}
        }
    }
    let Some((fname, fspan)) = target else { return Err(lw.err(i.span, "call needs a function name")) };
    let m = lw.m;
    let Some(f) = m.funcs.iter().find(|f| f.name == fname) else {
        return Err(lw.err(fspan, format!("no function `{fname}` in this PTX (indirect calls are not followed)")));
    };
    let ret_slots: Vec<Option<Slot>> =
        rets.iter().map(|o| if let Opnd::Name { name, .. } = o { lw.param_slot(name) } else { None }).collect();
    let Some(_) = &f.body else {
        // A function with no body here (`vprintf`, `__assertfail`): its results are unknown.
        for s in ret_slots.into_iter().flatten() {
            if let Slot::Mem(id) = s {
                let why = lw.b.why(format!("the result of {fname}, which has no body in this PTX"));
                let r = lw.slot_regs.entry((id, 0)).or_insert_with(|| (lw.b.reg(), 8)).0;
                lw.emit(Op::Unknown { dst: r, why });
            }
        }
        return Ok(());
    };
    if depth >= MAX_CALL_DEPTH || lw.frames.iter().any(|fr| std::ptr::eq(fr.func, f)) {
        return Err(lw.err(
            fspan,
            format!("{fname} calls itself or nests calls more than {MAX_CALL_DEPTH} deep: recursion is not followed"),
        ));
    }
    let ret = lw.b.label();
    let mut frame = new_frame(lw, f, Some(ret));
    for (k, d) in f.params.iter().enumerate() {
        let Some(n) = d.names.first() else { continue };
        let slot = match args.get(k) {
            Some(Opnd::Name { name, .. }) => match lw.param_slot(name) {
                Some(s) => s,
                None => {
                    // A register argument (`.reg` parameters): copied into fresh storage.
                    let v = lw.val(&Opnd::Name { name: name.clone(), neg: false }, i.span)?;
                    let id = lw.next_slot;
                    lw.next_slot += 1;
                    let r = lw.slot_regs.entry((id, 0)).or_insert_with(|| (lw.b.reg(), 8)).0;
                    lw.emit(Op::Mov { dst: r, a: v });
                    Slot::Mem(id)
                }
            },
            _ => {
                return Err(lw.err(
                    i.span,
                    format!("{fname} takes {} parameters; this call passes {}", f.params.len(), args.len()),
                ))
            }
        };
        if d.space == Space::Reg {
            // A `.reg` parameter is a register of the callee.
            frame.slots.insert(n.name.clone(), slot);
        } else {
            frame.slots.insert(n.name.clone(), slot);
        }
    }
    for (k, d) in f.rets.iter().enumerate() {
        if let (Some(n), Some(Some(s))) = (d.names.first(), ret_slots.get(k)) {
            frame.slots.insert(n.name.clone(), *s);
        }
    }
    // `.reg` parameters become registers holding the argument.
    let reg_params: Vec<(String, Slot)> = f
        .params
        .iter()
        .filter(|d| d.space == Space::Reg)
        .filter_map(|d| d.names.first())
        .filter_map(|n| frame.slots.get(&n.name).map(|s| (n.name.clone(), *s)))
        .collect();
    lw.frames.push(frame);
    for (name, slot) in reg_params {
        let r = lw.b.reg();
        lw.frame_mut().regs.insert(name, r);
        if let Slot::Mem(id) = slot {
            if let Some(&(src, _)) = lw.slot_regs.get(&(id, 0)) {
                lw.emit(Op::Mov { dst: r, a: Src::Reg(src) });
            }
        }
    }
    let guard = lw.guard;
    if let Some(g) = guard {
        // A guarded call: lanes whose guard fails skip the body.
        let skip = ret;
        lw.b.bra(skip, Some(g.negated()), i.span);
    }
    lw.guard = None;
    body(lw, f, depth + 1)?;
    lw.b.place(ret);
    lw.frames.pop();
    lw.guard = guard;
    Ok(())
}
