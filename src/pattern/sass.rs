//! SASS snippets, as `cuobjdump -sass` / `nvdisasm` print them and as the instruction pages write them,
//! lowered into the program every language shares (branches, loops and reconvergence run there).
//!
//! Accepted and ignored: `/*0040*/` addresses, encodings in comments, trailing `;`, scheduling and barrier
//! annotations (`?WAIT6`, `&wr0`, `&req_6`, `{...}`), labels, and header lines (`Function : ...`). Known
//! instructions: S2R, CS2R, S2UR, MOV, MOV32I, UMOV, IADD, IADD32I, IADD3, IMAD (.WIDE, .WIDE.U32, .HI, .X,
//! .MOV, .SHL, .IADD), IMUL, ISCADD, SHL, SHR, SHF, LOP, LOP32I, LOP3.LUT, BFE, SEL, ISETP, LEA and LEA.HI
//! (seeds/003: `.X`, `.CC` carry chains, negated offsets, omitted Rc, constant-bank operands and the `Plg`
//! shared-window predicate, and the current `LEA Rd, Pcarry, ...` form), VIADD, control flow (BRA, BRA.DIV,
//! EXIT, BAR, the pre-Volta SYNC/BRK/CONT), and the memory instructions LDG/LDS/LDL/LD/ST/STG/STS/STL.
//! Branch targets are labels (`` `(.L_x_13) ``) or instruction addresses (`/*0040*/`). Any other instruction is
//! fine until an address, branch or guard depends on a register it wrote: then the error says which
//! instruction that was; CALL and indirect branches are errors when reached.
//!
//! Registers and constant-bank words start unknown unless `--set` gives them (`R4=0x1000`,
//! `c[0x0][0x160]=0x7f0000000000`). By default `c[0x0][0x0..0x14]` hold blockDim and gridDim and
//! `c[0x0][0x20]` / `c[0x0][0x28]` the initial stack pointer (local offset 0xfffc00), as on current GPUs.

use super::expr::Vars;
use super::{InputError, Span};
use crate::access::Instr;
use crate::engine::DEFAULT_SHARED_WINDOW;
use crate::launch::Launch;
use crate::program::{
    exec, BinOp, Builder, Cmp, Label, Op, Pred, PredOp, PredRef, Program, Reg, Site, Special, Src, Width,
};
use std::collections::HashMap;

/// The initial stack pointer the defaults put in `c[0x0][0x20]` and `c[0x0][0x28]`: a local-window offset.
pub const DEFAULT_STACK_TOP: u32 = 0x00ff_fc00;
/// Lines of SASS warpscope runs at most.
pub const MAX_LINES: usize = 20_000;

/// Parses `c[0x0][0x160]` or `c[0][4]` into (bank, offset).
pub fn parse_cbank(text: &str) -> Option<(u32, u32)> {
    let t = text.trim();
    let rest = t.strip_prefix('c').or_else(|| t.strip_prefix('C'))?.trim_start();
    let rest = rest.strip_prefix('[')?;
    let (bank, rest) = rest.split_once(']')?;
    let rest = rest.trim_start().strip_prefix('[')?;
    let (off, tail) = rest.split_once(']')?;
    if !tail.trim().is_empty() {
        return None;
    }
    Some((parse_u32(bank.trim())?, parse_u32(off.trim())?))
}

/// Bytes in one constant bank: the CUDA C++ Programming Guide's "constant memory size" is 64 KB, and SASS
/// offsets address one bank.
pub const CBANK_BYTES: u32 = 0x1_0000;

/// Refuses a constant-bank offset past the bank (a typo such as `c[0x0][0x1600]0`).
pub fn check_cbank(bank: u32, offset: u32) -> Result<(), String> {
    if offset >= CBANK_BYTES {
        return Err(format!(
            "c[{bank:#x}][{offset:#x}]: offset {offset:#x} is past the end of the 64 KB constant bank (at most {:#x})",
            CBANK_BYTES - 4
        ));
    }
    Ok(())
}

/// The `--set` key of a constant-bank word.
pub fn cbank_key(bank: u32, offset: u32) -> String {
    format!("c[{bank:#x}][{offset:#x}]")
}

fn parse_u32(t: &str) -> Option<u32> {
    let t = t.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r.trim()),
        None => (false, t),
    };
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok()?,
        None => t.parse::<u64>().ok()?,
    };
    if v > u64::from(u32::MAX) {
        return None;
    }
    Some(if neg { (v as u32).wrapping_neg() } else { v as u32 })
}

/// A 32-bit word from `--set`: the word's own value, or the high half of the word below when that was given a
/// 64-bit value (so `c[0x0][0x160]=0x7000_0000_0000` sets 0x160 and 0x164, and `R4=...` sets R4 and R5).
fn wide_var(vars: &Vars, key: &str, below: Option<String>) -> Option<u32> {
    if let Some(&v) = vars.get(key) {
        return Some(v as u32);
    }
    let v = *vars.get(&below?)?;
    (v > i128::from(u32::MAX)).then_some((v >> 32) as u32)
}

/// A value, or why it is unknown.
#[derive(Clone, Debug, PartialEq)]
enum Operand {
    Reg { idx: Option<u32>, neg: bool, not: bool, abs: bool, wide: bool, cc: bool },
    UReg(Option<u32>),
    Pred { idx: Option<u32>, not: bool, uniform: bool },
    Imm(u32),
    FImm(f64),
    CBank(u32, u32),
    Special(String),
    Mem { base: Option<(Option<u32>, bool)>, ubase: Option<Option<u32>>, offset: i64 },
    Other,
}

#[derive(Clone, Debug)]
struct Line {
    no: usize,
    guard: Option<(Option<u32>, bool)>,
    opcode: String,
    mods: Vec<String>,
    ops: Vec<(Operand, Span)>,
    text: String,
    span: Span,
    mem_text: String,
}

fn parse_reg(t: &str) -> Option<Operand> {
    let (neg, t) = t.strip_prefix('-').map_or((false, t), |r| (true, r));
    let (not, t) = t.strip_prefix('~').map_or((false, t), |r| (true, r));
    let (abs, t) = match t.strip_prefix('|').and_then(|r| r.strip_suffix('|')) {
        Some(r) => (true, r),
        None => (false, t),
    };
    let mut parts = t.split('.');
    let name = parts.next()?;
    let mut wide = false;
    let mut cc = false;
    for m in parts {
        match m.to_ascii_uppercase().as_str() {
            "64" => wide = true,
            "CC" => cc = true,
            "REUSE" | "U32" | "H0" | "H1" | "B0" | "B1" | "B2" | "B3" | "X" | "Y" | "Z" | "W" => {}
            _ => return None,
        }
    }
    let up = name.to_ascii_uppercase();
    if up == "RZ" {
        return Some(Operand::Reg { idx: None, neg, not, abs, wide, cc });
    }
    if up == "URZ" {
        return Some(Operand::UReg(None));
    }
    if let Some(n) = up.strip_prefix("UR") {
        return n.parse::<u32>().ok().filter(|&i| i < 64).map(|i| Operand::UReg(Some(i)));
    }
    let n = up.strip_prefix('R')?;
    let idx = n.parse::<u32>().ok().filter(|&i| i < 256)?;
    Some(Operand::Reg { idx: Some(idx), neg, not, abs, wide, cc })
}

fn parse_pred(t: &str) -> Option<Operand> {
    let (not, t) = t.strip_prefix('!').map_or((false, t), |r| (true, r));
    let up = t.to_ascii_uppercase();
    match up.as_str() {
        "PT" => Some(Operand::Pred { idx: None, not, uniform: false }),
        "UPT" => Some(Operand::Pred { idx: None, not, uniform: true }),
        _ => {
            if let Some(n) = up.strip_prefix("UP") {
                n.parse::<u32>().ok().filter(|&i| i < 7).map(|i| Operand::Pred { idx: Some(i), not, uniform: true })
            } else {
                let n = up.strip_prefix('P')?;
                n.parse::<u32>().ok().filter(|&i| i < 7).map(|i| Operand::Pred { idx: Some(i), not, uniform: false })
            }
        }
    }
}

fn parse_operand(t: &str) -> Result<Operand, String> {
    let t = t.trim();
    if let Some(p) = parse_pred(t) {
        return Ok(p);
    }
    if let Some(r) = parse_reg(t) {
        return Ok(r);
    }
    if let Some((b, o)) = parse_cbank(t) {
        check_cbank(b, o)?;
        return Ok(Operand::CBank(b, o));
    }
    if t.to_ascii_uppercase().starts_with("SR_") || t.eq_ignore_ascii_case("SRZ") {
        return Ok(Operand::Special(t.to_ascii_uppercase()));
    }
    if let Some(v) = parse_u32(t) {
        return Ok(Operand::Imm(v));
    }
    if t.contains(['.', 'e', 'E']) && !t.contains('[') {
        if let Ok(f) = t.trim_end_matches(['f', 'F']).parse::<f64>() {
            return Ok(Operand::FImm(f));
        }
    }
    let bracket = t.rfind('[').map(|i| &t[i..]);
    if let Some(b) = bracket.filter(|b| b.ends_with(']')) {
        let inner = &b[1..b.len() - 1];
        let mut base = None;
        let mut ubase = None;
        let mut offset: i64 = 0;
        let normal = inner.replace('-', "+-");
        for term in normal.split('+').map(str::trim).filter(|s| !s.is_empty()) {
            let term = term.replace(' ', "");
            if let Some(Operand::Reg { idx, wide, neg: false, .. }) = parse_reg(&term) {
                if base.is_some() {
                    return Err(format!("two base registers in `{b}`"));
                }
                base = Some((idx, wide));
            } else if let Some(Operand::UReg(u)) = parse_reg(&term) {
                ubase = Some(u);
            } else {
                let (neg, digits) = term.strip_prefix('-').map_or((false, term.as_str()), |r| (true, r));
                let v = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
                    Some(h) => i64::from_str_radix(h, 16),
                    None => digits.parse::<i64>(),
                }
                .map_err(|_| format!("`{term}` is not a register or an offset in `{b}`"))?;
                if v >= 1 << 32 {
                    return Err(format!("the offset `{term}` is out of range"));
                }
                offset += if neg { -v } else { v };
            }
        }
        return Ok(Operand::Mem { base, ubase, offset });
    }
    Ok(Operand::Other)
}

/// Splits operands at top-level commas (not inside brackets).
fn split_operands(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push((start, &s[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push((start, &s[start..]));
    out.into_iter().filter(|(_, t)| !t.trim().is_empty()).collect()
}

/// Removes comments and annotations from one line, keeping byte positions (replaced by spaces).
fn clean(line: &str) -> String {
    let mut b: Vec<u8> = line.as_bytes().to_vec();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            let end = line[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            b[i..end].iter_mut().for_each(|c| *c = b' ');
            i = end;
        } else if b[i..].starts_with(b"//") {
            b[i..].iter_mut().for_each(|c| *c = b' ');
            break;
        } else {
            i += 1;
        }
    }
    let mut s = String::from_utf8_lossy(&b).into_owned();
    // `;` ends the instruction: drop it and what follows (encodings, annotations after it).
    if let Some(p) = s.find(';') {
        s.replace_range(p.., &" ".repeat(s.len() - p));
    }
    // Scheduling annotations: `?WAIT6`, `&wr0`, `&req_6`, `&rd1`, `{...}` braces.
    let bytes = s.clone();
    let mut out: Vec<u8> = bytes.as_bytes().to_vec();
    let mut j = 0;
    while j < out.len() {
        let c = out[j];
        if c == b'?' || (c == b'&' && out.get(j + 1).is_some_and(|n| n.is_ascii_alphabetic())) {
            while j < out.len() && !out[j].is_ascii_whitespace() {
                out[j] = b' ';
                j += 1;
            }
        } else if c == b'{' || c == b'}' {
            out[j] = b' ';
            j += 1;
        } else {
            j += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The instructions of a listing, with its labels and instruction addresses (branch targets).
struct Listing {
    lines: Vec<Line>,
    /// Label name -> the index of the instruction after it.
    labels: HashMap<String, usize>,
    /// `/*0040*/` address -> the index of its instruction.
    addrs: HashMap<u64, usize>,
}

fn parse_lines(src: &str) -> Result<Listing, InputError> {
    let mut lines = Vec::new();
    let mut labels = HashMap::new();
    let mut addrs = HashMap::new();
    let mut offset = 0usize;
    for (no, raw) in src.split('\n').enumerate() {
        let line_start = offset;
        offset += raw.len() + 1;
        let cleaned = clean(raw);
        let t = cleaned.trim();
        if let Some(label) = t.strip_suffix(':') {
            labels.insert(label.trim().to_string(), lines.len());
            continue;
        }
        if t.is_empty() || t.starts_with('.') {
            continue;
        }
        // cuobjdump and nvdisasm put the instruction's address first: `/*0040*/`.
        let addr = raw
            .trim_start()
            .strip_prefix("/*")
            .and_then(|r| r.split_once("*/"))
            .and_then(|(h, _)| u64::from_str_radix(h.trim(), 16).ok());
        if let Some(a) = addr {
            addrs.insert(a, lines.len());
        }
        let lead = cleaned.len() - cleaned.trim_start().len();
        let mut rest = t;
        let mut col = lead;
        let mut guard = None;
        if let Some(r) = rest.strip_prefix('@') {
            let end = r.find(char::is_whitespace).unwrap_or(r.len());
            let g = &r[..end];
            match parse_pred(g) {
                Some(Operand::Pred { idx, not, .. }) => guard = Some((idx, not)),
                _ => {
                    return Err(InputError::at(
                        src,
                        Span { start: line_start + col, end: line_start + col + end + 1 },
                        format!("`@{g}` is not a predicate guard (@P0, @!P1, @PT)"),
                    ))
                }
            }
            let skip = 1 + end;
            let r2 = &rest[skip..];
            col += skip + (r2.len() - r2.trim_start().len());
            rest = r2.trim_start();
        }
        let op_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let mnemonic = &rest[..op_end];
        // Header and other lines that are not instructions: an opcode is upper-case letters, digits, `.`, `_`.
        let is_opcode = mnemonic.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && mnemonic.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '.' || c == '_');
        if !is_opcode {
            if guard.is_none() {
                let first = mnemonic.to_ascii_lowercase();
                if matches!(first.as_str(), "function" | "code" | "arch" | "headerflags" | "......" | "fatbin" | "elf")
                    || first.starts_with("....")
                {
                    continue;
                }
            }
            return Err(InputError::at(
                src,
                Span { start: line_start + col, end: line_start + col + mnemonic.len().max(1) },
                format!("`{mnemonic}` is not a SASS instruction (opcodes are upper case, e.g. LDG.E.32)"),
            ));
        }
        let mut parts = mnemonic.split('.');
        let opcode = parts.next().unwrap_or("").to_string();
        let mods: Vec<String> = parts.map(str::to_string).collect();
        let operand_text = &rest[op_end..];
        let ops_start = line_start + col + op_end;
        let mut ops = Vec::new();
        let mut mem_text = String::new();
        for (off, o) in split_operands(operand_text) {
            let lead = o.len() - o.trim_start().len();
            let span = Span { start: ops_start + off + lead, end: ops_start + off + o.trim_end().len() };
            let parsed = parse_operand(o).map_err(|m| InputError::at(src, span, m))?;
            if matches!(parsed, Operand::Mem { .. }) {
                mem_text = o.trim().to_string();
            }
            ops.push((parsed, span));
        }
        lines.push(Line {
            no: no + 1,
            guard,
            opcode,
            mods,
            ops,
            text: rest.trim().to_string(),
            span: Span { start: line_start + col, end: line_start + col + rest.len() },
            mem_text,
        });
        if lines.len() > MAX_LINES {
            return Err(InputError::at(
                src,
                Span { start: line_start, end: line_start + 1 },
                format!("more than {MAX_LINES} instructions"),
            ));
        }
    }
    Ok(Listing { lines, labels, addrs })
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

// ----------------------------------------------------------------------------------------------------------
// Lowering: each SASS instruction becomes a few typed operations of the program (see `crate::program`).
// SASS registers are 32 bits: each R, UR and P gets a register or predicate of its own, holding its value
// zero-extended; 64-bit values (.WIDE results, [R2.64] addresses, constant pairs) are formed from pairs.
// ----------------------------------------------------------------------------------------------------------

type R<T> = Result<T, InputError>;

const MEMORY_OPS: [&str; 8] = ["LDG", "STG", "LD", "ST", "LDS", "STS", "LDL", "STL"];
/// Instructions that change nothing warpscope follows: scheduling, barriers for convergence (the machine
/// reconverges at post-dominators by itself), fences, cache control.
const NO_EFFECT: [&str; 17] = [
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
        if let (Src::Imm(x), Src::Imm(y)) = (a, b) {
            if let Some(v) = exec::bin(op, w, x, y) {
                return Src::Imm(v);
            }
        }
        let d = self.tmp();
        self.emit(Op::Bin { op, w, dst: d, a, b });
        Src::Reg(d)
    }

    fn zext(&mut self, a: Src) -> Src {
        match a {
            Src::Imm(v) => Src::Imm(v & 0xFFFF_FFFF),
            _ => {
                let d = self.tmp();
                self.emit(Op::Conv { dst: d, a, bits: 32, signed: false });
                Src::Reg(d)
            }
        }
    }

    fn sext(&mut self, a: Src) -> Src {
        match a {
            Src::Imm(v) => Src::Imm(exec::conv(v, 32, true)),
            _ => {
                let d = self.tmp();
                self.emit(Op::Conv { dst: d, a, bits: 32, signed: true });
                Src::Reg(d)
            }
        }
    }

    fn unknown(&mut self, why: String) -> Src {
        let w = self.b.why(why);
        let d = self.tmp();
        self.emit(Op::Unknown { dst: d, why: w });
        Src::Reg(d)
    }

    /// A constant-bank word: `--set`, the launch defaults, or unknown.
    fn cbank(&mut self, bank: u32, off: u32) -> Src {
        let key = cbank_key(bank, off);
        if let Some(v) = wide_var(self.vars, &key, off.checked_sub(4).map(|p| cbank_key(bank, p))) {
            return Src::Imm(u64::from(v));
        }
        let l = &self.launch;
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
            None => self.unknown(format!("the constant {key} has no value (give it one with --set {key}=VALUE)")),
        }
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
            Operand::Imm(v) => Src::Imm(u64::from(*v)),
            Operand::CBank(b, off) => self.cbank(*b, *off),
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
            Operand::CBank(b, off) => (self.cbank(*b, *off), self.cbank(*b, off + 4)),
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
        let why = |r: &str| format!("{r} was written by {} at line {}, which warpscope does not model", l.opcode, l.no);
        for d in destinations(l) {
            match d {
                Operand::Reg { idx: Some(i), .. } => {
                    let w = self.b.why(why(&format!("R{i}")));
                    let r = self.reg(i);
                    self.emit(Op::Unknown { dst: r, why: w });
                }
                Operand::UReg(Some(i)) => {
                    let w = self.b.why(why(&format!("UR{i}")));
                    let r = self.ureg(i);
                    self.emit(Op::Unknown { dst: r, why: w });
                }
                Operand::Pred { idx: Some(i), uniform, .. } => {
                    let v = self.unknown(why(&format!("{}P{i}", if uniform { "U" } else { "" })));
                    self.set(&d, v);
                }
                _ => {}
            }
        }
    }
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

/// Lowers SASS into a program.
pub fn lower(src: &str, launch: Launch, vars: &Vars) -> Result<Program, InputError> {
    if src.len() > super::lex::MAX_INPUT_BYTES {
        return Err(InputError::at(src, Span { start: 0, end: 1 }, "the input is larger than 1 MB"));
    }
    let listing = parse_lines(src)?;
    let lines = &listing.lines;
    if lines.is_empty() {
        return Err(InputError::at(
            src,
            Span { start: 0, end: 1 },
            "no SASS instructions: paste lines such as `LDG.E.32 R0, [R2];`",
        ));
    }
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
        span: Span { start: 0, end: 1 },
        no: 0,
    };
    lw.cc = lw.b.reg();
    lw.lea_lo = lw.b.reg();
    // The start: every register and predicate the listing names gets its `--set` value or becomes unknown.
    let mut gprs = std::collections::BTreeSet::new();
    let mut urs = std::collections::BTreeSet::new();
    for l in lines {
        for (o, _) in &l.ops {
            match o {
                Operand::Reg { idx: Some(i), .. } => gprs.extend(*i..(i + 4).min(256)),
                Operand::UReg(Some(i)) => urs.extend(*i..(i + 2).min(64)),
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
    // One label per instruction, for branches.
    let labels: Vec<Label> = (0..lines.len()).map(|_| lw.b.label()).collect();
    let end_label = lw.b.label();
    for (k, l) in lines.iter().enumerate() {
        lw.b.place(labels[k]);
        lw.guard = l.guard.map(|(idx, not)| match idx {
            None => PredRef { idx: None, neg: not },
            Some(i) => PredRef { idx: Some(lw.pred_reg(i, false)), neg: not },
        });
        lw.span = l.span;
        lw.no = l.no;
        let mark = lw.b.temps_mark();
        let target = |lw: &Lower, l: &Line| -> R<Label> {
            let found = l.ops.iter().find_map(|(o, sp)| {
                let raw = &lw.src[sp.start.min(lw.src.len())..sp.end.min(lw.src.len())];
                let name = raw.trim().trim_start_matches('`').trim_start_matches('(').trim_end_matches(')').trim();
                let by_label = listing.labels.get(name).copied();
                let by_addr = match o {
                    Operand::Imm(a) => listing.addrs.get(&u64::from(*a)).copied(),
                    _ => None,
                };
                by_label.or(by_addr)
            });
            match found {
                Some(i) => Ok(labels.get(i).copied().unwrap_or(end_label)),
                None => Err(lw.err(
                    l.span,
                    format!("{}: the branch target is not a label or an address of this listing", l.opcode),
                )),
            }
        };
        if MEMORY_OPS.contains(&l.opcode.as_str()) {
            memory(&mut lw, l, k)?;
        } else {
            match l.opcode.as_str() {
                "BRA" | "JMP" => {
                    let t = target(&lw, l)?;
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
                    let found = lines[..k].iter().rev().find_map(|o| {
                        if o.opcode != opener {
                            return None;
                        }
                        let t = target(&lw, o).ok()?;
                        let at = labels.iter().position(|x| *x == t).unwrap_or(lines.len());
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
                "CALL" | "RET" | "BRX" | "JMX" | "BPT" => {
                    let c = lw.b.ctx(format!(
                        "{} at line {} is reached: warpscope does not follow calls, returns or indirect branches",
                        l.opcode, l.no
                    ));
                    lw.emit(Op::Trap { ctx: c });
                }
                op if NO_EFFECT.contains(&op) => {}
                _ => execute(&mut lw, l)?,
            }
        }
        lw.b.release(mark);
    }
    lw.b.place(end_label);
    Ok(lw.b.finish())
}

fn memory(lw: &mut Lower, l: &Line, k: usize) -> R<()> {
    let text = std::iter::once(l.opcode.clone()).chain(l.mods.iter().cloned()).collect::<Vec<_>>().join(".");
    let mut instr = Instr::parse(&text).map_err(|e| {
        InputError::at(lw.src, Span { start: l.span.start + e.column, end: l.span.start + e.column + e.len }, e.message)
    })?;
    let Some((mem_idx, (Operand::Mem { base, ubase, offset }, mem_span))) =
        l.ops.iter().enumerate().find(|(_, (o, _))| matches!(o, Operand::Mem { .. }))
    else {
        return Err(lw.err(l.span, format!("{} needs an address operand such as [R2] or [R2+0x10]", l.opcode)));
    };
    let (base, ubase, offset, mem_span) = (*base, *ubase, *offset, *mem_span);
    // Errors about the address point at the address operand.
    lw.span = mem_span;
    if let Some((_, true)) = base {
        instr.extended = true;
    }
    let wide = |w: bool| instr.extended || w;
    let mut addr: Src = match base {
        None => ZERO,
        Some((idx, w)) if wide(w) => {
            let r = Operand::Reg { idx, neg: false, not: false, abs: false, wide: true, cc: false };
            lw.pair(&r, mem_span)?
        }
        Some((None, _)) => ZERO,
        Some((Some(i), _)) => Src::Reg(lw.reg(i)),
    };
    if let Some(u) = ubase {
        let uv = match u {
            None => ZERO,
            Some(i) => Src::Reg(lw.ureg(i)),
        };
        addr = lw.bin(BinOp::Add, Width::W64, addr, uv);
    }
    addr = lw.bin(BinOp::Add, Width::W64, addr, Src::Imm(offset as u64));
    if instr.address_bits() == 32 {
        addr = lw.bin(BinOp::And, Width::W64, addr, Src::Imm(0xFFFF_FFFF));
    }
    let addr = match addr {
        Src::Reg(r) => r,
        imm => {
            let r = lw.tmp();
            lw.emit(Op::Mov { dst: r, a: imm });
            r
        }
    };
    // An explicit Plg predicate after the address (generic LD/ST, seeds/004).
    let plg = match (instr.base.fixed_space(), l.ops.get(mem_idx + 1).or_else(|| l.ops.get(mem_idx + 2))) {
        (None, Some((o @ Operand::Pred { .. }, _))) => lw.pred_ref(o),
        _ => None,
    };
    let store = instr.is_store();
    let site = lw.b.site(
        (k, 0),
        Site { line: l.no, text: l.text.clone(), access: l.mem_text.clone(), instr: instr.clone(), notes: Vec::new() },
    );
    let ctx = lw.b.ctx(format!("the address of this {} depends on a value warpscope does not know: ", l.opcode));
    lw.emit(Op::Mem { site, addr, plg, ctx, data: None });
    if !store {
        if let Some((Operand::Reg { idx: Some(i), .. }, _)) = l.ops.first() {
            for r in 0..instr.size_bytes.div_ceil(4) {
                let w = lw.b.why(format!("R{} holds data loaded at line {}", i + r, l.no));
                let d = lw.reg(i + r);
                lw.emit(Op::Unknown { dst: d, why: w });
            }
        }
    }
    Ok(())
}

fn execute(lw: &mut Lower, l: &Line) -> R<()> {
    let op = |i: usize| l.ops.get(i).map(|(o, _)| o.clone()).unwrap_or(Operand::Other);
    let sp = |i: usize| l.ops.get(i).map_or(l.span, |(_, s)| *s);
    let need = |lw: &Lower, n: usize| -> R<()> {
        if l.ops.len() < n {
            Err(lw.err(l.span, format!("{} needs {n} operands, found {}", l.opcode, l.ops.len())))
        } else {
            Ok(())
        }
    };
    let dest = op(0);
    let writes_cc = matches!(dest, Operand::Reg { cc: true, .. });
    match l.opcode.as_str() {
        "S2R" | "CS2R" | "S2UR" => {
            need(lw, 2)?;
            let v = lw.val(&op(1), sp(1))?;
            if l.opcode == "CS2R" && !has(l, "32") {
                let v = lw.zext(v);
                lw.set_pair(&dest, v);
            } else {
                lw.set(&dest, v);
            }
        }
        "HFMA2" if matches!((op(1), op(2)), (Operand::Reg { idx: None, .. }, Operand::Reg { idx: None, .. })) => {
            // `HFMA2.MMA Rd, -RZ, RZ, a, b`: 0 * 0 + (a, b) as two halves, nvcc's way to load a constant.
            need(lw, 5)?;
            let half = |o: &Operand| match o {
                Operand::FImm(f) => Some(u64::from(f16_bits(*f))),
                Operand::Imm(v) => Some(u64::from(f16_bits(f64::from(*v)))),
                _ => None,
            };
            match (half(&op(3)), half(&op(4))) {
                (Some(a), Some(b)) => lw.set(&dest, Src::Imm(a << 16 | b)),
                _ => lw.unmodelled(l),
            }
        }
        "ULDC" | "LDC" if matches!(op(1), Operand::CBank(..)) => {
            need(lw, 2)?;
            if has(l, "64") {
                let v = lw.pair(&op(1), sp(1))?;
                lw.set_pair(&dest, v);
            } else {
                let v = lw.val(&op(1), sp(1))?;
                lw.set(&dest, v);
            }
        }
        "MOV" | "MOV32I" | "UMOV" => {
            need(lw, 2)?;
            let v = lw.val(&op(1), sp(1))?;
            lw.set(&dest, v);
        }
        "IADD" | "IADD32I" => {
            need(lw, 3)?;
            let a = lw.val(&op(1), sp(1))?;
            let b = lw.val(&op(2), sp(2))?;
            let (a, b) = (lw.zext(a), lw.zext(b));
            let mut s = lw.bin(BinOp::Add, Width::W64, a, b);
            if has(l, "X") {
                s = lw.bin(BinOp::Add, Width::W64, s, Src::Reg(lw.cc));
            }
            if writes_cc {
                let c = lw.bin(BinOp::ShrU, Width::W64, s, Src::Imm(32));
                let cc = lw.cc;
                lw.emit(Op::Mov { dst: cc, a: c });
            }
            lw.set(&dest, s);
        }
        "VIADD" => {
            need(lw, 3)?;
            let a = lw.val(&op(1), sp(1))?;
            let b = lw.val(&op(2), sp(2))?;
            let s = lw.bin(BinOp::Add, Width::W32, a, b);
            lw.set(&dest, s);
        }
        "IADD3" | "UIADD3" => {
            // IADD3 Rd, [Pc0, [Pc1,]] Ra, Rb, Rc [, Pcin0, Pcin1]
            let mut rest: Vec<(Operand, Span)> = l.ops.iter().skip(1).cloned().collect();
            let mut carry_outs = Vec::new();
            while matches!(rest.first(), Some((Operand::Pred { .. }, _))) && rest.len() > 3 {
                carry_outs.push(rest.remove(0).0);
            }
            if rest.len() < 3 {
                return Err(lw.err(l.span, "IADD3 needs three source operands"));
            }
            let x = has(l, "X");
            let mut s = ZERO;
            for (o, span) in &rest[..3] {
                let v = match o {
                    // -R in a carry chain is ~R + 1.
                    Operand::Reg { neg: true, idx, .. } if !x => {
                        let r = match idx {
                            None => ZERO,
                            Some(i) => Src::Reg(lw.reg(*i)),
                        };
                        let n = lw.bin(BinOp::Xor, Width::W32, r, Src::Imm(0xFFFF_FFFF));
                        let n = lw.zext(n);
                        lw.bin(BinOp::Add, Width::W64, n, Src::Imm(1))
                    }
                    _ => {
                        let v = lw.val(o, *span)?;
                        lw.zext(v)
                    }
                };
                s = lw.bin(BinOp::Add, Width::W64, s, v);
            }
            if x {
                for (o, span) in &rest[3..] {
                    let v = lw.val(o, *span)?;
                    s = lw.bin(BinOp::Add, Width::W64, s, v);
                }
            }
            let hi = lw.bin(BinOp::ShrU, Width::W64, s, Src::Imm(32));
            for (i, p) in carry_outs.iter().enumerate() {
                let c = lw_gt(lw, hi, i as u64);
                lw.set(p, c);
            }
            lw.set(&dest, s);
        }
        "XMAD" => lw.unmodelled(l),
        "IMAD" | "IMUL" | "IMUL32I" | "UIMAD" => {
            // IMAD Rd, [Pcarry,] Ra, Rb, Rc [, Pcin]; IMUL Rd, Ra, Rb.
            let mut rest: Vec<(Operand, Span)> = l.ops.iter().skip(1).cloned().collect();
            let carry_out =
                if matches!(rest.first(), Some((Operand::Pred { .. }, _))) { Some(rest.remove(0).0) } else { None };
            let mul_only = l.opcode.starts_with("IMUL");
            if rest.len() < if mul_only { 2 } else { 3 } {
                return Err(lw.err(l.span, format!("{} needs more operands", l.opcode)));
            }
            let signed = !has(l, "U32") && !has(l, "MOV") && !has(l, "SHL");
            let wide = has(l, "WIDE");
            let hi = has(l, "HI");
            let a = lw.val(&rest[0].0, rest[0].1)?;
            let b = lw.val(&rest[1].0, rest[1].1)?;
            let cin = if has(l, "X") {
                match rest.get(3) {
                    Some((p @ Operand::Pred { .. }, s)) => lw.val(p, *s)?,
                    _ => Src::Reg(lw.cc),
                }
            } else {
                ZERO
            };
            let (a, b) = if signed && wide { (lw.sext(a), lw.sext(b)) } else { (lw.zext(a), lw.zext(b)) };
            let product = lw.bin(BinOp::Mul, Width::W64, a, b);
            if wide {
                let c = if mul_only { ZERO } else { lw.pair(&rest[2].0, rest[2].1)? };
                let r = lw.bin(BinOp::Add, Width::W64, product, c);
                let r = lw.bin(BinOp::Add, Width::W64, r, cin);
                lw.set_pair(&dest, r);
            } else {
                let c = if mul_only {
                    ZERO
                } else {
                    let c = lw.val(&rest[2].0, rest[2].1)?;
                    lw.zext(c)
                };
                let p = if hi { lw.bin(BinOp::ShrU, Width::W64, product, Src::Imm(32)) } else { product };
                let full = lw.bin(BinOp::Add, Width::W64, p, c);
                let full = lw.bin(BinOp::Add, Width::W64, full, cin);
                let carry = lw.bin(BinOp::ShrU, Width::W64, full, Src::Imm(32));
                let carry = lw.bin(BinOp::MinU, Width::W64, carry, Src::Imm(1));
                if let Some(p) = carry_out {
                    lw.set(&p, carry);
                }
                if writes_cc {
                    let cc = lw.cc;
                    lw.emit(Op::Mov { dst: cc, a: carry });
                }
                lw.set(&dest, full);
            }
        }
        "ISCADD" | "ISCADD32I" => {
            need(lw, 4)?;
            let a = lw.val(&op(1), sp(1))?;
            let b = lw.val(&op(2), sp(2))?;
            let s = lw.val(&op(3), sp(3))?;
            let s = lw.bin(BinOp::And, Width::W32, s, Src::Imm(31));
            let sh = lw.bin(BinOp::Shl, Width::W32, a, s);
            let r = lw.bin(BinOp::Add, Width::W32, sh, b);
            lw.set(&dest, r);
        }
        "SHL" | "SHR" => {
            need(lw, 3)?;
            let a = lw.val(&op(1), sp(1))?;
            let s = lw.val(&op(2), sp(2))?;
            let kind = match (l.opcode.as_str(), has(l, "U32")) {
                ("SHL", _) => BinOp::Shl,
                (_, false) => BinOp::ShrS,
                _ => BinOp::ShrU,
            };
            let r = lw.bin(kind, Width::W32, a, s);
            lw.set(&dest, r);
        }
        "SHF" | "USHF" => {
            need(lw, 4)?;
            let lo = lw.val(&op(1), sp(1))?;
            let s = lw.val(&op(2), sp(2))?;
            let hiw = lw.val(&op(3), sp(3))?;
            let v = lw.join(lo, hiw);
            let s = lw.bin(BinOp::And, Width::W64, s, Src::Imm(63));
            let kind = if has(l, "L") {
                BinOp::Shl
            } else if has(l, "S32") || has(l, "S64") {
                BinOp::ShrS
            } else {
                BinOp::ShrU
            };
            let shifted = lw.bin(kind, Width::W64, v, s);
            let r = if has(l, "HI") { lw.bin(BinOp::ShrU, Width::W64, shifted, Src::Imm(32)) } else { shifted };
            lw.set(&dest, r);
        }
        "LOP" | "LOP32I" | "ULOP" => {
            need(lw, 3)?;
            let a = lw.val(&op(1), sp(1))?;
            let b = lw.val(&op(2), sp(2))?;
            let r = if has(l, "AND") {
                lw.bin(BinOp::And, Width::W32, a, b)
            } else if has(l, "OR") {
                lw.bin(BinOp::Or, Width::W32, a, b)
            } else if has(l, "XOR") {
                lw.bin(BinOp::Xor, Width::W32, a, b)
            } else {
                b
            };
            lw.set(&dest, r);
        }
        "LOP3" | "ULOP3" => {
            // LOP3.LUT [Pd,] Rd, Ra, Rb, Rc, lut [, Pq]: with a predicate first, Pd = (result != 0).
            let pd = matches!(dest, Operand::Pred { .. });
            let first = usize::from(pd);
            need(lw, first + 5)?;
            let Operand::Imm(lut) = op(first + 4) else {
                lw.unmodelled(l);
                return Ok(());
            };
            let a = lw.val(&op(first + 1), sp(first + 1))?;
            let b = lw.val(&op(first + 2), sp(first + 2))?;
            let c = lw.val(&op(first + 3), sp(first + 3))?;
            let not = |lw: &mut Lower, v: Src| lw.bin(BinOp::Xor, Width::W32, v, Src::Imm(0xFFFF_FFFF));
            let (na, nb, nc) = (not(lw, a), not(lw, b), not(lw, c));
            let mut out = ZERO;
            for k in 0..8u32 {
                if lut & (1 << k) != 0 {
                    let pa = if k & 4 != 0 { a } else { na };
                    let pb = if k & 2 != 0 { b } else { nb };
                    let pc = if k & 1 != 0 { c } else { nc };
                    let t = lw.bin(BinOp::And, Width::W32, pa, pb);
                    let t = lw.bin(BinOp::And, Width::W32, t, pc);
                    out = lw.bin(BinOp::Or, Width::W32, out, t);
                }
            }
            if pd {
                lw.set(&dest, out);
                lw.set(&op(1), out);
            } else {
                lw.set(&dest, out);
            }
        }
        "BFE" => {
            need(lw, 3)?;
            let Operand::Imm(ctl) = op(2) else {
                lw.unmodelled(l);
                return Ok(());
            };
            let a = lw.val(&op(1), sp(1))?;
            let (pos, len) = (ctl & 0xff, (ctl >> 8) & 0xff);
            let r = if len == 0 || pos >= 32 {
                ZERO
            } else {
                let len = len.min(32 - pos);
                // Move the field to the top, then shift it down (arithmetically for BFE.S32).
                let up = lw.bin(BinOp::Shl, Width::W32, a, Src::Imm(u64::from(32 - len - pos)));
                let kind = if has(l, "U32") { BinOp::ShrU } else { BinOp::ShrS };
                lw.bin(kind, Width::W32, up, Src::Imm(u64::from(32 - len)))
            };
            lw.set(&dest, r);
        }
        "SEL" | "USEL" => {
            need(lw, 4)?;
            let a = lw.val(&op(1), sp(1))?;
            let b = lw.val(&op(2), sp(2))?;
            let p = lw.pred_ref(&op(3));
            match p {
                Some(p) => {
                    let d = lw.tmp();
                    lw.emit(Op::Sel { dst: d, p, a, b });
                    lw.set(&dest, Src::Reg(d));
                }
                None => {
                    let c = lw.val(&op(3), sp(3))?;
                    let p = lw.b.pred();
                    lw.emit(Op::Setp { dst: p, cmp: Cmp::Ne, signed: false, w: Width::W64, a: c, b: ZERO });
                    let d = lw.tmp();
                    lw.emit(Op::Sel { dst: d, p: PredRef::of(p), a, b });
                    lw.set(&dest, Src::Reg(d));
                }
            }
        }
        "ISETP" | "UISETP" => {
            need(lw, 5)?;
            if has(l, "EX") {
                // The extended (64-bit) compare chains with the previous compare through its predicate
                // input; warpscope does not follow that yet, so what it writes is unknown.
                lw.unmodelled(l);
                return Ok(());
            }
            let cmp = match l.mods.first().map(String::as_str) {
                Some("LT") => Cmp::Lt,
                Some("LE") => Cmp::Le,
                Some("GT") => Cmp::Gt,
                Some("GE") => Cmp::Ge,
                Some("EQ") => Cmp::Eq,
                Some("NE") => Cmp::Ne,
                other => {
                    return Err(lw.err(l.span, format!("ISETP.{} is not modelled", other.unwrap_or(""))));
                }
            };
            let signed = !has(l, "U32");
            let a = lw.val(&op(2), sp(2))?;
            let b = lw.val(&op(3), sp(3))?;
            let c = lw.pred_ref(&op(4)).unwrap_or(PredRef::TRUE);
            let t = lw.b.pred();
            lw.emit(Op::Setp { dst: t, cmp, signed, w: Width::W32, a, b });
            let combine = if has(l, "OR") {
                PredOp::Or
            } else if has(l, "XOR") {
                PredOp::Xor
            } else {
                PredOp::And
            };
            for (k, v) in [(0usize, PredRef::of(t)), (1, PredRef::not(t))] {
                if let Operand::Pred { idx: Some(i), uniform, .. } = op(k) {
                    let d = lw.pred_reg(i, uniform);
                    lw.emit(Op::PredLogic { dst: d, op: combine, a: v, b: c });
                }
            }
        }
        "LEA" | "ULEA" => lea(lw, l)?,
        _ => lw.unmodelled(l),
    }
    Ok(())
}

/// 1 when `hi > i`, else 0 (IADD3's carries: `hi` is the high word of the three-way sum).
fn lw_gt(lw: &mut Lower, hi: Src, i: u64) -> Src {
    let d = lw.bin(BinOp::Sub, Width::W64, hi, Src::Imm(i));
    // hi - i when hi > i, else 0 (hi is at most 2): min with 1 gives the flag.
    let z = lw.bin(BinOp::MaxS, Width::W64, d, ZERO);
    lw.bin(BinOp::MinU, Width::W64, z, Src::Imm(1))
}

fn imm(o: &Operand) -> u32 {
    match o {
        Operand::Imm(v) => *v,
        _ => 0,
    }
}

/// LEA and LEA.HI as seeds/003 defines them, and the current `LEA Rd, Pcarry, Ra, Sb, scale` form.
fn lea(lw: &mut Lower, l: &Line) -> R<()> {
    let mut ops: Vec<(Operand, Span)> = l.ops.clone();
    let hi = has(l, "HI");
    let x = has(l, "X");
    // Seeds' form: `LEA{.HI}{.X} Plg, Rd, ...`: a predicate first is Plg.
    let plg = if matches!(ops.first(), Some((Operand::Pred { .. }, _))) { Some(ops.remove(0).0) } else { None };
    let Some((dest, dest_span)) = ops.first().cloned() else {
        return Err(lw.err(l.span, "LEA needs a destination register"));
    };
    ops.remove(0);
    let writes_cc = matches!(dest, Operand::Reg { cc: true, .. });
    if writes_cc && plg.is_some() {
        return Err(lw.err(dest_span, "LEA can write at most one of CC and Plg (seeds/003)"));
    }
    // Current form: a predicate right after Rd is the carry out.
    let carry_out = if matches!(ops.first(), Some((Operand::Pred { .. }, _))) { Some(ops.remove(0).0) } else { None };
    // Current form: with .X, a trailing predicate is the carry in.
    let carry_in_pred =
        if x && matches!(ops.last(), Some((Operand::Pred { .. }, _))) { ops.pop().map(|o| o.0) } else { None };
    let is_imm = |o: &Operand| matches!(o, Operand::Imm(_));
    // Ra, Sb, [Rc], [scale].
    let ((ra, ra_s), (sb, sb_s), rc, scale) = match (hi, ops.as_slice()) {
        (false, [a, b]) => (a.clone(), b.clone(), None, 0),
        (false, [a, b, (Operand::Imm(s), _)]) => (a.clone(), b.clone(), None, *s),
        (true, [a, b, (s, _)]) if is_imm(s) => (a.clone(), b.clone(), None, imm(s)),
        (true, [a, b, c]) => (a.clone(), b.clone(), Some(c.clone()), 0),
        (true, [a, b, c, (Operand::Imm(s), _)]) => (a.clone(), b.clone(), Some(c.clone()), *s),
        (true, [a, b]) => (a.clone(), b.clone(), None, 0),
        _ => {
            return Err(lw.err(
                l.span,
                if hi {
                    "LEA.HI takes [Plg,] Rd, [-]Ra, Sb, [Rc,] [scale] (Rc defaults to RZ, scale to 0)"
                } else {
                    "LEA takes [Plg,] Rd, [-]Ra, Sb[, scale]; Rc cannot be given with LEA.LO (seeds/003)"
                },
            ))
        }
    };
    if scale > 31 {
        return Err(lw.err(l.span, format!("the scale #{scale} is out of range: ScaleU05 is 0..31")));
    }
    let negate = matches!(ra, Operand::Reg { neg: true, .. });
    let plain = |o: &Operand| match o {
        Operand::Reg { idx, .. } => {
            Operand::Reg { idx: *idx, neg: false, not: false, abs: false, wide: false, cc: false }
        }
        other => other.clone(),
    };
    let cin = if x {
        match &carry_in_pred {
            Some(p) => lw.val(p, l.span)?,
            None => Src::Reg(lw.cc),
        }
    } else {
        ZERO
    };
    let a = lw.val(&plain(&ra), ra_s)?;
    let b = lw.val(&sb, sb_s)?;
    let b = lw.zext(b);
    let sum = if hi {
        let c = match &rc {
            Some((rc, s)) => lw.val(&plain(rc), *s)?,
            None => ZERO,
        };
        let mut off = lw.join(a, c);
        if negate {
            off = lw.bin(BinOp::Sub, Width::W64, ZERO, off);
        }
        // The high word of (off << scale): bits 32-scale .. 64-scale of off.
        let high = lw.bin(BinOp::ShrU, Width::W64, off, Src::Imm(u64::from(32 - scale)));
        let high = lw.zext(high);
        let s = lw.bin(BinOp::Add, Width::W64, high, b);
        lw.bin(BinOp::Add, Width::W64, s, cin)
    } else {
        let off = if negate { lw.bin(BinOp::Sub, Width::W32, ZERO, a) } else { a };
        let scaled = lw.bin(BinOp::Shl, Width::W32, off, Src::Imm(u64::from(scale)));
        let s = lw.bin(BinOp::Add, Width::W64, scaled, b);
        lw.bin(BinOp::Add, Width::W64, s, cin)
    };
    let value = lw.zext(sum);
    let carry = lw.bin(BinOp::ShrU, Width::W64, sum, Src::Imm(32));
    if writes_cc {
        let cc = lw.cc;
        lw.emit(Op::Mov { dst: cc, a: carry });
    }
    if let Some(p) = &carry_out {
        lw.set(p, carry);
    }
    if let Some(p) = &plg {
        // Plg = !(the effective address lies in the shared window). A 32-bit (LEA.LO) result can never be in
        // the window, which sits above 4 GB; LEA.HI checks the 64-bit address it forms with the preceding
        // LEA.LO's low half.
        if hi {
            let lo = Src::Reg(lw.lea_lo);
            let addr = lw.join(lo, value);
            let base = vars_window(lw.vars);
            let off = lw.bin(BinOp::Sub, Width::W64, addr, Src::Imm(base));
            let q = lw.b.pred();
            lw.emit(Op::Setp {
                dst: q,
                cmp: Cmp::Ge,
                signed: false,
                w: Width::W64,
                a: off,
                b: Src::Imm(crate::engine::WINDOW_BYTES),
            });
            lw.set_pred(p, PredRef::of(q));
        } else {
            lw.set_pred(p, PredRef::TRUE);
        }
    }
    if !hi {
        let r = lw.lea_lo;
        lw.emit(Op::Mov { dst: r, a: value });
    }
    lw.set(&dest, value);
    Ok(())
}

fn vars_window(vars: &Vars) -> u64 {
    vars.get("shared_window").map_or(DEFAULT_SHARED_WINDOW, |&v| v as u64)
}
