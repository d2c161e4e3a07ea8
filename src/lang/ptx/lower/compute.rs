//! PTX's computing instructions lowered: integer and floating-point arithmetic, unary operations, `setp`,
//! `cvt` and the bit operations, each with PTX's integer semantics (width, signedness, wrapping).

use super::*;

pub(super) fn arith(lw: &mut Lw, i: &Inst, root: &str, ty: &str) -> R<()> {
    let (bits, signed, float) = kind(ty);
    let (d, ds) = op(i, 0);
    if float {
        return lw.set_data(d, ds, &format!("the floating-point result of {} at line {}", i.opcode(), i.line));
    }
    let n = match root {
        "mad" | "mad24" | "sad" => 4,
        _ => 3,
    };
    need(lw, i, n)?;
    if ty == "pred" {
        // and/or/xor on predicates.
        let a = lw.pred_ref(op(i, 1).0, op(i, 1).1)?;
        let b = lw.pred_ref(op(i, 2).0, op(i, 2).1)?;
        let pop = match root {
            "and" => PredOp::And,
            "or" => PredOp::Or,
            "xor" => PredOp::Xor,
            _ => return Err(lw.err(i.op_span, format!("{} does not take .pred", i.opcode()))),
        };
        let Opnd::Name { name, .. } = d else { return Err(lw.err(ds, "expected a predicate destination")) };
        let p = lw.pred_of(name).ok_or_else(|| lw.err(ds, format!("`{name}` is not a predicate")))?;
        lw.emit(Op::PredLogic { dst: p, op: pop, a, b });
        return Ok(());
    }
    let wide = i.has("wide");
    let hi = i.has("hi");
    // Shift amounts are u32 whatever the type.
    let a = lw.ival(op(i, 1).0, op(i, 1).1, ty)?;
    let b = if matches!(root, "shl" | "shr") {
        lw.val(op(i, 2).0, op(i, 2).1)?
    } else {
        lw.ival(op(i, 2).0, op(i, 2).1, ty)?
    };
    let w = width(bits);
    let mut out_bits = bits;
    let v = match root {
        "add" | "sub" => {
            if i.has("sat") || i.has("cc") || i.parts.iter().any(|p| p == "addc" || p == "subc") {
                return lw.set_unknown(
                    d,
                    ds,
                    &format!("{} at line {} (saturating or carry arithmetic is not modelled)", i.opcode(), i.line),
                );
            }
            lw.bin(if root == "add" { BinOp::Add } else { BinOp::Sub }, w, a, b)
        }
        "mul" | "mad" if wide => {
            if bits > 32 {
                return Err(lw.err(i.op_span, format!("{}: .wide takes 16- or 32-bit operands", i.opcode())));
            }
            out_bits = bits * 2;
            let a = lw.conv(a, bits, signed);
            let b = lw.conv(b, bits, signed);
            let p = lw.bin(BinOp::Mul, Width::W64, a, b);
            let p = if out_bits < 64 { lw.conv(p, out_bits, false) } else { p };
            if root == "mad" {
                let c = lw.val(op(i, 3).0, op(i, 3).1)?;
                lw.bin(BinOp::Add, width(out_bits), p, c)
            } else {
                p
            }
        }
        "mul" | "mad" => {
            let p = if hi {
                if bits < 32 {
                    // 16-bit high halves: the product fits in 32 bits.
                    let p = lw.bin(BinOp::Mul, Width::W32, a, b);
                    lw.bin(if signed { BinOp::ShrS } else { BinOp::ShrU }, Width::W32, p, Src::Imm(u64::from(bits)))
                } else {
                    lw.bin(if signed { BinOp::MulHiS } else { BinOp::MulHiU }, w, a, b)
                }
            } else {
                lw.bin(BinOp::Mul, w, a, b)
            };
            if root == "mad" {
                if i.has("sat") || i.has("cc") {
                    return lw.set_unknown(
                        d,
                        ds,
                        &format!("{} at line {} (saturating or carry arithmetic is not modelled)", i.opcode(), i.line),
                    );
                }
                let c = lw.ival(op(i, 3).0, op(i, 3).1, ty)?;
                lw.bin(BinOp::Add, w, p, c)
            } else {
                p
            }
        }
        "mul24" | "mad24" => {
            if i.has("sat") {
                return lw.set_unknown(
                    d,
                    ds,
                    &format!("{} at line {} (saturating arithmetic is not modelled)", i.opcode(), i.line),
                );
            }
            let a = lw.conv(a, 24, signed);
            let b = lw.conv(b, 24, signed);
            let p = lw.bin(BinOp::Mul, Width::W64, a, b);
            let p = if hi { lw.bin(BinOp::ShrU, Width::W64, p, Src::Imm(16)) } else { p };
            let p = lw.conv(p, 32, false);
            if root == "mad24" {
                let c = lw.val(op(i, 3).0, op(i, 3).1)?;
                lw.bin(BinOp::Add, Width::W32, p, c)
            } else {
                p
            }
        }
        "sad" => {
            let c = lw.val(op(i, 3).0, op(i, 3).1)?;
            let lt = lw.setp(Cmp::Lt, signed, w, a, b);
            let ab = lw.bin(BinOp::Sub, w, a, b);
            let ba = lw.bin(BinOp::Sub, w, b, a);
            let diff = lw.sel(PredRef::of(lt), ba, ab);
            lw.bin(BinOp::Add, w, diff, c)
        }
        "div" => lw.bin(if signed { BinOp::DivS } else { BinOp::DivU }, w, a, b),
        "rem" => lw.bin(if signed { BinOp::RemS } else { BinOp::RemU }, w, a, b),
        "min" | "max" => {
            let m = match (root, signed) {
                ("min", true) => BinOp::MinS,
                ("min", false) => BinOp::MinU,
                (_, true) => BinOp::MaxS,
                (_, false) => BinOp::MaxU,
            };
            let v = lw.bin(m, w, a, b);
            // `.relu` clamps a negative result to 0.
            if i.has("relu") {
                lw.bin(BinOp::MaxS, w, v, ZERO)
            } else {
                v
            }
        }
        "and" => lw.bin(BinOp::And, w, a, b),
        "or" => lw.bin(BinOp::Or, w, a, b),
        "xor" => lw.bin(BinOp::Xor, w, a, b),
        "shl" => {
            let b = lw.bin(BinOp::MinU, Width::W32, b, Src::Imm(u64::from(bits)));
            lw.bin(BinOp::Shl, Width::W64, a, b)
        }
        "shr" => {
            let b = lw.bin(BinOp::MinU, Width::W32, b, Src::Imm(u64::from(bits)));
            if signed {
                // a is sign-extended to 64 bits for 8/16-bit types; shift that at 64 bits.
                let a = lw.conv(a, bits, true);
                lw.bin(BinOp::ShrS, Width::W64, a, b)
            } else {
                let a = lw.conv(a, bits, false);
                lw.bin(BinOp::ShrU, Width::W64, a, b)
            }
        }
        _ => unreachable!("arith is called for its own opcodes"),
    };
    lw.set(d, ds, v, out_bits)
}

pub(super) fn unary(lw: &mut Lw, i: &Inst, root: &str, ty: &str) -> R<()> {
    need(lw, i, 2)?;
    let (bits, signed, float) = kind(ty);
    let (d, ds) = op(i, 0);
    if float {
        return lw.set_data(d, ds, &format!("the floating-point result of {} at line {}", i.opcode(), i.line));
    }
    if ty == "pred" {
        let a = lw.pred_ref(op(i, 1).0, op(i, 1).1)?;
        let Opnd::Name { name, .. } = d else { return Err(lw.err(ds, "expected a predicate destination")) };
        let p = lw.pred_of(name).ok_or_else(|| lw.err(ds, format!("`{name}` is not a predicate")))?;
        lw.emit(Op::PredLogic { dst: p, op: PredOp::And, a: a.negated(), b: PredRef::TRUE });
        return Ok(());
    }
    let a = lw.ival(op(i, 1).0, op(i, 1).1, ty)?;
    let w = width(bits);
    let mut out_bits = bits;
    let v = match root {
        "neg" => lw.bin(BinOp::Sub, w, ZERO, a),
        "abs" => {
            let neg = lw.setp(Cmp::Lt, true, w, a, ZERO);
            let n = lw.bin(BinOp::Sub, w, ZERO, a);
            lw.sel(PredRef::of(neg), n, a)
        }
        "not" => lw.bin(BinOp::Xor, Width::W64, a, Src::Imm(u64::MAX)),
        "cnot" => {
            let z = lw.setp(Cmp::Eq, false, w, a, ZERO);
            lw.sel(PredRef::of(z), Src::Imm(1), ZERO)
        }
        "popc" | "clz" | "brev" | "bfind" if bits > 32 => {
            out_bits = 32;
            match root {
                "popc" => {
                    let lo = lw.un(UnOp::Popc, a);
                    let h = lw.bin(BinOp::ShrU, Width::W64, a, Src::Imm(32));
                    let hi = lw.un(UnOp::Popc, h);
                    lw.bin(BinOp::Add, Width::W32, lo, hi)
                }
                _ => {
                    return lw.set_unknown(
                        d,
                        ds,
                        &format!("{} at line {} (64-bit bit scans are not modelled)", i.opcode(), i.line),
                    )
                }
            }
        }
        "popc" => lw.un(UnOp::Popc, a),
        "brev" => lw.un(UnOp::Brev, a),
        "clz" => {
            let f = lw.un(UnOp::Flo { signed: false }, a);
            lw.bin(BinOp::Sub, Width::W32, Src::Imm(31), f)
        }
        "bfind" => {
            let pos = lw.un(UnOp::Flo { signed }, a);
            if i.has("shiftamt") {
                // The left shift that moves the found bit to bit 31 (PTX ISA, bfind): 31 - position, and
                // 0xffffffff still when no bit is found.
                let none = lw.setp(Cmp::Eq, false, Width::W32, pos, Src::Imm(0xFFFF_FFFF));
                let amount = lw.bin(BinOp::Sub, Width::W32, Src::Imm(31), pos);
                lw.sel(PredRef::of(none), Src::Imm(0xFFFF_FFFF), amount)
            } else {
                pos
            }
        }
        _ => unreachable!("unary is called for its own opcodes"),
    };
    lw.set(d, ds, v, out_bits)
}

pub(super) fn setp(lw: &mut Lw, i: &Inst, root: &str) -> R<()> {
    need(lw, i, 3)?;
    let tys = types(i);
    // `set.lt.u32.s32`: the destination type first, then the compared one.
    let ty = tys.last().copied().unwrap_or("s32");
    let (bits, signed, float) = kind(ty);
    let (d, ds) = op(i, 0);
    let cmp_name = i.parts.get(1).map(String::as_str).unwrap_or("");
    let bool_op = i.parts[1..].iter().find_map(|p| match p.as_str() {
        "and" => Some(PredOp::And),
        "or" => Some(PredOp::Or),
        "xor" => Some(PredOp::Xor),
        _ => None,
    });
    let t = if float {
        let w = lw.b.data_why(format!("the floating-point comparison {} at line {}", i.opcode(), i.line));
        let v = lw.tmp();
        lw.emit(Op::Unknown { dst: v, why: w });
        lw.setp(Cmp::Ne, false, Width::W64, Src::Reg(v), ZERO)
    } else {
        let (cmp, unsigned) = match cmp_name {
            "eq" => (Cmp::Eq, false),
            "ne" => (Cmp::Ne, false),
            "lt" => (Cmp::Lt, false),
            "le" => (Cmp::Le, false),
            "gt" => (Cmp::Gt, false),
            "ge" => (Cmp::Ge, false),
            "lo" => (Cmp::Lt, true),
            "ls" => (Cmp::Le, true),
            "hi" => (Cmp::Gt, true),
            "hs" => (Cmp::Ge, true),
            _ => {
                return Err(lw.err(
                    i.op_span,
                    format!("`{cmp_name}` is not an integer comparison (eq, ne, lt, le, gt, ge, lo, ls, hi, hs)"),
                ))
            }
        };
        if ty.starts_with('b') && !matches!(cmp, Cmp::Eq | Cmp::Ne) {
            return Err(lw.err(i.op_span, format!("{}: .{ty} values compare only with eq and ne", i.opcode())));
        }
        let a = lw.ival(op(i, 1).0, op(i, 1).1, ty)?;
        let b = lw.ival(op(i, 2).0, op(i, 2).1, ty)?;
        // 8- and 16-bit values are extended to 64 bits by their sign, so compare there.
        let w = if bits < 32 { Width::W64 } else { width(bits) };
        lw.setp(cmp, signed && !unsigned, w, a, b)
    };
    let (p, q) = match d {
        Opnd::Pair(p, q) => (p.clone(), Some(q.clone())),
        Opnd::Name { name, .. } => (name.clone(), None),
        _ => return Err(lw.err(ds, "expected a predicate destination")),
    };
    let c = match bool_op {
        Some(_) => {
            need(lw, i, 4)?;
            Some(lw.pred_ref(op(i, 3).0, op(i, 3).1)?)
        }
        None => None,
    };
    if root == "set" {
        // `set`: all ones (or 1.0f) where the comparison holds; only integer destinations are known.
        let dty = tys.first().copied().unwrap_or("u32");
        let r = match (bool_op, c) {
            (Some(bop), Some(c)) => {
                let r = lw.b.pred();
                lw.emit(Op::PredLogic { dst: r, op: bop, a: PredRef::of(t), b: c });
                r
            }
            _ => t,
        };
        if kind(dty).2 {
            return lw.set_data(d, ds, &format!("the floating-point result of {} at line {}", i.opcode(), i.line));
        }
        let v = lw.sel(PredRef::of(r), Src::Imm(u64::MAX), ZERO);
        return lw.set(d, ds, v, kind(dty).0);
    }
    let pp = lw.pred_of(&p).ok_or_else(|| lw.err(ds, format!("`{p}` is not a predicate")))?;
    match (bool_op, c) {
        (Some(bop), Some(c)) => {
            lw.emit(Op::PredLogic { dst: pp, op: bop, a: PredRef::of(t), b: c });
            if let Some(q) = q {
                let qq = lw.pred_of(&q).ok_or_else(|| lw.err(ds, format!("`{q}` is not a predicate")))?;
                lw.emit(Op::PredLogic { dst: qq, op: bop, a: PredRef::not(t), b: c });
            }
        }
        _ => {
            lw.emit(Op::PredLogic { dst: pp, op: PredOp::And, a: PredRef::of(t), b: PredRef::TRUE });
            if let Some(q) = q {
                let qq = lw.pred_of(&q).ok_or_else(|| lw.err(ds, format!("`{q}` is not a predicate")))?;
                lw.emit(Op::PredLogic { dst: qq, op: PredOp::And, a: PredRef::not(t), b: PredRef::TRUE });
            }
        }
    }
    Ok(())
}

pub(super) fn cvt(lw: &mut Lw, i: &Inst, tys: &[&str]) -> R<()> {
    need(lw, i, 2)?;
    let (d, ds) = op(i, 0);
    let (Some(&dt), Some(&at)) = (tys.first(), tys.get(1)) else {
        return Err(lw.err(i.op_span, "cvt needs a destination and a source type (`cvt.u64.u32`)"));
    };
    let (dbits, dsigned, dfloat) = kind(dt);
    let (abits, asigned, afloat) = kind(at);
    let unknown = |lw: &mut Lw, what: &str| lw.set_unknown(d, ds, &format!("{what} {} at line {}", i.opcode(), i.line));
    if i.has("sat") {
        return unknown(lw, "the saturating conversion");
    }
    let a = lw.val(op(i, 1).0, op(i, 1).1)?;
    let v = match (dfloat, afloat) {
        (false, false) => {
            let v = lw.conv(a, abits, asigned);
            lw.conv(v, dbits, false)
        }
        (true, false) if dt == "f32" && abits <= 32 && (i.has("rn") || i.has("rp")) => {
            let v = lw.conv(a, abits, asigned);
            lw.un(UnOp::I2F { signed: asigned, up: i.has("rp") }, v)
        }
        (false, true) if at == "f32" && dbits == 32 && i.has("rzi") => lw.un(UnOp::F2I { signed: dsigned }, a),
        _ => return lw.set_data(d, ds, &format!("the floating-point conversion {} at line {}", i.opcode(), i.line)),
    };
    lw.set_ext(d, ds, v, dbits, dsigned && !dfloat)
}

pub(super) fn bits_op(lw: &mut Lw, i: &Inst, root: &str, ty: &str) -> R<()> {
    let (bits, signed, _) = kind(ty);
    let (d, ds) = op(i, 0);
    let w = width(bits);
    let imm = |o: &Opnd| match o {
        Opnd::Imm(v) => Some(*v),
        _ => None,
    };
    let v = match root {
        "bfe" => {
            need(lw, i, 4)?;
            let a = lw.val(op(i, 1).0, op(i, 1).1)?;
            let (pos, len) = (imm(op(i, 2).0), imm(op(i, 3).0));
            match (pos, len) {
                (Some(p), Some(l)) => {
                    let (p, l) = (p & 0xff, l & 0xff);
                    if l == 0 {
                        ZERO
                    } else if signed {
                        // Bits past the top replicate the sign bit (PTX ISA bfe).
                        let sb = (p + l - 1).min(u64::from(bits) - 1);
                        let x = lw.conv(a, bits, true);
                        let top = lw.bin(BinOp::Shl, Width::W64, x, Src::Imm(63 - sb));
                        lw.bin(BinOp::ShrS, Width::W64, top, Src::Imm(63 - sb + p.min(sb)))
                    } else {
                        let s = lw.bin(BinOp::ShrU, w, a, Src::Imm(p.min(u64::from(bits))));
                        let mask = if l >= 64 { u64::MAX } else { (1u64 << l) - 1 };
                        lw.bin(BinOp::And, w, s, Src::Imm(mask))
                    }
                }
                _ => {
                    return lw.set_unknown(
                        d,
                        ds,
                        &format!("{} at line {} with a register position or length (not modelled)", i.opcode(), i.line),
                    )
                }
            }
        }
        "bfi" => {
            need(lw, i, 5)?;
            let a = lw.val(op(i, 1).0, op(i, 1).1)?;
            let b = lw.val(op(i, 2).0, op(i, 2).1)?;
            match (imm(op(i, 3).0), imm(op(i, 4).0)) {
                (Some(p), Some(l)) => {
                    let (p, l) = ((p & 0xff).min(u64::from(bits)), (l & 0xff).min(u64::from(bits)));
                    let field = if l >= 64 { u64::MAX } else { (1u64 << l) - 1 };
                    let mask = if p >= 64 { 0 } else { field << p };
                    let ins = lw.bin(BinOp::Shl, Width::W64, a, Src::Imm(p));
                    let ins = lw.bin(BinOp::And, Width::W64, ins, Src::Imm(mask));
                    let keep = lw.bin(BinOp::And, Width::W64, b, Src::Imm(!mask));
                    lw.bin(BinOp::Or, w, keep, ins)
                }
                _ => {
                    return lw.set_unknown(
                        d,
                        ds,
                        &format!("{} at line {} with a register position or length (not modelled)", i.opcode(), i.line),
                    )
                }
            }
        }
        "prmt" => {
            need(lw, i, 4)?;
            let a = lw.val(op(i, 1).0, op(i, 1).1)?;
            let b = lw.val(op(i, 2).0, op(i, 2).1)?;
            let mode_given = i.parts.len() > 2 && !i.parts[1..].iter().all(|p| type_bits(p).is_some());
            match imm(op(i, 3).0) {
                Some(c) if !mode_given => {
                    // {b, a}: bytes 0-3 from a, 4-7 from b; each selector nibble picks one, bit 3 replicates its sign.
                    let lo = lw.conv(a, 32, false);
                    let hi = lw.bin(BinOp::Shl, Width::W64, b, Src::Imm(32));
                    let both = lw.bin(BinOp::Or, Width::W64, lo, hi);
                    let mut acc = ZERO;
                    for k in 0..4u64 {
                        let sel = (c >> (4 * k)) & 0xf;
                        let byte = lw.bin(BinOp::ShrU, Width::W64, both, Src::Imm(8 * (sel & 7)));
                        let byte = if sel & 8 != 0 {
                            // Replicate the byte's sign bit.
                            let s = lw.bin(BinOp::ShrU, Width::W64, byte, Src::Imm(7));
                            let s = lw.bin(BinOp::And, Width::W64, s, Src::Imm(1));
                            lw.bin(BinOp::Mul, Width::W64, s, Src::Imm(0xff))
                        } else {
                            lw.bin(BinOp::And, Width::W64, byte, Src::Imm(0xff))
                        };
                        let byte = lw.bin(BinOp::Shl, Width::W64, byte, Src::Imm(8 * k));
                        acc = lw.bin(BinOp::Or, Width::W64, acc, byte);
                    }
                    acc
                }
                _ => {
                    return lw.set_unknown(
                        d,
                        ds,
                        &format!("{} at line {} with a register selector or a mode (not modelled)", i.opcode(), i.line),
                    )
                }
            }
        }
        "lop3" => {
            need(lw, i, 5)?;
            let a = lw.val(op(i, 1).0, op(i, 1).1)?;
            let b = lw.val(op(i, 2).0, op(i, 2).1)?;
            let c = lw.val(op(i, 3).0, op(i, 3).1)?;
            let Some(lut) = imm(op(i, 4).0) else {
                return Err(lw.err(op(i, 4).1, "lop3's truth table must be a number"));
            };
            // Each set bit k of the table adds the minterm (a: bit 2 of k, b: bit 1, c: bit 0); F0, CC, AA
            // are a, b, c.
            let mut acc = ZERO;
            for k in 0..8u64 {
                if lut & (1 << k) == 0 {
                    continue;
                }
                let lit = |lw: &mut Lw, x: Src, on: bool| {
                    if on {
                        x
                    } else {
                        lw.bin(BinOp::Xor, Width::W64, x, Src::Imm(u64::MAX))
                    }
                };
                let ta = lit(lw, a, k & 4 != 0);
                let tb = lit(lw, b, k & 2 != 0);
                let tc = lit(lw, c, k & 1 != 0);
                let t = lw.bin(BinOp::And, Width::W64, ta, tb);
                let t = lw.bin(BinOp::And, Width::W64, t, tc);
                acc = lw.bin(BinOp::Or, Width::W64, acc, t);
            }
            lw.conv(acc, bits, false)
        }
        "shf" => {
            need(lw, i, 4)?;
            let a = lw.val(op(i, 1).0, op(i, 1).1)?;
            let b = lw.val(op(i, 2).0, op(i, 2).1)?;
            let c = lw.val(op(i, 3).0, op(i, 3).1)?;
            // {b:a} as 64 bits, shifted by c (wrap: c mod 32; clamp: at most 32).
            let lo = lw.conv(a, 32, false);
            let hi = lw.bin(BinOp::Shl, Width::W64, b, Src::Imm(32));
            let x = lw.bin(BinOp::Or, Width::W64, lo, hi);
            let n = if i.has("wrap") {
                lw.bin(BinOp::And, Width::W32, c, Src::Imm(31))
            } else {
                lw.bin(BinOp::MinU, Width::W32, c, Src::Imm(32))
            };
            if i.has("l") {
                let s = lw.bin(BinOp::Shl, Width::W64, x, n);
                lw.bin(BinOp::ShrU, Width::W64, s, Src::Imm(32))
            } else {
                lw.bin(BinOp::ShrU, Width::W64, x, n)
            }
        }
        _ => unreachable!("bits_op is called for its own opcodes"),
    };
    lw.set(d, ds, v, bits)
}
