//! The SASS syntax tree lowered into the program every language shares (see `crate::program`): each SASS
//! instruction becomes a few typed operations. SASS registers are 32 bits: each R, UR and P gets a register or
//! predicate of its own, holding its value zero-extended; 64-bit values (.WIDE results, [R2.64] addresses,
//! constant pairs) are formed from pairs. Integer semantics, LEA, predicates, calls (inlined), branches and
//! the memory instructions, with kernel parameters' defaults and the launch's constant-bank words.
//!
//! May import: `syntax`, `crate::program`, `crate::model::access` (and `model::note` for its notes),
//! `lang::params`, `lang::expr::Vars`. The one exception is LEA.HI's `Plg`, which needs the shared window's
//! default generic address and size from `crate::model::cost`.

use super::syntax::{Func, Line, Listing, Operand};
use super::Options;
use crate::lang::expr::Vars;
use crate::lang::params::{self, cbank_key};
use crate::lang::{InputError, Span};
use crate::model::access::DEFAULT_SHARED_WINDOW;
use crate::model::access::{Base, Instr};
use crate::model::note::Note;
use crate::program::launch::Launch;
use crate::program::memory::Elem;
use crate::program::{
    BinOp, Builder, Cmp, Label, Op, Pred, PredOp, PredRef, Program, Reg, ShflMode, Site, SourceLine, Special, Src,
    UnOp, Width,
};
use std::collections::HashMap;

/// The initial stack pointer the defaults put in `c[0x0][0x20]` and `c[0x0][0x28]`: a local-window offset.
pub const DEFAULT_STACK_TOP: u32 = 0x00ff_fc00;

// What the instructions that are not memory accesses compute: `execute.rs`.
mod execute;

use execute::execute;

/// A 32-bit word from `--set`: the word's own value, or the high half of the word below when that was given a
/// 64-bit value (so `c[0x0][0x160]=0x7000_0000_0000` sets 0x160 and 0x164, and `R4=...` sets R4 and R5).
fn wide_var(vars: &Vars, key: &str, below: Option<String>) -> Option<u32> {
    if let Some(&v) = vars.get(key) {
        return Some(v as u32);
    }
    let v = *vars.get(&below?)?;
    (v > i128::from(u32::MAX)).then_some((v >> 32) as u32)
}

/// The IEEE half-precision bits of a number (round to nearest), for the `HFMA2.MMA Rd, -RZ, RZ, a, b` idiom
/// nvcc uses to put a small constant in a register.
fn f16_bits(x: f64) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = x.abs();
    if a.is_nan() {
        return 0x7e00;
    }
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < 6.103515625e-5 {
        // Subnormal: a multiple of 2^-24.
        return sign | (a / 5.960464477539063e-8).round() as u16;
    }
    let e = a.log2().floor() as i32;
    let m = (a / 2f64.powi(e) - 1.0) * 1024.0;
    let (mut e, mut m) = (e, m.round() as u32);
    if m == 1024 {
        m = 0;
        e += 1;
    }
    sign | (((e + 15) as u16) << 10) | m as u16
}

type R<T> = Result<T, InputError>;

/// Atomics and reductions: costed as memory instructions (docs/model.md#atomics); what they return is data.
const ATOMIC_OPS: [&str; 5] = ["ATOM", "ATOMG", "ATOMS", "RED", "REDG"];

/// The old value an atomic returns, and the outcome predicate of a compare-and-swap, are data.
fn atomic_results(lw: &mut Lower, l: &Line) {
    if let Some((Operand::Reg { idx: Some(i), .. }, _)) = l.ops.iter().find(|(o, _)| matches!(o, Operand::Reg { .. })) {
        if !matches!(l.ops.first(), Some((Operand::Mem { .. }, _))) {
            let w = lw.b.data_why(format!("R{i} holds the old value an atomic returned at line {}", l.no));
            let d = lw.reg(*i);
            lw.emit(Op::Unknown { dst: d, why: w });
        }
    }
    for (o, _) in &l.ops {
        if let Operand::Pred { idx: Some(_), .. } = o {
            let v = lw.b.data_why(format!("an atomic's outcome at line {}", l.no));
            let t = lw.tmp();
            lw.emit(Op::Unknown { dst: t, why: v });
            lw.set(o, Src::Reg(t));
        }
    }
}

const MEMORY_OPS: [&str; 11] = ["LDG", "STG", "LD", "ST", "LDS", "STS", "LDL", "STL", "LDSM", "STSM", "LDGSTS"];
/// Instructions that change nothing warpscope follows: scheduling, barriers for convergence (the machine
/// reconverges at post-dominators by itself), fences, cache control, and the waits and barrier arrivals of
/// `cp.async` (LDGDEPBAR commits a group, DEPBAR waits for it, ARRIVES.LDGSTSBAR signals an mbarrier): the copies
/// are costed where their LDGSTS is issued.
const NO_EFFECT: [&str; 19] = [
    "NOP",
    "BSSY",
    "BSYNC",
    "SSY",
    "PBK",
    "PCNT",
    "WARPSYNC",
    "DEPBAR",
    "MEMBAR",
    "ERRBAR",
    "CCTL",
    "YIELD",
    "NANOSLEEP",
    "BMOV",
    "ENDCOLLECTIVE",
    "FENCE",
    "CCTLL",
    "LDGDEPBAR",
    "ARRIVES",
];

struct Lower<'a> {
    b: Builder,
    src: &'a str,
    vars: &'a Vars,
    launch: Launch,
    regs: HashMap<u32, Reg>,
    uregs: HashMap<u32, Reg>,
    preds: HashMap<u32, Pred>,
    upreds: HashMap<u32, Pred>,
    /// The carry flag of the `.CC` / `.X` chains (0 or 1).
    cc: Reg,
    /// The low half of the address the last LEA.LO formed (for LEA.HI's Plg).
    lea_lo: Reg,
    guard: Option<PredRef>,
    span: Span,
    no: usize,
    /// The bank-0 words holding the shared window's generic address on this architecture (low, high).
    window_words: Option<(u32, u32)>,
    /// Memory instructions warpscope lists but does not count (atomics, reductions, calls to vprintf):
    /// (line, text).
    uncosted: Vec<(usize, String)>,
    /// The chosen kernel's parameters and their defaults.
    params: Vec<(params::Param, Option<u64>)>,
    /// Where they start in constant bank 0.
    param_base: Option<u32>,
    /// Why some parameters have no layout or default (added to their error).
    param_note: String,
    /// Memory sites by listing line (a subroutine inlined twice keeps one site).
    sites: HashMap<usize, crate::program::SiteId>,
    /// The line being lowered: its index in the listing, its text and its CUDA source line.
    at: (usize, String, Option<SourceLine>),
    /// Constant-operand sites by (listing line, offset): `c[0x3][imm]` operands (docs/model.md#constant-memory: one pass each).
    const_sites: HashMap<(usize, u32), crate::program::SiteId>,
}

/// A 32-bit zero constant.
const ZERO: Src = Src::Imm(0);

impl Lower<'_> {
    fn err(&self, span: Span, msg: impl Into<String>) -> InputError {
        InputError::at(self.src, span, msg)
    }

    fn emit(&mut self, op: Op) {
        self.b.emit(op, self.guard, self.span);
    }

    fn tmp(&mut self) -> Reg {
        self.b.temp()
    }

    fn reg(&mut self, i: u32) -> Reg {
        if let Some(&r) = self.regs.get(&i) {
            return r;
        }
        let r = self.b.reg();
        self.regs.insert(i, r);
        r
    }

    fn ureg(&mut self, i: u32) -> Reg {
        if let Some(&r) = self.uregs.get(&i) {
            return r;
        }
        let r = self.b.reg();
        self.uregs.insert(i, r);
        r
    }

    fn pred_reg(&mut self, i: u32, uniform: bool) -> Pred {
        let map = if uniform { &mut self.upreds } else { &mut self.preds };
        if let Some(&p) = map.get(&i) {
            return p;
        }
        let p = self.b.pred();
        map.insert(i, p);
        p
    }

    fn bin(&mut self, op: BinOp, w: Width, a: Src, b: Src) -> Src {
        self.b.bin(op, w, a, b, self.guard, self.span)
    }

    fn zext(&mut self, a: Src) -> Src {
        self.b.conv(a, 32, false, self.guard, self.span)
    }

    fn sext(&mut self, a: Src) -> Src {
        self.b.conv(a, 32, true, self.guard, self.span)
    }

    fn unknown(&mut self, why: String) -> Src {
        self.b.unknown(why, self.guard, self.span)
    }

    /// A constant-bank word: `--set`, the launch defaults, or unknown.
    fn cbank(&mut self, bank: u32, off: u32) -> Src {
        let key = cbank_key(bank, off);
        if let Some(v) = wide_var(self.vars, &key, off.checked_sub(4).map(|p| cbank_key(bank, p))) {
            return Src::Imm(u64::from(v));
        }
        if bank == 0 {
            if let Some(v) = self.param_word(off) {
                return v;
            }
        }
        let l = &self.launch;
        // The shared window's generic base (cvta.shared), where this architecture keeps it in bank 0.
        if let (0, Some((lo, hi))) = (bank, self.window_words) {
            let window = vars_window(self.vars);
            if off == lo {
                return Src::Imm(window & 0xFFFF_FFFF);
            }
            if off == hi {
                return Src::Imm(window >> 32);
            }
        }
        let v = match (bank, off) {
            (0, 0x0) => Some(l.block.x),
            (0, 0x4) => Some(l.block.y),
            (0, 0x8) => Some(l.block.z),
            (0, 0xc) => Some(l.grid.x),
            (0, 0x10) => Some(l.grid.y),
            (0, 0x14) => Some(l.grid.z),
            (0, 0x20) | (0, 0x28) => Some(DEFAULT_STACK_TOP),
            _ => None,
        };
        match v {
            Some(v) => Src::Imm(u64::from(v)),
            // Bank 2 holds what ptxas itself computed (the offsets of a kernel's second and later shared
            // arrays, tables): in the cubin, not in any listing.
            None if bank == 2 => self.unknown(format!(
                "the constant {key}, which ptxas placed in the cubin's .nv.constant2 section (often a shared array's offset); a listing does not show it: read the word at offset {off:#x} of that section (`cuobjdump -elf KERNEL.cubin`) and give it with --set {key}=VALUE"
            )),
            // Bank 0 below the parameters: what the driver fills in for the launch.
            None if bank == 0 && self.param_base.is_some_and(|b| off < b) => self.unknown(format!(
                "the constant {key}, a word the driver sets for the launch (below the kernel's parameters) that warpscope does not model; give it with --set {key}=VALUE"
            )),
            None => self.unknown(format!("the constant {key} has no value (give it one with --set {key}=VALUE)")),
        }
    }

    /// An immediate operand `c[0x3][off]` (the bank of `__constant__` variables): one pass of the constant cache
    /// for the warp, costed as a constant load at one address (docs/model.md#constant-memory).
    fn constant_operand(&mut self, off: u32, span: Span) -> R<()> {
        let (k, text, source) = self.at.clone();
        let site = match self.const_sites.get(&(k, off)) {
            Some(&s) => s,
            None => {
                let n = self.const_sites.keys().filter(|(j, _)| *j == k).count();
                let instr = Instr::parse("LDC").map_err(|e| self.err(span, e.message))?;
                let access = self.src[span.start..span.end.min(self.src.len())].trim().to_string();
                let s = self.b.site((k, 1 + n), Site { line: self.no, text, access, instr, notes: Vec::new(), source });
                self.const_sites.insert((k, off), s);
                s
            }
        };
        let addr = self.tmp();
        self.emit(Op::Mov { dst: addr, a: Src::Imm(u64::from(off)) });
        let ctx = self.b.ctx("the offset of this constant operand: ".to_string());
        self.emit(Op::Mem { site, addr, plg: None, src: None, ctx, data: None });
        Ok(())
    }

    /// The 32-bit word at `off` of bank 0 when it holds kernel parameters: their defaults, or unknown naming the
    /// parameter. `None` below the parameters.
    fn param_word(&mut self, off: u32) -> Option<Src> {
        let base = self.param_base?;
        let rel = off.checked_sub(base)?;
        let key = cbank_key(0, off);
        let mut word = 0u64;
        let mut missing = None;
        let mut any = false;
        for (p, v) in &self.params {
            let (lo, hi) = (p.offset, p.offset + p.size);
            if hi <= rel || lo >= rel + 4 {
                continue;
            }
            any = true;
            match v {
                Some(v) => {
                    for byte in rel.max(lo)..(rel + 4).min(hi) {
                        let b = (v >> (8 * (byte - lo))) & 0xff;
                        word |= b << (8 * (byte - rel));
                    }
                }
                None => missing = Some(p.clone()),
            }
        }
        if let Some(p) = missing {
            return Some(self.unknown(format!(
                "the constant {key} holds parameter {} (a `{}`), which has no default (give it one with --set {}=VALUE)",
                p.index,
                p.ty,
                cbank_key(0, base + p.offset)
            )));
        }
        if any {
            return Some(Src::Imm(word));
        }
        let past = self.params.last().is_none_or(|(p, _)| rel >= p.offset + p.size);
        if past && !self.param_note.is_empty() {
            let note = self.param_note.clone();
            return Some(self.unknown(format!(
                "the constant {key} is a kernel parameter with no value: {note} (give it one with --set {key}=VALUE)"
            )));
        }
        None
    }

    fn special(&mut self, name: &str) -> Src {
        let which = match name {
            "SR_TID.X" => Some(Special::Tid(0)),
            "SR_TID.Y" => Some(Special::Tid(1)),
            "SR_TID.Z" => Some(Special::Tid(2)),
            "SR_CTAID.X" => Some(Special::Ctaid(0)),
            "SR_CTAID.Y" => Some(Special::Ctaid(1)),
            "SR_CTAID.Z" => Some(Special::Ctaid(2)),
            "SR_NTID.X" => Some(Special::Ntid(0)),
            "SR_NTID.Y" => Some(Special::Ntid(1)),
            "SR_NTID.Z" => Some(Special::Ntid(2)),
            "SR_NCTAID.X" => Some(Special::Nctaid(0)),
            "SR_NCTAID.Y" => Some(Special::Nctaid(1)),
            "SR_NCTAID.Z" => Some(Special::Nctaid(2)),
            "SR_LANEID" => Some(Special::Lane),
            "SR_WARPID" | "SR_VIRTID" => Some(Special::Warp),
            // The block's rank in its cluster (sm_90 on): 0 for the one-block clusters of a plain launch.
            "SR_CGACTAID" | "SR_CLUSTERCTARANK" => return ZERO,
            // The shared window's generic address (sm_90 forms generic shared pointers from it).
            "SR_SWINHI" => return Src::Imm(vars_window(self.vars) >> 32),
            "SR_SWINLO" => return Src::Imm(vars_window(self.vars) & 0xFFFF_FFFF),
            "SR_LTMASK" | "SR_LEMASK" | "SR_GTMASK" | "SR_GEMASK" | "SR_EQMASK" => {
                let d = self.tmp();
                self.emit(Op::Special { dst: d, which: Special::Lane });
                let bit = self.bin(BinOp::Shl, Width::W32, Src::Imm(1), Src::Reg(d));
                let lt = self.bin(BinOp::Sub, Width::W32, bit, Src::Imm(1));
                return match name {
                    "SR_EQMASK" => bit,
                    "SR_LTMASK" => lt,
                    "SR_LEMASK" => self.bin(BinOp::Or, Width::W32, lt, bit),
                    "SR_GEMASK" => self.bin(BinOp::Xor, Width::W32, lt, Src::Imm(0xFFFF_FFFF)),
                    _ => {
                        let le = self.bin(BinOp::Or, Width::W32, lt, bit);
                        self.bin(BinOp::Xor, Width::W32, le, Src::Imm(0xFFFF_FFFF))
                    }
                };
            }
            "SRZ" => return ZERO,
            _ => None,
        };
        match which {
            Some(which) => {
                let d = self.tmp();
                self.emit(Op::Special { dst: d, which });
                Src::Reg(d)
            }
            None => self.unknown(format!("the special register {name} is not modelled")),
        }
    }

    fn pred_ref(&mut self, o: &Operand) -> Option<PredRef> {
        match o {
            Operand::Pred { idx: None, not, .. } => Some(PredRef { idx: None, neg: *not }),
            Operand::Pred { idx: Some(i), not, uniform } => {
                let p = self.pred_reg(*i, *uniform);
                Some(PredRef { idx: Some(p), neg: *not })
            }
            _ => None,
        }
    }

    /// A source operand's 32-bit value, with `-`, `~` and `|.|` applied.
    fn val(&mut self, o: &Operand, span: Span) -> R<Src> {
        Ok(match o {
            Operand::Reg { idx, neg, not, abs, .. } => {
                let mut v = match idx {
                    None => ZERO,
                    Some(i) => Src::Reg(self.reg(*i)),
                };
                if *abs {
                    let s = self.sext(v);
                    let n = self.bin(BinOp::Sub, Width::W64, ZERO, s);
                    let m = self.bin(BinOp::MaxS, Width::W64, s, n);
                    v = self.zext(m);
                }
                if *not {
                    v = self.bin(BinOp::Xor, Width::W32, v, Src::Imm(0xFFFF_FFFF));
                }
                if *neg {
                    v = self.bin(BinOp::Sub, Width::W32, ZERO, v);
                }
                v
            }
            Operand::UReg(None) => ZERO,
            Operand::UReg(Some(i)) => Src::Reg(self.ureg(*i)),
            Operand::UMod { idx, neg, not } => {
                let mut v = match idx {
                    None => ZERO,
                    Some(i) => Src::Reg(self.ureg(*i)),
                };
                if *not {
                    v = self.bin(BinOp::Xor, Width::W32, v, Src::Imm(0xFFFF_FFFF));
                }
                if *neg {
                    v = self.bin(BinOp::Sub, Width::W32, ZERO, v);
                }
                v
            }
            Operand::Imm(v) => Src::Imm(u64::from(*v)),
            Operand::CBank { bank, off, neg, not } => {
                let mut v = self.cbank(*bank, *off);
                if *not {
                    v = self.bin(BinOp::Xor, Width::W32, v, Src::Imm(0xFFFF_FFFF));
                }
                if *neg {
                    v = self.bin(BinOp::Sub, Width::W32, ZERO, v);
                }
                v
            }
            Operand::CBankIdx { .. } => {
                return Err(self.err(span, "a constant word at a register's offset is read only by LDC"));
            }
            Operand::Special(s) => self.special(s),
            Operand::Pred { .. } => {
                let p = self.pred_ref(o).unwrap_or(PredRef::TRUE);
                let d = self.tmp();
                self.emit(Op::PredToReg { dst: d, p });
                Src::Reg(d)
            }
            _ => return Err(self.err(span, "this operand has no value")),
        })
    }

    /// A 64-bit value from a register pair (`R2` and `R3`), a constant pair, or a 32-bit operand.
    fn pair(&mut self, o: &Operand, span: Span) -> R<Src> {
        let (lo, hi) = match o {
            Operand::Reg { idx: None, .. } | Operand::UReg(None) => return Ok(ZERO),
            Operand::Reg { idx: Some(i), .. } => (Src::Reg(self.reg(*i)), Src::Reg(self.reg(i + 1))),
            Operand::UReg(Some(i)) => (Src::Reg(self.ureg(*i)), Src::Reg(self.ureg(i + 1))),
            Operand::CBank { bank, off, neg: false, not: false } => {
                (self.cbank(*bank, *off), self.cbank(*bank, off + 4))
            }
            _ => return self.val(o, span).map(|v| self.zext(v)),
        };
        Ok(self.join(lo, hi))
    }

    fn join(&mut self, lo: Src, hi: Src) -> Src {
        let lo = self.zext(lo);
        let hi = self.zext(hi);
        let h = self.bin(BinOp::Shl, Width::W64, hi, Src::Imm(32));
        // The low half first: when both are unknown, errors name the register the address starts from.
        self.bin(BinOp::Or, Width::W64, lo, h)
    }

    fn set(&mut self, o: &Operand, v: Src) {
        match o {
            Operand::Reg { idx: Some(i), .. } => {
                let r = self.reg(*i);
                let v = self.zext(v);
                self.emit(Op::Mov { dst: r, a: v });
            }
            Operand::UReg(Some(i)) => {
                let r = self.ureg(*i);
                let v = self.zext(v);
                self.emit(Op::Mov { dst: r, a: v });
            }
            Operand::Pred { idx: Some(i), uniform, .. } => {
                let p = self.pred_reg(*i, *uniform);
                self.emit(Op::Setp { dst: p, cmp: Cmp::Ne, signed: false, w: Width::W64, a: v, b: ZERO });
            }
            _ => {}
        }
    }

    fn set_pred(&mut self, o: &Operand, p: PredRef) {
        if let Operand::Pred { idx: Some(i), uniform, .. } = o {
            let d = self.pred_reg(*i, *uniform);
            self.emit(Op::PredLogic { dst: d, op: PredOp::And, a: p, b: PredRef::TRUE });
        }
    }

    /// Writes a 64-bit value to a register pair.
    fn set_pair(&mut self, o: &Operand, v: Src) {
        let (lo, hi) = match o {
            Operand::Reg { idx: Some(i), .. } => (self.reg(*i), self.reg(i + 1)),
            Operand::UReg(Some(i)) => (self.ureg(*i), self.ureg(i + 1)),
            _ => return,
        };
        let l = self.zext(v);
        let h = self.bin(BinOp::ShrU, Width::W64, v, Src::Imm(32));
        self.emit(Op::Mov { dst: lo, a: l });
        self.emit(Op::Mov { dst: hi, a: h });
    }

    /// Marks what an unmodelled instruction writes as unknown.
    fn unmodelled(&mut self, l: &Line) {
        // Floating-point and tensor-core results are data (a branch on them is decided by the data-branch
        // assumption); what any other unmodelled instruction writes is an unknown that stops a run it reaches.
        let float = is_float_op(&l.opcode);
        let why = |r: &str| {
            if float {
                format!(
                    "{r} holds the floating-point result of {} at line {} (data warpscope does not follow)",
                    l.opcode, l.no
                )
            } else {
                format!("{r} was written by {} at line {}, which warpscope does not model", l.opcode, l.no)
            }
        };
        for d in destinations(l) {
            let text = match &d {
                Operand::Reg { idx: Some(i), .. } => why(&format!("R{i}")),
                Operand::UReg(Some(i)) => why(&format!("UR{i}")),
                Operand::Pred { idx: Some(i), uniform, .. } => why(&format!("{}P{i}", if *uniform { "U" } else { "" })),
                _ => continue,
            };
            let w = if float { self.b.data_why(text) } else { self.b.why(text) };
            match d {
                Operand::Reg { idx: Some(i), .. } => {
                    let r = self.reg(i);
                    self.emit(Op::Unknown { dst: r, why: w });
                }
                Operand::UReg(Some(i)) => {
                    let r = self.ureg(i);
                    self.emit(Op::Unknown { dst: r, why: w });
                }
                Operand::Pred { idx: Some(_), .. } => {
                    let v = self.tmp();
                    self.emit(Op::Unknown { dst: v, why: w });
                    self.set(&d, Src::Reg(v));
                }
                _ => {}
            }
        }
    }
}

/// Whether an opcode computes floating-point (or tensor-core) values from floating-point values: FADD, DFMA,
/// HFMA2, HMMA... Not the conversions between integers and floats (I2F, F2I) or MUFU, which ptxas also uses for
/// integer division: what they leave unknown stays an error.
fn is_float_op(op: &str) -> bool {
    let float_family =
        ["F", "D", "H"].iter().any(|p| op.starts_with(p)) && !matches!(op, "FLO" | "FENCE" | "DEPBAR" | "F2I");
    float_family || matches!(op, "IMMA" | "BMMA" | "QMMA" | "OMMA")
}

/// Every destination register an unknown or unmodelled instruction writes: the first register operand (and the
/// registers after it for wide forms), or the first two predicates of a predicate-writing instruction.
fn destinations(line: &Line) -> Vec<Operand> {
    let plain = |i: u32| Operand::Reg { idx: Some(i), neg: false, not: false, abs: false, wide: false, cc: false };
    let mut out = Vec::new();
    for (k, (op, _)) in line.ops.iter().enumerate() {
        match op {
            Operand::Pred { idx: Some(_), .. } if k < 2 => out.push(op.clone()),
            Operand::Reg { idx: Some(i), .. } => {
                out.push(plain(*i));
                if line.mods.iter().any(|m| m == "WIDE" || m == "64" || m == "128") {
                    for j in 1..4 {
                        out.push(plain(i + j));
                    }
                }
                break;
            }
            Operand::UReg(Some(_)) => {
                out.push(op.clone());
                break;
            }
            _ => break,
        }
    }
    out
}

fn has(l: &Line, m: &str) -> bool {
    l.mods.iter().any(|x| x == m)
}

/// Lowers a parsed listing (`src` is its text, for errors) into a program.
pub(super) fn lower_listing(
    src: &str,
    listing: &Listing,
    launch: Launch,
    vars: &Vars,
    opts: Options,
) -> Result<Program, InputError> {
    let lines = &listing.lines;
    if lines.is_empty() {
        return Err(InputError::at(
            src,
            Span { start: 0, end: 1 },
            "no SASS instructions: paste lines such as `LDG.E.32 R0, [R2];`",
        ));
    }
    let kernels: Vec<&Func> = listing.funcs.iter().filter(|f| f.entry).collect();
    let chosen = match opts.kernel.map(str::trim).filter(|k| !k.is_empty()) {
        Some(want) => {
            let names: Vec<&str> = kernels.iter().map(|f| f.name.as_str()).collect();
            params::find_kernel(want, &names).map(|i| kernels[i])
        }
        .ok_or_else(|| {
            let names: Vec<String> = kernels.iter().map(|f| f.shown()).collect();
            InputError::at(
                src,
                Span { start: 0, end: 1 },
                format!("no kernel `{want}` in this listing (its kernels: {})", names.join(", ")),
            )
        })?,
        None => kernels.first().copied().ok_or_else(|| {
            InputError::at(src, Span { start: 0, end: 1 }, "this listing has no kernel, only subroutines")
        })?,
    };
    let mut lw = Lower {
        b: Builder::new(),
        src,
        vars,
        launch,
        regs: HashMap::new(),
        uregs: HashMap::new(),
        preds: HashMap::new(),
        upreds: HashMap::new(),
        cc: 0,
        lea_lo: 0,
        guard: None,
        window_words: None,
        uncosted: Vec::new(),
        span: Span { start: 0, end: 1 },
        no: 0,
        params: Vec::new(),
        param_base: None,
        param_note: String::new(),
        sites: HashMap::new(),
        at: (0, String::new(), None),
        const_sites: HashMap::new(),
    };
    // Kernel parameters and their defaults.
    let sm = listing.arch.unwrap_or(opts.sm);
    lw.param_base = params::param_base(sm);
    lw.window_words = crate::model::arch::shared_window_words(sm);
    let sig = params::signature(&chosen.name);
    let mut defaulted = Vec::new();
    if let (Some(sig), Some(base)) = (&sig, lw.param_base) {
        let values = params::defaults(&sig.params, &launch);
        for (p, v) in sig.params.iter().zip(values) {
            let key = cbank_key(0, base + p.offset);
            if v.is_some() && !vars.contains_key(&key) {
                defaulted.push(format!("{key} ({}, {}) = {}", p.index, p.ty, show_default(&p.kind, v.unwrap_or(0))));
            }
            lw.params.push((p.clone(), v));
        }
        if let Some((i, ty)) = &sig.unknown_layout {
            lw.param_note = format!(
                "parameter {i} of {} is a `{ty}`, whose layout warpscope does not know, so it and the parameters after it have no default",
                sig.name
            );
        }
    } else if sig.is_none() && !chosen.name.is_empty() && !params::CAN_DEMANGLE {
        lw.param_note =
            "the page could not read the parameter types from the kernel name (the command line can)".into();
    } else if sig.is_none() && !chosen.name.is_empty() {
        lw.param_note =
            format!("the kernel name `{}` is not a mangled C++ name, so its parameter types are unknown", chosen.name);
    } else if lw.param_base.is_none() {
        lw.param_note = format!("warpscope does not know where sm_{sm} keeps kernel parameters");
    }
    if kernels.len() > 1 {
        let names: Vec<String> = kernels.iter().map(|f| f.shown()).collect();
        let ran = chosen.shown();
        lw.b.note(Note::new(
            "sass-kernel",
            format!(
                "This listing has {} kernels ({}); this is {ran}. Choose another with --kernel NAME or the kernel menu.",
                kernels.len(),
                names.join(", ")
            ),
            "the listing's function headers",
        ));
    }
    if !defaulted.is_empty() {
        lw.b.note(Note::new(
            "sass-param-defaults",
            format!(
                "Kernel parameters given defaults (pointers get their own 256-byte-aligned bases, as cudaMalloc gives; integers the launch's thread count): {}. Give other values with --set, e.g. --set {}=VALUE.",
                defaulted.join("; "),
                defaulted[0].split(' ').next().unwrap_or("c[0x0][0x160]")
            ),
            "docs/model.md#kernel-parameters",
        ));
    }
    if !chosen.name.is_empty() {
        lw.b.set_kernel(chosen.shown());
    }
    lw.b.set_kernels(kernels.iter().filter(|f| !f.name.is_empty()).map(|f| (f.name.clone(), f.shown())).collect());
    lw.cc = lw.b.reg();
    lw.lea_lo = lw.b.reg();
    // The start: every register and predicate the listing names gets its `--set` value or becomes unknown.
    let mut gprs = std::collections::BTreeSet::new();
    let mut urs = std::collections::BTreeSet::new();
    for l in lines {
        for (o, _) in &l.ops {
            match o {
                Operand::Reg { idx: Some(i), .. } => gprs.extend(*i..(i + 4).min(256)),
                Operand::UReg(Some(i)) | Operand::UMod { idx: Some(i), .. } => urs.extend(*i..(i + 2).min(64)),
                Operand::Mem { base, ubase, .. } => {
                    if let Some((Some(i), _)) = base {
                        gprs.extend(*i..(i + 2).min(256));
                    }
                    if let Some(Some(i)) = ubase {
                        urs.extend(*i..(i + 2).min(64));
                    }
                }
                _ => {}
            }
        }
    }
    let start = Span { start: 0, end: 1 };
    lw.span = start;
    for (set, prefix) in [(gprs, "R"), (urs, "UR")] {
        for i in set {
            let value = wide_var(vars, &format!("{prefix}{i}"), i.checked_sub(1).map(|p| format!("{prefix}{p}")));
            let r = if prefix == "R" { lw.reg(i) } else { lw.ureg(i) };
            match value {
                Some(v) => lw.b.emit(Op::Mov { dst: r, a: Src::Imm(u64::from(v)) }, None, start),
                None => {
                    let w = lw.b.why(format!("{prefix}{i} has no value (give it one with --set {prefix}{i}=VALUE)"));
                    lw.b.emit(Op::Unknown { dst: r, why: w }, None, start);
                }
            }
        }
    }
    for uniform in [false, true] {
        for i in 0..7 {
            let name = format!("{}P{i}", if uniform { "U" } else { "" });
            let v = lw.unknown(format!("{name} has no value"));
            let p = lw.pred_reg(i, uniform);
            lw.b.emit(Op::Setp { dst: p, cmp: Cmp::Ne, signed: false, w: Width::W64, a: v, b: ZERO }, None, start);
        }
    }
    let w = lw.b.why("the carry flag (CC.CF) was not set by an earlier .CC instruction");
    lw.b.emit(Op::Unknown { dst: lw.cc, why: w }, None, start);
    let w = lw.b.why("no LEA.LO computed the low half of the address before");
    lw.b.emit(Op::Unknown { dst: lw.lea_lo, why: w }, None, start);
    let end_label = lw.b.label();
    body(&mut lw, listing, chosen.start..chosen.end, None, 0)?;
    lw.b.place(end_label);
    let uncosted = std::mem::take(&mut lw.uncosted);
    lw.b.note_uncosted("sass-not-costed", "instructions", &uncosted);
    #[allow(unused_mut)]
    let mut program = lw.b.finish();
    // Pointer parameters are arrays that data can be given for, under their short names (`param_0`), of the type
    // the kernel's name says they point to; each starts where the parameter points (its default or `--set`).
    #[cfg(feature = "data")]
    if let Some(pb) = lw.param_base {
        let word = |o: u32| wide_var(vars, &cbank_key(0, o), o.checked_sub(4).map(|p| cbank_key(0, p))).map(u64::from);
        for (p, v) in &lw.params {
            let (params::Kind::Pointer, Some(v)) = (&p.kind, v) else { continue };
            let at = pb + p.offset;
            let lo = word(at).unwrap_or(v & 0xFFFF_FFFF);
            let hi = word(at + 4).unwrap_or(v >> 32);
            let elem = Elem::of_pointer(&p.ty).unwrap_or(Elem::Other);
            program.arrays.push(crate::program::memory::ArrayDecl {
                name: format!("param_{}", p.index),
                base: lo | hi << 32,
                elem,
            });
        }
    }
    Ok(program)
}

/// How a default shows in the note: pointers in hex.
fn show_default(kind: &params::Kind, v: u64) -> String {
    match kind {
        params::Kind::Pointer => format!("{v:#x}"),
        _ => v.to_string(),
    }
}

/// Calls nest at most this deep (compiler-emitted subroutines call nothing further; recursion is refused).
const MAX_CALL_DEPTH: usize = 8;

/// Lowers function `f` of the listing. A call inlines its callee, whose returns branch to `ret` (the
/// instruction after the call); a return in the kernel itself ends the thread.
fn body(lw: &mut Lower, listing: &Listing, range: std::ops::Range<usize>, ret: Option<Label>, depth: usize) -> R<()> {
    let lines = &listing.lines;
    // One label per instruction, for branches.
    let labels: Vec<Label> = range.clone().map(|_| lw.b.label()).collect();
    let fall_out = lw.b.label();
    let target = |lw: &Lower, l: &Line| -> R<Label> {
        let found = l.ops.iter().find_map(|(o, sp)| {
            let raw = &lw.src[sp.start.min(lw.src.len())..sp.end.min(lw.src.len())];
            let name = raw.trim().trim_start_matches('`').trim_start_matches('(').trim_end_matches(')').trim();
            let by_label = listing.labels.get(name).copied();
            let by_addr = match o {
                Operand::Imm(a) => range.clone().find(|&i| lines[i].addr == Some(u64::from(*a))),
                _ => None,
            };
            by_label.or(by_addr)
        });
        match found {
            Some(i) if range.contains(&i) => Ok(labels[i - range.start]),
            Some(i) if i == range.end => Ok(fall_out),
            Some(_) => {
                Err(lw.err(l.span, format!("{}: the branch target is in another function of the listing", l.opcode)))
            }
            None => Err(
                lw.err(l.span, format!("{}: the branch target is not a label or an address of this listing", l.opcode))
            ),
        }
    };
    for k in range.clone() {
        let l = &lines[k];
        lw.b.place(labels[k - range.start]);
        lw.guard = l.guard.map(|(idx, not, uniform)| match idx {
            None => PredRef { idx: None, neg: not },
            Some(i) => PredRef { idx: Some(lw.pred_reg(i, uniform)), neg: not },
        });
        lw.span = l.span;
        lw.no = l.no;
        lw.at = (k, l.text.clone(), l.source.as_ref().map(|s| SourceLine { file: s.file.clone(), line: s.line }));
        let mark = lw.b.temps_mark();
        // Immediate operands in the bank of `__constant__` variables: one pass of the constant cache each.
        for (o, sp) in &l.ops {
            if let Operand::CBank { bank: 3, off, .. } = o {
                lw.constant_operand(*off, *sp)?;
            }
        }
        if MEMORY_OPS.contains(&l.opcode.as_str()) {
            memory(lw, l, k)?;
        } else if ATOMIC_OPS.contains(&l.opcode.as_str()) {
            memory(lw, l, k)?;
            atomic_results(lw, l);
        } else if l.opcode == "LDC" && matches!(l.ops.get(1), Some((Operand::CBankIdx { reg: Some(_), .. }, _))) {
            constant_load(lw, l, k)?;
        } else {
            match l.opcode.as_str() {
                "BRA" | "JMP" => {
                    let t = target(lw, l)?;
                    if has(l, "DIV") {
                        // BRA.DIV: taken when the warp's active lanes are not all of its live lanes.
                        let p = lw.b.pred();
                        lw.emit(Op::Converged { dst: p });
                        lw.b.bra(t, Some(PredRef::not(p)), l.span);
                    } else {
                        lw.b.bra(t, lw.guard, l.span);
                    }
                }
                "SYNC" | "BRK" | "CONT" => {
                    // Pre-Volta reconvergence: jump to the target of the innermost SSY/PBK/PCNT around it.
                    let opener = match l.opcode.as_str() {
                        "SYNC" => "SSY",
                        "BRK" => "PBK",
                        _ => "PCNT",
                    };
                    let found = (range.start..k).rev().find_map(|j| {
                        let o = &lines[j];
                        if o.opcode != opener {
                            return None;
                        }
                        let t = target(lw, o).ok()?;
                        let at = labels.iter().position(|x| *x == t).map_or(range.end, |p| p + range.start);
                        (at > k).then_some(t)
                    });
                    match found {
                        Some(t) => lw.b.bra(t, lw.guard, l.span),
                        None => {
                            return Err(
                                lw.err(l.span, format!("{} has no enclosing {opener} in this listing", l.opcode))
                            )
                        }
                    }
                }
                "EXIT" | "KILL" => lw.emit(Op::Exit),
                "BAR" => {
                    if has(l, "ARV") {
                        // Arrive without waiting: nothing to follow.
                    } else {
                        lw.emit(Op::Bar);
                    }
                }
                "CALL" => {
                    // A direct call to a function of the listing runs inline; the instruction after the call is
                    // where its RET comes back to (the compiler's calling convention puts that address in the
                    // return register).
                    // A call to a label of the same function (ptxas's `CALL.REL.NOINC` to a block it placed after
                    // the loop, which exits or returns) runs the code from that label to the function's end.
                    let callee = l.ops.iter().find_map(|(_, sp)| {
                        let raw = &lw.src[sp.start.min(lw.src.len())..sp.end.min(lw.src.len())];
                        let name =
                            raw.trim().trim_start_matches('`').trim_start_matches('(').trim_end_matches(')').trim();
                        if name.is_empty() {
                            return None;
                        }
                        match listing.funcs.iter().find(|g| g.name == name) {
                            Some(g) => Some(g.start..g.end),
                            None => listing.labels.get(name).filter(|&&i| range.contains(&i)).map(|&i| i..range.end),
                        }
                    });
                    // A call to a label of this function whose code never returns (no RET from there on: the loop
                    // exit ptxas reaches with CALL.REL.NOINC) is a branch there.
                    if let Some(r) = callee.clone().filter(|r| !listing.funcs.iter().any(|g| g.start == r.start)) {
                        if !lines[r.clone()].iter().any(|x| x.opcode == "RET") {
                            lw.b.bra(labels[r.start - range.start], lw.guard, l.span);
                            lw.b.release(mark);
                            continue;
                        }
                    }
                    // `vprintf`: printf's runtime, which writes its arguments to a buffer; listed, not counted
                    // (called by name, or through a register the function loaded vprintf's address into).
                    let by_reg = has(l, "ABS") && matches!(l.ops.first(), Some((Operand::Reg { .. }, _)));
                    // nvdisasm names vprintf where the cubin's relocations say so; otherwise the address comes
                    // from constant bank 4, where ptxas puts external functions' addresses (vprintf,
                    // __assertfail, malloc).
                    let loads_vprintf =
                        lines[range.clone()].iter().any(|x| x.text.contains("vprintf") || x.text.contains("c[0x4]"));
                    let external = (by_reg && loads_vprintf)
                        || l.ops.iter().any(|(_, sp)| {
                            lw.src[sp.start.min(lw.src.len())..sp.end.min(lw.src.len())].contains("vprintf")
                        });
                    if callee.is_none() && external {
                        lw.uncosted.push((l.no, l.text.clone()));
                        let w = lw.b.why(format!("the value an external function (vprintf) returned at line {}", l.no));
                        let r = lw.reg(4);
                        lw.emit(Op::Unknown { dst: r, why: w });
                        lw.b.release(mark);
                        continue;
                    }
                    let Some(g) = callee else {
                        let c = lw.b.ctx(format!(
                            "{} at line {} is reached: its target is not a function of this listing",
                            l.opcode, l.no
                        ));
                        lw.emit(Op::Trap { ctx: c });
                        lw.b.release(mark);
                        continue;
                    };
                    if depth >= MAX_CALL_DEPTH {
                        return Err(lw.err(l.span, format!("calls nest more than {MAX_CALL_DEPTH} deep (recursion?)")));
                    }
                    let back = lw.b.label();
                    let skip = lw.guard.map(|g| PredRef { idx: g.idx, neg: !g.neg });
                    if skip.is_some() {
                        // A guarded call: lanes whose guard fails go straight on.
                        lw.b.bra(back, skip, l.span);
                    }
                    let saved = lw.guard.take();
                    body(lw, listing, g, Some(back), depth + 1)?;
                    lw.guard = saved;
                    lw.b.place(back);
                }
                "RET" => match ret {
                    Some(back) => lw.b.bra(back, lw.guard, l.span),
                    None => lw.emit(Op::Exit),
                },
                "TEX" | "TLD" | "TLD4" | "TXD" | "TMML" | "TXQ" | "TEXS" | "TLDS" | "TLD4S" | "SULD" | "SUST"
                | "SURED" | "SUATOM" | "SUQUERY" => {
                    let c = lw.b.ctx(format!(
                        "{} at line {} is a texture or surface access, which warpscope does not model: how the texture path splits a warp's request and how its block-linear layouts place data are not published (docs/model.md#the-read-only-path), so warpscope refuses it rather than guess",
                        l.opcode, l.no
                    ));
                    lw.emit(Op::Trap { ctx: c });
                }
                "BRX" | "JMX" | "BPT" => {
                    let c = lw.b.ctx(format!(
                        "{} at line {} is reached: warpscope does not follow indirect branches or breakpoints",
                        l.opcode, l.no
                    ));
                    lw.emit(Op::Trap { ctx: c });
                }
                op if NO_EFFECT.contains(&op) => {}
                "UBLKCP" | "UBLKRED" | "UBLKPF" => {
                    let c = lw.b.ctx(format!(
                        "{} at line {} is a bulk copy (cp.async.bulk): one thread moves a whole block of bytes between global and shared memory, which warpscope does not count inside a kernel yet",
                        l.opcode, l.no
                    ));
                    lw.emit(Op::Trap { ctx: c });
                }
                "UTMALDG" | "UTMASTG" | "UTMAREDG" | "UTMAPF" => {
                    let c = lw.b.ctx(format!(
                        "{} at line {} is a TMA (bulk or tensor) copy: it moves a whole box that a tensor map made on the host describes, so warpscope does not count it inside a kernel; cost the box with `warpscope tma --box WxH --elem-bytes N --pitch BYTES --swizzle MODE`",
                        l.opcode, l.no
                    ));
                    lw.emit(Op::Trap { ctx: c });
                }
                _ => execute(lw, l)?,
            }
        }
        lw.b.release(mark);
    }
    lw.b.place(fall_out);
    if let Some(back) = ret {
        // Running off the end of a subroutine returns.
        lw.b.bra(back, None, func_end_span(lines, &range));
    }
    Ok(())
}

fn func_end_span(lines: &[Line], range: &std::ops::Range<usize>) -> Span {
    lines.get(range.end.saturating_sub(1)).map_or(Span { start: 0, end: 1 }, |l| l.span)
}

fn memory(lw: &mut Lower, l: &Line, k: usize) -> R<()> {
    let text = std::iter::once(l.opcode.clone()).chain(l.mods.iter().cloned()).collect::<Vec<_>>().join(".");
    let mut instr = Instr::parse(&text).map_err(|e| {
        InputError::at(lw.src, Span { start: l.span.start + e.column, end: l.span.start + e.column + e.len }, e.message)
    })?;
    let mut mems = l.ops.iter().enumerate().filter(|(_, (o, _))| matches!(o, Operand::Mem { .. }));
    let Some((mem_idx, (mem, mem_span))) = mems.next() else {
        return Err(lw.err(l.span, format!("{} needs an address operand such as [R2] or [R2+0x10]", l.opcode)));
    };
    let copy = instr.base == Base::Ldgsts;
    // LDGSTS [shared], [global.64]: the second address is the global source (its `.E` is the source's).
    let source = if copy {
        let Some((_, (src, src_span))) = mems.next() else {
            return Err(lw.err(
                l.span,
                format!("{} needs a shared destination and a global source, as in [R5], [R2.64]", l.opcode),
            ));
        };
        if matches!(src, Operand::Mem { base: Some((_, true)), .. }) {
            instr.extended = true;
        }
        Some((src.clone(), *src_span))
    } else {
        None
    };
    let mem_span = *mem_span;
    if let Operand::Mem { base: Some((_, true)), .. } = mem {
        if !copy {
            instr.extended = true;
        }
    }
    let addr = address(lw, mem, mem_span, instr.address_bits())?;
    let src = match source {
        Some((s, sp)) => Some(address(lw, &s, sp, instr.source_address_bits())?),
        None => None,
    };
    // Errors about the instruction point at its (destination) address.
    lw.span = mem_span;
    // An explicit Plg predicate after the address (generic LD/ST, the ST instruction reference).
    let plg = match (instr.base.fixed_space(), l.ops.get(mem_idx + 1).or_else(|| l.ops.get(mem_idx + 2))) {
        (None, Some((o @ Operand::Pred { .. }, _))) if !copy => lw.pred_ref(o),
        // LDGSTS [shared], [global], !P0: the lanes where the predicate holds read; the others zero-fill their
        // destination (what ptxas makes of a cp.async src-size of 0).
        _ if copy => l
            .ops
            .iter()
            .skip(mem_idx + 2)
            .find(|(o, _)| matches!(o, Operand::Pred { .. }))
            .and_then(|(o, _)| lw.pred_ref(o)),
        _ => None,
    };
    let store = instr.base.writes() || copy;
    let site = match lw.sites.get(&k) {
        Some(&site) => site,
        None => {
            let access = match src {
                // Both addresses: the shared destination first, as the instruction writes them.
                Some(_) => lw.src[mem_span.start..l.span.end.min(lw.src.len())].trim().to_string(),
                None => l.mem_text.clone(),
            };
            line_site(lw, l, k, access, &instr)
        }
    };
    let ctx = lw.b.ctx(format!("the address of this {} depends on a value warpscope does not know: ", l.opcode));
    let first = match l.ops.first() {
        Some((Operand::Reg { idx: Some(i), .. }, _)) if !store => Some(*i),
        _ => None,
    };
    // LDSM writes one register per matrix (each lane's 2 halves of one row).
    let regs = if instr.base.is_matrix() { u32::from(instr.matrices) } else { instr.size_bytes.div_ceil(4) };
    // A global (or generic) load reads given arrays (docs/model.md#kernels-on-data): its registers get the
    // bytes at its address, 32 bits each, a sub-word load's extended as its type says (`.S8`). The addresses
    // of the registers after the first are taken before the load, which may overwrite its address register.
    let given =
        cfg!(feature = "data") && first.is_some() && matches!(instr.base, Base::Ldg | Base::Ld) && plg.is_none();
    let parts = if given { lw.b.part_addresses(addr, regs as usize, 4, lw.guard, lw.span) } else { Vec::new() };
    lw.emit(Op::Mem { site, addr, plg, src, ctx, data: None });
    if let Some(i) = first {
        let hint = if matches!(instr.base, Base::Ldg | Base::Ld) {
            format!("; {}{}", crate::text::GIVE_DATA, params::PARAM_NAMES)
        } else {
            String::new()
        };
        let loads: Vec<(Reg, u32)> = (0..regs)
            .map(|r| (lw.reg(i + r), lw.b.data_why(format!("R{} holds data loaded at line {}{hint}", i + r, l.no))))
            .collect();
        if given {
            let signed = l.mods.iter().any(|m| m == "S8" || m == "S16");
            let elem = Elem::Int { bytes: instr.size_bytes.min(4) as u8, signed };
            lw.b.load_parts(&loads, &parts, elem, lw.guard, lw.span);
            for &(d, _) in &loads {
                lw.emit(Op::Conv { dst: d, a: Src::Reg(d), bits: 32, signed: false });
            }
        } else {
            for &(d, why) in &loads {
                lw.emit(Op::Unknown { dst: d, why });
            }
        }
    }
    Ok(())
}

/// The memory site of listing line `k` (one per line, also when a subroutine is inlined twice).
fn line_site(lw: &mut Lower, l: &Line, k: usize, access: String, instr: &Instr) -> crate::program::SiteId {
    let source = l.source.as_ref().map(|s| SourceLine { file: s.file.clone(), line: s.line });
    let site = lw.b.site(
        (k, 0),
        Site { line: l.no, text: l.text.clone(), access, instr: instr.clone(), notes: Vec::new(), source },
    );
    lw.sites.insert(k, site);
    site
}

/// `LDC Rd, c[bank][Ra + imm]`: a constant-bank load at a per-thread offset, costed in passes (docs/model.md#constant-memory).
/// Its address is the offset in the bank (the bank is in the site's text); the data it loads is data.
fn constant_load(lw: &mut Lower, l: &Line, k: usize) -> R<()> {
    let Some(&(Operand::CBankIdx { bank, reg: Some(r), off }, span)) = l.ops.get(1) else { return Ok(()) };
    let text = std::iter::once(l.opcode.clone()).chain(l.mods.iter().cloned()).collect::<Vec<_>>().join(".");
    let instr = Instr::parse(&text).map_err(|e| {
        InputError::at(lw.src, Span { start: l.span.start + e.column, end: l.span.start + e.column + e.len }, e.message)
    })?;
    let base = Src::Reg(lw.reg(r));
    let a = lw.bin(BinOp::Add, Width::W32, base, Src::Imm(u64::from(off)));
    let a = lw.bin(BinOp::And, Width::W64, a, Src::Imm(0xFFFF));
    let addr = match a {
        Src::Reg(r) => r,
        imm => {
            let t = lw.tmp();
            lw.emit(Op::Mov { dst: t, a: imm });
            t
        }
    };
    lw.span = span;
    let site = match lw.sites.get(&k) {
        Some(&site) => site,
        None => {
            let access = lw.src[span.start..span.end.min(lw.src.len())].trim().to_string();
            line_site(lw, l, k, access, &instr)
        }
    };
    let ctx = lw
        .b
        .ctx(format!("the offset of this LDC in constant bank {bank:#x} depends on a value warpscope does not know: "));
    lw.emit(Op::Mem { site, addr, plg: None, src: None, ctx, data: None });
    if let Some((Operand::Reg { idx: Some(i), .. }, _)) = l.ops.first() {
        for w in 0..instr.size_bytes.div_ceil(4) {
            let why = lw.b.data_why(format!("R{} holds data LDC read from constant memory at line {}", i + w, l.no));
            let d = lw.reg(i + w);
            lw.emit(Op::Unknown { dst: d, why });
        }
    }
    Ok(())
}

/// The address of a memory operand `[R2+UR4+0x10]` (`[R2.64]` and every operand of a 64-bit address: a
/// register pair) in a register, cut to `bits`. Errors about it point at the operand.
fn address(lw: &mut Lower, mem: &Operand, span: Span, bits: u32) -> R<Reg> {
    let Operand::Mem { base, ubase, offset, scale } = *mem else { return Err(lw.err(span, "expected an address")) };
    lw.span = span;
    let mut addr: Src = match base {
        Some((idx, w)) if bits == 64 || w => {
            let r = Operand::Reg { idx, neg: false, not: false, abs: false, wide: true, cc: false };
            lw.pair(&r, span)?
        }
        Some((Some(i), _)) => Src::Reg(lw.reg(i)),
        _ => ZERO,
    };
    if scale != 1 {
        addr = lw.bin(BinOp::Mul, Width::W64, addr, Src::Imm(u64::from(scale)));
    }
    if let Some(u) = ubase {
        let uv = match u {
            None => ZERO,
            Some(i) => Src::Reg(lw.ureg(i)),
        };
        addr = lw.bin(BinOp::Add, Width::W64, addr, uv);
    }
    addr = lw.bin(BinOp::Add, Width::W64, addr, Src::Imm(offset as u64));
    if bits == 32 {
        addr = lw.bin(BinOp::And, Width::W64, addr, Src::Imm(0xFFFF_FFFF));
    }
    Ok(match addr {
        Src::Reg(r) => r,
        imm => {
            let r = lw.tmp();
            lw.emit(Op::Mov { dst: r, a: imm });
            r
        }
    })
}

fn vars_window(vars: &Vars) -> u64 {
    vars.get("shared_window").map_or(DEFAULT_SHARED_WINDOW, |&v| v as u64)
}
