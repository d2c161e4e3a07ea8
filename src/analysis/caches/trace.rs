//! A block's trace for the memory system: its issues recorded warp by warp as the block runs ([`Recorder`]), then
//! played step by step in lines ([`BlockTrace`]), moved by each block's translation.

use super::{local_base, Member};
use crate::analysis::Analysis;
use crate::model::access::{Instr, Second, Space};
use crate::model::arch::memsys::{self, L1Use};
use crate::model::arch::{self, MemoryAccess};
use crate::model::cache::{Access, Issue, LineAccess};
use crate::model::count::gather;
use crate::model::local;
use crate::program::exec::Sink;
use crate::program::SiteId;

/// One issue in a block's trace, as recorded: its sectors are `acc[start..start + len]` of the recording.
#[derive(Clone, Copy)]
pub(super) struct TIssue {
    pub(super) site: u32,
    pub(super) u: L1Use,
    pub(super) local: bool,
    pub(super) coef: [i64; 3],
    pub(super) start: u32,
    pub(super) len: u32,
}

/// One issue in a block's played trace: its warp, its lines `lines[start..start + len]` and its coefficients
/// `coefs[coef]`, in 24 bytes (every SM reads the trace of its blocks each step).
#[derive(Clone, Copy)]
pub(super) struct Step {
    pub(super) site: u32,
    pub(super) warp: u32,
    pub(super) coef: u32,
    pub(super) start: u32,
    pub(super) len: u16,
    pub(super) u: L1Use,
    pub(super) local: bool,
}

/// How many of a trace's last coefficient vectors a new issue's are looked for among.
const COEF_SEARCH: usize = 64;

/// One block's issues: recorded warp by warp ([`BlockTrace::warps`], sectors in `acc`), then played step by
/// step ([`BlockTrace::finished`]: each step's issues in warp order, their lines in `lines`).
#[derive(Default)]
pub(super) struct BlockTrace {
    pub(super) warps: Vec<Vec<TIssue>>,
    pub(super) acc: Vec<Access>,
    /// Per step, the end of its issues in `issues`.
    pub(super) steps: Vec<u32>,
    pub(super) issues: Vec<Step>,
    pub(super) lines: Vec<LineAccess>,
    pub(super) bytes: Vec<[u32; 4]>,
    pub(super) coefs: Vec<[i64; 3]>,
    /// The line accesses of its busiest step (all warps).
    pub(super) busiest: usize,
    /// A class's trace: its lines, by which the waves of its blocks are found to be translations of one another.
    pub(super) index: Option<TraceLines>,
}

impl BlockTrace {
    /// Turns the recording into the played form once the block has run: issues step by step, sectors grouped
    /// into lines.
    pub(super) fn finished(mut self) -> BlockTrace {
        let steps = self.warps.iter().map(Vec::len).max().unwrap_or(0);
        for t in 0..steps {
            let first = self.lines.len();
            for (w, issues) in self.warps.iter().enumerate() {
                let Some(i) = issues.get(t) else { continue };
                let start = self.lines.len() as u32;
                let acc = &self.acc[i.start as usize..(i.start + i.len) as usize];
                LineAccess::lines(acc, i.u, &mut self.lines, &mut self.bytes);
                // Issues share a few coefficient vectors (one per instruction, as a rule): found among the
                // last ones, else added.
                let recent = self.coefs.len().saturating_sub(COEF_SEARCH);
                let coef = match self.coefs[recent..].iter().position(|c| *c == i.coef) {
                    Some(k) => (recent + k) as u32,
                    None => {
                        self.coefs.push(i.coef);
                        (self.coefs.len() - 1) as u32
                    }
                };
                let len = self.lines.len() as u32 - start;
                // Each lane touches one sector, so an issue touches at most 32 lines.
                self.issues.push(Step {
                    site: i.site,
                    warp: w as u32,
                    coef,
                    start,
                    len: len as u16,
                    u: i.u,
                    local: i.local,
                });
            }
            self.steps.push(self.issues.len() as u32);
            self.busiest = self.busiest.max(self.lines.len() - first);
        }
        self.warps = Vec::new();
        self.acc = Vec::new();
        self.lines.shrink_to_fit();
        self.issues.shrink_to_fit();
        self
    }

    /// Issue `i` of this trace as block `b` makes it: its lines moved by the block's translation (local lines by
    /// the block's and warp's own region).
    #[inline(always)]
    pub(super) fn issue(&self, i: &Step, b: &Member, warps: u32, local_bytes: u64, watch: u32) -> Issue<'_> {
        // In lines. A block's translation can be negative (a block before its class's first one in x, as
        // `blockIdx.x + blockIdx.y >= 3` makes): it is a multiple of 128 bytes, shifted as a signed number and
        // added modulo 2^64.
        let shift_lines = if i.local {
            local_base(b.linear, warps, i.warp, local_bytes) >> 7
        } else {
            let c = self.coefs[i.coef as usize];
            let d = c[0]
                .wrapping_mul(b.delta[0])
                .wrapping_add(c[1].wrapping_mul(b.delta[1]))
                .wrapping_add(c[2].wrapping_mul(b.delta[2]));
            (d >> 7) as u64
        };
        Issue {
            site: i.site as usize,
            u: i.u,
            local: i.local,
            lines: &self.lines[i.start as usize..i.start as usize + usize::from(i.len)],
            bytes: &self.bytes,
            shift_lines,
            watch,
        }
    }

    /// The issues of step `t` (empty past the last).
    pub(super) fn step(&self, t: usize) -> &[Step] {
        match self.steps.get(t) {
            Some(&end) => &self.issues[if t == 0 { 0 } else { self.steps[t - 1] as usize }..end as usize],
            None => &[],
        }
    }

    /// Host bytes it holds.
    pub(super) fn bytes(&self) -> u64 {
        let recorded: usize = self.warps.iter().map(Vec::capacity).sum();
        (recorded * std::mem::size_of::<TIssue>()
            + self.acc.capacity() * std::mem::size_of::<Access>()
            + self.issues.capacity() * std::mem::size_of::<Step>()
            + self.steps.capacity() * 4
            + self.lines.capacity() * std::mem::size_of::<LineAccess>()
            + self.bytes.capacity() * 16
            + self.coefs.capacity() * 24) as u64
            + self.index.as_ref().map_or(0, TraceLines::bytes)
    }
}

pub(super) struct Recorder<'a> {
    pub(super) a: &'a Analysis,
    pub(super) trace: BlockTrace,
    pub(super) coef: [i64; 3],
    pub(super) scratch: Vec<(u64, u32)>,
}

impl Recorder<'_> {
    fn push(&mut self, site: SiteId, warp: u32, instr: &Instr, space: Space, lanes: &crate::model::access::Lanes) {
        let a = self.a;
        let size = instr.size_bytes;
        let acc = MemoryAccess { space, base: instr.base, cop: instr.effective_cop(), size_bytes: size };
        let per = arch::memory_rule(a.cc, acc, a.config.l1).lanes_per_request as usize;
        let u = memsys::l1_use(a.cc, instr, space, a.config.l1);
        let start = self.trace.acc.len() as u32;
        let mut k = 0;
        while k < lanes.n {
            let group = usize::from(lanes.lane[k]) / per;
            self.scratch.clear();
            while k < lanes.n && usize::from(lanes.lane[k]) / per == group {
                let lane = usize::from(lanes.lane[k]);
                let addr =
                    if space == Space::Local { local::interleave(lanes.addr[k], lane, size) } else { lanes.addr[k] };
                let bytes = if size >= 32 { u32::MAX } else { ((1u32 << size) - 1) << (addr & 31) };
                self.scratch.push((addr >> 5, bytes));
                k += 1;
            }
            self.scratch.sort_unstable_by_key(|x| x.0);
            let mut first = true;
            let mut last: Option<usize> = None;
            for &(sector, bytes) in &self.scratch {
                match last {
                    Some(i) if self.trace.acc[i].sector == sector => self.trace.acc[i].bytes |= bytes,
                    _ => {
                        self.trace.acc.push(Access { sector, bytes, request: first });
                        last = Some(self.trace.acc.len() - 1);
                        first = false;
                    }
                }
            }
        }
        let len = self.trace.acc.len() as u32 - start;
        if len == 0 {
            return;
        }
        let w = warp as usize;
        if self.trace.warps.len() <= w {
            self.trace.warps.resize(w + 1, Vec::new());
        }
        let coef = if space == Space::Local { [0; 3] } else { self.coef };
        self.trace.warps[w].push(TIssue { site, u, local: space == Space::Local, coef, start, len });
    }
}

impl Sink for Recorder<'_> {
    fn moves(&mut self, c: [i64; 3]) {
        self.coef = c;
    }

    fn issue(&mut self, site: SiteId, warp: u32, _: u32, addrs: &[u64; 32], mask: u32, second: Second) -> bool {
        let a = self.a;
        let Some(s) = a.program.sites.get(site as usize) else { return true };
        let instr = &s.instr;
        let mask = mask & a.lane_mask.0 & instr.lane_mask();
        if let Second::Src(src, reads) = second {
            // cp.async: its global side is a load of the sources.
            let g = gather(&instr.copy_source(), src, mask & reads, None, &a.config);
            let lanes = g.lanes[Space::Global as usize];
            self.push(site, warp, instr, Space::Global, &lanes);
        } else if instr.base.fixed_space() != Some(Space::Shared) && !instr.base.is_constant() {
            // Constant loads go through the constant cache, not L1/TEX (docs/model.md#constant-memory).
            let g = gather(instr, addrs, mask, second.plg(), &a.config);
            for space in [Space::Global, Space::Local] {
                let lanes = g.lanes[space as usize];
                if lanes.n > 0 {
                    self.push(site, warp, instr, space, &lanes);
                }
            }
        }
        self.coef = [0; 3];
        true
    }
}

/// A class trace's coefficient vectors and the span of lines each reaches before any translation.
pub(super) struct TraceLines {
    /// The distinct coefficient vectors of the trace.
    pub(super) values: Vec<[i64; 3]>,
    /// Per vector, its lowest and highest line (`(u64::MAX, 0)` when it touches none).
    pub(super) spans: Vec<(u64, u64)>,
}

impl TraceLines {
    /// `None` for a trace that cannot be replayed: one with local issues or more than 32 vectors.
    #[cold]
    pub(super) fn of(t: &BlockTrace) -> Option<TraceLines> {
        let mut values: Vec<[i64; 3]> = Vec::new();
        let mut of_coef = Vec::with_capacity(t.coefs.len());
        for c in &t.coefs {
            let v = vector_index(&mut values, c);
            if v >= 32 {
                return None;
            }
            of_coef.push(v as u8);
        }
        let mut spans = vec![(u64::MAX, 0u64); values.len()];
        for i in &t.issues {
            if i.local {
                return None;
            }
            let v = of_coef[i.coef as usize];
            for la in &t.lines[i.start as usize..i.start as usize + usize::from(i.len)] {
                let s = &mut spans[usize::from(v)];
                s.0 = s.0.min(la.line);
                s.1 = s.1.max(la.line);
            }
        }
        Some(TraceLines { values, spans })
    }

    /// Host bytes it holds.
    pub(super) fn bytes(&self) -> u64 {
        (self.values.capacity() * 24 + self.spans.capacity() * 16) as u64
    }
}

/// The index of coefficient vector `v` in `values`, added at the end when it is not there yet.
pub(super) fn vector_index(values: &mut Vec<[i64; 3]>, v: &[i64; 3]) -> usize {
    match values.iter().position(|x| x == v) {
        Some(k) => k,
        None => {
            values.push(*v);
            values.len() - 1
        }
    }
}
