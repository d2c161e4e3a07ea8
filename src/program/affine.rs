//! Which blocks of a grid are provably equivalent to the one that ran: every value's dependence on
//! `blockIdx`, followed alongside the run.
//!
//! The proof obligation. Let block `b0` run, and let `b` be another block of the grid. If
//! 1. every comparison has, in every lane that made it, the same outcome at `b` as at `b0` (so every branch,
//!    guard, select and exit takes the same lanes the same way, and every warp issues the same sites with the
//!    same active lanes and passes), and
//! 2. at every memory issue, every active lane's address at `b` is its address at `b0` plus one translation
//!    `T` common to the lanes, with `T` a multiple of 128 bytes for a global access and `T = 0` for a
//!    shared, local or generic one,
//!
//! then every count warpscope reports for `b` equals the count for `b0`: lines, sectors, transactions,
//! requests, unique bytes and alignment are invariant under a common translation by a multiple of 128 (the
//! line size, modulo 2^64 or 2^32 as the address wraps), and bank and window results do not move at all.
//!
//! How it is shown. Each register lane carries a coefficient vector `c` with `value(b) = value(b0) + c · (b - b0)`
//! (modulo the operation's width), or is marked non-affine. Additions, subtractions, multiplications by a
//! block-independent value and left shifts by one keep the form exactly in modular arithmetic; extensions and
//! comparisons need the exact integer, so they check that the value cannot wrap anywhere in the grid. A
//! comparison whose outcome is the same over the whole grid constrains nothing; otherwise it adds a
//! [`Constraint`] on `b` (an interval, or one excluded value, of a linear form). Condition 2 adds a congruence
//! (`c · (b - b0) ≡ 0 mod 128`) when the common coefficient is not already a multiple of 128. Anything else
//! that depends on `blockIdx` and reaches an address or a comparison makes the run a *singleton*: it proves
//! nothing about other blocks, which then run themselves. Property tests compare the sums with running every
//! block.

use super::{BinOp, Cmp, Program, SiteId, Special, Src, Width};
use crate::program::launch::Dim3;

/// A linear form `e · (b - b0)` over the block index.
pub type Form = [i128; 3];

/// A condition a block must meet to be equivalent to the block that ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Constraint {
    /// `lo <= e · (b - b0) <= hi`.
    Range {
        /// The form.
        e: Form,
        /// Lower bound.
        lo: i128,
        /// Upper bound.
        hi: i128,
    },
    /// `e · (b - b0) != v`.
    NotEqual {
        /// The form.
        e: Form,
        /// The excluded value.
        v: i128,
    },
    /// `e · (b - b0) ≡ 0 (mod m)`.
    Congruent {
        /// The form.
        e: Form,
        /// The modulus.
        m: i128,
    },
}

impl Constraint {
    /// Whether `delta = b - b0` meets the condition.
    pub fn holds(&self, delta: [i128; 3]) -> bool {
        match self {
            Constraint::Range { e, lo, hi } => {
                let s = dot(e, &delta);
                *lo <= s && s <= *hi
            }
            Constraint::NotEqual { e, v } => dot(e, &delta) != *v,
            Constraint::Congruent { e, m } => dot(e, &delta).rem_euclid(*m) == 0,
        }
    }

    /// Starting at `delta` and stepping `x` by one, how many consecutive blocks meet the condition (an upper
    /// bound of `limit`); 0 when `delta` does not.
    pub fn run_length(&self, delta: [i128; 3], limit: u64) -> u64 {
        if !self.holds(delta) {
            return 0;
        }
        let (e, ex) = match self {
            Constraint::Range { e, .. } | Constraint::NotEqual { e, .. } | Constraint::Congruent { e, .. } => (e, e[0]),
        };
        if ex == 0 {
            return limit;
        }
        let s = dot(e, &delta);
        let steps = |room: i128| -> u64 { u64::try_from(room / ex.abs() + 1).unwrap_or(u64::MAX).min(limit) };
        match self {
            Constraint::Range { lo, hi, .. } => {
                if ex > 0 {
                    steps(hi - s)
                } else {
                    steps(s - lo)
                }
            }
            Constraint::NotEqual { v, .. } => {
                let gap = v - s;
                if gap % ex == 0 && gap / ex > 0 {
                    u64::try_from(gap / ex).unwrap_or(u64::MAX).min(limit)
                } else {
                    limit
                }
            }
            Constraint::Congruent { m, .. } => {
                if ex.rem_euclid(*m) == 0 {
                    limit
                } else {
                    1
                }
            }
        }
    }
}

fn dot(e: &Form, d: &[i128; 3]) -> i128 {
    e[0].saturating_mul(d[0]).saturating_add(e[1].saturating_mul(d[1])).saturating_add(e[2].saturating_mul(d[2]))
}

/// How a site's addresses must move between equivalent blocks.
#[derive(Clone, Copy, Debug)]
pub struct SiteRule {
    /// Global memory: translations by multiples of 128 bytes keep every count. Otherwise the address must
    /// not move at all.
    pub global: bool,
    /// The address width (32 or 64): coefficients are taken modulo 2^bits.
    pub addr_bits: u32,
    /// A 64-bit generic access: the starts of the shared and local windows (each `WINDOW_BYTES` long). It may
    /// move like a global access when no lane's address, in any block of the grid, falls in either window.
    pub windows: Option<[u64; 2]>,
}

/// The block-index dependence of one warp's registers, and what the run has shown so far.
pub struct Affine {
    b0: Dim3,
    grid: Dim3,
    sites: std::rc::Rc<[SiteRule]>,
    coef: Vec<[[i64; 3]; 32]>,
    dep: Vec<u32>,
    bad: Vec<u32>,
    /// The conditions other blocks must meet.
    pub constraints: Vec<Constraint>,
    /// Set when the run proves nothing about other blocks: why.
    pub singleton: Option<String>,
    /// Set when a load read given data at an address that moves with the block: a value no translation
    /// follows (said with the reason the run proves nothing).
    pub data_moved: bool,
}

fn reduce(c: i64, w: Width) -> i64 {
    match w {
        Width::W32 => i64::from(c as i32),
        Width::W64 => c,
    }
}

impl Affine {
    /// Tracking for a run of block `b0` of a grid of `grid` blocks.
    pub fn new(prog: &Program, sites: std::rc::Rc<[SiteRule]>, b0: Dim3, grid: Dim3) -> Affine {
        let n = prog.n_regs as usize;
        Affine {
            b0,
            grid,
            sites,
            coef: vec![[[0; 3]; 32]; n],
            dep: vec![0; n],
            bad: vec![0; n],
            constraints: Vec::new(),
            singleton: None,
            data_moved: false,
        }
    }

    /// The range of `e · (b - b0)` over the grid.
    fn span(&self, e: &Form) -> (i128, i128) {
        let lo = [-i128::from(self.b0.x), -i128::from(self.b0.y), -i128::from(self.b0.z)];
        let hi = [
            i128::from(self.grid.x) - 1 - i128::from(self.b0.x),
            i128::from(self.grid.y) - 1 - i128::from(self.b0.y),
            i128::from(self.grid.z) - 1 - i128::from(self.b0.z),
        ];
        let (mut a, mut b) = (0i128, 0i128);
        for k in 0..3 {
            let (p, q) = (e[k].saturating_mul(lo[k]), e[k].saturating_mul(hi[k]));
            a = a.saturating_add(p.min(q));
            b = b.saturating_add(p.max(q));
        }
        (a, b)
    }

    fn fail(&mut self, why: &str) {
        if self.singleton.is_none() {
            #[cfg(feature = "data")]
            if self.data_moved && why.contains("cannot follow") {
                self.singleton = Some(format!("{why}: values the blocks load from given data decide addresses or branches, and blocks are not translations of one another"));
                return;
            }
            self.singleton = Some(why.to_string());
        }
    }

    /// After a load of given data into `dst` from the address in `addr`: block-independent where the address
    /// is, else a value no translation follows.
    #[cfg(feature = "data")]
    pub fn loaded(&mut self, dst: u32, addr: u32, m: u32) {
        if !self.quiet(Src::Reg(addr), m) {
            self.data_moved = true;
        }
        self.opaque(dst, &[Src::Reg(addr)], m);
    }

    fn get(&self, s: Src, l: usize) -> (bool, bool, [i64; 3]) {
        match s {
            Src::Imm(_) => (false, false, [0; 3]),
            Src::Reg(r) => {
                let r = r as usize;
                let dep = self.dep[r] >> l & 1 != 0;
                (dep, self.bad[r] >> l & 1 != 0, if dep { self.coef[r][l] } else { [0; 3] })
            }
        }
    }

    /// Whether `s` depends on the block in none of the lanes of `m`.
    pub fn quiet(&self, s: Src, m: u32) -> bool {
        match s {
            Src::Imm(_) => true,
            Src::Reg(r) => (self.dep[r as usize] | self.bad[r as usize]) & m == 0,
        }
    }

    fn put(&mut self, dst: u32, l: usize, c: Option<[i64; 3]>) {
        let d = dst as usize;
        let bit = 1u32 << l;
        match c {
            None => {
                self.bad[d] |= bit;
                self.dep[d] &= !bit;
            }
            Some(c) if c == [0; 3] => {
                self.bad[d] &= !bit;
                self.dep[d] &= !bit;
            }
            Some(c) => {
                self.bad[d] &= !bit;
                self.dep[d] |= bit;
                self.coef[d][l] = c;
            }
        }
    }

    /// `dst` no longer depends on the block in lanes `m`.
    pub fn clear(&mut self, dst: u32, m: u32) {
        let d = dst as usize;
        self.dep[d] &= !m;
        self.bad[d] &= !m;
    }

    /// After `dst = f(srcs)` for a function that keeps no linear form: block-independent when every source is.
    pub fn opaque(&mut self, dst: u32, srcs: &[Src], m: u32) {
        if srcs.iter().all(|&s| self.quiet(s, m)) {
            return self.clear(dst, m);
        }
        for l in lanes(m) {
            let dep = srcs.iter().any(|&s| {
                let (dep, bad, c) = self.get(s, l);
                dep || bad || c != [0; 3]
            });
            self.put(dst, l, if dep { None } else { Some([0; 3]) });
        }
    }

    /// After `dst[l] = a[src[l]]` (a shuffle whose source lanes do not depend on the block).
    pub fn permute(&mut self, dst: u32, a: Src, src: &[u8; 32], m: u32) {
        if self.quiet(a, u32::MAX) {
            return self.clear(dst, m);
        }
        let from: Vec<(bool, [i64; 3])> = (0..32)
            .map(|l| {
                let (_, bad, c) = self.get(a, l);
                (bad, c)
            })
            .collect();
        for l in lanes(m) {
            let (bad, c) = from[src[l] as usize];
            self.put(dst, l, if bad { None } else { Some(c) });
        }
    }

    /// After `dst = a`.
    pub fn mov(&mut self, dst: u32, a: Src, m: u32) {
        if self.quiet(a, m) {
            return self.clear(dst, m);
        }
        for l in lanes(m) {
            let (_, bad, c) = self.get(a, l);
            self.put(dst, l, if bad { None } else { Some(c) });
        }
    }

    /// After `dst = p ? a : b` (the selector's outcome is fixed within the class by its own constraint).
    pub fn sel(&mut self, dst: u32, p: u32, a: Src, b: Src, m: u32) {
        if self.quiet(a, m) && self.quiet(b, m) {
            return self.clear(dst, m);
        }
        for l in lanes(m) {
            let (_, bad, c) = if p >> l & 1 != 0 { self.get(a, l) } else { self.get(b, l) };
            self.put(dst, l, if bad { None } else { Some(c) });
        }
    }

    /// After `dst = special`.
    pub fn special(&mut self, dst: u32, which: Special, m: u32) {
        match which {
            Special::Ctaid(k) => {
                let mut c = [0i64; 3];
                c[usize::from(k.min(2))] = 1;
                for l in lanes(m) {
                    self.put(dst, l, Some(c));
                }
            }
            _ => self.clear(dst, m),
        }
    }

    /// After `dst = a op b` at width `w`, with the lanes' values `x`, `y` at this block.
    #[allow(clippy::too_many_arguments)]
    pub fn bin(&mut self, op: BinOp, w: Width, dst: u32, a: Src, b: Src, x: &[u64; 32], y: &[u64; 32], m: u32) {
        if self.quiet(a, m) && self.quiet(b, m) {
            return self.clear(dst, m);
        }
        for l in lanes(m) {
            let (_, bad_a, ca) = self.get(a, l);
            let (_, bad_b, cb) = self.get(b, l);
            let c = if bad_a || bad_b {
                None
            } else {
                let za = ca == [0; 3];
                let zb = cb == [0; 3];
                let each =
                    |f: &dyn Fn(i64, i64) -> i64| -> [i64; 3] { std::array::from_fn(|k| reduce(f(ca[k], cb[k]), w)) };
                match op {
                    BinOp::Add => Some(each(&|p, q| p.wrapping_add(q))),
                    BinOp::Sub => Some(each(&|p, q| p.wrapping_sub(q))),
                    BinOp::Mul if zb => Some(std::array::from_fn(|k| reduce(ca[k].wrapping_mul(y[l] as i64), w))),
                    BinOp::Mul if za => Some(std::array::from_fn(|k| reduce(cb[k].wrapping_mul(x[l] as i64), w))),
                    BinOp::Shl if zb => {
                        let s = y[l] & w.mask();
                        if s >= u64::from(w.bits()) {
                            Some([0; 3])
                        } else {
                            Some(std::array::from_fn(|k| reduce(ca[k].wrapping_shl(s as u32), w)))
                        }
                    }
                    _ if za && zb => Some([0; 3]),
                    // A varying value shifted right, masked or combined with bits it cannot reach: SASS
                    // splits 64-bit addresses into 32-bit halves and rejoins them this way.
                    BinOp::ShrU | BinOp::ShrS if zb => {
                        self.shifted_down(x[l], ca, y[l] & w.mask(), w, op == BinOp::ShrS)
                    }
                    BinOp::And if zb => self.masked(x[l], ca, y[l] & w.mask(), w),
                    BinOp::And if za => self.masked(y[l], cb, x[l] & w.mask(), w),
                    BinOp::Or if zb => self.or_disjoint(x[l], ca, y[l] & w.mask(), w),
                    BinOp::Or if za => self.or_disjoint(y[l], cb, x[l] & w.mask(), w),
                    _ => None,
                }
            };
            self.put(dst, l, c);
        }
    }

    /// The range over the grid of a lane's exact value `v0 + c · (b - b0)`.
    fn range_of(&self, v0: i128, c: &Form) -> (i128, i128) {
        let (lo, hi) = self.span(c);
        (v0.saturating_add(lo), v0.saturating_add(hi))
    }

    /// `v >> s` for a varying `v` (coefficient `c`, value `x` here): affine when the coefficient is a
    /// multiple of 2^s (the shift divides it exactly), constant when the value stays within one aligned
    /// window of 2^s over the grid; otherwise not provable.
    fn shifted_down(&self, x: u64, c: [i64; 3], s: u64, w: Width, signed: bool) -> Option<[i64; 3]> {
        let bits = w.bits();
        if s >= u64::from(bits) {
            return Some([0; 3]);
        }
        let (v0, cw) = self.exact(x, c, bits, signed)?;
        let step = 1i128 << s;
        if cw.iter().all(|k| k.rem_euclid(step) == 0) {
            let d: Form = cw.map(|k| k.div_euclid(step));
            return Some([i64::try_from(d[0]).ok()?, i64::try_from(d[1]).ok()?, i64::try_from(d[2]).ok()?]);
        }
        let (lo, hi) = self.range_of(v0, &cw);
        (lo.div_euclid(step) == hi.div_euclid(step)).then_some([0; 3])
    }

    /// `v & m` for a low mask `m = 2^k - 1`: the value minus a constant when `v` stays within one aligned
    /// window of 2^k over the grid, constant when the coefficient is a multiple of 2^k.
    fn masked(&self, x: u64, c: [i64; 3], m: u64, w: Width) -> Option<[i64; 3]> {
        if m == 0 {
            return Some([0; 3]);
        }
        if m.wrapping_add(1) & m != 0 {
            return None;
        }
        let k = m.count_ones();
        if k >= w.bits() {
            return Some(c);
        }
        let (v0, cw) = self.exact(x, c, w.bits(), false)?;
        let step = 1i128 << k;
        if cw.iter().all(|q| q.rem_euclid(step) == 0) {
            return Some([0; 3]);
        }
        let (lo, hi) = self.range_of(v0, &cw);
        (lo.div_euclid(step) == hi.div_euclid(step)).then_some(c)
    }

    /// `v | y` for a constant `y`: the same as `v + y` when `v` never reaches `y`'s bits (`v` stays below
    /// 2^k, where `y` has k trailing zeros). Also the same when `y` sits below bits `v` never sets: `v` a multiple of 2^t in every block (its value
    /// here and its coefficients), where `y < 2^t` (NVRTC joins a block's tile offset, `blockIdx.x * 128`, to a
    /// thread's column within it this way).
    fn or_disjoint(&self, x: u64, c: [i64; 3], y: u64, w: Width) -> Option<[i64; 3]> {
        if y == 0 {
            return Some(c);
        }
        let t = 64 - y.leading_zeros();
        if t < w.bits() {
            let low = (1u64 << t) - 1;
            if x & low == 0 && c.iter().all(|&k| (k as u64) & low == 0) {
                return Some(c);
            }
        }
        let k = y.trailing_zeros();
        let (v0, cw) = self.exact(x, c, w.bits(), false)?;
        let (lo, hi) = self.range_of(v0, &cw);
        (lo >= 0 && hi < (1i128 << k)).then_some(c)
    }

    /// After `dst = base + ext(idx) * scale` (an extension, a multiplication by a constant and an addition).
    #[allow(clippy::too_many_arguments)]
    pub fn index(
        &mut self,
        dst: u32,
        base: Src,
        idx: Src,
        x: &[u64; 32],
        y: &[u64; 32],
        bits: u8,
        signed: bool,
        scale: u64,
        m: u32,
    ) {
        if self.quiet(base, m) && self.quiet(idx, m) {
            return self.clear(dst, m);
        }
        for l in lanes(m) {
            let (_, bad_b, cb) = self.get(base, l);
            let (_, bad_i, ci) = self.get(idx, l);
            let c = if bad_b || bad_i {
                None
            } else if ci == [0; 3] || bits >= 64 {
                Some(ci)
            } else {
                self.exact(y[l], ci, u32::from(bits), signed).and_then(|(_, cw)| {
                    Some([i64::try_from(cw[0]).ok()?, i64::try_from(cw[1]).ok()?, i64::try_from(cw[2]).ok()?])
                })
            };
            let c = c.map(|ci| std::array::from_fn(|k| cb[k].wrapping_add(ci[k].wrapping_mul(scale as i64))));
            let _ = x;
            self.put(dst, l, c);
        }
    }

    /// The exact integer a lane's value stands for at `bits` bits and its coefficient, when the value cannot
    /// wrap anywhere in the grid; `None` otherwise.
    fn exact(&self, v: u64, c: [i64; 3], bits: u32, signed: bool) -> Option<(i128, Form)> {
        let (v0, cw): (i128, Form) = if bits >= 64 {
            (if signed { i128::from(v as i64) } else { i128::from(v) }, c.map(i128::from))
        } else {
            let shift = 64 - bits;
            let sx = |z: u64| i128::from(((z << shift) as i64) >> shift);
            let v0 = if signed { sx(v) } else { i128::from((v << shift) >> shift) };
            (v0, c.map(|k| sx(k as u64)))
        };
        let (lo, hi) = self.span(&cw);
        let (min, max) =
            if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
        (v0.saturating_add(lo) >= min && v0.saturating_add(hi) <= max).then_some((v0, cw))
    }

    /// After `dst` = the low `bits` bits of `a` sign- or zero-extended.
    pub fn conv(&mut self, dst: u32, a: Src, x: &[u64; 32], bits: u8, signed: bool, m: u32) {
        if self.quiet(a, m) {
            return self.clear(dst, m);
        }
        for l in lanes(m) {
            let (_, bad, c) = self.get(a, l);
            let out = if bad {
                None
            } else if c == [0; 3] || bits >= 64 {
                Some(c)
            } else {
                self.exact(x[l], c, u32::from(bits), signed).and_then(|(_, cw)| {
                    Some([i64::try_from(cw[0]).ok()?, i64::try_from(cw[1]).ok()?, i64::try_from(cw[2]).ok()?])
                })
            };
            self.put(dst, l, out);
        }
    }

    /// After a comparison in lanes `m` (known values): adds the condition that keeps each lane's outcome.
    #[allow(clippy::too_many_arguments)]
    pub fn setp(&mut self, cmp: Cmp, signed: bool, w: Width, a: Src, b: Src, x: &[u64; 32], y: &[u64; 32], m: u32) {
        if self.quiet(a, m) && self.quiet(b, m) {
            return;
        }
        for l in lanes(m) {
            let (_, bad_a, ca) = self.get(a, l);
            let (_, bad_b, cb) = self.get(b, l);
            if bad_a || bad_b {
                return self.fail("a comparison depends on blockIdx in a way warpscope cannot follow");
            }
            if ca == [0; 3] && cb == [0; 3] {
                continue;
            }
            let bits = w.bits();
            let (Some((va, ea)), Some((vb, eb))) =
                (self.exact(x[l], ca, bits, signed), self.exact(y[l], cb, bits, signed))
            else {
                return self.fail("a comparison's operands may wrap around within the grid");
            };
            let d0 = va - vb;
            let e: Form = [ea[0] - eb[0], ea[1] - eb[1], ea[2] - eb[2]];
            if e == [0; 3] {
                continue;
            }
            let (smin, smax) = self.span(&e);
            let now = cmp.holds(d0, 0);
            let at = |s: i128| cmp.holds(d0 + s, 0);
            let constant = match cmp {
                Cmp::Eq | Cmp::Ne => smin > -d0 || smax < -d0,
                _ => at(smin) == now && at(smax) == now,
            };
            if constant {
                continue;
            }
            const INF: i128 = i128::MAX / 4;
            let c = match (cmp, now) {
                // d0 + s < 0
                (Cmp::Lt, true) => Constraint::Range { e, lo: -INF, hi: -d0 - 1 },
                (Cmp::Lt, false) => Constraint::Range { e, lo: -d0, hi: INF },
                (Cmp::Le, true) => Constraint::Range { e, lo: -INF, hi: -d0 },
                (Cmp::Le, false) => Constraint::Range { e, lo: -d0 + 1, hi: INF },
                (Cmp::Gt, true) => Constraint::Range { e, lo: -d0 + 1, hi: INF },
                (Cmp::Gt, false) => Constraint::Range { e, lo: -INF, hi: -d0 },
                (Cmp::Ge, true) => Constraint::Range { e, lo: -d0, hi: INF },
                (Cmp::Ge, false) => Constraint::Range { e, lo: -INF, hi: -d0 - 1 },
                (Cmp::Eq, true) | (Cmp::Ne, false) => Constraint::Range { e, lo: -d0, hi: -d0 },
                (Cmp::Eq, false) | (Cmp::Ne, true) => Constraint::NotEqual { e, v: -d0 },
            };
            self.add(c);
        }
    }

    fn add(&mut self, c: Constraint) {
        if let Constraint::Range { e, lo, hi } = &c {
            for old in &mut self.constraints {
                if let Constraint::Range { e: e2, lo: lo2, hi: hi2 } = old {
                    if e2 == e {
                        *lo2 = (*lo2).max(*lo);
                        *hi2 = (*hi2).min(*hi);
                        return;
                    }
                }
            }
        }
        if !self.constraints.contains(&c) {
            self.constraints.push(c);
        }
    }

    /// At a memory issue of `site` with the address in `addr`: the translation must be common and allowed.
    /// Returns the translation's coefficients (the address at block `b` is the address here plus `c · (b - b0)`).
    pub fn mem(&mut self, site: SiteId, addr: u32, m: u32) -> [i64; 3] {
        let rule =
            self.sites.get(site as usize).copied().unwrap_or(SiteRule { global: false, addr_bits: 64, windows: None });
        self.moved(addr, m, rule, None)
    }

    /// [`Affine::mem`] for an access that may be generic: `addrs` are its lanes' addresses in this block, which
    /// show whether it stays global in every block.
    pub fn mem_at(&mut self, site: SiteId, addr: u32, m: u32, addrs: &[u64; 32]) -> [i64; 3] {
        let rule =
            self.sites.get(site as usize).copied().unwrap_or(SiteRule { global: false, addr_bits: 64, windows: None });
        self.moved(addr, m, rule, Some(addrs))
    }

    /// Whether every lane of `m` at `addrs`, moved by `c · (b - b0)` for every block `b` of the grid, stays
    /// outside both windows (and inside the 64-bit address space): then the access is global in every block.
    fn stays_global(&self, addrs: &[u64; 32], m: u32, c: [i64; 3], windows: [u64; 2]) -> bool {
        let (mut lo, mut hi) = (0i128, 0i128);
        let (b0, g) = ([self.b0.x, self.b0.y, self.b0.z], [self.grid.x, self.grid.y, self.grid.z]);
        for d in 0..3 {
            let (a, b) = (-i128::from(b0[d]), i128::from(g[d]) - 1 - i128::from(b0[d]));
            let (x, y) = (i128::from(c[d]) * a, i128::from(c[d]) * b);
            lo += x.min(y);
            hi += x.max(y);
        }
        let window = i128::from(crate::model::access::WINDOW_BYTES);
        lanes(m).all(|l| {
            let (first, last) = (i128::from(addrs[l]) + lo, i128::from(addrs[l]) + hi);
            first >= 0
                && last <= i128::from(u64::MAX)
                && windows.iter().all(|&w| last < i128::from(w) || first >= i128::from(w) + window)
        })
    }

    /// At a `cp.async` issue: its global source addresses in `src` must move like a global access's.
    pub fn mem_src(&mut self, src: u32, m: u32) -> [i64; 3] {
        self.moved(src, m, SiteRule { global: true, addr_bits: 64, windows: None }, None)
    }

    fn moved(&mut self, addr: u32, m: u32, rule: SiteRule, addrs: Option<&[u64; 32]>) -> [i64; 3] {
        let r = addr as usize;
        if (self.dep[r] | self.bad[r]) & m == 0 {
            return [0; 3];
        }
        if self.bad[r] & m != 0 {
            self.fail("an address depends on blockIdx in a way warpscope cannot follow");
            return [0; 3];
        }
        let modw = |c: i64| if rule.addr_bits >= 64 { c } else { i64::from(c as i32) };
        let mut common: Option<[i64; 3]> = None;
        for l in lanes(m) {
            let c = if self.dep[r] >> l & 1 != 0 { self.coef[r][l].map(modw) } else { [0; 3] };
            match common {
                None => common = Some(c),
                Some(k) if k == c => {}
                Some(_) => {
                    self.fail("the lanes of an issue move by different amounts from block to block");
                    return [0; 3];
                }
            }
        }
        let Some(c) = common else { return [0; 3] };
        if c == [0; 3] {
            return c;
        }
        let generic_stays_global = match (rule.windows, addrs) {
            (Some(w), Some(a)) => self.stays_global(a, m, c, w),
            _ => false,
        };
        if !rule.global && !generic_stays_global {
            let what = if rule.windows.is_some() {
                "a generic address depends on blockIdx and reaches the shared or local window in some block"
            } else {
                "a shared, local or generic address depends on blockIdx"
            };
            self.fail(what);
            return [0; 3];
        }
        if !c.iter().all(|k| k.rem_euclid(128) == 0) {
            self.add(Constraint::Congruent { e: c.map(i128::from), m: 128 });
        }
        c
    }

    /// After the expression language's `dst` (address) for lanes `has` of `m`.
    #[allow(clippy::too_many_arguments)]
    pub fn eval(
        &mut self,
        dst: u32,
        expr: &dyn super::LaneExpr,
        vars: &super::Vars,
        launch: &super::launch::Launch,
        block_idx: Dim3,
        tid: &[[u32; 32]; 3],
        warp: u32,
        has: u32,
        m: u32,
    ) {
        let mentions = expr.source().contains("blockIdx");
        if !mentions {
            return self.clear(dst, m);
        }
        for l in lanes(m) {
            let t = crate::program::launch::Thread {
                tid: Dim3 { x: tid[0][l], y: tid[1][l], z: tid[2][l] },
                block: block_idx,
                linear: warp * 32 + l as u32,
                warp,
                lane: l as u32,
            };
            let var = |name: &str| launch.builtin(&t, name).or_else(|| vars.get(name).copied());
            if !expr.condition_block_invariant(&var) {
                return self.fail("the expression's condition depends on blockIdx");
            }
            if has >> l & 1 == 0 {
                self.put(dst, l, Some([0; 3]));
                continue;
            }
            let s = expr
                .address_slope(&var)
                .and_then(|s| Some([i64::try_from(s[0]).ok()?, i64::try_from(s[1]).ok()?, i64::try_from(s[2]).ok()?]));
            self.put(dst, l, s);
        }
    }
}

/// The lanes of a mask.
fn lanes(m: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |l| m >> l & 1 != 0)
}
