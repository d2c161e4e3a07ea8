//! The SIMT machine: one warp at a time, all 32 lanes per operation.
//!
//! Registers are 32 lanes of 64 bits (a struct of arrays), each with a mask of the lanes whose value is
//! unknown and the reason. Control flow follows a reconvergence stack: a conditional branch whose lanes
//! disagree runs one side, then the other, and the two meet again at the branch's immediate
//! post-dominator ([`super::Program::reconverge`]). `EXIT` removes lanes for good; `BAR` stops the warp until
//! the block's other warps arrive (the block scheduler in [`super::grid`] releases it).

use super::affine::Affine;
use super::{
    BinOp, Cmp, DataDecision, LaneExpr, Op, PredOp, PredRef, Program, SiteId, Special, Src, Vars, Width, NEVER,
};
use crate::model::access::Second;
use crate::program::launch::{Dim3, Launch};
use crate::text::Span;

/// All 32 lanes.
pub const ALL: u32 = u32::MAX;

/// Why a run stopped with an error: the message and the source text it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecError {
    /// Where.
    pub span: Span,
    /// What.
    pub message: String,
}

/// Where a warp stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every lane exited.
    Done,
    /// At a barrier, waiting for the block's other warps.
    Barrier,
    /// Out of fuel: call `run` again to go on.
    Paused,
    /// The sink asked to stop.
    Stopped,
}

/// Receives every warp-level memory issue.
pub trait Sink {
    /// Warp `warp` issues `site` for the `pass`-th time (from 0) with the lanes of `mask` active; `addrs`
    /// holds each lane's address (meaningless outside `mask`); `second` the instruction's other operand (the
    /// lanes whose explicit `Plg` is true, or a `cp.async`'s global sources). Returns false to stop the warp.
    fn issue(&mut self, site: SiteId, warp: u32, pass: u32, addrs: &[u64; 32], mask: u32, second: Second) -> bool;

    /// Before an issue of a run that follows `blockIdx` (a whole grid's equivalence proof): the issue's global
    /// addresses at block `b` are its addresses here plus `c · (b - b0)` bytes (for `cp.async`, its sources').
    fn moves(&mut self, _c: [i64; 3]) {}

    /// An atomic at `site` whose address depends on `why` (data) was not issued: it cannot be counted.
    fn unknown_address(&mut self, _site: SiteId, _why: &str) {}
}

/// What every warp of a block shares.
#[derive(Clone, Copy, Debug)]
pub struct Env {
    /// The launch (block and grid sizes).
    pub launch: Launch,
    /// The block that runs.
    pub block_idx: Dim3,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    pc: u32,
    mask: u32,
    /// Where this frame's lanes meet the frame below; reaching it pops the frame.
    rpc: u32,
}

/// The most frames a warp's reconvergence stack may hold; real control flow nests far less deeply.
pub const MAX_STACK: usize = 4096;

/// Whether all 32 lanes hold one value (a branch-free reduction).
fn same_lanes(v: &[u64; 32]) -> bool {
    v.iter().fold(0, |acc, &x| acc | (x ^ v[0])) == 0
}

/// `r[l] = f(x[l], y[l])` for every lane, with the operand kinds decided once, outside the loop.
macro_rules! lanes2 {
    ($r:ident, $x:expr, $y:expr, |$p:ident, $q:ident| $e:expr) => {
        match ($x, $y) {
            (L::R(a), L::R(b)) => {
                for l in 0..32 {
                    let ($p, $q) = (a[l], b[l]);
                    $r[l] = $e;
                }
            }
            (L::R(a), L::I(b)) => {
                for l in 0..32 {
                    let ($p, $q) = (a[l], b);
                    $r[l] = $e;
                }
            }
            (L::I(a), L::R(b)) => {
                for l in 0..32 {
                    let ($p, $q) = (a, b[l]);
                    $r[l] = $e;
                }
            }
            (L::I(a), L::I(b)) => {
                let ($p, $q) = (a, b);
                let v = $e;
                for l in 0..32 {
                    $r[l] = v;
                }
            }
        }
    };
}

/// One warp's state.
pub struct Warp {
    /// The warp's index in the block.
    pub warp: u32,
    /// Lanes that exist (a partial last warp has fewer).
    pub valid: u32,
    exited: u32,
    stack: Vec<Frame>,
    regs: Vec<[u64; 32]>,
    /// Registers whose 32 lanes hold one value (loop counters, block-wide values, a warp's row): read as
    /// an immediate, so the operations on them run once instead of per lane. Checked at every whole-warp
    /// write; a partial write clears it.
    uniform: Vec<bool>,
    unk: Vec<u32>,
    why: Vec<u32>,
    preds: Vec<u32>,
    punk: Vec<u32>,
    pwhy: Vec<u32>,
    /// How many times this warp has issued each site.
    passes: Vec<u32>,
    tid: [[u32; 32]; 3],
    /// Blockidx dependence of every value, when the grid driver asks for it.
    pub affine: Option<Box<Affine>>,
    /// Instructions executed.
    pub executed: u64,
    /// The data-dependent decisions this warp met, once per instruction.
    pub decisions: Vec<DataDecision>,
    /// How many times this warp met each loop-leaving branch it decided by assumption: `runs` leaves the loop
    /// at every second meeting, so the loop's body runs once each time the loop is entered.
    meetings: Vec<(u32, u32)>,
    /// The lanes of each register whose value comes from given data (followed only when data is given): an
    /// atomic whose address does, is never aggregated (docs/model.md#kernels-on-data).
    #[cfg(feature = "data")]
    tainted: Vec<u32>,
}

/// A value's lanes and the lanes where it is unknown (with the reason of the first).
type Lanes = [u64; 32];

impl Warp {
    /// Warp `warp` of a block of `launch`, at the program's start.
    pub fn new(prog: &Program, launch: &Launch, warp: u32) -> Warp {
        let threads = launch.threads();
        let first = warp * 32;
        let valid = if first >= threads {
            0
        } else {
            let n = (threads - first).min(32);
            if n == 32 {
                ALL
            } else {
                (1u32 << n) - 1
            }
        };
        let mut tid = [[0u32; 32]; 3];
        for l in 0..32u32 {
            let t = launch.thread(first + l);
            tid[0][l as usize] = t.tid.x;
            tid[1][l as usize] = t.tid.y;
            tid[2][l as usize] = t.tid.z;
        }
        let nr = prog.n_regs as usize;
        let np = prog.n_preds as usize;
        Warp {
            warp,
            valid,
            exited: 0,
            stack: vec![Frame { pc: 0, mask: valid, rpc: NEVER }],
            regs: vec![[0; 32]; nr],
            uniform: vec![true; nr],
            unk: vec![0; nr],
            why: vec![0; nr],
            preds: vec![0; np],
            punk: vec![0; np],
            pwhy: vec![0; np],
            passes: vec![0; prog.sites.len()],
            tid,
            affine: None,
            executed: 0,
            decisions: Vec::new(),
            meetings: Vec::new(),
            #[cfg(feature = "data")]
            tainted: vec![0; nr],
        }
    }

    /// True when every lane has exited.
    pub fn done(&self) -> bool {
        self.stack.is_empty()
    }

    /// Where the warp is now (for messages when a limit stops it).
    pub fn pc(&self) -> Option<u32> {
        self.stack.last().map(|f| f.pc)
    }

    /// How many times this warp has issued `site`.
    pub fn passes(&self, site: SiteId) -> u32 {
        self.passes.get(site as usize).copied().unwrap_or(0)
    }

    /// An operand without copying it.
    fn lanes(&self, s: Src) -> L<'_> {
        match s {
            Src::Reg(r) if self.uniform[r as usize] => L::I(self.regs[r as usize][0]),
            Src::Reg(r) => L::R(&self.regs[r as usize]),
            Src::Imm(v) => L::I(v),
        }
    }

    fn src(&self, s: Src) -> Lanes {
        match s {
            Src::Reg(r) => self.regs[r as usize],
            Src::Imm(v) => [v; 32],
        }
    }

    fn src_unk(&self, s: Src) -> (u32, u32) {
        match s {
            Src::Reg(r) => (self.unk[r as usize], self.why[r as usize]),
            Src::Imm(_) => (0, 0),
        }
    }

    /// A predicate's lanes: (true lanes, unknown lanes, reason).
    fn pred(&self, p: PredRef) -> (u32, u32, u32) {
        match p.idx {
            None => (if p.neg { 0 } else { ALL }, 0, 0),
            Some(i) => {
                let v = self.preds[i as usize];
                (if p.neg { !v } else { v }, self.punk[i as usize], self.pwhy[i as usize])
            }
        }
    }

    fn write(&mut self, dst: u32, vals: &Lanes, m: u32) {
        self.uniform[dst as usize] = m == ALL && same_lanes(vals);
        let d = &mut self.regs[dst as usize];
        if m == ALL {
            *d = *vals;
        } else {
            for l in 0..32 {
                d[l] = if m >> l & 1 != 0 { vals[l] } else { d[l] };
            }
        }
    }

    /// `dst[l] = f(a[l], b[l])` for the lanes of `m`, computed in place: no lane array is built and copied
    /// (two copies of 256 bytes per operation were a tenth of the run). An operand that is `dst` itself is
    /// read from a copy taken first.
    fn compute2(&mut self, dst: u32, a: Src, b: Src, m: u32, f: impl Fn(u64, u64) -> u64) {
        let d = dst as usize;
        // Uniform operands: one computation, and the result stays uniform when every lane takes it.
        if let (L::I(p), L::I(q)) = (self.lanes(a), self.lanes(b)) {
            let v = f(p, q);
            let out = &mut self.regs[d];
            if m == ALL {
                *out = [v; 32];
                self.uniform[d] = true;
            } else {
                for (l, o) in out.iter_mut().enumerate() {
                    *o = if m >> l & 1 != 0 { v } else { *o };
                }
                self.uniform[d] = false;
            }
            return;
        }
        self.uniform[d] = false;
        let is_dst = |s: Src| matches!(s, Src::Reg(r) if r as usize == d);
        let saved = if is_dst(a) || is_dst(b) { self.regs[d] } else { [0; 32] };
        let uniform = &self.uniform;
        let (below, rest) = self.regs.split_at_mut(d);
        let Some((out, above)) = rest.split_first_mut() else { return };
        let get = |s: Src| match s {
            Src::Imm(v) => L::I(v),
            Src::Reg(r) if uniform[r as usize] && r as usize != d => {
                L::I(if (r as usize) < d { below[r as usize][0] } else { above[r as usize - d - 1][0] })
            }
            Src::Reg(r) if r as usize == d => L::R(&saved),
            Src::Reg(r) if (r as usize) < d => L::R(&below[r as usize]),
            Src::Reg(r) => L::R(&above[r as usize - d - 1]),
        };
        let (x, y) = (get(a), get(b));
        if m == ALL {
            lanes2!(out, x, y, |p, q| f(p, q));
            self.uniform[d] = same_lanes(out);
        } else {
            let mut r = [0u64; 32];
            lanes2!(r, x, y, |p, q| f(p, q));
            for l in 0..32 {
                out[l] = if m >> l & 1 != 0 { r[l] } else { out[l] };
            }
        }
    }

    fn set_unk(&mut self, dst: u32, m: u32, u: u32, why: u32) {
        let i = dst as usize;
        self.unk[i] = (self.unk[i] & !m) | (u & m);
        if u & m != 0 {
            self.why[i] = why;
        }
    }

    fn write_pred(&mut self, dst: u32, vals: u32, m: u32, u: u32, why: u32) {
        let i = dst as usize;
        self.preds[i] = (self.preds[i] & !m) | (vals & m);
        self.punk[i] = (self.punk[i] & !m) | (u & m);
        if u & m != 0 {
            self.pwhy[i] = why;
        }
    }

    fn special(&self, which: Special, env: &Env) -> Lanes {
        let l = &env.launch;
        let pick = |d: Dim3, c: u8| {
            u64::from(match c {
                0 => d.x,
                1 => d.y,
                _ => d.z,
            })
        };
        match which {
            Special::Tid(c) => std::array::from_fn(|lane| u64::from(self.tid[c.min(2) as usize][lane])),
            Special::Ctaid(c) => [pick(env.block_idx, c); 32],
            Special::Ntid(c) => [pick(l.block, c); 32],
            Special::Nctaid(c) => [pick(l.grid, c); 32],
            Special::Lane => std::array::from_fn(|lane| lane as u64),
            Special::Warp => [u64::from(self.warp); 32],
            Special::LinearTid => std::array::from_fn(|lane| u64::from(self.warp * 32) + lane as u64),
        }
    }

    fn decided(&mut self, at: u32, assumed: bool, why: u32) {
        if !self.decisions.iter().any(|d| d.at == at) {
            self.decisions.push(DataDecision { at, assumed, why });
        }
    }

    /// The lanes of `unsure` (whose condition depends on data) where the instruction at `pc` is taken to run or
    /// branch: [`Program::data_branches`] says where the source's condition holds, and the program's
    /// description of the branch (if any) which way that goes.
    fn assumed(&mut self, prog: &Program, pc: u32, unsure: u32, why: u32) -> u32 {
        self.decided(pc, true, why);
        if prog.data_branches == super::DataBranches::Runs {
            // The guarded code runs and loops do not repeat: a branch that leaves a loop (a `for` or `while`
            // tested at the top) is not taken when the loop is entered, so its body runs, and taken the next
            // time, when the body has run once.
            return match prog.insts.get(pc as usize).map(|i| &i.op) {
                Some(Op::Bra { .. }) if prog.leaves_loop(pc) => {
                    let k = match self.meetings.iter().position(|&(at, _)| at == pc) {
                        Some(k) => k,
                        None => {
                            self.meetings.push((pc, 0));
                            self.meetings.len() - 1
                        }
                    };
                    self.meetings[k].1 += 1;
                    if self.meetings[k].1 % 2 == 1 {
                        0
                    } else {
                        unsure
                    }
                }
                Some(Op::Bra { .. }) | Some(Op::Exit) => 0,
                _ => unsure,
            };
        }
        let holds = prog.data_branches.lanes() & unsure;
        match prog.conditions.get(&pc) {
            Some(&(_, false)) => unsure & !holds,
            _ => holds,
        }
    }

    /// What an issue of `site` at the addresses in `addr` finds in the given arrays: for a load, the lanes that
    /// read an element of one (an integer or a pointer) and their values. A lane past the end of a given array,
    /// or one that writes into a given array, is an error naming the array, the element and the thread.
    #[cfg(feature = "data")]
    #[allow(clippy::too_many_arguments)]
    fn read_given(
        &self,
        prog: &Program,
        given: &super::memory::Given,
        env: &Env,
        span: Span,
        site: SiteId,
        addr: u32,
        run: u32,
        load: Option<&super::Load>,
    ) -> Result<(u32, Lanes), ExecError> {
        use super::memory::Found;
        let Some(s) = prog.sites.get(site as usize) else { return Ok((0, [0; 32])) };
        let writes = s.instr.base.writes();
        // The whole access is checked against the array's end; the load's register takes its first element (a
        // vector's others are read as parts, `Op::Peek`).
        let size = u64::from(s.instr.size_bytes);
        let bytes = match load {
            Some(l) => l.elem.bytes().unwrap_or(s.instr.size_bytes),
            None => s.instr.size_bytes,
        };
        let who = |lane: usize| {
            let b = env.block_idx;
            format!(
                "thread ({}, {}, {}) of block ({}, {}, {})",
                self.tid[0][lane], self.tid[1][lane], self.tid[2][lane], b.x, b.y, b.z
            )
        };
        let (mut got, mut values) = (0u32, [0u64; 32]);
        for (lane, value) in values.iter_mut().enumerate() {
            if run >> lane & 1 == 0 {
                continue;
            }
            let a = self.regs[addr as usize][lane];
            match given.find(a, size.max(u64::from(bytes))) {
                Found::Nowhere => {}
                Found::Past(arr, off) => {
                    let eb = u64::from(arr.elem.bytes().unwrap_or(1));
                    return Err(ExecError {
                        span,
                        message: format!(
                            "{} {} `{}` at element {}, past its end: it was given {} element{} ({})",
                            who(lane),
                            if writes { "writes" } else { "reads" },
                            arr.name,
                            off / eb,
                            arr.len(),
                            if arr.len() == 1 { "" } else { "s" },
                            arr.origin
                        ),
                    });
                }
                Found::In(arr, off) if writes => {
                    let eb = u64::from(arr.elem.bytes().unwrap_or(1));
                    return Err(ExecError {
                        span,
                        message: format!(
                            "{} writes `{}` (element {}), which was given as data: warpscope reads given arrays as the launch's inputs and does not yet follow what a kernel writes into them; give only the arrays the kernel reads",
                            who(lane),
                            arr.name,
                            off / eb
                        ),
                    });
                }
                Found::In(arr, off) => {
                    let Some(l) = load else { continue };
                    let at = off as usize;
                    let raw = &arr.bytes[at..at + bytes as usize];
                    if let Some(v) = l.elem.value(raw) {
                        *value = v;
                        got |= 1 << lane;
                    }
                }
            }
        }
        Ok((got, values))
    }

    /// The values of `elem` at the addresses in `addr` (lanes of `run` whose address is known) that given arrays
    /// hold: the lanes and their values. The memory instruction that loaded the whole value checked its bounds.
    #[cfg(feature = "data")]
    fn peek_given(&self, given: &super::memory::Given, addr: u32, elem: super::memory::Elem, run: u32) -> (u32, Lanes) {
        use super::memory::Found;
        let (mut got, mut values) = (0u32, [0u64; 32]);
        let bytes = elem.bytes().unwrap_or(0);
        let known = run & !self.unk[addr as usize];
        for (lane, value) in values.iter_mut().enumerate() {
            if known >> lane & 1 == 0 {
                continue;
            }
            if let Found::In(arr, off) = given.find(self.regs[addr as usize][lane], u64::from(bytes)) {
                let at = off as usize;
                if let Some(v) = elem.value(&arr.bytes[at..at + bytes as usize]) {
                    *value = v;
                    got |= 1 << lane;
                }
            }
        }
        (got, values)
    }

    /// The lanes of register `r` whose value comes from given data.
    fn data_lanes(&self, r: u32) -> u32 {
        #[cfg(feature = "data")]
        return self.tainted[r as usize];
        #[cfg(not(feature = "data"))]
        {
            let _ = r;
            0
        }
    }

    /// Removes `lanes` from every frame (they exited).
    fn exit_lanes(&mut self, lanes: u32) {
        self.exited |= lanes;
        for f in &mut self.stack {
            f.mask &= !lanes;
        }
    }

    /// Runs until the warp is done, reaches a barrier, runs out of `fuel` (instructions), or the sink stops it.
    pub fn run(&mut self, prog: &Program, env: &Env, sink: &mut dyn Sink, fuel: &mut u64) -> Result<Status, ExecError> {
        let n = prog.insts.len() as u32;
        loop {
            let Some(top) = self.stack.last().copied() else { return Ok(Status::Done) };
            if top.mask == 0 || top.pc == top.rpc {
                self.stack.pop();
                continue;
            }
            if top.pc >= n {
                // Running past the end is an exit.
                self.exit_lanes(top.mask);
                continue;
            }
            if *fuel == 0 {
                return Ok(Status::Paused);
            }
            *fuel -= 1;
            self.executed += 1;
            let pc = top.pc;
            let inst = &prog.insts[pc as usize];
            let m = top.mask;
            let (g, gu, gwhy) = match inst.guard {
                None => (ALL, 0, 0),
                Some(p) => self.pred(p),
            };
            // Lanes that run the operation, and lanes whose guard is unknown.
            let mut run = m & g & !gu;
            let mut unsure = m & gu;
            // A computation under a guard that depends on data runs where the data-branch assumption says the
            // guarded code runs, as the memory instruction under the same guard does (a compiler's if-conversion
            // guards both the address and the access).
            let computes = !matches!(
                inst.op,
                Op::Bra { .. }
                    | Op::Mem { .. }
                    | Op::Exit
                    | Op::Bar
                    | Op::Trap { .. }
                    | Op::Shfl { .. }
                    | Op::Vote { .. }
            );
            if unsure != 0 && computes && prog.data_whys.contains(&gwhy) {
                let t = self.assumed(prog, pc, unsure, gwhy);
                run |= t;
                unsure &= !t;
            }
            let guard_err = || ExecError {
                span: inst.span,
                message: match prog.conditions.get(&pc) {
                    Some(&(what, _)) => format!("{} depends on {}", prog.ctxs[what as usize], prog.whys[gwhy as usize]),
                    None => format!("the guard predicate is unknown: {}", prog.whys[gwhy as usize]),
                },
            };
            // A condition unknown for a reason that is not data (a parameter without a value, an instruction
            // warpscope does not model) is never assumed.
            if unsure != 0 && !prog.data_whys.contains(&gwhy) {
                let decides = matches!(inst.op, Op::Bra { .. } | Op::Mem { .. } | Op::Exit);
                if decides {
                    return Err(guard_err());
                }
            }
            let mut next = pc + 1;
            #[cfg(feature = "data")]
            if prog.given.is_some() && !matches!(inst.op, Op::Mem { .. } | Op::Peek { .. }) {
                if let Some((d, srcs)) = inst.op.value_flow() {
                    let t = srcs.iter().flatten().fold(0, |t, s| match s {
                        Src::Reg(r) => t | self.tainted[*r as usize],
                        Src::Imm(_) => t,
                    });
                    let d = d as usize;
                    self.tainted[d] = (self.tainted[d] & !m) | (t & m);
                }
            }
            match &inst.op {
                Op::Bin { op, w, dst, a, b } => {
                    let (ua, wa) = self.src_unk(*a);
                    let (ub, wb) = self.src_unk(*b);
                    let known = run & !(ua | ub);
                    let u = (ua | ub) & run;
                    let why = if ua & run != 0 { wa } else { wb };
                    if self.affine.is_some() {
                        let (x, y) = (self.src(*a), self.src(*b));
                        if let Some(aff) = self.affine.as_deref_mut() {
                            aff.bin(*op, *w, *dst, *a, *b, &x, &y, run);
                        }
                    }
                    // The common operations straight into the destination; the others (which may divide by
                    // zero) through a checked copy.
                    let mask = w.mask();
                    match op {
                        BinOp::Add => self.compute2(*dst, *a, *b, run, |x, y| x.wrapping_add(y) & mask),
                        BinOp::Sub => self.compute2(*dst, *a, *b, run, |x, y| x.wrapping_sub(y) & mask),
                        BinOp::Mul => self.compute2(*dst, *a, *b, run, |x, y| x.wrapping_mul(y) & mask),
                        BinOp::And => self.compute2(*dst, *a, *b, run, |x, y| x & y & mask),
                        BinOp::Or => self.compute2(*dst, *a, *b, run, |x, y| (x | y) & mask),
                        BinOp::Xor => self.compute2(*dst, *a, *b, run, |x, y| (x ^ y) & mask),
                        _ => {
                            let r = bin_lanes(*op, *w, self.lanes(*a), self.lanes(*b), known).map_err(|lane| {
                                ExecError {
                                    span: inst.span,
                                    message: format!("division by zero in `{}` (lane {lane})", op.symbol()),
                                }
                            })?;
                            self.write(*dst, &r, run);
                        }
                    }
                    self.set_unk(*dst, run, u, why);
                    self.set_unk(*dst, unsure, unsure, gwhy);
                }
                Op::Index { dst, base, idx, bits, signed, scale } => {
                    let (ua, wa) = self.src_unk(*base);
                    let (ub, wb) = self.src_unk(*idx);
                    let u = (ua | ub) & run;
                    let why = if ua & run != 0 { wa } else { wb };
                    if self.affine.is_some() {
                        let (x, y) = (self.src(*base), self.src(*idx));
                        if let Some(aff) = self.affine.as_deref_mut() {
                            aff.index(*dst, *base, *idx, &x, &y, *bits, *signed, *scale, run);
                        }
                    }
                    let (bits, signed, scale) = (*bits, *signed, *scale);
                    self.compute2(*dst, *base, *idx, run, |b, i| {
                        b.wrapping_add(conv(i, bits, signed).wrapping_mul(scale))
                    });
                    self.set_unk(*dst, run, u, why);
                    self.set_unk(*dst, unsure, unsure, gwhy);
                }
                Op::Conv { dst, a, bits, signed } => {
                    let (ua, wa) = self.src_unk(*a);
                    let r: Lanes = match self.lanes(*a) {
                        L::R(x) => std::array::from_fn(|l| conv(x[l], *bits, *signed)),
                        L::I(v) => [conv(v, *bits, *signed); 32],
                    };
                    if self.affine.is_some() {
                        let x = self.src(*a);
                        if let Some(aff) = self.affine.as_deref_mut() {
                            aff.conv(*dst, *a, &x, *bits, *signed, run);
                        }
                    }
                    self.write(*dst, &r, run);
                    self.set_unk(*dst, run, ua, wa);
                    self.set_unk(*dst, unsure, unsure, gwhy);
                }
                Op::Mov { dst, a } => {
                    let (ua, wa) = self.src_unk(*a);
                    if let Some(aff) = self.affine.as_deref_mut() {
                        aff.mov(*dst, *a, run);
                    }
                    match *a {
                        Src::Reg(r) if r == *dst => {}
                        Src::Reg(r) => {
                            let x = self.regs[r as usize];
                            self.write(*dst, &x, run);
                        }
                        Src::Imm(v) => self.write(*dst, &[v; 32], run),
                    }
                    self.set_unk(*dst, run, ua, wa);
                    self.set_unk(*dst, unsure, unsure, gwhy);
                }
                Op::Sel { dst, p, a, b } => {
                    let (pv, pu, pw) = self.pred(*p);
                    let (x, y) = (self.src(*a), self.src(*b));
                    let (ua, wa) = self.src_unk(*a);
                    let (ub, wb) = self.src_unk(*b);
                    let r: Lanes = std::array::from_fn(|l| if pv >> l & 1 != 0 { x[l] } else { y[l] });
                    let u = ((pv & ua) | (!pv & ub)) & run;
                    let why = if pv & ua & run != 0 { wa } else { wb };
                    if let Some(aff) = self.affine.as_deref_mut() {
                        aff.sel(*dst, pv, *a, *b, run);
                    }
                    self.write(*dst, &r, run);
                    self.set_unk(*dst, run, u, why);
                    self.set_unk(*dst, run & pu, run & pu, pw);
                    self.set_unk(*dst, unsure, unsure, gwhy);
                }
                Op::Special { dst, which } => {
                    let r = self.special(*which, env);
                    if let Some(aff) = self.affine.as_deref_mut() {
                        aff.special(*dst, *which, run);
                    }
                    self.write(*dst, &r, run);
                    self.set_unk(*dst, run, 0, 0);
                    self.set_unk(*dst, unsure, unsure, gwhy);
                }
                Op::Peek { dst, addr, elem, why } => {
                    #[cfg(feature = "data")]
                    let (got, values) = match &prog.given {
                        Some(g) => self.peek_given(g, *addr, *elem, run),
                        None => (0, [0; 32]),
                    };
                    #[cfg(not(feature = "data"))]
                    let (got, _) = (0u32, (elem, addr));
                    if let Some(aff) = self.affine.as_deref_mut() {
                        #[cfg(feature = "data")]
                        if got != 0 {
                            aff.loaded(*dst, *addr, run);
                        } else {
                            aff.clear(*dst, run);
                        }
                        #[cfg(not(feature = "data"))]
                        aff.clear(*dst, run);
                    }
                    #[cfg(feature = "data")]
                    {
                        if got != 0 {
                            self.write(*dst, &values, got);
                        }
                        let t = &mut self.tainted[*dst as usize];
                        *t = (*t & !(run | unsure)) | got;
                    }
                    self.set_unk(*dst, run | unsure, (run | unsure) & !got, *why);
                    if unsure != 0 {
                        self.set_unk(*dst, unsure, unsure, gwhy);
                    }
                }
                Op::Unknown { dst, why } => {
                    if let Some(aff) = self.affine.as_deref_mut() {
                        aff.clear(*dst, run);
                    }
                    self.set_unk(*dst, run | unsure, run | unsure, *why);
                    if unsure != 0 {
                        self.set_unk(*dst, unsure, unsure, gwhy);
                    }
                }
                Op::Setp { dst, cmp, signed, w, a, b } => {
                    let (ua, wa) = self.src_unk(*a);
                    let (ub, wb) = self.src_unk(*b);
                    let v = setp_lanes(*cmp, *signed, *w, self.lanes(*a), self.lanes(*b));
                    if self.affine.is_some() {
                        let (x, y) = (self.src(*a), self.src(*b));
                        if let Some(aff) = self.affine.as_deref_mut() {
                            aff.setp(*cmp, *signed, *w, *a, *b, &x, &y, run & !(ua | ub));
                        }
                    }
                    let u = (ua | ub) & run;
                    let why = if ua & run != 0 { wa } else { wb };
                    self.write_pred(*dst, v, run, u, why);
                    self.write_pred(*dst, 0, unsure, unsure, gwhy);
                }
                Op::PredLogic { dst, op, a, b } => {
                    let (va, ua, wa) = self.pred(*a);
                    let (vb, ub, wb) = self.pred(*b);
                    let v = match op {
                        PredOp::And => va & vb,
                        PredOp::Or => va | vb,
                        PredOp::Xor => va ^ vb,
                    };
                    // A known false (And) or true (Or) decides the result even when the other is unknown.
                    let u = match op {
                        PredOp::And => (ua | ub) & !(!va & !ua) & !(!vb & !ub),
                        PredOp::Or => (ua | ub) & !(va & !ua) & !(vb & !ub),
                        PredOp::Xor => ua | ub,
                    };
                    let why = if ua & u & run != 0 { wa } else { wb };
                    self.write_pred(*dst, v, run, u, why);
                    self.write_pred(*dst, 0, unsure, unsure, gwhy);
                }
                Op::PredToReg { dst, p } => {
                    let (pv, pu, pw) = self.pred(*p);
                    let r: Lanes = std::array::from_fn(|l| u64::from(pv >> l & 1));
                    if let Some(aff) = self.affine.as_deref_mut() {
                        aff.clear(*dst, run);
                    }
                    self.write(*dst, &r, run);
                    self.set_unk(*dst, run, pu, pw);
                    self.set_unk(*dst, unsure, unsure, gwhy);
                }
                Op::Require { a, ctx } => {
                    if unsure != 0 {
                        return Err(guard_err());
                    }
                    let (ua, wa) = self.src_unk(*a);
                    if ua & run != 0 {
                        return Err(ExecError {
                            span: inst.span,
                            message: format!("{}{}", prog.ctxs[*ctx as usize], prog.whys[wa as usize]),
                        });
                    }
                }
                Op::RequirePred { p, ctx } => {
                    if unsure != 0 {
                        return Err(guard_err());
                    }
                    let (_, pu, pw) = self.pred(PredRef::of(*p));
                    if pu & run != 0 {
                        return Err(ExecError {
                            span: inst.span,
                            message: format!("{}{}", prog.ctxs[*ctx as usize], prog.whys[pw as usize]),
                        });
                    }
                }
                Op::Eval { dst, pred, expr, vars, addr_bits, op_text } => {
                    if unsure != 0 {
                        return Err(guard_err());
                    }
                    let mut r = [0u64; 32];
                    let mut has = 0u32;
                    for (l, slot) in r.iter_mut().enumerate() {
                        if run >> l & 1 == 0 {
                            continue;
                        }
                        if let Some(a) = eval_lane(self, env, &**expr, vars, l, *addr_bits, op_text)? {
                            *slot = a;
                            has |= 1 << l;
                        }
                    }
                    if let Some(aff) = self.affine.as_deref_mut() {
                        aff.eval(*dst, &**expr, vars, &env.launch, env.block_idx, &self.tid, self.warp, has, run);
                    }
                    self.write(*dst, &r, run);
                    self.set_unk(*dst, run, 0, 0);
                    self.write_pred(*pred, has, run, 0, 0);
                }
                Op::Table { dst, pred, rows } => {
                    if unsure != 0 {
                        return Err(guard_err());
                    }
                    let row = rows.get(self.warp as usize);
                    let mut r = [0u64; 32];
                    let mut has = 0u32;
                    if let Some(row) = row {
                        for (l, a) in row.iter().enumerate() {
                            if let Some(a) = a {
                                r[l] = *a;
                                has |= 1 << l;
                            }
                        }
                    }
                    if let Some(aff) = self.affine.as_deref_mut() {
                        aff.clear(*dst, run);
                    }
                    self.write(*dst, &r, run);
                    self.set_unk(*dst, run, 0, 0);
                    self.write_pred(*pred, has, run, 0, 0);
                }
                Op::Mem { site, addr, plg, src, ctx, data } => {
                    let run = if unsure != 0 { run | self.assumed(prog, pc, unsure, gwhy) } else { run };
                    if run != 0 {
                        let (ua, wa) = self.src_unk(Src::Reg(*addr));
                        let atomic = || prog.sites.get(*site as usize).is_some_and(|s| s.instr.base.is_atomic());
                        if ua & run != 0 && prog.data_whys.contains(&wa) && atomic() {
                            // An atomic whose address is data (a histogram's `&bins[in[i]]`): not counted, and
                            // the result says so; what it returns is data.
                            sink.unknown_address(*site, &prog.whys[wa as usize]);
                            self.stack.last_mut().expect("a frame runs").pc = next;
                            continue;
                        }
                        if ua & run != 0 {
                            return Err(ExecError {
                                span: inst.span,
                                message: format!("{}{}", prog.ctxs[*ctx as usize], prog.whys[wa as usize]),
                            });
                        }
                        if let Some(src) = src {
                            let (us, ws) = self.src_unk(Src::Reg(*src));
                            if us & run != 0 {
                                return Err(ExecError {
                                    span: inst.span,
                                    message: format!("{}{}", prog.ctxs[*ctx as usize], prog.whys[ws as usize]),
                                });
                            }
                        }
                        let plg_mask = match plg {
                            None => None,
                            Some(p) => {
                                let (pv, pu, pw) = self.pred(*p);
                                if pu & run != 0 {
                                    return Err(ExecError {
                                        span: inst.span,
                                        message: format!("the Plg predicate is unknown: {}", prog.whys[pw as usize]),
                                    });
                                }
                                Some(pv & run)
                            }
                        };
                        let s = *site as usize;
                        let pass = self.passes[s];
                        self.passes[s] += 1;
                        if let Some(aff) = self.affine.as_deref_mut() {
                            // A generic access moves like a global one only when no lane reaches a window in
                            // any block; with a Plg predicate its lanes may go to shared memory whatever their
                            // addresses say.
                            let mut c = match plg_mask {
                                None => aff.mem_at(*site, *addr, run, &self.regs[*addr as usize]),
                                Some(_) => aff.mem(*site, *addr, run),
                            };
                            if let Some(s) = src {
                                c = aff.mem_src(*s, plg_mask.unwrap_or(run));
                            }
                            sink.moves(c);
                        }
                        let second = match (src, plg_mask) {
                            // A cp.async's `plg` is the lanes that read their source (the others zero-fill).
                            (Some(s), p) => Second::Src(&self.regs[*s as usize], p.unwrap_or(run)),
                            (None, Some(p)) => Second::Plg(p),
                            (None, None) => Second::None,
                        };
                        #[cfg(feature = "data")]
                        let (got, values) = match &prog.given {
                            Some(g) => self.read_given(prog, g, env, inst.span, *site, *addr, run, data.as_ref())?,
                            None => (0, [0; 32]),
                        };
                        #[cfg(not(feature = "data"))]
                        let got = 0u32;
                        let keep_going = sink.issue(*site, self.warp, pass, &self.regs[*addr as usize], run, second);
                        if let Some(l) = data {
                            let d = l.dst;
                            if let Some(aff) = self.affine.as_deref_mut() {
                                // A given array's element at an address that moves with the block is a value
                                // that does too.
                                #[cfg(feature = "data")]
                                if got != 0 {
                                    aff.loaded(d, *addr, run);
                                } else {
                                    aff.clear(d, run);
                                }
                                #[cfg(not(feature = "data"))]
                                aff.clear(d, run);
                            }
                            #[cfg(feature = "data")]
                            if got != 0 {
                                self.write(d, &values, got);
                            }
                            self.set_unk(d, run, run & !got, l.why);
                            #[cfg(feature = "data")]
                            {
                                let t = &mut self.tainted[d as usize];
                                *t = (*t & !run) | got;
                            }
                        }
                        if !keep_going {
                            self.stack.last_mut().expect("a frame runs").pc = next;
                            return Ok(Status::Stopped);
                        }
                    }
                }
                Op::Aggregate { dst, addr, val } => {
                    let (ua, _) = self.src_unk(Src::Reg(*addr));
                    let (uv, _) = self.src_unk(*val);
                    let a = &self.regs[*addr as usize];
                    let v = self.src(*val);
                    let first = run.trailing_zeros() as usize;
                    let same = run != 0
                        && (ua | uv | self.data_lanes(*addr)) & run == 0
                        && (0..32).all(|l| run >> l & 1 == 0 || (a[l] == a[first] && v[l] == v[first]));
                    let p = if same { 1u32 << first } else { ALL };
                    self.write_pred(*dst, p, run, 0, 0);
                }
                Op::Converged { dst } => {
                    let live = self.valid & !self.exited;
                    let v = if m == live { ALL } else { 0 };
                    self.write_pred(*dst, v, run, 0, 0);
                }
                Op::Bra { target } => {
                    let mut taken = run;
                    let mut wait = 0;
                    if unsure != 0 {
                        let region = prog.region(pc);
                        if region.pure {
                            // Both sides only compute values: the lanes whose condition is unknown skip them and
                            // meet the others where they reconverge, with every value the sides write unknown.
                            self.decided(pc, false, gwhy);
                            for &r in &region.regs {
                                self.set_unk(r, unsure, unsure, gwhy);
                                self.uniform[r as usize] = false;
                                if let Some(aff) = self.affine.as_deref_mut() {
                                    aff.clear(r, unsure);
                                }
                            }
                            for &q in &region.preds {
                                let i = q as usize;
                                self.punk[i] |= unsure;
                                self.pwhy[i] = gwhy;
                            }
                            if prog.reconverge.get(pc as usize).copied().unwrap_or(NEVER) == NEVER {
                                self.exit_lanes(unsure);
                            } else {
                                wait = unsure;
                            }
                        } else {
                            taken |= self.assumed(prog, pc, unsure, gwhy);
                        }
                    }
                    let m = self.stack.last().map_or(0, |f| f.mask);
                    let not_taken = m & !taken & !wait;
                    if taken == m {
                        next = *target;
                    } else if taken != 0 || wait != 0 {
                        // The lanes disagree: run the fall-through side, then the taken side, then go on
                        // together where they meet again.
                        let r = prog.reconverge.get(pc as usize).copied().unwrap_or(NEVER);
                        let top = self.stack.last_mut().expect("a frame runs");
                        if r == top.rpc {
                            self.stack.pop();
                        } else {
                            top.pc = r;
                        }
                        if taken != 0 {
                            self.stack.push(Frame { pc: *target, mask: taken, rpc: r });
                        }
                        if not_taken != 0 {
                            self.stack.push(Frame { pc: pc + 1, mask: not_taken, rpc: r });
                        }
                        if self.stack.len() > MAX_STACK {
                            return Err(ExecError {
                                span: inst.span,
                                message: format!(
                                    "the warp's branches nest more than {MAX_STACK} deep without meeting again"
                                ),
                            });
                        }
                        continue;
                    }
                }
                Op::Exit => {
                    let run = if unsure != 0 { run | self.assumed(prog, pc, unsure, gwhy) } else { run };
                    self.exit_lanes(run);
                }
                Op::Bar => {
                    if unsure != 0 {
                        return Err(guard_err());
                    }
                    let live = self.valid & !self.exited;
                    if run != 0 && run != live {
                        return Err(ExecError {
                            span: inst.span,
                            message: format!(
                                "a barrier is reached by lanes {} of warp {} but not by lanes {}: every thread of the block must reach __syncthreads() (CUDA C++ Programming Guide, Synchronization Functions)",
                                crate::model::access::LaneSet(run).ranges(),
                                self.warp,
                                crate::model::access::LaneSet(live & !run).ranges()
                            ),
                        });
                    }
                    if run != 0 {
                        self.stack.last_mut().expect("a frame runs").pc = next;
                        return Ok(Status::Barrier);
                    }
                }
                Op::Trap { ctx } => {
                    if unsure != 0 {
                        return Err(guard_err());
                    }
                    if run != 0 {
                        return Err(ExecError { span: inst.span, message: prog.ctxs[*ctx as usize].clone() });
                    }
                }
                Op::Un { f, dst, a } => {
                    let (ua, wa) = self.src_unk(*a);
                    let r: Lanes = match self.lanes(*a) {
                        L::R(x) => std::array::from_fn(|l| f.apply(x[l])),
                        L::I(v) => [f.apply(v); 32],
                    };
                    if let Some(aff) = self.affine.as_deref_mut() {
                        aff.opaque(*dst, &[*a], run);
                    }
                    self.write(*dst, &r, run);
                    self.set_unk(*dst, run, ua, wa);
                    self.set_unk(*dst, unsure, unsure, gwhy);
                }
                Op::Shfl { mode, dst, pdst, a, b, c, inactive } => {
                    if unsure != 0 {
                        return Err(guard_err());
                    }
                    let (x, y, z) = (self.src(*a), self.src(*b), self.src(*c));
                    let (ua, wa) = self.src_unk(*a);
                    let (ub, wb) = self.src_unk(*b);
                    let (uc, wc) = self.src_unk(*c);
                    if (ub | uc) & run != 0 {
                        let why = if ub & run != 0 { wb } else { wc };
                        return Err(ExecError {
                            span: inst.span,
                            message: format!("the source lane of this shuffle depends on {}", prog.whys[why as usize]),
                        });
                    }
                    let mut r = [0u64; 32];
                    let mut inr = 0u32;
                    let mut u = 0u32;
                    let mut src = [0u8; 32];
                    for l in 0..32 {
                        if run >> l & 1 == 0 {
                            continue;
                        }
                        let (j, ok) = mode.source(l as u32, y[l], z[l]);
                        src[l] = j as u8;
                        r[l] = x[j as usize];
                        inr |= u32::from(ok) << l;
                        // Reading a lane that does not take part is undefined (PTX ISA): unknown.
                        if run >> j & 1 == 0 || ua >> j & 1 != 0 {
                            u |= 1 << l;
                        }
                    }
                    if let Some(aff) = self.affine.as_deref_mut() {
                        if aff.quiet(*b, run) && aff.quiet(*c, run) {
                            aff.permute(*dst, *a, &src, run);
                        } else {
                            aff.opaque(*dst, &[*a, *b, *c], run);
                        }
                    }
                    // The reason: the value's own, or that its source lane was not running.
                    let from_data = (0..32).any(|l| u >> l & 1 != 0 && ua >> src[l] & 1 != 0);
                    self.write(*dst, &r, run);
                    self.set_unk(*dst, run, u, if from_data { wa } else { *inactive });
                    if let Some(p) = pdst {
                        self.write_pred(*p, inr, run, 0, 0);
                    }
                }
                Op::Vote { dst, pdst, all, p } => {
                    if unsure != 0 {
                        return Err(guard_err());
                    }
                    let (pv, pu, pw) = self.pred(*p);
                    let ballot = pv & run;
                    let unknown = if pu & run != 0 { run } else { 0 };
                    if let Some(d) = dst {
                        if let Some(aff) = self.affine.as_deref_mut() {
                            aff.clear(*d, run);
                        }
                        self.write(*d, &[u64::from(ballot); 32], run);
                        self.set_unk(*d, run, unknown, pw);
                    }
                    if let Some(q) = pdst {
                        let v = if *all { ballot == run } else { ballot != 0 };
                        self.write_pred(*q, if v { ALL } else { 0 }, run, unknown, pw);
                    }
                }
                Op::Nop => {}
            }
            if let Some(f) = self.stack.last_mut() {
                f.pc = next;
            }
        }
    }
}

/// The expression language for one lane: the address, or `None` where the `if` is false.
fn eval_lane(
    w: &Warp,
    env: &Env,
    expr: &dyn LaneExpr,
    vars: &Vars,
    lane: usize,
    addr_bits: u32,
    op_text: &str,
) -> Result<Option<u64>, ExecError> {
    let launch = &env.launch;
    let linear = w.warp * 32 + lane as u32;
    let t = crate::program::launch::Thread {
        tid: Dim3 { x: w.tid[0][lane], y: w.tid[1][lane], z: w.tid[2][lane] },
        block: env.block_idx,
        linear,
        warp: w.warp,
        lane: lane as u32,
    };
    let value = expr
        .eval(&|name| launch.builtin(&t, name).or_else(|| vars.get(name).copied()))
        .map_err(|(span, message)| ExecError { span, message: format!("{message} (thread {linear}, lane {lane})") })?;
    let Some(v) = value else { return Ok(None) };
    let who = if launch.warps() == 1 {
        format!("lane {lane}")
    } else {
        format!("thread {linear} (warp {}, lane {lane})", w.warp)
    };
    address_of(v, addr_bits, op_text, &who)
        .map(Some)
        .map_err(|message| ExecError { span: whole_span(expr.source()), message })
}

/// A computed value as an address of `bits` bits, or why it is not one (`who` names the thread).
pub fn address_of(value: i128, bits: u32, op_text: &str, who: &str) -> Result<u64, String> {
    let max = if bits == 64 { u64::MAX } else { u64::from(u32::MAX) };
    u64::try_from(value).ok().filter(|&a| a <= max).ok_or_else(|| {
        if value < 0 {
            format!("{who}: the address is negative ({value})")
        } else if bits == 32 {
            format!("{who}: the address {value:#x} does not fit in 32 bits; {op_text} takes a 32-bit address (add .E for 64 bits)")
        } else {
            format!("{who}: the address {value:#x} does not fit in 64 bits")
        }
    })
}

/// The span of a whole text, without surrounding blanks.
pub fn whole_span(source: &str) -> Span {
    let lead = source.len() - source.trim_start().len();
    Span { start: lead, end: source.trim_end().len().max(lead + 1) }
}

/// Sign- or zero-extends the low `bits` bits of `x` to 64 bits.
pub fn conv(x: u64, bits: u8, signed: bool) -> u64 {
    if bits >= 64 {
        return x;
    }
    let shift = 64 - u32::from(bits);
    if signed {
        (((x << shift) as i64) >> shift) as u64
    } else {
        (x << shift) >> shift
    }
}

fn signed_at(x: u64, w: Width) -> i64 {
    match w {
        Width::W32 => i64::from(x as u32 as i32),
        Width::W64 => x as i64,
    }
}

/// One lane of a comparison.
pub fn setp(cmp: Cmp, signed: bool, w: Width, x: u64, y: u64) -> bool {
    if signed {
        cmp.holds(signed_at(x, w), signed_at(y, w))
    } else {
        cmp.holds(x & w.mask(), y & w.mask())
    }
}

/// One lane of a two-operand operation; `None` on division by zero.
pub fn bin(op: BinOp, w: Width, x: u64, y: u64) -> Option<u64> {
    let mask = w.mask();
    let bits = u64::from(w.bits());
    let (x, y) = (x & mask, y & mask);
    let (sx, sy) = (signed_at(x, w), signed_at(y, w));
    let r = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::MulHiS => ((i128::from(sx) * i128::from(sy)) >> bits) as u64,
        BinOp::MulHiU => ((u128::from(x) * u128::from(y)) >> bits) as u64,
        BinOp::DivS => {
            if sy == 0 {
                return None;
            }
            sx.wrapping_div(sy) as u64
        }
        BinOp::DivU => x.checked_div(y)?,
        BinOp::RemS => {
            if sy == 0 {
                return None;
            }
            sx.wrapping_rem(sy) as u64
        }
        BinOp::RemU => x.checked_rem(y)?,
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        BinOp::Shl => {
            if y >= bits {
                0
            } else {
                x << y
            }
        }
        BinOp::ShrU => {
            if y >= bits {
                0
            } else {
                x >> y
            }
        }
        BinOp::ShrS => (sx >> y.min(bits - 1)) as u64,
        BinOp::MinS => sx.min(sy) as u64,
        BinOp::MaxS => sx.max(sy) as u64,
        BinOp::MinU => x.min(y),
        BinOp::MaxU => x.max(y),
    };
    Some(r & mask)
}

/// An operand: a register's lanes, or a constant.
#[derive(Clone, Copy)]
enum L<'a> {
    R(&'a Lanes),
    I(u64),
}

/// A two-operand operation on every lane; `Err(lane)` when a lane of `check` divides by zero.
fn bin_lanes(op: BinOp, w: Width, x: L, y: L, check: u32) -> Result<Lanes, usize> {
    let mask = w.mask();
    let mut r = [0u64; 32];
    // The common operations as plain loops the compiler can vectorise.
    match op {
        BinOp::Add => lanes2!(r, x, y, |a, b| a.wrapping_add(b) & mask),
        BinOp::Sub => lanes2!(r, x, y, |a, b| a.wrapping_sub(b) & mask),
        BinOp::Mul => lanes2!(r, x, y, |a, b| a.wrapping_mul(b) & mask),
        BinOp::And => lanes2!(r, x, y, |a, b| a & b & mask),
        BinOp::Or => lanes2!(r, x, y, |a, b| (a | b) & mask),
        BinOp::Xor => lanes2!(r, x, y, |a, b| (a ^ b) & mask),
        _ => {
            let at = |v: L, l: usize| match v {
                L::R(a) => a[l],
                L::I(c) => c,
            };
            for (l, slot) in r.iter_mut().enumerate() {
                match bin(op, w, at(x, l), at(y, l)) {
                    Some(v) => *slot = v,
                    None if check >> l & 1 != 0 => return Err(l),
                    None => *slot = 0,
                }
            }
        }
    }
    Ok(r)
}

/// A comparison on every lane, as a lane mask.
fn setp_lanes(cmp: Cmp, signed: bool, w: Width, x: L, y: L) -> u32 {
    let mut r = [0u64; 32];
    lanes2!(r, x, y, |a, b| u64::from(setp(cmp, signed, w, a, b)));
    let mut v = 0u32;
    for (l, &t) in r.iter().enumerate() {
        v |= (t as u32) << l;
    }
    v
}
