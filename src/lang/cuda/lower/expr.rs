//! Expressions: places and their loads, lvalues and rvalues, operators (integer, pointer, logical, ternary) and assignment.
//! Part of the CUDA front end's lowering (`lower.rs`): methods of its `Lower`.

use super::*;

impl<'a> Lower<'a> {
    /// Records the accesses of reading or writing `place`.
    #[cold]
    pub(super) fn access(&mut self, place: &Place, store: bool, span: Span) -> R<()> {
        self.access_into(place, store, span, None)
    }

    /// [`Self::access`]; a one-access load can name the register that receives its data.
    #[cold]
    pub(super) fn access_into(&mut self, place: &Place, store: bool, span: Span, data: Option<Load>) -> R<()> {
        if place.space == MemSpace::Reg {
            // Registers: no memory moves. The values an array keeps in registers are not followed.
            if let Some(Load { dst: d, .. }) = data {
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

    /// Why a value read from `space` at `span` is unknown: global memory's can be given as data; what is in
    /// shared or local memory the kernel wrote there itself, which is not followed yet.
    #[cold]
    fn loaded_why(&mut self, space: MemSpace, span: Span) -> u32 {
        let at = self.pos(span);
        let why = match space {
            MemSpace::Shared | MemSpace::Local | MemSpace::Reg => format!(
                "a value read from {} memory at {at}, which the kernel wrote there; warpscope does not yet follow the values a kernel stores (docs/model.md#kernels-on-data)",
                if space == MemSpace::Shared { "shared" } else { "local" }
            ),
            MemSpace::Global | MemSpace::Const => format!("data loaded from memory at {at}; {}", crate::text::GIVE_DATA),
        };
        self.b.data_why(why)
    }

    /// Reads a place: arrays decay to a pointer to their first element; anything else is a load, whose value
    /// is data.
    #[cold]
    pub(super) fn load(&mut self, place: Place, span: Span) -> R<Val> {
        if let Ty::Array(elem, _) = &place.ty {
            return Ok(Val::Ptr {
                src: place.addr,
                to: (**elem).clone(),
                space: place.space,
                read_only: place.read_only,
            });
        }
        let w = self.loaded_why(place.space, span);
        let ty = place.ty.clone();
        if matches!(ty, Ty::Int { .. } | Ty::Float { .. } | Ty::Ptr(_)) && self.units(&place, false, span)?.len() == 1 {
            // One access: the memory operation itself receives the (unknown) data.
            let d = self.temp();
            let elem = match &ty {
                Ty::Int { bytes, signed } => Elem::Int { bytes: (*bytes).min(8) as u8, signed: *signed },
                Ty::Float { bytes } => Elem::Float { bytes: (*bytes).min(8) as u8 },
                _ => Elem::Ptr,
            };
            self.access_into(&place, false, span, Some(Load { dst: d, why: w, elem }))?;
            return Ok(match &ty {
                Ty::Float { .. } => Val::Float(Src::Reg(d)),
                Ty::Ptr(elem) => {
                    Val::Ptr { src: Src::Reg(d), to: (**elem).clone(), space: MemSpace::Global, read_only: false }
                }
                _ => Val::Int(Src::Reg(d), IntTy::of(&ty).unwrap_or(IntTy::INT)),
            });
        }
        self.access(&place, false, span)?;
        if matches!(ty, Ty::Struct(_) | Ty::Vector { .. }) && place.space == MemSpace::Global {
            // Each part of a struct or vector is read from given data where there is some.
            return self.peek_temp(&ty, place.addr, 0, span, w);
        }
        self.fresh_temp(&ty, span, w)
    }

    /// A value of type `ty` at `base + off`, read part by part from given data ([`Op::Peek`]), unknown for reason
    /// `why` where none is given (and for floating-point parts, whose values are not followed).
    #[cold]
    fn peek_temp(&mut self, ty: &Ty, base: Src, off: u64, span: Span, why: u32) -> R<Val> {
        let elem = match ty {
            Ty::Int { bytes, signed } if *bytes <= 8 => Elem::Int { bytes: *bytes as u8, signed: *signed },
            Ty::Ptr(_) => Elem::Ptr,
            Ty::Struct(_) | Ty::Vector { .. } => {
                let mut leaves = Vec::new();
                for (o, t) in self.fields(ty) {
                    leaves.push((o, self.peek_temp(&t, base, off + o, span, why)?));
                }
                return Ok(Val::Agg { ty: ty.clone(), leaves });
            }
            _ => return self.fresh_temp(ty, span, why),
        };
        let addr = match self.bin(BinOp::Add, Width::W64, base, Src::Imm(off), span) {
            Src::Reg(r) => r,
            imm => {
                let r = self.temp();
                self.emit(Op::Mov { dst: r, a: imm }, span);
                r
            }
        };
        let d = self.temp();
        self.emit(Op::Peek { dst: d, addr, elem, why }, span);
        Ok(match ty {
            Ty::Ptr(to) => Val::Ptr { src: Src::Reg(d), to: (**to).clone(), space: MemSpace::Global, read_only: false },
            _ => Val::Int(Src::Reg(d), IntTy::of(ty).unwrap_or(IntTy::INT)),
        })
    }

    /// A value of type `ty` in fresh temporaries, unknown for reason `why`.
    #[cold]
    pub(super) fn fresh_temp(&mut self, ty: &Ty, span: Span, why: u32) -> R<Val> {
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
    pub(super) fn index_addr(&mut self, base: Src, elem: &Ty, idx: Src, it: IntTy, span: Span) -> Src {
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
    pub(super) fn require_ptr(&mut self, src: Src, what: &str, span: Span) {
        if self.unknown_src(src) {
            let ctx = self.b.ctx(format!("{what} depends on "));
            self.emit(Op::Require { a: src, ctx }, span);
        }
    }

    #[cold]
    pub(super) fn lvalue(&mut self, e: &Ex) -> R<LRef> {
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
    pub(super) fn static_member(&self, a: &Ex, f: &str, arrow: bool) -> Option<i128> {
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
    pub(super) fn index_operator(&mut self, a: &Ex, i: &Ex, e: &Ex) -> R<LRef> {
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
    pub(super) fn member_var_error(&self, _i: usize, _f: &str, e: &Ex) -> InputError {
        self.err(e.span, "assign to a field of a struct held in a register by assigning the whole struct")
    }

    /// A field of a struct or vector held in registers.
    #[cold]
    pub(super) fn member_of(&self, v: &Val, f: &str, e: &Ex) -> R<Val> {
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
    pub(super) fn rvalue(&mut self, e: &Ex) -> R<Val> {
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
                        let w = self.loaded_why(p.space, a.span);
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
    pub(super) fn static_type(&self, a: &Ex) -> R<Ty> {
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
    pub(super) fn is_memory(&self, a: &Ex) -> bool {
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
    pub(super) fn is_pure(&self, e: &Ex) -> bool {
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
    pub(super) fn copy(&mut self, v: &Val, span: Span) -> Val {
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
    pub(super) fn unary(&mut self, op: UnOp, v: Val, e: &Ex) -> R<Val> {
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
    pub(super) fn setp(&mut self, cmp: Cmp, signed: bool, w: Width, a: Src, b: Src, span: Span) -> PredRef {
        if let (Src::Imm(x), Src::Imm(y)) = (a, b) {
            return if exec::setp(cmp, signed, w, x, y) { PredRef::TRUE } else { PredRef::TRUE.negated() };
        }
        let p = self.b.pred();
        self.emit(Op::Setp { dst: p, cmp, signed, w, a, b }, span);
        PredRef::of(p)
    }

    /// A predicate as an `int` 0 or 1.
    #[cold]
    pub(super) fn bool_val(&mut self, p: PredRef, span: Span) -> Val {
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
    pub(super) fn binary(&mut self, op: CBin, x: Val, y: Val, e: &Ex) -> R<Val> {
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
    pub(super) fn int_binary(&mut self, op: CBin, a: Src, ta: IntTy, b: Src, tb: IntTy, e: &Ex) -> R<Val> {
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
    pub(super) fn pred_logic(&mut self, op: PredOp, a: PredRef, b: PredRef, span: Span) -> PredRef {
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
    pub(super) fn short_circuit(&mut self, op: CBin, a: &Ex, b: &Ex, e: &Ex) -> R<Val> {
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
    pub(super) fn ternary(&mut self, c: &Ex, a: &Ex, b: &Ex, e: &Ex) -> R<Val> {
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
    pub(super) fn result_slot(&mut self, like: &Val, e: &Ex) -> R<(Val, Ty)> {
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
    pub(super) fn select(&mut self, p: PredRef, x: Val, y: Val, e: &Ex) -> R<Val> {
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
    pub(super) fn assign(&mut self, lhs: &Ex, op: Option<CBin>, v: Val, e: &Ex) -> R<Val> {
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
                let w = self.loaded_why(p.space, lhs.span);
                self.fresh_temp(&p.ty, lhs.span, w)
            }
        }
    }
}
