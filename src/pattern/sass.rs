//! SASS snippets, as `cuobjdump -sass` / `nvdisasm` print them and as the instruction pages write them, run
//! by a per-thread register machine.
//!
//! Accepted and ignored: `/*0040*/` addresses, encodings in comments, trailing `;`, scheduling and barrier
//! annotations (`?WAIT6`, `&wr0`, `&req_6`, `{...}`), labels, and header lines (`Function : ...`). Known
//! instructions: S2R, CS2R, S2UR, MOV, MOV32I, UMOV, IADD, IADD32I, IADD3, IMAD (.WIDE, .WIDE.U32, .HI, .X,
//! .MOV, .SHL, .IADD), IMUL, ISCADD, SHL, SHR, SHF, LOP, LOP32I, LOP3.LUT, BFE, SEL, ISETP, LEA and LEA.HI
//! (seeds/003: `.X`, `.CC` carry chains, negated offsets, omitted Rc, constant-bank operands and the `Plg`
//! shared-window predicate, and the current `LEA Rd, Pcarry, ...` form), EXIT, and the memory instructions
//! LDG/LDS/LDL/LD/ST/STG/STS/STL. Any other instruction is fine until an address depends on a register it
//! wrote: then the error says which instruction that was.
//!
//! Registers and constant-bank words start unknown unless `--set` gives them (`R4=0x1000`,
//! `c[0x0][0x160]=0x7f0000000000`). By default `c[0x0][0x0..0x14]` hold blockDim and gridDim and
//! `c[0x0][0x20]` / `c[0x0][0x28]` the initial stack pointer (local offset 0xfffc00), as on current GPUs.

use super::expr::Vars;
use super::{InputError, Span};
use crate::access::Instr;
use crate::engine::DEFAULT_SHARED_WINDOW;
use crate::launch::{Launch, Thread};
use crate::report::Note;
use crate::trace::{Site, Trace, TraceBuilder};
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
type V = Result<u32, String>;

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

fn parse_lines(src: &str) -> Result<Vec<Line>, InputError> {
    let mut lines = Vec::new();
    let mut offset = 0usize;
    for (no, raw) in src.split('\n').enumerate() {
        let line_start = offset;
        offset += raw.len() + 1;
        let cleaned = clean(raw);
        let t = cleaned.trim();
        if t.is_empty() || t.ends_with(':') || t.starts_with('.') {
            continue;
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
    Ok(lines)
}

struct Machine<'a> {
    src: &'a str,
    launch: Launch,
    thread: Thread,
    vars: &'a Vars,
    regs: HashMap<u32, V>,
    uregs: HashMap<u32, V>,
    preds: [Option<bool>; 7],
    upreds: [Option<bool>; 7],
    cc_carry: V,
    lea_lo: V,
}

type R<T> = Result<T, InputError>;

impl Machine<'_> {
    fn err(&self, span: Span, msg: impl Into<String>) -> InputError {
        InputError::at(self.src, span, msg)
    }

    fn reg(&self, idx: Option<u32>) -> V {
        match idx {
            None => Ok(0),
            Some(i) => self.regs.get(&i).cloned().unwrap_or_else(|| {
                match wide_var(self.vars, &format!("R{i}"), i.checked_sub(1).map(|p| format!("R{p}"))) {
                    Some(v) => Ok(v),
                    None => Err(format!("R{i} has no value (give it one with --set R{i}=VALUE)")),
                }
            }),
        }
    }

    fn ureg(&self, idx: Option<u32>) -> V {
        match idx {
            None => Ok(0),
            Some(i) => self.uregs.get(&i).cloned().unwrap_or_else(|| {
                match wide_var(self.vars, &format!("UR{i}"), i.checked_sub(1).map(|p| format!("UR{p}"))) {
                    Some(v) => Ok(v),
                    None => Err(format!("UR{i} has no value (give it one with --set UR{i}=VALUE)")),
                }
            }),
        }
    }

    fn cbank(&self, bank: u32, off: u32) -> V {
        let key = cbank_key(bank, off);
        if let Some(v) = wide_var(self.vars, &key, off.checked_sub(4).map(|p| cbank_key(bank, p))) {
            return Ok(v);
        }
        let l = &self.launch;
        match (bank, off) {
            (0, 0x0) => Ok(l.block.x),
            (0, 0x4) => Ok(l.block.y),
            (0, 0x8) => Ok(l.block.z),
            (0, 0xc) => Ok(l.grid.x),
            (0, 0x10) => Ok(l.grid.y),
            (0, 0x14) => Ok(l.grid.z),
            (0, 0x20) | (0, 0x28) => Ok(DEFAULT_STACK_TOP),
            _ => Err(format!("the constant {key} has no value (give it one with --set {key}=VALUE)")),
        }
    }

    fn special(&self, name: &str) -> V {
        let t = &self.thread;
        match name {
            "SR_TID.X" => Ok(t.tid.x),
            "SR_TID.Y" => Ok(t.tid.y),
            "SR_TID.Z" => Ok(t.tid.z),
            "SR_CTAID.X" => Ok(t.block.x),
            "SR_CTAID.Y" => Ok(t.block.y),
            "SR_CTAID.Z" => Ok(t.block.z),
            "SR_LANEID" => Ok(t.lane),
            "SR_NTID.X" => Ok(self.launch.block.x),
            "SR_NTID.Y" => Ok(self.launch.block.y),
            "SR_NTID.Z" => Ok(self.launch.block.z),
            "SR_WARPID" | "SR_VIRTID" => Ok(t.warp),
            "SRZ" => Ok(0),
            _ => Err(format!("the special register {name} is not modelled")),
        }
    }

    fn pred(&self, idx: Option<u32>, not: bool, uniform: bool) -> Result<bool, String> {
        let v = match idx {
            None => Some(true),
            Some(i) => {
                if uniform {
                    self.upreds[i as usize]
                } else {
                    self.preds[i as usize]
                }
            }
        };
        match v {
            Some(b) => Ok(b != not),
            None => Err(format!("{}P{} has no value", if uniform { "U" } else { "" }, idx.unwrap_or(0))),
        }
    }

    /// A source operand's 32-bit value (with `-`, `~`, `|.|` applied).
    fn val(&self, op: &Operand) -> V {
        match op {
            Operand::Reg { idx, neg, not, abs, .. } => {
                let mut v = self.reg(*idx)?;
                if *abs {
                    v = (v as i32).unsigned_abs();
                }
                if *not {
                    v = !v;
                }
                if *neg {
                    v = v.wrapping_neg();
                }
                Ok(v)
            }
            Operand::UReg(i) => self.ureg(*i),
            Operand::Imm(v) => Ok(*v),
            Operand::CBank(b, o) => self.cbank(*b, *o),
            Operand::Special(s) => self.special(s),
            Operand::Pred { idx, not, uniform } => self.pred(*idx, *not, *uniform).map(u32::from),
            _ => Err("this operand has no value".into()),
        }
    }

    fn set(&mut self, op: &Operand, v: V) {
        match op {
            Operand::Reg { idx: Some(i), .. } => {
                self.regs.insert(*i, v);
            }
            Operand::UReg(Some(i)) => {
                self.uregs.insert(*i, v);
            }
            Operand::Pred { idx: Some(i), uniform, .. } => {
                let b = v.ok().map(|x| x != 0);
                if *uniform {
                    self.upreds[*i as usize] = b;
                } else {
                    self.preds[*i as usize] = b;
                }
            }
            _ => {}
        }
    }

    fn set_pair(&mut self, op: &Operand, v: Result<u64, String>) {
        if let Operand::Reg { idx: Some(i), .. } = op {
            self.regs.insert(*i, v.clone().map(|x| x as u32));
            self.regs.insert(i + 1, v.map(|x| (x >> 32) as u32));
        }
    }

    fn pair(&self, op: &Operand) -> Result<u64, String> {
        match op {
            Operand::Reg { idx: None, .. } => Ok(0),
            Operand::Reg { idx: Some(i), .. } => {
                let lo = self.reg(Some(*i))?;
                let hi = self.reg(Some(i + 1))?;
                Ok(u64::from(hi) << 32 | u64::from(lo))
            }
            Operand::UReg(Some(i)) => {
                let lo = self.ureg(Some(*i))?;
                let hi = self.ureg(Some(i + 1))?;
                Ok(u64::from(hi) << 32 | u64::from(lo))
            }
            Operand::CBank(b, o) => {
                let lo = self.cbank(*b, *o)?;
                let hi = self.cbank(*b, o + 4)?;
                Ok(u64::from(hi) << 32 | u64::from(lo))
            }
            _ => self.val(op).map(u64::from),
        }
    }
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

/// Every destination register an unknown or unmodelled instruction writes: the first register operand, and
/// for wide forms its pair.
fn destinations(line: &Line) -> Vec<Operand> {
    match line.ops.first() {
        Some((op @ Operand::Reg { idx: Some(i), .. }, _)) => {
            let mut v = vec![op.clone()];
            let wide = line.mods.iter().any(|m| m == "WIDE" || m == "64" || m == "128");
            if wide {
                for k in 1..4 {
                    v.push(Operand::Reg {
                        idx: Some(i + k),
                        neg: false,
                        not: false,
                        abs: false,
                        wide: false,
                        cc: false,
                    });
                }
            }
            v
        }
        Some((op @ (Operand::UReg(Some(_)) | Operand::Pred { idx: Some(_), .. }), _)) => vec![op.clone()],
        _ => Vec::new(),
    }
}

const MEMORY_OPS: [&str; 8] = ["LDG", "STG", "LD", "ST", "LDS", "STS", "LDL", "STL"];
const IGNORED: [&str; 22] = [
    "NOP",
    "BAR",
    "BRA",
    "BRX",
    "JMP",
    "CALL",
    "RET",
    "BSSY",
    "BSYNC",
    "SSY",
    "SYNC",
    "PBK",
    "BRK",
    "CONT",
    "PCNT",
    "WARPSYNC",
    "DEPBAR",
    "MEMBAR",
    "ERRBAR",
    "CCTL",
    "YIELD",
    "NANOSLEEP",
];

/// Runs SASS for every thread of one block and returns its memory trace.
pub fn trace(src: &str, launch: Launch, vars: &Vars) -> Result<Trace, InputError> {
    if src.len() > super::lex::MAX_INPUT_BYTES {
        return Err(InputError::at(src, Span { start: 0, end: 1 }, "the input is larger than 1 MB"));
    }
    let lines = parse_lines(src)?;
    if lines.is_empty() {
        return Err(InputError::at(
            src,
            Span { start: 0, end: 1 },
            "no SASS instructions: paste lines such as `LDG.E.32 R0, [R2];`",
        ));
    }
    // Check the memory instructions' mnemonics once, before running.
    let mut instrs: HashMap<usize, Instr> = HashMap::new();
    for (k, l) in lines.iter().enumerate() {
        if MEMORY_OPS.contains(&l.opcode.as_str()) {
            let text = std::iter::once(l.opcode.clone()).chain(l.mods.iter().cloned()).collect::<Vec<_>>().join(".");
            let mut instr = Instr::parse(&text).map_err(|e| {
                InputError::at(
                    src,
                    Span { start: l.span.start + e.column, end: l.span.start + e.column + e.len },
                    e.message,
                )
            })?;
            let Some((Operand::Mem { base, .. }, _)) = l.ops.iter().find(|(o, _)| matches!(o, Operand::Mem { .. }))
            else {
                return Err(InputError::at(
                    src,
                    l.span,
                    format!("{} needs an address operand such as [R2] or [R2+0x10]", l.opcode),
                ));
            };
            if let Some((_, true)) = base {
                instr.extended = true;
            }
            instrs.insert(k, instr);
        }
    }
    // A branch matters only if a memory instruction follows it (nvcc ends kernels with `EXIT; BRA self`).
    let last_memory = instrs.keys().copied().max().unwrap_or(0);
    let control = lines.iter().take(last_memory).find(|l| matches!(l.opcode.as_str(), "BRA" | "BRX" | "JMP" | "CALL"));
    let control_note = control.map(|l| Note {
        id: "sass-straight-line",
        text: format!("warpscope runs SASS as straight-line code: the {} at line {} is not followed", l.opcode, l.no),
        source: "warpscope SASS machine",
    });
    let mut builder = TraceBuilder::new(launch);
    for t in 0..launch.threads() {
        let mut m = Machine {
            src,
            launch,
            thread: launch.thread(t),
            vars,
            regs: HashMap::new(),
            uregs: HashMap::new(),
            preds: [None; 7],
            upreds: [None; 7],
            cc_carry: Err("the carry flag (CC.CF) was not set by an earlier .CC instruction".into()),
            lea_lo: Err("no LEA.LO computed the low half of the address before".into()),
        };
        'lines: for (k, l) in lines.iter().enumerate() {
            let guard = match l.guard {
                None => Ok(true),
                Some((idx, not)) => m.pred(idx, not, false),
            };
            let guard = match guard {
                Ok(g) => g,
                Err(why) => {
                    if instrs.contains_key(&k) || l.opcode == "EXIT" {
                        return Err(m.err(l.span, format!("the guard predicate is unknown: {why}")));
                    }
                    for d in destinations(l) {
                        m.set(&d, Err(format!("line {} ran under an unknown predicate ({why})", l.no)));
                    }
                    continue;
                }
            };
            if !guard {
                continue;
            }
            if l.opcode == "EXIT" {
                break 'lines;
            }
            if let Some(instr) = instrs.get(&k) {
                memory(&mut m, l, instr, k, t, &mut builder, control_note.as_ref())?;
                continue;
            }
            if IGNORED.contains(&l.opcode.as_str()) {
                continue;
            }
            execute(&mut m, l)?;
        }
    }
    Ok(builder.finish())
}

fn memory(
    m: &mut Machine,
    l: &Line,
    instr: &Instr,
    k: usize,
    t: u32,
    builder: &mut TraceBuilder,
    control_note: Option<&Note>,
) -> R<()> {
    let store = instr.is_store();
    let (mem_idx, (mem, mem_span)) = l
        .ops
        .iter()
        .enumerate()
        .find(|(_, (o, _))| matches!(o, Operand::Mem { .. }))
        .map(|(i, (o, s))| (i, (o.clone(), *s)))
        .ok_or_else(|| m.err(l.span, "no address operand"))?;
    let Operand::Mem { base, ubase, offset } = mem else { unreachable!("found a memory operand above") };
    let why = |w: String| format!("the address of this {} depends on a value warpscope does not know: {w}", l.opcode);
    let mut addr: i128 = match base {
        None => 0,
        Some((idx, wide)) if instr.extended || wide => {
            let r = Operand::Reg { idx, neg: false, not: false, abs: false, wide: true, cc: false };
            i128::from(m.pair(&r).map_err(|w| m.err(mem_span, why(w)))?)
        }
        Some((idx, _)) => i128::from(m.reg(idx).map_err(|w| m.err(mem_span, why(w)))?),
    };
    if let Some(u) = ubase {
        addr += i128::from(m.ureg(u).map_err(|w| m.err(mem_span, why(w)))?);
    }
    addr += i128::from(offset);
    let bits = instr.address_bits();
    let addr = if bits == 64 { addr.rem_euclid(1 << 64) } else { addr.rem_euclid(1 << 32) } as u64;
    // An explicit Plg predicate after the address (generic LD/ST, seeds/004).
    let plg = match (instr.base.fixed_space(), l.ops.get(mem_idx + 1).or_else(|| l.ops.get(mem_idx + 2))) {
        (None, Some((Operand::Pred { idx, not, uniform }, span))) => {
            Some(m.pred(*idx, *not, *uniform).map_err(|w| m.err(*span, format!("the Plg predicate is unknown: {w}")))?)
        }
        _ => None,
    };
    let text = l.text.clone();
    let access = l.mem_text.clone();
    let notes: Vec<Note> = control_note.cloned().into_iter().collect();
    builder
        .record((k, 0, 0, 0), t, addr, plg, || Site { line: l.no, text, access, instr: instr.clone(), notes })
        .map_err(|msg| m.err(l.span, msg))?;
    if !store {
        let regs = instr.size_bytes.div_ceil(4);
        if let Some((Operand::Reg { idx: Some(i), .. }, _)) = l.ops.first() {
            for r in 0..regs {
                m.regs.insert(i + r, Err(format!("R{} holds data loaded at line {}", i + r, l.no)));
            }
        }
    }
    Ok(())
}

fn has(l: &Line, m: &str) -> bool {
    l.mods.iter().any(|x| x == m)
}

fn execute(m: &mut Machine, l: &Line) -> R<()> {
    let op = |i: usize| l.ops.get(i).map(|(o, _)| o.clone()).unwrap_or(Operand::Other);
    let need = |n: usize| -> R<()> {
        if l.ops.len() < n {
            Err(InputError::at(m.src, l.span, format!("{} needs {n} operands, found {}", l.opcode, l.ops.len())))
        } else {
            Ok(())
        }
    };
    let dest = op(0);
    let writes_cc = matches!(dest, Operand::Reg { cc: true, .. });
    match l.opcode.as_str() {
        "S2R" | "CS2R" | "S2UR" => {
            need(2)?;
            let v = m.val(&op(1));
            if l.opcode == "CS2R" && !has(l, "32") {
                m.set_pair(&dest, v.map(u64::from));
            } else {
                m.set(&dest, v);
            }
        }
        "HFMA2" if matches!((op(1), op(2)), (Operand::Reg { idx: None, .. }, Operand::Reg { idx: None, .. })) => {
            // `HFMA2.MMA Rd, -RZ, RZ, a, b`: 0 * 0 + (a, b) as two halves, nvcc's way to load a constant.
            need(5)?;
            let half = |o: &Operand| match o {
                Operand::FImm(f) => Ok(u32::from(f16_bits(*f))),
                Operand::Imm(v) => Ok(u32::from(f16_bits(f64::from(*v)))),
                _ => Err(format!("HFMA2 at line {} adds a register, which warpscope does not model", l.no)),
            };
            let r = (|| Ok::<u32, String>(half(&op(3))? << 16 | half(&op(4))?))();
            m.set(&dest, r);
        }
        "ULDC" | "LDC" if matches!(op(1), Operand::CBank(..)) => {
            need(2)?;
            if has(l, "64") {
                let v = m.pair(&op(1));
                match &dest {
                    Operand::UReg(Some(i)) => {
                        m.uregs.insert(*i, v.clone().map(|x| x as u32));
                        m.uregs.insert(i + 1, v.map(|x| (x >> 32) as u32));
                    }
                    _ => m.set_pair(&dest, v),
                }
            } else {
                let v = m.val(&op(1));
                m.set(&dest, v);
            }
        }
        "MOV" | "MOV32I" | "UMOV" => {
            need(2)?;
            let v = m.val(&op(1));
            m.set(&dest, v);
        }
        "IADD" | "IADD32I" => {
            need(3)?;
            let carry_in = if has(l, "X") { m.cc_carry.clone().map(u64::from) } else { Ok(0) };
            let s = (|| Ok::<u64, String>(u64::from(m.val(&op(1))?) + u64::from(m.val(&op(2))?) + carry_in?))();
            if writes_cc {
                m.cc_carry = s.clone().map(|s| (s >> 32) as u32);
            }
            m.set(&dest, s.map(|s| s as u32));
        }
        "IADD3" | "UIADD3" => {
            // IADD3 Rd, [Pc0, [Pc1,]] Ra, Rb, Rc [, Pcin0, Pcin1]
            let mut rest: Vec<Operand> = l.ops.iter().skip(1).map(|(o, _)| o.clone()).collect();
            let mut carry_outs = Vec::new();
            while matches!(rest.first(), Some(Operand::Pred { .. })) && rest.len() > 3 {
                carry_outs.push(rest.remove(0));
            }
            if rest.len() < 3 {
                return Err(m.err(l.span, "IADD3 needs three source operands"));
            }
            let x = has(l, "X");
            let sources = &rest[..3];
            let cins = &rest[3..];
            let s = (|| {
                let mut s: u64 = 0;
                for o in sources {
                    s += match o {
                        // -R in a carry chain is ~R + 1.
                        Operand::Reg { neg: true, .. } if !x => {
                            let Operand::Reg { idx, .. } = o else { unreachable!() };
                            u64::from(!m.reg(*idx)?) + 1
                        }
                        _ => u64::from(m.val(o)?),
                    };
                }
                if x {
                    for c in cins {
                        s += u64::from(m.val(c)?);
                    }
                }
                Ok::<u64, String>(s)
            })();
            for (i, p) in carry_outs.iter().enumerate() {
                let c = s.clone().map(|s| u32::from((s >> 32) > i as u64));
                m.set(p, c);
            }
            m.set(&dest, s.map(|s| s as u32));
        }
        "IMAD" | "IMUL" | "IMUL32I" | "XMAD" if l.opcode == "XMAD" => {
            for d in destinations(l) {
                m.set(
                    &d,
                    Err(format!(
                        "{} was written by XMAD at line {}, which warpscope does not model",
                        reg_name(&d),
                        l.no
                    )),
                );
            }
        }
        "IMAD" | "IMUL" | "IMUL32I" | "UIMAD" => {
            // IMAD Rd, [Pcarry,] Ra, Rb, Rc [, Pcin]; IMUL Rd, Ra, Rb.
            let mut rest: Vec<Operand> = l.ops.iter().skip(1).map(|(o, _)| o.clone()).collect();
            let carry_out =
                if matches!(rest.first(), Some(Operand::Pred { .. })) { Some(rest.remove(0)) } else { None };
            let mul_only = l.opcode.starts_with("IMUL");
            if rest.len() < if mul_only { 2 } else { 3 } {
                return Err(m.err(l.span, format!("{} needs more operands", l.opcode)));
            }
            let signed = !has(l, "U32") && !has(l, "MOV") && !has(l, "SHL");
            let wide = has(l, "WIDE");
            let hi = has(l, "HI");
            let a = m.val(&rest[0]);
            let b = m.val(&rest[1]);
            let cin: Result<u64, String> = if has(l, "X") {
                match rest.get(3) {
                    Some(p @ Operand::Pred { .. }) => m.val(p).map(u64::from),
                    _ => m.cc_carry.clone().map(u64::from),
                }
            } else {
                Ok(0)
            };
            let product = (|| {
                let (a, b) = (a?, b?);
                Ok::<i128, String>(if signed && wide {
                    i128::from(a as i32) * i128::from(b as i32)
                } else {
                    i128::from(a) * i128::from(b)
                })
            })();
            if wide {
                let c = if mul_only { Ok(0) } else { m.pair(&rest[2]) };
                let r = (|| Ok::<u64, String>((product? + i128::from(c?) + i128::from(cin?)) as u64))();
                m.set_pair(&dest, r);
            } else {
                let c = if mul_only { Ok(0) } else { m.val(&rest[2]) };
                let r = (|| {
                    let p = product?;
                    let full = if hi { (p >> 32) + i128::from(c?) } else { p + i128::from(c?) } + i128::from(cin?);
                    Ok::<i128, String>(full)
                })();
                if let Some(p) = carry_out {
                    m.set(&p, r.clone().map(|v| u32::from(v >= 1 << 32)));
                }
                if writes_cc {
                    m.cc_carry = r.clone().map(|v| u32::from(v >= 1 << 32));
                }
                m.set(&dest, r.map(|v| v as u32));
            }
        }
        "ISCADD" | "ISCADD32I" => {
            need(4)?;
            let r = (|| {
                let a = m.val(&op(1))?;
                let b = m.val(&op(2))?;
                let s = m.val(&op(3))?;
                Ok::<u32, String>(a.wrapping_shl(s & 31).wrapping_add(b))
            })();
            m.set(&dest, r);
        }
        "SHL" | "SHR" => {
            need(3)?;
            let signed = l.opcode == "SHR" && !has(l, "U32");
            let r = (|| {
                let a = m.val(&op(1))?;
                let s = m.val(&op(2))?.min(32);
                Ok::<u32, String>(match (l.opcode.as_str(), signed) {
                    ("SHL", _) => {
                        if s >= 32 {
                            0
                        } else {
                            a << s
                        }
                    }
                    (_, true) => ((a as i32) >> s.min(31)) as u32,
                    _ => {
                        if s >= 32 {
                            0
                        } else {
                            a >> s
                        }
                    }
                })
            })();
            m.set(&dest, r);
        }
        "SHF" | "USHF" => {
            need(4)?;
            let left = has(l, "L");
            let hi = has(l, "HI");
            let signed = has(l, "S32") || has(l, "S64");
            let r = (|| {
                let lo = m.val(&op(1))?;
                let s = m.val(&op(2))? & 63;
                let hiw = m.val(&op(3))?;
                let v = u64::from(hiw) << 32 | u64::from(lo);
                let shifted = if left {
                    v.checked_shl(s).unwrap_or(0)
                } else if signed {
                    ((v as i64) >> s) as u64
                } else {
                    v >> s
                };
                Ok::<u32, String>(if hi { (shifted >> 32) as u32 } else { shifted as u32 })
            })();
            m.set(&dest, r);
        }
        "LOP" | "LOP32I" | "ULOP" => {
            need(3)?;
            let r = (|| {
                let a = m.val(&op(1))?;
                let b = m.val(&op(2))?;
                Ok::<u32, String>(if has(l, "AND") {
                    a & b
                } else if has(l, "OR") {
                    a | b
                } else if has(l, "XOR") {
                    a ^ b
                } else {
                    b
                })
            })();
            m.set(&dest, r);
        }
        "LOP3" | "ULOP3" => {
            need(5)?;
            let r = (|| {
                let a = m.val(&op(1))?;
                let b = m.val(&op(2))?;
                let c = m.val(&op(3))?;
                let lut = m.val(&op(4))?;
                let mut out = 0u32;
                for k in 0..8u32 {
                    if lut & (1 << k) != 0 {
                        let pick = |bit: u32, v: u32| if k & bit != 0 { v } else { !v };
                        out |= pick(4, a) & pick(2, b) & pick(1, c);
                    }
                }
                Ok::<u32, String>(out)
            })();
            m.set(&dest, r);
        }
        "BFE" => {
            need(3)?;
            let signed = !has(l, "U32");
            let r = (|| {
                let a = m.val(&op(1))?;
                let ctl = m.val(&op(2))?;
                let pos = ctl & 0xff;
                let len = (ctl >> 8) & 0xff;
                if len == 0 || pos >= 32 {
                    return Ok::<u32, String>(0);
                }
                let len = len.min(32 - pos);
                let field = (u64::from(a) >> pos) & ((1u64 << len) - 1);
                let sign = signed && field >> (len - 1) & 1 == 1;
                Ok(if sign { (field | (u64::MAX << len)) as u32 } else { field as u32 })
            })();
            m.set(&dest, r);
        }
        "SEL" | "USEL" => {
            need(4)?;
            let r = (|| if m.val(&op(3))? != 0 { m.val(&op(1)) } else { m.val(&op(2)) })();
            m.set(&dest, r);
        }
        "ISETP" | "UISETP" => {
            need(5)?;
            let cmp = l.mods.first().cloned().unwrap_or_default();
            let unsigned = has(l, "U32");
            let r = (|| {
                let a = m.val(&op(2))?;
                let b = m.val(&op(3))?;
                let c = m.val(&op(4))? != 0;
                let (x, y) =
                    if unsigned { (i64::from(a), i64::from(b)) } else { (i64::from(a as i32), i64::from(b as i32)) };
                let t = match cmp.as_str() {
                    "LT" => x < y,
                    "LE" => x <= y,
                    "GT" => x > y,
                    "GE" => x >= y,
                    "EQ" => x == y,
                    "NE" => x != y,
                    _ => return Err(format!("ISETP.{cmp} is not modelled")),
                };
                let combine = |v: bool| {
                    if has(l, "OR") {
                        v || c
                    } else if has(l, "XOR") {
                        v != c
                    } else {
                        v && c
                    }
                };
                Ok::<(bool, bool), String>((combine(t), combine(!t)))
            })();
            m.set(&op(0), r.clone().map(|(p, _)| u32::from(p)));
            m.set(&op(1), r.map(|(_, q)| u32::from(q)));
        }
        "LEA" | "ULEA" => lea(m, l)?,
        _ => {
            for d in destinations(l) {
                m.set(
                    &d,
                    Err(format!(
                        "{} was written by {} at line {}, which warpscope does not model",
                        reg_name(&d),
                        l.opcode,
                        l.no
                    )),
                );
            }
        }
    }
    Ok(())
}

fn reg_name(o: &Operand) -> String {
    match o {
        Operand::Reg { idx: Some(i), .. } => format!("R{i}"),
        Operand::UReg(Some(i)) => format!("UR{i}"),
        Operand::Pred { idx: Some(i), .. } => format!("P{i}"),
        _ => "a register".into(),
    }
}

/// LEA and LEA.HI as seeds/003 defines them, and the current `LEA Rd, Pcarry, Ra, Sb, scale` form.
fn lea(m: &mut Machine, l: &Line) -> R<()> {
    let mut ops: Vec<(Operand, Span)> = l.ops.clone();
    let hi = has(l, "HI");
    let x = has(l, "X");
    // Seeds' form: `LEA{.HI}{.X} Plg, Rd, ...`: a predicate first is Plg.
    let plg = if matches!(ops.first(), Some((Operand::Pred { .. }, _))) { Some(ops.remove(0).0) } else { None };
    let Some((dest, dest_span)) = ops.first().cloned() else {
        return Err(m.err(l.span, "LEA needs a destination register"));
    };
    ops.remove(0);
    let writes_cc = matches!(dest, Operand::Reg { cc: true, .. });
    if writes_cc && plg.is_some() {
        return Err(m.err(dest_span, "LEA can write at most one of CC and Plg (seeds/003)"));
    }
    // Current form: a predicate right after Rd is the carry out.
    let carry_out = if matches!(ops.first(), Some((Operand::Pred { .. }, _))) { Some(ops.remove(0).0) } else { None };
    // Current form: with .X, a trailing predicate is the carry in.
    let carry_in_pred =
        if x && matches!(ops.last(), Some((Operand::Pred { .. }, _))) { ops.pop().map(|o| o.0) } else { None };
    let is_imm = |o: &Operand| matches!(o, Operand::Imm(_));
    // Ra, Sb, [Rc], [scale].
    let (ra, sb, rc, scale) = match (hi, ops.as_slice()) {
        (false, [(a, _), (b, _)]) => (a.clone(), b.clone(), None, 0),
        (false, [(a, _), (b, _), (Operand::Imm(s), _)]) => (a.clone(), b.clone(), None, *s),
        (true, [(a, _), (b, _), (s, _)]) if is_imm(s) => (a.clone(), b.clone(), None, imm(s)),
        (true, [(a, _), (b, _), (c, _)]) => (a.clone(), b.clone(), Some(c.clone()), 0),
        (true, [(a, _), (b, _), (c, _), (Operand::Imm(s), _)]) => (a.clone(), b.clone(), Some(c.clone()), *s),
        (true, [(a, _), (b, _)]) => (a.clone(), b.clone(), None, 0),
        _ => {
            return Err(m.err(
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
        return Err(m.err(l.span, format!("the scale #{scale} is out of range: ScaleU05 is 0..31")));
    }
    let negate = matches!(ra, Operand::Reg { neg: true, .. });
    let plain = |o: &Operand| match o {
        Operand::Reg { idx, .. } => {
            Operand::Reg { idx: *idx, neg: false, not: false, abs: false, wide: false, cc: false }
        }
        other => other.clone(),
    };
    let carry_in: Result<u64, String> = if x {
        match &carry_in_pred {
            Some(p) => m.val(p).map(u64::from),
            None => m.cc_carry.clone().map(u64::from),
        }
    } else {
        Ok(0)
    };
    let result = (|| {
        let a = m.val(&plain(&ra))?;
        let b = m.val(&sb)?;
        let cin = carry_in?;
        if hi {
            let c = match &rc {
                Some(rc) => m.val(&plain(rc))?,
                None => 0,
            };
            let mut off = u64::from(c) << 32 | u64::from(a);
            if negate {
                off = off.wrapping_neg();
            }
            let high = ((u128::from(off) << scale) >> 32) as u32;
            Ok::<u64, String>(u64::from(high) + u64::from(b) + cin)
        } else {
            let off = if negate { a.wrapping_neg() } else { a };
            let scaled = off.wrapping_shl(scale);
            Ok(u64::from(scaled) + u64::from(b) + cin)
        }
    })();
    let value = result.clone().map(|s| s as u32);
    let carry = result.map(|s| (s >> 32) as u32);
    if writes_cc {
        m.cc_carry = carry.clone();
    }
    if let Some(p) = &carry_out {
        m.set(p, carry);
    }
    if let Some(p) = &plg {
        // Plg = !(the effective address lies in the shared window). A 32-bit (LEA.LO) result can never be in
        // the window, which sits above 4 GB; LEA.HI checks the 64-bit address it forms with the preceding
        // LEA.LO's low half.
        let in_window = if hi {
            (|| {
                let hi_word = value.clone()?;
                let lo_word = m.lea_lo.clone()?;
                let addr = u64::from(hi_word) << 32 | u64::from(lo_word);
                let base = m.vars.get("shared_window").map_or(DEFAULT_SHARED_WINDOW, |&v| v as u64);
                Ok::<bool, String>(addr.wrapping_sub(base) < crate::engine::WINDOW_BYTES)
            })()
        } else {
            Ok(false)
        };
        m.set(p, in_window.map(|w| u32::from(!w)));
    }
    if !hi {
        m.lea_lo = value.clone();
    }
    m.set(&dest, value);
    Ok(())
}

fn imm(o: &Operand) -> u32 {
    match o {
        Operand::Imm(v) => *v,
        _ => 0,
    }
}
