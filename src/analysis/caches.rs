//! The memory system across warps and blocks (docs/model.md#the-memory-system): every warp's issues that reach L1/TEX's
//! global or local path, played through each SM's L1 and the device's L2 in the model's schedule.
//!
//! Blocks run in waves of `S x R` blocks (S SMs, R resident blocks each); in a wave starting at block `w0`,
//! block `b` runs on SM `(b - w0) mod S`. Within a wave, step `t` lets each SM in turn, each of its blocks in
//! order and each warp in order make its `t`-th issue. A whole grid needs every block's addresses: a block
//! that the equivalence proof of [`crate::program::affine`] shows to be a translation of one that ran takes that
//! block's issues moved by its translation, so only the blocks that start a class run.

mod replay;
mod trace;

use super::Analysis;
use crate::model::access::{Space, WINDOW_BYTES};
use crate::model::arch::memsys::{self, Preset, Residency};
use crate::model::arch::{self, Cc};
use crate::model::cache::{rate, Machine, Outbox, Served, Shape, SiteTraffic, Sm, Totals, Traffic, OPS, UNWATCHED};
use crate::model::note::Note;
use crate::program::affine::Constraint;
use crate::program::grid::{self, Control, Progress, RunError, Stage};
use crate::program::launch::{Dim3, Launch};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use trace::{BlockTrace, Recorder};

/// What the user may change about the modelled device; `None` keeps the preset's or the launch's value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheSettings {
    /// SMs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sms: Option<u32>,
    /// L2 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_bytes: Option<u64>,
    /// L2 ways.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_ways: Option<u32>,
    /// Resident blocks per SM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks_per_sm: Option<u32>,
    /// Shared-memory carveout per SM in bytes (7.0 and later): sets L1 to the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carveout_bytes: Option<u64>,
    /// Shared memory per block in bytes (static + dynamic), for residency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_bytes: Option<u64>,
}

impl CacheSettings {
    /// Reads `off`, `on`, or `on` followed by `sms=N l2=SIZE ways=N blocks_per_sm=N carveout_kb=N
    /// shared_bytes=N` (SIZE: `40MB`, `1536KB` or bytes), separated by spaces or commas.
    pub fn parse(text: &str) -> Result<Option<CacheSettings>, String> {
        let mut words = text.split([' ', ',']).map(str::trim).filter(|w| !w.is_empty());
        match words.next() {
            None | Some("off") => return Ok(None),
            Some("on") => {}
            Some(w) => return Err(format!("caches: `{w}` is not `off` or `on`")),
        }
        let mut c = CacheSettings::default();
        for w in words {
            let (k, v) = w.split_once('=').ok_or_else(|| format!("caches: `{w}` is not NAME=VALUE"))?;
            let n = || v.parse::<u64>().map_err(|_| format!("caches: {k} `{v}` is not a whole number"));
            // Ranges are checked against the CC's preset when the scenario runs ([`CacheSettings::check`]).
            let small = || {
                n().and_then(|x| {
                    u32::try_from(x).map_err(|_| format!("caches: {k} `{v}` is too large for this setting"))
                })
            };
            match k {
                "sms" => c.sms = Some(small()?),
                "l2" => c.l2_bytes = Some(parse_size(v).map_err(|e| format!("caches: l2 `{v}`: {e}"))?),
                "ways" => c.l2_ways = Some(small()?),
                "blocks_per_sm" => c.blocks_per_sm = Some(small()?),
                "carveout_kb" => {
                    c.carveout_bytes =
                        Some(n()?.checked_mul(1024).ok_or_else(|| format!("caches: carveout_kb `{v}` is too large"))?)
                }
                "shared_bytes" => c.shared_bytes = Some(n()?),
                _ => {
                    return Err(format!(
                        "caches: unknown setting `{k}` (sms, l2, ways, blocks_per_sm, carveout_kb, shared_bytes)"
                    ))
                }
            }
        }
        Ok(Some(c))
    }

    /// Checks each changed value against the range the CC's device preset (docs/model.md#device-presets) and
    /// the model allow, so that no setting is quietly clamped or cut: the error names the setting, its value and
    /// the range.
    pub fn check(&self, cc: Cc) -> Result<(), String> {
        let p = Preset::of(cc);
        let gpu = format!("{cc}'s example GPU, the {},", p.gpu);
        if let Some(v) = self.sms {
            if !(1..=MAX_SMS).contains(&v) {
                return Err(format!("SMs {v} is out of range: give 1 to {MAX_SMS} ({gpu} has {})", p.sms));
            }
        }
        let ways = self.l2_ways.unwrap_or(p.l2_ways);
        if let Some(v) = self.l2_ways {
            if !(1..=MAX_L2_WAYS).contains(&v) {
                return Err(format!("L2 ways {v} is out of range: give 1 to {MAX_L2_WAYS} ({gpu} has {})", p.l2_ways));
            }
        }
        let l2 = self.l2_bytes.unwrap_or(p.l2_bytes);
        let set = 128 * u64::from(ways);
        if self.l2_bytes.is_some() || self.l2_ways.is_some() {
            if !(set..=MAX_L2_BYTES).contains(&l2) {
                return Err(format!(
                    "L2 size {} is out of range: give {} to {} with {ways} ways ({gpu} has {})",
                    size_text(l2),
                    size_text(set),
                    size_text(MAX_L2_BYTES),
                    size_text(p.l2_bytes)
                ));
            }
            if l2 % set != 0 {
                return Err(format!(
                    "L2 size {} is not a whole number of sets of {ways} ways of 128-byte lines: give a multiple of {}",
                    size_text(l2),
                    size_text(set)
                ));
            }
        }
        if let Some(v) = self.blocks_per_sm {
            if !(1..=p.max_blocks_per_sm).contains(&v) {
                return Err(format!(
                    "blocks per SM {v} is out of range: CC {cc} holds 1 to {} resident blocks per SM",
                    p.max_blocks_per_sm
                ));
            }
        }
        let facts = cc.facts();
        if let Some(v) = self.carveout_bytes {
            let caps = facts.shared_capacities_kb;
            let kb = v / 1024;
            match p.unified_bytes {
                None => {
                    return Err(format!(
                        "a carveout of {kb} KB: CC {cc}'s L1 is not shared with shared memory (it is {} KB), so there \
                         is no carveout to set (7.0 and later)",
                        p.fixed_l1_bytes / 1024
                    ))
                }
                Some(_) if v % 1024 != 0 || !caps.iter().any(|&c| u64::from(c) == kb) => {
                    let list = caps.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
                    return Err(format!(
                        "a carveout of {kb} KB is not one CC {cc} offers: it chooses among {list} KB of shared memory per SM"
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some(v) = self.shared_bytes {
            let max = u64::from(facts.max_shared_per_block_kb) * 1024;
            if v > max {
                return Err(format!(
                    "shared memory per block {v} bytes is out of range: CC {cc} gives a block at most {max} bytes"
                ));
            }
        }
        Ok(())
    }

    /// The text [`CacheSettings::parse`] reads back.
    pub fn text(c: Option<&CacheSettings>) -> String {
        let Some(c) = c else { return "off".into() };
        let mut out = vec!["on".to_string()];
        if let Some(v) = c.sms {
            out.push(format!("sms={v}"));
        }
        if let Some(v) = c.l2_bytes {
            out.push(if v % (1 << 20) == 0 { format!("l2={}MB", v >> 20) } else { format!("l2={v}") });
        }
        if let Some(v) = c.l2_ways {
            out.push(format!("ways={v}"));
        }
        if let Some(v) = c.blocks_per_sm {
            out.push(format!("blocks_per_sm={v}"));
        }
        if let Some(v) = c.carveout_bytes {
            out.push(format!("carveout_kb={}", v / 1024));
        }
        if let Some(v) = c.shared_bytes {
            out.push(format!("shared_bytes={v}"));
        }
        out.join(" ")
    }
}

/// The most SMs the model takes (the largest preset has 170; each SM's L1 is modelled on its own).
pub const MAX_SMS: u32 = 1024;
/// The most L2 ways the model takes (the presets have 8 to 24; a set is searched way by way).
pub const MAX_L2_WAYS: u32 = 128;
/// The largest L2 the model takes (the largest preset has 126 MB), which bounds its memory.
pub const MAX_L2_BYTES: u64 = 256 << 20;

/// Bytes as a size: `40 MB`, `1536 KB`, `100 bytes`.
fn size_text(b: u64) -> String {
    if b % (1 << 20) == 0 {
        format!("{} MB", b >> 20)
    } else if b % 1024 == 0 {
        format!("{} KB", b >> 10)
    } else {
        format!("{b} bytes")
    }
}

/// `40MB`, `1536KB`, `768K`, `1.5MB` or a number of bytes (binary units).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim().to_ascii_uppercase().replace(' ', "");
    let (num, mul) = if let Some(n) = t.strip_suffix("MB").or_else(|| t.strip_suffix('M')) {
        (n, 1u64 << 20)
    } else if let Some(n) = t.strip_suffix("KB").or_else(|| t.strip_suffix('K')) {
        (n, 1 << 10)
    } else {
        (t.strip_suffix('B').unwrap_or(&t), 1)
    };
    // Whole numbers and decimals (`1.5MB`) in integers: the page's main thread carries no float parser.
    let bad = || "give bytes, or a size such as 40MB or 1536KB".to_string();
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    if whole.is_empty() && frac.is_empty() || !(whole.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())) {
        return Err(bad());
    }
    let w: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
    let frac = &frac[..frac.len().min(6)];
    let f: u64 = if frac.is_empty() { 0 } else { frac.parse().map_err(|_| bad())? };
    let scale = 10u64.pow(frac.len() as u32);
    let bytes = w.checked_mul(mul).ok_or_else(bad)? + f * mul / scale;
    if bytes < 128 {
        return Err("give a size of at least 128 bytes".into());
    }
    Ok(bytes)
}

/// One instruction's share of the modelled traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SiteCache {
    /// The instruction's index in the program's memory instructions.
    pub site: usize,
    /// Its source line.
    pub line: usize,
    /// What it accesses.
    pub access: String,
    /// Its mnemonic.
    pub op: String,
    /// The traffic.
    #[serde(flatten)]
    pub traffic: SiteTraffic,
    /// L1 load hit rate in percent (loads only).
    pub l1_hit_rate: Option<f64>,
    /// L2 hit rate in percent.
    pub l2_hit_rate: Option<f64>,
}

/// The same run with another number of resident blocks per SM: how much the figures depend on the schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sensitivity {
    /// The other R.
    pub blocks_per_sm: u32,
    /// L1 load hit rate with it.
    pub l1_load_hit_rate: Option<f64>,
    /// L2 load hit rate with it.
    pub l2_load_hit_rate: Option<f64>,
    /// DRAM bytes read with it.
    pub dram_read_bytes: u64,
    /// Whether a hit rate moves by more than 2 points, or DRAM reads by more than 2 %.
    pub sensitive: bool,
}

/// An Nsight Compute metric and its modelled value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// The metric's name.
    pub name: String,
    /// Its value.
    pub value: f64,
}

/// The modelled memory system of a run: every figure is "modelled" and carries the bounds beside it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheResult {
    /// "block (x,y,z)" or "grid".
    pub scope: String,
    /// The device.
    pub preset: Preset,
    /// SMs used (1 for a block).
    pub sms: u32,
    /// Residency.
    pub residency: Residency,
    /// Waves of `S x R` blocks.
    pub waves: u64,
    /// Of the waves' `waves x S` SM waves, those replayed from a translated one instead of played
    /// (docs/model.md#the-memory-system): how the run saved its time, not a figure (the figures are the same).
    #[serde(skip)]
    pub replayed: u64,
    /// Kernel totals.
    pub totals: Totals,
    /// Kernel totals under Nsight Compute's names.
    pub metrics: Vec<Metric>,
    /// Per instruction, in program order (instructions with traffic only).
    pub instructions: Vec<SiteCache>,
    /// The run with another R, for a grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Sensitivity>,
    /// "modelled (LRU, lockstep schedule, 108 SMs, 2 blocks per SM, 40 MB L2, 16 ways)".
    pub label: String,
    /// What the figures assume and leave out.
    pub notes: Vec<Note>,
    /// For the drawn block's issues, by (site, warp, pass): each sector its lanes touched and where it was
    /// served (the figure colours them). Not in the JSON.
    #[serde(skip)]
    pub served: std::collections::HashMap<(u32, u32, u32), Vec<(u64, Served)>>,
}

impl CacheResult {
    /// L1 load hit rate.
    pub fn l1_load_hit_rate(&self) -> Option<f64> {
        self.totals.l1_load_hit_rate()
    }
    /// L2 load hit rate.
    pub fn l2_load_hit_rate(&self) -> Option<f64> {
        self.totals.l2_load_hit_rate()
    }
}

/// The memory chart as the page draws it: every figure already in words, so that the page's main thread
/// carries neither the model's types nor float formatting. The words are a student's ("L1 cache", "requests",
/// "had to come from DRAM"); each figure's `tip` gives Nsight Compute's exact names for it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheChart {
    /// What the figures are: "Modelled for the grid: 108 SMs with 2 blocks each, ...".
    pub title: String,
    /// The figures move with the schedule.
    pub sensitive: bool,
    /// Kernel, L1 cache, L2 cache, DRAM: each its name ("L1 cache"), its headline figure ("95 % hit"), the line
    /// under it ("192 KB in each of 108 SMs") and Nsight Compute's names for its figures (shown on hover).
    /// Arrays, not structs: the page's main module reads them with the code it has for every array of strings.
    pub boxes: Vec<[String; 4]>,
    /// Between the boxes: above the arrow ("67.1 M requests"), below it ("168 M sectors"), and the exact counts
    /// with Nsight Compute's names (shown on hover).
    pub arrows: Vec<[String; 3]>,
    /// The bounds no schedule changes: (the sentence, Nsight's or the model's name for it).
    pub bounds: Vec<[String; 2]>,
    /// The schedule check, when the grid ran.
    pub schedule: Option<String>,
    /// Per instruction: line, instruction, L1 hit %, L2 hit %, DRAM read.
    pub lines: Vec<[String; 5]>,
    /// Per source line with instructions (the source view's columns): the line, its loads' L1 hit %, its L2
    /// hit %, the bytes its misses read from DRAM.
    #[serde(default)]
    pub per_line: Vec<(usize, [String; 3])>,
    /// The model's notes.
    pub notes: Vec<Note>,
}

/// `967`, `12.3 K`, `67.1 M`, `1.07 G`: a count short enough for an arrow of the chart (the exact one is in its
/// tip).
pub fn short_count(n: u64) -> String {
    if n < 10_000 {
        return grouped(n);
    }
    // Three significant digits; the thresholds are where rounding carries a digit over (999,999 is 1.00 M, not
    // 1000 K; 99,995 is 100 K, not 100.0 K).
    let mut v = n as f64 / 1000.0;
    let mut unit = 0;
    while v >= 999.5 && unit < 2 {
        v /= 1000.0;
        unit += 1;
    }
    let digits = if v >= 99.95 {
        0
    } else if v >= 9.995 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {}", ["K", "M", "G"][unit])
}

/// `1.50 MiB`, `512.0 KiB`, `96 B`.
pub fn short_bytes(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
    } else if b >= 1 << 20 {
        format!("{:.2} MiB", b as f64 / (1u64 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{:.1} KiB", b as f64 / 1024.0)
    } else {
        format!("{b} B")
    }
}

/// A block of a wave: whose trace it plays and by how much its global addresses move.
#[derive(Clone, Copy)]
struct Member {
    trace: usize,
    delta: [i64; 3],
    linear: u64,
}

struct Class {
    b0: Dim3,
    constraints: Vec<Constraint>,
    trace: usize,
}

/// The local backing store of warp `w` of block `linear`: each warp's own region.
fn local_base(linear: u64, warps: u32, w: u32, local_bytes: u64) -> u64 {
    let per_warp = local_bytes.div_ceil(128) * 128 * 32;
    (1u64 << 60).wrapping_add((linear * u64::from(warps) + u64::from(w)).wrapping_mul(per_warp))
}

/// The most steps played per round: each SM runs its L1 part for up to this many steps, then L2 serves the
/// round's requests in the model's order (step, SM, block, warp). An SM's L1 stays warm in the host's caches for
/// a round.
const ROUND: usize = 256;
/// The most line accesses a round's issues hold, over all SMs: fewer steps per round when the wave's issues
/// touch many lines, so that the requests held for L2 (16 bytes each, at most one per line access, and 24 bytes
/// each again while they wait in L2's buckets) stay within 5 MB whatever the kernel: with most SMs replaying
/// their waves, filling the buckets was a sixth of the run at 20 MB (the tiled SGEMM grid at N = 4096: 4.54 s
/// at 2^19 accesses, 4.21 s at 2^17, 4.27 s at 2^15).
const ROUND_ACCESSES: usize = 1 << 17;

/// The block whose issues the figure draws: its issues get watch ids, each naming (site, warp, pass).
struct Watch {
    linear: u64,
    /// Per (warp, site), the issues seen so far.
    passes: FxHashMap<(u32, u32), u32>,
    /// By watch id: (site, warp, pass).
    ids: Vec<(u32, u32, u32)>,
}

/// The most issues of the drawn block whose sectors are recorded.
const MAX_WATCHED: usize = 1 << 16;

impl Watch {
    fn id(&mut self, linear: u64, w: u32, site: u32) -> u32 {
        if linear != self.linear || self.ids.len() >= MAX_WATCHED {
            return UNWATCHED;
        }
        let pass = self.passes.entry((w, site)).or_insert(0);
        self.ids.push((site, w, *pass));
        *pass += 1;
        (self.ids.len() - 1) as u32
    }
}

/// One SM's round: what it records for L2, and where each step's requests end.
#[derive(Default)]
struct SmRound {
    out: Outbox,
    /// Per step of the round, the end of its requests in `out`.
    ends: Vec<usize>,
    /// The runs of requests that belong to watched issues: (first, end, watch id).
    watched: Vec<(usize, usize, u32)>,
}

/// What every SM's L1 part of a round reads.
struct RoundInput<'a> {
    traces: &'a [BlockTrace],
    wave: &'a [Member],
    s: usize,
    warps: u32,
    local_bytes: u64,
    steps: std::ops::Range<usize>,
}

/// SM `sm`'s L1 part for the steps of a round: its blocks of the wave (every `s`-th from `sm`), warp by warp.
/// `watch`: the watched block's index in the wave and its watch, when that block runs on this SM.
/// An SM that replays its wave ([`replay::Plan`]) plays nothing. Not inlined: a wave's SMs and a record share
/// one copy.
#[inline(never)]
fn l1_round(
    sm: usize,
    state: &mut Sm,
    r: &mut SmRound,
    inp: &RoundInput,
    plan: &replay::Plan,
    mut watch: Option<(usize, &mut Watch)>,
) {
    r.out.clear();
    r.ends.clear();
    r.watched.clear();
    if plan.replays() {
        return;
    }
    for t in inp.steps.clone() {
        for (bi, b) in inp.wave.iter().enumerate().skip(sm).step_by(inp.s) {
            let tr = &inp.traces[b.trace];
            for i in tr.step(t) {
                let watch_id = match &mut watch {
                    Some((k, wt)) if *k == bi => wt.id(b.linear, i.warp, i.site),
                    _ => UNWATCHED,
                };
                let issue = tr.issue(i, b, inp.warps, inp.local_bytes, watch_id);
                let first = r.out.reqs.len();
                state.l1(&issue, &mut r.out);
                if watch_id != UNWATCHED {
                    r.watched.push((first, r.out.reqs.len(), watch_id));
                }
            }
        }
        r.ends.push(r.out.reqs.len());
    }
}

/// Line accesses in a round below which its SMs' L1 parts run on the caller's thread: starting threads costs
/// more.
const PARALLEL_LINES: usize = 1 << 14;

/// Plays one wave's blocks, SM by SM, in lockstep steps: per round, each SM's L1 part (on up to `threads`
/// threads; SMs never see one another), then L2 serves the round's requests in the model's order (step, SM,
/// block, warp). The figures do not depend on `threads`.
#[allow(clippy::too_many_arguments)]
fn play(
    m: &mut Machine,
    traces: &[BlockTrace],
    wave: &[Member],
    s: usize,
    warps: u32,
    local_bytes: u64,
    rounds: &mut Vec<SmRound>,
    records: &mut replay::Records,
    mut watch: Option<&mut Watch>,
    threads: usize,
) {
    let watched = watch.as_ref().and_then(|w| wave.iter().position(|b| b.linear == w.linear));
    let steps = wave.iter().map(|b| traces[b.trace].steps.len()).max().unwrap_or(0);
    let sms = s.min(wave.len());
    rounds.resize_with(sms.max(rounds.len()), SmRound::default);
    // Which SMs replay a translated wave instead of playing theirs (docs/model.md#the-memory-system; see
    // `replay`): decided in SM order, so the figures do not depend on the threads.
    let mut plans: Vec<replay::Plan> = (0..sms)
        .map(|sm| {
            let blocks: Vec<&Member> = wave.iter().skip(sm).step_by(s).collect();
            let is_watched = watched.is_some_and(|k| k % s == sm);
            records.plan(traces, &blocks, &m.sms[sm], is_watched)
        })
        .collect();
    // The wave's line accesses per step, at their most: each block's busiest step.
    let lines_per_step: usize = wave.iter().map(|b| traces[b.trace].busiest).sum();
    let round = (ROUND_ACCESSES / lines_per_step.max(1)).clamp(1, ROUND);
    let mut t0 = 0;
    while t0 < steps {
        let t1 = (t0 + round).min(steps);
        let inp = RoundInput { traces, wave, s, warps, local_bytes, steps: t0..t1 };
        let watched_sm = watched.map(|k| k % s);
        let parallel = cfg!(not(target_arch = "wasm32")) && threads > 1 && lines_per_step * (t1 - t0) >= PARALLEL_LINES;
        if parallel {
            let per = sms.div_ceil(threads.min(sms));
            let mut wt = watch.as_deref_mut();
            std::thread::scope(|scope| {
                let inp = &inp;
                let chunks = m.sms[..sms].chunks_mut(per).zip(rounds[..sms].chunks_mut(per)).zip(plans.chunks(per));
                for (c, ((states, rs), ps)) in chunks.enumerate() {
                    let first = c * per;
                    let mine = watched_sm.is_some_and(|w| (first..first + states.len()).contains(&w));
                    let mut my_watch = if mine { wt.take() } else { None };
                    scope.spawn(move || {
                        for (k, ((state, r), plan)) in states.iter_mut().zip(rs.iter_mut()).zip(ps).enumerate() {
                            let sm = first + k;
                            let w = match (&mut my_watch, watched) {
                                (Some(w), Some(bi)) if bi % s == sm => Some((bi, &mut **w)),
                                _ => None,
                            };
                            l1_round(sm, state, r, inp, plan, w);
                        }
                    });
                }
            });
        } else {
            for (sm, ((state, r), plan)) in m.sms[..sms].iter_mut().zip(rounds.iter_mut()).zip(&plans).enumerate() {
                let w = match (&mut watch, watched) {
                    (Some(w), Some(bi)) if bi % s == sm => Some((bi, &mut **w)),
                    _ => None,
                };
                l1_round(sm, state, r, &inp, plan, w);
            }
        }
        // Replaying SMs take their round from their record as L2 takes it, below.
        // Each issue's L1 hits come before its L2 sectors.
        for sm in 0..sms {
            m.take_l1_served(sm);
        }
        // L2 takes the round's requests in the model's order: step, then SM, then each SM's requests of that step.
        let mut next_watched = vec![0usize; sms];
        let mut from = vec![0usize; sms];
        for k in 0..t1 - t0 {
            for (sm, (r, plan)) in rounds[..sms].iter_mut().zip(plans.iter_mut()).enumerate() {
                if plan.replays() {
                    records.replay_step(plan, t0 + k, |req, bytes| m.route(req, bytes, UNWATCHED));
                    continue;
                }
                let end = r.ends[k];
                for j in from[sm]..end {
                    let req = r.out.reqs[j];
                    let mut id = UNWATCHED;
                    if !r.watched.is_empty() {
                        let w = &mut next_watched[sm];
                        while *w < r.watched.len() && r.watched[*w].1 <= j {
                            *w += 1;
                        }
                        if let Some(&(first, _, watch_id)) = r.watched.get(*w) {
                            if first <= j {
                                id = watch_id;
                            }
                        }
                    }
                    let bytes = r.out.next_bytes(&req);
                    m.route(&req, bytes, id);
                }
                from[sm] = end;
            }
        }
        m.drain();
        t0 = t1;
    }
    records.finish_wave(&plans, &mut m.sms[..sms]);
}

/// The L1 bytes and residency the run uses.
fn shape_for(a: &Analysis, p: &Preset, set: &CacheSettings, one_block: bool) -> (Residency, Shape) {
    let shared = set.shared_bytes.or(a.config.windows.shared_alloc_bytes).unwrap_or(0);
    let mut r = memsys::residency(a.cc, p, a.launch.threads(), shared);
    if let Some(c) = set.carveout_bytes {
        r.carveout_bytes = r.carveout_bytes.map(|_| c);
        r.l1_bytes = memsys::l1_for_carveout(p, r.carveout_bytes);
    }
    if let Some(n) = set.blocks_per_sm {
        r.r = n;
    }
    if one_block {
        r.r = 1;
    }
    let shape = Shape {
        sms: if one_block { 1 } else { p.sms },
        l1_bytes: r.l1_bytes,
        read_only_bytes: if memsys::has_read_only_cache(a.cc) { memsys::READ_ONLY_BYTES } else { 0 },
        l2_sets: p.l2_sets(),
        l2_ways: p.l2_ways,
    };
    (r, shape)
}

/// Collects every block's traces (translating equivalent blocks) and plays them in waves of `S x R` through one
/// or more machines (one per R in `rs`).
#[allow(clippy::too_many_arguments)]
fn run_grid(
    a: &Analysis,
    shapes: &mut [(Machine, usize)],
    control: &mut dyn Control,
    one: Option<Dim3>,
    mut watch: Option<&mut Watch>,
    stage: Stage,
) -> Result<(u64, u64), RunError> {
    let launch = a.launch;
    let g = launch.grid;
    let warps = launch.warps();
    let local_bytes = a.config.windows.local_alloc_bytes.unwrap_or(WINDOW_BYTES);
    let total = if one.is_some() { 1 } else { g.volume() };
    let mut progress = Progress { stage, blocks_total: total, ..Progress::default() };
    let mut decisions = Vec::new();
    grid::check_memory(u64::from(warps) * grid::warp_bytes(&a.program, true), a.max_memory_bytes)?;
    // Blocks in launch order, made as they are needed: a grid of billions of blocks holds none of them.
    let block_at = |n: u64| match one {
        Some(b) => b,
        None => Dim3 {
            x: (n % u64::from(g.x)) as u32,
            y: (n / u64::from(g.x) % u64::from(g.y)) as u32,
            z: (n / (u64::from(g.x) * u64::from(g.y))) as u32,
        },
    };
    // Traces: those of class representatives stay; a block that proves nothing keeps its trace for its wave.
    let mut traces: Vec<BlockTrace> = Vec::new();
    let mut classes: Vec<Class> = Vec::new();
    let mut last_class = 0usize;
    let mut singletons_in_a_row = 0u32;
    let wave_of = |m: &(Machine, usize)| m.1;
    let biggest = shapes.iter().map(wave_of).max().unwrap_or(1);
    let mut rounds = Vec::new();
    let mut records: Vec<replay::Records> = shapes.iter().map(|_| replay::Records::new(a.replay)).collect();
    let mut waves = 0u64;
    // Blocks are traced in chunks of the largest wave; each machine plays its own waves from them.
    let mut members: Vec<Member> = Vec::new();
    let mut pending: Vec<Vec<Member>> = shapes.iter().map(|_| Vec::new()).collect();
    let mut first_singleton = usize::MAX;
    let mut traced_bytes = 0u64;
    for linear in 0..total {
        let b = block_at(linear);
        if !control.keep_going(&progress) {
            return Err(RunError::Stopped { at: None, block: b, warp: 0, progress });
        }
        let last = linear + 1 == total;
        let found = (0..classes.len()).map(|k| (last_class + k) % classes.len()).find(|&k| {
            let c = &classes[k];
            let d = [
                i128::from(b.x) - i128::from(c.b0.x),
                i128::from(b.y) - i128::from(c.b0.y),
                i128::from(b.z) - i128::from(c.b0.z),
            ];
            c.constraints.iter().all(|k| k.holds(d))
        });
        let member = match found {
            Some(k) => {
                last_class = k;
                let c = &classes[k];
                let delta = [
                    i64::from(b.x) - i64::from(c.b0.x),
                    i64::from(b.y) - i64::from(c.b0.y),
                    i64::from(b.z) - i64::from(c.b0.z),
                ];
                Member { trace: c.trace, delta, linear }
            }
            None => {
                let track = one.is_none() && singletons_in_a_row < 8;
                let mut rec = Recorder { a, trace: BlockTrace::default(), coef: [0; 3], scratch: Vec::new() };
                let proof = grid::run_one(
                    &a.program,
                    &Launch { block_idx: b, ..launch },
                    b,
                    &mut rec,
                    track,
                    control,
                    &mut progress,
                    &mut decisions,
                    &a.config.windows,
                )?;
                let t = traces.len();
                let mut trace = rec.trace.finished();
                if one.is_none() && matches!(proof, Some(Ok(_))) {
                    trace.index = trace::TraceLines::of(&trace);
                }
                traced_bytes += trace.bytes();
                traces.push(trace);
                match proof {
                    Some(Ok(constraints)) => {
                        singletons_in_a_row = 0;
                        classes.push(Class { b0: b, constraints, trace: t });
                        last_class = classes.len() - 1;
                    }
                    _ => {
                        singletons_in_a_row += 1;
                        first_singleton = first_singleton.min(t);
                    }
                }
                Member { trace: t, delta: [0; 3], linear }
            }
        };
        progress.blocks_done += 1;
        members.push(member);
        if members.len() == biggest || last {
            for (k, (m, wave)) in shapes.iter_mut().enumerate() {
                pending[k].extend_from_slice(&members);
                let s = m.sms.len();
                while pending[k].len() >= *wave || (last && !pending[k].is_empty()) {
                    let take = (*wave).min(pending[k].len());
                    let w: Vec<Member> = pending[k].drain(..take).collect();
                    let wt = if k == 0 { watch.as_deref_mut() } else { None };
                    play(m, &traces, &w, s, warps, local_bytes, &mut rounds, &mut records[k], wt, a.threads);
                    if k == 0 {
                        waves += 1;
                    }
                }
            }
            members.clear();
            // Singleton traces no machine still needs are dropped, and the list of traces shrinks back to the
            // classes' (a grid of blocks that prove nothing holds one wave's traces at a time).
            if first_singleton != usize::MAX && pending.iter().all(Vec::is_empty) {
                let keep: std::collections::HashSet<usize> = classes.iter().map(|c| c.trace).collect();
                for (i, t) in traces.iter_mut().enumerate().skip(first_singleton) {
                    if !keep.contains(&i) {
                        traced_bytes -= t.bytes();
                        *t = BlockTrace::default();
                    }
                }
                while traces.len() > first_singleton && !keep.contains(&(traces.len() - 1)) {
                    traces.pop();
                }
                first_singleton = usize::MAX;
            }
            // What the run keeps grows with the memory it touches and the classes it traces, never with the grid.
            let held = traced_bytes
                + shapes.iter().map(|(m, _)| m.record_bytes()).sum::<u64>()
                + records.iter().map(replay::Records::bytes).sum::<u64>();
            if held > a.max_memory_bytes {
                return Err(RunError::Held { bytes: held, limit: a.max_memory_bytes, progress });
            }
        }
    }
    Ok((waves, records[0].replayed))
}

/// The other run of a schedule check: the grid with another number of resident blocks per SM.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleRun {
    /// Its R.
    pub blocks_per_sm: u32,
    /// Its totals, without the bounds (no schedule changes them: the main run has them).
    pub totals: Totals,
}

impl Analysis {
    /// The device the settings describe, checked as the command line and the page check them
    /// ([`CacheSettings::check`]): a caller of this API gets the same error, never a clamped value.
    fn cache_device(&self, settings: &CacheSettings, one: bool) -> Result<(Preset, Residency, Shape), RunError> {
        settings.check(self.cc).map_err(RunError::Settings)?;
        let mut p = Preset::of(self.cc);
        p.sms = settings.sms.unwrap_or(p.sms);
        p.l2_bytes = settings.l2_bytes.unwrap_or(p.l2_bytes);
        p.l2_ways = settings.l2_ways.unwrap_or(p.l2_ways);
        let (res, shape) = shape_for(self, &p, settings, one);
        Ok((p, res, shape))
    }

    /// The modelled memory system (docs/model.md#the-memory-system) for one block (`Some(b)`: one SM, one block) or the whole grid,
    /// with the schedule check of a grid run after it (see [`Analysis::cache_schedule_check`]).
    pub fn caches(
        &self,
        block: Option<Dim3>,
        settings: &CacheSettings,
        control: &mut dyn Control,
    ) -> Result<CacheResult, RunError> {
        let r = self.caches_alone(block, settings, control)?;
        if block.is_some() {
            return Ok(r);
        }
        let check = self.cache_schedule_check(settings, control)?;
        Ok(r.with_schedule(check))
    }

    /// The modelled memory system without the schedule check (a front end with threads runs the check
    /// beside it and adds it with [`CacheResult::with_schedule`]).
    pub fn caches_alone(
        &self,
        block: Option<Dim3>,
        settings: &CacheSettings,
        control: &mut dyn Control,
    ) -> Result<CacheResult, RunError> {
        let one = block.is_some() || self.launch.grid.volume() == 1;
        let (p, res, shape) = self.cache_device(settings, one)?;
        let sites = self.program.sites.len();
        let mut machines = vec![(Machine::new(shape, sites), shape.sms as usize * res.r as usize)];
        let g = self.launch.grid;
        let b = self.launch.block_idx;
        let linear =
            if one { 0 } else { (u64::from(b.z) * u64::from(g.y) + u64::from(b.y)) * u64::from(g.x) + u64::from(b.x) };
        let mut watch = Watch { linear, passes: FxHashMap::default(), ids: Vec::new() };
        let shown = block.or(one.then_some(self.launch.block_idx));
        let (waves, replayed) = run_grid(self, &mut machines, control, shown, Some(&mut watch), Stage::Memory)?;
        let (mut main, _) = machines.pop().expect("the machine");
        let mut served: std::collections::HashMap<(u32, u32, u32), Vec<(u64, Served)>> = Default::default();
        for (id, sector, how) in std::mem::take(&mut main.served) {
            if let Some(&key) = watch.ids.get(id as usize) {
                served.entry(key).or_default().push((sector << 5, how));
            }
        }
        let (site_traffic, totals) = main.finish();
        let instructions = site_traffic
            .iter()
            .enumerate()
            .filter(|(_, t)| t.l1.requests > 0)
            .map(|(k, t)| {
                let s = &self.program.sites[k];
                let load = !s.instr.base.writes();
                SiteCache {
                    site: k,
                    line: s.line,
                    access: s.access.clone(),
                    op: s.instr.text.clone(),
                    traffic: *t,
                    l1_hit_rate: if load { rate(&t.l1) } else { None },
                    l2_hit_rate: rate(&t.l2),
                }
            })
            .collect();
        let scope = match (block, one) {
            (Some(b), _) => format!("block ({},{},{})", b.x, b.y, b.z),
            (None, true) => "launch's one block".to_string(),
            (None, false) => "grid".to_string(),
        };
        let label = arch::notes::cache_label(&p, shape.sms, res.r);
        let shared = settings.shared_bytes.or(self.config.windows.shared_alloc_bytes);
        // Local memory is reached by LDL/STL and, possibly, by generic accesses.
        let local = self.program.sites.iter().any(|s| s.instr.base.fixed_space().is_none_or(|sp| sp == Space::Local));
        let notes = arch::notes::cache_notes(self.cc, &p, &res, shared, one, false, local);
        Ok(CacheResult {
            scope,
            metrics: metrics(&totals),
            preset: p,
            sms: shape.sms,
            residency: res,
            waves,
            replayed,
            totals,
            instructions,
            schedule: None,
            label,
            notes,
            served,
        })
    }

    /// The whole grid again with another number of resident blocks per SM (half of R, or 2 when R is 1):
    /// whether the figures depend on the schedule. `None` for a launch of one block.
    pub fn cache_schedule_check(
        &self,
        settings: &CacheSettings,
        control: &mut dyn Control,
    ) -> Result<Option<ScheduleRun>, RunError> {
        if self.launch.grid.volume() == 1 {
            return Ok(None);
        }
        let (_, res, shape) = self.cache_device(settings, false)?;
        let alt = if res.r > 1 { res.r / 2 } else { 2 };
        let mut machines = vec![(Machine::new(shape, self.program.sites.len()), shape.sms as usize * alt as usize)];
        // The bounds do not depend on the schedule: the main run records them.
        machines[0].0.bounds_on = false;
        run_grid(self, &mut machines, control, None, None, Stage::ScheduleCheck)?;
        let (m, _) = machines.pop().expect("the machine");
        Ok(Some(ScheduleRun { blocks_per_sm: alt, totals: m.finish().1 }))
    }
}

impl ScheduleRun {
    /// The figures the result shows of it (whether they are far from the main run's is decided when they are
    /// added, [`CacheResult::with_schedule_figures`]).
    pub fn figures(&self) -> Sensitivity {
        let t = &self.totals;
        Sensitivity {
            blocks_per_sm: self.blocks_per_sm,
            l1_load_hit_rate: t.l1_load_hit_rate(),
            l2_load_hit_rate: t.l2_load_hit_rate(),
            dram_read_bytes: t.dram_read_bytes,
            sensitive: false,
        }
    }
}

impl CacheResult {
    /// Adds a schedule check's figures, and the "sensitive to the schedule" mark when a hit rate moves by more
    /// than 2 points or DRAM reads by more than 2 %.
    pub fn with_schedule(self, check: Option<ScheduleRun>) -> CacheResult {
        self.with_schedule_figures(check.map(|c| c.figures()))
    }

    /// [`CacheResult::with_schedule`] from the check's figures (the page's second worker sends only these).
    pub fn with_schedule_figures(mut self, check: Option<Sensitivity>) -> CacheResult {
        let Some(c) = check else { return self };
        let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(x), Some(y)) => (x - y).abs() <= 2.0,
            _ => true,
        };
        let main = &self.totals;
        let dram_close = main.dram_read_bytes.abs_diff(c.dram_read_bytes) * 50 <= main.dram_read_bytes.max(1);
        let sensitive = !(close(main.l1_load_hit_rate(), c.l1_load_hit_rate)
            && close(main.l2_load_hit_rate(), c.l2_load_hit_rate)
            && dram_close);
        self.schedule = Some(Sensitivity { sensitive, ..c });
        if sensitive {
            let extra =
                arch::notes::cache_notes(Cc::new(8, 0), &self.preset, &self.residency, None, false, true, false);
            if let Some(n) = extra.into_iter().find(|n| n.id == "cache-sensitive") {
                self.notes.insert(1, n);
            }
        }
        self
    }
}

/// The kernel totals under Nsight Compute's metric names.
fn metrics(t: &Totals) -> Vec<Metric> {
    let mut out = Vec::new();
    let mut put = |name: String, value: f64| out.push(Metric { name, value });
    for (space, sname) in [(0usize, "global"), (1, "local")] {
        for (o, op) in OPS.iter().enumerate() {
            let l1 = t.l1[space][o];
            if l1.requests == 0 {
                continue;
            }
            put(format!("l1tex__t_requests_pipe_lsu_mem_{sname}_op_{op}.sum"), l1.requests as f64);
            put(format!("l1tex__t_sectors_pipe_lsu_mem_{sname}_op_{op}.sum"), l1.sectors as f64);
            if o == 0 {
                put(format!("l1tex__t_sectors_pipe_lsu_mem_{sname}_op_ld_lookup_hit.sum"), l1.hits as f64);
            }
        }
    }
    if let Some(r) = t.l1_hit_rate() {
        put("l1tex__t_sector_hit_rate.pct".into(), r);
    }
    for (o, op) in ["read", "write", "atom", "red"].iter().enumerate() {
        let l2 = Totals::sum(&t.l2, &[o]);
        if l2.requests == 0 {
            continue;
        }
        put(format!("lts__t_requests_srcunit_tex_op_{op}.sum"), l2.requests as f64);
        put(format!("lts__t_sectors_srcunit_tex_op_{op}.sum"), l2.sectors as f64);
        if o == 0 {
            put("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum".into(), l2.hits as f64);
        }
    }
    if let Some(r) = t.l2_hit_rate() {
        put("lts__t_sector_hit_rate.pct".into(), r);
    }
    put("dram__bytes_read.sum".into(), t.dram_read_bytes as f64);
    put("dram__bytes_write.sum".into(), t.dram_write_bytes as f64);
    out
}

use crate::text::grouped;

/// Bytes with their binary unit: `8,388,608 bytes (8 MiB)`.
pub fn bytes_text(n: u64) -> String {
    let unit = if n >= 1 << 30 {
        format!(" ({:.4} GiB)", n as f64 / f64::from(1u32 << 30))
    } else if n >= 1 << 20 {
        format!(" ({:.4} MiB)", n as f64 / f64::from(1u32 << 20))
    } else if n >= 1 << 10 {
        format!(" ({:.4} KiB)", n as f64 / 1024.0)
    } else {
        String::new()
    };
    let unit = unit.replace(".0000 ", " ");
    format!("{} bytes{unit}", grouped(n))
}

/// `95.0 % (7,980 of 8,400)`, or `no loads`.
pub fn rate_text(t: &Traffic) -> String {
    match rate(t) {
        Some(r) => format!("{} % ({} of {})", trim_rate(r), grouped(t.hits), grouped(t.sectors)),
        None => "no sectors".into(),
    }
}

/// A percentage with up to four decimals, trailing zeros dropped (96.875, 95, 78.7476).
pub fn trim_rate(r: f64) -> String {
    let s = format!("{r:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

impl CacheResult {
    /// The memory chart's words.
    pub fn chart(&self) -> CacheChart {
        let t = &self.totals;
        let l1 = Totals::sum(&t.l1, &[0, 1, 2, 3]);
        let l1ld = Totals::sum(&t.l1, &[0]);
        let l2 = Totals::sum(&t.l2, &[0, 1, 2, 3]);
        let l2ld = Totals::sum(&t.l2, &[0]);
        let hit = |x: Option<f64>| x.map_or("no loads".to_string(), |v| format!("{} % hit", trim_rate(v)));
        let opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{} %", trim_rate(v)));
        let all = |x: &Traffic| rate(x).map_or("-".to_string(), |v| format!("{} %", trim_rate(v)));
        let count = |n: u64, what: &str| format!("{} {what}", short_count(n));
        let r = self.residency.r;
        let blocks = if r == 1 { "1 block".to_string() } else { format!("{r} blocks") };
        let l2_size = short_bytes(self.preset.l2_bytes).replace(".00 ", " ");
        CacheChart {
            title: format!(
                "Modelled, not measured, for the {}: {} with {blocks} each, a {l2_size} L2 cache ({}-way), all caches \
                 empty at the start",
                self.scope,
                crate::text::plural(self.sms, "SM"),
                self.preset.l2_ways
            ),
            sensitive: self.schedule.as_ref().is_some_and(|s| s.sensitive),
            boxes: vec![
                [
                    "Kernel".into(),
                    short_count(l1.requests),
                    "memory requests by its warps".into(),
                    format!(
                        "{} requests to L1: l1tex__t_requests_pipe_lsu_mem_global_op_{{ld,st,atom,red}}.sum and _mem_local_",
                        grouped(l1.requests)
                    ),
                ],
                [
                    "L1 cache".into(),
                    hit(rate(&l1ld)),
                    format!("{} KB in each of {}", self.residency.l1_bytes / 1024, crate::text::plural(self.sms, "SM")),
                    format!(
                        "L1/TEX cache. Load hit rate: l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum / \
                         l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum = {} of {}; all operations \
                         (l1tex__t_sector_hit_rate.pct): {}",
                        grouped(l1ld.hits),
                        grouped(l1ld.sectors),
                        all(&l1)
                    ),
                ],
                [
                    "L2 cache".into(),
                    hit(rate(&l2ld)),
                    format!("{l2_size}, one for the GPU"),
                    format!(
                        "L2 (lts). Load hit rate: lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum / \
                         lts__t_sectors_srcunit_tex_op_read.sum = {} of {}; all operations (lts__t_sector_hit_rate.pct): {}",
                        grouped(l2ld.hits),
                        grouped(l2ld.sectors),
                        all(&l2)
                    ),
                ],
                [
                    "DRAM".into(),
                    short_bytes(t.dram_read_bytes + t.dram_write_bytes),
                    "read and written".into(),
                    format!(
                        "Device memory: dram__bytes_read.sum = {}, dram__bytes_write.sum = {}",
                        bytes_text(t.dram_read_bytes),
                        bytes_text(t.dram_write_bytes)
                    ),
                ],
            ],
            arrows: vec![
                [
                    count(l1.requests, "requests"),
                    count(l1.sectors, "sectors"),
                    format!(
                        "{} requests, {} sectors of 32 bytes: l1tex__t_requests_pipe_lsu_mem_global_op_*.sum, \
                         l1tex__t_sectors_pipe_lsu_mem_global_op_*.sum (and _mem_local_)",
                        grouped(l1.requests),
                        grouped(l1.sectors)
                    ),
                ],
                [
                    count(l2.requests, "requests"),
                    count(l2.sectors, "sectors"),
                    format!(
                        "{} requests, {} sectors that L1 did not serve: lts__t_requests_srcunit_tex.sum, \
                         lts__t_sectors_srcunit_tex.sum",
                        grouped(l2.requests),
                        grouped(l2.sectors)
                    ),
                ],
                [
                    format!("read {}", short_bytes(t.dram_read_bytes)),
                    format!("written {}", short_bytes(t.dram_write_bytes)),
                    format!(
                        "dram__bytes_read.sum = {}, dram__bytes_write.sum = {} (of which {} still waiting in L2 at the end)",
                        bytes_text(t.dram_read_bytes),
                        bytes_text(t.dram_write_bytes),
                        bytes_text(t.dirty_at_end_bytes)
                    ),
                ],
            ],
            bounds: vec![
                [
                    format!(
                        "{} had to come from DRAM at least once: every sector's first read, whatever the order of \
                         the warps.",
                        short_bytes(t.compulsory_read_bytes)
                    ),
                    format!("compulsory DRAM reads: {}", bytes_text(t.compulsory_read_bytes)),
                ],
                [
                    format!("{} written, each byte counted once.", short_bytes(t.unique_written_bytes)),
                    format!("unique bytes written: {}", bytes_text(t.unique_written_bytes)),
                ],
                [
                    format!(
                        "{} sectors reach L1 ({} of them loaded): the issues' own count, before any reuse.",
                        grouped(l1.sectors),
                        grouped(l1ld.sectors)
                    ),
                    "L1 sectors with no reuse: the sum of every issue's sectors".into(),
                ],
            ],
            schedule: self.schedule.as_ref().map(|s| {
                format!(
                    "With {} per SM instead of {r}: L1 hit rate {}, L2 hit rate {}, read from DRAM {}.",
                    crate::text::plural(s.blocks_per_sm, "block"),
                    opt(s.l1_load_hit_rate),
                    opt(s.l2_load_hit_rate),
                    short_bytes(s.dram_read_bytes)
                )
            }),
            lines: self
                .instructions
                .iter()
                .map(|i| {
                    [
                        i.line.to_string(),
                        format!("{} {}", i.op, i.access),
                        i.l1_hit_rate.map_or("-".into(), trim_rate),
                        i.l2_hit_rate.map_or("-".into(), trim_rate),
                        short_bytes(i.traffic.dram_read_bytes),
                    ]
                })
                .collect(),
            per_line: self.per_line(),
            notes: self.notes.clone(),
        }
    }

    fn per_line(&self) -> Vec<(usize, [String; 3])> {
        let mut by_line: std::collections::BTreeMap<usize, (Traffic, Traffic, u64)> = Default::default();
        for i in &self.instructions {
            let e = by_line.entry(i.line).or_default();
            if i.l1_hit_rate.is_some() {
                e.0.requests += i.traffic.l1.requests;
                e.0.sectors += i.traffic.l1.sectors;
                e.0.hits += i.traffic.l1.hits;
            }
            e.1.requests += i.traffic.l2.requests;
            e.1.sectors += i.traffic.l2.sectors;
            e.1.hits += i.traffic.l2.hits;
            e.2 += i.traffic.dram_read_bytes;
        }
        by_line
            .into_iter()
            .map(|(line, (l1, l2, dram))| {
                let pct = |t: &Traffic| rate(t).map_or("-".into(), |r| format!("{} %", trim_rate(r)));
                (line, [pct(&l1), pct(&l2), short_bytes(dram)])
            })
            .collect()
    }

    /// The section `warpscope analyze --caches` prints.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let t = &self.totals;
        let mut out = String::new();
        let _ = writeln!(out, "Memory system, {} for the {}:", self.label, self.scope);
        let l1 = Totals::sum(&t.l1, &[0, 1, 2, 3]);
        let l1ld = Totals::sum(&t.l1, &[0]);
        let l2 = Totals::sum(&t.l2, &[0, 1, 2, 3]);
        let l2ld = Totals::sum(&t.l2, &[0]);
        let _ = writeln!(
            out,
            "  L1/TEX: {} requests, {} sectors; load hit rate {}",
            grouped(l1.requests),
            grouped(l1.sectors),
            rate_text(&l1ld)
        );
        let _ = writeln!(
            out,
            "  L2: {} requests, {} sectors; load hit rate {}; all operations {}",
            grouped(l2.requests),
            grouped(l2.sectors),
            rate_text(&l2ld),
            rate_text(&l2)
        );
        let _ = writeln!(
            out,
            "  DRAM: read {}, written {} (of which {} still dirty in L2 at the end)",
            bytes_text(t.dram_read_bytes),
            bytes_text(t.dram_write_bytes),
            bytes_text(t.dirty_at_end_bytes)
        );
        let _ = writeln!(
            out,
            "  bounds, any schedule: compulsory DRAM read {}; unique bytes written {}; L1 sectors with no reuse {} (loads {})",
            bytes_text(t.compulsory_read_bytes),
            bytes_text(t.unique_written_bytes),
            grouped(l1.sectors),
            grouped(l1ld.sectors)
        );
        if let Some(s) = &self.schedule {
            let r = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{} %", trim_rate(v)));
            let _ = writeln!(
                out,
                "  with {} per SM: L1 load hit rate {}, L2 load hit rate {}, DRAM read {}{}",
                crate::text::plural(s.blocks_per_sm, "block"),
                r(s.l1_load_hit_rate),
                r(s.l2_load_hit_rate),
                bytes_text(s.dram_read_bytes),
                if s.sensitive { ": sensitive to the schedule" } else { "" }
            );
        }
        for i in &self.instructions {
            let _ = writeln!(
                out,
                "  line {} {} {}: L1 {} requests, {} sectors, hits {}; L2 {} sectors, hits {}; DRAM read {}",
                i.line,
                i.op,
                i.access,
                grouped(i.traffic.l1.requests),
                grouped(i.traffic.l1.sectors),
                grouped(i.traffic.l1.hits),
                grouped(i.traffic.l2.sectors),
                grouped(i.traffic.l2.hits),
                bytes_text(i.traffic.dram_read_bytes)
            );
        }
        for n in &self.notes {
            let _ = writeln!(out, "  note [{}]: {}", n.id, n.text);
        }
        out
    }
}
