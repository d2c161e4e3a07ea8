//! Statements and control flow: blocks, loops, branches and conditions, and the integer and pointer values conditions read.
//! Part of the CUDA front end's lowering (`lower.rs`): methods of its `Lower`.

use super::*;

impl<'a> Lower<'a> {
    #[cold]
    pub(super) fn block(&mut self, stmts: &[Stmt]) -> R<()> {
        for s in stmts {
            self.stmt_(s)?;
        }
        Ok(())
    }

    #[cold]
    pub(super) fn stmt_(&mut self, s: &Stmt) -> R<()> {
        let start = stmt_start(s);
        if start != 0 || !matches!(s, Stmt::Block(_) | Stmt::Nop) {
            self.set_stmt(start);
        }
        let mark = self.b.temps_mark();
        let r = self.stmt_inner(s);
        self.b.release(mark);
        r
    }

    /// A loop's body, with `continue` going to `next` and `break` to `exit`; then `next` is placed and the
    /// loop's own accesses (condition, step) take the loop statement's site keys after the body's.
    pub(super) fn loop_body(&mut self, body: &Stmt, next: Label, exit: Label, stmt: usize) -> R<()> {
        self.loops.push((next, exit));
        let r = self.stmt_(body);
        self.loops.pop();
        r?;
        self.b.place(next);
        self.set_stmt(stmt);
        self.seq = 1 << 20;
        Ok(())
    }

    #[cold]
    pub(super) fn stmt_inner(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Nop => Ok(()),
            Stmt::Return(value, span) => {
                let Some(frame) = self.frames.last() else {
                    if let Some(v) = value {
                        return Err(self.err(v.span, "a kernel returns nothing: write `return;`"));
                    }
                    self.emit(Op::Exit, *span);
                    return Ok(());
                };
                let (end, ret) = (frame.end, frame.ret.clone());
                match (value, ret) {
                    (Some(v), Some((ty, b))) => {
                        let x = self.rvalue(v)?;
                        let x = self.convert(&ty, x, v.span)?;
                        // A returned pointer points where the returned value does: the first `return` says
                        // which space; another space in a later one is an error, as for any pointer variable.
                        let b = match (&b, &x) {
                            (
                                Binding::Var { ty: vt, val: Val::Ptr { src, to, space, read_only } },
                                Val::Ptr { space: s, read_only: r, .. },
                            ) if *space != *s => {
                                if frame_returned(self) {
                                    return Err(self.err(
                                        v.span,
                                        "this function returns pointers into two memory spaces; warpscope needs one",
                                    ));
                                }
                                let nb = Binding::Var {
                                    ty: vt.clone(),
                                    val: Val::Ptr { src: *src, to: to.clone(), space: *s, read_only: *r || *read_only },
                                };
                                if let Some(f) = self.frames.last_mut() {
                                    f.ret = Some((ty.clone(), nb.clone()));
                                }
                                nb
                            }
                            _ => b,
                        };
                        if let Some(f) = self.frames.last_mut() {
                            f.returned = true;
                        }
                        self.assign_var_binding(&b, x, v.span)?;
                    }
                    (Some(v), None) => self.discard(v)?,
                    (None, Some(_)) => {
                        return Err(self.err(*span, "this function returns a value: write `return VALUE;`"))
                    }
                    (None, None) => {}
                }
                self.b.bra(end, None, *span);
                Ok(())
            }
            Stmt::DoWhile(body, c, span) => {
                let (top, next, exit) = (self.b.label(), self.b.label(), self.b.label());
                self.b.place(top);
                self.loop_body(body, next, exit, span.start)?;
                let p = self.cond(c, "the loop condition")?;
                self.branch(top, p, true, "the condition of the `do ... while` loop", c.span);
                self.b.place(exit);
                Ok(())
            }
            Stmt::Break | Stmt::Continue => {
                let target = self.loops.last().map(|&(c, b)| if matches!(s, Stmt::Break) { b } else { c });
                match target {
                    Some(t) => self.b.bra(t, None, Span { start: 0, end: 1 }),
                    // Outside a loop it ends the thread, as a return would.
                    None => self.emit(Op::Exit, Span { start: 0, end: 1 }),
                }
                Ok(())
            }
            Stmt::Expr(e) => self.discard(e),
            Stmt::Decl(ds) => {
                for d in ds {
                    self.declare(d)?;
                }
                Ok(())
            }
            Stmt::Block(v) => {
                self.open_scope();
                let r = self.block(v);
                self.close_scope();
                r
            }
            Stmt::If(c, t, e) => {
                let p = self.cond(c, "the condition")?;
                let else_l = self.b.label();
                self.branch(else_l, p, false, "the condition of the `if`", c.span);
                self.stmt_(t)?;
                match e {
                    Some(e) => {
                        let end = self.b.label();
                        self.b.bra(end, None, c.span);
                        self.b.place(else_l);
                        self.stmt_(e)?;
                        self.b.place(end);
                    }
                    None => self.b.place(else_l),
                }
                Ok(())
            }
            Stmt::For(init, cond, step, body, span) => {
                self.open_scope();
                let r = self.for_loop(init.as_deref(), cond.as_ref(), step.as_ref(), body, *span);
                self.close_scope();
                r
            }
            Stmt::While(c, body, span) => {
                let (top, next, exit) = (self.b.label(), self.b.label(), self.b.label());
                self.b.place(top);
                self.b.place(next);
                self.set_stmt(span.start);
                let p = self.cond(c, "the loop condition")?;
                self.branch(exit, p, false, "the condition of the `while` loop", c.span);
                self.loops.push((next, exit));
                let r = self.stmt_(body);
                self.loops.pop();
                r?;
                self.b.bra(top, None, *span);
                self.b.place(exit);
                Ok(())
            }
        }
    }

    /// Evaluates an expression whose value is not used: `i++` then needs no copy of the old value.
    #[cold]
    pub(super) fn discard(&mut self, e: &Ex) -> R<()> {
        match &e.kind {
            E::IncDec(false, inc, a) => {
                let pre = Ex { kind: E::IncDec(true, *inc, a.clone()), ..e.clone() };
                self.rvalue(&pre).map(|_| ())
            }
            E::Call(n, args) if n == "__comma" => args.iter().try_for_each(|a| self.discard(a)),
            // An atomic whose result is not used: ptxas makes it a reduction (docs/model.md#atomics).
            E::Call(n, args) if n.starts_with("atomic") => self.atomic(n, args, e, true).map(|_| ()),
            _ => self.rvalue(e).map(|_| ()),
        }
    }

    #[cold]
    pub(super) fn for_loop(
        &mut self,
        init: Option<&Stmt>,
        cond: Option<&Ex>,
        step: Option<&Ex>,
        body: &Stmt,
        span: Span,
    ) -> R<()> {
        if let Some(i) = init {
            self.stmt_(i)?;
        }
        let (top, next, exit) = (self.b.label(), self.b.label(), self.b.label());
        self.b.place(top);
        self.set_stmt(span.start);
        if let Some(c) = cond {
            let p = self.cond(c, "the loop condition")?;
            self.branch(exit, p, false, "the condition of the `for` loop", c.span);
        }
        self.loop_body(body, next, exit, span.start)?;
        if let Some(s) = step {
            self.discard(s)?;
        }
        self.b.bra(top, None, span);
        self.b.place(exit);
        Ok(())
    }

    /// A conditional branch to `to` where `cond` holds (`taken_when` true) or fails (false), described as the
    /// source's `what` at `span`: a condition that depends on data then runs both ways (it only decides values)
    /// or is decided by the stated data-branch assumption (see `Program::data_branches`).
    #[cold]
    pub(super) fn branch(&mut self, to: Label, cond: PredRef, taken_when: bool, what: &str, span: Span) {
        let guard = if taken_when { cond } else { cond.negated() };
        self.b.bra(to, Some(guard), span);
        self.b.describe_branch(what, taken_when);
    }

    /// A condition as a predicate (unknown where it depends on data: see [`Lower::branch`]).
    #[cold]
    pub(super) fn cond(&mut self, c: &Ex, what: &str) -> R<PredRef> {
        // A comparison of two integers becomes the predicate itself, not a 0/1 value tested again.
        if let E::Binary(op @ (CBin::Lt | CBin::Le | CBin::Gt | CBin::Ge | CBin::Eq | CBin::Ne), a, b) = &c.kind {
            let (x, y) = (self.rvalue(a)?, self.rvalue(b)?);
            if let (Val::Int(p, ta), Val::Int(q, tb)) = (&x, &y) {
                let t = IntTy::common(*ta, *tb);
                let w = t.width();
                let (p, q) =
                    if w == Width::W64 { (self.to64(*p, *ta, c.span), self.to64(*q, *tb, c.span)) } else { (*p, *q) };
                let cmp = match op {
                    CBin::Lt => Cmp::Lt,
                    CBin::Le => Cmp::Le,
                    CBin::Gt => Cmp::Gt,
                    CBin::Ge => Cmp::Ge,
                    CBin::Eq => Cmp::Eq,
                    _ => Cmp::Ne,
                };
                return Ok(self.setp(cmp, t.signed, w, p, q, c.span));
            }
            let v = self.binary(*op, x, y, c)?;
            return self.truth(v, c.span, what);
        }
        if let E::Unary(UnOp::LNot, a) = &c.kind {
            return Ok(self.cond(a, what)?.negated());
        }
        let v = self.rvalue(c)?;
        self.truth(v, c.span, what)
    }

    #[cold]
    pub(super) fn truth(&mut self, v: Val, span: Span, what: &str) -> R<PredRef> {
        let (src, w) = match v {
            Val::Int(s, t) => (s, t.width()),
            Val::Float(s) => (s, Width::W64),
            Val::Ptr { src, .. } => (src, Width::W64),
            Val::Agg { .. } => return Err(self.err(span, format!("{what} is a struct, not a number"))),
        };
        if let Src::Imm(x) = src {
            return Ok(if x & w.mask() != 0 { PredRef::TRUE } else { PredRef::TRUE.negated() });
        }
        let p = self.b.pred();
        self.emit(Op::Setp { dst: p, cmp: Cmp::Ne, signed: false, w, a: src, b: Src::Imm(0) }, span);
        Ok(PredRef::of(p))
    }

    /// An integer the program needs to know (an index, an array size): its value and type.
    #[cold]
    pub(super) fn int(&mut self, e: &Ex, what: &str) -> R<(Src, IntTy)> {
        let v = self.rvalue(e)?;
        let (src, t) = match v {
            Val::Int(s, t) => (s, t),
            Val::Float(s) => (s, IntTy::INT),
            Val::Ptr { .. } => return Err(self.err(e.span, format!("{what} is a pointer, not a number"))),
            Val::Agg { .. } => return Err(self.err(e.span, format!("{what} is a struct, not a number"))),
        };
        if self.unknown_src(src) && !self.data_index_ok {
            let ctx = self.b.ctx(format!("{what} depends on "));
            self.emit(Op::Require { a: src, ctx }, e.span);
        }
        Ok((src, t))
    }

    /// The base of a global array or pointer: the value given with `--set`, else its default. Every one takes
    /// its default's place in declaration order whether or not it is given, so that giving one never moves
    /// another onto it (`copy(in, out)` with `in` set keeps `out` one stride above `in`'s default).
    #[cold]
    pub(super) fn global_base(&mut self, name: &str) -> u64 {
        let default = match self.globals.get(name) {
            Some(&b) => b,
            None => {
                let b = self.next_global;
                self.next_global += GLOBAL_STRIDE;
                self.globals.insert(name.to_string(), b);
                if let Some(&v) = self.vars.get(name) {
                    self.given_bases.push((name.to_string(), v as u64));
                }
                b
            }
        };
        match self.vars.get(name) {
            Some(&v) => v as u64,
            None => default,
        }
    }

    /// Records a global array or pointer (`elem`: its element type) as one that data can be given for.
    #[cold]
    pub(super) fn declare_array(&mut self, name: &str, base: u64, elem: &Ty) {
        #[cfg(not(feature = "data"))]
        let _ = (name, base, elem);
        #[cfg(feature = "data")]
        self.declare_array_for_data(name, base, elem);
    }

    #[cfg(feature = "data")]
    #[cold]
    fn declare_array_for_data(&mut self, name: &str, base: u64, elem: &Ty) {
        if self.arrays.iter().any(|a| a.name == name) {
            return;
        }
        // An array of arrays or of vectors (`uint4`) holds its scalars one after another: data fills them so.
        let mut t = elem;
        while let Ty::Array(inner, _) | Ty::Vector { elem: inner, .. } = t {
            t = inner;
        }
        let elem = match t {
            Ty::Int { bytes, signed } if *bytes <= 8 => Elem::Int { bytes: *bytes as u8, signed: *signed },
            Ty::Float { bytes } if *bytes <= 8 => Elem::Float { bytes: *bytes as u8 },
            Ty::Ptr(_) => Elem::Ptr,
            _ => Elem::Other,
        };
        self.arrays.push(ArrayDecl { name: name.to_string(), base, elem });
    }

    #[cold]
    pub(super) fn param_why(&mut self, d: &Decl) -> u32 {
        self.b.why(format!("the parameter `{}`, which has no value (give it one with --set {}=VALUE)", d.name, d.name))
    }
}
