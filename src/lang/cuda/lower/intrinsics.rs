//! CUDA's intrinsics and library calls: math (and which type each math function returns), `cp.async` and `memcpy_async`, inline `asm` read as PTX, cooperative groups, swizzles, warp shuffles and votes.
//! Part of the CUDA front end's lowering (`lower.rs`): methods of its `Lower`.

use super::*;

impl<'a> Lower<'a> {
    /// A function of CUDA's math library or a half/bfloat16 intrinsic: its arguments are evaluated (a load
    /// there is still a load), and its value is data of the function's type. Functions that also write
    /// through pointers (`sincosf(x, &s, &c)`, `modff`, `frexpf`) write unknown values there.
    #[cold]
    pub(super) fn math(&mut self, name: &str, args: &[Ex], e: &Ex) -> R<Val> {
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
    pub(super) fn copy_async(&mut self, instr: Instr, dst: Src, src: Src, e: &Ex, access: String) {
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
    pub(super) fn mem_op(&mut self, instr: Instr, addr: Reg, src: Option<Reg>, e: &Ex, access: String) {
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
    pub(super) fn memcpy_async(&mut self, name: &str, args: &[Ex], e: &Ex) -> R<Val> {
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
    pub(super) fn asm(&mut self, args: &[Ex], e: &Ex) -> R<Val> {
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
    pub(super) fn zero_fill_guard(&mut self, v: Src, full: u64, span: Span) -> PredRef {
        let zero = self.setp(Cmp::Eq, false, Width::W32, v, Src::Imm(0), span);
        let whole = self.setp(Cmp::Eq, false, Width::W32, v, Src::Imm(full), span);
        let ok = self.pred_logic(PredOp::Or, zero, whole, span);
        let ctx = self.b.ctx(format!("this cp.async's src-size is neither 0 nor its size ({full}): {ZERO_FILL}"));
        self.b.emit(Op::Trap { ctx }, Some(ok.negated()), span);
        zero.negated()
    }

    /// Marks the cp.async just emitted as reading only in the lanes of `reads` (see `Op::Mem`'s `plg`).
    #[cold]
    pub(super) fn set_reads(&mut self, reads: Option<PredRef>) {
        if let (Some(r), Some(crate::program::Inst { op: Op::Mem { plg, .. }, .. })) = (reads, self.b.last_mut()) {
            *plg = Some(r);
        }
    }

    /// One arithmetic instruction of inline PTX on known values: `mov`, `cvta.to.shared` (a shared pointer
    /// already holds its offset in the shared window), `cvt` between integer widths, `add`, `sub`,
    /// `mul.lo`, `shl`, `and`, `or`, `xor`. `None` for anything else, or an operand not known here.
    #[cold]
    pub(super) fn asm_compute(
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
    pub(super) fn group(&self, name: &str) -> Val {
        let ty = types(self).lookup(name).unwrap_or(Ty::Void);
        Val::Agg { ty, leaves: Vec::new() }
    }

    /// The swizzles of the expression language (docs/model.md#swizzles), when no device function of the file has the
    /// name: `sw128(x)`, `sw64(x)`, `sw32(x)` and `swizzle(B, M, S, x)` with constant B, M, S, computed as
    /// `x ^ ((x & yyy_msk) >> S)` on x's type.
    #[cold]
    #[inline(never)]
    pub(super) fn swizzle(&mut self, name: &str, args: &[Ex], e: &Ex) -> R<Option<Val>> {
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
    pub(super) fn const_int(&mut self, e: &Ex, what: &str) -> R<u64> {
        match self.rvalue(e)? {
            Val::Int(Src::Imm(v), _) => Ok(v),
            _ => Err(self.err(e.span, format!("{what} must be a constant"))),
        }
    }

    /// `mode` shuffle of `v` within segments of `width` lanes.
    #[cold]
    pub(super) fn shuffle(&mut self, mode: ShflMode, v: Val, lane: &Ex, width: u64, e: &Ex) -> R<Val> {
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
    pub(super) fn vote(&mut self, name: &str, p: PredRef, span: Span) -> R<Val> {
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
}

/// The type of what a function of CUDA's math library (CUDA Math API: single and double precision, type
/// casting, half and bfloat16 intrinsics) returns, by name; `None` for a name that is not one.
pub(super) fn math_result(name: &str) -> Option<&'static str> {
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
