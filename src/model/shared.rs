//! Shared memory: banks, phases, wavefronts and conflicts.
//!
//! Architecture invariant: this module knows nothing about compute capabilities. It follows the [`BankRule`]
//! that `arch` chose: split the warp into phases of `lanes_per_phase` lanes; in each phase every bank serves
//! one conflict key per pass, so the phase costs the largest number of distinct keys any bank must serve
//! (CUDA Programming Guide 20.4.3, Best Practices Guide 9.2.3). Lanes on the same key never conflict (broadcast / multicast).
//!
//! One costing path: [`cost`] counts with fixed-size arrays, and tells a [`WaveSink`] which wavefront serves
//! each word: a bank's distinct keys are served in the order lanes first use them, key i in wavefront i. The
//! fast path passes [`NoWaves`]; the figure passes [`Phases`].

use crate::model::access::{LaneSet, Lanes};
use crate::model::arch::BankRule;
use crate::model::report::{BankWord, PhaseStep, WavefrontStep};

/// Banks on every CC.
pub const BANKS: u32 = 32;

/// What one warp's shared access costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BankCounts {
    /// Wavefronts, summed over phases.
    pub wavefronts: u32,
    /// Wavefronts without conflicts.
    pub ideal_wavefronts: u32,
    /// The most distinct words one bank serves in one phase.
    pub conflict_degree: u32,
    /// Bank width in bytes.
    pub bank_bytes: u32,
    /// The wavefronts the other shared model counts, where the two differ (docs/model.md#shared-memory-as-measured); 0 where they agree.
    pub other_model_wavefronts: u32,
}

/// Receives each phase and, for every word a lane touches, the wavefront that serves it.
pub trait WaveSink {
    /// Whether the sink wants them.
    const DETAIL: bool;
    /// A phase covering `lanes` starts.
    fn begin_phase(&mut self, lanes: LaneSet);
    /// `lane`'s word at `addr` in `bank` is served by wavefront `wavefront` (from 0) of the phase.
    fn word(&mut self, wavefront: u32, lane: usize, bank: u32, addr: u64);
    /// The phase ends: it needed `wavefronts`, `ideal` without conflicts.
    fn end_phase(&mut self, ideal: u32, wavefronts: u32);
}

/// The fast path's sink.
pub struct NoWaves;

impl WaveSink for NoWaves {
    const DETAIL: bool = false;
    fn begin_phase(&mut self, _: LaneSet) {}
    fn word(&mut self, _: u32, _: usize, _: u32, _: u64) {}
    fn end_phase(&mut self, _: u32, _: u32) {}
}

/// Records the phases with their wavefronts, as the animation shows them.
#[derive(Default)]
pub struct Phases(pub Vec<PhaseStep>);

impl WaveSink for Phases {
    const DETAIL: bool = true;
    fn begin_phase(&mut self, lanes: LaneSet) {
        self.0.push(PhaseStep { lanes, ideal: 0, wavefronts: Vec::new() });
    }
    fn word(&mut self, wavefront: u32, lane: usize, bank: u32, addr: u64) {
        let Some(p) = self.0.last_mut() else { return };
        let k = wavefront as usize;
        while p.wavefronts.len() <= k {
            p.wavefronts.push(WavefrontStep { lanes: LaneSet::default(), words: Vec::new() });
        }
        let w = &mut p.wavefronts[k];
        w.lanes.insert(lane);
        // Kept in (bank, address) order as they arrive, each word once.
        let bw = BankWord { bank, addr };
        if let Err(at) = w.words.binary_search_by_key(&(bank, addr), |w| (w.bank, w.addr)) {
            w.words.insert(at, bw);
        }
    }
    fn end_phase(&mut self, ideal: u32, _: u32) {
        if let Some(p) = self.0.last_mut() {
            p.ideal = ideal;
        }
    }
}

/// Costs one warp's shared access: `l` holds the active lanes' aligned shared-window offsets.
pub fn cost<S: WaveSink>(rule: BankRule, l: &Lanes, size_bytes: u32, sink: &mut S) -> BankCounts {
    phases(rule, l, size_bytes, sink, |l, k, end, words, sink| match easy_phase(rule, l, k, end, words, sink) {
        Some(x) => x,
        None => hashed_phase(rule, l, k, end, words, sink),
    })
}

/// Costs one warp's shared atomic (`ATOMS`, docs/model.md#atomics, a model not yet measured): the phases of docs/model.md#shared-memory,
/// but every lane's read-modify-write of a word is its own pass of the word's bank, so a bank's cost is the
/// number of active lanes on its words, not the number of distinct words. The ideal is that section's (distinct
/// words over 32 banks). `ATOMS.POPC.INC` does one increment per word: it is costed by [`cost`].
pub fn cost_atomic<S: WaveSink>(rule: BankRule, l: &Lanes, size_bytes: u32, sink: &mut S) -> BankCounts {
    phases(rule, l, size_bytes, sink, |l, k, end, words, sink| {
        let (distinct, _) = hashed_phase(rule, l, k, end, words, &mut NoWaves);
        let mut per_bank = [0u32; BANKS as usize];
        let mut worst = 0;
        for j in k..end {
            let first = l.addr[j] & !3;
            for w in 0..words {
                let word = first + 4 * w;
                let bank = rule.banking.bank(word);
                let b = bank as usize & 31;
                if S::DETAIL {
                    sink.word(per_bank[b], usize::from(l.lane[j]), bank, word);
                }
                per_bank[b] += 1;
                worst = worst.max(per_bank[b]);
            }
        }
        (distinct, worst)
    })
}

/// Splits the lanes into the rule's phases and adds up what `phase` says each costs: (distinct bank words,
/// wavefronts) for lanes `k..end`.
fn phases<S: WaveSink>(
    rule: BankRule,
    l: &Lanes,
    size_bytes: u32,
    sink: &mut S,
    mut phase_cost: impl FnMut(&Lanes, usize, usize, u64, &mut S) -> (u32, u32),
) -> BankCounts {
    let words = u64::from(size_bytes.div_ceil(4));
    let per = rule.lanes_per_phase;
    // Phases are 32, 16 or 8 lanes: a shift, not a division per lane (which cost most of this function).
    debug_assert!(per.is_power_of_two());
    let shift = per.trailing_zeros();
    let (mut wavefronts, mut ideal, mut degree) = (0u32, 0u32, 0u32);
    let mut k = 0;
    while k < l.n {
        let phase = u32::from(l.lane[k]) >> shift;
        let mut end = k;
        if per >= 32 {
            end = l.n;
        }
        while end < l.n && u32::from(l.lane[end]) >> shift == phase {
            end += 1;
        }
        if S::DETAIL {
            sink.begin_phase(LaneSet::group(phase, per));
        }
        let (distinct, worst) = phase_cost(l, k, end, words, sink);
        k = end;
        let phase_ideal = distinct.div_ceil(BANKS).max(1);
        if S::DETAIL {
            sink.end_phase(phase_ideal, worst);
        }
        wavefronts += worst;
        ideal += phase_ideal;
        degree = degree.max(worst);
    }
    BankCounts {
        wavefronts,
        ideal_wavefronts: ideal,
        conflict_degree: degree,
        bank_bytes: rule.banking.bank_bytes(),
        other_model_wavefronts: 0,
    }
}

/// The two phases most code makes, answered without the hash set: every lane on one word (a broadcast, 1
/// wavefront), or every word in a bank of its own (no conflict, 1 wavefront). `None` for anything else. Returns
/// (distinct bank words, wavefronts), as [`hashed_phase`] would.
fn easy_phase<S: WaveSink>(
    rule: BankRule,
    l: &Lanes,
    start: usize,
    end: usize,
    words: u64,
    sink: &mut S,
) -> Option<(u32, u32)> {
    let word_of = |j: usize| l.addr[j] & !3;
    let first = word_of(start);
    // Branch-free reductions: most phases are checked whole.
    if words == 1 && l.addr[start..end].iter().fold(0, |acc, &a| acc | ((a & !3) ^ first)) == 0 {
        if S::DETAIL {
            let bank = rule.banking.bank(first);
            (start..end).for_each(|j| sink.word(0, usize::from(l.lane[j]), bank, first));
        }
        return Some((1, 1));
    }
    let (mut used, mut twice) = (0u32, 0u32);
    for j in start..end {
        for w in 0..words {
            let bit = 1u32 << (rule.banking.bank(word_of(j) + 4 * w) & 31);
            twice |= used & bit;
            used |= bit;
        }
    }
    if twice != 0 {
        return None;
    }
    if S::DETAIL {
        for j in start..end {
            for w in 0..words {
                let word = word_of(j) + 4 * w;
                sink.word(0, usize::from(l.lane[j]), rule.banking.bank(word), word);
            }
        }
    }
    Some((used.count_ones(), 1))
}

/// Any phase: distinct (bank, key) pairs through a small open-addressed set (128 slots for at most 16 lanes x
/// 4 words = 64 pairs), each remembering the wavefront that serves it; a bank's count of distinct keys so far
/// is the wavefront of its next new key, and the busiest bank is the phase's cost. Shared offsets are below
/// 16 MB, so a key fits the low half of the pair. Returns (distinct pairs, wavefronts).
fn hashed_phase<S: WaveSink>(
    rule: BankRule,
    l: &Lanes,
    start: usize,
    end: usize,
    words: u64,
    sink: &mut S,
) -> (u32, u32) {
    let mut slots = [u64::MAX; 128];
    let mut wave = [0u8; 128];
    let mut per_bank = [0u8; BANKS as usize];
    let (mut distinct, mut worst) = (0u32, 0u32);
    for j in start..end {
        let lane = usize::from(l.lane[j]);
        let first = l.addr[j] & !3;
        for w in 0..words {
            let word = first + 4 * w;
            let bank = rule.banking.bank(word);
            let pair = u64::from(bank) << 32 | (rule.banking.key(word) & 0xFFFF_FFFF);
            let mut h = (pair.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as usize;
            let served_by = loop {
                if slots[h] == pair {
                    break wave[h];
                }
                if slots[h] == u64::MAX {
                    slots[h] = pair;
                    let b = bank as usize & 31;
                    wave[h] = per_bank[b];
                    per_bank[b] += 1;
                    distinct += 1;
                    worst = worst.max(u32::from(per_bank[b]));
                    break wave[h];
                }
                h = (h + 1) & 127;
            };
            if S::DETAIL {
                sink.word(u32::from(served_by), lane, bank, word);
            }
        }
    }
    (distinct, worst)
}
