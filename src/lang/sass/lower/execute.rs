//! What each non-memory SASS instruction computes: integer and predicate arithmetic (`IADD3`, `IMAD`, `SHF`,
//! `ISETP`, the uniform forms, ...), and `LEA`'s address arithmetic with its carry and predicate, as the LEA
//! instruction reference gives them.

use super::*;

pub(super) fn execute(lw: &mut Lower, l: &Line) -> R<()> {
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
        "ULDC" | "LDC" if matches!(op(1), Operand::CBank { .. }) => {
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
                    Operand::UMod { idx, neg: true, not: false } if !x => {
                        let r = match idx {
                            None => ZERO,
                            Some(i) => Src::Reg(lw.ureg(*i)),
                        };
                        let n = lw.bin(BinOp::Xor, Width::W32, r, Src::Imm(0xFFFF_FFFF));
                        let n = lw.zext(n);
                        lw.bin(BinOp::Add, Width::W64, n, Src::Imm(1))
                    }
                    Operand::CBank { bank, off, neg: true, not: false } if !x => {
                        let c = lw.cbank(*bank, *off);
                        let n = lw.bin(BinOp::Xor, Width::W32, c, Src::Imm(0xFFFF_FFFF));
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
            } else if hi && !mul_only {
                // IMAD.HI: the addend is the register pair {Rc+1, Rc}, and the result the high word of the
                // 64-bit sum (ptxas zeroes Rc to add Rc+1 to the high half: the integer-division idiom).
                let c = match &rest[2].0 {
                    o @ Operand::Reg { neg: false, not: false, abs: false, .. } => lw.pair(o, rest[2].1)?,
                    _ => {
                        lw.unmodelled(l);
                        return Ok(());
                    }
                };
                let full = lw.bin(BinOp::Add, Width::W64, product, c);
                let full = lw.bin(BinOp::Add, Width::W64, full, cin);
                let r = lw.bin(BinOp::ShrU, Width::W64, full, Src::Imm(32));
                if carry_out.is_some() || writes_cc {
                    lw.unmodelled(l);
                    return Ok(());
                }
                lw.set(&dest, r);
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
            if has(l, "EX") {
                // The high words of a 64-bit compare: the low words' outcome (the same comparison, unsigned)
                // arrives through the last predicate and decides when the high words are equal.
                let Some(low) = lw.pred_ref(&op(5)) else {
                    return Err(lw.err(l.span, "ISETP.EX needs the low words' predicate as its last operand"));
                };
                let eq = lw.b.pred();
                lw.emit(Op::Setp { dst: eq, cmp: Cmp::Eq, signed, w: Width::W32, a, b });
                let tie = lw.b.pred();
                lw.emit(Op::PredLogic { dst: tie, op: PredOp::And, a: PredRef::of(eq), b: low });
                match cmp {
                    Cmp::Eq => {
                        lw.emit(Op::PredLogic { dst: t, op: PredOp::And, a: PredRef::of(tie), b: PredRef::TRUE })
                    }
                    Cmp::Ne => lw.emit(Op::PredLogic { dst: t, op: PredOp::Or, a: PredRef::not(eq), b: low }),
                    _ => {
                        let strict = match cmp {
                            Cmp::Ge | Cmp::Gt => Cmp::Gt,
                            _ => Cmp::Lt,
                        };
                        let s = lw.b.pred();
                        lw.emit(Op::Setp { dst: s, cmp: strict, signed, w: Width::W32, a, b });
                        lw.emit(Op::PredLogic { dst: t, op: PredOp::Or, a: PredRef::of(s), b: PredRef::of(tie) });
                    }
                }
            } else {
                lw.emit(Op::Setp { dst: t, cmp, signed, w: Width::W32, a, b });
            }
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
        "R2UR" => {
            need(lw, 2)?;
            let v = lw.val(&op(1), sp(1))?;
            lw.set(&dest, v);
        }
        "LDC" | "ULDC" if matches!(op(1), Operand::CBankIdx { .. }) => {
            let Operand::CBankIdx { bank, reg, off } = op(1) else { return Ok(()) };
            match reg {
                // `c[0x0][RZ]`: the register is zero, so this is the word at the offset.
                None => {
                    if has(l, "64") {
                        let o = Operand::CBank { bank, off, neg: false, not: false };
                        let v = lw.pair(&o, sp(1))?;
                        lw.set_pair(&dest, v);
                    } else {
                        let v = lw.cbank(bank, off);
                        lw.set(&dest, v);
                    }
                }
                Some(r) => {
                    let why = format!(
                        "{} at line {} reads the constant bank at an offset in R{r}, which warpscope does not follow",
                        l.opcode, l.no
                    );
                    let v = lw.unknown(why);
                    if has(l, "64") {
                        let v2 = lw.zext(v);
                        lw.set_pair(&dest, v2);
                    } else {
                        lw.set(&dest, v);
                    }
                }
            }
        }
        "IMNMX" | "VIMNMX" | "UIMNMX" => {
            // IMNMX Rd, Ra, Rb, Pp: the minimum when Pp holds, else the maximum.
            need(lw, 4)?;
            let a = lw.val(&op(1), sp(1))?;
            let b = lw.val(&op(2), sp(2))?;
            let (a, b) = if has(l, "U32") { (lw.zext(a), lw.zext(b)) } else { (lw.sext(a), lw.sext(b)) };
            let (min, max) = if has(l, "U32") { (BinOp::MinU, BinOp::MaxU) } else { (BinOp::MinS, BinOp::MaxS) };
            let lo = lw.bin(min, Width::W64, a, b);
            let hi = lw.bin(max, Width::W64, a, b);
            match lw.pred_ref(&op(3)) {
                Some(p) if p.idx.is_none() => lw.set(&dest, if p.neg { hi } else { lo }),
                Some(p) => {
                    let d = lw.tmp();
                    lw.emit(Op::Sel { dst: d, p, a: lo, b: hi });
                    lw.set(&dest, Src::Reg(d));
                }
                None => return Err(lw.err(sp(3), format!("{} needs a predicate as its last operand", l.opcode))),
            }
        }
        "VIADDMNMX" => {
            // VIADDMNMX Rd, Ra, Rb, Rc, Pp (sm_90): the minimum of Ra + Rb and Rc when Pp holds, else the maximum,
            // as IMNMX chooses (ptxas writes it for `min(a + b, c)`).
            need(lw, 5)?;
            let a = lw.val(&op(1), sp(1))?;
            let b = lw.val(&op(2), sp(2))?;
            let sum = lw.bin(BinOp::Add, Width::W32, a, b);
            let c = lw.val(&op(3), sp(3))?;
            let (x, y) = if has(l, "U32") { (lw.zext(sum), lw.zext(c)) } else { (lw.sext(sum), lw.sext(c)) };
            let (min, max) = if has(l, "U32") { (BinOp::MinU, BinOp::MaxU) } else { (BinOp::MinS, BinOp::MaxS) };
            let lo = lw.bin(min, Width::W64, x, y);
            let hi = lw.bin(max, Width::W64, x, y);
            match lw.pred_ref(&op(4)) {
                Some(p) if p.idx.is_none() => lw.set(&dest, if p.neg { hi } else { lo }),
                Some(p) => {
                    let d = lw.tmp();
                    lw.emit(Op::Sel { dst: d, p, a: lo, b: hi });
                    lw.set(&dest, Src::Reg(d));
                }
                None => return Err(lw.err(sp(4), "VIADDMNMX needs a predicate as its last operand")),
            }
        }
        "P2R" => {
            // P2R Rd, PR, Rb, mask (.B1-.B3 place it in byte 1-3): the predicates P0-P6 as bits, under the mask,
            // over Rb's other bits (ptxas saves predicates across a call or a spill this way).
            need(lw, 4)?;
            let mask = match op(3) {
                Operand::Imm(m) => u64::from(m & 0x7f),
                _ => {
                    lw.unmodelled(l);
                    return Ok(());
                }
            };
            let shift = byte_shift(l);
            let mut bits = ZERO;
            for i in (0..7).filter(|i| mask >> i & 1 != 0) {
                let p = lw.pred_reg(i, false);
                let v = lw.tmp();
                lw.emit(Op::PredToReg { dst: v, p: PredRef::of(p) });
                let placed = lw.bin(BinOp::Shl, Width::W64, Src::Reg(v), Src::Imm(u64::from(i) + shift));
                bits = lw.bin(BinOp::Or, Width::W64, bits, placed);
            }
            let rb = lw.val(&op(2), sp(2))?;
            let kept = lw.bin(BinOp::And, Width::W64, rb, Src::Imm(!(mask << shift) & 0xFFFF_FFFF));
            let v = lw.bin(BinOp::Or, Width::W64, kept, bits);
            lw.set(&dest, v);
        }
        "R2P" => {
            // R2P PR, Ra, mask (.B1-.B3: from byte 1-3): P_i = bit i of the byte, for the bits of the mask.
            need(lw, 3)?;
            let mask = match op(2) {
                Operand::Imm(m) => m & 0x7f,
                _ => {
                    lw.unmodelled(l);
                    return Ok(());
                }
            };
            let shift = byte_shift(l);
            let ra = lw.val(&op(1), sp(1))?;
            for i in (0..7).filter(|i| mask >> i & 1 != 0) {
                let bit = lw.bin(BinOp::ShrU, Width::W64, ra, Src::Imm(u64::from(i) + shift));
                let bit = lw.bin(BinOp::And, Width::W64, bit, Src::Imm(1));
                let q = lw.b.pred();
                lw.emit(Op::Setp { dst: q, cmp: Cmp::Ne, signed: false, w: Width::W64, a: bit, b: ZERO });
                let p = lw.pred_reg(i, false);
                lw.emit(Op::PredLogic { dst: p, op: PredOp::And, a: PredRef::of(q), b: PredRef::TRUE });
            }
        }
        "FCHK" => {
            // FCHK Pd, Ra, Rb: whether the float division Ra / Rb needs ptxas's slow path (denormals, overflow,
            // a zero): a question about the data, which warpscope does not follow.
            if let Operand::Pred { idx: Some(i), uniform, .. } = dest {
                let why = lw.b.data_why(format!(
                    "P{i} says whether the float division checked at line {} (FCHK) takes its slow path, which depends on the data",
                    l.no
                ));
                let v = lw.tmp();
                lw.emit(Op::Unknown { dst: v, why });
                let q = lw.b.pred();
                lw.emit(Op::Setp { dst: q, cmp: Cmp::Ne, signed: false, w: Width::W64, a: Src::Reg(v), b: ZERO });
                let p = lw.pred_reg(i, uniform);
                lw.emit(Op::PredLogic { dst: p, op: PredOp::And, a: PredRef::of(q), b: PredRef::TRUE });
            }
        }
        "IABS" => {
            need(lw, 2)?;
            let a = lw.val(&op(1), sp(1))?;
            let s = lw.sext(a);
            let n = lw.bin(BinOp::Sub, Width::W64, ZERO, s);
            let m = lw.bin(BinOp::MaxS, Width::W64, s, n);
            lw.set(&dest, m);
        }
        "POPC" | "UPOPC" | "BREV" | "UBREV" | "FLO" | "UFLO" => {
            need(lw, 2)?;
            let a = lw.val(&op(l.ops.len() - 1), sp(l.ops.len() - 1))?;
            let f = match l.opcode.trim_start_matches('U') {
                "POPC" => UnOp::Popc,
                "BREV" => UnOp::Brev,
                _ => UnOp::Flo { signed: !has(l, "U32") },
            };
            let d = lw.tmp();
            lw.emit(Op::Un { f, dst: d, a });
            let mut r = Src::Reg(d);
            if f == (UnOp::Flo { signed: !has(l, "U32") }) && has(l, "SH") {
                // FLO.SH: the shift that brings the bit to the top, 31 - position (0xffffffff stays).
                let nf = lw.bin(BinOp::Xor, Width::W32, r, Src::Imm(31));
                let none = lw.b.pred();
                lw.emit(Op::Setp {
                    dst: none,
                    cmp: Cmp::Eq,
                    signed: false,
                    w: Width::W32,
                    a: r,
                    b: Src::Imm(0xFFFF_FFFF),
                });
                let s = lw.tmp();
                lw.emit(Op::Sel { dst: s, p: PredRef::of(none), a: r, b: nf });
                r = Src::Reg(s);
            }
            lw.set(&dest, r);
        }
        "I2F" | "I2FP" | "F2I" | "MUFU" => {
            // The integer-division idiom: I2F.U32.RP, MUFU.RCP, F2I.FTZ.U32.TRUNC (f32 only).
            let bad_width = l
                .mods
                .iter()
                .any(|m| matches!(m.as_str(), "F64" | "S64" | "U64" | "F16" | "S16" | "U16" | "S8" | "U8"));
            let f = match l.opcode.as_str() {
                "MUFU" if has(l, "RCP") => Some(UnOp::Rcp),
                "MUFU" => None,
                // Only the truncating form: without `.TRUNC` F2I rounds to nearest, which is not followed.
                "F2I" if !bad_width && has(l, "TRUNC") => Some(UnOp::F2I { signed: !has(l, "U32") }),
                "I2F" | "I2FP" if !bad_width && !has(l, "RZ") && !has(l, "RM") => {
                    Some(UnOp::I2F { signed: !has(l, "U32"), up: has(l, "RP") })
                }
                _ => None,
            };
            match f {
                Some(f) => {
                    need(lw, 2)?;
                    let a = lw.val(&op(1), sp(1))?;
                    let d = lw.tmp();
                    lw.emit(Op::Un { f, dst: d, a });
                    lw.set(&dest, Src::Reg(d));
                }
                None => lw.unmodelled(l),
            }
        }
        "PRMT" | "UPRMT" => {
            // PRMT Rd, Ra, sel, Rb: byte i of the result is byte sel[4i+2:4i] of {Rb, Ra} (Ra the low word),
            // replicated from its sign bit when sel[4i+3] is set. A selector in a register is not followed.
            need(lw, 4)?;
            let sel = match op(2) {
                Operand::Imm(v) if l.mods.iter().all(|m| m == "REUSE") => v,
                _ => {
                    lw.unmodelled(l);
                    return Ok(());
                }
            };
            let a = lw.val(&op(1), sp(1))?;
            let b = lw.val(&op(3), sp(3))?;
            let both = lw.join(a, b);
            let mut out = ZERO;
            for i in 0..4u64 {
                let nib = u64::from(sel >> (4 * i)) & 0xf;
                let byte = lw.bin(BinOp::ShrU, Width::W64, both, Src::Imm(8 * (nib & 7)));
                let byte = lw.bin(BinOp::And, Width::W64, byte, Src::Imm(0xff));
                let byte = if nib & 8 != 0 {
                    // Sign replicate: 0xff when the byte's top bit is set.
                    let top = lw.bin(BinOp::ShrU, Width::W64, byte, Src::Imm(7));
                    lw.bin(BinOp::Mul, Width::W64, top, Src::Imm(0xff))
                } else {
                    byte
                };
                let placed = lw.bin(BinOp::Shl, Width::W64, byte, Src::Imm(8 * i));
                out = lw.bin(BinOp::Or, Width::W64, out, placed);
            }
            lw.set(&dest, out);
        }
        "PLOP3" | "UPLOP3" => {
            // PLOP3.LUT Pd, Pq, Pa, Pb, Pc, lut, lut2: Pd = lut(Pa, Pb, Pc) (Pq from the second table).
            need(lw, 6)?;
            let (Some(pa), Some(pb), Some(pc)) = (lw.pred_ref(&op(2)), lw.pred_ref(&op(3)), lw.pred_ref(&op(4))) else {
                lw.unmodelled(l);
                return Ok(());
            };
            let bits: Vec<Src> = [pa, pb, pc]
                .iter()
                .map(|p| {
                    let d = lw.tmp();
                    lw.emit(Op::PredToReg { dst: d, p: *p });
                    Src::Reg(d)
                })
                .collect();
            for (k, table) in [(0usize, op(5)), (1, op(6))] {
                let Operand::Imm(lut) = table else { continue };
                let mut out = ZERO;
                for t in 0..8u32 {
                    if lut & (1 << t) != 0 {
                        let pick = |lw: &mut Lower, v: Src, on: bool| {
                            if on {
                                v
                            } else {
                                lw.bin(BinOp::Xor, Width::W32, v, Src::Imm(1))
                            }
                        };
                        let x = pick(lw, bits[0], t & 4 != 0);
                        let y = pick(lw, bits[1], t & 2 != 0);
                        let z = pick(lw, bits[2], t & 1 != 0);
                        let v = lw.bin(BinOp::And, Width::W32, x, y);
                        let v = lw.bin(BinOp::And, Width::W32, v, z);
                        out = lw.bin(BinOp::Or, Width::W32, out, v);
                    }
                }
                lw.set(&op(k), out);
            }
        }
        "VOTE" | "VOTEU" => {
            // VOTE.ANY|ALL|EQ Rd, Pd, Pp: Rd the ballot of Pp over the running lanes, Pd the vote.
            let Some(p) = l.ops.last().and_then(|(o, _)| lw.pred_ref(o)) else {
                return Err(lw.err(l.span, format!("{} needs a predicate to vote on", l.opcode)));
            };
            let reg =
                l.ops.iter().position(|(o, _)| matches!(o, Operand::Reg { idx: Some(_), .. } | Operand::UReg(Some(_))));
            let pdst = l.ops.iter().take(l.ops.len() - 1).find_map(|(o, _)| match o {
                Operand::Pred { idx: Some(i), uniform, .. } => Some(lw.pred_reg(*i, *uniform)),
                _ => None,
            });
            if has(l, "EQ") {
                lw.unmodelled(l);
                return Ok(());
            }
            let d = reg.map(|_| lw.tmp());
            lw.emit(Op::Vote { dst: d, pdst, all: has(l, "ALL"), p });
            if let (Some(k), Some(d)) = (reg, d) {
                lw.set(&op(k), Src::Reg(d));
            }
        }
        "SHFL" => {
            // SHFL.mode Pd, Rd, Ra, b, c.
            need(lw, 5)?;
            let mode = if has(l, "IDX") {
                ShflMode::Idx
            } else if has(l, "UP") {
                ShflMode::Up
            } else if has(l, "DOWN") {
                ShflMode::Down
            } else if has(l, "BFLY") {
                ShflMode::Bfly
            } else {
                return Err(lw.err(l.span, "SHFL needs a mode: .IDX, .UP, .DOWN or .BFLY"));
            };
            let a = lw.val(&op(2), sp(2))?;
            let b = lw.val(&op(3), sp(3))?;
            let c = lw.val(&op(4), sp(4))?;
            let pdst = match op(0) {
                Operand::Pred { idx: Some(i), uniform, .. } => Some(lw.pred_reg(i, uniform)),
                _ => None,
            };
            let inactive = lw.b.why(format!("SHFL at line {} read a lane that is not running", l.no));
            let d = lw.tmp();
            lw.emit(Op::Shfl { mode, dst: d, pdst, a, b, c, inactive });
            lw.set(&op(1), Src::Reg(d));
        }
        // A distributed-shared-memory reduction (9.0's cluster): another block's shared memory, which the
        // model does not reach.
        "REDAS" => {
            lw.uncosted.push((l.no, l.text.clone()));
        }
        _ => lw.unmodelled(l),
    }
    Ok(())
}

/// 1 when `hi > i`, else 0 (IADD3's carries: `hi` is the high word of the three-way sum).
pub(super) fn lw_gt(lw: &mut Lower, hi: Src, i: u64) -> Src {
    let d = lw.bin(BinOp::Sub, Width::W64, hi, Src::Imm(i));
    // hi - i when hi > i, else 0 (hi is at most 2): min with 1 gives the flag.
    let z = lw.bin(BinOp::MaxS, Width::W64, d, ZERO);
    lw.bin(BinOp::MinU, Width::W64, z, Src::Imm(1))
}

/// The bit position `.B1`, `.B2`, `.B3` select (P2R, R2P): 8, 16, 24; 0 without one.
pub(super) fn byte_shift(l: &Line) -> u64 {
    ["B1", "B2", "B3"].iter().position(|b| has(l, b)).map_or(0, |k| 8 * (k as u64 + 1))
}

pub(super) fn imm(o: &Operand) -> u32 {
    match o {
        Operand::Imm(v) => *v,
        _ => 0,
    }
}

/// LEA and LEA.HI as the LEA instruction reference defines them, and the current `LEA Rd, Pcarry, Ra, Sb,
/// scale` form.
pub(super) fn lea(lw: &mut Lower, l: &Line) -> R<()> {
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
        return Err(lw.err(dest_span, "LEA can write at most one of CC and Plg (the LEA instruction reference)"));
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
                    "LEA takes [Plg,] Rd, [-]Ra, Sb[, scale]; Rc cannot be given with LEA.LO (the LEA instruction reference)"
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
        // `.SX32`: Ra is a signed 32-bit offset, its high word Ra's sign (ptxas's `LEA.HI.X.SX32 R3, R3,
        // c[0x0][0x16c], 0x1, P3` adds a negative index's sign word to the base's high half).
        let mut off = if has(l, "SX32") { lw.sext(a) } else { lw.join(a, c) };
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
                b: Src::Imm(crate::model::access::WINDOW_BYTES),
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
