//! Calls: the dispatch of a call by name, methods, atomics, device functions inlined with their references, classes and templates (construction, deduction).
//! Part of the CUDA front end's lowering (`lower.rs`): methods of its `Lower`.

use super::*;

impl<'a> Lower<'a> {
    #[cold]
    pub(super) fn call(&mut self, name: &str, args: &[Ex], e: &Ex) -> R<Val> {
        match name {
            "__comma" => {
                let mut last = Val::Int(Src::Imm(0), IntTy::INT);
                for a in args {
                    last = self.rvalue(a)?;
                }
                Ok(last)
            }
            "min" | "max" | "umin" | "umax" if args.len() == 2 => {
                let (a, b) = (self.rvalue(&args[0])?, self.rvalue(&args[1])?);
                match (a, b) {
                    (Val::Int(a, ta), Val::Int(b, tb)) => {
                        let mut t = IntTy::common(ta, tb);
                        if name.starts_with('u') {
                            t.signed = false;
                        }
                        let w = t.width();
                        let (a, b) =
                            if w == Width::W64 { (self.to64(a, ta, e.span), self.to64(b, tb, e.span)) } else { (a, b) };
                        let op = match (name.ends_with("min"), t.signed) {
                            (true, true) => BinOp::MinS,
                            (true, false) => BinOp::MinU,
                            (false, true) => BinOp::MaxS,
                            (false, false) => BinOp::MaxU,
                        };
                        Ok(Val::Int(self.bin(op, w, a, b, e.span), t))
                    }
                    (Val::Float(s), _) | (_, Val::Float(s)) => Ok(Val::Float(s)),
                    _ => Err(self.err(e.span, format!("`{name}` takes numbers"))),
                }
            }
            "abs" if args.len() == 1 => match self.rvalue(&args[0])? {
                Val::Int(s, t) => {
                    let t = t.promoted();
                    let w = t.width();
                    let n = self.bin(BinOp::Sub, w, Src::Imm(0), s, e.span);
                    Ok(Val::Int(self.bin(BinOp::MaxS, w, s, n, e.span), t))
                }
                other => Ok(other),
            },
            "__ldg" | "__ldca" | "__ldcg" | "__ldcs" | "__ldlu" | "__ldcv" if args.len() == 1 => {
                match self.rvalue(&args[0])? {
                    Val::Ptr { src, to, space, .. } => {
                        self.require_ptr(src, "the pointer", args[0].span);
                        let read_only = name == "__ldg";
                        // CUDA's cache-hint loads are `ld.global.ca/.cg/.cs/.lu/.cv` (CUDA C++ Programming
                        // Guide, "Load Functions Using Cache Hints"), on the global path only.
                        self.cop = match (name, space) {
                            (_, MemSpace::Shared | MemSpace::Local) => None,
                            ("__ldca", _) => Some(".CA"),
                            ("__ldcg", _) => Some(".CG"),
                            ("__ldcs", _) => Some(".CS"),
                            ("__ldlu", _) => Some(".LU"),
                            ("__ldcv", _) => Some(".CV"),
                            _ => None,
                        };
                        let v = self.load(Place { space, addr: src, ty: to, read_only }, e.span);
                        self.cop = None;
                        v
                    }
                    _ => Err(self.err(args[0].span, format!("`{name}` takes a pointer"))),
                }
            }
            // `__stcs(p, v)` and its kin: `st.global.cs/.cg/.wb/.wt` (the same guide, "Store Functions Using
            // Cache Hints").
            "__stwb" | "__stcg" | "__stcs" | "__stwt" if args.len() == 2 => {
                let v = self.rvalue(&args[1])?;
                match self.rvalue(&args[0])? {
                    Val::Ptr { src, to, space, .. } => {
                        self.require_ptr(src, "the pointer", args[0].span);
                        self.cop = match (name, space) {
                            (_, MemSpace::Shared | MemSpace::Local) => None,
                            ("__stwb", _) => Some(".WB"),
                            ("__stcg", _) => Some(".CG"),
                            ("__stcs", _) => Some(".CS"),
                            _ => Some(".WT"),
                        };
                        let _ = self.convert(&to, v, args[1].span)?;
                        let r = self.access(&Place { space, addr: src, ty: to, read_only: false }, true, e.span);
                        self.cop = None;
                        r?;
                        Ok(Val::Int(Src::Imm(0), IntTy::INT))
                    }
                    _ => Err(self.err(args[0].span, format!("`{name}` takes a pointer and a value"))),
                }
            }
            "__syncthreads" => {
                for a in args {
                    self.rvalue(a)?;
                }
                self.emit(Op::Bar, e.span);
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            "__asm" => self.asm(args, e),
            "__cvta_generic_to_shared" if args.len() == 1 => match self.rvalue(&args[0])? {
                // A shared pointer already holds its offset in the shared window: what the conversion gives.
                Val::Ptr { src, space: MemSpace::Shared, .. } => Ok(Val::Int(src, IntTy::ULLONG)),
                _ => Err(self.err(args[0].span, "`__cvta_generic_to_shared` takes a pointer into shared memory")),
            },
            "__pipeline_memcpy_async" | "cuda::memcpy_async" | "memcpy_async" | "cooperative_groups::memcpy_async" => {
                self.memcpy_async(name, args, e)
            }
            // libcu++: `init(&bar, n)` sets up a barrier; `make_pipeline()` a thread's pipeline.
            "init"
                if args.len() == 2
                    && matches!(&args[0].kind, E::Unary(UnOp::AddrOf, b) if matches!(self.static_type(b), Ok(t) if types(self).name(&t).starts_with("barrier<"))) =>
            {
                for a in args {
                    self.rvalue(a)?;
                }
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            "make_pipeline" => {
                for a in args {
                    self.rvalue(a)?;
                }
                let ty = self.lookup_type("pipeline<thread_scope_thread>", e.span)?.unwrap_or(Ty::Void);
                Ok(Val::Agg { ty, leaves: Vec::new() })
            }
            "__pipeline_commit" | "__pipeline_wait_prior" | "__syncwarp" | "__threadfence" | "__threadfence_block" => {
                for a in args {
                    self.rvalue(a)?;
                }
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            _ if math_result(name).is_some() => self.math(name, args, e),
            // Output and checks: their arguments are evaluated (a load there is still a load); nothing else.
            "printf" | "assert" => {
                for a in args.iter().filter(|a| !matches!(a.kind, E::Str(_))) {
                    self.rvalue(a)?;
                }
                // printf writes its arguments to a local buffer (STL, packed as the compiler chooses) and
                // calls vprintf: both moves of memory that the totals leave out, and say so.
                if name == "printf" {
                    let line = self.site_line(Span { start: e.span.start, end: e.span.start + 1 });
                    let what = "printf → its arguments' local buffer (STL) and vprintf";
                    if !self.uncosted.iter().any(|u| u.0 == line && u.1 == what) {
                        self.uncosted.push((line, what.to_string()));
                    }
                }
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            // cooperative_groups (with `cg::` dropped).
            "this_thread_block" if args.is_empty() => Ok(self.group("thread_block")),
            "coalesced_threads" if args.is_empty() => Ok(self.group("coalesced_group")),
            // `cg::plus<T>()` and friends: an operator for `cg::reduce`, which combines values across lanes.
            _ if ["plus<", "less<", "greater<", "bit_and<", "bit_or<", "bit_xor<"]
                .iter()
                .any(|p| name.starts_with(p)) =>
            {
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            "reduce" if args.len() == 3 => {
                self.rvalue(&args[0])?;
                let v = self.rvalue(&args[1])?;
                // The operation: `cg::plus<float>()`, or a function of the file named as a value.
                let named_fn =
                    matches!(&args[2].kind, E::Name(n) if self.ast.file.items.fns.iter().any(|f| f.name == **n));
                if !named_fn {
                    self.rvalue(&args[2])?;
                }
                let why = format!(
                    "`cg::reduce` ({}), a value combined across lanes that warpscope does not compute",
                    self.pos(e.span)
                );
                // What it combines is the lanes' values (data, as loads give): a decision on it is a
                // data-dependent one, stated with the results.
                let ty = self.ty_of(&v);
                let w = self.b.data_why(why);
                self.fresh_temp(&ty, e.span, w)
            }
            "sync" if args.len() == 1 => {
                let g = self.rvalue(&args[0])?;
                self.method(&g, "sync", &[], e)
            }
            _ if name.starts_with("tiled_partition<") => {
                // The size, also when it came through a typed template parameter (`((unsigned int)(32))`).
                let inner = &name["tiled_partition<".len()..name.len() - 1];
                let n: u32 =
                    inner.rsplit(|c: char| !c.is_ascii_digit()).find(|d| !d.is_empty()).unwrap_or("").parse().map_err(
                        |_| self.err(e.op_span, "tiled_partition<N> needs a number N (1, 2, 4, 8, 16 or 32)"),
                    )?;
                if !matches!(n, 1 | 2 | 4 | 8 | 16 | 32) {
                    return Err(
                        self.err(e.op_span, format!("tiled_partition<{n}>: a tile is 1, 2, 4, 8, 16 or 32 threads"))
                    );
                }
                for a in args {
                    // A tile of a tile has its own meta_group_rank and meta_group_size, relative to the parent
                    // tile: not modelled, so refused rather than counted as a tile of the block.
                    if let Val::Agg { ty: Ty::Struct(i), .. } = self.rvalue(a)? {
                        if types(self).name(&Ty::Struct(i)).starts_with("thread_block_tile") {
                            return Err(self.err(a.span, "tiled_partition of a tile is not modelled: partition the thread block (cg::tiled_partition<N>(cg::this_thread_block()))"));
                        }
                    }
                }
                Ok(self.group(&format!("thread_block_tile<{n}>")))
            }
            _ if name.starts_with('.') || name.starts_with("->") => {
                let m = name.trim_start_matches("->").trim_start_matches('.');
                // A member function of a class: run on the object itself.
                let obj_ty = self.static_type(&args[0]).ok().map(|t| match (name.starts_with("->"), t) {
                    (true, Ty::Ptr(p)) => (*p).clone(),
                    (_, t) => t,
                });
                if let Some(Ty::Struct(i)) = obj_ty {
                    if let Some((def, is_static)) = self.method_def(i, m, args.len() - 1, e)? {
                        let this = if is_static {
                            None
                        } else {
                            let target = if name.starts_with("->") {
                                Ex { kind: E::Unary(UnOp::Deref, Box::new(args[0].clone())), ..args[0].clone() }
                            } else {
                                args[0].clone()
                            };
                            match self.lvalue(&target)? {
                                LRef::Mem(p) => Some(p),
                                LRef::Var(_) => Some(self.class_place(&Ty::Struct(i))),
                            }
                        };
                        let mut vals = Vec::new();
                        for a in &args[1..] {
                            vals.push(self.rvalue(a)?);
                        }
                        return self.inline(m, def, vals, this, e);
                    }
                }
                let recv = self.rvalue(&args[0])?;
                self.method(&recv, m, &args[1..], e)
            }
            // `memcpy(&dst, &src, n)` between objects kept in registers (a class's bits): nothing moves in memory;
            // the destination's value becomes unknown.
            "memcpy" if args.len() == 3 => {
                for a in &args[..2] {
                    let E::Unary(UnOp::AddrOf, target) = &a.kind else {
                        return Err(self.err(a.span, "warpscope follows memcpy between variables (`memcpy(&a, &b, n)`), not through pointers into memory"));
                    };
                    match self.lvalue(target)? {
                        LRef::Mem(p) if p.space != MemSpace::Reg => {
                            return Err(self
                                .err(a.span, "memcpy to or from memory is not modelled: write the loads and stores"))
                        }
                        _ => {}
                    }
                }
                self.rvalue(&args[2])?;
                if let E::Unary(_, target) = &args[0].kind {
                    if let Ok(LRef::Var(_)) = self.lvalue(target) {
                        let ty = self.static_type(target)?;
                        let why = format!("bits memcpy copied at {}", self.pos(e.span));
                        let w = self.b.data_why(why);
                        let v = self.fresh_temp(&ty, e.span, w)?;
                        self.assign(target, None, v, &args[0])?;
                    }
                }
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            "__shfl_sync" | "__shfl_up_sync" | "__shfl_down_sync" | "__shfl_xor_sync" => {
                if !(3..=4).contains(&args.len()) {
                    return Err(self
                        .err(e.span, format!("`{name}(mask, value, lane_or_delta[, width])` takes 3 or 4 arguments")));
                }
                self.rvalue(&args[0])?;
                let v = self.rvalue(&args[1])?;
                let width = match args.get(3) {
                    Some(w) => self.const_int(w, "the shuffle width")?,
                    None => 32,
                };
                let mode = match name {
                    "__shfl_sync" => ShflMode::Idx,
                    "__shfl_up_sync" => ShflMode::Up,
                    "__shfl_down_sync" => ShflMode::Down,
                    _ => ShflMode::Bfly,
                };
                self.shuffle(mode, v, &args[2], width, e)
            }
            "__ballot_sync" | "__all_sync" | "__any_sync" | "__uni_sync" if args.len() == 2 => {
                self.rvalue(&args[0])?;
                let p = self.cond(&args[1], "the vote")?;
                self.vote(name, p, e.span)
            }
            "__activemask" if args.is_empty() => self.vote("__ballot_sync", PredRef::TRUE, e.span),
            "__popc" | "__popcll" | "__brev" | "__clz" | "__clzll" | "__ffs" | "__ffsll" if args.len() == 1 => {
                let (a, t) = self.int(&args[0], "the value")?;
                let a = if name.ends_with("ll") { self.to64(a, t, e.span) } else { a };
                let d = self.temp();
                let f = match name {
                    "__popc" | "__popcll" => crate::program::UnOp::Popc,
                    "__brev" => crate::program::UnOp::Brev,
                    _ => {
                        return Ok(Val::Int(
                            self.unknown(
                                format!("`{name}` ({}), which warpscope does not compute", self.pos(e.span)),
                                e.span,
                            ),
                            IntTy::INT,
                        ))
                    }
                };
                if name == "__popcll" {
                    return Ok(Val::Int(
                        self.unknown(
                            format!("`{name}` ({}), which warpscope does not compute", self.pos(e.span)),
                            e.span,
                        ),
                        IntTy::INT,
                    ));
                }
                self.emit(crate::program::Op::Un { f, dst: d, a }, e.span);
                Ok(Val::Int(Src::Reg(d), if name == "__brev" { IntTy::UINT } else { IntTy::INT }))
            }
            "__reduce_add_sync" | "__reduce_min_sync" | "__reduce_max_sync" | "__reduce_and_sync"
            | "__reduce_or_sync" | "__reduce_xor_sync"
                if args.len() == 2 =>
            {
                self.rvalue(&args[0])?;
                self.rvalue(&args[1])?;
                let why = format!(
                    "`{name}` ({}), a value combined across lanes that warpscope does not compute",
                    self.pos(e.span)
                );
                Ok(Val::Int(self.unknown(why, e.span), IntTy::UINT))
            }
            _ if name.starts_with("make_") && types(self).lookup(&name[5..]).is_some() => {
                let ty = types(self).lookup(&name[5..]).expect("checked");
                let fields = self.fields(&ty);
                if fields.len() != args.len() {
                    return Err(
                        self.err(e.span, format!("`{name}` takes {} arguments, found {}", fields.len(), args.len()))
                    );
                }
                let mut leaves = Vec::new();
                for ((off, fty), a) in fields.into_iter().zip(args) {
                    let v = self.rvalue(a)?;
                    leaves.push((off, self.convert(&fty, v, a.span)?));
                }
                Ok(Val::Agg { ty, leaves })
            }
            _ if name.starts_with("atomic") => self.atomic(name, args, e, false),
            _ if TEXTURE_FUNCTIONS.iter().any(|t| name.split('<').next() == Some(*t)) => Err(self.err(
                e.op_span,
                format!("`{name}` reads through the texture or surface path, which warpscope does not model: how that path splits a warp's request and how its block-linear layouts place data are not published (docs/model.md#the-read-only-path), so warpscope refuses it rather than guess"),
            )),
            _ => {
                // A functional cast, `int(x)` or `float4(v)`; a class's constructor.
                if let Some(ty) = self.lookup_type(name, e.op_span)? {
                    if self.class_like(&ty) {
                        return self.construct(&ty, args, e);
                    }
                    if let [a] = args {
                        let v = self.rvalue(a)?;
                        return self.convert(&ty, v, e.span);
                    }
                }
                // Another member function of the class being run, called by its plain name.
                if let Some(&cls) = self.class_stack.last() {
                    if let Some((def, _)) = self.method_def(cls, name, args.len(), e)? {
                        let mut vals = Vec::new();
                        for a in args {
                            vals.push(self.rvalue(a)?);
                        }
                        let this = self.lookup("this").and_then(|i| match &self.scopes[i].1 {
                            Binding::Const(Val::Ptr { src, to, space, read_only }) => {
                                Some(Place { space: *space, addr: *src, ty: to.clone(), read_only: *read_only })
                            }
                            _ => None,
                        });
                        return self.inline(name, def, vals, this, e);
                    }
                }
                // `Class::member(args)`: a static member function.
                if let Some((cls, m)) = name.rsplit_once("::") {
                    if let Some(Ty::Struct(i)) = self.lookup_type(cls, e.op_span)? {
                        if let Some((def, _)) = self.method_def(i, m, args.len(), e)? {
                            let mut vals = Vec::new();
                            for a in args {
                                vals.push(self.rvalue(a)?);
                            }
                            return self.inline(name, def, vals, None, e);
                        }
                    }
                }
                if let Some(v) = self.shared_view(name, e)? {
                    return Ok(v);
                }
                if let Some(v) = self.call_fn(name, args, e)? {
                    return Ok(v);
                }
                if let Some(v) = self.swizzle(name, args, e)? {
                    return Ok(v);
                }
                let err = match name.split_once("::") {
                    Some((ns, _)) => self.err(
                        e.op_span,
                        format!("`{ns}::` is a namespace or class warpscope does not know (known: cooperative_groups and its aliases)"),
                    ),
                    None => self.err(
                        e.op_span,
                        format!("unknown function `{name}` (define it as a __device__ function in the file; warpscope knows min, max, abs, sw128, sw64, sw32, swizzle, __ldg, __syncthreads, __shfl_*_sync, __ballot_sync, atomics and cooperative_groups basics)"),
                    ),
                };
                // Its arguments are still read (their loads, their own unknown names).
                for a in args {
                    if self.rvalue(a).is_err() {
                        break;
                    }
                }
                Ok(self.unsupported_value(
                    err,
                    format!("the result of `{name}`, a function warpscope does not know"),
                    e.span,
                ))
            }
        }
    }

    /// A method of a cooperative_groups handle.
    #[cold]
    pub(super) fn method(&mut self, recv: &Val, m: &str, args: &[Ex], e: &Ex) -> R<Val> {
        let Val::Agg { ty: Ty::Struct(i), .. } = recv else {
            return Err(self.err(e.op_span, format!("`.{m}()` on a value that is not a cooperative_groups group")));
        };
        let group = types(self).name(&Ty::Struct(*i));
        // libcu++'s barrier and pipeline (`arrive_and_wait`, `producer_commit`, `consumer_wait`, ...): they order
        // the copies, which are costed where they are issued.
        if group.starts_with("barrier<") || group.starts_with("pipeline<") {
            for a in args {
                self.rvalue(a)?;
            }
            return Ok(Val::Int(Src::Imm(0), IntTy::INT));
        }
        let tile: Option<u64> =
            group.strip_prefix("thread_block_tile<").and_then(|n| n.trim_end_matches('>').parse().ok());
        let block = self.launch.block;
        let span = e.span;
        let linear = |l: &mut Self| {
            let d = l.temp();
            l.emit(Op::Special { dst: d, which: Special::LinearTid }, span);
            Src::Reg(d)
        };
        match (m, tile, group.as_str()) {
            ("sync", None, "thread_block") => {
                self.emit(Op::Bar, span);
                Ok(Val::Int(Src::Imm(0), IntTy::INT))
            }
            ("sync", Some(_), _) => Ok(Val::Int(Src::Imm(0), IntTy::INT)),
            ("thread_rank", None, "thread_block") => Ok(Val::Int(linear(self), IntTy::UINT)),
            ("thread_rank", Some(n), _) => {
                let l = linear(self);
                Ok(Val::Int(self.bin(BinOp::RemU, Width::W32, l, Src::Imm(n), span), IntTy::UINT))
            }
            ("meta_group_rank", Some(n), _) => {
                let l = linear(self);
                Ok(Val::Int(self.bin(BinOp::DivU, Width::W32, l, Src::Imm(n), span), IntTy::UINT))
            }
            ("size" | "num_threads", None, "thread_block") => {
                Ok(Val::Int(Src::Imm(u64::from(block.x) * u64::from(block.y) * u64::from(block.z)), IntTy::UINT))
            }
            ("size" | "num_threads", Some(n), _) => Ok(Val::Int(Src::Imm(n), IntTy::UINT)),
            ("meta_group_size", Some(n), _) => {
                let threads = u64::from(block.x) * u64::from(block.y) * u64::from(block.z);
                Ok(Val::Int(Src::Imm(threads.div_ceil(n)), IntTy::UINT))
            }
            ("shfl" | "shfl_up" | "shfl_down" | "shfl_xor", Some(n), _) if args.len() == 2 => {
                let v = self.rvalue(&args[0])?;
                let mode = match m {
                    "shfl" => ShflMode::Idx,
                    "shfl_up" => ShflMode::Up,
                    "shfl_down" => ShflMode::Down,
                    _ => ShflMode::Bfly,
                };
                self.shuffle(mode, v, &args[1], n, e)
            }
            ("ballot" | "all" | "any", Some(32), _) if args.len() == 1 => {
                let p = self.cond(&args[0], "the vote")?;
                let name = match m {
                    "ballot" => "__ballot_sync",
                    "all" => "__all_sync",
                    _ => "__any_sync",
                };
                self.vote(name, p, span)
            }
            _ => Err(self.err(
                e.op_span,
                format!("`{group}::{m}` is not modelled (known: sync, thread_rank, size, num_threads, meta_group_rank, and on a tile shfl, shfl_up, shfl_down, shfl_xor; ballot, all, any on a 32-thread tile)"),
            )),
        }
    }

    /// `atomicAdd(p, v)` and friends (docs/model.md#atomics): a read-modify-write of `*p`, costed as the SASS nvcc makes of
    /// it: `ATOMS` in shared memory (`ATOMS.POPC.INC` for `atomicAdd(&s[i], 1)` whose result is unused), `RED`
    /// for a global atomic whose result is unused, `ATOMG` otherwise. An add, min, max, and or or applies
    /// nvcc's warp aggregation where the warp's lanes share the address and the value (an assumption about the
    /// compiler, said in a note). What an atomic returns is data.
    #[cold]
    pub(super) fn atomic(&mut self, name: &str, args: &[Ex], e: &Ex, unused: bool) -> R<Val> {
        const OPS: [(&str, &str); 11] = [
            ("atomicAdd", "ADD"),
            ("atomicSub", "ADD"),
            ("atomicExch", "EXCH"),
            ("atomicMin", "MIN"),
            ("atomicMax", "MAX"),
            ("atomicInc", "INC"),
            ("atomicDec", "DEC"),
            ("atomicCAS", "CAS"),
            ("atomicAnd", "AND"),
            ("atomicOr", "OR"),
            ("atomicXor", "XOR"),
        ];
        let base = name.trim_end_matches("_block").trim_end_matches("_system");
        let Some(&(_, op)) = OPS.iter().find(|(n, _)| *n == base) else {
            return Err(
                self.err(e.op_span, format!("unknown atomic `{name}` (known: {})", OPS.map(|o| o.0).join(", ")))
            );
        };
        let Some(first) = args.first() else {
            return Err(self.err(e.span, format!("`{name}` takes a pointer first")));
        };
        self.data_index_ok = true;
        let target = self.rvalue(first);
        self.data_index_ok = false;
        let (addr, space, to) = match target? {
            Val::Ptr { src, space, to, .. } => (src, space, to),
            _ => return Err(self.err(first.span, format!("`{name}` takes a pointer first"))),
        };
        let mut vals = Vec::new();
        for a in &args[1..] {
            vals.push(self.rvalue(a)?);
        }
        let size = types(self).size(&to);
        let width = match size {
            2 => ".F16",
            4 => "",
            8 => ".64",
            16 => ".128",
            _ => {
                return Err(
                    self.err(first.span, format!("`{name}` on a {size}-byte value: atomics move 2, 4, 8 or 16 bytes"))
                )
            }
        };
        let value = vals.first().and_then(Val::src);
        let shared = match space {
            MemSpace::Shared => true,
            MemSpace::Global => false,
            MemSpace::Const => {
                return Err(self.err(first.span, format!("`{name}` on __constant__ memory, which kernels cannot write")))
            }
            MemSpace::Local | MemSpace::Reg => {
                return Err(self.err(
                    first.span,
                    format!("`{name}` on a thread's own variable: atomics work on global or shared memory"),
                ))
            }
        };
        let popc = shared && unused && op == "ADD" && base == "atomicAdd" && size == 4 && value == Some(Src::Imm(1));
        let mnemonic = match (shared, unused && !matches!(op, "CAS" | "EXCH")) {
            _ if popc => "ATOMS.POPC.INC.32".to_string(),
            (true, _) => format!("ATOMS.{op}{width}"),
            (false, true) => format!("RED.E.{op}{width}"),
            (false, false) => format!("ATOMG.E.{op}{width}"),
        };
        let instr = Instr::parse(&mnemonic).map_err(|err| self.err(e.span, err.message))?;
        // nvcc aggregates in global and shared memory alike (its SASS for `atomicAdd(&s[5], 2)` is one lane's
        // ATOMS.ADD of a popcount's worth); an increment by one in shared memory is ATOMS.POPC.INC instead.
        let aggregate = !popc && matches!(op, "ADD" | "MIN" | "MAX" | "AND" | "OR");
        let line = self.site_line(e.span);
        let text = self.lines.text(line).trim().to_string();
        let at = first.span.start.min(self.src.len());
        let written = self.src[at..first.span.end.min(self.src.len())].to_string();
        let mut notes = Vec::new();
        if aggregate {
            notes.push(Note::new(
                "cuda-atomic-aggregation",
                "Assumed, as nvcc does \"in many cases\": where every active lane of a warp applies the same value at the same address, one lane performs the atomic for the warp (a popcount's worth of adds). This is an assumption about the compiler; the kernel's PTX or SASS shows what it did",
                "CUDA Programming Guide, Atomic Functions; docs/model.md#atomics",
            ));
        }
        let site = self.b.site(
            (self.stmt, self.seq.saturating_add(self.salt)),
            Site { line, text, access: written, instr, notes, source: self.header_source(e.span) },
        );
        self.seq += 1;
        let addr = match addr {
            Src::Reg(r) => r,
            imm => {
                let r = self.temp();
                self.emit(Op::Mov { dst: r, a: imm }, e.span);
                r
            }
        };
        let ctx = self.b.ctx(format!("the address of this {mnemonic} depends on "));
        let mem = Op::Mem { site, addr, plg: None, src: None, ctx, data: None };
        match (aggregate, value) {
            (true, Some(val)) => {
                let p = self.b.pred();
                self.emit(Op::Aggregate { dst: p, addr, val }, e.span);
                self.track(&mem);
                self.b.emit(mem, Some(PredRef::of(p)), e.span);
            }
            _ => self.emit(mem, e.span),
        }
        let why =
            format!("the old value an atomic returns ({}); warpscope follows addresses, not data", self.pos(e.span));
        let w = self.b.data_why(why);
        self.fresh_temp(&to, e.span, w)
    }

    /// `SharedMemory<T>()`: a pointer to the kernel's dynamic shared memory, typed by the view's conversion.
    #[cold]
    pub(super) fn shared_view(&mut self, name: &str, e: &Ex) -> R<Option<Val>> {
        let file = Rc::clone(&self.ast.file);
        let base = name.split('<').next().unwrap_or(name);
        let view = file
            .items
            .views
            .iter()
            .find(|v| v.spec.as_deref() == Some(name))
            .or_else(|| file.items.views.iter().find(|v| v.spec.is_none() && v.name == base));
        let Some(view) = view else { return Ok(None) };
        let args: Vec<String> = match name.find('<') {
            Some(i) => split_args(&name[i + 1..name.len() - 1]),
            None => Vec::new(),
        };
        let mut text = String::new();
        for t in &view.target {
            let word = match &t.tok {
                crate::lang::lex::Tok::Ident(w) => match view.params.iter().position(|p| &p.name == w) {
                    Some(k) => args.get(k).cloned().unwrap_or_else(|| w.clone()),
                    None => w.clone(),
                },
                crate::lang::lex::Tok::Punct(p) => p.to_string(),
                _ => String::new(),
            };
            text.push_str(&word);
            text.push(' ');
        }
        let toks = crate::lang::lex::lex(&text).map_err(|x| self.err(e.span, x.message))?;
        let mut p = crate::lang::cexpr::Parser::new(&text, toks);
        p.types = file.type_names.clone();
        let tn = p.type_name().map_err(|x| self.err(e.span, x.message))?;
        let elem =
            types(self).lookup(&tn.base).ok_or_else(|| self.err(e.span, format!("unknown type `{}`", tn.base)))?;
        let Ty::Ptr(to) = wrap_ptr(elem, tn.pointers) else {
            return Err(self.err(e.span, format!("`{base}` converts to a non-pointer")));
        };
        // Dynamic shared memory starts where the kernel's static shared memory ends (see `declare`).
        self.dynamic_shared.get_or_insert(e.span);
        let off = self.dynamic_base.unwrap_or(self.shared_top.div_ceil(16) * 16);
        Ok(Some(Val::Ptr { src: Src::Imm(off), to: (*to).clone(), space: MemSpace::Shared, read_only: false }))
    }

    /// A call of a `__device__` function of the file, inlined. `None` when no such function exists.
    #[cold]
    pub(super) fn call_fn(&mut self, name: &str, args: &[Ex], e: &Ex) -> R<Option<Val>> {
        let file = Rc::clone(&self.ast.file);
        let base = name.split('<').next().unwrap_or(name).to_string();
        let explicit = name.find('<').map(|i| name[i + 1..name.len() - 1].to_string());
        // Overloads: the one with as many parameters as arguments, else the first.
        let candidates: Vec<&super::super::items::FnItem> =
            file.items.fns.iter().filter(|f| f.kind != FnKind::Kernel && f.spec.is_none() && f.name == base).collect();
        let Some(item) = candidates
            .iter()
            .find(|f| params_of(&file.toks[f.toks.clone()]) == args.len())
            .or(candidates.first())
            .copied()
        else {
            if file.items.fns.iter().any(|f| f.kind == FnKind::Kernel && f.name == base) {
                return Err(self.err(e.op_span, format!("`{base}` is a __global__ kernel: a kernel cannot call it (dynamic parallelism is not modelled)")));
            }
            return Ok(None);
        };
        if item.kind == FnKind::Host {
            return Err(self
                .err(e.op_span, format!("`{base}` is a host function: mark it __device__ to call it from a kernel")));
        }
        if self.frames.len() >= MAX_CALL_DEPTH {
            return Err(
                self.err(e.op_span, format!("calls nested more than {MAX_CALL_DEPTH} deep (is `{base}` recursive?)"))
            );
        }
        // A reference parameter names the caller's variable (or memory): its argument is not read at the call.
        let by_ref = reference_params(&file.toks[item.toks.clone()]);
        let mut vals = Vec::with_capacity(args.len());
        let mut refs = Vec::with_capacity(args.len());
        for (k, a) in args.iter().enumerate() {
            let lvalue = matches!(a.kind, E::Name(_) | E::Index(..) | E::Member(..) | E::Unary(UnOp::Deref, _));
            if by_ref.get(k).copied().unwrap_or(false) && lvalue {
                let ty = self.static_type(a)?;
                refs.push(Some(self.lvalue(a)?));
                vals.push(self.placeholder(&ty));
            } else if let E::InitList(_) = a.kind {
                // `f(acc, { x[i], 1.0f })`: a value of the parameter's type, made once the function is known.
                refs.push(None);
                vals.push(Val::Agg { ty: Ty::Void, leaves: Vec::new() });
            } else {
                refs.push(None);
                vals.push(self.rvalue(a)?);
            }
        }
        let explicit = explicit.map(|a| self.constant_args(&a));
        let targs = match (&explicit, item.is_template) {
            (Some(a), _) => Some(a.clone()),
            (None, true) => Some(self.deduce(item, &file, &vals, e)?),
            (None, false) => None,
        };
        let key = match &targs {
            Some(a) => format!("{base}<{a}>"),
            None => base.clone(),
        };
        let def = match self.fns.get(&key) {
            Some(d) => Rc::clone(d),
            None => {
                // An explicit specialization for these arguments wins.
                let spec = file.items.fns.iter().find(|f| f.spec.as_deref() == Some(key.as_str()));
                let d = match spec {
                    Some(s) => instantiate(self.src, &file, types(self), s, None)?,
                    None => instantiate(self.src, &file, types(self), item, targs.as_deref())?,
                };
                let d = Rc::new(d);
                self.fns.insert(key.clone(), Rc::clone(&d));
                d
            }
        };
        for (k, a) in args.iter().enumerate() {
            if let (E::InitList(_), Some(p)) = (&a.kind, def.params.get(k)) {
                let ty = wrap_ptr(p.base.clone(), p.pointers);
                vals[k] = self.init_value(&ty, a)?;
            }
        }
        self.inline_refs(&base, def, vals, refs, None, e).map(Some)
    }

    /// A value of type `ty` that emits nothing (a reference argument's stand-in for deducing template
    /// arguments).
    #[cold]
    pub(super) fn placeholder(&self, ty: &Ty) -> Val {
        match ty {
            Ty::Int { .. } => Val::Int(Src::Imm(0), IntTy::of(ty).unwrap_or(IntTy::INT)),
            Ty::Float { .. } => Val::Float(Src::Imm(0)),
            Ty::Ptr(e) => Val::Ptr { src: Src::Imm(0), to: (**e).clone(), space: MemSpace::Global, read_only: false },
            _ => Val::Agg { ty: ty.clone(), leaves: Vec::new() },
        }
    }

    /// Template arguments as the caller wrote them, with the caller's constants in place
    /// (`warpReduceSum<warp_size>` with a local `const int warp_size = 32` passes 32).
    #[cold]
    pub(super) fn constant_args(&self, text: &str) -> String {
        let Ok(toks) = crate::lang::lex::lex(text) else { return text.to_string() };
        let mut out = String::new();
        let mut last = 0;
        for t in toks {
            if let crate::lang::lex::Tok::Ident(w) = &t.tok {
                let value = self.lookup(w).and_then(|i| match &self.scopes[i].1 {
                    Binding::Const(Val::Int(Src::Imm(v), ty)) => {
                        Some(exec::conv(*v, ty.promoted().bits, ty.promoted().signed) as i64)
                    }
                    _ => None,
                });
                if let Some(v) = value {
                    out.push_str(&text[last..t.span.start]);
                    out.push_str(&v.to_string());
                    last = t.span.end;
                }
            }
        }
        out.push_str(&text[last.min(text.len())..]);
        out
    }

    /// Runs function `def` inline on `vals`; a member function on an object `this` in memory or registers
    /// (its fields are names in the body, and `this` points to it). Its value (unknown data for a class
    /// value kept in registers).
    #[cold]
    pub(super) fn inline(&mut self, base: &str, def: Rc<FnDef>, vals: Vec<Val>, this: Option<Place>, e: &Ex) -> R<Val> {
        let refs = (0..vals.len()).map(|_| None).collect();
        self.inline_refs(base, def, vals, refs, this, e)
    }

    /// [`Lower::inline`] with the reference arguments: each a variable or place the parameter names.
    #[cold]
    pub(super) fn inline_refs(
        &mut self,
        base: &str,
        def: Rc<FnDef>,
        vals: Vec<Val>,
        refs: Vec<Option<LRef>>,
        this: Option<Place>,
        e: &Ex,
    ) -> R<Val> {
        let cls = self.fns_class.get(&(Rc::as_ptr(&def) as usize)).copied();
        if let Some(c) = cls {
            self.class_stack.push(c);
        }
        // The bindings the references name, taken before the callee's scope hides them.
        let refs: Vec<Option<Binding>> = refs
            .into_iter()
            .map(|r| match r {
                Some(LRef::Var(i)) => Some(self.scopes[i].1.clone()),
                Some(LRef::Mem(p)) => Some(Binding::Mem(p)),
                None => None,
            })
            .collect();
        let r = self.inline_body(base, def, vals, refs, this, e);
        if cls.is_some() {
            self.class_stack.pop();
        }
        r
    }

    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn inline_body(
        &mut self,
        base: &str,
        def: Rc<FnDef>,
        vals: Vec<Val>,
        refs: Vec<Option<Binding>>,
        this: Option<Place>,
        e: &Ex,
    ) -> R<Val> {
        // A default argument stands for a missing one.
        let mut vals = vals;
        if vals.len() < def.params.len() && def.params[vals.len()..].iter().all(|d| d.init.is_some()) {
            for d in def.params[vals.len()..].iter() {
                let init = d.init.as_ref().expect("checked");
                vals.push(self.rvalue(init)?);
            }
        }
        if def.params.len() != vals.len() {
            return Err(
                self.err(e.span, format!("`{base}` takes {} argument(s), found {}", def.params.len(), vals.len()))
            );
        }
        // The callee sees the file's top level and its own parameters only.
        let saved_scopes = self.scopes.split_off(self.globals_end.min(self.scopes.len()));
        let saved_marks = std::mem::take(&mut self.marks);
        let saved_loops = std::mem::take(&mut self.loops);
        let (saved_stmt, saved_seq, saved_salt) = (self.stmt, self.seq, self.salt);
        self.calls += 1;
        self.salt = self.calls.saturating_mul(1 << 24);
        self.open_scope();
        let r = (|| -> R<Val> {
            if let Some(obj) = &this {
                // The object's fields by name, and `this`.
                if let Ty::Struct(i) = &obj.ty {
                    for (name, fty, off) in types(self).def(*i).map(|d| d.fields).unwrap_or_default() {
                        let addr = self.bin(BinOp::Add, Width::W64, obj.addr, Src::Imm(off), e.span);
                        let place = Place { space: obj.space, addr, ty: fty, read_only: obj.read_only };
                        self.bind(name.into(), Binding::Mem(place));
                    }
                }
                let ptr = Val::Ptr { src: obj.addr, to: obj.ty.clone(), space: obj.space, read_only: obj.read_only };
                self.bind("this".into(), Binding::Const(ptr));
            }
            for (k, (d, v)) in def.params.iter().zip(vals).enumerate() {
                if let (true, Some(Some(b))) = (d.reference, refs.get(k)) {
                    self.bind(d.name.clone(), b.clone());
                    continue;
                }
                let ty = wrap_ptr(d.base.clone(), d.pointers);
                let v = self.convert(&ty, v, e.span)?;
                let b = self.var_with(&ty, v, d.span, e.span)?;
                self.bind(d.name.clone(), b);
            }
            let ret = match &def.ret {
                Some(t) => Some((t.clone(), self.new_var(t, e.span, |_, _, _| {})?)),
                None => None,
            };
            let end = self.b.label();
            self.frames.push(Frame { end, ret, returned: false });
            self.find_homes(&def.body);
            let r = self.block(&def.body);
            let frame = self.frames.pop().expect("pushed above");
            self.b.place(end);
            r?;
            Ok(match frame.ret {
                Some((_, Binding::Var { val, .. })) => val,
                Some((t, Binding::Mem(_))) => {
                    let why = format!("the value `{base}` returns ({}), kept in registers", self.pos(e.span));
                    let w = self.b.data_why(why);
                    self.fresh_temp(&t, e.span, w)?
                }
                _ => Val::Int(Src::Imm(0), IntTy::INT),
            })
        })();
        self.scopes.truncate(self.globals_end.min(self.scopes.len()));
        self.scopes.extend(saved_scopes);
        self.marks = saved_marks;
        self.loops = saved_loops;
        (self.stmt, self.seq, self.salt) = (saved_stmt, saved_seq, saved_salt);
        r
    }

    /// The type a name names in the file (a class is made a type when first named).
    #[cold]
    pub(super) fn lookup_type(&self, name: &str, span: Span) -> R<Option<Ty>> {
        super::super::parse::lookup_type(self.src, &self.ast.file, types(self), name, span)
    }

    /// Whether values of `ty` are class objects kept in registers as a whole (a struct with member functions
    /// or array fields): they live in a register place, so that member functions and `operator[]` can change
    /// them; the values they hold are not followed.
    #[cold]
    pub(super) fn class_like(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Struct(i) => types(self)
                .def(*i)
                .is_some_and(|d| !d.methods.is_empty() || d.fields.iter().any(|(_, t, _)| matches!(t, Ty::Array(..)))),
            _ => false,
        }
    }

    /// Whether values of `ty` are floating-point data only (floats, float vectors, structs of them).
    #[cold]
    pub(super) fn is_data_type(&self, ty: &Ty) -> bool {
        !self.fields(ty).is_empty() && self.fields(ty).iter().all(|(_, t)| matches!(t, Ty::Float { .. }))
    }

    /// A register place for a class object of type `ty`.
    #[cold]
    pub(super) fn class_place(&mut self, ty: &Ty) -> Place {
        let t = types(self);
        let (size, align) = (t.size(ty), t.align(ty).max(4));
        let off = self.reg_top.div_ceil(align) * align;
        self.reg_top = off + size;
        Place { space: MemSpace::Reg, addr: Src::Imm(off), ty: ty.clone(), read_only: false }
    }

    /// Member function `m` of class `cls` (struct index), parsed once.
    #[cold]
    pub(super) fn method_def(&mut self, cls: usize, m: &str, arity: usize, e: &Ex) -> R<Option<(Rc<FnDef>, bool)>> {
        let Some(def) = types(self).def(cls) else { return Ok(None) };
        let candidates: Vec<&super::super::syntax::Method> = def.methods.iter().filter(|x| x.name == m).collect();
        let Some(method) = candidates.iter().find(|x| params_of(&x.toks) == arity).or(candidates.first()).copied()
        else {
            return Ok(None);
        };
        let key = format!("{}::{m}/{}", def.name, params_of(&method.toks));
        if let Some(d) = self.fns.get(&key) {
            return Ok(Some((Rc::clone(d), method.is_static)));
        }
        let parsed = super::super::parse::method(self.src, &self.ast.file, types(self), &def.name, &method.toks)
            .map_err(|err| self.err(e.op_span, format!("in `{}::{m}`: {}", def.name, err.message)))?;
        let d = Rc::new(parsed);
        self.fns.insert(key, Rc::clone(&d));
        self.fns_class.insert(Rc::as_ptr(&d) as usize, cls);
        Ok(Some((d, method.is_static)))
    }

    /// A class object constructed from `args` (`Packed128<float>{bits}`, `Packed128<float>(bits)`): its
    /// constructor runs on a fresh register place; the value (unknown data) is the object.
    #[cold]
    pub(super) fn construct(&mut self, ty: &Ty, args: &[Ex], e: &Ex) -> R<Val> {
        let Ty::Struct(i) = ty else { return self.init_value(ty, e) };
        let name = types(self).name(ty);
        let obj = self.class_place(ty);
        if let Some((def, _)) = self.method_def(*i, &name, args.len(), e)? {
            let mut vals = Vec::new();
            for a in args {
                vals.push(self.rvalue(a)?);
            }
            self.inline(&name, def, vals, Some(obj), e)?;
        } else {
            for a in args {
                self.rvalue(a)?;
            }
        }
        let why = format!("a `{name}` made at {}, kept in registers", self.pos(e.span));
        let w = self.b.data_why(why);
        self.fresh_temp(ty, e.span, w)
    }

    /// Template arguments of a call from its arguments' types: `T` from a parameter declared `T` or `T *`.
    #[cold]
    pub(super) fn deduce(
        &mut self,
        item: &super::super::items::FnItem,
        file: &super::super::File,
        vals: &[Val],
        e: &Ex,
    ) -> R<String> {
        // The declared parameter types, as token words, from the function's own tokens.
        let toks = &file.toks[item.toks.clone()];
        let open = toks.iter().position(|t| matches!(t.tok, crate::lang::lex::Tok::Punct("(")));
        let mut params: Vec<Vec<String>> = vec![Vec::new()];
        if let Some(o) = open {
            let mut depth = 0;
            for t in &toks[o + 1..] {
                match &t.tok {
                    crate::lang::lex::Tok::Punct("(") => depth += 1,
                    crate::lang::lex::Tok::Punct(")") if depth == 0 => break,
                    crate::lang::lex::Tok::Punct(")") => depth -= 1,
                    crate::lang::lex::Tok::Punct(",") if depth == 0 => {
                        params.push(Vec::new());
                        continue;
                    }
                    _ => {}
                }
                let w = match &t.tok {
                    crate::lang::lex::Tok::Ident(w) => w.clone(),
                    crate::lang::lex::Tok::Punct(p) => p.to_string(),
                    _ => String::new(),
                };
                params.last_mut().expect("one").push(w);
            }
        }
        let mut out = Vec::new();
        for tp in &item.params {
            // Every argument that fixes the parameter; one whose type is exact (not a register's floating-point
            // value, which does not tell float from double) wins.
            let candidates: Vec<(Ty, bool)> = params
                .iter()
                .zip(vals)
                .filter_map(|(words, v)| {
                    let at = words.iter().position(|w| *w == tp.name)?;
                    let stars = words[at + 1..].iter().filter(|w| *w == "*").count();
                    let mut ty = self.ty_of(v);
                    for _ in 0..stars {
                        ty = match ty {
                            Ty::Ptr(t) => (*t).clone(),
                            _ => return None,
                        };
                    }
                    Some((ty, matches!(v, Val::Float(_)) && stars == 0))
                })
                .collect();
            let found = candidates.iter().find(|c| !c.1).or(candidates.first()).cloned();
            match (found, &tp.default) {
                (Some((ty, from_float)), _) => {
                    if from_float {
                        self.assumed.push(format!("{} = float in the call of `{}` at {} (a register does not tell float from double: write {}<double>(…) if it is double)", tp.name, item.name, self.pos(e.span), item.name));
                    }
                    out.push(c_name(types(self), &ty));
                }
                (None, Some(d)) => out.push(
                    d.iter()
                        .map(|t| match &t.tok {
                            crate::lang::lex::Tok::Ident(w) => w.clone(),
                            crate::lang::lex::Tok::Int(n) => n.to_string(),
                            crate::lang::lex::Tok::Punct(p) => p.to_string(),
                            _ => String::new(),
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                (None, None) => {
                    return Err(self.err(
                        e.op_span,
                        format!(
                            "cannot deduce the template argument `{}` of `{}`: write it, as {}<…>(…)",
                            tp.name, item.name, item.name
                        ),
                    ));
                }
            }
        }
        Ok(out.join(", "))
    }
}
