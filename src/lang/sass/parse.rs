//! SASS listing text to the syntax tree: each line cleaned of addresses, encodings and scheduling
//! annotations, split into guard, opcode, modifiers and operands; labels, instruction addresses, kernels and
//! subroutines found from cuobjdump's and nvdisasm's headers, the architecture from `.headerflags` or `code
//! for sm_XX`, and nvdisasm's `//## File` line information. Nothing here knows what an instruction does.
//!
//! May import: `syntax`, `lang::{InputError, Span}` and `lang::params`' number and constant-bank readers.

use super::syntax::{FileLine, Func, Line, Listing, Operand};
use crate::lang::params::{check_cbank, parse_cbank, parse_u32, CBANK_BYTES};
use crate::lang::{InputError, Span};
use std::collections::HashMap;

/// Lines of SASS warpscope runs at most.
pub const MAX_LINES: usize = 20_000;

/// Parses `c[0x0][R0+0x8]`, `c[0x0][RZ]` or `c[0x0][R2-0x4]` (an indexed constant read), or says why not.
fn parse_cbank_indexed(t: &str) -> Option<Result<Operand, String>> {
    let rest = t.strip_prefix('c').or_else(|| t.strip_prefix('C'))?.trim_start().strip_prefix('[')?;
    let (bank, rest) = rest.split_once(']')?;
    let bank = parse_u32(bank)?;
    let inner = rest.trim_start().strip_prefix('[')?.strip_suffix(']')?;
    let normal = inner.replace(' ', "").replace('-', "+-");
    let mut reg = None;
    let mut off: i64 = 0;
    let mut seen_reg = false;
    for term in normal.split('+').filter(|s| !s.is_empty()) {
        match parse_reg(term) {
            Some(Operand::Reg { idx, neg: false, not: false, abs: false, .. }) if !seen_reg => {
                reg = idx;
                seen_reg = true;
            }
            _ => match parse_u32(term) {
                Some(v) => off += i64::from(v as i32),
                None => return Some(Err(format!("`{t}`: expected c[BANK][Rn+OFFSET]"))),
            },
        }
    }
    if !seen_reg {
        return None;
    }
    let off = u32::try_from(off).ok().filter(|&o| o < CBANK_BYTES);
    Some(match off {
        Some(off) => Ok(Operand::CBankIdx { bank, reg, off }),
        None => Err(format!("`{t}`: the offset is outside the 64 KB constant bank")),
    })
}

/// nvdisasm's line information (`nvdisasm -g`, a cubin built with `-lineinfo`): `//## File "k.cu", line 42`,
/// with `-gi` followed by ` inlined at "k.cu", line 60`. The first file and line are the instruction's own.
fn line_info(raw: &str) -> Option<FileLine> {
    let rest = raw.trim_start().strip_prefix("//##")?.trim_start().strip_prefix("File")?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let (file, rest) = rest.split_once('"')?;
    let rest = rest.trim_start().strip_prefix(',')?.trim_start().strip_prefix("line")?.trim_start();
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let line = rest[..digits].parse().ok().filter(|&l| l > 0)?;
    Some(FileLine { file: file.to_string(), line })
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
    if let Some(n) = up.strip_prefix("UR") {
        let idx = if n == "Z" { None } else { Some(n.parse::<u32>().ok().filter(|&i| i < 64)?) };
        return match (neg, not, abs) {
            (false, false, false) => Some(Operand::UReg(idx)),
            // |UR| is not an operand form compilers write.
            (_, _, true) => None,
            _ => Some(Operand::UMod { idx, neg, not }),
        };
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
    {
        let (neg, u) = t.strip_prefix('-').map_or((false, t), |r| (true, r.trim_start()));
        let (not, u) = u.strip_prefix('~').map_or((false, u), |r| (true, r.trim_start()));
        if let Some((bank, off)) = parse_cbank(u) {
            check_cbank(bank, off)?;
            return Ok(Operand::CBank { bank, off, neg, not });
        }
        if let Some(idx) = parse_cbank_indexed(u) {
            return idx;
        }
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
        let mut scale = 1;
        let normal = inner.replace('-', "+-");
        for term in normal.split('+').map(str::trim).filter(|s| !s.is_empty()) {
            let mut term = term.replace(' ', "");
            // A scaled index register: `R26.X4`, `R18.X16` (nvdisasm writes them for LDS, STS and ATOMS).
            for (suffix, k) in [(".X4", 4), (".X8", 8), (".X16", 16)] {
                if term.len() > suffix.len() && term.to_ascii_uppercase().ends_with(suffix) && base.is_none() {
                    term.truncate(term.len() - suffix.len());
                    scale = k;
                }
            }
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
        if scale != 1 && base.is_none() {
            return Err(format!("`{b}`: a scale (.X4, .X8, .X16) applies to a base register"));
        }
        return Ok(Operand::Mem { base, ubase, offset, scale });
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
        } else if b[i..].starts_with(b"(*") {
            // nvdisasm's annotations: `STL.64 [R1+0x18], R148 (*"SpillRefill"*);`.
            let end = line[i + 2..].find("*)").map_or(b.len(), |e| i + 2 + e + 2);
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

/// The SM number of a `.headerflags` line (`EF_CUDA_SM90`, not the virtual arch) or of cuobjdump's
/// `code for sm_90` / `arch = sm_90`.
fn header_arch(t: &str) -> Option<u32> {
    let tokens = t.split(|c: char| c.is_whitespace() || c == '"' || c == '(' || c == ')' || c == '@');
    let mut prev = "";
    for tok in tokens.filter(|x| !x.is_empty()) {
        if let Some(n) = tok.strip_prefix("EF_CUDA_SM") {
            if let Ok(v) = n.parse() {
                return Some(v);
            }
        }
        if let Some(n) = tok.strip_prefix("sm_") {
            if matches!(prev, "for" | "=") {
                if let Ok(v) = n.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse() {
                    return Some(v);
                }
            }
        }
        prev = tok;
    }
    None
}

/// Parses a listing, or says where it is not one.
pub(super) fn parse_lines(src: &str) -> Result<Listing, InputError> {
    let mut lines = Vec::new();
    let mut labels = HashMap::new();
    let mut funcs: Vec<Func> = Vec::new();
    let mut arch = None;
    // Symbols declared `.type NAME,@function` and those nvdisasm marks as entries (`STO_CUDA_ENTRY`).
    let mut declared: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut entries: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut offset = 0usize;
    let start_func = |funcs: &mut Vec<Func>, name: &str, at: usize, entry: bool| {
        if let Some(last) = funcs.last_mut() {
            if last.start == at && last.name == name {
                return;
            }
            last.end = at;
        }
        funcs.push(Func { name: name.to_string(), start: at, end: at, entry });
    };
    let mut source: Option<FileLine> = None;
    for (no, raw) in src.split('\n').enumerate() {
        let line_start = offset;
        offset += raw.len() + 1;
        if raw.trim_start().starts_with("//##") {
            source = line_info(raw);
            continue;
        }
        let cleaned = clean(raw);
        let t = cleaned.trim();
        if arch.is_none() && (t.starts_with(".headerflags") || t.starts_with("code for") || t.starts_with("arch")) {
            arch = header_arch(t);
        }
        if let Some(rest) = t.strip_prefix(".type") {
            if let Some((name, kind)) = rest.split_once(',') {
                if kind.trim() == "@function" {
                    declared.insert(name.trim().to_string());
                }
            }
        }
        if let Some(rest) = t.strip_prefix(".other") {
            if let Some((name, kind)) = rest.split_once(',') {
                if kind.contains("STO_CUDA_ENTRY") {
                    entries.insert(name.trim().to_string());
                }
            }
        }
        // cuobjdump: `Function : NAME` opens each kernel.
        if let Some(rest) = t.strip_prefix("Function") {
            if let Some(name) = rest.trim_start().strip_prefix(':') {
                let name = name.trim();
                start_func(&mut funcs, name, lines.len(), !name.starts_with('$'));
                source = None;
                continue;
            }
        }
        if let Some(label) = t.strip_suffix(':') {
            let label = label.trim();
            // nvdisasm: `.text.NAME:` opens a kernel's section, `NAME:` a function declared with `.type`.
            if let Some(name) = label.strip_prefix(".text.") {
                start_func(&mut funcs, name, lines.len(), true);
                source = None;
            } else if declared.contains(label) {
                let entry = entries.contains(label) || (!label.starts_with('$') && entries.is_empty());
                start_func(&mut funcs, label, lines.len(), entry);
            }
            labels.insert(label.to_string(), lines.len());
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

        let lead = cleaned.len() - cleaned.trim_start().len();
        let mut rest = t;
        let mut col = lead;
        let mut guard = None;
        if let Some(r) = rest.strip_prefix('@') {
            let end = r.find(char::is_whitespace).unwrap_or(r.len());
            let g = &r[..end];
            match parse_pred(g) {
                Some(Operand::Pred { idx, not, uniform }) => guard = Some((idx, not, uniform)),
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
            addr,
            guard,
            opcode,
            mods,
            ops,
            text: rest.trim().to_string(),
            span: Span { start: line_start + col, end: line_start + col + rest.len() },
            mem_text,
            source: source.clone(),
        });
        if lines.len() > MAX_LINES {
            return Err(InputError::at(
                src,
                Span { start: line_start, end: line_start + 1 },
                format!("more than {MAX_LINES} instructions"),
            ));
        }
    }
    if funcs.first().is_none_or(|f| f.start > 0) {
        // Instructions before any header (or a listing with none): one unnamed function.
        funcs.insert(0, Func { name: String::new(), start: 0, end: 0, entry: true });
        if funcs.len() > 1 {
            funcs[0].end = funcs[1].start;
        }
    }
    if let Some(last) = funcs.last_mut() {
        last.end = lines.len();
    }
    // Functions with no instructions (a kernel header with nothing after it) are dropped.
    funcs.retain(|f| f.end > f.start || f.name.is_empty());
    Ok(Listing { lines, labels, funcs, arch })
}
