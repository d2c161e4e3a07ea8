//! PTX's memory instructions lowered: `ld`/`st` in every state space with the SASS instruction each becomes,
//! atomics and reductions, `ldmatrix`/`stmatrix`, `cp.async`, and the address arithmetic they share; which
//! kernel parameters are pointers, and how a global load reads given data (docs/model.md#kernels-on-data).

use super::*;
use crate::lang::params::PARAM_NAMES;
use crate::text::GIVE_DATA;

/// `ld`, `ldu` and `st`: parameters, call storage, or a costed memory site.
pub(super) fn memory(lw: &mut Lw, i: &Inst, root: &str) -> R<()> {
    need(lw, i, 2)?;
    let store = root == "st";
    let (data, data_span) = if store { op(i, 1) } else { op(i, 0) };
    let (addr_op, addr_span) = if store { op(i, 0) } else { op(i, 1) };
    let Opnd::Addr { base, off } = addr_op else {
        return Err(
            lw.err(addr_span, format!("{} needs an address in brackets, such as [%rd4] or [%rd4+16]", i.opcode()))
        );
    };
    let ty = types(i).last().copied().unwrap_or("b32");
    let (tbits, tsigned, _) = kind(ty);
    let vec: u32 = i.parts.iter().find_map(|p| p.strip_prefix('v').and_then(|n| n.parse().ok())).unwrap_or(1);
    let bytes = tbits.div_ceil(8) * vec;
    let space = i.parts[1..].iter().find_map(|p| {
        let s = p.split("::").next().unwrap_or(p);
        matches!(s, "global" | "shared" | "local" | "const" | "param").then(|| s.to_string())
    });
    // Parameters: kernel parameters' values, and the storage of calls.
    if space.as_deref() == Some("param") {
        let Some(name) = base else {
            return Err(lw.err(addr_span, "a parameter access names the parameter: [name] or [name+8]"));
        };
        let slot = lw
            .param_slot(name)
            .ok_or_else(|| lw.err(addr_span, format!("`{name}` is not a parameter of this function")))?;
        // A vector access is its elements, each at its own offset.
        let elem = u64::from(tbits.div_ceil(8));
        let items: Vec<&Opnd> = match data {
            Opnd::Vec(v) => v.iter().collect(),
            o => vec![o],
        };
        for (k, item) in items.into_iter().enumerate() {
            let at = off.wrapping_add(k as i64 * elem as i64);
            match (slot, store) {
                (Slot::Kernel(kp), false) => {
                    let p = lw.kparams[kp].1.clone();
                    let v = match &p.value {
                        _ if at < 0 || at as u64 + elem > p.size => lw.unknown(format!(
                            "bytes {at} to {} of parameter {name}, past its {} bytes",
                            at + elem as i64 - 1,
                            p.size
                        )),
                        Ok(v) if at as u64 + elem <= 8 => Src::Imm(v >> (8 * at as u64)),
                        Ok(_) => {
                            lw.unknown(format!("bytes {at} and on of parameter {name}, which warpscope does not hold"))
                        }
                        Err(why) => lw.unknown(why.clone()),
                    };
                    lw.set_ext(item, data_span, v, tbits, tsigned)?;
                }
                (Slot::Kernel(_), true) => return Err(lw.err(i.span, "a kernel cannot write its own parameters")),
                (Slot::Mem(s), true) => {
                    let v = lw.val(item, data_span)?;
                    let v = lw.conv(v, tbits, false);
                    // A write replaces what it overlaps; the same place and size keeps its register.
                    let same = lw.slot_regs.get(&(s, at)).filter(|(_, b)| *b == elem).map(|(r, _)| *r);
                    lw.slot_regs.retain(|&(ss, o), (_, b)| !(ss == s && o < at + elem as i64 && at < o + *b as i64));
                    let r = same.unwrap_or_else(|| lw.b.reg());
                    lw.slot_regs.insert((s, at), (r, elem));
                    lw.emit(Op::Mov { dst: r, a: v });
                }
                (Slot::Mem(s), false) => {
                    let overlaps = lw.slot_regs.keys().any(|&(ss, o)| ss == s && o < at + elem as i64 && at < o + 8);
                    let v = match lw.slot_regs.get(&(s, at)).copied() {
                        Some((r, b)) if b >= elem => Src::Reg(r),
                        _ if overlaps => lw.unknown(format!(
                            "parameter {name}+{at}, written in other pieces than line {} reads",
                            i.line
                        )),
                        _ => lw.unknown(format!("parameter {name}+{at}, which nothing wrote before line {}", i.line)),
                    };
                    lw.set_ext(item, data_span, v, tbits, tsigned)?;
                }
            }
        }
        return Ok(());
    }
    if space.as_deref() == Some("const") && store {
        return Err(lw.err(i.op_span, format!("{}: kernels cannot write constant memory", i.opcode())));
    }
    if !matches!(bytes, 1 | 2 | 4 | 8 | 16) {
        return Err(lw.err(
            i.op_span,
            format!("{}: a {bytes}-byte access is not one warpscope costs (1, 2, 4, 8 or 16 bytes)", i.opcode()),
        ));
    }
    // The SASS instruction it becomes.
    let (head, wide) = match (space.as_deref(), store) {
        // A constant-bank load at an offset: LDC through the constant cache (docs/model.md#constant-memory).
        (Some("const"), _) => ("LDC", false),
        (Some("global"), false) => ("LDG", true),
        (Some("global"), true) => ("STG", true),
        (Some("shared"), false) => ("LDS", false),
        (Some("shared"), true) => ("STS", false),
        (Some("local"), false) => ("LDL", false),
        (Some("local"), true) => ("STL", false),
        (_, false) => ("LD", true),
        (_, true) => ("ST", true),
    };
    let mut name = head.to_string();
    if wide {
        name += ".E";
    }
    // 32 bits is the mnemonic's default size, written without a modifier (`LDG.E`).
    if let Some(m) = Instr::size_modifier(bytes, tsigned && !store).filter(|m| *m != "32") {
        name += ".";
        name += m;
    }
    if head != "LDS" && head != "STS" && head != "LDC" {
        let cop = if root == "ldu" || i.has("nc") {
            Some("CONSTANT")
        } else {
            i.parts[1..].iter().find_map(|p| match (p.as_str(), store) {
                ("cg", _) if head != "LDL" => Some("CG"),
                ("cs", _) => Some("CS"),
                ("lu", false) => Some("LU"),
                ("cv", false) => Some("CV"),
                ("wt", true) => Some("WT"),
                _ => None,
            })
        };
        if let Some(c) = cop {
            name = format!("{name}.{c}");
        }
    }
    let instr = Instr::parse(&name).map_err(|e| lw.err(i.op_span, format!("{}: {}", i.opcode(), e.message)))?;
    let addr = address(lw, base.as_deref(), *off, addr_span, instr.address_bits(), 0)?;
    // A global (or generic) load reads given arrays (docs/model.md#kernels-on-data).
    #[cfg(feature = "data")]
    let given = (!store && matches!(space.as_deref(), Some("global") | None)).then(|| given_parts(lw, data, addr, ty));
    mem_site(lw, i, addr_span, instr, addr, None);
    if !store {
        let why = match space.as_deref() {
            Some("global") | None => format!("data loaded at line {}; {}{}", i.line, GIVE_DATA, PARAM_NAMES),
            _ => format!("data loaded at line {}", i.line),
        };
        #[cfg(feature = "data")]
        if let Some((regs, parts, elem)) = given.flatten() {
            load_given(lw, &regs, &parts, elem, &why);
            return Ok(());
        }
        lw.set_data(data, data_span, &why)?;
    }
    Ok(())
}

#[cfg(feature = "data")]
/// For a global load into `data` (a register, or a vector of them) of type `ty`: its registers, the addresses of
/// the elements after the first (taken before the load, which may overwrite its address register) and the element
/// type; `None` where the destination is not registers of an integer or floating-point type.
fn given_parts(lw: &mut Lw, data: &Opnd, addr: Reg, ty: &str) -> Option<(Vec<Reg>, Vec<Reg>, Elem)> {
    let elem = ptx_elem(ty);
    let eb = elem.bytes()?;
    let items: Vec<&Opnd> = match data {
        Opnd::Vec(v) => v.iter().collect(),
        o => vec![o],
    };
    let regs = items
        .iter()
        .map(|o| match o {
            Opnd::Name { name, neg: false } => lw.reg_of(name),
            _ => None,
        })
        .collect::<Option<Vec<Reg>>>()?;
    let parts = lw.b.part_addresses(addr, regs.len(), u64::from(eb), lw.guard, lw.span);
    Some((regs, parts, elem))
}

#[cfg(feature = "data")]
/// The registers of a global load read what given arrays hold at its address (the memory instruction just
/// emitted): the first element through the instruction itself, the others as parts at `parts`. Each holds its
/// element as the PTX type says (`.s8` sign-extended), cut to the register's width.
fn load_given(lw: &mut Lw, regs: &[Reg], parts: &[Reg], elem: Elem, why: &str) {
    let why = lw.b.data_why(why.to_string());
    let loads: Vec<(Reg, u32)> = regs.iter().map(|&r| (r, why)).collect();
    lw.b.load_parts(&loads, parts, elem, lw.guard, lw.span);
    for &r in regs {
        let bits = lw.reg_bits.get(&r).copied().unwrap_or(64);
        if bits < 64 {
            lw.emit(Op::Conv { dst: r, a: Src::Reg(r), bits: bits as u8, signed: false });
        }
    }
}

/// `atom` and `red` (docs/model.md#atomics): `atom{.sem}{.scope}{.space}.op.type d, [a], b{, c}` and
/// `red{.sem}{.scope}{.space}.op.type [a], b`, costed as the SASS they become: `ATOMG` (or `RED` for `red`) for
/// `.global`, `ATOMS` for `.shared`, generic `ATOM` otherwise. What `atom` returns is data.
pub(super) fn atomic(lw: &mut Lw, i: &Inst, root: &str) -> R<()> {
    need(lw, i, 2)?;
    let red = root == "red";
    let (addr_op, addr_span) = if red { op(i, 0) } else { op(i, 1) };
    let Opnd::Addr { base, off } = addr_op else {
        return Err(lw.err(addr_span, format!("{} needs an address in brackets, such as [%rd4]", i.opcode())));
    };
    let ty = types(i).last().copied().unwrap_or("b32");
    let vec: u32 = i.parts.iter().find_map(|p| p.strip_prefix('v').and_then(|n| n.parse().ok())).unwrap_or(1);
    let bytes = type_bits(ty).unwrap_or(32).div_ceil(8) * vec;
    let space = i.parts[1..].iter().find_map(|p| {
        let s = p.split("::").next().unwrap_or(p);
        matches!(s, "global" | "shared" | "local" | "const" | "param").then(|| s.to_string())
    });
    let ops = ["add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"];
    let Some(what) = i.parts[1..].iter().find(|p| ops.contains(&p.as_str())) else {
        return Err(lw.err(i.op_span, format!("{}: which operation? ({})", i.opcode(), ops.join(", "))));
    };
    let head = match (space.as_deref(), red) {
        (Some("global"), false) => "ATOMG.E",
        (Some("global"), true) => "RED.E",
        (Some("shared"), _) => "ATOMS",
        (None, _) => "ATOM.E",
        (Some(other), _) => {
            return Err(lw.err(i.op_span, format!("{}: an atomic on the .{other} space is not valid PTX", i.opcode())))
        }
    };
    let size = match bytes {
        2 => ".F16",
        4 => "",
        8 => ".64",
        16 => ".128",
        _ => {
            return Err(lw.err(
                i.op_span,
                format!("{}: a {bytes}-byte atomic is not one warpscope costs (2, 4, 8 or 16 bytes)", i.opcode()),
            ))
        }
    };
    let name = format!("{head}.{}{size}", what.to_ascii_uppercase());
    let instr = Instr::parse(&name).map_err(|e| lw.err(i.op_span, format!("{}: {}", i.opcode(), e.message)))?;
    let addr = address(lw, base.as_deref(), *off, addr_span, instr.address_bits(), 0)?;
    mem_site(lw, i, addr_span, instr, addr, None);
    if let Some(s) = lw.sites.get(&i.span.start).copied().and_then(|id| lw.b.site_mut(id)) {
        if s.notes.is_empty() {
            s.notes.push(Note::new(
                "ptx-atomic-as-written",
                "Counted as the PTX writes it, one read-modify-write per active lane. ptxas often does better: it aggregates a warp's atomics on one address into one lane's (a popcount's worth of adds), makes an atom whose result is unused a RED, and a shared increment by one ATOMS.POPC.INC. The kernel's SASS shows what it did",
                "docs/model.md#atomics; CUDA Programming Guide, Atomic Functions",
            ));
        }
    }
    if !red {
        let (d, dspan) = op(i, 0);
        lw.set_data(d, dspan, &format!("the value {} returned at line {}", i.opcode(), i.line))?;
    }
    Ok(())
}

/// An address operand's value less `window` (the shared window's base, for a generic address that must point
/// into shared memory), cut to `bits`, in a register.
pub(super) fn address(lw: &mut Lw, base: Option<&str>, off: i64, span: Span, bits: u32, window: u64) -> R<Reg> {
    let mut addr = match base {
        None => ZERO,
        Some(b) => lw.val(&Opnd::Name { name: b.to_string(), neg: false }, span)?,
    };
    addr = lw.bin(BinOp::Add, Width::W64, addr, Src::Imm((off as u64).wrapping_sub(window)));
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

/// The memory site of instruction `i` (one per instruction, also when a call inlines it twice) and its issue
/// at `addr` (`src`: a copy's global source).
pub(super) fn mem_site(lw: &mut Lw, i: &Inst, addr_span: Span, instr: Instr, addr: Reg, src: Option<Reg>) {
    let key = i.span.start;
    let site = match lw.sites.get(&key) {
        Some(&s) => s,
        None => {
            let text = lw.src[i.span.start..i.span.end].split_whitespace().collect::<Vec<_>>().join(" ");
            let access = lw.src[addr_span.start..addr_span.end.min(lw.src.len())].to_string();
            let source = i.loc.and_then(|(f, line)| {
                let file = lw.m.files.iter().find(|(n, _)| *n == f)?.1.clone();
                Some(SourceLine { file, line })
            });
            let s = lw.b.site(
                (key, 0),
                Site { line: i.line, text: format!("{text};"), access, instr, notes: Vec::new(), source },
            );
            lw.sites.insert(key, s);
            s
        }
    };
    let ctx = lw.b.ctx(format!("the address of this {} depends on a value warpscope does not know: ", i.opcode()));
    lw.emit(Op::Mem { site, addr, plg: None, src, ctx, data: None });
}

/// The address in brackets of operand `k`, for an instruction that needs one.
pub(super) fn bracketed<'i>(lw: &Lw, i: &'i Inst, k: usize) -> R<(Option<&'i str>, i64, Span)> {
    match i.ops.get(k) {
        Some((Opnd::Addr { base, off }, span)) => Ok((base.as_deref(), *off, *span)),
        other => Err(lw.err(
            other.map_or(i.op_span, |o| o.1),
            format!("{} needs an address in brackets here, such as [%r4]", i.opcode()),
        )),
    }
}

/// Whether `i` names the shared space (`.shared`, `.shared::cta`); without it a matrix address is generic.
pub(super) fn names_shared(i: &Inst) -> bool {
    i.parts[1..].iter().any(|p| p == "shared" || p == "shared::cta")
}

/// The PTX instruction's SASS form for `ldmatrix`, `stmatrix` and `cp.async` (see [`crate::lang::matrix_or_copy`]);
/// `None` for the group commits and waits.
pub(super) fn matrix_instr(lw: &Lw, i: &Inst, size: Option<u64>) -> R<Option<Instr>> {
    let parts: Vec<&str> = i.parts.iter().map(String::as_str).collect();
    crate::lang::matrix_or_copy(&parts, size).map_err(|m| lw.err(i.op_span, m))
}

/// `ldmatrix.sync.aligned.m8n8.x4{.trans}.shared.b16 {d0..d3}, [p];` (`LDSM`) and `stmatrix` (`STSM`): each of
/// the first 8, 16 or 32 threads gives a row's address (a generic address without `.shared`); the registers
/// of `ldmatrix` receive data.
pub(super) fn matrix(lw: &mut Lw, i: &Inst, root: &str) -> R<()> {
    need(lw, i, 2)?;
    let store = root == "stmatrix";
    let Some(instr) = matrix_instr(lw, i, None)? else { return Ok(()) };
    let (base, off, addr_span) = bracketed(lw, i, usize::from(!store))?;
    let window = if names_shared(i) { 0 } else { DEFAULT_SHARED_WINDOW };
    let addr = address(lw, base, off, addr_span, 32, window)?;
    mem_site(lw, i, addr_span, instr, addr, None);
    if !store {
        let (d, ds) = op(i, 0);
        lw.set_data(d, ds, &format!("data loaded by ldmatrix at line {}", i.line))?;
    }
    Ok(())
}

/// `cp.async.{ca,cg}.shared.global [dst], [src], 4|8|16{, src-size}{, cache-policy};` (`LDGSTS`): a global read
/// and a shared write (docs/model.md#asynchronous-copies). Committing and waiting for groups changes no address: nothing to follow.
/// Why a cp.async that reads fewer bytes than it writes is refused.
pub(super) const ZERO_FILL: &str = "a cp.async that reads part of its copy (a src-size between 0 and its size) is not modelled; warpscope refuses it rather than count the full copy";

pub(super) fn cp_async(lw: &mut Lw, i: &Inst) -> R<()> {
    let size = match i.ops.get(2) {
        Some((Opnd::Imm(n), _)) => Some(*n),
        _ => None,
    };
    let Some(instr) = matrix_instr(lw, i, size)? else { return Ok(()) };
    // [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy}. A src-size of 0 reads nothing and
    // zero-fills the destination, as an ignore-src predicate that holds does (Triton's and CUTLASS's bounds
    // guard); a src-size equal to cp-size (clang writes `16, 16`) reads all of it. A src-size in between
    // reads part of the copy: refused, as is a value of neither kind at run time.
    let hint = usize::from(i.parts.iter().any(|p| p.contains("cache_hint")));
    let mut reads = None;
    if let Some((o, span)) = i.ops.get(3).filter(|_| i.ops.len() > 3 + hint) {
        match o {
            Opnd::Imm(n) if Some(*n) == size => {}
            Opnd::Imm(0) => reads = Some(PredRef::TRUE.negated()),
            Opnd::Imm(_) => return Err(lw.err(*span, ZERO_FILL)),
            Opnd::Name { name, .. } if lw.pred_of(name).is_some() => {
                reads = Some(lw.pred_ref(o, *span)?.negated());
            }
            _ => {
                let v = lw.val(o, *span)?;
                let full = size.unwrap_or(16);
                let zero = lw.setp(Cmp::Eq, false, Width::W32, v, ZERO);
                let whole = lw.setp(Cmp::Eq, false, Width::W32, v, Src::Imm(full));
                let odd = lw.b.pred();
                lw.emit(Op::PredLogic { dst: odd, op: PredOp::Or, a: PredRef::of(zero), b: PredRef::of(whole) });
                let ctx = lw.b.ctx(format!(
                    "line {}: this cp.async's src-size is neither 0 nor its copy size ({full}); {ZERO_FILL}",
                    i.line
                ));
                lw.b.emit(Op::Trap { ctx }, Some(PredRef::not(odd)), *span);
                reads = Some(PredRef::not(zero));
            }
        }
    }
    let (dbase, doff, dspan) = bracketed(lw, i, 0)?;
    let (sbase, soff, sspan) = bracketed(lw, i, 1)?;
    let dst = address(lw, dbase, doff, dspan, 32, 0)?;
    let src = address(lw, sbase, soff, sspan, instr.source_address_bits(), 0)?;
    mem_site(lw, i, Span { start: dspan.start, end: sspan.end }, instr, dst, Some(src));
    if let (Some(r), Some(crate::program::Inst { op: Op::Mem { plg, .. }, .. })) = (reads, lw.b.last_mut()) {
        *plg = Some(r);
    }
    Ok(())
}

/// Parameters that hold pointers, read from the code: a `ld.param.u64` whose register `cvta.to.global`
/// converts or that addresses memory directly (how nvcc and clang use every pointer parameter).
pub(super) fn pointer_params(k: &Func) -> HashSet<String> {
    let mut loaded: HashMap<String, String> = HashMap::new();
    let mut out = HashSet::new();
    for s in k.body.iter().flatten() {
        let Stmt::Inst(i) = s else { continue };
        match (i.parts[0].as_str(), i.ops.as_slice()) {
            ("ld", [(Opnd::Name { name: r, .. }, _), (Opnd::Addr { base: Some(p), off: 0 }, _)])
                if i.has("param") && (i.has("u64") || i.has("b64") || i.has("s64")) =>
            {
                loaded.insert(r.clone(), p.clone());
            }
            ("cvta", [_, (Opnd::Name { name: r, .. }, _)]) if i.has("to") && i.has("global") => {
                if let Some(p) = loaded.get(r) {
                    out.insert(p.clone());
                }
            }
            ("ld" | "st", ops) if !i.has("param") => {
                for (o, _) in ops {
                    if let Opnd::Addr { base: Some(r), .. } = o {
                        if let Some(p) = loaded.get(r) {
                            out.insert(p.clone());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(feature = "data")]
/// The element a PTX type names, as data is given and loaded: `.u8`/`.b8` unsigned, `.s32` signed, `.f32`
/// floating point; a predicate or a 128-bit type is none that data fills.
pub(super) fn ptx_elem(ty: &str) -> Elem {
    let (bits, signed, float) = kind(ty);
    let bytes = (bits / 8) as u8;
    match (bits, float) {
        (16 | 32 | 64, true) => Elem::Float { bytes },
        (8 | 16 | 32 | 64, false) if type_bits(ty).is_some() => Elem::Int { bytes, signed },
        _ => Elem::Other,
    }
}
