//! Waves replayed instead of played (docs/model.md#the-memory-system): an SM whose blocks in a wave are a
//! translation of a group that was played once on an SM with empty caches, and whose caches hold no line the wave
//! reaches before evicting it, does in that wave exactly what the record says, moved.
//!
//! Why it is exact. An SM's L1 (and 3.5/3.7's read-only cache) is true LRU per set. Before the wave's first touch
//! of a line it held, the wave's accesses are those of an empty cache: new lines go on top and only allocations
//! move the held lines down, so a held line `p` places below the top is gone after `ways - p` allocations in its
//! set. Where every held line the wave touches is gone by its first touch (the record counts each line's
//! allocations before it, [`crate::model::cache::FirstTouch`]), the wave's hits, its requests to L2 and the lines
//! it leaves above the held ones are the empty cache's. Two groups' waves give the same figures when a map from
//! one's lines to the other's keeps every line's set and tells lines apart as they were told apart. Each block's
//! global lines are its class's lines moved by `c · delta` for the coefficient vector `c` of the issue (the grid
//! proof, [`crate::program::affine`]); so where
//! - the two groups are blocks of the same traces, in the same order, with no local issue (local lines move with
//!   the block's number, not with a translation),
//! - the lines of different coefficient vectors never meet (their spans are apart) in either group,
//! - for every vector `c`, the blocks' translations relative to the group's first block are the same in both,
//!   and the first blocks' translations differ by a multiple of 4 lines (L1 has 4 sets),
//!
//! moving each line of vector `c` by the difference of the first blocks' translations is such a map. The replay
//! sends the recorded requests to L2 moved that way (L2 serves them in the model's order as any other), adds the
//! recorded L1 counts, and puts the recorded lines, moved, above the SM's old lines. The figures do not change:
//! the tests compare them with every wave played (`tests/caches.rs`).

use super::trace::vector_index;
use super::{l1_round, BlockTrace, Member, RoundInput, SmRound};
use crate::model::cache::{CacheLines, L2Request, Sm, SmCounts};
use rustc_hash::FxHashMap;

/// An SM's blocks in one wave, seen as translations.
pub(super) struct Group {
    /// The distinct coefficient vectors over its blocks' traces.
    values: usize,
    /// Per block, per group vector, the block's translation in lines.
    shift: Vec<Vec<i64>>,
    /// The lines each vector of each block touches, translated: (lowest, highest, group vector). Spans of
    /// different vectors never overlap.
    spans: Vec<(i64, i64, u8)>,
}

/// Lines past which a translated span counts as out of reach (addresses of 2^66 bytes: none are real).
const FAR: i64 = 1 << 59;
/// The most spans a group's blocks may have (compared pairwise).
const MAX_SPANS: usize = 64;

impl Group {
    /// The SM's blocks as a group with its key (equal keys: the waves are translations of one another), or
    /// `None` when they cannot be replayed.
    #[cold]
    fn of(traces: &[BlockTrace], blocks: &[&Member]) -> Option<(Group, Vec<i64>)> {
        let mut values: Vec<[i64; 3]> = Vec::new();
        let mut map = Vec::with_capacity(blocks.len());
        for b in blocks {
            let tl = traces[b.trace].index.as_ref()?;
            let mut m = Vec::with_capacity(tl.values.len());
            for v in &tl.values {
                m.push(u8::try_from(vector_index(&mut values, v)).ok()?);
            }
            map.push(m);
        }
        let mut shift = Vec::with_capacity(blocks.len());
        let mut spans: Vec<(i64, i64, u8)> = Vec::new();
        for (j, b) in blocks.iter().enumerate() {
            let mut row = Vec::with_capacity(values.len());
            for v in &values {
                let mut bytes = 0i64;
                for (c, d) in v.iter().zip(&b.delta) {
                    bytes = bytes.checked_add(c.checked_mul(*d)?)?;
                }
                if bytes & 127 != 0 {
                    return None;
                }
                row.push(bytes >> 7);
            }
            let tl = traces[b.trace].index.as_ref()?;
            for (tv, &(lo, hi)) in tl.spans.iter().enumerate() {
                if lo > hi {
                    continue;
                }
                let g = map[j][tv];
                let d = row[usize::from(g)];
                let lo = i64::try_from(lo).ok()?.checked_add(d)?;
                let hi = i64::try_from(hi).ok()?.checked_add(d)?;
                if lo < 0 || hi >= FAR || spans.len() == MAX_SPANS {
                    return None;
                }
                spans.push((lo, hi, g));
            }
            shift.push(row);
        }
        // Different vectors' lines never meet.
        for (k, a) in spans.iter().enumerate() {
            if spans[k + 1..].iter().any(|b| a.2 != b.2 && a.0 <= b.1 && b.0 <= a.1) {
                return None;
            }
        }
        let mut key = vec![blocks.len() as i64];
        key.extend(blocks.iter().map(|b| b.trace as i64));
        key.push(values.len() as i64);
        for g in 0..values.len() {
            key.extend(shift[1..].iter().map(|row| row[g] - shift[0][g]));
            key.push(shift[0][g] & 3);
        }
        Some((Group { values: values.len(), shift, spans }, key))
    }
}

/// What an SM with empty caches does over one group's wave, to replay: its requests to L2 (each with its group
/// vector), the written bytes of its stores and atomics, where each step's requests end, its L1 counts, the lines
/// it leaves, and each line's first touch.
struct Record {
    reqs: Vec<L2Request>,
    vectors: Vec<u8>,
    bytes: Vec<[u32; 4]>,
    ends: Vec<usize>,
    counts: SmCounts,
    lines: CacheLines,
    /// Per (cache, line) touched (`line << 1 | cache`), the allocations in its set before its first touch.
    first: FxHashMap<u64, u32>,
    /// The recorded SM's spans ([`Group::spans`]).
    spans: Vec<(i64, i64, u8)>,
    /// Per group vector, the recorded SM's first block's translation in lines.
    base: Vec<i64>,
}

/// The group vector whose span holds `line` (spans of different vectors never overlap).
fn vector_at(spans: &[(i64, i64, u8)], line: u64) -> Option<u8> {
    let l = i64::try_from(line).ok()?;
    spans.iter().find(|s| s.0 <= l && l <= s.1).map(|s| s.2)
}

impl Record {
    /// Plays the group's blocks `blocks` (the SM's blocks of a wave) on `fresh`, an SM with empty caches.
    #[cold]
    fn make(traces: &[BlockTrace], blocks: &[&Member], group: &Group, mut fresh: Sm) -> Record {
        let steps = blocks.iter().map(|b| traces[b.trace].steps.len()).max().unwrap_or(0);
        let wave: Vec<Member> = blocks.iter().map(|b| **b).collect();
        // Local issues keep a group from replay, so the warps and local bytes are never read.
        let inp = RoundInput { traces, wave: &wave, s: 1, warps: 0, local_bytes: 0, steps: 0..steps };
        let mut round = SmRound::default();
        l1_round(0, &mut fresh, &mut round, &inp, &Plan::Play, None);
        let vectors = round.out.reqs.iter().map(|r| vector_at(&group.spans, r.line).unwrap_or(0)).collect();
        let lines = fresh.lines(|_, line| vector_at(&group.spans, line).unwrap_or(0));
        Record {
            bytes: round.out.written().to_vec(),
            reqs: round.out.reqs,
            vectors,
            ends: round.ends,
            counts: fresh.counts(),
            lines,
            first: fresh.take_first_touch(),
            spans: group.spans.clone(),
            base: group.shift[0].clone(),
        }
    }

    fn bytes(&self) -> u64 {
        (self.reqs.capacity() * std::mem::size_of::<L2Request>()
            + self.vectors.capacity()
            + self.bytes.capacity() * 16
            + self.ends.capacity() * 8
            + self.first.capacity() * 16
            + self.lines.iter().flatten().map(|s| s.capacity() * 16).sum::<usize>()) as u64
    }

    /// Whether an SM whose caches are `state`, replaying this record with each vector's lines moved by
    /// `moved`, meets none of the lines it held: each held line the wave touches has been evicted by the
    /// allocations in its set before the wave's first touch of it.
    #[cold]
    fn misses_old_lines(&self, state: &Sm, moved: &[u64]) -> bool {
        state.all_lines(|ci, line, room| {
            self.spans.iter().all(|&(lo, hi, g)| {
                let at = line.wrapping_sub(moved[usize::from(g)]);
                match i64::try_from(at) {
                    Ok(a) if lo <= a && a <= hi => {
                        self.first.get(&(at << 1 | u64::from(ci))).is_none_or(|&n| n >= room)
                    }
                    _ => true,
                }
            })
        })
    }
}

/// How an SM plays a wave.
pub(super) enum Plan {
    /// Issue by issue through its caches.
    Play,
    /// From record `id`, each group vector's lines moved by `moved`; `at` and `byte_at` are where the next
    /// step starts in the record.
    Replay { id: usize, moved: Vec<u64>, at: usize, byte_at: usize },
}

impl Plan {
    /// Whether the SM replays (it plays nothing).
    pub(super) fn replays(&self) -> bool {
        matches!(self, Plan::Replay { .. })
    }
}

/// The most host bytes a machine's records hold; past it, waves that find no record play.
const RECORD_BYTES: u64 = 64 << 20;

/// A machine's records, by group key.
pub(super) struct Records {
    keys: FxHashMap<Vec<i64>, usize>,
    records: Vec<Record>,
    bytes: u64,
    /// Off: every SM plays every wave.
    on: bool,
    /// SM waves replayed so far.
    pub(super) replayed: u64,
}

impl Records {
    /// No records yet; `on` false: none are made ([`crate::analysis::Analysis::replay`]).
    pub(super) fn new(on: bool) -> Records {
        Records { keys: FxHashMap::default(), records: Vec::new(), bytes: 0, on, replayed: 0 }
    }

    /// Host bytes held.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// How SM `state` plays its blocks `blocks` of a wave: replayed from the record of its group's key (made
    /// now, on an SM with empty caches, when there is none) where it meets none of the lines it holds.
    #[cold]
    pub(super) fn plan(&mut self, traces: &[BlockTrace], blocks: &[&Member], state: &Sm, watched: bool) -> Plan {
        if !self.on || watched || blocks.is_empty() {
            return Plan::Play;
        }
        let Some((group, key)) = Group::of(traces, blocks) else { return Plan::Play };
        let id = match self.keys.get(&key) {
            Some(&id) => id,
            None if self.bytes < RECORD_BYTES => {
                let r = Record::make(traces, blocks, &group, state.fresh());
                self.bytes += r.bytes();
                self.records.push(r);
                self.keys.insert(key, self.records.len() - 1);
                self.records.len() - 1
            }
            None => return Plan::Play,
        };
        let r = &self.records[id];
        let moved: Vec<u64> = (0..group.values).map(|g| group.shift[0][g].wrapping_sub(r.base[g]) as u64).collect();
        if !r.misses_old_lines(state, &moved) {
            return Plan::Play;
        }
        self.replayed += 1;
        Plan::Replay { id, moved, at: 0, byte_at: 0 }
    }

    /// Calls `f` with each request a replaying SM makes in step `t` of its wave (counted from the wave's start),
    /// moved, and its written bytes, in order.
    #[inline(always)]
    pub(super) fn replay_step(&self, plan: &mut Plan, t: usize, mut f: impl FnMut(&L2Request, [u32; 4])) {
        let Plan::Replay { id, moved, at, byte_at } = plan else { return };
        let r = &self.records[*id];
        let end = r.ends.get(t).copied().unwrap_or(r.reqs.len());
        for (req, &g) in r.reqs[*at..end].iter().zip(&r.vectors[*at..end]) {
            let mut req = *req;
            req.line = req.line.wrapping_add(moved[usize::from(g)]);
            let bytes = if req.writes() {
                *byte_at += 1;
                r.bytes[*byte_at - 1]
            } else {
                [0; 4]
            };
            f(&req, bytes);
        }
        *at = end;
    }

    /// The end of a wave: each replaying SM takes its record's counts, and its lines above those it held.
    #[cold]
    pub(super) fn finish_wave(&self, plans: &[Plan], sms: &mut [Sm]) {
        for (plan, sm) in plans.iter().zip(sms.iter_mut()) {
            if let Plan::Replay { id, moved, .. } = plan {
                let r = &self.records[*id];
                sm.push_recent(&r.lines, |line, g| line.wrapping_add(moved[usize::from(g)]));
                sm.add_counts(&r.counts);
            }
        }
    }
}
