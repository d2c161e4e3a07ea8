//! Which local arrays nvcc keeps in registers. An array is registers when every index into it is a
//! compile-time constant once loops with constant trip counts are unrolled: made of literals, constants, and
//! the counters of `for` loops whose start, bound and step are such constants and whose body does not assign
//! them (and of locals computed from those, never assigned again). Any other index, or a use of the array as
//! a pointer (passed to a function, its address taken), puts it in local memory, where its accesses are
//! `LDL`/`STL`. The PTX and SASS of the same kernels show the same (tests/cuda_files.rs).
//!
//! May import: `syntax` and `lang::cexpr`'s expression tree. Reads syntax only; emits nothing.
//!
//! Its functions are `#[cold]`: they run once per analysis (see `lower.rs`).

use super::syntax::{Stmt, Storage};
use crate::lang::cexpr::{BinOp, BinOp as CBin, Ex, UnOp, E};
use crate::lang::Span;
use std::collections::{HashMap, HashSet};

/// Where a local array lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Home {
    /// In registers.
    Registers,
    /// In local memory, because of the use at the span (an index known only at run time, or a pointer use),
    /// said in words.
    Local(Span, &'static str),
}

/// The local arrays declared in `body` (keyed by their declaration's start), each with where it lives.
/// `constant` says whether a name from outside the body (a file-level constant, a `--set` value) is a
/// compile-time constant.
/// `callee(f, k)` says whether function `f` uses its `k`-th parameter, a pointer, only with compile-time
/// constant indices (so that an array passed to it stays in registers once nvcc inlines it).
#[cold]
pub(super) fn homes(
    body: &[Stmt],
    constant: &dyn Fn(&str) -> bool,
    callee: &dyn Fn(&str, usize) -> bool,
) -> HashMap<usize, Home> {
    let (finite, locals) = finite(body, constant);
    let mut w = Walk {
        constant,
        callee,
        finite,
        locals,
        ind: Vec::new(),
        arrays: HashMap::new(),
        scalars: HashMap::new(),
        aliases: HashMap::new(),
        out: HashMap::new(),
    };
    for s in body {
        w.stmt(s);
    }
    w.out
}

/// Whether pointer parameter `param` of a function with this body is used only with compile-time constant
/// indices (or passes it on to a function, `callee`, that does): what keeps an array passed to it in registers.
#[cold]
pub(super) fn param_constant(
    body: &[Stmt],
    param: &str,
    constant: &dyn Fn(&str) -> bool,
    callee: &dyn Fn(&str, usize) -> bool,
) -> bool {
    let (finite, locals) = finite(body, constant);
    let mut w = Walk {
        constant,
        callee,
        finite,
        locals,
        ind: Vec::new(),
        arrays: HashMap::from([(param.to_string(), (usize::MAX, 1))]),
        scalars: HashMap::new(),
        aliases: HashMap::new(),
        out: HashMap::from([(usize::MAX, Home::Registers)]),
    };
    for s in body {
        w.stmt(s);
    }
    w.out.get(&usize::MAX) == Some(&Home::Registers)
}

struct Walk<'a> {
    constant: &'a dyn Fn(&str) -> bool,
    callee: &'a dyn Fn(&str, usize) -> bool,
    /// The body's scalar locals that take finitely many values known at compile time once loops with constant
    /// trip counts are unrolled (see [`finite`]).
    finite: HashSet<String>,
    /// Every name the body declares.
    locals: HashSet<String>,
    /// The counters of the constant-trip loops around.
    ind: Vec<String>,
    /// Array name -> (declaration start, dimensions).
    arrays: HashMap<String, (usize, usize)>,
    /// The scalar, vector and struct locals: name -> declaration start.
    scalars: HashMap<String, usize>,
    /// Pointer locals that point into one of `scalars` (`T *p = reinterpret_cast<T *>(&v)`): pointer -> it.
    aliases: HashMap<String, String>,
    out: HashMap<usize, Home>,
}

impl Walk<'_> {
    #[cold]
    fn local(&mut self, name: &str, span: Span, why: &'static str) {
        if let Some(&(key, _)) = self.arrays.get(name) {
            if self.out.get(&key) == Some(&Home::Registers) {
                self.out.insert(key, Home::Local(span, why));
            }
        }
    }

    #[cold]
    fn is_const(&self, e: &Ex) -> bool {
        match &e.kind {
            E::Int(_) | E::Float | E::SizeofType(_) | E::SizeofExpr(_) => true,
            E::Name(n) => {
                self.ind.iter().any(|i| i == n)
                    || self.finite.contains(n)
                    || (!self.locals.contains(n) && !self.arrays.contains_key(n) && (self.constant)(n))
            }
            E::Unary(UnOp::Neg | UnOp::Plus | UnOp::Not | UnOp::LNot, a) | E::Cast(_, a) => self.is_const(a),
            E::Binary(_, a, b) => self.is_const(a) && self.is_const(b),
            E::Ternary(c, a, b) => self.is_const(c) && self.is_const(a) && self.is_const(b),
            E::Call(f, args) if matches!(f.as_str(), "min" | "max") => args.iter().all(|a| self.is_const(a)),
            // `size_t i{0U}`: a brace initialiser of constants.
            E::InitList(items) => !items.is_empty() && items.iter().all(|a| self.is_const(a)),
            _ => false,
        }
    }

    #[cold]
    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Decl(ds) => {
                for d in ds {
                    if let Some(e) = &d.init {
                        self.expr(e);
                    }
                    for e in d.dims.iter().flatten() {
                        self.expr(e);
                    }
                    if !d.dims.is_empty() && matches!(d.storage, Storage::Reg | Storage::Const) {
                        self.arrays.insert(d.name.to_string(), (d.span.start, d.dims.len()));
                        self.out.insert(d.span.start, Home::Registers);
                    } else {
                        self.arrays.remove(&*d.name);
                    }
                    self.aliases.remove(&*d.name);
                    if d.dims.is_empty() && d.storage == Storage::Reg && d.pointers == 0 && !d.reference {
                        self.scalars.insert(d.name.to_string(), d.span.start);
                    } else if let (true, Some(v)) =
                        (d.pointers > 0, d.init.as_ref().and_then(|e| self.scalar_address(e)))
                    {
                        self.aliases.insert(d.name.to_string(), v);
                    } else {
                        self.scalars.remove(&*d.name);
                    }
                }
            }
            Stmt::Expr(e) => self.expr(e),
            Stmt::If(c, a, b) => {
                self.expr(c);
                self.stmt(a);
                if let Some(b) = b {
                    self.stmt(b);
                }
            }
            Stmt::For(init, cond, step, body, _) => {
                if let Some(i) = init {
                    self.stmt(i);
                }
                if let Some(c) = cond {
                    self.expr(c);
                }
                if let Some(st) = step {
                    self.expr(st);
                }
                let counter = self.counter(init.as_deref(), cond.as_ref(), step.as_ref(), body);
                if let Some(v) = &counter {
                    self.ind.push(v.clone());
                }
                self.stmt(body);
                if counter.is_some() {
                    self.ind.pop();
                }
            }
            Stmt::While(c, body, _) | Stmt::DoWhile(body, c, _) => {
                self.expr(c);
                self.stmt(body);
            }
            Stmt::Block(v) => v.iter().for_each(|s| self.stmt(s)),
            Stmt::Return(Some(e), _) => self.expr(e),
            Stmt::Return(None, _) | Stmt::Break | Stmt::Continue | Stmt::Nop => {}
        }
    }

    /// The counter of a loop with a constant trip count: `for (int i = C; i < C2; i++)` (any comparison, a
    /// constant step up or down), whose body does not assign it.
    #[cold]
    fn counter(&self, init: Option<&Stmt>, cond: Option<&Ex>, step: Option<&Ex>, body: &Stmt) -> Option<String> {
        let v = match init? {
            Stmt::Decl(ds) if ds.len() == 1 && ds[0].dims.is_empty() => {
                let d = &ds[0];
                (d.init.as_ref().is_some_and(|e| self.is_const(e))).then(|| d.name.to_string())?
            }
            Stmt::Expr(Ex { kind: E::Assign(None, l, r), .. }) => match &l.kind {
                E::Name(n) if self.is_const(r) => n.clone(),
                _ => return None,
            },
            _ => return None,
        };
        let named = |e: &Ex| matches!(&e.kind, E::Name(n) if *n == v);
        let cond_ok = match &cond?.kind {
            E::Binary(CBin::Lt | CBin::Le | CBin::Gt | CBin::Ge | CBin::Ne, a, b) => {
                (named(a) && self.is_const(b)) || (named(b) && self.is_const(a))
            }
            _ => false,
        };
        let step_ok = match &step?.kind {
            E::IncDec(_, _, a) => named(a),
            E::Assign(Some(CBin::Add | CBin::Sub | CBin::Mul | CBin::Shl | CBin::Shr), a, b) => {
                named(a) && self.is_const(b)
            }
            E::Assign(None, a, b) => {
                named(a)
                    && matches!(&b.kind, E::Binary(CBin::Add | CBin::Sub | CBin::Mul, x, y) if (named(x) && self.is_const(y)) || (named(y) && self.is_const(x)))
            }
            _ => false,
        };
        let mut in_body = HashSet::new();
        assigned_in(body, &mut in_body);
        (cond_ok && step_ok && !in_body.contains(&v)).then_some(v)
    }

    /// `reinterpret_cast<float4 *>(&a[i])[0]` or `*(float4 *)&a[i]` (llm.c's and many SGEMMs' vector access
    /// of an array): the array, and every index on the way when each is a constant.
    #[cold]
    fn cast_access<'e>(&self, e: &'e Ex) -> Option<Vec<&'e Ex>> {
        let (inner, outer) = match &e.kind {
            E::Index(b, j) => (&**b, Some(&**j)),
            E::Unary(UnOp::Deref, b) => (&**b, None),
            _ => return None,
        };
        let mut cur = inner;
        while let E::Cast(_, a) = &cur.kind {
            cur = a;
        }
        let E::Unary(UnOp::AddrOf, a) = &cur.kind else { return None };
        let mut idx: Vec<&Ex> = outer.into_iter().collect();
        let mut root = &**a;
        while let E::Index(b, i) = &root.kind {
            idx.push(&**i);
            root = b;
        }
        let E::Name(n) = &root.kind else { return None };
        (self.arrays.contains_key(n) && idx.iter().all(|i| self.is_const(i))).then_some(idx)
    }

    /// Checks every use of an array in `e`.
    #[cold]
    fn expr(&mut self, e: &Ex) {
        if let Some(idx) = self.cast_access(e) {
            idx.iter().for_each(|i| self.expr(i));
            return;
        }
        match &e.kind {
            E::Index(..) => {
                // The chain a[i][j]: its root, and each index.
                let mut idx = Vec::new();
                let mut cur = e;
                while let E::Index(b, i) = &cur.kind {
                    idx.push(&**i);
                    cur = b;
                }
                for i in &idx {
                    self.expr(i);
                }
                // An element of a variable indexed at run time through a pointer to it: local memory.
                let target = match &cur.kind {
                    E::Name(p) => self.aliases.get(&**p).cloned(),
                    _ => self.scalar_address(cur),
                };
                if let (Some(v), Some(bad)) = (target, idx.iter().find(|i| !self.is_const(i))) {
                    if let Some(&key) = self.scalars.get(&v) {
                        let why = "an element of it is indexed at run time through a pointer";
                        self.out.insert(key, Home::Local(bad.span, why));
                    }
                }
                match &cur.kind {
                    E::Name(n) if self.arrays.contains_key(n) => {
                        let dims = self.arrays[n].1;
                        if let Some(bad) = idx.iter().find(|i| !self.is_const(i)) {
                            let span = bad.span;
                            self.local(&n.clone(), span, "its index is known only at run time");
                        } else if idx.len() < dims {
                            self.local(&n.clone(), e.span, "a row of it is used as a pointer");
                        }
                    }
                    _ => self.expr(cur),
                }
            }
            E::Name(n) if self.arrays.contains_key(n) => {
                self.local(&n.clone(), e.span, "it is used as a pointer");
            }
            E::Unary(UnOp::AddrOf, a) => {
                let mut root = &**a;
                while let E::Index(b, _) | E::Member(b, _, false) = &root.kind {
                    root = b;
                }
                if let E::Name(n) = &root.kind {
                    if self.arrays.contains_key(n) {
                        self.local(&n.clone(), e.span, "its address is taken");
                    }
                }
                self.expr(a);
            }
            E::SizeofExpr(_) | E::SizeofType(_) | E::Int(_) | E::Float | E::Str(_) | E::Name(_) => {}
            E::Unary(_, a) | E::Cast(_, a) | E::IncDec(_, _, a) => self.expr(a),
            E::Member(a, _, _) => self.expr(a),
            E::Binary(_, a, b) | E::Assign(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            E::Ternary(c, a, b) => {
                self.expr(c);
                self.expr(a);
                self.expr(b);
            }
            E::Call(f, args) => {
                for (k, a) in args.iter().enumerate() {
                    // An array, a row of it or `&a[c]` passed to a function that indexes it with constants only.
                    if let Some(indices) = self.array_pointer(a) {
                        if (self.callee)(f, k) && indices.iter().all(|i| self.is_const(i)) {
                            indices.iter().for_each(|i| self.expr(i));
                            continue;
                        }
                    }
                    self.expr(a);
                }
            }
            E::InitList(args) => args.iter().for_each(|a| self.expr(a)),
        }
    }

    /// The variable `e` points to when it is `&v` of a scalar, vector or struct local, through casts
    /// (`reinterpret_cast<float *>(&v)`).
    #[cold]
    fn scalar_address(&self, e: &Ex) -> Option<String> {
        let mut cur = e;
        loop {
            match &cur.kind {
                E::Cast(_, a) => cur = a,
                // `T *p{reinterpret_cast<T *>(&v)}`
                E::InitList(items) if items.len() == 1 => cur = &items[0],
                _ => break,
            }
        }
        let E::Unary(UnOp::AddrOf, a) = &cur.kind else { return None };
        let E::Name(n) = &a.kind else { return None };
        self.scalars.contains_key(&**n).then(|| n.to_string())
    }

    /// The indices of `e` when it is a pointer into a candidate array: `a`, `a[i]` (a row), `&a[i][j]`.
    #[cold]
    fn array_pointer<'e>(&self, e: &'e Ex) -> Option<Vec<&'e Ex>> {
        let (mut cur, addr) = match &e.kind {
            E::Unary(UnOp::AddrOf, a) => (&**a, true),
            _ => (e, false),
        };
        let mut idx = Vec::new();
        while let E::Index(b, i) = &cur.kind {
            idx.push(&**i);
            cur = b;
        }
        let E::Name(n) = &cur.kind else { return None };
        let &(_, dims) = self.arrays.get(n)?;
        (addr || idx.len() < dims).then_some(idx)
    }
}

/// The scalar locals of `body` that take finitely many values known at compile time once loops with constant
/// trip counts are unrolled, and every name it declares. A local qualifies when its initial value and every
/// assignment are constant expressions of such locals, constants and constant-trip loop counters; inside a
/// loop whose trip count is not constant only a bounded update qualifies (`x ^= 1`, `x = (x + 1) % K`, `x = c`,
/// `x = c - x`): nvcc unrolls such a loop by the cycle, or turns the index into selects (cuda_hgemm's
/// `reg_store_idx ^= 1`). A local whose address is taken never qualifies.
#[cold]
fn finite(body: &[Stmt], constant: &dyn Fn(&str) -> bool) -> (HashSet<String>, HashSet<String>) {
    let mut locals = HashSet::new();
    let mut scalars = HashSet::new();
    for s in body {
        super::walk(s, &mut |s| {
            let ds: Vec<&super::syntax::Decl> = match s {
                Stmt::Decl(ds) => ds.iter().collect(),
                Stmt::For(Some(i), ..) => match &**i {
                    Stmt::Decl(ds) => ds.iter().collect(),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            for d in ds {
                locals.insert(d.name.to_string());
                // A parameter is a run-time value; a local declared without a value is one until assigned.
                if d.dims.is_empty() && d.pointers == 0 && d.storage != Storage::Param && d.init.is_some() {
                    scalars.insert(d.name.to_string());
                }
            }
        });
    }
    let mut set = scalars;
    loop {
        let never = |_: &str, _: usize| false;
        let mut w = Walk {
            constant,
            callee: &never,
            finite: set.clone(),
            locals: locals.clone(),
            ind: Vec::new(),
            arrays: HashMap::new(),
            scalars: HashMap::new(),
            aliases: HashMap::new(),
            out: HashMap::new(),
        };
        let mut bad = HashSet::new();
        for s in body {
            check_finite(&mut w, s, false, &mut bad);
        }
        bad.retain(|n| set.contains(n));
        if bad.is_empty() {
            return (set, locals);
        }
        set.retain(|n| !bad.contains(n));
    }
}

/// The locals that `s` assigns in a way that keeps them from being finite (see [`finite`]); `runtime` when a
/// loop around has a trip count that is not constant.
#[cold]
fn check_finite(w: &mut Walk, s: &Stmt, runtime: bool, bad: &mut HashSet<String>) {
    match s {
        Stmt::Decl(ds) => {
            for d in ds {
                if let Some(e) = &d.init {
                    check_expr(w, e, runtime, bad);
                    if !w.is_const(e) {
                        bad.insert(d.name.to_string());
                    }
                }
            }
        }
        Stmt::Expr(e) | Stmt::Return(Some(e), _) => check_expr(w, e, runtime, bad),
        Stmt::If(c, a, b) => {
            check_expr(w, c, runtime, bad);
            check_finite(w, a, runtime, bad);
            if let Some(b) = b {
                check_finite(w, b, runtime, bad);
            }
        }
        Stmt::For(init, cond, step, body, _) => {
            // A constant-trip loop's counter takes its values at compile time once the loop is unrolled; its
            // body runs a known number of times.
            let counter = w.counter(init.as_deref(), cond.as_ref(), step.as_ref(), body);
            if counter.is_none() {
                if let Some(i) = init {
                    check_finite(w, i, runtime, bad);
                }
                if let Some(c) = cond {
                    check_expr(w, c, true, bad);
                }
                if let Some(st) = step {
                    check_expr(w, st, true, bad);
                }
                check_finite(w, body, true, bad);
                return;
            }
            if let Some(c) = cond {
                check_expr(w, c, runtime, bad);
            }
            w.ind.extend(counter.clone());
            check_finite(w, body, runtime, bad);
            w.ind.pop();
        }
        Stmt::While(c, body, _) | Stmt::DoWhile(body, c, _) => {
            check_expr(w, c, true, bad);
            check_finite(w, body, true, bad);
        }
        Stmt::Block(v) => {
            for s in v {
                check_finite(w, s, runtime, bad);
            }
        }
        Stmt::Return(None, _) | Stmt::Break | Stmt::Continue | Stmt::Nop => {}
    }
}

#[cold]
fn check_expr(w: &Walk, e: &Ex, runtime: bool, bad: &mut HashSet<String>) {
    let named = |x: &Ex, n: &str| matches!(&x.kind, E::Name(m) if m == n);
    match &e.kind {
        E::Assign(op, lhs, rhs) => {
            if let E::Name(n) = &lhs.kind {
                let ok = match (op, runtime) {
                    // Outside loops of unknown trip count any constant update keeps a finite set of values.
                    (None, false) => w.is_const(rhs),
                    (Some(_), false) => w.is_const(rhs),
                    // In such a loop, only a bounded cycle.
                    (None, true) => {
                        w.is_const(rhs)
                            && match &rhs.kind {
                                E::Binary(BinOp::Rem, _, m) => w.is_const(m) && !references(m, n),
                                E::Binary(BinOp::Xor, a, b) => named(a, n) || named(b, n),
                                E::Binary(BinOp::Sub, _, b) => named(b, n),
                                E::Unary(UnOp::LNot, a) => named(a, n),
                                _ => !references(rhs, n),
                            }
                    }
                    (Some(BinOp::Xor | BinOp::Rem | BinOp::And), true) => w.is_const(rhs),
                    (Some(_), true) => false,
                };
                if !ok {
                    bad.insert(n.clone());
                }
            }
            check_expr(w, lhs, runtime, bad);
            check_expr(w, rhs, runtime, bad);
        }
        E::IncDec(_, _, a) => {
            if let (E::Name(n), true) = (&a.kind, runtime) {
                bad.insert(n.clone());
            }
            check_expr(w, a, runtime, bad);
        }
        E::Unary(UnOp::AddrOf, a) => {
            if let E::Name(n) = &a.kind {
                bad.insert(n.clone());
            }
            check_expr(w, a, runtime, bad);
        }
        E::Unary(_, a) | E::Cast(_, a) | E::SizeofExpr(a) | E::Member(a, _, _) => check_expr(w, a, runtime, bad),
        E::Binary(_, a, b) | E::Index(a, b) => {
            check_expr(w, a, runtime, bad);
            check_expr(w, b, runtime, bad);
        }
        E::Ternary(c, a, b) => {
            check_expr(w, c, runtime, bad);
            check_expr(w, a, runtime, bad);
            check_expr(w, b, runtime, bad);
        }
        E::Call(_, args) | E::InitList(args) => args.iter().for_each(|a| check_expr(w, a, runtime, bad)),
        E::Int(_) | E::Float | E::Name(_) | E::SizeofType(_) | E::Str(_) => {}
    }
}

/// Whether `e` names `n`.
fn references(e: &Ex, n: &str) -> bool {
    match &e.kind {
        E::Name(m) => m == n,
        E::Unary(_, a) | E::Cast(_, a) | E::SizeofExpr(a) | E::Member(a, _, _) | E::IncDec(_, _, a) => references(a, n),
        E::Binary(_, a, b) | E::Index(a, b) | E::Assign(_, a, b) => references(a, n) || references(b, n),
        E::Ternary(c, a, b) => references(c, n) || references(a, n) || references(b, n),
        E::Call(_, args) | E::InitList(args) => args.iter().any(|a| references(a, n)),
        E::Int(_) | E::Float | E::SizeofType(_) | E::Str(_) => false,
    }
}

/// The names `s` assigns or increments anywhere.
#[cold]
fn assigned_in(s: &Stmt, out: &mut HashSet<String>) {
    fn expr(e: &Ex, out: &mut HashSet<String>) {
        match &e.kind {
            E::Assign(_, a, b) => {
                if let E::Name(n) = &a.kind {
                    out.insert(n.clone());
                }
                expr(a, out);
                expr(b, out);
            }
            E::IncDec(_, _, a) => {
                if let E::Name(n) = &a.kind {
                    out.insert(n.clone());
                }
                expr(a, out);
            }
            E::Unary(UnOp::AddrOf, a) => {
                // `&x` may be written through.
                if let E::Name(n) = &a.kind {
                    out.insert(n.clone());
                }
                expr(a, out);
            }
            E::Unary(_, a) | E::Cast(_, a) | E::SizeofExpr(a) | E::Member(a, _, _) => expr(a, out),
            E::Binary(_, a, b) | E::Index(a, b) => {
                expr(a, out);
                expr(b, out);
            }
            E::Ternary(c, a, b) => {
                expr(c, out);
                expr(a, out);
                expr(b, out);
            }
            E::Call(_, args) | E::InitList(args) => args.iter().for_each(|a| expr(a, out)),
            E::Int(_) | E::Float | E::Name(_) | E::SizeofType(_) | E::Str(_) => {}
        }
    }
    super::walk(s, &mut |s| match s {
        Stmt::Expr(e) | Stmt::If(e, ..) | Stmt::While(e, ..) | Stmt::DoWhile(_, e, _) => expr(e, out),
        Stmt::For(_, c, st, ..) => {
            if let Some(c) = c {
                expr(c, out);
            }
            if let Some(st) = st {
                expr(st, out);
            }
        }
        Stmt::Decl(ds) => ds.iter().filter_map(|d| d.init.as_ref()).for_each(|e| expr(e, out)),
        Stmt::Return(Some(e), _) => expr(e, out),
        _ => {}
    });
}
