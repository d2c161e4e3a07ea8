//! Declarations and types: variables and where they live (registers, local, shared), initialisers, fields, conversions between C types, and a type's access units.
//! Part of the CUDA front end's lowering (`lower.rs`): methods of its `Lower`.

use super::*;

impl<'a> Lower<'a> {
    #[cold]
    pub(super) fn declare(&mut self, d: &Decl) -> R<()> {
        if d.auto {
            let e = d.init.as_ref().ok_or_else(|| self.err(d.span, "an `auto` variable needs an initial value"))?;
            let v = self.rvalue(e)?;
            let ty = wrap_ptr(self.ty_of(&v), d.pointers);
            let v = self.convert(&ty, v, e.span)?;
            let b = self.var_with(&ty, v, d.span, e.span)?;
            self.bind(d.name.clone(), b);
            return Ok(());
        }
        let mut ty = wrap_ptr(d.base.clone(), d.pointers);
        for dim in d.dims.iter().rev() {
            let n = match dim {
                Some(e) => {
                    let v = self.rvalue(e)?;
                    let n = match v {
                        Val::Int(Src::Imm(x), t) => exec::conv(x, t.promoted().bits, t.promoted().signed) as i64,
                        _ => {
                            return Err(self.err(
                                e.span,
                                "the array size must be a constant (a number, a #define, a const or a --set value)",
                            ))
                        }
                    };
                    if !(1..=1 << 30).contains(&n) {
                        return Err(self.err(e.span, format!("array size {n} is out of range (1..2^30)")));
                    }
                    n as u64
                }
                None => 0,
            };
            ty = Ty::Array(Rc::new(ty), n);
        }
        let binding = match d.storage {
            Storage::Shared => {
                let t = types(self);
                let (size, align) = (t.size(&ty), t.align(&ty).max(16));
                // Dynamic shared memory (an unsized `extern __shared__` array, `SharedMemory<T>()`) starts
                // where the kernel's static shared memory ends; a static array declared after it was used
                // asks for a second pass that knows that end.
                if size == 0 {
                    self.dynamic_shared.get_or_insert(d.span);
                    let off = self.dynamic_base.unwrap_or(self.shared_top.div_ceil(16) * 16);
                    let b = Binding::Mem(Place { space: MemSpace::Shared, addr: Src::Imm(off), ty, read_only: false });
                    self.bind(d.name.clone(), b);
                    return Ok(());
                }
                if self.dynamic_shared.is_some() {
                    self.static_after_dynamic = true;
                }
                let off = self.shared_top.div_ceil(align) * align;
                self.shared_top = off + size;
                Binding::Mem(Place { space: MemSpace::Shared, addr: Src::Imm(off), ty, read_only: false })
            }
            Storage::Global if !d.dims.is_empty() => {
                let base = self.global_base(&d.name);
                self.declare_array(&d.name, base, &ty);
                Binding::Mem(Place { space: MemSpace::Global, addr: Src::Imm(base), ty, read_only: false })
            }
            // `__constant__` variables: offsets in the constant bank, each at its type's alignment, in
            // declaration order as nvcc lays them out (docs/model.md#constant-memory: 64 KB in all).
            Storage::ConstMem => {
                let off = match self.const_offsets.get(&*d.name) {
                    Some(&o) => o,
                    None => {
                        let t = types(self);
                        let (size, align) = (t.size(&ty), t.align(&ty).max(4));
                        let off = self.const_top.div_ceil(align) * align;
                        if off + size > 64 << 10 {
                            return Err(self.err(
                                d.span,
                                format!(
                                    "`{}` ends at byte {} of constant memory, which holds 64 KB",
                                    d.name,
                                    off + size
                                ),
                            ));
                        }
                        self.const_top = off + size;
                        self.const_offsets.insert(d.name.to_string(), off);
                        off
                    }
                };
                Binding::Mem(Place { space: MemSpace::Const, addr: Src::Imm(off), ty, read_only: false })
            }
            Storage::Param | Storage::Global => match &ty {
                Ty::Ptr(elem) => {
                    let base = self.global_base(&d.name);
                    self.declare_array(&d.name, base, elem);
                    let r = self.b.reg();
                    self.emit(Op::Mov { dst: r, a: Src::Imm(base) }, d.span);
                    // A `const T * __restrict__` kernel parameter is read through the read-only path where
                    // the CC has one (3.5 and later), as nvcc compiles it.
                    let read_only = d.const_restrict
                        && d.storage == Storage::Param
                        && crate::model::arch::Cc::sm_has_read_only_path(self.sm);
                    let val = Val::Ptr { src: Src::Reg(r), to: (**elem).clone(), space: MemSpace::Global, read_only };
                    Binding::Var { ty: ty.clone(), val }
                }
                _ => {
                    let mut v = self.vars.get(&*d.name).copied();
                    if let (Some(x), Ty::Int { bytes, .. }) = (v, &ty) {
                        // A value the parameter cannot hold (signed or unsigned) would be cut quietly.
                        let bits = 8 * (*bytes).min(8);
                        if x < -(1i128 << (bits - 1)) || x >= 1i128 << bits {
                            return Err(self.err(
                                d.span,
                                format!("--set {}={x} does not fit in `{}`, a {bits}-bit integer", d.name, d.name),
                            ));
                        }
                    }
                    if let (None, Some(&a)) = (v, self.launch_values.get(&*d.name)) {
                        // The value the file's launch passes.
                        v = Some(a);
                        self.from_launch.push(format!("{} = {a}", d.name));
                    }
                    if v.is_none() && d.storage == Storage::Param {
                        // An integer kernel parameter with no value: the launch's thread count
                        // (docs/model.md#kernel-parameters), said in a note.
                        if let Ty::Int { bytes, .. } = ty {
                            let threads = u64::from(self.launch.threads()) * self.launch.grid.volume();
                            let mask = if bytes >= 8 { u64::MAX } else { (1u64 << (8 * bytes)) - 1 };
                            v = Some(i128::from(threads & mask));
                            self.defaulted.push(format!("{} = {}", d.name, threads & mask));
                        }
                    }
                    let why = self.param_why(d);
                    self.new_var(&ty, d.span, |l, r, span| match v {
                        Some(v) => l.emit(Op::Mov { dst: r, a: Src::Imm(v as u64) }, span),
                        None => l.emit(Op::Unknown { dst: r, why }, span),
                    })?
                }
            },
            Storage::Reg | Storage::Const | Storage::Macro if !d.dims.is_empty() => {
                // A local array lives in local memory, laid out per thread.
                let t = types(self);
                // `float a[] = {1, 2, 3}`: the size from the initialiser.
                if let (Ty::Array(elem, 0), Some(Ex { kind: E::InitList(items), .. })) = (&ty, &d.init) {
                    ty = Ty::Array(elem.clone(), items.len() as u64);
                }
                let (size, align) = (t.size(&ty), t.align(&ty).max(4));
                let home = self.homes.get(&d.span.start).cloned();
                let space =
                    if home == Some(super::super::regs::Home::Registers) { MemSpace::Reg } else { MemSpace::Local };
                let top = if space == MemSpace::Reg { &mut self.reg_top } else { &mut self.local_top };
                let off = top.div_ceil(align) * align;
                *top = off + size;
                let line = self.lines.line(d.span.start.min(self.src.len()));
                let entry = match &home {
                    Some(super::super::regs::Home::Local(at, why)) => {
                        format!("`{}` (line {line}) in local memory: {why} ({})", d.name, self.pos(*at))
                    }
                    Some(super::super::regs::Home::Registers) => format!("`{}` (line {line}) in registers", d.name),
                    None => format!("`{}` (line {line}) in local memory", d.name),
                };
                if !self.array_homes.contains(&entry) {
                    self.array_homes.push(entry);
                }
                let place = Place { space, addr: Src::Imm(off), ty, read_only: false };
                if let Some(init) = &d.init {
                    self.init_array(&place, init)?;
                }
                Binding::Mem(place)
            }
            // A variable whose address is taken and indexed at run time (`T *p = reinterpret_cast<T *>(&v);
            // p[n - i]`) is local memory, as nvcc places it: its reads and writes are LDL and STL.
            Storage::Reg
                if d.pointers == 0
                    && !d.reference
                    && matches!(self.homes.get(&d.span.start), Some(super::super::regs::Home::Local(..))) =>
            {
                let t = types(self);
                let (size, align) = (t.size(&ty), t.align(&ty).max(4));
                let off = self.local_top.div_ceil(align) * align;
                self.local_top = off + size;
                let line = self.lines.line(d.span.start.min(self.src.len()));
                if let Some(super::super::regs::Home::Local(at, why)) = self.homes.get(&d.span.start).cloned() {
                    let entry = format!("`{}` (line {line}) in local memory: {why} ({})", d.name, self.pos(at));
                    if !self.array_homes.contains(&entry) {
                        self.array_homes.push(entry);
                    }
                }
                let place = Place { space: MemSpace::Local, addr: Src::Imm(off), ty: ty.clone(), read_only: false };
                if let Some(init) = &d.init {
                    // Its value is not followed once in memory (as any memory's); the initial value's own
                    // loads count, and the variable is written whole.
                    self.init_value(&ty, init)?;
                    self.access(&place, true, d.span)?;
                }
                Binding::Mem(place)
            }
            Storage::Macro | Storage::Const if self.vars.contains_key(&*d.name) => {
                let v = self.vars[&*d.name];
                let t = if d.storage == Storage::Macro {
                    IntTy::of_literal(v)
                } else {
                    IntTy::of(&ty).unwrap_or(IntTy::INT)
                };
                Binding::Const(Val::Int(Src::Imm(v as u64), t))
            }
            Storage::Macro => {
                let e = d.init.as_ref().ok_or_else(|| self.err(d.span, "a #define needs a value"))?;
                let v = self.rvalue(e)?;
                match v.src() {
                    Some(Src::Imm(_)) => Binding::Const(v),
                    _ => {
                        let ty = match &v {
                            Val::Int(_, t) => Ty::Int { bytes: u32::from(t.bits) / 8, signed: t.signed },
                            _ => ty,
                        };
                        let r = self.new_var(&ty, d.span, |_, _, _| {})?;
                        self.assign_var_binding(&r, v, e.span)?;
                        r
                    }
                }
            }
            Storage::Reg | Storage::Const => match &d.init {
                Some(e) => {
                    let v = self.init_value(&ty, e)?;
                    match (d.storage, v.src()) {
                        (Storage::Const, Some(Src::Imm(_))) => Binding::Const(v),
                        _ => self.var_with(&ty, v, d.span, e.span)?,
                    }
                }
                None => {
                    let why = self.param_why(d);
                    self.new_var(&ty, d.span, |l, r, span| l.emit(Op::Unknown { dst: r, why }, span))?
                }
            },
        };
        self.bind(d.name.clone(), binding);
        Ok(())
    }

    /// Adds a variable to the innermost scope.
    #[cold]
    pub(super) fn bind(&mut self, name: Rc<str>, binding: Binding) {
        // A redeclaration in the same scope replaces the variable; an inner scope shadows it.
        let from = self.marks.last().copied().unwrap_or(0);
        match self.scopes[from..].iter_mut().find(|(n, _)| **n == *name) {
            Some((_, old)) => *old = binding,
            None => self.scopes.push((name, binding)),
        }
    }

    /// A name a fragment uses without declaring it: indexed, a global pointer whose element type its use
    /// tells (4-byte `int` when nothing does); otherwise an integer parameter with the launch's thread count.
    /// Either way it is declared at the top level and listed in a note.
    #[cold]
    pub(super) fn implicit(&mut self, n: &str, indexed: bool, span: Span) -> R<Val> {
        if let Some((ns, _)) = n.split_once("::") {
            return Err(self.err(span, format!("`{ns}::` is a namespace or class warpscope does not know (known: cooperative_groups and its aliases)")));
        }
        if types(self).lookup(n).is_some() || matches!(n, "auto" | "thread_block_tile") {
            return Err(self.err(span, format!("the type `{n}` where a value belongs")));
        }
        let at = self.pos(span);
        let (ty, said) = if indexed {
            let (elem, from) = match infer_elem(self.ast, n) {
                Some((t, why)) => (t, why),
                None => (
                    Ty::Int { bytes: 4, signed: true },
                    "nothing in the code tells its element type, so 4-byte int".to_string(),
                ),
            };
            let tname = types(self).name(&elem);
            let base = self.global_base(n);
            let said = format!("`{n}` (first used at {at}) is a global pointer to {tname}, at 0x{base:x} ({from}); declare it to say otherwise: `{} *{n};`", c_name(types(self), &elem));
            (Ty::Ptr(Rc::new(elem)), said)
        } else {
            let threads = u64::from(self.launch.threads()) * self.launch.grid.volume();
            (Ty::Int { bytes: 4, signed: true }, format!("`{n}` (first used at {at}) is an int parameter = {threads}, the launch's thread count; declare it (`int {n} = 1000;`) or give it with --set {n}=VALUE"))
        };
        self.assumed.push(said);
        let v = match &ty {
            Ty::Ptr(elem) => {
                let base = self.global_base(n);
                self.declare_array(n, base, elem);
                Val::Ptr { src: Src::Imm(base), to: (**elem).clone(), space: MemSpace::Global, read_only: false }
            }
            _ => {
                let threads = u64::from(self.launch.threads()) * self.launch.grid.volume();
                Val::Int(Src::Imm(threads & 0xffff_ffff), IntTy::INT)
            }
        };
        // Declared once, for every later use (in any scope).
        let b = self.var_with(&ty, v.clone(), span, span)?;
        let at_top = self.globals_end.min(self.scopes.len());
        self.scopes.insert(at_top, (Rc::from(n), b));
        self.globals_end += 1;
        for m in &mut self.marks {
            if *m >= at_top {
                *m += 1;
            }
        }
        Ok(v)
    }

    /// The C type of a value (for `auto` and template argument deduction).
    #[cold]
    pub(super) fn ty_of(&self, v: &Val) -> Ty {
        match v {
            Val::Int(_, t) => Ty::Int { bytes: u32::from(t.bits) / 8, signed: t.signed },
            Val::Float(_) => Ty::Float { bytes: 4 },
            Val::Ptr { to, .. } => Ty::Ptr(Rc::new(to.clone())),
            Val::Agg { ty, .. } => ty.clone(),
        }
    }

    /// A register variable of type `ty` holding `v`; a pointer variable points where `v` does (its space).
    #[cold]
    pub(super) fn var_with(&mut self, ty: &Ty, v: Val, span: Span, vspan: Span) -> R<Binding> {
        if self.class_like(ty) {
            return Ok(Binding::Mem(self.class_place(ty)));
        }
        let mut b = self.new_var(ty, span, |_, _, _| {})?;
        if let (Binding::Var { val: Val::Ptr { space, read_only, .. }, .. }, Val::Ptr { space: s, read_only: r, .. }) =
            (&mut b, &v)
        {
            *space = *s;
            *read_only = *r;
        }
        self.assign_var_binding(&b, v, vspan)?;
        Ok(b)
    }

    /// A register variable of type `ty`; `init` fills each new scalar register.
    #[cold]
    pub(super) fn new_var(&mut self, ty: &Ty, span: Span, mut init: impl FnMut(&mut Self, Reg, Span)) -> R<Binding> {
        if self.class_like(ty) {
            return Ok(Binding::Mem(self.class_place(ty)));
        }
        let val = self.fresh(ty, span, &mut init)?;
        Ok(Binding::Var { ty: ty.clone(), val })
    }

    #[cold]
    pub(super) fn fresh(&mut self, ty: &Ty, span: Span, init: &mut impl FnMut(&mut Self, Reg, Span)) -> R<Val> {
        match ty {
            Ty::Int { .. } => {
                let r = self.b.reg();
                init(self, r, span);
                Ok(Val::Int(Src::Reg(r), IntTy::of(ty).unwrap_or(IntTy::INT)))
            }
            Ty::Float { .. } => {
                let r = self.b.reg();
                init(self, r, span);
                Ok(Val::Float(Src::Reg(r)))
            }
            Ty::Ptr(elem) => {
                let r = self.b.reg();
                init(self, r, span);
                Ok(Val::Ptr { src: Src::Reg(r), to: (**elem).clone(), space: MemSpace::Global, read_only: false })
            }
            Ty::Struct(_) | Ty::Vector { .. } => {
                let mut leaves = Vec::new();
                for (off, t) in self.fields(ty) {
                    leaves.push((off, self.fresh(&t, span, init)?));
                }
                Ok(Val::Agg { ty: ty.clone(), leaves })
            }
            Ty::Array(..) | Ty::Void => {
                Err(self.err(span, format!("a variable of type {} cannot live in a register", types(self).name(ty))))
            }
        }
    }

    /// Decides where the local arrays of a function body live (see `regs`).
    #[cold]
    pub(super) fn find_homes(&mut self, body: &[Stmt]) {
        let bound = |n: &str| match self.lookup(n).map(|i| &self.scopes[i].1) {
            _ if self.vars.contains_key(n) => self.vars.get(n).map(|&v| v as u64),
            Some(Binding::Const(v)) => match v.src() {
                Some(Src::Imm(x)) => Some(x),
                _ => None,
            },
            // `x128::size`: a class's `static constexpr` member.
            None if n.contains("::") => {
                let (cls, m) = n.rsplit_once("::")?;
                let Ok(Some(Ty::Struct(i))) = self.lookup_type(cls, Span { start: 0, end: 0 }) else { return None };
                types(self).def(i).and_then(|d| d.statics.iter().find(|s| s.0 == m).map(|s| s.1 as u64))
            }
            _ => None,
        };
        // The body's own integer constants (`constexpr uint WMITER = (WM * WN) / (...)`), not declared yet
        // when the homes are decided, in order: a template call's arguments may name them.
        let mut ahead: HashMap<String, i128> = HashMap::new();
        for st in body {
            let Stmt::Decl(ds) = st else { continue };
            for d in ds.iter().filter(|d| d.storage == Storage::Const && d.pointers == 0 && d.dims.is_empty()) {
                let (Some(mut init), Ty::Int { .. }) = (d.init.as_ref(), &d.base) else { continue };
                // `constexpr size_t N{A / B};`
                if let E::InitList(items) = &init.kind {
                    match items.as_slice() {
                        [one] => init = one,
                        _ => continue,
                    }
                }
                let names = |n: &str| ahead.get(n).copied().or_else(|| bound(n).map(|x| i128::from(x as i64)));
                if let Ok(v) = super::super::pre::const_eval(self.src, init, &names) {
                    ahead.insert(d.name.to_string(), v);
                }
            }
        }
        let value = |n: &str| bound(n).or_else(|| ahead.get(n).map(|&v| v as u64));
        let constant = |n: &str| self.vars.contains_key(n) || value(n).is_some();
        let file = Rc::clone(&self.ast.file);
        let src = self.src;
        let ts = types(self);
        // A function that passes the array on to another is followed there too (a few calls deep).
        let callee = |f: &str, k: usize| callee_keeps(src, &file, ts, f, k, &constant, &value, 0);
        let found = super::super::regs::homes(body, &constant, &callee);
        self.homes.extend(found);
    }

    /// A value of type `ty` from `e`: a brace initialiser fills the type's scalar fields in order (nested
    /// braces read flat, as C's brace elision does), the rest zero; anything else is converted.
    pub(super) fn init_value(&mut self, ty: &Ty, e: &Ex) -> R<Val> {
        let E::InitList(items) = &e.kind else {
            let v = self.rvalue(e)?;
            return self.convert(ty, v, e.span);
        };
        // `int4 v{*reinterpret_cast<const int4 *>(p)}`: one value of the type itself initialises it whole;
        // a scalar is its first field, the rest zero (read once either way).
        if let ([one], Ty::Struct(_) | Ty::Vector { .. }) = (items.as_slice(), ty) {
            if !matches!(one.kind, E::InitList(_)) {
                let v = self.rvalue(one)?;
                if matches!(&v, Val::Agg { ty: t, .. } if t == ty) {
                    return Ok(v);
                }
                let mut out = Vec::new();
                for (k, (off, fty)) in self.fields(ty).into_iter().enumerate() {
                    let x = if k == 0 { self.convert(&fty, v.clone(), one.span)? } else { self.zero(&fty, e.span)? };
                    out.push((off, x));
                }
                return Ok(Val::Agg { ty: ty.clone(), leaves: out });
            }
        }
        let mut flat = Vec::new();
        flatten_init(e, &mut flat);
        match ty {
            Ty::Struct(_) | Ty::Vector { .. } => {
                let leaves = self.fields(ty);
                if flat.len() > leaves.len() {
                    return Err(self.err(e.span, format!("{} values for {} fields", flat.len(), leaves.len())));
                }
                let mut out = Vec::new();
                for (k, (off, fty)) in leaves.into_iter().enumerate() {
                    let v = match flat.get(k) {
                        Some(x) => {
                            let v = self.rvalue(x)?;
                            self.convert(&fty, v, x.span)?
                        }
                        None => self.zero(&fty, e.span)?,
                    };
                    out.push((off, v));
                }
                Ok(Val::Agg { ty: ty.clone(), leaves: out })
            }
            Ty::Array(..) => Err(self.err(e.span, "an array is initialised in its declaration")),
            _ => match flat.as_slice() {
                [] => self.zero(ty, e.span),
                [x] => {
                    let v = self.rvalue(x)?;
                    self.convert(ty, v, x.span)
                }
                _ => Err(self.err(e.span, format!("{} values for one {}", flat.len(), types(self).name(ty)))),
            },
        }
    }

    /// Zero of a scalar type (a float's value is not followed, as any float's).
    #[cold]
    pub(super) fn zero(&mut self, ty: &Ty, span: Span) -> R<Val> {
        let v = Val::Int(Src::Imm(0), IntTy::INT);
        match ty {
            Ty::Struct(_) | Ty::Vector { .. } => {
                let mut out = Vec::new();
                for (off, fty) in self.fields(ty) {
                    out.push((off, self.zero(&fty, span)?));
                }
                Ok(Val::Agg { ty: ty.clone(), leaves: out })
            }
            _ => self.convert(ty, v, span),
        }
    }

    /// The stores an array's initialiser makes: element by element in order (brace elision read flat), the
    /// rest zero, as C initialises every element.
    #[cold]
    pub(super) fn init_array(&mut self, place: &Place, e: &Ex) -> R<()> {
        let mut flat = Vec::new();
        flatten_init(e, &mut flat);
        let leaves = self.fields(&place.ty);
        if flat.len() > leaves.len() {
            return Err(self.err(e.span, format!("{} values for {} elements", flat.len(), leaves.len())));
        }
        for (k, (off, fty)) in leaves.into_iter().enumerate() {
            if let Some(x) = flat.get(k) {
                self.rvalue(x)?;
            }
            let at = self.bin(BinOp::Add, Width::W64, place.addr, Src::Imm(off), e.span);
            self.access(&Place { space: place.space, addr: at, ty: fty, read_only: false }, true, e.span)?;
        }
        Ok(())
    }

    /// The scalar fields of a struct or vector type, with their offsets (nested arrays and structs flattened).
    #[cold]
    pub(super) fn fields(&self, ty: &Ty) -> Vec<(u64, Ty)> {
        let t = types(self);
        let mut out = Vec::new();
        #[cold]
        fn walk(t: &Types, ty: &Ty, off: u64, out: &mut Vec<(u64, Ty)>) {
            match ty {
                Ty::Vector { elem, n, .. } => {
                    let es = t.size(elem);
                    for k in 0..u64::from(*n) {
                        walk(t, elem, off + es * k, out);
                    }
                }
                Ty::Struct(i) => {
                    if let Some(s) = t.def(*i) {
                        for (_, fty, foff) in &s.fields {
                            walk(t, fty, off + foff, out);
                        }
                    }
                }
                Ty::Array(e, n) => {
                    let es = t.size(e);
                    for k in 0..*n {
                        walk(t, e, off + es * k, out);
                    }
                }
                Ty::Void => {}
                other => out.push((off, other.clone())),
            }
        }
        walk(t, ty, 0, &mut out);
        out
    }

    #[cold]
    pub(super) fn assign_var_binding(&mut self, b: &Binding, v: Val, span: Span) -> R<()> {
        if let Binding::Var { val, .. } = b {
            let dst = val.clone();
            self.store_into(&dst, v, span)?;
        }
        Ok(())
    }

    /// Copies value `v` (already of the variable's type) into the registers of `dst`.
    #[cold]
    pub(super) fn store_into(&mut self, dst: &Val, v: Val, span: Span) -> R<()> {
        match (dst, v) {
            (Val::Agg { leaves, .. }, Val::Agg { leaves: from, .. }) => {
                for ((_, d), (_, s)) in leaves.iter().zip(from) {
                    self.store_into(d, s, span)?;
                }
                Ok(())
            }
            (d, s) => match (d.src(), s.src()) {
                (Some(Src::Reg(r)), Some(Src::Reg(t))) if r == t => Ok(()),
                (Some(Src::Reg(r)), Some(Src::Reg(t))) if self.b.retarget_last(t, r) => {
                    let u = self.unknown_src(Src::Reg(t));
                    let was = self.unknown_src(Src::Reg(r));
                    set_flag(&mut self.maybe_unknown, r, u || was);
                    Ok(())
                }
                (Some(Src::Reg(r)), Some(a)) => {
                    self.emit(Op::Mov { dst: r, a }, span);
                    Ok(())
                }
                _ => Err(self.err(span, "cannot assign this value here")),
            },
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Types and conversions
    // ------------------------------------------------------------------------------------------------

    /// Converts a value to a variable's type: integers wrap to the type's width as on the GPU.
    #[cold]
    pub(super) fn convert(&mut self, ty: &Ty, v: Val, span: Span) -> R<Val> {
        Ok(match (ty, v) {
            (Ty::Int { .. }, Val::Int(s, from)) => {
                let to = IntTy::of(ty).unwrap_or(IntTy::INT);
                // Between the two widths the machine computes in (32 and 64 bits) a same-width conversion only
                // reinterprets the bits; narrower types wrap.
                let s = if to.bits >= 64 {
                    self.to64(s, from, span)
                } else if to.bits == 32 && from.promoted().bits == 32 {
                    s
                } else {
                    self.conv(s, to.bits, to.signed, span)
                };
                Val::Int(s, to)
            }
            (Ty::Int { .. }, Val::Ptr { src, .. }) => {
                let to = IntTy::of(ty).unwrap_or(IntTy::INT);
                let s = self.conv(src, to.bits, to.signed, span);
                Val::Int(s, to)
            }
            (Ty::Int { .. }, Val::Float(s)) => Val::Int(s, IntTy::of(ty).unwrap_or(IntTy::INT)),
            (Ty::Float { .. }, v @ Val::Float(_)) => v,
            (Ty::Float { .. }, _) => self.float(span),
            (Ty::Ptr(elem), Val::Ptr { src, space, read_only, .. }) => {
                Val::Ptr { src, to: (**elem).clone(), space, read_only }
            }
            (Ty::Ptr(elem), Val::Int(s, from)) => {
                let s = self.to64(s, from, span);
                Val::Ptr { src: s, to: (**elem).clone(), space: MemSpace::Global, read_only: false }
            }
            (Ty::Ptr(elem), Val::Float(s)) => {
                Val::Ptr { src: s, to: (**elem).clone(), space: MemSpace::Global, read_only: false }
            }
            (Ty::Struct(_) | Ty::Vector { .. }, v @ Val::Agg { .. }) => {
                let Val::Agg { ty: from, .. } = &v else { unreachable!("matched an aggregate") };
                if from != ty {
                    return Err(self
                        .err(span, format!("cannot convert {} to {}", types(self).name(from), types(self).name(ty))));
                }
                v
            }
            (ty, v) => {
                let what = match v {
                    Val::Int(..) => "an integer",
                    Val::Float(_) => "a floating-point value",
                    Val::Ptr { .. } => "a pointer",
                    Val::Agg { .. } => "a struct",
                };
                return Err(self.err(span, format!("cannot convert {what} to {}", types(self).name(ty))));
            }
        })
    }

    // ------------------------------------------------------------------------------------------------
    // Memory
    // ------------------------------------------------------------------------------------------------

    /// The accesses reading or writing a value of type `ty` makes.
    #[cold]
    pub(super) fn units(&self, place: &Place, store: bool, span: Span) -> R<Vec<Unit>> {
        let t = types(self);
        let mut units = Vec::new();
        t.units(&place.ty, "", &mut units);
        if units.is_empty() {
            return Err(self.err(
                span,
                format!("cannot {} a value of type {}", if store { "store" } else { "load" }, t.name(&place.ty)),
            ));
        }
        Ok(units
            .into_iter()
            .map(|(off, size, signed, label)| {
                // A store writes the low bytes: it has no signedness (nvdisasm prints STG.E.U8).
                let sz = Instr::size_modifier(size, signed && !store).unwrap_or("128");
                let cop = self.cop.unwrap_or("");
                let mnemonic = match (place.space, store) {
                    (MemSpace::Global, false) if place.read_only => format!("LDG.E.CONSTANT.{sz}"),
                    // Kepler and Fermi: an ordinary load is the generic LD (LDG is 3.5's read-only path).
                    (MemSpace::Global, false) if self.sm < 50 => format!("LD.E{cop}.{sz}"),
                    (MemSpace::Global, false) => format!("LDG.E{cop}.{sz}"),
                    (MemSpace::Global, true) => format!("STG.E{cop}.{sz}"),
                    (MemSpace::Shared, false) => format!("LDS.{sz}"),
                    (MemSpace::Shared, true) => format!("STS.{sz}"),
                    (MemSpace::Local | MemSpace::Reg, false) => format!("LDL.{sz}"),
                    (MemSpace::Local | MemSpace::Reg, true) => format!("STL.{sz}"),
                    (MemSpace::Const, _) => format!("LDC.{sz}"),
                };
                Unit { off, mnemonic, label }
            })
            .collect())
    }
}
